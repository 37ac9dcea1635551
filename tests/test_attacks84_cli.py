"""helper attacks84: what argparse itself quotes is redacted; a page's dashes before the command.

``treehop —api-key=sk-... find q`` (an option pasted with an em dash, before the command):
argparse read the word as the command's name and quoted it whole in ``invalid choice:
'...'``, the key printed to the terminal. The CLI's own errors masked such values; argparse's
did not. Now every argparse error is redacted, and a word led by typographic dashes before
the command is read as the misplaced option it is (with the hint the ASCII spelling gets).
"""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout

from hypothesis import example, given, settings
from hypothesis import strategies as st

from treehop.cli import ExitCode, main

DASHES = ["\u2014", "\u2013-", "\u2013\u2013", "\u2212\u2212", "\uff0d\uff0d", "-\u2014"]
NAMES = ["api-key", "token", "password", "hf_auth", "openai-api-key", "secret"]
KEY = st.text(
    alphabet=st.characters(min_codepoint=0x30, max_codepoint=0x7A, categories=("Lu", "Ll", "Nd")),
    min_size=12,
    max_size=60,
)


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


@settings(max_examples=60, deadline=None)
@given(
    dash=st.sampled_from(DASHES),
    name=st.sampled_from(NAMES),
    key=KEY,
    tail=st.sampled_from([["find", "q"], ["ls"], ["session", "list"], []]),
)
@example(dash="\u2014", name="api-key", key="sk-Zq9sECRETkeyVALUE123", tail=["find", "q"])
def test_a_dashed_credential_option_before_the_command_is_never_shown(
    dash: str, name: str, key: str, tail: list[str]
) -> None:
    code, out, err = _run(f"{dash}{name}={key}", *tail)
    assert code == ExitCode.USAGE
    assert key not in err and key not in out
    if tail or not dash.startswith("-"):  # (else argparse, "COMMAND is required", quotes nothing)
        assert "***" in err


@settings(max_examples=30, deadline=None)
@given(key=KEY)
def test_argparse_quoting_a_credential_named_word_is_redacted(key: str) -> None:
    # (argparse's own "invalid int value: '...'" for a value pasted in the wrong place)
    code, _, err = _run("find", "q", f"--limit=--api-key={key}")
    assert code == ExitCode.USAGE
    assert key not in err and "invalid int value" in err


def test_a_dashed_option_before_the_command_is_hinted_as_its_ascii_spelling() -> None:
    code, _, err = _run("\u2014limit", "3", "find", "q")
    assert code == ExitCode.USAGE
    assert "treehop find: error" in err
    assert "\u2014limit: did you mean --limit, after 'find'?" in err
    code, _, err = _run("\u2014index", "/nonexistent/x", "find", "q")
    assert code == ExitCode.USAGE and "\u2014index: did you mean --index?" in err
    code, _, err = _run("\u2014json", "session", "list")
    assert code == ExitCode.USAGE and "did you mean --json, after 'list'?" in err


def test_control_ascii_options_and_unknown_commands_as_before() -> None:
    code, _, err = _run("--limit", "3", "find", "q")
    assert code == ExitCode.USAGE and "--limit is an option of 'treehop find'" in err
    code, _, err = _run("frobnicate")
    assert code == ExitCode.USAGE and "invalid choice: 'frobnicate'" in err
