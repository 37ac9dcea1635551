"""Screen (helper review75): the file and folder abstracts whose text the whole-word title
rule (:func:`treehop.ingest.summaries.opens_with`) changes, over the cached natural sets.

For every file the abstract is computed twice, with the rule and with the plain prefix test
it replaced (``str.startswith``, stop 75's rule), and every README-like page's folder
abstract likewise; the differing files are printed per set. ``.txt`` reads as reST where it
looks like reST, as ingest reads it.

    python bench/screen_opens_with.py [--root /work/benchcache/natural] [--sets a,b]
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from dump_file_abstracts import corpus_files
from treehop.ingest import summaries

DEV = "django-faq,gitfaq,lsof-faq,fetchmail-faq,zsh-faq,borg-faq,ffmpeg-faq,perlfaq"


def _both(fn: Callable[[], Any]) -> tuple[Any, Any]:
    """``fn()`` with the rule, then with the prefix test it replaced."""
    new = fn()
    rule = summaries.opens_with
    summaries.opens_with = lambda s, t: s.startswith(t)  # type: ignore[assignment]
    try:
        old = fn()
    finally:
        summaries.opens_with = rule
    return new, old


def screen(root: Path) -> tuple[int, list[tuple[str, str, str]]]:
    n, diffs = 0, []
    s = summaries.ExtractiveSummarizer()
    for path, text, kind in corpus_files(root):
        n += 1
        new, old = _both(partial(s.summarize_file, path.name, text, kind))
        if new != old:
            diffs.append((str(path.relative_to(root)), old[0], new[0]))
        if summaries.is_readme(path.name):
            new, old = _both(partial(summaries._directory_abstract, path.parent.name, [], text))
            if new != old:
                diffs.append((str(path.parent.relative_to(root)) + "/", old, new))
    return n, diffs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "--root",
        default=os.path.join(os.environ.get("TREEHOP_BENCH_CACHE", "/work/benchcache"), "natural"),
    )
    ap.add_argument("--sets", default="")
    ap.add_argument("--extra", action="append", default=[], help="another tree to screen")
    args = ap.parse_args()
    root = Path(args.root)
    names = (
        args.sets.split(",") if args.sets else sorted(p.name for p in root.iterdir() if p.is_dir())
    )
    trees = [(name, root / name) for name in names] + [(Path(e).name, Path(e)) for e in args.extra]
    total = changed = 0
    for name, tree in trees:
        n, diffs = screen(tree)
        total += n
        changed += len(diffs)
        print(f"{name}: {n} files, {len(diffs)} abstracts changed")
        for where, old, new in diffs:
            print(f"   {where}\n     was: {old[:110]!r}\n     now: {new[:110]!r}")
    print(f"all: {total} files, {changed} abstracts changed")


if __name__ == "__main__":
    main()
