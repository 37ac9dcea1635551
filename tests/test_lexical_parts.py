"""A write's (document, term) sort runs over parts of consecutive documents
(``lexical._WRITE_PART``): the postings log, blocks, frequencies, scores and saved files are
those of one sort over every token, on hypothesis-generated writes (new rows, rewritten rows,
empty documents, deletions in between) cut into parts of one or a few tokens."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import lexical
from treehop.lexical import LexicalIndex

_WORDS = st.sampled_from(["alpha", "beta", "gamma", "delta", "Running", "runs", "k8s", "the"])
_DOC = st.lists(_WORDS, max_size=9).map(" ".join)
_WRITE = st.lists(st.tuples(st.integers(0, 30), _DOC), min_size=1, max_size=12)


@contextmanager
def _part(size: int) -> Iterator[None]:
    real = lexical._WRITE_PART
    lexical._WRITE_PART = size
    try:
        yield
    finally:
        lexical._WRITE_PART = real


def _run(writes: list[list[tuple[int, str]]], deletes: list[list[int]]) -> LexicalIndex:
    index = LexicalIndex()
    for k, write in enumerate(writes):
        gone = deletes[k] if k < len(deletes) else []
        rows = list(dict.fromkeys(r for r, _ in write))
        text = dict(write)
        index.upsert(rows, [text[r] for r in rows])
        index.delete(gone)
    return index


def _state(index: LexicalIndex) -> dict[str, object]:
    m = index._m
    return {
        "terms": list(index._terms),
        "df": index._df[: len(index._terms)].tolist(),
        "log": [getattr(index, n)[:m].tolist() for n in ("_log_term", "_log_row", "_log_tf")],
        "alive": index._alive[:m].tolist(),
        "blocks": [index._start.tolist(), index._count.tolist(), index._dl.tolist()],
        "perm": index._perm.tolist(),
        "indptr": index._indptr.tolist(),
        "docs": (len(index), index.avgdl),
    }


@settings(max_examples=150, deadline=None)
@given(
    st.lists(_WRITE, min_size=1, max_size=4),
    st.lists(st.lists(st.integers(0, 30), max_size=4), max_size=4),
    st.integers(1, 7),
)
def test_parts_write_what_one_sort_writes(
    writes: list[list[tuple[int, str]]], deletes: list[list[int]], size: int
) -> None:
    with _part(1 << 30):
        want = _run(writes, deletes)
    with _part(size):
        got = _run(writes, deletes)
    assert _state(got) == _state(want)
    for query in ("alpha beta", "running k8s", "gamma"):
        assert np.array_equal(got.score(query, size=32), want.score(query, size=32))


def test_saved_files_are_equal(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta"]
    texts = [
        " ".join(rng.choice(words, size=int(rng.integers(0, 12))).tolist()) for _ in range(400)
    ]
    for name, size in (("one", 1 << 30), ("parts", 16)):
        with _part(size):
            index = LexicalIndex()
            index.upsert(list(range(400)), texts)
            index.upsert(list(range(0, 400, 3)), texts[::-3][:134])
            index.save(tmp_path / name)
    for f in sorted((tmp_path / "one").iterdir()):
        assert f.read_bytes() == (tmp_path / "parts" / f.name).read_bytes(), f.name
