"""The optional LLM tagger: ``llm:`` labels from a chat model over real loopback HTTP (the
fake OpenAI server), the fallback to automatic tags on every kind of failure, and its answer
parser (property-based)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import Treehop
from treehop import tags as tagmod
from treehop.errors import InvalidTagError
from treehop.llm.openai_compatible import OpenAICompatibleLLM
from treehop.tagging import Tagger
from treehop.tagging.llm_tagger import LLMTagger, parse_answer

from fake_servers.openai_chat import FakeOpenAIChatServer, Reply

DOCS = {
    "ops/deploy.md": "# Deploy\n\nRolling updates of services with kubernetes and helm charts.",
    "ops/alerts.md": "# Alerts\n\nPager rotation, alert routing and the escalation policy.",
    "data/etl.md": "# ETL\n\nNightly batch jobs load the warehouse from kafka topics.",
}


@pytest.fixture
def server() -> Iterator[FakeOpenAIChatServer]:
    with FakeOpenAIChatServer() as srv:
        yield srv


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for rel, text in DOCS.items():
        (tmp_path / "kb" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "kb" / rel).write_text(text)
    return tmp_path / "kb"


def _llm(server: FakeOpenAIChatServer, **kw: Any) -> OpenAICompatibleLLM:
    opts: dict[str, Any] = {"base_url": server.base_url, "api_key": "sk-test", "max_retries": 0}
    opts.update(kw)
    return OpenAICompatibleLLM("fake-model", **opts)


def _labels_for(req_body: dict[str, Any], by_word: dict[str, list[str]]) -> str:
    """The answer a model would give: labels chosen from each numbered document's text."""
    text = req_body["messages"][1]["content"]
    out: dict[str, list[str]] = {}
    for block in text.split("\n\n["):
        num = block.lstrip("[").split("]", 1)[0]
        out[num] = [lab for word, labs in by_word.items() if word in block for lab in labs]
    return json.dumps({"labels": out})


def test_llm_labels_are_written_with_the_llm_source(
    server: FakeOpenAIChatServer, tree: Path, bow: Any
) -> None:
    answer = json.dumps(
        {"labels": {"1": ["Data Pipelines"], "2": ["incident response"], "3": ["release"]}}
    )
    server.enqueue(Reply.chat(answer))
    tagger = LLMTagger(_llm(server), batch_size=8)
    assert isinstance(tagger, Tagger)
    with Treehop(embedder=bow, tagger=tagger) as th:
        th.add_resource(tree, target_uri="viking://resources")
        etl = th.stat("viking://resources/kb/data/etl.md")
        alerts = th.stat("viking://resources/kb/ops/alerts.md")
        deploy = th.stat("viking://resources/kb/ops/deploy.md")
        assert "llm:data-pipelines" in etl.tags
        assert "llm:incident-response" in alerts.tags
        assert "llm:release" in deploy.tags
        # Tag filters see llm: labels like any other source.
        hits = th.find("warehouse jobs", tags="data-pipelines").resources
        assert [h.uri for h in hits] == ["viking://resources/kb/data/etl.md"]
        # A re-add of unchanged files asks nothing and keeps the labels; so does a backfill.
        th.add_resource(tree, target_uri="viking://resources")
        th.retag()
        assert "llm:data-pipelines" in th.stat("viking://resources/kb/data/etl.md").tags
    assert len(server.requests) == 1
    body = server.requests[0].body
    assert body["response_format"] == {"type": "json_object"}
    assert "[1]" in body["messages"][1]["content"] and "kafka" in body["messages"][1]["content"]
    assert tagger.fallbacks == 0


@pytest.mark.parametrize(
    "reply",
    [
        Reply.error(500, "model overloaded"),
        Reply.chat("Sure! Here are some labels: ops, data"),
        Reply.chat(json.dumps({"labels": ["not", "a", "mapping"]})),
        Reply.chat(None),
    ],
    ids=["http-500", "prose", "wrong-shape", "empty"],
)
def test_model_failure_keeps_automatic_tags_and_every_node(
    server: FakeOpenAIChatServer, tree: Path, bow: Any, reply: Reply
) -> None:
    server.enqueue(reply)
    tagger = LLMTagger(_llm(server))
    with Treehop(embedder=bow, tagger=tagger) as th:
        res = th.add_resource(tree, target_uri="viking://resources")
        assert res.files == 3
        got = {n.uri: n.tags for n in th.store.iter_nodes("viking://resources/kb")}
    with Treehop(embedder=bow, tagger="auto") as plain:
        plain.add_resource(tree, target_uri="viking://resources")
        want = {n.uri: n.tags for n in plain.store.iter_nodes("viking://resources/kb")}
    assert len(got) == 6 and got == want  # exactly the automatic tags
    assert tagger.fallbacks == 1 and tagger.last_error
    assert "sk-test" not in tagger.last_error


def test_total_deadline_bounds_a_slow_model(
    server: FakeOpenAIChatServer, tree: Path, bow: Any
) -> None:
    server.enqueue(Reply.chat(json.dumps({"labels": {"1": ["late"]}}), delay_s=5.0))
    tagger = LLMTagger(_llm(server, timeout_s=30.0, deadline_s=None), deadline_s=0.5)
    t0 = time.monotonic()
    with Treehop(embedder=bow, tagger=tagger) as th:
        th.add_resource(tree, target_uri="viking://resources")
        assert not any(
            tagmod.source_of(t) == "llm"
            for n in th.store.iter_nodes("viking://resources/kb")
            for t in n.tags
        )
        assert time.monotonic() - t0 < 4.0  # did not wait for the 5 s answer
    assert tagger.fallbacks == 1 and "0.5 s" in tagger.last_error


def test_batches_share_one_deadline(server: FakeOpenAIChatServer, tree: Path, bow: Any) -> None:
    """Later batches that would start after the deadline fall back without a request."""
    server.enqueue(Reply.chat(json.dumps({"labels": {"1": ["first"]}}), delay_s=0.8))
    tagger = LLMTagger(_llm(server), batch_size=1, deadline_s=0.6)
    with Treehop(embedder=bow, tagger=tagger) as th:
        th.add_resource(tree, target_uri="viking://resources")
    assert len(server.requests) == 1
    assert tagger.fallbacks == 3


def test_bad_arguments_are_typed_errors(server: FakeOpenAIChatServer) -> None:
    llm = _llm(server)
    for kw in ({"max_tags": 0}, {"batch_size": True}, {"max_chars": 10}, {"deadline_s": 0}):
        with pytest.raises(InvalidTagError):
            LLMTagger(llm, **kw)


# ---------------------------------------------------------------- the parser (property-based)

_LABEL = st.text(alphabet="abcXYZ019 é", min_size=1, max_size=10).filter(lambda s: s.strip())


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400), st.integers(1, 20), st.integers(1, 6))
def test_parser_never_raises_and_returns_valid_labels(raw: str, count: int, k: int) -> None:
    got = parse_answer(raw, count, k)
    if got is not None:
        for i, labs in got.items():
            assert 1 <= i <= count and len(labs) <= k and len(set(labs)) == len(labs)
            assert all(tagmod.normalize_label(lab) == lab for lab in labs)


@settings(max_examples=100, deadline=None)
@given(
    st.dictionaries(st.integers(1, 30), st.lists(_LABEL, max_size=6), max_size=6),
    st.integers(1, 30),
    st.integers(1, 6),
    st.sampled_from(["{}", "```json\n{}\n```", "Here you go: {} Thanks!"]),
)
def test_parser_reads_what_a_model_sends(
    labels: dict[int, list[str]], count: int, k: int, frame: str
) -> None:
    raw = frame.replace("{}", json.dumps({"labels": {str(i): v for i, v in labels.items()}}))
    got = parse_answer(raw, count, k)
    assert got is not None
    want = {
        i: list(dict.fromkeys(tagmod.normalize_label(x) for x in v))[:k]
        for i, v in labels.items()
        if i <= count
    }
    assert got == want


@given(st.integers(1, 5))
def test_parser_refuses_a_runaway_answer(count: int) -> None:
    raw = '{"labels": {"1": ["' + "a" * 300_000 + '"]}}'
    assert parse_answer(raw, count, 3) is None
