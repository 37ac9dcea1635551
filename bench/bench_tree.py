"""One benchmark command, one table: does ``find()`` beat flat search *because of the tree*?

    python bench/bench_tree.py                                  # every set, test halves
    python bench/bench_tree.py --dataset locomo --max-queries 100
    python bench/bench_tree.py --rows flat-dense,flat-hybrid,find --dev --json out.json
    python bench/bench_tree.py --list-rows

Five real labelled trees, each indexed once with ``Treehop.add_resource`` (default config,
default automatic tagger, the offline MiniLM embedder behind an on-disk cache):

* ``cranfield``: the 1,400 Cranfield abstracts clustered into a topic tree
  (``datasets.build_cranfield_tree``), 225 queries with graded judgements;
* ``django``: the Django 3.2 docs (Debian ``python-django-doc``), 300 heading queries;
* ``pytest``: the pytest 7.2 docs (Debian ``python-pytest-doc``, fetched with
  ``apt-get download`` into the cache when missing), heading, first-sentence and
  anchor-text queries (``bench/data/pytest_doc_queries.json``, see ``bench/README.md``);
* ``flask``: the Flask 2.2 docs (Debian ``python-flask-doc``, fetched like pytest's), the same
  three derived query kinds (``bench/data/flask_doc_queries.json``);
* ``gitdoc`` (held out: ``--dataset gitdoc`` only, never in ``all``, never used to choose a
  default): git 2.39's docs (Debian ``git-doc``), asciidoc and DocBook HTML rather than Sphinx,
  laid out as git(1) groups its pages; the same derived query kinds
  (``bench/data/gitdoc_queries.json``);
* ``locomo``: the five LoCoMo development conversations as a user's memories,
  ``viking://~/memories/locomo/<conversation>/session-NN/<turn>``, one file per turn
  (``(8 May 2023) Speaker: text`` as the memory write path stores it; ``TREEHOP_LOCOMO_DATED=0``
  for ``Speaker: text``; the session date also as metadata); each question is searched within
  its own conversation; evidence recall@5/@10. A memory turn's slot carries its neighbouring
  turns (``memory_context_chars``), and a slot counts every turn it holds, as the framework
  row counts every turn its 1,000-character chunk spans; the ``find-hits`` row counts only
  each slot's ranked hits.

Every row runs on the same index, the same query vectors and the same text units, and every
row is scored on the list exactly as returned (directories included when the call includes
them): a labelled unit (a document, a page, an evidence turn) counts once, at its first rank;
a second chunk of the same unit takes its slot but is no second hit. Rows are a declarative
list (:data:`ROWS`): a name, the method, ``RetrievalConfig`` overrides, ``find()`` keyword
arguments, and a grid for parameters that are tuned. Queries are split into two halves with a
fixed seed; a tuned parameter is chosen on the *dev* half (nDCG@10; LoCoMo: recall@10) and
reported on the *test* half, which is what the table shows (``--dev`` adds the dev half).

Latency: p50/p95 of the ``limit=10`` call per row, rows interleaved per query (A, B, A, B), with
BLAS pinned to one thread (``OPENBLAS_NUM_THREADS=1`` etc. are set before numpy loads). Query
vectors are computed once up front, so no row pays for the embedding model.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable, Iterable, Mapping, Sequence  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Protocol, TypeVar  # noqa: E402

import numpy as np  # noqa: E402
import numpy.typing as npt  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import datasets as ds  # noqa: E402

ds.ensure_treehop_importable()

from treehop import RetrievalConfig, Treehop  # noqa: E402
from treehop.lexical import LexicalIndex  # noqa: E402
from treehop.models import FindResult, Node  # noqa: E402
from treehop.stores.base import Scope  # noqa: E402
from treehop.uri import CHUNK_MARK  # noqa: E402

Units = frozenset[str]
Ranked = list[Units]
"""A result list as the user gets it: per slot, the labelled units that slot holds (empty for a
directory or an unlabelled node)."""

SPLIT_SEED = 0
DEFAULT_DENSE_WEIGHT = RetrievalConfig().dense_weight
"""What ``find()`` uses by default; the flat hybrid row uses the same weight."""
DENSE_WEIGHT_GRID = (0.5, 0.7, 1.0, 0.9, 0.8)
"""Candidates for tuned ``dense_weight`` rows; the default first, so a tie keeps it."""
ALPHA_GRID = (1.0, 0.7, 0.4)
NO_CONTEXT = {
    "context_neighbour_weight": 0.0,
    "context_parent_weight": 0.0,
    "context_sibling_weight": 0.0,
}
"""Tree context scoring off (``treehop.tree_scoring``): leaves rank by their own score."""
TAG_EVIDENCE_W, TAG_EVIDENCE_TAU = 0.4, 0.6
"""Tag evidence weight and ON_DEMAND threshold chosen on the dev halves of all four sets
jointly by ``bench/bench_tag_evidence.py`` (the rows ``find-tagev``/``find-tagev-od``)."""


# --------------------------------------------------------------------------------------
# Metrics: first-rank dedup over the list as returned
# --------------------------------------------------------------------------------------


def first_ranks(ranked: Sequence[Iterable[str]]) -> dict[str, int]:
    """Each unit's first (1-based) rank in the list; later slots holding it count for nothing."""
    out: dict[str, int] = {}
    for rank, units in enumerate(ranked, start=1):
        for u in units:
            out.setdefault(u, rank)
    return out


def ndcg_at(ranked: Sequence[Iterable[str]], relevant: Mapping[str, float], k: int) -> float:
    """nDCG@k with linear gains (trec_eval's), each relevant unit counted at its first rank."""
    gains = sorted((g for g in relevant.values() if g > 0), reverse=True)
    ideal = sum(g / math.log2(i + 2) for i, g in enumerate(gains[:k]))
    if ideal <= 0:
        return 0.0
    dcg = sum(
        relevant[u] / math.log2(r + 1)
        for u, r in first_ranks(ranked[:k]).items()
        if relevant.get(u, 0) > 0
    )
    return dcg / ideal


def recall_at(ranked: Sequence[Iterable[str]], relevant: Mapping[str, float], k: int) -> float:
    """Share of the relevant units found in the first ``k`` slots (LoCoMo: evidence recall)."""
    rel = {u for u, g in relevant.items() if g > 0}
    if not rel:
        return 0.0
    found = set(first_ranks(ranked[:k])) & rel
    return len(found) / len(rel)


def reciprocal_rank(
    ranked: Sequence[Iterable[str]], relevant: Mapping[str, float], k: int
) -> float:
    """1 / the rank of the first slot holding a relevant unit within ``k`` (0 if none)."""
    for rank, units in enumerate(ranked[:k], start=1):
        if any(relevant.get(u, 0) > 0 for u in units):
            return 1.0 / rank
    return 0.0


def split_halves(qids: Sequence[str], seed: int = SPLIT_SEED) -> tuple[list[str], list[str]]:
    """(dev, test): a fixed-seed split where each id's half depends on the id alone.

    An id is dev when sha256("seed:id") is even. Its half never depends on the other ids, so
    adding, removing or reordering queries never moves a query between halves (the halves are
    about equal, not exactly equal). Both halves keep the input order.
    """

    def is_dev(q: str) -> bool:
        return hashlib.sha256(f"{seed}:{q}".encode()).digest()[-1] % 2 == 0

    return [q for q in qids if is_dev(q)], [q for q in qids if not is_dev(q)]


def sample_order(qids: Sequence[str]) -> list[str]:
    """A fixed pseudo-random order (sha256 of "order:<id>"), so that ``--max-queries N``
    takes a sample across query kinds and conversations, not the first N of the file."""
    return sorted(qids, key=lambda q: hashlib.sha256(f"order:{q}".encode()).hexdigest())


class _Identified(Protocol):
    @property
    def qid(self) -> str: ...


_Q = TypeVar("_Q", bound=_Identified)


def sampled_halves(queries: Sequence[_Q], cap: int | None) -> tuple[list[_Q], list[_Q]]:
    """(dev, test) queries (any with a ``qid``: this file's, the natural sets'):
    :func:`split_halves` by id, each half in :func:`sample_order`, the first ``cap`` of each
    (all when ``cap`` is ``None`` or 0)."""
    dev_ids, test_ids = split_halves([q.qid for q in queries])
    by_id = {q.qid: q for q in queries}
    n = cap or None
    return (
        [by_id[q] for q in sample_order(dev_ids)[:n]],
        [by_id[q] for q in sample_order(test_ids)[:n]],
    )


def units_of_chunk(start: int, end: int, spans: Sequence[tuple[int, int, str]]) -> Units:
    """The labelled units a text chunk ``[start, end)`` holds: a unit's span counts when at
    least half of it (or half of the chunk, if the span is longer) lies inside the chunk."""
    out = set()
    for s, e, unit in spans:
        overlap = min(end, e) - max(start, s)
        if overlap > 0 and overlap * 2 >= min(e - s, end - start):
            out.add(unit)
    return frozenset(out)


@dataclass
class Scores:
    n: int
    ndcg10: float
    r10: float
    r100: float | None
    mrr10: float
    r5: float | None

    def get(self, name: str) -> float:
        value = getattr(self, name)
        return float("nan") if value is None else float(value)


def score_runs(
    runs: Mapping[int, Mapping[str, Ranked]],
    relevant: Mapping[str, Mapping[str, float]],
    qids: Sequence[str],
    with_r5: bool = False,
) -> Scores:
    """Mean metrics over ``qids``. ``runs[limit][qid]`` is the list returned at that limit:
    @10 metrics come from the limit-10 list, R@100 from the limit-100 one, R@5 (``with_r5``)
    from a limit-5 list when there is one, else from the first 5 slots of the limit-10 list."""

    def mean(limit: int, fn: Callable[[Ranked, Mapping[str, float]], float]) -> float | None:
        if limit not in runs:
            return None
        return float(np.mean([fn(runs[limit][q], relevant[q]) for q in qids])) if qids else 0.0

    return Scores(
        n=len(qids),
        ndcg10=mean(10, lambda r, rel: ndcg_at(r, rel, 10)) or 0.0,
        r10=mean(10, lambda r, rel: recall_at(r, rel, 10)) or 0.0,
        r100=mean(100, lambda r, rel: recall_at(r, rel, 100)),
        mrr10=mean(10, lambda r, rel: reciprocal_rank(r, rel, 10)) or 0.0,
        r5=mean(5 if 5 in runs else 10, lambda r, rel: recall_at(r, rel, 5)) if with_r5 else None,
    )


# --------------------------------------------------------------------------------------
# Rows
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RowSpec:
    """One row: ``method`` is flat-dense | flat-hybrid | flat-bm25 | framework | find.

    ``config``: ``RetrievalConfig`` overrides (for flat-hybrid only ``dense_weight`` is read);
    ``find``: keyword arguments of ``find()``; ``tune``: {config key: candidates}, chosen on
    the dev half. A new tree feature gets its ablation row in one line here.
    """

    key: str
    name: str
    method: str
    config: Mapping[str, Any] = field(default_factory=dict)
    find: Mapping[str, Any] = field(default_factory=dict)
    tune: Mapping[str, Sequence[Any]] = field(default_factory=dict)
    count: str = "slot"
    """``find`` rows: ``slot`` counts every unit a slot holds (its hit, a document's other
    chunks, the turns a memory hit carries), as the framework row counts every turn its chunk
    spans; ``hits`` counts only the slot's ranked hits (not the turns carried as context)."""


ROWS: tuple[RowSpec, ...] = (
    RowSpec("flat-dense", "flat dense", "flat-dense"),
    RowSpec("flat-hybrid", "flat hybrid (default w)", "flat-hybrid"),
    RowSpec(
        "flat-hybrid-w", "flat hybrid w*", "flat-hybrid", tune={"dense_weight": DENSE_WEIGHT_GRID}
    ),
    RowSpec("flat-hybrid-0.7", "flat hybrid w=0.7", "flat-hybrid", config={"dense_weight": 0.7}),
    RowSpec("flat-hybrid-0.5", "flat hybrid w=0.5", "flat-hybrid", config={"dense_weight": 0.5}),
    RowSpec("flat-bm25", "flat BM25", "flat-bm25"),
    RowSpec("framework", "framework: 1000c split + flat", "framework"),
    RowSpec("find", "find() default", "find"),
    RowSpec("find-hits", "find() default, hits only", "find", count="hits"),
    RowSpec(
        "find-no-memctx",
        "find - memory context",
        "find",
        config={"memory_context_chars": 0},
    ),
    RowSpec(
        "find-memctx",
        "find memory_context_chars*",
        "find",
        tune={"memory_context_chars": (1000, 600, 400, 200)},
    ),
    RowSpec("find-leaves", "find leaves only", "find", find={"include_directories": False}),
    RowSpec("find-group", "find chunk_group", "find", find={"chunk_group": True}),
    RowSpec("find-dense", "find dense only (w=1)", "find", config={"dense_weight": 1.0}),
    RowSpec("find-0.7", "find w=0.7", "find", config={"dense_weight": 0.7}),
    RowSpec("find-0.5", "find w=0.5", "find", config={"dense_weight": 0.5}),
    RowSpec("find-w", "find w*", "find", tune={"dense_weight": DENSE_WEIGHT_GRID}),
    RowSpec("find-a0.5", "find alpha=0.5", "find", config={"score_propagation_alpha": 0.5}),
    RowSpec("find-a", "find alpha*", "find", tune={"score_propagation_alpha": ALPHA_GRID}),
    RowSpec("find-hops-off", "find tag hops off", "find", config={"tag_hop_trigger": "off"}),
    RowSpec("find-hops-on", "find tag hops always", "find", config={"tag_hop_trigger": "always"}),
    RowSpec(
        "find-tagev",
        "find tag evidence, hops always",
        "find",
        config={"tag_hop_trigger": "always", "tag_evidence_weight": TAG_EVIDENCE_W},
    ),
    RowSpec(
        "find-tagev-od",
        "find tag evidence, on demand",
        "find",
        config={"tag_evidence_weight": TAG_EVIDENCE_W, "tag_hop_concentration": TAG_EVIDENCE_TAU},
    ),
    RowSpec(
        "find-no-parents",
        "find no leaf-parent starts",
        "find",
        config={"expand_leaf_parents": False},
    ),
    RowSpec("find-g50", "find global_search_topk=50", "find", config={"global_search_topk": 50}),
    RowSpec(
        "find-conv10", "find convergence 10 rounds", "find", config={"max_convergence_rounds": 10}
    ),
    RowSpec(
        "find-no-collapse", "find - one slot per document", "find", find={"collapse_chunks": False}
    ),
    RowSpec(
        "find-few-docs-off",
        "find - document slots whatever the count",
        "find",
        config={"few_document_passages": False},
    ),
    RowSpec(
        "find-seed-stop",
        "find seed stop (quiet rounds)",
        "find",
        config={"stop_rule": "convergence"},
    ),
    RowSpec("find-a0.8", "find alpha=0.8", "find", config={"score_propagation_alpha": 0.8}),
    RowSpec("find-no-context", "find - tree context", "find", config=NO_CONTEXT),
    RowSpec(
        "find-no-neighbours",
        "find - neighbour evidence",
        "find",
        config={"context_neighbour_weight": 0.0},
    ),
    RowSpec(
        "find-no-session",
        "find - session evidence",
        "find",
        config={"memory_session_weight": 0.0},
    ),
    RowSpec(
        "find-no-heading",
        "find - section headings",
        "find",
        config={"context_heading_weight": 0.0},
    ),
    RowSpec(
        "find-any-section",
        "find neighbours across sections",
        "find",
        config={"context_neighbour_sections": False},
    ),
    RowSpec(
        "find-no-sibling", "find - sibling evidence", "find", config={"context_sibling_weight": 0.0}
    ),
    RowSpec(
        "find-no-parent", "find - parent evidence", "find", config={"context_parent_weight": 0.0}
    ),
    RowSpec("find-dirs", "find + every directory slot", "find", find={"include_directories": True}),
    # issue 33: question-shaped queries over documents (treehop.query_shape)
    RowSpec("find-qw0.5", "find questions w=0.5", "find", config={"question_dense_weight": 0.5}),
    RowSpec("find-qw0.7", "find questions w=0.7", "find", config={"question_dense_weight": 0.7}),
    RowSpec("find-qw0.8", "find questions w=0.8", "find", config={"question_dense_weight": 0.8}),
    RowSpec("find-qw1", "find questions w=1", "find", config={"question_dense_weight": 1.0}),
    RowSpec(
        "find-qh0", "find questions - heading", "find", config={"question_heading_weight": 0.0}
    ),
    RowSpec(
        "find-qh.15",
        "find questions heading 0.15",
        "find",
        config={"question_heading_weight": 0.15},
    ),
    RowSpec(
        "find-qc0", "find questions - tree context", "find", config={"question_context_scale": 0.0}
    ),
    RowSpec(
        "find-qc.5", "find questions context x0.5", "find", config={"question_context_scale": 0.5}
    ),
    RowSpec(
        "find-qc1", "find questions context x1", "find", config={"question_context_scale": 1.0}
    ),
    RowSpec(
        "find-face-only",
        "find slot shows its face only",
        "find",
        config={"document_context_chars": 0},
    ),
)


# --------------------------------------------------------------------------------------
# Benchmark sets
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Query:
    qid: str
    text: str
    relevant: Mapping[str, float]  # unit -> gain
    scope: str  # the target_uri the query is searched in
    kind: str = ""


@dataclass
class FrameworkDoc:
    """A file as a framework user loads it: its text, its search scope, and where its
    labelled units lie in the text (so that a 1,000-character chunk maps to units)."""

    text: str
    scope: str
    spans: list[tuple[int, int, str]]


@dataclass
class BenchSet:
    name: str
    family: str  # "docs" or "memory"
    ingest: Callable[[Treehop], object]
    unit_of: Callable[[Node], str | None]
    queries: list[Query]
    framework_docs: Callable[[], list[FrameworkDoc]]
    note: str

    @property
    def limits(self) -> tuple[int, ...]:
        return (10, 100)

    @property
    def tune_metric(self) -> str:
        return "r10" if self.family == "memory" else "ndcg10"


def _files_as_docs(
    root: Path, scope: str, unit_of_path: Callable[[str], str]
) -> list[FrameworkDoc]:
    out = []
    for f in sorted(root.rglob("*")):
        if f.is_file() and not f.name.startswith("."):
            text = f.read_text(encoding="utf-8")
            out.append(
                FrameworkDoc(text, scope, [(0, len(text), unit_of_path(str(f.relative_to(root))))])
            )
    return out


def _source_path(node: Node) -> str | None:
    sp = node.metadata.get("source_path")
    return str(sp) if sp else None


def cranfield_set(embedder: Any) -> BenchSet:
    cran = ds.load_cranfield()
    layout = ds.build_cranfield_tree(cran, embedder)
    target = "viking://resources/cranfield"

    def unit_of(node: Node) -> str | None:
        sp = _source_path(node)
        return ds.doc_id_from_uri(sp) if sp else None

    queries = [
        Query(q, cran.queries[q], dict(cran.qrels[q]), target)
        for q in cran.queries
        if q in cran.qrels
    ]
    return BenchSet(
        name="cranfield",
        family="docs",
        ingest=lambda th: _add(th, layout.root, target),
        unit_of=unit_of,
        queries=queries,
        framework_docs=lambda: _files_as_docs(layout.root, target, ds.doc_id_from_uri),
        note="Cranfield 1400 as a 2-level k-means topic tree; unit = document; graded qrels",
    )


def _add(th: Treehop, root: Path, target: str) -> None:
    t0 = time.perf_counter()
    res = th.add_resource(str(root), target_uri=target)
    _log(
        f"indexed {target}: {res.directories} dirs, {res.files} files, {res.chunks} chunks "
        f"in {time.perf_counter() - t0:.0f}s"
    )


def _sphinx_set(
    name: str,
    root: Path,
    pages: Sequence[ds.DocPage],
    raw: Sequence[Mapping[str, Any]],
    note: str,
) -> BenchSet:
    target = f"viking://resources/{name}"
    known = {p.relpath for p in pages}
    missing = [q["relevant"] for q in raw if q["relevant"] not in known]
    if missing:
        raise SystemExit(
            f"{name}: {len(missing)} labelled pages are not in the docs (e.g. {missing[0]}); "
            "another package version? Rebuild the query set (python bench/datasets.py --help)"
        )
    queries = [
        Query(
            str(q["qid"]),
            str(q["query"]),
            {str(q["relevant"]): 1.0},
            target,
            str(q.get("kind", "")),
        )
        for q in raw
    ]
    return BenchSet(
        name=name,
        family="docs",
        ingest=lambda th: _add(th, root, target),
        unit_of=_source_path,
        queries=queries,
        framework_docs=lambda: _files_as_docs(root, target, lambda rel: rel),
        note=note,
    )


def django_set() -> BenchSet | None:
    if not ds.django_docs_available():
        _log(f"SKIP django: {ds.django_install_hint()}")
        return None
    root, pages = ds.materialise_django_docs()
    heading = [{**q, "kind": "heading"} for q in ds.load_django_queries()]
    return _sphinx_set(
        "django",
        root,
        pages,
        heading + ds.load_query_file(ds.DJANGO_ANCHOR_QUERIES_FILE),
        "Django 3.2 docs; unit = page; heading + anchor-text queries",
    )


def _debian_docs_set(
    name: str,
    materialise: Callable[[], tuple[Path, list[ds.DocPage]]],
    queries_file: Path,
    title: str,
) -> BenchSet | None:
    """A Debian doc package's Sphinx tree with its derived query file (skipped, with a log
    line, when the package's HTML cannot be found or fetched)."""
    try:
        root, pages = materialise()
    except FileNotFoundError as exc:
        _log(f"SKIP {name}: {exc}")
        return None
    return _sphinx_set(
        name,
        root,
        pages,
        ds.load_query_file(queries_file),
        f"{title}; unit = page; heading + first-sentence + anchor-text queries",
    )


def pytest_set() -> BenchSet | None:
    return _debian_docs_set(
        "pytest", ds.materialise_pytest_docs, ds.PYTEST_QUERIES_FILE, "pytest 7.2 docs"
    )


def flask_set() -> BenchSet | None:
    return _debian_docs_set(
        "flask", ds.materialise_flask_docs, ds.FLASK_QUERIES_FILE, "Flask 2.2 docs"
    )


def gitdoc_set() -> BenchSet | None:
    """HELD OUT: git 2.39's docs (Debian ``git-doc``; asciidoc and DocBook HTML, not Sphinx),
    laid out as git(1) groups its pages. Never used to choose a default."""
    return _debian_docs_set(
        "gitdoc", ds.materialise_gitdoc, ds.GITDOC_QUERIES_FILE, "git 2.39 docs (held out)"
    )


LOCOMO_ROOT = "viking://~/memories/locomo"


LOCOMO_DATED = os.environ.get("TREEHOP_LOCOMO_DATED", "1") != "0"
"""Each turn's text starts with its session's day, ``(8 May 2023) Speaker: text``, as the
memory write path stores it by default (``add_messages(dated_text=True)``); every row sees
the same texts. ``TREEHOP_LOCOMO_DATED=0``: the reference's plain ``Speaker: text``."""


def locomo_set() -> BenchSet | None:
    try:
        convs, dropped = ds.load_locomo()
    except FileNotFoundError as exc:
        _log(f"SKIP locomo: {exc}")
        return None
    folder = ds.materialise_locomo(convs, dated=LOCOMO_DATED)

    def ingest(th: Treehop) -> None:
        """One ``add_resource`` per conversation (so no re-tagging per session), then each
        session's nodes get ``session`` and ``session_date`` metadata (and its turns
        ``kind="turn"``, as ``add_messages`` stores them) through the store's public
        ``upsert`` with their own vectors."""
        t0 = time.perf_counter()
        for c in convs:
            target = f"{LOCOMO_ROOT}/{c.sample_id}"
            th.add_resource(
                str(folder / c.sample_id), target_uri=target, metadata={"conversation": c.sample_id}
            )
            dates = {f"session-{s.index:02d}": (s.index, s.date) for s in c.sessions}
            nodes = []
            for n in th.store.iter_nodes(th.aio.resolve(target)):
                m = re.search(r"/(session-\d+)(/|$)", n.uri)
                if m and m.group(1) in dates:
                    index, date = dates[m.group(1)]
                    nodes.append(
                        n.model_copy(
                            update={
                                "metadata": {
                                    **n.metadata,
                                    "session": index,
                                    "session_date": date,
                                    # a turn, as add_messages marks it (memory_context)
                                    **({"kind": "turn"} if n.is_leaf else {}),
                                }
                            }
                        )
                    )
            th.store.upsert(nodes, th.store.get_vectors([n.uri for n in nodes]))
        _log(
            f"indexed {LOCOMO_ROOT}: {len(convs)} conversations in {time.perf_counter() - t0:.0f}s"
        )

    def unit_of(node: Node) -> str | None:
        sp = _source_path(node)
        conv = node.metadata.get("conversation")
        dia = ds.dia_id_from_filename(sp) if sp else None
        return f"{conv}/{dia}" if dia and conv else None

    def framework_docs() -> list[FrameworkDoc]:
        out = []
        for c in convs:
            for s in c.sessions:
                text = f"Session {s.index} ({s.date})\n"
                spans = []
                for t in s.turns:
                    line = t.line()
                    spans.append((len(text), len(text) + len(line), f"{c.sample_id}/{t.dia_id}"))
                    text += line + "\n"
                out.append(FrameworkDoc(text, f"{LOCOMO_ROOT}/{c.sample_id}", spans))
        return out

    queries = [
        Query(
            q["qid"],
            q["question"],
            {f"{c.sample_id}/{e}": 1.0 for e in q["evidence"]},
            f"{LOCOMO_ROOT}/{c.sample_id}",
            f"cat{q['category']}",
        )
        for c in convs
        for q in c.questions
    ]
    return BenchSet(
        name="locomo",
        family="memory",
        ingest=ingest,
        unit_of=unit_of,
        queries=queries,
        framework_docs=framework_docs,
        note=(
            f"LoCoMo conv 0-4, turn = unit, searched per conversation; left out: "
            f"{dropped['category5']} category-5, {dropped['no_evidence']} without evidence "
            f"({dropped['unknown_evidence_ids']} evidence ids name no turn)"
        ),
    )


# --------------------------------------------------------------------------------------
# Methods: each turns (query, vector, limit) into a Ranked list
# --------------------------------------------------------------------------------------


class MemoEmbedder:
    """The cached embedder, with query vectors computed once up front (so that no row's
    latency includes the model, and every row sees the very same query vector)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.queries: dict[str, npt.NDArray[np.float32]] = {}

    @property
    def name(self) -> str:
        return str(self.inner.name)

    @property
    def dimension(self) -> int:
        return int(self.inner.dimension)

    def prepare(self, texts: Sequence[str]) -> None:
        todo = [t for t in dict.fromkeys(texts) if t not in self.queries]
        if todo:
            for t, v in zip(todo, self.inner.embed(todo), strict=True):
                self.queries[t] = np.asarray(v, dtype=np.float32)

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return np.asarray(self.inner.embed(texts), dtype=np.float32)

    async def aembed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return self.embed(texts)

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        if text not in self.queries:
            self.prepare([text])
        return self.queries[text]

    async def aembed_query(self, text: str) -> npt.NDArray[np.float32]:
        return self.embed_query(text)


class Index:
    """What the flat rows search: the client's leaves (vectors read back from its store, so
    flat and ``find()`` score the very same vectors), a BM25 index over the same leaf texts
    (treehop's own ``LexicalIndex``, the one the store uses), and URI -> unit maps."""

    def __init__(self, th: Treehop, bench: BenchSet) -> None:
        self.th = th
        nodes = [n for n in th.store.iter_nodes(None)]
        self.unit_by_uri: dict[str, Units] = {}
        for n in nodes:
            u = bench.unit_of(n)
            self.unit_by_uri[n.uri] = frozenset((u,)) if u else frozenset()
        leaves = [n for n in nodes if n.is_leaf]
        self.leaf_uris = [n.uri for n in leaves]
        self.leaf_units = [self.unit_by_uri[u] for u in self.leaf_uris]
        self.matrix = np.ascontiguousarray(th.store.get_vectors(self.leaf_uris), dtype=np.float32)
        self.lexical = LexicalIndex()
        self.lexical.upsert(np.arange(len(leaves)), [n.lexical_text() for n in leaves])
        self._scope_rows: dict[str, npt.NDArray[np.int64]] = {}
        self.n_nodes = len(nodes)

    def resolve(self, scope: str) -> str:
        return self.th.aio.resolve(scope)

    def scope_rows(self, scope: str) -> npt.NDArray[np.int64]:
        rows = self._scope_rows.get(scope)
        if rows is None:
            r = self.resolve(scope)
            rows = np.asarray(
                [i for i, u in enumerate(self.leaf_uris) if u == r or u.startswith(r + "/")],
                dtype=np.int64,
            )
            self._scope_rows[scope] = rows
        return rows

    def units(self, uri: str) -> Units:
        return self.unit_by_uri.get(self.resolve(uri), frozenset())


def flat_dense(ix: Index, q: Query, vec: npt.NDArray[np.float32], limit: int) -> Ranked:
    rows = ix.scope_rows(q.scope)
    scores = ix.matrix[rows] @ vec
    k = min(limit, len(rows))
    top = np.argpartition(-scores, k - 1)[:k]
    top = top[np.argsort(-scores[top], kind="stable")]
    return [ix.leaf_units[int(rows[i])] for i in top]


def flat_bm25(ix: Index, q: Query, vec: npt.NDArray[np.float32], limit: int) -> Ranked:
    rows, _ = ix.lexical.top(q.text, limit, rows=ix.scope_rows(q.scope))
    return [ix.leaf_units[int(r)] for r in rows]


def flat_hybrid(
    ix: Index, q: Query, vec: npt.NDArray[np.float32], limit: int, dense_weight: float
) -> Ranked:
    scope = Scope(subtrees=(ix.resolve(q.scope),), leaves_only=True)
    hits = ix.th.store.search(vec, scope, limit, query_text=q.text, dense_weight=dense_weight)
    return [ix.unit_by_uri.get(h.node.uri, frozenset()) for h in hits]


def run_find(
    ix: Index, q: Query, limit: int, kwargs: Mapping[str, Any], count: str = "slot"
) -> Ranked:
    """``find()``'s list, each slot as the units it holds (see :attr:`RowSpec.count`)."""
    res: FindResult = ix.th.find(q.text, target_uri=q.scope, limit=limit, **kwargs)
    hits = [*res.resources, *res.memories, *res.skills]
    out: Ranked = []
    for m in hits:
        units = set(ix.units(m.uri))
        for c in m.collapsed:
            if count == "slot" or not c.carried:
                units |= ix.units(c.uri)
        out.append(frozenset(units))
    return out


class FrameworkTooExpensive(Exception):
    """The framework baseline would embed more new texts than ``--max-new-embeddings``."""


class Framework:
    """What a LangChain user builds instead: ``RecursiveCharacterTextSplitter`` at 1,000
    characters (200 overlap, the LangChain RAG tutorial's settings) over the same files, and
    ``InMemoryVectorStore`` (exact cosine) with the same embedder."""

    def __init__(
        self, docs: Sequence[FrameworkDoc], embedder: Any, max_new: int | None = None
    ) -> None:
        from langchain_core.documents import Document
        from langchain_core.embeddings import Embeddings
        from langchain_core.vectorstores import InMemoryVectorStore
        from langchain_text_splitters import RecursiveCharacterTextSplitter

        class _Emb(Embeddings):
            def embed_documents(self, texts: list[str]) -> list[list[float]]:
                return [list(map(float, v)) for v in embedder.embed(texts)]

            def embed_query(self, text: str) -> list[float]:
                return list(map(float, embedder.embed_query(text)))

        splitter = RecursiveCharacterTextSplitter(
            chunk_size=1000, chunk_overlap=200, add_start_index=True
        )
        chunks: list[Any] = []
        for d in docs:
            for c in splitter.create_documents([d.text]):
                start = int(c.metadata["start_index"])
                units = units_of_chunk(start, start + len(c.page_content), d.spans)
                chunks.append(
                    Document(
                        page_content=c.page_content, metadata={"scope": d.scope, "units": units}
                    )
                )
        count = getattr(embedder, "count_missing", None)
        missing = count([c.page_content for c in chunks]) if count is not None else 0
        if max_new is not None and missing > max_new:
            raise FrameworkTooExpensive(
                f"{missing} of its {len(chunks)} chunk texts are not in the embedding cache "
                f"(--max-new-embeddings {max_new}); run once without that flag to embed them"
            )
        self.store = InMemoryVectorStore(embedding=_Emb())
        self.store.add_documents(chunks)
        self.n_chunks = len(chunks)

    def run(self, q: Query, vec: npt.NDArray[np.float32], limit: int) -> Ranked:
        hits = self.store.similarity_search_by_vector(
            [float(x) for x in vec], k=limit, filter=lambda d: d.metadata["scope"] == q.scope
        )
        return [h.metadata["units"] for h in hits]


def far_queries(
    ix: Index, queries: Sequence[Query], vecs: Mapping[str, npt.NDArray[np.float32]], cut: int = 3
) -> set[str]:
    """Queries with a relevant unit in a first-level subtree whose directory vector ranks
    below ``cut`` among the scope's first-level directories (1 = nearest to the query).

    The case tag hops and subtree routing exist for: the answer sits where the summary does
    not point. Defined from the index's directory vectors and the labels only (never from a
    run); scopes with fewer than 5 first-level directories contribute no query.
    """
    out: set[str] = set()
    for scope in {q.scope for q in queries}:
        root = ix.resolve(scope)
        unit_dirs: dict[str, set[str]] = {}
        for uri, units in zip(ix.leaf_uris, ix.leaf_units, strict=True):
            rest = uri[len(root) + 1 :] if uri.startswith(root + "/") else ""
            if "/" not in rest.split(CHUNK_MARK)[0]:
                continue  # a file directly under the scope: no subtree to be routed to
            top = f"{root}/{rest.split('/', 1)[0]}"
            for u in units:
                unit_dirs.setdefault(u, set()).add(top)
        dirs = sorted(
            n.uri for n in ix.th.store.iter_nodes(root) if n.parent_uri == root and not n.is_leaf
        )
        if len(dirs) < 5:
            continue
        mat = np.asarray(ix.th.store.get_vectors(dirs), dtype=np.float32)
        pos = {d: i for i, d in enumerate(dirs)}
        for q in queries:
            if q.scope != scope:
                continue
            sims = mat @ vecs[q.text]
            rank = np.empty(len(dirs), dtype=np.int64)
            rank[np.argsort(-sims, kind="stable")] = np.arange(1, len(dirs) + 1)
            for u, g in q.relevant.items():
                if g > 0 and any(d in pos and rank[pos[d]] > cut for d in unit_dirs.get(u, ())):
                    out.add(q.qid)
                    break
    return out


# --------------------------------------------------------------------------------------
# Running rows
# --------------------------------------------------------------------------------------


@dataclass
class Runner:
    ix: Index
    embedder: MemoEmbedder
    framework: Framework | None

    def call(self, row: RowSpec, params: Mapping[str, Any], q: Query, limit: int) -> Ranked:
        vec = self.embedder.queries[q.text]
        if row.method == "flat-dense":
            return flat_dense(self.ix, q, vec, limit)
        if row.method == "flat-bm25":
            return flat_bm25(self.ix, q, vec, limit)
        if row.method == "flat-hybrid":
            w = float(params.get("dense_weight", DEFAULT_DENSE_WEIGHT))
            return flat_hybrid(self.ix, q, vec, limit, w)
        if row.method == "framework":
            if self.framework is None:
                raise RuntimeError("framework row without a framework index")
            return self.framework.run(q, vec, limit)
        if row.method == "find":
            if not params:
                return run_find(self.ix, q, limit, row.find, row.count)
            cfg = self.ix.th.config
            saved = {key: getattr(cfg, key) for key in params}
            try:
                for key, value in params.items():
                    setattr(cfg, key, value)
                return run_find(self.ix, q, limit, row.find, row.count)
            finally:
                for key, value in saved.items():
                    setattr(cfg, key, value)
        raise ValueError(f"unknown method {row.method!r}")


@dataclass
class RowResult:
    row: RowSpec
    params: dict[str, Any]
    runs: dict[int, dict[str, Ranked]]
    latency_ms: list[float]


def run_rows(
    runner: Runner,
    rows: Sequence[tuple[RowSpec, dict[str, Any]]],
    queries: Sequence[Query],
    limits: Sequence[int],
) -> list[RowResult]:
    """Every (row, params) on every query and limit, rows rotated per query (A,B / B,A ...)
    so that the machine's drift is shared evenly; latency is taken at limit 10."""
    out = [RowResult(r, dict(p), {lim: {} for lim in limits}, []) for r, p in rows]
    for qi, q in enumerate(queries):
        for k in range(len(rows)):
            ri = (qi + k) % len(rows)
            res = out[ri]
            for lim in limits:
                t0 = time.perf_counter()
                ranked = runner.call(res.row, res.params, q, lim)
                if lim == 10:
                    res.latency_ms.append((time.perf_counter() - t0) * 1000)
                res.runs[lim][q.qid] = ranked
    return out


def tune_params(
    runner: Runner, row: RowSpec, dev: Sequence[Query], metric: str
) -> tuple[dict[str, Any], dict[str, float]]:
    """Choose each tuned key on the dev half (one key at a time, others at their defaults,
    limit 10); ties keep the earlier candidate (the default comes first)."""
    chosen: dict[str, Any] = dict(row.config)
    trace: dict[str, float] = {}
    rel = {q.qid: q.relevant for q in dev}
    for key, grid in row.tune.items():
        best, best_val = grid[0], -1.0
        for cand in grid:
            params = {**chosen, key: cand}
            runs = run_rows(runner, [(row, params)], dev, [10])[0].runs
            val = score_runs(runs, rel, [q.qid for q in dev]).get(metric)
            trace[f"{key}={cand}"] = round(val, 4)
            if val > best_val + 1e-12:
                best, best_val = cand, val
        chosen[key] = best
    return chosen, trace


# --------------------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------------------


@dataclass
class TableRow:
    dataset: str
    half: str
    key: str
    name: str
    scores: Scores
    p50: float
    p95: float
    params: dict[str, Any]
    tuning: dict[str, float] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "half": self.half,
            "row": self.key,
            "name": self.name,
            "n": self.scores.n,
            "ndcg@10": self.scores.ndcg10,
            "R@10": self.scores.r10,
            "R@100": self.scores.r100,
            "MRR@10": self.scores.mrr10,
            "R@5": self.scores.r5,
            "p50_ms": self.p50,
            "p95_ms": self.p95,
            "params": self.params,
            "tuning_on_dev": self.tuning,
        }


def table_row_from_json(d: Mapping[str, Any]) -> TableRow:
    return TableRow(
        dataset=str(d["dataset"]),
        half=str(d["half"]),
        key=str(d["row"]),
        name=str(d["name"]),
        scores=Scores(
            n=int(d["n"]),
            ndcg10=float(d["ndcg@10"]),
            r10=float(d["R@10"]),
            r100=None if d["R@100"] is None else float(d["R@100"]),
            mrr10=float(d["MRR@10"]),
            r5=None if d["R@5"] is None else float(d["R@5"]),
        ),
        p50=float(d["p50_ms"]),
        p95=float(d["p95_ms"]),
        params=dict(d["params"]),
        tuning=dict(d["tuning_on_dev"]),
    )


def run_in_processes(
    names: Sequence[str], args: argparse.Namespace
) -> tuple[list[TableRow], list[str]]:
    """One child process per set (``--jobs``), then one merged table. Each child is this
    script with ``--dataset <set>``; on a shared machine this spreads the sets over the cores.
    Latency ratios stay comparable within a set (its rows are still interleaved)."""
    import subprocess
    import tempfile
    from concurrent.futures import ThreadPoolExecutor

    tmp = Path(tempfile.mkdtemp(prefix="bench_tree_"))

    def child(name: str) -> Path:
        out = tmp / f"{name}.json"
        cmd = [sys.executable, str(Path(__file__).resolve()), "--dataset", name]
        cmd += ["--rows", args.rows, "--max-queries", str(args.max_queries), "--json", str(out)]
        cmd += ["--dev"] * bool(args.dev) + ["--subsets"] * bool(args.subsets)
        if args.max_new_embeddings is not None:
            cmd += ["--max-new-embeddings", str(args.max_new_embeddings)]
        with (tmp / f"{name}.log").open("w") as log:
            subprocess.run(cmd, check=True, stdout=log)
        return out

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        files = list(pool.map(child, names))
    table: list[TableRow] = []
    notes: list[str] = []
    for f in files:
        data = json.loads(f.read_text())
        table += [table_row_from_json(d) for d in data["rows"]]
        notes += list(data["notes"])
    return table, notes


def _fmt(x: float | None) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"


def print_table(rows: Sequence[TableRow]) -> None:
    head = (
        f"| {'set':<18} | {'half':<4} | {'row':<31} | {'n':>4} | nDCG@10 | R@10  | R@100 | "
        f"MRR@10 | R@5   | p50 ms | p95 ms | chosen on dev |"
    )
    print(head)
    print("|" + "|".join("-" * (len(c)) for c in head.split("|")[1:-1]) + "|")
    for r in rows:
        s = r.scores
        tuned = ", ".join(f"{k}={v}" for k, v in r.params.items() if k in _tuned_keys(r.key))
        print(
            f"| {r.dataset:<18} | {r.half:<4} | {r.name:<31} | {s.n:>4} | {_fmt(s.ndcg10):>7} | "
            f"{_fmt(s.r10):>5} | {_fmt(s.r100):>5} | {_fmt(s.mrr10):>6} | {_fmt(s.r5):>5} | "
            f"{r.p50:>6.2f} | {r.p95:>6.2f} | {tuned:<13} |"
        )


def print_checks(table: Sequence[TableRow]) -> None:
    """The issue's "done when" lines, read off the table, and the cross-set dense_weight."""
    by = {(r.dataset, r.half, r.key): r for r in table}
    lines = []
    for (dataset, half, key), r in by.items():
        if key != "find" or "/" in dataset:
            continue
        flat = by.get((dataset, half, "flat-hybrid"))
        if flat is None:
            continue
        metric, need = ("r10", 0.03) if dataset == "locomo" else ("ndcg10", 0.02)
        d = r.scores.get(metric) - flat.scores.get(metric)
        d100 = r.scores.get("r100") - flat.scores.get("r100")
        best = max(
            (
                x
                for x in table
                if x.dataset == dataset
                and x.half == half
                and x.key.startswith(("flat", "framework"))
            ),
            key=lambda x: x.scores.get(metric),
        )
        line = (
            f"- {dataset}/{half}: find() default - flat hybrid (same w) = {d:+.3f} {metric} "
            f"(goal >= +{need}: {'met' if d >= need else 'NOT met'}); R@100 {d100:+.3f} "
            f"({'>= flat' if d100 >= 0 else 'below flat'}); "
            f"best baseline {best.name} {best.scores.get(metric):.3f}"
        )
        if dataset == "locomo":
            ok = r.scores.get("r5") >= 0.70 and r.scores.get("r10") >= 0.80
            line += (
                f"; R@5 {r.scores.get('r5'):.3f} / R@10 {r.scores.get('r10'):.3f} "
                f"(goal 0.70 / 0.80 on dev: {'met' if ok else 'NOT met'} on {half})"
            )
        lines.append(line)
    if lines:
        print("Done-when checks (same scoring = flat hybrid at the default dense_weight):")
        print("\n".join(lines))
    # dense_weight across sets: the dev-half traces of the tuned find row, averaged.
    traces = [
        r.tuning
        for r in table
        if r.key == "find-w"
        and r.half == "test"
        and "/" not in r.dataset
        and r.dataset not in HELD_OUT_SETS
    ]
    if len(traces) > 1:
        keys = [k for k in traces[0] if all(k in t for t in traces)]
        means = {k: float(np.mean([t[k] for t in traces])) for k in keys}
        best_k = max(means, key=lambda k: means[k])
        print(
            f"dense_weight across {len(traces)} sets (find(), mean dev nDCG@10 / LoCoMo R@10): "
            + ", ".join(f"{k.split('=')[1]}: {v:.3f}" for k, v in means.items())
            + f" -> {best_k}"
        )


def _tuned_keys(key: str) -> set[str]:
    return {k for r in ROWS if r.key == key for k in r.tune}


def _log(msg: str) -> None:
    print(f"[bench_tree {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def _pct(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q)) if values else float("nan")


# --------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------

SETS = ("cranfield", "django", "pytest", "locomo", "flask")
"""What ``--dataset all`` runs: the sets every tree default was chosen on (their dev halves)."""
HELD_OUT_SETS = ("gitdoc",)
"""Sets that only *check* the defaults and never choose one: run by name (``--dataset
gitdoc``), never part of ``all``, and left out of the cross-set ``dense_weight`` mean."""


def load_set(name: str, embedder: Any) -> BenchSet | None:
    if name == "cranfield":
        return cranfield_set(embedder)
    if name == "django":
        return django_set()
    if name == "pytest":
        return pytest_set()
    if name == "locomo":
        return locomo_set()
    if name == "flask":
        return flask_set()
    if name == "gitdoc":
        return gitdoc_set()
    raise ValueError(name)


def evaluate_set(
    bench: BenchSet,
    rows: Sequence[RowSpec],
    args: argparse.Namespace,
    cached: Any,
    notes: list[str],
) -> list[TableRow]:
    embedder = MemoEmbedder(cached)
    th = Treehop(None, embedder=embedder, config=RetrievalConfig())
    try:
        bench.ingest(th)
        ix = Index(th, bench)
        _log(f"{bench.name}: {ix.n_nodes} nodes, {len(ix.leaf_uris)} leaves")
        framework = None
        t0 = time.perf_counter()
        if any(r.method == "framework" for r in rows):
            try:
                framework = Framework(bench.framework_docs(), cached, args.max_new_embeddings)
            except FrameworkTooExpensive as exc:
                _log(f"SKIP the framework row on {bench.name}: {exc}")
                rows = [r for r in rows if r.method != "framework"]
                notes.append(f"{bench.name}: framework row skipped: {exc}")
        if framework is not None:
            _log(
                f"{bench.name}: framework index {framework.n_chunks} chunks "
                f"in {time.perf_counter() - t0:.0f}s"
            )
        dev, test = sampled_halves(bench.queries, args.max_queries)
        embedder.prepare([q.text for q in dev + test])
        runner = Runner(ix, embedder, framework)
        chosen: list[tuple[RowSpec, dict[str, Any], dict[str, float]]] = []
        for row in rows:
            if row.tune:
                params, trace = tune_params(runner, row, dev, bench.tune_metric)
                _log(f"{bench.name}: {row.key} tuned on dev -> {params} {trace}")
            else:
                params, trace = dict(row.config), {}
            chosen.append((row, params, trace))
        halves = [("test", test)] + ([("dev", dev)] if args.dev else [])
        out: list[TableRow] = []
        for half, qs in halves:
            t0 = time.perf_counter()
            results = run_rows(runner, [(r, p) for r, p, _ in chosen], qs, bench.limits)
            _log(
                f"{bench.name}/{half}: {len(qs)} queries x {len(rows)} rows "
                f"in {time.perf_counter() - t0:.0f}s"
            )
            rel = {q.qid: q.relevant for q in qs}
            groups: list[tuple[str, list[str]]] = [(bench.name, [q.qid for q in qs])]
            if args.subsets:
                far = far_queries(ix, qs, embedder.queries)
                groups.append((f"{bench.name}/far", [q.qid for q in qs if q.qid in far]))
                groups.append((f"{bench.name}/ordinary", [q.qid for q in qs if q.qid not in far]))
                kinds = sorted({q.kind for q in qs if q.kind})
                groups += [(f"{bench.name}/{k}", [q.qid for q in qs if q.kind == k]) for k in kinds]
            for label, ids in groups:
                for (row, params, trace), res in zip(chosen, results, strict=True):
                    out.append(
                        TableRow(
                            dataset=label,
                            half=half,
                            key=row.key,
                            name=row.name,
                            scores=score_runs(res.runs, rel, ids, bench.family == "memory"),
                            p50=_pct(res.latency_ms, 50),
                            p95=_pct(res.latency_ms, 95),
                            params=params,
                            tuning=trace,
                        )
                    )
        return out
    finally:
        th.close()


def parse_rows(spec: str) -> list[RowSpec]:
    if spec in ("", "all"):
        return list(ROWS)
    keys = [k.strip() for k in spec.split(",") if k.strip()]
    known = {r.key: r for r in ROWS}
    unknown = [k for k in keys if k not in known]
    if unknown:
        raise SystemExit(f"unknown row(s) {unknown}; known: {', '.join(known)}")
    return [known[k] for k in keys]


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument(
        "--dataset",
        default="all",
        help=f"comma-separated: {','.join(SETS)} or all (= those five); held out, by name "
        f"only: {','.join(HELD_OUT_SETS)}",
    )
    ap.add_argument(
        "--max-queries",
        type=int,
        default=0,
        help="N queries of each half, a fixed pseudo-random sample (0 = all)",
    )
    ap.add_argument("--rows", default="all", help="comma-separated row keys (--list-rows)")
    ap.add_argument("--list-rows", action="store_true")
    ap.add_argument("--dev", action="store_true", help="also print the dev half")
    ap.add_argument(
        "--subsets",
        action="store_true",
        help="also score subsets: <set>/far (answer under a far-ranked subtree), <set>/ordinary "
        "(the rest), query kinds",
    )
    ap.add_argument("--json", type=Path, help="write every row to this JSON file")
    ap.add_argument(
        "--merge",
        type=Path,
        nargs="+",
        help="print one table from the --json files of earlier runs (runs nothing)",
    )
    ap.add_argument(
        "--max-new-embeddings",
        type=int,
        default=None,
        help="skip the framework row on a set whose chunks need more new embeddings than this",
    )
    ap.add_argument(
        "--jobs", type=int, default=1, help="run the sets in this many processes (then merge)"
    )
    args = ap.parse_args(argv)
    if args.list_rows:
        for r in ROWS:
            extra = {
                **dict(r.config),
                **dict(r.find),
                **{f"tune {k}": list(v) for k, v in r.tune.items()},
            }
            print(f"{r.key:<16} {r.name:<32} {r.method:<12} {extra}")
        return
    names = list(SETS) if args.dataset == "all" else [s.strip() for s in args.dataset.split(",")]
    bad = [n for n in names if n not in SETS + HELD_OUT_SETS]
    if bad:
        known = ", ".join(SETS + HELD_OUT_SETS)
        raise SystemExit(f"unknown dataset(s) {bad}; known: {known}, all")
    rows = parse_rows(args.rows)
    cached = None if args.merge else ds.default_embedder()
    t0 = time.perf_counter()
    table: list[TableRow] = []
    notes: list[str] = []
    if args.merge:
        for f in args.merge:
            data = json.loads(f.read_text())
            table += [table_row_from_json(d) for d in data["rows"]]
            notes += list(data["notes"])
            notes.append(f"{f.name}: bench_tree.py {' '.join(data['argv'])}")
        names = []
    elif args.jobs > 1 and len(names) > 1:
        table, notes = run_in_processes(names, args)
    for name in names if not table else []:
        bench = load_set(name, cached)
        if bench is None:
            continue
        notes.append(f"{bench.name}: {len(bench.queries)} queries; {bench.note}")
        table += evaluate_set(bench, rows, args, cached, notes)
    print()
    print_table(table)
    print()
    print_checks(table)
    print()
    for n in notes:
        print(f"- {n}")
    print(
        f"- embedder {ds.default_embedder_name() if cached is None else cached.name}; "
        f"RetrievalConfig defaults {RetrievalConfig().model_dump(mode='json')}; "
        f"split seed {SPLIT_SEED}; tuned on dev: nDCG@10 (LoCoMo R@10); "
        f"BLAS threads {os.environ.get('OPENBLAS_NUM_THREADS')}; latency = limit-10 call, "
        f"rows interleaved per query; total {time.perf_counter() - t0:.0f}s"
    )
    if args.json:
        args.json.write_text(
            json.dumps(
                {"rows": [r.as_json() for r in table], "notes": notes, "argv": sys.argv[1:]},
                indent=1,
            )
            + "\n"
        )


if __name__ == "__main__":
    main()
