"""Helper review77: what the review of stop 76's merged code found (bench/README.md,
"(helper review77)").

1. :func:`treehop.ingest.roff.roff_page_markdown` (a folder's man pages since helper usage87)
   joined each ``=`` / ``-`` line of running text to the line above it by copying that line:
   a run of them was quadratic (a 5 MB page of ``=`` lines, which ``max_file_bytes`` lets
   in, hours).
"""

from __future__ import annotations

import itertools
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from treehop.ingest.roff import man_page_markdown, roff_page_markdown


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
