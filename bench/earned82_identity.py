"""Default identity (helper quality82): the nine dev halves' ``find`` row of ``63c22bec``
(``git archive``, ``bench_natural.py --dev --rows find``) against this branch's (the
screen's, ``question_window_earned`` off): every row field but ``p50_ms`` and every
per-question value.

    python bench/earned82_identity.py [BASE.json HEAD.json]
"""

import json
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"


def rows(path: Path) -> list[dict]:
    return [r for r in json.loads(path.read_text())["rows"] if r["row"] == "find"]


args = [Path(a) for a in sys.argv[1:]] or [
    DATA / "natural_earned82_base_find_nine_dev.json",
    DATA / "natural_earned82_screen_dev.json",
]
base = rows(args[0])
head = {(r["dataset"], r["half"]): r for r in rows(args[1])}
n_fields = n_values = 0
diff: list[tuple[str, ...]] = []
for r in base:
    o = head[(r["dataset"], r["half"])]
    for k, v in r.items():
        if k == "p50_ms":
            continue
        if k == "per_question":
            for m, vals in v.items():
                for q, x in vals.items():
                    n_values += 1
                    if o[k][m].get(q) != x:
                        diff.append((r["dataset"], m, q))
        else:
            n_fields += 1
            if o.get(k) != v:
                diff.append((r["dataset"], k))
print(
    f"{len(base)} rows; {n_fields} row fields, {n_values} per-question values compared; "
    f"differ: {len(diff)} {diff[:10]}"
)
