"""A key in a vendor's shape stays masked when the text quoting it was escaped first, glued
to an option's dashes, or cut a few characters into it (helper attacks86).

Stop 72's ``_VENDOR_KEY`` (``sk-...``, ``ghp_...``, ``hf_...``, ...) matched a key only at a
token's start: no letter, digit, ``_`` or ``-`` before it. But the messages ``redact`` reads
have often escaped the caller's text already: ``shown_name`` redacts a ``repr``, the CLI
escapes a control character before redacting, argparse quotes a bad value with ``%r``. An
escape ends in a letter or digit (``\\n``, ``\\t``, ``\\x00``, ``\\u200b``), so a key pasted
after a newline or a tab was read as the tail of a word ``nsk-proj-...`` and printed whole:
``treehop --limit $'\\nsk-proj-...'``, ``treehop find q --limit $'\\tsk-...'`` (argparse's
"invalid int value"), ``treehop find q --bogus $'\\x00sk-...'``. The same for a key glued to
an option's dashes (``treehop --sk-proj-...``: the ``-`` before ``sk`` was "inside a
token") and ``Bearer`` / ``X-Security-Token`` after an escaped newline (a request's headers
quoted by ``repr``). And a message that cuts the caller's text (a name to 60 characters, an
argument to 100) a few characters into a key left a prefix shorter than the key's shape:
up to 19 of its characters shown.
"""

from __future__ import annotations

import io
import json
import time
from contextlib import redirect_stderr, redirect_stdout
from urllib.parse import quote

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from treehop.cli._app import main
from treehop.redaction import redact, shown_name

KEY = "sk-proj-A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"
KEY_BODY = KEY[len("sk-proj-") :]

SHAPES = {
    "sk-proj-": (st.sampled_from("abcXYZ0129_-"), 24),
    "sk-ant-api03-": (st.sampled_from("abcXYZ0129_-"), 24),
    "ghp_": (st.sampled_from("abcXYZ0129"), 36),
    "github_pat_": (st.sampled_from("abcXYZ0129_"), 40),
    "hf_": (st.sampled_from("abcXYZ0129"), 34),
    "xoxb-": (st.sampled_from("abcXYZ0129-"), 20),
    "glpat-": (st.sampled_from("abcXYZ0129_-"), 20),
    "AIza": (st.sampled_from("abcXYZ0129_-"), 35),
}
FIXED = {"AIza"}
"""Shapes of one length (a Google key is ``AIza`` and 35 characters)."""


@st.composite
def vendor_keys(draw: st.DrawFn) -> tuple[str, str]:
    """A key in one vendor's shape, and its body (what must never be shown)."""
    prefix = draw(st.sampled_from(sorted(SHAPES)))
    alphabet, n = SHAPES[prefix]
    longest = n if prefix in FIXED else n + 12
    body = "".join(draw(st.lists(alphabet, min_size=n, max_size=longest)))
    # (a body starting with a run a shape could end at, e.g. all dashes, is still a key)
    return prefix + body, body


ESCAPED_BEFORE = ["\n", "\t", "\r", "\x00", "\x1b", "\u200b", "\u202e", "\x85", "\ufeff"]
"""Characters ``repr`` writes as an escape that ends in a letter or a digit."""


def _shown(body: str, text: str) -> bool:
    """Whether 12 consecutive characters of a key's body are in ``text``."""
    return any(body[i : i + 12] in text for i in range(len(body) - 11))


@settings(max_examples=200, deadline=None)
@given(
    key=vendor_keys(),
    before=st.sampled_from(ESCAPED_BEFORE),
    head=st.text(max_size=20),
    tail=st.sampled_from(["", " ", "\n", "'", ".", "\t"]),
)
def test_a_key_after_an_escaped_character_is_masked_wherever_a_message_escapes_first(
    key: tuple[str, str], before: str, head: str, tail: str
) -> None:
    whole, body = key
    assume(not _shown(body, head))
    text = head + before + whole + tail
    for shown in (
        redact(text),  # (masked before any escape: held on the base too)
        redact(repr(text)),  # uri._shown, argparse's %r
        shown_name(text, 200),  # a name in an error
        redact(json.dumps(text)),  # a JSON body quoted in an error
        redact(quote(text)),  # a URL quoting it (%0A before the key)
    ):
        assert not _shown(body, shown), (text, shown)
        assert "***" in shown


def _cli(argv: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    return code, out.getvalue() + err.getvalue()


@pytest.mark.parametrize(
    "argv",
    [
        ["--limit", "\n" + KEY],  # no command: the usage error lists it
        ["--limit", "\t" + KEY],
        ["find", "q", "--limit", "\t" + KEY],  # argparse's "invalid int value: '\\t...'"
        ["find", "q", "--limit=\n" + KEY],
        ["find", "q", "--bogus", "\x00" + KEY],  # an unknown option's value
        ["--x=\u200b" + KEY],
        ["--" + KEY],  # a key glued to an option's dashes
        ["-" + KEY],
        ["find", "q", "--" + KEY + "=" + KEY],
        ["--limit", "3", "--" + KEY],
    ],
)
def test_the_cli_never_prints_a_key_escaped_or_glued_to_dashes(argv: list[str]) -> None:
    code, printed = _cli(argv)
    assert code == 2
    assert not _shown(KEY_BODY, printed), printed
    assert "***" in printed


def test_a_header_word_after_an_escaped_newline_is_still_a_header() -> None:
    """``repr`` of a request's headers (``...\\r\\nAuthorization: Basic ...``): the names
    follow an escape, as a key does, and a value ends where the next header line starts."""
    dump = (
        "POST /v1 HTTP/1.1\r\nX-Security-Token: tok-9f8e7d6c5b4a\r\n"
        "Authorization: Basic dXNlcjpwYXNz\nX-Api-Key: k-7a6b5c4d3e\r\nAccept: */*\r\n"
    )
    shown = redact(repr(dump))
    for secret in ("tok-9f8e7d6c5b4a", "dXNlcjpwYXNz", "k-7a6b5c4d3e"):
        assert secret not in shown, shown
    assert "Accept: */*" in shown
    for line in (
        "x\nBearer abc123def456ghi",
        "\tcredential=abc123def456ghi",
        "\x00signature=abc123def456ghi",
    ):
        shown = redact(repr(line))
        assert "abc123def456ghi" not in shown and "***" in shown, shown


@settings(max_examples=150, deadline=None)
@given(key=vendor_keys(), pad=st.integers(0, 120), limit=st.integers(20, 110))
def test_a_cut_through_a_key_never_shows_a_prefix_of_it(
    key: tuple[str, str], pad: int, limit: int
) -> None:
    """``shown_name`` cuts to ``limit`` before it escapes; the key starts anywhere around the
    cut. At most 11 of the key's characters (its vendor prefix and a few) may show."""
    whole, body = key
    text = "w" * pad + " " + whole + " and more words after it"
    shown = shown_name(text, limit)
    assert not any(body[i : i + 8] in shown for i in range(len(body) - 7)), shown
    assert len(shown) <= limit + 10


def test_the_cli_cuts_an_argument_without_showing_a_keys_prefix() -> None:
    """An argument is shown cut to 100 characters: a key starting at 90 was shown as
    ``sk-proj-A1`` and a few more characters of it."""
    for pad in range(70, 100):
        code, printed = _cli(["find", "q", "--x=" + "y" * pad + " " + KEY])
        assert code == 2
        assert not any(KEY_BODY[i : i + 6] in printed for i in range(len(KEY_BODY) - 5)), (
            pad,
            printed,
        )


@pytest.mark.parametrize(
    "text",
    [
        "sk-learn",
        "task-sk-abcdefghijklmnopqrstuvwxyz",  # (a word's inner dash: no token start)
        "disk-space-monitoring-service-on-the-host",
        "hf_hub_download",
        "max_tokens=512",
        "\\nsk-learn is installed",
        "%20hf_hub",
        "unexpected token: '}'",
        "C:\\temp\\new_folder",
        "caf%C3%A9 and %0Abreakfast",
    ],
)
def test_control_ordinary_words_stay_unmasked(text: str) -> None:
    """Control (passes on the base too): what is no key is shown as written."""
    assert redact(text) == text
    assert redact(repr(text)) == repr(text)


@pytest.mark.parametrize(
    "text", ["password=C:\\new\\path", "token=ab\\nc", "api_key=x\\r\\ty", "pwd='a\\tb'"]
)
def test_control_a_backslash_inside_a_value_stays_masked(text: str) -> None:
    """Control (passes on the base too): a value holding a backslash (a Windows path, an
    escape that starts no header line) is masked whole."""
    name = text.split("=", 1)[0]
    assert redact(text) in {f"{name}=***", f"{name}='***'"}, redact(text)


@pytest.mark.parametrize(
    "unit", ["\\n", "%0A", "\\x00sk-" + "a" * 19 + " ", "--sk-", "\\u200bBearer", "a-", "x"]
)
def test_redaction_stays_linear_on_escapes(unit: str) -> None:
    """400,000 characters of one adversarial unit take well under what a quadratic scan
    would (seconds for 400,000 positions rescanned): a bound loose enough for a loaded box."""
    text = (unit * (400_000 // len(unit) + 1))[:400_000]
    start = time.perf_counter()
    redact(text)
    assert time.perf_counter() - start < 10
