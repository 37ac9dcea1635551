"""The ``slrn-faq`` natural-question set (``bench/natural_sets.py``), its linuxdoc text reader
and the question-leak check (``bench/check_question_leaks.py``) on small inline texts shaped
like Debian's ``slrn`` (``FAQ.gz``: linuxdoc rendered to text by sgml2txt: title, authors,
a rule of ``_``, the contents list, a second rule, numbered sections of ``N.M.`` entries, two
of them grouping ``N.M.K.`` sub-questions; the reference manual and scoring guide in the same
format; notes and man pages beside it) in a package tree laid out as the package unpacks
(marker present, nothing downloaded); offline, no embedding model.

What the set's numbers rest on: no question's text is left in any file (the contents list,
a note quoting one aside); each answer is exactly the text under its question, a sub-section
included, the next question, group or section excluded; a wrapped, hyphenated title is read
whole; a group's introduction and a section's preamble are no answer; ids are the authors'
numbers; an answer too short to judge leaves the set but not the corpus's scrubbing; the
halves hold when an entry is added.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import check_question_leaks as cql
import natural_set_checks as nsc
import natural_sets as ns
from debian_package_double import unpacked_package, write_gz

Q_WHAT = "What is slrn ?"
Q_FROM = "Is it possible to set my ``From:'' header line for postings?"
Q_NEVER = "How can I never mark articles as read?"
Q_BOTH = "How can I get slrn to show both read and unread articles?"
Q_REGEX = "Where can I get a full description of slrn 's regular expressions?"
Q_HANG = "slrn hangs infinitely when I press the delete key"
Q_BUG = "The bug I found is not listed here. What do I do now?"
Q_SHORT = "Does slrn run on VMS?"

RULE = "  " + "_" * 70

FAQ_TEXT = f"""  The slrn FAQ
  John E. Davis <davis@space.mit.edu>
  Version pre1.0.0, November 2008

  Frequently asked questions about the slrn newsreader.
{RULE}

  Table of Contents

  1. General questions about slrn
     1.1 {Q_WHAT}
     1.2 {Q_SHORT}

  2. Configuration
     2.1 {Q_FROM}

  3. Usage
     3.2 Treatment of read articles
        3.2.1 {Q_NEVER}
        3.2.2 {Q_BOTH}

  4. Scoring
     4.5 Where can I get a full description of slrn 's regular
         expressions?

  6. I found a bug in slrn !!!
     6.1 {Q_HANG}
     6.3 {Q_BUG}
        6.3.1 Some additional notes for the advanced user

  7. About this document
     7.1 History

{RULE}

  1.  General questions about slrn

  1.1.  {Q_WHAT}

  slrn (``S-Lang read news'') is a Usenet newsreader that runs in text
  mode on various Unix and Unix-like operating systems.

  1.2.  {Q_SHORT}

  Yes.

  2.  Configuration

  2.1.  {Q_FROM}

  On (properly configured) Unix-like systems, slrn should be able to
  determine a valid ``From:'' header line itself:

          set hostname "host.domain"

  3.  Usage

  3.2.  Treatment of read articles

  By default, slrn does not display articles that were previously marked
  as read. The following questions deal with these cases:

  3.2.1.  {Q_NEVER}

  There is an option for it - you just need to set
  ``auto_mark_article_as_read'' to 0 in your slrnrc file.
  3.2.2.  {Q_BOTH}

  Simply set a ``prefix argument'' before entering a newsgroup.

  4.  Scoring

  4.5.  Where can I get a full description of slrn 's regular expres-
  sions?

  The regular expressions are described in the file score.txt, and
  expires dates ran until April first
  2010.  As the example indicates, dates are
  MM/DD/YYYY.

  6.  I found a bug in slrn !!!

  First, please check whether the bug you discovered is already
  discussed here:

  6.1.  {Q_HANG}

  This is a known bug; however, it's not a problem in slrn, so I cannot
  fix it.

  6.3.  {Q_BUG}

  The bug might already be fixed, so please consider upgrading.

  6.3.1.  Some additional notes for the advanced user

  The command line switch --debug logs the dialog with the server.

  7.  About this document

  The latest version of this FAQ is available from the slrn web site.

  7.1.  History

     2003-08-19: Revision 1.0
        The first version of this FAQ documents slrn 0.9.8.0.
"""

MANUAL_TEXT = f"""  The slrn reference manual
  Matthias Friedrich <matt@mafr.de>

  Using and customizing the slrn newsreader
{RULE}

  Table of Contents

  6. Configuration variables
     6.1 abort_unmodified_edits
     6.2 auto_mark_article_as_read

{RULE}

  6.  Configuration variables

  The following variables can be set using the ``set'' command:

  6.1.  abort_unmodified_edits

  Type: integer
  Default: 0
  6.2.  auto_mark_article_as_read

  If non-zero, an article is marked as read when it is opened. See
  {Q_NEVER}
"""


def _corpus(files: dict[str, str]) -> str:
    return " ".join(" ".join(files.values()).split()).lower()


# -- the reader --------------------------------------------------------------------------------


def test_split_slrn_faq_questions_answers_and_ids() -> None:
    text, qa = ns.split_slrn_faq(FAQ_TEXT)
    # 3.2 groups questions (no answer), 6.3.1 is a sub-section, 7.1 is the colophon's
    assert [key for key, _, _ in qa] == ["1.1", "1.2", "2.1", "3.2.1", "3.2.2", "4.5", "6.1", "6.3"]
    by_key = {key: (q, a) for key, q, a in qa}
    assert by_key["1.1"] == (
        Q_WHAT,
        "slrn (``S-Lang read news'') is a Usenet newsreader that runs in text\n"
        "mode on various Unix and Unix-like operating systems.",
    )
    assert by_key["1.2"] == (Q_SHORT, "Yes.")
    # code keeps its indent relative to the answer
    assert by_key["2.1"][1].endswith('itself:\n\n        set hostname "host.domain"')
    # a heading right under a line of text (no blank line before it) still ends the answer
    assert by_key["3.2.1"][1] == (
        "There is an option for it - you just need to set\n"
        "``auto_mark_article_as_read'' to 0 in your slrnrc file."
    )
    assert by_key["3.2.2"][0] == Q_BOTH
    # a wrapped, hyphenated title is read whole; a "2010.  As" line inside text is text
    assert by_key["4.5"][0] == Q_REGEX
    assert "April first\n2010.  As the example indicates" in by_key["4.5"][1]
    assert by_key["6.1"][0] == Q_HANG  # a problem report, numbered as an entry: a question
    assert by_key["6.3"][1] == (
        "The bug might already be fixed, so please consider upgrading.\n\n"
        "#### 6.3.1. Some additional notes for the advanced user\n\n"
        "The command line switch --debug logs the dialog with the server."
    )
    lines = text.split("\n")
    assert lines[0] == "# The slrn FAQ"
    assert "## 3. Usage" in lines and "### 3.2. Treatment of read articles" in lines
    assert "## 7. About this document" in lines and "### 7.1. History" in lines
    # a group's introduction and a section's preamble are in the page, in no answer
    for kept in ("as read. The following questions deal", "First, please check whether"):
        assert kept in text and not any(kept in a for _, _, a in qa)
    for _, q, a in qa:
        assert a in text and q not in text
    assert "Table of Contents" not in text and "John E. Davis" not in text
    assert "regular expres-" not in text and "\n\n\n" not in text


def test_split_slrn_faq_repeated_number_gets_a_suffix() -> None:
    faq = f"T\n{RULE}\nx\n{RULE}\n\n  1.  A\n\n  1.1.  Why?\n\n  one\n\n  1.1.  Why not?\n\n  two\n"
    _, qa = ns.split_slrn_faq(faq)
    assert qa == [("1.1", "Why?", "one"), ("1.1-2", "Why not?", "two")]


def test_split_slrn_faq_refuses_a_text_without_its_contents_rules() -> None:
    with pytest.raises(ValueError, match="not a linuxdoc text"):
        ns.split_slrn_faq("  1.  A\n\n  1.1.  Why?\n\n  one\n")


def test_join_wrapped_undoes_the_formatters_hyphenation_only() -> None:
    assert ns._join_wrapped(["a regular expres-", "  sions?"]) == "a regular expressions?"
    assert ns._join_wrapped(["at least", " one unread?"]) == "at least one unread?"
    assert ns._join_wrapped(["version 2-", "  3 only"]) == "version 2- 3 only"
    assert ns._join_wrapped(["slang-", "  Unicode"]) == "slang- Unicode"


_LINE = st.one_of(
    st.text(alphabet="abc xyz?.:", max_size=20),
    st.just(""),
    st.just(""),
    st.just(RULE),
    st.builds(
        lambda n, t: f"  {n}.  {t}", st.integers(0, 3), st.text("abc ?", min_size=1, max_size=8)
    ),
    st.builds(
        lambda a, b, t: f"  {a}.{b}.  {t}",
        st.integers(0, 3),
        st.integers(0, 4),
        st.text(alphabet="abcd ?-", min_size=1, max_size=20),
    ),
    st.builds(
        lambda a, b, c, t: f"  {a}.{b}.{c}.  {t}",
        st.integers(0, 3),
        st.integers(0, 4),
        st.integers(0, 3),
        st.text(alphabet="abc ?", min_size=1, max_size=10),
    ),
    st.builds(lambda t: "        " + t, st.text(alphabet="abc1.? ", max_size=10)),
    st.builds(lambda t: "  " + t, st.text(alphabet="abc-?", min_size=1, max_size=10)),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_LINE, max_size=60))
def test_split_slrn_faq_answers_are_in_the_page_and_questions_are_not(lines: list[str]) -> None:
    """On random linuxdoc-like bodies: every answer is text of the page, ids are unique
    numbers, there are no more questions than numbered lines, and each question's heading
    left the page (a line equal to it may stay only as text of another heading's kind)."""
    faq = "\n".join(["  Title", RULE, "  1. contents", RULE, *lines])
    text, qa = ns.split_slrn_faq(faq)
    assert text.startswith("# Title\n") and "\n\n\n" not in text
    keys = [key for key, _, _ in qa]
    assert len(keys) == len(set(keys))
    numbered = sum(1 for line in lines if re.match(r"^  \d+(\.\d+)+\.  \S", line))
    assert len(qa) <= numbered
    headings = [ln for ln in text.split("\n") if ln.startswith("#")]
    for key, q, a in qa:
        assert re.fullmatch(r"\d+\.\d+(\.\d+)?(-\d+)?", key) and q.strip() and a.strip()
        assert a in text
        number = key.split("-")[0]
        assert f"{'#' * (number.count('.') + 2)} {number}. {q}" not in headings


def test_linuxdoc_text_markdown_keeps_every_heading_and_drops_the_contents() -> None:
    md = ns.linuxdoc_text_markdown(MANUAL_TEXT)
    assert md == (
        "# The slrn reference manual\n\n"
        "## 6. Configuration variables\n\n"
        "The following variables can be set using the ``set'' command:\n\n"
        "### 6.1. abort_unmodified_edits\n\n"
        "Type: integer\nDefault: 0\n\n"
        "### 6.2. auto_mark_article_as_read\n\n"
        "If non-zero, an article is marked as read when it is opened. See\n"
        f"{Q_NEVER}\n"
    )


# -- the set, built from a package tree shaped like Debian's slrn --------------------------------


ROFF_PAGE = ".TH SLRN 1\n.SH NAME\nslrn \\- An easy to use NNTP / spool based newsreader.\n"


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ_TEXT) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.SLRN_PACKAGE, "1.0.3+dfsg-6+b1")
    doc = root / ns.SLRN_DOC
    (doc / "examples").mkdir(parents=True)
    (doc / "contrib").mkdir(parents=True)
    write_gz(doc / ns.SLRN_FAQ, faq)
    write_gz(doc / "manual.txt.gz", MANUAL_TEXT)
    write_gz(doc / "slrnfuns.txt.gz", f"  Functions\n{RULE}\n  1. A\n{RULE}\n" + "x" * 150_001)
    (doc / "README").write_text(f"slrn README\n\nSee the FAQ: {Q_BOTH.upper()}\n")
    write_gz(doc / "examples/slrn.rc.gz", '% slrn.rc\nset hostname "host.domain"\n')
    (doc / "examples/score.sl").write_text("define score_hook () {}\n")
    (doc / "THANKS").write_text("Everyone.\n")
    write_gz(doc / "contrib/NEWS.cleanscore.gz", "0.9.8: first release\n")
    (doc / "slrn-doc.html").write_text("<html><body><h1>Online docs</h1><p>See.</p></body></html>")
    write_gz(root / ns.SLRN_MAN[0], ROFF_PAGE)
    return doc


def test_slrn_faq_set_from_a_package_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _package(tmp_path, monkeypatch)
    nset = ns.slrn_faq_set()
    assert [q.qid for q in nset.questions] == [
        "slrn-faq:1.1",
        "slrn-faq:2.1",
        "slrn-faq:3.2.1",
        "slrn-faq:3.2.2",
        "slrn-faq:4.5",
        "slrn-faq:6.1",
        "slrn-faq:6.3",
    ]
    assert nset.left_out == (Q_SHORT,)  # "Yes.": under the judge's shingle
    # the manual converted, the notes as text, the HTML page and the man page converted;
    # THANKS, the script's changelog, the S-Lang code and the page over the cap out
    assert set(nset.files) == {
        "FAQ.md",
        "manual.md",
        "slrn-doc.md",
        "man/slrn.1.md",
        "README",
        "examples/slrn.rc",
    }
    assert nset.files["man/slrn.1.md"] == ns.roff_page_markdown(ROFF_PAGE)
    assert {q.source for q in nset.questions} == {"FAQ.md"}
    corpus = _corpus(nset.files)
    for q in nset.questions:
        assert " ".join(q.text.split()).lower() not in corpus
        assert q.answers[0][0] in nset.files["FAQ.md"]
        assert len(re.findall(r"\w+", q.answers[0][0])) >= ns.MIN_ANSWER_WORDS
    # a note and the manual quoting a question are scrubbed (case aside)
    assert nset.files["README"] == "slrn README\n\nSee the FAQ: \n"
    assert nset.files["manual.md"].endswith("opened. See\n\n")
    nsc.assert_files_as_written(nset)
    assert "1.0.3+dfsg-6+b1" in nset.note and "slrnfuns.txt.gz" in nset.note
    assert Q_SHORT in nset.note
    nsc.assert_held_out("slrn-faq")


def test_no_question_text_is_left_in_any_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The leak check on the set finds nothing, and finds the copies in the FAQ as shipped
    (its contents list and question headings: it could fail)."""
    _package(tmp_path, monkeypatch)
    nset = ns.slrn_faq_set()
    asked = [q.text for q in nset.questions] + list(nset.left_out)
    assert len(asked) == 8
    assert cql.find_leaks(nset.files, asked, False) == []
    leaks = cql.find_leaks({"FAQ": FAQ_TEXT}, asked, False)
    # the wrapped, hyphenated heading is no exact copy, but its contents-list line is
    assert {lk.question for lk in leaks if lk.kind == "exact"} == set(asked)


def test_slrn_faq_set_halves_are_fixed_and_disjoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = _package(tmp_path, monkeypatch)
    first, dev, test = nsc.halves_of(ns.slrn_faq_set)
    more = FAQ_TEXT.replace(
        "  2.  Configuration\n",
        "  2.  Configuration\n\n  2.0.  Can slrn read mail?\n\n  No, it reads Usenet news only.\n",
    )
    write_gz(doc / ns.SLRN_FAQ, more)
    nsc.assert_halves_kept(ns.slrn_faq_set, first, dev, test)


def test_slrn_faq_set_refuses_a_package_without_the_faq(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = _package(tmp_path, monkeypatch)
    (doc / ns.SLRN_FAQ).unlink()
    with pytest.raises(FileNotFoundError, match=r"no FAQ\.gz under"):
        ns.slrn_faq_set()
