"""The ``mc-faq`` natural-question set (``bench/natural_sets.py``), its plain-text FAQ parser,
its man-page headings and the question-leak check (``bench/check_question_leaks.py``) on small
inline texts shaped like Debian's ``mc-data`` (``FAQ.gz``: a title, a contents list of every
question, then column-0 numbered sections of ``N.M`` questions, some wrapped over two lines,
answers indented; notes beside it; mc's roff man pages nesting their ``.SH`` headings by
leading spaces; the hints file) in a package tree laid out as the package unpacks (marker
present, nothing downloaded); offline, no embedding model.

What the set's numbers rest on: no question's text is left in any file (the contents list, a
wrapped question's second line, a note or hint quoting one aside); each answer is exactly the
text under its question, the next question or section excluded; a numbered line is a question
only at column 0 after a blank line in its own section; a section only in numbering order (the
stray "f" of mc's "f2 Keyboard" tolerated); ids are the authors' numbers; an answer too short
to judge leaves the set but not the corpus's scrubbing; the halves hold when an entry is added;
and, when the bench cache holds the real package, its 58 questions are the body's entries.
"""

from __future__ import annotations

import gzip
import re
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import check_question_leaks as cql
import datasets as ds
import natural_set_checks as nsc
import natural_sets as ns
from debian_package_double import unpacked_package, write_gz

Q_WHAT = "What is Midnight Commander?"
Q_COMPILE = "I cannot compile MC.  What should I do?"
Q_FKEYS = "Why don't function keys (or some other key) work?"
Q_PLUS = "How can I add the plus sign (+) on the command line?"
Q_SLANG = (
    'Why do I keep getting "Terminal not powerful enough for SLang" or\n'
    '    "Terminal not powerful enough for SLsmg"?'
)
Q_KSH = "I am using ksh.  Can I use functions defined in the .kshrc within\nMC?"
Q_TAR = "How do I get out of a tar archive?"
Q_SHORT = "Xview, Tk and Gnome editions?"
Q_PASTE = "How do I cut and paste text with mouse?"


def _one_line(question: str) -> str:
    return " ".join(question.split())


FAQ_TEXT = f"""GNU Midnight Commander
Frequently Asked Questions

   The newest version of this document is available at
   https://www.midnight-commander.org/browser/doc/FAQ

     * 1 Getting started
          + 1.1 {Q_WHAT}
          + 1.7 {Q_COMPILE}

     * 2 Keyboard
          + 2.2 {Q_FKEYS}
          + 2.5 {Q_PLUS}

     * 4 Display
          + 4.1 Why do I keep getting "Terminal not powerful enough for
            SLang" or "Terminal not powerful enough for SLsmg"?


1 Getting started

1.1 {Q_WHAT}

   GNU Midnight Commander is a user-friendly yet powerful file manager
   and visual shell, useful to novice and guru alike.

1.2 An empty entry

1.7 {Q_COMPILE}

   Make sure you have read the INSTALL file in the sources.
   Try the "--disable-vfs" option.

f2 Keyboard

2.2 {Q_FKEYS}

   Your terminfo or termcap database has missing or incorrect
   definitions for function keys.  Type "mc -V" to see the database.

     http://www.catb.org/~esr/terminfo/

   See also "{_one_line(Q_PLUS)}" below.

2.5 {Q_PLUS}

   Press C-q first, then press the + sign.

   1.3 and the hotkey for the select files command,
   numbered in the text: answer text.
9 lines of a list at column 0 in no order: answer text.

3.1 A question numbered for another section is answer text.

3 Mouse

3.2 {Q_PASTE}

   Hold down shift key while using mouse to cut and paste.

4 Display

4.1 {Q_SLANG}

   This means that your terminfo databases do not contain the correct
   definitions for your terminal.

     export TERM=vt100

5 Graphical user interface

5.1 {Q_SHORT}

   Only Gnome.

6 Command line problems

6.4 {Q_KSH}

  No, you can't use functions in the subshell of MC.

7 Virtual file systems

7.2 {Q_TAR}

   Just press enter on the toplevel ".." file or change to a non-tar
   directory.
"""

ROFF_PAGE = r""".\"TOPICS "Topics:"
.TH MC 1 "January 2023" "MC Version 4.8.29" "GNU Midnight Commander"
.SH "NAME"
mc \- Visual shell for Unix\-like systems.
.SH "Keys"
Some commands involve the
.B Control
key.
.SH "  Quick search"
.\"NODE "    Quick search"
Press C\-s to search.
.SH "    Deeper"
A fourth level.
.SH ""
.SH "Menu Bar"
.nf
## not a heading
.fi
The menu bar.
"""


def _corpus(files: dict[str, str]) -> str:
    return " ".join(" ".join(files.values()).split()).lower()


# -- the parser --------------------------------------------------------------------------------


def test_split_mc_faq_questions_answers_and_ids() -> None:
    text, qa = ns.split_mc_faq(FAQ_TEXT)
    # 1.2 has no text under it: no question (its line leaves all the same)
    assert [key for key, _, _ in qa] == [
        "1.1",
        "1.7",
        "2.2",
        "2.5",
        "3.2",
        "4.1",
        "5.1",
        "6.4",
        "7.2",
    ]
    by_key = {key: (q, a) for key, q, a in qa}
    assert by_key["1.1"] == (
        Q_WHAT,
        "GNU Midnight Commander is a user-friendly yet powerful file manager\n"
        "and visual shell, useful to novice and guru alike.",
    )
    assert by_key["1.7"][0] == "I cannot compile MC. What should I do?"  # spaces collapsed
    # a question wrapped over two lines, the second indented or at column 0, is one question
    assert by_key["4.1"][0] == _one_line(Q_SLANG)
    assert by_key["4.1"][1] == (
        "This means that your terminfo databases do not contain the correct\n"
        "definitions for your terminal.\n\n  export TERM=vt100"
    )
    assert by_key["6.4"] == (_one_line(Q_KSH), "No, you can't use functions in the subshell of MC.")
    # indented numbered lines, a column-0 number out of order and a question numbered for
    # another section are answer text
    assert by_key["2.5"][1] == (
        "Press C-q first, then press the + sign.\n\n"
        "   1.3 and the hotkey for the select files command,\n"
        "   numbered in the text: answer text.\n"
        "9 lines of a list at column 0 in no order: answer text.\n\n"
        "3.1 A question numbered for another section is answer text."
    )
    assert by_key["5.1"] == (Q_SHORT, "Only Gnome.")
    lines = text.split("\n")
    assert lines[0] == "# Midnight Commander FAQ"
    # the stray letter of "f2 Keyboard" is dropped; sections keep their numbers
    assert [ln for ln in lines if ln.startswith("## ")] == [
        "## 1 Getting started",
        "## 2 Keyboard",
        "## 3 Mouse",
        "## 4 Display",
        "## 5 Graphical user interface",
        "## 6 Command line problems",
        "## 7 Virtual file systems",
    ]
    for _key, q, a in qa:
        assert a in text
        assert q not in " ".join(text.split()).replace(f'"{_one_line(Q_PLUS)}"', "")
    assert "An empty entry" not in text and "newest version" not in text  # contents gone
    assert "SLang" not in text.split("## 4 Display")[0]  # the contents list's copy
    assert "\n\n\n" not in text


def test_split_mc_faq_sections_open_in_order_only() -> None:
    """With section 3 missing, "4 Display" is a line of answer text, and so are its
    questions (numbered for another section): the numbering rule is what keeps column-0
    lines of answers from opening sections (the real FAQ numbers its twelve 1-12, checked
    on the package below)."""
    skipped = re.sub(r"\n3 Mouse\n.*?\n4 Display\n", "\n4 Display\n", FAQ_TEXT, flags=re.S)
    text, qa = ns.split_mc_faq(skipped)
    assert "## 4 Display" not in text.split("\n")
    assert [k for k, _, _ in qa] == ["1.1", "1.7", "2.2", "2.5"]
    assert "4 Display" in qa[-1][2] and "export TERM=vt100" in qa[-1][2]


def test_split_mc_faq_repeated_number_gets_a_suffix() -> None:
    faq = "T\n\n1 A\n\n1.1 Why?\n\n  one\n\n1.1 Why not?\n\n  two\n"
    _, qa = ns.split_mc_faq(faq)
    assert qa == [("1.1", "Why?", "one"), ("1.1-2", "Why not?", "two")]


def test_split_mc_faq_without_a_body_asks_nothing() -> None:
    text, qa = ns.split_mc_faq("T\n\n     * 1 Getting started\n          + 1.1 Why?\n")
    assert qa == [] and text == "# Midnight Commander FAQ\n"


_LINE = st.one_of(
    st.text(alphabet="abc xyz?.:", max_size=20),
    st.just(""),
    st.just(""),
    st.builds(lambda n, t: f"{n} {t}", st.integers(1, 4), st.text("abc ", min_size=1, max_size=8)),
    st.builds(
        lambda pad, a, b, t: f"{' ' * pad}{a}.{b} {t}",
        st.sampled_from([0, 0, 0, 3]),
        st.integers(1, 4),
        st.integers(0, 9),
        st.text(alphabet="abcd ?", min_size=1, max_size=20),
    ),
    st.builds(lambda t: "   " + t, st.text(alphabet="abc1.? ", max_size=10)),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_LINE, max_size=60))
def test_split_mc_faq_answers_are_in_the_page_and_questions_are_not(lines: list[str]) -> None:
    faq = "\n".join(["Title", "", *lines])
    text, qa = ns.split_mc_faq(faq)
    assert text.startswith("# Midnight Commander FAQ\n") and "\n\n\n" not in text
    keys = [key for key, _, _ in qa]
    assert len(keys) == len(set(keys))
    assert len(qa) <= sum(1 for line in lines if re.match(r"^\d+\.\d+\s+\S", line))
    sections = [ln for ln in text.split("\n") if ln.startswith("## ")]
    assert [int(ln.split()[1]) for ln in sections] == list(range(1, len(sections) + 1))
    flat = " ".join(text.split())
    for key, q, a in qa:
        assert re.fullmatch(r"\d+\.\d+(-\d+)?", key) and q.strip() and a.strip()
        assert a in text
        assert int(key.split(".")[0]) <= len(sections)
        # the question's own line(s) left the page: the page holds fewer copies of
        # "N.M question" than the FAQ did (another copy stays only as answer text)
        number = key.split("-")[0]
        asked = " ".join(faq.split()).count(f"{number} {q}")
        assert flat.count(f"{number} {q}") < asked


# -- the man pages' headings -------------------------------------------------------------------


def test_mc_man_markdown_nests_headings_by_their_indent() -> None:
    md = ns.mc_man_markdown(ROFF_PAGE)
    assert md == (
        "# MC(1)\n\n"
        "## NAME\n\nmc - Visual shell for Unix-like systems.\n\n"
        "## Keys\n\nSome commands involve the\nControl\nkey.\n\n"
        "### Quick search\n\nPress C-s to search.\n\n"
        "#### Deeper\n\nA fourth level.\n\n"
        "## Menu Bar\n\n```\n## not a heading\n```\n\nThe menu bar.\n"
    )


# -- the set, built from a package tree shaped like Debian's mc-data ------------------------------


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ_TEXT) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.MC_PACKAGE, "3:4.8.29-2")
    doc = root / ns.MC_DOC
    write_gz(doc / ns.MC_FAQ, faq)
    write_gz(
        doc / "README.gz", "Introduction\n------------\n\nGNU Midnight Commander is a shell.\n"
    )
    write_gz(doc / "HACKING.gz", f"Hacking\n\n{Q_TAR} Press enter on '..'.\n")
    write_gz(doc / "ABOUT-NLS.gz", "x" * (ns.MAX_LINKED_CHARS + 1))  # over the cap: named, out
    (doc / "AUTHORS").write_text("Everyone.\n")
    write_gz(doc / "changelog.gz", "4.8.29: fixes.\n")
    (doc / "copyright").write_text("GPL-3+\n")
    man = root / ns.MC_MAN
    long_page = ROFF_PAGE + "".join(
        f'.SH "Chapter {i}"\n' + "Words of the manual. " * 400 + "\n" for i in range(8)
    )
    write_gz(man / "mc.1.gz", long_page)
    (man / "mcdiff.1.gz").symlink_to("mc.1.gz")
    write_gz(man / "mcview.1.gz", '.TH MCVIEW 1\n.SH "NAME"\nmcview \\- file viewer.\n')
    hints = root / ns.MC_HINTS
    hints.parent.mkdir(parents=True)
    hints.write_text(f"Hint: {Q_PLUS} Use C-q.\n\nHint: Tab changes your current panel.\n")
    (hints.parent / "mc.hint.de").write_text("Tipp: Tab.\n")
    return doc


def test_mc_faq_set_from_a_package_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _package(tmp_path, monkeypatch)
    nset = ns.mc_faq_set()
    assert [q.qid.split(":")[1] for q in nset.questions] == [
        "1.1",
        "1.7",
        "2.2",
        "2.5",
        "3.2",
        "4.1",
        "6.4",
        "7.2",
    ]
    # "Only Gnome.": under the judge's shingle, left out and named, scrubbed all the same
    assert nset.left_out == (Q_SHORT,) and Q_SHORT in nset.note
    assert all(len(q.answers[0][0].split()) >= ns.MIN_ANSWER_WORDS for q in nset.questions)
    chapters, _ = ns.split_texinfo_chapters(ns.mc_man_markdown(_package_page(tmp_path)))
    assert len(chapters) == 11  # NAME, Keys, Menu Bar and 8 chapters; the title page out
    assert set(nset.files) == {
        "FAQ.md",
        "README",
        "HACKING",
        "hints/mc.hint",
        "man1/mcview.md",
        *(f"man1/mc/{rel}" for rel in chapters),
    }
    assert {q.source for q in nset.questions} == {"FAQ.md"}
    corpus = _corpus(nset.files)
    for q in nset.questions:
        assert " ".join(q.text.split()).lower() not in corpus
        assert q.answers[0][0] in nset.files["FAQ.md"]
    # a hint quoting a question is scrubbed, and so is an answer quoting another question
    assert nset.files["hints/mc.hint"].startswith("Hint:  Use C-q.")
    answer = {q.qid: q.answers[0][0] for q in nset.questions}["mc-faq:2.2"]
    assert 'See also "" below.' in answer
    nsc.assert_files_as_written(nset)
    assert "3:4.8.29-2" in nset.note and "the 2 other notes" in nset.note
    assert "ABOUT-NLS.gz" in nset.note and "AUTHORS" in nset.note
    assert "the 2 English man pages" in nset.note and "mc(1) in 11 files" in nset.note
    nsc.assert_held_out("mc-faq")


def _package_page(tmp_path: Path) -> str:
    path = ds.debian_package_root(ns.MC_PACKAGE) / ns.MC_MAN / "mc.1.gz"
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return fh.read()


def test_no_question_text_is_left_in_any_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The leak check on the set finds nothing, and finds the copies in the FAQ as shipped
    (its contents list and question lines: it could fail)."""
    _package(tmp_path, monkeypatch)
    nset = ns.mc_faq_set()
    asked = [q.text for q in nset.questions] + list(nset.left_out)
    assert len(asked) == 9
    assert cql.find_leaks(nset.files, asked, False) == []
    leaks = cql.find_leaks({"FAQ": FAQ_TEXT}, asked, False)
    assert {lk.question for lk in leaks if lk.kind == "exact"} == set(asked)


def test_mc_faq_set_halves_are_fixed_and_disjoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = _package(tmp_path, monkeypatch)
    first, dev, test = nsc.halves_of(ns.mc_faq_set)
    more = FAQ_TEXT.replace(
        "\n1.7 ",
        "\n1.6 Where can I get GNU Midnight Commander?\n\n   The main site is"
        " https://www.midnight-commander.org\n\n1.7 ",
    )
    write_gz(doc / ns.MC_FAQ, more)
    nsc.assert_halves_kept(ns.mc_faq_set, first, dev, test)


def test_mc_faq_set_refuses_a_package_without_the_faq(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = _package(tmp_path, monkeypatch)
    (doc / ns.MC_FAQ).unlink()
    with pytest.raises(FileNotFoundError, match=r"no FAQ\.gz under"):
        ns.mc_faq_set()
