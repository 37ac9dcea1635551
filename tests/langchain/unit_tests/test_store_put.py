"""What one ``TreehopStore.put`` costs (helper storeput, ``bench/bench_store_put.py``).

A put embeds its item and re-describes the namespace's directory; the directory's text (and
so its vector) changes only when the new item's line lands in it (the first children in key
order, up to the overview's cut), and is embedded again only then. Below
``retag_all_below`` nodes every write also re-tags the whole index, which deep-copied every
stored node (most of a put's time at 900 items when the directory did not change); since
c140b3f it copies only the tags list (``writer._own_tags``): the same tags, texts, vectors and
search results as with deep copies.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from langgraph.store.base import PutOp

from langchain_treehop import TreehopStore
from treehop import Treehop
from treehop.ingest import writer as writer_mod
from treehop.models import Node

from treehop_test_doubles import BagOfWordsEmbedder

NS = ("users", "u1", "memories")


def _value(i: int) -> dict[str, Any]:
    return {"text": f"the user said fact {i} about topic{i % 7} and colour{i % 3}", "n": [i]}


def _filled(n: int) -> tuple[Treehop, TreehopStore, BagOfWordsEmbedder]:
    emb = BagOfWordsEmbedder()
    th = Treehop(None, embedder=emb)  # the default keyword tagger: the re-tag runs
    store = TreehopStore(th)
    store.batch([PutOp(NS, f"m{i:04d}", _value(i)) for i in range(n)])
    return th, store, emb


def _texts_of_put(store: TreehopStore, emb: BagOfWordsEmbedder, key: str, i: int) -> int:
    before = emb.texts_embedded
    store.put(NS, key, _value(i))
    return int(emb.texts_embedded - before)


def test_a_put_embeds_the_directory_only_when_its_text_changes() -> None:
    """Past ~50 items the namespace's overview is at its cut: a key sorting after every
    stored one leaves the directory's text (hence its vector) as it was, and only the item
    is embedded; a key sorting first puts its line in the overview, which is embedded again
    (that cost is the directory's real change, and stays), and changes the namespace's
    abstract (its first items' words, store57), which the overview of the directory above
    quotes: that one is embedded again too (3 texts)."""
    th, store, emb = _filled(120)
    try:
        memories = store.namespace_uri(NS)
        before = th.store.get([memories])[0]
        assert _texts_of_put(store, emb, "z-last", 10_001) == 1
        after = th.store.get([memories])[0]
        assert before is not None and after is not None
        assert after.content_hash == before.content_hash
        above = th.store.get([store.namespace_uri(NS[:2])])[0]
        assert _texts_of_put(store, emb, "a-first", 10_002) == 3
        first = th.store.get([memories])[0]
        assert first is not None and first.content_hash != before.content_hash
        assert "@a first" in first.overview
        above_after = th.store.get([store.namespace_uri(NS[:2])])[0]
        assert above is not None and above_after is not None
        assert above_after.content_hash != above.content_hash
        assert "fact 10002" in above_after.overview
    finally:
        th.close()


def test_the_retag_after_a_put_deep_copies_no_node(monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole-index re-tag after each write (below ``retag_all_below`` nodes) copied every
    stored node deeply (its metadata holds the item's JSON value): ~10 ms of a put at 900
    items (in-memory client). No node is deep-copied now."""
    th, store, _ = _filled(40)
    try:
        assert len(th.store) <= th._async.writer.retag_all_below
        calls = 0
        real = Node.__deepcopy__

        def counting(self: Node, memo: dict[int, Any] | None = None) -> Node:
            nonlocal calls
            calls += 1
            return real(self, memo)

        monkeypatch.setattr(Node, "__deepcopy__", counting)
        store.put(NS, "m0500", _value(500))
        assert calls == 0
    finally:
        th.close()


TIMES = ("created_at", "updated_at", "timestamp")


def _state(th: Treehop) -> list[tuple[Any, ...]]:
    """Every stored node: texts, tags, metadata (less the wall-clock times of the writes)
    and vector bytes."""
    nodes = sorted(th.store.iter_nodes(), key=lambda n: n.uri)
    vecs = th.store.get_vectors([n.uri for n in nodes])
    return [
        (
            n.uri,
            n.abstract,
            n.overview,
            n.content,
            list(n.tags),
            {k: v for k, v in n.metadata.items() if k not in TIMES},
            v.tobytes(),
        )
        for n, v in zip(nodes, np.asarray(vecs), strict=True)
    ]


def _run(ops: list[tuple[str, int]]) -> tuple[list[tuple[Any, ...]], list[Any]]:
    th, store, _ = _filled(30)
    try:
        for key, i in ops:
            store.put(NS, key, _value(i))
        store.delete(NS, "m0003")
        th.set_tags(store.item_uri(NS, "m0004"), add=["pinned"])
        hits = store.search(("users",), query="fact topic3 colour1", limit=10)
        return _state(th), [(h.key, h.score) for h in hits]
    finally:
        th.close()


def test_tags_texts_vectors_and_search_equal_to_deep_copies(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same puts, a delete and a user tag, with the re-tag on deep copies (as before)
    and on copies with their own tags list: every node's texts, tags, metadata and vector,
    and a search's keys and scores, are equal."""
    ops = [("a0", 100), ("m0010", 101), ("zz", 102), ("m0031", 103), ("b1", 104)]
    light = _run(ops)
    monkeypatch.setattr(writer_mod, "_own_tags", lambda n: n.model_copy(deep=True))
    deep = _run(ops)
    assert light == deep
    assert any(row[4] for row in light[0])  # (tags were written: the re-tag ran)
