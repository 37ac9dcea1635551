"""The ``flex-faq`` natural-question set (``bench/natural_sets.py``), its reading of the
flex manual's FAQ chapter and the question-leak check (``bench/check_question_leaks.py``) on
a small inline manual shaped like Debian's ``flex`` ships it (makeinfo's Info split in two
parts, ``flex.info-1.gz`` and ``flex.info-2.gz``, beside ``flex.info.gz`` holding the
indirect and tag tables: a licence preamble, ``\\x1f``-separated nodes with ``File:
flex.info,  Node: ...`` lines, menus, numbered chapters underlined by ``*`` with numbered
sections, the unnumbered "FAQ" chapter whose unnumbered sections are titled by a user's
question or complaint, placeholder sections named "deleteme00" / "unnamed-faq-62" holding
mail threads, an unanswered section, an appendix, the "Indices" menu node and an index node
with makeinfo's ``[index]`` marker) in a package tree laid out as the package unpacks (the
README, flex(1), the files left out; marker present, nothing downloaded); offline, no
embedding model, no test reads the real package.

What the set's numbers rest on: no question's text is left in any file (the FAQ's headings,
a placeholder's mail quoting one, the README quoting one); each answer is exactly the text
under its section up to the next heading; a placeholder section asks nothing and keeps its
heading and text; a numbered section of another chapter is never asked; ids are the
question's slug, so an added section keeps the halves; an answer too short to judge leaves
the set but not the corpus's scrubbing.
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

Q_BORN = "When was flex born?"
Q_BAR = "The | operator is not doing what I want"
Q_UNPUT = "unput() messes up yy_at_bol"
Q_COMMENTS = "How can I match C-style comments?"
ASKED = (Q_BORN, Q_BAR, Q_UNPUT, Q_COMMENTS)
PLACEHOLDERS = ("deleteme00", "unnamed-faq-62")

PREAMBLE = """This is flex.info, produced by makeinfo version 6.8 from flex.texi.

The flex manual is placed under the same licensing conditions as the
rest of flex.
INFO-DIR-SECTION Programming
START-INFO-DIR-ENTRY
* flex: (flex).      Fast lexical analyzer generator (lex replacement).
END-INFO-DIR-ENTRY

"""

PART_1 = f"""{PREAMBLE}\x1f
File: flex.info,  Node: Top,  Next: Copyright,  Prev: (dir),  Up: (dir)

flex
****

This manual describes 'flex', a tool for generating programs that
perform pattern-matching on text.

* Menu:

* Copyright::
* Format::
* FAQ::
* Appendices::
* Indices::

\x1f
File: flex.info,  Node: Copyright,  Next: Format,  Prev: Top,  Up: Top

1 Copyright
***********

Redistribution and use in source and binary forms, with or without
modification, are permitted.

\x1f
File: flex.info,  Node: Format,  Next: FAQ,  Prev: Copyright,  Up: Top

5 Format of the Input File
**************************

The 'flex' input file consists of three sections, separated by a line
containing only '%%'.

* Menu:

* Definitions Section::
* Matching::

\x1f
File: flex.info,  Node: Definitions Section,  Next: Matching,  Up: Format

5.1 Format of the Definitions Section
=====================================

The "definitions section" contains declarations of simple "name"
definitions to simplify the scanner specification.

\x1f
File: flex.info,  Node: Matching,  Prev: Definitions Section,  Up: Format

5.2 How is the input matched?
=============================

When the generated scanner is run, it analyzes its input looking for
strings which match any of its patterns.

"""

PART_2 = f"""{PREAMBLE}\x1f
File: flex.info,  Node: FAQ,  Next: Appendices,  Prev: Format,  Up: Top

FAQ
***

From time to time, the 'flex' maintainer receives certain questions.
Rather than repeat answers to well-understood problems, we publish them
here.

* Menu:

* When was flex born?::
* The | operator is not doing what I want::
* deleteme00::
* unput() messes up yy_at_bol::
* Is this section unanswered?::
* unnamed-faq-62::
* How can I match C-style comments?::

\x1f
File: flex.info,  Node: When was flex born?,  Next: The | operator is not doing what I want

{Q_BORN}
===

Vern Paxson took over the 'Software Tools' lex project from Jef
Poskanzer in 1982.  At that point it was written in Ratfor.

\x1f
File: flex.info,  Node: The | operator is not doing what I want,  Next: deleteme00,  Up: FAQ

{Q_BAR}
===

     To: Alain.ISSARD@st.com
     Subject: Re: Start conditions
     From: Vern Paxson <vern>

     > I want to write a rule like A|B with a start condition.

     The '|' action means "same as the action for the next rule".

     \t\tVern

\x1f
File: flex.info,  Node: deleteme00,  Next: unput() messes up yy_at_bol,  Up: FAQ

deleteme00
===

     QUESTION:
     {Q_BORN}

     Vern Paxson took over
     the Software Tools lex project in 1982.

\x1f
File: flex.info,  Node: unput() messes up yy_at_bol,  Next: Is this section unanswered?,  Up: FAQ

{Q_UNPUT}
===

     > The problem is that unput() does not set yy_at_bol.

     This is a known bug; unput() of a newline should set it.

\x1f
File: flex.info,  Node: Is this section unanswered?,  Next: unnamed-faq-62,  Up: FAQ

Is this section unanswered?
===

\x1f
File: flex.info,  Node: unnamed-faq-62,  Next: How can I match C-style comments?,  Up: FAQ

unnamed-faq-62
===

     Subject: Re: Flex maximums
     The things to fix are to add a couple of zeroes to MAXIMUM_MNS.

\x1f
File: flex.info,  Node: How can I match C-style comments?,  Prev: unnamed-faq-62,  Up: FAQ

{Q_COMMENTS}
===

You might be tempted to try something like this:

     "/*".*"*/"       // WRONG!

   Use start conditions instead.

\x1f
File: flex.info,  Node: Appendices,  Next: Indices,  Prev: FAQ,  Up: Top

Appendix A Appendices
*********************

A.1 Makefiles and Flex
======================

Here we present a few suggestions for using flex with Make.

\x1f
File: flex.info,  Node: Indices,  Prev: Appendices,  Up: Top

Indices
*******

* Menu:

* Concept Index::

\x1f
File: flex.info,  Node: Concept Index,  Up: Indices

Concept Index
=============

\x00\x08[index\x00\x08]
* Menu:

* comments, matching:                    How can I match C-style comments?.
                                                               (line 6)

\x1f
Tag Table:
Node: Top\x7f200
\x1f
End Tag Table
"""


PART_1 = nsc.info_underlined(PART_1)
PART_2 = nsc.info_underlined(PART_2)
INDIRECT = f"{PREAMBLE}\x1f\nIndirect:\nflex.info-1: 1622\nflex.info-2: 9000\n\x1f\nTag Table:\n"
ANSWERS = {
    "when-was-flex-born": (
        "Vern Paxson took over the 'Software Tools' lex project from Jef\n"
        "Poskanzer in 1982.  At that point it was written in Ratfor."
    ),
    "the-operator-is-not-doing-what-i-want": (
        "To: Alain.ISSARD@st.com\n"
        "     Subject: Re: Start conditions\n"
        "     From: Vern Paxson <vern>\n\n"
        "     > I want to write a rule like A|B with a start condition.\n\n"
        "     The '|' action means \"same as the action for the next rule\".\n\n"
        "     \t\tVern"
    ),
    "unput-messes-up-yy-at-bol": (
        "> The problem is that unput() does not set yy_at_bol.\n\n"
        "     This is a known bug; unput() of a newline should set it."
    ),
    "how-can-i-match-c-style-comments": (
        "You might be tempted to try something like this:\n\n"
        '     "/*".*"*/"       // WRONG!\n\n'
        "   Use start conditions instead."
    ),
}
MANUAL_FILES = {
    "flex/00-flex.md",
    "flex/02-5-format-of-the-input-file.md",
    "flex/03-faq.md",
    "flex/04-appendix-a-appendices.md",
}
INFO_DIR = "usr/share/info"


def _markdown() -> str:
    return ns.info_markdown(PART_1 + PART_2)


def test_split_flex_manual_questions_answers_and_placeholders() -> None:
    files, qa, kept, left = ns.split_flex_manual(_markdown())
    assert [q for q, _ in qa] == list(ASKED)
    assert [a for _, a in qa] == list(ANSWERS.values())
    assert {f"flex/{rel}" for rel in files} == MANUAL_FILES  # "Indices" is a menu: no file
    assert left == ["1 Copyright"]
    assert kept == list(PLACEHOLDERS)
    text = "\n".join(files.values())
    assert "Redistribution and use" not in text  # the licence chapter left out
    for q, a in qa:
        assert a in files["03-faq.md"]
        assert f"### {q}" not in text  # (deleteme00 quotes one: the set's scrub takes it)
    # menus, node lines, the index node and the tag table are gone
    assert "* Menu:" not in text and "Node:" not in text and "line 6" not in text
    # the placeholders keep their headings and their mail, which is in no answer
    faq = files["03-faq.md"]
    assert faq.startswith("## FAQ\n") and "maintainer receives certain questions" in faq
    assert "### deleteme00" in faq and "### unnamed-faq-62" in faq
    assert "add a couple of zeroes" in faq
    assert all("zeroes" not in a and "QUESTION:" not in a for _, a in qa)
    # the unanswered section asks nothing and leaves the corpus
    assert "unanswered" not in text
    # a numbered section of another chapter titled as a question is the manual's, not asked
    assert "### 5.2 How is the input matched?" in files["02-5-format-of-the-input-file.md"]
    assert "### A.1 Makefiles and Flex" in files["04-appendix-a-appendices.md"]


def test_split_flex_manual_asks_in_the_faq_chapter_alone() -> None:
    """An FAQ-titled section outside the chapter titled "FAQ" stays a heading; the chapter
    of another title with question sections asks nothing."""
    moved = _markdown().replace("## FAQ\n", "## Questions\n", 1)
    files, qa, kept, _ = ns.split_flex_manual(moved)
    assert qa == [] and kept == []
    assert f"### {Q_BORN}" in "\n".join(files.values())


_WORD = st.sampled_from(["scanner", "rule", "pattern", "state", "buffer", "token", "yytext"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(_WORD, min_size=0, max_size=8),  # the title's words after the tag
            st.lists(_WORD, min_size=0, max_size=15),  # the answer's words (may be none)
            st.booleans(),  # the title ends with "?"
        ),
        max_size=8,
    )
)
def test_split_flex_manual_property(sections: list[tuple[list[str], list[str], bool]]) -> None:
    """A random FAQ chapter of sections, some titled by one word (a placeholder), some
    unanswered: one question per answered section whose title asks, in order, its answer the
    text under it and in the chapter; no asked title's tag left; a placeholder's heading and
    text kept."""
    nodes = ["Preamble.\n", "File: flex.info,  Node: Top,  Up: (dir)\n\nflex\n****\n"]
    nodes.append("File: flex.info,  Node: FAQ,  Up: Top\n\nFAQ\n***\n\nQuestions we get.\n")
    expected: list[tuple[str, str]] = []
    placeholders: list[str] = []
    for k, (words, answer, asked) in enumerate(sections, start=1):
        title = " ".join([f"title{k}", *words]) + ("?" if asked else "")
        body = " ".join(["Answer", *answer]) if answer else ""
        nodes.append(
            f"File: flex.info,  Node: S{k},  Up: FAQ\n\n{title}\n{'=' * len(title)}\n\n{body}\n"
        )
        if not ns.emacs_faq_asks(title):
            placeholders.append(title)
        elif body:
            expected.append((title, body))
    files, qa, kept, _ = ns.split_flex_manual(ns.info_markdown("\x1f\n".join(nodes)))
    assert qa == expected
    assert kept == placeholders
    text = "\n".join(files.values())
    for _, a in qa:
        assert a in text
    for title in placeholders:
        assert f"### {title}" in text
    assert set(re.findall(r"title\d+", text)) == {t.split()[0] for t in placeholders}


# -- the set, built from a package tree shaped like Debian's flex ----------------------------


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, part_2: str = PART_2) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.FLEX_PACKAGE, "2.6.4-8.2")
    info = root / INFO_DIR
    write_gz(info / "flex.info.gz", INDIRECT)
    write_gz(info / "flex.info-1.gz", PART_1)
    write_gz(info / "flex.info-2.gz", part_2)
    doc = root / ns.FLEX_DOC
    write_gz(
        doc / "README.md.gz",
        f"This is flex, the fast lexical analyzer generator.\n\n{Q_COMMENTS} See the FAQ.\n",
    )
    for skipped in ("NEWS.gz", "ONEWS.gz", "NEWS.Debian.gz", "ABOUT-NLS.gz", "changelog.gz"):
        write_gz(doc / skipped, "left out\n")
    for skipped in ("AUTHORS", "THANKS", "copyright", "examples/manual/wc.lex"):
        _write(doc / skipped, "left out\n")
    write_gz(
        root / "usr/share/man/man1/flex.1.gz",
        ".TH FLEX 1\n.SH NAME\nflex \\- the fast lexical analyser generator\n"
        f".SH DESCRIPTION\n{Q_UNPUT}: read the manual.\n",
    )
    return root


def test_flex_faq_set_from_a_package_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _package(tmp_path, monkeypatch)
    nset = ns.flex_faq_set()
    assert [q.qid for q in nset.questions] == [f"flex-faq:{k}" for k in ANSWERS]
    assert nset.left_out == ()
    assert set(nset.files) == MANUAL_FILES | {"README.md", "man/flex.1.md"}
    corpus = nsc.flat(" ".join(nset.files.values()))
    for q in nset.questions:
        assert nsc.flat(q.text) not in corpus
        assert q.answers[0][0] in nset.files[q.source]
        assert q.answers[0][0] == ANSWERS[q.qid.removeprefix("flex-faq:")]
        assert q.source == "flex/03-faq.md"
    # the placeholder quoting a question, the README and the man page: scrubbed, text kept
    assert "QUESTION:" in nset.files["flex/03-faq.md"]
    assert "the Software Tools lex project in 1982" in nset.files["flex/03-faq.md"]
    assert "See the FAQ." in nset.files["README.md"]
    assert "read the manual." in nset.files["man/flex.1.md"]
    nsc.assert_files_as_written(nset)
    assert "2.6.4-8.2" in nset.note and "4 chapter files" in nset.note
    assert "left out: 1 Copyright" in nset.note and "(README.md, flex.1)" in nset.note
    assert "2 placeholder sections" in nset.note
    nsc.assert_held_out("flex-faq")


def test_flex_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    part_2 = PART_2.replace(
        "     > The problem is that unput() does not set yy_at_bol.\n\n"
        "     This is a known bug; unput() of a newline should set it.\n",
        "     A known bug.\n",
    )
    _package(tmp_path, monkeypatch, part_2)
    nset = ns.flex_faq_set()
    nsc.assert_left_out(nset, Q_UNPUT, len(ASKED) - 1)  # scrubbed all the same


def test_no_question_text_is_left_in_any_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The leak check on the set finds no copy, and finds every question in the Info as
    shipped (it could fail)."""
    _package(tmp_path, monkeypatch)
    nset = ns.flex_faq_set()
    asked = [q.text for q in nset.questions] + list(nset.left_out)
    assert sorted(asked) == sorted(ASKED)
    assert cql.find_leaks(nset.files, asked, False) == []
    shipped = cql.find_leaks({"flex.info-2": PART_2}, asked, False)
    assert {lk.question for lk in shipped if lk.kind == "exact"} == set(ASKED)


def test_flex_faq_set_halves_are_fixed_and_disjoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _package(tmp_path, monkeypatch)
    first, dev, test = nsc.halves_of(ns.flex_faq_set)
    # a section added at the head of the FAQ: the ids of the others stay
    more = PART_2.replace(
        "\x1f\nFile: flex.info,  Node: When was flex born?,",
        "\x1f\nFile: flex.info,  Node: New entry,  Up: FAQ\n\n"
        "How do I count lines with flex?\n===============================\n\n"
        "Use the '%option yylineno' option and read 'yylineno'.\n\n"
        "\x1f\nFile: flex.info,  Node: When was flex born?,",
    )
    write_gz(root / INFO_DIR / "flex.info-2.gz", nsc.info_underlined(more))
    nsc.assert_halves_kept(ns.flex_faq_set, first, dev, test)


def test_flex_faq_set_refuses_a_package_without_the_info(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _package(tmp_path, monkeypatch)
    for part in (root / INFO_DIR).glob("flex.info-*.gz"):
        part.unlink()
    with pytest.raises(FileNotFoundError, match=re.escape("no flex.info-*.gz under")):
        ns.flex_faq_set()
