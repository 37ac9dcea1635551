"""Default identity of ``find()``'s rows between two ``bench_natural.py`` result files: every
row field but ``p50_ms`` (a time) and every per-question value of each ``find`` row in
``BASE``, looked up by (set, half) in ``HEAD``. The check a screen runs to show that an option
shipped off leaves the default as it was (helpers quality81, quality82), and the lead's
identity of a stop's merged code against its base.

    python bench/find_row_identity.py BASE.json HEAD.json [--row find]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def rows(path: Path, row: str = "find") -> list[dict[str, Any]]:
    """The rows named ``row`` of a ``bench_natural.py --json`` file."""
    return [r for r in json.loads(path.read_text())["rows"] if r["row"] == row]


def compare(base_path: Path, head_path: Path, row: str = "find") -> str:
    """One line: rows, fields and per-question values compared, and which differ."""
    base = rows(base_path, row)
    head = {(r["dataset"], r["half"]): r for r in rows(head_path, row)}
    n_fields = n_values = 0
    diff: list[tuple[str, ...]] = []
    for r in base:
        o = head.get((r["dataset"], r["half"]))
        if o is None:
            diff.append((r["dataset"], r["half"], "missing"))
            continue
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
    return (
        f"{len(base)} rows; {n_fields} row fields, {n_values} per-question values compared; "
        f"differ: {len(diff)} {diff[:10]}"
    )


def main(defaults: tuple[str, str] | None = None) -> None:
    """The command line; ``defaults`` are a screen's committed files under ``bench/data``."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", type=Path, help="BASE.json HEAD.json")
    ap.add_argument("--row", default="find")
    a = ap.parse_args()
    files = a.files or [Path(__file__).resolve().parent / "data" / f for f in defaults or ()]
    if len(files) != 2:
        ap.error("two result files: BASE.json HEAD.json")
    print(compare(files[0], files[1], a.row))


if __name__ == "__main__":
    main()
