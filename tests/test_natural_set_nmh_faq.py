"""The ``nmh-faq`` natural-question set (``bench/natural_sets.py``), its FAQ reader and the
question-leak check (``bench/check_question_leaks.py``) on a small inline FAQ shaped like
Debian's ``nmh`` (``/usr/share/doc/nmh/FAQ.gz``, the comp.mail.mh MH FAQ: a plain-text
Usenet digest; news headers and a preface, then entries after rules of ``-``, each headed
by ``Subject:``, ``From:`` and ``Date:`` lines; the table of contents as an entry; sections
as ``NN.00 ***** Title *****`` entries; questions as ``NN.MM <question>``, some marked
``!``; further contributors' ``From:`` / ``Date:`` lines inside an answer; unnumbered
appendix entries) in a package tree laid out as the package unpacks (notes, man pages
among them ``.so`` aliases and a link, changelogs, ``contrib/``; marker present, nothing
downloaded); offline, no embedding model, no test reads the real package.

What the set's numbers rest on: no question's text is left in any file (its ``Subject:``
line, the table of contents, a note or a man page quoting one); each answer is exactly the
entry's text after its header, up to the next entry, without the contributors' lines; a
section, the preface and the appendix are in no answer; ids are the authors' numbers; an
answer too short to judge leaves the set but not the corpus's scrubbing; the halves hold
when an entry is added.
"""

from __future__ import annotations

import os
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

Q_WHY = "Why should I use MH?"
Q_VERSION = "What is the current version/status of MH."
Q_BUILD = "How can I build MH on Linux?"
Q_FOPEN = 'Fixing "cannot fopen and lock /var/spool/mail/(user)"'
Q_SIGNATURE = "How can I include my signature?"
Q_PROCMAIL = "How do I read new messages filed by procmail?"
ASKED = (Q_WHY, Q_VERSION, Q_BUILD, Q_FOPEN, Q_SIGNATURE, Q_PROCMAIL)
RULE = "-" * 30

FAQ = f"""Newsgroups: comp.mail.mh,comp.answers,news.answers
Subject: MH Frequently Asked Questions (FAQ) with Answers
From: Bill Wohler <wohler@example.org>

  This is a living list of frequently asked questions on MH.

{"-" * 70}

Subject: Table of Contents
From: Bill Wohler <wohler at example.org>
Date: Sat, 3 Mar 2001 11:29:16 -0800

01.00 Introduction

 01.01 {Q_WHY}
!01.02 What is the current version/status of MH?
 02.01 {Q_BUILD}
 03.01 Fixing "cannot fopen and lock
       /var/spool/mail/(user)"

{RULE}

Subject: Viewing This Article
From: Bill Wohler <wohler at example.org>
Date: Mon, 27 Nov 1995 14:44:19 -0800

  This article is in digest format.

{RULE}

Subject: 01.00 ***** Introduction *****
From: Bill Wohler <wohler at example.org>
Date: Fri, 1 Mar 1991 13:03:15 -0800

{RULE}

Subject: 01.01 {Q_WHY}
From: Jerry Peek <jpeek at example.org>
Date: Fri, 1 Mar 1991 13:03:15 -0800

  The MH message handling system is a set of electronic mail programs
  that you use from the shell prompt, each command a program.

{RULE}
{"  "}
Subject: !01.02 {Q_VERSION}
From: Bill Wohler <wohler at example.org>
Date: Sun, 23 Sep 2007 23:51:52 -0700

  The current official version of MH is 6.8.3; nmh carries it on.

{RULE}

Subject: 02.00 ***** Building MH *****
From: Bill Wohler <wohler at example.org>
Date: Fri, 1 Mar 1991 13:03:15 -0800

{RULE}

Subject: 02.01 {Q_BUILD}
From: Richard Coleman <coleman at example.org>,
\tScott Hutton <shutton at example.org>
Date: Tue, 20 Jan 1998 02:19:58 -0500

  Use the configure script that comes with nmh, then make install.

Date: Fri, 1 Jan 1993 00:00:00 -0800

  Older systems need the mh-6.8 Linux patches.

{RULE}

Subject: 02.02 Is this entry unanswered?
From: Bill Wohler <wohler at example.org>
Date: Fri, 1 Mar 1991 13:03:15 -0800

{RULE}

Subject: 03.01 Fixing "cannot fopen and lock
 /var/spool/mail/(user)"
From: Bill Wohler <wohler at example.org>
Date: Fri, 1 Mar 1991 13:03:15 -0800

  The mail spool needs to be writable by inc: make inc setgid mail.
  Quoted from a report:

    From: a user <user at example.org>
    Date: Sat, 23 Oct 99 22:02:01 EST

From: Jerry Peek <jpeek at example.org>
Date: Fri, 1 Jan 1993 00:00:00 -0800

  Or set the MAILDROP variable to a spool you own, and inc from there.
{RULE}

Subject: 05.04 {Q_SIGNATURE}
From: Eric Ziegast <ziegast at example.org>
Date: Fri, 1 Mar 1991 13:03:15 -0800

  There are several ways.

    ~/Mail/components:
\tTo:
\t--
\tEric Ziegast

  Add the signature file to your components.

{RULE}

Subject: +07.07 {Q_PROCMAIL}
From: Bill Wohler <wohler at example.org>
Date: Sun, 23 Sep 2007 23:51:52 -0700

  Use rcvstore as the delivery program in your procmailrc, so the
  folder's unseen sequence is updated.

{RULE}

Subject: Removing duplicate messages (Bourne)
From: Bill Wohler <wohler at example.org>
Date: Fri, 1 Mar 1991 13:03:15 -0800

    #!/bin/sh
    # remove duplicates by Message-ID

Local Variables:
mode: outline
End:
"""
ANSWERS = {
    "01.01": (
        "The MH message handling system is a set of electronic mail programs\n"
        "that you use from the shell prompt, each command a program."
    ),
    "01.02": "The current official version of MH is 6.8.3; nmh carries it on.",
    # a second contributor's Date: line is in the page, in no answer
    "02.01": (
        "Use the configure script that comes with nmh, then make install.\n\n"
        "Older systems need the mh-6.8 Linux patches."
    ),
    # the quoted, indented From:/Date: lines are the answer's; the column-0 ones are not
    "03.01": (
        "The mail spool needs to be writable by inc: make inc setgid mail.\n"
        "Quoted from a report:\n\n"
        "  From: a user <user at example.org>\n"
        "  Date: Sat, 23 Oct 99 22:02:01 EST\n\n"
        "Or set the MAILDROP variable to a spool you own, and inc from there."
    ),
    # tab-indented lines: no common indent, the block stays as written (but its start)
    "05.04": (
        "There are several ways.\n\n"
        "    ~/Mail/components:\n"
        "\tTo:\n"
        "\t--\n"
        "\tEric Ziegast\n\n"
        "  Add the signature file to your components."
    ),
    "07.07": (
        "Use rcvstore as the delivery program in your procmailrc, so the\n"
        "folder's unseen sequence is updated."
    ),
}


def _corpus(files: dict[str, str]) -> str:
    return " ".join(" ".join(files.values()).split()).lower()


def test_split_nmh_faq_questions_answers_and_ids() -> None:
    page, qa = ns.split_nmh_faq(FAQ)
    assert [q for _, q, _ in qa] == list(ASKED)  # marks dropped, the folded Subject whole
    assert {k: a for k, _, a in qa} == ANSWERS
    assert [k for k, _, _ in qa] == list(ANSWERS)  # the authors' numbers
    flat = " ".join(page.split()).lower()
    for _, q, a in qa:
        assert all(part in page for part in a.split("\n\n"))
        assert " ".join(q.split()).lower() not in flat
    # the table of contents is gone whole (its questions are worded apart from the entries)
    assert "Table of Contents" not in page and "status of MH?" not in page
    assert "01.00 Introduction" not in page
    # no question's Subject line is left; sections, the preface and the appendix stay
    assert not re.search(r"(?m)^Subject: [!+]?\d\d\.(?!00)\d\d", page)
    for kept in (
        "Subject: MH Frequently Asked Questions (FAQ) with Answers\nFrom: Bill Wohler <wohler@",
        "Subject: Viewing This Article\nFrom: Bill Wohler",
        "Subject: 01.00 ***** Introduction *****\nFrom: Bill Wohler",
        "Subject: Removing duplicate messages (Bourne)",
        "This is a living list",
        "Local Variables:",
    ):
        assert kept in page
    # the contributors: in the page, in no answer
    assert "From: Jerry Peek <jpeek at example.org>\nDate: Fri, 1 Mar 1991" in page
    assert "From: Richard Coleman <coleman at example.org>,\n\tScott Hutton" in page
    assert "\n\nDate: Fri, 1 Jan 1993 00:00:00 -0800\n\nOlder systems" in page
    for _, _, a in qa:
        assert not re.search(r"(?m)^(?:From|Date):", a)
        assert "Jerry Peek" not in a and "Coleman" not in a
        assert "digest format" not in a and "Message-ID" not in a and "outline" not in a
    # every rule stays, the contents' 70-dash one too
    assert len(re.findall(r"(?m)^-{20,}$", page)) == 12


def test_split_nmh_faq_repeated_number_unanswered_and_no_entry() -> None:
    # an unanswered question asks nothing (and leaves the page all the same)
    page, qa = ns.split_nmh_faq(FAQ)
    assert "unanswered" not in page and "02.02" not in {k for k, _, _ in qa}
    twice = FAQ.replace(
        "Subject: 05.04",
        "Subject: 01.01 Asked again under the same number?\n"
        "From: Bill Wohler <wohler at example.org>\n\n  Said again, in other words.\n\n"
        f"{RULE}\n\nSubject: 05.04",
    )
    _, qa2 = ns.split_nmh_faq(twice)
    keys = [k for k, _, _ in qa2]
    assert keys.count("01.01") == 1 and keys.count("01.01-2") == 1
    assert dict((k, a) for k, _, a in qa2)["01.01-2"] == "Said again, in other words."
    # a rule not followed by a Subject line is answer text; a Subject line with no rule
    # before it is not an entry
    text = (
        f"{RULE}\n\nSubject: 01.01 Does a rule inside an answer end it?\n\n  No:\n"
        f"{RULE}\n  it stays in the answer.\nSubject: 01.02 Not an entry\n"
    )
    _, inner = ns.split_nmh_faq(text)
    assert inner == [
        (
            "01.01",
            "Does a rule inside an answer end it?",
            f"No:\n{RULE}\n  it stays in the answer.\nSubject: 01.02 Not an entry",
        )
    ]
    prose = "Newsgroups: comp.mail.mh\n\n  No entry at all.\n"
    page, none = ns.split_nmh_faq(prose)
    assert none == [] and page == "Newsgroups: comp.mail.mh\n\n  No entry at all.\n"


_WORD = st.sampled_from(["inc", "scan", "folder", "repl", "draft", "post", "mhl", "pick"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(
            st.tuples(
                st.lists(_WORD, min_size=1, max_size=12),  # the question's words
                st.lists(_WORD, min_size=0, max_size=20),  # the answer's words (may be none)
                st.sampled_from(["", "!", "+"]),  # the entry's mark
                st.booleans(),  # the Subject folded over two lines
                st.integers(min_value=0, max_value=2),  # further contributors in the answer
            ),
            max_size=4,
        ),
        max_size=4,
    ),
    st.booleans(),  # a table of contents first
)
def test_split_nmh_faq_property(
    sections: list[list[tuple[list[str], list[str], str, bool, int]]], contents: bool
) -> None:
    """Random sections of random entries, some marked, folded, unanswered or answered by
    several contributors, after a table of contents or not: one question per answered entry,
    in order, its answer its text without any contributor line, every part of it in the
    page, no question left in the page, ids unique."""
    lines = ["Newsgroups: comp.mail.mh", "", "  A preface."]
    expected: list[tuple[str, str, str]] = []
    if contents:
        lines += ["-" * 70, "", "Subject: Table of Contents", "From: W <w>", ""]
        for s, entries in enumerate(sections, 1):
            lines += [f" {s:02d}.{k:02d} entry{s}x{k}" for k in range(1, len(entries) + 1)]
        lines.append("")
    for s, entries in enumerate(sections, 1):
        lines += [RULE, "", f"Subject: {s:02d}.00 ***** Section{s} *****", "From: W <w>", ""]
        for k, (qwords, awords, mark, folded, others) in enumerate(entries, 1):
            question = f"entry{s}x{k} " + " ".join(qwords) + "?"
            words = question.split()
            head = f"Subject: {mark}{s:02d}.{k:02d} "
            lines += [RULE, ""]
            if folded and len(words) > 1:
                lines += [head + " ".join(words[:1]), "  " + " ".join(words[1:])]
            else:
                lines.append(head + question)
            lines += ["From: Someone <someone at example.org>", "Date: Fri, 1 Mar 1991", ""]
            parts = [" ".join(awords[j::3]) for j in range(others + 1)] if awords else []
            parts = [p for p in parts if p]
            for j, part in enumerate(parts):
                if j:
                    lines += [f"From: Other{j} <o at example.org>", "Date: Fri, 1 Jan 1993", ""]
                lines += ["  " + part, ""]
            if parts:
                expected.append((f"{s:02d}.{k:02d}", question, "\n\n".join(parts)))
    page, qa = ns.split_nmh_faq("\n".join(lines))
    assert qa == expected
    assert len({k for k, _, _ in qa}) == len(qa)
    for _, _, a in qa:
        assert all(part in page for part in a.split("\n\n"))
        assert "From:" not in a and "Date:" not in a
    assert not re.search(r"entry\d+x\d+", page)
    assert "A preface." in page


# -- the set, built from a package tree shaped like Debian's nmh ----------------------------


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.NMH_PACKAGE, "1.8~RC2-2")
    doc: Path = root / ns.NMH_DOC
    write_gz(doc / ns.NMH_FAQ, faq)
    doc.mkdir(parents=True, exist_ok=True)
    (doc / "README").write_text("nmh is a mail handling system.\n")
    (doc / "README.about").write_text(
        f"nmh (new MH) is an electronic mail handling system.\nSee the FAQ: {Q_WHY}\n"
    )
    write_gz(doc / "DIFFERENCES.gz", "nmh differs from MH 6.8.3 in these ways.\n")
    (doc / "MAIL.FILTERING").write_text("slocal and procmail can file mail into folders.\n")
    write_gz(doc / "NEWS.gz", "nmh 1.8: many changes\n")
    write_gz(doc / "README.developers.gz", "How to change nmh's code.\n")
    write_gz(doc / "changelog.gz", "2022: small fixes\n")
    (doc / "COMPLETION-TCSH").write_text("complete inc 'c/-/(audit form)/'\n")
    write_gz(doc / "contrib/ml.gz", "#!/bin/sh\n")
    man = root / ns.NMH_MAN
    write_gz(
        man / "man1/inc.1mh.gz",
        ".TH INC 1mh\n.SH NAME\ninc \\- incorporate new mail\n.SH DESCRIPTION\n"
        f"{Q_FOPEN} Inc reads the maildrop.\n",
    )
    write_gz(man / "man1/folders.1mh.gz", ".so man1/folder.1mh\n")
    write_gz(man / "man1/folder.1mh.gz", ".TH FOLDER 1mh\n.SH NAME\nfolder \\- set the folder\n")
    write_gz(man / "man7/nmh.7mh.gz", ".TH NMH 7mh\n.SH NAME\nnmh \\- introduction to nmh\n")
    os.symlink("nmh.7mh.gz", man / "man7/mh.7.gz")
    return doc


def test_nmh_faq_set_from_a_package_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _package(tmp_path, monkeypatch)
    nset = ns.nmh_faq_set()
    assert [q.qid for q in nset.questions] == [f"nmh-faq:{k}" for k in ANSWERS]
    assert nset.left_out == ()
    assert set(nset.files) == {
        "FAQ",
        "README",
        "README.about",
        "DIFFERENCES",
        "MAIL.FILTERING",
        "man/folder.1mh.md",
        "man/inc.1mh.md",
        "man/nmh.7mh.md",
    }
    corpus = _corpus(nset.files)
    for q in nset.questions:
        assert " ".join(q.text.split()).lower() not in corpus
        assert q.answers[0][0] == ANSWERS[q.qid.removeprefix("nmh-faq:")]
    # a note and a man page quoting a question: scrubbed, their other text kept
    assert "electronic mail handling system" in nset.files["README.about"]
    assert "use mh" not in nset.files["README.about"].lower()
    assert "Inc reads the maildrop." in nset.files["man/inc.1mh.md"]
    nsc.assert_files_as_written(nset)
    assert "1.8~RC2-2" in nset.note and "3 man pages" in nset.note
    assert "README, README.about, DIFFERENCES, MAIL.FILTERING" in nset.note
    nsc.assert_held_out("nmh-faq")


def test_nmh_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    faq = FAQ.replace(
        "  The current official version of MH is 6.8.3; nmh carries it on.",
        "  See nmh 1.8.",
    )
    _package(tmp_path, monkeypatch, faq)
    nset = ns.nmh_faq_set()
    assert nset.left_out == (Q_VERSION,)
    assert Q_VERSION in nset.note
    assert len(nset.questions) == len(ASKED) - 1
    assert Q_VERSION.lower() not in _corpus(nset.files)  # scrubbed all the same


def test_no_question_text_is_left_in_any_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The leak check on the set finds no copy, and finds every question in the FAQ as
    shipped (the folded one included: it could fail)."""
    _package(tmp_path, monkeypatch)
    nset = ns.nmh_faq_set()
    asked = [q.text for q in nset.questions] + list(nset.left_out)
    assert sorted(asked) == sorted(ASKED)
    assert cql.find_leaks(nset.files, asked, False) == []
    shipped = cql.find_leaks({"FAQ": FAQ}, asked, True)
    assert {lk.question for lk in shipped if lk.kind == "exact"} == set(ASKED)


def test_nmh_faq_set_halves_are_fixed_and_disjoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = _package(tmp_path, monkeypatch)
    first, dev, test = nsc.halves_of(ns.nmh_faq_set)
    more = FAQ.replace(
        "Subject: 05.04",
        "Subject: 04.01 How can I append MH messages to a mailbox file?\n"
        "From: Bill Wohler <wohler at example.org>\n\n  In nmh, use packf instead.\n\n"
        f"{RULE}\n\nSubject: 05.04",
    )
    write_gz(doc / ns.NMH_FAQ, more)
    nsc.assert_halves_kept(ns.nmh_faq_set, first, dev, test)


def test_nmh_faq_set_refuses_a_package_without_the_faq(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = _package(tmp_path, monkeypatch)
    (doc / ns.NMH_FAQ).unlink()
    with pytest.raises(FileNotFoundError, match=re.escape("no FAQ.gz under")):
        ns.nmh_faq_set()
