"""Keyword tagger speed alone: CPU per document of fit-and-extract at ingest, current vs the
string-term tagger it replaced, interleaved, with their tags compared.

The corpus is the ingest benchmark's tree of small files (``bench_ingest.write_tree``: Zipf
words plus folder topic words, six sentences a file), written to a temporary folder and read
back as the leaf texts ``add_resource`` tags. Each round runs, for each implementation, a
fresh tagger's ``partial_fit_extract`` over every text (what one ``add_resource`` does), then an
incremental batch of ``--changed`` edited texts (a re-add). Medians of CPU seconds over
``--rounds``; the tags of both must be identical (checked every round).

The reference is ``tests/keywords_reference.py`` (the module before integer term keys).

Run from the repository root::

    python bench/bench_tagger_speed.py --docs 20000 --rounds 3
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import keywords_reference
from bench_ingest import write_tree
from treehop.tagging import keywords


def _clear(mod: ModuleType) -> None:
    """Empty the module's memo caches, so each round starts cold like a fresh process."""
    for name in ("_KEY_CACHE", "_LABEL_CACHE", "_GAP_INFO", "_GAP_CACHE"):
        getattr(mod, name).clear()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--docs", type=int, default=20000)
    ap.add_argument("--changed", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="treehop-bench-tagger-") as tmp:
        root = Path(tmp) / "tree"
        write_tree(root, args.docs, 50, args.seed)
        texts = [p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.md"))]
    edited = [t + " changed revision text." for t in texts[: args.changed]]
    cpu: dict[str, list[tuple[float, float]]] = {"reference": [], "current": []}
    for _ in range(args.rounds):
        got: dict[str, object] = {}
        for name, mod in (("reference", keywords_reference), ("current", keywords)):
            _clear(mod)
            tagger = mod.KeywordTagger()
            c0 = time.process_time()
            first = tagger.partial_fit_extract(texts, texts)
            c1 = time.process_time()
            second = tagger.partial_fit_extract(edited, edited)
            c2 = time.process_time()
            cpu[name].append((c1 - c0, c2 - c1))
            got[name] = (first, second)
        if got["reference"] != got["current"]:
            raise SystemExit("the current tagger's tags differ from the reference's")
    print(f"{len(texts)} documents, {args.changed} edited, {args.rounds} rounds (median CPU)")
    print(f"{'tagger':<11}{'fit+extract s':>15}{'us/doc':>9}{'re-add ms':>11}")
    for name, runs in cpu.items():
        full = statistics.median(r[0] for r in runs)
        small = statistics.median(r[1] for r in runs)
        print(f"{name:<11}{full:>15.2f}{full / len(texts) * 1e6:>9.0f}{small * 1e3:>11.0f}")
    ratio = statistics.median(r[0] for r in cpu["reference"]) / statistics.median(
        r[0] for r in cpu["current"]
    )
    print(f"speed-up {ratio:.2f}x; tags identical in every round")


if __name__ == "__main__":
    main()
