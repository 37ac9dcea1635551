"""A reST passage's abstract reads a text of empty ``:abstract:`` fields in linear time
(helper review74).

usage85's ``_rst_abstract_field`` looked under an ``:abstract:`` field through a slice,
``lines[i + 1 :]``, which copies the rest of the text's lines; an empty field (nothing on
its line, nothing indented under it) let ``_prose_lines`` go on to the next line, so a text
of such fields copied the rest of the text once a line: quadratic (110,000 characters 1.6 s,
440,000 characters 9 s at load 10). ``first_sentence(as_read=True)`` reads every reST
passage's abstract at ingest, of text a user does not control (a doc folder, a fetched page).
"""

from __future__ import annotations

import time

from hypothesis import given, settings
from hypothesis import strategies as st

from treehop.ingest.summaries import first_sentence

N = 400_000


def _cpu(text: str, runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.process_time()
        first_sentence(text, "rst", as_read=True)
        best = min(best, time.process_time() - start)
    return best


def test_empty_abstract_fields_read_in_linear_time() -> None:
    """As many characters of empty ``:abstract:`` fields as of ``:Author:`` fields (which
    are skipped line by line, linear on the base too) take at most 10 times as long, plus
    0.5 s for a loaded box (the base: about 60 times)."""
    fields = _cpu((":Author: x\n" * (N // 11 + 1))[:N], 3)
    for empty in (":abstract:\n", ":abstract:\n\n", ":abstract:\n   \n"):
        text = (empty * (N // len(empty) + 1))[:N]
        assert _cpu(text, 2) <= 10 * fields + 0.5, empty


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from([":abstract:", ":Author: x", "", "   ", "  url rewrite", "Some prose."]),
        max_size=12,
    )
)
def test_property_the_abstract_is_the_first_filled_abstract_field_before_prose(
    lines: list[str],
) -> None:
    """What the abstract reads as, by a plain reference: the lines indented under the first
    ``:abstract:`` field with any, met before any prose line; else the first prose line."""
    text = "\n".join(lines)
    got = first_sentence(text, "rst", as_read=True)
    expected = ""
    for i, ln in enumerate(lines):
        if ln == "Some prose.":
            expected = "Some prose."
            break
        if ln == ":abstract:":
            under = []
            for nxt in lines[i + 1 :]:
                if nxt.strip() and not nxt.startswith(" "):
                    break
                if nxt.strip():
                    under.append(nxt.strip())
            if under:
                expected = " ".join(under)
                break
    assert got == expected, (lines, got)
