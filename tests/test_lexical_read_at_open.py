"""The saved BM25 index is read in a thread as an index opens, so that the first hybrid search
does not load it all; that search's answers are those of a store that loads it on first use,
writes made meanwhile included, and a damaged index is still rebuilt."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from treehop.models import ContextType, Node
from treehop.stores.base import Scope
from treehop.stores.embedded import EmbeddedStore

R = "viking://resources"
WORDS = ["alpha", "beta", "gamma", "delta", "kappa", "sigma", "omega", "theta"]


def _leaf(i: int, text: str) -> Node:
    return Node(
        uri=f"{R}/f{i}.md",
        parent_uri=R,
        context_type=ContextType.RESOURCE,
        level=1,
        is_leaf=True,
        content=text,
    )


def _vecs(n: int, seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal((n, 16)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _saved(path: Path) -> None:
    rng = np.random.default_rng(0)
    store = EmbeddedStore(path)
    texts = [" ".join(rng.choice(WORDS, 3)) for _ in range(300)]
    store.upsert([_leaf(i, t) for i, t in enumerate(texts)], _vecs(300, 1))
    store.save()
    store.close()


def _answers(store: EmbeddedStore) -> list[list[tuple[str, float, float | None]]]:
    qs = _vecs(4, 2)
    out = []
    for q, text in zip(qs, ["alpha beta", "zebra", "omega", "theta zebra"], strict=True):
        hits = store.search(q, Scope(), 8, query_text=text, dense_weight=0.5)
        out.append([(h.node.uri, h.score, h.lexical_score) for h in hits])
    return out


def _write_meanwhile(store: EmbeddedStore) -> None:
    """A small write and a delete before the first hybrid search (the index is not loaded
    by them: their rows are replayed when it is)."""
    store.upsert([_leaf(1000, "zebra alpha")], _vecs(1, 3))
    store.delete([f"{R}/f7.md"])


def test_the_first_hybrid_search_reads_what_the_open_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _saved(tmp_path / "idx")
    store = EmbeddedStore(tmp_path / "idx")
    pre = store._lex_pre
    assert pre is not None and pre[1].name == "treehop-lexical-read"
    pre[1].join(timeout=30)
    assert pre[2]  # read, not loaded into the store yet
    assert store._lex is None
    _write_meanwhile(store)
    assert store._lex is None  # a small write did not wait for it nor load it
    loads = []
    real = EmbeddedStore._read_lexical
    monkeypatch.setattr(
        EmbeddedStore,
        "_read_lexical",
        lambda self, *a: loads.append(1) or real(self, *a),
    )
    got = _answers(store)
    assert loads == []  # the read the open made stood for it
    assert any(u == f"{R}/f1000.md" for u, _, _ in got[1])  # the write meanwhile counts
    store.close()
    monkeypatch.undo()

    # the same store, its BM25 index loaded on first use instead (no read at open)
    monkeypatch.setattr(EmbeddedStore, "_start_lexical_read", lambda self, m: None)
    lazy = EmbeddedStore(tmp_path / "idx")
    assert lazy._lex_pre is None
    _write_meanwhile(lazy)
    assert _answers(lazy) == got
    lazy.close()


def test_a_search_during_the_read_waits_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    _saved(tmp_path / "idx")
    gate = threading.Event()
    real = EmbeddedStore._read_lexical

    def slow(self: EmbeddedStore, *a: object) -> object:
        gate.wait(10)
        return real(self, *a)  # type: ignore[arg-type]

    monkeypatch.setattr(EmbeddedStore, "_read_lexical", slow)
    store = EmbeddedStore(tmp_path / "idx")
    assert store._lex_pre is not None
    timer = threading.Timer(0.2, gate.set)
    timer.start()
    got = _answers(store)  # joins the read (one read in all: the gate opens once)
    assert store._lex is not None and store._lex_pre is None
    monkeypatch.undo()
    fresh = EmbeddedStore(tmp_path / "idx", lexical=True)
    assert _answers(fresh) == got
    store.close()
    fresh.close()


def test_a_damaged_bm25_index_is_rebuilt(tmp_path: Path) -> None:
    _saved(tmp_path / "idx")
    good = EmbeddedStore(tmp_path / "idx")
    want = _answers(good)
    good.close()
    (lex,) = (tmp_path / "idx").glob("lexical-*")
    target = lex / "lexical_log_tf.npy"
    raw = bytearray(target.read_bytes())
    raw[-1] ^= 0xFF  # same size, another checksum
    target.write_bytes(bytes(raw))
    store = EmbeddedStore(tmp_path / "idx")
    assert store._lex_pre is not None
    store._lex_pre[1].join(timeout=30)
    assert not store._lex_pre[2]  # refused by its checksum
    assert _answers(store) == want  # rebuilt from the node texts
    store.close()


def test_close_joins_the_read(tmp_path: Path) -> None:
    _saved(tmp_path / "idx")
    store = EmbeddedStore(tmp_path / "idx")
    pre = store._lex_pre
    assert pre is not None
    store.close()
    assert not pre[1].is_alive()
