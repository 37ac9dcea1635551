"""The ``xterm-faq`` natural-question set (``bench/natural_sets.py``), its reader and the
question-leak check (``bench/check_question_leaks.py``) on small inline pages shaped like
Debian's ``xterm`` (``/usr/share/doc/xterm/xterm.faq.html``: one hand-written HTML page, an
``<h1>`` title, a ``div.nav`` contents list of in-page links, ``<h2>`` sections, ``<h3>`` and
``<h4>`` entries, unnumbered, some asking a question and some titles; sections headed by a
list of their own entries) in a package tree laid out as the package unpacks (marker
present, nothing downloaded); offline, no embedding model.

What the set's numbers rest on: a question is a heading of level 2-4 that ends in "?"; no
question's text is left in any file (the contents lists, one of them quoting a question in
other words, and a cross-reference aside); each answer is exactly the text under its
question, up to the next question or heading of its level or above, a deeper title inside
it; a section heading that asks but holds only its contents list asks nothing; a heading in
a code block is no question; ids are the author's anchors; a list of prose or of links to
other pages stays; the second copy of the FAQ and the change log stay out; the halves hold
when an entry is added.
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

Q_WHAT = "What is XTerm?"
Q_WHO = "Who wrote XTerm?"
Q_VT220 = "What is a VT220?"  # holds only its contents list: asks nothing
Q_WHY_VT220 = "Why a VT220?"
Q_VT320 = "Why not emulate VT320?"
Q_FONT = "How do I change the font size?"
Q_DELETE = "Why doesn't my delete key work?"
Q_TABS = "Why can't I select tabs in xterm?"
Q_WRONG = "Why is the text in the wrong place?"
ASKED = (Q_WHAT, Q_WHO, Q_WHY_VT220, Q_VT320, Q_FONT, Q_DELETE, Q_TABS, Q_WRONG)

FAQ_HTML = f"""<!-- $XTermId: xterm.faq.html,v 1.419 $ -->
<!DOCTYPE html PUBLIC "-//W3C//DTD HTML 4.01//EN">
<html><head><title>XTerm &ndash; Frequently Asked Questions (FAQ)</title></head>
<body>
  <p>Copyright &copy; 1997-2022 by Thomas E. Dickey</p>
  <h1 class="no-header">XTerm &ndash; Frequently Asked Questions (FAQ)</h1>
  <div class="nav">
    <ul>
      <li class="nav-top"><a href="/xterm/xterm.faq.html">(top)</a></li>
      <li><a href="#what_is_it">What is <strong>XTerm</strong>?</a></li>
      <li><a href="#who_did_it">Who wrote
      <strong>XTerm</strong>?</a></li>
      <li><a href="#what_is_vt220">{Q_VT220}</a></li>
      <li><a href="#how_do_i">How do I ...</a></li>
      <li><a href="#frequent_problems">Frequent problems</a></li>
    </ul>
  </div>
  <h2 id="what_is_it-id"><a name="what_is_it" id="what_is_it">What
  is <strong>XTerm</strong>?</a></h2>
  <p>The xterm program is a terminal emulator for the X Window System.</p>
  <ul>
    <li>It provides DEC VT102 and Tektronix 4014 compatible terminals.</li>
    <li>See the <a href="/xterm/manpage/xterm.html">manual page</a> for more.</li>
  </ul>
  <h2 id="who_did_it-id"><a name="who_did_it" id="who_did_it">Who wrote
  <strong>XTerm</strong>?</a></h2>
  <p>Mark Vandevoorde wrote the original version in 1984.</p>
  <h3 id="prehistory-id"><a name="prehistory" id="prehistory">A Prehistory
  Perspective</a></h3>
  <p>Jim Gettys rewrote it for X10 after the first release.</p>
  <h2 id="what_is_vt220-id"><a name="what_is_vt220" id=
  "what_is_vt220">{Q_VT220}</a></h2>
  <ul>
    <li><a href="#what_vt220">{Q_WHY_VT220}</a></li>
    <li><a href="#why_not_vt320">{Q_VT320}</a></li>
  </ul>
  <h3 id="what_vt220-id"><a name="what_vt220" id="what_vt220">{Q_WHY_VT220}</a></h3>
  <p>The VT220 was the most widely used terminal of its kind in the eighties.</p>
  <h3 id="why_not_vt320-id"><a name="why_not_vt320" id="why_not_vt320">Why not
  emulate VT320?</a></h3>
  <p>The VT320 added little that programs use beyond status lines.</p>
  <h2 id="how_do_i-id"><a name="how_do_i" id="how_do_i">How do I
  ...</a></h2>
  <p>Not really problems, but frequently asked questions:</p>
  <ul>
    <li><a href="#how2_fsize">{Q_FONT}</a></li>
  </ul>
  <h3><a name="how2_fsize" id="how2_fsize">How
  do I change the font size?</a></h3>
  <p>XTerm uses fonts given as resource settings, switched at runtime from a menu.</p>
  <h2 id="frequent_problems-id"><a name="frequent_problems" id=
  "frequent_problems">Frequent problems</a></h2>
  <ul>
    <li>
      <a href="#problems_keyboard">Keyboard problems</a>
      <ul>
        <li><a href="#xterm_erase">{Q_DELETE}</a></li>
        <li><a href="#xterm_alt">Alt-keys do not work in bash</a></li>
      </ul>
    </li>
    <li>
      <a href="#problems_odd">Odd behavior</a>
      <ul>
        <li><a href="#xterm_tabs">Why can't I select tab-characters
        in xterm?</a></li>
        <li><a href="#compiz_bugs">{Q_WRONG}</a></li>
      </ul>
    </li>
  </ul>
  <h3 id="problems_keyboard-id"><a name="problems_keyboard" id=
  "problems_keyboard">Keyboard problems</a></h3>
  <h4 id="xterm_erase-id"><a name="xterm_erase" id="xterm_erase">Why
  doesn't my delete key work?</a></h4>
  <p>Your terminal description and the stty erase setting disagree about the key.</p>
  <pre>
## is this a question?
stty erase ^?
</pre>
  <h5 id="erase_details-id">Details</h5>
  <p>The backarrowKey resource decides which code the key sends.</p>
  <h4 id="xterm_alt-id"><a name="xterm_alt" id="xterm_alt">Alt-keys do not
  work in bash</a></h4>
  <p>Set the metaSendsEscape resource to make Alt prefix an escape.</p>
  <h3 id="problems_odd-id"><a name="problems_odd" id="problems_odd">Odd behavior</a></h3>
  <h4 id="xterm_tabs-id"><a name="xterm_tabs" id="xterm_tabs">Why can't I select
  tabs in xterm?</a></h4>
  <p>The screen holds blanks, not tab characters, where a tab moved the cursor. See
  also <em><a href="#compiz_bugs">{Q_WRONG}</a></em> for a server problem.</p>
  <h4><a name="compiz_bugs" id="compiz_bugs">Why is the text in the
  wrong place?</a></h4>
  <p>The compositing window manager implemented only parts of the X protocol.</p>
  <h2 id="more_info-id"><a name="more_info" id="more_info">Additional
  Information</a></h2>
  <ul>
    <li><a href="/xterm/manpage/xterm.html">The XTerm Manual</a></li>
    <li><a href="/xterm/ctlseqs/ctlseqs.html">Xterm Control Sequences</a></li>
  </ul>
</body></html>
"""
ANSWERS = {
    "what_is_it": "The xterm program is a terminal emulator for the X Window System.",
    "who_did_it": "Mark Vandevoorde wrote the original version in 1984.",
    "what_vt220": "The VT220 was the most widely used terminal of its kind in the eighties.",
    "why_not_vt320": "The VT320 added little that programs use beyond status lines.",
    "how2_fsize": "XTerm uses fonts given as resource settings, switched at runtime from a menu.",
    "xterm_erase": "Your terminal description and the stty erase setting disagree about the key.",
    "xterm_tabs": "The screen holds blanks, not tab characters, where a tab moved the cursor.",
    "compiz_bugs": "The compositing window manager implemented only parts of the X protocol.",
}


def _corpus(files: dict[str, str]) -> str:
    return " ".join(" ".join(files.values()).split()).lower()


def test_drop_anchor_lists_drops_contents_lists_only() -> None:
    page = (
        "<p>Intro.</p>\n"
        '<ul><li><a href="#a">First entry</a></li><li><a href="#b">Second <b>entry</b></a>'
        '<ul><li><a href="#c">Nested entry</a></li></ul></li></ul>\n'
        "<p>Middle.</p>\n"
        '<ol><li><a href="#d">An entry</a> and a remark</li></ol>\n'
        '<ul><li><a href="other.html#e">Another page</a></li></ul>\n'
        "<ul><li>Plain prose bullet.</li></ul>\n"
        "<ul></ul>\n"
        "<p>End.</p></ul>"
    )
    out = ns.drop_anchor_lists(page)
    assert "First entry" not in out and "Nested entry" not in out
    assert "Intro." in out and "Middle." in out and "End." in out
    # a list with one other word, a list of links to another page, prose, an empty list: kept
    assert "and a remark" in out and "Another page" in out and "Plain prose bullet." in out
    assert "<ul></ul>" in out
    assert ns.drop_anchor_lists("<p>No lists.</p>") == "<p>No lists.</p>"


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.booleans(), st.integers(min_value=0, max_value=2), st.text("abc ", max_size=8)
        ),
        max_size=8,
    )
)
def test_drop_anchor_lists_property(blocks: list[tuple[bool, int, str]]) -> None:
    """Paragraphs between lists survive whole; a list nested ``depth`` deep of in-page links
    leaves no word; a list of prose leaves every word."""
    page = []
    for k, (anchors, depth, words) in enumerate(blocks):
        item = f'<a href="#x{k}">link{k}</a>' if anchors else f"prose{k} {words}"
        inner = f"<li>{item}</li>"
        for _ in range(depth):
            inner = f"<li>{item}<ul>{inner}</ul></li>"
        page.append(f"<p>para{k}</p><ul>{inner}</ul>")
    out = ns.drop_anchor_lists("".join(page))
    for k, (anchors, _, words) in enumerate(blocks):
        assert f"<p>para{k}</p>" in out
        if anchors:
            assert f"link{k}" not in out
        else:
            assert f"prose{k} {words}" in out


def test_split_xterm_faq_files_questions_answers_and_ids() -> None:
    files, qa = ns.split_xterm_faq(FAQ_HTML)
    assert list(files) == [f"xterm.faq/{k:02d}.md" for k in range(7)]
    assert [(k, q) for k, q, _ in qa] == [
        ("what_is_it", Q_WHAT),
        ("who_did_it", Q_WHO),
        ("what_vt220", Q_WHY_VT220),
        ("why_not_vt320", Q_VT320),
        ("how2_fsize", Q_FONT),  # the anchor inside a heading without an id
        ("xterm_erase", Q_DELETE),
        ("xterm_tabs", Q_TABS),
        ("compiz_bugs", Q_WRONG),
    ]
    answers = {k: a for k, _, a in qa}
    for key, first in ANSWERS.items():
        assert answers[key].startswith(first.split(" See")[0].split(",")[0])
    # a deeper title stays inside the answer; a list of prose and outside links with it
    assert "A Prehistory Perspective" in answers["who_did_it"]
    assert "Jim Gettys rewrote it" in answers["who_did_it"]
    assert "DEC VT102" in answers["what_is_it"] and "manual page" in answers["what_is_it"]
    # a heading in code and a deeper title stay in the answer; a title of its level ends it
    assert "## is this a question?" in answers["xterm_erase"]
    assert "##### Details" in answers["xterm_erase"]
    assert "backarrowKey" in answers["xterm_erase"]
    assert "metaSendsEscape" not in answers["xterm_erase"]
    # a question at a deeper level ends the answer above it
    assert "VT320" not in answers["what_vt220"]
    page = "\n".join(files.values())
    for _, q, a in qa:
        assert a in page
        assert f"# {q}" not in page
    for title in ("Frequent problems", "Keyboard problems", "Alt-keys do not work in bash"):
        assert f"# {title}" in page  # titles and problem reports stay as headings
    assert f"# {Q_VT220}" not in page  # deleted, asks nothing: its only text was a list
    assert "tab-characters" not in page and "(top)" not in page  # contents lists dropped
    assert "# XTerm – Frequently Asked Questions (FAQ)" in files["xterm.faq/00.md"]
    assert "The XTerm Manual" in files["xterm.faq/06.md"]  # a list of other pages stays


def test_split_xterm_faq_repeated_anchor_and_no_questions() -> None:
    twice = FAQ_HTML.replace(
        '  <h2 id="more_info-id">',
        '  <h3 id="what_vt220-id">Why a VT220?</h3>\n  <p>Said again later on.</p>\n'
        '  <h2 id="more_info-id">',
    )
    _, qa = ns.split_xterm_faq(twice)
    assert [k for k, _, _ in qa].count("what_vt220-2") == 1
    files, none = ns.split_xterm_faq("<html><body><h2>Topic</h2><p>Text.</p></body></html>")
    assert none == [] and list(files) == ["xterm.faq/00.md"]
    assert "## Topic" in files["xterm.faq/00.md"]


# -- the set, built from a package tree shaped like Debian's xterm ---------------------------


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ_HTML) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.XTERM_PACKAGE, "379-1")
    doc: Path = root / ns.XTERM_DOC
    doc.mkdir(parents=True, exist_ok=True)
    (doc / ns.XTERM_FAQ).write_text(faq)
    (doc / "README.Debian").write_text("xterm for Debian\n\nuxterm runs xterm in UTF-8.\n")
    write_gz(doc / "README.i18n.gz", "Internationalisation\n\nUse luit for legacy encodings.\n")
    write_gz(
        doc / "ctlseqs.txt.gz",
        f"XTerm Control Sequences\n\n{Q_FONT} Send OSC 50 with a font name.\n",
    )
    write_gz(doc / "xterm.faq.gz", f"{Q_WHO}\n\nThe same FAQ as text.\n")
    write_gz(doc / "ctlseqs.ms.gz", ".TL\nXTerm Control Sequences\n")
    (doc / "xterm.log.html").write_text("<html><body><p>Patch #379</p></body></html>")
    write_gz(doc / "xterm.terminfo.gz", "xterm|xterm terminal emulator,\n")
    write_gz(doc / "changelog.Debian.gz", "xterm (379-1) unstable\n")
    (doc / "copyright").write_text("MIT/X11\n")
    write_gz(
        root / "usr/share/man/man1/xterm.1.gz",
        ".TH XTERM 1\n.SH NAME\nxterm \\- terminal emulator for X\n.SH MENUS\n"
        f"{Q_DELETE} See \\fBbackarrowKey\\fR.\n",
    )
    write_gz(root / "usr/share/man/man1/resize.1.gz", ".TH RESIZE 1\n.SH NAME\nresize \\- size\n")
    return doc


def test_xterm_faq_set_from_a_package_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _package(tmp_path, monkeypatch)
    nset = ns.xterm_faq_set()
    assert [q.qid for q in nset.questions] == [
        f"xterm-faq:{k}"
        for k in (
            "what_is_it",
            "who_did_it",
            "what_vt220",
            "why_not_vt320",
            "how2_fsize",
            "xterm_erase",
            "xterm_tabs",
            "compiz_bugs",
        )
    ]
    assert nset.left_out == ()
    assert set(nset.files) == {f"xterm.faq/{k:02d}.md" for k in range(7)} | {
        "README.Debian",
        "README.i18n",
        "ctlseqs.txt",
        "man/xterm.1.md",
        "man/resize.1.md",
    }
    corpus = _corpus(nset.files)
    for q in nset.questions:
        if len(q.text.split()) >= 4:
            assert q.text.lower() not in corpus
        assert q.answers[0][0] in nset.files[q.source]
    # a cross-reference, ctlseqs and a man page quoting a question: scrubbed, the rest kept
    tabs = next(q for q in nset.questions if q.qid == "xterm-faq:xterm_tabs")
    assert "for a server problem" in tabs.answers[0][0]
    assert "Send OSC 50 with a font name." in nset.files["ctlseqs.txt"]
    assert "See backarrowKey." in " ".join(nset.files["man/xterm.1.md"].split())
    nsc.assert_files_as_written(nset)
    assert "379-1" in nset.note and "split into its 7 parts" in nset.note
    assert "README.Debian, README.i18n, ctlseqs.txt, xterm.1, resize.1" in nset.note
    nsc.assert_held_out("xterm-faq")


def test_xterm_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    faq = FAQ_HTML.replace(f"<p>{ANSWERS['what_vt220']}</p>", "<p>Popularity.</p>")
    _package(tmp_path, monkeypatch, faq)
    nset = ns.xterm_faq_set()
    assert nset.left_out == (Q_WHY_VT220,)
    assert Q_WHY_VT220 in nset.note
    assert len(nset.questions) == len(ASKED) - 1


def test_no_question_text_is_left_in_any_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The leak check on the set finds no copy, and finds every question of three words or
    more in the FAQ as shipped (its contents lists and headings: it could fail; a shorter one
    is a copy only alone on a line, and the page wraps "What is <strong>XTerm</strong>?"
    over two lines of its source)."""
    _package(tmp_path, monkeypatch)
    nset = ns.xterm_faq_set()
    asked = [q.text for q in nset.questions] + list(nset.left_out)
    assert sorted(asked) == sorted(ASKED)
    assert cql.find_leaks(nset.files, asked, False) == []
    shipped = cql.find_leaks({"xterm.faq.html": FAQ_HTML}, asked, True)
    exact = {lk.question for lk in shipped if lk.kind == "exact"}
    assert exact == {q for q in asked if "XTerm" not in q}


def test_xterm_faq_set_halves_are_fixed_and_disjoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = _package(tmp_path, monkeypatch)
    first, dev, test = nsc.halves_of(ns.xterm_faq_set)
    more = FAQ_HTML.replace(
        '  <h2 id="frequent_problems-id">',
        '  <h3 id="how2_title-id">How do I set the title?</h3>\n'
        "  <p>Send the OSC 2 control sequence with the new title.</p>\n"
        '  <h2 id="frequent_problems-id">',
        1,
    )
    (doc / ns.XTERM_FAQ).write_text(more)
    nsc.assert_halves_kept(ns.xterm_faq_set, first, dev, test)


def test_xterm_faq_set_refuses_a_package_without_the_faq(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = _package(tmp_path, monkeypatch)
    (doc / ns.XTERM_FAQ).unlink()
    with pytest.raises(FileNotFoundError, match=re.escape("no xterm.faq.html under")):
        ns.xterm_faq_set()
