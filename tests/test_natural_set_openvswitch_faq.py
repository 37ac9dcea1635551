"""The ``openvswitch-faq`` natural-question set (``bench/natural_sets.py``), its reading of
Open vSwitch's ``Q:``/``A:`` FAQ pages (Sphinx HTML) and the question-leak check
(``bench/check_question_leaks.py``) on a small inline FAQ page shaped as Debian's
``openvswitch-doc`` ships them (``/usr/share/doc/openvswitch-doc/html/faq/*.html``: the
alabaster theme's main column and sidebar; a ``<section>`` with an ``<h1>`` title and
permalink, a paragraph of its own; entries as ``<p>Q: ...</p>`` over a ``<blockquote>``
answer opening with ``A:``; a question going on over a code block and a second paragraph; a
question quoting an error message in a nested blockquote before "What should I do?" and
``A:``; an answer with no label; an answer whose ``A:`` opens a ``<dt>``; an unanswered
entry; an ``<h2>`` section with text of its own and an ``A.`` answer) beside the other pages
of the tree (the main page quoting a question, a guide, a reference page over the page
limit to be cut at its sections, the FAQ's own index, the contents / index / search pages
and ``_static/`` to be left out), in a package tree laid out as ``openvswitch-doc`` unpacks
(marker present, nothing downloaded); offline, no embedding model, no test reads the real
package.

What the set's numbers rest on: no question's text is left in any file (the entries, a page
quoting one); each answer is exactly the rest of its entry without the ``A:`` label, up to
the next question or heading; ids are the page and the question's slug, so an added entry
keeps the halves; an answer too short to judge leaves the set but not the corpus's
scrubbing.
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

Q_WHAT = "What is Open vSwitch?"
Q_VLAN_FLOW = (
    "I added a flow to accept packets on VLAN 123 and output them on VLAN 456, like so: "
    "$ ovs-ofctl add-flow br0 dl_vlan=123,actions=output:1 "
    "but the packets are actually being output in VLAN 123. Why?"
)
Q_ERROR = (
    "I get an error like this when I configure Open vSwitch: configure: error: Linux "
    "kernel in <dir> is too new What should I do?"
)
Q_DPDK = "Are all the DPDK releases that OVS versions work with maintained?"
Q_BAREUDP = "What is Bareudp?"
Q_VLAN = "What\u2019s a VLAN?"
ASKED = (Q_WHAT, Q_VLAN_FLOW, Q_ERROR, Q_DPDK, Q_BAREUDP, Q_VLAN)
ANSWERS = {
    "general/what-is-open-vswitch": "Open vSwitch is a production quality open source "
    "software switch.\n\nIt is designed for virtualized server environments.",
    "general/i-added-a-flow-to-accept-packets-on-vlan": "OpenFlow actions are executed in "
    "the order specified, so the output happens before the VLAN changes.",
    "general/i-get-an-error-like-this-when-i-configur": "You have the following options:"
    "\n\n- Use the Linux kernel module supplied with the kernel that you are using.",
    "general/are-all-the-dpdk-releases-that-ovs-versi": "No. DPDK follows YY.MM.n "
    "(Year.Month.Number) versioning.",
    "general/what-is-bareudp": "There are various L3 encapsulation standards using UDP\n\n"
    "being discussed to leverage load balancing.",
    "general/what-s-a-vlan": "At the simplest level, a VLAN is a way to partition a single "
    "switch into multiple switches.",
}

PERMALINK = nsc.SPHINX_PERMALINK


def _page(title: str, body: str) -> str:
    """A page of the tree as Sphinx 5's alabaster theme writes it: the head, the main
    column holding ``body``, the sidebar's navigation and the footer."""
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8" />\n'
        f"<title>{title} &#8212; Open vSwitch 3.1.0 documentation</title>\n</head><body>\n"
        '<div class="document">\n<div class="documentwrapper">\n<div class="bodywrapper">\n'
        f'<div class="body" role="main">\n{body}\n</div>\n</div>\n</div>\n'
        '<div class="sphinxsidebar" role="navigation" aria-label="main navigation">\n'
        '<h3>Navigation</h3>\n<ul><li><a href="../index.html">Sidebar link</a></li></ul>\n'
        '</div>\n</div>\n<div class="footer">&#169;2016 Sidebar footer. Powered by Sphinx'
        "</div>\n</body>\n</html>\n"
    )


def _entry(question: str, answer: str) -> str:
    return f"<p>Q: {question}</p>\n<blockquote>\n<div>{answer}\n</div></blockquote>\n"


FAQ = _page(
    "General",
    '<section id="general">\n<h1>General' + PERMALINK.format("general") + "</h1>\n"
    "<p>These questions are about the project.</p>\n"
    + _entry(
        "What is Open vSwitch?",
        "<p>A: Open vSwitch is a production quality open source software\nswitch.</p>\n"
        "<p>It is designed for virtualized server environments.</p>",
    )
    + "<p>Q: I added a flow to accept packets on VLAN 123 and output them on VLAN 456,\n"
    "like so:</p>\n"
    '<div class="highlight-default notranslate"><div class="highlight"><pre><span></span>'
    "$ ovs-ofctl add-flow br0 dl_vlan=123,actions=output:1\n</pre></div>\n</div>\n"
    "<p>but the packets are actually being output in VLAN 123.  Why?</p>\n"
    "<blockquote>\n<div><p>A: OpenFlow actions are executed in the order specified, so the "
    "output happens before the VLAN changes.</p>\n</div></blockquote>\n"
    + _entry(
        "I get an error like this when I configure Open vSwitch:",
        "<blockquote>\n<div><p>configure: error: Linux kernel in &lt;dir&gt; is too new</p>\n"
        "</div></blockquote>\n<p>What should I do?</p>\n"
        "<p>A: You have the following options:</p>\n"
        '<ul class="simple">\n<li><p>Use the Linux kernel module supplied with the kernel '
        "that you are using.</p></li>\n</ul>",
    )
    + _entry(
        "Are all the DPDK releases that OVS versions work with maintained?",
        "<p>No. DPDK follows YY.MM.n (Year.Month.Number) versioning.</p>",
    )
    + _entry(
        "What is Bareudp?",
        "<dl>\n<dt>A: There are various L3 encapsulation standards using UDP</dt>"
        "<dd><p>being discussed to leverage load balancing.</p>\n</dd>\n</dl>",
    )
    + "<p>Q: Is this entry answered at all?</p>\n"
    + '<section id="vlans">\n<h2>VLANs'
    + PERMALINK.format("vlans")
    + "</h2>\n<p>Text of the VLAN section.</p>\n"
    + _entry(
        "What&#8217;s a VLAN?",
        "<p>A. At the simplest level, a VLAN is a way to partition a single switch into "
        "multiple switches.</p>",
    )
    + "</section>\n</section>",
)


def test_split_ovs_faq_questions_answers_and_ids() -> None:
    page, qa = ns.split_ovs_faq(FAQ)
    assert [q for _, q, _ in qa] == list(ASKED)  # Q: off, tags out, entities read, whole
    assert {k: a for k, _, a in qa} == {k.split("/")[1]: a for k, a in ANSWERS.items()}
    for _, q, a in qa:
        assert a in page
        assert nsc.flat(q) not in nsc.flat(page)
    # the sidebar and footer leave the page with the unanswered entry and the labels; the
    # title, its paragraph, the section's heading and text stay, in no answer
    assert "Sidebar" not in page and "answered at all" not in page
    assert not re.search(r"(?m)^\s*(?:Q|A)[:.] ", page)
    assert page.startswith("# General\n\nThese questions are about the project.\n")
    assert "## VLANs\n\nText of the VLAN section." in page
    assert all("VLAN section" not in a and "## VLANs" not in a for *_, a in qa)


def test_split_ovs_faq_edges() -> None:
    # no Q: paragraph: the main column converted, nothing asked; a repeated slug gets -2;
    # a heading ends the answer above it; a question with neither a label nor a blockquote
    # ends with its paragraph
    page, none = ns.split_ovs_faq(_page("Notes", "<h1>Notes</h1><p>Text.</p>"))
    assert none == [] and page == "# Notes\n\nText.\n"
    page, qa = ns.split_ovs_faq(
        _page(
            "Edges",
            _entry("Same words?", "<p>A: First.</p>")
            + _entry("Same words?", "<p>A: Second.</p>")
            + "<p>Q: Bare?</p><p>Plain answer.</p><h1>Later</h1><p>Under it.</p>",
        )
    )
    assert qa == [
        ("same-words", "Same words?", "First."),
        ("same-words-2", "Same words?", "Second."),
        ("bare", "Bare?", "Plain answer."),
    ]
    assert page == "First.\n\nSecond.\n\nPlain answer.\n\n# Later\n\nUnder it.\n"
    # a paragraph that only mentions "A:" later in its text is not a label; with no label,
    # a question going on over a code block and a second paragraph ends at the blockquote
    _, mid = ns.split_ovs_faq(_page("Mid", _entry("Why?", "<p>See note A: below.</p>")))
    assert mid == [("why", "Why?", "See note A: below.")]
    _, long = ns.split_ovs_faq(
        _page(
            "Long",
            "<p>Q: I ran this:</p><pre>ovs-vsctl show</pre><p>Why nothing?</p>"
            "<blockquote><div><p>Because.</p></div></blockquote>",
        )
    )
    assert long == [
        (
            "i-ran-this-ovs-vsctl-show-why-nothing",
            "I ran this: ovs-vsctl show Why nothing?",
            "Because.",
        )
    ]


_WORD = st.sampled_from(["bridge", "port", "vlan", "flow", "tunnel", "datapath", "ovsdb"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(_WORD, min_size=1, max_size=10),  # the question's words
            st.lists(_WORD, min_size=0, max_size=16),  # the answer's words (may be none)
            st.sampled_from(["A: ", "A. ", ""]),  # the answer's label
        ),
        min_size=1,
        max_size=8,
    )
)
def test_split_ovs_faq_property(entries: list[tuple[list[str], list[str], str]]) -> None:
    """Random entries, some unanswered, labelled ``A:``, ``A.`` or not at all: one question
    per answered entry, in order, its slug its id, its answer its text without the label,
    in the page; no question's word left in it."""
    body, expected = "<h1>Random</h1>\n", []
    for n, (qwords, awords, label) in enumerate(entries):
        q = " ".join([f"entry{n}x", *qwords]) + "?"
        if awords:
            answer = " ".join(["Answer", *awords])
            body += _entry(q, f"<p>{label}{answer}</p>")
            expected.append((q, answer))
        else:
            body += f"<p>Q: {q}</p>\n"
    page, qa = ns.split_ovs_faq(_page("Random", body))
    assert [(q, a) for _, q, a in qa] == expected
    assert [k for k, _, _ in qa] == [ns._slug(q) for q, _ in expected]
    for _, _, a in qa:
        assert a in page
    assert not re.search(r"entry\d+x", page)


# -- the set, built from a package tree shaped like Debian's openvswitch-doc ---------------


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.OVS_PACKAGE, "3.1.0-2+deb12u1")
    html_dir: Path = root / ns.OVS_HTML

    def page(rel: str, title: str, body: str) -> None:
        (html_dir / rel).parent.mkdir(parents=True, exist_ok=True)
        (html_dir / rel).write_text(_page(title, f"<h1>{title}</h1>{body}"), encoding="utf-8")

    (html_dir / "faq").mkdir(parents=True)
    (html_dir / "faq" / "general.html").write_text(faq, encoding="utf-8")
    page(
        "faq/index.html",
        "Open vSwitch FAQ",
        '<ul><li><a href="general.html">General</a></li></ul>',
    )
    page(
        "index.html",
        "Open vSwitch Documentation",
        f"<p>New here? Read &#8220;{Q_WHAT}&#8221; It is a multilayer switch.</p>",
    )
    page("intro/what-is-ovs.html", "Getting Started", "<p>Install it first.</p>")
    page(
        "ref/ovs-actions.7.html",
        "ovs-actions",
        "<p>Actions intro.</p>"
        + "".join(
            f"<section><h2>Action {n}</h2>" + "<p>Action text that runs on.</p>" * 2000
            for n in (1, 2, 3)
        )
        + "</section>" * 3,
    )
    for skipped in ns.OVS_LEFT_OUT:
        page(skipped, "Left out", "<p>left out</p>")
    page("_static/left.html", "Left out", "<p>left out</p>")
    (html_dir / "_sources" / "faq").mkdir(parents=True)
    (html_dir / "_sources" / "faq" / "general.rst.txt").write_text(f"Q: {Q_WHAT}\n")
    doc = html_dir.parent
    write_gz(doc / "changelog.Debian.gz", "left out\n")
    (doc / "copyright").write_text("left out\n")
    return html_dir


@pytest.fixture
def html_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package tree as shipped (the FAQ page :data:`FAQ`), its ``html/`` folder."""
    return _package(tmp_path, monkeypatch)


def test_openvswitch_faq_set_from_a_package_tree(html_dir: Path) -> None:
    nset = ns.openvswitch_faq_set()
    cut = {
        "ref/ovs-actions.7/00-ovs-actions.md",
        "ref/ovs-actions.7/01-action-1.md",
        "ref/ovs-actions.7/02-action-2.md",
        "ref/ovs-actions.7/03-action-3.md",
    }
    nsc.assert_package_set(
        nset,
        "openvswitch-faq",
        ids=list(ANSWERS),
        files={"faq/general.md", "faq/index.md", "index.md", "intro/what-is-ovs.md", *cut},
        source="faq/general.md",
        version="3.1.0-2+deb12u1",
        too_long="ref/ovs-actions.7.html in 4 files",
        answers=ANSWERS,
    )
    text = " ".join(nset.files.values())
    assert "left out" not in text and "Sidebar" not in text
    # a page quoting a question scrubbed, its other text kept; each cut file under the
    # limit, headed by its section
    assert "It is a multilayer switch." in nset.files["index.md"]
    assert all(len(nset.files[rel]) <= ns.OVS_MAX_PAGE_CHARS for rel in cut)
    assert nset.files["ref/ovs-actions.7/02-action-2.md"].startswith("## Action 2\n")
    assert "Actions intro." in nset.files["ref/ovs-actions.7/00-ovs-actions.md"]


def test_openvswitch_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = FAQ.replace(
        "Open vSwitch is a production quality open source software\nswitch.", "A switch."
    )
    short = short.replace("<p>It is designed for virtualized server environments.</p>", "")
    assert short != FAQ
    _package(tmp_path, monkeypatch, short)
    nsc.assert_left_out(ns.openvswitch_faq_set(), Q_WHAT, len(ASKED) - 1)


def test_no_question_text_is_left_in_any_file(html_dir: Path) -> None:
    nsc.assert_leak_checked(
        ns.openvswitch_faq_set(), {"faq/general.html": FAQ}, ASKED, is_html=True
    )


def test_openvswitch_faq_set_halves_are_fixed_and_disjoint(html_dir: Path) -> None:
    more = FAQ.replace(
        "</section>\n</section>",
        _entry("How do I make a flow drop packets?", "<p>A: Give it no actions at all.</p>")
        + "</section>\n</section>",
    )
    assert more != FAQ
    nsc.assert_halves_survive_an_added_question(
        ns.openvswitch_faq_set,
        lambda: (html_dir / "faq" / "general.html").write_text(more, encoding="utf-8"),
    )


def test_openvswitch_faq_set_refuses_a_package_without_the_faq(html_dir: Path) -> None:
    (html_dir / "faq" / "index.html").unlink()
    nsc.assert_refuses_without_faq(ns.openvswitch_faq_set, "faq/index.html")
