"""A user's own embedder cannot make a foreign exception or a malformed vector escape treehop.

The client wraps whatever embedder it is given (``embedders/guarded.py``); these tests drive
the real client paths (async find, the sync caller-thread find, ingest) with embedders that
fail the way third-party ones do.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import AsyncTreehop, Treehop
from treehop.embedders.guarded import GuardedEmbedder, guard_embedder
from treehop.errors import EmbeddingError, TreehopError
from treehop.redaction import register_secret

from treehop_test_doubles import BagOfWordsEmbedder

SECRET = "sk-guard-test-0123456789abcdef"


class Faulty(BagOfWordsEmbedder):
    """Works until ``mode`` is set, then fails the way a third-party client would."""

    def __init__(self) -> None:
        super().__init__()
        self.mode = ""

    def _answer(self, texts: Sequence[str]) -> Any:
        if self.mode == "raise":
            raise RuntimeError(f"upstream said no (api_key={SECRET})")
        if self.mode == "nan":
            out = super().embed(texts)
            out[0, 0] = np.nan
            return out
        if self.mode == "short":
            return super().embed(texts)[:, :10]
        if self.mode == "rows":
            return super().embed([*texts, "extra"])
        if self.mode == "text":
            return "not a vector"
        return super().embed(texts)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self._answer(texts)  # type: ignore[no-any-return]


def _client(tmp_path: Path, sample_tree: Path) -> tuple[Treehop, Faulty]:
    emb = Faulty()
    c = Treehop(tmp_path / "idx", embedder=emb, tagger=None)
    c.add_resource(sample_tree)
    return c, emb


@pytest.mark.parametrize("mode", ["raise", "nan", "short", "text"])
def test_sync_find_turns_any_embedder_fault_into_embedding_error(
    tmp_path: Path, sample_tree: Path, mode: str
) -> None:
    register_secret(SECRET)
    c, emb = _client(tmp_path, sample_tree)
    try:
        assert c.find("deploy", limit=3).contexts()  # works before the fault
        emb.mode = mode
        with pytest.raises(EmbeddingError) as info:
            c.find("deploy", limit=3)
        assert SECRET not in str(info.value)
        assert info.value.__cause__ is None
        if mode == "raise":
            assert "RuntimeError" in str(info.value)
    finally:
        c.close()


def test_async_find_and_ingest_faults_are_typed_and_write_nothing(
    tmp_path: Path, sample_tree: Path
) -> None:
    async def go() -> None:
        emb = Faulty()
        c = AsyncTreehop(tmp_path / "idx", embedder=emb, tagger=None)
        try:
            await c.add_resource(
                sample_tree / "resources" / "devops", target_uri="viking://resources/first"
            )
            n = len(c.store)
            emb.mode = "raise"
            with pytest.raises(EmbeddingError):
                await c.find("deploy")
            with pytest.raises(EmbeddingError):
                await c.add_resource(
                    sample_tree / "resources" / "devops", target_uri="viking://resources/second"
                )
            assert len(c.store) == n
            emb.mode = "rows"
            with pytest.raises(EmbeddingError, match="shape"):
                await c.add_resource(
                    sample_tree / "resources" / "devops", target_uri="viking://resources/third"
                )
            assert len(c.store) == n
        finally:
            await c.close()

    asyncio.run(go())


def test_client_keeps_the_users_object_and_the_guard_delegates(
    tmp_path: Path, sample_tree: Path
) -> None:
    c, emb = _client(tmp_path, sample_tree)
    try:
        assert c.aio.embedder is emb
        before = emb.calls
        c.find("deploy")
        assert emb.calls == before + 1
        guard = guard_embedder(emb)
        assert guard.calls == emb.calls and guard.name == emb.name
        assert guard_embedder(guard) is guard
    finally:
        c.close()


def test_a_treehop_error_passes_through_unchanged() -> None:
    class Own(BagOfWordsEmbedder):
        def embed(self, texts: Sequence[str]) -> np.ndarray:
            raise EmbeddingError("own message")

    with pytest.raises(EmbeddingError, match=r"^own message$"):
        GuardedEmbedder(Own()).embed(["x"])


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(0, 4),
    rows=st.integers(0, 5),
    cols=st.integers(0, 70),
    ndim=st.sampled_from([1, 2, 3]),
    bad=st.booleans(),
)
def test_embed_accepts_exactly_n_finite_rows_of_the_dimension(
    n: int, rows: int, cols: int, ndim: int, bad: bool
) -> None:
    shape: tuple[int, ...] = {1: (cols,), 2: (rows, cols), 3: (rows, cols, 1)}[ndim]

    class Fixed(BagOfWordsEmbedder):
        def embed(self, texts: Sequence[str]) -> np.ndarray:
            out = np.ones(shape, dtype=np.float32)
            if bad and out.size:
                out.flat[0] = np.inf
            return out

    guard = GuardedEmbedder(Fixed())
    ok = ndim == 2 and rows == n and cols == Fixed.dimension and not (bad and rows * cols)
    texts = ["t"] * n
    if ok:
        assert guard.embed(texts).shape == (n, Fixed.dimension)
    else:
        with pytest.raises(TreehopError):
            guard.embed(texts)


def test_a_query_the_embedder_maps_to_zero_is_answered_like_the_async_path(
    tmp_path: Path, sample_tree: Path
) -> None:
    # "!!!" has no word for the bag-of-words embedder: its embedding is all zero, which the
    # sync caller-thread path must not turn into a rejected caller vector (hypothesis found it
    # with "\U00011630")
    c, emb = _client(tmp_path, sample_tree)
    try:
        assert not np.any(emb.embed_query("!!!"))
        sync = c.find("!!!", limit=5)
        async_ = c._runner.run(c.aio.find("!!!", limit=5))
        assert [m.uri for m in sync.contexts()] == [m.uri for m in async_.contexts()]
    finally:
        c.close()
