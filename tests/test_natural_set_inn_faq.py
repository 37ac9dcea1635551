"""The ``inn-faq`` natural-question set (``bench/natural_sets.py``), its reading of the INN
2.x FAQ and the question-leak check (``bench/check_question_leaks.py``) on a small inline
FAQ shaped as Debian's ``inn2`` ships it (``FAQ.gz``: a Usenet digest. News headers and a
preface, then entries after rules of dashes, each headed ``Subject: 1.1. <title>`` with a
dot after the number; a ``Subject: Contents`` entry listing every title; group entries
``Subject: 3. Specific Problems``; titles that are questions, problems, error messages and
tasks under "How Do I..."; a title folded over two lines; an entry with no text) beside the
server's notes (one quoting a question, one over the page limit), man pages (one quoting a
question, a ``.so`` alias, a link), ``NEWS``, the changelogs, ``CONTRIBUTORS``, the copyright
and ``examples/``, in a package tree laid out as the package unpacks (marker present, nothing
downloaded); offline, no embedding model, no test reads the real package.

What the set's numbers rest on: no title or line of the contents is left in any file; each
answer is exactly the entry's text after its ``Subject:`` line up to the next entry's rule;
group entries and the preface stay and ask nothing; ids are the FAQ's numbers, so an entry
added keeps the halves; an answer too short to judge leaves the set but not the corpus's
scrubbing.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import natural_set_checks as nsc
import natural_sets as ns
from debian_package_double import unpacked_package, write_gz

RULE = "-" * 30
Q_WHAT = "What is INN?"
Q_CNFS = "What is CNFS?"
Q_START = "INN won't start after a new installation"
Q_STORE = "innd: SERVER cant store article"
Q_RENAME = "Rename a newsgroup"
Q_FEEDS = "Find external feeds and set up peering with other news servers nearby"
ASKED = [Q_WHAT, Q_CNFS, Q_START, Q_STORE, Q_RENAME, Q_FEEDS]

A_WHAT = (
    "The README that comes with INN has this to say (in part):\n\n"
    "    INN (InterNetNews), originally written by Rich Salz, is an extremely\n"
    "    flexible and configurable Usenet / Netnews news server."
)
A_CNFS = (
    "CNFS is the Cyclic News File System.  It stores articles sequentially in\n"
    "pre-configured buffer files."
)
A_START = (
    "Look in news.err and news.crit in the log directory first; a missing\n"
    "history database is the usual cause.  Run makedbz -i to build one."
)
A_STORE = (
    "This means the storage API could not find a storage class for the article.\n"
    "Check storage.conf: every newsgroup needs a matching method."
)
A_RENAME = (
    "There is no single command.  Create the new group with ctlinnd newgroup,\n"
    "move the articles, then remove the old group with ctlinnd rmgroup."
)
A_FEEDS = (
    "Ask in news.admin.peering; several administrators will answer.  Then\n"
    "set up incoming.conf, newsfeeds and innfeed.conf."
)
ANSWERS = {
    "1.1": A_WHAT,
    "2.2": A_CNFS,
    "3.1": A_START,
    "4.1": A_STORE,
    "6.5": A_RENAME,
    "6.14": A_FEEDS,
}

FAQ = f"""From: Russ Allbery <eagle@example.org>
Subject: INN 2.x FAQ
Newsgroups: news.software.nntp

Archive-name: usenet/software/inn2-faq

This FAQ answers frequently asked questions about INN preface.

{RULE}

Subject: Contents

1.  General Questions
    1.1.  {Q_WHAT}
2.  Terms
    2.2.  {Q_CNFS}
3.  Specific Problems
    3.1.  {Q_START}
4.  Error Messages
    4.1.  {Q_STORE}
6.  How Do I...
    6.5.  {Q_RENAME}
    6.14. Find external feeds and set up peering with other news
          servers nearby

{RULE}

Subject: 1. General Questions

Contained in this section are general questions about INN.

{RULE}

Subject: 1.1. {Q_WHAT}

{A_WHAT}

{RULE}

Subject: 2. Terms

{RULE}

Subject: 2.2. {Q_CNFS}

{A_CNFS}

{RULE}

Subject: 3. Specific Problems

{RULE}

Subject: 3.1. {Q_START}

{A_START}

{RULE}

Subject: 4. Error Messages

{RULE}

Subject: 4.1. {Q_STORE}

{A_STORE}

{RULE}

Subject: 6. How Do I...

{RULE}

Subject: 6.5. {Q_RENAME}

{A_RENAME}

{RULE}

Subject: 6.13. Run INN without any text under it

{RULE}

Subject: 6.14. Find external feeds and set up peering with other news
  servers nearby

{A_FEEDS}
"""


# -- the reading -------------------------------------------------------------------------


def test_split_inn_faq_questions_answers_and_ids() -> None:
    page, qa = ns.split_inn_faq(FAQ)
    assert qa == [(k, q, ANSWERS[k]) for k, q in zip(ANSWERS, ASKED, strict=True)]
    flat = nsc.flat(page)
    for q in ASKED:
        assert nsc.flat(q) not in flat
    nsc.assert_page_keeps_answers(qa, page)
    # the contents dropped whole, the preface, headers and group entries kept
    assert "Subject: Contents" not in page and "1.  General Questions" not in page
    assert "questions about INN preface" in page
    assert "Subject: 4. Error Messages" in page
    assert "Contained in this section are general questions about INN." in page
    # an entry with no text asks nothing
    assert all(k != "6.13" for k, _, _ in qa)


def test_split_nmh_faq_alone_reads_nothing_of_the_inn_spelling() -> None:
    """Why the alignment: the MH reading, given the INN digest as shipped, asks nothing
    (``1.1.`` is not its ``NN.MM``) and keeps the contents; after it, every title."""
    page, qa = ns.split_nmh_faq(FAQ)
    assert qa == []
    assert f"1.1.  {Q_WHAT}" in page
    assert [q for _, q, _ in ns.split_inn_faq(FAQ)[1]] == ASKED


def test_split_inn_faq_only_touches_subject_lines() -> None:
    """A ``Subject: 1.1.`` written inside an answer (indented) or a "Contents" word
    elsewhere stays as written."""
    text = FAQ.replace(
        A_CNFS, A_CNFS + "\n\n  Subject: 9.9. quoted in a posting\nSee the Contents of INSTALL."
    )
    page, qa = ns.split_inn_faq(text)
    assert dict((k, a) for k, _, a in qa)["2.2"].endswith(
        "  Subject: 9.9. quoted in a posting\nSee the Contents of INSTALL."
    )
    assert "9.9" not in [k for k, _, _ in qa]
    assert "See the Contents of INSTALL." in page


_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=3, max_size=8)


@settings(max_examples=60, deadline=None)
@given(
    groups=st.lists(
        st.lists(
            st.tuples(
                st.lists(_WORD, min_size=2, max_size=6),
                st.lists(_WORD, min_size=0, max_size=12),
            ),
            min_size=0,
            max_size=4,
        ),
        min_size=1,
        max_size=4,
    )
)
def test_split_inn_faq_property(groups: list[list[tuple[list[str], list[str]]]]) -> None:
    """Any digest of this shape: each entry with text is asked once, by its number, with
    exactly its text as the answer; entries without text ask nothing; no title and no line
    of the contents stays in the page; the group entries do."""
    contents: list[str] = []
    body: list[str] = []
    expected: list[tuple[str, str, str]] = []
    for g, entries in enumerate(groups, start=1):
        contents.append(f"{g}.  group{g}x")
        body += [RULE, "", f"Subject: {g}. group{g}x", ""]
        for e, (title, words) in enumerate(entries, start=1):
            question = f"q{g}n{e}x " + " ".join(title)
            contents.append(f"    {g}.{e}.  {question}")
            body += [RULE, "", f"Subject: {g}.{e}. {question}", ""]
            if words:
                answer = " ".join(words)
                body += [answer, ""]
                expected.append((f"{g}.{e}", question, answer))
    text = "\n".join(["Preface.", "", RULE, "", "Subject: Contents", "", *contents, "", *body])
    page, qa = ns.split_inn_faq(text)
    assert qa == expected
    for g, entries in enumerate(groups, start=1):
        assert f"Subject: {g}. group{g}x" in page
        for e in range(1, len(entries) + 1):
            assert f"q{g}n{e}x" not in page
    assert "Subject: Contents" not in page


# -- the set, built from a package tree shaped like Debian's inn2 ---------------------------


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.INN_PACKAGE, "2.7.1-1+deb12u1")
    doc: Path = root / ns.INN_DOC
    write_gz(doc / ns.INN_FAQ, faq)
    write_gz(doc / "README.gz", "INN is a news server.\n")
    write_gz(doc / "INSTALL.gz", f"Installing INN. People ask: {Q_FEEDS}? See below.\n")
    write_gz(doc / "checklist.gz", "A checklist for the install.\n")
    write_gz(doc / "external-auth.gz", "External authenticators for nnrpd.\n")
    write_gz(doc / "hook-perl.gz", "Perl hooks. " * 15_000)
    (doc / "IPv6-info").write_text("IPv6 is supported.\n")
    (doc / "README.Debian").write_text("Debian: the spool is under /var/spool/news.\n")
    write_gz(doc / "NEWS.gz", "leftout news\n")
    write_gz(doc / "CONTRIBUTORS.gz", "leftout\n")
    write_gz(doc / "changelog.gz", "leftout\n")
    write_gz(doc / "changelog.Debian.gz", "leftout\n")
    (doc / "copyright").write_text("leftout\n")
    (doc / "examples").mkdir()
    (doc / "examples/motd.innd").write_text("leftout\n")
    man = root / "usr/share/man"
    write_gz(
        man / "man8/ctlinnd.8.gz",
        ".TH CTLINND 8\n.SH NAME\nctlinnd \\- control innd\n.SH DESCRIPTION\n"
        f"{Q_START}: check the logs with newgroup and rmgroup.\n",
    )
    write_gz(man / "man5/inn.conf.5.gz", ".TH INN.CONF 5\n.SH NAME\ninn.conf \\- settings\n")
    write_gz(man / "man8/rnews.8.gz", ".so man8/ctlinnd.8\n")
    os.symlink("inn.conf.5.gz", man / "man5/inn-conf.5.gz")
    return doc


@pytest.fixture
def doc_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package tree as shipped (:data:`FAQ`), the documentation folder."""
    return _package(tmp_path, monkeypatch)


def test_inn_faq_set_from_a_package_tree(doc_dir: Path) -> None:
    nset = ns.inn_faq_set()
    nsc.assert_package_set(
        nset,
        "inn-faq",
        ids=list(ANSWERS),
        files={
            "FAQ",
            "README",
            "INSTALL",
            "checklist",
            "external-auth",
            "IPv6-info",
            "README.Debian",
            "man/ctlinnd.8.md",
            "man/inn.conf.5.md",
        },
        source="FAQ",
        version="2.7.1-1+deb12u1",
        too_long="hook-perl",
        answers=ANSWERS,
    )
    corpus = " ".join(nset.files.values())
    assert "leftout" not in corpus
    # a note and a man page quoting a question: scrubbed, their other text kept
    assert "People ask:" in nset.files["INSTALL"] and "See below." in nset.files["INSTALL"]
    assert "with newgroup and rmgroup." in nset.files["man/ctlinnd.8.md"]
    assert nset.left_out == ()
    assert "8 files" in nset.note  # notes and man pages kept, the one over the cap out


def test_inn_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = FAQ.replace(A_CNFS, "Cyclic buffers.")
    assert short != FAQ
    _package(tmp_path, monkeypatch, short)
    nsc.assert_left_out(ns.inn_faq_set(), Q_CNFS, len(ASKED) - 1)


def test_no_question_text_is_left_in_any_file(doc_dir: Path) -> None:
    nset = ns.inn_faq_set()
    nsc.assert_leak_checked(nset, {"FAQ": FAQ}, ASKED)


def test_inn_faq_set_halves_are_fixed_and_disjoint(doc_dir: Path) -> None:
    more = FAQ.replace(
        f"Subject: 2.2. {Q_CNFS}",
        "Subject: 2.1. What is tradspool (traditional spool)?\n\n"
        "Traditional spool stores each article in its own file.\n\n"
        f"{RULE}\n\nSubject: 2.2. {Q_CNFS}",
    )
    assert more != FAQ
    nsc.assert_halves_survive_an_added_question(
        ns.inn_faq_set, lambda: write_gz(doc_dir / ns.INN_FAQ, more)
    )


def test_inn_faq_set_refuses_a_package_without_the_faq(doc_dir: Path) -> None:
    (doc_dir / ns.INN_FAQ).unlink()
    nsc.assert_refuses_without_faq(ns.inn_faq_set, ns.INN_FAQ)
