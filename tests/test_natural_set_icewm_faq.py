"""The ``icewm-faq`` natural-question set (``bench/natural_sets.py``): IceWM's FAQ as Debian's
``icewm-common`` ships it (``/usr/share/doc/icewm-common/FAQ/IceWM-FAQ.html``: an HTML
fragment pandoc wrote from the authors' markdown, flat ``<h3 id=...>`` headings that mix
questions, stated problems, group titles with a line of their own and topic titles, and
``<h4>`` sub-sections inside one answer) read by ZoneMinder's rule unchanged
(``split_zoneminder_faq``), beside the pages of ``html/`` (the manual as asciidoctor writes
it, the man pages as ``pod2html`` writes them) and Debian's notes, on a small inline package
tree of that shape (a "Last modified" line, a question whose answer is a bare link too short
to judge, a stated problem, a two-word topic title, a "…" continuation heading, the
``<h4>`` sub-sections, an entry quoted in another entry's prose; the text copy of the FAQ,
``examples/``, the man pages under ``/usr/share/man``, the changelogs and the copyright);
offline, no embedding model, no test reads the real package.

What the set's numbers rest on: which heading asks is ZoneMinder's rule (a title ending with
"?", or text of its own and three words or more), so topic titles stay in the page and the
``<h4>`` sub-sections stay in their answer; each answer is exactly the text under its heading;
no question is left in any file; the manual is read as asciidoctor's page and the man pages
as pod2html's; the second copies (text FAQ, man pages, examples) are not the corpus; the
halves are fixed.
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

VERSION = "3.3.1-1"

Q_WHAT = "What is IceWM?"
Q_WHERE = "Where to get it?"
Q_FILES = "Which configuration files?"
Q_MOUSE = "Configure mouse buttons"
Q_LOCK = "How to lock the screen"
Q_KEYBOARD = "… by keyboard"
Q_COLORS = "IceWM ignores my colors"
Q_PANEL = "IceWM Control Panel"
ASKED = [Q_WHAT, Q_FILES, Q_MOUSE, Q_LOCK, Q_KEYBOARD, Q_COLORS, Q_PANEL]
ANSWERS = {  # ids: the questions' slugs (pandoc's ids are on the headings, not sections)
    "what-is-icewm": (
        "IceWM is a window manager for the X11 window system.\n\nThe obvious question is:"
    ),
    "which-configuration-files": (
        "IceWM reads these files:\n\n#### menu\n\nThe menu file controls your menu:\n\n"
        "```\n    prog Program Icon app -with -options\n```\n\n#### keys\n\n"
        "Global keybindings, one a line."
    ),
    "configure-mouse-buttons": "Set the buttons in the preferences file with MouseWinMove.",
    "how-to-lock-the-screen": "Screen locking is something you should do whenever you leave.",
    "by-keyboard": "With IceWM screen locking is very easy: press Ctrl-Alt-Del.",
    "icewm-ignores-my-colors": (
        "Your theme overrides the colors; put them in prefoverride instead."
    ),
    "icewm-control-panel": "The panel includes IcePref2, a preferences editor.",
}
FAQ = """<p>Last modified 2019/11/24</p>
<h3 id="what-is-icewm">What is IceWM?</h3>
<p>IceWM is a <strong>window manager</strong> for the
<strong>X11</strong> window system.</p>
<p>The obvious question is:</p>
<h3 id="where-to-get-it">Where to get it?</h3>
<p>See <a href="https://ice-wm.org" title="ice-wm.org"><img
src="/images/logom.jpg" title="ice-wm.org" alt="here" /></a>.</p>
<h3 id="configuration">Configuration</h3>
<h3 id="which-configuration-files">Which configuration files?</h3>
<p>IceWM reads these files:</p>
<h4 id="menu">menu</h4>
<p>The <code>menu</code> file controls your menu:</p>
<pre><code>    prog Program Icon app -with -options</code></pre>
<h4 id="keys">keys</h4>
<p>Global keybindings, one a line.</p>
<h3 id="configure-mouse-buttons">Configure mouse buttons</h3>
<p>Set the buttons in the preferences file with <code>MouseWinMove</code>.</p>
<h3 id="how-to-lock-the-screen">How to lock the screen</h3>
<p>Screen locking is something you should do whenever you leave.</p>
<h3 id="by-keyboard">… by keyboard</h3>
<p>With IceWM screen locking is very easy: press <code>Ctrl-Alt-Del</code>.</p>
<h3 id="control-tools">Control tools</h3>
<p>This section is a collection of tools.</p>
<h3 id="icepref2">IcePref2</h3>
<p>IcePref2 is a successor to IcePref.</p>
<h3 id="icewm-control-panel">IceWM Control Panel</h3>
<p>The panel includes IcePref2, a preferences editor.</p>
<h3 id="icewm-ignores-my-colors">IceWM ignores my colors</h3>
<p>Your theme overrides the colors; put them in <code>prefoverride</code> instead.</p>
<h3 id="license">License</h3>
<p>This document is released under the terms of the GNU LGPL.</p>
"""
# the test page keeps the real page's order of kinds; the answers' order is the page's
ASKED_IN_ORDER = [Q_WHAT, Q_FILES, Q_MOUSE, Q_LOCK, Q_KEYBOARD, Q_PANEL, Q_COLORS]
IDS_IN_ORDER = [
    "what-is-icewm",
    "which-configuration-files",
    "configure-mouse-buttons",
    "how-to-lock-the-screen",
    "by-keyboard",
    "icewm-control-panel",
    "icewm-ignores-my-colors",
]
SHIPPED = {"FAQ/IceWM-FAQ.html": FAQ}
MANUAL = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta name="generator" content="Asciidoctor 2.0.18">
<meta name="author" content="Marko Macek">
<title>IceWM Manual</title>
<style>
h1{font-size:2em;margin:.67em 0} leftout
</style>
</head>
<body class="article toc2 toc-left">
<div id="header">
<h1>IceWM Manual</h1>
<div class="details">
<span id="author" class="author">Marko Macek</span><br>
</div>
<div id="toc" class="toc2">
<div id="toctitle">Table of Contents</div>
<ul class="sectlevel1">
<li><a href="#_introduction">leftout contents entry</a></li>
</ul>
</div>
</div>
<div id="content">
<div class="sect1">
<h2 id="_introduction"><a class="anchor" href="#_introduction"></a>Introduction</h2>
<div class="sectionbody">
<div class="paragraph">
<p>This document is the manual for the IceWM X11 window manager.</p>
</div>
</div>
</div>
</div>
<div id="footer">
<div id="footer-text">
leftout Last updated 2023-02-05
</div>
</div>
</body>
</html>
"""
KEYS_5 = """<?xml version="1.0" ?>
<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" "https://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd">
<html xmlns="https://www.w3.org/1999/xhtml">
<head>
<title>Standards, Environments and Macros</title>
<meta http-equiv="content-type" content="text/html; charset=utf-8" />
</head>

<body id="_podtop_">
<table border="0" width="100%" cellspacing="0" cellpadding="3">
<tr><td class="_podblock_" style="background-color: #cccccc; color: #000" valign="middle">
<big><strong><span class="_podblock_">&nbsp;Standards, Environments and Macros</span></strong></big>
</td></tr>
</table>

<h2 id="NAME">NAME</h2>

<pre><code>icewm-keys - icewm keys configuration file</code></pre>

<h2 id="DESCRIPTION">DESCRIPTION</h2>

<p>Each non-empty line starts with the word <code>key</code>.</p>

<pre><code>key &quot;Ctrl+Shift+r&quot;      icesh restart</code></pre>

</body>

</html>
"""
FILES = {
    "FAQ.md",
    "html/icewm.md",
    "html/icewm-keys.5.md",
    "README.Debian",
    "NEWS.Debian",
    "TODO",
    "BUGS",
}


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package as shipped: the FAQ (HTML, its text copy, the index link); ``html/`` (the
    manual, a man page, one over the page limit); Debian's notes, TODO and BUGS; the
    examples; the man pages under ``/usr/share/man``; the changelogs and the copyright."""
    root = unpacked_package(tmp_path, monkeypatch, ns.ICEWM_PACKAGE, VERSION)
    doc = root / ns.ICEWM_DOC
    (doc / "FAQ").mkdir(parents=True)
    (doc / ns.ICEWM_FAQ).write_text(FAQ, encoding="utf-8")
    (doc / "FAQ/index.html").write_text(FAQ, encoding="utf-8")  # the link, as a copy
    write_gz(doc / "FAQ/IceWM-FAQ.txt.gz", f"leftout {Q_WHAT}\n")
    (doc / "html").mkdir()
    (doc / "html/icewm.html").write_text(MANUAL, encoding="utf-8")
    (doc / "html/icewm-keys.5.html").write_text(KEYS_5, encoding="utf-8")
    (doc / "html/icewm-preferences.5.html").write_text(
        KEYS_5.replace("Each non-empty", "Option notes. " * 12_000), encoding="utf-8"
    )
    write_gz(doc / "README.Debian.gz", "icewm for Debian\n\nicewm-session starts icewmbg.\n")
    write_gz(doc / "NEWS.Debian.gz", "icewm (3.0.0-1) unstable\n\n  * New menus.\n")
    (doc / "TODO").write_text("Things to do:\n- multihead tray\n", encoding="utf-8")
    (doc / "BUGS").write_text("See https://github.com/ice-wm/icewm/issues\n", encoding="utf-8")
    (doc / "examples").mkdir()
    (doc / "examples/preferences").write_text("# leftout MouseWinMove=1\n", encoding="utf-8")
    write_gz(doc / "changelog.gz", "leftout changes\n")
    write_gz(doc / "changelog.Debian.gz", "leftout changes\n")
    (doc / "copyright").write_text("leftout\n", encoding="utf-8")
    man = root / "usr/share/man/man5"
    man.mkdir(parents=True)
    write_gz(man / "icewm-keys.5.gz", ".TH leftout\n")
    return doc


@pytest.fixture
def doc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return _package(tmp_path, monkeypatch)


def test_icewm_faq_set_from_a_package_tree(doc: Path) -> None:
    nset = ns.icewm_faq_set()
    # every heading that ends with "?", or has its own text and 3+ words, asks, in order;
    # "Where to get it?" is answered by a bare link ("See ."): too short to judge
    nsc.assert_package_set(
        nset,
        "icewm-faq",
        ids=IDS_IN_ORDER,
        files=FILES,
        source="FAQ.md",
        version=VERSION,
        too_long="icewm-preferences.5.html",
        answers=ANSWERS,
    )
    assert [q.text for q in nset.questions] == ASKED_IN_ORDER
    faq = nset.files["FAQ.md"]
    # the group and topic titles stay as headings with their text; no asked heading stays
    assert faq.startswith("Last modified 2019/11/24\n\n")
    for kept in (
        "### Configuration\n\nIceWM reads these files:",
        "### Control tools\n\nThis section is a collection of tools.",
        "### IcePref2\n\nIcePref2 is a successor to IcePref.",
        "### License\n\nThis document is released",
    ):
        assert kept in faq
    assert re.findall(r"(?m)^### .*", faq) == [
        "### Configuration",
        "### Control tools",
        "### IcePref2",
        "### License",
    ]
    # the short answer stays in the page between its neighbours' answers
    assert "The obvious question is:\n\nSee .\n\n### Configuration" in faq
    # the manual read as asciidoctor's page: title and author kept, contents and footer out
    manual = nset.files["html/icewm.md"]
    assert manual.startswith("# IceWM Manual\n")
    assert "## Introduction\n\nThis document is the manual for the IceWM" in manual
    assert "Marko Macek" in manual
    # the man page read as pod2html's: its title bar a line, sections as headings
    keys = nset.files["html/icewm-keys.5.md"]
    assert "## NAME\n\n```\nicewm-keys - icewm keys configuration file\n```" in keys
    assert '```\nkey "Ctrl+Shift+r"      icesh restart\n```' in keys
    assert "Standards, Environments and Macros" in keys
    assert "icewm-session starts icewmbg." in nset.files["README.Debian"]
    assert "New menus." in nset.files["NEWS.Debian"]
    assert nset.files["TODO"] == "Things to do:\n- multihead tray\n"
    # the second copies, the examples, changelogs, copyright, stylesheet and footer are out
    assert "leftout" not in " ".join(nset.files.values())
    nsc.assert_left_out(nset, Q_WHERE, len(ASKED))


def test_no_question_text_is_left_in_any_file(doc: Path) -> None:
    nsc.assert_leak_checked(ns.icewm_faq_set(), SHIPPED, [*ASKED, Q_WHERE], is_html=True)


def test_icewm_faq_set_halves_are_fixed_and_disjoint(doc: Path) -> None:
    more = FAQ.replace(
        '<h3 id="license">',
        '<h3 id="font-settings-are-ignored">Font settings are ignored</h3>\n'
        "<p>Xft fonts are named in fontconfig's syntax, core fonts in XLFD.</p>\n"
        '<h3 id="license">',
    )
    assert more != FAQ
    nsc.assert_halves_survive_an_added_question(
        ns.icewm_faq_set, lambda: (doc / ns.ICEWM_FAQ).write_text(more, encoding="utf-8")
    )


def test_icewm_faq_set_refuses_a_package_without_the_faq(doc: Path) -> None:
    (doc / ns.ICEWM_FAQ).unlink()
    nsc.assert_refuses_without_faq(ns.icewm_faq_set, ns.ICEWM_FAQ)


_WORD = st.sampled_from(["icewm", "theme", "menu", "tray", "focus", "xrandr", "clock"])


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["ask", "report", "topic", "sub"]),  # ?, 3+ words, 1-2, <h4>
            st.lists(_WORD, min_size=0, max_size=3),  # its own text (empty: none)
        ),
        min_size=1,
        max_size=9,
    )
)
def test_pandoc_faq_fragment_is_read_by_zoneminders_rule_property(
    entries: list[tuple[str, list[str]]],
) -> None:
    """Random FAQ fragments shaped as IceWM's (pandoc: no head, no sections, the ids on the
    headings): flat ``<h3 id=...>`` questions ("...?"), stated problems (three words or
    more), topic titles (one word) and ``<h4 id=...>`` sub-sections, each with or without
    text. An ``<h4>`` after an asking ``<h3>`` is part of its answer; an ``<h3>`` asks when
    it ends with "?" or has text and three words or more and has something under it (its
    text, its ``<h4>``s). Exactly those, in order; ids the slugs (never pandoc's ``id``);
    every answer in the page; every heading that does not ask kept."""
    titles: list[str] = []
    parts = ["<p>Last modified 2019/11/24</p>"]
    for n, (kind, words) in enumerate(entries):
        title = {
            "ask": f"entry{n}x ask this?",
            "report": f"entry{n}x reports a problem",
            "topic": f"entry{n}x",
            "sub": f"sub{n}x",
        }[kind]
        titles.append(title)
        level = 4 if kind == "sub" else 3
        parts.append(f'<h{level} id="pandoc{n}">{title}</h{level}>')
        if words:
            parts.append(f"<p>Text{n} {' '.join(words)}.</p>")
    page, qa = ns.split_zoneminder_faq("\n".join(parts))
    expected: list[tuple[str, str, str]] = []
    asked: set[int] = set()
    k = 0
    while k < len(entries):
        kind, words = entries[k]
        nxt = k + 1
        while kind != "sub" and nxt < len(entries) and entries[nxt][0] == "sub":
            nxt += 1
        blocks = [f"Text{k} {' '.join(words)}."] if words else []
        for j in range(k + 1, nxt):
            blocks.append(f"#### {titles[j]}")
            if entries[j][1]:
                blocks.append(f"Text{j} {' '.join(entries[j][1])}.")
        asks = kind == "ask" or (kind == "report" and bool(words))
        if asks and blocks:
            expected.append((ns._slug(titles[k]), titles[k], "\n\n".join(blocks)))
            asked.add(k)
            k = nxt
        else:
            k += 1
    assert qa == expected
    assert all(not key.startswith("pandoc") for key, _, _ in qa)
    nsc.assert_page_keeps_answers(qa, page)
    assert page.startswith("Last modified 2019/11/24\n")
    for n, title in enumerate(titles):
        assert (f"{title}\n" in page) == (n not in asked)
