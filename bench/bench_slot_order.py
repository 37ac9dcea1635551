"""Which order of ``find()``'s slots makes the best context block (issue 33, round 10).

    python bench/bench_slot_order.py --dev
    python bench/bench_slot_order.py --dev --sets cranfield,gitfaq --variants base,dup-off,own-top

For every question of the natural sets' half and every budget it catches the ``FindResult``
``Treehop.assemble_context(question, max_tokens=B)`` builds its block from (once; the
ranking is the same for every variant), then each variant reorders that list of slots before
:func:`treehop.context_assembly.assemble_context`, and the block is judged as
``bench_natural.py`` judges it (``base`` reproduces its find row). Prints ctx@500 / 1,000 /
2,000 per set and pooled. The variants are bench/README.md's "Natural questions, round 10
(slot order in the context block)": redundancy (MMR and demotion by text or vector
similarity), another score for the block's order (``own_score``, the face's cosine), and the
kept ``DUPLICATE_SHARE`` at several shares.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

import bench_context_diag as cd  # noqa: E402
import bench_natural as bn  # noqa: E402
import bench_tree as bt  # noqa: E402
import datasets as ds  # noqa: E402
import natural_sets as ns  # noqa: E402
import treehop.context_assembly as ca  # noqa: E402
from treehop.models import MatchedContext  # noqa: E402

Order = Callable[[list[MatchedContext], dict[str, np.ndarray]], list[MatchedContext]]


def _own(m: MatchedContext) -> float:
    return float(m.own_score if m.own_score is not None else m.score)


def _slot_vector(m: MatchedContext, vecs: dict[str, np.ndarray]) -> np.ndarray:
    """The unit mean of the leaf vectors of the chunks a slot shows (zero when none is a leaf)."""
    rows = [vecs[u] for u in (m.uri, *(c.uri for c in m.collapsed if c.position)) if u in vecs]
    if not rows:
        return np.zeros(next(iter(vecs.values())).shape, dtype=np.float32)
    x = np.mean(rows, axis=0)
    return x / (float(np.linalg.norm(x)) or 1.0)


def by_key(key: Callable[[MatchedContext], float], keep_top: bool) -> Order:
    def order(slots: list[MatchedContext], _v: dict[str, np.ndarray]) -> list[MatchedContext]:
        head = slots[:1] if keep_top else []
        return head + sorted(slots[len(head) :], key=lambda m: -key(m))

    return order


def mmr(lam: float) -> Order:
    """Greedy: next the slot with the best ``score - lam * max cosine`` to those chosen (the top
    slot first)."""

    def order(slots: list[MatchedContext], vecs: dict[str, np.ndarray]) -> list[MatchedContext]:
        x = np.array([_slot_vector(m, vecs) for m in slots])
        sim = x @ x.T
        out, rest = [0], list(range(1, len(slots)))
        while rest:
            j = max(rest, key=lambda i: slots[i].score - lam * float(sim[i, out].max()))
            out.append(j)
            rest.remove(j)
        return [slots[i] for i in out]

    return order


def demote_cosine(t: float) -> Order:
    """A slot whose vector's cosine to a kept slot above it exceeds ``t`` goes last."""

    def order(slots: list[MatchedContext], vecs: dict[str, np.ndarray]) -> list[MatchedContext]:
        x = np.array([_slot_vector(m, vecs) for m in slots])
        sim = x @ x.T
        kept: list[int] = []
        late: list[int] = []
        for i in range(len(slots)):
            (late if kept and float(sim[i, kept].max()) > t else kept).append(i)
        return [slots[i] for i in kept + late]

    return order


def identity(slots: list[MatchedContext], _v: dict[str, np.ndarray]) -> list[MatchedContext]:
    return slots


VARIANTS: dict[str, tuple[Order, float | None]] = {
    "base": (identity, ca.DUPLICATE_SHARE),
    "dup-off": (identity, None),
    **{f"dup-{s}": (identity, s) for s in (0.3, 0.4, 0.6, 0.7, 0.8, 0.9)},
    "own": (by_key(_own, False), None),
    "own-top": (by_key(_own, True), None),
    "cosine": (by_key(lambda m: float(m.vector_score or m.score), False), None),
    **{f"mmr-{lam}": (mmr(lam), None) for lam in (0.05, 0.1, 0.2)},
    **{f"demote-cos-{t}": (demote_cosine(t), None) for t in (0.85, 0.9, 0.95)},
}
"""Each variant: how it reorders the slots, and the ``DUPLICATE_SHARE`` it runs with."""


def run(sets: Sequence[str], dev: bool, names: Sequence[str]) -> None:
    cached = ds.default_embedder()
    counter = bn.CachedCounter(ca.default_token_counter())
    judge = bn.Judge()
    saved = ca.DUPLICATE_SHARE
    pooled: dict[str, dict[int, list[float]]] = {v: {b: [] for b in cd.BUDGETS} for v in names}
    print(f"| set | n | variant | {' | '.join(f'ctx@{b}' for b in cd.BUDGETS)} |")
    print(f"|---|---|---|{'---|' * len(cd.BUDGETS)}")
    try:
        for name in sets:
            nset = ns.load_natural_set(name, cached)
            with bn.indexed_set(nset, cached) as ix:
                flat: Any = ix.flat
                vecs = {u: flat.matrix[i] for i, u in enumerate(flat.uris)}
                qs = bt.sampled_halves(nset.questions, None)[0 if dev else 1]
                ix.embedder.prepare([q.text for q in qs])
                got = {v: {b: [] for b in cd.BUDGETS} for v in names}
                for q in qs:
                    answers = [a for a, _ in q.answers]
                    for b in cd.BUDGETS:
                        slots = list(cd.found_for(ix.th, q.text, b, ix.scope, counter).contexts())
                        for v in names:
                            order, share = VARIANTS[v]
                            ca.DUPLICATE_SHARE = share
                            ordered = order(slots, vecs)
                            ctx = ca.assemble_context(
                                ordered,
                                max_tokens=b,
                                token_counter=counter,
                                query=q.text,
                            )
                            got[v][b].append(
                                bn.answer_in_context(
                                    ctx.text,
                                    answers,
                                    judge,
                                    bn.block_pieces(ordered, ctx),
                                    nset.answers_are_pages,
                                )
                            )
                        ca.DUPLICATE_SHARE = saved
            for v in names:
                cells = " | ".join(f"{np.mean(got[v][b]):.3f}" for b in cd.BUDGETS)
                print(f"| {name} | {len(qs)} | {v} | {cells} |", flush=True)
                for b in cd.BUDGETS:
                    pooled[v][b].extend(got[v][b])
    finally:
        ca.DUPLICATE_SHARE = saved
    for v in names:
        cells = " | ".join(f"{np.mean(pooled[v][b]):.4f}" for b in cd.BUDGETS)
        print(f"| pooled | {len(pooled[v][cd.BUDGETS[0]])} | {v} | {cells} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default=",".join(ns.NATURAL_SETS))
    half = ap.add_mutually_exclusive_group(required=True)
    half.add_argument("--dev", action="store_true")
    half.add_argument("--test", action="store_true")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    args = ap.parse_args()
    names = args.variants.split(",")
    unknown = [v for v in names if v not in VARIANTS]
    if unknown:
        ap.error(f"unknown variants {unknown}; known: {', '.join(VARIANTS)}")
    run(args.sets.split(","), args.dev, names)


if __name__ == "__main__":
    main()
