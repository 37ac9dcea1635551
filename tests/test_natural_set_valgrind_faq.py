"""The ``valgrind-faq`` natural-question set (``bench/natural_sets.py``), its reading of
Valgrind's DocBook XSL FAQ and the question-leak check (``bench/check_question_leaks.py``) on
a small inline FAQ page shaped as Debian's ``valgrind`` ships it
(``/usr/share/doc/valgrind/html/faq.html``: the navigation header, a title, the qandaset
opening with DocBook's generated list of every question, one ``<dl>`` per section, then one
table per section: a ``qandadiv`` heading row, a ``toc`` row listing the section's questions
again, spacer rows, ``question`` rows numbered ``<b>3.2.</b>`` in their first cell, one with
the message it asks about in a ``<pre class="screen">``, ``answer`` rows with paragraphs, a
program listing and a table of their own; an unanswered question; the navigation footer)
beside the other pages of the ``html/`` manual (one quoting a question, one over the page
limit, the title pages, licences and release notes to be left out), in a package tree laid
out as ``valgrind`` unpacks (marker present, nothing downloaded); offline, no embedding
model, no test reads the real package.

What the set's numbers rest on: no question's text is left in any file (the entries, both
question lists, a page quoting one); each answer is exactly its answer row; ids are the
FAQ's numbers, so an added entry keeps the halves; an answer too short to judge leaves the
set but not the corpus's scrubbing.
"""

from __future__ import annotations

import gzip
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

Q_SAY = 'How do you pronounce "Valgrind"?'
Q_MAKE = "When building Valgrind, 'make' fails with this: /usr/bin/ld: cannot find -lc"
Q_FREERES = (
    "Programs run OK on Valgrind, but at exit produce a bunch of errors involving "
    "__libc_freeres and then die with a segmentation fault."
)
Q_ATTACH = "Is it possible to attach Valgrind to a program that is already running?"
ASKED = (Q_SAY, Q_MAKE, Q_FREERES, Q_ATTACH)
ANSWERS = {
    "1.1": 'The "Val" as in the word "value". The "grind" is pronounced with a short \'i\'.'
    "\n\nDon't feel bad: almost everyone gets it wrong at first.",
    "2.2": "You need to install the glibc-static-devel package — the static C library.",
    "3.1": "Valgrind runs __libc_freeres at exit. Use the option:\n\n```\n"
    "valgrind --run-libc-freeres=no ./prog\n\n```",
    "5.4": "No. The environment that Valgrind provides for running programs is "
    "significantly different to that for normal programs.",
}


def _toc(*items: tuple[str, str, str]) -> str:
    return "".join(f'{n} <a href="faq.html#{a}">{t}</a><br>' for n, a, t in items)


def _q(anchor: str, num: str, text: str) -> str:
    return (
        f'<tr class="question">\n<td align="left" valign="top">\n<a name="faq.{anchor}"></a>'
        f'<a name="q-{anchor}"></a><b>{num}</b>\n</td>\n<td align="left" valign="top">{text}</td>'
        "\n</tr>\n"
    )


def _a(anchor: str, html_: str) -> str:
    return (
        f'<tr class="answer">\n<td align="left" valign="top"><a name="a-{anchor}"></a></td>\n'
        f'<td align="left" valign="top">\n{html_}\n</td>\n</tr>\n'
    )


def _div(num: str, title: str, toc: str, rows: str) -> str:
    return (
        '<br><table width="100%" summary="Q and A Div" cellpadding="2" border="0">\n'
        f'<tr class="qandadiv"><td align="left" valign="top" colspan="2">\n<h3 class="title">'
        f"{num} {title}</h3>\n</td></tr>\n"
        f'<tr class="toc" colspan="2"><td align="left" valign="top" colspan="2">{toc}</td></tr>\n'
        '<tr><td colspan="2"> </td></tr>\n' + rows + "</table>\n"
    )


FAQ = (
    '<html><head><meta http-equiv="Content-Type" content="text/html; charset=UTF-8">'
    "<title>Valgrind Frequently Asked Questions</title></head><body>\n"
    '<div><table class="nav" summary="Navigation header"><tr><th>Valgrind FAQ</th>'
    '<td><a accesskey="n" href="tech-docs.html">Next</a></td></tr></table></div>\n'
    '<div class="article"><div class="titlepage"><h1 class="title"><a name="faq"></a>'
    "Valgrind Frequently Asked Questions</h1><hr></div>\n"
    '<div class="qandaset">\n<dl><dt>1. <a href="faq.html#faq.background">Background</a></dt>\n'
    f'<dd>1.1. <a href="faq.html#faq.pronounce">{Q_SAY.replace(" do", " do<br>")}</a></dd></dl>\n'
    '<dl><dt>2. <a href="#faq.installing">Compiling</a></dt><dd>2.1. <a href="#faq.x">'
    "Is this entry answered at all?</a></dd><dd>2.2. <a href='#faq.glibc_devel'>When building "
    "Valgrind, 'make' fails with this:</a></dd></dl>\n"
    + _div(
        "1.",
        "Background",
        _toc(("1.1.", "faq.pronounce", Q_SAY)),
        _q("pronounce", "1.1.", "<b>How do you pronounce &quot;Valgrind&quot;?</b>")
        + _a(
            "pronounce",
            '<p>The "Val" as in the word "value".  The "grind" is pronounced\n  with a '
            "short 'i'.</p>\n<p>Don't feel bad: almost everyone gets it wrong at first.</p>",
        ),
    )
    + _div(
        "2.",
        "Compiling, installing and configuring",
        _toc(("2.1.", "faq.x", "Is this entry answered at all?")),
        _q("x", "2.1.", "<b>Is this entry answered at all?</b>")
        + _q(
            "glibc_devel",
            "2.2.",
            "\n<b>When building Valgrind, 'make' fails\n  with this:</b>"
            '<pre class="screen">\n/usr/bin/ld: cannot find -lc\n</pre>\n',
        )
        + _a(
            "glibc_devel",
            "<p>You need to install the glibc-static-devel package — the static C library.</p>",
        ),
    )
    + _div(
        "3.",
        "Valgrind aborts unexpectedly",
        _toc(("3.1.", "faq.exit_errors", Q_FREERES)),
        _q(
            "exit_errors",
            "3.1.",
            "<b>Programs run OK on Valgrind, but at exit produce a bunch of\n    errors "
            'involving <code class="literal">__libc_freeres</code> and then die\n    with a '
            "segmentation fault.</b>",
        )
        + _a(
            "exit_errors",
            '<p>Valgrind runs <code class="function">__libc_freeres</code> at exit.  Use the '
            'option:</p><pre class="programlisting">valgrind --run-libc-freeres=no ./prog\n'
            "</pre>",
        ),
    )
    + _div(
        "5.",
        "Miscellaneous",
        _toc(("5.4.", "faq.attach", Q_ATTACH)),
        _q("attach", "5.4.", f"<b>{Q_ATTACH}</b>")
        + _a(
            "attach",
            "<p>No.  The environment that Valgrind provides for running programs is\n  "
            "significantly different to that for normal programs.</p>",
        ),
    )
    + "</div>\n</div>\n"
    '<div><br><table class="nav" summary="Navigation footer"><tr><td>'
    '<a accesskey="p" href="FAQ.html">&lt;&lt; Valgrind FAQ</a></td><td>'
    '<a accesskey="h" href="index.html">Home</a></td></tr></table></div>\n</body></html>\n'
)


def test_split_valgrind_faq_questions_answers_and_ids() -> None:
    page, qa = ns.split_valgrind_faq(FAQ)
    assert [q for _, q, _ in qa] == list(ASKED)  # the screen under a question is asked too
    assert {k: a for k, _, a in qa} == ANSWERS  # the FAQ's numbers; answers as converted
    nsc.assert_page_keeps_answers(qa, page)
    # both question lists and the unanswered question leave the page; headings stay
    assert "answered at all" not in page and "Background</a>" not in page
    assert 'pronounce "Valgrind' not in page and "cannot find" not in page
    assert page.startswith("# Valgrind Frequently Asked Questions\n\n## 1. Background\n")
    assert "## 5. Miscellaneous" in page and "Navigation" not in page and "Home" not in page


def test_split_valgrind_faq_edges() -> None:
    # no qandaset: the page converted, nothing asked
    page, none = ns.split_valgrind_faq("<html><body><h1>Notes</h1><p>Text.</p></body></html>")
    assert none == [] and page.strip() == "# Notes\n\nText."
    # a question row with no number: section and place; a repeat -2; a question followed
    # by a question asks nothing; a table outside the qandaset's rows is kept as it is
    rows = (
        _q("a", "", "<b>First?</b>")
        + _a("a", "<p>One.</p>")
        + _q("b", "7.2.", "<b>Unanswered?</b>")
        + _q("c", "7.2.", "<b>Second?</b>")
        + _a("c", "<p>Two.</p>")
        + _q("d", "7.2.", "<b>Third?</b>")
        + _a("d", "<p>Three.</p>")
        + _a("e", "<p>Orphan answer.</p>")
    )
    page, qa = ns.split_valgrind_faq(
        '<div class="qandaset">'
        + _div("7.", "Misc", "", rows)
        + "<table><tr><td>Kept cell</td></tr></table>"
        + _div("8.", "More", "", _q("f", "8.1.", "<b>Last?</b>") + _a("f", ""))
        + "</div>"
    )
    assert qa == [
        ("7.1", "First?", "One."),
        ("7.2", "Second?", "Two."),
        ("7.2-2", "Third?", "Three."),
    ]
    assert "Orphan answer." in page and "Kept cell" in page and "## 8. More" in page
    assert not re.search(r"First|Unanswered|Second|Third|Last", page)


_WORD = st.sampled_from(["memcheck", "leak", "suppression", "stack", "glibc", "vex", "heap"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(
            st.tuples(
                st.lists(_WORD, min_size=1, max_size=10),  # the question's words
                st.booleans(),  # a screen under the question
                st.lists(_WORD, min_size=0, max_size=16),  # the answer's words (may be none)
            ),
            max_size=4,
        ),
        min_size=1,
        max_size=4,
    )
)
def test_split_valgrind_faq_property(
    sections: list[list[tuple[list[str], bool, list[str]]]],
) -> None:
    """Random sections of random entries, some with a screen under the question, some
    unanswered: one question per answered entry, in order, its number its id, its answer
    its row's text, in the page; no question's word left in it."""
    body, expected = "", []
    for s, entries in enumerate(sections, start=1):
        rows = ""
        for p, (qwords, screen, awords) in enumerate(entries, start=1):
            q = " ".join([f"entry{s}x{p}", *qwords]) + "?"
            shown = f'<pre class="screen">code{s}x{p} {qwords[0]}</pre>' if screen else ""
            rows += _q(f"e{s}{p}", f"{s}.{p}.", f"<b>{q}</b>{shown}")
            if awords:
                rows += _a(f"e{s}{p}", "<p>" + " ".join(["Answer", *awords]) + "</p>")
                asked = q + (f" code{s}x{p} {qwords[0]}" if screen else "")
                expected.append((f"{s}.{p}", asked, " ".join(["Answer", *awords])))
        body += _div(f"{s}.", f"Section{s}", "", rows)
    page, qa = ns.split_valgrind_faq('<div class="qandaset">' + body + "</div>")
    assert qa == expected
    for _, _, a in qa:
        assert a in page
    assert not re.search(r"(entry|code)\d+x", page)


# -- the set, built from a package tree shaped like Debian's valgrind -----------------------


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.VALGRIND_PACKAGE, "1:3.19.0-1")
    doc: Path = root / ns.VALGRIND_HTML
    doc.mkdir(parents=True)
    (doc / ns.VALGRIND_FAQ).write_text(faq, encoding="utf-8")

    def page(name: str, body: str) -> None:
        (doc / name).write_text(
            '<html><body><div class="navheader">Next</div><div class="chapter"><div class="toc">'
            f'<dl><dt><a href="#x">{Q_SAY}</a></dt></dl></div>{body}</div></body></html>',
            encoding="utf-8",
        )

    page("manual-core.html", f"<h1>2. Using Valgrind</h1><p>Asked: {Q_ATTACH} Use vgdb — see.</p>")
    page("mc-manual.html", "<h1>4. Memcheck</h1><p>Memcheck finds leaks.</p>")
    page("dist.readme.html", "<h1>README</h1><p>Building Valgrind.</p>")
    page("hg-manual.html", "<h1>7. Helgrind</h1>" + "<p>Race detection text.</p>" * 8000)
    for skipped in ns.VALGRIND_LEFT_OUT:
        page(skipped, "<h1>Left out</h1><p>left out</p>")
    (doc / "vg_basic.css").write_text("body { color: black }\n")
    with gzip.open(doc.parent / "FAQ.txt.gz", "wt", encoding="utf-8") as fh:
        fh.write(f"1.1. {Q_SAY}\n\nleft out\n")
    return doc


@pytest.fixture
def doc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package tree as shipped (the FAQ :data:`FAQ`), its ``html/`` folder."""
    return _package(tmp_path, monkeypatch)


def test_valgrind_faq_set_from_a_package_tree(doc: Path) -> None:
    nset = ns.valgrind_faq_set()
    nsc.assert_package_set(
        nset,
        "valgrind-faq",
        ids=list(ANSWERS),
        files={"faq.md", "manual-core.md", "mc-manual.md", "dist.readme.md"},
        source="faq.md",
        version="1:3.19.0-1",
        too_long="hg-manual.html",
        answers=ANSWERS,
    )
    assert "left out" not in " ".join(nset.files.values())
    # UTF-8 read as such; a page quoting a question scrubbed, its other text kept; tables
    # of contents and navigation dropped
    assert "package — the static" in nset.files["faq.md"]
    assert "Use vgdb — see." in nset.files["manual-core.md"]
    assert "Next" not in nset.files["mc-manual.md"]


def test_valgrind_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = FAQ.replace(
        "No.  The environment that Valgrind provides for running programs is\n  "
        "significantly different to that for normal programs.",
        "No, not yet.",
    )
    _package(tmp_path, monkeypatch, short)
    nsc.assert_left_out(ns.valgrind_faq_set(), Q_ATTACH, len(ASKED) - 1)


def test_no_question_text_is_left_in_any_file(doc: Path) -> None:
    nsc.assert_leak_checked(ns.valgrind_faq_set(), {"faq.html": FAQ}, ASKED, is_html=True)


def test_valgrind_faq_set_halves_are_fixed_and_disjoint(doc: Path) -> None:
    more = FAQ.replace(
        "</table>\n</div>\n</div>",
        _q("grow", "5.5.", "<b>Can Valgrind run on my phone?</b>")
        + _a("grow", "<p>Yes, Android on ARM and x86 is supported.</p>")
        + "</table>\n</div>\n</div>",
    )
    nsc.assert_halves_survive_an_added_question(
        ns.valgrind_faq_set, lambda: (doc / ns.VALGRIND_FAQ).write_text(more, encoding="utf-8")
    )


def test_valgrind_faq_set_refuses_a_package_without_the_faq(doc: Path) -> None:
    (doc / ns.VALGRIND_FAQ).unlink()
    nsc.assert_refuses_without_faq(ns.valgrind_faq_set, "faq.html")
