"""The ``pdl-faq`` natural-question set (``bench/natural_sets.py``): PDL's FAQ as Debian's
``pdl`` ships it (``usr/lib/<arch>/perl5/<perl>/PDL/``: ``FAQ.pod`` beside the manual's other
``*.pod`` pages, the modules' ``.pm`` files and ``Index.pod``, a link to a list generated at
install time), read by perlfaq's reading unchanged (``pod_to_markdown`` then
``split_heading_questions``) after ``pod_paragraphs_normalised``, on a small inline package
tree of that shape (a title page of ``=head1`` sections, ``=head1`` groups over ``=head2``
entries titled ``Q: 2.1    What is PDL ?  `` with trailing blanks, two and three blank lines
between paragraphs as the real FAQ has them, a repeated label, a verbatim block, a ``=for
comment``, a link to another entry by its title, a stated entry, an entry whose answer is too
short to judge); offline, no embedding model, no test reads the real package.

What the set's numbers rest on: every entry after a run of blank lines asks (without the
normalisation ``pod_to_markdown`` reads the commands after two blank lines as text and drops
every paragraph up to the next command, questions included); the ``Q: n.m`` labels are off
the questions and no question's text is left in any file; each answer is exactly the text
under its title; the ``.pm`` modules and the linked ``Index.pod`` stay out; the halves are
fixed.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import natural_set_checks as nsc
import natural_sets as ns
from debian_package_double import unpacked_package

VERSION = "1:2.081-2"
POD_DIR = "usr/lib/x86_64-linux-gnu/perl5/5.36/PDL"

Q_WHAT = "What is PDL ?"
Q_PAY = "What do I have to pay to get PDL?"
Q_BIN = "What binary distributions are available?"
Q_LINUX = "Does PDL run on Linux? (And what about packages?)"
Q_THIRD = "I want to access the third element of a pdl but $x[2] doesn't work ?!"
Q_PNG = "PGPLOT does not write out PNG files."
Q_CONCAT = "What is this strange usage of the string concatenation operator `.=` in PDL scripts?"
ASKED = [Q_WHAT, Q_PAY, Q_BIN, Q_LINUX, Q_THIRD, Q_PNG]
A_WHAT = (
    "PDL stands for Perl Data Language . To say it with the words of Karl Glazebrook:\n\n"
    "```\n    $x = $y + $z;   # adds two images\n```\n\n"
    "It provides tons of useful functionality for scientific analysis."
)
A_PAY = "Nothing: PDL is free software, see Where do I get it? in the list of answers above."
A_BIN = "Debian and Fedora package PDL, and Strawberry Perl ships it for Windows users."
A_LINUX = "Yes, it runs on Linux, and most distributions package it (see Question 4.5)."
A_THIRD = "Use `$x->at(2)` or a slice: an ndarray is an object, not a Perl array."
A_PNG = "Build PGPLOT with the PNG driver enabled, and set the PGPLOT_DEV variable for it."

FAQ = (
    "\n=head1 NAME\n\nPDL::FAQ - Frequently asked questions about PDL\n\n\n"
    "=head1 VERSION\n\nCurrent FAQ version:  1.008\n\n\n"
    "=head1 GENERAL QUESTIONS\n\n\n"
    "=head2 Q: 2.1    What is PDL ?  \n\n\n"
    "PDL stands for \nI<Perl Data  Language> . To say it with the words of Karl Glazebrook:\n\n\n"
    "    $x = $y + $z;   # adds two images\n\n\n"
    "It provides tons of useful functionality for scientific analysis.\n\n"
    "=head2 Q: 2.8    What do I have to pay to get PDL?  \n\n\n\n"
    'Nothing: PDL is free software, see L<Where do I get it?|"Q: 2.7 Where do I get it?"> '
    "in the list of answers above.\n\n\n\n"
    "=head1 BINARY DISTRIBUTIONS\n\n\n"
    "=head2 Q: 4.5    What binary distributions are available?  \n\n"
    "Debian and Fedora package PDL, and Strawberry Perl ships it for Windows users.\n\n\n"
    "=head2 Q: 4.5    Does PDL run on Linux? (And what about packages?)  \n\n"
    "Yes, it runs on Linux, and most distributions package it "
    'L<(see Question 4.5)|"Q: 4.5 What binary distributions are available?">.\n\n\n'
    "=head1 MANIPULATION OF NDARRAYS\n\n\n"
    "=for comment Check the list of PDL functions at the end of PDL.pod\n\n"
    "=head2 Q: 6.3    I want to access the third element of a pdl but $x[2] doesn't work ?!  \n\n"
    "Use C<< $x->at(2) >> or a slice: an ndarray is an object, not a Perl array.\n\n\n"
    "=head2 Q: 6.7    What is this strange usage of the string concatenation operator  C<.=>"
    "  in PDL scripts?   \n\n\nSee below.\n\n\n"
    "=head2 Q: 6.22   PGPLOT does not write out PNG files.\n\n"
    "Build PGPLOT with the PNG driver enabled, and set the PGPLOT_DEV variable for it.\n\n\n"
    "=head1 AUTHOR AND COPYRIGHT\n\nCopyright the PDL Porters.\n\n=cut\n"
)
QUICKSTART = (
    "=head1 NAME\n\nPDL::QuickStart - Quick introduction to PDL features.\n\n\n\n"
    f"=head1 DESCRIPTION\n\nPeople ask: {Q_PAY} The QuickStart shows it.\n\n\n"
    "=head2 Sections\n\n    $x = sequence(10);\n\n=cut\n"
)
SHIPPED = {"FAQ.pod": FAQ}
FILES = {"PDL/FAQ.md", "PDL/QuickStart.md", "PDL/Tips.md"}


def _package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ, where: str = POD_DIR
) -> Path:
    """The package's ``PDL/`` folder as shipped: the FAQ, a manual page quoting a question, a
    page over the limit, a small page with Windows line ends, a module's ``.pm`` with POD,
    ``Index.pod`` linked to a file outside the package."""
    root = unpacked_package(tmp_path, monkeypatch, ns.PDL_PACKAGE, VERSION)
    pod = root / where
    pod.mkdir(parents=True)
    (pod / "FAQ.pod").write_text(faq, encoding="utf-8")
    (pod / "QuickStart.pod").write_text(QUICKSTART, encoding="utf-8")
    (pod / "Tips.pod").write_text("=head1 NAME\r\n\r\n\r\nPDL::Tips - small tips\r\n", "utf-8")
    (pod / "PP.pod").write_text("=head1 NAME\n\n" + "Threads. " * 20_000, encoding="utf-8")
    (pod / "NiceSlice.pm").write_text("=head1 NAME\n\nleftout module POD\n", encoding="utf-8")
    outside = tmp_path / "var-lib-pdl-Index.pod"
    outside.write_text("=head1 NAME\n\nleftout generated index\n", encoding="utf-8")
    (pod / "Index.pod").symlink_to(outside)
    (root / "usr/share/doc/pdl").mkdir(parents=True)
    (root / "usr/share/doc/pdl/copyright").write_text("leftout\n", encoding="utf-8")
    return pod


@pytest.fixture
def pod(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return _package(tmp_path, monkeypatch)


def test_pdl_faq_set_from_a_package_tree(pod: Path) -> None:
    nset = ns.pdl_faq_set()
    nsc.assert_package_set(
        nset,
        "pdl-faq",
        ids=["2.1", "2.8", "4.5", "4.5-2", "6.3", "6.22"],
        files=FILES,
        source="PDL/FAQ.md",
        version=VERSION,
        too_long="PDL/PP.md",
        answers={
            "2.1": A_WHAT,
            "2.8": A_PAY,
            "4.5": A_BIN,
            "4.5-2": A_LINUX,
            "6.3": A_THIRD,
            "6.22": A_PNG,
        },
    )
    # the labels are off every question, the repeated one included
    assert [q.text for q in nset.questions] == ASKED
    assert "Q: 2.1" not in " ".join(nset.files.values())
    assert "leftout" not in " ".join(nset.files.values())  # .pm, Index.pod, copyright
    faq = nset.files["PDL/FAQ.md"]
    # group titles and the title page stay; the comment block does not
    assert (
        "# GENERAL QUESTIONS\n\nPDL stands for" in faq and "# BINARY DISTRIBUTIONS\n\nDebian" in faq
    )
    assert "# NAME\n\nPDL::FAQ - Frequently asked questions about PDL" in faq
    assert "# AUTHOR AND COPYRIGHT\n\nCopyright the PDL Porters." in faq
    assert "Check the list" not in faq
    # a page quoting a question: scrubbed, its other text and headings kept
    quick = nset.files["PDL/QuickStart.md"]
    assert "People ask:" in quick and "The QuickStart shows it." in quick
    assert "## Sections\n\n```\n    $x = sequence(10);\n```" in quick
    assert nset.files["PDL/Tips.md"] == "# NAME\n\nPDL::Tips - small tips\n"
    # the short answer left out and named (its question still scrubbed)
    nsc.assert_left_out(nset, Q_CONCAT, len(ASKED))
    assert "7 =head2 questions" in nset.note


def test_no_question_text_is_left_in_any_file(pod: Path) -> None:
    nsc.assert_leak_checked(ns.pdl_faq_set(), SHIPPED, [*ASKED, Q_CONCAT])


def test_pdl_faq_set_halves_are_fixed_and_disjoint(pod: Path) -> None:
    more = FAQ.replace(
        "=head1 MANIPULATION OF NDARRAYS",
        "=head2 Q: 4.12   How do I build PDL against a private Perl?\n\n\n"
        "Run Makefile.PL with that perl, then make and make install as usual.\n\n\n"
        "=head1 MANIPULATION OF NDARRAYS",
    )
    assert more != FAQ
    nsc.assert_halves_survive_an_added_question(
        ns.pdl_faq_set, lambda: (pod / "FAQ.pod").write_text(more, encoding="utf-8")
    )


def test_pdl_faq_set_refuses_a_package_without_the_faq(pod: Path) -> None:
    (pod / "FAQ.pod").unlink()
    nsc.assert_refuses_without_faq(ns.pdl_faq_set, "FAQ.pod")


def test_runs_of_blank_lines_are_one_break() -> None:
    """Without the normalisation the reading loses the entries: a command after two blank
    lines is read as text, and text before any command is not POD."""
    raw = "\n=head1 G\n\n\n=head2 Q: 1.1 Asks?\n\n\nIts answer.\n\n\n\n=head2 Q: 1.2 Two?\n\nB.\n"
    assert ns.split_heading_questions(ns.pod_to_markdown(raw))[1] != [
        ("Q: 1.1 Asks?", "Its answer."),
        ("Q: 1.2 Two?", "B."),
    ]
    normal = ns.pod_paragraphs_normalised(raw)
    assert normal == "=head1 G\n\n=head2 Q: 1.1 Asks?\n\nIts answer.\n\n=head2 Q: 1.2 Two?\n\nB.\n"
    assert ns.split_heading_questions(ns.pod_to_markdown(normal))[1] == [
        ("Q: 1.1 Asks?", "Its answer."),
        ("Q: 1.2 Two?", "B."),
    ]
    # blank lines holding spaces or tabs, and Windows line ends, count as blank
    assert (
        ns.pod_paragraphs_normalised("=head1 A\r\n \r\n\t\r\n\r\nText\r\n") == "=head1 A\n\nText\n"
    )


_WORD = st.sampled_from(["ndarray", "slice", "pdl", "broadcast", "piddle", "index", "Perl"])
_GAP = st.integers(1, 4)  # blank lines after a paragraph


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.booleans(),  # a =head1 group title before the entry
            st.booleans(),  # the title ends with "?"
            st.lists(_WORD, min_size=0, max_size=3),  # the answer's words (none: no answer)
            st.booleans(),  # a verbatim block after the answer's paragraph
            st.lists(_GAP, min_size=4, max_size=4),  # the gaps after each paragraph
        ),
        min_size=1,
        max_size=8,
    )
)
def test_pdl_faq_pages_property(
    entries: list[tuple[bool, bool, list[str], bool, list[int]]],
) -> None:
    """Random PDL-shaped FAQs (a title page, ``=head1`` groups, ``=head2 Q: g.k`` entries
    whose titles open with a marker word found nowhere else, answers of one paragraph and
    perhaps a verbatim block, or none; one to four blank lines, some holding spaces, after
    each paragraph): exactly the entries with an answer ask, each by its title without its
    label, its id the label's number, its answer the paragraph and the block as
    Markdown; no marker left in the page; every group title kept."""
    parts = ["=head1 NAME\n\nPDL::FAQ - questions\n"]
    expected: list[tuple[str, str, str]] = []
    groups: list[str] = []

    def gap(n: int) -> str:
        return "\n" + " \n" * (n - 1) + "\n"

    for k, (group, ends, words, code, gaps) in enumerate(entries):
        if group:
            groups.append(f"GROUP{k} TITLE")
            parts.append(gap(gaps[0]) + f"=head1 GROUP{k} TITLE")
        title = f"entry{k}x about {' '.join(words) or 'nothing'}" + ("?" if ends else "")
        parts.append(gap(gaps[1]) + f"=head2 Q: {k // 3 + 1}.{k % 3 + 1}    {title}  ")
        label = f"{k // 3 + 1}.{k % 3 + 1}"
        if not words:
            continue
        answer = f"Answer {k}: " + " ".join(words) + "."
        parts.append(gap(gaps[2]) + answer)
        if code:
            parts.append(gap(gaps[3]) + f"    $x{k} = pdl({k});")
            answer += f"\n\n```\n    $x{k} = pdl({k});\n```"
        expected.append((label, title, answer))
    pod = "".join(parts) + "\n"
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "FAQ.pod").write_text(pod, encoding="utf-8")
        files, qa, too_long = ns.pdl_faq_pages(Path(tmp))
    page = files["PDL/FAQ.md"]
    assert set(files) == {"PDL/FAQ.md"} and too_long == []
    nsc.assert_random_split(page, qa, expected)
    assert "Q: " not in page
    for title in groups:
        assert f"# {title}\n" in page
