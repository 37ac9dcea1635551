"""The ``proftpd-faq`` natural-question set (``bench/natural_sets.py``), its reading of the
ProFTPD FAQ and the question-leak check (``bench/check_question_leaks.py``) on small inline
pages shaped as Debian's ``proftpd-doc`` ships them (``faq.html``, one page written by the
DocBook DSSSL stylesheets: upper-case tags and attributes, each closing ``>`` on the next
line; a title page with the author and the conditions of reproduction, the book's contents,
then one ``CHAPTER`` div a chapter, each an ``<H1>`` title over a ``QANDASET`` laid out in
divs: the generated list of its questions, then ``QANDAENTRY`` divs of a ``QUESTION`` (an
anchor, the number in bold, restarting in every chapter) and an ``ANSWER`` opening with an
empty bold label; questions, users' reports and one- or two-word topic titles mixed) beside
the package's index, the core modules' reference and the directives' index, with the howtos,
the contributed modules' pages and the notes around them, in a package tree laid out as the
package unpacks (marker present, nothing downloaded); offline, no embedding model, no test
reads the real package.

What the set's numbers rest on: an entry asks by the ZoneMinder rule (a title ending with
"?", or one of three words or more with an answer), so a topic title ("SQL") stays in the
page over its text and is never a query; no asked question and no line of the generated
lists is left in any file; each answer is exactly its entry's answer div; ids are the
chapter and the entry's number, so an entry added keeps the halves.
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

HEAD = (
    '<HTML\n><HEAD\n><TITLE\n>Professional FTP Daemon FAQ</TITLE\n><META\nNAME="GENERATOR"\n'
    'CONTENT="Modular DocBook HTML Stylesheet Version 1.77+"></HEAD\n><BODY\nCLASS="BOOK"\n>'
    '<DIV\nCLASS="BOOK"\n><A\nNAME="AEN1"\n></A\n><DIV\nCLASS="TITLEPAGE"\n><H1\n'
    'CLASS="TITLE"\n><A\nNAME="AEN2"\n></A\n>Professional FTP Daemon FAQ</H1\n><H3\n'
    'CLASS="AUTHOR"\n><A\nNAME="AEN4"\n></A\n>Mark Lowes</H3\n><P\nCLASS="COPYRIGHT"\n>'
    'Copyright &copy; 1999-2003 Mark Lowes</P\n><HR></DIV\n><DIV\nCLASS="TOC"\n><DL\n><DT\n>'
    '<B\n>Table of Contents</B\n></DT\n><DT\n>1. <A\nHREF="#AEN33"\n>tocline Introduction</A\n>'
    "</DT\n></DL\n></DIV\n>"
)
FOOT = "</DIV\n></BODY\n></HTML\n>\n"


def entry(number: int, title: str, answer: str | None) -> str:
    """One ``qandaentry`` as the stylesheets write it: the question div (an anchor, the
    number in bold, the title), then its answer div (an empty bold label, the text), or no
    answer div when ``answer`` is None."""
    div = (
        "" if answer is None else f'<DIV\nCLASS="ANSWER"\n><P\n><B\n> </B\n>{answer}</P\n></DIV\n>'
    )
    return (
        f'<DIV\nCLASS="QANDAENTRY"\n><DIV\nCLASS="QUESTION"\n><P\n><A\nNAME="AEN{number}"\n>'
        f"</A\n><B\n>{number}. </B\n>{title}</P\n></DIV\n>{div}</DIV\n>"
    )


def chapter(place: int, title: str, entries: list[tuple[str, str | None]]) -> str:
    """One chapter: its ``<H1>`` title over one qandaset, the generated list of its
    questions (``listline`` marks each line) and its entries, numbered from 1."""
    listed = "".join(
        f'<DT\n>{n}. <A\nHREF="#AEN{n}"\n>listline {t}</A\n></DT\n>'
        for n, (t, _) in enumerate(entries, 1)
    )
    body = "".join(entry(n, t, a) for n, (t, a) in enumerate(entries, 1))
    return (
        f'<DIV\nCLASS="CHAPTER"\n><HR><H1\n><A\nNAME="AEN{place}"\n></A\n>Chapter {place}. '
        f'{title}</H1\n><DIV\nCLASS="QANDASET"\n><DL\n>{listed}</DL\n>{body}</DIV\n></DIV\n>'
    )


def book(chapters: list[tuple[str, list[tuple[str, str | None]]]]) -> str:
    return HEAD + "".join(chapter(n, t, e) for n, (t, e) in enumerate(chapters, 1)) + FOOT


Q_WHAT = "What is ProFTPD?"
Q_INETD = "How do I run ProFTPD from inetd?"
Q_SHELL = '"(Login failed): Invalid shell"'
Q_SCHEME = "Version numbering scheme"
Q_ROOT = "How do I ftp as root?"
A_WHAT = "ProFTPD is a ftp server primarily written for the various unix variants."
A_SQL = "Use mod_sql, one of the contributed modules, for SQL authentication."
A_INETD = "Set ServerType inetd in proftpd.conf and add a line to inetd.conf."
A_SHELL = "The user's shell is not listed in /etc/shells; add it there or use RequireValidShell."
A_SLOW = "Slow logins are mostly reverse DNS lookups timing out; set UseReverseDNS off."
A_SCHEME = "At the moment there is a little irrationality in the numbering scheme."
A_ROOT = "Set RootLogin on in the server's context, and think twice before doing it."
FAQ = book(
    [
        (
            "Introduction to ProFTPD",
            [(Q_WHAT, A_WHAT), (Q_SCHEME, A_SCHEME), ("Downloading", "See the mirrors page now.")],
        ),
        ("Compatibility and Integration", [("SQL", A_SQL), ("Compiling it", None)]),
        (
            "Common Problems",
            [(Q_INETD, A_INETD), (Q_SHELL, A_SHELL), ("Slow logins", A_SLOW)],
        ),
        ("Users and Security", [(Q_ROOT, A_ROOT)]),
    ]
)
ASKED = (Q_WHAT, Q_SCHEME, Q_INETD, Q_SHELL, Q_ROOT)
ANSWERS = {"1.1": A_WHAT, "1.2": A_SCHEME, "3.1": A_INETD, "3.2": A_SHELL, "4.1": A_ROOT}


def test_proftpd_faq_pages_questions_answers_and_ids() -> None:
    text, qa = ns.proftpd_faq_pages(FAQ)
    # every entry the ZoneMinder rule asks, in order, in every chapter's qandaset (not only
    # the first); numbers restart in each chapter, so the id is chapter.number; the answer
    # its answer div
    nsc.assert_split_answers(text, qa, ASKED, ANSWERS)
    # topic titles of one or two words ask nothing and stay as headings over their text; an
    # entry with no answer asks nothing either; the chapters' titles and the title page stay
    for kept in ("Downloading", "SQL", "Slow logins", "Compiling it", A_SQL, A_SLOW):
        assert kept in text
    for title in ("Introduction to ProFTPD", "Common Problems", "Users and Security"):
        assert f"Chapter {title}" not in text and title in text
    assert text.startswith("# Professional FTP Daemon FAQ\n")
    # the book's contents and every chapter's generated list leave
    assert "listline" not in text and "tocline" not in text
    for _, _, a in qa:
        assert "Chapter" not in a and "SQL" not in a


def test_split_slony_faq_asks_every_entry_without_a_rule() -> None:
    # Slony-I's reading is unchanged without ``asks``: the one-word topic title asks too;
    # with the ZoneMinder rule it stays in the page, whole
    one = book([("Compatibility", [("SQL", A_SQL), (Q_ROOT, A_ROOT)])])
    assert [q for _, q, _ in ns.split_slony_faq(one)[1]] == ["SQL", Q_ROOT]
    text, qa = ns.split_slony_faq(one, ns._zm_asks)
    assert qa == [("2", Q_ROOT, A_ROOT)]
    assert "SQL" in text and A_SQL in text and Q_ROOT not in text
    # a page with no qandaset: converted, nothing asked
    assert ns.proftpd_faq_pages("<p>No entries here.</p>") == ("No entries here.\n", [])


_WORD = st.sampled_from(["ftp", "login", "anonymous", "chroot", "quota", "vhost", "port"])


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.lists(
            st.tuples(
                st.lists(_WORD, min_size=1, max_size=5),  # the title's words
                st.booleans(),  # the title ends with "?"
                st.one_of(st.none(), st.lists(_WORD, min_size=1, max_size=6)),  # the answer
            ),
            min_size=1,
            max_size=5,
        ),
        min_size=1,
        max_size=4,
    )
)
def test_proftpd_faq_pages_property(
    chapters: list[list[tuple[list[str], bool, list[str] | None]]],
) -> None:
    """Random chapters of random entries (titles of one to five words, asked with "?" or
    stated; with or without an answer): exactly the entries the ZoneMinder rule asks, in
    order, ids ``chapter.number``, answers their answer divs; each asked title gone from
    the page, each other title kept, every answer kept, no generated list left."""
    built: list[tuple[str, list[tuple[str, str | None]]]] = []
    expected: list[tuple[str, str, str]] = []
    kept: list[str] = []
    for c, entries in enumerate(chapters, 1):
        rows: list[tuple[str, str | None]] = []
        for n, (words, mark, answer) in enumerate(entries, 1):
            title = f"t{c}x{n}z " + " ".join(words) + ("?" if mark else "")
            text = None if answer is None else f"a{c}x{n}z {' '.join(answer)}."
            rows.append((title, text))
            if text is not None and (mark or len(title.split()) >= ns.ZM_MIN_TITLE_WORDS):
                expected.append((f"{c}.{n}", title, text))
            else:
                kept.append(f"t{c}x{n}z")
        built.append((f"chaptertitle{c}", rows))
    text, qa = ns.proftpd_faq_pages(book(built))
    assert qa == expected
    for key, _, got in qa:
        chap, num = key.split(".")
        assert f"t{chap}x{num}z" not in text and got in text
    for marker in kept:
        assert marker in text
    for c in range(1, len(chapters) + 1):
        assert f"chaptertitle{c}" in text
    assert "listline" not in text


# -- the set, built from a package tree shaped like Debian's proftpd-doc --------------------


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.PROFTPD_PACKAGE, "1.3.8+dfsg-4")
    doc: Path = root / ns.PROFTPD_DOC
    for folder in ("modules", "directives", "howto", "contrib"):
        (doc / folder).mkdir(parents=True)
    (doc / ns.PROFTPD_FAQ).write_text(faq, encoding="latin-1")
    (doc / "index.html").write_text("<h1>ProFTPD documentation</h1><p>Start here.</p>")
    (doc / "modules" / "mod_core.html").write_text(
        f"<h2>ServerType</h2><p>Users ask: {Q_INETD} Use ServerType inetd.</p>"
    )
    (doc / "modules" / "mod_huge.html").write_text("<p>" + "Directive text. " * 12_000 + "</p>")
    (doc / "directives" / "index.html").write_text("<h1>Directives</h1><p>AllowOverwrite</p>")
    (doc / "howto" / "Vhost.html").write_text("<p>leftout howto</p>")
    (doc / "contrib" / "mod_sql.html").write_text("<p>leftout contrib</p>")
    (doc / "CREDITS").write_text("leftout\n")
    write_gz(doc / "NEWS.gz", "leftout\n")
    write_gz(doc / "changelog.Debian.gz", "leftout\n")
    (doc / "copyright").write_text("leftout\n")
    return doc


@pytest.fixture
def doc_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package tree as shipped (:data:`FAQ`), the documentation folder."""
    return _package(tmp_path, monkeypatch)


def test_proftpd_faq_set_from_a_package_tree(doc_dir: Path) -> None:
    nset = ns.proftpd_faq_set()
    assert nset.name == "proftpd-faq"
    assert [q.qid for q in nset.questions] == [f"proftpd-faq:{k}" for k in ANSWERS]
    assert set(nset.files) == {
        "faq.md",
        "index.md",
        "modules/mod_core.md",
        "directives/index.md",
    }
    nsc.assert_questions_out_answers_in(nset, ANSWERS)
    assert {q.source for q in nset.questions} == {"faq.md"}
    nsc.assert_files_as_written(nset)
    assert "1.3.8+dfsg-4" in nset.note
    assert "over 150000 chars: modules/mod_huge.html" in nset.note
    nsc.assert_held_out("proftpd-faq")
    corpus = " ".join(nset.files.values())
    assert "leftout" not in corpus and "listline" not in corpus and "tocline" not in corpus
    # the module page quoting a question scrubbed, its other text kept
    assert "Use ServerType inetd." in nset.files["modules/mod_core.md"]
    assert "SQL" in nset.files["faq.md"] and "Slow logins" in nset.files["faq.md"]
    assert nset.left_out == ()


def test_proftpd_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = FAQ.replace(A_ROOT, "Set RootLogin on.")
    assert short != FAQ
    _package(tmp_path, monkeypatch, short)
    nsc.assert_left_out(ns.proftpd_faq_set(), Q_ROOT, len(ASKED) - 1)


def test_no_question_text_is_left_in_any_file(doc_dir: Path) -> None:
    # the FAQ page as a browser shows it (tags out, entities read, lines folded): the check
    # finds every question there, so it could fail
    shipped = {"faq.txt": ns.xboard_heading_text(FAQ)}
    nsc.assert_leak_checked(ns.proftpd_faq_set(), shipped, ASKED)


def test_proftpd_faq_set_halves_are_fixed_and_disjoint(doc_dir: Path) -> None:
    more = FAQ.replace(
        entry(1, Q_ROOT, A_ROOT),
        entry(1, Q_ROOT, A_ROOT)
        + entry(
            2,
            "How can I limit the size of uploaded files?",
            "Use the MaxStoreFileSize directive in the right context.",
        ),
    )
    assert more != FAQ
    nsc.assert_halves_survive_an_added_question(
        ns.proftpd_faq_set,
        lambda: (doc_dir / ns.PROFTPD_FAQ).write_text(more, encoding="latin-1"),
    )


def test_proftpd_faq_set_refuses_a_package_without_the_faq(doc_dir: Path) -> None:
    (doc_dir / ns.PROFTPD_FAQ).unlink()
    nsc.assert_refuses_without_faq(ns.proftpd_faq_set, ns.PROFTPD_FAQ)
