"""The ``imap-faq`` natural-question set (``bench/natural_sets.py``), its reading of the UW
IMAP toolkit's plain-text FAQ and the question-leak check (``bench/check_question_leaks.py``)
on a small inline FAQ shaped as Debian's ``libc-client2007e`` ships it (``FAQ.txt.gz``: a
licence comment, a centred title, a "Table of Contents" listing every group and question
(quoted messages as ``o`` items), a rule, then group titles at column 0 over entries
indented three spaces, each answer indented ten, rules of underscores between entries;
questions in a row sharing the answer after the last; a question quoting messages at column
1 and going on after a blank line; an answer with a literal at column 1, a cross-reference
quoting another question over two lines, another group's number; a question-shaped group
title; an entry left unanswered before a group title; "Last Updated" at the end) beside the
toolkit's other documents (one quoting a question, one over the page limit), ``FAQ.html``
(the same FAQ), the changelogs and the copyright, in a package tree laid out as the package
unpacks (marker present, nothing downloaded); offline, no embedding model, no test reads
the real package.

What the set's numbers rest on: no question or line of the contents is left in any file;
each answer is exactly the text after its question up to the next entry or group title,
rules out, dedented; questions in a row are each asked with the one answer after them;
group titles and unanswered entries stay and ask nothing; ids are the FAQ's numbers, so an
entry added keeps the halves; an answer too short to judge leaves the set but not the
corpus's scrubbing.
"""

from __future__ import annotations

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

Q_UNIX = "Can I set up a POP or IMAP server on UNIX/Linux/OSF/etc.?"
Q_QPOPPER = (
    "I am currently using qpopper as my POP3 server on UNIX. Do I need to replace it with "
    "ipop3d in order to run imapd?"
)
Q_DOS = "Can I set up a POP or IMAP server on Windows 3.1 or DOS?"
Q_MAC = "Can I set up a POP or IMAP server on Macintosh?"
Q_VMS = "Can I set up a POP or IMAP server on VAX/VMS?"
Q_SSL = "What do I need to build this software with SSL on UNIX?"
Q_WARN = (
    "Why do I get compiler warning messages such as: passing arg 3 of `scandir' from "
    "incompatible pointer type during the build?"
)
Q_BASE64 = (
    "Why do I get the message Invalid base64 string when I try to authenticate to a Cyrus server?"
)
Q_DELETE = (
    "My qpopper users keep on getting the DON'T DELETE THIS MESSAGE -- FOLDER INTERNAL DATA "
    "if they also use Pine or IMAP. How can I fix this?"
)
Q_ASK = "Where can I go to ask questions?"
Q_IDEAS = "I have some ideas for enhancements to IMAP. Where should I go?"

HEAD = (
    "/* ==================================================================\n"
    " * Copyright 1988-2007 University of Washington\n"
    " * ==================================================================\n"
    " */\n\n"
    "                    IMAP Toolkit Frequently Asked Questions\n\n"
    "Table of Contents\n\n"
    "     * 1. General/Software Feature Questions\n"
    "          + 1.1 listline Can I set up a POP or IMAP server on\n"
    "            UNIX/Linux/OSF/etc.?\n"
    "     * 2. What Do I Need to Build This Software?\n"
    "          + 7.48 listline Why do I get the message\n"
    "               o Invalid base64 string\n"
    "            when I try to authenticate to a Cyrus server?\n"
    "     _________________________________________________________________\n\n"
)
E_UNIX = (
    "   1.1 Can I set up a POP or IMAP server on UNIX/Linux/OSF/etc.?\n\n"
    "          Yes. Refer to the UNIX specific notes in files CONFIG and\n"
    "          BUILD.\n"
    "     _________________________________________________________________\n\n"
)
E_QPOPPER = (
    "   1.2 I am currently using qpopper as my POP3 server on UNIX. Do I need\n"
    "   to replace it with ipop3d in order to run imapd?\n\n"
    "          Not necessarily.\n\n"
    "          There also seems to be a way to make qpopper work better with\n"
    "          imapd; see the answer to the My qpopper users keep on getting the\n"
    "          DON'T DELETE THIS MESSAGE -- FOLDER INTERNAL DATA if they also use\n"
    "          Pine or IMAP. How can I fix this? question.\n"
    "     _________________________________________________________________\n\n"
)
E_SHARED = (
    "   1.4 Can I set up a POP or IMAP server on Windows 3.1 or DOS?\n"
    "   1.5 Can I set up a POP or IMAP server on Macintosh?\n"
    "   1.6 Can I set up a POP or IMAP server on VAX/VMS?\n\n"
    "          Yes, it's just a small matter of programming.\n"
    "     _________________________________________________________________\n\n"
)
E_SSL = (
    "   2.1 What do I need to build this software with SSL on UNIX?\n\n"
    "          You need to build and install OpenSSL first.\n"
    "          7.2 of the OpenSSL notes tells how.\n"
    "     _________________________________________________________________\n\n"
)
E_WARN = (
    "   2.2 Why do I get compiler warning messages such as:\n"
    " passing arg 3 of `scandir' from incompatible pointer type\n\n"
    "   during the build?\n\n"
    "          You can safely ignore these messages. A compiler may say:\n\n"
    " K.5.7  Function pointer casts\n\n"
    "          which is a common extension.\n"
    "     _________________________________________________________________\n\n"
)
E_UNANSWERED = "   2.3 An entry nobody answered\n\n"
E_BASE64 = (
    "   7.48 Why do I get the message Invalid base64 string when I try to\n"
    "   authenticate to a Cyrus server?\n\n"
    "          Cyrus only checks the first line of the exchange; update the\n"
    "          server or use another mechanism.\n"
    "     _________________________________________________________________\n\n"
)
E_DELETE = (
    "   7.49 My qpopper users keep on getting the DON'T DELETE THIS MESSAGE --\n"
    "   FOLDER INTERNAL DATA if they also use Pine or IMAP. How can I fix this?\n\n"
    "          This is an incompatibility between qpopper and the c-client\n"
    "          library's mailbox pseudo-message.\n"
    "     _________________________________________________________________\n\n"
)
E_ASK = (
    "   8.1 Where can I go to ask questions?\n"
    "   8.2 I have some ideas for enhancements to IMAP. Where should I go?\n\n"
    "          Ask on the imap-uw mailing list; you must be a subscriber to\n"
    "          post.\n"
    "          _________________________________________________________________\n\n"
    "   Last Updated: 15 November 2007\n"
)
FAQ = (
    HEAD
    + "1. General/Software Feature Questions\n"
    + "     _________________________________________________________________\n\n"
    + E_UNIX
    + E_QPOPPER
    + E_SHARED
    + "2. What Do I Need to Build This Software?\n"
    + "     _________________________________________________________________\n\n"
    + E_SSL
    + E_WARN
    + E_UNANSWERED
    + "7. Problems and Annoyances\n\n"
    + E_BASE64
    + E_DELETE
    + "8. Where to Go For Additional Information\n\n"
    + E_ASK
)
A_UNIX = "Yes. Refer to the UNIX specific notes in files CONFIG and\nBUILD."
A_QPOPPER = (
    "Not necessarily.\n\n"
    "There also seems to be a way to make qpopper work better with\n"
    "imapd; see the answer to the My qpopper users keep on getting the\n"
    "DON'T DELETE THIS MESSAGE -- FOLDER INTERNAL DATA if they also use\n"
    "Pine or IMAP. How can I fix this? question."
)
A_SHARED = "Yes, it's just a small matter of programming."
A_SSL = "You need to build and install OpenSSL first.\n7.2 of the OpenSSL notes tells how."
A_WARN = (
    "You can safely ignore these messages. A compiler may say:\n\n"
    "K.5.7  Function pointer casts\n\n"
    "which is a common extension."
)
A_BASE64 = (
    "Cyrus only checks the first line of the exchange; update the\nserver or use another mechanism."
)
A_DELETE = (
    "This is an incompatibility between qpopper and the c-client\nlibrary's mailbox pseudo-message."
)
A_ASK = (
    "Ask on the imap-uw mailing list; you must be a subscriber to\n"
    "post.\n\n"
    "Last Updated: 15 November 2007"
)
ASKED = (
    Q_UNIX,
    Q_QPOPPER,
    Q_DOS,
    Q_MAC,
    Q_VMS,
    Q_SSL,
    Q_WARN,
    Q_BASE64,
    Q_DELETE,
    Q_ASK,
    Q_IDEAS,
)
ANSWERS = {
    "1.1": A_UNIX,
    "1.2": A_QPOPPER,
    "1.4": A_SHARED,
    "1.5": A_SHARED,
    "1.6": A_SHARED,
    "2.1": A_SSL,
    "2.2": A_WARN,
    "7.48": A_BASE64,
    "7.49": A_DELETE,
    "8.1": A_ASK,
    "8.2": A_ASK,
}


def test_split_imap_faq_questions_answers_and_ids() -> None:
    text, qa = ns.split_imap_faq(FAQ)
    # each numbered entry of its group with an answer asked, in order (wrapped lines, the
    # quoted message at column 1 and the words after the blank line joined, spaces folded,
    # the number out); entries in a row each asked with the one answer after them; the
    # answer the lines up to the next entry or group title, rules out, dedented to its
    # first line (a literal at column 1 kept whole, the indent-3 line after the last
    # answer flush); the id the number
    assert [q for _, q, _ in qa] == list(ASKED)
    assert [k for k, _, _ in qa] == list(ANSWERS)
    assert {k: a for k, _, a in qa} == ANSWERS
    # every answer in the page; no question left in it but the one 1.2's answer quotes
    # (a cross-reference: the set scrubs it, below)
    for _, q, a in qa:
        assert a in text
        assert (nsc.flat(q) in nsc.flat(text)) == (q == Q_DELETE)
    assert nsc.flat(text).count(nsc.flat(Q_DELETE)) == 1
    # the contents and the rule under it leave; the licence comment and the title stay;
    # group titles stay as headings (the question-shaped one too); the unanswered entry
    # stays as text; no rule of underscores is left
    assert "listline" not in text and "Table of Contents" not in text
    assert "Invalid base64 string\n" not in text.split("## 1.")[0]
    assert text.startswith("/* ====")
    assert "IMAP Toolkit Frequently Asked Questions\n\n## 1. General/Software" in text
    assert "## 2. What Do I Need to Build This Software?" in text
    assert "## 7. Problems and Annoyances" in text and "## 8. Where to Go" in text
    assert "2.3 An entry nobody answered" in text
    assert "____" not in text
    # a shared answer stands in the page once
    assert text.count(A_SHARED) == 1 and text.count(A_ASK) == 1
    for _, _, a in qa:
        assert "General/Software" not in a and "nobody" not in a and "____" not in a


def test_split_imap_faq_edges() -> None:
    # without the contents, or without a group after them, nothing is asked and the text
    # stays whole
    plain = "Title\n\n1. G\n\n   1.1 Q?\n\n          A.\n"
    assert ns.split_imap_faq(plain) == (plain, [])
    no_group = "Title\nTable of Contents\n   * 1.1 Q?\n\n   1.1 Q?\n\n          A.\n"
    assert ns.split_imap_faq(no_group) == (no_group, [])
    # an entry under another group's number, or before any group title, is answer text;
    # a repeated number is told apart; three blank lines fold to one
    odd = (
        "Table of Contents\n * 1. G\n"
        "1. G\n   1.1 One?\n\n          a\n\n\n\n          b\n   3.2 other group text\n"
        "   1.1 Two?\n\n          c d.\n"
    )
    text, qa = ns.split_imap_faq(odd)
    assert qa == [("1.1", "One?", "a\n\nb\n3.2 other group text"), ("1.1-2", "Two?", "c d.")]
    assert text == "## 1. G\n\na\n\nb\n3.2 other group text\n\nc d.\n"
    # questions left waiting at a group title or the end stay as text, each on its own line
    waiting = (
        "Table of Contents\n1. G\n   1.1 First?\n   1.2 Second?\n2. H\n   2.1 Last?\n     ______\n"
    )
    text, qa = ns.split_imap_faq(waiting)
    assert qa == []
    assert text == "## 1. G\n\n1.1 First?\n\n1.2 Second?\n\n## 2. H\n\n2.1 Last?\n"


_WORD = st.sampled_from(["mailbox", "imapd", "ssl", "pine", "lock", "spool", "kerberos"])


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.booleans(),  # a group title or an entry of the current group
            st.lists(_WORD, min_size=1, max_size=8),  # the heading's words
            st.integers(min_value=1, max_value=3),  # lines the question is wrapped over
            st.lists(_WORD, min_size=0, max_size=12),  # the answer's words (none: shares on)
            st.booleans(),  # a rule of underscores after the answer
        ),
        min_size=1,
        max_size=8,
    )
)
def test_split_imap_faq_property(
    entries: list[tuple[bool, list[str], int, list[str], bool]],
) -> None:
    """Random group titles and entries after the contents, each question wrapped over one
    to three lines at the entry's indent, answers over lines indented ten of up to four
    words, some entries with no answer (waiting for the next one's), rules or not: each
    entry under a group asked with the first answer after it in its group, in order, the
    number the id; every answer in the page; no asked question and no contents line left
    in it; group titles, entries before any group and entries left waiting kept."""
    head = "  IMAP FAQ\n\nTable of Contents\n" + "".join(
        f"     * listline{n}\n" for n in range(len(entries))
    )
    blocks: list[str] = []
    expected: list[tuple[str, str, str]] = []
    waiting: list[tuple[str, str]] = []
    kept: set[int] = set()
    group = 0
    number = 0
    for n, (is_group, words, wrap, awords, rule) in enumerate(entries):
        if is_group or n == 0:
            group += 1
            number = 0
            kept.update(int(k.split("x")[0].removeprefix("e")) for k, _ in waiting)
            waiting.clear()
            blocks.append(f"{group}. group{n}x {' '.join(words)}\n\n")
            if is_group:
                continue
        number += 1
        heading = [f"entry{n}x", *words]
        cut = [" ".join(heading[i::wrap]) for i in range(wrap) if heading[i::wrap]]
        lines = [" ".join(awords[i : i + 4]) for i in range(0, len(awords), 4)]
        body = "".join(f"          {ln}\n" for ln in lines)
        body += "     ______________\n" if rule else ""
        blocks.append(f"   {group}.{number} " + "\n   ".join(cut) + "\n\n" + body + "\n")
        waiting.append((f"e{n}x {group}.{number}", " ".join(cut)))
        if awords:
            answer = "\n".join(lines)
            expected += [(k.split()[1], q, answer) for k, q in waiting]
            waiting.clear()
    kept.update(int(k.split("x")[0].removeprefix("e")) for k, _ in waiting)
    text, qa = ns.split_imap_faq(head + "".join(blocks))
    assert qa == expected
    for _, _, a in qa:
        assert a in text
    assert "listline" not in text and "____" not in text
    for n, (is_group, _, _, _, _) in enumerate(entries):
        assert (f"entry{n}x" in text) == (n in kept and not is_group)
        assert (f"group{n}x" in text) == (is_group or n == 0)


# -- the set, built from a package tree shaped like Debian's libc-client2007e --------------


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.IMAP_PACKAGE, "8:2007f~dfsg-7+b2")
    doc: Path = root / ns.IMAP_DOC
    write_gz(doc / ns.IMAP_FAQ, faq)
    (doc / "FAQ.html").write_text(f"<p><strong>1.1 {Q_UNIX}</strong></p> leftout\n")
    write_gz(doc / "README.Debian.gz", "Debian: the imapd is in another package.\n")
    write_gz(doc / "RELNOTES.gz", "Release notes: mix format added.\n")
    write_gz(doc / "Y2K.gz", "The toolkit is Y2K compliant.\n")
    write_gz(doc / "bugs.txt.gz", f"Known bugs. Users ask: {Q_SSL} Read the BUILD file.\n")
    write_gz(doc / "calendar.txt.gz", "The calendar of the mail dates.\n")
    write_gz(doc / "drivers.txt.gz", "Drivers: mbx, mix, unix, mh, mx.\n")
    write_gz(doc / "formats.txt.gz", "Mailbox formats. " * 10_000)
    write_gz(doc / "imaprc.txt.gz", "The .imaprc file sets options.\n")
    write_gz(doc / "internal.txt.gz", "Internal interfaces of c-client.\n")
    write_gz(doc / "locking.txt.gz", "Locking: lock files and flock.\n")
    (doc / "md5.txt").write_text("CRAM-MD5 needs a secrets database.\n")
    write_gz(doc / "naming.txt.gz", "Mailbox naming: {host}INBOX.\n")
    write_gz(doc / "NEWS.Debian.gz", "leftout news\n")
    write_gz(doc / "changelog.gz", "leftout\n")
    write_gz(doc / "changelog.Debian.gz", "leftout\n")
    write_gz(doc / "buildinfo_amd64.gz", "leftout\n")
    (doc / "copyright").write_text("leftout\n")
    return doc


@pytest.fixture
def doc_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package tree as shipped (:data:`FAQ`), the documentation folder."""
    return _package(tmp_path, monkeypatch)


def test_imap_faq_set_from_a_package_tree(doc_dir: Path) -> None:
    nset = ns.imap_faq_set()
    nsc.assert_package_set(
        nset,
        "imap-faq",
        ids=list(ANSWERS),
        files={
            "FAQ.md",
            "README.Debian",
            "RELNOTES",
            "Y2K",
            "bugs.txt",
            "calendar.txt",
            "drivers.txt",
            "imaprc.txt",
            "internal.txt",
            "locking.txt",
            "md5.txt",
            "naming.txt",
        },
        source="FAQ.md",
        version="8:2007f~dfsg-7+b2",
        too_long="formats.txt",
        answers={
            # the cross-reference quoting another question scrubbed from the answer
            **ANSWERS,
            "1.2": A_QPOPPER.replace(
                "My qpopper users keep on getting the\nDON'T DELETE THIS MESSAGE -- FOLDER "
                "INTERNAL DATA if they also use\nPine or IMAP. How can I fix this?",
                "",
            ),
        },
    )
    corpus = " ".join(nset.files.values())
    assert "leftout" not in corpus and "listline" not in corpus
    # the note quoting a question scrubbed, its other text kept
    assert "Users ask:" in nset.files["bugs.txt"]
    assert "Read the BUILD file." in nset.files["bugs.txt"]
    assert "see the answer to the" in nset.files["FAQ.md"]
    assert nset.left_out == ()


def test_imap_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = FAQ.replace(
        "          Cyrus only checks the first line of the exchange; update the\n"
        "          server or use another mechanism.\n",
        "          Update Cyrus.\n",
    )
    assert short != FAQ
    _package(tmp_path, monkeypatch, short)
    nsc.assert_left_out(ns.imap_faq_set(), Q_BASE64, len(ASKED) - 1)


def test_no_question_text_is_left_in_any_file(doc_dir: Path) -> None:
    nset = ns.imap_faq_set()
    asked = [q.text for q in nset.questions]
    assert sorted(asked) == sorted(ASKED)
    # no copy of any question in any file; the one long run left is the question-shaped
    # group title the FAQ files the build questions under (a heading, kept as every set
    # keeps its group titles), shared with the question under it
    leaks = cql.find_leaks(nset.files, asked, False)
    assert [(lk.question, lk.file, lk.kind) for lk in leaks] == [(Q_SSL, "FAQ.md", "run")]
    assert leaks[0].context == "what do i need to build this software"
    # the FAQ as shipped: the check finds every question there, so it could fail
    found = cql.find_leaks({"FAQ": FAQ}, asked, False)
    assert {lk.question for lk in found if lk.kind == "exact"} == set(asked)


def test_imap_faq_set_halves_are_fixed_and_disjoint(doc_dir: Path) -> None:
    more = FAQ.replace(
        "7. Problems and Annoyances\n\n",
        "7. Problems and Annoyances\n\n"
        "   7.1 Why does my mailbox grow after every expunge?\n\n"
        "          The mbx format reuses the space only when it is rewritten.\n\n",
    )
    assert more != FAQ
    nsc.assert_halves_survive_an_added_question(
        ns.imap_faq_set, lambda: write_gz(doc_dir / ns.IMAP_FAQ, more)
    )


def test_imap_faq_set_refuses_a_package_without_the_faq(doc_dir: Path) -> None:
    (doc_dir / ns.IMAP_FAQ).unlink()
    nsc.assert_refuses_without_faq(ns.imap_faq_set, ns.IMAP_FAQ)
