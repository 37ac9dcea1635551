"""How much of the top slot's whole passage lies before its hit (issue 33, stop 66).

    python bench/ctx66_top_back.py gitfaq,django-faq,r-faq

Per dev question, the ``FindResult`` ``Treehop.assemble_context(q, max_tokens=1000)`` builds
its block from (``bench_context_diag.found_for``): the top slot's hit, the chunks of its
passage before the hit (``position`` < 0) and after it, in tokens; whether the judge finds an
answer in the whole passage, in the hit and the chunks after it, and only with the chunks
before it. What for: the screened ``whole-forward`` variant (``bench/ctx64_diag.py``) offers
the top slot whole only forwards, so its chunks before the hit are what it frees for lower
slots and what it risks."""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import sys  # noqa: E402
from collections import Counter  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_context_diag as cd  # noqa: E402
import bench_natural as bn  # noqa: E402
import bench_tree as bt  # noqa: E402
import datasets as ds  # noqa: E402
import natural_sets as ns  # noqa: E402
import treehop.context_assembly as ca  # noqa: E402


def main() -> None:
    cached = ds.default_embedder()
    counter = bn.CachedCounter(ca.default_token_counter())
    stats: Counter[str] = Counter()
    for name in sys.argv[1].split(","):
        nset = ns.load_natural_set(name, cached)
        with bn.indexed_set(nset, cached) as ix:
            judge = bn.Judge()
            for q in bt.sampled_halves(nset.questions, None)[0]:
                answers = [a for a, _ in q.answers]
                top = cd.found_for(ix.th, q.text, 1000, ix.scope, counter).contexts()[0]
                back = sorted(
                    (c for c in top.collapsed if (c.position or 0) < 0),
                    key=lambda c: c.position or 0,
                )
                fwd = sorted(
                    (c for c in top.collapsed if (c.position or 0) > 0),
                    key=lambda c: c.position or 0,
                )
                stats["questions"] += 1
                stats["with chunks before the hit"] += bool(back)
                stats["tokens before"] += sum(counter.count(c.content) for c in back)
                stats["tokens after"] += sum(counter.count(c.content) for c in fwd)
                stats["tokens hit"] += counter.count(top.content)
                ahead = "\n\n".join([top.content, *(c.content for c in fwd)])
                whole = "\n\n".join([*(c.content for c in back), ahead])
                in_whole = bool(judge.units(whole, answers))
                in_ahead = bool(judge.units(ahead, answers))
                stats["answer in the whole passage"] += in_whole
                stats["answer in hit + after"] += in_ahead
                stats["answer only with the chunks before"] += in_whole and not in_ahead
    for k, v in stats.items():
        print(f"{k}: {v}")


if __name__ == "__main__":
    main()
