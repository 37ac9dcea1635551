"""File titles, abstracts and man-page text the stop-76 lead left open (helper ingest77).

1. A Markdown page opening with an empty ``# `` heading was titled ``## Overview`` (its next
   line, marks and all: openvswitch's ``what-is-ovs.md``): the title is the first heading
   with words.
2. A Markdown table row was a file's title (GraphicsMagick's converted pages: ``| gm
   animate``): a table row is no title.
3. RCS keywords (``$Id$``, ``$Id: TRACEFLAGS,v 8.53 ... Exp $``) stayed in a ``#`` comment
   block's abstract and titled a plain text opening ``# $Id$``: they are out.
4. A one-node page's rule-line removal (helper ingest76) also dropped ``...``, ``--``, ``$$``
   (helper review77's finding): only true rules go.
5. The core man reader (``treehop.ingest.roff``, helper usage87) left groff escapes in the
   text (``\\%``, ``\\f[B]``, ``\\c``, ``\\(hy``): they read as ``man`` shows them.
6. An underscore inside a word was lost from file abstracts (``mutt_dotlock`` became
   ``muttdotlock``): it stays.
"""

from __future__ import annotations

import gzip
import time
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from treehop.ingest import roff, summaries, tree_builder
from treehop.ingest.loaders import walk
from treehop.ingest.summaries import ExtractiveSummarizer

S = ExtractiveSummarizer()


def abstract(name: str, text: str, kind: str) -> str:
    return S.summarize_file(name, text, kind)[0]


# ---------------------------------------------------------------------- 1. empty first heading

OVS = (
    "# \n\n## Overview\n\nOpen vSwitch is a multilayer software switch licensed under the "
    "open source Apache 2 license. Our goal is a production quality switch.\n\n"
    "## What's here?\n\nThe main components are the daemons.\n"
)


def test_an_empty_first_heading_gives_the_next_headings_words_as_title() -> None:
    got, overview = S.summarize_file("what-is-ovs.md", OVS, "markdown")
    assert got == (
        "Overview: Open vSwitch is a multilayer software switch licensed under the open "
        "source Apache 2 license."
    )
    assert summaries.title_of(OVS, "markdown") == "Overview"
    # the outline lists no empty entry
    assert "Contents: Overview; What's here?" in overview


@settings(max_examples=60, deadline=None)
@given(
    level=st.integers(1, 6),
    empties=st.integers(1, 3),
    words=st.lists(st.sampled_from(["Install", "Overview", "Build", "Usage", "FAQ"]), min_size=1),
)
def test_the_title_is_the_first_heading_with_words_never_its_marks(
    level: int, empties: int, words: list[str]
) -> None:
    title = " ".join(words)
    text = "# \n\n" * empties + f"{'#' * level} {title}\n\nIt is a tool for things.\n"
    got = abstract("page.md", text, "markdown")
    assert got == f"{title}: It is a tool for things."
    assert "#" not in got


# ---------------------------------------------------------------------- 2. a table row no title

GM = (
    "|\n\n  |  gm convert\n\n |\n |\n\n  |  NAME\n\n |\n |\n"
    " convert - convert an image or sequence of images\n\n  |  Synopsis\n\n |\n |\n"
    " gm convert [ options ... ] input_file output_file\n"
)


def test_a_markdown_table_row_is_no_title() -> None:
    got = abstract("convert.md", GM, "markdown")
    assert got == "convert - convert an image or sequence of images"
    assert summaries.title_of("| gm animate |\n\nAnimate shows images.\n", "markdown") == (
        "Animate shows images."
    )


def test_a_reST_line_block_and_a_plain_texts_bar_line_stay_titles() -> None:
    # (controls: in reST ``|`` opens a line block, shown text; plain text has no tables)
    assert summaries.title_of("| Roses are red\n\nText.\n", "text") == "| Roses are red"
    assert summaries.title_of("| Roses are red\n| Violets are blue\n", "rst") == "| Roses are red"


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(
        st.text(st.sampled_from("ab |-:"), max_size=12).map(lambda s: "|" + s), min_size=1
    ),
    indent=st.sampled_from(["", " ", "  "]),
)
def test_leading_table_rows_never_title_a_markdown_page(rows: list[str], indent: str) -> None:
    text = "\n\n".join(indent + r for r in rows) + "\n\nThe tool shows images.\n"
    assert summaries.title_of(text, "markdown") == "The tool shows images."


# ---------------------------------------------------------------------- 3. RCS keywords

MUSH = "#\n# Key bindings similar to those of MUSH\n#\n\n# $Id$\n\nbind index . display-message\n"
TRACEFLAGS = (
    "#\t$Id: TRACEFLAGS,v 8.53 2013-11-27 01:27:03 gshapiro Exp $\n"
    "0, 4\tmain.c\t\tmain\tcanonical name, UUCP node name, a.k.a.s\n"
    "0, 15\tmain.c\t\tmain\tprint configuration\n"
)
AVR = "# $Id$\n\nThis is the standard library for Atmel AVR devices.\n"


def test_rcs_keywords_are_out_of_a_comment_blocks_abstract_and_titles() -> None:
    assert abstract("Mush.rc", MUSH, "text") == "Mush: Key bindings similar to those of MUSH"
    got = abstract("TRACEFLAGS", TRACEFLAGS, "text")
    assert "$Id" not in got and got.startswith("0, 4 main.c main canonical name")
    assert abstract("README", AVR, "text") == (
        "This is the standard library for Atmel AVR devices."
    )


def test_a_keyword_beside_words_leaves_the_words() -> None:
    text = "# mutt.c $Id: mutt.c,v 1.2 2004/01/01 me Exp $\n# The mail reader's main loop.\n"
    assert abstract("mutt.c.txt", text, "text") == ("mutt.c: mutt.c The mail reader's main loop.")


@settings(max_examples=80, deadline=None)
@given(
    keyword=st.sampled_from(
        [
            "$Id$",
            "$Revision: 1.4 $",
            "$Date: 2004/11/03 22:26:05 $",
            "$Id: x.c,v 1.1 2001/01/01 a Exp $",
            "$FreeBSD$",
            "$Header$",
        ]
    ),
    mark=st.sampled_from(["#", "##", "# ", "#\t"]),
    where=st.integers(0, 2),
    words=st.lists(st.sampled_from(["Sample", "config", "for", "the", "daemon"]), min_size=2),
)
def test_a_keyword_line_anywhere_in_an_opening_comment_block_is_never_in_its_abstract(
    keyword: str, mark: str, where: int, words: list[str]
) -> None:
    lines = [f"# {' '.join(words)}.", "# Edit to taste."]
    lines.insert(where, f"{mark}{keyword}")
    got = abstract("sample.conf", "\n".join(lines) + "\n\nkey = value\n", "text")
    assert "$" not in got and got == f"sample: {' '.join(words)}."


# ---------------------------------------------------------------------- 4. true rules only


def test_a_one_node_page_keeps_ellipses_dashes_and_dollars_and_drops_rules() -> None:
    text = "Intro\n=====\n\nStart the job\n...\nthen wait.\n--\n$$\n))\n-----\nDone.\n*****\n"
    got = tree_builder._leaf_text(text, "text")
    assert got.split("\n") == ["Intro", "", "Start the job", "...", "then wait.", "--", "$$",
                               "))", "Done."]  # fmt: skip


def test_rest_reads_adornments_as_docutils_does() -> None:
    text = "A\n~~\n\nPrice in $$\n\n$$\n\nb\n\n....\n\nText.\n"
    got = tree_builder._leaf_text(text, "rst").split("\n")
    # ``~~`` under ``A`` is its underline, ``....`` a transition; ``$$`` alone is text
    assert "~~" not in got and "...." not in got and "$$" in got


@settings(max_examples=80, deadline=None)
@given(
    content=st.lists(
        st.sampled_from(["...", "--", "$$", "))", "::", ">>", "%%", "}}}", "..", "''"]),
        min_size=1,
    ),
    rule=st.sampled_from(["---", "=====", "***", "___", "#####", "~~~~", "^^^", "'''", "/" * 12]),
)
def test_short_punctuation_lines_stay_and_rules_go_in_plain_text(
    content: list[str], rule: str
) -> None:
    lines = ["Words here."] + [x for c in content for x in (c, rule)] + ["End."]
    got = tree_builder._leaf_text("\n".join(lines), "text").split("\n")
    assert got == ["Words here.", *content, "End."]


# ---------------------------------------------------------------------- 5. groff escapes

PAGE = r""".TH FOO 1 "2024" "foo 1.0"
.SH NAME
foo \- frob the \%widgets
.SH SYNOPSIS
.B foo
[\f[B]\-v\f[R]] \fIfile\fP
.SH DESCRIPTION
The \f[I]foo\f[] tool reads
.BR bar\c
(1) output and writes \(lqwhat\(rq it finds\(emquickly.
\&.profile is read first; see \s-1SMALL\s0 print.
.BI \-C \ cmdlist
Select by command\(hyname, the \[aq]x\[aq] way.
A long \
line goes on.
Unicode \[u00E9]t\['e] and \*(Aqquoted\*(Aq, \*(C+ code.
A \" comment to the end
Text \n(.g\h'-04'here\m[blue]now\m[].
"""


def test_groff_escapes_read_as_man_shows_them() -> None:
    md = roff.man_page_markdown(PAGE)
    assert "\\" not in md, md
    assert "foo - frob the widgets" in md
    assert "[-v] file" in md
    assert "The foo tool reads\nbar(1) output" in md  # ``\c`` joins without a space
    assert '"what" it finds--quickly.' in md
    assert ".profile is read first; see SMALL print." in md  # a text line, not a request
    assert "-C cmdlist" in md
    assert "command-name, the 'x' way." in md
    assert "A long line goes on." in md
    assert "Unicode \u00e9t" in md and "'quoted', C++ code." in md
    assert "comment to the end" not in md
    assert "Text herenow." in md


def test_a_gzipped_man_page_is_read_without_escapes(tmp_path: Path) -> None:
    (tmp_path / "man").mkdir()
    (tmp_path / "man" / "foo.1.gz").write_bytes(gzip.compress(PAGE.encode()))
    (loaded,) = walk(tmp_path).files
    assert loaded.kind == "markdown" and loaded.text.startswith("# FOO(1)\n")
    assert "\\" not in loaded.text
    assert abstract("foo.1", loaded.text, loaded.kind).startswith("FOO(1): foo - frob the widgets")


def test_literal_backslashes_and_the_benchmarks_reader_are_unchanged() -> None:
    text = '.TH X 3\n.SH EXAMPLE\n.nf\nprintf("%d\\en", 1); a\\\\b\n.fi\n'
    md = roff.man_page_markdown(text)
    assert 'printf("%d\\n", 1); a\\b' in md
    # (the benchmark's reader, roff_page_markdown, is not touched: an escape it does not
    # read stays there, so its built corpora read as before)
    assert "\\%" in roff.roff_page_markdown(".TH X 1\nthe \\%widgets\n")


_ESCAPES = [
    r"\%",
    r"\&",
    r"\c",
    r"\f[B]",
    r"\f[]",
    r"\fB",
    r"\f(CW",
    r"\f5",
    r"\s-1",
    r"\s0",
    r"\(hy",
    r"\[aq]",
    r"\*(Aq",
    r"\*[lq]",
    r"\h'-04'",
    r"\m[blue]",
    r"\n(.g",
    r"\:",
    r"\/",
    r"\,",
    r"\~",
    r"\-",
    r"\e",
    r"\\",
    r"\[u00E9]",
    r"\(",
    r"\[",
    "\\",
    "\\ ",
]


@settings(max_examples=150, deadline=None)
@given(
    parts=st.lists(
        st.one_of(
            st.sampled_from(_ESCAPES),
            st.sampled_from([".B ", ".BR ", ".TP\n", ".SH ", "\n", " ", "'", "."]),
            st.text(st.characters(codec="utf-8"), max_size=8),
        ),
        max_size=40,
    )
)
def test_any_page_reads_without_a_crash_and_without_a_font_or_size_escape(parts: list[str]) -> None:
    md = roff.man_page_markdown(".TH T 1\n" + "".join(parts))
    assert isinstance(md, str)
    assert "\ue000" not in md and "\ue001" not in md
    for mark in (r"\f[", r"\fB", r"\s-1", r"\%", r"\(hy", r"\[aq]"):
        # (``\\`` is a backslash, so ``\\fB`` shows ``\fB``: only pages without one)
        assert mark not in md or "\\\\" in "".join(parts) or "\\e" in "".join(parts)


def test_the_escape_pass_is_linear() -> None:
    def took(n: int) -> float:
        text = ".TH T 1\n" + ("\\f[B]x\\c\n\\%y\\s-1z\\s0 \\(em\\\n" * n)
        t = time.perf_counter()
        roff.man_page_markdown(text)
        return time.perf_counter() - t

    took(2000)
    small, big = min(took(5000) for _ in range(2)), min(took(20000) for _ in range(2))
    assert big < small * 8 + 0.05, (small, big)


# ---------------------------------------------------------------------- 6. underscores


def test_an_underscore_inside_a_word_stays_in_a_file_abstract() -> None:
    text = "# mutt_dotlock\n\nThe mutt_dotlock program sets S_TIME_FORMAT for __init__ and _you_.\n"
    got = abstract("mutt_dotlock.md", text, "markdown")
    assert got == "mutt_dotlock: The mutt_dotlock program sets S_TIME_FORMAT for init and you."


@settings(max_examples=80, deadline=None)
@given(
    parts=st.lists(
        st.text(st.sampled_from("abcxyz"), min_size=1, max_size=6), min_size=2, max_size=4
    )
)
def test_a_snake_case_name_is_whole_in_the_abstract(parts: list[str]) -> None:
    name = "_".join(parts)
    got = abstract("page.txt", f"Call {name} to start.\n", "text")
    assert got == f"Call {name} to start."
    got = abstract("page.md", f"# Page\n\nCall *{name}* to start.\n", "markdown")
    assert got == f"Page: Call {name} to start."


# ---------------------------------------------------------------------- linear time


def test_the_new_title_and_keyword_rules_are_linear() -> None:
    shapes = [
        "|" * 3 + "\n",
        "# $Id: " + "x" * 50 + " $\n",
        "# \n",
        "$Id$ $Revision: 1 $\n",
        "| a | b |\n",
    ]

    def took(unit: str, n: int, kind: str) -> float:
        text = unit * n
        t = time.perf_counter()
        S.summarize_file("f", text, kind)
        return time.perf_counter() - t

    for unit in shapes:
        for kind in ("text", "markdown"):
            took(unit, 2000, kind)
            small = min(took(unit, 10000, kind) for _ in range(2))
            big = min(took(unit, 40000, kind) for _ in range(2))
            assert big < small * 8 + 0.05, (unit, kind, small, big)
