"""Helper usage84: an unknown command name that another tool uses, or a misspelling, is
answered with the ``treehop`` command meant.

``treehop serve-mcp --help`` (an MCP server's usual name) was argparse's bare "invalid choice"
with thirteen names to read; ``treehop query ...`` and ``treehop fnd ...`` the same.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop.cli import _app
from treehop.cli._app import build_parser


def _usage_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    with pytest.raises(SystemExit) as e:
        build_parser().parse_args(argv)
    assert e.value.code == 2
    return capsys.readouterr().err.strip().splitlines()[-1]


@pytest.mark.parametrize(
    ("argv", "meant"),
    [
        (["serve-mcp", "--help"], "mcp"),
        (["serve"], "mcp"),
        (["query", "how do I"], "find"),
        (["ingest", "docs/"], "index"),
        (["fnd", "q"], "find"),
        (["Find", "q"], "find"),
        (["evaluate", "q.jsonl"], "eval"),
        (["session", "shwo", "s1"], "show"),
    ],
)
def test_a_command_another_tool_names_is_hinted(
    capsys: pytest.CaptureFixture[str], argv: list[str], meant: str
) -> None:
    line = _usage_error(capsys, argv)
    assert "invalid choice" in line  # argparse's own words stay
    assert line.endswith(f"; did you mean '{meant}'?")


def test_a_word_like_no_command_gets_no_hint(capsys: pytest.CaptureFixture[str]) -> None:
    line = _usage_error(capsys, ["zzz", "q"])
    assert "invalid choice: 'zzz'" in line and "did you mean" not in line


def test_a_pasted_key_is_still_masked(capsys: pytest.CaptureFixture[str]) -> None:
    line = _usage_error(capsys, ["api_key=sk-0123456789abcdef"])
    assert "0123456789abcdef" not in line


_NAMES = ["index", "find", "search", "session", "ls", "tree", "read", "rm", "tag", "retag"]
_NAMES += ["eval", "mcp", "demo"]


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_a_hint_only_ever_names_a_command(typed: str) -> None:
    parser = build_parser()
    message = f"argument COMMAND: invalid choice: '{typed}' (choose from 'index', 'find')"
    hint = _app._command_hint(parser, message)
    assert hint == "" or hint in {f"; did you mean '{n}'?" for n in _NAMES}
    assert _app._command_hint(parser, "argument --limit: invalid int value: 'x'") == ""
