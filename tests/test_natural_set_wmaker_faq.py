"""The ``wmaker-faq`` natural-question set (``bench/natural_sets.py``), its plain-text FAQ
parser and the question-leak check (``bench/check_question_leaks.py``) on small inline texts
shaped like Debian's ``wmaker-common`` (``FAQ.gz``: a title underlined by ``=``, a contents
list of every question, a ``=`` line, then sections whose title sits between two ``-=-=-=``
rules, of ``N.M`` questions underlined by dashes, some wrapped over two lines, then a closing
``=`` line and a colophon; notes beside it, ``NEWS`` longer than the bench's usual cap) in a
package tree laid out as the package unpacks (marker present, nothing downloaded); offline,
no embedding model.

What the set's numbers rest on: no question's text is left in any file (the contents list, a
wrapped question's second line, a cross-reference quoting a question without its closing
stop or in the contents list's wording, a note quoting one aside); each answer is exactly
the text under its question, the next question or section excluded; a numbered line is a
question only at column 0 after a blank line in its own section with its underline under
it; ids are the authors' numbers; an answer too short to judge leaves the set but not the
corpus's scrubbing; the halves hold when an entry is added.
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

Q_WHAT = "What is Window Maker?"
Q_ICONS = (
    "Why do no icons show up after installing Window Maker >= 0.15.x\n"
    "    when I've followed all the directions?"
)
Q_CDE = "How do I switch CDE's window-manager to use Window Maker?"
Q_GNOME = "When I run GNOME application they have no title bar."
Q_FOCUS = "How do I enable the normal X sloppy focus mode?"
Q_DOCK = "How do I restore the configuration app to the dock?"
Q_SHORT = "Is there a pager for Window Maker?"
Q_THEME = "How do I install a Theme?"
Q_RENAME = "How do I rename workspaces?"


def _one_line(question: str) -> str:
    return " ".join(question.split())


FAQ_TEXT = f"""
WindowMaker FAQ
====================================================================
Last modified: Tue Apr 20 20:15:17 EST 1999

Summary of Contents:

1 - Introduction
     1.1 {Q_WHAT}
     1.2 An empty entry?

2 - Installation
     2.2 {Q_ICONS}
     2.14 How do I switch CDE's window manager to use Window Maker?

========================================================================



-=-=-=-=-=-=-
Introduction:
-=-=-=-=-=-=-

1.1 {Q_WHAT}
----------------------------------
Window Maker is an elegant X11 window manager that emulates the
OpenStep desktop.


1.2 An empty entry?
----------------------------------

1.6. How can I get a question added to the FAQ?
----------------------------------
Ask on the mailing list, or send your request to the FAQ maintainers.
  http://bugs.windowmaker.org/projects/wmaker/wiki

-=-=-=-=-=-=-
Installation:
-=-=-=-=-=-=-

2.2 {Q_ICONS}
-------------------------------------------------------------------
Under normal circumstances, this should not happen. To use it with CDE,
read the answer for "How do I switch
CDE's window manager to use Window Maker?"  Or look at the "{Q_GNOME[:-1]}" below.

2.3 Not a question: no underline under this numbered line.

1.9 A line numbered for another section
----------------------------------
is answer text, underline and all.


2.14 {Q_CDE}
----------------------------------
Edit the Xresources file:

    Dtsession*wmStartupCommand: /usr/local/bin/wmaker

-=-=-=-
Usage:
-=-=-=-

3.5 {Q_RENAME}
----------------------------------
Double-click the workspace name in the Clip's menu and type the new name.


3.11 {Q_GNOME}
----------------------------------
Set the GNOME hints option in WPrefs and restart the application.

-=-=-=-=-=-=-=-=-
Configuration:
-=-=-=-=-=-=-=-=-

4.2 {Q_FOCUS}
-----------------------------
Open WPrefs and set the focus mode to sloppy.
 4.3 indented: answer text.

4.18 {Q_DOCK}
----------------------------------]
You should start it from a terminal using its full path name.

-=-=-=-=-
Themes:
-=-=-=-=-

7.1 {Q_SHORT}
----------------------------------
Yes, several.

5.2 {Q_THEME}
----------------------------------
Untar the Theme.tar.gz into ~/GNUstep/Library/WindowMaker/.


====================================================================
and they lived happily ever after.
====================================================================
(The End.)
"""


def _corpus(files: dict[str, str]) -> str:
    return " ".join(" ".join(files.values()).split()).lower()


# -- the parser --------------------------------------------------------------------------------


def test_split_wmaker_faq_questions_answers_and_ids() -> None:
    text, qa = ns.split_wmaker_faq(FAQ_TEXT)
    # 1.2 has no text under it: no question (its lines leave all the same); 7.1, numbered
    # for another section than the fifth it stands in, is the section's preamble text
    keys = ["1.1", "1.6", "2.2", "2.14", "3.5", "3.11", "4.2", "4.18", "5.2"]
    assert [key for key, _, _ in qa] == keys
    by_key = {key: (q, a) for key, q, a in qa}
    assert by_key["1.1"] == (
        Q_WHAT,
        "Window Maker is an elegant X11 window manager that emulates the\nOpenStep desktop.",
    )
    assert by_key["1.6"][0] == "How can I get a question added to the FAQ?"  # "1.6." read
    assert by_key["1.6"][1].endswith("http://bugs.windowmaker.org/projects/wmaker/wiki")
    # a question wrapped over two lines is one question, whitespace collapsed
    assert by_key["2.2"][0] == _one_line(Q_ICONS)
    # a numbered line without an underline, and one numbered for another section, are text
    assert "2.3 Not a question" in by_key["2.2"][1]
    assert "1.9 A line numbered for another section\n---" in by_key["2.2"][1]
    assert "Dtsession*wmStartupCommand" in by_key["2.14"][1]
    assert by_key["2.14"][1].startswith("Edit the Xresources file:\n\n    Dtsession")
    assert by_key["4.2"][1] == (
        "Open WPrefs and set the focus mode to sloppy.\n 4.3 indented: answer text."
    )
    # the "---]" underline is an underline
    assert by_key["4.18"] == (
        Q_DOCK,
        "You should start it from a terminal using its full path name.",
    )
    assert by_key["5.2"][1] == "Untar the Theme.tar.gz into ~/GNUstep/Library/WindowMaker/."
    assert "## Themes\n\n7.1 Is there a pager for Window Maker?\n---" in text
    assert all("Yes, several." not in a for _, _, a in qa)
    lines = text.split("\n")
    assert lines[0] == "# Window Maker FAQ"
    assert [ln for ln in lines if ln.startswith("## ")] == [
        "## Introduction",
        "## Installation",
        "## Usage",
        "## Configuration",
        "## Themes",
    ]
    for _key, _q, a in qa:
        assert a in text
    for q in (Q_WHAT, Q_ICONS, Q_CDE, Q_FOCUS, Q_DOCK, Q_GNOME):
        assert _one_line(q) not in " ".join(text.split())
    assert "Summary of Contents" not in text and "An empty entry" not in text
    assert "happily ever after" not in text and "(The End.)" not in text
    assert "WindowMaker FAQ" not in text and "=====" not in text
    assert "\n\n\n" not in text


def test_split_wmaker_faq_repeated_number_gets_a_suffix() -> None:
    faq = "-=-=-=-\nA:\n-=-=-=-\n\n1.1 Why?\n---\none\n\n1.1 Why not?\n---\ntwo\n"
    _, qa = ns.split_wmaker_faq(faq)
    assert qa == [("1.1", "Why?", "one"), ("1.1-2", "Why not?", "two")]


def test_split_wmaker_faq_without_a_body_asks_nothing() -> None:
    text, qa = ns.split_wmaker_faq("T\n=========================\n\n     1.1 Why?\n")
    assert qa == [] and text == "# Window Maker FAQ\n"


_LINE = st.one_of(
    st.text(alphabet="abc xyz?.:", max_size=20),
    st.just(""),
    st.just(""),
    st.just("-=-=-=-"),
    st.just("----------"),
    st.builds(lambda t: f"{t}:", st.text("abc ", min_size=1, max_size=8)),
    st.builds(
        lambda pad, a, b, dot, t: f"{' ' * pad}{a}.{b}{dot} {t}",
        st.sampled_from([0, 0, 0, 1]),
        st.integers(1, 4),
        st.integers(0, 9),
        st.sampled_from(["", "."]),
        st.text(alphabet="abcd ?", min_size=1, max_size=20),
    ),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_LINE, max_size=60))
def test_split_wmaker_faq_answers_are_in_the_page_and_questions_are_not(
    lines: list[str],
) -> None:
    faq = "\n".join(["Title", "", *lines])
    text, qa = ns.split_wmaker_faq(faq)
    assert text.startswith("# Window Maker FAQ\n") and "\n\n\n" not in text
    keys = [key for key, _, _ in qa]
    assert len(keys) == len(set(keys))
    assert len(qa) <= sum(1 for line in lines if re.match(r"^\d+\.\d+\.?\s+\S", line))
    n_sections = sum(1 for ln in text.split("\n") if ln.startswith("## "))
    flat = " ".join(text.split())
    for key, q, a in qa:
        assert re.fullmatch(r"\d+\.\d+(-\d+)?", key) and q.strip() and a.strip()
        assert a in text
        assert 1 <= int(key.split(".")[0]) <= n_sections
        # the question's own line left the page: the page holds fewer copies of
        # "N.M question" than the FAQ did (another copy stays only as answer text)
        number = key.split("-")[0]
        in_faq = " ".join(faq.split()).count(f"{number} {q}")
        in_faq += " ".join(faq.split()).count(f"{number}. {q}")
        in_page = flat.count(f"{number} {q}") + flat.count(f"{number}. {q}")
        assert in_page < in_faq


# -- the set, built from a package tree shaped like Debian's wmaker-common -----------------------


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ_TEXT) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.WMAKER_PACKAGE, "0.95.9-3")
    doc = root / ns.WMAKER_DOC
    write_gz(doc / ns.WMAKER_FAQ, faq)
    write_gz(doc / "README.gz", "Window Maker\n\nWindow Maker is the GNU window manager.\n")
    # longer than the bench's usual cap, under the set's: kept whole
    write_gz(doc / "NEWS.gz", f"NEWS\n\n{Q_FOCUS} Use WPrefs.\n" + "Option. " * 8_000)
    (doc / "README.themes").write_text(f"Themes\n\n{_one_line(Q_THEME)} Untar it.\n")
    (doc / "TODO").write_text("x" * (ns.WMAKER_MAX_PAGE_CHARS + 1))  # over the cap: out
    write_gz(doc / "AUTHORS.gz", "Everyone.\n")
    write_gz(doc / "changelog.gz", "0.95.9: fixes.\n")
    write_gz(doc / "wm-oldmenu2new.gz", "#!/bin/sh\necho menu\n")
    (doc / "copyright").write_text("GPL-2+\n")
    return doc


def test_wmaker_faq_set_from_a_package_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _package(tmp_path, monkeypatch)
    nset = ns.wmaker_faq_set()
    assert [q.qid.split(":")[1] for q in nset.questions] == [
        "1.1",
        "1.6",
        "2.2",
        "2.14",
        "3.5",
        "3.11",
        "4.2",
        "4.18",
        "5.2",
    ]
    assert nset.left_out == ()
    assert set(nset.files) == {"FAQ.md", "README", "NEWS", "README.themes"}
    assert len(nset.files["NEWS"]) > ns.MAX_LINKED_CHARS
    assert {q.source for q in nset.questions} == {"FAQ.md"}
    corpus = _corpus(nset.files)
    for q in nset.questions:
        assert " ".join(q.text.split()).lower() not in corpus
        assert q.answers[0][0] in nset.files["FAQ.md"]
    # the cross-references quoting 2.14 (in the contents list's wording) and a question
    # without its closing stop are scrubbed, from the page and from 2.2's answer
    answer = {q.qid: q.answers[0][0] for q in nset.questions}["wmaker-faq:2.2"]
    assert 'read the answer for "?"' in " ".join(answer.split())
    assert 'look at the "" below' in answer
    assert "window manager to use" not in corpus
    # a note quoting a question is scrubbed (the bare form first: its "?" stays)
    assert nset.files["NEWS"].startswith("NEWS\n\n? Use WPrefs.")
    assert "Untar it." in nset.files["README.themes"] and "install a theme" not in corpus
    nsc.assert_files_as_written(nset)
    assert "0.95.9-3" in nset.note and "the 3 other notes" in nset.note
    assert "over 150000 chars: TODO" in nset.note and "AUTHORS.gz" in nset.note
    nsc.assert_held_out("wmaker-faq")


def test_wmaker_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    faq = FAQ_TEXT.replace(
        "\n2.2 ", "\n2.1 Where can I get proplist.h?\n------\nNowhere.\n\n2.2 ", 1
    )
    _package(tmp_path, monkeypatch, faq)
    nset = ns.wmaker_faq_set()
    assert nset.left_out == ("Where can I get proplist.h?",)
    assert "Where can I get proplist.h?" in nset.note
    assert "where can i get proplist.h" not in _corpus(nset.files)


def test_no_question_text_is_left_in_any_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The leak check on the set finds nothing, and finds the copies in the FAQ as shipped
    (its contents list and question lines: it could fail)."""
    _package(tmp_path, monkeypatch)
    nset = ns.wmaker_faq_set()
    asked = [q.text for q in nset.questions] + list(nset.left_out)
    assert len(asked) == 9
    assert cql.find_leaks(nset.files, asked, False) == []
    leaks = cql.find_leaks({"FAQ": FAQ_TEXT}, asked, False)
    assert {lk.question for lk in leaks if lk.kind == "exact"} == set(asked)


def test_wmaker_faq_set_halves_are_fixed_and_disjoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = _package(tmp_path, monkeypatch)
    first, dev, test = nsc.halves_of(ns.wmaker_faq_set)
    more = FAQ_TEXT.replace(
        "\n1.6. ",
        "\n1.2 Where can I get Window Maker?\n-----------\nThe official site to get new"
        " developmental versions from is the project's web site.\n\n1.6. ",
        1,
    )
    write_gz(doc / ns.WMAKER_FAQ, more)
    nsc.assert_halves_kept(ns.wmaker_faq_set, first, dev, test)


def test_wmaker_faq_set_refuses_a_package_without_the_faq(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = _package(tmp_path, monkeypatch)
    (doc / ns.WMAKER_FAQ).unlink()
    with pytest.raises(FileNotFoundError, match=r"no FAQ\.gz under"):
        ns.wmaker_faq_set()
