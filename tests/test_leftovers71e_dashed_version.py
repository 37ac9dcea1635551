"""helper leftovers71e: ``treehop —version`` (a page's em dash, no command after it).

leftovers71d hinted a typographically dashed option given *before* a command; with no
command at all, ``treehop —version`` was still argparse's "invalid choice: '—version'" with
the list of commands, as if a command had been misspelled. Now treehop's own options so
spelled are named with the ASCII option meant, from the top-level parser.
"""

from __future__ import annotations

import contextlib
import io

from hypothesis import given
from hypothesis import strategies as st

from test_leftovers68b_cli import _usage_error as _error  # (parse only)
from test_leftovers71c_dashed_hint import _LONG_LEADS  # (the same dash spellings)
from treehop.cli._app import _parse, build_parser


def test_em_dashed_version_alone_is_hinted() -> None:
    text = _error(["\u2014version"])
    assert "invalid choice" not in text, text
    assert "treehop: error: unrecognized arguments: \u2014version" in text, text
    assert "\u2014version: did you mean --version?" in text, text


@given(
    lead=st.sampled_from(_LONG_LEADS),
    option=st.sampled_from(["--version", "--help", "--index", "--user"]),
)
def test_treehops_own_options_in_any_dash_spelling_with_no_command(lead: str, option: str) -> None:
    word = lead + option.removeprefix("--")
    text = _error([word, "x"] if option in ("--index", "--user") else [word])
    assert "invalid choice" not in text, text
    assert f"{word}: did you mean {option}?" in text, text


def test_a_typo_is_hinted_and_a_key_is_masked() -> None:
    text = _error(["\u2014verison"])
    assert "\u2014verison: did you mean --version?" in text, text
    key = "sk-Secret0123456789abcdef"
    text = _error(["\u2014version", "\u2014api-key", key])
    assert "did you mean --version?" in text, text
    assert key not in text and "Secret" not in text, text


def test_control_ascii_and_command_options_read_as_before() -> None:
    # ASCII --version prints the version (argparse's own action)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        _parse(build_parser(), ["--version"])
    assert out.getvalue().startswith("treehop "), out.getvalue()
    # a command's option with no command: a command is what is missing (stop 72: named)
    text = _error(["\u2014limit", "3"])
    assert "a command is missing" in text and "then --limit after it" in text, text
    # an unknown ASCII word: argparse's invalid choice, unchanged
    assert "invalid choice: 'serch'" in _error(["serch", "q"])
