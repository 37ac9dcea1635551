"""Redaction leftovers of attacks88 and the lead's stop 75 (helper attacks89, bench/README.md
"(helper attacks89)").

1. A key at a line's end took the next line's number or date with it (the hard-wrap join of
   attacks88): ``<key>\\n2024-01-01 started`` read ``*** started``.
2. ``access_token: 'v'`` (a YAML line, a repr) was shown; a bare ``token: 'v'`` too, which is
   masked now only where the value looks like a credential (8+ characters with a digit):
   ``unexpected token: '}'`` is a parser's error and stays as written.
3. A log record's traceback: the ``mcp`` SDK logs a failed handler with ``exc_info``, and the
   exception's text (a key given as a prompt's name) went to stderr whole.
4. ``no session '...'`` cut the id to 40 characters before redacting it: a key after a prefix
   was cut to a head too short for its shape, and shown.

Each test fails on 63c22bec unless it says it is a control.
"""

from __future__ import annotations

import logging
import re
import sys
from re import _constants as sre_constants  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import redaction
from treehop.redaction import RedactingFilter, redact
from vendor_keys import VENDOR_KINDS, vendor_key

KEYS = [vendor_key(kind, 89) for kind in VENDOR_KINDS]

dates = st.builds(
    lambda y, m, d: f"{y:04d}-{m:02d}-{d:02d}",
    st.integers(1970, 2099),
    st.integers(1, 12),
    st.integers(1, 28),
)
numbers = st.from_regex(r"[0-9]{4,12}(-[0-9]{1,6}){0,3}", fullmatch=True)
iso_times = st.builds(
    lambda day, h, mi: f"{day}T{h:02d}:{mi:02d}:00Z", dates, st.integers(0, 23), st.integers(0, 59)
)


# -- 1. a number or a date after a key at a line's end -----------------------------------


@settings(max_examples=300, deadline=None)
@given(
    key=st.sampled_from(KEYS),
    head=st.sampled_from(["", "key ", "the key is ", "export KEY="]),
    nl=st.sampled_from(["\n", "\r\n", "\\n", "\\r\\n"]),
    first=st.one_of(dates, numbers, iso_times),
    rest=st.sampled_from(["", " started", " INFO worker up", ": 3 retries"]),
)
def test_a_number_or_date_opening_the_next_line_stays(
    key: str, head: str, nl: str, first: str, rest: str
) -> None:
    out = redact(f"{head}{key}{nl}{first}{rest}")
    assert key[-12:] not in out and key[4:16] not in out
    assert out.endswith(f"{nl}{first}{rest}"), out


@pytest.mark.parametrize("key", KEYS[:4])
def test_a_key_wrapped_before_a_tail_of_letters_and_digits_is_still_masked_control(
    key: str,
) -> None:
    # control (passes on 63c22bec): attacks88's hard wrap, the tail a key's own characters
    cut = len(key) // 2
    tail = "Ab3" + key[cut:]
    out = redact(f"key {key[:cut]}\n{tail} end")
    assert out == "key *** end", out


def test_a_tail_that_opens_with_digits_then_letters_is_still_joined_control() -> None:
    # control (passes on 63c22bec): a key's tail "2024x..." is no number, the wrap is read
    key = KEYS[1]
    assert redact(f"k {key[:30]}\n2024xQ{key[30:]} end") == "k *** end"


# -- 2. token: '...' ----------------------------------------------------------------------

MASKED = [
    ("access_token: 'Abc123def456'", "access_token: '***'"),
    ('auth-token: "ab"', 'auth-token: "***"'),
    ("GITHUB_TOKEN: 'x1'", "GITHUB_TOKEN: '***'"),
    ("refresh_token:\t'r3fr3sh-me'", "refresh_token:\t'***'"),
    ('{\\"refresh_token\\": \\"r3fr3sh\\"}', '{\\"refresh_token\\": \\"***\\"}'),
    ("token: 'abcdef123456'", "token: '***'"),
    ('Token: "9f8e7d6c5b4a"', 'Token: "***"'),
    ("unexpected token: \\'abc123def\\'", "unexpected token: \\'***\\'"),
]


@pytest.mark.parametrize(("text", "shown"), MASKED)
def test_a_quoted_token_value_is_masked(text: str, shown: str) -> None:
    assert redact(text) == shown


@settings(max_examples=300, deadline=None)
@given(
    value=st.one_of(
        st.from_regex(r"[^\s\"',;&\\]{1,7}", fullmatch=True),  # short
        st.from_regex(r"[A-Za-z_.<>(){}\[\]-]{8,40}", fullmatch=True),  # no digit
    ),
    quote=st.sampled_from(["'", '"']),
    lead=st.sampled_from(["unexpected token: ", "SyntaxError: invalid token: ", "token: "]),
)
def test_a_parser_token_stays_control(value: str, quote: str, lead: str) -> None:
    # control (passes on 63c22bec): what a parser reports (punctuation, words, short runs)
    text = f"{lead}{quote}{value}{quote} at line 3"
    assert redact(text) == text


# -- linear by construction ---------------------------------------------------------------

_UNBOUNDED = sre_constants.MAXREPEAT


def _repeats(pattern: str) -> list[tuple[Any, int, int]]:
    """Every repeat in ``pattern``'s parse tree: (opcode, min, max)."""
    found: list[tuple[Any, int, int]] = []

    def walk(items: Any) -> None:
        for op, av in items:
            if op in (
                sre_constants.MAX_REPEAT,
                sre_constants.MIN_REPEAT,
                sre_constants.POSSESSIVE_REPEAT,
            ):
                found.append((op, av[0], av[1]))
                walk(av[2])
            elif op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
                walk(av[1])
            elif op is sre_constants.SUBPATTERN:
                walk(av[-1])
            elif op is sre_constants.BRANCH:
                for branch in av[1]:
                    walk(branch)

    walk(sre_parse.parse(pattern))
    return found


def test_the_new_lookaheads_cannot_backtrack_past_a_bound() -> None:
    """Timing-free: every unbounded repeat in the number / date lookahead is possessive (a
    run is read once, never given back), and the token value's lookaheads read at most 64
    characters each; so each costs O(run) at a line break and O(64) at a ``token:``."""
    number = _repeats(redaction._NOT_A_NUMBER)
    assert number, "no repeat found"
    assert all(op is sre_constants.POSSESSIVE_REPEAT for op, _, hi in number if hi == _UNBOUNDED), (
        number
    )
    token = _repeats(redaction._TOKEN_VALUE_AHEAD)
    assert token and all(hi <= 64 for _, _, hi in token), token


def test_a_long_run_of_digit_lines_after_key_characters_reads_in_linear_steps() -> None:
    # (no clock: the pattern finds every break of a text made of such lines, and each line's
    # break is refused or taken by its own run alone; the counts show every line was read)
    text = "\n".join(["1-" * 500 + "1"] * 200)
    assert sum(1 for _ in redaction._BREAKS.finditer(text)) == 0
    text2 = "\n".join(["1-" * 500 + "x"] * 200)
    assert sum(1 for _ in redaction._BREAKS.finditer(text2)) == 199


# -- 3. a log record's traceback ------------------------------------------------------------


def _record(exc: BaseException, msg: str = "handler for %r raised") -> logging.LogRecord:
    try:
        raise exc
    except type(exc):
        info = sys.exc_info()
    return logging.LogRecord("mcp.x", logging.ERROR, __file__, 1, msg, ("prompts/get",), info)


def test_a_traceback_holding_a_key_is_redacted_in_the_record() -> None:
    key = KEYS[1]
    record = _record(ValueError(f"Unknown prompt: {key}"))
    assert RedactingFilter().filter(record)
    handler = logging.StreamHandler()
    shown = handler.format(record)
    assert key[8:30] not in shown and key[-12:] not in shown
    assert "ValueError: Unknown prompt: ***" in shown
    assert "handler for 'prompts/get' raised" in shown


def test_a_traceback_without_a_key_keeps_its_exception_control() -> None:
    # control (passes on 63c22bec): nothing to hide, the record as it was
    record = _record(ValueError("Unknown prompt: greet"))
    assert RedactingFilter().filter(record)
    assert record.exc_info is not None and record.msg == "handler for %r raised"


# -- 4. no session '...' ------------------------------------------------------------------


@pytest.mark.parametrize("prefix", ["", "viking://resources/", "s-", "x" * 30])
def test_a_missing_session_named_by_a_key_shows_none_of_it(prefix: str) -> None:
    from treehop.sessions import _no_session

    key = KEYS[1]
    shown = _no_session(prefix + key)
    assert not re.search(re.escape(key[:14]), shown), shown
    assert shown.startswith("no session '"), shown
