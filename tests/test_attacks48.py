"""Helper attacks48's adversarial pass: hostile inputs through the public API.

- A caller's ``query_vector`` of finite numbers is searched in its direction whatever its
  scale (values whose float32 squares underflow to zero, float64 values past float32's
  range), and any value that is not a number raises :class:`InvalidQueryError` (a Python
  int past float's range raised ``OverflowError``; an element whose ``__float__`` raises
  passed its own exception through); a complex, date or string array, a string, or a
  matrix of several rows is not one vector.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import ReaderPool, Treehop
from treehop.client import _check_query_vector
from treehop.errors import EmbeddingError, IngestError, InvalidQueryError
from treehop.ingest.records import add_records
from treehop.timestamps import shown_iso, to_iso

from treehop_test_doubles import BagOfWordsEmbedder


class _Dim:
    dimension = 4


_STORE: Any = _Dim()
_DIRECTION = [0.6, -0.8, 0.0, 0.0]


@pytest.mark.parametrize(
    "scale", [1e-20, 1e-25, 1e-30, 1e-44, 1e-50, 1e-300, 1e30, 1e39, 1e300, 1.0]
)
def test_a_finite_vector_keeps_its_direction_at_any_scale(scale: float) -> None:
    """Finite values far from 1 (float32 squares underflow or overflow, or the values
    themselves leave float32) are searched in their direction, not rejected as zero or
    infinite."""
    given = [x * scale for x in (3.0, -4.0, 0.0, 0.0)]
    for v in (given, np.array(given, np.float64)):
        unit = _check_query_vector(v, _STORE)
        assert unit.dtype == np.float32 and np.isfinite(unit).all()
        assert unit.tolist() == pytest.approx(_DIRECTION, abs=1e-6)


def test_subnormal_float32_vector_keeps_its_direction() -> None:
    v = np.array([3e-40, -4e-40, 0.0, 0.0], np.float32)
    assert _check_query_vector(v, _STORE).tolist() == pytest.approx(_DIRECTION, abs=1e-4)


def test_zero_and_non_finite_vectors_still_raise() -> None:
    for bad in ([-0.0] * 4, [0.0, 1.0, np.nan, 0.0], [1e-30, np.inf, 0.0, 0.0], []):
        with pytest.raises(InvalidQueryError, match="non-empty, finite, non-zero"):
            _check_query_vector(bad, _STORE)


class _BadFloat:
    def __float__(self) -> float:
        raise RuntimeError("a hostile element")


@pytest.mark.parametrize(
    "bad",
    [
        [10**400, 1, 1, 1],
        [_BadFloat(), 1.0, 1.0, 1.0],
        "1111",
        b"1111",
        np.ones(4, np.complex64),
        np.array(["1.0"] * 4),
        np.array(["2020-01-01"] * 4, dtype="datetime64[D]"),
        np.ones((2, 2)),
        [[1.0, 2.0], [3.0, 4.0]],
    ],
    ids=[
        "huge-int",
        "raising-float",
        "str",
        "bytes",
        "complex",
        "str-array",
        "dates",
        "matrix",
        "nested",
    ],
)
def test_what_is_not_one_vector_of_numbers_raises_invalid_query(bad: object) -> None:
    with pytest.raises(InvalidQueryError, match="query_vector"):
        _check_query_vector(bad, _STORE)  # type: ignore[arg-type]


def test_one_row_shapes_are_still_one_vector() -> None:
    for v in (np.array([[3.0, -4.0, 0.0, 0.0]]), np.array([[[3.0], [-4.0], [0.0], [0.0]]])):
        assert _check_query_vector(v, _STORE).tolist() == pytest.approx(_DIRECTION)


def test_find_and_find_many_answer_a_scaled_vector_as_the_vector(
    tmp_path: Path, sample_tree: Path
) -> None:
    """Through the public API: a vector scaled by 1e-25 or 1e300 finds what the vector
    finds, in ``find`` and ``find_many``; a hostile element raises InvalidQueryError."""
    emb = BagOfWordsEmbedder()
    c = Treehop(tmp_path / "idx", embedder=emb, tagger=None)
    try:
        c.add_resource(sample_tree)
        qv = emb.embed_query("retrieval tree hop").astype(np.float64)
        want = [(r.uri, r.score) for r in c.find("", query_vector=qv).resources]
        assert want
        for scale in (1e-25, 1e300):
            got = c.find("", query_vector=qv * scale).resources
            assert [r.uri for r in got] == [u for u, _ in want]
            assert [r.score for r in got] == pytest.approx([s for _, s in want], abs=1e-5)
            many = c.find_many([""], query_vectors=[qv * scale])[0].resources
            assert [r.uri for r in many] == [u for u, _ in want]
        with pytest.raises(InvalidQueryError):
            c.find("", query_vector=[10**400] + [1.0] * (emb.dimension - 1))
        with pytest.raises(InvalidQueryError):
            c.find_many([""], query_vectors=[[_BadFloat()] * emb.dimension])
    finally:
        c.close()


class _Answers(BagOfWordsEmbedder):
    """An embedder whose query vector is ``answer`` (or what ``answer(text)`` returns)."""

    answer: Any = None

    def embed_query(self, text: str) -> Any:
        return self.answer(text) if callable(self.answer) else self.answer

    async def aembed_query(self, text: str) -> Any:
        return self.embed_query(text)


def test_an_embedder_answering_what_is_not_numbers_raises_embedding_error(
    tmp_path: Path, sample_tree: Path
) -> None:
    """The guard turns any conversion failure of an embedder's answer into
    EmbeddingError (an int past float's range raised OverflowError, an element's own
    ``__float__`` its own exception), in the sync, async and batch finds."""
    emb = _Answers()
    c = Treehop(tmp_path / "idx", embedder=emb, tagger=None)
    try:
        c.add_resource(sample_tree)
        for bad in ([10**400] * emb.dimension, [_BadFloat()] * emb.dimension):
            emb.answer = bad
            with pytest.raises(EmbeddingError, match="not numbers"):
                c.find("retrieval tree hop")
            with pytest.raises(EmbeddingError, match="not numbers"):
                c.run(c.aio.find("retrieval tree hop"))
            with pytest.raises(EmbeddingError, match="not numbers"):
                c.find_many(["retrieval tree hop"])
    finally:
        c.close()


class _Scaled(BagOfWordsEmbedder):
    """An embedder whose query vectors are not unit length (a model or server that does
    not normalise its output)."""

    k = 1.0

    def embed_query(self, text: str) -> Any:
        return BagOfWordsEmbedder.embed_query(self, text) * self.k

    async def aembed_query(self, text: str) -> Any:
        return self.embed_query(text)


def test_async_find_answers_a_non_unit_embedding_as_the_sync_find(
    tmp_path: Path, sample_tree: Path
) -> None:
    """The async find made the embedder's query vector a unit row as the sync find and
    find_many do: its scores were scaled by the vector's length (2x, 10x) and its ranking
    moved where the lexical scores are fused with them."""
    emb = _Scaled()
    c = Treehop(tmp_path / "idx", embedder=emb, tagger=None)
    try:
        c.add_resource(sample_tree)
        for q in ("retrieval tree hop", "how do I install it?"):
            for k in (1.0, 2.0, 10.0, 0.1):
                emb.k = k
                sync = [(r.uri, r.score) for r in c.find(q).resources]
                asyn = [(r.uri, r.score) for r in c.run(c.aio.find(q)).resources]
                assert sync and [u for u, _ in asyn] == [u for u, _ in sync], (q, k)
                assert [s for _, s in asyn] == pytest.approx([s for _, s in sync], abs=1e-6)
    finally:
        c.close()


def test_async_find_many_answers_a_non_unit_embedding_as_the_sync_one(
    tmp_path: Path, sample_tree: Path
) -> None:
    """find_many, sync and async, with an embedder of non-unit query vectors: the same
    hits and scores (the async batch used the rows as they came)."""
    emb = _Scaled()
    c = Treehop(tmp_path / "idx", embedder=emb, tagger=None)
    try:
        c.add_resource(sample_tree)
        qs = ["retrieval tree hop", "how do I install it?"]
        for k in (1.0, 3.0, 0.2):
            emb.k = k
            sync = [[(r.uri, r.score) for r in f.resources] for f in c.find_many(qs)]
            asyn = [[(r.uri, r.score) for r in f.resources] for f in c.run(c.aio.find_many(qs))]
            for s, a in zip(sync, asyn, strict=True):
                assert s and [u for u, _ in a] == [u for u, _ in s], k
                assert [x for _, x in a] == pytest.approx([x for _, x in s], abs=1e-6)
    finally:
        c.close()


def test_reader_pool_find_checks_a_vector_as_the_client_does(
    tmp_path: Path, sample_tree: Path
) -> None:
    """``ReaderPool.find`` cast a caller's vector to float32 itself: an int past float's
    range or an element's raising ``__float__`` escaped raw, 1e300 became infinite (the
    client searches it), a complex array became real. Each is now the client's answer."""
    emb = BagOfWordsEmbedder()
    with Treehop(tmp_path / "idx", embedder=emb, tagger=None) as c:
        c.add_resource(sample_tree)
        qv = emb.embed_query("retrieval tree hop").astype(np.float64)
        want = [r.uri for r in c.find("", query_vector=qv).resources]
    assert want
    with ReaderPool(tmp_path / "idx", embedder=BagOfWordsEmbedder(), processes=1) as pool:
        for v in (qv, qv * 1e300, list(qv * 1e-50)):
            assert [r.uri for r in pool.find("", query_vector=v).resources] == want
        for bad in (
            [10**400] * emb.dimension,
            [_BadFloat()] * emb.dimension,
            qv.astype(np.complex128),
            "1" * emb.dimension,
        ):
            with pytest.raises(InvalidQueryError, match="query_vector"):
                pool.find("", query_vector=bad)  # type: ignore[arg-type]


def _records(meta: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Four chunked records in two documents, each with ``meta`` in its metadata."""
    return [
        (
            "alpha beta gamma. " * 200 + f" entry {i}\n\n" + "delta epsilon " * 100,
            {**meta, "source": f"d{i % 2}.md"},
        )
        for i in range(4)
    ]


def test_hand_written_heading_paths_of_any_json_values_are_searched(tmp_path: Path) -> None:
    """A record's ``heading_path`` metadata holding lists or objects (JSON the caller may
    write) made every find over its chunks raise TypeError (the store hashed the path to
    code it); such a path is now compared, never hashed."""
    with Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None) as c:
        add_records(c, _records({"heading_path": [["a"], {"b": 1}], "passage_start": True}))
        assert c.find("alpha entry 2", limit=5).resources
        assert c.assemble_context("alpha entry 2")


def test_a_timestamp_past_the_calendar_is_shown_without_a_time(tmp_path: Path) -> None:
    """A ``timestamp`` metadata value of 1e20 seconds made ``assemble_context`` raise
    OverflowError (``datetime.fromtimestamp``); the block now leaves its time out."""
    with Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None) as c:
        add_records(c, _records({"timestamp": 10**20}))
        assert c.find("alpha entry 2", limit=5).resources
        assert "alpha" in c.assemble_context("alpha entry 2").text


def test_record_metadata_json_cannot_store_is_refused_before_any_write(tmp_path: Path) -> None:
    """Metadata with a non-string key beside string ones escaped TypeError from the
    store's sorted JSON, and metadata nested past Python's recursion limit escaped
    RecursionError; both are IngestError before the first write."""
    deep: list[Any] = []
    cur = deep
    for _ in range(5000):
        nxt: list[Any] = []
        cur.append(nxt)
        cur = nxt
    with Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None) as c:
        for meta in ({1: "a"}, {"x": {"a": 1, 2: "b"}}, {"x": deep}):
            with pytest.raises(IngestError, match="JSON"):
                add_records(c, _records(meta))  # type: ignore[arg-type]
            assert len(c.store) == 0


def test_shown_iso_is_none_for_what_no_calendar_shows() -> None:
    assert shown_iso(0) == "1970-01-01T00:00:00+00:00"
    assert shown_iso(1.5e9) == to_iso(1.5e9)
    for bad in (10**20, -(10**20), 1e300, float("nan"), float("inf"), True, "2024", None):
        assert shown_iso(bad) is None


async def test_mcp_find_shows_a_hit_whose_timestamp_is_past_the_calendar(
    tmp_path: Path,
) -> None:
    """The MCP server's ``find`` answered an error (OverflowError inside the tool) for a hit
    whose ``timestamp`` metadata is 1e20 seconds; the hit now comes without a time."""
    from mcp import Client

    from treehop import AsyncTreehop
    from treehop.mcp_server import build_server

    with Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None) as c:
        add_records(c, _records({"timestamp": 10**20}))
    a = AsyncTreehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None)
    try:
        async with Client(build_server(a)) as client:
            res = await client.call_tool("find", {"query": "alpha entry 2", "limit": 3})
            assert not res.is_error, res.content
            hits = (res.structured_content or {})["hits"]
            assert hits and all("time" not in h for h in hits)
    finally:
        await a.close()


_PW = "sekret-password-123"


@pytest.mark.parametrize(
    "url",
    [
        f"//user:{_PW}@h/",
        f"ftp://user:{_PW}@h/",
        f"http//user:{_PW}@h",
        f"user:{_PW}@h",
        f"https://user:{_PW}@h/",
    ],
)
def test_a_url_s_credentials_reach_no_error_repr_or_name(url: str) -> None:
    """A base URL with ``user:password@`` was echoed whole in the error of a malformed
    one (a reranker spec on the command line, an embedder's or chat model's base_url), and
    a valid one in the repr and the reranker's name."""
    from treehop.embedders.openai_compatible import OpenAICompatibleEmbedder
    from treehop.errors import TreehopError
    from treehop.llm.openai_compatible import OpenAICompatibleLLM
    from treehop.rerankers.http_rerank import HTTPReranker
    from treehop.rerankers.spec import reranker_from_spec

    makers = (
        lambda: HTTPReranker(url),
        lambda: OpenAICompatibleEmbedder(model="m", base_url=url, dimension=4),
        lambda: OpenAICompatibleLLM(model="m", base_url=url),
        lambda: reranker_from_spec("http:" + url),
        lambda: reranker_from_spec(url),
    )
    for make in makers:
        try:
            made = make()
        except TreehopError as exc:
            assert _PW not in str(exc)
        else:
            assert _PW not in repr(made) and _PW not in str(getattr(made, "name", ""))


def test_redact_url_is_linear_and_keeps_what_is_not_userinfo() -> None:
    from treehop.redaction import redact_url

    assert redact_url("https://h.example/v1") == "https://h.example/v1"
    assert redact_url(f"https://u:{_PW}@h/v1") == "https://***@h/v1"
    for n in (50_000, 200_000):  # (no quadratic scan: both well under a second)
        redact_url("a" * n + "@" * n)
        redact_url("@".join(["x" * 10] * (n // 10)))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64), min_size=4, max_size=4))
def test_any_finite_vector_is_its_direction_or_refused_as_zero(values: list[float]) -> None:
    """Property: a vector of finite float64 values is searched as its own unit direction
    (within float32 precision of the largest components), whatever its scale; only an
    all-zero one is refused."""
    wide = np.asarray(values, dtype=np.float64)
    top = float(np.abs(wide).max())
    if top == 0.0:
        with pytest.raises(InvalidQueryError, match="non-zero"):
            _check_query_vector(values, _STORE)
        return
    unit = _check_query_vector(values, _STORE)
    want = (wide / top) / np.linalg.norm(wide / top)
    assert unit.dtype == np.float32 and np.isfinite(unit).all()
    assert float(np.linalg.norm(unit)) == pytest.approx(1.0, abs=1e-5)
    assert unit.tolist() == pytest.approx(want.tolist(), abs=1e-5)
