"""The ``apache-ssl-faq`` natural-question set (``bench/natural_sets.py``): the Apache HTTP
Server's SSL/TLS FAQ as Debian's ``apache2-doc`` ships it
(``/usr/share/doc/apache2-doc/manual/en/ssl/ssl_faq.html``: one page of the manual, the
manual's page chrome, ``<h2>`` group titles each over a contents list of links to its
``<h3 id=...>`` entries) read by Django's heading rule unchanged at level 3
(``split_heading_questions``) after XTerm's contents-list reading (``drop_anchor_lists``),
beside the FAQ's chapter (``manual/en/ssl/``), the ``mod_ssl`` reference and Debian's note,
on a small inline package tree of that shape (the generator's comment, a stylesheet and a
script, the menu line, the language picker, the quotation, the page's contents list, a
group's list of its entries, a question wrapped over two lines with ``<code>`` in it, a link
to a directive of another page, a ``<pre>`` example holding a ``#`` line, a one-word answer
too short to judge, the copyright footer; the chapter's other pages, the module reference
over the page limit, the French copy of the FAQ, a page of the rest of the manual,
``cgi-examples/``, the changelog and the copyright); offline, no embedding model, no test
reads the real package.

What the set's numbers rest on: every ``<h3>`` entry asks, its answer exactly the text under
it up to the next heading; the contents lists and every question's text leave the corpus;
the ``<h1>`` and ``<h2>`` titles, the chapter's pages (as a reader sees their text) and the
note are the corpus, the rest of the manual, the other languages, the examples, the
changelog and copyright are not; the halves are fixed.
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

VERSION = "2.4.68-1~deb12u1"

Q_PORTS = "Which port does HTTPS use?"
Q_PARALLEL = "Is it possible to provide HTTP and HTTPS from the same server?"
Q_PASSPHRASE = "How can I get rid of the pass-phrase dialog at Apache startup time?"
Q_MUTEX = "Why do I get permission errors related to SSLMutex when I start Apache?"
Q_CORE = "I had a core dump, can you help me?"
Q_SHORT = "Does mod_ssl support TLS 1.3?"
ASKED = [Q_MUTEX, Q_PARALLEL, Q_PORTS, Q_PASSPHRASE, Q_CORE]
ANSWERS = {  # ids: the questions' slugs, their first 40 characters
    "why-do-i-get-permission-errors-related-t": (
        "Errors such as ``mod_ssl: Child could not open SSLMutex lockfile'' are usually "
        "caused by overly restrictive permissions on the parent directories (see the User "
        "directive)."
    ),
    "is-it-possible-to-provide-http-and-https": (
        "Yes. HTTP and HTTPS use different server ports, so there is no direct conflict "
        "between them."
    ),
    "which-port-does-https-use": (
        "You can run HTTPS on any port, but the standards specify port 443."
    ),
    "how-can-i-get-rid-of-the-pass-phrase-dia": (
        "Remove the encryption from the RSA private key, keeping a copy:\n\n"
        " $ cp server.key server.key.org\n $ openssl rsa -in server.key.org -out server.key\n"
        " # the key is now readable by root only\n $ chmod 400 server.key\n\n"
        "Then restart the server."
    ),
    "i-had-a-core-dump-can-you-help-me": (
        "In general no, at least not unless you provide a backtrace of the code location "
        "where Apache dumped core."
    ),
}
FAQ = """<!DOCTYPE html SYSTEM "about:legacy-compat">
<html lang="en"><head><META http-equiv="Content-Type" content="text/html; charset=UTF-8">
<!--
              This file is generated from xml source: DO NOT EDIT
      -->
<title>SSL/TLS Strong Encryption: FAQ - Apache HTTP Server Version 2.4</title>
<link href="../../style/css/manual.css" rel="stylesheet" media="all" type="text/css">
<style>h3 { leftout: 0 }</style>
<script src="../../style/scripts/prettify.min.js">
</script>
</head>
<body id="manual-page"><div id="page-header">
<p class="menu"><a href="../mod/index.html">Modules</a> |
<a href="../glossary.html">Glossary</a></p>
<p class="apache">Apache HTTP Server Version 2.4</p>
<img alt="" src="../../images/feather.png"></div>
<div id="path">
<a href="https://www.apache.org/">Apache</a> &gt; <a href="./index.html">SSL/TLS</a></div>
<div id="page-content"><div id="preamble"><h1>SSL/TLS Strong Encryption: FAQ</h1>
<div class="toplang">
<p><span>Available Languages: </span><a href="../../en/ssl/ssl_faq.html"
title="English">&nbsp;en&nbsp;</a> |
<a href="../../fr/ssl/ssl_faq.html" hreflang="fr" title="Fran&ccedil;ais">&nbsp;fr&nbsp;</a></p>
</div>
<blockquote>
<p>The wise man doesn't give the right answers,
he poses the right questions.</p>
</blockquote>
</div>
<div id="quickview"><ul id="toc">
<li><img alt="" src="../../images/down.gif"> <a href="#installation">Installation</a></li>
<li><img alt="" src="../../images/down.gif"> <a href="#aboutconfig">Configuration</a></li>
<li><img alt="" src="../../images/down.gif"> <a href="#support">mod_ssl Support</a></li>
</ul></div>
<div class="section">
<h2 id="installation">Installation <a title="Permanent link" href="#installation"
class="permalink">&para;</a></h2>
<ul>
<li><a href="#mutex">Why do I get permission errors related to
SSLMutex when I start Apache?</a></li>
</ul>

<h3 id="mutex">Why do I get permission errors related to
        <code>SSLMutex</code> when I start Apache?</h3>
    <p>Errors such as ``<code>mod_ssl: Child could not open
    SSLMutex lockfile</code>'' are usually
    caused by overly restrictive permissions on the <em>parent</em> directories
    (see the <code class="directive"><a href="../mod/mod_unixd.html#user">User</a></code>
    directive).</p>
</div>
<div class="section">
<h2 id="aboutconfig">Configuration <a title="Permanent link" href="#aboutconfig"
class="permalink">&para;</a></h2>
<ul>
<li><a href="#parallel">Is it possible to provide HTTP and HTTPS from the same
server?</a></li>
<li><a href="#ports">Which port does HTTPS use?</a></li>
<li><a href="#tls13">Does mod_ssl support TLS 1.3?</a></li>
<li><a href="#removepassphrase">How can I get rid of the pass-phrase dialog at
Apache startup time?</a></li>
</ul>

<h3 id="parallel">Is it possible to provide HTTP and HTTPS from the same
server?</h3>
    <p>Yes. HTTP and HTTPS use different server ports, so there is no direct
    conflict between them.</p>

<h3 id="ports">Which port does HTTPS use?</h3>
    <p>You can run HTTPS on any port, but the standards specify port 443.</p>

<h3 id="tls13">Does mod_ssl support TLS 1.3?</h3>
    <p>Yes.</p>

<h3 id="removepassphrase">How can I get rid of the pass-phrase dialog at
    Apache startup time?</h3>
    <p>Remove the encryption from the RSA private key, keeping a copy:</p>
    <div class="example"><p><code>
    $ cp server.key server.key.org<br>
    $ openssl rsa -in server.key.org -out server.key<br>
    # the key is now readable by root only<br>
    $ chmod 400 server.key
    </code></p></div>
    <p>Then restart the server.</p>
</div>
<div class="section">
<h2 id="support">mod_ssl Support <a title="Permanent link" href="#support"
class="permalink">&para;</a></h2>
<ul>
<li><a href="#coredumphelp">I had a core dump, can you help me?</a></li>
</ul>

<h3 id="coredumphelp">I had a core dump, can you help me?</h3>
    <p>In general no, at least not unless you provide a backtrace of the code
    location where Apache dumped core.</p>
</div></div>
<div class="bottomlang">
<p><span>Available Languages: </span><a href="../../en/ssl/ssl_faq.html"
title="English">&nbsp;en&nbsp;</a> |
<a href="../../fr/ssl/ssl_faq.html" hreflang="fr" title="Fran&ccedil;ais">&nbsp;fr&nbsp;</a></p>
</div><div id="footer">
<p class="apache">Copyright 2026 The Apache Software Foundation.</p>
</div><script type="text/javascript"><!--//--><![CDATA[//><!--
var leftout = 1;
//--><!]]></script>
</body></html>
"""
SHIPPED = {"ssl/ssl_faq.html": FAQ}


def _page(title: str, body: str) -> str:
    """A page of the manual in its chrome (the generator's comment, the stylesheet, the menu
    line, the language picker, the footer)."""
    return (
        '<!DOCTYPE html SYSTEM "about:legacy-compat">\n<html lang="en"><head>\n'
        "<!-- This file is generated from xml source: DO NOT EDIT -->\n"
        f"<title>{title} - Apache HTTP Server Version 2.4</title>\n"
        '<link href="../../style/css/manual.css" rel="stylesheet" type="text/css">\n'
        '</head><body id="manual-page"><div id="page-header">\n'
        '<p class="menu"><a href="../mod/index.html">Modules</a></p></div>\n'
        f'<div id="page-content"><div id="preamble"><h1>{title}</h1>\n'
        '<div class="toplang"><p><span>Available Languages: </span>'
        '<a href="../../en/ssl/index.html">&nbsp;en&nbsp;</a></p></div>\n'
        f"{body}\n</div></div>"
        '<div id="footer"><p class="apache">Copyright 2026 The Apache Software '
        "Foundation.</p></div></body></html>\n"
    )


PAGES = {
    "ssl/index.html": _page(
        "Apache SSL/TLS Encryption",
        '<p>The Apache HTTP Server module <a href="../mod/mod_ssl.html">mod_ssl</a> '
        "provides an interface to the OpenSSL library.</p>\n"
        '<ul><li><a href="ssl_intro.html">Introduction</a></li>\n'
        '<li><a href="ssl_faq.html">Frequently Asked Questions</a></li></ul>',
    ),
    "ssl/ssl_intro.html": _page(
        "SSL/TLS Strong Encryption: An Introduction",
        '<h2 id="cryptographictech">Cryptographic Techniques</h2>\n'
        "<p>A certificate associates a public key with the real identity of an "
        "individual.</p>",
    ),
    "ssl/ssl_compat.html": _page(
        "SSL/TLS Strong Encryption: Compatibility",
        "<p>This page covers backwards compatibility between mod_ssl and other SSL solutions.</p>",
    ),
    "ssl/ssl_howto.html": _page(
        "SSL/TLS Strong Encryption: How-To",
        '<h2 id="configexample">Basic Configuration Example</h2>\n'
        "<pre>Listen 443\n# the port HTTPS servers listen on\nSSLEngine on</pre>",
    ),
}
MOD_SSL = _page("Apache Module mod_ssl", "<p>" + "SSLEngine directive text. " * 6000 + "</p>")
FILES = {
    "FAQ.md",
    "ssl/index.md",
    "ssl/ssl_intro.md",
    "ssl/ssl_compat.md",
    "ssl/ssl_howto.md",
    "NEWS.Debian",
}


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package as shipped: the English manual's SSL chapter, the FAQ among it; the module
    reference (over the page limit); the French copy of the FAQ; a page of the rest of the
    manual; the stylesheet; ``cgi-examples/``; Debian's note, the changelogs and the
    copyright."""
    root = unpacked_package(tmp_path, monkeypatch, ns.APACHE_SSL_PACKAGE, VERSION)
    doc = root / ns.APACHE_SSL_DOC
    en = doc / ns.APACHE_SSL_MANUAL
    (en / "ssl").mkdir(parents=True)
    (en / "mod").mkdir()
    (en / "ssl/ssl_faq.html").write_text(FAQ, encoding="utf-8")
    for rel, page in PAGES.items():
        (en / rel).write_text(page, encoding="utf-8")
    (en / "mod/mod_ssl.html").write_text(MOD_SSL, encoding="utf-8")
    (en / "mod/mod_unixd.html").write_text(_page("leftout", "<p>leftout</p>"), encoding="utf-8")
    (en / "index.html").write_text(_page("leftout", "<p>leftout</p>"), encoding="utf-8")
    (doc / "manual/fr/ssl").mkdir(parents=True)
    (doc / "manual/fr/ssl/ssl_faq.html").write_text(
        FAQ.replace("Which port", "leftout Which port"), encoding="utf-8"
    )
    (doc / "manual/style/css").mkdir(parents=True)
    (doc / "manual/style/css/manual.css").write_text("leftout { }\n", encoding="utf-8")
    (doc / "cgi-examples").mkdir()
    (doc / "cgi-examples/printenv").write_text("#!/usr/bin/perl\n# leftout\n")
    write_gz(
        doc / "NEWS.Debian.gz",
        "apache2-doc (2.4.1-1) experimental\n\n  * The manual moved to the apache2-doc "
        "package's manual/ folder.\n",
    )
    write_gz(doc / "changelog.Debian.gz", "leftout changes\n")
    write_gz(doc / "changelog.gz", "leftout upstream changes\n")
    (doc / "copyright").write_text("leftout\n", encoding="utf-8")
    return doc


@pytest.fixture
def doc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return _package(tmp_path, monkeypatch)


def test_apache_ssl_faq_set_from_a_package_tree(doc: Path) -> None:
    nset = ns.apache_ssl_faq_set()
    nsc.assert_package_set(
        nset,
        "apache-ssl-faq",
        ids=list(ANSWERS),
        files=FILES,
        source="FAQ.md",
        version=VERSION,
        too_long="mod/mod_ssl.html",
        answers=ANSWERS,
    )
    # every <h3> entry asks, in order, its markup read as text, wrapped lines joined
    assert [q.text for q in nset.questions] == ASKED
    faq = nset.files["FAQ.md"]
    # the <h1> and <h2> titles stay, no ### entry is left, every contents list is gone
    assert "# SSL/TLS Strong Encryption: FAQ\n" in faq
    assert "## Installation ¶\n\nErrors such as" in faq
    assert "## Configuration ¶\n\nYes. HTTP and HTTPS" in faq
    assert "## mod_ssl Support ¶\n\nIn general no" in faq
    assert not re.search(r"(?m)^### ", faq)
    assert not re.search(r"(?m)^- ", faq)
    # the page's content alone: the menu, path, language pickers, footer, stylesheets and
    # scripts are out; the last answer ends with its own text, not the footer
    assert faq.startswith("# SSL/TLS Strong Encryption: FAQ\n\nThe wise man doesn't give")
    assert faq.endswith("where Apache dumped core.\n")
    for chrome in ("Modules", "Glossary", "Version 2.4", "Available Languages", "Copyright"):
        assert chrome not in " ".join(nset.files.values())
    # the left-out entry's one-word answer stays in the page, between its neighbours'
    assert "specify port 443.\n\nYes.\n\nRemove the encryption" in faq
    # the chapter's pages as text, their code kept with its # line
    assert "provides an interface to the OpenSSL library." in nset.files["ssl/index.md"]
    assert "## Cryptographic Techniques" in nset.files["ssl/ssl_intro.md"]
    assert "Listen 443\n# the port HTTPS servers listen on\n" in nset.files["ssl/ssl_howto.md"]
    assert "manual/ folder." in nset.files["NEWS.Debian"]
    # the rest of the manual, the French copy, the stylesheets, scripts, examples, the
    # changelogs and the copyright are out
    assert "leftout" not in " ".join(nset.files.values())
    assert "SSLEngine directive text" not in " ".join(nset.files.values())
    assert "ssl/ssl_howto.md" in nset.note and "NEWS.Debian" in nset.note
    nsc.assert_left_out(nset, Q_SHORT, len(ASKED))


def test_no_question_text_is_left_in_any_file(doc: Path) -> None:
    nsc.assert_leak_checked(ns.apache_ssl_faq_set(), SHIPPED, [*ASKED, Q_SHORT], is_html=True)


def test_apache_ssl_faq_set_halves_are_fixed_and_disjoint(doc: Path) -> None:
    more = FAQ.replace(
        '<h3 id="coredumphelp">',
        '<h3 id="backtrace">How do I get a backtrace, to help find the reason for my core '
        "dump?</h3>\n<p>Build with debugging symbols, reproduce the crash, then run gdb on "
        'the core file.</p>\n<h3 id="coredumphelp">',
    )
    assert more != FAQ
    nsc.assert_halves_survive_an_added_question(
        ns.apache_ssl_faq_set,
        lambda: (doc / ns.APACHE_SSL_MANUAL / "ssl/ssl_faq.html").write_text(
            more, encoding="utf-8"
        ),
    )


def test_apache_ssl_faq_set_refuses_a_package_without_the_faq(doc: Path) -> None:
    (doc / ns.APACHE_SSL_FAQ).unlink()
    nsc.assert_refuses_without_faq(ns.apache_ssl_faq_set, ns.APACHE_SSL_FAQ)


_WORD = st.sampled_from(["https", "port", "certificate", "key", "cipher", "vhost", "x2"])
_WORDS = st.lists(_WORD, min_size=1, max_size=5)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(min_value=1, max_value=3), _WORDS, st.lists(_WORDS, max_size=3)),
        min_size=1,
        max_size=8,
    ),
    st.booleans(),
)
def test_split_apache_ssl_faq_is_django_rule_at_level_3_property(
    entries: list[tuple[int, list[str], list[list[str]]]], contents: bool
) -> None:
    """Random FAQ pages shaped as Apache's: ``<h1>`` and ``<h2>`` titles (text or none under
    them) and ``<h3 id=...>`` entries (one to three paragraphs each), each ``<h2>`` perhaps
    over a list of links to the entries that follow it: exactly Django's rule at level 3
    (every ``<h3>`` asks, its answer its paragraphs; every ``<h1>`` and ``<h2>`` stays with
    its text), the contents lists gone, ids the slugs with repeats told apart, answers in
    the page, no question left in it."""
    levels: list[int] = []
    titles: list[str] = []
    bodies: list[str] = []
    html: list[str] = []
    for n, (level, title, paras) in enumerate(entries):
        if level == 3 and not paras:
            paras = [["answer"]]
        text = f"t{n} {' '.join(title)}" + ("?" if level == 3 else "")
        levels.append(level)
        titles.append(text)
        bodies.append("\n\n".join(" ".join(p) for p in paras))
        html.append(f'<h{level} id="e{n}">{text}</h{level}>')
        if level == 2 and contents:
            following = []
            for j in range(n + 1, len(entries)):
                if entries[j][0] < 3:
                    break
                following.append(f'<li><a href="#e{j}">t{j} {" ".join(entries[j][1])}?</a></li>')
            if following:
                html.append(f"<ul>{''.join(following)}</ul>")
        html.append("".join(f"<p>{' '.join(p)}</p>" for p in paras))
    page, qa = ns.split_apache_ssl_faq(f"<html><body>{''.join(html)}</body></html>")
    asked = nsc.assert_heading_rule_split(
        levels,
        titles,
        bodies,
        lambda k: levels[k] == 3,
        page,
        [(ns._slug(q), q, a) for _, q, a in qa],
    )
    assert asked == {k for k, lv in enumerate(levels) if lv == 3}
    seen: dict[str, int] = {}
    assert [k for k, _, _ in qa] == [ns._repeat_id(seen, ns._slug(q)) for _, q, _ in qa]
    assert not re.search(r"(?m)^- ", page)  # no contents entry left


_CONTENT = st.lists(
    st.lists(st.sampled_from(["ssl", "engine", "443", "cipher", "key", "x2"]), min_size=1),
    min_size=1,
    max_size=5,
)
_CHROME = st.lists(st.sampled_from(["menu", "modules", "glossary", "lang", "copyright"]))


@settings(max_examples=150, deadline=None)
@given(_CONTENT, _CHROME, _CHROME, _CHROME, st.booleans(), st.booleans())
def test_apache_manual_main_keeps_the_content_alone_property(
    paras: list[list[str]],
    menu: list[str],
    picker: list[str],
    footer: list[str],
    toplang: bool,
    bottomlang: bool,
) -> None:
    """Random manual pages: the chrome's words (a menu line and path above, perhaps a
    language picker at the top of the content and one under it, the footer) around a
    content ``<div>`` of paragraphs: the page read after :func:`apache_manual_main` holds
    exactly the content's words in order, none of the chrome's; a page without the content
    ``<div>`` is returned whole."""
    top = f'<div class="toplang"><p>{" ".join(picker)}</p>\n</div>' if toplang else ""
    bottom = f'<div class="bottomlang"><p>{" ".join(picker)}</p></div>' if bottomlang else ""
    body = "".join(f"<p>{' '.join(p)}</p>\n" for p in paras)
    page = (
        f'<html><body><div id="page-header"><p class="menu">{" ".join(menu)}</p></div>'
        f'<div id="path">{" ".join(menu)}</div>\n<div id="page-content">'
        f'<div id="preamble">{top}{body}</div></div>\n{bottom}'
        f'<div id="footer"><p class="apache">{" ".join(footer)}</p></div></body></html>'
    )
    words = re.findall(r"\w+", ns.page_to_markdown(ns.apache_manual_main(page)))
    assert words == [w for p in paras for w in p]
    bare = page.replace('id="page-content"', 'id="other"')
    assert ns.apache_manual_main(bare) == bare
