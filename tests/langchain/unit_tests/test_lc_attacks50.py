"""Helper attacks50: LangGraph's store (``TreehopStore``) with hostile filters and
namespaces. Only treehop errors leave the store, and a refused call writes nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import PutOp, SearchOp

from langchain_treehop import LangChainEmbedder, TreehopStore
from treehop import Treehop
from treehop import uri as urimod
from treehop.errors import TreehopError

from lc_helpers import WordHashEmbeddings


@pytest.fixture
def store(tmp_path: Path) -> Any:
    c = Treehop(tmp_path / "idx", embedder=LangChainEmbedder(WordHashEmbeddings()), tagger=None)
    st = TreehopStore(c)
    st.put(("a",), "k", {"n": 1, "text": "pasta"})
    yield st
    c.close()


@pytest.mark.parametrize(
    "flt",
    [
        {"n": {"$gt": 10**400}},
        {"n": {"$lt": -(10**400)}},
        {"n": {1: 2}},
        {"n": {"m": {None: 1}}},
    ],
    ids=["gt-huge-int", "lt-huge-negative", "int-operator-key", "nested-none-key"],
)
def test_a_filter_that_cannot_match_finds_nothing_instead_of_raising(
    store: TreehopStore, flt: dict[str, Any]
) -> None:
    """A comparison with an int past float's range raised ``OverflowError`` (``float()`` of
    it), a nested filter object with a non-string key ``AttributeError`` (``k.startswith``);
    neither can match a stored JSON value: the item is not found, and the batch's puts
    are written as with any other search."""
    assert store.search(("a",), filter=flt) == []
    store.batch([PutOp(("a",), "k2", {"n": 2}), SearchOp(("a",), flt, 10)])
    assert store.get(("a",), "k2") is not None


def test_a_huge_stored_int_is_compared_as_no_match(store: TreehopStore) -> None:
    store.put(("a",), "big", {"n": 10**400})
    got = store.search(("a",), filter={"n": {"$gt": 0}})
    assert [i.key for i in got] == ["k"]


def test_a_namespace_past_the_uri_depth_is_refused_before_any_write(
    store: TreehopStore,
) -> None:
    """A namespace of 1,000 labels escaped ``RecursionError`` out of the write (the
    ancestors of its item), and one of 300 was written past ``MAX_URI_DEPTH`` (a node no
    URI argument can name again). Now :class:`InvalidQueryError` before the batch reads or
    writes; the batch's other puts are not written either."""
    before = len(store.client.store)
    for depth in (300, 1000):
        ns = tuple("x" for _ in range(depth))
        with pytest.raises(TreehopError, match="deep"):
            store.put(ns, "k", {"a": 1})
        with pytest.raises(TreehopError, match="deep"):
            store.batch([PutOp(("a",), "ok", {"a": 1}), PutOp(ns, "k", {"a": 1})])
    assert store.get(("a",), "ok") is None
    assert len(store.client.store) == before
    # the deepest namespace that fits is written and read back
    root_depth = store.root.count("/") - 1
    ns = tuple("x" for _ in range(urimod.MAX_URI_DEPTH - root_depth - 1))
    store.put(ns, "k", {"a": 1})
    assert store.get(ns, "k") is not None


def test_a_get_or_a_search_reads_its_own_items_not_the_whole_store(
    store: TreehopStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every batch parsed every item of the store (``iter_nodes`` of the root) before its
    first op: a ``get`` on a store of 16,000 items took 63 ms and a search in a namespace of
    320 items 208 ms, growing with the store. A get now reads its item, a search its
    namespace's subtree; ``list_namespaces`` still reads them all. The answers are the
    same (``test_lc_store.py``'s differential suite against LangGraph's InMemoryStore)."""
    store.batch([PutOp(("big", f"u{i % 10}"), f"k{i}", {"text": f"fact {i}"}) for i in range(300)])
    backend = store.client.store
    parsed: list[str] = []
    real = backend.iter_nodes

    def counting(subtree: str | None = None) -> Any:
        for n in real(subtree):
            parsed.append(n.uri)
            yield n

    monkeypatch.setattr(backend, "iter_nodes", counting)
    item = store.get(("big", "u3"), "k13")
    assert item is not None and item.value == {"text": "fact 13"}
    assert store.get(("big", "u3"), "nope") is None
    assert len(parsed) <= 1, len(parsed)
    parsed.clear()
    got = store.search(("big", "u3"), filter={"text": "fact 23"})
    assert [i.key for i in got] == ["k23"]
    assert len(parsed) <= 31, len(parsed)  # (the namespace: its 30 items and itself)
    parsed.clear()
    store.put(("big", "u3"), "k13", {"text": "again"})
    again = store.get(("big", "u3"), "k13")
    assert again is not None and again.created_at == item.created_at
    assert len(parsed) <= 1, len(parsed)
