"""Tag evidence (treehop.tag_hops): tags shared with the top hits enter the final score."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from treehop import RetrievalConfig, TagHopTrigger
from treehop.hierarchical_retriever import HierarchicalRetriever, RetrievalRequest
from treehop.models import FoundBy, QueryResult, TypedQuery
from treehop.stores.base import Scope
from treehop.stores.embedded import EmbeddedStore
from treehop.tag_hops import RARITY_WINDOW, TagEvidence, gather_tag_evidence

from treehop_test_doubles import HAND_ROOT
from treehop_test_doubles import hand_placed_store as build
from treehop_test_doubles import hand_vector as vec

R = HAND_ROOT
Q = vec((0, 1.0))


def scenario(far_tags: list[str], fillers: int = 0, filler_tag: str = "") -> EmbeddedStore:
    """Three strong hits under ``hits/`` share the rare tag ``flux-limiter``; ``far/far.md``
    carries ``far_tags`` and scores a little below ``plain/other.md`` (no tags) on its own."""
    spec: dict[str, tuple[np.ndarray, list[str]]] = {
        R: (vec((7, 1.0)), []),
        f"{R}/hits": (vec((0, 1.0), (1, 0.2)), []),
        f"{R}/hits/a.md": (vec((0, 1.0), (1, 0.2)), ["auto:flux-limiter", "inherit:hits"]),
        f"{R}/hits/b.md": (vec((0, 1.0), (1, 0.3)), ["auto:flux-limiter"]),
        f"{R}/hits/c.md": (vec((0, 1.0), (1, 0.4)), ["auto:shock-tube"]),
        f"{R}/plain": (vec((2, 1.0)), []),
        f"{R}/plain/other.md": (vec((0, 1.0), (2, 1.0)), []),
        f"{R}/far": (vec((3, 1.0)), []),
        f"{R}/far/far.md": (vec((0, 1.0), (3, 1.1)), far_tags),
        f"{R}/filler": (vec((5, 1.0)), []),
    }
    for i in range(fillers):
        spec[f"{R}/filler/f{i:03d}.md"] = (vec((5, 1.0), (0, 0.05 + i * 1e-4)), [filler_tag])
    return build(spec)


def run(store: EmbeddedStore, **cfg: object) -> QueryResult:
    config = RetrievalConfig(
        **{"global_search_topk": 3, "tag_hop_trigger": TagHopTrigger.ALWAYS, **cfg}  # type: ignore[arg-type]
    )
    req = RetrievalRequest(
        query=TypedQuery(query="q"),
        vector=Q,
        roots=[R],
        limit=5,
        dense_weight=1.0,
        include_directories=False,
    )
    return asyncio.run(HierarchicalRetriever(store, config).retrieve(req))


def names(res: QueryResult) -> list[str]:
    return [m.uri.rsplit("/", 1)[-1] for m in res.matched_contexts]


def test_a_leaf_sharing_a_rare_tag_with_the_top_hits_moves_up() -> None:
    store = scenario(["auto:flux-limiter"])
    before = names(run(store, tag_evidence_weight=0.0))
    assert before.index("other.md") < before.index("far.md")
    res = run(store, tag_evidence_weight=0.3)
    after = names(res)
    assert after.index("far.md") < after.index("other.md")
    far = next(m for m in res.matched_contexts if m.uri.endswith("far.md"))
    # The own score is untouched: the tag term only enters the final score.
    assert far.own_score == pytest.approx(float(Q @ vec((0, 1.0), (3, 1.1))), abs=1e-5)
    assert far.score > far.own_score


def test_weight_zero_is_the_old_ranking_with_or_without_tags() -> None:
    for tags in (["auto:flux-limiter"], []):
        store = scenario(tags)
        off = run(store, tag_hop_trigger=TagHopTrigger.OFF)
        zero = run(store, tag_evidence_weight=0.0)
        assert [(m.uri, m.score) for m in zero.matched_contexts] == [
            (m.uri, m.score) for m in off.matched_contexts
        ]


def test_no_tags_anywhere_changes_nothing_and_does_not_crash() -> None:
    spec = {
        R: (vec((7, 1.0)), []),
        f"{R}/x": (vec((0, 1.0)), []),
        f"{R}/x/a.md": (vec((0, 1.0), (1, 0.2)), []),
        f"{R}/y": (vec((1, 1.0)), []),
        f"{R}/y/b.md": (vec((0, 1.0), (1, 0.9)), []),
    }
    store = build(spec)
    on = run(store, tag_evidence_weight=0.5)
    off = run(store, tag_hop_trigger=TagHopTrigger.OFF)
    assert [(m.uri, m.score) for m in on.matched_contexts] == [
        (m.uri, m.score) for m in off.matched_contexts
    ]


def test_a_leaf_the_global_step_missed_is_reached_through_the_tag() -> None:
    # global_search_topk=3 holds only the hits; far.md enters as a tag hop and is labelled so.
    res = run(scenario(["auto:flux-limiter"]), tag_evidence_weight=0.3)
    far = next(m for m in res.matched_contexts if m.uri.endswith("far.md"))
    assert far.found_by in (FoundBy.TAG_HOP, FoundBy.GLOBAL, FoundBy.CHILD)
    store = scenario(["auto:flux-limiter"])
    hits = store.search(Q, Scope(subtrees=(R,)), 3)
    cfg = RetrievalConfig(tag_evidence_weight=0.3)
    ev, leaves = gather_tag_evidence(
        store, hits, [R], Scope(), cfg, lambda s, n: store.search(Q, s, n), limit=5
    )
    assert ev.weights == {"flux-limiter": pytest.approx(1.0)}  # shock-tube: df 1, no bridge
    assert [hl.hit.node.uri for hl in leaves] == [f"{R}/far/far.md"]
    assert leaves[0].tag == "flux-limiter" and leaves[0].source.startswith(f"{R}/hits/")


def test_a_tag_carried_by_too_many_leaves_is_no_evidence() -> None:
    common = "auto:flux-limiter"
    store = scenario([common], fillers=RARITY_WINDOW, filler_tag=common)
    before = names(run(store, tag_evidence_weight=0.0))
    assert names(run(store, tag_evidence_weight=0.5)) == before


def test_inherited_tags_are_no_evidence() -> None:
    ev = TagEvidence({"hits": 0.5, "flux-limiter": 0.5}, scale=0.8)
    assert ev.share(["inherit:hits"]) == 0.0
    assert ev.share(["auto:flux-limiter", "inherit:hits"]) == pytest.approx(0.5)
    assert ev.boost(["auto:flux-limiter"], 0.25) == pytest.approx(0.25 * 0.8 * 0.5)
    assert ev.boost(["auto:flux-limiter"], 0.0) == 0.0
    assert TagEvidence().boost(["auto:flux-limiter"], 1.0) == 0.0


def test_on_demand_gates_the_evidence() -> None:
    store = scenario(["auto:flux-limiter"])
    # Five global hits: hits/ and its three leaves, other.md under plain/ -- 80% in one subtree.
    gate = {"global_search_topk": 5, "tag_evidence_weight": 0.3}
    fired = run(store, tag_hop_trigger=TagHopTrigger.ON_DEMAND, tag_hop_concentration=0.8, **gate)
    assert fired.tag_hops.triggered
    assert names(fired).index("far.md") < names(fired).index("other.md")
    res = run(
        store,
        tag_hop_trigger=TagHopTrigger.ON_DEMAND,
        tag_hop_concentration=1.0,
        **gate,
    )
    assert not res.tag_hops.triggered
    assert names(res) == names(run(store, tag_hop_trigger=TagHopTrigger.OFF))


_SEG = st.sampled_from(["a", "b", "ab", "a#chunk-1", "b/c"])


@given(
    st.lists(
        st.tuples(st.sampled_from(["r", "r/a", "s", "r/ab"]), st.sampled_from("/#"), _SEG),
        min_size=1,
        max_size=12,
    ),
    st.lists(st.sampled_from(["r", "r/a", "s"]), min_size=1, max_size=3, unique=True),
)
def test_subtree_counts_are_the_reference_ones(
    hits: list[tuple[str, str, str]], roots: list[str]
) -> None:
    """``subtree_key`` is the first-level subtree under the first root holding the URI (the
    root itself and URIs outside every root key themselves), and ``concentration`` the
    share of the most common one, the first counted among equals (``Counter.most_common``)."""
    from collections import Counter

    from treehop import uri as urimod
    from treehop.stores.base import ScoredNode
    from treehop.tag_hops import concentration, subtree_key

    from treehop_test_doubles import store_leaf

    def reference(uri: str) -> str:
        for root in roots:
            if urimod.is_within(uri, root) and uri != root:
                head = uri[len(root) + 1 :].split("/", 1)[0].split("#", 1)[0]
                return f"{root}/{head}"
        return uri

    uris = [f"viking://resources/{p}{sep}{seg}" for p, sep, seg in hits]
    full_roots = [f"viking://resources/{r}" for r in roots]
    roots = full_roots
    assert [subtree_key(u, roots) for u in uris] == [reference(u) for u in uris]
    scored = [ScoredNode(store_leaf(u.replace("#", "-")), 0.5, 0.5) for u in uris]
    top, n = Counter(reference(h.node.uri) for h in scored).most_common(1)[0]
    assert concentration(scored, roots) == (n / len(scored), top)
