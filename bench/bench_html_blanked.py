"""An FAQ ingested as the user has it, HTML, with its question headings *blanked*.

Issue 33, item 6 (chunks end at answer boundaries). Every natural-question set here writes
its corpus as Markdown with each question's heading *line deleted*, so the bench never
ingests the HTML a user has; a set built by removing the question *text* from the HTML
leaves the element: ``<h3><a class="headerlink">¶</a></h3>`` in a Sphinx page, an empty
``<section>`` without a heading once the heading is dropped. This script builds that
variant of the Sphinx-built FAQ sets (borg-faq: one page; django-faq: eight pages): the
same questions and answers, the same linked pages (Markdown, as the set has them), each
FAQ page as its HTML with every question heading's text removed (its permalink kept) and
every other occurrence of a question's text removed, then runs ``bench_natural``'s rows on
it. Run it with two checkouts to compare converters:

    PYTHONPATH=<checkout>/retrieval:<checkout>/integrations python bench/bench_html_blanked.py \
        --sets borg-faq,django-faq --rows find,flat-hybrid --json OUT.json
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import html  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_natural as bn  # noqa: E402
import datasets as ds  # noqa: E402
import natural_sets as ns  # noqa: E402

_HEADING = re.compile(r"<(h[1-6])\b([^>]*)>(.*?)</\1>", re.S)
_PERMALINK = re.compile(r'<a\b[^>]*class="headerlink"[^>]*>.*?</a>', re.S)
_TAG = re.compile(r"<[^>]*>")


def _norm(text: str) -> str:
    return " ".join(html.unescape(_TAG.sub("", text)).replace("¶", "").split())


def blank_questions(page: str, questions: Sequence[str]) -> tuple[str, int]:
    """``page`` with the text of every heading that is one of ``questions`` removed (its
    permalink kept), then every other occurrence of a question's text removed; and how many
    headings were blanked."""
    wanted = {_norm(q) for q in questions}
    blanked = 0

    def sub(m: re.Match[str]) -> str:
        nonlocal blanked
        tag, attrs, inner = m.group(1), m.group(2), m.group(3)
        if _norm(inner) not in wanted:
            return m.group(0)
        blanked += 1
        return f"<{tag}{attrs}>{''.join(_PERMALINK.findall(inner))}</{tag}>"

    page = _HEADING.sub(sub, page)
    for q in sorted(questions, key=len, reverse=True):
        for spelling in {q, html.escape(q, quote=False), html.escape(q)}:
            page = page.replace(spelling, "")
    return page, blanked


def _faq_pages(name: str) -> tuple[Path, list[str]]:
    """The set's HTML folder and its FAQ pages' relative paths (Markdown names)."""
    if name == "borg-faq":
        return ds.fetch_debian_package(ns.BORG_PACKAGE) / ns.BORG_HTML, [ns.BORG_FAQ]
    if name == "django-faq":
        html_dir = ds.debian_html_dir(ds.DJANGO_PACKAGE, "TREEHOP_DJANGO_DOCS")
        faq = sorted((html_dir / ns.DJANGO_FAQ_DIR).glob("*.html"))
        return html_dir, [
            f"{ns.DJANGO_FAQ_DIR}/{p.stem}.md" for p in faq if p.stem not in ("index",)
        ]
    raise SystemExit(f"no HTML variant for {name!r} (borg-faq, django-faq)")


def html_variant(nset: ns.NaturalSet) -> ns.NaturalSet:
    """``nset`` with its FAQ pages as blanked HTML (see the module docstring)."""
    html_dir, pages = _faq_pages(nset.name)
    files = dict(nset.files)
    texts = [q.text for q in nset.questions]
    total = 0
    for rel in pages:
        if rel not in files:
            continue
        raw = (html_dir / rel).with_suffix(".html").read_text(encoding="utf-8")
        page, n = blank_questions(raw, texts)
        total += n
        del files[rel]
        files[rel[: -len(".md")] + ".html"] = page
    name = f"{nset.name}-html"
    return ns.NaturalSet(
        name,
        ns.write_tree(files, ds.CACHE_DIR / "natural" / name),
        nset.questions,
        f"{nset.note} [variant: the FAQ pages as HTML, {total} of {len(texts)} question "
        "headings blanked in place]",
        files,
    )


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--sets", default="borg-faq,django-faq")
    ap.add_argument("--rows", default="find,flat-hybrid")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    cached = bn.bench_embedder("")
    rows = bn.parse_rows(args.rows)
    budgets = [500, 1000, 2000]
    notes: list[str] = []
    table: list[bn.TableRow] = []
    for name in args.sets.split(","):
        nset = html_variant(ns.load_natural_set(name, cached))
        table += bn.evaluate_set(nset, rows, ("dev", "test"), cached, budgets, 0, notes)
    if args.json:
        bn._write_json(args.json, table, notes)
    bn.print_report(table, budgets)
    for n in notes:
        print(f"- {n}")


if __name__ == "__main__":
    main()
