"""Work a find skips because it cannot change the result gives the same result without it.

- The embedded store says whether it holds a node of a context type
  (``holds_context_type``), per snapshot: a write that adds or removes the last memory
  node changes the answer.
- On a store without memory nodes the retriever skips the memory context (turn windows,
  session evidence): the results equal those of the full path, which a store that
  answers "maybe" (no such capability) still takes; a store WITH memories still gets its
  turns' exchanges.
- ``find`` reads a caller's target roots from the store once.
- ``unique_inverse`` (small arrays without ``np.unique``) is ``np.unique``.
- ``find_by_tags`` checks a label's rows lazily with the answer of checking them all.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from test_columnar_search import DIM, RES, _node, _query, random_tree
from treehop import RetrievalConfig, Treehop
from treehop import hierarchical_retriever as hr_mod
from treehop.hierarchical_retriever import HierarchicalRetriever, RetrievalRequest
from treehop.models import ContextType, QueryResult, TypedQuery
from treehop.stores.base import Scope, unique_inverse
from treehop.stores.embedded import EmbeddedStore
from treehop.stores.embedded import layout as emb_layout
from treehop.stores.embedded import search_paths as emb_search
from treehop.stores.embedded import snapshot as emb_snapshot
from treehop.stores.embedded import store as emb_store
from treehop.stores.embedded import writes as emb_writes

from treehop_test_doubles import BagOfWordsEmbedder


def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.standard_normal((n, DIM)).astype(np.float32)
    out: np.ndarray = v / np.linalg.norm(v, axis=1, keepdims=True)
    return out


def test_holds_context_type_follows_the_writes() -> None:
    rng = np.random.default_rng(0)
    store = EmbeddedStore(None)
    assert not store.holds_context_type(ContextType.RESOURCE)
    docs = [
        _node(RES, None, ContextType.RESOURCE, 0, False),
        _node(f"{RES}/a", RES, ContextType.RESOURCE, 2, True),
    ]
    store.upsert(docs, _unit(rng, 2))
    assert store.holds_context_type(ContextType.RESOURCE)
    assert not store.holds_context_type(ContextType.MEMORY)
    mem = "viking://user/u1/memories"
    turn = _node(f"{mem}/s1/turn-00000", f"{mem}/s1", ContextType.MEMORY, 2, True)
    store.upsert([turn], _unit(rng, 1))
    assert store.holds_context_type(ContextType.MEMORY)  # a new snapshot: asked again
    assert not store.holds_context_type(ContextType.SKILL)
    assert store.delete([turn.uri]) == 1
    assert not store.holds_context_type(ContextType.MEMORY)  # deleted rows do not count


class MaybeMemories:
    """The embedded store without the ``holds_context_type`` capability (any store that
    does not say): the retriever must take the memory context's full path."""

    def __init__(self, inner: EmbeddedStore) -> None:
        self._inner = inner
        self.capabilities = inner.capabilities

    def __getattr__(self, name: str) -> Any:
        if name == "holds_context_type":
            raise AttributeError(name)
        return getattr(self._inner, name)

    def __len__(self) -> int:
        return len(self._inner)


def _signature(res: QueryResult) -> list[tuple[Any, ...]]:
    return [
        (
            m.uri,
            m.score,
            m.own_score,
            m.found_by,
            m.found_via,
            [(c.uri, c.score) for c in m.collapsed],
        )
        for m in res.matched_contexts
    ]


@pytest.mark.parametrize("seed", [1, 4])
def test_a_tree_without_memories_skips_the_memory_context_with_the_same_results(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, rng = random_tree(seed)
    # the resources alone: every memory node removed
    mem = [u for u in store.iter_uris() if not u.startswith(RES)]
    store.delete(mem)
    assert not store.holds_context_type(ContextType.MEMORY)
    cfg = RetrievalConfig(memory_session_weight=0.5)
    skipping = HierarchicalRetriever(store, cfg)
    full = HierarchicalRetriever(MaybeMemories(store), cfg)  # type: ignore[arg-type]
    calls: list[int] = []
    gather = hr_mod.gather_slots

    async def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return await gather(*args, **kwargs)

    monkeypatch.setattr(hr_mod, "gather_slots", counted)
    for _ in range(5):
        q = _query(rng)
        for dirs in (None, False, True):
            req = RetrievalRequest(
                query=TypedQuery(query="alpha beta"),
                vector=q,
                roots=[RES],
                limit=int(rng.integers(2, 8)),
                include_directories=dirs,
            )
            before = len(calls)
            a = asyncio.run(skipping.retrieve(req))
            assert len(calls) == before  # skipped: no turn can be a hit
            b = asyncio.run(full.retrieve(req))
            assert len(calls) == before + 1  # the full path ran
            assert a.matched_contexts and _signature(a) == _signature(b)
            assert a.nodes_scored == b.nodes_scored


def test_a_tree_with_memories_still_gets_the_exchange(tmp_path: Path) -> None:
    c = Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "pottery.md").write_text("# Pottery\n\nA pottery workshop guide.\n")
    c.add_resource(str(docs), target_uri="viking://resources/docs")
    assert not c.store.holds_context_type(ContextType.MEMORY)
    c.add_messages(
        [
            {"speaker": "Ann", "content": "Did you go to the pottery workshop?"},
            {"speaker": "Bob", "content": "Yes, last Saturday, it was great."},
        ],
        conversation_id="c1",
        session_id="s1",
    )
    assert c.store.holds_context_type(ContextType.MEMORY)
    top = c.find("pottery workshop", target_uri="viking://~/memories/conversations").memories[0]
    assert top.uri.endswith("turn-00000")
    assert [t.position for t in top.collapsed] == [1]  # the next turn rides along


def test_find_reads_its_target_roots_once(monkeypatch: pytest.MonkeyPatch) -> None:
    c = Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None)
    c.add_resource("Pottery workshops in Berlin.", target_uri="viking://resources/notes")
    asked: list[list[str]] = []
    get = c.store.get

    def logged(uris: Any) -> Any:
        asked.append(list(uris))
        return get(uris)

    monkeypatch.setattr(c.store, "get", logged)
    res = c.find("pottery", target_uri="viking://resources/notes")
    assert res.resources
    assert asked.count(["viking://resources/notes"]) == 1
    # without targets the type roots are still checked (an empty store has none of them)
    asked.clear()
    c.find("pottery")
    assert asked and len(asked[0]) == len(ContextType)


@given(
    st.lists(st.integers(-3, 2**40), max_size=200)
    | st.lists(st.integers(-1, 6), min_size=100, max_size=400)
    # one value (a family's parent): its own path, also past SMALL_UNIQUE values
    | st.integers(-1, 6).flatmap(lambda v: st.lists(st.just(v), min_size=1, max_size=300))
    | st.lists(st.integers(0, 1), min_size=2, max_size=300).map(lambda a: [*a, a[0]])
)
def test_unique_inverse_is_np_unique(values: list[int]) -> None:
    a = np.array(values, dtype=np.int64)
    distinct, inverse = unique_inverse(a)
    want, want_inv = np.unique(a, return_inverse=True)
    assert distinct.dtype == want.dtype and inverse.dtype == want_inv.dtype
    assert distinct.tolist() == want.tolist()
    assert inverse.tolist() == want_inv.reshape(-1).tolist()


def test_find_by_tags_checks_rows_lazily_with_the_answer_of_checking_all(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Tag hops' lookup checks a label's rows only until ``limit`` in scope carry it: the
    same nodes, in the same order, with the same labels present, as checking every row
    first (``_tag_rows``), also where labels share a hash (forced here: a 2-value hash)."""
    for mod in (emb_layout, emb_snapshot, emb_search, emb_writes, emb_store):
        monkeypatch.setattr(mod, "_h64", lambda text: 1 + len(text) % 2)
    rng = np.random.default_rng(3)
    labels = ["ml", "ops", "db", "web", "api", "gpu"]
    nodes = [_node(RES, None, ContextType.RESOURCE, 0, False)]
    for d in range(4):
        folder = f"{RES}/d{d}"
        tags = [f"user:{lab}" for lab in rng.choice(labels, size=2, replace=False)]
        nodes.append(_node(folder, RES, ContextType.RESOURCE, 1, False, tags=tags))
        for f in range(6):
            tags = [f"auto:{lab}" for lab in rng.choice(labels, size=2, replace=False)]
            leaf = _node(f"{folder}/f{f}.md", folder, ContextType.RESOURCE, 2, True, tags=tags)
            nodes.append(leaf)
    store = EmbeddedStore(None)
    store.upsert(nodes, _unit(rng, len(nodes)))

    def reference(asked: list[str], scope: Scope, limit: int) -> dict[str, list[str]]:
        s = store._snap
        allowed = store._candidate_rows(s, scope)
        base = store._static_mask(s, scope, allowed)
        in_scope = set((np.arange(s.n) if allowed is None else allowed)[base].tolist())
        out: dict[str, list[str]] = {}
        for lab in asked:
            rows = store._tag_rows(s, lab)  # every row checked
            if rows.size:
                sel = [r for r in rows.tolist() if r in in_scope][:limit]
                got = [store._node(s, r).uri for r in sel]
                out[lab] = [u for u in got if u not in scope.exclude_uris]
        return out

    scopes = [
        Scope(),
        Scope(subtrees=(f"{RES}/d1",), leaves_only=True),
        Scope(subtrees=(RES,), non_leaves_only=True, exclude_uris=frozenset({f"{RES}/d0"})),
        Scope(subtrees=(f"{RES}/d2",), non_leaves_only=True),
    ]
    for scope in scopes:
        for limit in (1, 3, 50):
            asked = [*labels, "none", "zz"]
            got = store.find_by_tags(asked, scope, limit)
            want = reference(asked, scope, limit)
            assert {k: [n.uri for n in v] for k, v in got.items()} == want
    assert store.find_by_tags(["ml"], Scope(), 50)["ml"]  # the forced hash still finds them
