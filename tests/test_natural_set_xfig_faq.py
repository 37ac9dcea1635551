"""The ``xfig-faq`` natural-question set (``bench/natural_sets.py``), its reading of xfig's
hand-written FAQ page and the question-leak check (``bench/check_question_leaks.py``) on a
small inline page shaped like Debian's ``xfig-doc`` ships it
(``/usr/share/doc/xfig/html/faq.html``, one page of the XFIG Users Manual: a title image
link, an ``<h1>``, then each ``<h2>`` group first as a heading over an ``<ol>`` of in-page
links (the contents; one item with a ``<br>``-wrapped aside, one with an error message in a
``<blockquote>``), a rule image, then the groups again, each entry
``<li><h3><a name="depth">...</a></h3>`` over its answer; titles wrapped over lines, with
``<b>``/``<tt>``/``<i>`` inside ("<b>xfig</b>'s icon"), ``&quot;`` entities, one heading
whose ``</a>`` is missing; answers of "POSSIBLE CAUSE:" / "SOLUTION:" definition lists, a
nested ``<ol>``, a patch in ``<pre>``, ended by ``<hr>`` or a comment; an entry with no text;
a navigation footer after the last ``<hr>``) beside the manual's other pages, its contents
page, frame pages, an image map, the Japanese translation, a PDF and an over-long page to be
left out, in a package tree laid out as ``xfig-doc`` unpacks (marker present, nothing
downloaded); offline, no embedding model, no test reads the real package.

What the set's numbers rest on: no question's text is left in any file (the entries, the
contents, another page quoting one); each answer is exactly the text under its heading up to
the next one or the next group; ids are the FAQ's anchors, so an added entry keeps the
halves; an answer too short to judge leaves the set but not the corpus's scrubbing.
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

Q_GET = "Where can I get xfig/TransFig?"
Q_DEPTH = "I can't seem to control the drawing order of objects"
Q_ICON = "OpenWindows sometimes loses track of xfig's icon"
Q_ACTION = (
    'A warning about some action not found occurs, like "Warning: Actions not found: '
    'ModeOpenCompound"'
)
Q_UMLAUT = (
    "I can't enter special characters such as a-umlaute in the popup editor for text objects."
)
Q_OGONEK = "LaTeX asks for missing macro \\k or the ogonek diacritic mark isn't visible."
Q_EMPTY = "Is this entry answered at all?"
Q_JPEG = "I'm getting errors such as"
Q_XPOINTER = "XPointer is undefined or unknown when I compile xfig"

RUNNING = "Problems when running <b>xfig</b> or\n<b>TransFig (fig2dev)</b>"
COMPILING = "Problems when compiling <b>xfig</b>"

# (anchor, heading HTML, answer HTML) by group; the heading HTML is what the entry carries
GENERAL = [
    (
        "get_xfig",
        "Where can I get <b>xfig/TransFig</b>?",
        '<b>xfig</b> and <b>TransFig</b> are <a href="authors.html#xfig">freeware</a>\n'
        "and you can get them from several sites.\n<hr>\n",
    ),
    (
        "depth",
        "I can't seem to control the drawing order of objects",
        "When you have two or more objects that overlap and the drawing order is\n"
        'important, you must set the <a href="attributes.html#depth"><i>depth</i></a>\n'
        "of each object to guarantee the drawing order.\n\n<hr>\n",
    ),
    ("empty", Q_EMPTY, ""),
]
RUNNING_ENTRIES = [
    (
        "openw_icon",
        "OpenWindows sometimes loses track of <b>xfig</b>'s icon",
        "\n<dl>\n<dt>POSSIBLE CAUSE:\n<dd>Cause unknown.\n<p>\n<dt>SOLUTION:\n"
        "<dd>Here is a temporary kludge: copy the file fig.icon.X into your_lib_area.\n"
        "</dl>\n\n<hr>\n",
    ),
    (
        "action",
        "A warning about some action not found occurs,\nlike &quot;Warning: Actions not "
        "found: ModeOpenCompound&quot;",
        "\n<dl>\n<dt>POSSIBLE CAUSE:\n<dd>You didn't install the current app-defaults "
        "file.\n</dl>\n<pre>\n*** XPolyReg.c.orig\n--- XPolyReg.c\n</pre>\n\n"
        "<!-- ********************** -->\n",
    ),
    (
        "multi-key",
        # the shipped page leaves this heading's </a> out
        "I can't enter special characters such as a-umlaute in the popup\n\t\teditor for "
        "text objects.",
        "\n<dl>\n<dt>POSSIBLE CAUSES AND SOLUTIONS:\n<dd>\n<ol>\n<li>\nThe <b>CompKeyDB</b> "
        "file may not be installed.\n<li>\nYour keyboard has no Multi_key key: bind one "
        "with xmodmap.\n</ol>\n</dl>\n\n<hr>\n",
    ),
    (
        "ogonek",
        "LaTeX asks for missing macro \\k <i><b>or</b></i> the ogonek diacritic mark\n"
        "isn't visible.",
        "\n<dl>\n<dt>POSSIBLE CAUSE AND SOLUTION:\n<dd> Define the macro "
        "\\def\\k#1{\\c{#1}} in your LaTeX document.\n</dl>\n<hr>\n",
    ),
]
COMPILING_ENTRIES = [
    (
        "xpointer",
        "<tt>XPointer</tt> is undefined or unknown when\nI compile <b>xfig</b>",
        "\n<dl>\n<dt>POSSIBLE CAUSE:\n<dd>You are probably compiling on an old "
        "OpenWindows system.\n</dl>\n\n<hr>\n",
    ),
    (
        "jpeg_prob",
        "I'm getting errors such as",
        "\n<br>\nUnresolved:\n<br>\njpeg_std_error\n<br>\nand others.\n<dl>\n"
        "<dt>SOLUTION:\n<dd>Delete the old JPEG library files.\n</dl>\n\n<hr>\n",
    ),
]


def _heading(anchor: str, title: str) -> str:
    closing = "" if anchor == "multi-key" else "</a>"
    return f'<li>\n<h3><a name="{anchor}">{title}{closing}</h3>\n'


def _page(groups: list[tuple[str, str, list[tuple[str, str, str]]]]) -> str:
    """An xfig FAQ page: (group anchor, group heading HTML, entries) groups, each first as
    a contents list of in-page links, then with its entries."""
    contents = "".join(
        f'\n<!-- ***** -->\n\n<h2><a name="{g}">{title}</a></h2>\n\n<ol>\n'
        + "".join(f'<li><a href="#{a}">{q}</a>\n\n<p>\n' for a, q, _ in entries)
        + "</ol>\n"
        for g, title, entries in groups
    )
    body = "".join(
        f'\n<!-- ***** -->\n\n<h2><a name="{g}">{title}</a></h2>\n\n<ol>\n'
        + "".join(_heading(a, q) + ans + "\n" for a, q, ans in entries)
        + '</ol>\n\n<img src="images/blueramp.png" alt="=========================">\n'
        for g, title, entries in groups
    )
    return (
        '<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 3.2//EN">\n<html>\n<head>\n<title>FAQ</title>\n'
        '</head>\n\n<body>\n<a href="contents.html"><img src="images/xfig-title.png"\n'
        '  alt="XFIG Users Manual" border=0></a>\n\n<hr>\n\n'
        '<h1><font color="#dd0066">FAQ</font></h1>\n'
        f"{contents}\n\n"
        '<img src="images/blueramp.png" alt="=========================">\n'
        f"{body}\n"
        '[ <a href="contents.html">Contents</a> |\n <a href="introduction.html">Introduction'
        '</a> |\n <a href="authors.html">Credits</a> ]\n\n</body>\n</html>\n'
    )


GROUPS = [
    ("faq-general", "General Questions", GENERAL),
    ("faq-running", RUNNING, RUNNING_ENTRIES),
    ("faq-compile", COMPILING, COMPILING_ENTRIES),
]
PAGE = _page(GROUPS)
# the shipped contents carry asides and error messages the headings below do not
PAGE = PAGE.replace(
    '<li><a href="#get_xfig">Where can I get <b>xfig/TransFig</b>?</a>',
    '<li><a href="#get_xfig">Where can I get <b>xfig/TransFig</b>?<br>\n'
    "(Also, from which mirror?)</a>",
).replace(
    '<li><a href="#jpeg_prob">I\'m getting errors such as</a>',
    '<li><a href="#jpeg_prob">I\'m getting errors such as</a>\n<blockquote>\nUnresolved:'
    "\n<br>\njpeg_create_decompress\n</blockquote>",
)
IDS = [
    ("get_xfig", Q_GET),
    ("depth", Q_DEPTH),
    ("openw_icon", Q_ICON),
    ("action", Q_ACTION),
    ("multi-key", Q_UMLAUT),
    ("ogonek", Q_OGONEK),
    ("xpointer", Q_XPOINTER),
    ("jpeg_prob", Q_JPEG),
]


def test_split_xfig_faq_questions_answers_and_ids() -> None:
    page, qa = ns.split_xfig_faq(PAGE)
    assert [(k, q) for k, q, _ in qa] == IDS
    answers = {k: a for k, _, a in qa}
    assert answers["get_xfig"] == (
        "xfig and TransFig are freeware and you can get them from several sites."
    )
    assert nsc.flat(answers["depth"]) == nsc.flat(
        "When you have two or more objects that overlap and the drawing order is important, "
        "you must set the depth of each object to guarantee the drawing order."
    )
    # the definition lists, a nested list, a patch and an error list are the answers' text
    assert "POSSIBLE CAUSE:" in answers["openw_icon"] and "fig.icon.X" in answers["openw_icon"]
    assert "XPolyReg.c.orig" in answers["action"]
    assert "CompKeyDB" in answers["multi-key"] and "xmodmap" in answers["multi-key"]
    assert "jpeg_std_error" in answers["jpeg_prob"] and "old JPEG" in answers["jpeg_prob"]
    # each answer stops at the next entry, or at the next group's heading
    assert "overlap" not in answers["get_xfig"] and "Cause unknown" not in answers["depth"]
    assert "Problems when" not in answers["depth"] and "Problems when" not in answers["ogonek"]
    # the last answer stops at the last <hr>: the footer is the page's, not the answer's
    assert "Credits" not in answers["jpeg_prob"] and "Credits" in page
    nsc.assert_page_keeps_answers(qa, page)
    # the contents go (every question again, asides and error messages too); the title and
    # each group's heading stay, once
    assert "from which mirror" not in page and "jpeg_create_decompress" not in page
    assert "FAQ" in page
    for group in ("General Questions", "Problems when running xfig", "Problems when compiling"):
        assert nsc.flat(page).count(nsc.flat(group)) == 1
    # an entry with nothing under it asks nothing and leaves the page all the same
    assert "answered at all" not in page


def test_split_xfig_faq_edges() -> None:
    page, none = ns.split_xfig_faq("<html><body><h1>xfig FAQ</h1><p>Prose, no entry.</p>")
    assert none == [] and "Prose, no entry." in page
    # an <h3> with no anchor, and an anchor outside an <h3>, are answer text
    _, qa = ns.split_xfig_faq(
        '<ol><li><h3><a name="a">Asked here?</a></h3>\n<p>Text.</p>\n<h3>Notes</h3>\n'
        '<p><a name="plain">plain anchor</a></p>\n<p>More.</p>\n</ol>'
    )
    assert [(k, q) for k, q, _ in qa] == [("a", "Asked here?")]
    assert "Notes" in qa[0][2] and "plain anchor" in qa[0][2] and "More." in qa[0][2]
    # a repeated anchor gets -2
    _, twice = ns.split_xfig_faq(
        '<h3><a name="dup">First one?</a></h3><p>One answer here.</p>'
        '<h3><a name="dup">Second one?</a></h3><p>Another answer.</p>'
    )
    assert [k for k, _, _ in twice] == ["dup", "dup-2"]
    # a list of links out of the page under a heading is not the contents: it stays
    page, _ = ns.split_xfig_faq(
        '<h2>See also</h2><ol><li><a href="printing.html">Printing</a></ol>'
        '<h2>Answers</h2><ol><li><h3><a name="q">Why?</a></h3><p>Because it is so.</p></ol>'
    )
    assert "See also" in page and "Printing" in page


_WORD = st.sampled_from(["spline", "fig2dev", "xfig", "PostScript", "depth", "LaTeX", "Xaw3d"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(
            st.tuples(
                st.lists(_WORD, min_size=0, max_size=8),  # the title's words after the first
                st.booleans(),  # ends with "?"
                st.booleans(),  # wrapped over two lines
                st.lists(_WORD, min_size=0, max_size=20),  # the answer's words (may be none)
            ),
            min_size=1,
            max_size=5,
        ),
        max_size=3,
    )
)
def test_split_xfig_faq_property(
    groups: list[list[tuple[list[str], bool, bool, list[str]]]],
) -> None:
    """Random groups of random entries, asked or stated, wrapped or not, some unanswered:
    one question per answered entry, in order, its anchor its id, its answer its text, in
    the page; no title left in it (the contents gone with the entries); each group's
    heading once."""
    spec = []
    flat_spec = []
    for g, entries in enumerate(groups):
        group_entries = []
        for k, (words, asks, wrapped, awords) in enumerate(entries):
            title_words = [f"entry{g}x{k}y", *words]
            sep = "\n\t" if wrapped else " "
            title = sep.join(title_words) + ("?" if asks else ".")
            answer = " ".join(["Answer", *awords]) if awords else ""
            # every entry ends with its rule, as on the page (the last one's ends the answer)
            html_answer = f"<p>{answer}</p>\n<hr>\n" if answer else "<hr>\n"
            group_entries.append((f"anchor{g}x{k}", title, html_answer))
            flat_spec.append((f"anchor{g}x{k}", " ".join(title.split()), answer))
        spec.append((f"group{g}", f"Group number{g}z", group_entries))
    page, qa = ns.split_xfig_faq(_page(spec))
    assert qa == [(k, t, a) for k, t, a in flat_spec if a]
    for _, _, a in qa:
        assert a in page
    for _, t, _ in flat_spec:
        assert t not in " ".join(page.split())
    for _, title, _ in spec:
        assert page.count(title) == 1


# -- the set, built from a package tree shaped like Debian's xfig-doc -----------------------


def _doc_page(title: str, body: str) -> str:
    return (
        '<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 3.2//EN">\n<html><head>'
        f"<title>{title}</title></head><body><h1>{title}</h1>{body}<hr>\n"
        '[ <a href="contents.html">Contents</a> ]</body></html>\n'
    )


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, page: str = PAGE) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.XFIG_PACKAGE, "1:3.2.8b-2")
    doc: Path = root / ns.XFIG_DOC
    html = doc / "html"
    (html / "japanese").mkdir(parents=True)
    (html / "images").mkdir()
    (doc / ns.XFIG_FAQ).write_text(page)
    (html / "attributes.html").write_text(
        _doc_page(
            "Attributes",
            f"<p>People ask: {Q_DEPTH.lower()}. The depth of an object sets its drawing order.</p>",
        )
    )
    (html / "printing.html").write_bytes(
        _doc_page("Printing", "<p>Export to PostScript with fig2dev. Na\xefve users.</p>").encode(
            "latin-1"
        )
    )
    (html / "options.html").write_text(
        _doc_page("Options", "<pre>" + "-geometry WxH+X+Y  window size\n" * 6000 + "</pre>")
    )
    (doc / "xfig_man.html").write_text(
        _doc_page("xfig", "<p>xfig - Facility for Interactive Generation of figures</p>")
    )
    (html / "contents.html").write_text(
        _doc_page("Contents", '<a href="faq.html">FAQ</a> <a href="options.html">Options</a>')
    )
    (html / "index.html").write_text('<frameset><frame src="introduction.html"></frameset>')
    (html / "frm_faq.html").write_text('<frameset><frame src="faq.html"></frameset>')
    (html / "but_frm_faq.html").write_text(_doc_page("Buttons", '<a href="faq.html">FAQ</a>'))
    (html / "screen_image_map.html").write_text(_doc_page("Screen", "<p>Canvas | Rulers</p>"))
    (html / "japanese" / "faq.html").write_text(
        _doc_page("FAQ", "<p>\u3088\u304f\u3042\u308b\u8cea\u554f</p>"), encoding="euc-jp"
    )
    (doc / "xfig-howto.pdf").write_bytes(b"%PDF-1.4\n")
    (html / "images" / "blueramp.png").write_bytes(b"\x89PNG\r\n")
    return doc


@pytest.fixture
def doc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package tree as shipped (the FAQ page :data:`PAGE`), its documentation folder."""
    return _package(tmp_path, monkeypatch)


def test_xfig_faq_set_from_a_package_tree(doc: Path) -> None:
    nset = ns.xfig_faq_set()
    nsc.assert_package_set(
        nset,
        "xfig-faq",
        ids=[k for k, _ in IDS],
        files={"faq.md", "attributes.md", "printing.md", "xfig_man.md"},
        source="faq.md",
        version="1:3.2.8b-2",
        too_long="html/options.html",
    )
    # ISO-8859-1 read as such
    assert "Naïve users" in nset.files["printing.md"]
    # the page quoting a question: scrubbed, its other text kept
    assert "sets its drawing order" in nset.files["attributes.md"]


def test_xfig_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = PAGE.replace("You are probably compiling on an old OpenWindows system.", "Old.")
    _package(tmp_path, monkeypatch, short)
    nsc.assert_left_out(ns.xfig_faq_set(), Q_XPOINTER, len(IDS) - 1)


def test_no_question_text_is_left_in_any_file(doc: Path) -> None:
    nsc.assert_leak_checked(
        ns.xfig_faq_set(), {"faq.md": ns.page_to_markdown(PAGE)}, [q for _, q in IDS]
    )


def test_xfig_faq_set_halves_are_fixed_and_disjoint(doc: Path) -> None:
    more = _page(
        [
            *GROUPS,
            (
                "faq-more",
                "More questions",
                [
                    (
                        "layers",
                        "How do I hide a layer?",
                        "<p>Uncheck its depth in the depth panel on the right.</p>\n<hr>\n",
                    )
                ],
            ),
        ]
    )
    nsc.assert_halves_survive_an_added_question(
        ns.xfig_faq_set, lambda: (doc / ns.XFIG_FAQ).write_text(more)
    )


def test_xfig_faq_set_refuses_a_package_without_the_faq(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = unpacked_package(tmp_path, monkeypatch, ns.XFIG_PACKAGE, "1:3.2.8b-2")
    (root / ns.XFIG_DOC / "html").mkdir(parents=True)
    nsc.assert_refuses_without_faq(ns.xfig_faq_set, "html/faq.html")
