"""The ``mksh-faq`` natural-question set (``bench/natural_sets.py``): the MirBSD Korn Shell's
FAQ as Debian's ``mksh`` ships it (``/usr/share/doc/mksh/FAQ.htm``: one XHTML page, a
contents list of links into the page, ``<h2>`` entries under ``<h1>`` titles) read by
Django's heading rule unchanged at level 2 (``split_heading_questions``) after XTerm's
contents-list reading (``drop_anchor_lists``), beside Debian's notes, the examples and the
two man pages written in mdoc (``mdoc_page_markdown``, the set's one new reading), on a small
inline package tree of that shape (the project's stylesheet, a contents list naming every
question, a question with markup in it, a stated problem, a link "below" into another entry,
a one-line answer too short to judge, a ``<pre>`` example holding a ``#`` line, an
``<h1>Imprint``; a man page with mksh's groff preamble of ``.ie``/``.de`` requests before
``.Dt``, callable macros, a ``.Bl``/``.It`` list and a named string; the changelog, the
copyright and the testsuite); offline, no embedding model, no test reads the real package.

What the set's numbers rest on: every ``<h2>`` entry asks, its answer exactly the text under
it up to the next heading; the contents list and every question's text leave the corpus; the
``<h1>`` titles, the notes, the examples and the man pages (as ``man`` prints their words)
are the corpus, the changelog, copyright and testsuite are not; the halves are fixed.
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

VERSION = "59c-28+deb12u1"

Q_SPELL = "How do you spell mksh?"
Q_PACKAGE = "How should I package mksh? (common cases)"
Q_TESTS = "The testsuite fails!"
Q_PRINTF = "Which revision of printf.c do I use?"
Q_CTRL_L = "^L (Ctrl-L) does not clear the screen"
Q_TRIM = "${@?}: bad substitution"
Q_SET_E = "I use “set -e” and my code unexpectedly errors out"
ASKED = [Q_SPELL, Q_PACKAGE, Q_TESTS, Q_CTRL_L, Q_TRIM, Q_SET_E]
ANSWERS = {  # ids: the questions' slugs, their first 40 characters
    "how-do-you-spell-mksh": (
        "It is spelt “mksh” with an initial lowercase letter, even at the beginning of a "
        "sentence.\n\nOr say “MirBSD Korn Shell”."
    ),
    "how-should-i-package-mksh-common-cases": (
        "Export CC and CFLAGS, then run Build.sh from the source directory.\n\n"
        "See below if the tests do not pass."
    ),
    "the-testsuite-fails": "The testsuite has uncovered bugs in operating systems; report them.",
    "l-ctrl-l-does-not-clear-the-screen": (
        "Use ^[^L (Escape+Ctrl-L) or rebind it:\n\n bind '^L=clear-screen'"
    ),
    "bad-substitution": (
        "In mksh, !, # and ? are trim operators:\n\n```\n\n"
        "# a comment line inside the example\necho ${@?}\n\n```\n\n"
        "Use ${@:?} instead, which tests for being unset."
    ),
    "i-use-set-e-and-my-code-unexpectedly-err": (
        "set -e makes the shell exit on any failing command in a function, too."
    ),
}
FAQ = f"""<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.1//EN"
 "http://www.w3.org/TR/xhtml11/DTD/xhtml11.dtd">
<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="en"><head>
 <meta http-equiv="content-type" content="text/html; charset=utf-8" />
 <title>mksh {VERSION} FAQ (local copy)</title>
 <style type="text/css"><!--/*--><![CDATA[/*><!--*/
 h2:before {{
	content:"x ";
 }}
 /*]]>*/--></style>
</head><body>
<p>Note: Links marked like <a href="irc://irc.mirbsd.org/!/bin/mksh">this
 one to the mksh IRC channel</a> connect to external resources.</p>
<h1>Table of Contents</h1>
<ul>
<li><a href="#spelling">How do you spell <tt>mksh</tt>?</a></li>
<li><a href="#packaging">How should I package mksh? (common cases)</a></li>
<li><a href="#testsuite-fails">The testsuite fails!</a></li>
<li><a href="#printf-c">Which revision of printf.c do I use?</a></li>
<li><a href="#ctrl-l-cls">^L (Ctrl-L) does not clear the screen</a></li>
<li><a href="#trim-vector">${{@?}}: bad substitution</a></li>
<li><a href="#set-e">I use “set -e” and my code unexpectedly errors out</a></li>
</ul>

<h1>Frequently Asked Questions</h1>
<h2 id="spelling"><a href="#spelling">How do you spell <tt>mksh</tt>?</a></h2>
<div><p>It is spelt “<tt>mksh</tt>” with an initial lowercase letter, even at the
 beginning of a sentence.</p>
<p>Or say “MirBSD Korn Shell”.</p></div>
<h2 id="packaging"><a href="#packaging">How should I package mksh? (common cases)</a></h2>
<div><p>Export <tt>CC</tt> and <tt>CFLAGS</tt>, then run Build.sh from the source
 directory.</p>
<p>See <a href="#testsuite-fails">below</a> if the tests do not pass.</p></div>
<h2 id="testsuite-fails"><a href="#testsuite-fails">The testsuite fails!</a></h2>
<div><p>The testsuite has uncovered bugs in operating systems; report them.</p></div>
<h2 id="printf-c"><a href="#printf-c">Which revision of printf.c do I use?</a></h2>
<div>Don’t. Duh.</div>
<h2 id="ctrl-l-cls"><a href="#ctrl-l-cls">^L (Ctrl-L) does not clear the screen</a></h2>
<div>Use ^[^L (Escape+Ctrl-L) or rebind it:<br />
 <tt>bind '^L=clear-screen'</tt></div>
<h2 id="trim-vector"><a href="#trim-vector">${{@?}}: bad substitution</a></h2>
<div><p>In mksh, <tt>!</tt>, <tt>#</tt> and <tt>?</tt> are trim operators:</p>
<pre>
# a comment line inside the example
echo ${{@?}}
</pre>
<p>Use <tt>${{@:?}}</tt> instead, which tests for being unset.</p></div>
<h2 id="set-e"><a href="#set-e">I use “set -e” and my code unexpectedly errors out</a></h2>
<div><p>set -e makes the shell exit on any failing command in a function, too.</p></div>
<h1>Imprint</h1>
<p>This offline HTML page for mksh {VERSION} was automatically generated
 from the sources.</p>
</body></html>
"""
SHIPPED = {"FAQ.htm": FAQ}
MKSH_1 = r""".\" $MirOS: src/bin/mksh/mksh.1,v 1.538 2023/01/31 tg Exp $
.\" Copyright leftout comment
.ie \n(.g \{\
.	ds aq \(aq
.	ds Ba \[ba]
.\}
.el \{\
.	ds aq '
.\}
.rn Dd xD
.de Dd
.ie \\$1$Mdocdate: \{\
.	xD \\$2 \\$3, \\$4
.\}
.el .xD \\$1 \\$2 \\$3 \\$4 leftout
..
.Dd $Mdocdate: January 31 2023 $
.Dt MKSH 1
.Os MirBSD
.Sh NAME
.Nm mksh ,
.Nm sh
.Nd MirBSD Korn shell
.Sh DESCRIPTION
.Nm
is a command interpreter; see
.Xr sh 1 .
.Ss Invocation
.Bl -tag -width 2n
.It Fl c Ar cmd
.Nm
will execute the command(s) in
.Ar cmd ,
like
.Fx
.Nm sh .
.It Fl o Ic posix
Be POSIX\-compatible, see
.Dq Li set \-o
and the
.Ev ENV
parameter: a\*(Bab.
.El
.Pp
Read
.Pa ~/.mkshrc
first.
.br
.Sh SEE ALSO
.Xr lksh 1
"""
MKSH_1_MD = """# MKSH(1)

## NAME

mksh,
sh
MirBSD Korn shell

## DESCRIPTION

mksh
is a command interpreter; see
sh(1).

### Invocation

-c cmd

mksh
will execute the command(s) in
cmd,
like
FreeBSD
sh.

-o posix

Be POSIX-compatible, see
set -o
and the
ENV
parameter: a|b.

Read
~/.mkshrc
first.

## SEE ALSO

lksh(1)
"""
LKSH_1 = ".Dt LKSH 1\n.Sh NAME\n.Nm lksh\n.Nd Legacy Korn shell built on\n.Xr mksh 1\n"
FILES = {
    "FAQ.md",
    "README.Debian",
    "NEWS.Debian",
    "examples/dot.mkshrc",
    "examples/uhr",
    "man/mksh.1.md",
    "man/lksh.1.md",
}


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package as shipped: ``FAQ.htm``; Debian's two notes; the examples folder; the two
    man pages; the changelog, the copyright and the testsuite's files."""
    root = unpacked_package(tmp_path, monkeypatch, ns.MKSH_PACKAGE, VERSION)
    doc = root / ns.MKSH_DOC
    doc.mkdir(parents=True)
    (doc / "FAQ.htm").write_text(FAQ, encoding="utf-8")
    write_gz(doc / "README.Debian.gz", "mksh for Debian\n\nThe lksh binary is for /bin/sh.\n")
    write_gz(doc / "NEWS.Debian.gz", "mksh (59c-1) unstable\n\n  * /etc/mkshrc is shipped.\n")
    (doc / "examples").mkdir()
    (doc / "examples/dot.mkshrc").write_text(
        "# $MirOS: src/bin/mksh/dot.mkshrc $\nPS1='$ '\n", encoding="utf-8"
    )
    (doc / "examples/uhr").write_text("#!/bin/mksh\n# a clock\n", encoding="utf-8")
    write_gz(doc / "changelog.Debian.gz", "leftout changes\n")
    (doc / "copyright").write_text("leftout\n", encoding="utf-8")
    write_gz(doc / "check.t.gz", "name: leftout-test\n")
    write_gz(doc / "check.pl.gz", "# leftout\n")
    (doc / "mtest.t").write_text("leftout\n", encoding="utf-8")
    (doc / "testdata.full").write_text("leftout\n", encoding="utf-8")
    write_gz(root / ns.MKSH_MAN[0], MKSH_1)
    write_gz(root / ns.MKSH_MAN[1], LKSH_1)
    return doc


@pytest.fixture
def doc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return _package(tmp_path, monkeypatch)


def test_mksh_faq_set_from_a_package_tree(doc: Path) -> None:
    nset = ns.mksh_faq_set()
    assert nset.name == "mksh-faq"
    # every <h2> entry asks, in order, its markup read as text; "Don't. Duh." is too short
    assert [q.qid for q in nset.questions] == [f"mksh-faq:{k}" for k in ANSWERS]
    assert [q.text for q in nset.questions] == ASKED
    nsc.assert_questions_out_answers_in(nset, ANSWERS)
    assert {q.source for q in nset.questions} == {"FAQ.md"}
    assert set(nset.files) == FILES
    nsc.assert_files_as_written(nset)
    nsc.assert_held_out("mksh-faq")
    faq = nset.files["FAQ.md"]
    # the <h1> titles and their text stay, no ## entry is left, the contents list is gone
    assert "# Table of Contents\n\n# Frequently Asked Questions\n\nIt is spelt" in faq
    assert faq.endswith(
        "# Imprint\n\nThis offline HTML page for mksh " + VERSION + " was "
        "automatically generated from the sources.\n"
    )
    assert not re.search(r"(?m)^## ", faq)
    assert "h2:before" not in faq  # the stylesheet is not text
    # the left-out entry's answer stays in the page, between its neighbours' answers
    assert "report them.\n\nDon’t. Duh.\n\nUse ^[^L" in faq
    assert nset.files["man/mksh.1.md"] == MKSH_1_MD
    assert nset.files["man/lksh.1.md"] == (
        "# LKSH(1)\n\n## NAME\n\nlksh\nLegacy Korn shell built on\nmksh(1)\n"
    )
    assert "The lksh binary is for /bin/sh." in nset.files["README.Debian"]
    assert "/etc/mkshrc is shipped." in nset.files["NEWS.Debian"]
    assert nset.files["examples/dot.mkshrc"].endswith("PS1='$ '\n")
    # the changelog, copyright, testsuite and the man page's preamble are out
    assert "leftout" not in " ".join(nset.files.values())
    assert VERSION in nset.note and "mksh.1" in nset.note and "dot.mkshrc" in nset.note
    nsc.assert_left_out(nset, Q_PRINTF, len(ASKED))


def test_no_question_text_is_left_in_any_file(doc: Path) -> None:
    nsc.assert_leak_checked(ns.mksh_faq_set(), SHIPPED, [*ASKED, Q_PRINTF], is_html=True)


def test_mksh_faq_set_halves_are_fixed_and_disjoint(doc: Path) -> None:
    more = FAQ.replace(
        '<h2 id="set-e">',
        '<h2 id="lineno"><a href="#lineno">error line numbers are somewhat close</a></h2>\n'
        "<div><p>The parser reads ahead, so a line number may point past the error.</p></div>"
        '\n<h2 id="set-e">',
    )
    assert more != FAQ
    nsc.assert_halves_survive_an_added_question(
        ns.mksh_faq_set, lambda: (doc / "FAQ.htm").write_text(more, encoding="utf-8")
    )


def test_mksh_faq_set_refuses_a_package_without_the_faq(doc: Path) -> None:
    (doc / "FAQ.htm").unlink()
    nsc.assert_refuses_without_faq(ns.mksh_faq_set, "FAQ.htm")


_WORD = st.sampled_from(["shell", "prompt", "mkshrc", "alias", "array", "utf8", "trap", "x2"])
_WORDS = st.lists(_WORD, min_size=1, max_size=5)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(st.booleans(), _WORDS, st.lists(_WORDS, max_size=3)),
        min_size=1,
        max_size=8,
    ),
    st.booleans(),
)
def test_split_mksh_faq_is_django_rule_at_level_2_property(
    entries: list[tuple[bool, list[str], list[list[str]]]], contents: bool
) -> None:
    """Random FAQ pages shaped as mksh's: ``<h1>`` titles (text or none under them) and
    ``<h2>`` entries (one to three paragraphs each), perhaps a contents list of links to every
    entry first: exactly Django's rule at level 2 (every ``<h2>`` asks, its answer its
    paragraphs; every ``<h1>`` stays with its text), the contents list gone, ids the slugs with
    repeats told apart, answers in the page, no question left in it."""
    levels: list[int] = []
    titles: list[str] = []
    bodies: list[str] = []
    html: list[str] = []
    toc: list[str] = []
    for n, (entry, title, paras) in enumerate(entries):
        level = 2 if entry else 1
        if level == 2 and not paras:
            paras = [["answer"]]
        text = f"t{n} {' '.join(title)}" + ("?" if entry else "")
        levels.append(level)
        titles.append(text)
        bodies.append("\n\n".join(" ".join(p) for p in paras))
        html.append(f'<h{level} id="e{n}"><a href="#e{n}">{text}</a></h{level}>')
        html.append("<div>" + "".join(f"<p>{' '.join(p)}</p>" for p in paras) + "</div>")
        if entry:
            toc.append(f'<li><a href="#e{n}">{text}</a></li>')
    head = f"<h1>Contents</h1><ul>{''.join(toc)}</ul>" if contents and toc else ""
    page, qa = ns.split_mksh_faq(f"<html><body>{head}{''.join(html)}</body></html>")
    asked = nsc.assert_heading_rule_split(
        levels,
        titles,
        bodies,
        lambda k: levels[k] == 2,
        page,
        [(ns._slug(q), q, a) for _, q, a in qa],
    )
    assert asked == {k for k, lv in enumerate(levels) if lv == 2}
    seen: dict[str, int] = {}
    assert [k for k, _, _ in qa] == [ns._repeat_id(seen, ns._slug(q)) for _, q, _ in qa]
    assert not re.search(r"(?m)^- ", page)  # no contents entry left


_MDOC_TEXT = st.lists(
    st.sampled_from(["the", "shell", "reads", "x2", "file", "set"]), min_size=1, max_size=4
)


@st.composite
def _mdoc_line(draw: st.DrawFn) -> tuple[str, list[str], str | None]:
    """One mdoc line after ``.Dt``: (the line, the words ``man`` prints for it, a heading
    line expected in the markdown or None)."""
    words = draw(_MDOC_TEXT)
    kind = draw(
        st.sampled_from(
            ["text", "call", "flag", "xr", "nm", "sh", "ss", "pp", "it", "br", "comment"]
        )
    )
    if kind == "text":
        return " ".join(words), words, None
    if kind == "call":
        macro = draw(st.sampled_from(["Ar", "Ic", "Li", "Dq", "Ev", "Pa", "Va", "Em", "Sy"]))
        return f".{macro} {' '.join(words)}", words, None
    if kind == "flag":
        return f".Fl {words[0]}", [words[0]], None  # printed "-word"
    if kind == "xr":
        return f".Xr {words[0]} 1", [words[0], "1"], None
    if kind == "nm":
        return ".Nm", ["mksh"], None
    if kind in {"sh", "ss"}:
        mark = "##" if kind == "sh" else "###"
        return f".{kind.capitalize()} {' '.join(words)}", words, f"{mark} {' '.join(words)}"
    if kind == "it":
        rest = f" Ar {' '.join(words[1:])}" if len(words) > 1 else ""
        return f".It Fl {words[0]}{rest}", words, None
    if kind == "pp":
        return ".Pp", [], None
    if kind == "br":
        return ".br", [], None
    return '.\\" leftout comment', [], None


@settings(max_examples=200, deadline=None)
@given(st.lists(_mdoc_line(), max_size=25), st.booleans())
def test_mdoc_page_markdown_prints_the_words_man_prints_property(
    lines: list[tuple[str, list[str], str | None]], preamble: bool
) -> None:
    """Random mdoc pages (text lines, callable macros with words, ``.Fl``, ``.Xr``, a bare
    ``.Nm``, ``.Sh``/``.Ss`` headings, ``.Pp``, ``.It`` items, ``.br``, comments), perhaps
    after a preamble of roff requests and a ``.de`` macro before ``.Dt``: the markdown's words
    are exactly the words ``man`` prints, in order (macro names gone, a bare ``.Nm`` the
    program's name); every heading on a line of its own at its level; no macro line, comment
    or preamble word left."""
    head = [".ie \\n(.g \\{\\", ".\tds aq \\(aq leftout", ".\\}", ".de Dd", "leftout", ".."]
    page = [*(head if preamble else []), ".Dt MKSH 1", ".Sh NAME", ".Nm mksh"]
    expected = ["mksh", "1", "name", "mksh"]
    for line, words, _ in lines:
        page.append(line)
        expected += words
    out = ns.mdoc_page_markdown("\n".join(page) + "\n")
    assert re.findall(r"[a-z0-9]+", out.lower()) == expected
    assert out.startswith("# MKSH(1)\n\n## NAME\n\nmksh\n")
    for _, _, heading in lines:
        if heading is not None:
            assert f"\n{heading}\n" in out
    assert "leftout" not in out
    assert not re.search(r"(?m)^[.']", out)
    for line, words, _ in lines:
        if line.startswith(".Fl "):
            assert f"-{words[0]}" in out
        if line.startswith(".Xr "):
            assert f"{words[0]}(1)" in out
