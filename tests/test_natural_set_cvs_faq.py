"""The ``cvs-faq`` natural-question set (``bench/natural_sets.py``), its FAQ reader and the
question-leak check (``bench/check_question_leaks.py``) on a small inline FAQ shaped like
Debian's ``cvs`` (``/usr/share/doc/cvs/FAQ.gz``: the FAQ-O-Matic database exported as plain
text, latin-1: ``  Category: /Path/`` lines with their quoted titles, entries ``    N.
<question>`` indented by exactly four spaces and numbered from 1 in each category, some
wrapped over more four-space lines, some cut mid-sentence with their end at the head of the
answer, answers indented by three or more spaces, each entry closed by ``Last modified:
_date_``, the site's trailer at the end) in a package tree laid out as the package unpacks
(the Info manual, the notes, the man pages, the files left out; marker present, nothing
downloaded); offline, no embedding model, no test reads the real package.

What the set's numbers rest on: no question's text is left in any file (the FAQ's own lines,
the manual or a note quoting one); each answer is exactly the text under its question up to
its ``Last modified`` line; a wrapped or cut question is read whole; a question without an
answer asks nothing; ids are the question's slug; an answer too short to judge leaves the set
but not the corpus's scrubbing; the halves hold when an entry is added.
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

Q_BRANCH = "What is a branch?"
Q_MERGE = "How do I merge changes from the trunk into my branch or between branches?"
Q_LOG = 'Why does "log" tell me a file was committed exactly 5 hours later than I know it was?'
Q_INUSE = 'Explain: "RCS file /Repository/module/file.c,v is in use"'
Q_EXPORT = 'What is "export" for?'
Q_MOVE = (
    "Why can't CVS handle the moving of sources from one place in the directory hierarchy "
    "to another?"
)
ASKED = (Q_BRANCH, Q_MERGE, Q_LOG, Q_INUSE, Q_EXPORT, Q_MOVE)

FAQ = f"""This file contains a CVS FAQ.  Until 1995 it was maintained by David
Grubbs.

  Category: /Advanced_Topics_/Branching_and_Mergin/
 \x20
          " + Branching and Merging"
         \x20
    1. {Q_BRANCH}\x20
   \x20
          Unfortunately, the word "branch" is an overloaded technical
          term. It is used in too many different ways.
         \x20
     How CVS uses the word "branch":
         \x20
          The vendor branch holds releases from an outside vendor.
         \x20
   Last modified: _6/13/1997_
  \x20
    2. How do I merge changes from the trunk into my branch or between
    branches?\x20
   \x20
   The idea is similar to the above, but since CVS doesn't treat the main
   branch like other branches, you'll have to be more careful.
  \x20
                cvs update -r <branch_tag> {{optional files}}
  \x20
   Last modified: _6/13/1997_
  \x20
    3. Is this entry unanswered?\x20
   \x20
   Last modified: _6/13/1997_
  \x20
  Category: /Commands_/log_lo_rlog/
 \x20
          " + log (lo, rlog)"
         \x20
    1. Why does "log" tell me a file was committed exactly 5 hours later\x20
   \x20
   than I know it was?
  \x20
   I can tell by this question that you were working in a time zone that
   is 5 hours behind Greenwich Mean Time (GMT).
  \x20
   Last modified: _6/13/1997_
  \x20
    2. {Q_INUSE}\x20
   \x20
   This error appears when you run an RCS command on a file another
   process has locked; wait and retry.
  \x20
   Last modified: _6/13/1997_
  \x20
    3. {Q_EXPORT}\x20
   \x20
   "export" checks out a copy of a module in a form intended for export
   to a site without CVS, with no CVS administrative directories.
  \x20
   Last modified: _9/6/1997_
  \x20
  Category: /Past__Future_/Development/
 \x20
    1. {Q_MOVE}\x20
   \x20
   A "renaming database" has been proposed to track the history of
   pathname changes in the Repository.

        kingdon@cyclic.com
  \x20
   Last modified: _9/6/1997_
     _________________________________________________________________
  \x20
   [Add an answer to this category]
  \x20
   The FAQ-O-Matic lives at http://gille.loria.fr:7000/cgi-bin/faqomatic.
"""
ANSWERS = {
    "what-is-a-branch": (
        # dedented by the block's least indent (the sub-title's five spaces), then stripped
        'Unfortunately, the word "branch" is an overloaded technical\n'
        "     term. It is used in too many different ways.\n\n"
        'How CVS uses the word "branch":\n\n'
        "     The vendor branch holds releases from an outside vendor."
    ),
    "how-do-i-merge-changes-from-the-trunk-in": (
        "The idea is similar to the above, but since CVS doesn't treat the main\n"
        "branch like other branches, you'll have to be more careful.\n\n"
        "             cvs update -r <branch_tag> {optional files}"
    ),
    "why-does-log-tell-me-a-file-was-committe": (
        "I can tell by this question that you were working in a time zone that\n"
        "is 5 hours behind Greenwich Mean Time (GMT)."
    ),
    "explain-rcs-file-repository-module-file": (
        "This error appears when you run an RCS command on a file another\n"
        "process has locked; wait and retry."
    ),
    "what-is-export-for": (
        '"export" checks out a copy of a module in a form intended for export\n'
        "to a site without CVS, with no CVS administrative directories."
    ),
    "why-can-t-cvs-handle-the-moving-of-sourc": (
        'A "renaming database" has been proposed to track the history of\n'
        "pathname changes in the Repository.\n\n"
        "     kingdon@cyclic.com"
    ),
}


def test_split_cvs_faq_questions_answers_and_ids() -> None:
    page, qa = ns.split_cvs_faq(FAQ)
    # wrapped questions read whole; a question cut mid-sentence takes its end back from
    # the answer
    nsc.assert_split_answers(page, qa, ASKED, ANSWERS)
    assert "than I know it was?" not in page and "branches?" not in page
    # a question with nothing under it asks nothing and leaves the page all the same
    assert "unanswered" not in page
    # date lines, category lines and titles stay in the page, in no answer
    assert page.count("Last modified: _") == 7
    assert "Category: /Commands_/log_lo_rlog/" in page and '" + log (lo, rlog)"' in page
    for _, _, a in qa:
        assert "Last modified" not in a and "Category" not in a and '" + ' not in a
    # the site's trailer and the preamble are in the page, in no answer
    assert "The FAQ-O-Matic lives at" in page and "David\nGrubbs." in page
    assert all("FAQ-O-Matic" not in a and "Grubbs" not in a for _, _, a in qa)


def test_split_cvs_faq_repeats_cut_questions_and_no_questions() -> None:
    again = FAQ.replace(
        "  Category: /Past__Future_/Development/\n",
        f"    4. {Q_EXPORT} \n    \n   Asked again in another category, other words.\n"
        "   \n   Last modified: _1/1/2004_\n   \n  Category: /Past__Future_/Development/\n",
    )
    _, qa = ns.split_cvs_faq(again)
    keys = [k for k, _, _ in qa]
    assert keys.count("what-is-export-for") == 1 and keys.count("what-is-export-for-2") == 1
    # a question ending in a word is not cut when its answer starts with a capital, and
    # one ending in punctuation keeps a lower-case answer as its answer
    _, plain = ns.split_cvs_faq(
        "    1. About FAQ-O-Matic \n    \nThis is FAQ-O-Matic, a Perl hack.\n"
        "   Last modified: _6/13/1997_\n"
        "    2. Adding a new category ? \n    \ntry to get bug-cvs to help you.\n"
    )
    assert plain == [
        ("about-faq-o-matic", "About FAQ-O-Matic", "This is FAQ-O-Matic, a Perl hack."),
        ("adding-a-new-category", "Adding a new category ?", "try to get bug-cvs to help you."),
    ]
    # a wrapped line that starts with no lower-case letter is still the question's; a
    # question line right under another is a question of its own (the first, with
    # nothing under it, asks nothing)
    _, wrapped = ns.split_cvs_faq(
        '    1. Why do I get the latest files when I tried "update -r\n    <tag>"?\n    \n'
        "   Because the tag is a branch tag.\n"
        "    2. First?\n    3. Second?\n\n   Answered.\n"
    )
    assert wrapped == [
        (
            "why-do-i-get-the-latest-files-when-i-tri",
            'Why do I get the latest files when I tried "update -r <tag>"?',
            "Because the tag is a branch tag.",
        ),
        ("second", "Second?", "Answered."),
    ]
    # an answer ends at the next category even without its date line
    _, open_ended = ns.split_cvs_faq(
        "    1. Where is it? \n\n   Here it is.\n  Category: /Other/\n   Category text.\n"
    )
    assert open_ended == [("where-is-it", "Where is it?", "Here it is.")]
    page, none = ns.split_cvs_faq("  Category: /\n\n   Some prose, no entry.\n")
    assert none == [] and page == "Category: /\n\nSome prose, no entry.\n"


_WORD = st.sampled_from(["branch", "tag", "merge", "module", "commit", "rcs", "attic", "lock"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(
            st.tuples(
                st.lists(_WORD, min_size=1, max_size=12),  # the question's words
                st.lists(_WORD, min_size=0, max_size=20),  # the answer's words (may be none)
                st.integers(min_value=2, max_value=8),  # words on the question's first line
                st.booleans(),  # the date line closing the entry
                st.booleans(),  # the question cut, its end at the head of the answer
            ),
            max_size=4,
        ),
        max_size=4,
    )
)
def test_split_cvs_faq_property(
    categories: list[list[tuple[list[str], list[str], int, bool, bool]]],
) -> None:
    """Random categories of random entries, some questions wrapped or cut mid-sentence,
    some unanswered, some without their date line: one question per answered entry, in
    order, each answer its text, in the page, no question's word left in it, ids unique."""
    lines: list[str] = []
    expected: list[tuple[str, str]] = []
    for c, entries in enumerate(categories):
        lines += [f"  Category: /Cat{c}/", "  ", f'          " + Title {c}"', ""]
        for k, (qwords, awords, cut, dated, broken) in enumerate(entries):
            words = [f"entry{c}x{k}", *qwords]
            question = " ".join(words) + ("" if broken else "?")
            first, rest = words[:cut], words[cut:]
            if broken and rest:
                lines.append(f"    {k + 1}. " + " ".join(first) + " ")
                lines += ["    ", "   " + " ".join(rest) + "?", "   "]
                question += "?"
            else:
                lines.append(f"    {k + 1}. " + " ".join(first) + ("" if rest else "?") + " ")
                if rest:
                    lines.append("    " + " ".join(rest) + "? ")
                lines.append("    ")
                question = " ".join(words) + "?"
            if awords:
                lines.append("   " + " ".join(["Answer", *awords[:5]]))
                if awords[5:]:
                    lines.append("        " + " ".join(awords[5:]))
                answer = " ".join(["Answer", *awords[:5]])
                if awords[5:]:
                    answer += "\n     " + " ".join(awords[5:])
                expected.append((question, answer))
            lines.append("   ")
            if dated:
                lines += ["   Last modified: _6/13/1997_", "   "]
    page, qa = ns.split_cvs_faq("\n".join(lines))
    assert [(q, a) for _, q, a in qa] == expected
    assert len({k for k, _, _ in qa}) == len(qa)
    for _, _, a in qa:
        assert a in page
    assert not re.search(r"entry\d+x\d+", page)


# -- the set, built from a package tree shaped like Debian's cvs ---------------------------

INFO = f"""This is cvs.info, produced by makeinfo version 6.8 from cvs.texinfo.

\x1f
File: cvs.info,  Node: Top,  Next: Overview,  Up: (dir)

CVS--Concurrent Versions System v1.12.13
****************************************

This info manual describes how to use and administer CVS.

* Menu:

* Overview::                    An introduction to CVS.

\x1f
File: cvs.info,  Node: Overview,  Up: Top

1 Overview
**********

CVS is a version control system.  {Q_EXPORT} Exporting leaves out the CVS
directories.
"""


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.CVS_PACKAGE, "2:1.12.13+real-28")
    doc: Path = root / ns.CVS_DOC
    write_gz(doc / ns.CVS_FAQ, faq + "In CVSROOT, make `history\xb4 group writable.\n", "latin-1")
    write_gz(root / ns.CVS_INFO, INFO)
    write_gz(doc / "README.gz", f"CVS is a version control system.\n{Q_BRANCH} See the manual.\n")
    (doc / "intro.txt").write_text("INTRODUCTION TO USING CVS\n\n    CVS lets groups work.\n")
    write_gz(doc / "BUGS.gz", "Known bugs: none that matter here.\n")
    (doc / "MINOR-BUGS").write_text("Minor bugs: a few.\n")
    for skipped in ("NEWS.gz", "changelog.gz", "TODO.gz", "HACKING.gz", "cvsclient.txt.gz"):
        write_gz(doc / skipped, "left out\n")
    (doc / "cvs.html").write_text("<p>the manual again</p>\n")
    write_gz(
        root / "usr/share/man/man5/cvs.5.gz",
        ".TH cvs 5\n.SH NAME\ncvs \\- Concurrent Versions System support files\n",
    )
    write_gz(
        root / "usr/share/man/man1/cvs-switchroot.1.gz",
        ".TH CVS-SWITCHROOT 1\n.SH NAME\ncvs-switchroot \\- change the CVS root\n",
    )
    write_gz(root / "usr/share/man/man1/cvs.1.gz", ".TH CVS 1\n.SH NAME\ncvs \\- the commands\n")
    return doc


def test_cvs_faq_set_from_a_package_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _package(tmp_path, monkeypatch)
    nset = ns.cvs_faq_set()
    assert [q.qid for q in nset.questions] == [f"cvs-faq:{k}" for k in ANSWERS]
    assert nset.left_out == ()
    assert set(nset.files) == {
        "FAQ",
        "manual/00-cvs-concurrent-versions-system-v1-12-13.md",
        "manual/01-1-overview.md",
        "README",
        "intro.txt",
        "BUGS",
        "MINOR-BUGS",
        "man/cvs.5.md",
        "man/cvs-switchroot.1.md",
    }
    nsc.assert_questions_out_answers_in(nset, ANSWERS)
    # the manual and the README quoting a question: scrubbed, their other text kept
    assert "Exporting leaves out the CVS" in nset.files["manual/01-1-overview.md"]
    assert "See the manual." in nset.files["README"]
    # the FAQ read as latin-1 (its one 0xb4 byte)
    assert "`history\xb4 group writable" in nset.files["FAQ"]
    nsc.assert_files_as_written(nset)
    assert "2:1.12.13+real-28" in nset.note and "2 chapter files" in nset.note
    assert "README, intro.txt, BUGS, MINOR-BUGS, cvs.5, cvs-switchroot.1" in nset.note
    nsc.assert_held_out("cvs-faq")


def test_cvs_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    faq = FAQ.replace(
        "   This error appears when you run an RCS command on a file another\n"
        "   process has locked; wait and retry.\n",
        "   Wait and retry.\n",
    )
    _package(tmp_path, monkeypatch, faq)
    nset = ns.cvs_faq_set()
    nsc.assert_left_out(nset, Q_INUSE, len(ASKED) - 1)  # scrubbed all the same


def test_no_question_text_is_left_in_any_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The leak check on the set finds no copy, and finds every question in the FAQ as
    shipped (wrapped and cut questions included: it could fail)."""
    _package(tmp_path, monkeypatch)
    nset = ns.cvs_faq_set()
    asked = [q.text for q in nset.questions] + list(nset.left_out)
    assert sorted(asked) == sorted(ASKED)
    assert cql.find_leaks(nset.files, asked, False) == []
    shipped = cql.find_leaks({"FAQ": FAQ}, asked, True)
    assert {lk.question for lk in shipped if lk.kind == "exact"} == set(ASKED)


def test_cvs_faq_set_halves_are_fixed_and_disjoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = _package(tmp_path, monkeypatch)
    first, dev, test = nsc.halves_of(ns.cvs_faq_set)
    more = FAQ.replace(
        "  Category: /Commands_/log_lo_rlog/\n",
        "    4. How do I tag a whole tree? \n    \n   Run cvs tag with the tag's name at "
        "the top of the tree.\n   \n   Last modified: _6/13/1997_\n   \n"
        "  Category: /Commands_/log_lo_rlog/\n",
    )
    write_gz(doc / ns.CVS_FAQ, more, "latin-1")
    nsc.assert_halves_kept(ns.cvs_faq_set, first, dev, test)


def test_cvs_faq_set_refuses_a_package_without_the_faq(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = _package(tmp_path, monkeypatch)
    (doc / ns.CVS_FAQ).unlink()
    with pytest.raises(FileNotFoundError, match=re.escape("no FAQ.gz under")):
        ns.cvs_faq_set()
