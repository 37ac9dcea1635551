"""Do contents lists take the answer's place? The HTML sets' pages *as shipped*, questions in.

Not a natural-question set: every question is still in the corpus (as a heading, and quoted
in the site's tables of contents), which is what a user who indexes the package's pages has.
What it measures is one thing the natural-question variants cannot show, because they blank
every quoted question: whether a page's or a site's table of contents (lines that are all
links into pages of the site, :func:`treehop.ingest.markup.contents_link`) comes back in
``find()``'s slots in place of the answer. Each set is indexed twice, with
``markup.SITE_CONTENTS_LINKS`` off (only ``#x`` links count as contents, the converter before
stop 49) and on, and for each question it counts:

- ``answer@1`` / ``answer@3``: the question's answer (the same judge as ``bench_natural.py``)
  in the first / first three slots;
- ``toc@3`` / ``toc@10``: slots among the first 3 / 10 whose text quotes three or more of the
  set's questions verbatim (a contents list: an FAQ answer quotes at most one or two).

    python bench/bench_pages_as_shipped.py                        # every set with HTML pages
    python bench/bench_pages_as_shipped.py --sets getmail-faq,django-faq --linked-html
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_html_blanked as bh
import bench_natural as bn
import natural_sets as ns
from treehop.ingest import markup

HTML_SETS = (
    "django-faq",
    "borg-faq",
    "sqlalchemy-faq",
    "privoxy-faq",
    "nano-faq",
    "fetchmail-faq",
    "ffmpeg-faq",
    "doxygen-faq",
    "gitfaq",
    "getmail-faq",
)
QUOTES_FOR_CONTENTS = 3
"""A slot quoting this many of the set's questions verbatim is a contents list."""
MIN_QUOTED_CHARS = 16
"""Questions shorter than this ("Why?") are not looked for: they occur in any text."""


def quoted_questions(text: str, questions: Sequence[str]) -> int:
    """How many of ``questions`` (lower-cased, each at least :data:`MIN_QUOTED_CHARS` long)
    ``text`` holds verbatim, case aside."""
    low = " ".join(text.lower().split())
    return sum(1 for q in questions if len(q) >= MIN_QUOTED_CHARS and q in low)


def measure(nset: ns.NaturalSet, cached: Any, site_links: bool) -> dict[str, float]:
    """Index ``nset`` with ``SITE_CONTENTS_LINKS = site_links`` and ask every question."""
    saved = markup.SITE_CONTENTS_LINKS
    markup.SITE_CONTENTS_LINKS = site_links
    try:
        asked = [" ".join(q.text.lower().split()) for q in nset.questions]
        judge = bn.Judge()
        got = {"answer@1": 0.0, "answer@3": 0.0, "toc@3": 0.0, "toc@10": 0.0}
        with bn.indexed_set(nset, cached) as ix:
            ix.embedder.prepare([q.text for q in nset.questions])
            for q in nset.questions:
                res = ix.th.find(q.text, target_uri=ix.scope, limit=10)
                slots = [bn.delivered(m) for m in res.contexts()]
                answers = [a for a, _ in q.answers]
                found = [bool(judge.units(s, answers)) for s in slots]
                toc = [quoted_questions(s, asked) >= QUOTES_FOR_CONTENTS for s in slots]
                got["answer@1"] += any(found[:1])
                got["answer@3"] += any(found[:3])
                got["toc@3"] += sum(toc[:3])
                got["toc@10"] += sum(toc[:10])
            chunks = ix.chunks
        n = max(1, len(nset.questions))
        out = {k: v / n if k.startswith("answer") else v for k, v in got.items()}
        out["chunks"] = float(chunks)
        out["n"] = float(len(nset.questions))
        return out
    finally:
        markup.SITE_CONTENTS_LINKS = saved


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--sets", default=",".join(HTML_SETS))
    ap.add_argument(
        "--linked-html",
        action="store_true",
        help="borg-faq, django-faq, sqlalchemy-faq: their linked pages as HTML too",
    )
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    cached = bn.bench_embedder("")
    rows: list[dict[str, Any]] = []
    print(
        "| set | questions | SITE_CONTENTS_LINKS | chunks | answer@1 | answer@3 | toc@3 | toc@10 |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name in args.sets.split(","):
        base = ns.load_natural_set(name, cached)
        nset = bh.html_variant(base, linked_html=args.linked_html, blank=False)
        for flag in (False, True):
            got = measure(nset, cached, flag)
            rows.append({"set": nset.name, "site_contents_links": flag, **got})
            print(
                f"| {nset.name} | {int(got['n'])} | {'on' if flag else 'off'} | "
                f"{int(got['chunks'])} | {got['answer@1']:.3f} | {got['answer@3']:.3f} | "
                f"{int(got['toc@3'])} | {int(got['toc@10'])} |",
                flush=True,
            )
        if args.json:
            args.json.write_text(json.dumps({"rows": rows, "argv": sys.argv[1:]}, indent=1) + "\n")


if __name__ == "__main__":
    main()
