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
it. Also built: privoxy-faq (DocBook), nano-faq and fetchmail-faq (hand-written HTML),
ffmpeg-faq (texi2html), autotools-faq (Autoconf's manual as the one texi2any page the package
has, its FAQ chapter's section titles blanked, the reader's questions removed across line
breaks; Automake stays Markdown), doxygen-faq (Doxygen), sqlalchemy-faq (Sphinx, eight pages:
its sub-section headings that are not questions kept), getmail-faq (hand-written XHTML:
the FAQ and the package's three other pages, each with the contents list that quotes every
question), and gitfaq (asciidoc: its
questions are the ``<dt class="hdlist1">`` terms of labelled lists, emptied in place, or
removed with ``--source html-gone``; the pages gitfaq links to are their git-doc HTML too).
Run it with two checkouts to compare converters:

    PYTHONPATH=<checkout>/retrieval:<checkout>/integrations python bench/bench_html_blanked.py \
        --sets borg-faq,django-faq --rows find,flat-hybrid --json OUT.json
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import fnmatch  # noqa: E402
import html  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_natural as bn  # noqa: E402
import datasets as ds  # noqa: E402
import natural_sets as ns  # noqa: E402

_HEADING = re.compile(r"<(h[1-6])\b([^>]*)>(.*?)</\1\s*>", re.S | re.I)
_PERMALINK = re.compile(r'<a\b[^>]*class="headerlink"[^>]*>.*?</a>', re.S)
_ANCHOR = re.compile(r"<a\b(?![^>]*\bhref=)[^>]*\b(?:name|id)=[^>]*>", re.S | re.I)
_TAG = re.compile(r"<[^>]*>")
_NUMBER = re.compile(r"[A-Z]?\d+(?:\.\d+)*\.?\s+")
# asciidoc's labelled list term (gitfaq's questions), any <dt>
_DT = re.compile(r"<dt\b([^>]*)>(.*?)</dt\s*>", re.S | re.I)
# Autoconf's FAQ chapter's sections ("20.4 "), not their sub-sections
_AUTOCONF_FAQ = re.compile(rf"{ns.AUTOCONF_FAQ_CHAPTER}\.\d+\.?\s+")
# texi2html's permalink pair inside a heading (``<span class="pull-right"><a>#</a> <a>TOC</a>``)
_PULL_RIGHT = re.compile(r'<span class="pull-right">.*?</span>', re.S)
# a link element (its text: a question quoted by a contents box or a sidebar)
_LINK = re.compile(r"<a\b([^>]*)>(.*?)</a\s*>", re.S | re.I)


def _norm(text: str) -> str:
    return " ".join(html.unescape(_TAG.sub("", text)).replace("¶", "").split())


def blank_questions(
    page: str,
    questions: Sequence[str],
    whole: bool = False,
    loose: bool = False,
    numbered: re.Pattern[str] | None = None,
    links: bool = False,
) -> tuple[str, int]:
    """``page`` with the text of every heading that is one of ``questions`` removed (its
    permalink kept; ``whole``: the heading element removed, what a builder who deletes the
    question's element leaves), then every other occurrence of a question's text removed
    (``loose``: across line breaks too); and how many headings were blanked. ``numbered``:
    a heading whose section number matches it is a question's too (autotools-faq: the FAQ
    chapter's sections, whose titles are topics where the reader's question opens the
    text). ``links``: a link whose text is a question (markup and spacing aside) is emptied
    too, its element kept, a section number before it ("2.3 ", "I1. ") and letter case
    aside: the contents box, the sidebar and the "On this page" list quote every question
    with its inline ``<code>`` (sqlalchemy-faq, Django, ffmpeg's texi2html contents), which
    the verbatim removal below does not match, and fetchmail's contents spell a question in
    another case ("Compuserve" / "CompuServe")."""
    wanted = {_norm(q) for q in questions}
    blanked = 0

    def sub(m: re.Match[str]) -> str:
        nonlocal blanked
        tag, attrs, inner = m.group(1), m.group(2), m.group(3)
        text = _norm(_PULL_RIGHT.sub("", inner))
        number = _NUMBER.match(text)
        topic = number is not None and numbered is not None and numbered.fullmatch(number.group(0))
        if (
            text not in wanted
            and (number is None or text[number.end() :] not in wanted)
            and not topic
        ):
            return m.group(0)
        blanked += 1
        if whole:
            return ""
        kept = [a + "</a>" for a in _ANCHOR.findall(inner)] + _PERMALINK.findall(inner)
        kept += _PULL_RIGHT.findall(inner)
        lead = number.group(0).strip() if number is not None and text not in wanted else ""
        return f"<{tag}{attrs}>{''.join(kept)}{lead}</{tag}>"

    page = _HEADING.sub(sub, page)
    squeezed = {"".join(q.split()) for q in wanted}

    def sub_dt(m: re.Match[str]) -> str:  # a definition list's term that is a question
        nonlocal blanked
        if "".join(_norm(m.group(2)).split()) not in squeezed:
            return m.group(0)
        blanked += 1
        return "" if whole else f"<dt{m.group(1)}></dt>"

    page = _DT.sub(sub_dt, page)
    if links:
        folded = {q.casefold() for q in wanted}

        def sub_link(m: re.Match[str]) -> str:  # a contents entry: "2.3 How do I ...?"
            text = _norm(m.group(2))
            number = _NUMBER.match(text)
            bare = text[number.end() :] if number is not None else text
            if text.casefold() in folded or bare.casefold() in folded:
                return f"<a{m.group(1)}></a>"
            return m.group(0)

        page = _LINK.sub(sub_link, page)
    for q in sorted(questions, key=len, reverse=True):
        for spelling in {q, html.escape(q, quote=False), html.escape(q)}:
            page = page.replace(spelling, "")
            if loose and len(q.split()) >= 4:  # (a question quoted across line breaks)
                words = map(re.escape, spelling.split())
                page = re.sub(r"\s+".join(words), "", page)
    return page, blanked


def _doc_pages(name: str) -> dict[str, Path]:
    """The set's Markdown files that the package has as HTML pages (privoxy-faq: the FAQ and
    the user manual; nano-faq: the FAQ page) -> their HTML."""
    if name == "privoxy-faq":
        doc = ds.fetch_debian_package(ns.PRIVOXY_PACKAGE) / ns.PRIVOXY_DOC
        dirs = (ns.PRIVOXY_FAQ_DIR, ns.PRIVOXY_MANUAL_DIR)
        return {f"{d}/{p.stem}.md": p for d in dirs for p in sorted((doc / d).glob("*.html"))}
    if name == "nano-faq":
        doc = ds.fetch_debian_package(ns.NANO_PACKAGE) / ns.NANO_DOC
        return {"faq.md": doc / ns.NANO_FAQ}
    if name == "ffmpeg-faq":
        manual = ds.fetch_debian_package(ns.FFMPEG_PACKAGE) / ns.FFMPEG_MANUAL
        return {p.stem + ".md": p for p in sorted(manual.glob("*.html"))}
    if name == "fetchmail-faq":
        doc = ds.fetch_debian_package(ns.FETCHMAIL_PACKAGE) / ns.FETCHMAIL_DOC
        pages = {n.removesuffix(".html") + ".md": doc / n for n in ns.FETCHMAIL_PAGES}
        # the set splits the one FAQ page into its <h1> sections as files: all of them are
        # the one HTML page the user has
        pages.update({f"{i:02d}-*.md": doc / ns.FETCHMAIL_FAQ for i in range(100)})
        return pages
    if name == "autotools-faq":
        # Autoconf's manual as the one texi2any page the package has (the set splits it into
        # chapter files); Automake's stays the set's Markdown (Info in the package)
        page = ds.fetch_debian_package(ns.AUTOCONF_PACKAGE) / ns.AUTOCONF_DOC / ns.AUTOCONF_MANUAL
        return {"autoconf/*.md": page}
    if name == "doxygen-faq":
        doc = ds.fetch_debian_package(ns.DOXYGEN_PACKAGE) / ns.DOXYGEN_DOC
        return {f"{stem}.md": doc / f"{stem}.html" for stem in ("faq", *ns.DOXYGEN_LINKED)}
    if name == "getmail-faq":
        # the FAQ and the package's three other hand-written pages, each one page as shipped
        doc = ds.fetch_debian_package(ns.GETMAIL_PACKAGE) / ns.GETMAIL_DOC
        names = (ns.GETMAIL_FAQ, *ns.GETMAIL_PAGES)
        return {n.removesuffix(".html") + ".md": doc / n for n in names}
    if name == "gitfaq":
        html_dir = ds.gitdoc_html_dir()
        return {md: html_dir / h for h, md in ds.gitdoc_layout(html_dir).items()}
    html_dir, faq = _faq_pages(name)
    return {rel: (html_dir / rel).with_suffix(".html") for rel in faq}


def _read(path: Path) -> str:
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


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
    if name == "sqlalchemy-faq":
        html_dir = ds.fetch_debian_package(ns.SQLALCHEMY_PACKAGE) / ns.SQLALCHEMY_HTML
        faq = sorted((html_dir / ns.SQLALCHEMY_FAQ_DIR).glob("*.html"))
        return html_dir, [f"{ns.SQLALCHEMY_FAQ_DIR}/{p.stem}.md" for p in faq if p.stem != "index"]
    raise SystemExit(
        f"no HTML variant for {name!r} (borg-faq, django-faq, sqlalchemy-faq, privoxy-faq, "
        "nano-faq, ffmpeg-faq, fetchmail-faq, gitfaq, doxygen-faq, getmail-faq)"
    )


def _linked_pages(nset: ns.NaturalSet) -> dict[str, Path]:
    """The Sphinx sets' other pages (borg-faq, django-faq, sqlalchemy-faq: the pages the FAQ
    links to) -> their HTML in the package, where it has one: what the user has beside the
    FAQ (API references as ``<dl class="py ...">`` entries, tables, code)."""
    if nset.name not in ("borg-faq", "django-faq", "sqlalchemy-faq"):
        return {}
    html_dir, _ = _faq_pages(nset.name)
    out: dict[str, Path] = {}
    for rel in nset.files:
        path = (html_dir / rel).with_suffix(".html")
        if rel.endswith(".md") and path.is_file():
            out[rel] = path
    return out


def html_variant(
    nset: ns.NaturalSet, whole: bool = False, linked_html: bool = False, blank: bool = True
) -> ns.NaturalSet:
    """``nset`` with its FAQ pages as blanked HTML (see the module docstring);
    ``linked_html``: the Sphinx sets' linked pages as their HTML too
    (:func:`_linked_pages`); ``blank=False``: the pages as shipped, every question still in
    them (``bench_pages_as_shipped.py``: not a natural-question set, a check of what the
    converter makes of the pages a user has)."""
    files = dict(nset.files)
    texts = [q.text for q in nset.questions] + list(nset.left_out)
    total = 0
    done: set[Path] = set()
    pages = _doc_pages(nset.name)
    if linked_html:
        pages = {**_linked_pages(nset), **pages}
    for pattern, path in pages.items():
        rels = [r for r in files if fnmatch.fnmatchcase(r, pattern)]
        if not rels:
            continue
        for rel in rels:
            del files[rel]
        if path in done:
            continue
        done.add(path)
        autotools = nset.name == "autotools-faq"
        quoted = True  # (pages quote questions with markup and across line breaks)
        page, n = (
            blank_questions(
                _read(path),
                texts,
                whole,
                autotools or quoted,
                _AUTOCONF_FAQ if autotools else None,
                quoted,
            )
            if blank
            else (_read(path), 0)
        )
        total += n
        target = rels[0][: -len(".md")] + ".html" if "*" not in pattern else path.name
        files[target] = page
    name = (
        f"{nset.name}-html"
        + ("-gone" if whole else "")
        + ("-all" if linked_html else "")
        + ("" if blank else "-shipped")
    )
    return ns.NaturalSet(
        name,
        ns.write_tree(files, ds.CACHE_DIR / "natural" / name),
        nset.questions,
        f"{nset.note} [variant: the FAQ pages as HTML, "
        + (
            f"{total} of {len(texts)} question headings blanked in place"
            if blank
            else "as shipped, every question in them"
        )
        + (" (elements removed)" if whole else "")
        + ("; the linked pages as HTML too" if linked_html else "")
        + "]",
        files,
    )


_RST_MARKUP = re.compile(r"``|\*\*|\*|`|:[a-z]+:")
_ADORNMENT = re.compile(r"([-=~^#*+_\"'`.:])\1{2,}\s*")


def _rst_norm(text: str) -> str:
    return " ".join(_RST_MARKUP.sub("", text).split())


def delete_rst_titles(
    source: str, questions: Sequence[str], keep_underline: bool
) -> tuple[str, int]:
    """reST ``source`` with every section title that is one of ``questions`` deleted: its
    text line only (``keep_underline``: the adornment stays, as a script that deletes the
    question's text leaves it) or with its adornment lines; then every other occurrence of
    a question's text removed; and how many titles were deleted."""
    wanted = {_rst_norm(q) for q in questions}
    lines = source.split("\n")
    out: list[str] = []
    deleted = 0
    i = 0
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if line.strip() and _ADORNMENT.fullmatch(nxt) and _rst_norm(line) in wanted:
            deleted += 1
            if out and _ADORNMENT.fullmatch(out[-1]) and not keep_underline:
                out.pop()  # (an overline)
            if keep_underline:
                out.append(nxt)
            i += 2
            continue
        out.append(line)
        i += 1
    text = "\n".join(out)
    for q in sorted(questions, key=len, reverse=True):
        text = text.replace(q, "")
    return text, deleted


def rst_variant(nset: ns.NaturalSet, keep_underline: bool) -> ns.NaturalSet:
    """borg-faq with its FAQ page as the reST source the package ships
    (``_sources/faq.rst.txt``), question titles deleted (:func:`delete_rst_titles`)."""
    if nset.name != "borg-faq":
        raise SystemExit("the reST variant is built for borg-faq only")
    html_dir, _ = _faq_pages(nset.name)
    raw = (html_dir / "_sources" / "faq.rst.txt").read_text(encoding="utf-8")
    page, n = delete_rst_titles(raw, [q.text for q in nset.questions], keep_underline)
    files = dict(nset.files)
    del files[ns.BORG_FAQ]
    files["faq.rst"] = page
    style = "underline" if keep_underline else "gone"
    name = f"{nset.name}-rst-{style}"
    return ns.NaturalSet(
        name,
        ns.write_tree(files, ds.CACHE_DIR / "natural" / name),
        nset.questions,
        f"{nset.note} [variant: the FAQ page as its reST source, {n} of "
        f"{len(nset.questions)} question titles deleted, adornment {style}]",
        files,
    )


def _langchain_on_text(convert: str) -> None:
    """Make the LangChain row split text, not raw HTML: ``bs4`` is what ``BSHTMLLoader``
    gives a LangChain user (``BeautifulSoup(page).get_text("\\n")``), ``treehop`` is treehop's
    own converter (``html_to_markdown``); ``raw`` leaves the row splitting the HTML source."""
    if convert == "raw":
        return
    base = bn.LangChainRow

    def text(page: str) -> str:
        if convert == "bs4":
            from bs4 import BeautifulSoup

            return BeautifulSoup(page, "html.parser").get_text("\n")
        from treehop.ingest.markup import html_to_markdown

        return html_to_markdown(page)[0]

    class OnText(base):  # type: ignore[misc,valid-type]
        def __init__(self, files: dict[str, str], embedder: object) -> None:
            super().__init__(
                {r: text(t) if r.endswith(".html") else t for r, t in files.items()}, embedder
            )

    bn.LangChainRow = OnText


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--sets", default="borg-faq,django-faq")
    ap.add_argument("--rows", default="find,flat-hybrid")
    ap.add_argument("--json", type=Path)
    ap.add_argument(
        "--ranks", type=Path, help="write each question's first-answer rank per row to this JSON"
    )
    ap.add_argument(
        "--source",
        choices=("html", "html-gone", "html-shipped", "rst-underline", "rst-gone"),
        default="html",
        help="the FAQ page as blanked HTML (html-gone: the question heading elements removed; "
        "html-shipped: the pages as shipped, every question still in them: not a "
        "natural-question set, the case of a user who asks an FAQ's own question), "
        "or (borg-faq) as reST with the question titles "
        "deleted, their adornment kept or gone",
    )
    ap.add_argument(
        "--linked-html",
        action="store_true",
        help="borg-faq, django-faq: the linked pages as their HTML too (set name: *-all)",
    )
    ap.add_argument(
        "--langchain-input",
        choices=("raw", "bs4", "treehop"),
        default="raw",
        help="what the LangChain row splits: the HTML source, BSHTMLLoader-like text, or "
        "treehop's html_to_markdown",
    )
    args = ap.parse_args(argv)
    _langchain_on_text(args.langchain_input)
    cached = bn.bench_embedder("")
    rows = bn.parse_rows(args.rows)
    budgets = [500, 1000, 2000]
    notes: list[str] = []
    table: list[bn.TableRow] = []
    ranks: list[dict[str, object]] | None = [] if args.ranks else None
    for name in args.sets.split(","):
        base = ns.load_natural_set(name, cached)
        if args.source == "html-shipped":
            nset = html_variant(base, linked_html=args.linked_html, blank=False)
        elif args.source in ("html", "html-gone"):
            nset = html_variant(base, args.source == "html-gone", args.linked_html)
        else:
            nset = rst_variant(base, keep_underline=args.source == "rst-underline")
        table += bn.evaluate_set(nset, rows, ("dev", "test"), cached, budgets, 0, notes, ranks)
        if args.json:  # after every set: a run stopped midway keeps the sets it finished
            bn._write_json(args.json, table, notes)
    bn.print_report(table, budgets)
    for n in notes:
        print(f"- {n}")
    if args.ranks and ranks is not None:
        args.ranks.write_text(json.dumps(ranks, indent=0) + "\n")


if __name__ == "__main__":
    main()
