"""The ``slurm-faq`` natural-question set (``bench/natural_sets.py``), its reading of Slurm's
hand-written FAQ page and the question-leak check (``bench/check_question_leaks.py``) on a
small inline page shaped like Debian's ``slurm-wlm-doc`` ships it
(``/usr/share/doc/slurm-wlm/html/faq.html``: the site's header with its masthead and
navigation menu, then the main column ``<div class="content" role="main">`` with an empty
search box, an ``<h1>`` title, the contents (``<h2>`` groups over ``<ul>`` lists of in-page
links: every question again), the same groups over the entries, each a paragraph opening
with the question as a bold anchor ``<p><a id=...><b>...</b></a><br>``, some with ``<i>``
or ``&quot;`` inside, one wrapped, one stated; answers running on over paragraphs, lists,
``<pre>`` samples and blockquoted commands; an entry with no text; a "Last modified" line,
the closing divs and a footer) beside the tree's other pages (a guide quoting a question, a
man page, an over-long configuration reference, the two link menus, the legal notices, a
configurator form with no main column, images, PDFs, scripts and style sheets), in a
package tree laid out as ``slurm-wlm-doc`` unpacks (marker present, nothing downloaded);
offline, no embedding model, no test reads the real package.

What the set's numbers rest on: no question's text is left in any file (the entries, the
contents lists, another page quoting one); each answer is exactly the text under its
question up to the next entry, group heading or "Last modified" line; ids are the FAQ's
anchors, so an added entry keeps the halves; an answer too short to judge leaves the set but
not the corpus's scrubbing.
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

Q_FOSS = "Why should I use Slurm or other Free Open Source Software (FOSS)?"
Q_PENDING = "Why is my job not running?"
Q_MAKE = "Can the make command utilize the resources allocated to a Slurm job?"
Q_FORCE = 'What does "srun: Force Terminated job" indicate?'
Q_EMPTY = "Is this entry answered at all?"
Q_PING = (
    "Why does slurmctld log that some nodes are not responding even if they are not in any "
    "partition?"
)
Q_UBUNTU = (
    "I see the host of my calling node as 127.0.1.1 instead of the correct IP address. Why is that?"
)
Q_EPEL = "Why am I being offered an automatic update for Slurm?"

# (group, anchor, question as written in the page, answer's HTML after the <br>)
ENTRIES = [
    (
        "For Management",
        "foss",
        "Why should I use Slurm or other Free Open Source Software (FOSS)?",
        "Free Open Source Software (FOSS) does not mean that it is without cost.</p>\n"
        "<p>If your work is important, you\u2019ll want the leading Slurm experts.</p>\n",
    ),
    (
        "For Users",
        "pending",
        "Why is my job not running?",
        "The answer depends on the scheduler. Executing the command</p>\n<blockquote>\n"
        '<p> <span class="commandline">scontrol show config | grep SchedulerType</span></p>\n'
        "</blockquote>\n<p> will supply this information. See the "
        '<a href="#backfill">\nbackfill</a> section.</p>\n',
    ),
    (
        "For Users",
        "parallel_make",
        "Can the <i>make</i> command utilize the resources\n  allocated to a Slurm job?",
        "Yes. There is a patch available for GNU make version 3.81.</p>\n"
        "<ul>\n<li>Apply it, then run <i>make -j</i> inside the allocation.</li>\n</ul>\n",
    ),
    (
        "For Users",
        "force",
        "What does &quot;srun: Force Terminated job&quot; indicate?",
        "The srun command normally terminates when the standard output and error I/O from "
        "the spawned tasks end.</p>\n<pre>\nsrun: Force Terminated job\n# not a heading\n"
        "</pre>\n",
    ),
    ("For Users", "empty", "Is this entry answered at all?", "</p>\n"),
    (
        "For Administrators",
        "ping",
        "Why does <i>slurmctld</i> log that some nodes\nare not responding even if they are "
        "not in any partition?",
        "The slurmctld daemon periodically pings the slurmd daemon on every configured "
        "node, even if not associated with any partition.</p>\n",
    ),
    (
        "For Administrators",
        "ubuntu",
        "I see the host of my calling node as 127.0.1.1\n    instead of the correct IP "
        "address. Why is that?",
        "Some systems by default will put your host in the /etc/hosts file as 127.0.1.1; "
        "na\u00efve set-ups keep it.</p>\n",
    ),
    (
        "For Administrators",
        "epel",
        "Why am I being offered an automatic update for Slurm?",
        "\n<br>\nEPEL has added Slurm packages to their repository to make them more widely "
        "available.</p>\n<pre>\nexclude=slurm*\n</pre>\n",
    ),
]
ANSWERED = [e for e in ENTRIES if e[1] != "empty"]
IDS = [
    (anchor, q)
    for (_, anchor, _, _), q in zip(
        ENTRIES,
        [Q_FOSS, Q_PENDING, Q_MAKE, Q_FORCE, Q_EMPTY, Q_PING, Q_UBUNTU, Q_EPEL],
        strict=True,
    )
    if anchor != "empty"
]

_HEADER = (
    '<header class="site-header" role="banner">\n<div class="site-masthead">\n'
    '<h1 class="site-masthead__title"><a href="/" rel="home"><span class="slurm-logo">Slurm '
    'Workload Manager</span></a></h1>\n</div>\n<nav class="site-nav">\n'
    '<h2 class="site-nav__title">Navigation</h2>\n'
    '<div class="slurm-title"><div class="slurm-logo"><a href="/">Slurm Workload Manager</a>'
    '</div><div class="slurm-title__version">Version 22.05</div></div>\n'
    '<ul class="site-nav__menu"><li><div>Using</div><ul><li><a href="tutorials.html">'
    'Tutorials</a></li><li><a href="faq.html">FAQ</a></li></ul></li></ul>\n</nav>\n</header>\n'
)
_FOOTER = (
    '<footer class="site-footer" role="contentinfo"><nav class="footer-nav section">'
    '<div class="container"><p><a href="disclaimer.html" class="privacy">Legal Notices</a>'
    "</p></div></nav></footer>\n"
)


def _site_page(title: str, body: str) -> str:
    """A page of Slurm's site as Debian ships it: header, main column, footer."""
    return (
        '<!DOCTYPE html>\n<html lang="en-US">\n<head>\n<meta charset="UTF-8" />\n'
        f"<title>Slurm Workload Manager - {title}</title>\n"
        '<script src="jquery.min.js"></script>\n</head>\n<body>\n'
        '<div class="container container--main">\n'
        f"{_HEADER}"
        '<div class="content" role="main">\n<section class="slurm-search">\n'
        '<div class="container" id="cse">\n<gcse:search></gcse:search>\n</div>\n</section>\n'
        '<div class="section">\n<div class="container">\n'
        f"{body}"
        '<p style="text-align:center;">Last modified 14 December 2022</p>\n'
        "</div> <!-- END .container -->\n</div> <!-- END .section -->\n"
        "</div> <!-- END .content -->\n</div> <!-- END .main -->\n"
        f"{_FOOTER}</body>\n</html>\n"
    )


def _groups(entries: list[tuple[str, str, str, str]]) -> list[str]:
    return list(dict.fromkeys(g for g, _, _, _ in entries))


def _faq(entries: list[tuple[str, str, str, str]]) -> str:
    """The FAQ page: the contents (each group's in-page links), then the entries."""
    body = '<h1><a id="top">Frequently Asked Questions</a></h1>\n\n'
    for group in _groups(entries):
        items = "".join(
            f'<li><a href="#{a}">{q}</a></li>\n' for g, a, q, _ in entries if g == group
        )
        body += f"<h2>{group}</h2>\n<ul>\n{items}</ul>\n\n"
    for group in _groups(entries):
        body += f"<h2>{group}</h2>\n"
        for g, a, q, answer in entries:
            if g == group:
                body += f'<p><a id="{a}"><b>{q}</b></a><br>\n{answer}\n'
    return _site_page("", body)


PAGE = _faq(ENTRIES)


def test_split_slurm_faq_questions_answers_and_ids() -> None:
    page, qa = ns.split_slurm_faq(PAGE)
    assert [(k, q) for k, q, _ in qa] == IDS
    answers = {k: a for k, _, a in qa}
    assert nsc.flat(answers["foss"]) == nsc.flat(
        "Free Open Source Software (FOSS) does not mean that it is without cost.\n\n"
        "If your work is important, you\u2019ll want the leading Slurm experts."
    )
    # a blockquoted command and a link inside the answer are its text
    pending = answers["pending"]
    assert "scontrol show config | grep SchedulerType" in pending
    assert "will supply this information" in pending and "backfill section" in pending
    # a <pre> sample's "# ..." line is code, not a heading; the answer runs past it
    assert "# not a heading" in answers["force"] and "```" in answers["force"]
    # lists are answer text; an <h2> group heading ends the answer above it
    make = answers["parallel_make"]
    assert "make -j" in make and "For Administrators" not in make
    # the last answer stops at the "Last modified" line; header and footer are out
    epel = answers["epel"]
    assert "exclude=slurm*" in epel
    assert "Last modified" not in epel and "Legal Notices" not in epel
    assert "na\u00efve set-ups" in answers["ubuntu"]
    nsc.assert_page_keeps_answers(qa, page)
    # the contents (every question again) and the site's header and footer are gone; the
    # title, the group headings of the entries and the "Last modified" line stay
    for gone in ("Navigation", "Tutorials", "Version 22.05", "Legal Notices", "#foss"):
        assert gone not in page
    assert page.startswith("# Frequently Asked Questions")
    assert page.count("## For Users") == 1 and page.rstrip().endswith(
        "Last modified 14 December 2022"
    )
    # an entry with nothing under it asks nothing and leaves the page all the same
    assert "answered at all" not in page


def test_split_slurm_faq_edges() -> None:
    # no main column: the whole page is read
    page, none = ns.split_slurm_faq("<html><body><h1>Slurm FAQ</h1><p>Prose.</p></body></html>")
    assert none == [] and "Prose." in page
    # a repeated anchor gets -2; `name=` anchors count; an <h1> ends the answer above it
    # and stays in the page; text after the main column is not read
    page, qa = ns.split_slurm_faq(
        '<div class="content" role="main"><p><a id="dup"><b>One?</b></a><br>One answer.</p>'
        '<p><a name="dup"><b>Two?</b></a><br>Two answer.</p><h1>Another title</h1>'
        "<p>Under it.</p></div><p>Outside.</p>"
    )
    assert [(k, q, a) for k, q, a in qa] == [
        ("dup", "One?", "One answer."),
        ("dup-2", "Two?", "Two answer."),
    ]
    assert "# Another title" in page and "Under it." in page and "Outside." not in page
    # inline tags in a question leave no space of their own; entities decoded; a bold
    # phrase inside an answer is not an entry (the paragraph does not open with an anchor)
    _, qa = ns.split_slurm_faq(
        '<div role="main"><p><a id="x"><b>Why <i>is</i> <i>srun</i>&#8217;s output &quot;'
        "odd&quot;?</b></a><br>Text with <b>bold</b> words.</p>"
        '<p>See <a id="y"><b>not a question</b></a> here.</p></div>'
    )
    assert qa == [
        (
            "x",
            'Why is srun\u2019s output "odd"?',
            "Text with bold words.\n\nSee not a question here.",
        )
    ]
    # a contents list is dropped only where its first item links into the page: a group
    # heading over a list of other pages' links stays
    page, _ = ns.split_slurm_faq(
        '<div role="main"><h2>Guides</h2><ul><li><a href="quickstart.html">Quick Start</a>'
        '</li></ul><h2>Group</h2><ul><li><a href="#q">Asked?</a></li></ul>'
        '<h2>Group</h2><p><a id="q"><b>Asked?</b></a><br>Answered here.</p></div>'
    )
    assert "Quick Start" in page and "Asked" not in page and page.count("## Group") == 1


_WORD = st.sampled_from(["job", "node", "partition", "srun", "slurmd", "limit", "queue"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 2),  # the group
            st.lists(_WORD, min_size=0, max_size=8),  # the question's words after the first
            st.booleans(),  # asked ("?") or stated
            st.booleans(),  # wrapped over two lines
            st.lists(_WORD, min_size=0, max_size=20),  # the answer's words (may be none)
            st.booleans(),  # a second paragraph in the answer
        ),
        max_size=8,
    )
)
def test_split_slurm_faq_property(
    entries: list[tuple[int, list[str], bool, bool, list[str], bool]],
) -> None:
    """Random entries in the three groups, asked or stated, wrapped or not, answered over
    one or two paragraphs or not at all: one question per answered entry, in order, its
    anchor its id, its answer its text, in the page; no question left in it (the contents
    gone with the entries)."""
    groups = ["For Management", "For Users", "For Administrators"]
    built, spec = [], []
    for k, (g, words, asked, wrapped, awords, more) in sorted(
        enumerate(entries), key=lambda e: e[1][0]
    ):
        title = ("\n" if wrapped else " ").join([f"entry{k}x", *words]) + ("?" if asked else "")
        answer = " ".join(["Answer", *awords]) if awords else ""
        html_answer = f"{answer}</p>\n" + ("<p>More text.</p>\n" if more and answer else "")
        built.append((groups[g], f"a{k}", title, html_answer))
        full = f"{answer}\n\nMore text." if more and answer else answer
        spec.append((f"a{k}", " ".join(title.split()), full))
    page, qa = ns.split_slurm_faq(_faq(built))
    assert qa == [(k, t, a) for k, t, a in spec if a]
    for _, _, a in qa:
        assert a in page
    for _, t, _ in spec:
        assert t not in " ".join(page.split())


# -- the set, built from a package tree shaped like Debian's slurm-wlm-doc -----------------


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, page: str = PAGE) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.SLURM_PACKAGE, "22.05.8-4+deb12u3")
    doc: Path = root / ns.SLURM_HTML
    doc.mkdir(parents=True)
    (doc / ns.SLURM_FAQ).write_text(page, encoding="utf-8")
    (doc / "troubleshoot.html").write_text(
        _site_page(
            "Slurm Troubleshooting Guide",
            "<h1>Slurm Troubleshooting Guide</h1>\n<p>Users ask: Why is my job not running? "
            'Read the <a href="faq.html#backfill">backfill documentation</a>.</p>\n'
            "<p>The guide\u2019s steps apply to Slurm 22.05.</p>\n",
        ),
        encoding="utf-8",
    )
    (doc / "sbatch.html").write_text(
        _site_page(
            "sbatch",
            "<h1>sbatch</h1>\n<h2>Name</h2>\n<p>sbatch - Submit a batch script to Slurm.</p>\n",
        ),
        encoding="utf-8",
    )
    (doc / "slurm.conf.html").write_text(
        _site_page("slurm.conf", "<h1>slurm.conf</h1><pre>" + "SlurmctldPort=6817\n" * 9000),
        encoding="utf-8",
    )
    (doc / "configurator.html").write_text(
        "<!DOCTYPE html>\n<html><head><title>Slurm System Configuration Tool</title>\n"
        '<script type="text/javascript">function get_field(name) { return name }</script>\n'
        "</head><body><h1>Slurm Version 22.05 Configuration Tool</h1>\n<p>This form can be "
        'used to create a Slurm configuration file.</p>\n<form><input name="x"></form>'
        "</body></html>\n",
        encoding="utf-8",
    )
    for name, text in (
        (
            "documentation.html",
            '<h1>Documentation</h1><ul><li><a href="sbatch.html">sbatch</a></li></ul>',
        ),
        (
            "man_index.html",
            '<h1>Man Pages</h1><table><tr><td><a href="sbatch.html">sbatch'
            "</a></td><td>Submit a batch script</td></tr></table>",
        ),
        ("disclaimer.html", "<h1>Legal Notices</h1><p>Slurm is free software.</p>"),
    ):
        (doc / name).write_text(_site_page(name, text), encoding="utf-8")
    (doc / "jquery.min.js").write_text("/*! jQuery */\n")
    (doc / "style.css").write_text("body { color: black }\n")
    (doc / "arch.gif").write_bytes(b"GIF89a")
    (doc / "Slurm_Entity.pdf").write_bytes(b"%PDF-1.4\n")
    return doc


@pytest.fixture
def doc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package tree as shipped (the FAQ page :data:`PAGE`), its html folder."""
    return _package(tmp_path, monkeypatch)


def test_slurm_faq_set_from_a_package_tree(doc: Path) -> None:
    nset = ns.slurm_faq_set()
    nsc.assert_package_set(
        nset,
        "slurm-faq",
        ids=[k for k, _ in IDS],
        files={"faq.md", "troubleshoot.md", "sbatch.md", "configurator.md"},
        source="faq.md",
        version="22.05.8-4+deb12u3",
        too_long="slurm.conf.html",
    )
    # UTF-8 read as such
    assert "na\u00efve set-ups" in nset.files["faq.md"]
    assert "guide\u2019s steps" in nset.files["troubleshoot.md"]
    # main columns only: no page carries the site's header or footer
    for text in nset.files.values():
        assert "Navigation" not in text and "Legal Notices" not in text
    # a page with no main column is read whole, its script dropped
    configurator = nset.files["configurator.md"]
    assert "create a Slurm configuration file" in configurator and "get_field" not in configurator
    # the page quoting a question: scrubbed, its other text kept (a link into the FAQ
    # whose text is not a question keeps it)
    troubleshoot = nset.files["troubleshoot.md"]
    assert "Users ask:" in troubleshoot and "backfill documentation" in troubleshoot
    assert "Submit a batch script to Slurm" in nset.files["sbatch.md"]


def test_slurm_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = PAGE.replace(
        "The slurmctld daemon periodically pings the slurmd daemon on every configured "
        "node, even if not associated with any partition.",
        "It pings them all.",
    )
    _package(tmp_path, monkeypatch, short)
    nsc.assert_left_out(ns.slurm_faq_set(), Q_PING, len(IDS) - 1)


def test_no_question_text_is_left_in_any_file(doc: Path) -> None:
    nsc.assert_leak_checked(
        ns.slurm_faq_set(), {"faq.md": ns.slurm_page_markdown(PAGE)}, [q for _, q in IDS]
    )


def test_slurm_faq_set_halves_are_fixed_and_disjoint(doc: Path) -> None:
    more = _faq(
        [
            *ENTRIES,
            (
                "For Administrators",
                "stop_sched",
                "How can I stop Slurm from scheduling jobs?",
                "You can stop Slurm from scheduling jobs on a per partition basis.</p>\n",
            ),
        ]
    )
    nsc.assert_halves_survive_an_added_question(
        ns.slurm_faq_set, lambda: (doc / ns.SLURM_FAQ).write_text(more, encoding="utf-8")
    )


def test_slurm_faq_set_refuses_a_package_without_the_faq(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = unpacked_package(tmp_path, monkeypatch, ns.SLURM_PACKAGE, "22.05.8-4+deb12u3")
    (root / ns.SLURM_HTML).mkdir(parents=True)
    nsc.assert_refuses_without_faq(ns.slurm_faq_set, "faq.html")
