"""Helper review77: what the review of stop 76's merged code found (bench/README.md,
"(helper review77)").

1. :func:`treehop.ingest.roff.roff_page_markdown` (a folder's man pages since helper usage87)
   joined each ``=`` / ``-`` line of running text to the line above it by copying that line:
   a run of them was quadratic (a 5 MB page of ``=`` lines, which ``max_file_bytes`` lets
   in, hours).
2. :func:`treehop.ingest.markup.html_to_markdown` read a DocBook admonition's heading as its
   label (helper usage87) until the admonition's first text, and that flag outlived the
   admonition: a note with no text of its own (an image, an empty one) made the next
   section's heading a label (``## Install`` became ``Install: Run make.``: the section and
   its heading path gone), and an empty note's ``Note`` led the next section's paragraph.
3. :func:`treehop.ingest.markup.rst_unshown_out` (helper ingest76: reST comments out) read a
   line opening with ``..`` inside a paragraph as a comment and dropped it, where docutils
   shows it as the paragraph's text (``The range is 1`` / ``.. 10 for this option``).
4. ``IntentAnalyzer.analyze`` let a plug-in's ``acomplete`` that raised before any await
   escape (not a TreehopError), where the reranker and the session summary fall back.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import Treehop
from treehop.ingest import markup
from treehop.ingest.markup import html_to_markdown
from treehop.ingest.roff import man_page_markdown, roff_page_markdown
from treehop.intent_analysis import IntentAnalyzer

from treehop_test_doubles import BagOfWordsEmbedder


def _cost(text: str) -> float:
    best = float("inf")
    for _ in range(3):
        t = time.process_time()
        man_page_markdown(text)
        best = min(best, time.process_time() - t)
    return best


def test_a_run_of_mark_lines_in_a_man_page_is_read_in_linear_time() -> None:
    head = ".TH X 1\n.SH NAME\nx \\- a page\n.SH DESCRIPTION\nword\n"
    for unit in ("=\n", "-\n", "== \n"):
        small, big = _cost(head + unit * 20_000), _cost(head + unit * 160_000)
        assert big < 16 * small + 0.5, (unit, small, big)  # (8x the lines: ~8x the time)


def test_mark_lines_still_join_the_line_above() -> None:
    """mc(1)'s file-type marks (helper heldout18): each joined to its line, none a heading."""
    page = ".TH MC 1\n.SH DESCRIPTION\n@ for links,\n.B =\nfor sockets,\n.B \\-\nfor devices\n"
    md = roff_page_markdown(page)
    assert "@ for links, =\nfor sockets, -\nfor devices" in md
    run = roff_page_markdown(".TH X 1\n.SH A\nword\n" + "=\n-\n" * 3 + "\nnext\n")
    assert "word = - = - = -\n\nnext" in run


_LINE = st.sampled_from(["word", "two words", "=", "-", "==", "--", " = ", "", ".nf", ".fi"])


@settings(max_examples=200, deadline=None)
@given(st.lists(_LINE, max_size=30))
def test_property_every_mark_line_is_kept_and_none_stands_under_text(lines: list[str]) -> None:
    """Whatever the lines: each mark outside an example is kept (joined, or on a line of its
    own where no text line is above it), and none stands alone under a text line."""
    md = roff_page_markdown(".TH X 1\n.SH A\n" + "\n".join(lines) + "\n")
    body = md.split("\n")
    words = " ".join(md.split())
    kept = [ln.strip() for ln in lines if ln.strip() and not ln.startswith(".")]
    assert " ".join(kept) in " ".join(w for w in words.split() if w != "```") or not kept
    fenced = False
    for above, line in itertools.pairwise(body):
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and above.strip() and not above.startswith(("#", "```")):
            assert line.strip() not in {"=", "-", "==", "--"}, md


def _page(note: str) -> str:
    return (
        f"<html><body><h1>Guide</h1>{note}<h2>Install</h2><p>Run make.</p>"
        "<h2>Use</h2><p>Run it.</p></body></html>"
    )


def test_a_heading_after_an_admonition_with_no_text_stays_a_heading() -> None:
    for note in (
        '<div class="note"><img src="note.png" alt=""></div>',
        '<div class="warning"></div>',
        '<div class="tip"><div class="inner"><img src="t.png" alt=""></div></div>',
    ):
        md = html_to_markdown(_page(note))[0]
        assert "## Install\n\nRun make." in md, md
        assert "Install:" not in md, md


def test_an_empty_admonitions_label_is_its_own_line() -> None:
    md = html_to_markdown(_page('<div class="note"><h3 class="title">Note</h3></div>'))[0]
    assert "Note:\n\n## Install\n\nRun make." in md, md


def test_controls_an_admonitions_label_still_leads_its_text() -> None:
    """usage87's reading (passes on the base too): the label leads the note's first block,
    nested divs included, and the text after the note is the section's."""
    nested = (
        '<div class="note"><div class="titlepage"><h3 class="title">Note</h3></div>'
        "<div><p>Mutt only supports it.</p></div></div><p>After.</p>"
    )
    md = html_to_markdown(_page(nested))[0]
    assert "Note: Mutt only supports it.\n\nAfter.\n\n## Install\n\nRun make." in md, md


_BLOCKS = st.sampled_from(
    [
        '<div class="note">',
        '<div class="tip">',
        "<div>",
        "</div>",
        '<h3 class="title">Note</h3>',
        "<p>text</p>",
        '<img src="x.png" alt="">',
        "<pre>code</pre>",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_BLOCKS, max_size=12))
def test_property_a_section_heading_after_closed_admonitions_is_kept(parts: list[str]) -> None:
    """Whatever closed admonitions (and divs) come before it, a section's ``<h2>`` outside
    them is its heading."""
    depth, body = 0, []
    for p in parts:
        if p == "</div>":
            if not depth:
                continue
            depth -= 1
        elif p.startswith("<div"):
            depth += 1
        body.append(p)
    body += ["</div>"] * depth
    md = html_to_markdown(_page("".join(body)))[0]
    assert "## Install\n\n" in md and "## Use\n\nRun it." in md, md


def test_a_dotted_line_inside_a_paragraph_is_its_text_not_a_comment() -> None:
    src = (
        "Options\n=======\n\nThe range is 1\n.. 10 for this option, see below.\n"
        "more text\n\n.. a real comment\n   with its body\n\nEnd.\n"
    )
    body = markup._parse_rst(src).sections[0].body
    assert ".. 10 for this option, see below." in body, body
    assert "real comment" not in body and "with its body" not in body, body


def test_controls_comments_after_blank_lines_titles_and_list_items_stay_out() -> None:
    """ingest76's reading (passes on the base too): a comment opens a block after a blank
    line, a title's underline, a list item or an enumerated item."""
    for above in ("", "Title\n=====", "* item", "1. item", "a) item"):
        src = f"{above}\n.. hidden note\n   hidden body\n\nShown.\n".lstrip("\n")
        out = "\n".join(markup.rst_unshown_out(src.split("\n")))
        assert "hidden" not in out and "Shown." in out, (above, out)


_WORDS = st.lists(st.sampled_from(["alpha", "beta", "Gamma", "1", "2024", "x"]), min_size=1)


@settings(max_examples=200, deadline=None)
@given(st.lists(_WORDS, min_size=1, max_size=5), _WORDS)
def test_property_a_paragraphs_dotted_line_is_kept(
    before: list[list[str]], dots: list[str]
) -> None:
    """Whatever paragraph lines (opening with a letter or digit, no list item) come before
    it, a ``.. words`` line right under one of them is kept whole."""
    lines = [" ".join(["Text", *w]) for w in before]
    dotted = ".. " + " ".join(dots)
    src = "\n".join(["Title", "=====", "", *lines, dotted, "", "After."])
    assert dotted in markup.rst_unshown_out(src.split("\n"))


class _SyncFaultLLM:
    """An LLM plug-in whose ``acomplete`` raises before any await (a plain ``def``)."""

    def complete(self, messages: object, json_mode: bool = False) -> str:
        raise RuntimeError("the model is down")

    def acomplete(self, messages: object, json_mode: bool = False) -> str:
        raise RuntimeError("the model is down")


class _StringLLM(_SyncFaultLLM):
    """An LLM plug-in whose ``acomplete`` answers a string, no awaitable."""

    def acomplete(self, messages: object, json_mode: bool = False) -> str:
        return '{"queries": []}'


def test_a_planner_whose_acomplete_fails_before_any_await_falls_back() -> None:
    """4. ``IntentAnalyzer.analyze`` "never raises for planner faults": a plug-in whose
    ``acomplete`` raised before any await, or answered a string, escaped it (and ``find``)
    as a RuntimeError / TypeError; the reranker and the session summary fell back."""
    for llm, why in ((_SyncFaultLLM(), "the model is down"), (_StringLLM(), "awaitable")):
        plan = asyncio.run(IntentAnalyzer(llm).analyze("what is alpha?"))  # type: ignore[arg-type]
        assert plan.queries and plan.queries[0].query == "what is alpha?", plan
        assert why in (plan.fallback_reason or ""), plan.fallback_reason


def test_search_with_such_a_planner_falls_back_and_raises_nothing(tmp_path: Path) -> None:
    """The same through ``Treehop.search``: the plug-in's RuntimeError escaped it."""
    planner = _SyncFaultLLM()
    planner.name = "sync-fault"  # type: ignore[attr-defined]
    c = Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None, query_planner=planner)
    try:
        c.add_resource("alpha beta text", is_text=True, target_uri="viking://resources/a")
        got = c.search("what is alpha?")
        assert got.query_plan is not None
        assert "the model is down" in (got.query_plan.fallback_reason or "")
        assert [m.uri for m in got.resources] == ["viking://resources/a"]
    finally:
        c.close()
