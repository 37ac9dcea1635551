"""The ``crm114-faq`` natural-question set (``bench/natural_sets.py``): the CRM114 and CRM114
Mailfilter FAQ as Debian's ``crm114`` ships it (``/usr/share/doc/crm114/FAQ.txt.gz``: plain
text, a ``#`` comment header and a title, entries ``*** <question>``, questions wrapped onto
lines indented one to four spaces, a blank line, answers at column 0 mostly opening with
``- ``) read by Screen's reader unchanged (``split_qa_faq``) once each ``***`` reads as ``Q:``
(``split_crm114_faq``), beside the package's documentation, the mail filter's configuration
and the man pages, on a small inline package tree of that shape (a question wrapped over
two lines with one-space indent, one over two lines with four, a stated problem, a follow-up
with no question mark, ``***`` followed by two blanks, an answer with an indented
``<< ... >>`` line and a code line, an answer too short to judge, a note quoting a
question, the sample novels, the to-do list, the ``.crm`` programs and examples, the
changelogs and the copyright); offline, no embedding model, no test reads the real package.

What the set's numbers rest on: every ``***`` entry asks, its wrapped lines joined by one
space; each answer is exactly the text under it up to the next entry; the README, HOWTO,
introduction, quick reference, classifier notes, known bugs, Debian's notes, the
configuration and the man pages are the corpus, the novels, to-do list, colophon, programs,
changelogs and copyright are not; no question is left in any file; the halves are fixed.
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

VERSION = "20100106-10"

Q_STAND = "What does CRM114 stand for?"
Q_TRAIN = (
    'I tried a "train", and I got an error message like: [X-CRM114-Action: LEARN AS '
    "NONSPAM UNNECESSARY- ALREADY CLASSIFIED CORRECTLY - NO ACTION TAKEN]"
)
Q_RETRAIN = (
    "I'm training my CRM114 install. When I mail mistakes back to myself to retrain, "
    "which headers do I include?"
)
Q_THATS_IT = "So that's it?"
Q_HUNG = "I tried training in a huge amount of spam or nonspam, and it hung!"
Q_BAYES = "When will CRM114 go to full Bayesian?"
ASKED = [Q_STAND, Q_TRAIN, Q_RETRAIN, Q_THATS_IT, Q_BAYES]
A_STAND = (
    "- CRM stands for Controllable Regex Mutilator, concept # 114.  It's a\n"
    "mutilating regex engine, designed to slice and dice text."
)
A_TRAIN = (
    "- Ahhh... you've got a mail reading program that changed the headers.\n"
    "Use the force command:\n\n"
    "     mailfilter.crm --spam --force < my_text.txt\n\n"
    "Either will do it for you."
)
A_RETRAIN = (
    "<< For Reaver-based installs (which are now recommended) >>\n\n"
    "Include the whole message, headers and all, under the command line."
)
A_THATS_IT = (
    "- Mathematically, yes.  But the chain rule function has been updated\n"
    "with entropic correction."
)
A_BAYES = 'As of Nov 1 2002, it has.  :-)  See the file "classify_details.txt".'
ANSWERS = {  # ids: the questions' slugs, their first 40 characters
    "what-does-crm114-stand-for": A_STAND,
    "i-tried-a-train-and-i-got-an-error-messa": A_TRAIN,
    "i-m-training-my-crm114-install-when-i-ma": A_RETRAIN,
    "so-that-s-it": A_THATS_IT,
    "when-will-crm114-go-to-full-bayesian": A_BAYES,
}

FAQ = (
    "#\n#\tFAQ.txt - The CRM114 and CRM114 Mailfilter FAQ\n#\n"
    "# Copyright 2006-2009 William S. Yerazunis.\n#\n\n"
    "\t\tThe CRM114 and CRM114 Mailfilter FAQ\n\n"
    "             (last update - 2006-06-06 by WSY)\n\n"
    "*** What does CRM114 stand for?\n\n"
    "- CRM stands for Controllable Regex Mutilator, concept # 114.  It's a\n"
    "mutilating regex engine, designed to slice and dice text.\n\n\n"
    '*** I tried a "train", and I got an error message like:\n'
    " [X-CRM114-Action: LEARN AS NONSPAM UNNECESSARY- ALREADY CLASSIFIED\n"
    " CORRECTLY - NO ACTION TAKEN]\n\n"
    "- Ahhh... you've got a mail reading program that changed the headers.\n"
    "Use the force command:\n\n"
    "     mailfilter.crm --spam --force < my_text.txt\n\n"
    "Either will do it for you.\n\n\n\n"
    "*** I'm training my CRM114 install.  When I mail mistakes back to\n"
    "    myself to retrain, which headers do I include?\n\n"
    "   << For Reaver-based installs (which are now recommended) >>\n\n"
    "Include the whole message, headers and all, under the command line.\n\n"
    "*** So that's it?\n\n"
    "- Mathematically, yes.  But the chain rule function has been updated\n"
    "with entropic correction.\n\n"
    "*** I tried training in a huge amount of spam or nonspam, and it hung!\n\n"
    "- It didn't.\n\n"
    "***  When will CRM114 go to full Bayesian?\n\n"
    'As of Nov 1 2002, it has.  :-)  See the file "classify_details.txt".\n'
)
SHIPPED = {"FAQ.txt": FAQ}
FILES = {
    "FAQ.txt",
    "README",
    "CRM114_Mailfilter_HOWTO.txt",
    "INTRO.txt",
    "QUICKREF.txt",
    "CLASSIFY_DETAILS.txt",
    "KNOWNBUGS.txt",
    "README.Debian",
    "mailfilter.cf",
    "man/crm.1.md",
    "man/cssutil.1.md",
    "man/cssdiff.1.md",
}
CONFIG = (
    "#   mailfilter.cf -- config file for CRM114 mailfilter\n"
    "#   the classifier flags\n:clf: /osb unique microgroom/\n"
)
MAN = (
    '.TH CRM 1 "2010"\n.SH NAME\ncrm \\- the CRM114 Discriminator\n'
    ".SH DESCRIPTION\n.B crm\nis a language for filtering mail and other text.\n"
)


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package as shipped: ``FAQ.txt.gz``; the gzipped and plain notes; the sample
    novels, the to-do list, the colophon, ``NEWS.Debian.gz``; ``examples/`` (programs and
    tests); the configuration and programs under ``/usr/share/crm114``; the three man pages;
    the changelogs and the copyright."""
    root = unpacked_package(tmp_path, monkeypatch, ns.CRM114_PACKAGE, VERSION)
    doc = root / ns.CRM114_DOC
    write_gz(doc / "FAQ.txt.gz", FAQ)
    write_gz(doc / "README.gz", "#\n#\tREADME - master README for CRM114\n#\n\nCongratulations!\n")
    write_gz(
        doc / "CRM114_Mailfilter_HOWTO.txt.gz",
        "The CRM114 Mailfilter HOWTO\n\nPeople ask: So that's it? Read on.\n",
    )
    write_gz(doc / "INTRO.txt.gz", "An introduction to the CRM114 language.\n")
    write_gz(doc / "QUICKREF.txt.gz", "QUICKREF - quick reference for CRM114\n")
    write_gz(doc / "CLASSIFY_DETAILS.txt.gz", "How the classifiers work: OSB, Markovian.\n")
    (doc / "KNOWNBUGS.txt").write_text("Known bugs: windowing on pipes.\n", encoding="utf-8")
    (doc / "README.Debian").write_text("crm114 for Debian: binaries in /usr/bin.\n", "utf-8")
    for name in (
        "Alice_In_Wonderland_Chap_1_And_2.txt.gz",
        "Macbeth_Act_IV.txt.gz",
        "THINGS_TO_DO.txt.gz",
        "NEWS.Debian.gz",
        "changelog.gz",
        "changelog.Debian.gz",
        "examples/mailfilter.crm.gz",
    ):
        write_gz(doc / name, "leftout text\n")
    for name in ("COLOPHON.txt", "copyright", "inoc_passwd.txt", "examples/tests/argtest.crm"):
        (doc / name).parent.mkdir(parents=True, exist_ok=True)
        (doc / name).write_text("leftout\n", encoding="utf-8")
    share = root / "usr/share/crm114"
    share.mkdir(parents=True)
    (root / ns.CRM114_CONFIG).write_text(CONFIG, encoding="utf-8")
    (share / "mailreaver.crm").write_text("# leftout program\n", encoding="utf-8")
    write_gz(root / ns.CRM114_MAN[0], MAN)
    for rel, tool in zip(ns.CRM114_MAN[1:], ("cssutil", "cssdiff"), strict=True):
        write_gz(
            root / rel,
            f'.TH {tool.upper()} 1 "2010"\n.SH NAME\n{tool} \\- .css bucket tool\n'
            ".SH DESCRIPTION\nReads a bucket file.\n",
        )
    return doc


@pytest.fixture
def doc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return _package(tmp_path, monkeypatch)


def test_crm114_faq_set_from_a_package_tree(doc: Path) -> None:
    nset = ns.crm114_faq_set()
    assert nset.name == "crm114-faq"
    # every *** entry asks, in order, wrapped lines joined by one space, follow-ups and
    # stated problems included
    assert [q.qid for q in nset.questions] == [f"crm114-faq:{k}" for k in ANSWERS]
    assert [q.text for q in nset.questions] == ASKED
    nsc.assert_questions_out_answers_in(nset, ANSWERS)
    assert {q.source for q in nset.questions} == {"FAQ.txt"}
    assert set(nset.files) == FILES
    nsc.assert_files_as_written(nset)
    nsc.assert_held_out("crm114-faq")
    faq = nset.files["FAQ.txt"]
    assert not re.search(r"(?m)^(\*\*\*|Q:)", faq)  # the markers out with the questions
    # the comment header and title stay; answers stay paragraphs apart; a left-out entry's
    # answer stays in the page
    assert faq.startswith("#\n#\tFAQ.txt - The CRM114 and CRM114 Mailfilter FAQ\n")
    assert "slice and dice text.\n\n- Ahhh..." in faq
    assert "with entropic correction.\n\n- It didn't.\n\nAs of Nov 1 2002" in faq
    # the HOWTO's copy of a question scrubbed, the rest kept
    howto = nset.files["CRM114_Mailfilter_HOWTO.txt"]
    assert "People ask:" in howto and "Read on." in howto
    assert nset.files["mailfilter.cf"] == CONFIG
    assert nset.files["README"].startswith("#\n#\tREADME - master README for CRM114")
    assert "OSB, Markovian." in nset.files["CLASSIFY_DETAILS.txt"]
    assert "windowing on pipes" in nset.files["KNOWNBUGS.txt"]
    man = nset.files["man/crm.1.md"]
    assert man.startswith("# CRM(1)") and "filtering mail and other text" in man
    assert "bucket tool" in nset.files["man/cssdiff.1.md"]
    # novels, to-do list, colophon, NEWS.Debian, programs, changelogs and copyright out
    assert "leftout" not in " ".join(nset.files.values())
    assert VERSION in nset.note and "mailfilter.cf" in nset.note and "crm.1" in nset.note
    nsc.assert_left_out(nset, Q_HUNG, len(ASKED))


def test_no_question_text_is_left_in_any_file(doc: Path) -> None:
    nsc.assert_leak_checked(ns.crm114_faq_set(), SHIPPED, [*ASKED, Q_HUNG])


def test_crm114_faq_set_halves_are_fixed_and_disjoint(doc: Path) -> None:
    more = FAQ.replace(
        "*** So that's it?",
        "*** Why is CRM114 such a memory pig?\n\n- It's not _that piggish_.  It preallocates "
        "five buffers.\n\n*** So that's it?",
    )
    assert more != FAQ
    nsc.assert_halves_survive_an_added_question(
        ns.crm114_faq_set, lambda: write_gz(doc / "FAQ.txt.gz", more)
    )


def test_crm114_faq_set_refuses_a_package_without_the_faq(doc: Path) -> None:
    (doc / "FAQ.txt.gz").unlink()
    nsc.assert_refuses_without_faq(ns.crm114_faq_set, "FAQ.txt.gz")


_QWORD = st.sampled_from(["CRM114", "spam", "the", ".css", "mailfilter.crm", "?", "!!!", "*"])
_AWORD = st.sampled_from(["-", "Yes.", "train", "the", "<<", ">>", "buckets", "***x", "(see"])
_ALINE = st.one_of(
    st.builds(" ".join, st.lists(_AWORD, min_size=1, max_size=5)),
    st.builds(lambda w: "     " + " ".join(w), st.lists(_AWORD, min_size=1, max_size=4)),
    st.just(""),
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(_QWORD, min_size=0, max_size=10),  # the question's words after its tag
            st.data(),  # where the question wraps and how deep, blank lines before the answer
            st.lists(_AWORD, min_size=1, max_size=5),  # the answer's first line
            st.lists(_ALINE, max_size=6),  # the answer's further lines
        ),
        min_size=1,
        max_size=6,
    )
)
def test_split_crm114_faq_reads_starred_entries_property(
    entries: list[tuple[list[str], st.DataObject, list[str], list[str]]],
) -> None:
    """Random FAQs shaped as CRM114's: a ``#`` header and a title, then entries ``***
    <question>`` (one or two blanks after the stars), each question wrapped onto lines
    indented one to four spaces at random word breaks, 1-3 blank lines before its answer,
    the answer's lines at column 0 or indented five spaces (some holding ``***x`` mid-line)
    with blank lines among them: every entry asks, in order, its words joined by one space;
    its answer exactly the text under it up to the next entry (ends stripped, blank runs made
    one); ids the slugs; no marker and no question left in the page; the header and every
    answer in it."""
    lines = ["#", "#\tFAQ.txt - The CRM114 and CRM114 Mailfilter FAQ", "#", ""]
    expected: list[tuple[str, str]] = []
    for n, (words, data, first, more) in enumerate(entries):
        words = [f"entry{n}x", *words]
        question = " ".join(words)
        breaks = data.draw(st.lists(st.booleans(), min_size=len(words), max_size=len(words)))
        indent = " " * data.draw(st.integers(1, 4))
        wrapped = "".join(
            w + ("\n" + indent if br and k < len(words) - 1 else " ")
            for k, (w, br) in enumerate(zip(words, breaks, strict=True))
        ).rstrip(" ")
        lines += ("***" + " " * data.draw(st.integers(1, 2)) + wrapped).split("\n")
        lines += [""] * data.draw(st.integers(1, 3))
        answer_first = " ".join(first)
        lines += [answer_first, *more, ""]
        body = re.sub(r"\n{3,}", "\n\n", "\n".join([answer_first, *more])).strip()
        expected.append((question, body))
    page, qa = ns.split_crm114_faq("\n".join(lines) + "\n")
    assert [(q, a) for _, q, a in qa] == expected
    assert [k for k, _, _ in qa] == [ns._slug(q).rstrip("-") for q, _ in expected]
    assert not re.search(r"(?m)^\*\*\*[ \t]", page)
    assert not re.search(r"entry\d+x", page)
    assert page.startswith("#\n#\tFAQ.txt - The CRM114 and CRM114 Mailfilter FAQ\n")
    nsc.assert_page_keeps_answers(qa, page)
