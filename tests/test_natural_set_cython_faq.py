"""The ``cython-faq`` natural-question set (``bench/natural_sets.py``), its reading of
Cython's FAQ (reStructuredText), the offline-first fetch of a PyPI sdist and the question-leak
check (``bench/check_question_leaks.py``) on a small inline sdist shaped as PyPI's
``cython-3.3.1.tar.gz`` ships it (``docs/src/userguide/faq.rst``: a target and a "FAQ" title
under ``+++``, a note, group titles under ``===`` over questions under ``^^^`` separated by
transitions, an answer with file-name sub-sections under ``---`` and literal blocks; beside
it the docs' other pages, one with overlined titles and one over the limit, the changelog
page, ``examples/``, ``conf.py`` and the include snippets); the archive put in the test's
cache, so nothing is downloaded; offline, no embedding model, no test reads the real sdist.

What the set's numbers rest on: the reStructuredText titles read as headings at the levels
the file gives them (code and transitions never read as titles); which headings ask is
decided by one rule (a title ending with "?" with text of its own, outside an open
question), so group titles stay in the page and an answer's sub-sections stay in its answer;
no question is left in any file; each answer is exactly the text under its heading; ids are
the questions' slugs, so an entry added keeps the halves; an answer too short to judge
leaves the set but not the corpus's scrubbing; the sdist is unpacked once, inside the cache.
"""

from __future__ import annotations

import io
import sys
import tarfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import datasets as ds
import natural_set_checks as nsc
import natural_sets as ns

Q_RENAME = "Do I need to rename my .py file to .pyx?"
Q_PICKLE = "How do I pickle cdef classes?"
Q_RESTRICT = "How do I have to wrap C code that uses the restrict qualifier?"
Q_LEN = "How do I use builtins like len() with the C type char *?"
Q_PXD = "What is the difference between a .pxd and .pxi file? When should either be used?"
Q_GLOBAL = "How do I declare a global variable?"
Q_CITE = "How do I cite Cython in an academic paper?"


def title(text: str, char: str) -> str:
    """A reStructuredText section title underlined with ``char``."""
    return f"{text}\n{char * len(text)}\n"


FAQ = (
    ".. _FAQ:\n\n"
    + title("FAQ", "+")
    + "\n.. note::\n  This page has been migrated from the wiki on github.\n\n"
    + title("Basics", "=")
    + "\n"
    + title("Do I need to rename my ``.py`` file to ``.pyx``?", "^")
    + "\n**Answer**: No. Cython can compile both .py and .pyx files.\n\n"
    "See :ref:`pure Python mode <pure-mode>`.\n\n----------\n\n"
    + title("Installation", "^")
    + "\nA topic title with text of its own stays.\n\n----------\n\n"
    + title("How do I ...?", "=")
    + "\n"
    + title("How do I pickle cdef classes?", "^")
    + "\n**Answer**: See :ref:`the documentation <auto_pickle>`.\n\n----------\n\n"
    + title("How do I have to wrap C code that uses the restrict qualifier?", "^")
    + "\n**Answer**: There currently is no way of doing this directly.\n\n"
    "See the following example code:\n\n"
    + title("slurp.h", "-")
    + "\n::\n\n    int th_match(char *, char *);\n    Not a title\n    -----------\n\n"
    + title("slurp.pyx", "-")
    + '\n::\n\n    cdef extern from "slurp.h":\n        int th_match(char *st, char *pt)\n\n'
    "----------\n\n"
    + title("How do I use builtins like ``len()`` with the C type ``char *``?", "^")
    + "\n**Answer**: Cython maps ``len(char*)`` directly to ``strlen()``.\n\n----------\n\n"
    + title("How do I declare a global variable?", "^")
    + "\n**Answer**:\n\n::\n\n    global variable\n\n----------\n\n"
    + title("Explanations", "=")
    + "\n"
    + title(
        "What is the difference between a ``.pxd`` and ``.pxi`` file? When should either be used?",
        "^",
    )
    + "\n**Answer**: A ``.pxd`` file is a declaration file used to declare C functions.\n\n"
    + title("About the project", "=")
    + "\n"
    + title("How do I cite Cython in an academic paper?", "^")
    + "\nIf you mention Cython, the simplest way is to cite the project website.\n"
)
ASKED = [Q_RENAME, Q_PICKLE, Q_RESTRICT, Q_LEN, Q_GLOBAL, Q_PXD, Q_CITE]
ANSWERS = {
    "do-i-need-to-rename-my-py-file-to-pyx": (
        "**Answer**: No. Cython can compile both .py and .pyx files.\n\n"
        "See :ref:`pure Python mode <pure-mode>`."
    ),
    "how-do-i-pickle-cdef-classes": "**Answer**: See :ref:`the documentation <auto_pickle>`.",
    "how-do-i-have-to-wrap-c-code-that-uses-t": (
        "**Answer**: There currently is no way of doing this directly.\n\n"
        "See the following example code:\n\n#### slurp.h\n\n::\n\n"
        "    int th_match(char *, char *);\n    Not a title\n    -----------\n\n"
        '#### slurp.pyx\n\n::\n\n    cdef extern from "slurp.h":\n'
        "        int th_match(char *st, char *pt)"
    ),
    "how-do-i-use-builtins-like-len-with-the-": (
        "**Answer**: Cython maps ``len(char*)`` directly to ``strlen()``."
    ),
    "how-do-i-declare-a-global-variable": "**Answer**:\n\n::\n\n    global variable",
    "what-is-the-difference-between-a-pxd-and": (
        "**Answer**: A ``.pxd`` file is a declaration file used to declare C functions."
    ),
    "how-do-i-cite-cython-in-an-academic-pape": (
        "If you mention Cython, the simplest way is to cite the project website."
    ),
}


def test_split_cython_faq_questions_answers_and_ids() -> None:
    text, qa = ns.split_cython_faq(FAQ)
    # a title ending with "?" with text of its own asks, as a reader types it (inline
    # literals out); its answer runs to the next title of its level or higher, its own
    # sub-sections (one level deeper) in it; the id the question's slug
    nsc.assert_split_answers(text, qa, ASKED, ANSWERS)
    # the page title, the note, the group titles (one ends with "?" but has no text of its
    # own) and a topic title with its text stay; the target and the transitions go
    assert text.startswith("# FAQ\n\n.. note::\n  This page has been migrated")
    for kept in (
        "## Basics",
        "### Installation\n\nA topic title with text of its own stays.",
        "## How do I ...?",
        "## Explanations",
        "## About the project",
    ):
        assert kept in text
    assert ".. _FAQ:" not in text and "\n----------\n" not in text
    assert "+++" not in text and "^^^" not in text and "===" not in text
    # a literal block's underlined line is code, kept as written in its answer
    assert "    Not a title\n    -----------" in text


def test_rst_to_markdown_titles_levels_and_what_stays() -> None:
    # levels in the order the file first uses each adornment, overlined apart from
    # underlined; a title needs a blank line (or the start) before it; a paragraph's last
    # line over a rule is no title; transitions and internal targets go, external targets,
    # directives and inline markup stay
    rst = (
        "=====\n Top \n=====\n\n.. _label:\n\nIntro ``code``.\n\n"
        "Part\n====\n\nText one\nstill text\n----------\n\n"
        "Sub\n---\n\nBody.\n\n--------\n\nPart two\n========\n\n"
        ".. _site: https://cython.org/\n\n.. code-block:: python\n\n    x = 1\n    Heading\n"
        "    =======\n"
    )
    assert ns.rst_to_markdown(rst) == (
        "# Top\n\nIntro ``code``.\n\n## Part\n\nText one\nstill text\n----------\n\n"
        "### Sub\n\nBody.\n\n## Part two\n\n.. _site: https://cython.org/\n\n"
        ".. code-block:: python\n\n    x = 1\n    Heading\n    =======\n"
    )
    # an indented line is never a title, even over an adornment at column 0
    assert ns.rst_to_markdown("Para.\n\n  Quoted line\n------------\n") == (
        "Para.\n\n  Quoted line\n------------\n"
    )
    # no title: the text as written, trailing spaces and blank runs squeezed
    assert ns.rst_to_markdown("One  \r\n\r\n\r\n\r\nTwo\n") == "One\n\nTwo\n"
    # a title at the file's end (no underline after it) and a lone adornment line
    assert ns.rst_to_markdown("Last\n----") == "# Last\n"
    assert ns.rst_to_markdown("----\n") == "\n"
    # the seventh style and deeper stay at markdown's deepest level
    deep = "".join(title(f"Title{k}", c) + "\n" for k, c in enumerate("=-~^+*#\"'"))
    assert [ln for ln in ns.rst_to_markdown(deep).split("\n") if ln][-3:] == [
        "###### Title6",
        "###### Title7",
        "###### Title8",
    ]


def test_rst_plain() -> None:
    assert ns.rst_plain("Use ``const``?") == "Use const?"
    assert ns.rst_plain("See :ref:`the docs <auto_pickle>` now") == "See the docs now"
    assert ns.rst_plain(":func:`len` and `Cython`_  and  `x`") == "len and Cython and x"


def test_split_cython_faq_edges() -> None:
    # no title: the page as written, nothing asked
    assert ns.split_cython_faq("No entries here.\n") == ("No entries here.\n", [])
    # the page title never asks, even with "?"; a repeat takes -2; a "?" title with no text
    # of its own asks nothing, its deeper "?" titles ask; a "?" before a closing quote asks;
    # a "?" title with text but at the end of the page asks
    text, qa = ns.split_cython_faq(
        title("Is this the FAQ?", "=")
        + "\nIntro.\n\n"
        + title("Same words?", "-")
        + "\nFirst answer.\n\n"
        + title("Group?", "-")
        + "\n"
        + title("Inner one?", "~")
        + "\nInner answer.\n\n"
        + title("\u201cWhy not?\u201d", "-")
        + "\nYes you can.\n\n"
        + title("Same words?", "-")
        + "\nSecond answer.\n"
    )
    assert qa == [
        ("same-words", "Same words?", "First answer."),
        ("inner-one", "Inner one?", "Inner answer."),
        ("why-not", "\u201cWhy not?\u201d", "Yes you can."),
        ("same-words-2", "Same words?", "Second answer."),
    ]
    assert text == (
        "# Is this the FAQ?\n\nIntro.\n\nFirst answer.\n\n## Group?\n\nInner answer.\n\n"
        "Yes you can.\n\nSecond answer.\n"
    )


_CHARS = st.sampled_from("=-~^")
_WORD = st.sampled_from(["cdef", "pxd", "numpy", "buffer", "module", "gil", "memoryview"])


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(
            _CHARS,  # the title's adornment: its level is the order the file first uses it
            st.booleans(),  # ends with "?"
            st.lists(_WORD, min_size=0, max_size=4),  # its own text (empty: none)
        ),
        min_size=1,
        max_size=9,
    )
)
def test_split_cython_faq_property(entries: list[tuple[str, bool, list[str]]]) -> None:
    """Random runs of titles under ``+`` (the page title) and four adornments, each a
    question ("...?") or a topic, with or without text of its own: the levels are the order
    the page first uses each adornment; a title inside an open question (deeper than it) is
    part of its answer; any other below the page title asks when it ends with "?" and has
    text of its own, and then its answer is all the text and deeper titles up to the next
    title of its level or higher. Exactly those, in order, with slug ids; every answer in
    the page; no asked title left in it; every title that does not ask kept."""
    styles = ["+"]
    rst = [title("FAQ", "+")]
    titles: list[str] = []
    levels: list[int] = []
    for n, (char, asks, words) in enumerate(entries):
        if char not in styles:
            styles.append(char)
        levels.append(styles.index(char) + 1)
        titles.append(f"entry{n}x ask this?" if asks else f"entry{n}x topic")
        rst.append("\n" + title(titles[-1], char))
        if words:
            rst.append(f"\nText{n} {' '.join(words)}.\n")
    text, qa = ns.split_cython_faq("".join(rst))
    expected: list[tuple[str, str, str]] = []
    asked: set[int] = set()
    k = 0
    while k < len(entries):
        _, asks, words = entries[k]
        if asks and words:
            nxt = k + 1
            while nxt < len(entries) and levels[nxt] > levels[k]:
                nxt += 1
            blocks = [f"Text{k} {' '.join(words)}."]
            for j in range(k + 1, nxt):
                blocks.append(f"{'#' * levels[j]} {titles[j]}")
                if entries[j][2]:
                    blocks.append(f"Text{j} {' '.join(entries[j][2])}.")
            expected.append((ns._slug(titles[k]), titles[k], "\n\n".join(blocks)))
            asked.add(k)
            k = nxt
        else:
            k += 1
    assert qa == expected
    nsc.assert_page_keeps_answers(qa, text)
    for n, t in enumerate(titles):
        assert (f"{'#' * levels[n]} {t}\n" in text) == (n not in asked)


# -- the set, built from an sdist shaped like PyPI's cython-3.3.1.tar.gz ----------------------
# (the checks every sdist set shares run in test_natural_set_sdists.py on SDIST)

JUDGED = {k: a for k, a in ANSWERS.items() if k != "how-do-i-declare-a-global-variable"}


def _reads(nset: ns.NaturalSet) -> None:
    # the other pages as markdown: an overlined title, a target gone; a page quoting a
    # question scrubbed, its other text kept
    assert nset.files["src/tutorial/strings.md"].startswith("# Strings\n\n## Decoding bytes\n")
    assert "Read on." in nset.files["src/tutorial/strings.md"]
    assert nset.files["index.md"].startswith("# Welcome to Cython's Documentation\n")


SDIST = nsc.SdistSet(
    name="cython-faq",
    build=ns.cython_faq_set,
    project=ns.CYTHON_PROJECT,
    version=ns.CYTHON_VERSION,
    doc=ns.CYTHON_DOC,
    pages={ns.CYTHON_FAQ: FAQ},
    members={
        "docs/index.rst": title("Welcome to Cython's Documentation", "=")
        + "\nAlso see the `Cython project homepage <https://cython.org/>`_.\n",
        "docs/CONTRIBUTING.rst": title("Contributing", "=") + "\nOpen a pull request.\n",
        "docs/src/tutorial/strings.rst": ".. _string_tutorial:\n\n"
        + "*******\nStrings\n*******\n\n"
        + title("Decoding bytes", "=")
        + f"\nUsers ask: {Q_PICKLE} Read on.\n",
        "docs/src/reference/huge.rst": title("Huge", "=") + "\n" + "Notes. " * 25_000 + "\n",
        "docs/src/changes.rst": ".. include:: ../../CHANGES.rst\n",
        "docs/examples/tutorial/strings/c_func.pyx": "leftout\n",
        "docs/examples/README.rst": "leftout\n",
        "docs/_static/page.rst": "leftout\n",
        "docs/src/cimport-warning": ".. warning::\n\n    leftout\n",
        "docs/conf.py": "leftout = 1\n",
        "CHANGES.rst": "leftout\n",
        "README.rst": "leftout\n",
    },
    sources={k: "src/userguide/faq.md" for k in JUDGED},
    answers=JUDGED,
    files={"src/userguide/faq.md", "index.md", "CONTRIBUTING.md", "src/tutorial/strings.md"},
    too_long="src/reference/huge.rst",
    # the one answer under five words is left out (and scrubbed)
    left_out=(Q_GLOBAL,),
    note=("PyPI sdist cython 3.3.1",),
    asked=ASKED,
    shipped={"faq.txt": ns.rst_plain(FAQ)},
    short=(
        {
            ns.CYTHON_FAQ: FAQ.replace(
                "If you mention Cython, the simplest way is to cite the project website.",
                "Cite it.",
            ).replace(
                "**Answer**:\n\n::\n\n    global variable", "**Answer**: declare it with global."
            )
        },
        Q_CITE,
    ),
    added={
        ns.CYTHON_FAQ: FAQ.replace(
            title("Explanations", "="),
            title("Can Cython create objects or use operators on stack-allocated C++ classes?", "^")
            + "\nYes, stack-allocated C++ objects can be created and used directly.\n\n"
            + title("Explanations", "="),
        )
    },
    refusals=[((ns.CYTHON_FAQ,), ns.CYTHON_FAQ)],
    reads=_reads,
)


@pytest.fixture
def archive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The sdist as shipped (:data:`FAQ`), not yet unpacked."""
    return nsc.sdist_archive(SDIST, tmp_path, monkeypatch)


def test_fetch_pypi_sdist_unpacks_once_offline(archive: Path) -> None:
    root = ns.fetch_pypi_sdist(ns.CYTHON_PROJECT, ns.CYTHON_VERSION)
    assert root == ds.CACHE_DIR / "pypi" / f"{ns.CYTHON_PROJECT}-{ns.CYTHON_VERSION}"
    assert (root / ".bench-unpacked").read_text() == f"{ns.CYTHON_VERSION}\n"
    assert (root / ns.CYTHON_DOC / ns.CYTHON_FAQ).read_text(encoding="utf-8") == FAQ
    # unpacked once: the tree is reused without the archive (nothing fetched again), and a
    # file changed in it stays changed
    archive.unlink()
    (root / ns.CYTHON_DOC / "index.rst").write_text("changed\n")
    assert ns.fetch_pypi_sdist(ns.CYTHON_PROJECT, ns.CYTHON_VERSION) == root
    assert (root / ns.CYTHON_DOC / "index.rst").read_text() == "changed\n"


def test_fetch_pypi_sdist_keeps_members_inside_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # an archive naming a path outside its folder is refused, nothing written outside, no
    # marker left (a later call tries again)
    monkeypatch.setattr(ds, "CACHE_DIR", tmp_path / "cache")
    work = tmp_path / "cache" / "pypi" / "downloads"
    work.mkdir(parents=True)
    with tarfile.open(work / "evil-1.0.tar.gz", "w:gz") as tar:
        info = tarfile.TarInfo("../../../escaped.txt")
        info.size = 3
        tar.addfile(info, io.BytesIO(b"bad"))
    with pytest.raises(tarfile.FilterError):
        ns.fetch_pypi_sdist("evil", "1.0")
    assert not (tmp_path / "escaped.txt").exists()
    assert not (tmp_path / "cache" / "pypi" / "evil-1.0" / ".bench-unpacked").exists()
