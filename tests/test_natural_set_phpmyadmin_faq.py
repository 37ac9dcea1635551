"""The ``phpmyadmin-faq`` natural-question set (``bench/natural_sets.py``), its reading of
phpMyAdmin's Sphinx-built FAQ page and the question-leak check
(``bench/check_question_leaks.py``) on a small inline page shaped like Debian's
``phpmyadmin`` ships it (``/usr/share/doc/phpmyadmin/html/faq.html``: a top navigation bar,
a sidebar whose local contents list every entry again as in-page links, then the main
column ``<div class="body" role="main">`` with an ``<h1>`` title, ``<h2>`` groups with a
line of text under one, and in them one ``<section id=...>`` per entry, an empty ``<span
id="faq1-1">`` label and its ``<h3>``: the entry's number and question with a pilcrow
permalink, some with ``<code>`` inside, one stated ("2.7 Using and creating themes"), a
withdrawn one with no text; answers of paragraphs, code samples in nested divs, lists, a
"See also" box linking to another entry by its title; a bottom navigation bar and a footer)
beside the tree's other pages (the front page's contents, an introduction with a paragraph
linking into an entry, the setup page quoting a question, an over-long configuration
reference, the licence, the generated index and search pages, ``_sources/``, static files)
and the folder's notes, in a package tree laid out as ``phpmyadmin`` unpacks (marker
present, nothing downloaded); offline, no embedding model, no test reads the real package.

What the set's numbers rest on: no question's text is left in any file (the entries, the
sidebar's contents, an entry's "See also" link to another, a cross-reference paragraph on
another page, another page quoting one); each answer is exactly the text under its question
up to the next ``<h3>``/``<h2>``; ids are the FAQ's labels, so an added entry keeps the
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

Q_CRASH = (
    "My server is crashing each time a specific action is required or phpMyAdmin sends a "
    "blank page, what can I do?"
)
Q_APACHE = "My Apache server crashes when using phpMyAdmin."
Q_GZIP = "How can I gzip a dump or a CSV export? It does not seem to work."
Q_CLIENT = (
    "I cannot connect to the MySQL server. It always returns the error message, "
    "\u201cClient does not support authentication protocol\u201d"
)
Q_THEMES = "Using and creating themes"
Q_NULL = "How can I insert a null value into my table?"
Q_SHA2 = "I get an error about caching_sha2_password when trying to log in"
Q_SECURITY = "Where can I get information about the security alerts issued for phpMyAdmin?"


def _sample(*lines: str) -> str:
    """A highlighted code sample, nested divs round a ``<pre>``."""
    body = "\n".join(f'<span class="k">{line}</span>' for line in lines)
    return (
        '<div class="highlight-php notranslate"><div class="highlight"><pre>'
        f"<span></span>{body}\n</pre></div>\n</div>\n"
    )


def _entry(sid: str, number: str, title: str, body: str, label: str = "") -> str:
    span = f'<span id="{label}"></span>' if label else ""
    return (
        f'<section id="{sid}">\n{span}<h3>{number} {title}{nsc.SPHINX_PERMALINK.format(sid)}</h3>\n'
        f"{body}</section>\n"
    )


def _group(sid: str, label: str, title: str, intro: str, entries: str) -> str:
    return (
        f'<section id="{sid}">\n<span id="{label}"></span><h2>{title}'
        f"{nsc.SPHINX_PERMALINK.format(sid)}</h2>\n{intro}{entries}</section>\n"
    )


def _sphinx_page(title: str, main: str, local: list[tuple[str, str]] | None = None) -> str:
    """A page of phpMyAdmin's Sphinx build: relbars, a sidebar (with the page's local
    contents: ``local``, (id, title) links into the page), the main column, a footer."""
    toc = "\n".join(
        f'<li><a class="reference internal" href="#{a}">{t}</a></li>' for a, t in local or []
    )
    relbar = (
        '<div class="related" role="navigation" aria-label="related navigation">\n'
        '<h3>Navigation</h3>\n<ul><li><a href="genindex.html">index</a></li>'
        '<li><a href="index.html">phpMyAdmin 5.2.1 documentation</a> &#187;</li></ul>\n</div>\n'
    )
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8" />\n'
        f"<title>{title} &#8212; phpMyAdmin 5.2.1 documentation</title>\n"
        '<script src="_static/doctools.js"></script>\n</head><body>\n'
        f"{relbar}"
        '<div class="document">\n<div class="documentwrapper">\n<div class="bodywrapper">\n'
        f'<div class="body" role="main">\n{main}\n</div>\n</div>\n</div>\n'
        '<div class="sphinxsidebar" role="navigation" aria-label="main navigation">\n'
        '<div class="sphinxsidebarwrapper">\n<h3><a href="index.html">Table of Contents</a>'
        f"</h3>\n<ul>\n{toc}\n</ul>\n<h4>Previous topic</h4>\n"
        '<div id="searchbox" role="search"><h3 id="searchlabel">Quick search</h3></div>\n'
        "</div>\n</div>\n"
        '<div class="clearer"></div>\n</div>\n'
        f"{relbar}"
        '<div class="footer" role="contentinfo">\u00a9 Copyright 2012 - 2021, The phpMyAdmin '
        "devel team.</div>\n</body>\n</html>\n"
    )


# (section id, number, title as marked up, question, answer markup, label)
SERVER = [
    (
        "my-server-is-crashing",
        "1.1",
        Q_CRASH,
        Q_CRASH,
        f"<p>Try to set the {nsc.sphinx_code('$cfg[&#39;OBGzip&#39;]')} directive to "
        f"<code>false</code> in your {nsc.sphinx_code('config.inc.php')} file.</p>\n",
        "faq1-1",
    ),
    (
        "my-apache-server-crashes-when-using-phpmyadmin",
        "1.2",
        Q_APACHE,
        Q_APACHE,
        "<p>You should first try the latest versions of Apache (and possibly MySQL).</p>\n"
        '<div class="admonition seealso">\n<p class="admonition-title">See also</p>\n'
        '<p><a class="reference internal" href="#faq1-1"><span class="std std-ref">1.1 '
        f"{Q_CRASH}</span></a></p>\n</div>\n",
        "faq1-2",
    ),
    ("withdrawn", "1.3", "(withdrawn).", "(withdrawn).", "", "faq1-3"),
    (
        "how-can-i-gzip-a-dump-or-a-csv-export-it-does-not-seem-to-work",
        "1.7",
        Q_GZIP,
        Q_GZIP,
        "<p>This feature is based on the <code>gzencode()</code> PHP function.</p>\n"
        + _sample("# compress the export", "$cfg['ZipDump'] = true;")
        + '<h4>A note<a class="headerlink" href="#n">\u00b6</a></h4>\n'
        "<p>You must have Zlib support (--with-zlib).</p>\n",
        "faq1-7",
    ),
    (
        "i-cannot-connect-to-the-mysql-server",
        "1.17a",
        "I cannot connect to the MySQL server. It always returns the error message, "
        "&#8220;Client does not support authentication protocol&#8221;",
        Q_CLIENT,
        "<p>You tried to access MySQL with an old MySQL client library.</p>\n",
        "faq1-17a",
    ),
]
CONFIG = [
    (
        "using-and-creating-themes",
        "2.7",
        Q_THEMES,
        Q_THEMES,
        '<p>Please see <a href="themes.html#themes">Custom Themes</a> for how themes are '
        "laid out in the folder na\u00efvely named themes.</p>\n",
        "faqthemes",
    ),
    (
        "how-can-i-insert-a-null-value-into-my-table",
        "6.3",
        Q_NULL,
        Q_NULL,
        "<p>Since version 2.2.3, you have a checkbox for each column that can be null.</p>\n"
        '<ul class="simple">\n<li><p>Tick it.</p></li>\n<li><p>Save the row.</p></li>\n</ul>\n',
        "faq6-3",
    ),
    (
        "i-get-an-error-about-caching-sha2-password",
        "1.45",
        f"I get an error about {nsc.sphinx_code('caching_sha2_password')} when trying to log in",
        Q_SHA2,
        "<p>Your PHP is older than the server\u2019s default authentication method.</p>\n",
        "",
    ),
]
SECURITY = [
    (
        "where-can-i-get-information-about-the-security-alerts",
        "8.1",
        Q_SECURITY,
        Q_SECURITY,
        '<p>Please refer to <a class="reference external" '
        'href="https://www.phpmyadmin.net/security/">the security page</a> for the alerts.</p>\n',
        "faq8-1",
    ),
]
ENTRIES = [*SERVER, *CONFIG, *SECURITY]
IDS = [
    (label or sid, q)
    for sid, _, _, q, body, label in ENTRIES
    if body  # a withdrawn entry asks nothing
]


def _faq(
    server: list[tuple[str, str, str, str, str, str]] = SERVER,
    config: list[tuple[str, str, str, str, str, str]] = CONFIG,
    security: list[tuple[str, str, str, str, str, str]] = SECURITY,
) -> str:
    def entries(rows: list[tuple[str, str, str, str, str, str]]) -> str:
        return "".join(_entry(sid, n, t, body, label) for sid, n, t, _, body, label in rows)

    main = (
        '<section id="faq-frequently-asked-questions">\n<span id="faq"></span>'
        "<h1>FAQ - Frequently Asked Questions"
        f"{nsc.SPHINX_PERMALINK.format('faq-frequently-asked-questions')}</h1>\n"
        "<p>Please have a look at our Link section on the official homepage.</p>\n"
        + _group("server", "faqserver", "Server", "", entries(server))
        + _group(
            "configuration",
            "faqconfig",
            "Configuration",
            "<p>Entries about setting phpMyAdmin up.</p>\n",
            entries(config),
        )
        + _group("security", "faqsecurity", "Security", "", entries(security))
        + "</section>\n"
    )
    rows = [*server, *config, *security]
    return _sphinx_page(
        "FAQ - Frequently Asked Questions", main, [(r[0], f"{r[1]} {r[2]}") for r in rows]
    )


PAGE = _faq()


def test_split_pma_faq_questions_answers_and_ids() -> None:
    page, qa = ns.split_pma_faq(PAGE)
    # the labels are the ids (the section's id without one), the number is not the question
    assert [(k, q) for k, q, _ in qa] == IDS
    answers = {k: a for k, _, a in qa}
    assert nsc.flat(answers["faq1-1"]) == nsc.flat(
        "Try to set the $cfg['OBGzip'] directive to false in your config.inc.php file."
    )
    # the "See also" box is answer text, the linked entry's title in it (scrubbed by the set)
    assert "See also" in answers["faq1-2"] and "possibly MySQL" in answers["faq1-2"]
    # code samples' "# ..." lines are code, an <h4> is answer text; the answer runs past them
    gzip = answers["faq1-7"]
    assert "# compress the export" in gzip and "#### A note" in gzip and "Zlib" in gzip
    assert "\u00b6" not in gzip
    # the last answer of a group stops at the next group's <h2>, which stays in the page
    # with its text; the answers of a group start after it
    assert "Configuration" not in answers["faq1-17a"] and "setting" not in answers["faq1-17a"]
    assert "## Configuration\n\nEntries about setting phpMyAdmin up." in page
    assert answers["faqthemes"].startswith("Please see Custom Themes")
    assert "na\u00efvely" in answers["faqthemes"]
    # the last answer stops at the main column's end: no relbar, sidebar or footer
    last = answers["faq8-1"]
    assert "security page" in last and "Navigation" not in last and "Copyright" not in last
    for _, q, a in qa:
        assert a in page
        # the heading goes; the one copy left is 1.2's "See also" link (the set scrubs it)
        assert nsc.flat(page).count(nsc.flat(q)) == (q == Q_CRASH)
    assert nsc.flat(f"See also 1.1 {Q_CRASH}") in nsc.flat(answers["faq1-2"])
    # the sidebar (its local contents: every entry again), the relbars and the footer are
    # outside the main column; the title and the groups stay, the permalinks and the
    # entries' numbers go
    for gone in ("Table of Contents", "Quick search", "Navigation", "Copyright", "\u00b6"):
        assert gone not in page
    for number in ("1.17a", "1.7 ", "2.7 ", "6.3 ", "8.1 "):
        assert number not in page
    assert page.startswith("# FAQ - Frequently Asked Questions")
    assert "## Server" in page and "## Security" in page
    # a withdrawn entry (nothing under it) asks nothing and leaves the page all the same
    assert "withdrawn" not in page and "1.3" not in page


def test_split_pma_faq_edges() -> None:
    # no main column: the whole page is read
    page, none = ns.split_pma_faq("<html><body><h1>FAQ</h1><p>Prose.</p></body></html>")
    assert none == [] and "Prose." in page
    # no section or label: the slug; a section without a label: its id; repeats get -2;
    # an <h1> ends the answer above it and stays in the page; text outside the column goes
    page, qa = ns.split_pma_faq(
        '<div class="body" role="main"><h3>1.1 Same words?</h3><p>First answer.</p>'
        '<section id="dup"><h3>1.2 One?</h3><p>One answer.</p></section>'
        '<section id="x"><span id="dup"></span>\n<h3>1.3 Two?</h3><p>Two answer.</p></section>'
        "<h3>Same words?</h3><p>Second answer.</p><h1>Another title</h1><p>Under it.</p>"
        "</div><p>Outside.</p>"
    )
    nsc.assert_slugs_and_repeats(page, qa, "Another title")
    assert "Outside." not in page
    # inline tags in a heading leave no space of their own; entities decoded; a number
    # without a closing dot, or with a letter, is a label; a number inside the text is not
    _, qa = ns.split_pma_faq(
        f'<div role="main"><h3>5.13 Why <em>is</em> {nsc.sphinx_code("a", "b")}&#8217;s '
        "output?</h3>"
        "<p>Text.</p><h3>1.17a.   Version 2.2 fails?</h3><p>Text.</p>"
        "<h3>Version 4.1 columns?</h3><p>Text.</p></div>"
    )
    assert [q for _, q, _ in qa] == [
        "Why is a b\u2019s output?",
        "Version 2.2 fails?",
        "Version 4.1 columns?",
    ]
    # a heading never closed holds no answer and does not swallow the entries after it
    page, qa = ns.split_pma_faq(
        '<div role="main"><h3>1.1 Open heading <p>Lost.</p>'
        '<section id="s"><span id="faq1-2"></span><h3>1.2 Closed?</h3><p>Kept.</p></section>'
        "</div>"
    )
    assert qa == [("faq1-2", "Closed?", "Kept.")]
    assert "Open heading" not in page and "Lost." not in page


_WORD = st.sampled_from(["mysql", "cookie", "export", "server", "table", "config", "import"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(_WORD, min_size=0, max_size=8),  # the title's words after the first
            st.booleans(),  # asked ("?") or stated
            st.booleans(),  # a span label before the heading
            st.booleans(),  # wrapped over two lines
            st.integers(min_value=0, max_value=2),  # the group it opens: none, or a new one
            st.lists(_WORD, min_size=0, max_size=20),  # the answer's words (may be none)
        ),
        max_size=8,
    )
)
def test_split_pma_faq_property(
    entries: list[tuple[list[str], bool, bool, bool, int, list[str]]],
) -> None:
    """Random numbered entries, asked or stated, labelled or not, wrapped or not, some opening
    a new group, some unanswered: one question per answered entry, in order, its label (else
    its section id) its id, its answer its text, in the page, without the number; no title
    left in the page (the sidebar's contents gone with the entries), every group kept."""
    spec, body = [], ""
    for k, (words, asked, label, wrapped, group, awords) in enumerate(entries):
        title = ("\n" if wrapped else " ").join([f"entry{k}x", *words]) + ("?" if asked else "")
        answer = " ".join(["Answer", *awords]) if awords else ""
        if group:
            body += f'<section id="g{k}"><h2>Group {k}x</h2>' + ("<p>Intro.</p>" * (group - 1))
        body += _entry(
            f"sid{k}",
            f"{k + 1}.{k}",
            title,
            f"<p>{answer}</p>\n" if answer else "",
            f"l{k}" if label else "",
        )
        spec.append((f"l{k}" if label else f"sid{k}", " ".join(title.split()), answer))
    page, qa = ns.split_pma_faq(_sphinx_page("FAQ", f"<h1>FAQ</h1>{body}", []))
    assert qa == [(k, t, a) for k, t, a in spec if a]
    for _, _, a in qa:
        assert a in page
    for _, t, _ in spec:
        assert t not in " ".join(page.split())
    for k, (_, _, _, _, group, _) in enumerate(entries):
        assert (f"## Group {k}x" in page) == bool(group)


# -- the set, built from a package tree shaped like Debian's phpmyadmin -------------------


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, page: str = PAGE) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.PMA_PACKAGE, "4:5.2.1+dfsg-1+deb12u1")
    doc: Path = root / ns.PMA_DOC
    html_dir = doc / ns.PMA_HTML
    for sub in ("_static", "_sources", "_images"):
        (html_dir / sub).mkdir(parents=True)
    (doc / "examples").mkdir()
    (html_dir / ns.PMA_FAQ).write_text(page, encoding="utf-8")
    (html_dir / "index.html").write_text(
        _sphinx_page(
            "Welcome",
            "<h1>Welcome to phpMyAdmin\u2019s documentation!</h1><p>Contents:</p>"
            '<ul><li class="toctree-l1"><a href="intro.html">Introduction</a></li>'
            '<li class="toctree-l2"><a href="faq.html#server">Server</a></li></ul>',
        ),
        encoding="utf-8",
    )
    (html_dir / "intro.html").write_text(
        _sphinx_page(
            "Introduction",
            "<h1>Introduction</h1><p>phpMyAdmin can manage a whole MySQL server.</p>"
            "<p>To support mysqli, see "
            '<a class="reference internal" href="faq.html#faq1-17a"><span>1.17a '
            "Client error</span></a> before upgrading.</p>"
            '<ul><li><a href="faq.html#faq6-3">6.3 Nulls</a> explains it.</li></ul>'
            '<p>The <a href="faq.html">FAQ page</a> answers more.</p>',
        ),
        encoding="utf-8",
    )
    (html_dir / "setup.html").write_text(
        _sphinx_page(
            "Installation",
            f"<h1>Installation</h1><p>People ask: {Q_GZIP} Install zlib.</p>"
            "<p>The setup script\u2019s wizard writes config.inc.php.</p>",
        ),
        encoding="utf-8",
    )
    (html_dir / "config.html").write_text(
        _sphinx_page("Configuration", "<h1>Configuration</h1><pre>" + "$cfg = 1;\n" * 20000)
    )
    (html_dir / "glossary.html").write_text(
        _sphinx_page("Glossary", "<h1>Glossary</h1><dl><dt>MySQL</dt><dd>A database.</dd></dl>")
    )
    for name in ("copyright", "genindex", "search"):
        (html_dir / f"{name}.html").write_text(
            _sphinx_page(name, f"<h1>{name}</h1><p>GPL and {name}</p>")
        )
    (html_dir / "_sources" / "faq.rst.txt").write_text(f"1.7 {Q_GZIP}\n---\n")
    (html_dir / "searchindex.js").write_text("Search.setIndex({})\n")
    (html_dir / "objects.inv").write_bytes(b"# Sphinx inventory\n")
    (html_dir / "_static" / "classic.css").write_text("body { color: black }\n")
    (doc / "README").write_text("phpMyAdmin - Readme\n\nA web interface for MySQL.\n")
    (doc / "README.Debian").write_text("phpmyadmin for Debian\n\nsudo a2enconf phpmyadmin\n")
    (doc / "CONTRIBUTING.md").write_text("# Contributing\n\nOpen a pull request.\n")
    (doc / "examples" / "config.sample.inc.php").write_text("<?php\n$cfg['blowfish_secret'];\n")
    return doc


@pytest.fixture
def doc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package tree as shipped (the FAQ page :data:`PAGE`), its documentation folder."""
    return _package(tmp_path, monkeypatch)


def test_pma_faq_set_from_a_package_tree(doc: Path) -> None:
    nset = ns.pma_faq_set()
    nsc.assert_package_set(
        nset,
        "phpmyadmin-faq",
        ids=[k for k, _ in IDS],
        files={"faq.md", "intro.md", "setup.md", "glossary.md", "README", "README.Debian"},
        source="faq.md",
        version="4:5.2.1+dfsg-1+deb12u1",
        too_long="config.html",
    )
    # UTF-8 read as such
    assert "na\u00efvely" in nset.files["faq.md"]
    assert "script\u2019s wizard" in nset.files["setup.md"]
    # an entry's "See also" link to another entry: the linked question scrubbed from the
    # answer judged and from the page, the box's words kept
    apache = next(q for q in nset.questions if q.qid.endswith(":faq1-2")).answers[0][0]
    assert "See also" in apache and "crashing" not in apache
    assert "crashing" not in nset.files["faq.md"]
    # a paragraph linking into an FAQ entry goes whole; a link into an entry elsewhere
    # loses its text; a link to the FAQ page keeps it; the rest of the page stays
    intro = nset.files["intro.md"]
    assert "whole MySQL server" in intro
    assert "mysqli" not in intro and "Nulls" not in intro
    assert "explains it." in intro and "FAQ page answers more" in intro
    # the page quoting a question: scrubbed, its other text kept
    assert "Install zlib." in nset.files["setup.md"]
    # the notes for users in; the developers' guide, the examples and the rest out
    assert nset.files["README.Debian"] == "phpmyadmin for Debian\n\nsudo a2enconf phpmyadmin\n"
    assert not any(
        "Contributing" in t or "blowfish" in t or "GPL" in t for t in nset.files.values()
    )
    assert "over 150000 chars: config.html" in nset.note and "README.Debian" in nset.note


def test_pma_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = PAGE.replace(
        "You tried to access MySQL with an old MySQL client library.", "Upgrade the client."
    )
    _package(tmp_path, monkeypatch, short)
    nsc.assert_left_out(ns.pma_faq_set(), Q_CLIENT, len(IDS) - 1)


def test_no_question_text_is_left_in_any_file(doc: Path) -> None:
    nsc.assert_leak_checked(
        ns.pma_faq_set(), {"faq.md": ns.fish_page_markdown(PAGE)}, [q for _, q in IDS]
    )


def test_pma_faq_set_halves_are_fixed_and_disjoint(doc: Path) -> None:
    more = _faq(
        security=[
            *SECURITY,
            (
                "how-can-i-protect-phpmyadmin-against-brute-force-attacks",
                "8.2",
                "How can I protect phpMyAdmin against brute force attacks?",
                "How can I protect phpMyAdmin against brute force attacks?",
                "<p>phpMyAdmin uses a captcha with cookie authentication.</p>\n",
                "faq8-2",
            ),
        ]
    )
    nsc.assert_halves_survive_an_added_question(
        ns.pma_faq_set,
        lambda: (doc / ns.PMA_HTML / ns.PMA_FAQ).write_text(more, encoding="utf-8"),
    )


def test_pma_faq_set_refuses_a_package_without_the_faq(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = unpacked_package(tmp_path, monkeypatch, ns.PMA_PACKAGE, "4:5.2.1+dfsg-1+deb12u1")
    (root / ns.PMA_DOC / ns.PMA_HTML).mkdir(parents=True)
    nsc.assert_refuses_without_faq(ns.pma_faq_set, "html/faq.html")
