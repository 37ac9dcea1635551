"""The ``datatable-faq`` natural-question set (``bench/natural_sets.py``): data.table's FAQ as
Debian's ``r-cran-data.table`` ships it (``usr/lib/R/site-library/data.table/doc/``: the FAQ
vignette ``datatable-faq.Rmd`` in R Markdown beside the other vignettes' ``.Rmd`` sources,
their tangled ``.R`` code and an ``index.html``), read by the cython-faq rule unchanged
(``split_markdown_faq`` through ``rmarkdown_to_markdown``), on a small inline package tree
of that shape (YAML front matter holding the title, a ``<style>`` block whose ``#TOC`` line is
no heading, R code chunks holding ``#`` comment lines, ``#`` group titles over ``##``
entries, pandoc ``{#id}`` attributes after some titles, entries titled by an error message,
an entry whose answer is too short to judge); offline, no embedding model, no test reads the
real package.

What the set's numbers rest on: a title carrying a pandoc attribute asks by its own words
(without ``rmarkdown_to_markdown`` it would end with "}" and stay in the corpus as a heading:
a leak); the titles ending with "?" that have their own text ask, group titles and message
titles stay; each answer is exactly the text under its title; no question is left in any
file; the tangled code and the vignette index stay out; the halves are fixed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import natural_set_checks as nsc
import natural_sets as ns
from debian_package_double import unpacked_package

VERSION = "1.14.8+dfsg-1"

Q_NUM = "Why do DT[ , 5] and DT[2, 5] return a 1-column data.table rather than vectors?"
Q_MERGE = "What is the difference between X[Y] and merge(X, Y)?"
Q_KEY = "Why is grouping by columns in the key faster than an ad hoc by?"
Q_SPLUS = "Is data.table compatible with S-plus?"
Q_LINUX = "Is it available for Linux, Mac and Windows?"
ASKED = [Q_NUM, Q_MERGE, Q_KEY, Q_SPLUS]
A_NUM = (
    "For consistency, so that you can rely on `DT[...]` returning a data.table.\n\n"
    "```{r}\n# a comment, not a heading\nDT[, 5]\n```"
)
A_MERGE = "`X[Y]` is a join, looking up `X`'s rows using `Y` as an index; see [the FAQ](#j-num)."
A_KEY = "Because each group is contiguous in RAM, so memory page fetches are minimised."
A_SPLUS = "Not currently: a few core parts of the package rely on R's C internals."
STATED = '"cannot change value of locked binding for `.SD`"'

FAQ = (
    "---\n"
    'title: "Frequently Asked Questions about data.table"\n'
    "output:\n  rmarkdown::html_vignette:\n    toc: true\n"
    "vignette: >\n  %\\VignetteIndexEntry{Frequently asked questions}\n"
    "---\n\n"
    "<style>\nh2 {\n    font-size: 20px;\n}\n#TOC { width: 100%; }\n</style>\n\n"
    "```{r, echo = FALSE}\nlibrary(data.table)\n```\n\n"
    "The first section, Beginner FAQs, is intended to be read in order.\n\n"
    "# Beginner FAQs\n\n"
    "## Why do `DT[ , 5]` and `DT[2, 5]` return a 1-column data.table rather than vectors? "
    "{#j-num}\n\n"
    f"{A_NUM}\n\n"
    f"## What is the difference between `X[Y]` and `merge(X, Y)`? {{#MergeDiff}}\n\n{A_MERGE}\n\n"
    "# Questions relating to compute time\n\n"
    f"## Why is grouping by columns in the key faster than an ad hoc `by`?\n\n{A_KEY}\n\n"
    "# Error messages\n\n"
    f"## {STATED}\n\nYou cannot assign to `.SD` by reference.\n\n"
    "# General questions about the package\n\n"
    f"## {Q_SPLUS}\n\n{A_SPLUS}\n\n"
    f"## {Q_LINUX}\n\nYes.\n"
)
INTRO = (
    '---\ntitle: "Introduction to data.table"\n---\n\n'
    f"# Data analysis using data.table\n\nPeople ask: {Q_SPLUS} The answer is elsewhere.\n\n"
    "## Subset rows in `i` {#subset-i}\n\n```{r}\nans <- flights[origin == 'JFK']\n```\n"
)
SHIPPED = {"datatable-faq.Rmd": FAQ}
FILES = {"datatable-faq.md", "datatable-intro.md", "datatable-huge.md"}


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ) -> Path:
    """The package's ``doc/`` folder as shipped: the FAQ, a vignette quoting a question, a
    vignette over the page limit, tangled code, the vignette index."""
    root = unpacked_package(tmp_path, monkeypatch, ns.DATATABLE_PACKAGE, VERSION)
    doc = root / ns.DATATABLE_DOC
    doc.mkdir(parents=True)
    (doc / "datatable-faq.Rmd").write_text(faq, encoding="utf-8")
    (doc / "datatable-faq.R").write_text("## leftout tangled code\n", encoding="utf-8")
    (doc / "datatable-intro.Rmd").write_text(INTRO, encoding="utf-8")
    (doc / "datatable-huge.Rmd").write_text("# Huge\n\n" + "Rows. " * 30_000, encoding="utf-8")
    (doc / "index.html").write_text("<p>leftout index</p>\n", encoding="utf-8")
    (root / "usr/share/doc/r-cran-data.table").mkdir(parents=True)
    (root / "usr/share/doc/r-cran-data.table/copyright").write_text("leftout\n", encoding="utf-8")
    return doc


@pytest.fixture
def doc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return _package(tmp_path, monkeypatch)


def test_datatable_faq_set_from_a_package_tree(doc: Path) -> None:
    nset = ns.datatable_faq_set()
    assert nset.name == "datatable-faq"
    # pandoc attributes off the titles; inline code marks off as a reader types them
    assert [q.text for q in nset.questions] == ASKED
    assert [q.qid for q in nset.questions] == [f"datatable-faq:{ns._slug(q)}" for q in ASKED]
    assert [q.answers[0][0] for q in nset.questions] == [A_NUM, A_MERGE, A_KEY, A_SPLUS]
    assert {q.source for q in nset.questions} == {"datatable-faq.md"}
    assert set(nset.files) == FILES - {"datatable-huge.md"}
    nsc.assert_questions_out_answers_in(nset)
    nsc.assert_files_as_written(nset)
    nsc.assert_held_out("datatable-faq")
    assert VERSION in nset.note and "over 150000 chars: datatable-huge.Rmd" in nset.note
    assert "leftout" not in " ".join(nset.files.values())  # .R code, index.html, copyright
    faq = nset.files["datatable-faq.md"]
    # front matter gone; group titles and the message-titled entry stay with their text
    assert "VignetteIndexEntry" not in faq and "#TOC { width: 100%; }" in faq
    assert "# Beginner FAQs\n\nFor consistency" in faq
    assert f"## {STATED}\n\nYou cannot assign" in faq
    assert "{#" not in faq
    # a vignette quoting a question: scrubbed, its other text and its headings kept
    intro = nset.files["datatable-intro.md"]
    assert "People ask:" in intro and "The answer is elsewhere." in intro
    assert "## Subset rows in `i`\n" in intro and Q_SPLUS not in intro
    # the short answer left out and named (its question still scrubbed)
    nsc.assert_left_out(nset, Q_LINUX, len(ASKED))


def test_no_question_text_is_left_in_any_file(doc: Path) -> None:
    nsc.assert_leak_checked(ns.datatable_faq_set(), SHIPPED, [*ASKED, Q_LINUX])


def test_datatable_faq_set_halves_are_fixed_and_disjoint(doc: Path) -> None:
    more = FAQ.replace(
        "# Error messages",
        "## Can I use `fread` on a URL?\n\nYes, give it the address and it downloads it.\n\n"
        "# Error messages",
    )
    assert more != FAQ
    nsc.assert_halves_survive_an_added_question(
        ns.datatable_faq_set,
        lambda: (doc / "datatable-faq.Rmd").write_text(more, encoding="utf-8"),
    )


def test_datatable_faq_set_refuses_a_package_without_the_faq(doc: Path) -> None:
    (doc / "datatable-faq.Rmd").unlink()
    nsc.assert_refuses_without_faq(ns.datatable_faq_set, "datatable-faq.Rmd")


def test_pandoc_attributes_leave_heading_titles_only() -> None:
    page = (
        "---\ntitle: T\n---\n\n# Group {.unnumbered}\n\n## Asks? {#id}\n\nText {#kept}\n\n"
        "## Has {braces} inside?\n\nMore.\n\n### Dash {-}\n\n```{r}\n## x {#code}\n```\n"
    )
    assert ns.rmarkdown_to_markdown(page) == (
        "# Group\n\n## Asks?\n\nText {#kept}\n\n## Has {braces} inside?\n\nMore.\n\n"
        "### Dash\n\n```{r}\n## x {#code}\n```\n"
    )
    # without the reader the titles end with "}" and ask nothing
    assert [q for _, q, _ in ns.split_markdown_faq(page)[1]] == ["Has {braces} inside?"]
    assert [q for _, q, _ in ns.split_rmarkdown_faq(page)[1]] == [
        "Asks?",
        "Has {braces} inside?",
    ]


_WORD = st.sampled_from(["key", "join", "group", "fread", "index", "column", "by"])
_ATTR = st.sampled_from(["", " {#anchor}", " {#Merge-Diff}", " {.unnumbered}", " {-}"])


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(1, 4),  # the heading's level
            st.booleans(),  # ends with "?"
            _ATTR,  # a pandoc attribute after the title (or none)
            st.lists(_WORD, min_size=0, max_size=4),  # its own text (empty: none)
            st.booleans(),  # the text followed by an R chunk holding a "##" comment line
        ),
        min_size=1,
        max_size=9,
    )
)
def test_split_rmarkdown_faq_property(
    entries: list[tuple[int, bool, str, list[str], bool]],
) -> None:
    """Random R Markdown pages under a front matter block: headings of any level, asked or
    not, with or without a pandoc attribute, with or without text of their own, some texts
    followed by an R chunk whose comment lines look like headings. Exactly the cython-faq
    rule's questions, with the attribute never part of a question: a heading of level 2 or
    deeper, outside an open question, asks when its title ends with "?" and it has text of
    its own, its answer everything up to the next heading of its level or higher (deeper
    titles without their attributes); every answer in the page; no asked title left; no
    attribute left on any heading; a chunk's "##" line never a heading."""
    md = ['---\ntitle: "FAQ"\n---\n']
    titles: list[str] = []
    bodies: list[str] = []
    for n, (level, asks, attr, words, chunk) in enumerate(entries):
        titles.append(f"entry{n}x ask this?" if asks else f"entry{n}x topic")
        md.append(f"\n{'#' * level} {titles[-1]}{attr}\n")
        blocks = [f"Text{n} {' '.join(words)}."] if words else []
        if chunk:
            blocks.append(f"```{{r}}\n## code{n} {{#c}}\nDT[, .N]\n```")
        bodies.append("\n\n".join(blocks))
        if blocks:
            md.append("\n" + bodies[-1] + "\n")
    text, qa = ns.split_rmarkdown_faq("".join(md))
    nsc.assert_heading_rule_split(
        [e[0] for e in entries],
        titles,
        bodies,
        lambda k: entries[k][0] >= 2 and entries[k][1] and bool(bodies[k]),
        text,
        qa,
    )
    for n in range(len(titles)):
        if entries[n][4]:
            assert f"## code{n} {{#c}}\n" in text  # in a chunk: code, kept as written
    assert "title:" not in text
