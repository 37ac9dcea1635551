"""Default identity (helper quality81): the nine dev halves' ``find`` row of ``61de7c96``
(``git archive``, ``bench_natural.py --dev --rows find``) against this branch's (the
screen's, ``question_weight_max`` off): every row field but ``p50_ms`` and every
per-question value.

    python bench/wmax81_identity.py
"""

import json
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"


def rows(name: str) -> list[dict]:
    return [r for r in json.loads((DATA / name).read_text())["rows"] if r["row"] == "find"]


base = rows("natural_wmax81_base_find_nine_dev.json")
head = {(r["dataset"], r["half"]): r for r in rows("natural_wmax81_screen_dev.json")}
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
