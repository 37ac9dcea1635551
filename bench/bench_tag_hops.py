"""Do tag hops find relevant documents in subtrees whose summaries miss the query? At what cost?

    python bench/bench_tag_hops.py                      # everything below (~5 min on 2 cores)
    python bench/bench_tag_hops.py --trees topic --variants auto --sweep-trees ''   # ~20 s

Data: the 1,400 Cranfield abstracts (title + abstract per file, vectors cached under
``bench/.cache/``), arranged as two real-looking trees and indexed with
``Treehop.add_resource`` and the default automatic tagger:

* ``topic``: ``datasets.build_cranfield_tree`` (MiniLM spherical k-means, 19 topic
  directories / 80 sub-topic directories). Directory summaries match their content;
* ``source``: :func:`build_source_tree`, the papers shelved by publication series (the ``.B``
  field: J. Aeronautical Sciences, NACA, NASA, ARC/RAE, ...; 8 shelves) and period (45 leaf
  directories), as a library files them. Summaries mix every subject, so relevant papers sit
  under directories whose summaries do not match -- the seed's scenario on real text.

Every query runs through ``find(query, target_uri=..., limit=L, include_directories=False)``
with ``RetrievalConfig(tag_hop_trigger=off | always | on_demand)``, everything else default
(L = 10 and 100). Results are mapped to documents (chunks to their file, first position wins)
and scored with ir_measures against cranqrel (gain = 5 - code, -1 -> 1). The reference row is
one flat search over every leaf with find()'s own leaf scoring (:class:`FlatIndex`).

Query sets, chosen from the hops-OFF run (limit 10) only; hop runs are never looked at:

* a "topic" is a first-level directory under the target (the unit a hop adds, tag_hops'
  ``subtree_key``). A topic is *reached* when any of its directories was a starting point or
  was popped by the descent, or any hit came from it; its *summary rank* is the rank of its
  directory vector's cosine to the query among the first-level directories (1 = nearest);
* set **A** ("hidden"): relevant documents (any gain) in >= 2 topics, >= 1 of them reached,
  and >= 1 not reached *and* ranked below ``--far-rank`` (3) by summary;
* set **B** ("ordinary"): every other query. Hops must not lower nDCG@10 there.

Tag variants: ``auto`` (what ingest writes by default); ``auto+user``: the same index after a
simulated user gave each paper up to 3 subject headings through the public ``set_tags`` (title
phrases used by 4..70 titles: a controlled vocabulary a librarian could write; titles only,
never queries or judgements); ``dirtags24``: a fresh index whose tagger keeps 24 instead of 8
labels per directory (``KeywordTagger(max_dir_tags=24)``, a tagger setting).

Printed per tree, variant, limit and set: nDCG@10, R@10, R@100, recall of the relevant docs in
the unreached far topics (set A), paired nDCG@10 difference vs off with a bootstrap 95%
interval, nodes scored, heap rounds, find() latency p50/p95 (noisy on a shared machine: modes
are interleaved per query so that they share the noise), and the hop metrics of
``QueryResult.tag_hops``. A "bridge" line says whether the hops landed in topics that hold
relevant documents. The sweep varies one setting at a time from the defaults.
``bench/data/tag_hops_results.json`` gets every row and ``bench/data/tag_hops_query_sets.json``
the selected queries (``--no-save`` to skip).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import datasets as ds

ds.ensure_treehop_importable()

import ir_measures  # noqa: E402
from ir_measures import R, nDCG  # noqa: E402

from treehop import RetrievalConfig, Treehop  # noqa: E402
from treehop.config import TagHopTrigger  # noqa: E402
from treehop.models import FoundBy  # noqa: E402
from treehop.stores.base import Scope  # noqa: E402
from treehop.tag_hops import subtree_key  # noqa: E402
from treehop.tagging import IngestTagger, KeywordTagger  # noqa: E402

TARGET = "viking://resources/cranfield"
MODES = (TagHopTrigger.OFF, TagHopTrigger.ALWAYS, TagHopTrigger.ON_DEMAND)
RESULTS_FILE = ds.DATA_DIR / "tag_hops_results.json"
SETS_FILE = ds.DATA_DIR / "tag_hops_query_sets.json"
MEASURES = [nDCG @ 10, R @ 10, R @ 100]


# --------------------------------------------------------------------------------------
# One find() call, reduced to what the tables need
# --------------------------------------------------------------------------------------


@dataclass
class Run:
    qid: str
    docs: list[str]  # ranked, deduplicated document ids
    hop_docs: set[str]  # documents whose best (first) hit was found by a tag hop
    nodes_scored: int
    rounds: int
    wall_ms: float
    reached: set[str]  # topics the search touched
    triggered: bool
    hops_tried: int
    subtrees_added: int
    hits_produced: int
    hits_in_topk: int
    tags_used: list[str] = field(default_factory=list)
    added_uris: list[str] = field(default_factory=list)


def topic_of_uri(uri: str) -> str:
    """The topic directory name of a URI under the target ("" for the target itself)."""
    if not uri.startswith(TARGET + "/"):
        return ""
    return subtree_key(uri, [TARGET]).rsplit("/", 1)[-1]


def run_query(th: Treehop, qid: str, text: str, limit: int) -> Run:
    t0 = time.perf_counter()
    res = th.find(text, target_uri=TARGET, limit=limit, include_directories=False)
    wall = (time.perf_counter() - t0) * 1000
    qr = res.query_results[0]
    docs: list[str] = []
    hop_docs: set[str] = set()
    for m in res.resources:
        if not m.is_leaf:
            continue
        d = ds.doc_id_from_uri(m.uri)
        if d in docs:
            continue
        docs.append(d)
        if m.found_by is FoundBy.TAG_HOP:
            hop_docs.add(d)
    touched = [u for u, _ in qr.starting_points] + list(qr.searched_directories)
    touched += [m.uri for m in res.resources]
    reached = {t for t in (topic_of_uri(th.aio.resolve(u)) for u in touched) if t}
    hm = qr.tag_hops
    return Run(
        qid=qid,
        docs=docs,
        hop_docs=hop_docs,
        nodes_scored=qr.nodes_scored,
        rounds=qr.rounds,
        wall_ms=wall,
        reached=reached,
        triggered=hm.triggered,
        hops_tried=hm.hops_tried,
        subtrees_added=len(hm.subtrees_added),
        hits_produced=hm.hits_produced,
        hits_in_topk=hm.hits_in_topk,
        tags_used=list(hm.tags_used),
        added_uris=list(hm.subtrees_added),
    )


def run_all(
    th: Treehop,
    queries: dict[str, str],
    qids: Sequence[str],
    limit: int,
    configs: list[dict[str, Any]],
) -> list[dict[str, Run]]:
    """Run every query under each config; configs rotate per query so that latency drift
    (caches, a busy machine) is shared evenly between them."""
    base = th.config.model_dump()
    out: list[dict[str, Run]] = [{} for _ in configs]
    for qi, q in enumerate(qids):
        for k in range(len(configs)):
            ci = (qi + k) % len(configs)
            for key, val in {**base, **configs[ci]}.items():
                setattr(th.config, key, val)
            out[ci][q] = run_query(th, q, queries[q], limit)
    for key, val in base.items():
        setattr(th.config, key, val)
    return out


# --------------------------------------------------------------------------------------
# Query sets (from hops-off runs only)
# --------------------------------------------------------------------------------------


@dataclass
class Selection:
    hidden: list[str]  # set A
    ordinary: list[str]  # set B
    hidden_docs: dict[str, set[str]]  # A: relevant docs in unreached far topics
    far_ranks: list[int]  # summary rank of each unreached far relevant topic (set A)
    rule: str
    off_reached: dict[str, set[str]]  # topics the hops-off search reached, per query


def topic_summary_ranks(th: Treehop, qvecs: np.ndarray, topics: Sequence[str]) -> np.ndarray:
    """ranks[i, j]: rank (1 = nearest) of topic j's directory vector for query i."""
    vecs = np.asarray(th.store.get_vectors([f"{TARGET}/{t}" for t in topics]), dtype=np.float32)
    sims = qvecs @ vecs.T
    order = np.argsort(-sims, axis=1, kind="stable")
    ranks = np.empty_like(order)
    rows = np.arange(order.shape[0])[:, None]
    ranks[rows, order] = np.arange(1, order.shape[1] + 1)[None, :]
    return ranks


def select_queries(
    off: dict[str, Run],
    qids: Sequence[str],
    qrels: dict[str, dict[str, int]],
    doc_topic: dict[str, str],
    ranks: np.ndarray,
    topics: Sequence[str],
    far_rank: int,
) -> Selection:
    col = {t: j for j, t in enumerate(topics)}
    hidden, ordinary, far_ranks = [], [], []
    hidden_docs: dict[str, set[str]] = {}
    for i, q in enumerate(qids):
        rel = [d for d, g in qrels.get(q, {}).items() if g > 0 and d in doc_topic]
        rel_topics = {doc_topic[d] for d in rel}
        reached = off[q].reached
        far = {t for t in rel_topics - reached if ranks[i, col[t]] > far_rank}
        if len(rel_topics) >= 2 and rel_topics & reached and far:
            hidden.append(q)
            hidden_docs[q] = {d for d in rel if doc_topic[d] in far}
            far_ranks.extend(int(ranks[i, col[t]]) for t in far)
        else:
            ordinary.append(q)
    rule = (
        "relevant docs (any gain) in >= 2 topic directories; >= 1 such topic reached by the "
        f"hops-off find(); >= 1 not reached and its directory summary ranked > {far_rank} of "
        f"{len(topics)} by cosine to the query"
    )
    return Selection(
        hidden, ordinary, hidden_docs, far_ranks, rule, {q: off[q].reached for q in qids}
    )


# --------------------------------------------------------------------------------------
# User tags: subject headings from titles
# --------------------------------------------------------------------------------------

_TOKEN = re.compile(r"[a-z][a-z0-9-]*")


def subject_headings(
    cran: ds.Cranfield, min_df: int = 4, max_df: int = 70, per_doc: int = 3
) -> dict[str, list[str]]:
    """Up to ``per_doc`` title phrases per paper from a vocabulary of phrases used by
    ``min_df..max_df`` titles (two-word phrases first, then rarer first): the subject headings
    a librarian could assign from a controlled list. Titles only; no query or judgement."""
    cands: dict[str, list[str]] = {}
    for d, doc in cran.docs.items():
        toks = _TOKEN.findall(doc.title.lower())
        ok = [len(t) > 2 and t not in ds._STOP for t in toks]
        uni = [t for t, k in zip(toks, ok, strict=True) if k]
        bi = [
            f"{a}-{b}"
            for a, b, ka, kb in zip(toks, toks[1:], ok, ok[1:], strict=False)
            if ka and kb
        ]
        cands[d] = list(dict.fromkeys(bi + uni))
    df: Counter[str] = Counter()
    for c in cands.values():
        df.update(c)
    out: dict[str, list[str]] = {}
    for d, c in cands.items():
        vocab = [t for t in c if min_df <= df[t] <= max_df]
        vocab.sort(key=lambda t: ("-" not in t, df[t], t))
        chosen: list[str] = []
        for t in vocab:
            if any(t in c2.split("-") for c2 in chosen):
                continue
            chosen.append(t)
            if len(chosen) >= per_doc:
                break
        if chosen:
            out[d] = chosen
    return out


def apply_user_tags(th: Treehop, layout: ds.TreeLayout, headings: dict[str, list[str]]) -> int:
    known = {th.aio.display(n.uri) for n in th.store.iter_nodes(th.aio.resolve(TARGET))}
    n = 0
    for d, labels in sorted(headings.items(), key=lambda x: int(x[0])):
        uri = f"{TARGET}/{layout.paths[d]}"
        if uri not in known:  # the two empty abstracts the loader skips
            continue
        th.set_tags(uri, add=labels)
        n += 1
    return n


# --------------------------------------------------------------------------------------
# A second arrangement: shelved by source and period, as a library files papers
# --------------------------------------------------------------------------------------

TREES = {
    "topic": "datasets.build_cranfield_tree: MiniLM k-means topics / sub-topics",
    "source": "build_source_tree: publication series (Cranfield .B field) / period",
}
SOURCE_TREE_DIR = ds.CACHE_DIR / "cranfield-by-source-v1"
_VENUES: list[tuple[str, str]] = [
    ("j-aeronautical-sciences", r"^j\. ?ae(ro)?\. ?sc"),
    ("naca-reports", r"^naca"),
    ("nasa-reports", r"^nasa"),
    ("uk-arc-rae-reports", r"^(arc|a\.r\.c|r ?\+ ?m|rae|r\.a\.e|coa|college of aeronautics)"),
    ("aiaa-ars-journals", r"^(aiaa|a\.i\.a\.a|ars|a\.r\.s|jet propulsion)"),
    (
        "mechanics-physics-journals",
        r"^(j\. ?app|asme|q\. ?j|q\. ?app|j\. ?fluid|phys\. ?fluids|proc|j\. ?phys|j\. ?math|"
        r"zamp|z\. ?angew|j\. ?roy|aero\. ?quart|j\. ?r\. ?ae)",
    ),
    (
        "institution-reports",
        r"(department|university|laborator|institute|company|corporation|inc\b|college|"
        r"school|division|center|centre)",
    ),
]
_PERIODS = [(0, 1949, "before-1950"), (1950, 1954, "1950-1954"), (1955, 1957, "1955-1957")]
_PERIODS += [(1958, 1959, "1958-1959"), (1960, 1961, "1960-1961"), (1962, 1969, "1962-1963")]


def source_shelf(source: str) -> str:
    """``venue/period`` for a Cranfield ``.B`` field (publication series, then year)."""
    s = " ".join(source.lower().split())
    venue = next((v for v, pat in _VENUES if re.search(pat, s)), "other-sources")
    years = [int(y) for y in re.findall(r"\b(19[0-6]\d)\b", s)]
    period = "undated"
    if years:
        period = next(p for lo, hi, p in _PERIODS if lo <= years[-1] <= hi)
    return f"{venue}/{period}"


def build_source_tree(cran: ds.Cranfield, out_dir: Path = SOURCE_TREE_DIR) -> ds.TreeLayout:
    """Cranfield shelved by where each paper was published (8 series) and when (7 periods).

    The opposite of the topic tree: a directory mixes every subject, so its summary matches
    no query well, and a query's relevant papers are spread over many shelves -- the situation
    the seed describes, on real text. File texts are the topic tree's, so their vectors come
    from the same cache."""
    paths = {
        d: f"{source_shelf(doc.source)}/{ds.cranfield_doc_filename(d)}"
        for d, doc in cran.docs.items()
    }
    manifest = out_dir.parent / (out_dir.name + ".manifest.json")
    if manifest.is_file() and out_dir.is_dir() and json.loads(manifest.read_text()) == paths:
        return ds.TreeLayout(root=out_dir, paths=paths)
    if out_dir.exists():
        shutil.rmtree(out_dir)
    ds.ensure_cache_dir(out_dir)
    for d, rel in paths.items():
        f = out_dir / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(cran.docs[d].file_text(), encoding="utf-8")
    manifest.write_text(json.dumps(paths, indent=0))
    return ds.TreeLayout(root=out_dir, paths=paths)


# --------------------------------------------------------------------------------------
# Scoring and tables
# --------------------------------------------------------------------------------------


def per_query(
    runs: dict[str, Run], qrels: dict[str, dict[str, int]]
) -> dict[str, dict[str, float]]:
    run = {q: {d: float(len(r.docs) - i) for i, d in enumerate(r.docs)} for q, r in runs.items()}
    out: dict[str, dict[str, float]] = {q: {"ndcg": 0.0, "r10": 0.0, "r100": 0.0} for q in runs}
    names = {nDCG @ 10: "ndcg", R @ 10: "r10", R @ 100: "r100"}
    judged = {q: qrels[q] for q in runs if q in qrels}
    for m in ir_measures.iter_calc(MEASURES, judged, run):
        out[m.query_id][names[m.measure]] = float(m.value)
    return out


def _pct(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q)) if values else float("nan")


def bootstrap_ci(diffs: Sequence[float], n: int = 2000, seed: int = 0) -> tuple[float, float]:
    """95% interval of the mean paired difference (queries resampled with replacement)."""
    if not diffs:
        return (float("nan"), float("nan"))
    arr = np.asarray(diffs, dtype=np.float64)
    rng = np.random.default_rng(seed)
    means = arr[rng.integers(0, arr.size, size=(n, arr.size))].mean(axis=1)
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


@dataclass
class Row:
    label: str
    limit: int
    n: int
    ndcg: float
    r10: float
    hid10: float | None
    r100: float | None
    hid100: float | None
    d_ndcg: float | None
    ci: tuple[float, float] | None
    better: int
    worse: int
    nodes: float
    rounds: float
    p50: float
    p95: float
    triggered: float
    hops_tried: float
    subtrees: float
    hop_hits: float
    hop_top10: float
    hop_top10_rel: float
    hop_rel_all: float
    rel_gained: int = 0
    rel_lost: int = 0

    def as_dict(self) -> dict[str, Any]:
        def rnd(v: Any) -> Any:
            if isinstance(v, float):
                return round(v, 5)
            if isinstance(v, tuple):
                return [rnd(x) for x in v]
            return v

        return {k: rnd(v) for k, v in self.__dict__.items()}


def _hidden_recall(
    runs: dict[str, Run], qids: Sequence[str], hidden: dict[str, set[str]], k: int
) -> float:
    return statistics.fmean(len(set(runs[q].docs[:k]) & hidden[q]) / len(hidden[q]) for q in qids)


def make_row(
    label: str,
    limit: int,
    runs: dict[str, Run],
    scores: dict[str, dict[str, float]],
    base: dict[str, dict[str, float]] | None,
    qids: Sequence[str],
    qrels: dict[str, dict[str, int]],
    hidden_docs: dict[str, set[str]] | None,
    base_runs: dict[str, Run] | None = None,
) -> Row:
    rs = [runs[q] for q in qids]
    gained = lost = 0
    if base_runs is not None:
        for q in qids:
            rel = {d for d, g in qrels.get(q, {}).items() if g > 0}
            now, before = set(runs[q].docs[:limit]), set(base_runs[q].docs[:limit])
            gained += len((now - before) & rel)
            lost += len((before - now) & rel)
    diffs = [scores[q]["ndcg"] - base[q]["ndcg"] for q in qids] if base is not None else []

    def rel_hops(r: Run, k: int) -> int:
        return sum(1 for d in r.docs[:k] if d in r.hop_docs and qrels.get(r.qid, {}).get(d, 0) > 0)

    big = limit >= 100
    return Row(
        label=label,
        limit=limit,
        n=len(qids),
        ndcg=statistics.fmean(scores[q]["ndcg"] for q in qids),
        r10=statistics.fmean(scores[q]["r10"] for q in qids),
        hid10=_hidden_recall(runs, qids, hidden_docs, 10) if hidden_docs else None,
        r100=statistics.fmean(scores[q]["r100"] for q in qids) if big else None,
        hid100=_hidden_recall(runs, qids, hidden_docs, 100) if hidden_docs and big else None,
        d_ndcg=statistics.fmean(diffs) if base is not None else None,
        ci=bootstrap_ci(diffs) if base is not None else None,
        better=sum(1 for x in diffs if x > 1e-9),
        worse=sum(1 for x in diffs if x < -1e-9),
        nodes=statistics.fmean(r.nodes_scored for r in rs),
        rounds=statistics.fmean(r.rounds for r in rs),
        p50=_pct([r.wall_ms for r in rs], 50),
        p95=_pct([r.wall_ms for r in rs], 95),
        triggered=statistics.fmean(float(r.triggered) for r in rs),
        hops_tried=statistics.fmean(r.hops_tried for r in rs),
        subtrees=statistics.fmean(r.subtrees_added for r in rs),
        hop_hits=statistics.fmean(r.hits_produced for r in rs),
        hop_top10=statistics.fmean(len(set(r.docs[:10]) & r.hop_docs) for r in rs),
        hop_top10_rel=statistics.fmean(rel_hops(r, 10) for r in rs),
        hop_rel_all=statistics.fmean(rel_hops(r, limit) for r in rs),
        rel_gained=gained,
        rel_lost=lost,
    )


def _f(x: float | None, fmt: str) -> str:
    return "-" if x is None else format(x, fmt)


def print_table(title: str, rows: Sequence[Row]) -> None:
    print(f"\n{title}")
    head = (
        f"{'mode':<24} {'nDCG@10':>7} {'R@10':>5} {'hid@10':>6} {'R@100':>5} {'hid@100':>7} "
        f"{'dnDCG@10':>8} {'95% CI':>15} {'+/-':>5} {'nodes':>6} {'rounds':>6} {'p50ms':>6} "
        f"{'p95ms':>6} {'trig':>4} {'tags':>4} {'subtr':>5} {'hopHit':>6} {'top10':>5} "
        f"{'rel10':>5} {'relK':>5} {'relDocs+/-':>10}"
    )
    print(head)
    print("-" * len(head))
    for r in rows:
        ci = f"[{r.ci[0]:+.3f},{r.ci[1]:+.3f}]" if r.ci is not None else "-"
        pm = f"{r.better}/{r.worse}" if r.d_ndcg is not None else "-"
        print(
            f"{r.label:<24} {r.ndcg:>7.4f} {r.r10:>5.3f} {_f(r.hid10, '.3f'):>6} "
            f"{_f(r.r100, '.3f'):>5} {_f(r.hid100, '.3f'):>7} {_f(r.d_ndcg, '+.4f'):>8} "
            f"{ci:>15} {pm:>5} {r.nodes:>6.0f} {r.rounds:>6.1f} {r.p50:>6.1f} {r.p95:>6.1f} "
            f"{r.triggered:>4.2f} {r.hops_tried:>4.1f} {r.subtrees:>5.2f} {r.hop_hits:>6.2f} "
            f"{r.hop_top10:>5.2f} {r.hop_top10_rel:>5.2f} {r.hop_rel_all:>5.2f} "
            f"{(f'+{r.rel_gained}/-{r.rel_lost}' if r.d_ndcg is not None else '-'):>10}"
        )


LEGEND = """columns:
  hid@10 / hid@100: recall of the relevant docs that sit in unreached far topics (set A only)
  dnDCG@10: mean paired nDCG@10 difference vs off; 95% CI by bootstrap over queries;
            +/-: queries better / worse than off
  nodes: QueryResult.nodes_scored per query (flat: every leaf); rounds: heap rounds;
  p50ms / p95ms: find() wall time (query embedding from the cache included)
  trig: share of queries where hops ran; tags: hops tried (tags looked up); subtr: subtrees
  added; hopHit: hits the hops produced (before the top-k cut); top10: top-10 docs whose hit
  came from a hop; rel10: of those, relevant; relK: relevant hop docs in the whole top-limit;
  relDocs+/-: relevant docs in the top-limit that off did not return / that off returned and
  this run lost (summed over the set's queries)"""


@dataclass
class FlatIndex:
    """One search over every leaf under the target, with find()'s own leaf scoring (the store's
    ``search`` with the configured ``dense_weight``: dense cosine, mixed with BM25 when the
    weight is below 1). With the default alpha = 1 a hit's score is its own, however it was
    reached (hop or not), so a hidden document that flat ranks far down needs the hierarchical
    search to *miss* the documents above it before it can enter the top-k: the flat recall of
    the hidden documents is what a perfect bridge would deliver."""

    th: Treehop
    n_leaves: int

    @classmethod
    def of(cls, th: Treehop) -> FlatIndex:
        n = sum(1 for x in th.store.iter_nodes(th.aio.resolve(TARGET)) if x.is_leaf)
        return cls(th, n)

    def runs(
        self, qids: Sequence[str], qvecs: np.ndarray, queries: dict[str, str], limit: int
    ) -> dict[str, Run]:
        scope = Scope(subtrees=(self.th.aio.resolve(TARGET),), leaves_only=True)
        weight = self.th.config.dense_weight
        out: dict[str, Run] = {}
        for i, q in enumerate(qids):
            t0 = time.perf_counter()
            hits = self.th.store.search(
                qvecs[i], scope, self.n_leaves, query_text=queries[q], dense_weight=weight
            )
            docs: list[str] = []
            for h in hits:
                d = ds.doc_id_from_uri(h.node.uri)
                if d not in docs:
                    docs.append(d)
                    if len(docs) >= limit:
                        break
            wall = (time.perf_counter() - t0) * 1000
            out[q] = Run(q, docs, set(), self.n_leaves, 0, wall, set(), False, 0, 0, 0, 0)
        return out


# --------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------

SWEEP: list[tuple[str, dict[str, Any]]] = [
    ("default", {}),
    ("factor=0.5", {"tag_hop_score_factor": 0.5}),
    ("factor=0.85", {"tag_hop_score_factor": 0.85}),
    ("factor=1.0", {"tag_hop_score_factor": 1.0}),
    ("max_subtrees=1", {"tag_hop_max_subtrees": 1}),
    ("max_subtrees=6", {"tag_hop_max_subtrees": 6}),
    ("max_subtrees=10", {"tag_hop_max_subtrees": 10}),
    ("max_tags=2", {"tag_hop_max_tags": 2}),
    ("max_tags=10", {"tag_hop_max_tags": 10}),
    ("max_tags=10,subtr=10", {"tag_hop_max_tags": 10, "tag_hop_max_subtrees": 10}),
    # Not a tag_hop_* knob: tests whether hop rounds use up the convergence budget.
    ("conv=6", {"max_convergence_rounds": 6}),
]


@dataclass
class Context:
    """Everything a variant's evaluation needs, built once."""

    th: Treehop
    cran: ds.Cranfield
    qids: list[str]
    qvecs: np.ndarray
    sel: Selection
    doc_topic: dict[str, str]
    flat: FlatIndex
    args: argparse.Namespace


def bridge_diagnosis(ctx: Context, runs: dict[str, Run]) -> dict[str, Any]:
    """Did the hops land in the right subtrees, whatever the final ranking made of it?

    Over set A: of the topics the hops added, the share that hold a relevant document of the
    query (bridge precision) against the same share among all topics the off-search did not
    reach (what a random hop would get); the share of unreached far relevant topics a hop
    reached (bridge recall); and what the hop targets were (directories vs chunked files:
    a chunked file is a non-leaf node too)."""
    added = precise = 0
    far_total = far_hit = 0
    unreached = unreached_rel = 0
    kinds: Counter[str] = Counter()
    all_topics = set(ctx.doc_topic.values())
    for q in ctx.sel.hidden:
        rel_topics = {
            ctx.doc_topic[d] for d, g in ctx.cran.qrels[q].items() if g > 0 and d in ctx.doc_topic
        }
        far = {ctx.doc_topic[d] for d in ctx.sel.hidden_docs[q]}
        r = runs[q]
        hop_topics = {topic_of_uri(u) for u in r.added_uris}
        kinds.update("file" if ".txt" in u.rsplit("/", 1)[-1] else "dir" for u in r.added_uris)
        added += len(hop_topics)
        precise += len(hop_topics & rel_topics)
        far_total += len(far)
        far_hit += len(far & hop_topics)
        off_unreached = all_topics - ctx.sel.off_reached[q]
        unreached += len(off_unreached)
        unreached_rel += len(off_unreached & rel_topics)
    out = {
        "bridge_precision": precise / added if added else float("nan"),
        "random_unreached_topic_precision": unreached_rel / unreached if unreached else 0.0,
        "far_relevant_topics_reached": far_hit,
        "far_relevant_topics": far_total,
        "hop_targets": dict(kinds),
    }
    print(
        f"  bridge: {added} topics added by hops on set A; {out['bridge_precision']:.3f} hold a "
        f"relevant doc (random unreached topic: {out['random_unreached_topic_precision']:.3f}); "
        f"hops reached {far_hit}/{far_total} far relevant topics; targets {dict(kinds)}"
    )
    return out


def evaluate_variant(name: str, ctx: Context, report: dict[str, Any], sweep: bool) -> None:
    """Run off / always / on_demand (and the sweep) on every query; print per-set tables.

    Off is run again here (its results equal the selection run's: without hops, tags play no
    part) so that its latency is measured interleaved with the hop modes."""
    args, sel, cran = ctx.args, ctx.sel, ctx.cran
    sets = [
        ("A hidden", sel.hidden, sel.hidden_docs),
        ("B ordinary", sel.ordinary, None),
        ("all", list(ctx.qids), None),
    ]
    rep: dict[str, Any] = {}
    for limit in args.limits:
        configs = [{"tag_hop_trigger": m} for m in MODES]
        runs = run_all(ctx.th, cran.queries, ctx.qids, limit, configs)
        by_mode = dict(zip(MODES, runs, strict=True))
        scores = {m: per_query(r, cran.qrels) for m, r in by_mode.items()}
        base = scores[TagHopTrigger.OFF]
        flat = ctx.flat.runs(ctx.qids, ctx.qvecs, cran.queries, limit)
        flat_scores = per_query(flat, cran.qrels)
        for set_name, ids, hidden in sets:
            if not ids:
                continue
            rows = [
                make_row(
                    f"flat dw={ctx.th.config.dense_weight:g} (reference)",
                    limit,
                    flat,
                    flat_scores,
                    None,
                    ids,
                    cran.qrels,
                    hidden,
                )
            ]
            rows += [
                make_row(
                    m.value,
                    limit,
                    by_mode[m],
                    scores[m],
                    None if m is TagHopTrigger.OFF else base,
                    ids,
                    cran.qrels,
                    hidden,
                    None if m is TagHopTrigger.OFF else by_mode[TagHopTrigger.OFF],
                )
                for m in MODES
            ]
            print_table(f"[{name}] limit={limit} set {set_name} ({len(ids)} queries)", rows)
            rep[f"limit={limit} {set_name}"] = [r.as_dict() for r in rows]
        if limit == args.limits[0]:
            rep["bridge_always"] = bridge_diagnosis(ctx, by_mode[TagHopTrigger.ALWAYS])
            tag_counts: Counter[str] = Counter()
            for r in by_mode[TagHopTrigger.ALWAYS].values():
                tag_counts.update(r.tags_used)
            print(f"  most used hop tags (always): {tag_counts.most_common(10)}")
            rep["top_hop_tags"] = tag_counts.most_common(20)

        if sweep:
            cfgs = [
                ({"tag_hop_trigger": TagHopTrigger.OFF, "max_convergence_rounds": 6}, "off conv=6")
            ]
            cfgs += [
                ({"tag_hop_trigger": TagHopTrigger.ALWAYS, **c}, f"always {n}") for n, c in SWEEP
            ]
            cfgs += [
                (
                    {"tag_hop_trigger": TagHopTrigger.ON_DEMAND, "tag_hop_concentration": c},
                    f"on_demand conc={c}",
                )
                for c in (0.5, 0.6, 0.7)
            ]
            sruns = run_all(ctx.th, cran.queries, ctx.qids, limit, [c for c, _ in cfgs])
            for set_name, ids, hidden in sets[:2]:
                rows = [
                    make_row(
                        lab,
                        limit,
                        r,
                        per_query(r, cran.qrels),
                        base,
                        ids,
                        cran.qrels,
                        hidden,
                        by_mode[TagHopTrigger.OFF],
                    )
                    for (_, lab), r in zip(cfgs, sruns, strict=True)
                ]
                print_table(f"[{name}] limit={limit} sweep on set {set_name} (vs off)", rows)
                rep[f"limit={limit} sweep {set_name}"] = [r.as_dict() for r in rows]
    report[name.split("/", 1)[1]] = rep


BASE_CONFIG: dict[str, Any] = {}
"""``--config``: what every find() row runs with besides the trigger being compared."""


def run_tree(tree: str, cran: ds.Cranfield, emb: Any, args: argparse.Namespace) -> dict[str, Any]:
    """Index one arrangement of Cranfield, select the query sets, evaluate each tag variant."""
    layout = ds.build_cranfield_tree(cran, emb) if tree == "topic" else build_source_tree(cran)
    doc_topic = {d: p.split("/", 1)[0] for d, p in layout.paths.items()}
    topics = sorted(set(doc_topic.values()))
    th = Treehop(None, embedder=emb, config=RetrievalConfig(**BASE_CONFIG))
    t0 = time.perf_counter()
    added = th.add_resource(str(layout.root), target_uri=TARGET)
    print(
        f"\n=== {tree} tree: {TREES[tree]}\nindexed {added.directories} dirs, {added.files} files, "
        f"{added.chunks} chunks in {time.perf_counter() - t0:.1f}s; {len(topics)} first-level "
        "directories",
        file=sys.stderr,
    )
    qids = [q for q in cran.queries if q in cran.qrels]
    if args.max_queries:
        qids = qids[: args.max_queries]
    qvecs = np.asarray(emb.embed([cran.queries[q] for q in qids]), dtype=np.float32)
    for q in qids[:3]:  # warm-up: first calls pay lazy layout builds
        run_query(th, q, cran.queries[q], 10)

    # Selection from hops-off runs only.
    off = run_all(th, cran.queries, qids, 10, [{"tag_hop_trigger": TagHopTrigger.OFF}])[0]
    ranks = topic_summary_ranks(th, qvecs, topics)
    sel = select_queries(off, qids, cran.qrels, doc_topic, ranks, topics, args.far_rank)
    fr = np.asarray(sel.far_ranks)
    print(f"[{tree}] selection rule (hops off only): {sel.rule}")
    if fr.size:
        print(
            f"[{tree}] set A: {len(sel.hidden)} queries, "
            f"{sum(len(v) for v in sel.hidden_docs.values())} relevant docs in {fr.size} "
            f"unreached far topics (summary rank median {np.median(fr):.0f}, min {fr.min()}, "
            f"of {len(topics)}); set B: {len(sel.ordinary)} queries"
        )
    report: dict[str, Any] = {
        "tree": TREES[tree],
        "selection_rule": sel.rule,
        "n_hidden": len(sel.hidden),
        "n_ordinary": len(sel.ordinary),
        "indexed": {"dirs": added.directories, "files": added.files, "chunks": added.chunks},
    }
    ctx = Context(th, cran, qids, qvecs, sel, doc_topic, FlatIndex.of(th), args)
    sweep = tree in args.sweep_trees
    if "auto" in args.variants:
        evaluate_variant(f"{tree}/auto", ctx, report, sweep)
    if "user" in args.variants:
        heads = subject_headings(cran)
        t0 = time.perf_counter()
        n = apply_user_tags(th, layout, heads)
        vocab = Counter(t for v in heads.values() for t in v)
        common = ", ".join(t for t, _ in vocab.most_common(6))
        print(
            f"\n[{tree}] user tags: {n} papers got {sum(len(v) for v in heads.values())} subject "
            f"headings ({len(vocab)} distinct, e.g. {common}) via set_tags in "
            f"{time.perf_counter() - t0:.1f}s",
            file=sys.stderr,
        )
        report["user_tags"] = {"papers": n, "distinct": len(vocab)}
        evaluate_variant(f"{tree}/auto+user", ctx, report, False)
    th.close()
    if "dirtags24" in args.variants:
        # The tagger's own setting, not a code change: directories keep up to 24 labels
        # (aggregated from their children) instead of 8, so more hit tags find a target.
        tagger = IngestTagger(KeywordTagger(max_dir_tags=24))
        th = Treehop(None, embedder=emb, config=RetrievalConfig(**BASE_CONFIG), tagger=tagger)
        th.add_resource(str(layout.root), target_uri=TARGET)
        ctx.th, ctx.flat = th, FlatIndex.of(th)
        evaluate_variant(f"{tree}/auto max_dir_tags=24", ctx, report, False)
        th.close()
    report["selection"] = {
        "hidden": sel.hidden,
        "hidden_docs": {q: sorted(v, key=int) for q, v in sel.hidden_docs.items()},
    }
    return report


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trees", default="topic,source", help="comma list of topic,source")
    ap.add_argument(
        "--variants", default="auto,user,dirtags24", help="comma list of auto,user,dirtags24"
    )
    ap.add_argument("--limits", default="10,100", help="find() limits (default 10,100)")
    ap.add_argument(
        "--sweep-trees", default="topic,source", help="trees to sweep settings on ('' = none)"
    )
    ap.add_argument("--max-queries", type=int, default=0, help="first N queries (0 = all 225)")
    ap.add_argument("--far-rank", type=int, default=3)
    ap.add_argument("--no-save", dest="save", action="store_false")
    ap.add_argument(
        "--config", default="", help="RetrievalConfig updates as key=value,... (values as JSON)"
    )
    args = ap.parse_args(argv)
    BASE_CONFIG.update(
        (k.strip(), json.loads(v))
        for k, _, v in (p.partition("=") for p in args.config.split(",") if p.strip())
    )
    args.limits = [int(x) for x in args.limits.split(",") if x.strip()]
    args.trees = [x.strip() for x in args.trees.split(",") if x.strip()]
    args.variants = [x.strip() for x in args.variants.split(",") if x.strip()]
    args.sweep_trees = [x.strip() for x in args.sweep_trees.split(",") if x.strip()]
    if not set(args.trees) <= set(TREES) or not set(args.sweep_trees) <= set(TREES):
        ap.error(f"trees are {', '.join(TREES)}")
    if not set(args.variants) <= {"auto", "user", "dirtags24"}:
        ap.error("--variants takes auto, user, dirtags24")

    t_all = time.perf_counter()
    emb = ds.default_embedder()
    cran = ds.load_cranfield()
    print(
        f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}, "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    print(LEGEND)
    report: dict[str, Any] = {
        "command": "python bench/bench_tag_hops.py " + " ".join(argv or sys.argv[1:]),
        "trees": {},
    }
    for tree in args.trees:
        report["trees"][tree] = run_tree(tree, cran, emb, args)
    print(f"\ntotal {time.perf_counter() - t_all:.0f}s", file=sys.stderr)
    if args.save:
        sets = {t: r.pop("selection") for t, r in report["trees"].items()}
        ds.DATA_DIR.mkdir(parents=True, exist_ok=True)
        RESULTS_FILE.write_text(json.dumps(report, default=str).replace("}, {", "},\n{") + "\n")
        SETS_FILE.write_text(json.dumps(sets, indent=0) + "\n")


if __name__ == "__main__":
    main()
