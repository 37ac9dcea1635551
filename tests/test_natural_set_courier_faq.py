"""The ``courier-faq`` natural-question set (``bench/natural_sets.py``), its reading of the
Courier mail server's hand-written FAQ page and the question-leak check
(``bench/check_question_leaks.py``) on a small inline page shaped like Debian's
``courier-doc`` ships it (``/usr/share/doc/courier-doc/html/FAQ.html``: an ``<h1>`` title, a
contributors list, a "Table of contents:" paragraph over nested lists of the anchored
entries as in-page links, then ``<h2>`` sections of ``<h3>`` entries, anchored or not,
labelled "Q:" or not, wrapped over lines with ``<code>``/``<em>`` inside; one entry an
anchored ``<h2>``; "... rejects mail with the following error:" twice, each followed by the
``<blockquote>`` of a different error; "Can't log in" twice, under IMAP and under POP3;
answers of paragraphs, ``<pre>`` blocks, ``<h4>`` sub-headings, text straight after the
heading with no ``<p>``, a cross-reference quoting another question; an entry with no text)
beside the ``html/`` tree's other pages, the two link menus, an over-long page, an IETF
draft, the folder's README pages and notes, in a package tree laid out as ``courier-doc``
unpacks (marker present, nothing downloaded); offline, no embedding model, no test reads
the real package.

What the set's numbers rest on: no question's text is left in any file (the entries, the
contents list, a quoted error, a cross-reference, another page quoting one); each answer is
exactly the text under its question up to the next ``<h1>``-``<h3>``; ids are the FAQ's
anchors or the question's slug, so an added entry keeps the halves; an answer too short to
judge leaves the set but not the corpus's scrubbing.
"""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import natural_set_checks as nsc
import natural_sets as ns
from debian_package_double import unpacked_package

Q_LOOP = "The configure script is stuck in an infinite loop"
Q_GDBM = "Cannot find the GDBM library during compilation"
Q_OSX = "Compiling the Courier mail server-IMAP on OS/X"
Q_SLOW = "Why are my e-mails taking so long to send?"
Q_MX = (
    "The Courier mail server rejects mail with the following error: MX records for $domain "
    "violate section 3.3.9 of RFC 1035"
)
Q_517 = (
    "The Courier mail server rejects mail with the following error: 517 Syntax error - your "
    "mail software violates RFC 821."
)
Q_STRANGE = "The Courier mail server delivers ESMTP mail with a strange error message:"
Q_450 = "Server is not accepting any mail, returns a 450 Service unavailable error every time."
Q_RELAY = "How do I enable relaying for an IP address range?"
Q_LOGIN = "Can't log in"
Q_EMPTY = "Is this entry answered at all?"
Q_VDOM = "Using virtual domains"


def _contents(entries: list[tuple[str, str]]) -> str:
    """The FAQ's contents: a paragraph over nested lists of (anchor, title) links."""
    items = "\n".join(f'        <li><a href="#{a}">{t}</a></li>' for a, t in entries)
    return (
        "  <p>Table of contents:</p>\n\n  <ul>\n    <li>Configuration issues\n\n"
        f"      <ul>\n{items}\n      </ul>\n    </li>\n  </ul>\n\n"
    )


def _page(body: str, contents: list[tuple[str, str]]) -> str:
    return (
        '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN"\n'
        '    "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">\n\n'
        '<html xmlns="http://www.w3.org/1999/xhtml">\n<head>\n'
        '  <meta http-equiv="Content-Type" content=\n  "text/html; charset=us-ascii" />\n'
        "  <title>The Courier mail server FAQ</title>\n</head>\n\n<body>\n"
        "  <h1>The <em>Courier</em> mail server FAQ</h1>\n\n"
        "  <p>This is a beginning of a modest FAQ. Contributors:</p>\n\n  <ul>\n"
        "    <li><code>[PP]</code> - Patrick Price</li>\n  </ul>\n\n"
        f"{_contents(contents)}{body}</body>\n</html>\n"
    )


BODY = (
    "  <h2>Configuration and installation</h2>\n\n"
    '  <h3><a name="configloop" id="configloop">Q: The\n  <code>configure</code> script is '
    "stuck in an infinite\n  loop</a></h3>\n\n"
    "  <p>A: It's not. Each of the thirty modular pieces has its own\n  <code>configure</code> "
    "script, run recursively.</p>\n\n"
    "  <h3>Q: Cannot find the GDBM library during compilation</h3>\n\n"
    "  <p>A: Try setting <code>CPPFLAGS</code> and <code>LDFLAGS</code>:</p>\n  <pre>\n"
    'CPPFLAGS="-I /usr/local/include" ./configure\n</pre>\n\n'
    "  <p>Na\u00efve linkers need soft links in <code>/usr/lib</code>.</p>\n\n"
    '  <h2><a name="osx" id="osx">Compiling the <em>Courier</em> mail\n  server-IMAP on '
    "OS/X</a></h2>\n\n"
    "  <p>Set the RANLIB environment variable before running configure.</p>\n\n"
    "  <h2>ESMTP</h2>\n\n"
    '  <h3><a name="esmtptimeout" id="esmtptimeout">Why are my e-mails\n  taking so long to '
    "send?</a></h3>\n\n"
    "  <p>Several things happen when the server receives a connection on port 25.</p>\n\n"
    "  <h4>Reverse DNS</h4>\n\n  <p>A slow name server delays every connection.</p>\n\n"
    '  <h3><a name="esmtperr" id="esmtperr">Q: The <em>Courier</em> mail\n  server rejects '
    "mail with the following error:</a></h3>\n\n"
    "  <blockquote>\n    <code>MX records for $domain violate section 3.3.9 of RFC\n    "
    "1035</code>\n  </blockquote>\n\n"
    "  <p><code>[PP]</code> Cause: Invalid DNS MX Records for that domain.</p>\n\n"
    "  <h3>Q: The <em>Courier</em> mail server rejects mail with the\n  following error:</h3>"
    "\n\n  <blockquote>\n    <code>517 Syntax error - your mail software violates RFC\n    "
    "821.</code>\n  </blockquote>\n\n"
    "  <p><code>[PP]</code> Cause: Most often generated by WinCE gizmos.</p>\n\n"
    "  <h3>Q: The <em>Courier</em> mail server delivers ESMTP mail with\n  a strange error "
    "message:</h3>\n\n  <p>Mail received is replaced by the following text.</p>\n\n"
    "  <blockquote>\n    <p><code>I received the following message for delivery.</code></p>\n"
    "  </blockquote>\n\n"
    '  <h3><a name="450" id="450">Q: Server is not accepting any mail,\n  returns a <code>450 '
    "Service unavailable</code> error every\n  time.</a></h3>\n\n"
    "  <ul>\n    <li>The <code>authdaemond</code> process is not running.</li>\n  </ul>\n\n"
    '  <h3><a name="relay" id="relay">Q: How do I enable relaying for an\n  IP address '
    "range?</a></h3>Put the IP address range in the <code>smtpaccess</code>\n  directory, "
    "then run <code>makesmtpaccess</code>.\n\n"
    '  <h3><a name="unanswered" id="unanswered">Q: Is this entry answered at all?</a></h3>\n\n'
    "  <h2>IMAP</h2>\n\n"
    '  <h3><a name="imaplogin" id="imaplogin">Q: Can\'t log in</a></h3>\n\n'
    "  <p>A: Check <code>AUTHMODULES</code> in the <code>imapd</code> file.</p>\n\n"
    "  <h2>POP3</h2>\n\n"
    '  <h3><a name="pop3login" id="pop3login">Q: Can\'t log in</a></h3>\n\n'
    "  <p>A: Check <code>AUTHMODULES</code> in the <code>pop3d</code> file.</p>\n\n"
    "  <h2>Miscellaneous</h2>\n\n"
    '  <h3><a name="vdomains" id="vdomains">Q: Using virtual\n  domains</a></h3>\n\n'
    '  <p>Redirect the addresses in <code>aliases</code>. See "Q: How do I enable relaying '
    'for an IP address range?" for the relay side.</p>\n\n'
)
CONTENTS = [
    ("configloop", "The <code>configure</code> script is stuck in an infinite loop"),
    ("osx", "Compiling on OS/X"),
    ("esmtptimeout", "Why are my e-mails taking so long to send?"),
    ("imaplogin", "Can't login via IMAP"),
    ("pop3login", "Can't login via POP3"),
    ("relay", "How do I enable relaying for an IP address range?"),
]
PAGE = _page(BODY, CONTENTS)
IDS = [
    ("configloop", Q_LOOP),
    ("cannot-find-the-gdbm-library-during-comp", Q_GDBM),
    ("osx", Q_OSX),
    ("esmtptimeout", Q_SLOW),
    ("esmtperr", Q_MX),
    ("the-courier-mail-server-rejects-mail-wit", Q_517),
    ("the-courier-mail-server-delivers-esmtp-m", Q_STRANGE),
    ("450", Q_450),
    ("relay", Q_RELAY),
    ("imaplogin", Q_LOGIN),
    ("pop3login", Q_LOGIN),
    ("vdomains", Q_VDOM),
]


def test_split_courier_faq_questions_answers_and_ids() -> None:
    page, qa = ns.split_courier_faq(PAGE)
    assert [(k, q) for k, q, _ in qa] == IDS
    answers = {k: a for k, _, a in qa}
    assert nsc.flat(answers["configloop"]) == nsc.flat(
        "A: It's not. Each of the thirty modular pieces has its own configure script, run "
        "recursively."
    )
    assert 'CPPFLAGS="-I /usr/local/include" ./configure' in answers[IDS[1][0]]
    assert "Naïve linkers" in answers[IDS[1][0]]
    # an anchored <h2> is an entry; its answer stops at the next section title
    assert nsc.flat(answers["osx"]) == nsc.flat(
        "Set the RANLIB environment variable before running configure."
    )
    # an <h4> is a sub-heading of the answer
    slow = answers["esmtptimeout"]
    assert "Reverse DNS" in slow and "slow name server" in slow
    # the quoted error is the question's, the cause the answer's
    assert nsc.flat(answers["esmtperr"]) == nsc.flat(
        "[PP] Cause: Invalid DNS MX Records for that domain."
    )
    assert "RFC 821" not in answers[IDS[5][0]] and "WinCE" in answers[IDS[5][0]]
    # after a ":" question, a paragraph (not a quote) is the answer's, and its quote too
    strange = answers[IDS[6][0]]
    assert "replaced by the following text" in strange and "for delivery" in strange
    # text straight after the heading, with no <p>
    assert nsc.flat(answers["relay"]).startswith("put the ip address range")
    assert "AUTHMODULES" in answers["imaplogin"] and "imapd" in answers["imaplogin"]
    assert "pop3d" in answers["pop3login"] and "imapd" not in answers["pop3login"]
    # each answer stops at the next heading of level 1-3: no neighbour's or title's text
    assert "ESMTP" not in answers["osx"] and "POP3" not in answers["imaplogin"]
    assert "authdaemond" not in answers["relay"] and "IMAP" not in answers["relay"]
    for _, q, a in qa:
        assert a in page
        # the cross-reference in vdomains quotes Q_RELAY: scrubbed later
        assert nsc.flat(q) not in nsc.flat(page.replace(f"Q: {Q_RELAY}", ""))
    # the contents list goes (every anchored entry again), its own wordings too
    assert "Table of contents" not in page and "login via IMAP" not in page
    assert "Compiling on OS/X" not in page
    # the title, the contributors and the section titles stay; the Q: labels go
    assert "The Courier mail server FAQ" in page and "Patrick Price" in page
    for title in ("Configuration and installation", "ESMTP", "IMAP", "POP3", "Miscellaneous"):
        assert f"## {title}" in page
    assert "Q:" not in page.replace(f'"Q: {Q_RELAY}"', "")
    assert "violate section 3.3.9" not in page and "517 Syntax" not in page
    # an entry with nothing under it asks nothing and leaves the page all the same
    assert "answered at all" not in page


def test_split_courier_faq_edges() -> None:
    page, none = ns.split_courier_faq("<html><body><h1>Courier FAQ</h1><p>Prose.</p>")
    assert none == [] and "Prose." in page
    # an <h2> with no anchor is a section title and ends the answer above it; an <h4> is
    # answer text; a <blockquote> after a question not ending ":" is the answer's
    page, qa = ns.split_courier_faq(
        "<h3>Q: Asked here?</h3><blockquote>Quoted text.</blockquote><p>Text.</p>"
        "<h4>Sub</h4><p>More.</p><h2>Next section</h2><p>Under the section.</p>"
        '<h4><a name="deep">Deep</a></h4><p>Deeper.</p>'
    )
    assert [(k, q) for k, q, _ in qa] == [("asked-here", "Asked here?")]
    assert nsc.flat(qa[0][2]) == nsc.flat("Quoted text.\n\nText.\n\n#### Sub\n\nMore.")
    assert "## Next section" in page and "Under the section." in page and "Deeper." in page
    # a ":" question with no quote after it keeps its text; a quote later is answer text
    _, qa = ns.split_courier_faq(
        "<h3>Q: It fails with:</h3><p>Like this.</p><blockquote>err</blockquote>"
    )
    assert qa[0][1] == "It fails with:" and "err" in qa[0][2]
    # an inline tag before punctuation leaves no space before it
    _, qa = ns.split_courier_faq(
        "<h3>Q: Why does <code>makesmtpaccess</code>, run <em>twice</em>?</h3><p>Once.</p>"
    )
    assert qa[0][1] == "Why does makesmtpaccess, run twice?"
    # repeated anchors and repeated slugs get -2
    _, twice = ns.split_courier_faq(
        '<h3><a name="dup">Q: First one?</a></h3><p>One answer here.</p>'
        '<h3><a name="dup">Q: Second one?</a></h3><p>Another answer.</p>'
        "<h3>Q: Same words</h3><p>Third answer.</p><h3>Q: Same words</h3><p>Fourth.</p>"
    )
    assert [k for k, _, _ in twice] == ["dup", "dup-2", "same-words", "same-words-2"]
    # the contents list goes from its paragraph to the first heading only
    page, _ = ns.split_courier_faq(
        '<p>Intro.</p><p>Table of contents:</p><ul><li><a href="#a">Listed?</a></li></ul>'
        '<h2>Section</h2><p>Kept text.</p><h3><a name="a">Q: Listed?</a></h3><p>Answer.</p>'
    )
    assert "Intro." in page and "Listed?" not in page and "Kept text." in page


_WORD = st.sampled_from(["imap", "relay", "maildir", "courier", "esmtp", "quota", "webmail"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(_WORD, min_size=0, max_size=8),  # the title's words after the first
            st.booleans(),  # labelled "Q:"
            st.booleans(),  # anchored
            st.booleans(),  # wrapped over two lines
            st.lists(_WORD, min_size=0, max_size=20),  # the answer's words (may be none)
        ),
        max_size=8,
    )
)
def test_split_courier_faq_property(
    entries: list[tuple[list[str], bool, bool, bool, list[str]]],
) -> None:
    """Random entries under section titles, labelled or not, anchored or not, wrapped or
    not, some unanswered: one question per answered entry, in order, its anchor or slug its
    id, its answer its text, in the page; no title and no label left in it (the contents
    gone with the entries), the section titles kept."""
    body, spec, contents = "", [], []
    for k, (words, label, anchored, wrapped, awords) in enumerate(entries):
        title = ("\n  " if wrapped else " ").join([f"entry{k}x", *words]) + "?"
        head = ("Q: " if label else "") + title
        if anchored:
            head = f'<a name="anchor{k}" id="anchor{k}">{head}</a>'
            contents.append((f"anchor{k}", title))
        answer = " ".join(["Answer", *awords]) if awords else ""
        body += f"  <h2>Section {k}</h2>\n  <h3>{head}</h3>\n"
        body += f"  <p>{answer}</p>\n" if answer else ""
        flat_title = " ".join(title.split())
        spec.append((f"anchor{k}" if anchored else ns._slug(flat_title), flat_title, answer))
    page, qa = ns.split_courier_faq(_page(body, contents))
    assert qa == [(k, t, a) for k, t, a in spec if a]
    for _, _, a in qa:
        assert a in page
    for k, (_, t, _) in enumerate(spec):
        assert t not in " ".join(page.split())
        assert f"## Section {k}" in page
    assert "Q:" not in page


# -- the set, built from a package tree shaped like Debian's courier-doc -------------------


def _doc_page(title: str, body: str) -> str:
    return (
        '<html><head><meta http-equiv="Content-Type" content="text/html; charset=UTF-8">'
        f"<title>{title}</title></head><body><h1>{title}</h1>{body}</body></html>\n"
    )


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, page: str = PAGE) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.COURIER_PACKAGE, "1.0.16-3")
    doc: Path = root / ns.COURIER_DOC
    html = doc / ns.COURIER_HTML
    html.mkdir(parents=True)
    (html / ns.COURIER_FAQ).write_text(page, encoding="utf-8")
    (html / "makesmtpaccess.html").write_text(
        _doc_page(
            "makesmtpaccess",
            f"<p>People ask: {Q_RELAY} Put the range into smtpaccess with RELAYCLIENT.</p>"
            "<p>The file\u2019s lines are read in order.</p>",
        ),
        encoding="utf-8",
    )
    (html / "maildroptips.html").write_text(
        _doc_page("Maildrop tips and tricks.", "<p>Filter on the Subject header.</p>")
    )
    (html / "install.html").write_text(
        _doc_page("Installation", "<pre>" + "./configure --prefix=/usr/lib/courier\n" * 5000)
    )
    (html / "menu.html").write_text(_doc_page("Menu", '<a href="index.html">Courier</a>'))
    (html / "documentation.html").write_text(
        _doc_page("Documentation", '<ul><li><a href="courier.html">courier(8)</a></li></ul>')
    )
    (html / "draft-varshavchik-verp-smtpext.txt.gz").write_bytes(
        gzip.compress(b"Internet-Draft: the XVERP extension\n")
    )
    (html / "icon.gif").write_bytes(b"GIF89a")
    (html / "manpage.css").write_text("body { color: black }\n")
    (doc / "README.sharedfolders.html").write_text(
        _doc_page("Shared folders", "<p>Shared folders live in a shared index.</p>")
    )
    (doc / "README").write_text("Read INSTALL for installation instructions.\n")
    (doc / "BUGS.gz").write_bytes(gzip.compress(b"Pine chokes on whitespace.\n"))
    (doc / "AUTHORS").write_text("Sam Varshavchik\n")
    (doc / "changelog.gz").write_bytes(gzip.compress(b"1.0.16: fixes\n"))
    return doc


@pytest.fixture
def doc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package tree as shipped (the FAQ page :data:`PAGE`), its documentation folder."""
    return _package(tmp_path, monkeypatch)


def test_courier_faq_set_from_a_package_tree(doc: Path) -> None:
    nset = ns.courier_faq_set()
    nsc.assert_package_set(
        nset,
        "courier-faq",
        ids=[k for k, _ in IDS],
        files={
            "FAQ.md",
            "html/makesmtpaccess.md",
            "html/maildroptips.md",
            "README.sharedfolders.md",
            "README",
            "BUGS",
        },
        source="FAQ.md",
        version="1.0.16-3",
        too_long="html/install.html",
    )
    # UTF-8 read as such
    assert "Naïve linkers" in nset.files["FAQ.md"]
    assert "file\u2019s lines" in nset.files["html/makesmtpaccess.md"]
    # the page quoting a question: scrubbed, its other text kept
    assert "Put the range into smtpaccess" in nset.files["html/makesmtpaccess.md"]
    # the cross-reference in an answer quoting another question: scrubbed, the rest kept
    vdom = next(q for q in nset.questions if q.qid == "courier-faq:vdomains").answers[0][0]
    assert "aliases" in vdom and "relaying" not in vdom


def test_courier_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = PAGE.replace(
        "Set the RANLIB environment variable before running configure.", "Set RANLIB."
    )
    _package(tmp_path, monkeypatch, short)
    nsc.assert_left_out(ns.courier_faq_set(), Q_OSX, len(IDS) - 1)


def test_no_question_text_is_left_in_any_file(doc: Path) -> None:
    nsc.assert_leak_checked(
        ns.courier_faq_set(), {"faq.md": ns.page_to_markdown(PAGE)}, [q for _, q in IDS]
    )


def test_courier_faq_set_halves_are_fixed_and_disjoint(doc: Path) -> None:
    more = _page(
        BODY
        + "  <h3>Q: How do I set up a mailing list?</h3>\n\n"
        + "  <p>Use couriermlm to create the list directory and its messages.</p>\n",
        CONTENTS,
    )
    faq = doc / ns.COURIER_HTML / ns.COURIER_FAQ
    nsc.assert_halves_survive_an_added_question(
        ns.courier_faq_set, lambda: faq.write_text(more, encoding="utf-8")
    )


def test_courier_faq_set_refuses_a_package_without_the_faq(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = unpacked_package(tmp_path, monkeypatch, ns.COURIER_PACKAGE, "1.0.16-3")
    (root / ns.COURIER_DOC / ns.COURIER_HTML).mkdir(parents=True)
    nsc.assert_refuses_without_faq(ns.courier_faq_set, "html/FAQ.html")
