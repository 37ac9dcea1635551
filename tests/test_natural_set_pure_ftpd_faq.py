"""The ``pure-ftpd-faq`` natural-question set (``bench/natural_sets.py``), its reading of
Pure-FTPd's plain-text FAQ and the question-leak check (``bench/check_question_leaks.py``) on
a small inline FAQ shaped as Debian's ``pure-ftpd-common`` ships it
(``/usr/share/doc/pure-ftpd/FAQ.gz``: a centred title over a rule; entries of a column-0
``* <title>`` line (one a question itself, one with a "(submitted by ...)" line under it)
over a ``->`` paragraph quoting the user's question, wrapped, some signed "(Name)" after
their last sentence, one with a parenthesis that is part of it; answers with column-0 ``* ``
list items, a "Cut here" script, a line opening with ``-`` (not ``->``); an entry with a
second ``->`` question and its own answer; an unanswered entry) beside the READMEs (read
from ``pure-ftpd-common``'s folder, the copies beside the FAQ not read twice), the sample
configurations and the man pages (one over the limit) in a package tree laid out as the
package unpacks (marker present, nothing downloaded); offline, no embedding model, no test
reads the real package.

What the set's numbers rest on: no question's text or entry title is left in any file (the
entries, a README quoting one); each answer is exactly the text after its question up to the
next question or title; ids are the entries' numbers, so an entry added at the end keeps the
halves; an answer too short to judge leaves the set but not the corpus's scrubbing.
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
from debian_package_double import unpacked_package, write_gz

Q_PUBLIC = (
    'I have a "public" directory. All users can download and upload files from/to this '
    "directory. But user 'john' can delete files owned by user 'joe'. How to prevent this?"
)
Q_TAR = 'Is it possible to use a command like "get directory.tar" as with Wu-FTPd ?'
Q_SSH = (
    "How to run Pure-FTPd over SSH? I want to encrypt all connection data (including passwords) ."
)
Q_IE = "Internet Explorer doesn't show any login box."
Q_IE2 = "Internet Explorer doesn't want to log in."
Q_RENAMED = (
    "Sometimes when files get uploaded they are getting renamed to something like "
    '"pureftpd.3f3300d2.33.0001". What is causing this ?'
)
ASKED = (Q_PUBLIC, Q_TAR, Q_SSH, Q_IE, Q_IE2, Q_RENAMED)
A_PUBLIC = (
    "Put the sticky bit on that directory: chmod 1777 public. That way, the\n"
    "directory remains public (read/write), but people can only delete files they\n"
    "own. On other systems mount it again:\n\n"
    "* Linux   : mount --bind /var/incoming /home/john/incoming\n"
    "            mount --bind /var/incoming /home/joe/incoming\n\n"
    "* FreeBSD : mount_null /var/incoming /home/john/incoming"
)
A_TAR = "Unfortunately, no. Server-side gzip/tar creation is not a present nor a\nplanned feature."
A_SSH = (
    "FTP-over-SSH is a nice alternative over FTP-over-TLS:\n\n"
    "  ---------------------------- Cut here ----------------------------\n\n"
    "useradd -u ftpuser -g ftpgroup -d /dev/null -s /usr/bin/false customer2\n"
    "- a line opening with a dash is text\n\n"
    "  ---------------------------- Cut here ----------------------------"
)
A_IE = (
    "IE does a very strange trick to detect whether an FTP server does accept\n"
    "anonymous connections or not: run pure-ftpd with -E and -b."
)
A_IE2 = "Check that the max number of connections (either per user or per IP) is at\nleast 2."
A_RENAMED = (
    "The ftp client that is being used to upload the files is using the STOU (Store\n"
    "Unique) FTP command instead of the STOR FTP command."
)
ANSWERS = {"2": A_PUBLIC, "3": A_TAR, "4": A_SSH, "6": A_IE, "6-2": A_IE2, "7": A_RENAMED}

FAQ = (
    "\n                         FREQUENTLY ASKED QUESTIONS\n                         \n"
    "             --------------------------------------------------\n\n\n"
    "* Is this entry answered at all?\n\n"
    "-> A question nobody answered here?\n\n\n\n"
    "* Directories shared by multiple users.\n\n"
    '-> I have a "public" directory. All users can download and upload files\n'
    "from/to this directory. But user 'john' can delete files owned by user 'joe'. How "
    "to prevent this?\n\n"
    f"{A_PUBLIC}\n\n\n\n"
    "* Tar and/or gzip on the fly\n\n"
    '-> Is it possible to use a command like "get directory.tar" as with Wu-FTPd\n'
    "? (Sven Goldt)\n\n"
    f"{A_TAR}\n\n\n\n"
    "* FTP over SSH.\n\n"
    "-> How to run Pure-FTPd over SSH? I want to encrypt all connection data\n"
    "(including passwords) .\n\n"
    f"{A_SSH}\n\n\n\n"
    "* Files are not shown, why?\n\n"
    "-> ls returns nothing at all on my server.\n\n"
    "Too short.\n\n\n\n"
    "* Internet Explorer.\n\n"
    f"-> {Q_IE}\n\n{A_IE}\n\n"
    "-> Internet Explorer doesn't want to log in. (Matthew Enger)\n\n"
    f"{A_IE2}\n\n\n\n"
    "* Files getting renamed automatically\n(submitted by C. Jon Larsen)\n\n"
    "-> Sometimes when files get uploaded they are getting renamed to something\n"
    'like "pureftpd.3f3300d2.33.0001". What is causing this ?\n\n'
    f"{A_RENAMED}\n"
)
SHORT = "ls returns nothing at all on my server."


def test_split_pure_ftpd_faq_questions_answers_and_ids() -> None:
    page, qa = ns.split_pure_ftpd_faq(FAQ)
    # every -> paragraph a question (wrapped lines joined, the asker's signature dropped, a
    # parenthesis of the sentence kept); ids the entries' numbers, the unanswered entry
    # counted, a second question -2 (by its place: an unanswered first one counts too); the
    # answer the text up to the next question or title
    asked = [q for _, q, _ in qa]
    assert asked == [Q_PUBLIC, Q_TAR, Q_SSH, SHORT, Q_IE, Q_IE2, Q_RENAMED]
    answers = {k: a for k, _, a in qa}
    assert answers == {**ANSWERS, "5": "Too short."}
    nsc.assert_page_keeps_answers(qa, page)
    # the page's title stays, in no answer; every title (and the line under one) and every
    # question leave the page, the unanswered one's too; the list items in an answer stay
    assert page.startswith("FREQUENTLY ASKED QUESTIONS\n")
    for gone in ("* Directories shared", "* Internet Explorer.", "(submitted by", "->"):
        assert gone not in page
    assert "Sven Goldt" not in page and "nobody answered" not in page
    assert "* Linux   : mount --bind" in page and "* FreeBSD" in page
    assert all("FREQUENTLY" not in a for *_, a in qa)


def test_split_pure_ftpd_faq_edges() -> None:
    # no entry: the text (and a "* " list) kept, nothing asked; a "->" inside a line or a
    # "-" line is text; a "* " paragraph followed by text, not a question, is text where it
    # stands; a question with no title before it takes the entry's number (0 before any)
    text = "Title\n\n* a list item\n\n* another\nwrapped\n\nText -> not a question.\n- dash\n"
    page, none = ns.split_pure_ftpd_faq(text)
    assert none == [] and page == text
    page, qa = ns.split_pure_ftpd_faq(
        "-> Before any title?\n\nFirst.\n\n* Topic\n\n-> One?\n\nTwo.\n\n* item\n\nThree.\n"
        "\n* Next\n\n->   Spaced  question  (with a note) .\n"
    )
    assert qa == [("0", "Before any title?", "First."), ("1", "One?", "Two.\n\n* item\n\nThree.")]
    assert page == "First.\n\nTwo.\n\n* item\n\nThree.\n"
    # the last question with no text under it asks nothing; a title at the end stays as text
    assert ns.split_pure_ftpd_faq("* T\n\n-> Q?\n")[1] == []
    assert ns.split_pure_ftpd_faq("x\n\n* T\n") == ("x\n\n* T\n", [])
    assert ns.pure_ftpd_question(["Why? (Some One)"]) == "Why?"
    assert ns.pure_ftpd_question(["Why", "(not a name) ."]) == "Why (not a name) ."
    assert ns.pure_ftpd_question(["How -m) ? (at1ce) ."]) == "How -m) ?"


_WORD = st.sampled_from(["ftp", "chroot", "user", "upload", "tls", "port", "quota"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(_WORD, min_size=1, max_size=6),  # the title's words
            st.lists(
                st.tuples(
                    st.lists(_WORD, min_size=1, max_size=10),  # a question's words
                    st.booleans(),  # wrapped over a second line
                    st.booleans(),  # signed by its asker
                    st.lists(_WORD, min_size=0, max_size=14),  # the answer (none: unanswered)
                    st.booleans(),  # a "* " list item in the answer
                ),
                min_size=1,
                max_size=2,
            ),
        ),
        min_size=1,
        max_size=7,
    )
)
def test_split_pure_ftpd_faq_property(
    entries: list[tuple[list[str], list[tuple[list[str], bool, bool, list[str], bool]]]],
) -> None:
    """Random entries after the title, each a ``* `` title over one or two questions, some
    wrapped, some signed, some unanswered, some answers holding a ``* `` list item: one
    question per answered paragraph, in order, the entry's number its id (``-2`` for the
    second), the signature dropped, the answer the text up to the next question or title,
    in the page; no question's or title's marker left in it."""
    text = "   FREQUENTLY ASKED QUESTIONS\n   -----\n\n"
    expected = []
    for n, (twords, questions) in enumerate(entries, start=1):
        text += f"* title{n}x {' '.join(twords)}.\n\n"
        for m, (qwords, wrapped, signed, awords, listed) in enumerate(questions, start=1):
            words = [f"entry{n}x{m}", *qwords]
            lines = (
                [" ".join(words[:1]), " ".join(words[1:]) + "?"]
                if wrapped
                else [" ".join(words) + "?"]
            )
            question = " ".join(" ".join(lines).split())
            if signed:
                lines[-1] += " (Some Asker)"
            text += "-> " + "\n".join(lines) + "\n\n"
            answer = " ".join(["Answer", *awords]) if awords else ""
            if answer and listed:
                answer += "\n\n* a list item " + " ".join(awords) + "\n\nafter the list."
            text += f"{answer}\n\n\n" if answer else "\n"
            if answer:
                expected.append((str(n) if m == 1 else f"{n}-{m}", question, answer))
    page, qa = ns.split_pure_ftpd_faq(text)
    nsc.assert_random_split(page, qa, expected)
    assert "title" not in page and "Some Asker" not in page
    assert page.startswith("FREQUENTLY ASKED QUESTIONS\n")


# -- the set, built from a package tree shaped like Debian's pure-ftpd-common ---------------


def _man(name: str, body: str) -> str:
    return f'.TH {name.upper()} 8 "2024"\n.SH NAME\n{name} \\- a program\n.SH DESCRIPTION\n{body}'


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.PUREFTPD_PACKAGE, "1.0.50-2.1")
    doc: Path = root / ns.PUREFTPD_DOC
    common: Path = root / ns.PUREFTPD_COMMON_DOC
    write_gz(doc / ns.PUREFTPD_FAQ, faq)
    write_gz(
        common / "README.gz",
        f"Pure-FTPd\n=========\n\nA secure FTP server. Often asked: {Q_IE2} Read the FAQ.\n",
    )
    write_gz(common / "README.TLS.gz", "TLS\n\nRun pure-ftpd with --tls=1.\n")
    write_gz(doc / "README.TLS.gz", "left out: the copy beside the FAQ\n")
    (common / "README.Debian").write_text("One file per option under /etc/pure-ftpd/conf.\n")
    (doc / "README.MacOS-X").write_text("On macOS, build with --with-everything.\n")
    write_gz(
        doc / "pure-ftpd.conf.gz",
        "# Cage in every user in his home directory\nChrootEveryone yes\n",
    )
    man = root / "usr/share/man/man8"
    write_gz(man / "pure-pw.8.gz", _man("pure-pw", "Manages virtual users.\n"))
    write_gz(man / "pure-ftpd.8.gz", _man("pure-ftpd", "Serves files.\n" * 15_000))
    for left_out in ("AUTHORS.gz", "THANKS.gz", "README.Donations.gz", "NEWS.Debian.gz"):
        write_gz(common / left_out, "left out\n")
    for left_out in ("HISTORY", "copyright", "pureftpd.schema"):
        (common / left_out).write_text("left out\n")
    write_gz(common / "changelog.gz", "left out\n")
    return doc


@pytest.fixture
def doc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package tree as shipped (the FAQ :data:`FAQ`), the FAQ's folder."""
    return _package(tmp_path, monkeypatch)


def test_pure_ftpd_faq_set_from_a_package_tree(doc: Path) -> None:
    nset = ns.pure_ftpd_faq_set()
    nsc.assert_package_set(
        nset,
        "pure-ftpd-faq",
        ids=list(ANSWERS),
        files={
            "FAQ",
            "README",
            "README.TLS",
            "README.Debian",
            "README.MacOS-X",
            "pure-ftpd.conf",
            "man/pure-pw.8.md",
        },
        source="FAQ",
        version="1.0.50-2.1",
        too_long="man/pure-ftpd.8.md",
        answers=ANSWERS,
    )
    assert "left out" not in " ".join(nset.files.values())
    # the short answer left out, named; the README quoting a question scrubbed, its other
    # text kept; the sample configuration and man page as text
    assert nset.left_out == (SHORT,) and SHORT in nset.note
    assert "Read the FAQ." in nset.files["README"] and Q_IE2 not in nset.files["README"]
    assert "ChrootEveryone yes" in nset.files["pure-ftpd.conf"]
    assert "Manages virtual users." in nset.files["man/pure-pw.8.md"]


def test_pure_ftpd_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    long_enough = FAQ.replace("Too short.", "Use ls -la or dir, which every client sends as LIST.")
    assert long_enough != FAQ
    _package(tmp_path, monkeypatch, long_enough.replace(A_TAR, "Unfortunately, no."))
    nsc.assert_left_out(ns.pure_ftpd_faq_set(), Q_TAR, len(ASKED))


def test_no_question_text_is_left_in_any_file(doc: Path) -> None:
    nsc.assert_leak_checked(ns.pure_ftpd_faq_set(), {"FAQ": FAQ}, [*ASKED, SHORT])


def test_pure_ftpd_faq_set_halves_are_fixed_and_disjoint(doc: Path) -> None:
    more = FAQ + (
        "\n\n\n* Quotas.\n\n-> How do I limit the space a virtual user may fill?\n\n"
        "Give pure-pw useradd the -N option with the quota in megabytes.\n"
    )
    nsc.assert_halves_survive_an_added_question(
        ns.pure_ftpd_faq_set, lambda: write_gz(doc / ns.PUREFTPD_FAQ, more)
    )


def test_pure_ftpd_faq_set_refuses_a_package_without_the_faq(doc: Path) -> None:
    (doc / ns.PUREFTPD_FAQ).unlink()
    nsc.assert_refuses_without_faq(ns.pure_ftpd_faq_set, ns.PUREFTPD_FAQ)
