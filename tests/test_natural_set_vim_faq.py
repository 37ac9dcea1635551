"""The ``vim-faq`` natural-question set's parsers (``bench/natural_sets.py``) on small inline
texts shaped like the Vim FAQ (``FAQ.gz`` in Debian's ``vim-doc``: plain text, numbered
questions in ``SECTION N`` blocks after an index) and Vim's help pages as HTML (``html/
usr_*.html``); offline, no embedding model.

What the set's numbers rest on: every question leaves the corpus, its wrapped lines
included, and so does the index that lists them; the answer is exactly the text under its
question (the next question, a separator or a section excluded); a numbered line is a
question only in its own section and after a blank line; each section is its own file; the
user manual's pages come in as their text, without markup.
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

import bench_tree as bt
import natural_sets as ns
from debian_package_double import unpacked_package
from natural_set_checks import assert_files_as_written, assert_held_out

FAQ_TEXT = """vim:tw=75:wrap

This FAQ is made from the questions posted to the list.

INDEX

SECTION 1 - GENERAL INFORMATION
    1.1. What is Wim?
    1.2. How do I save the current file in another name (save as) and edit
         a new file?

SECTION 2 - EDITING
    2.1. How do I delete all the trailing white space characters?


=============================================================================

SECTION 1 - GENERAL INFORMATION


1.1. What is Wim?

Wim is a text editor.
2.1. is not a question here (another section).

For more information, read

    :help intro


1.2. How do I save the current file in another name (save as) and edit a
     new file?

Use the ":saveas" command:

    :saveas <newfilename>
1.3. Not a question: no blank line before it.


1.4. An empty entry with nothing under it


=============================================================================

SECTION 2 - EDITING


2.1. How do I delete all the trailing white space characters?
You can use the following command:

    :%s/\\s\\+$//


=============================================================================

Current Maintainer: Someone
"""


def _corpus(files: dict[str, str]) -> str:
    return " ".join(" ".join(files.values()).split()).lower()


def test_split_vim_faq_questions_answers_and_files() -> None:
    files, qa = ns.split_vim_faq(FAQ_TEXT)
    assert list(files) == ["00-preface.md", "01-general-information.md", "02-editing.md"]
    by_num = {num: (q, a) for num, q, a in qa}
    assert list(by_num) == ["1.1", "1.2", "2.1"]  # 1.4 has no text under it
    assert by_num["1.1"] == (
        "What is Wim?",
        "Wim is a text editor.\n2.1. is not a question here (another section).\n\n"
        "For more information, read\n\n    :help intro",
    )
    # a wrapped question is one question, its lines joined
    assert by_num["1.2"][0] == (
        "How do I save the current file in another name (save as) and edit a new file?"
    )
    # a numbered line without a blank line before it is answer text
    assert by_num["1.2"][1] == (
        'Use the ":saveas" command:\n\n    :saveas <newfilename>\n'
        "1.3. Not a question: no blank line before it."
    )
    # an answer may start right under its question; a separator ends it
    assert by_num["2.1"][1] == "You can use the following command:\n\n    :%s/\\s\\+$//"
    for _, _, a in qa:
        assert any(a in text for text in files.values())


def test_split_vim_faq_deletes_every_question_and_the_index() -> None:
    files, _ = ns.split_vim_faq(FAQ_TEXT)
    corpus = _corpus(files)
    for q in (
        "What is Wim?",
        "save the current file in another name",
        "new file?",
        "How do I delete all the trailing white space characters?",
        "An empty entry with nothing under it",
    ):
        assert q.lower() not in corpus
    assert "index" not in corpus and "=====" not in corpus
    assert files["00-preface.md"] == (
        "vim:tw=75:wrap\n\nThis FAQ is made from the questions posted to the list.\n"
    )
    # sections are files headed by their title; text after the last separator stays
    assert files["01-general-information.md"].startswith(
        "# SECTION 1 - GENERAL INFORMATION\n\nWim is a text editor."
    )
    assert files["02-editing.md"].endswith(":%s/\\s\\+$//\n\nCurrent Maintainer: Someone\n")
    assert all("\n\n\n" not in text for text in files.values())


def test_split_vim_faq_a_section_line_needs_a_separator_before_it() -> None:
    text = "====================\n\nSECTION 1 - A\n\n\n1.1. Q?\n\nSECTION 2 - B\n\nmore\n"
    files, qa = ns.split_vim_faq(text)
    assert list(files) == ["01-a.md"]
    assert qa == [("1.1", "Q?", "SECTION 2 - B\n\nmore")]


def test_split_vim_faq_repeated_section_titles_keep_both_files() -> None:
    text = "=" * 30 + "\nSECTION 1 - Same\none\n" + "=" * 30 + "\nSECTION 1 - Same\ntwo\n"
    files, _ = ns.split_vim_faq(text)
    assert files == {
        "01-same.md": "# SECTION 1 - Same\none\n",
        "01-same-2.md": "# SECTION 1 - Same\ntwo\n",
    }


_SEP = "=" * 30
_LINE = st.one_of(
    st.text(alphabet="abc xyz?.:", max_size=20),
    st.just(""),
    st.just(""),
    st.just(_SEP),
    st.just("INDEX"),
    st.builds(lambda n, t: f"SECTION {n} - {t}", st.integers(0, 3), st.text("abc ", max_size=8)),
    st.builds(
        lambda a, b, t: f"{a}.{b}. {t}",
        st.integers(0, 3),
        st.integers(0, 30),
        st.text(alphabet="abcd ?", min_size=1, max_size=20),
    ),
    st.builds(lambda t: "    " + t, st.text(alphabet="abc1.? ", max_size=10)),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_LINE, max_size=60))
def test_split_vim_faq_answers_live_in_their_files(lines: list[str]) -> None:
    files, qa = ns.split_vim_faq("\n".join(lines))
    for num, q, a in qa:
        assert a.strip() and q.strip() and re.fullmatch(r"\d+\.\d+", num)
        assert any(a in t for t in files.values())  # no file overwrote another
    assert all(re.fullmatch(r"\d+-[a-z0-9-]+\.md", rel) for rel in files)
    assert len(qa) <= sum(1 for line in lines if re.match(r"^\d+\.\d+\.\s+\S", line))
    out = [line for text in files.values() for line in text.split("\n")]
    assert _SEP not in out


HELP_PAGE = """<HTML>
<HEAD>
<TITLE>Vim documentation: usr_07</TITLE>
</HEAD>
<BODY BGCOLOR="#ffffff">
<H1>Vim documentation: usr_07</H1>
<A NAME="top"></A>
<A HREF="index.html">main help file</A>

<HR>
<PRE>

*<A NAME="usr_07.txt"></A><B>usr_07.txt</B>*	For Vim version 9.0.

  Editing more than one file


Define a <A HREF="eval.html#list">list</A> of files &amp; jump.

==============================================================================

*<A NAME="07.1"></A><B>07.1</B>*	Edit   another file

<B>	:edit foo.txt</B>

You can use any file name instead of &quot;foo.txt&quot;.

==============================================================================

Next chapter: |<A HREF="usr_08.html">usr_08.txt</A>|  Splitting windows
<A HREF="#top">top</A> - <A HREF="index.html">main help file</A>
</PRE>
</BODY>
</HTML>
"""


def test_vim_help_page_markdown_keeps_the_text_without_markup() -> None:
    md = ns.vim_help_page_markdown(HELP_PAGE)
    assert md == (
        "# Vim documentation: usr_07\n\n"
        "*usr_07.txt*\tFor Vim version 9.0.\n\n"
        "  Editing more than one file\n\n"
        "Define a list of files & jump.\n\n"
        "## 07.1 Edit another file\n\n"
        "\t:edit foo.txt\n\n"
        'You can use any file name instead of "foo.txt".\n\n'
        "Next chapter: |usr_08.txt|  Splitting windows\n"
    )


# -- the set, built from a package tree shaped like Debian's vim-doc ----------------------


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.VIM_PACKAGE, "2:9.0.1378-2")
    doc = root / ns.VIM_DOC
    (doc / ns.VIM_HTML).mkdir(parents=True)
    return doc


def test_vim_faq_set_from_a_package_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = _package(tmp_path, monkeypatch)
    with gzip.open(doc / ns.VIM_FAQ, "wt", encoding="latin-1") as fh:
        fh.write(FAQ_TEXT)
    (doc / ns.VIM_HTML / "usr_07.html").write_text(
        HELP_PAGE.replace(
            "Define a",
            "What is Wim? How do I delete all the trailing white space characters? Define a",
        ),
        encoding="latin-1",
    )
    (doc / ns.VIM_HTML / "options.html").write_text(HELP_PAGE, encoding="latin-1")
    (doc / "vim-policy.txt.gz").write_bytes(b"")
    nset = ns.vim_faq_set()
    assert [q.qid for q in nset.questions] == ["vim-faq:1.1", "vim-faq:1.2", "vim-faq:2.1"]
    assert [q.source for q in nset.questions] == [
        "01-general-information.md",
        "01-general-information.md",
        "02-editing.md",
    ]
    # the user manual's pages come in; the reference manual's and the policy do not
    assert set(nset.files) == {
        "00-preface.md",
        "01-general-information.md",
        "02-editing.md",
        "user-manual/usr_07.md",
    }
    # a page quoting a question (4 words or more) verbatim is scrubbed; a shorter one stays
    manual = nset.files["user-manual/usr_07.md"].lower()
    assert "trailing white space characters?" not in manual
    assert "what is wim?" in manual
    assert_files_as_written(nset)
    assert "2:9.0.1378-2" in nset.note and "2 sections" in nset.note and "1 pages" in nset.note
    assert_held_out("vim-faq")


def test_vim_faq_set_halves_are_fixed_and_disjoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = _package(tmp_path, monkeypatch)
    with gzip.open(doc / ns.VIM_FAQ, "wt", encoding="latin-1") as fh:
        fh.write(FAQ_TEXT)
    first = ns.vim_faq_set().questions
    dev, test = bt.sampled_halves(first, None)
    assert {q.qid for q in dev}.isdisjoint({q.qid for q in test})
    assert {q.qid for q in dev} | {q.qid for q in test} == {q.qid for q in first}
    with gzip.open(doc / ns.VIM_FAQ, "wt", encoding="latin-1") as fh:
        fh.write(FAQ_TEXT.replace("1.4. An empty entry with nothing under it\n", "1.4. Why?\nok\n"))
    again = ns.vim_faq_set().questions
    assert len(again) == len(first) + 1
    dev2, test2 = bt.sampled_halves(again, None)
    assert {q.qid for q in dev} <= {q.qid for q in dev2}
    assert {q.qid for q in test} <= {q.qid for q in test2}


def test_vim_faq_set_refuses_a_package_without_the_faq(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _package(tmp_path, monkeypatch)
    with pytest.raises(FileNotFoundError, match=r"no FAQ\.gz under"):
        ns.vim_faq_set()


def test_vim_help_page_markdown_a_stray_lt_is_text_and_markup_may_be_missing() -> None:
    # a "<" that opens no tag stays (a tag is "<...>" without another "<" inside) ...
    assert ns.vim_help_page_markdown("<pre>a < b <B>c</B></pre>") == "a < b c\n"
    # ... and a page without <PRE> or <TITLE> is read whole, with no title line
    assert ns.vim_help_page_markdown("x <I>y</I>\n\n\n\nz") == "x y\n\nz\n"
    assert ns.vim_help_page_markdown("<PRE>" + "<a" * 5000) == "<a" * 5000 + "\n"
