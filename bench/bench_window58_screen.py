"""One chunk-window rule screened inside ``find()`` as an extra row: issue 33, stop 55
(helper ``window58``).

rank57's diagnosis (bench/README.md, "where flat hybrid ranks an answer above find()") found
the chunk window the second cause of answers ranked below flat hybrid's: a chunk *beside*
the answer is lifted by its window (the unit mean of it and its neighbours, the answer
among them) past the answer itself (lsof 17.11: the answer fuses to 0.619 on its own, its
neighbour chunk 88 from 0.573 to 0.628). Its ``find-pwin`` (a window only inside the
passage) lost the answers whose window evidence across a passage mark was their own.

``find-nopass`` keeps every window and adds one rule: **a lifted chunk may not pass the
neighbour that lifted it.** After ``HierarchicalRetriever._chunk_window``, each lifted chunk
whose collected neighbour (previous or next chunk) scored higher *on its own* than the chunk
did is capped just below that neighbour's final score (``numpy.nextafter``: the next float
down, no constant), never below the chunk's own score (the window still never lowers one).
Chunks are settled best own score first, so a chain of neighbours keeps its own order.
Why the own scores decide: a neighbour that is better alone is the one whose text the
window borrowed; a neighbour that is worse alone did not lift it, and the chunk may pass it.
The cap moves the ranked slot scores only; the slots' faces are unlifted as before.

    python bench/bench_window58_screen.py --dev --rows find,find-nopass,find-nopass-carry \
        --json OUT.json
    python bench/bench_window58_screen.py --diff OUT.json [OUT2.json ...]

``find-nopass-carry`` narrows the rule to the neighbour whose text carried the lift: a
better-alone neighbour caps the chunk only when the chunk's window *without* that neighbour
(itself and its other neighbour, :func:`~treehop.chunk_window.window_gains`) would not take
it past the neighbour. One more ``get_vectors`` a question.

Every other argument goes to ``bench_natural.py``. ``--diff`` prints, per file and pooled,
each row minus ``find`` per question (``bench_natural.mean_interval``).
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import json  # noqa: E402
import sys  # noqa: E402
from collections.abc import Callable, Mapping, Sequence  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_natural as bn  # noqa: E402
from treehop import hierarchical_retriever as hr  # noqa: E402
from treehop.chunk_window import neighbour_uris, window_gains  # noqa: E402

NOPASS = "find-nopass"
CARRY = "find-nopass-carry"

METRICS = ("ndcg@10", "ctx@500", "ctx@1000", "ctx@2000")


def capped_scores(
    own: Mapping[str, float],
    lifted: Mapping[str, float],
    neighbours: Mapping[str, Sequence[str]],
    without: Mapping[tuple[str, str], float] | None = None,
) -> dict[str, float]:
    """The lifted chunks' scores under the no-pass rule. ``own``: every collected chunk's
    score before the window (chunks the window did not lift included); ``lifted``: the
    window's scores of the chunks it lifted; ``neighbours``: each lifted chunk's previous and
    next chunk URIs. A lifted chunk is capped just below each neighbour that is better on
    its own and not below its own score; chunks are settled best own score first, so a
    neighbour's final score is known when its lower neighbour is capped.

    ``without`` (``find-nopass-carry``): ``(chunk, neighbour)`` -> the chunk's lifted score
    with that neighbour left out of its window; a neighbour then caps only when the chunk
    would not pass it without it (the neighbour's own text carried the lift)."""
    final = {u: lifted.get(u, s) for u, s in own.items()}
    for u in sorted(lifted, key=lambda u: -own[u]):
        cap = final[u]
        for n in neighbours.get(u, ()):
            if n in own and own[n] > own[u] and final[n] <= cap:
                if without is not None and without.get((u, n), -np.inf) > final[n]:
                    continue  # (it passes the neighbour without the neighbour's text)
                cap = min(cap, float(np.nextafter(final[n], -np.inf)))
        final[u] = max(own[u], cap)
    return {u: final[u] for u in lifted}


async def nopass_window(self: hr.HierarchicalRetriever, q: Any, state: Any) -> None:
    """``_chunk_window`` (main's), then :func:`capped_scores` over the collected chunks."""
    before = dict(q.unlifted)
    await CHUNK_WINDOW[0](self, q, state)
    new = {u: s for u, s in q.unlifted.items() if u not in before}
    if not new:
        return
    by_uri = state.collected.by_uri
    own = {
        u: q.unlifted.get(u, c.final).vec
        for u, c in by_uri.items()
        if c.is_leaf and c.chunk_index is not None
    }
    lifted = {u: by_uri[u].final.vec for u in new}
    near = {u: neighbour_uris(u, by_uri[u].chunk_index) for u in new}
    without = await lifts_without(self, q, own, new, near) if bn.ACTIVE_ROW[0] == CARRY else None
    for u, s in capped_scores(own, lifted, near, without).items():
        c = by_uri[u]
        if s != c.final.vec:
            c.final = hr.score_of(s, c.final.rr)


async def lifts_without(
    self: hr.HierarchicalRetriever,
    q: Any,
    own: Mapping[str, float],
    new: Mapping[str, Any],
    near: Mapping[str, Sequence[str]],
) -> dict[tuple[str, str], float]:
    """``(chunk, neighbour)`` -> the chunk's score with its window taken without that
    neighbour (its own score plus the dense weight times :func:`window_gains` of the chunk
    and its other neighbour), for each lifted chunk and each collected neighbour better on
    its own. One ``get_vectors`` of those chunks and their neighbours."""
    pairs = [(u, n) for u in new for n in near[u] if n in own and own[n] > own[u]]
    if not pairs:
        return {}
    row: dict[str, int] = {}
    for u, _ in pairs:
        for x in (u, *near[u]):
            row.setdefault(x, len(row))
    uris = list(row)
    found = await self._present_vectors(uris)
    if found is None:
        return {}
    kept, vectors = found
    at = np.full(len(uris), -1, dtype=np.int64)
    at[np.asarray(kept, dtype=np.int64)] = np.arange(len(kept))

    def other(u: str, n: str) -> tuple[int, int]:
        pair = near[u]
        prev = pair[0] if len(pair) == 2 else None
        nxt = pair[-1] if pair else None
        p = -1 if prev is None or prev == n else int(at[row[prev]])
        x = -1 if nxt is None or nxt == n else int(at[row[nxt]])
        return p, x

    sides = [other(u, n) for u, n in pairs]
    own_at = np.array([at[row[u]] for u, _ in pairs], dtype=np.int64)
    prev = np.array([s[0] for s in sides], dtype=np.int64)
    nxt = np.array([s[1] for s in sides], dtype=np.int64)
    ok = own_at >= 0
    gains = np.zeros(len(pairs))
    if ok.any():
        gains[ok] = window_gains(q.req.vector, vectors, own_at[ok], prev[ok], nxt[ok])
    return {
        pair: own[pair[0]] + q.dense_weight * float(g)
        for pair, g in zip(pairs, gains.tolist(), strict=True)
    }


CHUNK_WINDOW: list[Callable[..., Any]] = []


def install() -> None:
    """Patch ``bench_natural`` (one row, the active row's key) and
    ``HierarchicalRetriever._chunk_window`` (the no-pass rule for that row only)."""
    if CHUNK_WINDOW:
        return
    bn.add_screen_rows(
        bn.Row(NOPASS, "find, a lifted chunk never passes its lifter", "find"),
        bn.Row(CARRY, "find, ... unless it passes it without it", "find"),
    )
    CHUNK_WINDOW.append(hr.HierarchicalRetriever._chunk_window)

    async def patched_chunk_window(self: hr.HierarchicalRetriever, q: Any, state: Any) -> None:
        if bn.ACTIVE_ROW[0] not in (NOPASS, CARRY):
            await CHUNK_WINDOW[0](self, q, state)
            return
        await nopass_window(self, q, state)

    hr.HierarchicalRetriever._chunk_window = patched_chunk_window  # type: ignore[method-assign]


def paired(rows: Sequence[Mapping[str, Any]], row: str, base: str = "find") -> dict[str, Any]:
    """Per metric, ``row`` minus ``base`` per question over every (set, half) both hold:
    the mean and 95 % interval (``bench_natural.mean_interval``), the questions ahead and
    behind, and ``n``."""
    by = {(r["dataset"], r["half"], r["row"]): r for r in rows}
    out: dict[str, Any] = {}
    for metric in METRICS:
        d: list[float] = []
        for (ds, half, key), r in by.items():
            b = by.get((ds, half, base))
            if key != row or b is None:
                continue
            mine = r.get("per_question", {}).get(metric, {})
            theirs = b.get("per_question", {}).get(metric, {})
            d.extend(mine[k] - theirs[k] for k in sorted(mine) if k in theirs)
        if d:
            arr = np.asarray(d, dtype=np.float64)
            mean, lo, hi = bn.mean_interval(arr)
            out[metric] = {
                "mean": mean,
                "lo": lo,
                "hi": hi,
                "ahead": int((arr > 0).sum()),
                "behind": int((arr < 0).sum()),
                "n": len(d),
            }
    return out


def print_diff(files: Sequence[Path]) -> None:
    """``--diff``: per file, then pooled over the files, each screened row minus ``find``."""
    pools: list[tuple[str, list[Mapping[str, Any]]]] = []
    for f in files:
        pools.append((f.name, json.loads(f.read_text())["rows"]))
    if len(pools) > 1:
        pools.append(("all files", [r for _, rows in pools for r in rows]))
    for name, rows in pools:
        for key in (NOPASS, CARRY):
            got = paired(rows, key)
            if not got:
                continue
            parts = [
                f"{m} {v['mean']:+.4f} ({v['lo']:+.4f}..{v['hi']:+.4f}) {v['ahead']}/{v['behind']}"
                for m, v in got.items()
            ]
            n = next(iter(got.values()))["n"]
            print(f"- {name}, {key} (n {n}): " + "; ".join(parts))


def main(argv: Sequence[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "--diff":
        print_diff([Path(a) for a in args[1:]])
        return
    install()
    bn.main(args)


if __name__ == "__main__":
    main()
