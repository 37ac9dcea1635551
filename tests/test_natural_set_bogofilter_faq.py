"""The ``bogofilter-faq`` natural-question set (``bench/natural_sets.py``), its reading of
hand-written HTML FAQs and the question-leak check (``bench/check_question_leaks.py``) on two
small inline pages shaped like Debian's ``bogofilter-common`` ships them
(``bogofilter-faq.html``: a title, a "Typographic conventions" ``<h2>`` over a list of prose,
a "Frequently asked questions and their answers" banner, a contents list grouped under
labels ("General Information") of in-page links, ``<h2 id=...>`` entries wrapped over two
lines, an entry whose answer has ``<h3>`` parts, a "Mailing Lists" entry that asks nothing,
a complaint "datastore_db.c does not compile!", an entry with no answer, ``<pre>`` and
``<code>``; ``bogotune-faq.html``: five-question page of the same kind) in a package tree
laid out as the package unpacks (the tuning HOWTO, the notes, ``/etc/bogofilter.cf``, man
pages, the translations and the files left out; marker present, nothing downloaded);
offline, no embedding model, no test reads the real package.

What the set's numbers rest on: no question's text is left in any file (the headings, the
grouped contents list, a README quoting one); each answer is exactly the text under its
``<h2>`` up to the next ``<h2>``/``<h1>``, its ``<h3>`` parts included; a short title asks
nothing and stays; a list of prose or of links out of the page is kept; ids are the
authors' anchors, so an added entry keeps the halves; an answer too short to judge leaves
the set but not the corpus's scrubbing.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import check_question_leaks as cql
import natural_set_checks as nsc
import natural_sets as ns
from debian_package_double import unpacked_package, write_gz

Q_WHAT = "What is bogofilter?"
Q_TRAIN = "How do I start my bogofilter training?"
Q_COMPACT = "How can I compact my database?"
Q_COMPILE = "datastore_db.c does not compile!"
Q_ORIGIN = "Where did bogotune come from?"
Q_FORCE = "Can I tell bogotune to do its work even though it doesn't like the data?"
ASKED = (Q_WHAT, Q_TRAIN, Q_COMPACT, Q_COMPILE, Q_ORIGIN, Q_FORCE)

FAQ_HTML = """<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01//EN">
<html>
  <head>
    <meta content="text/html; charset=ISO-8859-1" http-equiv="Content-Type">
    <title>Bogofilter FAQ</title>
    <style type="text/css">
      h2 { margin-top: 1em; }
    </style>
  </head>
  <body>
    <h1>Bogofilter FAQ</h1>

    <p>Official Versions: In
    <a href="http://bogofilter.sourceforge.net/faq.shtml">English</a> or
    <a href="http://bogofilter.sourceforge.net/faq_fr.shtml">French</a><br>
    Current maintainer since 2013: Matthias Andree</p>

    <h2>Typographic conventions</h2>
    <ul><li>If we show example commands that start with a dollar sign ($), run them as an
    unprivileged user.</li>
    <li>See <a href="#training">the training entry</a> before you start.</li></ul>

    <h1>Frequently asked questions and their answers</h1>

    <ul>
      <li>
        General Information
        <ul>
          <li><a href="#what-is-bogofilter">What is bogofilter?</a></li>
          <li><a href="#lists">Bogofilter Mailing Lists</a></li>
        </ul>
      </li>
      <li>
        Operational Questions
        <ul>
          <li><a href="#training">How do I start my bogofilter training?</a></li>
          <li><a href="#compact-database">How can I compact my
          database?</a></li>
          <li><a href="#unanswered">Is this entry answered?</a></li>
        </ul>
      </li>
      <li>
        Technical Problems
        <ul>
          <li><a href="#relativepath">datastore_db.c does not compile!</a></li>
        </ul>
      </li>
    </ul>

    <hr>

    <h2 id="what-is-bogofilter">What is bogofilter?</h2>

    <p>Bogofilter is a fast Bayesian spam filter along the lines suggested by
    Paul Graham.</p>

    <h2 id="lists">Mailing Lists</h2>

    <p>There are four mailing lists for bogofilter:</p>
    <ul>
      <li><a href="http://www.bogofilter.org/mailman/listinfo/bogofilter">bogofilter</a></li>
    </ul>

    <h2 id="training">How do I start my bogofilter
    training?</h2>

    <p>To classify messages as ham or spam, bogofilter needs to learn from your mail.</p>

    <h3>Comparing these methods</h3>

    <p>Training on error is slower to start but keeps the wordlist small.</p>

    <h2 id="compact-database">How can I compact my
    database?</h2>

    <p>You can compact the database with <code>bf_compact</code>:</p>
<pre>
$ bf_compact ~/.bogofilter wordlist.db
</pre>

    <h2 id="unanswered">Is this entry answered?</h2>

    <h2 id="relativepath">datastore_db.c does not compile!</h2>

    <p>Your Berkeley DB headers do not match the library; install the matching
    <i>-dev</i> package.</p>

    <hr>
  </body>
</html>
"""
TUNE_HTML = """<html><head><title>Bogotune FAQ</title></head>
<body>
<h1>Bogotune FAQ</h1>
<h2 id="origin">Where did bogotune come from?</h2>
<p>Greg Louis wrote bogotune in R, and David Relson rewrote it in C.</p>
<h2 id="force">Can I tell bogotune to do its work even though it
doesn't like the data?</h2>
<p>Yes: the -F option forces bogotune to run on a message count it thinks too small.</p>
<hr>
</body></html>
"""
ANSWERS = {
    "bogofilter-faq#what-is-bogofilter": (
        "Bogofilter is a fast Bayesian spam filter along the lines suggested by Paul Graham."
    ),
    "bogofilter-faq#training": (
        # the <h3> part is inside the answer
        "To classify messages as ham or spam, bogofilter needs to learn from your mail.\n\n"
        "### Comparing these methods\n\n"
        "Training on error is slower to start but keeps the wordlist small."
    ),
    "bogofilter-faq#compact-database": (
        "You can compact the database with bf_compact:\n\n```\n\n"
        "$ bf_compact ~/.bogofilter wordlist.db\n\n```"
    ),
    "bogofilter-faq#relativepath": (
        "Your Berkeley DB headers do not match the library; install the matching -dev package."
    ),
    "bogotune-faq#origin": "Greg Louis wrote bogotune in R, and David Relson rewrote it in C.",
    "bogotune-faq#force": (
        "Yes: the -F option forces bogotune to run on a message count it thinks too small."
    ),
}


def test_split_bogofilter_faq_questions_answers_and_ids() -> None:
    page, qa = ns.split_bogofilter_faq(FAQ_HTML)
    assert [q for _, q, _ in qa] == [Q_WHAT, Q_TRAIN, Q_COMPACT, Q_COMPILE]
    assert {f"bogofilter-faq#{k}": a for k, _, a in qa} == {
        k: a for k, a in ANSWERS.items() if k.startswith("bogofilter-faq#")
    }
    nsc.assert_page_keeps_answers(qa, page)
    # the grouped contents list leaves the page, its group labels with it
    assert "General Information" not in page and "Operational Questions" not in page
    assert "Bogofilter Mailing Lists" not in page and "answered" not in page
    # a list of prose (one item holding an in-page link) and a list of links out are kept
    assert "- See the training entry before you start." in page
    assert "unprivileged user" in page and "- bogofilter" in page
    # a short title asks nothing: heading and text stay, in no answer
    assert "## Mailing Lists\n\nThere are four mailing lists for bogofilter:" in page
    assert "## Typographic conventions" in page
    assert all("mailing lists" not in a and "Typographic" not in a for *_, a in qa)
    # titles and the banner stay, in no answer
    assert page.startswith("# Bogofilter FAQ\n")
    assert "# Frequently asked questions and their answers" in page
    # the <h3> part stays in the page as a heading
    assert "### Comparing these methods" in page

    tune, tqa = ns.split_bogofilter_faq(TUNE_HTML)
    assert [(f"bogotune-faq#{k}", q) for k, q, _ in tqa] == [
        ("bogotune-faq#origin", Q_ORIGIN),
        ("bogotune-faq#force", Q_FORCE),  # wrapped over two lines, read whole
    ]
    assert tune == (
        "# Bogotune FAQ\n\n"
        + ANSWERS["bogotune-faq#origin"]
        + "\n\n"
        + ANSWERS["bogotune-faq#force"]
        + "\n"
    )


def test_split_bogofilter_faq_levels_slugs_and_repeats() -> None:
    # an <h3> that asks is a part of the open answer, never a question; an <h3> after an
    # entry that asks nothing is text in no answer
    page, qa = ns.split_bogofilter_faq(
        '<h1>T</h1><h2 id="a">How do I train using maildirs?</h2>'
        "<h3>Initial training from a maildir folder:</h3><p>Run bogofilter -B.</p>"
        "<h2>Links</h2><h3>How do I subscribe to the list?</h3><p>Mail the list.</p>"
    )
    assert qa == [
        (
            "a",
            "How do I train using maildirs?",
            "### Initial training from a maildir folder:\n\nRun bogofilter -B.",
        )
    ]
    assert "### How do I subscribe to the list?\n\nMail the list." in page
    # no id: the question's slug; a repeated id gets -2
    _, slugs = ns.split_bogofilter_faq(
        "<h2>Why is it slow on NFS?</h2><p>Locks.</p>"
        '<h2 id="x">Can I share it?</h2><p>Yes.</p><h2 id="x">Can I copy it?</h2><p>No.</p>'
    )
    assert [k for k, _, _ in slugs] == ["why-is-it-slow-on-nfs", "x", "x-2"]
    page, none = ns.split_bogofilter_faq("<h1>Bogofilter FAQ</h1><p>Some prose.</p>")
    assert none == [] and page == "# Bogofilter FAQ\n\nSome prose.\n"


def test_drop_contents_lists() -> None:
    grouped = (
        '<p>a</p><ul><li>Group<ul><li><a href="#q1">Q1?</a></li></ul></li>'
        '<li><a href="#q2">Q2?</a></li></ul><p>b</p>'
    )
    assert ns.drop_contents_lists(grouped) == "<p>a</p><p>b</p>"
    for kept in (
        '<ul><li><a href="#q1">Q1?</a></li><li>a line of prose</li></ul>',
        '<ul><li><a href="#q1">Q1?</a> and more words</li></ul>',
        '<ul><li><a href="http://example.org/">Out</a></li></ul>',
        '<ol><li>Group<ul><li><a href="#q1">Q1?</a></li><li>prose</li></ul></li></ol>',
        "<ul><li>Group only</li></ul>",  # no link at all
        '<ul><li><img src="spam.png"></li></ul>',  # no word, no link: not a contents list
        "<ul></ul>",  # no item
        "</ul><li>stray</li>",
    ):
        assert ns.drop_contents_lists(kept) == kept
    # two contents lists and a list of prose between them
    two = '<ol><li><a href="#a">A</a></li></ol><ul><li>x</li></ul><ul><li><a href="#b">B</a>'
    assert ns.drop_contents_lists(two + "</li></ul>") == "<ul><li>x</li></ul>"


_WORD = st.sampled_from(["spam", "ham", "wordlist", "token", "mbox", "lock", "db", "score"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(_WORD, min_size=0, max_size=8),  # the entry's title words after its tag
            st.booleans(),  # asked with "?" (else a short title that asks nothing)
            st.lists(_WORD, min_size=0, max_size=12),  # the answer's words (may be none)
            st.booleans(),  # an <h3> part in the answer
        ),
        max_size=8,
    ),
)
def test_split_bogofilter_faq_property(
    entries: list[tuple[list[str], bool, list[str], bool]],
) -> None:
    """Random pages of random entries under a grouped contents list, some asked, some short
    titles, some unanswered, some with an <h3> part: one question per answered asked entry,
    in order, each answer its text, in the page, no asked title and no contents entry left,
    every short title kept as a heading."""
    toc = ["<ul><li>Group<ul>"]
    body = ["<h1>FAQ</h1>"]
    expected: list[tuple[str, str, str]] = []
    short: list[str] = []
    for n, (words, asks, answer, part) in enumerate(entries):
        tag = f"entry{n}x"
        title = " ".join([tag, *words]) + "?" if asks else tag
        toc.append(f'<li><a href="#e{n}">{title}</a></li>')
        body.append(f'<h2 id="e{n}">{title}</h2>')
        text = ""
        if answer:
            text = "Answer " + " ".join(answer)
            body.append(f"<p>{text}</p>")
        if part:
            body.append("<h3>A part</h3><p>Part text.</p>")
            text = (text + "\n\n" if text else "") + "### A part\n\nPart text."
        if asks and text:
            expected.append((f"e{n}", title, text))
        if not asks:
            short.append(title)
    toc.append("</ul></li></ul>")
    page, qa = ns.split_bogofilter_faq("".join(toc + body))
    assert qa == expected
    for _, _, a in qa:
        assert a in page
    assert not re.search(r"entry\d+x\S*\?", page)
    for title in short:
        assert f"## {title}\n" in page + "\n"
        assert page.count(title) == 1  # the heading alone: the contents entry is gone


# -- the set, built from a package tree shaped like Debian's bogofilter-common ---------------

BOGOFILTER_1 = f""".TH BOGOFILTER 1
.SH NAME
bogofilter \\- fast Bayesian spam filter
.SH DESCRIPTION
Bogofilter reads a message and scores it. {Q_COMPACT} Use bf_compact.
"""


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ_HTML) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.BOGOFILTER_PACKAGE, "1.2.5-1+b2")
    doc: Path = root / ns.BOGOFILTER_DOC
    doc.mkdir(parents=True)
    (doc / ns.BOGOFILTER_FAQ).write_text(faq, encoding="latin-1")
    (doc / "bogotune-faq.html").write_text(TUNE_HTML, encoding="latin-1")
    (doc / "bogofilter-tuning.HOWTO.html").write_text(
        "<h1>Bogofilter tuning HOWTO</h1><p>Tune the spam cutoff with bogotune.</p>",
        encoding="latin-1",
    )
    for translated in ("bogofilter-faq-fr.html", "bogofilter-faq-it.html"):
        (doc / translated).write_text(f"<h2>{Q_WHAT}</h2><p>left out</p>", encoding="latin-1")
    write_gz(doc / "README.gz", f"Bogofilter README\n{Q_TRAIN} Read GETTING.STARTED.\n")
    (doc / "README.Debian").write_text("bogofilter for Debian\n\nThe default is Berkeley DB.\n")
    write_gz(doc / "GETTING.STARTED.gz", "First, train bogofilter with some spam and ham.\n")
    write_gz(doc / "integrating-with-postfix.gz", "Add a content_filter to master.cf.\n")
    for skipped in ("RELEASE.NOTES.gz", "TODO.gz", "changelog.gz", "changelog.Debian.gz"):
        write_gz(doc / skipped, "left out\n")
    (doc / "AUTHORS").write_text("left out\n")
    (doc / "copyright").write_text("left out\n")
    (doc / "examples").mkdir()
    (doc / "examples/bogofilter.cf.example").write_text("left out\n")
    config = root / ns.BOGOFILTER_CONFIG
    config.parent.mkdir(parents=True)
    config.write_text("# bogofilter.cf\n#spam_cutoff=0.99\n")
    write_gz(root / "usr/share/man/man1/bogofilter.1.gz", BOGOFILTER_1)
    write_gz(
        root / "usr/share/man/man1/bf_compact.1.gz",
        ".TH BF_COMPACT 1\n.SH NAME\nbf_compact \\- shell script to compact a database\n",
    )
    return doc


def test_bogofilter_faq_set_from_a_package_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _package(tmp_path, monkeypatch)
    nset = ns.bogofilter_faq_set()
    assert [q.qid for q in nset.questions] == [f"bogofilter-faq:{k}" for k in ANSWERS]
    assert nset.left_out == ()
    assert set(nset.files) == {
        "bogofilter-faq.md",
        "bogotune-faq.md",
        "bogofilter-tuning.HOWTO.md",
        "README",
        "README.Debian",
        "GETTING.STARTED",
        "integrating-with-postfix",
        "bogofilter.cf",
        "man/bogofilter.1.md",
        "man/bf_compact.1.md",
    }
    nsc.assert_questions_out_answers_in(nset, ANSWERS)
    # a man page and the README quoting a question: scrubbed, their other text kept
    assert "Use bf_compact." in nset.files["man/bogofilter.1.md"]
    assert "Read GETTING.STARTED." in nset.files["README"]
    assert "Tune the spam cutoff with bogotune." in nset.files["bogofilter-tuning.HOWTO.md"]
    assert "#spam_cutoff=0.99" in nset.files["bogofilter.cf"]
    nsc.assert_files_as_written(nset)
    assert "1.2.5-1+b2" in nset.note
    assert "bogofilter-faq.html (4), bogotune-faq.html (2)" in nset.note
    assert (
        "bogofilter-tuning.HOWTO.html, README, README.Debian, GETTING.STARTED, "
        "integrating-with-postfix, bogofilter.cf, bogofilter.1, bf_compact.1" in nset.note
    )
    nsc.assert_held_out("bogofilter-faq")


def test_bogofilter_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    faq = FAQ_HTML.replace(
        "<p>Bogofilter is a fast Bayesian spam filter along the lines suggested by\n"
        "    Paul Graham.</p>",
        "<p>A spam filter.</p>",
    )
    assert faq != FAQ_HTML
    _package(tmp_path, monkeypatch, faq)
    nset = ns.bogofilter_faq_set()
    nsc.assert_left_out(nset, Q_WHAT, len(ASKED) - 1)  # scrubbed all the same


def test_no_question_text_is_left_in_any_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The leak check on the set finds no copy, and finds every question in the pages as
    shipped (converted as they are, contents list and headings kept: it could fail)."""
    _package(tmp_path, monkeypatch)
    nset = ns.bogofilter_faq_set()
    asked = [q.text for q in nset.questions] + list(nset.left_out)
    assert sorted(asked) == sorted(ASKED)
    assert cql.find_leaks(nset.files, asked, False) == []
    shipped = cql.find_leaks(
        {"faq": ns.page_to_markdown(FAQ_HTML), "tune": ns.page_to_markdown(TUNE_HTML)},
        asked,
        False,
    )
    assert {lk.question for lk in shipped if lk.kind == "exact"} == set(ASKED)


def test_bogofilter_faq_set_halves_are_fixed_and_disjoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = _package(tmp_path, monkeypatch)
    first, dev, test = nsc.halves_of(ns.bogofilter_faq_set)
    more = FAQ_HTML.replace(
        '<h2 id="what-is-bogofilter">',
        '<h2 id="nfs">Can I share wordlists over NFS?</h2>\n'
        "<p>Only when the lock daemon works on both machines and every client agrees.</p>\n"
        '<h2 id="what-is-bogofilter">',
    )
    (doc / ns.BOGOFILTER_FAQ).write_text(more, encoding="latin-1")
    nsc.assert_halves_kept(ns.bogofilter_faq_set, first, dev, test)


def test_bogofilter_faq_set_refuses_a_package_without_the_faq(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = _package(tmp_path, monkeypatch)
    (doc / ns.BOGOFILTER_FAQ).unlink()
    with pytest.raises(FileNotFoundError, match=re.escape("no bogofilter-faq.html under")):
        ns.bogofilter_faq_set()
