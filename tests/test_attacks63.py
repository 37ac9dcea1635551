"""Adversarial pass attacks63 (after stop 59): the context block's token count, the MCP
server's answer bounds, ...

Each test was written failing first (bench/README.md, "Adversarial pass (helper attacks63)").
"""

from __future__ import annotations

from typing import Any

import pytest

from treehop import Treehop
from treehop.context_assembly import HeuristicCounter, HFTokenizerCounter, assemble_context
from treehop.models import MatchedContext

from treehop_test_doubles import BagOfWordsEmbedder, leaf_hit


def _hit(text: str, uri: str = "viking://resources/a.txt", score: float = 0.5) -> MatchedContext:
    return leaf_hit(uri, text, score, abstract="a")


# -- 1. a word longer than WordPiece reads was one token: the budget held nothing ------------


@pytest.mark.parametrize(
    "text",
    ["x" * 200_000, " ".join(["Z" * 120] * 2_000), "alpha " + "é" * 5_000 + " beta"],
    ids=["one 200 KB word", "2,000 words of 120", "accented word"],
)
def test_an_over_long_word_is_counted_by_its_length(text: str) -> None:
    """Before: MiniLM's WordPiece reads a word past 100 characters as one ``[UNK]``, so a
    200,000-character word counted 1 token and ``assemble_context(hits, max_tokens=50)``
    answered a 200 KB block "of 5 tokens" (a minified file, a base64 blob, a caller's hit).
    Now such a token counts as the heuristic counts a word (one per started 4 characters),
    in ``count`` and in ``spans`` alike (the excerpt search counts from the spans)."""
    counter = HFTokenizerCounter()
    assert counter.count(text) >= HeuristicCounter().count(text) * 0.9
    starts, ends = counter.spans(text)
    assert len(starts) == len(ends) == counter.count(text)
    assert starts == sorted(starts) and ends == sorted(ends)
    for budget in (50, 500, 5_000):
        out = assemble_context([_hit(text)], max_tokens=budget, token_counter=counter)
        assert out.tokens <= budget
        assert len(out.text) <= budget * 8, (budget, len(out.text))
        # (what the block holds is what the counter says it holds)
        assert counter.count(out.text) <= budget


def test_an_over_long_word_keeps_the_counts_additive() -> None:
    """The block's count is the sum of its lines' (``additive_lines``): the new rule is per
    token, so a line with a long word still adds up."""
    counter = HFTokenizerCounter()
    a, b = "alpha " + "q" * 300, "beta gamma " + "w" * 101
    assert counter.count(a + "\n" + b) == counter.count(a) + counter.count(b)
    assert counter.count("short words stay as they were") == len(
        counter._tok.encode("short words stay as they were", add_special_tokens=False).ids
    )


# -- 2. a lone surrogate in a hit: a raw TypeError from the tokenizer ------------------------


@pytest.mark.parametrize(
    "text", ["a\ud800b", "\udfff" * 3, "ok " + "x\ud83d" * 200], ids=["one", "only", "many"]
)
def test_a_lone_surrogate_in_a_hit_is_counted(text: str) -> None:
    """Before: ``assemble_context([hit])`` (or ``Treehop.assemble_context(hits)``) with a
    caller's hit holding a lone surrogate raised ``TypeError: TextInputSequence must be
    str`` from the tokenizer. Now each counts as a "?" would (one token)."""
    counter = HFTokenizerCounter()
    assert counter.count(text) >= 1
    starts, _ = counter.spans(text)
    assert len(starts) == counter.count(text)
    out = assemble_context([_hit(text)], max_tokens=200, token_counter=counter)
    assert out.tokens <= 200
    with Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None) as c:
        assert c.assemble_context([_hit(text)], max_tokens=200).tokens <= 200


# -- 3. MCP find / search: tags and provenance outside the answer's bound --------------------


async def test_mcp_hits_bound_their_tags_and_provenance(tmp_path: Any) -> None:
    """Before: ``find`` / ``search`` capped each hit's ``text`` (``text_chars``, and
    :data:`~treehop.mcp_server.MAX_READ_CHARS` for the answer) but copied ``tags`` and the
    metadata keys ``speaker`` / ``conversation`` / ``session`` / ``kind`` whole: 300 records
    with a 30,000-character ``speaker`` and ``kind`` (metadata of ``add_records``, up to
    64 KB) answered ``find(limit=1000, text_chars=10)`` with **18 MB** into the agent's
    context; a node's tags have no total bound (``set_tags`` adds up to 256 a call). Now a
    hit shows at most :data:`~treehop.mcp_server.MAX_HIT_TAGS` tags (the rest counted in
    ``tags_omitted``) and provenance values of at most
    :data:`~treehop.mcp_server.MAX_FIELD_CHARS` characters (a longer string is cut, a
    longer non-string left out)."""
    import json

    from mcp import Client

    from treehop import AsyncTreehop, mcp_server
    from treehop.ingest.records import aadd_records
    from treehop.mcp_server import build_server

    a = AsyncTreehop(None, embedder=BagOfWordsEmbedder(), tagger=None)
    try:
        recs = [
            (
                f"alpha beta doc{i}",
                {
                    "speaker": "S" * 25_000,
                    "kind": "K" * 25_000,
                    "session": {"deep": ["x" * 1_000] * 10},
                    "conversation": 7,
                    "source": f"d{i}.txt",
                },
            )
            for i in range(60)
        ]
        await aadd_records(a, recs)
        for r in range(4):
            await a.set_tags(
                "viking://resources/d0.txt", add=[f"t{r}x{i}" + "y" * 50 for i in range(256)]
            )
        async with Client(build_server(a)) as client:
            for tool in ("find", "search"):
                res = await client.call_tool(
                    tool, {"query": "alpha beta", "limit": 1000, "text_chars": 10}
                )
                assert not res.is_error, res.content
                out = res.structured_content or {}
                assert len(out["hits"]) == 60
                assert len(json.dumps(out)) < 60 * 4_000, tool
                for hit in out["hits"]:
                    assert len(hit["speaker"]) <= mcp_server.MAX_FIELD_CHARS + 3
                    assert hit["speaker"].startswith("SSS")
                    assert len(hit["kind"]) <= mcp_server.MAX_FIELD_CHARS + 3
                    assert "session" not in hit  # (a 20 KB object: left out)
                    assert hit["conversation"] == 7  # (a short value as it was)
                    assert len(hit["tags"]) <= mcp_server.MAX_HIT_TAGS
                [tagged] = [h for h in out["hits"] if h["uri"].endswith("/d0.txt")]
                assert tagged["tags_omitted"] == 1_024 - mcp_server.MAX_HIT_TAGS
    finally:
        await a.close()


# -- 4. a caller's query vector past float32's range: a RuntimeWarning ---------------------


@pytest.mark.parametrize("value", [1e38, 3e38, 1e308, 1e-30, 1e-320], ids=str)
def test_a_far_scaled_query_vector_is_searched_without_a_warning(value: float) -> None:
    """Before: ``find("", query_vector=[1e38] * d)`` (a direction the docs say is searched
    at any scale) printed numpy's ``RuntimeWarning: overflow encountered in dot`` /
    ``in cast``; where warnings are errors (``python -W error``, a test suite's
    ``filterwarnings = error``) the ``RuntimeWarning`` escaped ``find`` raw, and ``1e308``
    was refused as "must be a list of numbers (RuntimeWarning)". Now the check's arithmetic
    ignores float overflow / underflow it handles itself: the same hits, no warning."""
    import warnings

    with Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None) as c:
        c.add_resource("alpha beta", target_uri="viking://resources/a.txt")
        d = c.store.dimension
        assert d is not None
        want = [h.uri for h in c.find("", query_vector=[1.0] * d).contexts()]
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = c.find("", query_vector=[value] * d)
            [many] = c.find_many([""], query_vectors=[[value] * d])
            assert [h.uri for h in got.contexts()] == want
            assert [h.uri for h in many.contexts()] == want


# -- 5. a long run of Han characters: jieba's HMM is quadratic ------------------------------


def test_a_long_han_run_is_tokenised_in_linear_time() -> None:
    """Before: a run of Han characters without punctuation went to jieba whole, and jieba's
    HMM for characters outside its dictionary copies a path per character (quadratic):
    ``tokenize("中" * 20_000)`` took 3.5 s, 200,000 characters **307 s**; ``find`` of an
    8,000-character Chinese query 2.5-9 s, LangChain ``add_texts`` of 30,000 characters
    7.7 s. Now a run is cut into pieces of :data:`~treehop.text_tokenize.HAN_PIECE`
    characters (a natural sentence is far shorter: its tokens are unchanged)."""
    import time

    import jieba

    from treehop import text_tokenize as tt

    seen: list[int] = []
    real = jieba.lcut_for_search

    def spy(text: str, *a: Any, **k: Any) -> list[str]:
        seen.append(len(text))
        return real(text, *a, **k)

    sentence = "中华人民共和国的人工智能研究"
    before = tt.tokenize(sentence)
    jieba.lcut_for_search = spy
    try:
        t0 = time.perf_counter()
        tokens = tt.tokenize("中" * 40_000)
        took = time.perf_counter() - t0
        assert tt.tokenize(sentence) == before
    finally:
        jieba.lcut_for_search = real
    assert max(seen) <= tt.HAN_PIECE
    assert tokens and set("".join(tokens)) == {"中"}
    assert took < 8.0, took  # (quadratic: ~14 s on the machine the fix was measured on)


# -- 6. a folder's file named so that its URI cannot be named again -------------------------


@pytest.mark.parametrize(
    "name", ["x%2Fy.md", "a\\b.md", "%2E%2E", "..%2F..%2Fetc.md", "a%5Cb.md", "%2e"]
)
def test_a_folder_entry_whose_uri_no_call_can_name_is_skipped(tmp_path: Any, name: str) -> None:
    """Before: ``add_resource(<folder>)`` indexed a file named ``x%2Fy.md`` (or ``a\\b.md``,
    a folder named ``%2E%2E``) as ``.../x%252Fy.md`` (``a%5Cb.md``, ``%252E%252E/...``):
    ``normalize`` decodes a segment twice and refuses a ``/``, ``\\``, ``.`` or ``..``, so
    ``read`` / ``stat`` / ``ls`` / ``tree`` / ``remove`` / ``set_tags`` / a find's
    ``target_uri`` of a URI that ``find`` itself answered all raised ``InvalidURIError``:
    the node (a folder: its whole subtree) could be found but never opened or removed. Now
    such a name is skipped and named in ``AddResult.skipped_names`` / ``skipped_dirs``,
    as a name holding a control character is; its siblings are indexed."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "ok.md").write_text("alpha fine")
    if name.endswith((".md", ".txt")):
        (folder / name).write_text("alpha hidden away")
    else:
        (folder / name).mkdir()
        (folder / name / "in.md").write_text("alpha hidden away")
    with Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None) as c:
        res = c.add_resource(folder, target_uri="viking://resources/w")
        assert [h.uri for h in c.find("alpha", limit=20).contexts()] == [
            "viking://resources/w/ok.md"
        ]
        assert name in [*res.skipped_names, *res.skipped_dirs]
        for h in c.find("alpha hidden", limit=20).contexts():  # every answered URI opens
            c.read(h.uri)
            c.stat(h.uri)


def test_percent_and_backslash_names_that_decode_in_place_are_kept(tmp_path: Any) -> None:
    """The control: ``100%.md``, ``a%41.md``, ``%252F.md`` (one decode leaves ``%2F``: no
    separator) are indexed and readable, as before."""
    folder = tmp_path / "docs"
    folder.mkdir()
    for n in ("100%.md", "a%41.md", "%252F.md", "q#1.md"):
        (folder / n).write_text(f"alpha {n}")
    with Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None) as c:
        res = c.add_resource(folder, target_uri="viking://resources/w")
        assert res.files == 4 and not res.skipped_names
        hits = c.find("alpha", limit=20).contexts()
        assert len(hits) == 4
        for h in hits:
            assert c.read(h.uri).startswith("alpha")


def test_an_add_named_by_such_a_name_is_refused_before_any_write(tmp_path: Any) -> None:
    """The same for the add's own name: ``add_resource(<folder r%2Fx>)`` (no target) wrote
    ``viking://resources/r%252Fx``, and ``add_resource(text, name="x%2Fy")`` the same kind of
    URI: refused now (``InvalidURIError``, nothing written); with a ``target_uri`` the
    name is not used and the add goes on."""
    from treehop.errors import InvalidURIError

    folder = tmp_path / "r%2Fx"
    folder.mkdir()
    (folder / "a.md").write_text("alpha in folder")
    single = tmp_path / "f%5Cz.md"
    single.write_text("alpha single")
    with Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None) as c:
        for call in (
            lambda: c.add_resource(folder),
            lambda: c.add_resource(single),
            lambda: c.add_resource("alpha text", name="x%2Fy"),
            lambda: c.add_resource("alpha text", name="a\\b"),
        ):
            with pytest.raises(InvalidURIError, match="no call can name"):
                call()
        assert c.find("alpha", limit=10).total == 0  # (nothing written)
        assert c.add_resource(folder, target_uri="viking://resources/f").files == 1
        assert c.add_resource(single, target_uri="viking://resources/s.md").files == 1
        for h in c.find("alpha", limit=10).contexts():
            assert c.read(h.uri).startswith("alpha")


# -- 7. VikingDB answers past float32's range: warnings and a NaN cosine --------------------


def test_a_vikingdb_vector_past_float32_is_a_store_error_where_warnings_are_errors() -> None:
    """Before: ``get_vectors`` against an index answering ``[1e300] * 4`` raised numpy's
    ``RuntimeWarning: overflow encountered in cast`` raw where warnings are errors (the
    ``StoreError`` attacks58 added came only after the cast). Now the cast is quiet and the
    answer is the same ``StoreError`` as without ``-W error``."""
    import warnings

    import numpy as np

    from test_attacks58 import AK, SK, _BentVikingDB, _four_nodes, make_store
    from treehop.errors import StoreError

    with _BentVikingDB(ak=AK, sk=SK) as srv:
        store = make_store(srv, dim=4)
        nodes = _four_nodes()
        store.upsert(nodes, np.eye(4, dtype=np.float32))
        srv.vector = [1e300] * 4
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(StoreError, match="expected 4 finite"):
                store.get_vectors([nodes[0].uri])


@pytest.mark.parametrize("value", [3e38, 1e38, 1e-30])
def test_a_vikingdb_row_vector_of_large_finite_values_scores_its_cosine(value: float) -> None:
    """Before: a search row's vector of finite float32 values whose squares overflow
    (``[3e38] * 4``) had an infinite norm: its cosine was ``inf / inf``, a **NaN** score in
    the hits (and a ``RuntimeWarning``). Now the cosine is taken of the vector scaled to its
    largest value (cosine does not depend on scale): 1.0 for a vector along the query."""
    import warnings

    import numpy as np

    from treehop.stores.vikingdb import _cosine

    q = np.ones(4, dtype=np.float32) / 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _cosine(q, 1.0, [value] * 4) == pytest.approx(1.0, abs=1e-6)


# -- 8. LlamaIndex memory block: a message's session_id of another type ---------------------


@pytest.mark.parametrize("sid", [5, ["x"], {"a": 1}, b"bytes", 1.5, True, "\ud800"], ids=repr)
def test_li_memory_block_session_id_of_any_type_is_typed(sid: Any) -> None:
    """Before: ``TreehopMemoryBlock.aput`` with a message whose ``additional_kwargs``
    holds ``session_id`` as an int (or list, dict, bytes, float, bool) raised a raw
    ``TypeError`` from a regex, a lone surrogate a raw ``UnicodeEncodeError``, and nothing
    was remembered. Now an int or a UUID names its session by its text, a lone surrogate is
    digested, and any other type is ``InvalidQueryError`` before anything is written."""
    import asyncio
    import uuid

    from llama_index.core.llms import ChatMessage, MessageRole

    from llama_index.retrievers.treehop.memory_block import TreehopMemoryBlock
    from treehop.errors import InvalidQueryError

    def msg(s: Any) -> list[ChatMessage]:
        return [
            ChatMessage(
                role=MessageRole.USER,
                content="I live in Porto",
                additional_kwargs={"session_id": s},
            )
        ]

    with Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None) as c:
        block = TreehopMemoryBlock(c)
        if type(sid) in (int, str):
            asyncio.run(block.aput(msg(sid)))
            assert "Porto" in asyncio.run(block.aget(msg(sid)))
        else:
            with pytest.raises(InvalidQueryError, match="session_id"):
                asyncio.run(block.aput(msg(sid)))
            assert asyncio.run(block.aget(msg("x"))) == ""  # (nothing written)
        asyncio.run(block.aput(msg(uuid.UUID(int=7))))


@pytest.mark.parametrize("thread", ["\ud800", "user-\udfff", "a..\ud800"])
def test_a_langgraph_thread_id_with_a_lone_surrogate_is_digested(thread: str) -> None:
    """Before: the LangChain middleware's ``session_for_thread`` of a thread id holding a
    lone surrogate raised a raw ``UnicodeEncodeError`` (every turn of that thread failed).
    Now it is digested as any other unsafe id, into an id the ledger takes."""
    from langchain_treehop.middleware import session_for_thread

    sid = session_for_thread(thread)
    assert sid.startswith("t-") and sid.isascii()
    assert session_for_thread(thread) == sid != session_for_thread(thread + "x")
    with Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None) as c:
        c.remember("pottery workshop notes", name="n")
        assert c.assemble_context("pottery", session_id=sid).uris
        assert c.assemble_context("pottery", session_id=sid).uris == []


# -- 9. a caller's token counter whose name fails or is huge --------------------------------


class _NameFails:
    @property
    def name(self) -> str:
        raise RuntimeError("counter down: api_key=SECRETSECRET1234567890")

    def count(self, text: str) -> int:
        return len(text) // 4


class _NameHuge:
    name = "n" * 1_000_000

    def count(self, text: str) -> int:
        return len(text) // 4


def test_a_token_counter_whose_name_fails_or_is_huge() -> None:
    """Before: ``assemble_context(..., token_counter=c)`` where reading ``c.name`` raised
    passed the counter's own ``RuntimeError`` out (its text, an ``api_key=`` in it, included: the
    counter's ``count`` failures were already wrapped and redacted); a name of 1,000,000
    characters came back whole in ``AssembledContext.token_counter``. Now a failing name is
    ``InvalidQueryError`` (redacted), a name is kept to 80 characters."""
    from treehop.errors import InvalidQueryError

    with Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None) as c:
        c.add_resource("alpha beta gamma " * 50, target_uri="viking://resources/a.txt")
        with pytest.raises(InvalidQueryError, match="token_counter") as err:
            c.assemble_context("alpha", token_counter=_NameFails())
        assert "SECRETSECRET" not in str(err.value)
        out = c.assemble_context("alpha", token_counter=_NameHuge())
        assert out.tokens > 0 and len(out.token_counter) <= 80
