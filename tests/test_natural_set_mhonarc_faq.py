"""The ``mhonarc-faq`` natural-question set (``bench/natural_sets.py``), its reading of
MHonArc's hand-written HTML FAQ (``split_mhonarc_faq``) and the question-leak check
(``bench/check_question_leaks.py``) on small inline pages shaped as Debian's ``mhonarc``
ships them (``/usr/share/doc/mhonarc/faq/<topic>.html``, ISO-8859-1: the navigation buttons
between ``<!--X-NavButtons-Start-->`` and ``End`` above and below the text, a rule comment,
the topic's ``<h2>``, the page's contents list between ``<!--X-TOC-Start-->`` and ``End``,
then entries each after a ``<!-- ??? -->`` comment and a rule, an ``<h3><b><a
name=...>`` question set in a table beside the FAQ's icon; questions with quotes, ``&lt;``
entities, ``<tt>``, a double space; two entries sharing an anchor as the shipped
``parsedate`` pair does; answers with ``<pre class="shell">`` commands holding links, a
NOTE table, a list; an unanswered entry; after the last a rule, the buttons again and the
``<address>`` footer with the date and copyright) beside the FAQ's "About" page (topic
titles, nothing asked), its contents page, the manual's pages, a resource page, an example
page, notes and a man page, with the pages, folders and notes to be left out, in a package
tree laid out as the package unpacks (marker present, nothing downloaded); offline, no
embedding model, no test reads the real package.

What the set's numbers rest on: no question's text is left in any file (the entries, the
contents lists, the FAQ's contents page, a manual page quoting one); each answer is exactly
the text after its question up to the next or the footer; ids are the topic page and the
FAQ's anchor, a repeat ``-2``, unique across pages that reuse an anchor, so an added entry
keeps the halves; an answer too short to judge leaves the set but not the corpus's
scrubbing.
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

NAV = (
    "<!--X-NavButtons-Start-->\n"
    '<table width="100%"><tr><td align="left"><nobr>[<a href="envs.html">Prev</a>]</nobr>'
    '</td><td align="center" width="100%">[<a href="faq.html">TOC</a>][<a href="../mhonarc'
    '.html">Manual</a>][<a href="http://www.mhonarc.org/">Home</a>]</td><td align="right">'
    '<nobr>[<a href="archives.html">Next</a>]</nobr></td></tr></table>\n</p>\n'
    "<!--X-NavButtons-End-->\n"
)
RULE = "<!-- " + "=" * 69 + " -->\n"
ENTRY_RULE = "<!-- " + "?" * 63 + " -->\n<hr noshade size=1>\n"
FOOTER = (
    '<hr>\n<address>\n$Date: 2011/01/01 02:43:26 $ <br>\n<img align="top" src="monicon.png" '
    'alt="">\n<a href="http://www.mhonarc.org/"\n><strong>MHonArc</strong></a><br>\n'
    'Copyright &#169; 1997-1999, <a href="http://www.earlhood.com/"\n>Earl Hood</a>\n'
    "</address>\n</body>\n</html>\n"
)


def _entry(anchor: str, question: str, answer: str) -> str:
    """One FAQ entry as shipped: the rule comment, the icon table holding the ``<h3>``."""
    return (
        f'{ENTRY_RULE}<table border=0>\n<tr valign=baseline><td><img src="monicon.png" '
        f'align="bottom" alt=""></td><td>\n<h3><b><a name="{anchor}">{question}</a></b></h3>\n'
        f"</td></tr></table>\n\n{answer}\n\n"
    )


def _topic(title: str, anchor: str, entries: list[tuple[str, str, str]]) -> str:
    """A topic page of the FAQ: (anchor, question HTML, answer HTML) entries."""
    toc = "\n".join(f'<li><a href="#{a}">{q}</a></li>' for a, q, _ in entries)
    return (
        f"<HTML>\n<HEAD>\n<TITLE>MHonArc FAQ: {title}</TITLE></HEAD>\n"
        '<link rel="stylesheet" type="text/css" href="../docstyles.css">\n<BODY>\n\n'
        f'{NAV}\n{RULE}<HR>\n<H2><a name="{anchor}">{title}</a></H2>\n\n'
        f"<!--X-TOC-Start-->\n<ul>\n{toc}\n</ul>\n<!--X-TOC-End-->\n\n"
        + "".join(_entry(*e) for e in entries)
        + f"{RULE}<hr>\n\n{NAV}\n{FOOTER}"
    )


Q_RESOURCES = 'What are "resources"?'
Q_NIL = "How do you set a resource to nil?"
Q_RESET = "How do I reset an archive's resources to the default values?"
Q_PRE = "Can the <PRE> tags be removed from converted messages?"
Q_PARSE = 'Why am I getting "Could not parse date for message ..."?'
Q_FROM = 'Why doesn\'t MHonArc extract the date from "From ..." line?'
Q_SETUID = "Is it okay to run mhonarc setuid?"
Q_SAFE = "So it is safe. How do I do it?"
Q_EMPTY = "Is this entry answered at all?"

USAGE = _topic(
    "General Usage",
    "genusage",
    [
        (
            "resources",
            "What are &quot;resources&quot;?",
            "<p>The behavior of MHonArc is controled by <em>resources</em>.\nResources are "
            "set by command-line options, environment\nvariables, or a resource file.</p>",
        ),
        (
            "nilresource",
            Q_NIL,
            '<p>For page layout resources, do something like this:\n</p>\n<pre class="code">\n'
            "<b>&lt;BotLinks&gt;</b>\n\n<b>&lt;/BotLinks&gt;</b>\n</pre>\n"
            '<table class="caution" width="100%">\n<tr valign="baseline">\n'
            '<td><strong style="color: red;">WARNING:</strong></td>\n<td width="100%"><p>\n'
            "Only do the above for page layout related resources.\n</p>\n</td>\n</tr>\n</table>",
        ),
        (
            "todefaults",
            Q_RESET,
            '<p>The following two commands will reset an archive:\n</p>\n<pre class="shell">\n'
            'prompt&gt; <b>mha-dbedit <a class="shell" href="../resources/saveresources.html">'
            "-nosaveresources</a> <var>/path/to/your/archive</var></b>\n</pre>",
        ),
        ("unanswered", Q_EMPTY, ""),
        (
            "parsedate",
            "Why am I getting &quot;Could not parse date for message ...&quot;?",
            "<p>MHonArc could not find a date it understands in the message header.</p>",
        ),
        (
            "parsedate",
            "Why doesn't MHonArc extract the date from &quot;From ...&quot; line?",
            "<p>Set the DATEFIELDS resource so the From line is read\nas well as the "
            "Date field.</p>",
        ),
    ],
)
SECURITY = _topic(
    "Security",
    "security",
    [
        (
            "suid",
            "Is it okay to run <tt>mhonarc</tt> setuid?",
            "<p>No. MHonArc was not written for raised privileges (Fran\u00e7ois checked).</p>",
        ),
        (
            "forward",
            "So it is safe.  How do I do it?",
            "<ul>\n<li>Pipe each message to mhonarc with -add.</li>\n"
            "<li>Lock the archive while it runs.</li>\n</ul>",
        ),
    ],
)
MIME = _topic(
    "MIME",
    "mime",
    [
        (
            "removepre",
            "Can the &lt;PRE&gt; tags be removed from converted messages?",
            "<p>Yes: set the <code>nonfixed</code> option of the text/plain filter.</p>",
        ),
        (
            "suid",
            "Is this anchor reused on another page?",
            "<p>Yes, anchors repeat across the topic pages of the FAQ.</p>",
        ),
    ],
)
Q_REUSED = "Is this anchor reused on another page?"
ASKED_USAGE = (Q_RESOURCES, Q_NIL, Q_RESET, Q_PARSE, Q_FROM)
ANSWERS_USAGE = {
    "resources": (
        "The behavior of MHonArc is controled by resources. Resources are set by command-line "
        "options, environment variables, or a resource file."
    ),
    "nilresource": (
        "For page layout resources, do something like this:\n\n```\n\n<BotLinks>\n\n"
        "</BotLinks>\n\n```\n\n  | WARNING:  |\n Only do the above for page layout related "
        "resources."
    ),
    "todefaults": (
        "The following two commands will reset an archive:\n\n```\n\nprompt> mha-dbedit "
        "-nosaveresources /path/to/your/archive\n\n```"
    ),
    "parsedate": "MHonArc could not find a date it understands in the message header.",
    "parsedate-2": (
        "Set the DATEFIELDS resource so the From line is read as well as the Date field."
    ),
}


def test_split_mhonarc_faq_questions_answers_and_ids() -> None:
    page, qa = ns.split_mhonarc_faq(USAGE)
    # every <h3> a question (tags removed, entities read); ids the anchors, the repeat -2;
    # each answer the text after it up to the next entry or the footer
    nsc.assert_split_answers(page, qa, ASKED_USAGE, ANSWERS_USAGE)
    # the contents list, the buttons and the unanswered entry leave the page; the topic's
    # title stays, in no answer; the footer (<address>: date, copyright) is in no answer
    # and, as every page's <address>, not in the page
    assert "answered at all" not in page and "Prev" not in page and "Manual" not in page
    assert "## General Usage" in page and page.rstrip().endswith("as well as the Date field.")
    assert all("Earl Hood" not in a and "2011" not in a for *_, a in qa)
    assert "Earl Hood" not in page and all("General Usage" not in a for *_, a in qa)
    # no table cell of the icon is left behind an answer
    assert all(not a.rstrip().endswith("|") for *_, a in qa)


def test_split_mhonarc_faq_inline_tags_and_spaces() -> None:
    _, security = ns.split_mhonarc_faq(SECURITY)
    assert [(k, q) for k, q, _ in security] == [("suid", Q_SETUID), ("forward", Q_SAFE)]
    assert (
        security[1][2]
        == "- Pipe each message to mhonarc with -add.\n\n- Lock the archive while it runs."
    )
    _, mime = ns.split_mhonarc_faq(MIME)
    assert [q for _, q, _ in mime] == [Q_PRE, Q_REUSED]


def test_split_mhonarc_faq_edges() -> None:
    # no entry: the page kept, nothing asked; an <h3> wrapped over two lines is text; an
    # <h3> without an anchor is "Q", a repeat "-2"; with no footer the last answer runs to
    # the end; an <h3> outside an icon table is a question all the same
    page, none = ns.split_mhonarc_faq("<p>Notes only.</p>\n<h3>Not\nasked?</h3>\n<p>Text.</p>")
    assert none == [] and "Notes only." in page and "Not asked?" in page
    page, qa = ns.split_mhonarc_faq(
        "<h3><b>One?</b></h3>\n<p>First answer here.</p>\n"
        "<h3>Two?</h3>\n<p>Second answer here.</p>\n"
        + _entry("three", "Three?", "<p>Third answer here.</p>")
    )
    assert qa == [
        ("Q", "One?", "First answer here."),
        ("Q-2", "Two?", "Second answer here."),
        ("three", "Three?", "Third answer here."),
    ]
    assert page == "First answer here.\n\nSecond answer here.\n\nThird answer here.\n"


_WORD = st.sampled_from(["archive", "resource", "thread", "index", "mime", "filter", "mbox"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(_WORD, min_size=1, max_size=10),  # the question's words
            st.integers(min_value=0, max_value=2),  # anchor: its own, a shared one, none
            st.booleans(),  # set in the icon table
            st.lists(_WORD, min_size=0, max_size=16),  # the answer's words (may be none)
        ),
        min_size=1,
        max_size=8,
    )
)
def test_split_mhonarc_faq_property(entries: list[tuple[list[str], int, bool, list[str]]]) -> None:
    """Random entries listed in the contents and asked after it, with their own anchor, a
    shared one or none, in the icon table or bare, some unanswered, before the footer: one
    question per answered entry, in order, its id the anchor (``Q`` without, a repeat
    ``-2``), the text after it its answer, in the page; no question's word left in it."""
    toc, body, expected, seen = "", "", [], {}
    for n, (qwords, anchored, boxed, awords) in enumerate(entries, start=1):
        question = " ".join([f"entry{n}x", *qwords]) + "?"
        answer = " ".join(["Answer", *awords]) if awords else ""
        anchor = f"q{n}" if anchored == 0 else "shared"
        toc += f'<li><a href="#{anchor}">{question}</a></li>\n'
        if boxed:  # (as shipped: the icon table, always an anchor)
            body += _entry(anchor, question, f"<p>{answer}</p>" if answer else "")
            key = anchor
        else:
            head = f'<a name="{anchor}">{question}</a>' if anchored < 2 else question
            body += f"<hr>\n<h3><b>{head}</b></h3>\n" + (f"<p>{answer}</p>\n" if answer else "")
            key = anchor if anchored < 2 else "Q"
        if answer:
            expected.append((ns._repeat_id(seen, key), question, answer))
    page, qa = ns.split_mhonarc_faq(
        f"{NAV}<H2>Topic</H2>\n<!--X-TOC-Start-->\n<ul>\n{toc}</ul>\n<!--X-TOC-End-->\n"
        f"{body}{RULE}<hr>\n{NAV}{FOOTER}"
    )
    nsc.assert_random_split(page, qa, expected)
    assert "Earl Hood" not in page and "Prev" not in page


# -- the set, built from a package tree shaped like Debian's mhonarc ----------------------

ABOUT = _topic(
    "About the FAQ",
    "aboutfaq",
    [
        ("summary", "Summary", "<p>This documents contains answers to questions on MHonArc.</p>"),
        ("author", "Author", "<p>The FAQ is maintained by Earl Hood, the author.</p>"),
    ],
)
_MAN = (
    '.TH MHONARC 1 "2014-04-22" "perl v5.10.1" "User Contributed Perl Documentation"\n'
    ".SH NAME\nmhonarc \\- mail-to-HTML converter\n.SH SYNOPSIS\n.B mhonarc\n[options]\n"
    ".SH DESCRIPTION\nMHonArc converts mail messages into HTML archives.\n"
)


def _page(title: str, body: str) -> str:
    return f"<html><head><title>{title}</title></head><body>{NAV}{body}{NAV}</body></html>\n"


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, usage: str = USAGE) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.MHONARC_PACKAGE, "2.6.19-2.2")
    doc: Path = root / ns.MHONARC_DOC
    faq = doc / ns.MHONARC_FAQ_DIR
    faq.mkdir(parents=True)
    (faq / "usage.html").write_text(usage, encoding="latin-1")
    (faq / "security.html").write_text(SECURITY, encoding="latin-1")
    (faq / "mime.html").write_text(MIME, encoding="latin-1")
    (faq / "about.html").write_text(ABOUT, encoding="latin-1")
    (faq / ns.MHONARC_FAQ_CONTENTS).write_text(
        _page("FAQ", f"<ul><li>{Q_NIL}</li><li>{Q_SETUID}</li><li>left out</li></ul>")
    )
    (faq / "monicon.png").write_bytes(b"\x89PNG")
    (doc / "intro.html").write_text(
        _page("Intro", f"<p>Users ask: {Q_RESET} MHonArc na\u00efvely converts mail.</p>"),
        encoding="latin-1",
    )
    (doc / "resources.html").write_text(_page("Resources", "<h1>Resources</h1><p>All set.</p>"))
    (doc / "app-rcidx.html").write_text(_page("Index", "<p>M2H_ADD adds messages.</p>" * 7_000))
    for left in ns.MHONARC_LEFT_OUT:
        (doc / left).write_text(_page("left", "<p>left out</p>"))
    (doc / "resources").mkdir()
    (doc / "resources" / "add.html").write_text(
        _page("ADD", "<h1>ADD</h1><p>The ADD resource adds messages to an archive.</p>")
    )
    (doc / "rcfileexs").mkdir()
    (doc / "rcfileexs" / "secure.mrc.html").write_text(
        _page("secure.mrc", "<pre>&lt;MIMEExcs&gt;\ntext/html\n&lt;/MIMEExcs&gt;</pre>")
    )
    (doc / "examples").mkdir()
    (doc / "examples" / "secure.mrc").write_text("left out\n")
    write_gz(doc / "README.txt.gz", "README for MHonArc\n\nMHonArc is a Perl program.\n")
    (doc / "BUGS").write_text("Known bugs: dates before 1970 are not parsed.\n")
    (doc / "TODO").write_text("Things to do: faster threading.\n")
    for left in ("ACKNOWLG.gz", "RELNOTES.gz", "changelog.gz", "changelog.Debian.gz"):
        write_gz(doc / left, "left out\n")
    (doc / "copyright").write_text("left out\n")
    write_gz(root / "usr/share/man/man1/mhonarc.1.gz", _MAN)
    return faq


@pytest.fixture
def faq(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package tree as shipped (the pages above), its ``faq/`` folder."""
    return _package(tmp_path, monkeypatch)


ALL_IDS = (
    "mime/removepre",
    "mime/suid",
    "security/suid",
    "security/forward",
    *(f"usage/{k}" for k in ANSWERS_USAGE),
)
ALL_ASKED = (Q_PRE, Q_REUSED, Q_SETUID, Q_SAFE, *ASKED_USAGE)


def test_mhonarc_faq_set_from_a_package_tree(faq: Path) -> None:
    nset = ns.mhonarc_faq_set()
    assert nset.name == "mhonarc-faq"
    # topic pages in name order, ids the page and the anchor (suid on two pages, parsedate
    # twice on one), about.html asks nothing
    assert [q.qid for q in nset.questions] == [f"mhonarc-faq:{k}" for k in ALL_IDS]
    assert [q.text for q in nset.questions] == list(ALL_ASKED)
    assert {q.source for q in nset.questions} == {
        "faq/mime.md",
        "faq/security.md",
        "faq/usage.md",
    }
    answers = {f"usage/{k}": a for k, a in ANSWERS_USAGE.items()}
    got = {q.qid.removeprefix("mhonarc-faq:"): q.answers[0][0] for q in nset.questions}
    assert {k: got[k] for k in answers} == answers
    assert set(nset.files) == {
        "faq/usage.md",
        "faq/security.md",
        "faq/mime.md",
        "faq/about.md",
        "intro.md",
        "resources.md",
        "resources/add.md",
        "rcfileexs/secure.mrc.md",
        "README.txt",
        "BUGS",
        "TODO",
        "man/mhonarc.1.md",
    }
    nsc.assert_questions_out_answers_in(nset)
    corpus = " ".join(nset.files.values())
    assert "left out" not in corpus and "Prev" not in corpus
    # the About page kept with its topic titles; the quoting page scrubbed, read as latin-1
    assert "### Summary" in nset.files["faq/about.md"] and "Earl Hood" in nset.files["faq/about.md"]
    assert "MHonArc na\u00efvely converts mail." in nset.files["intro.md"]
    assert "(Fran\u00e7ois checked)" in nset.files["faq/security.md"]
    assert "The ADD resource adds messages to an archive." in nset.files["resources/add.md"]
    assert "mail-to-HTML converter" in nset.files["man/mhonarc.1.md"]
    nsc.assert_files_as_written(nset)
    assert "2.6.19-2.2" in nset.note and "over 150000 chars: app-rcidx.html" in nset.note
    nsc.assert_held_out("mhonarc-faq")


def test_mhonarc_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = USAGE.replace(
        "<p>MHonArc could not find a date it understands in the message header.</p>",
        "<p>Bad Date field.</p>",
    )
    assert short != USAGE
    _package(tmp_path, monkeypatch, short)
    nsc.assert_left_out(ns.mhonarc_faq_set(), Q_PARSE, len(ALL_ASKED) - 1)


def test_no_question_text_is_left_in_any_file(faq: Path) -> None:
    shipped = {f"{k}.html": page for k, page in (("u", USAGE), ("s", SECURITY), ("m", MIME))}
    nsc.assert_leak_checked(ns.mhonarc_faq_set(), shipped, ALL_ASKED, is_html=True)


def test_mhonarc_faq_set_halves_are_fixed_and_disjoint(faq: Path) -> None:
    more = USAGE.replace(
        RULE + "<hr>\n\n" + NAV,
        _entry(
            "stdin",
            "Can I tell MHonArc to read a mailbox from standard input?",
            "<p>Yes: give the -add option with no folder and pipe the mailbox in.</p>",
        )
        + RULE
        + "<hr>\n\n"
        + NAV,
    )
    assert more != USAGE
    nsc.assert_halves_survive_an_added_question(
        ns.mhonarc_faq_set, lambda: (faq / "usage.html").write_text(more, encoding="latin-1")
    )


def test_mhonarc_faq_set_refuses_a_package_without_the_faq(faq: Path) -> None:
    (faq / ns.MHONARC_FAQ_CONTENTS).unlink()
    nsc.assert_refuses_without_faq(ns.mhonarc_faq_set, "faq/faq.html")
