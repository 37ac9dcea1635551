"""Numbered FAQs whose question *text* was taken out in place, the number left standing.

    python bench/bench_labels_kept.py --sets lsof-faq,vim-faq --rows find,flat-dense,flat-hybrid

Every labelled natural set here deletes a question's whole line (label and text). A corpus
whose questions were removed in place keeps the label: ``17.18.3`` (lsof's FAQ), ``25.11.``
(the Vim FAQ) on a line of its own where the question stood, ``Q:`` over ``A: <answer>``
(GNU Screen's FAQ). This builds that variant of the three labelled plain-text sets
(``natural_sets.KEEP_LABELS``; the same questions, answers, halves and judge, the set named
``<set>-labels`` and written beside the original) and runs ``bench_natural``'s rows on both
halves: does the chunker read a label alone as the start of an entry
(``treehop.ingest.chunking._LABEL``)?
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import dataclasses  # noqa: E402
import sys  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_natural as bn  # noqa: E402
import natural_sets as ns  # noqa: E402

LABELLED_SETS = ("lsof-faq", "vim-faq", "screen-faq")
"""The sets whose splitters can keep the number (``natural_sets.KEEP_LABELS``)."""


def labels_kept(name: str, cached: object) -> ns.NaturalSet:
    """Set ``name`` built with each question's number kept where its line stood, written to
    ``natural/<name>-labels`` (the original set's files stay as they are)."""
    if name not in LABELLED_SETS:
        raise SystemExit(f"{name}: no label-keeping splitter (known: {', '.join(LABELLED_SETS)})")
    write_tree = ns.write_tree
    ns.KEEP_LABELS = True
    ns.write_tree = lambda files, out: write_tree(files, out.with_name(f"{out.name}-labels"))
    try:
        base = ns.load_natural_set(name, cached)
    finally:
        ns.KEEP_LABELS = False
        ns.write_tree = write_tree
    return dataclasses.replace(
        base,
        name=f"{name}-labels",
        note=base.note + " (each deleted question's number kept on its own line)",
    )


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--sets", default=",".join(LABELLED_SETS))
    ap.add_argument("--rows", default="find,flat-dense,flat-hybrid")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    cached = bn.bench_embedder("")
    rows = bn.parse_rows(args.rows)
    budgets = list(bn.BUDGETS)
    notes: list[str] = []
    table: list[bn.TableRow] = []
    for name in args.sets.split(","):
        nset = labels_kept(name, cached)
        table += bn.evaluate_set(nset, rows, ("dev", "test"), cached, budgets, 0, notes)
        if args.json:  # after every set: a run stopped midway keeps the sets it finished
            bn._write_json(args.json, table, notes)
    bn.print_report(table, budgets)
    for n in notes:
        print(f"- {n}")


if __name__ == "__main__":
    main()
