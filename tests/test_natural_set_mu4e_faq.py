"""The ``mu4e-faq`` natural-question set (``bench/natural_sets.py``), its reading of the mu4e
manual's FAQ appendix and the question-leak check (``bench/check_question_leaks.py``) on a
small inline ``mu4e.info`` shaped as Debian's ``mu4e`` ships it (makeinfo's Info: a
preamble, ``\\x1f``-separated nodes with ``File: mu4e.info,  Node: ...`` lines, menus,
chapters and appendices underlined by ``*``, the FAQ appendix's group sections by ``=`` in
their own nodes, its numbered entries by ``-`` inside them, an entry that is a bare
cross-reference, stated problems, the licence appendix, an index node with makeinfo's
``[index]`` marker, the tag table) in a package tree laid out as the package unpacks (marker
present, nothing downloaded); offline, no embedding model, no test reads the real package.

What the set's numbers rest on: no question's text is left in any file (the FAQ's headings,
or a chapter of the manual quoting one); each answer is exactly the text under its entry up
to the next; the section number is not part of the question; group titles and stated
problems ask nothing and keep their headings; ids are the question's slug, so an added
entry keeps the halves; an answer too short to judge leaves the set but not the corpus's
scrubbing.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import natural_set_checks as nsc
import natural_sets as ns
from debian_package_double import unpacked_package, write_gz

Q_DIFFER = "Results from mu and mu4e differ - why?"
Q_COUNTS = (
    "The unread/all counts in the main-screen differ from the ’real’ numbers - what’s going on?"
)
Q_DEFAULT = "How can I set mu4e as the default e-mail client in Emacs?"
Q_COMMAND = (
    "Getting mail through a local mailserver. What should I use for ‘mu4e-get-mail-command’?"
)
Q_SIGN = "How can I sign or encrypt messages?"
ASKED = (Q_DIFFER, Q_COUNTS, Q_DEFAULT, Q_COMMAND, Q_SIGN)
STATED = "C.2.2 IMAP-synchronization and file-name changes"
"""An entry titled by a stated problem: no "?", so it asks nothing and stays a heading."""

INFO = f"""This is mu4e.info, produced by makeinfo version 6.8 from mu4e.texi.

Copyright © 2012-2022 Dirk-Jan C. Binnema
INFO-DIR-SECTION Emacs
START-INFO-DIR-ENTRY
* Mu4e: (Mu4e).  An email client for GNU Emacs.
END-INFO-DIR-ENTRY

\x1f
File: mu4e.info,  Node: Top,  Next: Introduction,  Up: (dir)

mu4e manual
***********

Welcome to mu4e 1.8.13.

* Menu:

* Introduction::
* Searching::
* FAQ::
* GNU Free Documentation License::
* Concept Index::

\x1f
File: mu4e.info,  Node: Introduction,  Next: Searching,  Up: Top

1 Introduction
**************

mu4e is an e-mail client for GNU Emacs, built on top of the mu e-mail
search engine.

\x1f
File: mu4e.info,  Node: Searching,  Next: FAQ,  Up: Top

7 Searching
***********

mu4e is fully search-based.  People ask: {Q_DIFFER} See the FAQ for
the usual reasons; queries are passed to mu's query parser.

\x1f
File: mu4e.info,  Node: FAQ,  Next: GNU Free Documentation License,  Up: Top

Appendix C FAQ — Frequently Asked Questions
*******************************************

In this chapter we list a number of actual and anticipated questions and
their answers.

* Menu:

* General::General questions and answers about mu4e
* Retrieving mail::Getting mail and indexing

\x1f
File: mu4e.info,  Node: General,  Next: Retrieving mail,  Up: FAQ

C.1 General
===========

C.1.1 {Q_DIFFER}
--------------------------------------------

In general, the same queries for ‘mu’ and mu4e should yield the same
results.
   • different options: mu4e defaults to having
     mu4e-headers-include-related.

C.1.2 {Q_COUNTS}
------------------------------------------------------------------------------------------------

For speed reasons, the counts do not exclude messages that no longer
exist in the file-system; *Note mu-mu4e-differ::.

C.1.3 {Q_DEFAULT}
---------------------------------------------------------------

See *note Emacs default::.

\x1f
File: mu4e.info,  Node: Retrieving mail,  Next: GNU Free Documentation License,  Up: FAQ

C.2 Retrieving mail
===================

C.2.1 {Q_COMMAND}
---------------------------------------------------------------------------------------------

Basically, if you can run ‘fetchmail’ as a command, you can use it:

     (setq mu4e-get-mail-command "fetchmail -v")

{STATED}
------------------------------------------------

Some IMAP-synchronization programs such as ‘mbsync’ don’t like it when
message files do not change their names when they are moved.

C.2.3 {Q_SIGN}
------------------------------------------

Signing and encrypting of messages is possible using *note (emacs-mime)::.
     (mml-secure-message-sign-pgpmime)

\x1f
File: mu4e.info,  Node: GNU Free Documentation License,  Prev: FAQ,  Up: Top

Appendix G GNU Free Documentation License
*****************************************

                     Version 1.3, 3 November 2008

     Everyone is permitted to copy and distribute verbatim copies.

\x1f
File: mu4e.info,  Node: Concept Index,  Up: Top

Concept Index
*************

\x00\x08[index\x00\x08]
* Menu:

* mu4e-get-mail-command:                 Retrieving mail.    (line 6)

\x1f
Tag Table:
Node: Top\x7f200
Node: FAQ\x7f400
\x1f
End Tag Table


\x1f
Local Variables:
coding: utf-8
End:
"""


INFO = nsc.info_underlined(INFO)
FAQ_FILE = "mu4e/03-appendix-c-faq-frequently-asked-question.md"
FILES = {
    "mu4e/00-mu4e-manual.md",
    "mu4e/01-1-introduction.md",
    "mu4e/02-7-searching.md",
    FAQ_FILE,
}
"""The licence appendix and the index node are not in the corpus."""
ANSWERS = {
    "results-from-mu-and-mu4e-differ-why": (
        "In general, the same queries for ‘mu’ and mu4e should yield the same\n"
        "results.\n"
        "   • different options: mu4e defaults to having\n"
        "     mu4e-headers-include-related."
    ),
    "the-unread-all-counts-in-the-main-screen": (
        "For speed reasons, the counts do not exclude messages that no longer\n"
        "exist in the file-system; *Note mu-mu4e-differ::."
    ),
    "getting-mail-through-a-local-mailserver-": (
        "Basically, if you can run ‘fetchmail’ as a command, you can use it:\n\n"
        '     (setq mu4e-get-mail-command "fetchmail -v")'
    ),
    "how-can-i-sign-or-encrypt-messages": (
        "Signing and encrypting of messages is possible using *note (emacs-mime)::.\n"
        "     (mml-secure-message-sign-pgpmime)"
    ),
}
SHORT_ID = "how-can-i-set-mu4e-as-the-default-e-mail"
"""C.1.3: a bare cross-reference ("See *note Emacs default::."), under
``MIN_ANSWER_WORDS`` words: asked, scrubbed, left out of the judged set."""


def test_split_info_faq_chapter_questions_answers_and_headings() -> None:
    chapters, _ = ns.split_texinfo_chapters(ns.info_markdown(INFO))
    assert {f"mu4e/{rel}" for rel in chapters} == FILES | {
        "mu4e/04-appendix-g-gnu-free-documentation-licens.md"
    }  # the index node dropped; the licence is left out by the set, not the reading
    page, qa = ns.split_info_faq_chapter(chapters[FAQ_FILE.removeprefix("mu4e/")])
    assert [q for _, q, _ in qa] == list(ASKED)  # the section numbers gone
    assert {k: a for k, _, a in qa} == {**ANSWERS, SHORT_ID: "See *note Emacs default::."}
    nsc.assert_page_keeps_answers(qa, page)
    assert "C.1.1" not in page and "C.2.3" not in page
    # group titles, a stated problem and the chapter's own text stay, asking nothing
    assert "## Appendix C FAQ — Frequently Asked Questions" in page
    assert "### C.1 General" in page and "### C.2 Retrieving mail" in page
    assert f"#### {STATED}" in page and "don’t like it when" in page
    assert "In this chapter we list" in page
    assert "* Menu:" not in page and "Node:" not in page
    # the stated problem's text is in no answer: the entry above ends at its heading
    assert all("IMAP-synchronization" not in a for _, _, a in qa)


def test_texi_title_plain_takes_off_the_section_number_only() -> None:
    assert ns._texi_title_plain("C.1.12 Why ‘C.1’?") == "Why ‘C.1’?"
    assert ns._texi_title_plain("4.2  How do I `search`?") == "How do I search?"
    assert ns._texi_title_plain("C.5 Known issues") == "Known issues"
    assert ns._texi_title_plain("Appendix C FAQ") == "Appendix C FAQ"  # no number
    assert ns._texi_title_plain("1.8.13 is out?") == "is out?"
    assert ns._texi_title_plain("2022 in review?") == "2022 in review?"  # a year, no dot


_WORD = st.sampled_from(["mail", "index", "header", "thread", "draft", "query", "mark"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(
            st.tuples(
                st.lists(_WORD, min_size=0, max_size=8),  # the title's words after the marker
                st.lists(_WORD, min_size=0, max_size=12),  # the answer's words (may be none)
                st.booleans(),  # the title ends with "?"
            ),
            max_size=4,
        ),
        min_size=1,
        max_size=4,
    )
)
def test_split_info_faq_chapter_property(
    groups: list[list[tuple[list[str], list[str], bool]]],
) -> None:
    """Random groups (``C.N`` nodes, no text of their own) of random entries (``C.N.M``),
    asked or stated, answered or not: exactly one (slug, question, answer) per answered
    entry whose title ends with "?", in order; no asked title left in the chapter; every
    group title and every entry that asks nothing kept as a heading."""
    nodes = [
        "Preamble.\n",
        "File: mu4e.info,  Node: FAQ,  Up: Top\n\nAppendix C FAQ\n**************\n\n"
        "In this chapter we list questions.\n",
    ]
    expected: list[tuple[str, str, str]] = []
    kept: list[str] = []
    for g, entries in enumerate(groups, start=1):
        group = f"C.{g} Group{g}"
        body = [f"File: mu4e.info,  Node: G{g},  Up: FAQ\n\n{group}\n{'=' * len(group)}\n"]
        kept.append(f"### {group}")
        for k, (words, answer, asked) in enumerate(entries, start=1):
            title = " ".join([f"entry{g}x{k}", *words]) + ("?" if asked else "")
            line = f"C.{g}.{k} {title}"
            text = " ".join(["Answer", *answer]) if answer else ""
            body.append(f"{line}\n{'-' * len(line)}\n\n{text}\n")
            if asked and text:
                expected.append((ns._slug(title), title, text))
            else:
                kept.append(f"#### {line}")
        nodes.append("\n".join(body))
    chapters, _ = ns.split_texinfo_chapters(ns.info_markdown("\x1f\n".join(nodes)))
    page, qa = ns.split_info_faq_chapter(chapters["00-appendix-c-faq.md"])
    assert [(q, a) for _, q, a in qa] == [(q, a) for _, q, a in expected]
    assert len({k for k, _, _ in qa}) == len(qa)  # a repeated slug told apart
    for _, q, a in qa:
        assert a in page and q not in page
    for heading in kept:
        assert heading in page
    left = set(re.findall(r"entry\d+x\d+", page))
    assert left == {m.group() for h in kept if (m := re.search(r"entry\d+x\d+", h))}


# -- the set, built from a package tree shaped like Debian's mu4e ----------------------------


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, info: str = INFO) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.MU4E_PACKAGE, "1.8.14-1")
    write_gz(root / ns.MU4E_DOC / ns.MU4E_INFO, info)
    doc = root / "usr/share/doc/mu4e"
    write_gz(doc / "changelog.Debian.gz", "left out\n")
    write_gz(doc / "NEWS.Debian.gz", "left out\n")
    (doc / "copyright").write_text("left out\n", encoding="utf-8")
    (root / "usr/share/emacs/site-lisp/elpa-src/mu4e-1.8.14").mkdir(parents=True)
    (root / "usr/share/emacs/site-lisp/elpa-src/mu4e-1.8.14/mu4e.el").write_text(
        ";; left out\n", encoding="utf-8"
    )
    return root


def test_mu4e_faq_set_from_a_package_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _package(tmp_path, monkeypatch)
    nset = ns.mu4e_faq_set()
    assert nset.name == "mu4e-faq"
    assert [q.qid for q in nset.questions] == [f"mu4e-faq:{k}" for k in ANSWERS]
    assert set(nset.files) == FILES
    nsc.assert_questions_out_answers_in(nset, ANSWERS)
    assert {q.source for q in nset.questions} == {FAQ_FILE}
    nsc.assert_files_as_written(nset)
    # a manual chapter quoting a question: scrubbed, its other text kept
    searching = nset.files["mu4e/02-7-searching.md"]
    assert "mu4e is fully search-based.  People ask:" in searching
    assert "See the FAQ for\nthe usual reasons" in searching
    # the bare cross-reference: asked and scrubbed, not judged, named in the note
    nsc.assert_left_out(nset, Q_DEFAULT, len(ANSWERS))
    assert "1.8.14-1" in nset.note and FAQ_FILE in nset.note
    assert "5 questions deleted" in nset.note and "3 files" in nset.note
    assert "left out: Appendix G GNU Free Documentation License" in nset.note
    assert "Version 1.3" not in " ".join(nset.files.values())
    nsc.assert_held_out("mu4e-faq")


def test_no_question_text_is_left_in_any_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The leak check on the set finds no copy, and finds every question in the manual as
    shipped (it could fail)."""
    _package(tmp_path, monkeypatch)
    nset = ns.mu4e_faq_set()
    nsc.assert_leak_checked(nset, {"mu4e.info": INFO}, ASKED)


def test_mu4e_faq_set_halves_are_fixed_and_disjoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _package(tmp_path, monkeypatch)

    def add_question() -> None:  # an entry at the group's head renumbers the others
        more = INFO.replace(
            f"C.1.1 {Q_DIFFER}",
            "C.1.1 Can I start mu4e in the background?\n-\n\n"
            "Yes: call mu4e with a prefix argument and it starts quietly.\n\n"
            f"C.1.2 {Q_DIFFER}",
        ).replace(f"C.1.2 {Q_COUNTS}", f"C.1.3 {Q_COUNTS}")
        write_gz(root / ns.MU4E_DOC / ns.MU4E_INFO, nsc.info_underlined(more))

    nsc.assert_halves_survive_an_added_question(ns.mu4e_faq_set, add_question)


def test_mu4e_faq_set_refuses_a_package_without_the_manual_or_its_faq(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _package(tmp_path, monkeypatch)
    write_gz(
        root / ns.MU4E_DOC / ns.MU4E_INFO,
        INFO.replace("Appendix C FAQ — Frequently Asked Questions", ""),
    )
    with pytest.raises(
        FileNotFoundError, match=re.escape("no FAQ chapter in usr/share/info/mu4e.info.gz")
    ):
        ns.mu4e_faq_set()
    (root / ns.MU4E_DOC / ns.MU4E_INFO).unlink()
    nsc.assert_refuses_without_faq(ns.mu4e_faq_set, ns.MU4E_INFO)  # names the file
