"""The heap search, step by step, on small trees with hand-placed vectors."""

from __future__ import annotations

import asyncio
import math
import pickle
from collections.abc import Sequence

import numpy as np
import pytest

from treehop import RetrievalConfig as _Config
from treehop import StopRule, TagHopTrigger
from treehop.filters import TagFilter
from treehop.hierarchical_retriever import HierarchicalRetriever, RetrievalRequest, _built_matched
from treehop.models import (
    ChunkContext,
    ContextType,
    FoundBy,
    MatchedContext,
    Node,
    RetrievalMode,
    TypedQuery,
)
from treehop.rerankers.base import BaseReranker
from treehop.stores.embedded import EmbeddedStore

from treehop_test_doubles import HAND_DIM, HAND_ROOT
from treehop_test_doubles import hand_placed_store as build
from treehop_test_doubles import hand_vector as vec

NO_CONTEXT = {
    "context_neighbour_weight": 0.0,
    "context_parent_weight": 0.0,
    "context_sibling_weight": 0.0,
}


def RetrievalConfig(**kw: object) -> _Config:
    """The descent's tests rank by propagated scores alone: tree context scoring, which runs
    after the descent, is off unless a test sets its weights (``tests/test_tree_scoring.py``)."""
    return _Config(**{**NO_CONTEXT, **kw})  # type: ignore[arg-type]


R = HAND_ROOT
DIM = HAND_DIM


Q = vec((0, 1.0))


def tree() -> EmbeddedStore:
    return build(
        {
            R: (vec((7, 1.0)), []),
            f"{R}/ml": (vec((0, 0.9), (1, 0.44)), []),
            f"{R}/ml/train.md": (vec((0, 0.95), (2, 0.3)), []),
            f"{R}/ml/eval.md": (vec((0, 0.5), (2, 0.86)), []),
            f"{R}/ml/deep": (vec((0, 0.7), (3, 0.71)), []),
            f"{R}/ml/deep/lora.md": (vec((0, 0.8), (3, 0.6)), []),
            f"{R}/ops": (vec((4, 1.0)), []),
            f"{R}/ops/k8s.md": (vec((4, 0.9), (0, 0.1)), []),
        }
    )


def conv(**kw: object) -> _Config:
    """The seed's stop rule (top-k unchanged for N rounds) instead of the bound."""
    return RetrievalConfig(stop_rule=StopRule.CONVERGENCE, **kw)  # type: ignore[arg-type]


def request(**kw: object) -> RetrievalRequest:
    # Dense only: these tests place vectors by hand; hybrid scoring is tested on the store.
    base: dict[str, object] = {
        "query": TypedQuery(query="q"),
        "vector": Q,
        "roots": [R],
        "limit": 5,
        "dense_weight": 1.0,
    }
    base.update(kw)
    return RetrievalRequest(**base)  # type: ignore[arg-type]


def run(store: EmbeddedStore, cfg: _Config | None = None, reranker: object = None, **kw: object):
    r = HierarchicalRetriever(store, cfg or RetrievalConfig(), reranker)  # type: ignore[arg-type]
    return asyncio.run(r.retrieve(request(**kw)))


def test_leaves_are_found_and_ranked_by_their_own_score() -> None:
    # alpha = 1: the proven top-k is the exact one; the 2-node global step is deepened
    # instead of walking every directory.
    res = run(tree(), RetrievalConfig(global_search_topk=2), include_directories=False, limit=3)
    names = [m.uri.rsplit("/", 1)[-1] for m in res.matched_contexts]
    assert names == ["train.md", "lora.md", "eval.md"]
    assert all(m.is_leaf for m in res.matched_contexts)
    lora = next(m for m in res.matched_contexts if m.uri.endswith("lora.md"))
    assert lora.score == pytest.approx(float(Q @ vec((0, 0.8), (3, 0.6))), abs=1e-5)
    assert res.stop_reason.startswith("top-3 settled")


def test_the_seed_descent_reaches_leaves_below_the_global_step() -> None:
    cfg = RetrievalConfig(global_search_topk=2, stop_rule=StopRule.CONVERGENCE)
    res = run(tree(), cfg, include_directories=False, limit=3)
    names = [m.uri.rsplit("/", 1)[-1] for m in res.matched_contexts]
    assert names == ["train.md", "lora.md", "eval.md"]
    # lora.md sits two levels down and was not a global hit: the descent found it.
    lora = next(m for m in res.matched_contexts if m.uri.endswith("lora.md"))
    assert lora.found_by is FoundBy.CHILD and lora.found_via == f"{R}/ml/deep"


def test_alpha_blends_child_and_parent_scores() -> None:
    cfg = RetrievalConfig(score_propagation_alpha=0.5, global_search_topk=1)
    res = run(tree(), cfg, include_directories=True)
    by = {m.uri: m for m in res.matched_contexts}
    deep = by[f"{R}/ml/deep"]
    ml_score = float(Q @ vec((0, 0.9), (1, 0.44)))
    assert deep.score == pytest.approx(0.5 * deep.vector_score + 0.5 * ml_score, abs=1e-5)
    lora = by[f"{R}/ml/deep/lora.md"]
    assert lora.score == pytest.approx(0.5 * lora.vector_score + 0.5 * deep.score, abs=1e-5)


def test_threshold_drops_weak_children() -> None:
    res = run(
        tree(),
        RetrievalConfig(global_search_topk=1),
        score_threshold=0.6,
        include_directories=False,
    )
    names = {m.uri.rsplit("/", 1)[-1] for m in res.matched_contexts}
    assert "eval.md" not in names and "k8s.md" not in names
    assert all(m.score > 0.6 for m in res.matched_contexts)


def test_scope_restricts_to_target() -> None:
    res = run(tree(), roots=[f"{R}/ops"], include_directories=False)
    assert [m.uri for m in res.matched_contexts] == [f"{R}/ops/k8s.md"]
    assert all(d.startswith(f"{R}/ops") for d in res.searched_directories)


def wide_tree(n_dirs: int = 30) -> EmbeddedStore:
    rng = np.random.default_rng(0)
    spec: dict[str, tuple[np.ndarray, list[str]]] = {R: (vec((7, 1.0)), [])}
    for d in range(n_dirs):
        dv = rng.standard_normal(DIM).astype(np.float32)
        dv[0] = 3.0 - d * 0.08  # directories get steadily less relevant
        spec[f"{R}/d{d:02d}"] = (dv / np.linalg.norm(dv), [])
        for f in range(3):
            fv = dv + rng.standard_normal(DIM).astype(np.float32) * 0.2
            spec[f"{R}/d{d:02d}/f{f}.md"] = (fv / np.linalg.norm(fv), [])
    return build(spec)


def test_convergence_stops_when_topk_is_stable() -> None:
    store = wide_tree()
    # Every directory may take a slot (its hand-placed vector is its own content here).
    dirs = {"include_directories": True}
    res3 = run(store, conv(global_search_topk=3, max_convergence_rounds=3), **dirs)
    res1 = run(store, conv(global_search_topk=3, max_convergence_rounds=1), **dirs)
    assert res3.stop_reason == "top-5 unchanged for 3 rounds"
    assert res1.rounds < res3.rounds < 31
    resn = run(store, conv(global_search_topk=3, max_convergence_rounds=100), **dirs)
    assert resn.stop_reason == "heap empty" and resn.rounds == 31
    # The converged top-5 equals the exhaustive one: the best-first order pays off.
    assert [m.uri for m in res3.matched_contexts] == [m.uri for m in resn.matched_contexts]


def test_max_rounds_caps_the_descent() -> None:
    res = run(wide_tree(), conv(max_rounds=2, max_convergence_rounds=50))
    assert res.rounds == 2 and res.stop_reason.startswith("max_rounds")


def test_explain_records_each_round() -> None:
    res = run(tree(), conv(), explain=True)
    assert len(res.trace) == res.rounds >= 1
    assert res.trace[0].popped == res.searched_directories[0]


class ScriptedReranker(BaseReranker):
    name = "scripted"

    def __init__(self, fn):  # type: ignore[no-untyped-def]
        self.fn = fn
        self.calls: list[int] = []

    async def arerank(self, query: str, documents: Sequence[str]) -> list[float]:
        self.calls.append(len(documents))
        return await self.fn(documents)


async def prefer_eval(docs: Sequence[str]) -> list[float]:
    return [0.99 if "eval" in d else 0.1 for d in docs]


def test_thinking_mode_reranks_once_per_round() -> None:
    rr = ScriptedReranker(prefer_eval)
    res = run(tree(), reranker=rr, mode=RetrievalMode.THINKING, include_directories=False)
    assert res.matched_contexts[0].uri.endswith("eval.md")
    assert res.matched_contexts[0].rerank_score == pytest.approx(0.99)
    assert not res.rerank_fallback
    assert len(rr.calls) == res.rerank_calls == res.rounds + 1  # starting points + each round


def test_quick_mode_never_calls_the_reranker() -> None:
    rr = ScriptedReranker(prefer_eval)
    res = run(tree(), reranker=rr, mode=RetrievalMode.QUICK)
    assert rr.calls == [] and res.rerank_calls == 0
    assert res.matched_contexts[0].rerank_score is None


async def raises(docs: Sequence[str]) -> list[float]:
    raise RuntimeError("service down")


async def slow(docs: Sequence[str]) -> list[float]:
    await asyncio.sleep(5)
    return [1.0] * len(docs)


async def short(docs: Sequence[str]) -> list[float]:
    return [1.0] * (len(docs) - 1)


async def nan(docs: Sequence[str]) -> list[float]:
    return [math.nan] * len(docs)


async def inf(docs: Sequence[str]) -> list[float]:
    return [math.inf] + [0.0] * (len(docs) - 1)


async def garbage(docs: Sequence[str]) -> list[float]:
    return ["high"] * len(docs)  # type: ignore[list-item]


@pytest.mark.parametrize(
    ("fn", "reason"),
    [
        (raises, "error: RuntimeError: service down"),
        (slow, "timeout"),
        (short, "scores for"),
        (nan, "non-finite"),
        (inf, "non-finite"),
        (garbage, "non-numeric"),
    ],
)
def test_rerank_failures_fall_back_to_vector_scores(fn, reason: str) -> None:  # type: ignore[no-untyped-def]
    cfg = RetrievalConfig(rerank_timeout_s=0.2)
    baseline = run(tree(), cfg, include_directories=False)
    res = run(
        tree(),
        cfg,
        reranker=ScriptedReranker(fn),
        mode=RetrievalMode.THINKING,
        include_directories=False,
    )
    assert res.rerank_fallback and reason in (res.rerank_fallback_reason or "")
    assert [m.uri for m in res.matched_contexts] == [m.uri for m in baseline.matched_contexts]
    assert [m.score for m in res.matched_contexts] == [m.score for m in baseline.matched_contexts]
    assert all(m.rerank_fallback and m.rerank_score is None for m in res.matched_contexts)
    # After the first failure the reranker is not called again for this query.
    assert res.rerank_calls == 1


def test_rerank_failing_mid_descent_rekeys_on_vector_scores() -> None:
    state = {"n": 0}

    async def fail_second(docs: Sequence[str]) -> list[float]:
        state["n"] += 1
        if state["n"] == 2:
            raise ValueError("flaky")
        return [0.5] * len(docs)

    baseline = run(tree(), include_directories=False)
    res = run(
        tree(),
        reranker=ScriptedReranker(fail_second),
        mode=RetrievalMode.THINKING,
        include_directories=False,
    )
    assert res.rerank_fallback and "flaky" in (res.rerank_fallback_reason or "")
    assert [m.uri for m in res.matched_contexts] == [m.uri for m in baseline.matched_contexts]


def test_tag_filter_applies_through_the_descent() -> None:
    store = build(
        {
            R: (vec((7, 1.0)), []),
            f"{R}/ml": (vec((0, 1.0)), []),
            f"{R}/ml/a.md": (vec((0, 1.0)), ["auto:x"]),
            f"{R}/ml/b.md": (vec((0, 0.9), (1, 0.1)), ["user:y"]),
            f"{R}/ml/sub": (vec((5, 1.0)), []),
            f"{R}/ml/sub/c.md": (vec((0, 0.3), (5, 0.9)), ["user:y"]),
        }
    )
    res = run(store, tags=TagFilter(any_of=("y",)))
    assert [m.uri.rsplit("/", 1)[-1] for m in res.matched_contexts] == ["b.md", "c.md"]
    res = run(store, tags=TagFilter(all_of=("x", "y")))
    assert res.matched_contexts == []


def seed_scenario() -> EmbeddedStore:
    """The seed's scenario: only machine-learning/ matches "model training" by its summary."""
    train = (0, 1.0)
    return build(
        {
            R: (vec((7, 1.0)), []),
            f"{R}/machine-learning": (vec(train, (1, 0.3)), ["auto:model-training"]),
            f"{R}/machine-learning/transformers": (vec(train, (1, 0.5)), ["auto:model-training"]),
            f"{R}/machine-learning/transformers/ft.md": (
                vec(train, (1, 0.4)),
                ["auto:model-training"],
            ),
            f"{R}/machine-learning/basics.md": (vec(train, (1, 0.6)), ["auto:model-training"]),
            f"{R}/data-engineering": (vec((2, 1.0)), ["auto:etl"]),
            f"{R}/data-engineering/etl.md": (vec((2, 1.0), (3, 0.2)), ["auto:etl"]),
            f"{R}/data-engineering/feature-store": (
                vec((2, 1.0), (3, 0.5)),
                ["auto:model-training"],
            ),
            f"{R}/data-engineering/feature-store/fe.md": (vec(train, (3, 1.0)), ["auto:features"]),
            f"{R}/devops": (vec((4, 1.0)), ["auto:deploy"]),
            f"{R}/devops/k8s.md": (vec((4, 1.0), (5, 0.3)), []),
            f"{R}/devops/ml-ops": (vec((4, 1.0), (6, 0.6)), ["auto:model-training"]),
            f"{R}/devops/ml-ops/pipelines.md": (vec(train, (6, 1.0)), []),
        }
    )


@pytest.mark.parametrize("trigger", [TagHopTrigger.ALWAYS, TagHopTrigger.ON_DEMAND])
def test_tag_hops_reach_subtrees_whose_summaries_missed(trigger: TagHopTrigger) -> None:
    cfg = conv(global_search_topk=3, tag_hop_trigger=trigger, score_threshold=0.1)
    res = run(seed_scenario(), cfg, include_directories=False, limit=10)
    found = {m.uri.rsplit("/", 1)[-1]: m for m in res.matched_contexts}
    assert "fe.md" in found and "pipelines.md" in found
    fe = found["fe.md"]
    assert fe.found_by is FoundBy.TAG_HOP and fe.hop_tag == "model-training"
    assert fe.hop_source is not None and "machine-learning" in fe.hop_source
    m = res.tag_hops
    assert m.triggered and m.hops_tried >= 1
    assert set(m.subtrees_added) == {f"{R}/data-engineering/feature-store", f"{R}/devops/ml-ops"}
    assert m.hits_produced >= 2 and m.hits_in_topk >= 2


def test_without_hops_the_bounded_descent_still_reaches_those_subtrees() -> None:
    # The stop rule proves the top-k: a subtree whose summary missed is still opened while it
    # could hold a top-k node, so hops change how a hit is reached (and, with alpha < 1, its
    # score), never whether an exact top-k node is found.
    base = {"global_search_topk": 3, "score_threshold": 0.1}
    on = run(
        seed_scenario(),
        RetrievalConfig(tag_hop_trigger=TagHopTrigger.ALWAYS, **base),  # type: ignore[arg-type]
        include_directories=False,
        limit=4,
    )
    off = run(
        seed_scenario(),
        RetrievalConfig(tag_hop_trigger=TagHopTrigger.OFF, **base),  # type: ignore[arg-type]
        include_directories=False,
        limit=4,
    )
    assert [m.uri for m in off.matched_contexts] == [m.uri for m in on.matched_contexts]
    assert any(m.uri.endswith("fe.md") for m in off.matched_contexts)
    assert on.tag_hops.triggered and not off.tag_hops.triggered


def test_hop_caps_and_down_weighting() -> None:
    cfg = conv(
        global_search_topk=3,
        tag_hop_trigger=TagHopTrigger.ALWAYS,
        tag_hop_max_subtrees=1,
        tag_hop_score_factor=0.5,
        score_threshold=0.1,
    )
    res = run(seed_scenario(), cfg, include_directories=False, limit=4)
    assert len(res.tag_hops.subtrees_added) == 1
    hop_starts = [s for s in res.starting_points if s[0] in res.tag_hops.subtrees_added]
    best_global = max(s for u, s in res.starting_points if u not in res.tag_hops.subtrees_added)
    assert hop_starts[0][1] == pytest.approx(0.5 * best_global, abs=1e-5)
    cfg0 = cfg.model_copy(update={"tag_hop_max_tags": 0})
    assert run(seed_scenario(), cfg0, limit=4).tag_hops.subtrees_added == []


def test_on_demand_skips_hops_when_hits_are_spread() -> None:
    cfg = RetrievalConfig(
        global_search_topk=4, tag_hop_trigger=TagHopTrigger.ON_DEMAND, tag_hop_concentration=1.0
    )
    store = seed_scenario()
    spread_q = vec((0, 1.0), (2, 1.0), (4, 1.0))
    res = run(store, cfg, vector=spread_q)
    assert not res.tag_hops.triggered and "spread" in res.tag_hops.trigger_reason


def test_a_partial_topk_does_not_count_as_converged() -> None:
    # Only 3 leaves pass the threshold in the whole tree; a top-10 can never fill, so the
    # search must keep exploring instead of stopping after 3 quiet rounds.
    store = wide_tree()
    res = run(
        store,
        conv(global_search_topk=2, score_threshold=0.75),
        limit=10,
        include_directories=False,
    )
    assert res.stop_reason == "heap empty"


def test_hop_rounds_do_not_spend_the_convergence_budget() -> None:
    # The second-best leaf sits under a weakly summarised directory of the hit subtree; two
    # hop targets (start 0.7 x the hit's score) are popped before it and hold nothing. If
    # their quiet rounds counted towards convergence, the search would stop before it.
    t = (0, 1.0)
    store = build(
        {
            R: (vec((7, 1.0)), []),
            f"{R}/ml": (vec(t, (1, 0.54)), []),
            f"{R}/ml/a.md": (vec(t, (1, 0.33)), ["auto:topic"]),  # the only global hit
            f"{R}/ml/b.md": (vec(t, (1, 0.62)), []),
            f"{R}/ml/deep": (vec((0, 0.5), (3, 0.87)), []),  # weak summary, popped late
            f"{R}/ml/deep/best.md": (vec(t, (3, 0.48)), []),  # the true second hit
            f"{R}/ops": (vec((4, 1.0)), []),
            f"{R}/ops/x": (vec((4, 1.0)), ["auto:topic"]),
            f"{R}/ops/x/x.md": (vec((4, 1.0)), []),
            f"{R}/data": (vec((5, 1.0)), []),
            f"{R}/data/y": (vec((5, 1.0)), ["auto:topic"]),
            f"{R}/data/y/y.md": (vec((5, 1.0)), []),
        }
    )
    cfg = {"global_search_topk": 1, "max_convergence_rounds": 2}
    off = run(
        store,
        RetrievalConfig(tag_hop_trigger=TagHopTrigger.OFF, **cfg),
        limit=2,
        include_directories=False,
    )
    assert [m.uri for m in off.matched_contexts] == [f"{R}/ml/a.md", f"{R}/ml/deep/best.md"]
    on = run(
        store,
        RetrievalConfig(tag_hop_trigger=TagHopTrigger.ALWAYS, **cfg),
        limit=2,
        include_directories=False,
    )
    assert set(on.tag_hops.subtrees_added) == {f"{R}/ops/x", f"{R}/data/y"}
    assert [m.uri for m in on.matched_contexts] == [m.uri for m in off.matched_contexts]


def _exhaustive(store: EmbeddedStore, q: np.ndarray, alpha: float, k: int) -> list[str]:
    """Brute force: every leaf's propagated score from the root's children down."""
    nodes = list(store.iter_nodes(R))
    own = dict(
        zip(
            (n.uri for n in nodes),
            (store.get_vectors([n.uri for n in nodes]) @ q).tolist(),
            strict=True,
        )
    )
    by_uri = {n.uri: n for n in nodes}

    def final(uri: str) -> float:
        parent = by_uri[uri].parent_uri
        if parent is None or parent == R:
            return own[uri]
        return alpha * own[uri] + (1 - alpha) * final(parent)

    leaves = [n.uri for n in nodes if n.is_leaf]
    return sorted(leaves, key=lambda u: -final(u))[:k]


@pytest.mark.parametrize("alpha", [1.0, 0.8, 0.5])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_bound_returns_the_exhaustive_top_k(alpha: float, seed: int) -> None:
    store = wide_tree()
    rng = np.random.default_rng(seed)
    qv = rng.standard_normal(DIM).astype(np.float32)
    qv[0] = abs(qv[0]) + 1.0
    qv /= np.linalg.norm(qv)
    cfg = RetrievalConfig(score_propagation_alpha=alpha, global_search_topk=3, score_threshold=-1)
    res = run(store, cfg, vector=qv, limit=7, include_directories=False)
    assert [m.uri for m in res.matched_contexts] == _exhaustive(store, qv, alpha, 7)
    assert res.stop_reason.startswith("top-7 settled")
    # The proof stops early: far fewer than the 31 directories are opened.
    assert res.rounds < 31


def test_one_slot_per_document_with_its_other_chunks_as_context() -> None:
    store = build(
        {
            R: (vec((7, 1.0)), []),
            f"{R}/a": (vec((0, 1.0), (1, 1.0)), []),
            f"{R}/b.md": (vec((0, 0.8), (2, 0.6)), []),
        }
    )
    chunks = [
        Node(
            uri=f"{R}/a#chunk-{i}",
            parent_uri=f"{R}/a",
            context_type=ContextType.RESOURCE,
            level=2,
            is_leaf=True,
            abstract=f"part {i}",
            content=f"part {i}",
            chunk_index=i,
            ancestors=[R, f"{R}/a"],
        )
        for i in range(3)
    ]
    store.upsert(chunks, np.stack([vec((0, 1.0)), vec((0, 0.9), (1, 0.2)), vec((0, 0.1), (3, 1))]))
    res = run(store, include_directories=False, limit=2)
    assert [m.uri for m in res.matched_contexts] == [f"{R}/a#chunk-0", f"{R}/b.md"]
    assert [c.uri for c in res.matched_contexts[0].collapsed] == [
        f"{R}/a#chunk-1",
        f"{R}/a#chunk-2",
    ]
    flat = run(store, RetrievalConfig(collapse_chunks=False), include_directories=False, limit=2)
    assert [m.uri for m in flat.matched_contexts] == [f"{R}/a#chunk-0", f"{R}/a#chunk-1"]


def _matched_fields(score: object, tags: list[str], meta: dict[str, object]) -> dict[str, object]:
    """Every field of a :class:`MatchedContext`, in declaration order, as ``_matched_all`` gives
    them (a chunk hit found by a tag hop, with a collapsed chunk and a query)."""
    return {
        "uri": f"{HAND_ROOT}/a/f.md#2",
        "context_type": ContextType.RESOURCE,
        "is_leaf": True,
        "abstract": "abs",
        "score": score,
        "level": 2,
        "parent_uri": f"{HAND_ROOT}/a/f.md",
        "overview": "",
        "content": "text é",
        "tags": list(tags),
        "metadata": dict(meta),
        "chunk_index": 2,
        "vector_score": 0.25,
        "own_score": 0.5,
        "rerank_score": None,
        "rerank_fallback": True,
        "rerank_fallback_reason": "timeout",
        "found_by": FoundBy.TAG_HOP,
        "found_via": None,
        "hop_tag": "t",
        "hop_source": f"{HAND_ROOT}/b",
        "matched_queries": [TypedQuery(query="q")],
        "collapsed": [ChunkContext(uri=f"{HAND_ROOT}/a/f.md#3", score=0.1, position=1)],
    }


def test_built_matched_is_the_validated_model() -> None:
    """``_matched_all`` sets a result's fields directly (no second validation of values that are
    already of their declared types): the model equals the validated one in every way a
    caller can see (fields, values and their types, the fields set, dump, repr, the order of
    its ``__dict__``), copies ``tags`` and ``metadata`` as validation does, and a score of
    another type (an ``int`` or a numpy float from a custom reranker) is validated as before
    (a plain ``float`` in the model)."""
    tags, meta = ["x", "y"], {"k": [1, 2], "heading_path": ["A"]}
    fields = _matched_fields(0.75, tags, meta)
    got = _built_matched(dict(fields))
    want = MatchedContext(**fields)
    assert type(got) is MatchedContext
    assert got == want
    assert got.model_fields_set == want.model_fields_set == set(MatchedContext.model_fields)
    assert list(vars(got)) == list(vars(want)) == list(MatchedContext.model_fields)
    assert [type(v) for v in vars(got).values()] == [type(v) for v in vars(want).values()]
    assert got.model_dump() == want.model_dump()
    assert got.model_dump_json() == want.model_dump_json()
    assert repr(got) == repr(want)
    assert got.provenance() == want.provenance() and got.slot_text == want.slot_text
    assert got.model_copy(update={"score": 0.1}).score == 0.1
    back = pickle.loads(pickle.dumps(got))  # (a reader process's results cross a pipe)
    assert back == want and back.model_fields_set == want.model_fields_set
    assert got.model_copy(deep=True) == want
    for odd in (1, np.float32(0.5), np.float64(0.5)):
        built = _built_matched(_matched_fields(odd, tags, meta))
        assert type(built.score) is float and built.score == float(odd)
    odd_own = _matched_fields(0.5, tags, meta)
    odd_own["own_score"] = 1
    assert type(_built_matched(odd_own).own_score) is float


def test_a_results_tags_and_metadata_are_its_own() -> None:
    """A find's result holds copies of its node's ``tags`` and ``metadata`` (as validating
    the model made them): changing a result changes neither the stored node nor the next
    find's result."""
    store = build(
        {
            R: (vec((7, 1.0)), []),
            f"{R}/a.md": (vec((0, 1.0)), ["red", "blue"]),
            f"{R}/b.md": (vec((0, 0.6), (1, 0.8)), ["green"]),
        }
    )
    first = run(store).matched_contexts
    assert [m.tags for m in first] == [["red", "blue"], ["green"]]
    node = store.get([f"{R}/a.md"])[0]
    assert node is not None
    first[0].tags.append("x")
    first[0].metadata["k"] = 1
    assert node.tags == ["red", "blue"] and "k" not in node.metadata
    again = run(store).matched_contexts
    assert again[0].tags == ["red", "blue"] and "k" not in again[0].metadata
    assert [m.model_dump() for m in again] == [
        MatchedContext(
            **{**vars(m), "tags": list(m.tags), "metadata": dict(m.metadata)}
        ).model_dump()
        for m in again
    ]
