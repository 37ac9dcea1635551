"""Would a dense-lead guard help? A screen of "a lexical match must not override a large
dense lead on a natural question" (issue 33, item 4) against ``find()`` as it ranks today.

For every question-shaped query of the chosen natural sets' half it records the flat dense
leader (the leaf with the highest cosine over the same leaves ``find()`` ranks), whether it
is an answer, its cosine lead over ``find()``'s first slot's own cosine, and the rank of
``find()``'s first answer. A guard that puts the dense leader first whenever its lead is at
least ``m`` *gains* a question where the dense leader is an answer and ``find()``'s first
slot is not, and *loses* one where ``find()``'s first slot is an answer and the dense
leader is not. The table prints both counts per margin; no ``find()`` code changes.

    python bench/bench_dense_lead_screen.py --sets django-faq,gitfaq,... [--html] [--test]
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
from dataclasses import asdict, dataclass  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_html_blanked as hb  # noqa: E402
import bench_natural as bn  # noqa: E402
import bench_tree as bt  # noqa: E402
import natural_sets as ns  # noqa: E402
from treehop.query_shape import is_question  # noqa: E402

MARGINS = (0.0, 0.02, 0.04, 0.06, 0.08, 0.10, 0.12, 0.15)


@dataclass
class Row:
    dataset: str
    qid: str
    lead: float
    """The dense leader's cosine minus ``find()``'s first slot's own cosine."""
    leader_answers: bool
    leader_first: bool
    """``find()``'s first slot already shows the dense leader."""
    find_rank: int | None


def screen(name: str, html: bool, test: bool, embedder: object) -> list[Row]:
    base = ns.load_natural_set(name, embedder)
    nset = hb.html_variant(base) if html else base
    dev, held = bt.sampled_halves(base.questions, None)
    queries = [q for q in (held if test else dev) if is_question(q.text)]
    rows: list[Row] = []
    with bn.indexed_set(nset, embedder) as ix:
        ix.embedder.prepare([q.text for q in queries])
        for q in queries:
            answers = [a for a, _ in q.answers]
            scores = ix.flat.matrix @ ix.embedder.queries[q.text]
            best = int(np.argmax(scores))
            leader = ix.flat.texts[best]
            found = list(ix.th.find(q.text, target_uri=ix.scope, limit=10).contexts())
            shown = [bn.delivered(m) for m in found]
            rank = next(
                (i for i, t in enumerate(shown) if any(bn.judge(t, a) for a in answers)), None
            )
            first_cos = found[0].vector_score if found else None
            rows.append(
                Row(
                    name,
                    q.qid,
                    float(scores[best]) - (first_cos if first_cos is not None else 0.0),
                    any(bn.judge(leader, a) for a in answers),
                    bool(shown) and leader.strip()[:200] in shown[0],
                    rank,
                )
            )
    return rows


def table(rows: list[Row]) -> list[str]:
    out = ["| lead >= | affected | gain | loss |", "|---|---|---|---|"]
    for m in MARGINS:
        hit = [r for r in rows if r.lead >= m and not r.leader_first]
        gain = sum(1 for r in hit if r.leader_answers and r.find_rank != 0)
        loss = sum(1 for r in hit if not r.leader_answers and r.find_rank == 0)
        out.append(f"| {m:.2f} | {len(hit)} | {gain} | {loss} |")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--sets", required=True, help="comma-separated natural set names")
    ap.add_argument("--html", action="store_true", help="the blanked-HTML variants")
    ap.add_argument("--test", action="store_true", help="the test half (default: dev)")
    ap.add_argument("--json", type=Path, help="write every question's row here")
    args = ap.parse_args()
    embedder = bn.bench_embedder("")
    rows: list[Row] = []
    for name in args.sets.split(","):
        rows += screen(name, args.html, args.test, embedder)
    print(f"{len(rows)} question-shaped queries")
    print("\n".join(table(rows)))
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in rows], indent=1))


if __name__ == "__main__":
    main()
