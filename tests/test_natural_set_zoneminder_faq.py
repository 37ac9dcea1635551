"""The ``zoneminder-faq`` natural-question set (``bench/natural_sets.py``), its reading of
ZoneMinder's FAQ and the question-leak check (``bench/check_question_leaks.py``) on small
inline pages shaped as Debian's ``zoneminder-doc`` ships them (``html/faq.html``, Sphinx
HTML: the navigation bar, the main column ``<div class="body" role="main">`` with an
``<h1>`` "FAQ", a to-do box and nested ``<section id=...>``s whose ``<h2>`` / ``<h3>``
headings mix questions, users' problem reports, group titles holding only other sections,
an "Introduction" opening a group and an answer's own sub-sections; the sidebar with the
tree's contents, the footer) beside the tree's other pages (the front page, a user-guide
page quoting a question and linking into the FAQ, an options page over the limit), the
generated pages, ``_sources/`` and the package's notes, in a package tree laid out as the
package unpacks (marker present, nothing downloaded); offline, no embedding model, no test
reads the real package.

What the set's numbers rest on: which headings ask is decided by one rule (a title ending
with "?", or own text and at least three words, outside an open question), so group and
topic titles stay in the page and an answer's sub-sections stay in its answer; no question
is left in any file; each answer is exactly the text under its heading; ids are the
sections' ids, so an entry added keeps the halves; an answer too short to judge leaves the
set but not the corpus's scrubbing.
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
    '<!DOCTYPE html>\n<html lang="en">\n<head><meta charset="utf-8" /><title>FAQ &#8212; '
    "ZoneMinder Documentation</title></head>\n<body>\n"
    '<div class="related" role="navigation" aria-label="related navigation">\n<h3>Navigation'
    '</h3>\n<ul><li class="right"><a href="genindex.html">navline index</a></li></ul>\n'
    '</div>\n<div class="document">\n<div class="documentwrapper">\n<div class="bodywrapper">'
    '\n<div class="body" role="main">\n'
)
FOOT = (
    '</div>\n</div>\n</div>\n<div class="sphinxsidebar" role="navigation" aria-label="main '
    'navigation">\n<div class="sphinxsidebarwrapper">\n<h3><a href="index.html">Table Of '
    'Contents</a></h3>\n<ul><li><a href="#">sidebarline How can I stop ZoneMinder filling up '
    "my disk?</a></li></ul>\n</div>\n</div>\n</div>\n"
    '<div class="footer" role="contentinfo">footerline &#169; Copyright</div>\n</body>\n</html>\n'
)


def heading(level: int, sid: str, title: str) -> str:
    """A Sphinx heading with its pilcrow permalink."""
    return f"<h{level}>{title}{nsc.SPHINX_PERMALINK.format(sid)}</h{level}>\n"


def section(level: int, sid: str, title: str, body: str) -> str:
    """One ``<section id=...>``: its heading, then its body (paragraphs, nested sections)."""
    return f'<section id="{sid}">\n{heading(level, sid, title)}{body}</section>\n'


def page(body: str) -> str:
    return HEAD + section(1, "faq", "FAQ", body) + FOOT


Q_DISK = "How can I stop ZoneMinder filling up my disk?"
Q_MEMORY = "Math for Memory: Making sure you have enough memory to handle your cameras"
Q_MOTION = "I have enabled motion detection but it is not always being triggered"
Q_LOAD = "How do I know if my computer is overloaded?"
Q_403 = "Why am I getting a 403 access error when trying to access http://localhost/zm?"
Q_BOOT = "Zoneminder doesn\u2019t start automatically on boot"
Q_PICO = "Why do I get blank monitors on bt878-like cards (a.k.a. PICO 2000)"
Q_GPL = "Can I use ZoneMinder as part of my commercial product?"
FAQ = page(
    '<div class="admonition-todo admonition">\n<p class="admonition-title">Todo</p>\n'
    "<p>needs to be reviewed - some entries may be old.</p>\n</div>\n"
    "<p>This is the FAQ page. Feel free to contribute.</p>\n"
    + section(
        2,
        "how-can-i-stop-zoneminder-filling-up-my-disk",
        "How can I stop ZoneMinder filling up my disk?",
        "<p>Recent versions come with a filter called <strong>PurgeWhenFull</strong>.</p>\n"
        '<ul class="simple">\n<li><p>Click on <em>Filters</em>.</p></li>\n</ul>\n',
    )
    + section(
        2,
        "math-for-memory-making-sure-you-have-enough-memory-to-handle-your-cameras",
        "Math for Memory: Making sure you have enough memory to handle your cameras",
        "<p>Erratic behaviour usually means you don\u2019t have enough memory.</p>\n"
        '<div class="highlight-bash notranslate"><div class="highlight"><pre><span></span>'
        "free -m\n</pre></div>\n</div>\n",
    )
    + section(
        2,
        "i-have-enabled-motion-detection",
        "I have enabled motion detection but it is not always being triggered",
        "<p>ZoneMinder uses zones to examine images for motion.</p>\n"
        + section(3, "event-statistics", "Event Statistics", "<p>Look at the scores.</p>\n")
        + section(
            3,
            "diagnostic-images-along-with-fifo",
            "Diagnostic Images along with FIFO",
            "<p>Turn on the diagnostic images.</p>\n",
        ),
    )
    + section(
        2,
        "managing-system-load-with-ip-cameras-in-mind",
        "Managing system load (with IP Cameras in mind)",
        section(3, "introduction", "Introduction", "<p>IP cameras need horsepower.</p>\n")
        + section(
            3,
            "how-do-i-know-if-my-computer-is-overloaded",
            "How do I know if my computer is overloaded?",
            "<p>If your CPU is at 100% all the time, it is overloaded.</p>\n",
        ),
    )
    + section(
        2,
        "trouble-shooting",
        "Trouble Shooting",
        section(
            3,
            "why-am-i-getting-a-403-access-error",
            "Why am I getting a 403 access error when trying to access "
            + nsc.sphinx_code("http://localhost/zm")
            + "?",
            "<p>The apache web server needs the right permissions.</p>\n",
        )
        + section(
            3,
            "zoneminder-doesn-t-start-automatically-on-boot",
            "Zoneminder doesn\u2019t start automatically on boot",
            "<p>Check the log for entries like \u201cCan\u2019t connect to server\u201d.</p>\n",
        )
        + section(3, "a-question-with-nothing-under-it", "Unanswered heading here?", "")
        + section(
            3,
            "why-do-i-get-blank-monitors",
            "Why do I get blank monitors on bt878-like cards (a.k.a. PICO 2000)",
            "<p>Please have a check at Pico2000.</p>\n",
        ),
    )
    + section(
        2,
        "miscellaneous",
        "Miscellaneous",
        section(
            3,
            "can-i-use-zoneminder-as-part-of-my-commercial-product",
            "Can I use ZoneMinder as part of my commercial product?",
            "<p>The GPL license allows you to produce systems based on GPL software.</p>\n",
        ),
    )
)
ASKED = (Q_DISK, Q_MEMORY, Q_MOTION, Q_LOAD, Q_403, Q_BOOT, Q_PICO, Q_GPL)
ANSWERS = {
    "how-can-i-stop-zoneminder-filling-up-my-disk": (
        "Recent versions come with a filter called PurgeWhenFull.\n\n- Click on Filters."
    ),
    "math-for-memory-making-sure-you-have-enough-memory-to-handle-your-cameras": (
        "Erratic behaviour usually means you don\u2019t have enough memory.\n\n```\nfree -m\n\n```"
    ),
    "i-have-enabled-motion-detection": (
        "ZoneMinder uses zones to examine images for motion.\n\n### Event Statistics\n\n"
        "Look at the scores.\n\n### Diagnostic Images along with FIFO\n\n"
        "Turn on the diagnostic images."
    ),
    "how-do-i-know-if-my-computer-is-overloaded": (
        "If your CPU is at 100% all the time, it is overloaded."
    ),
    "why-am-i-getting-a-403-access-error": "The apache web server needs the right permissions.",
    "zoneminder-doesn-t-start-automatically-on-boot": (
        "Check the log for entries like \u201cCan\u2019t connect to server\u201d."
    ),
    "why-do-i-get-blank-monitors": "Please have a check at Pico2000.",
    "can-i-use-zoneminder-as-part-of-my-commercial-product": (
        "The GPL license allows you to produce systems based on GPL software."
    ),
}


def test_split_zoneminder_faq_questions_answers_and_ids() -> None:
    text, qa = ns.split_zoneminder_faq(FAQ)
    # a heading ending with "?" asks; so does one with text of its own and three words or
    # more (a topic title, a problem report); the answer runs to the next heading of its
    # level or higher, its own sub-sections in it; the id the section's id
    nsc.assert_split_answers(text, qa, ASKED, ANSWERS)
    # group titles (no text of their own) and short topic titles stay, with their text
    for kept in (
        "## Managing system load (with IP Cameras in mind)",
        "### Introduction\n\nIP cameras need horsepower.",
        "## Trouble Shooting",
        "## Miscellaneous",
        "### Event Statistics",
    ):
        assert kept in text
    # an asking heading with nothing under it asks nothing and stays
    assert "### Unanswered heading here?" in text
    # the page title and intro stay; navigation, sidebar, footer and permalinks go
    assert text.startswith("# FAQ\n")
    assert "This is the FAQ page." in text
    for gone in ("navline", "sidebarline", "footerline", "Table Of Contents", "\u00b6"):
        assert gone not in text
    # a group's or topic's title never reaches an answer above it
    for _, _, a in qa:
        assert "Trouble Shooting" not in a and "Introduction" not in a


def test_split_zoneminder_faq_edges() -> None:
    # no heading: the page converted, nothing asked
    assert ns.split_zoneminder_faq("<p>No entries here.</p>") == ("No entries here.\n", [])
    # Sphinx's edge page: a slug without a section id, -2 on a repeat, an <h1> ends the
    # answer above it and stays
    text, qa = ns.split_zoneminder_faq(
        '<div class="body" role="main"><h2>Same words?</h2><p>First answer.</p>'
        '<section id="dup"><h2>One?</h2><p>One answer.</p></section>'
        '<section id="dup"><h2>Two?</h2><p>Two answer.</p></section>'
        "<h2>Same words?</h2><p>Second answer.</p><h1>Another title</h1><p>Under it.</p>"
        "</div><p>Outside.</p>"
    )
    nsc.assert_slugs_and_repeats(text, qa, "Another title")
    # a "?" before a closing quote or bracket asks (here a title too short to ask by its
    # text); an <h1> never asks, even with "?"; a two-word title with text stays; a "?"
    # heading with no text of its own is answered by its deeper sections (their headings
    # in the answer)
    text, qa = ns.split_zoneminder_faq(
        "<h1>Is this the FAQ?</h1><p>Intro.</p>"
        "<h2>\u201cWhy not?\u201d</h2><p>Yes you can.</p>"
        "<h2>Two words</h2><p>Topic text.</p>"
        "<h2>Which camera should I buy?</h2><h3>Cheap ones</h3><p>Any USB one.</p>"
        "<h2>Next one?</h2><p>Last.</p>"
    )
    assert [(k, q, a) for k, q, a in qa] == [
        ("why-not", "\u201cWhy not?\u201d", "Yes you can."),
        (
            "which-camera-should-i-buy",
            "Which camera should I buy?",
            "### Cheap ones\n\nAny USB one.",
        ),
        ("next-one", "Next one?", "Last."),
    ]
    assert text == (
        "# Is this the FAQ?\n\nIntro.\n\nYes you can.\n\n## Two words\n\nTopic text.\n\n"
        "### Cheap ones\n\nAny USB one.\n\nLast.\n"
    )
    # a heading never closed takes the rest up to the next heading as its title and holds
    # no text of its own: it asks nothing (the converter drops an unclosed heading's text);
    # the next heading is read as usual
    text, qa = ns.split_zoneminder_faq("<h2>Open heading?<p>words</p><h2>Fine?</h2><p>Yes.</p>")
    assert (text, qa) == ("Yes.\n", [("fine", "Fine?", "Yes.")])


_WORD = st.sampled_from(["zone", "monitor", "camera", "event", "filter", "storage", "alarm"])


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(min_value=2, max_value=4),  # the heading's level
            st.sampled_from(["ask", "report", "topic"]),  # "?" / 3+ words / 1-2 words
            st.lists(_WORD, min_size=0, max_size=4),  # its own text (empty: none)
        ),
        min_size=1,
        max_size=9,
    )
)
def test_split_zoneminder_faq_property(entries: list[tuple[int, str, list[str]]]) -> None:
    """Random flat runs of ``<h2>``-``<h4>`` headings, each a question ("...?"), a report
    (three words or more, no "?") or a topic title (one or two words), with or without
    text of its own: a heading inside an open question (deeper than it) is part of its
    answer; any other asks when it ends with "?" or has text and three words or more, and
    then its answer, all the text and deeper headings up to the next heading of its level
    or higher, is non-empty. Exactly those, in order, with slug ids; every answer in the
    page; no asked title left in it; every heading that does not ask kept."""
    html_parts: list[str] = []
    titles: list[str] = []
    for n, (level, kind, words) in enumerate(entries):
        title = {
            "ask": f"entry{n}x ask this?",
            "report": f"entry{n}x reports a problem",
            "topic": f"entry{n}x",
        }[kind]
        titles.append(title)
        text = f"<p>Text{n} {' '.join(words)}.</p>" if words else ""
        html_parts.append(f"<h{level}>{title}</h{level}>{text}")
    text, qa = ns.split_zoneminder_faq("<h1>FAQ</h1>" + "".join(html_parts))
    # the model: walk the headings, skipping those inside an open question
    expected: list[tuple[str, str, str]] = []
    asked: set[int] = set()
    k = 0
    while k < len(entries):
        level, kind, words = entries[k]
        nxt = k + 1
        while nxt < len(entries) and entries[nxt][0] > level:
            nxt += 1
        blocks: list[str] = [f"Text{k} {' '.join(words)}."] if words else []
        for j in range(k + 1, nxt):
            blocks.append(f"{'#' * entries[j][0]} {titles[j]}")
            if entries[j][2]:
                blocks.append(f"Text{j} {' '.join(entries[j][2])}.")
        asks = kind == "ask" or (kind == "report" and bool(words))
        if asks and blocks:
            expected.append((ns._slug(titles[k]), titles[k], "\n\n".join(blocks)))
            asked.add(k)
            k = nxt
        else:
            k += 1
    assert qa == expected
    nsc.assert_page_keeps_answers(qa, text)
    for n, title in enumerate(titles):
        assert (f"{title}\n" in text) == (n not in asked)


# -- the set, built from a package tree shaped like Debian's zoneminder-doc -------------------


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.ZM_PACKAGE, "1.36.33+dfsg1-1")
    doc: Path = root / ns.ZM_DOC
    (doc / "userguide" / "options").mkdir(parents=True)
    (doc / ns.ZM_FAQ).write_text(faq, encoding="utf-8")

    def other(title: str, body: str) -> str:
        return HEAD + section(1, "x", title, body) + FOOT

    (doc / "index.html").write_text(
        other("Welcome to ZoneMinder", "<p>ZoneMinder is a video surveillance system.</p>\n")
    )
    (doc / "userguide" / "gettingstarted.html").write_text(
        other(
            "Getting Started",
            '<p>See <a class="reference internal" href="../faq.html#how-do-i-know-if-my-'
            'computer-is-overloaded"><span class="std std-ref">linkline overloaded</span>'
            "</a> for more.</p>\n"
            f"<p>Users ask: {Q_GPL} Read the licence first.</p>\n",
        )
    )
    (doc / "userguide" / "options" / "options_web.html").write_text(
        other("Options - Web", "<p>WEB_TITLE sets the title.</p>\n")
    )
    (doc / "userguide" / "options" / "options_huge.html").write_text(
        other("Huge", "<p>" + "Option notes. " * 12_000 + "</p>\n")
    )
    (doc / "genindex.html").write_text(other("Index", f"<p>leftout {Q_DISK}</p>"))
    (doc / "search.html").write_text(other("Search", "<p>leftout</p>"))
    (doc / "_sources").mkdir()
    (doc / "_sources" / "faq.rst.txt").write_text(f"leftout {Q_DISK}\n")
    (doc / "_static").mkdir()
    (doc / "_static" / "page.html").write_text("<p>leftout</p>")
    (doc / "searchindex.js").write_text("leftout")
    write_gz(doc.parent / "changelog.Debian.gz", "leftout\n")
    write_gz(doc.parent / "NEWS.Debian.gz", "leftout\n")
    (doc.parent / "copyright").write_text("leftout\n")
    return doc


@pytest.fixture
def doc_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package tree as shipped (:data:`FAQ`), the ``html/`` folder."""
    return _package(tmp_path, monkeypatch)


def test_zoneminder_faq_set_from_a_package_tree(doc_dir: Path) -> None:
    nset = ns.zoneminder_faq_set()
    nsc.assert_package_set(
        nset,
        "zoneminder-faq",
        ids=list(ANSWERS),
        files={
            "faq.md",
            "index.md",
            "userguide/gettingstarted.md",
            "userguide/options/options_web.md",
        },
        source="faq.md",
        version="1.36.33+dfsg1-1",
        too_long="userguide/options/options_huge.html",
        answers=ANSWERS,
    )
    corpus = " ".join(nset.files.values())
    for gone in ("leftout", "navline", "sidebarline", "footerline", "linkline"):
        assert gone not in corpus
    # the other pages read as Sphinx main columns: title kept; a paragraph linking into an
    # FAQ entry deleted, a page quoting a question scrubbed, its other text kept
    assert nset.files["index.md"].startswith("# Welcome to ZoneMinder\n")
    assert "Read the licence first." in nset.files["userguide/gettingstarted.md"]
    assert "WEB_TITLE sets the title." in nset.files["userguide/options/options_web.md"]
    assert nset.left_out == ()


def test_zoneminder_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = FAQ.replace(
        "The GPL license allows you to produce systems based on GPL software.", "Yes."
    )
    assert short != FAQ
    _package(tmp_path, monkeypatch, short)
    nsc.assert_left_out(ns.zoneminder_faq_set(), Q_GPL, len(ASKED) - 1)


def test_no_question_text_is_left_in_any_file(doc_dir: Path) -> None:
    # the FAQ page as a browser shows it (tags out, entities read, lines folded): the check
    # finds every question there, so it could fail
    shipped = {"faq.txt": ns.xboard_heading_text(FAQ)}
    nsc.assert_leak_checked(ns.zoneminder_faq_set(), shipped, ASKED)


def test_zoneminder_faq_set_halves_are_fixed_and_disjoint(doc_dir: Path) -> None:
    added = section(
        3,
        "why-is-the-timeline-view-all-messed-up",
        "Why is the timeline view all messed up?",
        "<p>The timeline view shows a graph of alarm activity over time.</p>\n",
    )
    more = FAQ.replace("</section>\n</section>\n" + FOOT, added + "</section>\n</section>\n" + FOOT)
    assert more != FAQ
    nsc.assert_halves_survive_an_added_question(
        ns.zoneminder_faq_set, lambda: (doc_dir / ns.ZM_FAQ).write_text(more, encoding="utf-8")
    )


def test_zoneminder_faq_set_refuses_a_package_without_the_faq(doc_dir: Path) -> None:
    (doc_dir / ns.ZM_FAQ).unlink()
    nsc.assert_refuses_without_faq(ns.zoneminder_faq_set, ns.ZM_FAQ)
