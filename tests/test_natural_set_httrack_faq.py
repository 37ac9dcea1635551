"""The ``httrack-faq`` natural-question set (``bench/natural_sets.py``), its reading of
HTTrack's hand-written HTML FAQ and the question-leak check (``bench/check_question_leaks.py``)
on a small inline FAQ shaped as Debian's ``httrack-doc`` ships it
(``/usr/share/doc/httrack/html/faq.html``, ISO-8859-1: the site's table layout and style up
to the "End prologue" comment, the title and tips, a contents list of in-page links under
``<h3>`` group titles, one worded differently from its entry, a rule, then ``<a
name="...">Q: <strong>...</strong>`` / ``A: <em>...`` entries with unbalanced tags
(``</a></strong></br>``, ``</strong></u>``), one question wrapped over two lines with
``&nbsp;``, one with ``<tt>``, one whose anchor comes after the ``A:`` label, an unanswered
entry, then the epilogue and copyright footer) beside the site's other pages (the guide
holding an older copy of the FAQ left out, one page over the limit) in a package tree laid
out as the package unpacks (marker present, nothing downloaded); offline, no embedding
model, no test reads the real package.

What the set's numbers rest on: no question's text is left in any file (the entries, the
contents list, a page quoting one); each answer is exactly the text after its question up to
the next; ids are the FAQ's anchors, so an added entry keeps the halves; an answer too short
to judge leaves the set but not the corpus's scrubbing.
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
from debian_package_double import unpacked_package

PROLOGUE = (
    '<html xmlns="http://www.w3.org/1999/xhtml" lang="en">\n<head>\n'
    '\t<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1" />\n'
    "\t<title>HTTrack Website Copier - Offline Browser</title>\n"
    '\t<style type="text/css">\n\t<!--\nbody { margin: 0; }\n\t-->\n\t</style>\n</head>\n'
    '<body>\n<table width="76%" border="0" align="center"><tr><td id="subTitle">'
    "Open Source offline browser</td></tr>\n"
    '<tr><td id="pageContent">\n'
    "<!-- ==================== End prologue ==================== -->\n\n"
    '<h2 align="center"><em>F A Q</em></h2>\n\n<br>\n\n'
    "<p><em><br>\n<ul>\n<strong>Tips:</strong>\n"
    "<li>In case of troubles, <b><u>first check the hts-log.txt file</b></u> "
    "(merci Fran\u00e7ois).\n</li>\n"
    "</ul>\n</em><br></p>\n\n<ul><br>\n\n"
    "<h3><b>Very</b> Frequently Asked Questions:<br></h3>\n\n"
    '<li><a href="#VF1">HTTrack does not capture all files I want to capture!</a><br></li>\n\n'
    "<br>\n<h3>General questions:<br></h3>\n\n"
    '<li><a href="#QG0b">Is there any risks of viruses with this software?</a><br></li>\n\n'
    '<li><a href="#QT1">Only the first page is caught. What\'s wrong?</a><br></li>\n\n'
    "<li><a href=\"#Q12\">Must I add a&nbsp; '+' or '-' in the filter list when I want to "
    "use filters?</a><br></li>\n\n"
    '<li><a href="#Q13">I want to find file(s) in a web-site. How do I do it?</a><br></li>\n\n'
    '<li><a href="#QM9">Is this entry answered at all?</a><br></li>\n\n'
    '<li><a href="#QM10b">What is the meaning of the <tt>Links scanned: 12/34 (+5)</tt> '
    "line in WinHTTrack/WebHTTrack?</a><br></li>\n\n"
    "</ul>\n\n</p>\n\n<br>\n<hr>\n<br>\n\n"
)
ENTRIES = (
    "<u><strong>Very Frequently Asked Questions:</strong></u><br><br>\n\n"
    '<a name="VF1">Q: <strong>HTTrack does not capture all files I want to capture!</strong><br>\n'
    "A: <em>This is a frequent question, generally related to the filters. \n"
    '<u>BUT first check the <a href="#Q1b1">robots.txt</a> rules.</u>\n<br>\n<br>\n'
    "</strong></u><br>\n\n"
    '<br><br><a NAME="QG0b">Q: <strong>Are there any risks of viruses with this '
    "software?</strong></a><br>\n"
    "A: <em>All official releases are checked against &quot;all known viruses&quot;.</em>\n\n"
    '<br><br><a NAME="QT1">Q: <strong>Only the first page is caught. '
    "What's wrong?</a></strong></br>\n"
    "A: <em>First, check the hts-log.txt file to figure out what happened.</em>\n\n"
    "</a><a NAME=\"Q12\">Q: <strong>Must I add a&nbsp; '+' or '-' in the filter list when I want\n"
    "to use filters?</strong><br>\n"
    "A: <em>YES. '+' is for accepting links and '-' to avoid them.</em></a><br>\n<br>\n"
    "Q: <strong>I want to find file(s) in a web-site. How do I do it?</strong><br>\n"
    'A: <a NAME="Q13"><em>You can use the filters: forbid all files (add a <tt>-*</tt> in the\n'
    "filter list) and accept only html files.</em></a>\n\n"
    '<br><br><a NAME="QM9">Q: <strong>Is this entry answered at all?</strong></a><br>\n\n'
    '<br><br><a NAME="QM10b">Q: <strong>What is the meaning of the <tt>Links scanned: 12/34 '
    "(+5)</tt> line in WinHTTrack/WebHTTrack?</strong></a><br>\n"
    "A: <em>12 is the number of links scanned and stored, 34 the total number of links.</em>\n\n"
    "</em></p><h3><br>\n\n"
)
EPILOGUE = (
    "<!-- ==================== Start epilogue ==================== -->\n"
    "\t\t</td>\n\t\t</tr>\n\t\t</table>\n"
    '<table width="76%"><tr><td id="footer"><small>&copy; 2007 Xavier Roche &amp; other '
    "contributors - Web Design: Leto Kauler.</small></td></tr></table>\n</body>\n</html>\n"
)
FAQ = PROLOGUE + ENTRIES + EPILOGUE

Q_VF1 = "HTTrack does not capture all files I want to capture!"
Q_VIRUS = "Are there any risks of viruses with this software?"
Q_FIRST = "Only the first page is caught. What's wrong?"
Q_PLUS = "Must I add a '+' or '-' in the filter list when I want to use filters?"
Q_FIND = "I want to find file(s) in a web-site. How do I do it?"
Q_LINKS = "What is the meaning of the Links scanned: 12/34 (+5) line in WinHTTrack/WebHTTrack?"
ASKED = (Q_VF1, Q_VIRUS, Q_FIRST, Q_PLUS, Q_FIND, Q_LINKS)
ANSWERS = {
    "VF1": (
        "This is a frequent question, generally related to the filters. BUT first check the "
        "robots.txt rules."
    ),
    "QG0b": 'All official releases are checked against "all known viruses".',
    "QT1": "First, check the hts-log.txt file to figure out what happened.",
    "Q12": "YES. '+' is for accepting links and '-' to avoid them.",
    "Q13": (
        "You can use the filters: forbid all files (add a -* in the filter list) and accept "
        "only html files."
    ),
    "QM10b": "12 is the number of links scanned and stored, 34 the total number of links.",
}


def test_split_httrack_faq_questions_answers_and_ids() -> None:
    page, qa = ns.split_httrack_faq(FAQ)
    # every Q: entry a question (tags removed, entities read, the wrapped one joined); ids
    # the anchors, the one after the A: label too; the answer the text up to the next entry
    nsc.assert_split_answers(page, qa, ASKED, ANSWERS)
    # the contents list (its differently worded item too) and the unanswered entry leave
    # the page; the tips, group titles and footer stay, in no answer; the style is gone
    assert "Is there any risks" not in page and "answered at all" not in page
    assert "Q:" not in page and "A:" not in page and "margin" not in page
    assert "### General questions:" in page and "first check the hts-log.txt file" in page
    assert page.rstrip().endswith("Web Design: Leto Kauler.")
    assert all("Kauler" not in a and "Tips" not in a for *_, a in qa)


def test_split_httrack_faq_edges() -> None:
    # no entry: the page kept, nothing asked; "Q:" without <strong> is text; an entry with
    # no anchor before or after its label is "Q", a repeat "-2"; with no epilogue the last
    # answer runs to the end
    page, none = ns.split_httrack_faq("<p>Notes. Q: plain text.</p>")
    assert none == [] and page == "Notes. Q: plain text.\n"
    page, qa = ns.split_httrack_faq(
        "Q: <strong>One?</strong><br>\nA: <em>First answer.</em>\n"
        "Q: <strong>Two?</strong><br>\nA: <em>Second answer.</em>\n"
        '<a name="x">Q: <strong>Three?</strong><br>\nA: <a name="y"><em>Third.</em>\n'
    )
    assert qa == [
        ("Q", "One?", "First answer."),
        ("Q-2", "Two?", "Second answer."),
        ("x", "Three?", "Third."),
    ]
    assert page == "First answer.\n\nSecond answer.\n\nThird.\n"


_WORD = st.sampled_from(["mirror", "filter", "proxy", "cache", "robots", "update", "links"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(_WORD, min_size=1, max_size=12),  # the question's words
            st.integers(min_value=0, max_value=2),  # anchor: before Q:, after A:, none
            st.lists(_WORD, min_size=0, max_size=16),  # the answer's words (may be none)
        ),
        min_size=1,
        max_size=8,
    )
)
def test_split_httrack_faq_property(entries: list[tuple[list[str], int, list[str]]]) -> None:
    """Random entries listed in the contents and asked after it, their anchors before the
    question, after the label or absent, some unanswered, before the epilogue: one question
    per answered entry, in order, its anchor its id, the text after it its answer, in the
    page; no question's word left in it."""
    listing, body, expected, seen = "<ul>\n", "<hr>\n", [], {}
    for n, (qwords, where, awords) in enumerate(entries, start=1):
        question = " ".join([f"entry{n}x", *qwords]) + "?"
        answer = " ".join(["Answer", *awords]) if awords else ""
        listing += f'<li><a href="#Q{n}">{question}</a><br></li>\n'
        before = f'<a NAME="Q{n}">' if where == 0 else ""
        after = f'<a NAME="Q{n}">' if where == 1 else ""
        body += f"<br><br>{before}Q: <strong>{question}</strong></a><br>\n"
        body += f"A: {after}<em>{answer}</em>\n\n" if answer else "\n"
        if answer:
            key = f"Q{n}" if where < 2 else "Q"
            expected.append((ns._repeat_id(seen, key), question, answer))
    page, qa = ns.split_httrack_faq(listing + "</ul>\n" + body + EPILOGUE)
    nsc.assert_random_split(page, qa, expected)
    assert page.rstrip().endswith("Web Design: Leto Kauler.")


# -- the set, built from a package tree shaped like Debian's httrack-doc -------------------


def _page(title: str, body: str) -> str:
    return f"<html><head><title>{title}</title></head><body>{body}</body></html>\n"


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.HTTRACK_PACKAGE, "3.49.4-1")
    where: Path = root / ns.HTTRACK_HTML
    where.mkdir(parents=True)
    (where / ns.HTTRACK_FAQ).write_text(faq, encoding="latin-1")
    (where / "index.html").write_text(
        _page("HTTrack", f"<p>Often asked: {Q_FIRST} Read the FAQ. Caf\u00e9 r\u00e9seau.</p>"),
        encoding="latin-1",
    )
    (where / "step2.html").write_text(
        _page("Step 2", "<h2>Step 2 : Fill the addresses</h2><p>Select an action.</p>")
    )
    (where / "fcguide.html").write_text(_page("Guide", f"<p>Q: {Q_VIRUS} left out</p>"))
    (where / "httrack.man.html").write_text(_page("man", "<p>The engine mirrors.</p>" * 9_000))
    (where / "history.txt").write_text("left out\n")
    (where / "license.txt").write_text("left out\n")
    (where / "img").mkdir()
    (where / "img" / "addurl1.gif").write_bytes(b"GIF89a")
    doc = root / "usr/share/doc/httrack-doc"
    doc.mkdir(parents=True)
    (doc / "copyright").write_text("left out\n")
    return where


@pytest.fixture
def where(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package tree as shipped (the FAQ :data:`FAQ`), its ``html/`` folder."""
    return _package(tmp_path, monkeypatch)


def test_httrack_faq_set_from_a_package_tree(where: Path) -> None:
    nset = ns.httrack_faq_set()
    nsc.assert_package_set(
        nset,
        "httrack-faq",
        ids=list(ANSWERS),
        files={"faq.md", "index.md", "step2.md"},
        source="faq.md",
        version="3.49.4-1",
        too_long="httrack.man.html",
        answers=ANSWERS,
    )
    assert "left out" not in " ".join(nset.files.values())
    # the page quoting a question scrubbed, its other text kept, read as ISO-8859-1
    assert "Read the FAQ. Caf\u00e9 r\u00e9seau." in nset.files["index.md"]
    assert "Select an action." in nset.files["step2.md"]
    assert "(merci Fran\u00e7ois)" in nset.files["faq.md"]


def test_httrack_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = FAQ.replace(ANSWERS["QT1"], "Check the log.")
    assert short != FAQ
    _package(tmp_path, monkeypatch, short)
    nsc.assert_left_out(ns.httrack_faq_set(), Q_FIRST, len(ASKED) - 1)


def test_no_question_text_is_left_in_any_file(where: Path) -> None:
    nsc.assert_leak_checked(ns.httrack_faq_set(), {"faq.html": FAQ}, ASKED, is_html=True)


def test_httrack_faq_set_halves_are_fixed_and_disjoint(where: Path) -> None:
    more = FAQ.replace(
        "</em></p><h3>",
        '<br><br><a NAME="QM14">Q: <strong>Can I mirror a site through Tor?</strong></a><br>\n'
        "A: <em>Use its SOCKS port through a local HTTP proxy and point HTTrack at it.</em>\n"
        "</em></p><h3>",
    )
    assert more != FAQ
    nsc.assert_halves_survive_an_added_question(
        ns.httrack_faq_set,
        lambda: (where / ns.HTTRACK_FAQ).write_text(more, encoding="latin-1"),
    )


def test_httrack_faq_set_refuses_a_package_without_the_faq(where: Path) -> None:
    (where / ns.HTTRACK_FAQ).unlink()
    nsc.assert_refuses_without_faq(ns.httrack_faq_set, ns.HTTRACK_FAQ)
