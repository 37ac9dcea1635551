"""A filter's text bound and its Unicode check read a ``str`` subclass's own characters
(helper attacks82, bench/README.md "(helper attacks82)").

attacks81 bounded a filter's text (``MAX_FILTER_TEXT_CHARS``, counted where each text
stands) and stop 62's check refuses a lone surrogate (a remote engine's UTF-8 request failed
raw on one). Both asked the text itself: ``len(text)`` and ``text.encode("utf-8")``. A
``str`` subclass answers those with its own methods, so one whose ``__len__`` says 0 passed
200 shared copies of a 1 MB text (a 200 MB cache key built, 3 s; 1,000 copies: the 52 s /
2.9 GB attacks81 measured), a ``text_match`` value of a million characters passed its
1,000-character bound, and one whose ``encode`` returns ``b""`` carried a lone surrogate
past the check. Now the lengths and the encoding are ``str``'s own.

Each test fails on 4b7966c0 unless it says it is a control.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop.errors import InvalidFilterError
from treehop.filters import MAX_FILTER_TEXT_CHARS, MetadataFilter


class _Short(str):
    """A text that says it is empty when asked its length, and encodes to nothing."""

    __slots__ = ()

    def __len__(self) -> int:
        return 0

    def __bool__(self) -> bool:
        return True

    def encode(self, encoding: str = "utf-8", errors: str = "strict") -> bytes:
        return b""


def _outcome(spec: dict[str, Any]) -> str:
    try:
        MetadataFilter.parse(spec)
    except InvalidFilterError as exc:
        return str(exc)
    return "taken"


def _spec(text: str, copies: int, where: str) -> dict[str, Any]:
    if where == "conds":
        return {"op": "must", "field": "f", "conds": [text] * copies}
    if where == "field":
        return {"op": "or", "conds": [{"op": "must", "field": text, "conds": [1]}] * copies}
    return {"op": "or", "conds": [{"op": "text_match", "field": "f", "value": text}] * copies}


@settings(max_examples=40, deadline=None)
@given(
    size=st.integers(1, 4_000_000),
    copies=st.integers(1, 8),
    where=st.sampled_from(["conds", "field", "value"]),
)
def test_a_str_subclass_is_bounded_as_its_characters_are(
    size: int, copies: int, where: str
) -> None:
    # the same answer, word for word, as for the plain text it holds
    text = "y" * size
    plain = _outcome(_spec(text, copies, where))
    assert _outcome(_spec(_Short(text), copies, where)) == plain
    if where == "value":
        assert (plain == "taken") == (size <= 1000)
    elif where == "conds":
        assert (plain == "taken") == (1 + size * copies <= MAX_FILTER_TEXT_CHARS)


@settings(max_examples=60, deadline=None)
@given(
    text=st.text(min_size=1, max_size=30),
    at=st.integers(0, 30),
    code=st.integers(0xD800, 0xDFFF),
    where=st.sampled_from(["conds", "field", "value"]),
)
def test_a_lone_surrogate_in_a_str_subclass_is_refused(
    text: str, at: int, code: int, where: str
) -> None:
    bad = text[:at] + chr(code) + text[at:]
    got = _outcome(_spec(_Short(bad), 1, where))
    assert "lone surrogate" in got
    assert got == _outcome(_spec(bad, 1, where))


def test_shared_copies_of_a_long_subclassed_text_are_refused_unread() -> None:
    # 4b7966c0: taken, and its cache key was 200 MB of JSON (3.2 s here)
    long = _Short("x" * 1_000_000)
    with pytest.raises(InvalidFilterError, match=f"more than {MAX_FILTER_TEXT_CHARS} char"):
        MetadataFilter.parse({"op": "must", "field": "f", "conds": [long] * 200})


def test_control_a_str_subclass_that_tells_the_truth_filters_as_its_text() -> None:
    # control (as on 4b7966c0): a subclass is a text; it matches what its characters match
    class Tag(str):
        __slots__ = ()

    md = MetadataFilter.parse({"op": "must", "field": Tag("team"), "conds": [Tag("ops")]})
    assert md is not None and md.matches({"team": "ops"}) and not md.matches({"team": "dev"})
