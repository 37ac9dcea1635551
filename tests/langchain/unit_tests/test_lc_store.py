"""TreehopStore against LangGraph's own InMemoryStore: the same seeded random operation
sequences on both must give equal results for everything but semantic ranking.

LangGraph publishes no conformance suite for ``BaseStore``, so the reference is its in-memory
implementation. Two documented differences are normalised, not hidden:

- ``InMemoryStore`` keeps a namespace whose items were all deleted (and one a ``get`` touched)
  in ``list_namespaces``; TreehopStore lists namespaces that hold items. Before comparing, the
  reference's empty namespaces are dropped.
- Without a query the order of ``search`` results is unspecified by LangGraph (the in-memory
  store returns insertion order, Postgres ``updated_at``); TreehopStore returns
  (namespace, key) order. Unpaginated results are compared as sets, and pagination is checked
  on TreehopStore itself (pages concatenate to the full listing).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langgraph.store.base import GetOp, ListNamespacesOp, MatchCondition, PutOp, SearchOp
from langgraph.store.memory import InMemoryStore

from langchain_treehop import LangChainEmbedder, TreehopStore
from langchain_treehop.store import decode_label, encode_label
from treehop import AsyncTreehop, Treehop
from treehop.errors import InvalidQueryError, InvalidURIError

from lc_helpers import WordHashEmbeddings

LABELS = ["a", "b", "users", "u/1", "mem ories", "é", "~x", "#h", "@k"]
KEYS = ["k1", "k2", "a/b", "~x", "", "k.3", "é", "..", "@", "x#1"]
WORDS = ["pasta", "berlin", "cats", "running", "jazz", "tea", "python", "sea"]
FILTERS: list[dict[str, Any]] = [
    {"tag": "red"},
    {"n": {"$gte": 2}},
    {"n": {"$ne": 3}},
    {"nested": {"m": 1}},
    {"tag": "blue", "n": {"$lt": 4}},
    {"list": [1, 2]},
]


def _ns(rng: random.Random) -> tuple[str, ...]:
    return tuple(rng.choice(LABELS) for _ in range(rng.randint(1, 3)))


def _value(rng: random.Random) -> dict[str, Any]:
    return {
        "text": " ".join(rng.choice(WORDS) for _ in range(3)),
        "n": rng.randint(0, 5),
        "tag": rng.choice(["red", "blue"]),
        "nested": {"m": rng.randint(0, 2)},
        "list": rng.choice([[1, 2], [2, 1]]),
    }


def _purge_empty(ref: InMemoryStore) -> None:
    for ns in [ns for ns, items in ref._data.items() if not items]:
        del ref._data[ns]


def _plain(item: Any) -> Any:
    if item is None:
        return None
    return (tuple(item.namespace), item.key, item.value)


def _random_op(rng: random.Random, used: list[tuple[tuple[str, ...], str]]) -> Any:
    r = rng.random()
    if r < 0.45 or not used:
        ns, key = _ns(rng), rng.choice(KEYS)
        used.append((ns, key))
        return PutOp(ns, key, _value(rng))
    if r < 0.55:
        ns, key = rng.choice(used)
        return PutOp(ns, key, None)
    if r < 0.68:
        ns, key = rng.choice(used) if rng.random() < 0.8 else (_ns(rng), rng.choice(KEYS))
        return GetOp(ns, key)
    if r < 0.85:
        prefix = rng.choice(used)[0][: rng.randint(0, 2)]
        flt = rng.choice([None, *FILTERS])
        return SearchOp(prefix, flt, 100, 0)
    conds = []
    if rng.random() < 0.5:
        path = list(rng.choice(used)[0][: rng.randint(1, 2)])
        if rng.random() < 0.3:
            path[0] = "*"
        conds.append(MatchCondition("prefix", tuple(path)))
    if rng.random() < 0.3:
        conds.append(MatchCondition("suffix", rng.choice(used)[0][-1:]))
    return ListNamespacesOp(
        tuple(conds) or None,
        rng.choice([None, 1, 2]),
        rng.choice([100, 2]),
        rng.choice([0, 0, 1]),
    )


def _random_batch(rng: random.Random, used: list[tuple[tuple[str, ...], str]]) -> list[Any]:
    """One to three operations; a namespace listing runs in a batch of its own, because the
    reference's ``get`` of an unknown namespace creates that namespace within the batch."""
    ops = [_random_op(rng, used) for _ in range(rng.choice([1, 1, 1, 3]))]
    if len(ops) > 1:
        ops = [op for op in ops if not isinstance(op, ListNamespacesOp)] or ops[:1]
    return ops


def _compare(op: Any, got: Any, want: Any) -> None:
    if isinstance(op, GetOp):
        assert _plain(got) == _plain(want), op
    elif isinstance(op, SearchOp):
        assert sorted(map(_plain, got), key=repr) == sorted(map(_plain, want), key=repr), op
    elif isinstance(op, ListNamespacesOp):
        assert got == want, op
    else:
        assert got is None and want is None


@pytest.fixture
def client() -> Treehop:
    return Treehop(None, embedder=LangChainEmbedder(WordHashEmbeddings()), tagger=None)


@pytest.mark.parametrize("seed", range(6))
def test_differential_against_inmemorystore(client: Treehop, seed: int) -> None:
    rng = random.Random(seed)
    ref = InMemoryStore()
    store = TreehopStore(client)
    used: list[tuple[tuple[str, ...], str]] = []
    for _ in range(30):
        ops = _random_batch(rng, used)
        _purge_empty(ref)
        want = ref.batch(ops)
        got = store.batch(ops)
        _purge_empty(ref)
        for op, g, w in zip(ops, got, want, strict=True):
            _compare(op, g, w)
    # the final states agree item by item
    everything = SearchOp((), None, 1000, 0)
    _purge_empty(ref)
    assert sorted(map(_plain, store.batch([everything])[0]), key=repr) == sorted(
        map(_plain, ref.batch([everything])[0]), key=repr
    )


async def test_async_batch_matches_too() -> None:
    client = AsyncTreehop(None, embedder=LangChainEmbedder(WordHashEmbeddings()), tagger=None)
    ref = InMemoryStore()
    store = TreehopStore(client)
    rng = random.Random(99)
    used: list[tuple[tuple[str, ...], str]] = []
    for _ in range(15):
        ops = _random_batch(rng, used)
        _purge_empty(ref)
        want = await ref.abatch(ops)
        got = await store.abatch(ops)
        for op, g, w in zip(ops, got, want, strict=True):
            _compare(op, g, w)
    await client.close()


def test_semantic_search_same_items_ranked_by_the_tree(client: Treehop) -> None:
    emb = WordHashEmbeddings()
    ref = InMemoryStore(index={"dims": 64, "embed": emb, "fields": ["text"]})
    store = TreehopStore(client, index_fields=["text"])
    docs = {
        "d1": "pasta and tomato sauce",
        "d2": "berlin techno clubs",
        "d3": "cats sleeping all day",
        "d4": "fresh pasta recipes",
    }
    for key, text in docs.items():
        for s in (ref, store):
            s.put(("users", "u1"), key, {"text": text})
    ref.put(("users", "u1"), "raw", {"text": "pasta unindexed"}, index=False)
    store.put(("users", "u1"), "raw", {"text": "pasta unindexed"}, index=False)
    got = store.search(("users",), query="pasta", limit=10)
    want = ref.search(("users",), query="pasta", limit=10)
    assert {i.key for i in got} == {i.key for i in want}
    assert [i.key for i in got[:2]] in (["d1", "d4"], ["d4", "d1"])
    assert got[-1].key == "raw" and got[-1].score is None
    assert all(i.score is not None for i in got[:-1])
    # limit and offset page through the same ranking
    page = store.search(("users",), query="pasta", limit=2, offset=1)
    assert [i.key for i in page] == [i.key for i in got[1:3]]
    # query + filter
    store.put(("users", "u2"), "d5", {"text": "pasta", "tag": "red"})
    filtered = store.search(("users",), query="pasta", filter={"tag": "red"})
    assert [i.key for i in filtered] == ["d5"]


def test_pagination_concatenates_to_the_full_listing(client: Treehop) -> None:
    store = TreehopStore(client)
    for i in range(7):
        store.put(("p", str(i % 3)), f"k{i}", {"i": i})
    full = store.search(("p",), limit=100)
    pages = [store.search(("p",), limit=3, offset=o) for o in (0, 3, 6)]
    assert [_plain(x) for page in pages for x in page] == [_plain(x) for x in full]
    assert len(full) == 7


def test_reads_in_a_batch_see_the_state_before_its_writes(client: Treehop) -> None:
    store = TreehopStore(client)
    store.put(("a",), "k", {"v": 1})
    got = store.batch(
        [PutOp(("a",), "k", {"v": 2}), GetOp(("a",), "k"), PutOp(("a",), "k", {"v": 3})]
    )
    assert got[1] is not None and got[1].value == {"v": 1}
    assert store.get(("a",), "k").value == {"v": 3}


def test_namespaces_map_to_uris_under_the_users_space(client: Treehop) -> None:
    store = TreehopStore(client)
    store.put(("users", "u/1", "memories"), "diet", {"text": "vegetarian"})
    uri = "viking://~/memories/store/users/u~2f1/memories/@diet"
    assert client.read(uri) == '{"text": "vegetarian"}'
    # the memories are part of the tree: find() reaches them like any memory
    hits = client.find("vegetarian", target_uri="viking://~/memories")
    assert uri in [m.uri for m in hits.contexts()]
    item = store.get(("users", "u/1", "memories"), "diet")
    assert item is not None and item.created_at <= item.updated_at
    created = item.created_at
    store.put(("users", "u/1", "memories"), "diet", {"text": "vegan"})
    again = store.get(("users", "u/1", "memories"), "diet")
    assert again is not None and again.created_at == created and again.updated_at > created
    store.delete(("users", "u/1", "memories"), "diet")
    assert store.get(("users", "u/1", "memories"), "diet") is None
    # emptied namespace directories are pruned
    assert [e.uri for e in client.ls("viking://~/memories/store")] == []


@settings(max_examples=300)
@given(st.text(max_size=40) | st.sampled_from(["", "~", "a~2f", "é/#..", "..", ".", "~~7e"]))
def test_label_escape_round_trips(label: str) -> None:
    seg = encode_label(label)
    assert decode_label(seg) == label
    assert seg not in {".", ".."} and "/" not in seg and "#" not in seg and "%" not in seg


def test_persists_across_runs(tmp_path: Path) -> None:
    path = tmp_path / "idx"
    emb = LangChainEmbedder(WordHashEmbeddings())
    with Treehop(path, embedder=emb, tagger=None) as c:
        TreehopStore(c).put(("users", "ann"), "home", {"text": "Ann lives in Porto"})
    with Treehop(path, embedder=emb, tagger=None) as c:
        item = TreehopStore(c).get(("users", "ann"), "home")
        assert item is not None and item.value == {"text": "Ann lives in Porto"}


def test_bad_input_is_refused(client: Treehop) -> None:
    store = TreehopStore(client)
    with pytest.raises(InvalidURIError):
        TreehopStore(client, root="viking://resources/x")
    with pytest.raises(InvalidQueryError):
        TreehopStore(client, index_fields=[])
    with pytest.raises(InvalidQueryError):
        store.batch([PutOp(("a",), "k", {"v": object()})])
    with pytest.raises(InvalidQueryError):
        store.batch([PutOp(("a",), "k", {"v": 1}, ttl=5.0)])
    with pytest.raises(InvalidQueryError):
        store.batch([PutOp(("a", ""), "k", {"v": 1})])
    with pytest.raises(InvalidQueryError):
        store.batch([PutOp(("a",), "€" * 300, {"v": 1})])
    assert store.get(("a",), "k") is None
    store.put(("a",), "k2", {"v": 1})
    with pytest.raises(InvalidQueryError):
        store.search(("a",), filter={"v": {"$regex": "x"}})
