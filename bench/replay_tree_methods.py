"""Screen tree scoring methods offline: every query's scores of every node in scope, replayed.

    TREEHOP_BENCH_CACHE=<cache> python bench/replay_tree_methods.py \\
        --dataset cranfield,pytest,django,locomo,flask --max-queries 200 --dense-weight 0.5

Same sets, index, halves and query vectors as ``bench_tree.py``. For each query, one store search
returns the hybrid score of every node in the query's scope; ``find()``'s default tree context
(:mod:`treehop.tree_scoring`: neighbours, best sibling, parent) is replayed over *all* leaves
(find() scores only its pool's families; on the document sets the replayed default matches the
bench's find() rows within 0.001 nDCG@10), the
list is collapsed to one slot per labelled unit, and each candidate method is applied on top.
LoCoMo is scored on ranked hits alone (no memory-context window), a proxy for its R@10.

Methods (literature): cluster smoothing (Liu & Croft 2004; Kurland & Lee 2004: a leaf's score
takes its directory's *subtree* score -- the centroid of the subtree's leaf vectors and BM25 of
the subtree's concatenated leaf texts), score regularisation over the tree (Diaz 2005: a leaf's
score pulled toward its most similar siblings' scores), and directory-level pseudo-relevance
feedback (Rocchio with the best subtree's centroid), beside flat Rocchio over the top leaves;
also the default's ablations (``ctx-any-section``: every neighbour counted in full, the rule
before neighbours were weighted by their shared heading path; ``ctx-same-section``: only
neighbours of the same section), a grid of its three weights, and neighbours weighted by their
cosine to the leaf. A method is chosen on the dev halves of all sets jointly (mean gain over
the default) and read on the test halves; a second table gives each per-query paired gain with
its standard error, a third splits a few methods by query kind. Results and what was kept:
``bench/README.md`` ("Tree methods screened", "Neighbours by section").
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
import numpy.typing as npt  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_tree as bt  # noqa: E402
import datasets as ds  # noqa: E402
from treehop import (  # noqa: E402
    RetrievalConfig,
    Treehop,
    tree_scoring,
)
from treehop.lexical import LexicalIndex  # noqa: E402
from treehop.stores.base import Scope  # noqa: E402
from treehop.text_tokenize import tokenize  # noqa: E402
from treehop.tree_scoring import _name_key, section_of, section_overlap  # noqa: E402

F = npt.NDArray[np.float64]


class Tree:
    """Static structure of one set's index: leaves, directories, families, kNN siblings."""

    def __init__(self, th: Treehop, ix: bt.Index, k_sib: int = 5) -> None:
        nodes = {n.uri: n for n in th.store.iter_nodes(None)}
        self.leaf_uris = ix.leaf_uris
        self.L = len(self.leaf_uris)
        self.leaf_pos = {u: i for i, u in enumerate(self.leaf_uris)}
        leaves = [nodes[u] for u in self.leaf_uris]
        self.dir_uris = sorted(u for u, n in nodes.items() if not n.is_leaf)
        self.dir_pos = {u: i for i, u in enumerate(self.dir_uris)}
        self.D = len(self.dir_uris)
        V = ix.matrix.astype(np.float64)
        V /= np.maximum(np.linalg.norm(V, axis=1, keepdims=True), 1e-12)
        self.V = V
        parents = [n.parent_uri or "" for n in leaves]
        self.parent = np.array([self.dir_pos.get(p, -1) for p in parents], dtype=np.int64)
        # neighbours (sibling order, as tree_scoring orders them)
        order = sorted(
            range(self.L),
            key=lambda i: (
                parents[i],
                (leaves[i].chunk_index, ())
                if leaves[i].chunk_index is not None
                else _name_key(leaves[i].uri),
            ),
        )
        o = np.array(order, dtype=np.int64)
        self.prev = np.full(self.L, -1, dtype=np.int64)
        self.nxt = np.full(self.L, -1, dtype=np.int64)
        same = self.parent[o[1:]] == self.parent[o[:-1]]
        self.prev[o[1:][same]] = o[:-1][same]
        self.nxt[o[:-1][same]] = o[1:][same]
        # each neighbour's section weight (tree_scoring.section_overlap of heading paths)
        secs = [section_of(n) for n in leaves]
        self.sec_prev = np.ones(self.L)
        self.sec_next = np.ones(self.L)
        for a, b in zip(o[:-1][same].tolist(), o[1:][same].tolist(), strict=True):
            self.sec_next[a] = self.sec_prev[b] = section_overlap(secs[a], secs[b])
        # the same below the heading prefix that every chunk of the family shares (a page's
        # title: a Sphinx page has one top-level heading, so under section_overlap two
        # different sections of one page still share half their path)
        # a chunk's heading depth (1 for a leaf without a heading path)
        self.depth = np.array([len(x) if x else 1 for x in secs], dtype=np.float64)
        prefix = family_prefixes(self.parent.tolist(), secs)
        self.doc_sec_prev = np.ones(self.L)
        self.doc_sec_next = np.ones(self.L)
        for a, b in zip(o[:-1][same].tolist(), o[1:][same].tolist(), strict=True):
            self.doc_sec_next[a] = self.doc_sec_prev[b] = doc_section_overlap(
                secs[a], secs[b], prefix.get(int(self.parent[a]), ())
            )
        # each chunk's own heading as terms (tree_scoring.heading_match), inverted, with
        # the terms' document frequencies over the leaves' texts (the IDF variant)
        heads = [tree_scoring.heading_terms(x) for x in secs]
        self.head_len = np.array([len(h) for h in heads], dtype=np.float64)
        inv: dict[str, list[int]] = {}
        for i, h in enumerate(heads):
            for term in h:
                inv.setdefault(term, []).append(i)
        self.head_inv = {k: np.array(v, dtype=np.int64) for k, v in inv.items()}
        df: dict[str, int] = {}
        for n in leaves:
            for term in set(tokenize(n.lexical_text())):
                df[term] = df.get(term, 0) + 1
        self.idf = {k: float(np.log(1 + self.L / (1 + df.get(k, 0)))) for k in inv}
        self.head_mass = np.array([sum(self.idf[k] for k in h) for h in heads])
        # top-level ancestor below each scope root is resolved per query (scopes differ)
        self.ancestors = [
            [self.dir_pos[a] for a in n.ancestors if a in self.dir_pos] for n in leaves
        ]
        # subtree centroids and aggregate texts
        members: list[list[int]] = [[] for _ in range(self.D)]
        for i, anc in enumerate(self.ancestors):
            for a in set(anc) | ({int(self.parent[i])} if self.parent[i] >= 0 else set()):
                members[a].append(i)
        self.members = members
        C = np.zeros((self.D, V.shape[1]))
        for d, m in enumerate(members):
            if m:
                C[d] = V[m].mean(axis=0)
        self.centroid_raw = C.copy()
        C /= np.maximum(np.linalg.norm(C, axis=1, keepdims=True), 1e-12)
        self.centroid = C
        texts = [leaves[i].lexical_text() for i in range(self.L)]
        self.agg = LexicalIndex()
        self.agg.upsert(np.arange(self.D), [" ".join(texts[i] for i in m) for m in members])
        # kNN siblings by cosine (Diaz's graph restricted to a leaf's family)
        self.sib = np.full((self.L, k_sib), -1, dtype=np.int64)
        self.sib_w = np.zeros((self.L, k_sib))
        fam: dict[int, list[int]] = {}
        for i, p in enumerate(self.parent.tolist()):
            fam.setdefault(p, []).append(i)
        for idx in fam.values():
            if len(idx) < 2:
                continue
            a = np.array(idx)
            S = V[a] @ V[a].T
            np.fill_diagonal(S, -np.inf)
            k = min(k_sib, len(idx) - 1)
            top = np.argsort(-S, axis=1)[:, :k]
            self.sib[a, :k] = a[top]
            self.sib_w[a, :k] = np.maximum(np.take_along_axis(S, top, axis=1), 0.0)
        # a leaf's folder (a chunk's grandparent, another leaf's parent) and document (a
        # chunk's file node; -1 for a leaf that is its own document)
        self.folder = np.array(
            [
                self.dir_pos.get(nodes[n.parent_uri].parent_uri or "", -1)
                if n.chunk_index is not None and n.parent_uri in nodes
                else int(self.parent[i])
                for i, n in enumerate(leaves)
            ],
            dtype=np.int64,
        )
        self.doc = np.where(
            np.array([n.chunk_index is not None for n in leaves]), self.parent, -1
        ).astype(np.int64)
        # grouping key for one slot per unit (a chunked page is one slot)
        self.units = ix.leaf_units
        self.group = [min(u) if u else self.leaf_uris[i] for i, u in enumerate(self.units)]


def family_prefixes(
    parent: list[int], secs: list[tuple[str, ...] | None]
) -> dict[int, tuple[str, ...]]:
    """Per parent, the heading prefix that all of its chunks with a heading path share."""
    out: dict[int, tuple[str, ...]] = {}
    for p, s in zip(parent, secs, strict=True):
        if s is None:
            continue
        if p not in out:
            out[p] = s
            continue
        a, k = out[p], 0
        while k < min(len(a), len(s)) and a[k] == s[k]:
            k += 1
        out[p] = a[:k]
    return out


def doc_section_overlap(
    a: tuple[str, ...] | None, b: tuple[str, ...] | None, prefix: tuple[str, ...]
) -> float:
    """:func:`~treehop.tree_scoring.section_overlap` of two heading paths below ``prefix``
    (the part every chunk of the document shares): two sections of one page share 0, a
    subsection and its section 1/2 (screened as ``ctx-doc-sections``; not kept)."""
    if a is None or b is None or a == b:
        return 1.0
    k = len(prefix)
    return section_overlap(a[k:], b[k:])


def context(
    t: Tree,
    own: F,
    par: F,
    wn: float,
    wp: float | F,
    ws: float | F,
    extra: F | None = None,
    we: float = 0.0,
    sections: bool = True,
    same_only: bool = False,
    doc_sections: bool = False,
    neighbours: str = "mean",
    lift_parent: bool = False,
) -> F:
    """tree_scoring's blend over every leaf (own may hold -inf for leaves out of scope);
    ``sections``: neighbours weighted by their shared heading path (``find()``'s default,
    ``RetrievalConfig.context_neighbour_sections``), else counted in full. Screened variants:
    ``neighbours="lift"`` (the neighbour term never below the leaf's own score), ``"max"``
    (the better neighbour in place of the weighted mean); ``lift_parent`` (the parent term
    never below the own score); ``wp`` / ``ws`` may be per-leaf arrays."""
    ok = np.isfinite(own)
    o = np.where(ok, own, 0.0)
    hp = (t.prev >= 0) & ok[np.maximum(t.prev, 0)]
    hn = (t.nxt >= 0) & ok[np.maximum(t.nxt, 0)]
    cnt = hp.astype(float) + hn
    sp, sn = (t.doc_sec_prev, t.doc_sec_next) if doc_sections else (t.sec_prev, t.sec_next)
    if same_only:  # 1 or 0 (as floats: a sum of two booleans would be one)
        sp, sn = np.floor(sp), np.floor(sn)
    wpv = hp * (sp if sections else 1.0)
    wnv = hn * (sn if sections else 1.0)
    wsum = wpv + wnv
    tot = wpv * o[np.maximum(t.prev, 0)] + wnv * o[np.maximum(t.nxt, 0)]
    neigh = np.where(wsum > 0, tot / np.maximum(wsum, 1e-12), o)
    if neighbours == "lift":
        neigh = np.maximum(neigh, o)
    elif neighbours == "max":
        a = np.where(hp, o[np.maximum(t.prev, 0)], -np.inf)
        b = np.where(hn, o[np.maximum(t.nxt, 0)], -np.inf)
        neigh = np.where(hp | hn, np.maximum(a, b), o)
    if lift_parent:
        par = np.maximum(par, o)
    wn_leaf = wn * np.where(cnt > 0, wsum / np.maximum(cnt, 1), 1.0)
    best_of = np.full(t.D + 1, -np.inf)
    np.maximum.at(best_of, t.parent, np.where(ok, own, -np.inf))
    best = best_of[t.parent]
    best = np.where(np.isfinite(best), best, o)
    out = o + wn_leaf * neigh + wp * par + ws * best
    tot_w = 1 + wn_leaf + wp + ws
    if extra is not None and we:
        out = out + we * extra
        tot_w += we
    return np.where(ok, out / tot_w, -np.inf)


def context_simneigh(t: Tree, own: F, par: F, wn: float, wp: float, ws: float) -> F:
    """The default blend with each neighbour weighted by its cosine to the leaf (clipped at 0):
    an adjacent chunk or turn about something else lends less evidence, and the neighbour
    term's weight shrinks with the neighbours' mean similarity."""
    ok = np.isfinite(own)
    o = np.where(ok, own, 0.0)
    p, n = np.maximum(t.prev, 0), np.maximum(t.nxt, 0)
    hp = (t.prev >= 0) & ok[p]
    hn = (t.nxt >= 0) & ok[n]
    cp = np.where(hp, np.maximum((t.V * t.V[p]).sum(axis=1), 0.0), 0.0)
    cn = np.where(hn, np.maximum((t.V * t.V[n]).sum(axis=1), 0.0), 0.0)
    cnt = hp.astype(float) + hn
    csum = cp + cn
    neigh = np.where(csum > 0, (cp * o[p] + cn * o[n]) / np.maximum(csum, 1e-12), o)
    cbar = np.where(cnt > 0, csum / np.maximum(cnt, 1.0), 1.0)
    best_of = np.full(t.D + 1, -np.inf)
    np.maximum.at(best_of, t.parent, np.where(ok, own, -np.inf))
    best = best_of[t.parent]
    best = np.where(np.isfinite(best), best, o)
    wne = wn * cbar
    out = (o + wne * neigh + wp * par + ws * best) / (1 + wne + wp + ws)
    return np.where(ok, out, -np.inf)


def heading_scores(t: Tree, query: str, idf: bool = False) -> F:
    """:func:`~treehop.tree_scoring.heading_match` of every leaf (``idf``: the cosine of
    IDF-weighted term sets instead of binary ones, screened and not kept)."""
    terms = tree_scoring.query_terms(query)
    out = np.zeros(t.L)
    if not terms:
        return out
    for term in terms:
        at = t.head_inv.get(term)
        if at is not None:
            out[at] += t.idf[term] if idf else 1.0
    if idf:
        q_mass = sum(t.idf.get(k, 0.0) for k in terms)
        return out / np.sqrt(np.maximum(q_mass * t.head_mass, 1e-12))
    return out / np.sqrt(np.maximum(len(terms) * t.head_len, 1e-12))


def first_relevant_rank(ranked: list[frozenset[str]], relevant: Any) -> int:
    """1-based rank of the first slot holding a relevant unit; ``len(ranked) + 1`` if none."""
    for r, units in enumerate(ranked, 1):
        if any(u in relevant for u in units):
            return r
    return len(ranked) + 1


def ranked_units(t: Tree, final: F, k: int) -> list[frozenset[str]]:
    order = np.argsort(-final, kind="stable")
    out, seen = [], set()
    for i in order.tolist():
        if not np.isfinite(final[i]):
            break
        g = t.group[i]
        if g in seen:
            continue
        seen.add(g)
        out.append(t.units[i])
        if len(out) == k:
            break
    return out


def run_set(name: str, max_queries: int, w: float) -> dict[str, Any]:
    cached = ds.default_embedder()
    bench = bt.load_set(name, cached)
    assert bench is not None
    emb = bt.MemoEmbedder(cached)
    th = Treehop(None, embedder=emb, config=RetrievalConfig())
    bench.ingest(th)
    ix = bt.Index(th, bench)
    t = Tree(th, ix)
    cfg = th.config
    dev, test = bt.sampled_halves(bench.queries, max_queries)
    halves = {"dev": dev, "test": test}
    emb.prepare([q.text for qs in halves.values() for q in qs])
    metric = bench.tune_metric
    wn, wp, ws = cfg.context_neighbour_weight, cfg.context_parent_weight, cfg.context_sibling_weight
    out: dict[str, Any] = {"set": name, "metric": metric, "queries": []}
    t0 = time.perf_counter()
    for half, qs in halves.items():
        for q in qs:
            vec = emb.queries[q.text].astype(np.float64)
            vec /= np.linalg.norm(vec)
            root = ix.resolve(q.scope)
            hits = th.store.search(
                emb.queries[q.text],
                Scope(subtrees=(root,)),
                100_000,
                query_text=q.text,
                dense_weight=w,
            )
            own = np.full(t.L, -np.inf)
            dense = np.full(t.L, -np.inf)
            dscore = np.zeros(t.D + 1)  # index -1 (no parent) -> 0
            in_scope_dirs = []
            for h in hits:
                u = h.node.uri
                i = t.leaf_pos.get(u)
                if i is not None:
                    own[i], dense[i] = h.score, h.vector_score
                else:
                    d = t.dir_pos.get(u)
                    if d is not None and u != root:
                        dscore[d] = h.score
                        in_scope_dirs.append(d)
            ok = np.isfinite(own)
            lexn = np.where(ok, (own - w * np.where(ok, dense, 0)) / max(1 - w, 1e-9), 0.0)
            par = dscore[t.parent]
            # cluster (subtree) scores: centroid cosine + BM25 of the aggregate text
            ds_ = np.array(in_scope_dirs, dtype=np.int64)
            csc = np.zeros(t.D + 1)
            if ds_.size:
                cd = t.centroid[ds_] @ vec
                cl = t.agg.score(q.text, ds_).astype(np.float64)
                cl = cl / cl.max() if cl.max() > 0 else cl
                csc[ds_] = w * cd + (1 - w) * cl
            cpar = csc[t.parent]
            cden = np.zeros(t.D + 1)
            clex = np.zeros(t.D + 1)
            if ds_.size:
                cden[ds_], clex[ds_] = cd, cl
            # the cheap cluster score: mean own score of the parent's leaf children in scope
            fsum = np.zeros(t.D + 1)
            fcnt = np.zeros(t.D + 1)
            np.add.at(fsum, t.parent[ok], own[ok])
            np.add.at(fcnt, t.parent[ok], 1.0)
            fmean = (fsum / np.maximum(fcnt, 1.0))[t.parent]
            res: dict[str, float] = {}
            cfold = csc[t.folder]
            cdoc = np.where(t.doc >= 0, csc[t.doc], np.where(ok, own, 0.0))

            ranks: dict[str, int] = {}

            def score(
                key: str,
                final: F,
                rel: Any = q.relevant,
                into: dict[str, float] = res,
                ranks: dict[str, int] = ranks,
            ) -> None:
                ranked = ranked_units(t, final, 10)
                fn = bt.ndcg_at if metric == "ndcg10" else bt.recall_at
                into[key] = fn(ranked, rel, 10)
                if key in ("flat", "ctx"):  # where the first relevant unit sits (11: below 10)
                    ranks[key] = first_relevant_rank(ranked, rel)

            score("flat", own)
            base = context(t, own, par, wn, wp, ws)
            score("ctx", base)
            # section headings as their own field (RetrievalConfig.context_heading_weight,
            # default 0.15 since it was chosen here; "ctx" is the context without it)
            hb, hi = heading_scores(t, q.text), heading_scores(t, q.text, idf=True)
            for wh in (0.1, 0.15, 0.2, 0.25, 0.3, 0.4):
                score(f"heading-{wh}", np.where(ok, base + wh * hb, -np.inf))
                score(f"heading-idf-{wh}", np.where(ok, base + wh * hi, -np.inf))
            score("flat+heading-0.15", np.where(ok, own + 0.15 * hb, -np.inf))
            score("ctx-doc-sections", context(t, own, par, wn, wp, ws, doc_sections=True))
            score("ctx-any-section", context(t, own, par, wn, wp, ws, sections=False))
            score("ctx-same-section", context(t, own, par, wn, wp, ws, same_only=True))
            score("ctx-neighbours", context(t, own, par, 0.0, wp, ws))
            score("ctx-sibling", context(t, own, par, wn, wp, 0.0))
            score("ctx-parent", context(t, own, par, wn, 0.0, ws))
            # the best-sibling term shrunk by the family's size (the best of many chunks is
            # high by chance: a 245-chunk API page), and the parent's score taken from its
            # best child instead of its own text (title and first sentence)
            size = np.maximum(fcnt[t.parent], 1.0)
            score("ctx-sibling-by-size", context(t, own, par, wn, wp, ws / np.log2(1 + size)))
            best_child = np.full(t.D + 1, -np.inf)
            np.maximum.at(best_child, t.parent, np.where(ok, own, -np.inf))
            bc = np.where(np.isfinite(best_child), best_child, 0.0)[t.parent]
            score("ctx-parent-best-child", context(t, own, bc, wn, wp, ws))
            score("ctx-lift-neighbours", context(t, own, par, wn, wp, ws, neighbours="lift"))
            score("ctx-max-neighbour", context(t, own, par, wn, wp, ws, neighbours="max"))
            score("ctx-lift-parent", context(t, own, par, wn, wp, ws, lift_parent=True))
            score("ctx-parent-by-depth", context(t, own, par, wn, wp / t.depth, ws))
            for gn in (0.35, 0.5, 0.7):
                score(f"simneigh{gn}", context_simneigh(t, own, par, gn, wp, ws))
            for gn in (0.0, 0.2, 0.35):
                for gp in (0.0, 0.1):
                    for gs in (0.2, 0.4, 0.6):
                        score(f"w{gn}/{gp}/{gs}", context(t, own, par, gn, gp, gs))
            # the weights again with document-relative sections (ctx-doc-sections)
            for gn in (0.2, 0.35, 0.5):
                for gp in (0.0, 0.1, 0.2):
                    for gs in (0.2, 0.4, 0.6):
                        score(
                            f"wd{gn}/{gp}/{gs}",
                            context(t, own, par, gn, gp, gs, doc_sections=True),
                        )
            for mu in (0.1, 0.2, 0.4, 0.8):
                score(f"clus+{mu}", context(t, own, par, wn, wp, ws, cpar, mu))
            for mu in (0.1, 0.2, 0.4):
                score(f"clusF+{mu}", context(t, own, par, wn, wp, ws, cfold, mu))
                score(f"clusD+{mu}", context(t, own, par, wn, wp, ws, cdoc, mu))
                score(
                    f"clusFD+{mu}",
                    context(t, own, par, wn, wp, ws, 0.5 * (cfold + cdoc), mu),
                )
            for mu in (0.2, 0.4, 0.8):
                score(f"famMean+{mu}", context(t, own, par, wn, wp, ws, fmean, mu))
                score(f"cenOnly+{mu}", context(t, own, par, wn, wp, ws, cden[t.parent], mu))
                score(f"aggLex+{mu}", context(t, own, par, wn, wp, ws, clex[t.parent], mu))
            for wp2 in (0.1, 0.2, 0.4):
                score(f"clusP{wp2}", context(t, own, cpar, wn, wp2, ws))
            # Diaz: own pulled toward similarity-weighted kNN siblings
            o = np.where(ok, own, 0.0)
            sw = t.sib_w * (t.sib >= 0) * ok[np.maximum(t.sib, 0)]
            den = sw.sum(axis=1)
            nb = np.where(
                den > 0, (sw * o[np.maximum(t.sib, 0)]).sum(axis=1) / np.maximum(den, 1e-12), o
            )
            for lam in (0.05, 0.1, 0.2):
                reg = np.where(ok, (1 - lam) * o + lam * nb, -np.inf)
                score(f"reg{lam}", context(t, reg, par, wn, wp, ws))
            # directory PRF: best leaf-parent subtree by cluster score; Rocchio on the dense part
            pdirs = np.unique(t.parent[ok & (t.parent >= 0)])
            pdirs = pdirs[np.isin(pdirs, ds_)] if ds_.size else pdirs[:0]
            top3 = np.argsort(-np.where(ok, own, -np.inf))[:3]
            fb_flat = t.V[top3].mean(axis=0)
            for beta in (0.25, 0.5, 1.0):
                if pdirs.size:
                    dstar = int(pdirs[np.argmax(csc[pdirs])])
                    q2 = vec + beta * t.centroid[dstar]
                    q2 /= np.linalg.norm(q2)
                    own2 = np.where(ok, w * (t.V @ q2) + (1 - w) * lexn, -np.inf)
                    score(f"dprf{beta}", context(t, own2, par, wn, wp, ws))
                else:
                    score(f"dprf{beta}", base)
                q3 = vec + beta * fb_flat / max(np.linalg.norm(fb_flat), 1e-12)
                q3 /= np.linalg.norm(q3)
                own3 = np.where(ok, w * (t.V @ q3) + (1 - w) * lexn, -np.inf)
                score(f"fprf{beta}", context(t, own3, par, wn, wp, ws))
                score(f"fprf{beta}-flat", own3)
            out["queries"].append(
                {
                    "half": half,
                    "qid": q.qid,
                    "kind": q.kind,
                    "text": q.text,
                    "rank_flat": ranks["flat"],
                    "rank_ctx": ranks["ctx"],
                    **res,
                }
            )
        bt._log(f"{name}/{half} replayed in {time.perf_counter() - t0:.0f}s")
    th.close()
    return out


INFO = ("half", "qid", "kind", "text", "rank_flat", "rank_ctx")
"""Per-query fields that are not a method's metric."""


def method_keys(data: list[dict[str, Any]]) -> list[str]:
    return [k for k in data[0]["queries"][0] if k not in INFO]


def report(data: list[dict[str, Any]]) -> None:
    keys = method_keys(data)
    sets = [d["set"] for d in data]

    def mean(d: dict[str, Any], half: str, k: str) -> float:
        return float(np.mean([q[k] for q in d["queries"] if q["half"] == half]))

    print(
        "| method | "
        + " | ".join(f"{s} dev" for s in sets)
        + " | mean dev gain | "
        + " | ".join(f"{s} test" for s in sets)
        + " | mean test gain |"
    )
    for k in keys:
        dv = [mean(d, "dev", k) for d in data]
        tv = [mean(d, "test", k) for d in data]
        dg = np.mean([mean(d, "dev", k) - mean(d, "dev", "ctx") for d in data])
        tg = np.mean([mean(d, "test", k) - mean(d, "test", "ctx") for d in data])
        print(
            f"| {k} | "
            + " | ".join(f"{x:.4f}" for x in dv)
            + f" | {dg:+.4f} | "
            + " | ".join(f"{x:.4f}" for x in tv)
            + f" | {tg:+.4f} |"
        )


def paired(data: list[dict[str, Any]]) -> None:
    """Each method's per-query gain over the replayed default, mean +- its standard error
    (paired: the same queries), per set and half: what a set's noise floor really is."""
    keys = method_keys(data)
    sets = [d["set"] for d in data]
    print(
        "paired gain over ctx, mean +- s.e.: "
        + ", ".join(f"{s} dev" for s in sets)
        + ", "
        + ", ".join(f"{s} test" for s in sets)
    )
    for k in keys:
        cells = []
        for half in ("dev", "test"):
            for d in data:
                g = np.array([q[k] - q["ctx"] for q in d["queries"] if q["half"] == half])
                se = g.std(ddof=1) / np.sqrt(len(g)) if len(g) > 1 else 0.0
                cells.append(f"{g.mean():+.3f}+-{se:.3f}")
        print(f"  {k:<15} " + " ".join(cells))


def by_kind(data: list[dict[str, Any]], keys: tuple[str, ...]) -> None:
    """Mean per set, half and query kind (heading, first sentence, anchor text; LoCoMo's
    categories) of a few methods: which kind of query a method helps or hurts."""
    print("| set | half | kind | n | " + " | ".join(keys) + " |")
    for d in data:
        groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for q in d["queries"]:
            groups.setdefault((q["half"], q.get("kind", "")), []).append(q)
        for (half, kind), qs in sorted(groups.items()):
            cells = " | ".join(f"{np.mean([q[k] for q in qs]):.3f}" for k in keys)
            print(f"| {d['set']} | {half} | {kind} | {len(qs)} | {cells} |")


TERMS = (("ctx-neighbours", "neighbour"), ("ctx-parent", "parent"), ("ctx-sibling", "sibling"))
"""The replayed default without one term, and the term's name."""


def losses(data: list[dict[str, Any]], listed: set[str]) -> None:
    """Where the default falls short, per set and half, paired with flat and with the ideal.

    ``demoted``: flat search ranks the first relevant unit first and the default does not
    (the tree context pushed it down); ``promoted``: the reverse; ``missed``: neither ranks it
    first. For the demoted queries, how many each single term's removal restores (its metric
    back to flat's or above). ``oracle ctx|flat``: the mean if every query took the better of
    the default and flat -- the most that any rule choosing per query between the two could
    gain over the default; ``oracle all``: the better of every screened method per query.
    The sets in ``listed`` print their queries below the ideal, one line each."""
    keys = method_keys(data)
    print(
        "| set | half | n | flat | ctx | below ideal | demoted | promoted | missed "
        "| demoted restored by removing neighbour / parent / sibling "
        "| oracle ctx-or-flat (gain) | oracle all (gain) |"
    )
    for d in data:
        for half in ("dev", "test"):
            qs = [q for q in d["queries"] if q["half"] == half]
            if not qs:
                continue
            ctx = np.array([q["ctx"] for q in qs])
            flat = np.array([q["flat"] for q in qs])
            best_all = np.array([max(q[k] for k in keys) for q in qs])
            dem = [q for q in qs if q["rank_flat"] == 1 < q["rank_ctx"]]
            pro = sum(q["rank_ctx"] == 1 < q["rank_flat"] for q in qs)
            mis = sum(q["rank_ctx"] > 1 and q["rank_flat"] > 1 for q in qs)
            fixed = " / ".join(str(sum(q[k] >= q["flat"] - 1e-12 for q in dem)) for k, _ in TERMS)
            orc = np.maximum(ctx, flat).mean()
            print(
                f"| {d['set']} | {half} | {len(qs)} | {flat.mean():.4f} | {ctx.mean():.4f} "
                f"| {int((ctx < 1 - 1e-12).sum())} | {len(dem)} | {pro} | {mis} | {fixed} "
                f"| {orc:.4f} ({orc - ctx.mean():+.4f}) "
                f"| {best_all.mean():.4f} ({best_all.mean() - ctx.mean():+.4f}) |"
            )
    for d in data:
        if d["set"] not in listed:
            continue
        print(f"queries of {d['set']} below the ideal under the default (rank flat -> ctx):")
        for q in d["queries"]:
            if q["ctx"] >= 1 - 1e-12:
                continue
            terms = " ".join(f"-{name} {q[k]:.3f}" for k, name in TERMS)
            print(
                f"  {q['half']:<4} {q['kind']:<14} rank {q['rank_flat']:>2} -> {q['rank_ctx']:>2}"
                f"  flat {q['flat']:.3f} ctx {q['ctx']:.3f} {terms}"
                f" doc-sections {q['ctx-doc-sections']:.3f}  {q['text'][:60]!r}"
            )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", default="cranfield,pytest,django,locomo")
    ap.add_argument("--max-queries", type=int, default=200)
    ap.add_argument("--dense-weight", type=float, default=RetrievalConfig().dense_weight)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--load", type=Path, nargs="+")
    ap.add_argument(
        "--losses",
        default="",
        help="comma-separated sets whose queries below the ideal are listed one by one",
    )
    args = ap.parse_args()
    if args.load:
        data = [d for f in args.load for d in json.loads(f.read_text())]
    else:
        data = [run_set(s, args.max_queries, args.dense_weight) for s in args.dataset.split(",")]
        if args.json:
            args.json.write_text(json.dumps(data))
    report(data)
    paired(data)
    by_kind(
        data,
        (
            "flat",
            "ctx",
            "ctx-any-section",
            "ctx-same-section",
            "ctx-doc-sections",
            "ctx-neighbours",
            "ctx-parent",
        ),
    )
    losses(data, set(filter(None, args.losses.split(","))))


if __name__ == "__main__":
    main()
