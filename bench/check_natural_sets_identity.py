"""Hash every natural set as built: did a change to ``natural_sets.py`` move any set?

A refactor of the set builders (a shared helper folded in, a converter fixed) must leave
every set it does not mean to change byte-identical, and a change must name every set it
moves. This script builds each set (from the bench cache, as ``bench_natural.py`` does) and
prints one hash per set, with the hashes of its parts beside it so that a difference says
where it is:

* ``files``: every corpus file's path and text, in path order;
* ``questions``: every question's id and text, in the set's order, and the questions left
  out (``NaturalSet.left_out``);
* ``qrels``: every question's id with its answers' texts and gains;
* ``halves``: the dev and test ids (``bench_tree.split_halves``, as the bench splits them).

The set's hash is the sha256 of those four. ``--json`` writes them, ``--compare`` reads a
file written before and exits 1 when any set's hash differs (or a set is missing):

    python bench/check_natural_sets_identity.py --json before.json
    ... change natural_sets.py ...
    python bench/check_natural_sets_identity.py --compare before.json

Sets: ``natural_sets.NATURAL_SETS`` and ``HELD_OUT_SETS`` (``--sets`` names others);
``cranfield`` needs the default embedder's vectors (its tree is a k-means of them: warm in
the bench cache, ~1 min cold).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_tree as bt
import natural_sets as ns

PARTS = ("files", "questions", "qrels", "halves")


def _digest(chunks: Iterable[str]) -> str:
    """sha256 of the chunks, each ended by a NUL (so that no two sequences hash alike)."""
    h = hashlib.sha256()
    for chunk in chunks:
        h.update(chunk.encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()


def set_hashes(nset: ns.NaturalSet) -> dict[str, str]:
    """{part: sha256} for :data:`PARTS`, and ``set``: the hash of the four."""
    parts = {
        "files": _digest(s for rel in sorted(nset.files) for s in (rel, nset.files[rel])),
        "questions": _digest(
            [s for q in nset.questions for s in (q.qid, q.text)] + ["left out", *nset.left_out]
        ),
        "qrels": _digest(
            s
            for q in nset.questions
            for s in (q.qid, str(len(q.answers)), *(f"{g!r}\0{a}" for a, g in q.answers))
        ),
    }
    dev, test = bt.split_halves([q.qid for q in nset.questions])
    parts["halves"] = _digest(["dev", *dev, "test", *test])
    parts["set"] = _digest(parts[p] for p in PARTS)
    return parts


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument(
        "--sets",
        default=",".join((*ns.NATURAL_SETS, *ns.HELD_OUT_SETS)),
        help="comma-separated set names (default: the dev and held-out natural sets)",
    )
    ap.add_argument("--json", type=Path, help="write {set: {part: hash}} to this file")
    ap.add_argument("--compare", type=Path, help="a --json file to compare against")
    args = ap.parse_args(argv)
    names = [n.strip() for n in args.sets.split(",") if n.strip()]
    embedder = None
    if "cranfield" in names:
        import datasets as ds

        embedder = ds.default_embedder()
    before: dict[str, dict[str, str]] = json.loads(args.compare.read_text()) if args.compare else {}
    result: dict[str, dict[str, str]] = {}
    differs: list[str] = []
    for name in names:
        nset = ns.load_natural_set(name, embedder)
        hashes = set_hashes(nset)
        result[name] = hashes
        line = f"{name:16s} {hashes['set'][:16]}  " + " ".join(
            f"{p}={hashes[p][:10]}" for p in PARTS
        )
        if args.compare:
            old = before.get(name)
            if old is None:
                line += "  (not in the compared file)"
                differs.append(name)
            elif old["set"] != hashes["set"]:
                moved = [p for p in PARTS if old.get(p) != hashes[p]]
                line += f"  CHANGED: {', '.join(moved)}"
                differs.append(name)
            else:
                line += "  same"
        print(f"{line}  ({len(nset.questions)} questions, {len(nset.files)} files)", flush=True)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    if args.compare:
        print(f"{len(names) - len(differs)} of {len(names)} sets identical", end="")
        print(f"; changed: {', '.join(differs)}" if differs else "")
    return 1 if differs else 0


if __name__ == "__main__":
    raise SystemExit(main())
