"""The heap search, step by step, on small trees with hand-placed vectors."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence

import numpy as np
import pytest

from treehop import RetrievalConfig, TagHopTrigger
from treehop.filters import TagFilter
from treehop.hierarchical_retriever import HierarchicalRetriever, RetrievalRequest
from treehop.models import ContextType, FoundBy, Node, RetrievalMode, TypedQuery
from treehop.rerankers.base import BaseReranker
from treehop.stores.embedded import EmbeddedStore
from treehop.uri import ancestors_of, parent_of

R = "viking://resources"
DIM = 8


def vec(*pairs: tuple[int, float]) -> np.ndarray:
    v = np.zeros(DIM, np.float32)
    for i, x in pairs:
        v[i] = x
    return v / np.linalg.norm(v)


def build(spec: dict[str, tuple[np.ndarray, list[str]]]) -> EmbeddedStore:
    """``spec``: uri -> (vector, tags); URIs ending in .md are leaves."""
    store = EmbeddedStore()
    nodes, vecs = [], []
    for uri, (v, tags) in spec.items():
        leaf = uri.endswith(".md")
        nodes.append(
            Node(
                uri=uri,
                parent_uri=parent_of(uri),
                context_type=ContextType.RESOURCE,
                level=2 if leaf else (0 if uri == R else 1),
                is_leaf=leaf,
                abstract=uri.rsplit("/", 1)[-1],
                content=uri if leaf else "",
                tags=tags,
                ancestors=ancestors_of(uri),
            )
        )
        vecs.append(v)
    store.upsert(nodes, np.stack(vecs))
    return store


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


def run(
    store: EmbeddedStore, cfg: RetrievalConfig | None = None, reranker: object = None, **kw: object
):
    r = HierarchicalRetriever(store, cfg or RetrievalConfig(), reranker)  # type: ignore[arg-type]
    return asyncio.run(r.retrieve(request(**kw)))


def test_leaves_are_found_and_ranked_by_their_own_score() -> None:
    res = run(tree(), RetrievalConfig(global_search_topk=2), include_directories=False)
    names = [m.uri.rsplit("/", 1)[-1] for m in res.matched_contexts]
    assert names[:3] == ["train.md", "lora.md", "eval.md"]
    assert all(m.is_leaf for m in res.matched_contexts)
    # lora.md sits two levels down and was not a global hit: the descent found it.
    lora = next(m for m in res.matched_contexts if m.uri.endswith("lora.md"))
    assert lora.found_by is FoundBy.CHILD and lora.found_via == f"{R}/ml/deep"
    assert lora.score == pytest.approx(float(Q @ vec((0, 0.8), (3, 0.6))), abs=1e-5)


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
    res3 = run(store, RetrievalConfig(global_search_topk=3, max_convergence_rounds=3))
    res1 = run(store, RetrievalConfig(global_search_topk=3, max_convergence_rounds=1))
    assert res3.stop_reason == "top-5 unchanged for 3 rounds"
    assert res1.rounds < res3.rounds < 31
    resn = run(store, RetrievalConfig(global_search_topk=3, max_convergence_rounds=100))
    assert resn.stop_reason == "heap empty" and resn.rounds == 31
    # The converged top-5 equals the exhaustive one: the best-first order pays off.
    assert [m.uri for m in res3.matched_contexts] == [m.uri for m in resn.matched_contexts]


def test_max_rounds_caps_the_descent() -> None:
    res = run(wide_tree(), RetrievalConfig(max_rounds=2, max_convergence_rounds=50))
    assert res.rounds == 2 and res.stop_reason.startswith("max_rounds")


def test_explain_records_each_round() -> None:
    res = run(tree(), explain=True)
    assert len(res.trace) == res.rounds
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
    cfg = RetrievalConfig(global_search_topk=3, tag_hop_trigger=trigger, score_threshold=0.1)
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


def test_without_hops_those_subtrees_are_missed() -> None:
    cfg = RetrievalConfig(
        global_search_topk=3, tag_hop_trigger=TagHopTrigger.OFF, score_threshold=0.1
    )
    res = run(seed_scenario(), cfg, include_directories=False, limit=10)
    names = {m.uri.rsplit("/", 1)[-1] for m in res.matched_contexts}
    assert "fe.md" not in names and "pipelines.md" not in names
    assert not res.tag_hops.triggered


def test_hop_caps_and_down_weighting() -> None:
    cfg = RetrievalConfig(
        global_search_topk=3,
        tag_hop_trigger=TagHopTrigger.ALWAYS,
        tag_hop_max_subtrees=1,
        tag_hop_score_factor=0.5,
        score_threshold=0.1,
    )
    res = run(seed_scenario(), cfg, include_directories=False, limit=10)
    assert len(res.tag_hops.subtrees_added) == 1
    hop_starts = [s for s in res.starting_points if s[0] in res.tag_hops.subtrees_added]
    best_global = max(s for u, s in res.starting_points if u not in res.tag_hops.subtrees_added)
    assert hop_starts[0][1] == pytest.approx(0.5 * best_global, abs=1e-5)
    cfg0 = cfg.model_copy(update={"tag_hop_max_tags": 0})
    assert run(seed_scenario(), cfg0).tag_hops.subtrees_added == []


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
        RetrievalConfig(global_search_topk=2, score_threshold=0.75),
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
