"""Issue 35 round 18: three cuts of a find's Python, each the path it stands in for.

- ``LEAN_CANDIDATES``: the global hits join the candidates in one loop each
  (``HierarchicalRetriever._take_vector_hits``, ``Collected.add_global``): the same
  candidates, fields and insertion order (the ranking's ties follow it) as ``_collect``
  and ``Candidate.deferred_at`` per hit.
- ``BUILT_MODELS``: the query, the result, its tag-hop metrics and the find's result built
  directly (``models.built_model``), and their fields assigned without pydantic's handler
  (``models.assign``): the same models, values and fields set as validated and assigned.
- ``FUSED_QUERY_CHECK``: the sync find checks the embedded query's values once, with its
  norm: the same vector, the same error (type and message) for a NaN, an infinite, a zero
  and an overflowing embedding.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pydantic import BaseModel

from test_columnar_search import MEM, RES, _outcome, _query, random_tree
from test_tree_context_paths import folder_tree
from treehop import RetrievalConfig, Treehop, models
from treehop import hierarchical_retriever as hr
from treehop.client import _check_query_vector
from treehop.descent import Collected, Descent
from treehop.errors import EmbeddingError, InvalidQueryError, TreehopError
from treehop.filters import TagFilter
from treehop.hierarchical_retriever import HierarchicalRetriever, RetrievalRequest
from treehop.models import ContextType, QueryPlan, TypedQuery
from treehop.stores.base import Scope

from treehop_test_doubles import BagOfWordsEmbedder


def _candidates(state: Descent) -> list[tuple[Any, ...]]:
    """Every collected candidate's fields, in insertion order (a node read only where one
    was built already: reading it would build it)."""
    return [
        (
            uri,
            c.uri,
            c.parent_uri,
            c.chunk_index,
            c.document,
            c.is_leaf,
            c.own,
            c.final,
            c.vector_score,
            c.found_by,
            c.found_via,
            c.hop,
            c._at,
            c._node is None,
            c.node.uri,
        )
        for uri, c in state.collected.by_uri.items()
    ]


@pytest.mark.parametrize("tree", ["folders", "random"])
@pytest.mark.parametrize("seed", range(5))
def test_lean_candidates_equal_the_general_path(
    tree: str, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The descent's candidates (fields and order) and the whole retrieval with the global
    hits added in one loop equal those of the per-hit calls, with and without a filter and
    a threshold, directories in or out, at alpha 1 (the lean path) and below (the general
    one); and the lean path is taken."""
    store, rng = folder_tree(seed) if tree == "folders" else random_tree(seed)
    taken = {"hits": 0, "columns": 0}
    take, add = HierarchicalRetriever._take_vector_hits, Collected.add_global

    def took_hits(*args: Any) -> None:
        taken["hits"] += 1
        take(*args)

    def added(self: Collected, *args: Any) -> None:
        taken["columns"] += 1
        add(self, *args)

    monkeypatch.setattr(HierarchicalRetriever, "_take_vector_hits", staticmethod(took_hits))
    monkeypatch.setattr(Collected, "add_global", added)
    for k in range(8):
        cfg = RetrievalConfig(
            score_propagation_alpha=1.0 if k % 4 else 0.8,
            context_pool=int(rng.integers(1, 12)),
        )
        retriever = HierarchicalRetriever(store, cfg)
        q = _query(rng)
        weight = float(rng.choice([1.0, 0.6]))
        # (a threshold equal to a global hit's own score, in the first step and in the deeper
        # one: that hit must not pass)
        ask = Scope(subtrees=(RES,), traversal=True)
        hits = store.search(q, ask, 30, query_text="alpha beta", dense_weight=weight)
        at, deep = hits[min(3, len(hits) - 1)].score, hits[min(15, len(hits) - 1)].score
        for include_dirs, roots, tags, threshold in (
            (None, [RES, MEM], TagFilter(), None),
            (False, [RES], TagFilter(), 0.0),
            (True, [RES, MEM], TagFilter(), None),
            (False, [RES, MEM], TagFilter(any_of=["auto:alpha", "auto:beta"]), None),
            (None, [RES], TagFilter(), float(rng.uniform(-0.2, 0.4))),
            (None, [RES], TagFilter(), at),
            (False, [RES], TagFilter(), deep),
        ):
            req = RetrievalRequest(
                query=TypedQuery(query="alpha beta"),
                vector=q,
                roots=roots,
                limit=int(rng.integers(2, 9)),
                dense_weight=weight,
                include_directories=include_dirs,
                tags=tags,
                score_threshold=threshold,
            )
            got = []
            for on in (False, True):
                monkeypatch.setattr(hr, "LEAN_CANDIDATES", on)
                _, state, _ = asyncio.run(retriever._descend(req))
                r = asyncio.run(retriever.retrieve(req))
                dumped = [m.model_dump_json() for m in r.matched_contexts]
                hops = r.tag_hops.model_dump()
                got.append((_candidates(state), _outcome(r), r.nodes_scored, dumped, hops))
            assert got[0] == got[1]
    assert taken["hits"] and taken["columns"], taken


def _same_model(a: BaseModel, b: BaseModel) -> None:
    """Equal, with the same fields in the same order, the same fields set, and nested
    models and lists alike (a list default a new list in each; one object: itself)."""
    if a is b:
        return
    assert type(a) is type(b)
    assert a == b
    assert list(a.__dict__) == list(b.__dict__)
    assert a.model_fields_set == b.model_fields_set
    assert a.__pydantic_extra__ == b.__pydantic_extra__
    assert a.__pydantic_private__ == b.__pydantic_private__
    for name, value in a.__dict__.items():
        other = b.__dict__[name]
        assert type(value) is type(other), name
        if isinstance(value, BaseModel):
            _same_model(value, other)
        elif isinstance(value, list):
            assert value is not other, name  # (each model its own list)
            for x, y in zip(value, other, strict=True):
                if isinstance(x, BaseModel):
                    _same_model(x, y)


def _both(monkeypatch: pytest.MonkeyPatch, make: Any) -> tuple[Any, Any]:
    monkeypatch.setattr(models, "BUILT_MODELS", False)
    old = make()
    monkeypatch.setattr(models, "BUILT_MODELS", True)
    return old, make()


def test_built_models_equal_the_validated_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each of the four builders gives the model pydantic validates from the same values,
    and a fresh one (its own lists) per call."""
    tq = TypedQuery(query="q")
    for ctype in (None, *ContextType):
        _same_model(*_both(monkeypatch, lambda c=ctype: models.typed_query("a query", c)))
    _same_model(*_both(monkeypatch, models.tag_hop_metrics))
    _same_model(*_both(monkeypatch, lambda: models.query_result(tq)))
    old, new = _both(monkeypatch, lambda: models.query_result(tq))
    assert old.query is tq and new.query is tq
    one, two = models.query_result(tq), models.query_result(tq)
    assert one.matched_contexts is not two.matched_contexts
    assert one.tag_hops is not two.tag_hops
    # a query that is not a TypedQuery instance (a dict) is validated as before
    old, new = _both(monkeypatch, lambda: models.query_result({"query": "x"}))  # type: ignore[arg-type]
    _same_model(old, new)
    results = [models.query_result(tq)]
    plan = QueryPlan(queries=[tq])
    for p in (None, plan):
        old, new = _both(monkeypatch, lambda p=p: models.find_result(p, results, [], [], []))
        _same_model(old, new)
        assert new.query_results is not results and new.query_results == results


def test_assign_sets_fields_as_pydantic_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """``models.assign`` leaves a model as pydantic's assignment does: values, fields set
    (an assigned default value is marked set too)."""

    def assigned() -> Any:
        r = models.query_result(TypedQuery(query="q"))
        models.assign(r, nodes_scored=r.nodes_scored + 7)
        models.assign(r, starting_points=[("viking://resources/a", 0.5)])
        m = models.tag_hop_metrics()
        models.assign(m, trigger_reason="always")
        models.assign(m, triggered=True)
        models.assign(m, tags_used=[])
        models.assign(r, tag_hops=m)
        return r

    old, new = _both(monkeypatch, assigned)
    _same_model(old, new)
    assert new.model_fields_set == {"query", "nodes_scored", "starting_points", "tag_hops"}
    assert new.tag_hops.model_fields_set == {"trigger_reason", "triggered", "tags_used"}


def _finds(client: Treehop, queries: Sequence[str]) -> list[Any]:
    out = []
    for text in queries:
        r = client.find(text, limit=4)
        for qr in r.query_results or []:
            qr.elapsed_ms = 0.0
        out.append(r)
    return out


def test_built_models_in_a_find(
    tmp_path: Path, sample_tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whole sync and async finds give the same result models (values, fields set, nested
    models) with the models built directly as validated."""
    c = Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None)
    try:
        c.add_resource(sample_tree)
        queries = ["how to install", "configuration file", "zzz", "error when starting"]
        old, new = _both(monkeypatch, lambda: _finds(c, queries))
        for a, b in zip(old, new, strict=True):
            _same_model(a, b)
        a_old, a_new = _both(
            monkeypatch, lambda: asyncio.run(c._async.find("configuration file", limit=3))
        )
        for r in (a_old, a_new):
            for qr in r.query_results or []:
                qr.elapsed_ms = 0.0
        _same_model(a_old, a_new)
    finally:
        c.close()


class _Fixed(BagOfWordsEmbedder):
    """Answers every query with the vector ``answer`` (a bag of words otherwise)."""

    answer: np.ndarray | None = None

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self.answer is not None and len(texts) == 1 and texts[0].startswith("probe"):
            return self.answer.reshape(1, -1).copy()
        return super().embed(texts)


def _outcome_of(client: Treehop, monkeypatch: pytest.MonkeyPatch, on: bool) -> Any:
    from treehop import client as client_mod

    monkeypatch.setattr(client_mod, "FUSED_QUERY_CHECK", on)
    try:
        r = client.find("probe query", limit=3)
    except TreehopError as exc:
        return type(exc), str(exc)
    return [(m.uri, m.score, m.own_score) for m in r.resources]


def test_fused_query_check_gives_the_guard_and_check_answers(
    tmp_path: Path, sample_tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sync find with the embedded query checked once answers as with both checks: the
    same hits for a good vector, an overflowing one (finite values whose squares are not)
    and an all-zero one (the async path's answer), and the same error, type and message,
    for a NaN or an infinite value."""
    emb = _Fixed()
    c = Treehop(tmp_path / "idx", embedder=emb, tagger=None)
    try:
        c.add_resource(sample_tree)
        dim = emb.dimension
        good = np.linspace(-1.0, 1.0, dim).astype(np.float32)
        nan, inf, ninf = good.copy(), good.copy(), good.copy()
        nan[3], inf[0], ninf[-1] = np.nan, np.inf, -np.inf
        huge = np.full(dim, 3e38, dtype=np.float32)
        both = nan.copy()
        both[5] = np.inf
        answers = {}
        for name, vec in (
            ("good", good),
            ("huge", huge),
            ("zero", np.zeros(dim, np.float32)),
            ("nan", nan),
            ("inf", inf),
            ("-inf", ninf),
            ("nan+inf", both),
        ):
            emb.answer = vec
            old = _outcome_of(c, monkeypatch, False)
            new = _outcome_of(c, monkeypatch, True)
            assert old == new, name
            answers[name] = new
        assert isinstance(answers["good"], list) and answers["good"]
        for name in ("nan", "inf", "-inf", "nan+inf"):
            assert answers[name][0] is EmbeddingError
    finally:
        c.close()


def test_check_query_vector_errors() -> None:
    """The caller's vector check keeps its errors; only an embedded vector's NaN or
    infinity is the guard's error."""

    class Dim:
        dimension = 4

    store: Any = Dim()
    for bad in ([], [0.0, 0.0, 0.0, 0.0], [1.0, np.nan, 0.0, 0.0], [np.inf, 0.0, 0.0, 1.0]):
        with pytest.raises(InvalidQueryError, match="non-empty, finite, non-zero"):
            _check_query_vector(bad, store)
    with pytest.raises(EmbeddingError, match="NaN or infinite"):
        _check_query_vector(np.array([1.0, np.nan, 0.0, 0.0], np.float32), store, True)
    with pytest.raises(InvalidQueryError, match="non-empty, finite, non-zero"):
        _check_query_vector(np.zeros(4, np.float32), store, True)
    with pytest.raises(InvalidQueryError, match="dimensions"):
        _check_query_vector(np.ones(3, np.float32), store, True)
    unit = _check_query_vector(np.array([3.0, 4.0, 0.0, 0.0], np.float32), store, True)
    assert unit.tolist() == pytest.approx([0.6, 0.8, 0.0, 0.0])
    # finite values whose squares overflow float32 keep their direction (not a zero vector)
    for embedded in (False, True):
        huge = _check_query_vector(np.array([3e38, -3e38, 0.0, 3e38], np.float32), store, embedded)
        assert huge.tolist() == pytest.approx([3**-0.5, -(3**-0.5), 0.0, 3**-0.5])


def test_a_pydantic_without_the_slot_layout_falls_back_to_validation() -> None:
    """Where a pydantic release lays its models out otherwise, the slot setters are not
    found (``None``): ``BUILT_MODELS`` then starts off instead of ``import treehop``
    failing. With pydantic 2's layout all four are found and the flag starts on."""

    class Plain:
        __slots__ = ("__dict__",)

    assert models._slot_setters(Plain) is None
    assert models._slot_setters() is not None and len(models._slot_setters() or ()) == 4
    assert models.BUILT_MODELS is True


def test_the_models_built_or_assigned_directly_validate_no_assignment() -> None:
    """``built_model`` and ``assign`` stand in for validation only on models that neither
    validate an assignment nor are frozen: a model that later turns either on must leave
    this path (the check fails here first)."""
    for cls in (models.TypedQuery, models.QueryResult, models.TagHopMetrics, models.FindResult):
        config = cls.model_config
        assert not config.get("validate_assignment"), cls.__name__
        assert not config.get("frozen"), cls.__name__
        assert config.get("extra") in (None, "ignore", "forbid"), cls.__name__  # (not "allow")


def _long_documents(root: Path) -> Path:
    """Three guides of eight paragraphs each, every paragraph naming its guide's topic:
    at 300 characters a chunk, a query's hits in one guide share its slot."""
    for topic in ("install", "server", "deployment"):
        paragraphs = [
            f"Step {i} of the {topic} guide: the {topic} configuration file names the "
            f"{topic} options, and each {topic} option says what the {topic} step {i} "
            f"changes when the {topic} runs on a new machine or an old one."
            for i in range(8)
        ]
        (root / f"{topic}.md").write_text(f"# {topic}\n\n" + "\n\n".join(paragraphs))
    return root


def test_built_chunks_equal_the_validated_ones_in_sync_and_async_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A result's collected chunks built directly (``BUILT_CHUNKS``) equal the validated
    ones: values, field order, fields set, for document and question slots, sync and
    async; and a find whose collected chunks are built does hold some."""
    with Treehop(embedder=BagOfWordsEmbedder(), tagger=None, chunk_chars=300) as c:
        c.add_resource(_long_documents(tmp_path))
        queries = ["install configuration file", "server option", "How do I run the server?"]

        def finds() -> list[Any]:
            out = _finds(c, queries)
            r = asyncio.run(c._async.find("deployment pipeline", limit=6))
            for qr in r.query_results or []:
                qr.elapsed_ms = 0.0
            return [*out, r]

        monkeypatch.setattr(hr, "BUILT_CHUNKS", False)
        old = finds()
        monkeypatch.setattr(hr, "BUILT_CHUNKS", True)
        new = finds()
        for a, b in zip(old, new, strict=True):
            _same_model(a, b)
        held = [ch for r in new for m in r.resources for ch in m.collapsed]
        assert held, "no result held a collected chunk: the test would compare nothing"
        assert all(type(ch) is models.ChunkContext and not ch.carried for ch in held)
