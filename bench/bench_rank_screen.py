"""Ranking ideas for natural questions, screened over the flat rows' own index in one pass.

Issue 33, round 4 (ranking). Each variant re-scores every leaf of a natural-question set (the
same leaves, MiniLM vectors and treehop BM25 as ``bench_natural.py``'s flat rows) from the
question's dense cosines ``d`` and BM25 scores, and is judged the way ``find()`` delivers a
question's results: one slot per *passage* (the best-scored leaf of each run of chunks of one
answer or section, ``passage_start``), the slot's text the leaf grown over its passage's
neighbours up to 3,000 characters (``question_context_chars``), nDCG@10 by word 5-gram overlap
(``bench_natural.Judge``). The base is today's question fusion, ``0.8*d + 0.2*bm25/best``.
No store code changes, so a dozen variants compare in a minute; a variant that wins here is
then built into ``find()`` and measured by ``bench_natural.py`` (which decides).

Variants:

* ``rocchio kK bB``: dense pseudo-relevance feedback: the query vector plus ``B`` times the
  unit mean of the base's top ``K`` leaves, re-normalised, fused again; ``words>=N`` /
  ``coherence>=C``: only for queries of N+ words / whose top dense hits are that coherent;
* ``doc max lamL``: plus ``L`` times the best score of the leaf's document (tree evidence);
* ``passage mean lamL``: plus ``L`` times the mean score of the leaf's passage;
* ``centred``: cosines after subtracting the corpus mean vector (anisotropy);
* ``hub kK lamL``: minus ``0.8*L`` times the leaf's hubness: its mean cosine to its ``K``
  nearest leaves of the corpus, centred (CSLS: ``L`` = 0.5); ``pool100``: hubness among the
  base's top 100 leaves only (what ``question_hub_weight`` does in ``find()``);
* ``question-chunk penalty``: minus a constant for a leaf that holds a question (a "?").

Round 9 (issue 33's hypothesis 1: give each chunk the evidence of a big unit that sees the
whole document or section, as LlamaIndex's ~1,024-token nodes embedded in windows have):

* ``doc|section|passage centroid add lamL``: plus ``0.8 * L`` times the question's cosine to
  the unit centroid of the leaf's document / top-level section / passage (the leaves' unit
  vectors summed; what a window-mean embedding of the unit's text approximates), i.e. the
  tree context's parent term with a vector that sees the whole unit instead of its abstract;
  ``max``: the larger of the leaf's cosine and the unit's, fused;
* ``windowK centroid mix lamL | max``: the same with the centroid of the leaf and its ``K``
  previous and next leaves of the document (a LlamaIndex-sized node around the chunk);
* ``passage|document lex share S``: BM25 mixed with the best BM25 of the leaf's passage or
  document (lexical evidence of the unit);
* ``minmax|z pool100 wW``: both scores rescaled over the base's best 100 leaves per query
  (min-max or z-scores) before the weighted sum.

Round 11 (issue 33 item 4, a BM25 weight that adapts to the query; bench/README.md, "Natural
questions, round 11 (a BM25 weight that adapts to the query)"):

* ``const wW``: the question fusion at another constant dense weight;
* ``adapt SIGNAL hiH``: BM25 weight ``0.2 + (H - 0.2) * signal`` per question, the signal from
  the index only: ``agreeK`` the share of the dense top ``K`` leaves in BM25's top ``K``,
  ``fagreeK`` the same against the top ``K`` at the store's lowest dense weight (0.2),
  ``pagreeK`` the same over passages, ``lexlead-in-dense10`` 1 when BM25's best leaf is in the
  dense top 10, ``peak2`` / ``peak10`` BM25's leader's lead over the next leaf / the mean of
  the next nine (``1 - next / best``), ``maxidf`` / ``meanidf`` the largest / mean IDF of
  the question's indexed terms over ``log N``, ``densegap-inv`` 1 minus the dense leader's
  lead over the second in units of 0.05 cosine, ``A*B`` a product;
* ``rrf kK wdW``: reciprocal rank fusion, dense ranks weighted ``W``, BM25 ``1 - W``.

``--variants a,b`` runs only the variants whose name holds one of the strings.

    python bench/bench_rank_screen.py            # dev halves of the five natural sets
    python bench/bench_rank_screen.py --test
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
import numpy.typing as npt  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_natural as bn  # noqa: E402
import bench_tree as bt  # noqa: E402
import datasets as ds  # noqa: E402
import natural_sets as ns  # noqa: E402
from treehop import RetrievalConfig, Treehop  # noqa: E402
from treehop.tree_scoring import section_of  # noqa: E402

F = npt.NDArray[np.float64]
SLOT_CHARS = 3000
QUESTION_W = 0.8
_QMARK = re.compile(r"\?(\s|$)")


@dataclass
class Q:
    text: str
    vec: F
    lex: F
    answers: list[str]
    rel: dict[str, int]


@dataclass
class SetData:
    """One set's leaves (vectors, texts, passage and document ids) and one half's questions."""

    matrix: F
    texts: list[str]
    passage: npt.NDArray[np.int64]
    document: npt.NDArray[np.int64]
    questions: list[Q]
    section: npt.NDArray[np.int64] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    slots: dict[int, str] = field(default_factory=dict)

    def slot_text(self, i: int) -> str:
        """Leaf ``i`` grown over its passage's neighbours (after, then before) up to
        ``SLOT_CHARS``, as a question's passage slot shows it."""
        got = self.slots.get(i)
        if got is not None:
            return got
        lo = hi = i
        size, n, p = len(self.texts[i]), len(self.texts), self.passage
        while True:
            grew = False
            if hi + 1 < n and p[hi + 1] == p[i] and size + len(self.texts[hi + 1]) <= SLOT_CHARS:
                hi += 1
                size += len(self.texts[hi])
                grew = True
            if lo > 0 and p[lo - 1] == p[i] and size + len(self.texts[lo - 1]) <= SLOT_CHARS:
                lo -= 1
                size += len(self.texts[lo])
                grew = True
            if not grew:
                break
        self.slots[i] = "\n\n".join(self.texts[lo : hi + 1])
        return self.slots[i]


def load(name: str, half: str, cached: Any) -> SetData:
    nset = ns.load_natural_set(name, cached)
    emb = bt.MemoEmbedder(cached)
    th = Treehop(None, embedder=emb, config=RetrievalConfig())
    try:
        th.add_resource(str(nset.root), target_uri=f"viking://resources/{nset.name}")
        flat = bn.Flat(th)
        leaves = [n for n in th.store.iter_nodes(None) if n.is_leaf]
        passage, documents, sections = [], {}, {}
        cur, last = -1, None
        section = []
        for n in leaves:
            path = section_of(n)
            section.append(
                sections.setdefault((n.parent_uri, path[:1] if path else None), len(sections))
            )
            if n.parent_uri != last or n.metadata.get("passage_start"):
                cur += 1
            last = n.parent_uri
            passage.append(cur)
            documents.setdefault(n.parent_uri, len(documents))
        qs = bt.sampled_halves(nset.questions, None)[half == "test"]
        emb.prepare([q.text for q in qs])
        out = [
            Q(
                q.text,
                np.asarray(emb.queries[q.text], dtype=np.float64),
                flat.lexical.score(q.text, size=len(leaves)).astype(np.float64),
                [a for a, _ in q.answers],
                {f"a{i}": g for i, (_, g) in enumerate(q.answers)},
            )
            for q in qs
        ]
        ndocs = len(leaves)
        idf: dict[str, list[float]] = {}
        for q in qs:
            dfs = [flat.lexical.document_frequency(t) for t in flat.lexical.tokenize(q.text)]
            idf[q.text] = [
                float(np.log(ndocs / f) / np.log(ndocs)) for f in dfs if f > 0 and ndocs > 1
            ]
        return SetData(
            flat.matrix.astype(np.float64),
            list(flat.texts),
            np.asarray(passage, dtype=np.int64),
            np.asarray([documents[n.parent_uri] for n in leaves], dtype=np.int64),
            out,
            np.asarray(section, dtype=np.int64),
            extra={"idf": idf},
        )
    finally:
        th.close()


def fuse(d: F, lex: F, w: float = QUESTION_W) -> F:
    best = float(lex.max())
    out: F = w * d + (1 - w) * lex / (best if best > 0 else 1.0)
    return out


def _unit(v: F) -> F:
    out: F = v / (np.linalg.norm(v) + 1e-12)
    return out


def _group_max(x: F, groups: npt.NDArray[np.int64]) -> F:
    out = np.full(int(groups.max()) + 1, -np.inf)
    np.maximum.at(out, groups, x)
    return out


def _hubness(x: F, k: int) -> F:
    s = x @ x.T
    np.fill_diagonal(s, -np.inf)
    kk = min(k, len(x) - 1)
    r = np.partition(s, len(x) - kk, axis=1)[:, len(x) - kk :].mean(axis=1)
    out: F = r - r.mean()
    return out


Variant = Callable[[SetData, Q], F]


def _base(s: SetData, q: Q) -> F:
    return fuse(s.matrix @ q.vec, q.lex)


def _rocchio(k: int, beta: float) -> Variant:
    def f(s: SetData, q: Q) -> F:
        top = np.argsort(-_base(s, q))[:k]
        q2 = _unit(q.vec + beta * _unit(s.matrix[top].mean(axis=0)))
        return fuse(s.matrix @ q2, q.lex)

    return f


def _rocchio_gated(k: int, beta: float, min_words: int = 0, min_coherence: float = -1.0) -> Variant:
    """Rocchio only for a query of at least ``min_words`` words whose top ``k`` dense hits
    are coherent (mean pairwise cosine at least ``min_coherence``); the base otherwise."""
    prf = _rocchio(k, beta)

    def f(s: SetData, q: Q) -> F:
        if len(q.text.split()) < min_words:
            return _base(s, q)
        top = s.matrix[np.argsort(-(s.matrix @ q.vec))[:k]]
        sims = top @ top.T
        if (sims.sum() - np.trace(sims)) / (k * (k - 1)) < min_coherence:
            return _base(s, q)
        return prf(s, q)

    return f


def _doc_max(lam: float) -> Variant:
    def f(s: SetData, q: Q) -> F:
        b = _base(s, q)
        out: F = b + lam * _group_max(b, s.document)[s.document]
        return out

    return f


def _passage_mean(lam: float) -> Variant:
    def f(s: SetData, q: Q) -> F:
        b = _base(s, q)
        n = int(s.passage.max()) + 1
        total = np.zeros(n)
        np.add.at(total, s.passage, b)
        out: F = b + lam * (total / np.bincount(s.passage, minlength=n))[s.passage]
        return out

    return f


def _centred(s: SetData, q: Q) -> F:
    if "centred" not in s.extra:
        mu = s.matrix.mean(axis=0)
        c = s.matrix - mu
        s.extra["centred"] = (mu, c / np.linalg.norm(c, axis=1, keepdims=True))
    mu, c = s.extra["centred"]
    return fuse(c @ _unit(q.vec - mu), q.lex)


def _hub(k: int, lam: float) -> Variant:
    def f(s: SetData, q: Q) -> F:
        key = f"hub{k}"
        if key not in s.extra:
            s.extra[key] = _hubness(s.matrix, k)
        return fuse(s.matrix @ q.vec - lam * s.extra[key], q.lex)

    return f


def _hub_pool(lam: float, pool: int = 100, k: int = 10) -> Variant:
    def f(s: SetData, q: Q) -> F:
        b = _base(s, q)
        top = np.argsort(-b)[:pool]
        out = np.full_like(b, -9.0)
        out[top] = b[top] - QUESTION_W * lam * _hubness(s.matrix[top], k)
        return out

    return f


def _question_penalty(lam: float) -> Variant:
    def f(s: SetData, q: Q) -> F:
        if "hasq" not in s.extra:
            s.extra["hasq"] = np.array([1.0 if _QMARK.search(t) else 0.0 for t in s.texts])
        out: F = _base(s, q) - QUESTION_W * lam * s.extra["hasq"]
        return out

    return f


def _centroids(x: F, groups: npt.NDArray[np.int64]) -> F:
    """Each group's unit centroid of its leaves' unit vectors, one row per leaf."""
    n = int(groups.max()) + 1
    total = np.zeros((n, x.shape[1]))
    np.add.at(total, groups, x)
    total /= np.linalg.norm(total, axis=1, keepdims=True) + 1e-12
    out: F = total[groups]
    return out


def _with_unit(s: SetData, q: Q, c: F, lam: float, how: str) -> F:
    """A leaf's score with its unit's cosine ``c`` (a centroid or a window): the larger of
    the two (``max``), their mean weighted ``lam`` (``mix``), or ``lam`` times it added on
    the fusion's dense scale (``add``)."""
    d = s.matrix @ q.vec
    if how == "max":
        return fuse(np.maximum(d, c), q.lex)
    if how == "mix":
        return fuse((d + lam * c) / (1 + lam), q.lex)
    out: F = _base(s, q) + lam * QUESTION_W * c
    return out


def _unit_term(kind: str, lam: float, how: str = "add") -> Variant:
    """The question's cosine to the leaf's *unit* (document, top-level section, passage)
    centroid, a vector that sees the whole unit: ``add``: base plus ``lam * 0.8 * cos``;
    ``max``: the larger of the leaf's and the unit's dense cosine, fused."""

    def f(s: SetData, q: Q) -> F:
        key = f"centroid-{kind}"
        if key not in s.extra:
            groups = {"doc": s.document, "section": s.section, "passage": s.passage}[kind]
            assert groups is not None
            s.extra[key] = _centroids(s.matrix, groups)
        c = s.extra[key] @ q.vec
        return _with_unit(s, q, c, lam, how)

    return f


def _window_centroids(x: F, document: npt.NDArray[np.int64], k: int) -> F:
    """Each leaf's unit centroid of itself and its ``k`` previous and next leaves of the same
    document (a LlamaIndex-sized node around the chunk)."""
    total = x.copy()
    n = len(x)
    for off in range(1, k + 1):
        same = document[off:] == document[:-off]
        total[off:] += np.where(same[:, None], x[:-off], 0.0)
        total[:-off] += np.where(same[:, None], x[off:], 0.0)
    out: F = total / (np.linalg.norm(total, axis=1, keepdims=True) + 1e-12)
    assert len(out) == n
    return out


def _window_term(k: int, lam: float, how: str) -> Variant:
    def f(s: SetData, q: Q) -> F:
        key = f"window{k}"
        if key not in s.extra:
            s.extra[key] = _window_centroids(s.matrix, s.document, k)
        c = s.extra[key] @ q.vec
        return _with_unit(s, q, c, lam, how)

    return f


def _passage_lex(share: float, unit: str = "passage") -> Variant:
    """BM25 evidence of the leaf's passage (its best leaf's BM25) mixed into the leaf's own:
    a term the answer's other chunk holds still counts for this one."""

    def f(s: SetData, q: Q) -> F:
        groups = s.passage if unit == "passage" else s.document
        top = _group_max(q.lex, groups)[groups]
        return fuse(s.matrix @ q.vec, (1 - share) * q.lex + share * top)

    return f


def _spread_norm(w: float, kind: str, pool: int = 100) -> Variant:
    """Both scores rescaled per query over the union's best ``pool`` leaves before the
    weighted sum: ``minmax`` (0 at the pool's worst, 1 at its best) or ``z`` (z-scores), so
    a query whose dense scores are a near-tie lets BM25 decide and a large dense lead holds."""

    def f(s: SetData, q: Q) -> F:
        d = s.matrix @ q.vec
        top = np.argsort(-_base(s, q))[:pool]

        def norm(x: F) -> F:
            t = x[top]
            if kind == "z":
                out: F = (x - t.mean()) / (t.std() + 1e-9)
            else:
                out = (x - t.min()) / (t.max() - t.min() + 1e-9)
            return out

        out = w * norm(d) + (1 - w) * norm(q.lex)
        res = np.full_like(d, -99.0)
        res[top] = out[top]
        return res

    return f


def _doc_diversity(delta: float, mult: bool = False, base: Variant | None = None) -> Variant:
    """Passage slots re-ranked greedily: a passage's face score minus ``0.8 * delta`` times
    the number of slots its document already holds (``mult``: times ``(1 - delta) ** n``):
    one reference page's many sections give way to another document's answer."""

    def f(s: SetData, q: Q) -> F:
        b = (base or _base)(s, q)
        faces: list[int] = []
        seen: set[int] = set()
        for i in np.argsort(-b, kind="stable")[:300].tolist():
            if int(s.passage[i]) not in seen:
                seen.add(int(s.passage[i]))
                faces.append(i)
        held: dict[int, int] = {}
        out = np.full_like(b, -1e9)
        left = faces[:]
        for pos in range(min(10, len(left))):

            def adj(i: int) -> float:
                n = held.get(int(s.document[i]), 0)
                if mult:
                    return float(b[i]) * (1 - delta) ** n
                return float(b[i]) - QUESTION_W * delta * n

            j = max(range(len(left)), key=lambda k: (adj(left[k]), -k))
            i = left.pop(j)
            held[int(s.document[i])] = held.get(int(s.document[i]), 0) + 1
            out[i] = 1000.0 - pos
        return out

    return f


def _topk(x: F, k: int) -> npt.NDArray[np.int64]:
    kk = min(k, len(x))
    out: npt.NDArray[np.int64] = np.argpartition(-x, kk - 1)[:kk]
    return out


def _signal(kind: str, s: SetData, q: Q) -> float:
    """A per-query signal in [0, 1], from the index only (never the labels): how much the
    question's BM25 evidence deserves (round 11, fusion11)."""
    d, lex = s.matrix @ q.vec, q.lex
    best = float(lex.max())
    if best <= 0:
        return 0.0
    if "*" in kind:
        a_, b_ = kind.split("*")
        return _signal(a_, s, q) * _signal(b_, s, q)
    if kind in ("maxidf", "meanidf"):
        got = s.extra["idf"].get(q.text) or [0.0]
        return float(max(got) if kind == "maxidf" else np.mean(got))
    if kind.startswith("pagree"):
        k = int(kind[6:])
        da = list(dict.fromkeys(s.passage[np.argsort(-d, kind="stable")[: 20 * k]].tolist()))[:k]
        la = list(dict.fromkeys(s.passage[np.argsort(-lex, kind="stable")[: 20 * k]].tolist()))[:k]
        return len(set(da) & set(la)) / k
    if kind.startswith("fagree"):
        k = int(kind[6:])
        a, b = set(_topk(d, k).tolist()), set(_topk(fuse(d, lex, 0.2), k).tolist())
        return len(a & b) / k
    if kind.startswith("agree"):
        k = int(kind[5:])
        a, b = set(_topk(d, k).tolist()), set(_topk(lex, k).tolist())
        return len(a & b) / k
    if kind.startswith("lexlead-in-dense"):
        k = int(kind[len("lexlead-in-dense") :])
        return 1.0 if int(np.argmax(lex)) in set(_topk(d, k).tolist()) else 0.0
    if kind == "peak2":
        second = float(np.partition(lex, len(lex) - 2)[-2])
        return 1.0 - second / best
    if kind == "peak10":
        ten = np.sort(lex[_topk(lex, 10)])[::-1]
        return 1.0 - float(ten[1:].mean()) / best
    if kind == "densegap-inv":
        two = np.sort(d[_topk(d, 2)])[::-1]
        return 1.0 - min(1.0, float(two[0] - two[1]) / 0.05)
    raise KeyError(kind)


def _adaptive(kind: str, lo: float = 0.2, hi: float = 0.5) -> Variant:
    """BM25 weight ``lo + (hi - lo) * signal`` (0.2: today's question weight; 0.5: the
    default ``dense_weight``)."""

    def f(s: SetData, q: Q) -> F:
        wl = lo + (hi - lo) * _signal(kind, s, q)
        return fuse(s.matrix @ q.vec, q.lex, 1.0 - wl)

    return f


def _const(w: float) -> Variant:
    def f(s: SetData, q: Q) -> F:
        return fuse(s.matrix @ q.vec, q.lex, w)

    return f


def _rrf(k: float, wd: float) -> Variant:
    def f(s: SetData, q: Q) -> F:
        d = s.matrix @ q.vec
        rd = np.empty(len(d))
        rd[np.argsort(-d, kind="stable")] = np.arange(1, len(d) + 1)
        rl = np.empty(len(d))
        rl[np.argsort(-q.lex, kind="stable")] = np.arange(1, len(d) + 1)
        out: F = wd / (k + rd) + (1 - wd) * np.where(q.lex > 0, 1 / (k + rl), 0.0)
        return out

    return f


VARIANTS: dict[str, Variant] = {
    "dense only": lambda s, q: s.matrix @ q.vec,
    "base (w0.8 /best, today)": _base,
    **{f"const w{w}": _const(w) for w in (0.5, 0.6, 0.7, 0.9)},
    **{
        f"adapt {k} hi{hi}": _adaptive(k, 0.2, hi)
        for k in (
            "agree5",
            "agree10",
            "agree20",
            "lexlead-in-dense10",
            "peak2",
            "peak10",
            "densegap-inv",
        )
        for hi in (0.35, 0.5)
    },
    **{
        f"adapt {k} hi{hi}": _adaptive(k, 0.2, hi)
        for k in (
            "agree3",
            "agree5",
            "peak2",
            "agree5*peak2",
            "pagree3",
            "pagree5",
            "pagree10",
            "fagree3",
            "maxidf",
            "meanidf",
        )
        for hi in (0.4, 0.45, 0.5, 0.6)
    },
    **{f"rrf k{k} wd{w}": _rrf(k, w) for k in (10, 60) for w in (0.5, 0.8)},
    **{f"rocchio k{k} b{b}": _rocchio(k, b) for k in (3, 5, 10) for b in (0.25, 0.5, 1.0)},
    **{f"rocchio k3 b0.5 words>={w}": _rocchio_gated(3, 0.5, min_words=w) for w in (8, 10, 12)},
    **{f"rocchio k5 b0.5 words>={w}": _rocchio_gated(5, 0.5, min_words=w) for w in (8, 10, 12)},
    **{
        f"rocchio k3 b0.5 coherence>={c}": _rocchio_gated(3, 0.5, min_coherence=c)
        for c in (0.5, 0.6, 0.7)
    },
    **{f"doc max lam{x}": _doc_max(x) for x in (0.1, 0.25, 0.5)},
    **{f"passage mean lam{x}": _passage_mean(x) for x in (0.25, 0.5)},
    "centred": _centred,
    **{f"hub k{k} lam{x}": _hub(k, x) for k in (5, 10, 20) for x in (0.25, 0.5)},
    **{f"hub pool100 k10 lam{x}": _hub_pool(x) for x in (0.25, 0.5)},
    **{f"question-chunk penalty {x}": _question_penalty(x) for x in (0.02, 0.05, 0.1)},
    **{
        f"{k} centroid {h} lam{x}": _unit_term(k, x, h)
        for k in ("doc", "section", "passage")
        for h, xs in (("add", (0.1, 0.25, 0.5)), ("max", (0,)))
        for x in xs
    },
    **{
        f"{k} pool100 w{w}": _spread_norm(w, k)
        for k in ("minmax", "z")
        for w in (0.5, 0.6, 0.7, 0.8)
    },
    **{f"doc diversity {x}": _doc_diversity(x) for x in (0.01, 0.02, 0.05, 0.1)},
    **{
        f"window1 max + doc diversity {x}": _doc_diversity(x, base=_window_term(1, 0, "max"))
        for x in (0.02, 0.05)
    },
    **{f"passage lex share{x}": _passage_lex(x) for x in (0.25, 0.5)},
    **{f"document lex share{x}": _passage_lex(x, "doc") for x in (0.25,)},
    **{
        f"window{k} centroid {h} lam{x}": _window_term(k, x, h)
        for k in (1, 2)
        for h, xs in (("mix", (0.25, 0.5, 1.0)), ("max", (0,)))
        for x in xs
    },
}


def ndcg(scores: F, s: SetData, q: Q, judge: bn.Judge) -> float:
    """nDCG@10 of one slot per passage, each judged on its slot text."""
    ranked: list[frozenset[str]] = []
    seen: set[int] = set()
    for i in np.argsort(-scores, kind="stable")[:300].tolist():
        p = int(s.passage[i])
        if p in seen:
            continue
        seen.add(p)
        ranked.append(judge.units(s.slot_text(i), q.answers))
        if len(ranked) == 10:
            break
    return bt.ndcg_at(ranked, q.rel, 10)


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--test", action="store_true", help="the test halves (default: dev)")
    ap.add_argument("--sets", default=",".join(ns.NATURAL_SETS))
    ap.add_argument(
        "--variants",
        default="",
        help="only variants whose name holds one of these (comma-separated)",
    )
    args = ap.parse_args(argv)
    keep = [v for v in args.variants.split(",") if v]
    variants = {k: f for k, f in VARIANTS.items() if not keep or any(v in k for v in keep)}
    half = "test" if args.test else "dev"
    names = args.sets.split(",")
    cached = ds.default_embedder()
    judge = bn.Judge()
    per: dict[str, dict[str, list[float]]] = {k: {} for k in variants}
    for name in names:
        s = load(name, half, cached)
        for key, fn in variants.items():
            per[key][name] = [ndcg(fn(s, q), s, q, judge) for q in s.questions]

    def score(key: str, name: str) -> tuple[float, int]:
        xs = per[key][name]
        return (float(np.mean(xs)) if xs else float("nan")), len(xs)

    bn.print_variant_table(half, names, list(variants), score)


if __name__ == "__main__":
    main()
