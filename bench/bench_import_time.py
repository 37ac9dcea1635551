"""Import time of treehop and its framework packages, in fresh processes (helper leftovers75).

Each statement runs in a new ``python -X importtime -c ...`` process, ``--repeat`` times, the
trees given by ``--tree`` taking turns (so a load change on a shared machine hits both
alike). Reported per tree and statement: the median wall time of the process, the median
cumulative import time of the statement's top module (``-X importtime``'s ``cumulative``),
which of the HTTP stack's modules (httpx, httpcore, trio, rich) the import loaded and how
many modules it left in ``sys.modules`` (the numbers a loaded machine does not move).

    python bench/bench_import_time.py --tree base=/tmp/base --tree branch=. --repeat 5

A ``--tree NAME=DIR`` runs with ``PYTHONPATH=DIR/retrieval:DIR/integrations``. Not a timed
test: the numbers depend on the machine and its load; the modules loaded do not.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

STATEMENTS = {
    "import treehop": "import treehop",
    "import langchain_treehop": "import langchain_treehop",
    "import llama_index.vector_stores.treehop": "import llama_index.vector_stores.treehop",
    # what VectorStoreIndex.from_vector_store adds on its first call: LlamaIndex's own
    # resolve_embed_model imports its LangChain bridge (whatever the embed_model given; with
    # langchain 1.x installed that import fails part-way, caught there as here)
    "+ LlamaIndex's LangChain bridge": (
        "import llama_index.vector_stores.treehop\n"
        "try:\n    import llama_index.core.bridge.langchain\n"
        "except ImportError:\n    pass"
    ),
}
HTTP_STACK = ("httpx", "httpcore", "trio", "rich")
PROBE = (
    "\nimport sys\nprint('LOADED', ','.join(m for m in {mods!r} if m in sys.modules))"
    "\nprint('MODULES', len(sys.modules))"
)


def one(tree: str, stmt: str) -> tuple[float, float, str, int]:
    """(wall seconds, cumulative import seconds of the first imported module, the HTTP
    stack's modules loaded, how many modules ``sys.modules`` holds after it)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.join(tree, "retrieval"), os.path.join(tree, "integrations")]
    )
    code = stmt + PROBE.format(mods=HTTP_STACK)
    t0 = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    wall = time.perf_counter() - t0
    top = stmt.split("\n")[0].removeprefix("import ").strip()
    cumulative = 0.0
    for line in done.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[2].strip() == top and parts[2].startswith(" " + top[:1]):
            cumulative = int(parts[1]) / 1e6
    loaded = next(
        (x.removeprefix("LOADED ") for x in done.stdout.splitlines() if x.startswith("LOADED")),
        "",
    )
    modules = next(
        (int(x.split()[1]) for x in done.stdout.splitlines() if x.startswith("MODULES")), 0
    )
    return wall, cumulative, loaded or "-", modules


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tree", action="append", required=True, help="NAME=DIR")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", help="write the rows to this file")
    args = ap.parse_args()
    trees = [t.split("=", 1) for t in args.tree]
    runs: dict[tuple[str, str], list[tuple[float, float, str, int]]] = {}
    for _ in range(args.repeat):
        for label in STATEMENTS:
            for name, tree in trees:
                runs.setdefault((name, label), []).append(one(tree, STATEMENTS[label]))
    rows = []
    print("| statement | tree | modules | wall s (median) | import s (median) | HTTP stack |")
    print("|---|---|---|---|---|---|")
    for label in STATEMENTS:
        for name, _tree in trees:
            r = runs[(name, label)]
            row = {
                "statement": label,
                "tree": name,
                "wall_s": round(statistics.median(x[0] for x in r), 2),
                "import_s": round(statistics.median(x[1] for x in r), 2),
                "loaded": r[-1][2],
                "modules": r[-1][3],
            }
            rows.append(row)
            print(
                f"| {label} | {name} | {row['modules']} | {row['wall_s']} | {row['import_s']} "
                f"| {row['loaded']} |"
            )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
