"""The ``sylpheed-faq`` natural-question set (``bench/natural_sets.py``): the Sylpheed FAQ as
Debian's ``sylpheed-doc`` ships it (``/usr/share/doc/sylpheed-doc/FAQ/en/``: linuxdoc SGML
rendered by SGML-Tools 1.0.9, one page a chapter, upper-case tags, every entry an ``<H2>``
with its anchor inside, numbered and labelled by its authors: ``1.2 Q02 What is
Sylpheed?``), read by the ZoneMinder reading unchanged
(:func:`natural_sets.split_zoneminder_faq`), and the question-leak check
(``bench/check_question_leaks.py``), on small inline pages shaped as shipped: two chapter
pages (a chapter title with no text, asked entries with ``Qnn`` / ``Cnn`` / ``Qnn.``
labels, a user's problem report without "?", a short answer), the contents page listing
every question, the team and licence appendices, beside the English manual (a page quoting
a question, one over the page limit, its own team and licence pages) and the German
translations, in a package tree laid out as the package unpacks (marker present, nothing
downloaded); offline, no embedding model, no test reads the real package.

What the set's numbers rest on: no question is left in any file (the contents page, which
lists them all, is out); each question is the heading without its section number and
label; each answer is exactly the text under its heading up to the next one; chapter titles
stay and ask nothing; the appendices and translations stay out; ids are the page and the
heading's slug, so a question added keeps the halves; an answer too short to judge leaves
the set but not the corpus's scrubbing.
"""

from __future__ import annotations

import re
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

VERSION = "20140827-3"

Q_WHAT = "What is Sylpheed?"
Q_MBOX = "Can Sylpheed handle local unix mailboxes?"
Q_MUTT = "Mutt does not recognize Sylpheed's MH structure"
Q_SELECTIVE = "How does selective download work?"
Q_ACCOUNT = "How do I set up an account?"
Q_BCC = "Where is the Bcc when I compose a mail?"
ASKED = [Q_WHAT, Q_MUTT, Q_SELECTIVE, Q_ACCOUNT, Q_BCC]
"""In the set's order: the chapter pages by name, each page's questions in page order."""

A_WHAT = "A. Sylpheed is an e-mail client (& news reader) based on GTK+, aiming for quick response."
A_MUTT = "A. Mutt wants a .mh_sequences file in every folder; create an empty one by hand."
A_SELECTIVE = "A. It shows the headers on the server first, and you mark the mails to download."
A_ACCOUNT = "A. Open Configuration, then Create new account, and fill in the server names."
A_BCC = "A. Open Configuration, Preferences for current account, Compose, and check Bcc."
NAV = "  Next Previous Contents"
"""The navigation line under a chapter, as the converter reads it: the page's last answer
ends with it (as shipped; a few words every row sees alike)."""
IDS = [
    "sylpheed-faq-1/1-1-q01-what-is-sylpheed",
    "sylpheed-faq-1/1-3-q03-mutt-does-not-recognize-sylpheed",
    "sylpheed-faq-1/1-4-c04-how-does-selective-download-work",
    "sylpheed-faq-2/2-1-q01-how-do-i-set-up-an-account",
    "sylpheed-faq-2/2-2-q14-where-is-the-bcc-when-i-compose-",
]


def _page(title: str, body: str) -> str:
    """A page as SGML-Tools 1.0.9 writes it: upper-case tags, the navigation links above and
    below the chapter."""
    nav = '<A HREF="next.html">Next</A>\nPrevious\n<A HREF="index.html#toc1">Contents</A>\n'
    return (
        '<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 3.2 Final//EN">\n<HTML>\n<HEAD>\n'
        ' <META NAME="GENERATOR" CONTENT="SGML-Tools 1.0.9">\n'
        f" <TITLE>{title}</TITLE>\n</HEAD>\n<BODY>\n{nav}<HR>\n{body}\n<HR>\n{nav}</BODY>\n"
        "</HTML>\n"
    )


def _entry(anchor: str, title: str, text: str) -> str:
    body = f"\n<P>{text}\n" if text else "\n"
    return f'<H2><A NAME="{anchor}">{title}</A>\n</H2>\n{body}'


def _chapter(n: int, title: str, entries: list[tuple[str, str]]) -> str:
    out = f'<H2><A NAME="s{n}">{n}. {title}</A></H2>\n\n'
    for i, (head, text) in enumerate(entries, start=1):
        out += _entry(f"ss{n}.{i}", f"{n}.{i} {head}", text)
    return out


FAQ_1 = _page(
    "Sylpheed FAQ: Sylpheed FAQ - General information",
    _chapter(
        1,
        "Sylpheed FAQ - General information",
        [
            (f"Q01 {Q_WHAT}", A_WHAT),
            (f"Q02 {Q_MBOX}", "A. Yes."),
            (f"Q03 {Q_MUTT}", A_MUTT),
            (f"C04 {Q_SELECTIVE}", A_SELECTIVE),
        ],
    ),
)
FAQ_2 = _page(
    "Sylpheed FAQ: Sylpheed FAQ - Installation and Configuration",
    _chapter(
        2,
        "Sylpheed FAQ - Installation and Configuration",
        [(f"Q01 {Q_ACCOUNT}", A_ACCOUNT), (f"Q14. {Q_BCC}", A_BCC)],
    ),
)
CONTENTS = _page(
    "Sylpheed FAQ",
    "<H1>Sylpheed FAQ</H1>\n<P>leftout copyright\n<UL>"
    + "".join(f'<LI><A HREF="sylpheed-faq-1.html">{q}</A></LI>\n' for q in [Q_WHAT, Q_MBOX, Q_BCC])
    + "</UL>",
)
TEAM = _page("Team", _entry("s4", "4. The Sylpheed documentation team:", "leftout credits list"))
GFDL = _page("GFDL", _entry("s5", "5. GNU Free Documentation License", "leftout licence text"))
SHIPPED = {"sylpheed-faq-1.html": FAQ_1, "sylpheed-faq-2.html": FAQ_2}
MANUAL_CONTENTS = _page(
    "Sylpheed User's Manual",
    "<H1>Sylpheed User's Manual</H1>\n<P>1. What is Sylpheed?\n<P>2. Quick-guide to mail setup",
)
MANUAL_INTRO = _page(
    "Sylpheed User's Manual: What is Sylpheed?",
    _chapter(1, "Introduction", [("Features", f"People ask: {Q_BCC} The manual says more.")]),
)
MANUAL_FILES = {
    "FAQ/en/sylpheed-faq-1.md",
    "FAQ/en/sylpheed-faq-2.md",
    "manual/en/sylpheed.md",
    "manual/en/sylpheed-1.md",
}


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **faq_pages: str) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.SYLPHEED_PACKAGE, VERSION)
    doc: Path = root / ns.SYLPHEED_DOC
    faq = doc / ns.SYLPHEED_FAQ_DIR
    manual = doc / ns.SYLPHEED_MANUAL_DIR
    for folder in (faq, manual, doc / "FAQ/de", doc / "manual/de"):
        folder.mkdir(parents=True)
    for name, text in {
        **SHIPPED,
        "sylpheed-faq.html": CONTENTS,
        "sylpheed-faq-4.html": TEAM,
        "sylpheed-faq-5.html": GFDL,
    }.items():
        (faq / name).write_text(text, encoding="utf-8")
    (faq / "sylpheed-faq.sgml.gz").write_bytes(b"leftout sgml")
    (manual / "sylpheed.html").write_text(MANUAL_CONTENTS, encoding="utf-8")
    (manual / "sylpheed-1.html").write_text(MANUAL_INTRO, encoding="utf-8")
    (manual / "sylpheed-13.html").write_text(
        _page("Filters", _chapter(13, "Filters", [("Rules", "Filter rules. " * 12_000)])),
        encoding="utf-8",
    )
    (manual / "sylpheed-21.html").write_text(TEAM, encoding="utf-8")
    (manual / "sylpheed-22.html").write_text(GFDL, encoding="utf-8")
    (doc / "FAQ/de/sylpheed-faq-1.html").write_text(
        _page("FAQ", _chapter(1, "Allgemein", [("Q01 Was ist Sylpheed?", "leftout Deutsch")])),
        encoding="utf-8",
    )
    (doc / "manual/de/sylpheed-1.html").write_text(_page("x", "leftout Handbuch"), encoding="utf-8")
    for name, text in faq_pages.items():  # a test's own version of a page, written last
        (faq / name).write_text(text, encoding="utf-8")
    return faq


@pytest.fixture
def faq_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package tree as shipped, the English FAQ folder."""
    return _package(tmp_path, monkeypatch)


def test_sylpheed_faq_set_from_a_package_tree(faq_dir: Path) -> None:
    nset = ns.sylpheed_faq_set()
    assert nset.name == "sylpheed-faq"
    assert [q.qid for q in nset.questions] == [f"sylpheed-faq:{k}" for k in IDS]
    # the section number and the authors' label (Q01, C04, Q14.) are off every question
    assert [q.text for q in nset.questions] == ASKED
    assert set(nset.files) == MANUAL_FILES
    assert [q.answers[0][0] for q in nset.questions] == [
        A_WHAT,
        A_MUTT,
        A_SELECTIVE + NAV,
        A_ACCOUNT,
        A_BCC + NAV,
    ]
    for q in nset.questions:
        page = q.qid.removeprefix("sylpheed-faq:").split("/")[0]
        assert q.source == f"FAQ/en/{page}.md"
    nsc.assert_questions_out_answers_in(nset)
    nsc.assert_files_as_written(nset)
    nsc.assert_held_out("sylpheed-faq")
    assert VERSION in nset.note and "over 150000 chars: manual/en/sylpheed-13.html" in nset.note
    corpus = " ".join(nset.files.values())
    assert "leftout" not in corpus  # contents page, appendices, translations, SGML source
    # chapter titles stay and ask nothing
    assert "Sylpheed FAQ - General information" in nset.files["FAQ/en/sylpheed-faq-1.md"]
    # a manual page quoting a question: scrubbed, its other text kept
    intro = nset.files["manual/en/sylpheed-1.md"]
    assert "People ask:" in intro and "The manual says more." in intro
    assert Q_BCC not in intro
    # the manual's contents: its first chapter's title is an FAQ question, scrubbed there too
    assert "Quick-guide to mail setup" in nset.files["manual/en/sylpheed.md"]
    # the short answer left out and named (its question still scrubbed)
    nsc.assert_left_out(nset, Q_MBOX, len(ASKED))


def test_no_question_text_is_left_in_any_file(faq_dir: Path) -> None:
    nset = ns.sylpheed_faq_set()
    nsc.assert_leak_checked(nset, SHIPPED, [*ASKED, Q_MBOX], is_html=True)


def test_sylpheed_faq_set_halves_are_fixed_and_disjoint(faq_dir: Path) -> None:
    more = FAQ_2.replace(
        "</BODY>",
        _entry("ss2.3", "2.3 Q15 How do I enable GPG support?", "A. Build with --enable-gpgme.")
        + "</BODY>",
        1,
    )
    assert more != FAQ_2
    nsc.assert_halves_survive_an_added_question(
        ns.sylpheed_faq_set,
        lambda: (faq_dir / "sylpheed-faq-2.html").write_text(more, encoding="utf-8"),
    )


def test_sylpheed_faq_set_refuses_a_package_without_the_faq(faq_dir: Path) -> None:
    (faq_dir / "sylpheed-faq.html").unlink()
    nsc.assert_refuses_without_faq(ns.sylpheed_faq_set, "FAQ/en/sylpheed-faq.html")


_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=3, max_size=8)


@settings(max_examples=40, deadline=None)
@given(
    entries=st.lists(
        st.tuples(
            st.sampled_from(["Q", "C", "Q."]),  # the authors' label, as the pages write it
            st.sampled_from(["asked", "stated", "topic"]),
            st.lists(_WORD, min_size=1, max_size=5),
            st.lists(_WORD, min_size=0, max_size=12),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_sylpheed_faq_set_reads_any_linuxdoc_chapter(
    entries: list[tuple[str, str, list[str], list[str]]],
) -> None:
    """Any chapter page of the SGML-Tools shape, as ``sylpheed-faq-2.html``: each numbered,
    labelled entry that asks (ends with "?", or states something in 3+ words with text of
    its own) asked once, without its number and label, as ``sylpheed-faq-2/<slug>``, with
    exactly its text as the answer (left out and named when under five words), and gone
    from every file (its number and label make a one-word title three words: it asks too);
    an entry without text and the chapter title stay and ask nothing; the other chapter's
    questions unchanged around it. The navigation line under the chapter is the last
    entry's own text, as on every shipped page."""
    rows: list[tuple[str, str]] = []
    expected: list[tuple[str, str, str]] = []
    short: list[str] = []
    kept: list[str] = []
    for i, (label, kind, title, words) in enumerate(entries, start=1):
        code = f"C{i:02d}" if label == "C" else f"Q{i:02d}" + ("." if label == "Q." else "")
        if kind == "asked":
            question = f"q{i}x " + " ".join(title) + "?"
        elif kind == "stated":
            question = f"s{i}x said " + " ".join([*title, "here"])
        else:
            question = f"t{i}x"
        answer = "A. " + " ".join(words) if words else ""
        rows.append((f"{code} {question}", answer))
        head = f"2.{i} {code} {question}"
        # the page's last entry reads the navigation line under the chapter as its own text
        own = (answer + NAV if answer else NAV.strip()) if i == len(entries) else answer
        # number, label and title make three words: every entry with text of its own asks,
        # a one-word title ("t3x") too, as the ZoneMinder rule reads the whole heading
        if own and len(re.findall(r"\w+", own)) >= ns.MIN_ANSWER_WORDS:
            expected.append((f"sylpheed-faq-2/{ns._slug(head)}", question, own))
        elif own:
            short.append(question)
        else:
            kept.append(question)
    page = _page("Chapter 2", _chapter(2, "Chapter two", rows))
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
        _package(Path(tmp), mp, **{"sylpheed-faq-2.html": page})
        nset = ns.sylpheed_faq_set()
    got = [(q.qid.removeprefix("sylpheed-faq:"), q.text, q.answers[0][0]) for q in nset.questions]
    assert [g for g in got if g[0].startswith("sylpheed-faq-2/")] == expected
    assert [g[1] for g in got if g[0].startswith("sylpheed-faq-1/")] == ASKED[:3]
    assert list(nset.left_out) == [Q_MBOX, *short]
    text = nset.files["FAQ/en/sylpheed-faq-2.md"]
    corpus = nsc.flat(" ".join(nset.files.values()))
    for _, question, _ in expected:
        assert nsc.flat(question) not in corpus
    for question in short:
        assert nsc.flat(question) not in corpus
    for heading in kept:
        assert heading in text
    assert "Chapter two" in text
