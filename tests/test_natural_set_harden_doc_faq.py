"""The ``harden-doc-faq`` natural-question set (``bench/natural_sets.py``): the Securing
Debian Manual's FAQ chapter as Debian's ``harden-doc`` ships it (``html/en-US/``: Publican's
chunked XHTML, chapter 12 on ``ch12.html``, ``ch12s02.html`` and
``debian-sec-team-faq.html``), read by Django's heading rule unchanged at level 3
(``split_heading_questions`` over ``xsl_page_markdown``, composed in
``split_harden_faq_page``), on a small inline package tree of that shape (navigation lists,
generated contents naming every question, a question with text of its own over deeper
questions, a group title with no text, a stated problem on the second page, a one-word
answer, footnotes, a manual page quoting a question in a cross-reference, the gzipped page
Debian compressed for its name, a page over the limit, a translation, the stylesheets, the
package's changelog and copyright); offline, no embedding model, no test reads the real
package.

What the set's numbers rest on: every ``###`` or deeper title with text under it asks,
statements too, its section number off; a question over deeper questions answers with its
own text only; a group title with no text asks nothing and leaves; the ``##`` sections and
the chapter title stay; the contents lists (every question again) are gone; each answer is
exactly the text under its title; the other English pages are in, the translations and the
package's notes out; no question is left in any file; the halves are fixed.
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

VERSION = "3.19+nmu1"

Q_BETTER = "Is Debian more secure than X?"
Q_SAFE = "Are all Debian packages safe?"
Q_INETD = "Can I remove inetd?"
Q_PORT = "Why do I have port 111 open?"
Q_PROFTPD = "proftpd is vulnerable to a Denial of Service attack."
ASKED = [Q_BETTER, Q_SAFE, Q_INETD, Q_PROFTPD]
GROUP = "Questions regarding services and open ports"
A_BETTER = (
    "A system is only as secure as its administrator is capable of making it.[1] See the "
    "statistics before comparing."
)
A_SAFE = "The official Debian packages are checked by their maintainers before upload."
A_INETD = (
    "Inetd is not easy to remove since netbase depends on the package that provides it. "
    "Disable its services instead:\n\n```\n update-inetd --disable discard\n```"
    "\n\n[1] Counting vulnerabilities misleads."
)
A_PROFTPD = "Add Umask 022 and TimeoutIdle 60 to the server's configuration and restart it."


def _section(level: int, number: str, title: str, inner: str) -> str:
    """One Publican section: its ``titlepage`` with the numbered ``<hN class="title">`` and
    the generated anchor, then ``inner`` (its paragraphs and sub-sections)."""
    return (
        '<div class="section"><div class="titlepage"><div><div>'
        f'<h{level} class="title"><a xmlns="" id="id-{number}"></a>{number}. {title}'
        f"</h{level}></div></div></div>{inner}</div>"
    )


def _para(text: str) -> str:
    return f'<div class="para">\n\t\t{text}\n\t</div>'


def _page(title: str, body: str, toc: str = "") -> str:
    """A Publican page: the navigation lists above and below (the lower one naming the
    neighbouring pages), the contents (``toc``) when given, ``body``."""
    top = (
        '<ul class="docnav top"><li class="previous"><a accesskey="p" href="ch11.html">'
        '<strong>Prev</strong></a></li><li class="home">navlink Manual</li>'
        '<li class="next"><a accesskey="n" href="ch12s02.html"><strong>Next</strong></a></li>'
        "</ul>"
    )
    bottom = (
        '<ul class="docnav"><li class="previous"><a href="ch11.html"><strong>Prev</strong>'
        'navlink 11.5. Analysis of malware</a></li><li class="up"><a href="#"><strong>Up'
        '</strong></a></li><li class="next"><a href="ch12s02.html"><strong>Next</strong>'
        "navlink 12.2. Specific software</a></li></ul>"
    )
    contents = f'<div class="toc"><dl class="toc">{toc}</dl></div>' if toc else ""
    return (
        '<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n<html><head><title>'
        f'{title}</title></head><body>{top}<div class="chapter">{contents}{body}</div>'
        f"{bottom}</body></html>\n"
    )


def _toc(*titles: str) -> str:
    return "".join(f'<dt><span class="section"><a href="#x">{t}</a></span></dt>' for t in titles)


CH12 = _page(
    "Chapter 12. Frequently asked Questions (FAQ)",
    '<div class="titlepage"><div><div><h1 class="title"><a xmlns="" id="id-1.13"></a>'
    "Chapter 12. Frequently asked Questions (FAQ)</h1></div></div></div>"
    + _para("This chapter introduces some of the most common questions from the list.")
    + _section(
        2,
        "12.1",
        "Security in the Debian operating system",
        _section(
            3,
            "12.1.1",
            Q_BETTER,
            _para(
                "A system is only as secure as its administrator is capable of making it.<a "
                'href="#ftn.1" class="footnote"><sup class="footnote">[1]</sup></a> See the '
                "statistics before comparing."
            )
            + _section(4, "12.1.1.1", Q_SAFE, _para(A_SAFE))
            + _section(
                4,
                "12.1.1.2",
                GROUP,
                _section(5, "12.1.1.2.1", Q_PORT, _para("See portmap."))
                + _section(
                    5,
                    "12.1.1.2.2",
                    'Can I remove <span class="application">inetd</span>?',
                    _para(
                        "<span class='application'>Inetd</span> is not easy to remove since "
                        "netbase depends on the package that provides it. Disable its "
                        "services instead:"
                    )
                    + '<pre class="screen"> update-inetd --disable discard</pre>',
                ),
            ),
        ),
    )
    + '<div class="footnotes"><div class="para">[1] Counting vulnerabilities misleads.</div>'
    "</div>",
    toc=_toc("12.1. Security in the Debian operating system", f"12.1.1. {Q_BETTER}", Q_SAFE),
)


def _ch12s02(more: str = "") -> str:
    """The second FAQ page: section 12.2's stated problem, and ``more`` sections after it."""
    return _page(
        "12.2. Specific software",
        _section(
            2,
            "12.2",
            "Specific software",
            _section(3, "12.2.1", Q_PROFTPD, _para(A_PROFTPD)) + more,
        ),
    )


CH12S02 = _ch12s02()
SECTEAM = _page(
    "12.3. Questions regarding the Debian security team",
    _section(
        2,
        "12.3",
        "Questions regarding the Debian security team",
        _para("The security team keeps its list of Frequently Asked Questions on the web."),
    ),
)
SHIPPED = {"ch12.html": CH12, "ch12s02.html": CH12S02}
FILES = {
    "ch12.md",
    "ch12s02.md",
    "debian-sec-team-faq.md",
    "index.md",
    "ch04s10.md",
    "changelog.md",
}


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The manual's folder as shipped: the three FAQ pages; the title page with the whole
    contents; a manual page quoting a question in a cross-reference; section 1.2 gzipped as
    ``changelog.html.gz``; a page over the limit; the stylesheets and images; the German
    edition; the package's changelog and copyright beside ``html/``."""
    root = unpacked_package(tmp_path, monkeypatch, ns.HARDEN_PACKAGE, VERSION)
    doc = root / ns.HARDEN_DOC
    (doc / "Common_Content/css").mkdir(parents=True)
    (doc / "ch12.html").write_text(CH12, encoding="utf-8")
    (doc / "ch12s02.html").write_text(CH12S02, encoding="utf-8")
    (doc / "debian-sec-team-faq.html").write_text(SECTEAM, encoding="utf-8")
    (doc / "index.html").write_text(
        _page(
            "Securing Debian Manual",
            '<div class="book"><h1 class="title">Securing Debian Manual</h1>'
            + _para("This document describes security in the Debian project.")
            + "</div>",
            toc=_toc(f"12.1.1.2.2. {Q_INETD}", Q_PROFTPD),
        ),
        encoding="utf-8",
    )
    (doc / "ch04s10.html").write_text(
        _page(
            "4.10. Restricting console login access",
            _section(
                2,
                "4.10",
                "Restricting console login access",
                _para(
                    'Some services can go: see <a class="xref" href="ch12.html#id-12.1.1.2.2">'
                    f"Section 12.1.1.2.2, “{Q_INETD}”</a> for the super-server."
                ),
            ),
        ),
        encoding="utf-8",
    )
    write_gz(
        doc / "changelog.html.gz",
        _page(
            "1.2. Where to get the manual",
            _section(2, "1.2", "Where to get the manual", _para("Download it in HTML.")),
        ),
    )
    (doc / "chroot-ssh-env.html").write_text(
        _page("B.3. Chroot environment for SSH", _para("Words. " * 30_000)), encoding="utf-8"
    )
    (doc / "Common_Content/css/default.css").write_text("leftout {}\n", encoding="utf-8")
    (doc / "images").mkdir()
    (doc / "images/icon.svg").write_text("<svg>leftout</svg>\n", encoding="utf-8")
    german = root / "usr/share/doc/harden-doc/html/de-DE"
    german.mkdir(parents=True)
    (german / "ch12.html").write_text(_page("leftout", _para("leftout")), encoding="utf-8")
    write_gz(root / "usr/share/doc/harden-doc/changelog.gz", "leftout changelog\n")
    (root / "usr/share/doc/harden-doc/copyright").write_text("leftout\n", encoding="utf-8")
    return doc


@pytest.fixture
def doc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return _package(tmp_path, monkeypatch)


def test_harden_doc_faq_set_from_a_package_tree(doc: Path) -> None:
    nset = ns.harden_doc_faq_set()
    assert nset.name == "harden-doc-faq"
    assert [q.qid for q in nset.questions] == [f"harden-doc-faq:{ns._slug(q)}" for q in ASKED]
    # numbers off, inline markup joined, statements ask as the FAQ's authors wrote them
    assert [q.text for q in nset.questions] == ASKED
    assert [q.answers[0][0] for q in nset.questions] == [A_BETTER, A_SAFE, A_INETD, A_PROFTPD]
    assert [q.source for q in nset.questions] == ["ch12.md"] * 3 + ["ch12s02.md"]
    assert set(nset.files) == FILES
    nsc.assert_questions_out_answers_in(nset)
    nsc.assert_files_as_written(nset)
    assert VERSION in nset.note and "over 150000 chars: chroot-ssh-env.md" in nset.note
    nsc.assert_held_out("harden-doc-faq")
    faq = nset.files["ch12.md"]
    # the chapter and the ## section stay; no ### or deeper heading is left; the group title
    # with no text left with its questions; the contents (every question again) dropped
    assert "# Chapter 12. Frequently asked Questions (FAQ)" in faq
    assert "## 12.1. Security in the Debian operating system" in faq
    assert not re.search(r"(?m)^#{3,} ", faq) and GROUP not in faq and "12.1.1" not in faq
    # the question over deeper questions answers with its own text; its footnote at the
    # page's end goes with the last answer on the page, as the rule reads it
    assert faq.index(A_BETTER) < faq.index(A_SAFE) < faq.index(A_INETD)
    assert "Counting vulnerabilities misleads." in faq
    assert "# 12.2. Specific software" in nset.files["ch12s02.md"]
    assert "Frequently Asked Questions on the web" in nset.files["debian-sec-team-faq.md"]
    # the other English pages in, as markdown, their contents dropped; the cross-reference
    # quoting a question scrubbed, its sentence kept
    assert "security in the Debian project" in nset.files["index.md"]
    assert Q_PROFTPD not in nset.files["index.md"]
    assert "Some services can go: see Section 12.1.1.2.2" in nset.files["ch04s10.md"]
    assert "Download it in HTML." in nset.files["changelog.md"]
    everything = " ".join(nset.files.values())
    assert "leftout" not in everything  # translation, css, notes
    assert "navlink" not in everything and "Prev" not in everything  # navigation lists
    nsc.assert_left_out(nset, Q_PORT, len(ASKED))


def test_no_question_text_is_left_in_any_file(doc: Path) -> None:
    nsc.assert_leak_checked(ns.harden_doc_faq_set(), SHIPPED, [*ASKED, Q_PORT], is_html=True)


def test_harden_doc_faq_set_halves_are_fixed_and_disjoint(doc: Path) -> None:
    more = _ch12s02(
        _section(
            3,
            "12.2.2",
            "After installing portsentry, there are a lot of ports open.",
            _para("That is the way portsentry works: it listens on unused ports."),
        )
    )
    nsc.assert_halves_survive_an_added_question(
        ns.harden_doc_faq_set,
        lambda: (doc / "ch12s02.html").write_text(more, encoding="utf-8"),
    )


def test_harden_doc_faq_set_refuses_a_package_without_the_faq(doc: Path) -> None:
    (doc / "ch12.html").unlink()
    nsc.assert_refuses_without_faq(ns.harden_doc_faq_set, "ch12.html")


_WORD = st.sampled_from(["Debian", "inetd", "port", "logs", "root", "compromised"])


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(1, 4),  # how deep under the chapter: 1 = a ## section
            st.lists(_WORD, min_size=1, max_size=6),  # the title's words
            st.sampled_from(["?", "!", ".", ""]),  # how the title ends
            st.lists(_WORD, min_size=0, max_size=5),  # its own text (empty: none)
        ),
        min_size=1,
        max_size=10,
    )
)
def test_split_harden_faq_page_nested_sections_property(
    entries: list[tuple[int, list[str], str, list[str]]],
) -> None:
    """Random Publican FAQ pages of numbered sections nested 2 to 5 deep (a section at most
    one level under the one before), titles asking or stating, some with text of their own
    and some without, the contents listing every title: exactly Django's rule at level 3
    asks (every ``###`` or deeper title with text under it, whatever its form, its number
    off, its answer exactly its own text up to the next title), ids the slugs with repeats
    told apart; the ``##`` titles and every answer stay in the page, no asked or group title
    and no section number below ``##`` is left in it."""
    levels: list[int] = []
    counters = [0] * 6
    sections: list[tuple[int, str, str, str]] = []  # (level, number, title, own text)
    for n, (depth, words, end, text) in enumerate(entries):
        level = min(depth + 1, (levels[-1] + 1) if levels else 2)
        levels.append(level)
        counters[level] += 1
        counters[level + 1 :] = [0] * (5 - level)
        number = ".".join(["12", *(str(counters[k]) for k in range(2, level + 1))])
        body = f"Text{n} {' '.join(text)}." if text else ""
        sections.append((level, number, f"entry{n}x {' '.join(words)}{end}", body))
    html: list[str] = []
    open_levels: list[int] = []
    for level, number, title, body in sections:
        while open_levels and open_levels[-1] >= level:
            html.append("</div>")
            open_levels.pop()
        html.append(
            '<div class="section"><div class="titlepage"><div><div>'
            f'<h{level} class="title"><a xmlns="" id="id-{number}"></a>{number}. {title}'
            f"</h{level}></div></div></div>" + (_para(body) if body else "")
        )
        open_levels.append(level)
    html += ["</div>"] * len(open_levels)
    page_html = _page(
        "Chapter 12. FAQ",
        '<h1 class="title">Chapter 12. FAQ</h1>' + "".join(html),
        toc=_toc(*(f"{num}. {t}" for _, num, t, _ in sections)),
    )
    seen: dict[str, int] = {}
    page, qa = ns.split_harden_faq_page(page_html, seen)
    expected_ids: dict[str, int] = {}
    expected = [
        (ns._repeat_id(expected_ids, ns._slug(title)), title, body)
        for level, _, title, body in sections
        if level >= 3 and body
    ]
    assert qa == expected
    assert seen == expected_ids
    nsc.assert_page_keeps_answers(qa, page)
    for level, number, title, _ in sections:
        heading = f"## {number}. {title}\n"
        assert (heading in page + "\n") == (level == 2)
        if level >= 3:
            assert f"{number}. " not in page and title not in page


_BLOCK = st.one_of(
    st.tuples(st.just("text"), st.sampled_from(["<p>Disable inetd.</p>", "ul docnav", "<br/>"])),
    st.tuples(st.just("nav"), st.sampled_from(["docnav", "docnav top", "DocNav"])),
    st.tuples(st.just("list"), st.sampled_from(["itemizedlist", "docnavigation", "toc"])),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_BLOCK, max_size=12), st.booleans())
def test_drop_publican_nav_property(blocks: list[tuple[str, str]], unclosed: bool) -> None:
    """Random pages of paragraphs, Publican navigation lists (``<ul class="docnav">``, any
    case, with items and links) and other lists (a class that only starts with "docnav"
    among them), the last navigation list perhaps left unclosed: exactly the navigation
    lists go, each to its ``</ul>`` (an unclosed one to the next list's, or with the rest of
    the page); every other byte stays, in order."""
    parts: list[str] = []
    kept: list[str] = []
    navs = [k for k, (kind, _) in enumerate(blocks) if kind == "nav"]
    cut = navs[-1] if unclosed and navs else None
    dropping = False  # inside the unclosed list: up to the next </ul>, whoever's it is
    for k, (kind, value) in enumerate(blocks):
        if kind == "nav":
            items = f'<li class="previous"><a href="p{k}.html"><strong>Prev</strong></a></li>'
            parts.append(f'<ul class="{value}" id="n{k}">{items}{"" if k == cut else "</ul >"}')
            dropping = k == cut
            continue
        block = f'<ul class="{value}"><li>item{k}</li></ul>' if kind == "list" else value
        parts.append(block)
        if not dropping:
            kept.append(block)
        elif kind == "list":
            dropping = False  # its </ul> ended the unclosed navigation list
    assert ns.drop_publican_nav("".join(parts)) == "".join(kept)
