"""Framework users' first scripts, round five (bench/README.md, "(helper usage63)"): what a
LangChain / LlamaIndex user wrote against the core after the README's quick start, where
treehop answered with the wrong thing or a misleading error. Each test fails on 80e60c2."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from treehop import AsyncTreehop, InvalidQueryError, MatchedContext, Treehop
from treehop import assemble_context as assemble_hits

from treehop_test_doubles import BagOfWordsEmbedder

DOCS = {
    "ops/deploy.md": "# Deploy\n\nRoll back a deployment with kubectl rollout undo.\n",
    "ops/backup.md": "# Backups\n\nBackups run nightly to an S3 bucket.\n",
    "sec/keys.md": "# Keys\n\nRotate API keys every 90 days; keys live in the vault.\n",
}


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Treehop]:
    for rel, text in DOCS.items():
        (tmp_path / "kb" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "kb" / rel).write_text(text, encoding="utf-8")
    with Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), reader_processes=0) as th:
        th.add_resource(tmp_path / "kb", target_uri="viking://resources/kb")
        yield th


def test_assemble_context_takes_the_hits_the_pure_function_takes(client: Treehop) -> None:
    # 80e60c2: th.assemble_context(res.top(2), ...) was "query must be a string, got list",
    # though treehop.assemble_context(hits) takes a FindResult or a list of hits and the docs
    # say to pass what you already retrieved
    res = client.find("rotate keys, roll back a deployment, run backups", limit=3)
    hits = res.top(2)
    assert len(hits) == 2
    block = client.assemble_context(hits, max_tokens=300)
    assert block.uris == assemble_hits(hits, max_tokens=300).uris
    assert block.uris == [h.uri for h in hits]
    assert client.assemble_context(tuple(hits), max_tokens=300).text == block.text
    assert client.assemble_context([], max_tokens=300).uris == []
    # the same checks as a FindResult: no find arguments, only hits in the list
    with pytest.raises(InvalidQueryError, match="find arguments need a query string"):
        client.assemble_context(hits, max_tokens=300, limit=2)
    with pytest.raises(InvalidQueryError, match=r"hits\[1\] must be a MatchedContext, got str"):
        client.assemble_context([hits[0], "viking://resources/kb"], max_tokens=300)  # type: ignore[list-item]


def test_assemble_context_of_hits_with_a_session_records_them(client: Treehop) -> None:
    hits = client.find("rotate api keys vault", limit=2).top(1)
    first = client.assemble_context(hits, max_tokens=300, session_id="s1")
    assert first.uris == [hits[0].uri]
    again = client.assemble_context(hits, max_tokens=300, session_id="s1")
    assert again.uris == []  # already injected in this session


@pytest.mark.asyncio
async def test_async_assemble_context_takes_hits(tmp_path: Path) -> None:
    async with AsyncTreehop(tmp_path / "a", embedder=BagOfWordsEmbedder()) as th:
        await th.add_resource(
            "Rotate API keys every 90 days.", target_uri="viking://resources/k", is_text=True
        )
        hits = (await th.find("rotate keys", limit=1)).contexts()
        block = await th.assemble_context(hits, max_tokens=200)
        assert block.uris == ["viking://resources/k"]


def test_iterating_a_find_result_says_where_the_hits_are(client: Treehop) -> None:
    # 80e60c2: `for m in th.find(q): m.uri` iterated pydantic's (field, value) pairs and failed
    # with "'tuple' object has no attribute 'uri'" (a retriever's list habit)
    res = client.find("rotate api keys", limit=2)
    with pytest.raises(TypeError, match=r"res\.contexts\(\)"):
        for _ in res:
            pass
    with pytest.raises(TypeError, match=r"res\.contexts\(\)"):
        list(res)
    # what pydantic offers otherwise is unchanged
    assert res.model_dump()["resources"][0]["uri"] == res.contexts()[0].uri
    assert res == res.model_copy()
    assert "FindResult(" in repr(res) or "resources=" in repr(res)
    assert all(isinstance(m, MatchedContext) for m in res.contexts())
