"""The ``avr-libc-faq`` natural-question set (``bench/natural_sets.py``), its reading of
avr-libc's FAQ (Doxygen HTML) and the question-leak check (``bench/check_question_leaks.py``)
on a small inline FAQ page shaped as Debian's ``avr-libc`` ships it
(``/usr/share/doc/avr-libc/avr-libc-user-manual/FAQ.html``: the manual's header with its
table of ``<h2>`` links and search box; the page's text block opening with an ``<h1>`` "FAQ
Index" over a numbered list of links to every entry; anchored ``<h1>`` entries, one stated
as a problem, one with quotes, one answered by a code fragment carrying Doxygen's hidden
tooltip, one with no text under it; every answer closed by "Back to FAQ Index."; an
``<h1>`` with no anchor; the footer) beside the other pages of the manual (a user manual
page quoting a question, a module page with member tables and documentation, a page over
the page limit, the generated indexes, source listings and per-file pages to be left out)
and the README, in a package tree laid out as ``avr-libc`` unpacks (marker present, nothing
downloaded); offline, no embedding model, no test reads the real package.

What the set's numbers rest on: no question's text is left in any file (the entries, the
list of them, a page quoting one); each answer is exactly the text under its heading up to
the next question, without the navigation line and the tooltips; ids are the FAQ's anchors,
so an added entry keeps the halves; an answer too short to judge leaves the set but not the
corpus's scrubbing.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import natural_set_checks as nsc
import natural_sets as ns
from debian_package_double import unpacked_package, write_gz

Q_VOLATILE = "My program doesn't recognize a variable updated within an interrupt routine"
Q_LIBM = 'I get "undefined reference to..." for functions like "sin()"'
Q_CPP = "Can I use C++ on the AVR?"
ASKED = (Q_VOLATILE, Q_LIBM, Q_CPP)
ANSWERS = {
    "faq_volatile": "When using the optimizer, in a loop like the following one:\n\n"
    "uint8_t flag;\n\n while (flag == 0) {\n\n }\n\nthe compiler will typically access flag "
    "only once, and optimize further accesses completely away.",
    "faq_libm": "In order to access the mathematical functions that are declared in "
    "<math.h>, the linker needs to be told to also link the mathematical library, libm.a.",
    "faq_cplusplus": "The short answer is yes, but there are several limitations.\n\n"
    "# Not an anchored heading\n\nKept as text.",
}
HEADER = (
    '<!-- HTML header for doxygen 1.8.7-->\n<html xmlns="http://www.w3.org/1999/xhtml">\n'
    "<head>\n<title>avr-libc: {title}</title>\n</head>\n<body>\n"
    '<div id="top"><div id="titlearea"><div id="projectname">avr-libc '
    '<span id="projectnumber">2.0.0</span></div></div>\n<table>\n'
    '<tr><td><a href="index.html"><h2>Main Page</h2></a></td>'
    '<td><a href="FAQ.html"><h2>FAQ</h2></a></td></tr>\n</table>\n</div>\n'
    '<div id="MSearchSelectWindow"></div>\n</div><!-- top -->\n'
    '<div class="PageDoc"><div class="header">\n  <div class="headertitle">\n'
    '<div class="title">{title} </div>  </div>\n</div><!--header-->\n'
)
FOOTER = (
    "</div><!-- PageDoc -->\n<!-- start footer part -->\n"
    '<hr class="footer"/><address class="footer"><small>\n'
    "Generated on Fri Jan 7 2022 12:18:49 for avr-libc by doxygen 1.9.1\n</small></address>\n"
    "</body>\n</html>\n"
)
BACK = '<p><small>Back to <a class="el" href="FAQ.html#faq_index">FAQ Index</a>. </small></p>\n'
TOOLTIP = (
    '<div class="ttc" id="agroup__avr__stdint_html_ga"><div class="ttname">'
    '<a href="group__avr__stdint.html#ga">uint8_t</a></div><div class="ttdeci">unsigned char '
    'uint8_t</div><div class="ttdef"><b>Definition:</b> stdint.h:83</div></div>\n'
)


def _page(title: str, contents: str) -> str:
    return (
        HEADER.format(title=title)
        + f'<div class="contents">\n{contents}'
        + ("</div><!-- contents -->\n" + FOOTER)
    )


def _entry(anchor: str, question: str) -> str:
    return f'<h1><a class="anchor" id="{anchor}"></a>\n{question}</h1>\n'


def _faq(entries: str, items: str) -> str:
    return _page(
        "Frequently Asked Questions",
        '<div class="textblock">'
        + _entry("faq_index", "FAQ Index")
        + f'<p><a name="a0_FAQ"></a></p>\n<ol type="1">\n{items}</ol>\n'
        + entries
        + "</div>",
    )


def _item(anchor: str, question: str) -> str:
    return f'<li><a class="el" href="FAQ.html#{anchor}">{question}</a></li>\n'


FAQ = _faq(
    _entry(
        "faq_volatile",
        "My program doesn't recognize a variable updated within an interrupt routine",
    )
    + "<p>When using the optimizer, in a loop like the following one:</p>\n"
    '<div class="fragment"><div class="line"><a class="code" href="group__avr__stdint.html#ga">'
    'uint8_t</a> flag;</div>\n<div class="line">    <span class="keywordflow">while</span> '
    '(flag == 0) {</div>\n<div class="line">    }</div>\n'
    + TOOLTIP
    + "</div><!-- fragment --><p>the compiler will typically access <code>flag</code> only "
    "once, and optimize further accesses completely away.</p>\n"
    + BACK
    + _entry(
        "faq_libm",
        "I get &quot;undefined reference to...&quot; for functions like &quot;sin()&quot;",
    )
    + "<p>In order to access the mathematical functions that are declared in "
    '<code>&lt;<a class="el" href="math_8h.html">math.h</a>&gt;</code>, the linker needs to '
    "be told to also link the mathematical library, <code>libm.a</code>.</p>\n"
    + BACK
    + _entry("faq_unanswered", "Is this entry answered at all?")
    + BACK
    + _entry("faq_cplusplus", "Can I use C++ on the AVR?")
    + "<p>The short answer is yes, but there are several limitations.</p>\n"
    "<h1>Not an anchored heading</h1>\n<p>Kept as text.</p>\n" + BACK,
    _item("faq_volatile", Q_VOLATILE)
    + _item("faq_libm", 'I get "undefined reference to..." for functions like "sin()"')
    + _item("faq_unanswered", "Is this entry answered at all?")
    + _item("faq_cplusplus", Q_CPP),
)


def test_split_avr_libc_faq_questions_answers_and_ids() -> None:
    page, qa = ns.split_avr_libc_faq(FAQ)
    assert [q for _, q, _ in qa] == list(ASKED)  # anchors off, entities read, spaces folded
    assert {k: a for k, _, a in qa} == ANSWERS  # the FAQ's anchors; answers as converted
    assert [k for k, _, _ in qa] == list(ANSWERS)
    for _, q, a in qa:
        assert a in page
        assert nsc.flat(q) not in nsc.flat(page)
    # the header, search box, list of entries, "Back to" lines, tooltips, footer and the
    # unanswered entry leave the page; the title stays, in no answer; an <h1> with no
    # anchor is text of the answer above it
    for gone in ("Main Page", "MSearch", "FAQ Index", "Back to", "Definition:", "stdint.h:83"):
        assert gone not in page
    assert "Generated on" not in page and "answered at all" not in page
    assert page.startswith("# Frequently Asked Questions\n\nWhen using the optimizer")
    assert all("Frequently Asked" not in a for *_, a in qa)


def test_split_avr_libc_faq_edges() -> None:
    # no text block: the page read whole, nothing asked when it has no anchored <h1>; a
    # repeated anchor gets -2; a list linking another page is kept
    page, none = ns.split_avr_libc_faq("<html><body><h1>Notes</h1><p>Text.</p></body></html>")
    assert none == [] and page == "# Notes\n\nText.\n"
    page, qa = ns.split_avr_libc_faq(
        "<body>"
        + _entry("faq_a", "One?")
        + "<p>First.</p>"
        + _entry("faq_a", "Two?")
        + '<p>Second.</p><ul><li><a class="el" href="malloc.html">Using malloc()</a></li>'
        "</ul></body>"
    )
    assert qa == [
        ("faq_a", "One?", "First."),
        ("faq_a-2", "Two?", "Second.\n\n- Using malloc()"),
    ]
    # a module page read whole (member tables and documentation), tooltips out
    module = ns.doxygen_contents_markdown(
        _page(
            "&lt;avr/eeprom.h&gt;: EEPROM handling",
            '<table class="memberdecls"><tr class="heading"><td><h2 class="groupheader">'
            "Functions</h2></td></tr><tr><td>uint8_t</td><td>eeprom_read_byte (const "
            "uint8_t *__p)</td></tr></table>\n"
            '<div class="textblock"><p>Simple polled EEPROM routines.</p></div>\n'
            '<div class="memitem"><div class="memdoc"><p>Read one byte.</p>\n'
            '<div class="fragment"><div class="line">x = eeprom_read_byte(p);</div>\n'
            + TOOLTIP
            + "</div></div></div>\n",
        )
    )
    assert module.startswith("# <avr/eeprom.h>: EEPROM handling\n")
    for kept in ("## Functions", "eeprom_read_byte (const", "Simple polled", "Read one byte."):
        assert kept in module
    assert "Definition:" not in module and "Main Page" not in module
    assert "Generated on" not in module


_WORD = st.sampled_from(["avr", "flash", "eeprom", "interrupt", "gcc", "port", "fuse"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(_WORD, min_size=1, max_size=10),  # the question's words
            st.lists(_WORD, min_size=0, max_size=16),  # the answer's words (may be none)
        ),
        min_size=1,
        max_size=8,
    )
)
def test_split_avr_libc_faq_property(entries: list[tuple[list[str], list[str]]]) -> None:
    """Random entries, some unanswered, listed first: one question per answered entry, in
    order, its anchor its id, its answer its text, in the page; no question's word left."""
    items, body, expected = "", "", []
    for p, (qwords, awords) in enumerate(entries, start=1):
        q = " ".join([f"entry{p}x", *qwords]) + "?"
        items += _item(f"faq_e{p}", q)
        body += _entry(f"faq_e{p}", q)
        if awords:
            answer = " ".join(["Answer", *awords])
            body += f"<p>{answer}</p>\n"
            expected.append((f"faq_e{p}", q, answer))
        body += BACK
    page, qa = ns.split_avr_libc_faq(_faq(body, items))
    assert qa == expected
    for _, _, a in qa:
        assert a in page
    assert not re.search(r"entry\d+x", page)


# -- the set, built from a package tree shaped like Debian's avr-libc ----------------------

LEFT_OUT = (
    "globals.html",
    "globals_func_e.html",
    "functions.html",
    "dir_35b7ea7e54a176718f61677324f80a92.html",
    "annotated.html",
    "classes.html",
    "files.html",
    "modules.html",
    "pages.html",
    "eeprom_8h_source.html",
    "eeprom_8h.html",
    "fdevopen_8c.html",
)


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.AVR_LIBC_PACKAGE, "1:2.0.0+Atmel3.6.2-3")
    doc: Path = root / ns.AVR_LIBC_DOC
    doc.mkdir(parents=True)
    (doc / ns.AVR_LIBC_FAQ).write_text(faq, encoding="utf-8")

    def page(name: str, title: str, body: str) -> None:
        (doc / name).write_text(_page(title, f'<div class="textblock">{body}</div>\n'))

    page(
        "malloc.html",
        "Memory Areas and Using malloc()",
        f"<p>See the FAQ, &#8216;{Q_CPP}&#8217; \u2014 the heap grows upwards.</p>",
    )
    page("index.html", "AVR Libc", "<p>The standard library for AVR devices.</p>")
    page("group__avr__eeprom.html", "EEPROM handling", "<p>Simple polled routines.</p>")
    page("group__avr__pgmspace.html", "Program Space Utilities", "<p>Flash data.</p>" * 20_000)
    for skipped in LEFT_OUT:
        page(skipped, "Left out", "<p>left out</p>")
    (doc.parent / "README").write_text("This is the standard library for Atmel AVR devices.\n")
    write_gz(doc.parent / "changelog.Debian.gz", "left out\n")
    (doc.parent / "copyright").write_text("left out\n")
    (doc.parent / "examples" / "demo").mkdir(parents=True)
    (doc.parent / "examples" / "demo" / "demo.c").write_text("/* left out */\n")
    return doc


@pytest.fixture
def doc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package tree as shipped (the FAQ :data:`FAQ`), the user manual's folder."""
    return _package(tmp_path, monkeypatch)


def test_avr_libc_faq_set_from_a_package_tree(doc: Path) -> None:
    nset = ns.avr_libc_faq_set()
    nsc.assert_package_set(
        nset,
        "avr-libc-faq",
        ids=list(ANSWERS),
        files={"FAQ.md", "malloc.md", "index.md", "group__avr__eeprom.md", "README"},
        source="FAQ.md",
        version="1:2.0.0+Atmel3.6.2-3",
        too_long="group__avr__pgmspace.html",
        answers=ANSWERS,
    )
    text = " ".join(nset.files.values())
    assert "left out" not in text and "Main Page" not in text and "Generated on" not in text
    # a page quoting a question scrubbed, its other text kept; the README read as text
    assert "the heap grows upwards." in nset.files["malloc.md"]
    assert nset.files["malloc.md"].startswith("# Memory Areas and Using malloc()\n")
    assert nset.files["README"] == "This is the standard library for Atmel AVR devices.\n"


def test_avr_libc_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = FAQ.replace(
        "The short answer is yes, but there are several limitations.", "Yes, mostly."
    ).replace("<h1>Not an anchored heading</h1>\n<p>Kept as text.</p>\n", "")
    _package(tmp_path, monkeypatch, short)
    nsc.assert_left_out(ns.avr_libc_faq_set(), Q_CPP, len(ASKED) - 1)


def test_no_question_text_is_left_in_any_file(doc: Path) -> None:
    nsc.assert_leak_checked(ns.avr_libc_faq_set(), {"FAQ.html": FAQ}, ASKED, is_html=True)


def test_avr_libc_faq_set_halves_are_fixed_and_disjoint(doc: Path) -> None:
    more = FAQ.replace(
        "</div></div><!-- contents -->",
        _entry("faq_softreset", "How do I perform a software reset of the AVR?")
        + "<p>The canonical way to perform a software reset is to use the watchdog.</p>\n"
        + BACK
        + "</div></div><!-- contents -->",
    )
    assert more != FAQ
    nsc.assert_halves_survive_an_added_question(
        ns.avr_libc_faq_set, lambda: (doc / ns.AVR_LIBC_FAQ).write_text(more, encoding="utf-8")
    )


def test_avr_libc_faq_set_refuses_a_package_without_the_faq(doc: Path) -> None:
    (doc / ns.AVR_LIBC_FAQ).unlink()
    nsc.assert_refuses_without_faq(ns.avr_libc_faq_set, "FAQ.html")
