"""The ``nano-faq`` natural-question set's parsers (``bench/natural_sets.py``) on small inline
pages shaped like GNU nano's ``faq.html`` (one hand-written page: a contents list, ``<h1>``
chapters, ``<h3>N.M.`` questions, answers in ``<blockquote>``) and its texi2any manual
(``nano.html``, makeinfo 6.7: node menus as ``<table class="menu">``); offline, no
embedding model.

What the set's numbers rest on: every question leaves the corpus and so does the contents
list that repeats them; the answer is exactly the text under its question (the next question
or chapter excluded); a number the FAQ repeats still gives distinct ids; the manual comes in
as chapter files without its menus; the menu and span removal is one linear scan.
"""

from __future__ import annotations

import gzip
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import bench_tree as bt
import natural_sets as ns
from debian_package_double import unpacked_package
from natural_set_checks import assert_files_as_written, assert_held_out

FAQ_HTML = """<!DOCTYPE html>
<html lang="en">
<head>
  <title>The GNU nano editor FAQ</title>
</head>
<body>
<h1>The GNU nano editor FAQ</h1>
<h3>Table of Contents</h3>
<h3><a href="#1">1. General</a></h3>
<blockquote><p>
  <a href="#1.1">1.1. What is GNU nano?</a><br>
  <a href="#1.2">1.2. Why the name change from TIP?</a>
</p></blockquote>
<h3><a href="#2">2. Running</a></h3>
<blockquote><p>
  <a href="#2.1">2.1. How can I make Alt+Up scroll on a Linux console?</a>
</p></blockquote>
<hr width="100%">

<h1><a name="1"></a>1. General</h1>
<h3><a name="1.1"></a>1.1. What is GNU nano?</h3>
<blockquote><p>GNU nano is a free replacement for &quot;Pico&quot;.</p></blockquote>
<h3><a name="1.2"></a>1.2. Why the name change from TIP?</h3>
<blockquote><p>Another program was called tip.</p>
  <p><b>More...</b></p></blockquote>
<hr width="100%">

<h1><a name="2"></a>2. Running</h1>
<h3><a name="2.1"></a>2.1. How can I make Alt+Up scroll on a Linux console?</h3>
<blockquote><p>Remap the key with <b>loadkeys</b>.</p></blockquote>
<h3><a name="2.2"></a>2.1. How do I submit a bug report or patch?</h3>
<blockquote><p>Use the bug tracker.</p></blockquote>
<h3><a name="2.3"></a>2.3. An entry with nothing under it</h3>
<hr width="100%">
</body>
</html>
"""

MANUAL_HTML = """<html>
<head><title>The GNU nano text editor</title></head>
<body lang="en">
<h1 class="settitle" align="center">The GNU nano text editor</h1>
<span id="Top"></span>
<p>This manual documents GNU <code>nano</code>, version 7.2.
</p>
<table class="menu" border="0" cellspacing="0">
<tr><td align="left" valign="top">&bull; <a href="#Introduction">Introduction</a></td></tr>
</table>
<hr>
<span id="Introduction"></span><div class="header">
<p>
Next: <a href="#Invoking" accesskey="n" rel="next">Invoking</a>
</p>
</div>
<h2 class="chapter">1 Introduction</h2>
<p>GNU nano is a small and friendly text editor.
</p>
<table class="menu" border="0" cellspacing="0">
<tr><td align="left" valign="top">&bull; <a href="#Menuitem">Menu item title</a></td></tr>
</table>
<h3 class="section">1.1 Overview</h3>
<p>Besides basic text editing, nano offers undo/redo.
</p>
<h2 class="chapter">2 Invoking</h2>
<p>The usual way to invoke nano is: nano FILE.
</p>
</body>
</html>
"""


def _corpus(files: dict[str, str]) -> str:
    return " ".join(" ".join(files.values()).split()).lower()


def test_nano_faq_markdown_drops_the_contents_and_nests_the_chapters() -> None:
    md = ns.nano_faq_markdown(FAQ_HTML)
    assert md.startswith("# The GNU nano editor FAQ\n\n## 1. General\n\n### 1.1. What is GNU nano?")
    assert "Table of Contents" not in md
    assert md.count("What is GNU nano?") == 1  # the contents list's copy is gone
    assert "## 2. Running" in md


def test_split_nano_faq_questions_answers_and_ids() -> None:
    text, qa = ns.split_nano_faq(ns.nano_faq_markdown(FAQ_HTML))
    assert [num for num, _, _ in qa] == ["1.1", "1.2", "2.1", "2.1-2"]  # 2.3 has no text
    by_num = {num: (q, a) for num, q, a in qa}
    assert by_num["1.1"] == ("What is GNU nano?", 'GNU nano is a free replacement for "Pico".')
    assert by_num["1.2"] == (
        "Why the name change from TIP?",
        "Another program was called tip.\n\nMore...",
    )
    assert by_num["2.1"] == (
        "How can I make Alt+Up scroll on a Linux console?",
        "Remap the key with loadkeys.",
    )
    assert by_num["2.1-2"][0] == "How do I submit a bug report or patch?"
    low = text.lower()
    for q, a in by_num.values():
        assert q.lower() not in low
        assert a in text
    assert "an entry with nothing under it" not in low  # its heading goes too
    assert text.startswith("# The GNU nano editor FAQ\n\n## 1. General\n\nGNU nano is")
    assert "\n\n\n" not in text


def test_split_nano_faq_an_unnumbered_entry_keeps_its_place() -> None:
    _, qa = ns.split_nano_faq("# T\n\n### Why no number?\n\nBecause.\n\n### 1.2. Next?\n\nYes.\n")
    assert qa == [("q1", "Why no number?", "Because."), ("1.2", "Next?", "Yes.")]


def test_texinfo_menu_free_drops_both_menu_forms() -> None:
    md = ns.texi2any_page_markdown(ns.texinfo_menu_free(MANUAL_HTML))
    assert "Menu item title" not in md and "•" not in md
    assert "Next: Invoking" not in md  # texi2any's navigation line
    files, qa = ns.split_texinfo_chapters(md)
    assert qa == []
    assert list(files) == [
        "00-the-gnu-nano-text-editor.md",
        "01-1-introduction.md",
        "02-2-invoking.md",
    ]
    assert files["01-1-introduction.md"] == (
        "## 1 Introduction\n\nGNU nano is a small and friendly text editor.\n\n"
        "### 1.1 Overview\n\nBesides basic text editing, nano offers undo/redo.\n"
    )


def test_drop_between_cases() -> None:
    assert ns.drop_between("a[x]b[y]c", "[", "]") == "abc"
    assert ns.drop_between("a[x]b[yc", "[", "]") == "ab[yc"  # unclosed: kept
    assert ns.drop_between("abc", "[", "]") == "abc"
    assert ns.drop_between("[]", "[", "]") == ""
    assert ns.drop_between("<t<t>x</t>y", "<t", "</t>") == "y"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab[]", max_size=40))
def test_drop_between_matches_a_reference(text: str) -> None:
    expected, i = "", 0
    while True:
        j = text.find("[", i)
        if j < 0 or text.find("]", j + 1) < 0:
            expected += text[i:]
            break
        k = text.find("]", j + 1)
        expected += text[i:j]
        i = k + 1
    assert ns.drop_between(text, "[", "]") == expected


def test_drop_between_is_linear_on_unclosed_starts() -> None:
    t0 = time.thread_time()  # (CPU time of this thread: a loaded machine's waits do not count)
    out = ns.drop_between('<table class="menu"' * 50_000, '<table class="menu"', "</table>")
    assert out == '<table class="menu"' * 50_000
    assert time.thread_time() - t0 < 1.0  # quadratic would be 2.5e9 character steps


# -- the set, built from a package tree shaped like Debian's nano ----------------------------


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.NANO_PACKAGE, "7.2-1")
    doc = root / ns.NANO_DOC
    (doc / "examples").mkdir(parents=True)
    return doc


def test_nano_faq_set_from_a_package_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = _package(tmp_path, monkeypatch)
    (doc / ns.NANO_FAQ).write_text(FAQ_HTML, encoding="utf-8")
    (doc / ns.NANO_MANUAL).write_text(
        MANUAL_HTML.replace(
            "GNU nano is a small",
            "How can I make Alt+Up scroll on a Linux console? GNU nano is a small",
        ),
        encoding="utf-8",
    )
    with gzip.open(doc / "README.gz", "wt", encoding="utf-8") as fh:
        fh.write("GNU nano -- a simple editor\n")
    (doc / "examples" / "sample.nanorc").write_text("## Sample nanorc\n# set autoindent\n")
    with gzip.open(doc / "NEWS.gz", "wt", encoding="utf-8") as fh:
        fh.write("news\n")
    nset = ns.nano_faq_set()
    assert [q.qid for q in nset.questions] == [
        "nano-faq:1.1",
        "nano-faq:1.2",
        "nano-faq:2.1",
        "nano-faq:2.1-2",
    ]
    assert {q.source for q in nset.questions} == {"faq.md"}
    assert set(nset.files) == {
        "faq.md",
        "manual/00-the-gnu-nano-text-editor.md",
        "manual/01-1-introduction.md",
        "manual/02-2-invoking.md",
        "README",
        "examples/sample.nanorc",
    }
    corpus = _corpus(nset.files)
    for q in nset.questions:
        assert q.text.lower() not in corpus  # the manual's quoting copy is scrubbed too
        assert q.answers[0][0] in nset.files["faq.md"]
    assert_files_as_written(nset)
    assert "7.2-1" in nset.note and "3 chapter files" in nset.note
    assert "README, examples/sample.nanorc" in nset.note
    assert_held_out("nano-faq")


def test_nano_faq_set_halves_are_fixed_and_disjoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = _package(tmp_path, monkeypatch)
    (doc / ns.NANO_FAQ).write_text(FAQ_HTML, encoding="utf-8")
    first = ns.nano_faq_set().questions
    dev, test = bt.sampled_halves(first, None)
    assert {q.qid for q in dev}.isdisjoint({q.qid for q in test})
    assert {q.qid for q in dev} | {q.qid for q in test} == {q.qid for q in first}
    (doc / ns.NANO_FAQ).write_text(
        FAQ_HTML.replace("2.3. An entry with nothing under it</h3>", "2.3. Why?</h3><p>ok</p>"),
        encoding="utf-8",
    )
    again = ns.nano_faq_set().questions
    assert len(again) == len(first) + 1
    dev2, test2 = bt.sampled_halves(again, None)
    assert {q.qid for q in dev} <= {q.qid for q in dev2}
    assert {q.qid for q in test} <= {q.qid for q in test2}


def test_nano_faq_set_refuses_a_package_without_the_faq(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _package(tmp_path, monkeypatch)
    with pytest.raises(FileNotFoundError, match=r"no faq\.html under"):
        ns.nano_faq_set()
