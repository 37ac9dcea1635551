"""The ``getmail-faq`` natural-question set (``bench/natural_sets.py``), its blanked-HTML
variant (``bench/bench_html_blanked.py``) and the question-leak check
(``bench/check_question_leaks.py``), on small inline pages shaped like getmail6's hand-written
XHTML (``faq.html``: a contents list of all four pages quoting every question, ``<h2>``
groups, ``<h3 id="faq-...">`` entries, ``<h4>`` sub-questions and sub-sections, answers with
``<pre>`` blocks) in a package tree laid out as Debian's ``getmail6`` unpacks (marker
present, nothing downloaded); offline, no embedding model.

What the set's numbers rest on: no question's text is left in any file (the contents lists
of every page, a link in another page quoting one, a ``<pre>`` line that looks like a
heading aside); each answer is exactly the text under its question, a sub-section included,
the next question excluded; ids are the page's anchors; an answer too short to judge leaves
the set but not the corpus's scrubbing; the halves hold when an entry is added.
"""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import bench_html_blanked as bh
import bench_tree as bt
import check_question_leaks as cql
import datasets as ds
import natural_sets as ns
from debian_package_double import unpacked_package
from natural_set_checks import assert_files_as_written, assert_held_out

Q_WHAT = "What is getmail?"
Q_PLATFORMS = "What platforms/machines does getmail run on?"
Q_WINDOWS = "Does getmail run on MS Windows?"
Q_MAC = "Does getmail run on Macintosh systems?"
Q_ENVELOPE = 'What\'s this "envelope sender" and "envelope recipient" stuff?'
Q_MULTI = "How do I retrieve mail from multiple accounts?"
Q_FILTER = "How do I get getmail to deliver messages to different mailboxes based on …"
Q_GROUP = "I'm using getmail. How do I make it …"
Q_MUTEX = "How do I stop multiple instances of getmail from running at the same time?"
Q_NOID = "MemoryError on OS X"

_TOC = """<h1 id="toc">Table of Contents</h1>
<ul>
    <li><a href="documentation.html">getmail documentation</a></li>
    <li><ul><li><a href="documentation.html#features">Features</a></li></ul></li>
    <li><a href="faq.html">getmail frequently-asked questions (FAQs)</a></li>
    <li><ul>
        <li><a href="faq.html#faq-about-what">What is getmail?</a></li>
        <li><a href="faq.html#faq-about-platforms">What platforms/machines does getmail
            run on?</a></li>
        <li><ul><li><a href="faq.html#faq-about-platforms-windows">Does getmail run on MS
            Windows?</a></li>
            <li><a href="faq.html#faq-about-platforms-mac">Does getmail run on Macintosh
            systems?</a></li></ul></li>
        <li><a href="faq.html#faq-configuring-envelope">What's this &quot;envelope
            sender&quot; and &quot;envelope recipient&quot; stuff?</a></li>
        <li><a href="faq.html#faq-how-multi">How do I retrieve mail from multiple
            accounts?</a></li>
        <li><a href="faq.html#faq-how-filter">How do I get getmail to deliver messages to
            different mailboxes based on &hellip;</a></li>
        <li><a href="faq.html#faq-how-to">I'm using getmail.  How do I make it
            &hellip;</a></li>
        <li><a href="faq.html#faq-how-to-mutex">How do I stop multiple instances of getmail
            from running at the same time?</a></li>
    </ul></li>
</ul>
"""

FAQ_HTML = f"""<?xml version="1.0" encoding="iso-8859-1"?>
<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="en">
<head><title>getmail frequently-asked questions (FAQs)</title></head>
<body id="top">
    <div class="content">
<h1 id="title">getmail Frequently Asked Questions (FAQ)</h1>
<p class="about">getmail is licensed under the GNU GPL.</p>
{_TOC}
<h1 id="faq">Frequently-Asked Questions (FAQs)</h1>
<p>The following questions have been asked more-or-less frequently.</p>
<h2 id="faq-about">About getmail</h2>
<h3 id="faq-about-what">What is getmail?</h3>
<p>getmail is a mail retriever with support for POP3 and IMAP4 mail accounts.</p>
<h3 id="faq-about-platforms">What platforms/machines does getmail run on?</h3>
<p>getmail runs on basically any platform where Python runs.</p>
<h4 id="faq-about-platforms-windows">Does getmail run on MS Windows?</h4>
<p>Yes, under the free Cygwin package and its rebasing step.</p>
<h4 id="faq-about-platforms-mac">Does getmail run on Macintosh systems?</h4>
<p>Yes.</p>
<h2 id="faq-configuring">Configuring getmail</h2>
<h3 id="faq-configuring-envelope">What's this &quot;envelope sender&quot; and
  &quot;envelope recipient&quot; stuff?</h3>
<p>The envelope is what the SMTP servers saw, not the header.</p>
<h4 id="faq-configuring-envelope-header">Message header vs. message envelope</h4>
<p>The header is part of the message; the envelope is not.</p>
<h2 id="faq-how">How do I &hellip;</h2>
<h3 id="faq-how-multi">How do I retrieve mail from multiple accounts?</h3>
<p>Create one rc file per account and run getmail with several rcfile options:</p>
<pre>
#!/bin/sh
# one rcfile per account
exec getmail --rcfile rc-one --rcfile rc-two
</pre>
<h3 id="faq-how-filter">How do I get getmail to deliver messages to different mailboxes
  based on &hellip;</h3>
<p>Pick a filtering MDA like maildrop and call it from an MDA_external destination.</p>
<h3 id="faq-how-to">I'm using getmail.  How do I make it &hellip;</h3>
<h4 id="faq-how-to-mutex">How do I stop multiple instances of getmail from running at the
  same time?</h4>
<p>Run it under setlock from the daemontools package:</p>
<pre>
/path/to/setlock -n /path/to/lockfile /path/to/getmail
</pre>
<h2 id="faq-notabug">I think I found this bug in getmail &hellip;</h2>
<h3>MemoryError on OS X</h3>
<p>The OS X implementation of realloc() is broken; use a newer Python.</p>
<p>See also <a href="#faq-how-to-mutex">How do I stop multiple instances of getmail from
  running at the same time?</a> for cron set-ups.</p>
    </div>
</body>
</html>
"""

DOC_HTML = f"""<html><body><div class="content">
<h1 id="title">getmail documentation</h1>
{_TOC}
<h2 id="features">Features</h2>
<p>getmail retrieves mail from POP3 and IMAP4 servers into maildirs and mboxrd files.</p>
</div></body></html>
"""

TROUBLE_HTML = f"""<html><body><div class="content">
<h1 id="title">getmail documentation</h1>
{_TOC}
<h1 id="troubleshooting">Troubleshooting problems</h1>
<h2 id="error-messages">Error messages</h2>
<p>If several cron jobs overlap, read <a href="faq.html#faq-how-to-mutex">How do I stop
  multiple instances of getmail from running at the same time?</a> in the FAQ.</p>
</div></body></html>
"""


def _corpus(files: dict[str, str]) -> str:
    return " ".join(" ".join(files.values()).split()).lower()


# -- the parser --------------------------------------------------------------------------------


def test_drop_contents_section_drops_the_list_up_to_the_next_heading() -> None:
    md = ns.drop_contents_section(ns.page_to_markdown(DOC_HTML))
    assert md == (
        "# getmail documentation\n\n## Features\n\ngetmail retrieves mail from POP3 and "
        "IMAP4 servers into maildirs and mboxrd files.\n"
    )
    fenced = "# A\n\n```\n# Table of Contents\n```\n\n# Table of Contents\n\n- x\n\n## B\n\ny\n"
    assert ns.drop_contents_section(fenced) == "# A\n\n```\n# Table of Contents\n```\n\n## B\n\ny\n"


def test_split_getmail_faq_questions_answers_and_ids() -> None:
    text, qa = ns.split_getmail_faq(FAQ_HTML)
    assert [key for key, _, _ in qa] == [
        "faq-about-what",
        "faq-about-platforms",
        "faq-about-platforms-windows",
        "faq-about-platforms-mac",
        "faq-configuring-envelope",
        "faq-how-multi",
        "faq-how-filter",
        "faq-how-to-mutex",  # its group entry (no text under it) asks nothing
        "memoryerror-on-os-x",  # a heading without an id: its slug
    ]
    by_key = {key: (q, a) for key, q, a in qa}
    assert by_key["faq-about-what"] == (
        Q_WHAT,
        "getmail is a mail retriever with support for POP3 and IMAP4 mail accounts.",
    )
    # the answer ends at the sub-question; the sub-section stays inside its answer
    assert by_key["faq-about-platforms"][1] == (
        "getmail runs on basically any platform where Python runs."
    )
    assert by_key["faq-configuring-envelope"] == (
        Q_ENVELOPE,
        "The envelope is what the SMTP servers saw, not the header.\n\n"
        "#### Message header vs. message envelope\n\n"
        "The header is part of the message; the envelope is not.",
    )
    assert by_key["faq-how-filter"][0] == Q_FILTER
    multi = by_key["faq-how-multi"][1]
    assert "#!/bin/sh" in multi and "exec getmail --rcfile rc-one" in multi
    assert by_key["memoryerror-on-os-x"][0] == Q_NOID
    low = " ".join(text.split()).lower()
    for q, a in by_key.values():
        # every heading leaves; the answer's link quoting Q_MUTEX is the set's to scrub
        assert low.count(" ".join(q.split()).lower()) == (q == Q_MUTEX)
        assert a in text
    assert "table of contents" not in low
    assert "i'm using getmail" not in low  # the group entry's heading leaves too
    assert "## About getmail" in text and "## How do I …" in text  # groups kept
    assert "\n\n\n" not in text


def test_split_getmail_faq_repeated_anchor_gets_a_suffix() -> None:
    page = (
        '<h3 id="a">Why is the sky blue?</h3><p>Rayleigh scattering of sunlight.</p>'
        '<h3 id="b">Why is the sky blue at noon?</h3><p>The same scattering, shorter path.</p>'
        '<h4 id="a">Why is the sea blue?</h4><p>It reflects the sky and absorbs red.</p>'
    )
    _, qa = ns.split_getmail_faq(page)
    assert [key for key, _, _ in qa] == ["a", "b", "a-2"]


# -- the set, built from a package tree shaped like Debian's getmail6 ---------------------------


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ_HTML) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.GETMAIL_PACKAGE, "6.18.11-2")
    doc = root / ns.GETMAIL_DOC
    doc.mkdir(parents=True)
    (doc / ns.GETMAIL_FAQ).write_text(faq, encoding="latin-1")
    (doc / "documentation.html").write_text(DOC_HTML, encoding="latin-1")
    (doc / "troubleshooting.html").write_text(TROUBLE_HTML, encoding="latin-1")
    (doc / "README").write_text("getmail6\n========\n\nA mail retriever.\n")
    with gzip.open(doc / "getmailrc-examples.gz", "wt", encoding="utf-8") as fh:
        fh.write("# Example 1: one POP3 account into a maildir\n[retriever]\n")
    with gzip.open(doc / "faq.txt.gz", "wt", encoding="utf-8") as fh:
        fh.write(f"{Q_WHAT}\n{Q_MULTI}\n")  # the text copy: left out
    (doc / "THANKS").write_text("Everyone.\n")
    return doc


def test_getmail_faq_set_from_a_package_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _package(tmp_path, monkeypatch)
    nset = ns.getmail_faq_set()
    assert [q.qid for q in nset.questions] == [
        "getmail-faq:faq-about-what",
        "getmail-faq:faq-about-platforms",
        "getmail-faq:faq-about-platforms-windows",
        "getmail-faq:faq-configuring-envelope",
        "getmail-faq:faq-how-multi",
        "getmail-faq:faq-how-filter",
        "getmail-faq:faq-how-to-mutex",
        "getmail-faq:memoryerror-on-os-x",
    ]
    assert nset.left_out == (Q_MAC,)  # "Yes.": under the judge's shingle
    assert set(nset.files) == {
        "faq.md",
        "documentation.md",
        "troubleshooting.md",
        "README",
        "getmailrc-examples",
    }
    assert {q.source for q in nset.questions} == {"faq.md"}
    corpus = _corpus(nset.files)
    for q in nset.questions:
        assert " ".join(q.text.split()).lower() not in corpus
        assert q.answers[0][0] in nset.files["faq.md"]
        assert len(q.answers[0][0].split()) >= ns.MIN_ANSWER_WORDS
    # the FAQ's own and the troubleshooting page's links quoting a question are scrubbed
    assert "running at the same time" not in corpus
    assert "in the faq." in corpus and "for cron set-ups." in corpus
    assert_files_as_written(nset)
    assert "6.18.11-2" in nset.note
    assert "documentation.html, troubleshooting.html, README, getmailrc-examples" in nset.note
    assert Q_MAC in nset.note
    assert_held_out("getmail-faq")


def test_no_question_text_is_left_in_any_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check of step 3, on the set and on its blanked-HTML variant; and the check finds
    the copies in the package's pages as shipped (it could fail)."""
    doc = _package(tmp_path, monkeypatch)
    nset = ns.getmail_faq_set()
    asked = [q.text for q in nset.questions] + list(nset.left_out)
    assert len(asked) == 9
    assert cql.find_leaks(nset.files, asked, False) == []
    variant = bh.html_variant(nset)
    assert set(variant.files) == {
        "faq.html",
        "documentation.html",
        "troubleshooting.html",
        "README",
        "getmailrc-examples",
    }
    assert cql.find_leaks(variant.files, asked, True) == []
    assert "9 of 9 question headings blanked" in variant.note
    shipped = {p.name: p.read_text(encoding="latin-1") for p in doc.glob("*.html")}
    leaks = cql.find_leaks(shipped, asked, True)
    assert {lk.question for lk in leaks if lk.kind == "exact"} >= {Q_MUTEX, Q_WHAT, Q_FILTER}
    assert {lk.file for lk in leaks} == set(shipped)  # every page's contents list


def test_check_question_leaks_kinds() -> None:
    q = "How do I stop getmail adding a Received: header to messages?"
    files = {
        "a.md": "Read HOW DO I STOP getmail adding a\nReceived: header to messages? here.",
        "b.md": "How do I stop getmail adding a Received: header to messages",
        "c.html": "<a>how do I stop <code>getmail</code> adding a Received header</a>",
        "d.md": "getmail adds a Received: header; stop it with the received option.",
    }
    kinds = {lk.file: (lk.kind, lk.words) for lk in cql.find_leaks(files, [q], False)}
    assert kinds == {"a.md": ("exact", 11), "b.md": ("bare", 11), "c.html": ("run", 9)}
    # a question of under 4 words, which the set's scrubbing leaves alone as too generic, is
    # still reported, for a person to judge
    short = cql.find_leaks({"e.md": "The FAQ answers What is getmail? first."}, [Q_WHAT], False)
    assert [(lk.kind, lk.words) for lk in short] == [("exact", 3)]
    assert cql.longest_run("a b c", " x b c y ") == (2, "b c")
    assert cql.longest_run("a", " x ") == (0, "")


def test_getmail_faq_set_halves_are_fixed_and_disjoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _package(tmp_path, monkeypatch)
    first = ns.getmail_faq_set().questions
    dev, test = bt.sampled_halves(first, None)
    assert {q.qid for q in dev}.isdisjoint({q.qid for q in test})
    assert {q.qid for q in dev} | {q.qid for q in test} == {q.qid for q in first}
    more = FAQ_HTML.replace(
        '<h2 id="faq-configuring">',
        '<h3 id="faq-about-ssl">Does getmail support SSL?</h3><p>Yes, POP3 and IMAP4 over SSL.'
        '</p><h2 id="faq-configuring">',
    )
    (ds.debian_package_root(ns.GETMAIL_PACKAGE) / ns.GETMAIL_DOC / ns.GETMAIL_FAQ).write_text(
        more, encoding="latin-1"
    )
    again = ns.getmail_faq_set().questions
    assert len(again) == len(first) + 1
    dev2, test2 = bt.sampled_halves(again, None)
    assert {q.qid for q in dev} <= {q.qid for q in dev2}
    assert {q.qid for q in test} <= {q.qid for q in test2}


def test_getmail_faq_set_refuses_a_package_without_the_faq(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = _package(tmp_path, monkeypatch)
    (doc / ns.GETMAIL_FAQ).unlink()
    with pytest.raises(FileNotFoundError, match=r"no faq\.html under"):
        ns.getmail_faq_set()
