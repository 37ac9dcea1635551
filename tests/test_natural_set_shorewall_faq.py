"""The ``shorewall-faq`` natural-question set (``bench/natural_sets.py``), its reading of
Shorewall's DocBook XSL FAQ page and the question-leak check (``bench/check_question_leaks.py``)
on small inline pages shaped like Debian's ``shorewall-doc`` ships them
(``/usr/share/doc/shorewall-doc/html/FAQ.htm``: one article, a title page with author
names as ``<h3>``, a table of contents listing every question, ``<h2>`` groups over
``<h3>`` entries titled "(FAQ N) ..." and ``<h4>`` follow-ups "(FAQ Na) ...", an unlabelled
entry that asks, an unlabelled sub-section inside an answer, admonition boxes titled by an
``<h3>``, a cross-reference that quotes another question, an entry whose answer is a
pointer, generated anchors ``idm123``) beside manual pages the FAQ links to (an article and
a man page), the licence, a translation and an unlinked page to be left out, in a package
tree laid out as ``shorewall-doc`` unpacks (marker present, nothing downloaded); offline, no
embedding model, no test reads the real package.

What the set's numbers rest on: no question's text is left in any file (the FAQ's headings
and labels, its contents, a cross-reference, a manual page quoting one); each answer is
exactly the text under its heading up to the next question or shallower section; ids are
the FAQ's labels, so an added entry keeps the halves; an answer too short to judge leaves
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

import natural_set_checks as nsc
import natural_sets as ns
from debian_package_double import unpacked_package

Q_FORWARD = "I want to forward UDP port 7777 to my personal PC. How do I do it?"
Q_STILL = "I'm still having problems with port forwarding"
Q_HOWTO = "Where do I find Step by Step Installation and Configuration Instructions?"
Q_FW = "What is this $FW that I see in the configuration files?"
Q_LOG = "Why are these packets being Dropped/Rejected?"
Q_SHORE = "Why do you call it “Shorewall”?"
Q_RELOAD = "After upgrading to the latest version (> 5.1.10.1), my changes aren't in the ruleset."
Q_QT = "What is 'qt'? I see it in some of the older documentation."

_TITLEPAGE = '<div class="titlepage"><div><div>'


def _head(level: int, anchor: str, title: str) -> str:
    return (
        f'<div class="section">{_TITLEPAGE}<h{level} class="title"><a id="{anchor}"></a>'
        f"{title}</h{level}></div></div></div>"
    )


def _admonition(kind: str, text: str) -> str:
    return (
        f'<div class="{kind.lower()}" style="margin-left: 0.5in; margin-right: 0.5in;">'
        f'<h3 class="title">{kind}</h3><p>{text}</p></div>'
    )


def _article(title: str, body: str, toc: str = "") -> str:
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<html xmlns="http://www.w3.org/1999/xhtml">'
        f'<head><title>{title}</title><meta name="generator" content="DocBook XSL '
        'Stylesheets Vsnapshot" /></head><body><div class="article"><div class="titlepage">'
        f'<div><div><h2 class="title"><a id="idm1"></a>{title}</h2></div><div>'
        '<div class="authorgroup"><h3 class="corpauthor">Shorewall Community</h3>'
        '<div class="author"><h3 class="author"><span class="firstname">Tom</span> '
        '<span class="surname">Eastep</span></h3></div></div></div><div><p class="copyright">'
        "Copyright © 2001-2016 Thomas M. Eastep</p></div></div><hr /></div>"
        f'<div class="toc"><p><strong>Table of Contents</strong></p><dl class="toc">{toc}</dl>'
        f"</div>{body}</div></body></html>\n"
    )


FAQ_BODY = (
    _admonition("Caution", "This article applies to Shorewall 4.4 and later.")
    + _head(2, "Install", "Installing Shorewall")
    + _head(
        3,
        "Howto",
        "Where do I find Step by Step Installation and Configuration\n      Instructions?",
    )
    + '<p><span class="bold"><strong>Answer:</strong></span> Check out the <a class="ulink" '
    'href="shorewall_quickstart_guide.htm" target="_self">QuickStart Guides</a>.</p></div>'
    + _head(
        3,
        "faq2.6",
        "(FAQ 2 .6) After upgrading to the latest version (&gt; 5.1.10.1),"
        "\n      my changes aren't in the ruleset.",
    )
    + "<p>Answer: Compile with <code>shorewall reload</code> after each change to the files."
    "</p></div></div>"
    + _head(2, "PortForwarding", "Port Forwarding (Port Redirection)")
    + _head(
        3,
        "faq1",
        "(FAQ 1) I want to forward UDP port 7777 to my personal PC. How do I\n      do it?",
    )
    + "<p>Answer: The format of a port-forwarding rule from the net is as follows:</p>"
    '<pre class="programlisting">#ACTION  SOURCE  DEST\n'
    "DNAT     net     loc:192.168.1.5 udp 7777</pre>"
    + _admonition("Important", "The above does not work for forwarding from the local network.")
    + _head(4, "faq1b", "(FAQ 1b) I'm still having problems with port forwarding")
    + "<p>Answer: That is usually the result of one of five things, see "
    '<a class="link" href="#faq1" title="(FAQ 1) ...">the section called “(FAQ 1) I want to '
    "forward UDP port 7777 to my personal PC. How do I do it?”</a> again.</p></div></div>"
    + _head(2, "Logging", "Logging")
    + _head(3, "pseudofaq17", "Why are these packets being Dropped/Rejected?")
    + '<p>Please see <a class="link" href="#faq17">FAQ 17</a>.</p></div>'
    + _head(3, "faq17", "(FAQ 17) Why are these packets being Dropped/Rejected?")
    + "<p>Answer: Logging of dropped packets occurs out of a number of chains in Shorewall."
    "</p></div>"
    + _head(3, "faqNotes", "Log levels")
    + "<p>Shorewall logs at the levels syslog knows, from debug to emerg.</p></div></div>"
    + _head(2, "Misc", "Miscellaneous")
    + _head(3, "faq95", "(FAQ 95) What is this $FW that I see in the configuration files?")
    + "<p>Answer: FW is a shell variable that expands to the firewall zone's name.</p>"
    + _head(4, "faq95a", "Why was that done?")
    + "<p>Answer: The firewall zone has special semantics, so a name for it helps.</p>"
    "</div></div>"
    + _head(
        3,
        "faq13",
        '(FAQ 13) Why do you call it <span class="quote">“<span class="'
        'quote">Shorewall</span>”</span>?',
    )
    + "<p>Answer: Cute name, after a place where the author once lived.</p></div>"
    + _head(
        3, "idm1651", "(FAQ 102) What is 'qt'? I see it in some of the older\n      documentation."
    )
    + "<p>Answer: qt is a shell function that runs a command quietly, dropping its output."
    "</p></div>" + _head(3, "idm1700", "(FAQ 108) Is this entry answered at all?") + "</div></div>"
)
TOC = "".join(
    f'<dt><span class="section"><a href="#x">{q}</a></span></dt>'
    for q in (Q_HOWTO, Q_FORWARD, Q_STILL, Q_FW, Q_QT)
)
LINKS = (
    '<p>See <a class="ulink" href="two-interface.htm#Forward" target="_self">the guide</a>, '
    '<a class="ulink" href="manpages/shorewall-rules.html">shorewall-rules</a>(5), '
    '<a class="ulink" href="GnuCopyright.htm">the licence</a>, '
    '<a class="ulink" href="Big.html">a big page</a>, '
    '<a class="ulink" href="https://shorewall.org/FAQ.htm">the web</a> and '
    '<a class="ulink" href="Missing.html">a page not shipped</a>.</p>'
)
FAQ = _article("Shorewall FAQs", LINKS + FAQ_BODY, TOC)
ANSWERS = {
    "Howto": "Answer: Check out the QuickStart Guides.",
    "faq2.6": "Answer: Compile with shorewall reload after each change to the files.",
    "faq17": "Answer: Logging of dropped packets occurs out of a number of chains in Shorewall.",
    "faq13": "Answer: Cute name, after a place where the author once lived.",
    "faq102": "Answer: qt is a shell function that runs a command quietly, dropping its output.",
}


def test_split_shorewall_faq_questions_answers_and_ids() -> None:
    page, qa = ns.split_shorewall_faq(FAQ)
    assert [(k, q) for k, q, _ in qa] == [
        ("Howto", Q_HOWTO),
        ("faq2.6", Q_RELOAD),
        ("faq1", Q_FORWARD),
        ("faq1b", Q_STILL),
        ("pseudofaq17", Q_LOG),
        ("faq17", Q_LOG),
        ("faq95", Q_FW),
        ("faq13", Q_SHORE),
        ("faq102", Q_QT),
    ]
    answers = {k: a for k, _, a in qa}
    for key, text in ANSWERS.items():
        assert nsc.flat(answers[key]) == nsc.flat(text)
    # FAQ 1 answers with its text before its follow-up, admonition included, as text
    one = answers["faq1"]
    assert "DNAT     net     loc:192.168.1.5 udp 7777" in one
    assert "forwarding from the local network" in one and "\nImportant\n" in one
    assert "five things" not in one and "five things" in answers["faq1b"]
    # an unlabelled sub-section inside an answer is part of it, as a bold line
    assert "**Why was that done?**" in answers["faq95"] and "special semantics" in answers["faq95"]
    assert answers["pseudofaq17"] == "Please see FAQ 17."
    for _, _, a in qa:
        assert a in page
    # labels and titles leave; contents dropped; group titles and the article's title stay
    for q in (Q_HOWTO, Q_FW, Q_QT, Q_SHORE, "(FAQ 2", "(FAQ 95)", "Table of Contents", "entry"):
        assert q not in page
    for kept in ("## Shorewall FAQs", "## Port Forwarding (Port Redirection)", "## Logging"):
        assert kept in page
    # an unlabelled title that asks nothing stays as a heading, its text no answer's
    assert "### Log levels" in page
    assert all("syslog knows" not in a for *_, a in qa)
    # no admonition title or author name as a heading
    assert not re.search(r"(?m)^#+ (Caution|Important|Tom Eastep|Shorewall Community)$", page)
    assert "Tom Eastep" in page and "Caution" in page


def test_split_shorewall_faq_without_sections() -> None:
    page, qa = ns.split_shorewall_faq("<html><body><p>Prose, no entry.</p></body></html>")
    assert qa == [] and "Prose, no entry." in page
    # a label at any depth asks; a repeat id gets -2
    _, twice = ns.split_shorewall_faq(
        _head(4, "a", "(FAQ 7) Stated, not asked.")
        + "<p>One answer here.</p>"
        + _head(5, "b", "(FAQ 7) Stated again.")
        + "<p>Two answers here.</p>"
    )
    assert [(k, q) for k, q, _ in twice] == [
        ("faq7", "Stated, not asked."),
        ("faq7-2", "Stated again."),
    ]
    # an unlabelled entry's id: its anchor, or its slug where DocBook generated the anchor
    _, unlabelled = ns.split_shorewall_faq(
        _head(3, "idm55", "How do I do this without a label?")
        + "<p>Generated anchor here.</p></div>"
        + _head(3, "Named", "Where is the named anchor kept?")
        + "<p>Named anchor here.</p></div>"
    )
    assert [k for k, _, _ in unlabelled] == ["how-do-i-do-this-without-a-label", "Named"]
    # an unlabelled asking title under the article (an <h2>) is a group, not a question
    _, groups = ns.split_shorewall_faq(_head(2, "g", "Why use Shorewall at all?") + "<p>Text.</p>")
    assert groups == []


_WORD = st.sampled_from(["port", "zone", "rule", "dnat", "masq", "log", "bridge", "ipv6"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(_WORD, min_size=0, max_size=8),  # the title's words after the first
            st.booleans(),  # labelled "(FAQ N)"
            st.sampled_from([3, 4]),  # entry or follow-up
            st.lists(_WORD, min_size=0, max_size=20),  # the answer's words (may be none)
        ),
        max_size=8,
    )
)
def test_split_shorewall_faq_property(
    entries: list[tuple[list[str], bool, int, list[str]]],
) -> None:
    """Random entries, labelled or asking, entries and follow-ups, some unanswered: one
    question per answered entry, in order, its label or anchor its id, its answer its text,
    in the page; no title left in it."""
    body = _head(2, "group", "Group")
    spec = []
    for k, (words, labelled, level, awords) in enumerate(entries):
        title = " ".join([f"entry{k}x", *words]) + "?"
        answer = " ".join(["Answer", *awords]) if awords else ""
        label = f"(FAQ {k}) " if labelled else ""
        key = f"faq{k}" if labelled else f"anchor{k}"
        # an unlabelled follow-up would be part of the answer before it: entries only
        level = level if labelled else 3
        body += _head(level, f"anchor{k}", label + title) + (f"<p>{answer}</p>" if answer else "")
        body += "</div>"
        spec.append((key, title, answer))
    page, qa = ns.split_shorewall_faq(_article("FAQ", body))
    assert [(k, q, a) for k, q, a in qa] == [(k, t, a) for k, t, a in spec if a]
    for _, _, a in qa:
        assert a in page
    for _, t, _ in spec:
        assert t not in page


def test_xsl_page_markdown_keeps_levels_and_drops_contents() -> None:
    man = (
        '<html><body><div class="refentry"><div class="refnamediv"><h2>Name</h2>'
        '<p>rules — Shorewall rules file</p></div><div class="refsect1"><a id="idm9"></a>'
        "<h2>Description</h2><p>Entries in this file govern connection establishment.</p>"
        + _admonition("Warning", "Do not use this file for simple port forwarding.")
        + "</div></div></body></html>"
    )
    text = ns.xsl_page_markdown(man)
    assert "## Name" in text and "## Description" in text
    assert "Warning" in text and "### Warning" not in text
    guide = ns.xsl_page_markdown(_article("Guide", _head(2, "s", "Setup") + "<p>Body.</p>", TOC))
    assert "## Guide" in guide and "## Setup" in guide and "Body." in guide
    assert Q_HOWTO not in guide and "Table of Contents" not in guide
    assert "### Tom Eastep" not in guide and "Tom Eastep" in guide


# -- the set, built from a package tree shaped like Debian's shorewall-doc ------------------


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ) -> tuple[Path, Path]:
    root = unpacked_package(tmp_path, monkeypatch, ns.SHOREWALL_PACKAGE, "5.2.8-2")
    doc: Path = root / ns.SHOREWALL_DOC
    (doc / "manpages").mkdir(parents=True)
    (doc / ns.SHOREWALL_FAQ).write_text(faq, encoding="utf-8")
    (doc / "two-interface.htm").write_text(
        _article(
            "Basic Two-Interface Firewall",
            _head(2, "Forward", "Port Forwarding")
            + f"<p>People ask: {Q_FORWARD} Add a DNAT rule to /etc/shorewall/rules.</p></div>",
        ),
        encoding="utf-8",
    )
    (doc / "manpages" / "shorewall-rules.html").write_text(
        '<html><body><div class="refentry"><h2>Name</h2><p>rules — Shorewall rules file</p>'
        "<h2>Description</h2><p>Entries in this file govern connection establishment.</p>"
        "</div></body></html>",
        encoding="utf-8",
    )
    (doc / "GnuCopyright.htm").write_text(_article("GNU FDL", "<p>licence text</p>"))
    (doc / "Big.html").write_text(
        _article("Big", "<p>" + "iptables " * (ns.MAX_LINKED_CHARS // 9 + 10) + "</p>")
    )
    (doc / "FAQ_fr.html").write_text(_article("FAQ Shorewall", f"<p>{Q_FW}</p>"))
    (doc / "MultiISP.html").write_text(_article("Multiple ISPs", "<p>unlinked text</p>"))
    return root, doc


def test_shorewall_faq_set_from_a_package_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _package(tmp_path, monkeypatch)
    nset = ns.shorewall_faq_set()
    assert [q.qid for q in nset.questions] == [
        f"shorewall-faq:{k}"
        for k in ("Howto", "faq2.6", "faq1", "faq1b", "faq17", "faq95", "faq13", "faq102")
    ]
    assert set(nset.files) == {"FAQ.md", "two-interface.md", "manpages/shorewall-rules.md"}
    nsc.assert_questions_out_answers_in(nset)
    # the guide quoting a question: scrubbed, its other text kept
    guide = nset.files["two-interface.md"]
    assert "Add a DNAT rule to /etc/shorewall/rules." in guide and "7777" not in guide
    # the cross-reference in an answer quoting another question: scrubbed, the rest kept
    still = next(q for q in nset.questions if q.qid == "shorewall-faq:faq1b").answers[0][0]
    assert "five things" in still and "again." in still and "7777" not in still
    assert "Entries in this file govern" in nset.files["manpages/shorewall-rules.md"]
    nsc.assert_files_as_written(nset)
    assert "5.2.8-2" in nset.note and "Big.html" in nset.note and "2 manual pages" in nset.note
    nsc.assert_held_out("shorewall-faq")


def test_shorewall_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _package(tmp_path, monkeypatch)
    nset = ns.shorewall_faq_set()
    # "Please see FAQ 17." (4 words) is too short to judge: named, and its text (the same
    # as FAQ 17's) scrubbed all the same
    nsc.assert_left_out(nset, Q_LOG, 8)


def test_no_question_text_is_left_in_any_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The leak check on the set finds no copy, and finds every question in the FAQ page
    as shipped (it could fail)."""
    _package(tmp_path, monkeypatch)
    nset = ns.shorewall_faq_set()
    asked = nsc.leak_checked(nset, {"FAQ.md": ns.page_to_markdown(FAQ)})
    assert sorted(set(asked)) == sorted(
        {Q_HOWTO, Q_RELOAD, Q_FORWARD, Q_STILL, Q_LOG, Q_FW, Q_SHORE, Q_QT}
    )


def test_shorewall_faq_set_halves_are_fixed_and_disjoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, doc = _package(tmp_path, monkeypatch)
    first, dev, test = nsc.halves_of(ns.shorewall_faq_set)
    at = f'<div class="section">{_TITLEPAGE}<h3 class="title"><a id="faq13">'
    more = FAQ.replace(
        at,
        _head(3, "idm999", "(FAQ 109) Can Shorewall run inside a container?")
        + "<p>Answer: Yes, with the container's own network namespace and iptables.</p></div>"
        + at,
    )
    assert more != FAQ
    (doc / ns.SHOREWALL_FAQ).write_text(more, encoding="utf-8")
    nsc.assert_halves_kept(ns.shorewall_faq_set, first, dev, test)


def test_shorewall_faq_set_refuses_a_package_without_the_faq(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = unpacked_package(tmp_path, monkeypatch, ns.SHOREWALL_PACKAGE, "5.2.8-2")
    (root / ns.SHOREWALL_DOC / "manpages").mkdir(parents=True)
    with pytest.raises(FileNotFoundError, match=re.escape("no FAQ.htm")):
        ns.shorewall_faq_set()
