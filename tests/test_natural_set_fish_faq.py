"""The ``fish-faq`` natural-question set (``bench/natural_sets.py``), its reading of fish's
Sphinx-built FAQ page and the question-leak check (``bench/check_question_leaks.py``) on a
small inline page shaped like Debian's ``fish-common`` ships it
(``/usr/share/doc/fish/faq.html``: a top navigation bar, a sidebar whose local contents
list every question again as in-page links, then the main column ``<div class="body"
role="main">`` with an ``<h1>`` title and one ``<section id=...>`` per entry, its ``<h2>``
the question with a pilcrow permalink, some with ``<code>`` inside, some after an empty
``<span id=...>`` label, one stated ("Uninstalling fish"); answers of paragraphs, code
samples in nested divs with ``# comment`` lines, lists; an entry with no text; a bottom
navigation bar and a footer) beside the tree's other pages (the front page with a link
into an FAQ entry, the tutorial, a command page, an over-long release-notes page, the
generated index and search pages, the licence, static files), in a package tree laid out as
``fish-common`` unpacks (marker present, nothing downloaded); offline, no embedding model,
no test reads the real package.

What the set's numbers rest on: no question's text is left in any file (the entries, the
sidebar's contents, a cross-reference link and its sentence, another page quoting one); each
answer is exactly the text under its question up to the next ``<h2>``; ids are the FAQ's
section ids, so an added entry keeps the halves; an answer too short to judge leaves the set
but not the corpus's scrubbing.
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

Q_BASH = "What is the equivalent to this thing from bash (or other shells)?"
Q_ENV = "How do I set or clear an environment variable?"
Q_UX = "Why doesn\u2019t set -Ux (exported universal variables) seem to work?"
Q_PROMPT = "How do I set my prompt?"
Q_SSH = "Why won\u2019t SSH/SCP/rsync connect properly when fish is my login shell?"
Q_EMPTY = "Is this entry answered at all?"
Q_UNINSTALL = "Uninstalling fish"
Q_TOOLS = "Where can I find extra tools for fish?"


def _sample(*lines: str) -> str:
    """A highlighted code sample, nested divs round a ``<pre>``."""
    body = "\n".join(f'<span class="nf">{line}</span>' for line in lines)
    return (
        '<div class="highlight-fish-docs-samples notranslate"><div class="highlight"><pre>'
        f"<span></span>{body}\n</pre></div>\n</div>\n"
    )


def _entry(sid: str, title: str, body: str, label: str = "") -> str:
    span = f'<span id="{label}"></span>' if label else ""
    link = nsc.SPHINX_PERMALINK.format(sid)
    return f'<section id="{sid}">\n{span}<h2>{title}{link}</h2>\n{body}</section>\n'


def _sphinx_page(title: str, main: str, local: list[tuple[str, str]] | None = None) -> str:
    """A page of fish's Sphinx build: relbars, a sidebar (with the page's local contents:
    ``local``, (id, title) links into the page), the main column, a footer."""
    toc = "\n".join(
        f'<li><a class="reference internal" href="#{a}">{t}</a></li>' for a, t in local or []
    )
    relbar = (
        '<div class="related" role="navigation" aria-label="related navigation">\n'
        '<h3>Navigation</h3>\n<ul><li><a href="genindex.html">index</a></li>'
        '<li><a href="index.html">fish-shell 3.6.0 documentation</a> &#187;</li></ul>\n</div>\n'
    )
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8" />\n'
        f"<title>{title} \u2014 fish-shell 3.6.0 documentation</title>\n"
        '<script src="_static/doctools.js"></script>\n</head><body>\n'
        f"{relbar}"
        '<div class="sphinxsidebar" role="navigation" aria-label="main navigation">\n'
        '<div class="sphinxsidebarwrapper">\n<h3><a href="index.html">Documents</a></h3>\n'
        '<div id="searchbox" role="search"><h3 id="searchlabel">Quick search</h3></div>\n'
        f'<h4><a href="index.html">Sections</a></h4>\n<ul>\n{toc}\n</ul>\n'
        "</div>\n</div>\n"
        '<div class="documentwrapper">\n<div class="bodywrapper">\n'
        f'<div class="body" role="main">\n{main}\n</div>\n</div>\n</div>\n'
        '<div class="clearer"></div>\n'
        f"{relbar}"
        '<div class="footer" role="contentinfo">\u00a9 Copyright 2023, fish-shell '
        "developers.</div>\n</body>\n</html>\n"
    )


ENTRIES = [
    (
        "what-is-the-equivalent-to-this-thing-from-bash-or-other-shells",
        "What is the equivalent to this thing from bash (or other shells)?",
        '<p>See <a class="reference internal" href="fish_for_bash_users.html#fish-for-bash-'
        'users"><span class="std std-ref">Fish for bash users</span></a> for the rest.</p>\n',
        "",
    ),
    (
        "how-do-i-set-or-clear-an-environment-variable",
        "How do I set or clear an environment variable?",
        '<p>Use the <a class="reference internal" href="cmds/set.html"><span class="doc">set'
        "</span></a> command:</p>\n"
        + _sample("set -x key value # typically set -gx key value", "# erase it", "set -e key")
        + "<p>Note that \u201cexported\u201d is not a scope, but an additional bit of state."
        "</p>\n",
        "",
    ),
    (
        "why-doesn-t-set-ux-exported-universal-variables-seem-to-work",
        f"Why doesn\u2019t {nsc.sphinx_code('set', '-Ux')} (exported universal variables) "
        "seem to work?",
        "<p>A global variable of the same name already exists.</p>\n"
        "<p>Environment variables such as <code>EDITOR</code> are imported as globals.</p>\n",
        "",
    ),
    (
        "how-do-i-set-my-prompt",
        "How do I set my prompt?",
        f"<p>The prompt is the output of the {nsc.sphinx_code('fish_prompt')} function.</p>\n"
        '<ul class="simple">\n<li><p>Na\u00efve prompts still work.</p></li>\n</ul>\n'
        '<h3>A sub-heading<a class="headerlink" href="#sub">\u00b6</a></h3>\n'
        "<p>Right prompts are <code>fish_right_prompt</code>.</p>\n",
        "",
    ),
    (
        "why-won-t-ssh-scp-rsync-connect-properly-when-fish-is-my-login-shell",
        "Why won\u2019t SSH/SCP/rsync connect properly when fish is my login shell?",
        "<p>This problem may show up as messages like \u201cReceived message too long\u201d.</p>\n",
        "faq-ssh-interactive",
    ),
    ("is-this-entry-answered-at-all", "Is this entry answered at all?", "", ""),
    (
        "uninstalling-fish",
        "Uninstalling fish",
        "<p>If you want to uninstall fish, first make sure fish is not set as your shell.</p>\n",
        "faq-uninstalling",
    ),
    (
        "where-can-i-find-extra-tools-for-fish",
        "Where can I find extra tools for fish?",
        "<p>The fish user community extends fish in unique and useful ways.</p>\n"
        '<ul class="simple">\n<li><p>Fisher</p></li>\n<li><p>Oh My Fish</p></li>\n</ul>\n',
        "",
    ),
]
IDS = [
    (sid, q)
    for (sid, _, _, _), q in zip(
        ENTRIES,
        [Q_BASH, Q_ENV, Q_UX, Q_PROMPT, Q_SSH, Q_EMPTY, Q_UNINSTALL, Q_TOOLS],
        strict=True,
    )
    if sid != "is-this-entry-answered-at-all"
]


def _faq(entries: list[tuple[str, str, str, str]]) -> str:
    main = (
        '<section id="frequently-asked-questions">\n<h1>Frequently asked questions'
        f"{nsc.SPHINX_PERMALINK.format('frequently-asked-questions')}</h1>\n"
        + "".join(_entry(*e) for e in entries)
        + "</section>\n"
    )
    return _sphinx_page("Frequently asked questions", main, [(e[0], e[1]) for e in entries])


PAGE = _faq(ENTRIES)


def test_split_fish_faq_questions_answers_and_ids() -> None:
    page, qa = ns.split_fish_faq(PAGE)
    assert [(k, q) for k, q, _ in qa] == IDS
    answers = {k: a for k, _, a in qa}
    assert nsc.flat(answers[IDS[0][0]]) == nsc.flat("See Fish for bash users for the rest.")
    env = answers[IDS[1][0]]
    # the code sample's "# ..." lines are code, not headings; the answer runs past them
    assert "# erase it" in env and "set -e key" in env and "additional bit of state" in env
    assert nsc.flat(answers[IDS[2][0]]) == nsc.flat(
        "A global variable of the same name already exists.\n\nEnvironment variables such "
        "as EDITOR are imported as globals."
    )
    # an <h3> inside an entry is answer text; UTF-8 kept
    prompt = answers["how-do-i-set-my-prompt"]
    assert "### A sub-heading" in prompt and "fish_right_prompt" in prompt
    assert "Naïve prompts" in prompt and "\u00b6" not in prompt
    # a span label between the section and its heading: the section's id is the id
    assert "uninstalling-fish" in answers and IDS[4][0] in answers
    # the last answer stops at the main column's end: no relbar, sidebar or footer
    tools = answers["where-can-i-find-extra-tools-for-fish"]
    assert "Oh My Fish" in tools and "Navigation" not in tools and "Copyright" not in tools
    nsc.assert_page_keeps_answers(qa, page)
    # the sidebar (its local contents: every question again), the relbars and the footer
    # are outside the main column; the title stays, the permalinks go
    for gone in ("Sections", "Quick search", "Navigation", "Copyright", "documentation", "\u00b6"):
        assert gone not in page
    assert page.startswith("# Frequently asked questions")
    # an entry with nothing under it asks nothing and leaves the page all the same
    assert "answered at all" not in page


def test_split_fish_faq_edges() -> None:
    # no main column: the whole page is read
    page, none = ns.split_fish_faq("<html><body><h1>fish FAQ</h1><p>Prose.</p></body></html>")
    assert none == [] and "Prose." in page
    # an <h2> with no section id before it gets the question's slug; a repeat gets -2; an
    # <h1> ends the answer above it and stays in the page
    page, qa = ns.split_fish_faq(
        '<div class="body" role="main"><h2>Same words?</h2><p>First answer.</p>'
        '<section id="dup"><h2>One?</h2><p>One answer.</p></section>'
        '<section id="dup"><h2>Two?</h2><p>Two answer.</p></section>'
        "<h2>Same words?</h2><p>Second answer.</p><h1>Another title</h1><p>Under it.</p>"
        "</div><p>Outside.</p>"
    )
    nsc.assert_slugs_and_repeats(page, qa, "Another title")
    assert "Outside." not in page
    # inline tags in a heading leave no space of their own; entities decoded
    _, qa = ns.split_fish_faq(
        f'<div role="main"><h2>Why <em>is</em> {nsc.sphinx_code("a", "b")}&#8217;s output?</h2>'
        "<p>Text.</p></div>"
    )
    assert qa[0][1] == "Why is a b\u2019s output?"
    # nested divs inside the main column do not end it
    main = ns.sphinx_main_column(
        '<div class="sphinxsidebar">S</div><div class="body" role="main"><div><div>a</div>'
        "</div>b</div><div>after</div>"
    )
    assert main == "<div><div>a</div></div>b"


_WORD = st.sampled_from(["prompt", "abbr", "universal", "history", "fish", "config", "path"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(_WORD, min_size=0, max_size=8),  # the title's words after the first
            st.booleans(),  # asked ("?") or stated
            st.booleans(),  # a span label before the heading
            st.booleans(),  # wrapped over two lines
            st.lists(_WORD, min_size=0, max_size=20),  # the answer's words (may be none)
        ),
        max_size=8,
    )
)
def test_split_fish_faq_property(
    entries: list[tuple[list[str], bool, bool, bool, list[str]]],
) -> None:
    """Random entries, asked or stated, labelled or not, wrapped or not, some unanswered:
    one question per answered entry, in order, its section id its id, its answer its text,
    in the page; no title left in it (the sidebar's contents gone with the entries)."""
    spec, built = [], []
    for k, (words, asked, label, wrapped, awords) in enumerate(entries):
        title = ("\n" if wrapped else " ").join([f"entry{k}x", *words]) + ("?" if asked else "")
        answer = " ".join(["Answer", *awords]) if awords else ""
        built.append(
            (f"sid{k}", title, f"<p>{answer}</p>\n" if answer else "", f"l{k}" if label else "")
        )
        spec.append((f"sid{k}", " ".join(title.split()), answer))
    page, qa = ns.split_fish_faq(_faq(built))
    assert qa == [(k, t, a) for k, t, a in spec if a]
    for _, _, a in qa:
        assert a in page
    for _, t, _ in spec:
        assert t not in " ".join(page.split())


# -- the set, built from a package tree shaped like Debian's fish-common -------------------


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, page: str = PAGE) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.FISH_PACKAGE, "3.6.0-3.1")
    doc: Path = root / ns.FISH_DOC
    (doc / ns.FISH_CMDS).mkdir(parents=True)
    (doc / "_static").mkdir()
    (doc / ns.FISH_FAQ).write_text(page, encoding="utf-8")
    (doc / "index.html").write_text(
        _sphinx_page(
            "Introduction",
            "<h1>Introduction</h1><p>This is the documentation for fish.</p>"
            "<h3>Uninstalling</h3><p>For uninstalling fish: see "
            '<a class="reference internal" href="faq.html#faq-uninstalling"><span>FAQ: '
            "Uninstalling fish</span></a>.</p>"
            '<ul><li><a href="faq.html#faq-ssh-interactive">FAQ: SSH and login shells</a> '
            "explains it.</li></ul>"
            '<p>The <a href="faq.html">Frequently asked questions</a> page answers more.</p>',
        ),
        encoding="utf-8",
    )
    (doc / "tutorial.html").write_text(
        _sphinx_page(
            "Tutorial",
            f"<h1>Tutorial</h1><p>People ask: {Q_PROMPT} Write a fish_prompt function.</p>"
            "<p>The tutorial\u2019s examples run in fish 3.6.</p>",
        ),
        encoding="utf-8",
    )
    (doc / "relnotes.html").write_text(
        _sphinx_page("Release notes", "<h1>Release notes</h1><pre>" + "fix a bug\n" * 20000)
    )
    (doc / ns.FISH_CMDS / "set.html").write_text(
        _sphinx_page("set", "<h1>set - display and change shell variables</h1><p>Sets.</p>"),
        encoding="utf-8",
    )
    (doc / "genindex.html").write_text(_sphinx_page("Index", "<h1>Index</h1><p>abbr</p>"))
    (doc / "search.html").write_text(_sphinx_page("Search", "<h1>Search</h1><p>Search</p>"))
    (doc / "license.html").write_text(_sphinx_page("License", "<h1>License</h1><p>GPL</p>"))
    (doc / "searchindex.js").write_text("Search.setIndex({})\n")
    (doc / "objects.inv").write_bytes(b"# Sphinx inventory\n")
    (doc / "_static" / "basic.css").write_text("body { color: black }\n")
    return doc


@pytest.fixture
def doc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package tree as shipped (the FAQ page :data:`PAGE`), its documentation folder."""
    return _package(tmp_path, monkeypatch)


def test_fish_faq_set_from_a_package_tree(doc: Path) -> None:
    nset = ns.fish_faq_set()
    nsc.assert_package_set(
        nset,
        "fish-faq",
        ids=[k for k, _ in IDS],
        files={"faq.md", "index.md", "tutorial.md", "cmds/set.md"},
        source="faq.md",
        version="3.6.0-3.1",
        too_long="relnotes.html",
    )
    # UTF-8 read as such
    assert "Naïve prompts" in nset.files["faq.md"]
    assert "tutorial\u2019s examples" in nset.files["tutorial.md"]
    # a paragraph linking into an FAQ entry goes whole; a link into an entry elsewhere
    # loses its text; a link to the FAQ page keeps it; the rest of the page stays
    index = nset.files["index.md"]
    assert "### Uninstalling" in index
    assert "For uninstalling fish" not in index and "SSH" not in index
    assert "explains it." in index and "Frequently asked questions page answers" in index
    # the page quoting a question: scrubbed, its other text kept
    assert "Write a fish_prompt function" in nset.files["tutorial.md"]


def test_fish_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = PAGE.replace(
        "If you want to uninstall fish, first make sure fish is not set as your shell.",
        "Remove the package.",
    )
    _package(tmp_path, monkeypatch, short)
    nsc.assert_left_out(ns.fish_faq_set(), Q_UNINSTALL, len(IDS) - 1)


def test_no_question_text_is_left_in_any_file(doc: Path) -> None:
    nsc.assert_leak_checked(
        ns.fish_faq_set(), {"faq.md": ns.fish_page_markdown(PAGE)}, [q for _, q in IDS]
    )


def test_fish_faq_set_halves_are_fixed_and_disjoint(doc: Path) -> None:
    more = _faq(
        [
            *ENTRIES,
            (
                "how-do-i-change-the-greeting-message",
                "How do I change the greeting message?",
                "<p>Change the value of the variable fish_greeting.</p>\n",
                "",
            ),
        ]
    )
    nsc.assert_halves_survive_an_added_question(
        ns.fish_faq_set, lambda: (doc / ns.FISH_FAQ).write_text(more, encoding="utf-8")
    )


def test_fish_faq_set_refuses_a_package_without_the_faq(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = unpacked_package(tmp_path, monkeypatch, ns.FISH_PACKAGE, "3.6.0-3.1")
    (root / ns.FISH_DOC).mkdir(parents=True)
    nsc.assert_refuses_without_faq(ns.fish_faq_set, "faq.html")
