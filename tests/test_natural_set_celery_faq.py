"""The ``celery-faq`` natural-question set (``bench/natural_sets.py``), its reading of
Celery's Sphinx-built FAQ page and the question-leak check (``bench/check_question_leaks.py``)
on a small inline page shaped as Debian's ``python-celery-doc`` ships it
(``/usr/share/doc/python-celery-doc/html/faq.html``: a related-pages bar, the main column
``<div class="body" role="main">`` opening with the theme's version "deck", an ``<h1>``
title with its label, a local contents list ``<nav class="contents local">`` naming every
group and question again, ``<h2>`` groups with labels and links back to the contents, one
``<section>`` per entry with an empty ``<span id="faq-...">`` label (or none) and its
``<h3>`` question with a link back to the contents and a pilcrow permalink; answers opening
with a bold "Answer:" (or "Answer": with the colon outside, or no label), one with
``<h4>`` sub-sections, one heading holding ``<strong>`` and ``<code>``, a stated entry, an
unanswered entry; the sidebar and footer) beside the other pages of the tree (a user-guide
page with its own local contents, the deck and a paragraph linking into an FAQ entry; a page
quoting a question; an over-long API page to be cut at its sections; a gzipped change
history; a page with nothing but the deck; the indexes, search page and licence, and
``_modules/``, ``_sources/``, ``_static/`` to be left out), in a package tree laid out as
``python-celery-doc`` unpacks (marker present, nothing downloaded); offline, no embedding
model, no test reads the real package.

What the set's numbers rest on: no question's text is left in any file (the entries, the
local contents, a paragraph linking into an entry, a page quoting one); each answer is
exactly the text under its question, without its "Answer:" label, up to the next
``<h3>``/``<h2>``; ids are the FAQ's labels, so an added entry keeps the halves; an answer
too short to judge leaves the set but not the corpus's scrubbing.
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

Q_USE = "What kinds of things should I use Celery for?"
Q_DEPS = "Does Celery have many dependencies?"
Q_AMQP = "Do I have to use AMQP/RabbitMQ?"
Q_HANGING = "The worker isn\u2019t doing anything, just hanging"
Q_SUDO = "sudo in a subprocess returns None"
Q_EMPTY = "Is this entry answered at all?"
Q_BY_NAME = "Can I call a task by name?"
ASKED = (Q_USE, Q_DEPS, Q_AMQP, Q_HANGING, Q_SUDO, Q_BY_NAME)
ANSWERS = {
    "faq-when-to-use": "Queue everything and delight everyone is a good article describing "
    "why you\u2019d use a queue in a web context.\n\n- Running something in the background.",
    "does-celery-have-many-dependencies": "A common criticism is that Celery uses too many "
    "dependencies.\n\n#### celery\n\n- kombu\n\nKombu is the library used to send and receive "
    "messages.\n\n#### kombu\n\nKombu depends on the amqp package.",
    "faq-is-celery-for-rabbitmq-only": "No, although using RabbitMQ is recommended you can "
    "also use Redis, SQS, or Qpid.",
    "faq-worker-hanging": "Check the broker first, then look at the worker\u2019s log for "
    "deadlocks.",
    "faq-sudo-subprocess": "This is a bug in Python, not Celery: sudo needs a terminal.",
    "faq-execute-task-by-name": "Yes, use app.send_task().\n\n```\n>>> app.send_task('tasks.add',"
    " args=[2, 2])\n\n```",
}

PERMALINK = nsc.SPHINX_PERMALINK


def _backref(n: int, text: str) -> str:
    """A heading's text as Sphinx writes it under a local contents list: a link back to
    the contents' item."""
    return f'<a class="toc-backref" href="#id{n}" role="doc-backlink">{text}</a>'


DECK = (
    '<div class="deck">\n\n<p>\nThis document describes the current stable version of Celery '
    '(5.2).\nFor development docs,\n<a href="http://docs.celeryproject.org/en/master/">go '
    "here</a>.\n</p>\n\n</div>\n"
)


def _page(title: str, main: str) -> str:
    """A page of the tree as Debian's build of Celery's Sphinx docs writes it: the related
    bar, the main column opening with the deck, the sidebar, the footer."""
    relbar = (
        '<div class="related" role="navigation" aria-label="related navigation">\n'
        '<h3>Navigation</h3>\n<ul><li><a href="genindex.html">Related index</a></li></ul>\n'
        "</div>\n"
    )
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8" />\n'
        f"<title>{title} &#8212; Celery 5.2.6 documentation</title>\n</head><body>\n{relbar}"
        '<div class="document">\n<div class="documentwrapper">\n<div class="bodywrapper">\n'
        f'<div class="body" role="main">\n{DECK}{main}\n</div>\n</div>\n</div>\n'
        '<div class="sphinxsidebar" role="navigation" aria-label="main navigation">\n'
        '<div class="sphinxsidebarwrapper">\n<h4>Previous topic</h4>\n<p class="topless">'
        '<a href="tutorials/task-cookbook.html">Sidebar topic</a></p>\n</div>\n</div>\n'
        '<div class="clearer"></div>\n</div>\n'
        '<div class="footer">&#169; Copyright 2009-2021, Footer owner.</div>\n</body>\n</html>\n'
    )


def _entry(sid: str, n: int, title: str, body: str, label: str = "") -> str:
    span = f'<span id="{label}"></span>' if label else ""
    return (
        f'<section id="{sid}">\n{span}<h3>{_backref(n, title)}{PERMALINK.format(sid)}</h3>\n'
        f"{body}</section>\n"
    )


def _group(sid: str, n: int, title: str, entries: str, label: str = "") -> str:
    span = f'<span id="{label}"></span>' if label else ""
    return (
        f'<section id="{sid}">\n{span}<h2>{_backref(n, title)}{PERMALINK.format(sid)}</h2>\n'
        f"{entries}</section>\n"
    )


def _contents(items: list[tuple[str, str]]) -> str:
    lis = "".join(
        f'<li><p><a class="reference internal" href="#{sid}" id="id{n}">{t}</a></p></li>\n'
        for n, (sid, t) in enumerate(items, 1)
    )
    return f'<nav class="contents local" id="contents">\n<ul class="simple">\n{lis}</ul>\n</nav>\n'


def _faq_page(body: str, items: list[tuple[str, str]]) -> str:
    return _page(
        "Frequently Asked Questions",
        '<section id="frequently-asked-questions">\n<span id="faq"></span><h1>Frequently '
        f"Asked Questions{PERMALINK.format('frequently-asked-questions')}</h1>\n"
        f"{_contents(items)}{body}</section>",
    )


SUDO_MARKUP = (
    '<strong class="command">sudo</strong> in a <a class="reference external" '
    'href="https://docs.python.org/dev/library/subprocess.html#module-subprocess" '
    'title="(in Python v3.12)"><code class="xref py py-mod docutils literal notranslate">'
    '<span class="pre">subprocess</span></code></a> returns <code class="xref py py-const '
    'docutils literal notranslate"><span class="pre">None</span></code>'
)

FAQ = _faq_page(
    _group(
        "general",
        1,
        "General",
        _entry(
            "what-kinds-of-things-should-i-use-celery-for",
            2,
            Q_USE,
            '<p><strong>Answer:</strong> <a class="reference external" '
            'href="https://decafbad.com/blog/">Queue everything and delight everyone</a> is a '
            "good article\ndescribing why you&#8217;d use a queue in a web context.</p>\n"
            '<ul class="simple">\n<li><p>Running something in the background.</p></li>\n</ul>\n',
            "faq-when-to-use",
        ),
        "faq-general",
    )
    + _group(
        "misconceptions",
        3,
        "Misconceptions",
        _entry(
            "does-celery-have-many-dependencies",
            4,
            Q_DEPS,
            "<p>A common criticism is that Celery uses too many dependencies.</p>\n"
            f'<section id="celery">\n<h4>{_backref(5, "celery")}{PERMALINK.format("celery")}'
            '</h4>\n<ul class="simple">\n<li><p><a class="reference external" '
            'href="https://pypi.python.org/pypi/kombu/">kombu</a></p></li>\n</ul>\n'
            "<p>Kombu is the library used to send and receive messages.</p>\n</section>\n"
            f'<section id="kombu">\n<h4>{_backref(6, "kombu")}{PERMALINK.format("kombu")}</h4>\n'
            "<p>Kombu depends on the amqp package.</p>\n</section>\n",
        )
        + _entry(
            "do-i-have-to-use-amqp-rabbitmq",
            7,
            Q_AMQP,
            "<p><strong>Answer</strong>: No, although using RabbitMQ is recommended you can "
            "also\nuse Redis, SQS, or Qpid.</p>\n",
            "faq-is-celery-for-rabbitmq-only",
        ),
        "faq-misconceptions",
    )
    + _group(
        "troubleshooting",
        8,
        "Troubleshooting",
        _entry(
            "the-worker-isn-t-doing-anything-just-hanging",
            9,
            "The worker isn&#8217;t doing anything, just hanging",
            "<p><strong>Answer:</strong> Check the broker first, then look at the "
            "worker&#8217;s log for deadlocks.</p>\n",
            "faq-worker-hanging",
        )
        + _entry("is-this-entry-answered-at-all", 10, Q_EMPTY, "", "faq-unanswered"),
        "faq-troubleshooting",
    )
    + _group(
        "tasks",
        11,
        "Tasks",
        _entry(
            "sudo-in-a-subprocess-returns-none",
            12,
            SUDO_MARKUP,
            "<p>This is a bug in Python, not Celery: <strong>sudo</strong> needs a terminal.</p>\n",
            "faq-sudo-subprocess",
        )
        + _entry(
            "can-i-call-a-task-by-name",
            13,
            Q_BY_NAME,
            "<p><strong>Answer:</strong> Yes, use app.send_task().</p>\n"
            '<div class="highlight-python3 notranslate"><div class="highlight"><pre><span>'
            '</span><span class="gp">&gt;&gt;&gt; </span><span class="n">app</span>'
            "<span class=\"o\">.</span>send_task('tasks.add', args=[2, 2])\n</pre></div>\n"
            "</div>\n",
            "faq-execute-task-by-name",
        ),
        "faq-tasks",
    ),
    [
        ("general", "General"),
        ("what-kinds-of-things-should-i-use-celery-for", Q_USE),
        ("misconceptions", "Misconceptions"),
        ("does-celery-have-many-dependencies", Q_DEPS),
        ("do-i-have-to-use-amqp-rabbitmq", Q_AMQP),
        ("troubleshooting", "Troubleshooting"),
        ("the-worker-isn-t-doing-anything-just-hanging", Q_HANGING),
        ("is-this-entry-answered-at-all", Q_EMPTY),
        ("tasks", "Tasks"),
        ("sudo-in-a-subprocess-returns-none", SUDO_MARKUP),
        ("can-i-call-a-task-by-name", Q_BY_NAME),
    ],
)


def test_split_celery_faq_questions_answers_and_ids() -> None:
    page, qa = ns.split_celery_faq(FAQ)
    nsc.assert_split_answers(page, qa, ASKED, ANSWERS)
    # the deck, the local contents, the sidebar, the related bar, the footer and every
    # "Answer" label leave the page; the title and the groups' headings stay, in no answer
    for gone in ("stable version", "go here", "Sidebar", "Related index", "Footer", "Answer"):
        assert gone not in page, gone
    assert "answered at all" not in page
    assert page.startswith("# Frequently Asked Questions\n\n## General\n\nQueue everything")
    for group in ("## Misconceptions", "## Troubleshooting", "## Tasks"):
        assert group in page and all(group not in a for _, _, a in qa)


def test_drop_sphinx_contents_and_split_edges() -> None:
    # every local contents list goes, up to its own </nav>, one after another; another nav
    # stays; an unclosed one runs to the end; the deck goes with its nested divs
    assert (
        ns.drop_sphinx_contents(
            '<p>a</p><nav class="contents local" id="c"><ul><li>x</li></ul></nav><p>b</p>'
            '<nav class="contents" id="d"><p>y</p></nav><nav class="contentsless">kept</nav>'
            '<div class="deck"><div><p>v5</p></div></div><p>c</p><nav class="contents">open'
        )
        == '<p>a</p><p>b</p><nav class="contentsless">kept</nav><p>c</p>'
    )
    # an entry with no label takes its section's id, else the question's slug; a repeat
    # gets -2; an <h2> ends the answer above it and stays in the page
    page, qa = ns.split_celery_faq(
        _page(
            "Edges",
            "<h3>Same words?</h3><p>First answer.</p>"
            '<section id="dup"><h3>One?</h3><p>One answer.</p></section>'
            '<section id="dup"><h3>Two?</h3><p>Two answer.</p></section>'
            "<h3>Same words?</h3><p><strong>Answer:</strong> Second answer.</p>"
            "<h2>Another group</h2><p>Under it.</p>",
        )
    )
    assert [(k, q) for k, q, _ in qa] == nsc.SLUGS_AND_REPEATS
    assert qa[-1][2] == "Second answer."
    assert "## Another group" in page and "Under it." in page
    # a bold "Answer:" inside a sentence or later in a paragraph is the answer's words
    _, mid = ns.split_celery_faq(
        _page("Mid", "<h3>Why?</h3><p>See the <strong>Answer:</strong> field below.</p>")
    )
    assert mid == [("why", "Why?", "See the Answer: field below.")]
    # a page with no FAQ entries: no question, its text kept, the deck gone
    page, none = ns.split_celery_faq(_page("Notes", "<h1>Notes</h1><p>Prose.</p>"))
    assert none == [] and page == "# Notes\n\nProse.\n"


_WORD = st.sampled_from(["task", "worker", "broker", "result", "queue", "beat", "retry"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(_WORD, min_size=0, max_size=8),  # the question's words after the first
            st.booleans(),  # asked ("?") or stated
            st.booleans(),  # a new group opens before it
            st.booleans(),  # the entry has a label of its own
            st.sampled_from(["<strong>Answer:</strong> ", "<strong>Answer</strong>: ", ""]),
            st.lists(_WORD, min_size=0, max_size=16),  # the answer's words (may be none)
        ),
        max_size=8,
    )
)
def test_split_celery_faq_property(
    entries: list[tuple[list[str], bool, bool, bool, str, list[str]]],
) -> None:
    """Random entries, asked or stated, in one group or several, labelled or not, their
    answers opening with either "Answer" label or none, some unanswered: one question per
    answered entry, in order, its label (else its section id) its id, its answer its text
    without the label, in the page; no question left in it (the contents list gone with
    the entries)."""
    body, items, expected = "", [], []
    for k, (words, asked, new_group, labelled, label, awords) in enumerate(entries):
        q = " ".join([f"entry{k}x", *words]) + ("?" if asked else "")
        if new_group or not body:
            body += f'<section id="g{k}"><h2>Group {k}</h2></section>\n'
            items.append((f"g{k}", f"Group {k}"))
        answer = " ".join(["Reply", *awords]) if awords else ""
        markup = f"<p>{label}{answer}</p>\n" if answer else ""
        body += _entry(f"s{k}", k, q, markup, f"faq-{k}" if labelled else "")
        items.append((f"s{k}", q))
        if answer:
            expected.append((f"faq-{k}" if labelled else f"s{k}", q, answer))
    page, qa = ns.split_celery_faq(_faq_page(body, items))
    nsc.assert_random_split(page, qa, expected)
    assert "Answer" not in page


# -- the set, built from a package tree shaped like Debian's python-celery-doc ----------------


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.CELERY_PACKAGE, "5.2.6-5")
    html_dir: Path = root / ns.CELERY_HTML

    def page(rel: str, title: str, body: str) -> None:
        (html_dir / rel).parent.mkdir(parents=True, exist_ok=True)
        (html_dir / rel).write_text(_page(title, body), encoding="utf-8")

    page("faq.html", "Frequently Asked Questions", "")
    (html_dir / "faq.html").write_text(faq, encoding="utf-8")
    page(
        "userguide/tasks.html",
        "Tasks",
        '<section id="tasks"><h1>Tasks</h1>\n'
        + _contents([("basics", "Basics")])
        + '<section id="basics"><h2>Basics</h2><p>A task is a class.</p>\n'
        '<p>See <a class="reference internal" href="../faq.html#faq-execute-task-by-name">'
        '<span class="std std-ref">Can I call a task by name?</span></a> in the FAQ.</p>\n'
        "<p>Tasks are retried on failure.</p></section></section>",
    )
    page(
        "getting-started/introduction.html",
        "Introduction",
        f"<h1>Introduction</h1><p>People ask &#8220;{Q_DEPS}&#8221; Very few.</p>",
    )
    page(
        "reference/celery.app.task.html",
        "celery.app.task",
        "<h1>celery.app.task</h1><p>Task API intro.</p>"
        + "".join(
            f"<section><h2>Member {n}</h2>" + "<p>Member text that runs on.</p>" * 2000
            for n in (1, 2, 3)
        )
        + "</section>" * 3,
    )
    page("history/changelog-5.0.html", "Change history 5.0", "<h1>5.0.0</h1><p>Released.</p>")
    page("contributing.html", "Contributing", "")
    write_gz(
        html_dir / "changelog.html.gz",
        _page("Change history", "<h1>Change history</h1><p>5.2.6 fixed a leak.</p>"),
    )
    # Sphinx's indexes and search page, the licence; the source listings, the reST
    # sources, the static files and images (named here, not read from the module, so that
    # a rule dropped from it is seen)
    for skipped in ("genindex.html", "py-modindex.html", "search.html", "copyright.html"):
        page(skipped, "Left out", "<p>left out</p>")
    for folder in ("_modules", "_sources", "_static", "_images"):
        page(f"{folder}/left.html", "Left out", "<p>left out</p>")
    (html_dir / "_sources").mkdir(exist_ok=True)
    (html_dir / "_sources" / "faq.rst.txt").write_text(f"{Q_USE}\n")
    (html_dir / "searchindex.js").write_text("Search.setIndex({})\n")
    doc = html_dir.parent
    write_gz(doc / "changelog.Debian.gz", "left out\n")
    (doc / "copyright").write_text("left out\n")
    return html_dir


@pytest.fixture
def html_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package tree as shipped (the FAQ page :data:`FAQ`), its ``html/`` folder."""
    return _package(tmp_path, monkeypatch)


def test_celery_faq_set_from_a_package_tree(html_dir: Path) -> None:
    nset = ns.celery_faq_set()
    cut = {
        f"reference/celery.app.task/{n:02d}-{s}.md"
        for n, s in enumerate(["celery-app-task", "member-1", "member-2", "member-3"])
    }
    nsc.assert_package_set(
        nset,
        "celery-faq",
        ids=list(ANSWERS),
        files={
            "faq.md",
            "userguide/tasks.md",
            "getting-started/introduction.md",
            "history/changelog-5.0.md",
            "changelog.md",
            *cut,
        },
        source="faq.md",
        version="5.2.6-5",
        too_long="reference/celery.app.task.html in 4 files",
    )
    nsc.assert_questions_out_answers_in(nset, ANSWERS)
    assert "no text of their own, out: contributing.html;" in nset.note
    text = " ".join(nset.files.values())
    for gone in ("left out", "Sidebar", "stable version", "Footer", "Related index"):
        assert gone not in text, gone
    # a user-guide page: its local contents out, a paragraph linking into an FAQ entry
    # deleted, its other text kept; the quoting page scrubbed, its other text kept; the
    # gzipped change history read
    tasks = nset.files["userguide/tasks.md"]
    assert tasks == (
        "# Tasks\n\n## Basics\n\nA task is a class.\n\nTasks are retried on failure.\n"
    )
    assert "Very few." in nset.files["getting-started/introduction.md"]
    assert "5.2.6 fixed a leak." in nset.files["changelog.md"]
    assert all(len(nset.files[rel]) <= ns.CELERY_MAX_PAGE_CHARS for rel in cut)


def test_celery_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = FAQ.replace(
        "Check the broker first, then look at the worker&#8217;s log for deadlocks.",
        'See <a class="reference internal" href="#can-i-call-a-task-by-name">Can I call a '
        "task by name?</a>.",
    )
    assert short != FAQ
    _package(tmp_path, monkeypatch, short)
    nsc.assert_left_out(ns.celery_faq_set(), Q_HANGING, len(ASKED) - 1)


def test_no_question_text_is_left_in_any_file(html_dir: Path) -> None:
    nsc.assert_leak_checked(ns.celery_faq_set(), {"faq.html": FAQ}, ASKED, is_html=True)


def test_celery_faq_set_halves_are_fixed_and_disjoint(html_dir: Path) -> None:
    head, end, tail = FAQ.rpartition("</section>\n</section>\n</section>")
    more = (
        head
        + "</section>\n"
        + _entry(
            "can-i-cancel-a-task",
            14,
            "Can I cancel the execution of a task?",
            "<p><strong>Answer:</strong> Yes, use result.revoke() on it.</p>\n",
            "faq-cancel-task",
        )
        + "</section>\n</section>"
        + tail
    )
    assert end and more != FAQ
    nsc.assert_halves_survive_an_added_question(
        ns.celery_faq_set,
        lambda: (html_dir / "faq.html").write_text(more, encoding="utf-8"),
    )


def test_celery_faq_set_refuses_a_package_without_the_faq(html_dir: Path) -> None:
    (html_dir / "faq.html").unlink()
    nsc.assert_refuses_without_faq(ns.celery_faq_set, "faq.html")
