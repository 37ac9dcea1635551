"""A command's option given before the command's name, or treehop's own after it, is told
where it goes (helper leftovers68b, bench/README.md "(helper leftovers68b)"; usage78's open
item).

``treehop --index idx --json index d`` answered "unrecognized arguments: --json; --json: did
you mean --json?", the option offered as its own fix; ``treehop --limit 3 find q`` "invalid
choice: '3'" with the top-level usage; ``treehop find q --version`` "did you mean --json?".

Each test fails on c3a05a97 unless it says it is a control.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from treehop.cli import ExitCode, build_parser, main
from treehop.cli._app import _parse

_NO_INDEX = "/nonexistent/leftovers68b-index"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    # Usage errors are refused while parsing: no index is opened (none exists here).
    code = main(list(argv))
    return code, capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (
            ["--index", _NO_INDEX, "--json", "index", "d"],
            "treehop index: error: unrecognized arguments: --json (before 'index'); "
            "--json is an option of 'treehop index': give it after 'index'",
        ),
        (
            ["--json", "--index", _NO_INDEX, "index", "d"],
            "treehop index: error: unrecognized arguments: --json (before 'index'); "
            "--json is an option of 'treehop index': give it after 'index'",
        ),
        (
            ["--index", _NO_INDEX, "--limit", "3", "find", "q"],
            "treehop find: error: unrecognized arguments: --limit 3 (before 'find'); "
            "--limit is an option of 'treehop find': give it after 'find'",
        ),
        (
            ["--index", _NO_INDEX, "--limit=3", "find", "q"],
            "treehop find: error: unrecognized arguments: --limit=3 (before 'find'); "
            "--limit is an option of 'treehop find': give it after 'find'",
        ),
        (
            ["--index", _NO_INDEX, "--tag", "a", "b", "index", "d"],
            "treehop index: error: unrecognized arguments: --tag a b (before 'index'); "
            "--tag is an option of 'treehop index': give it after 'index'",
        ),
        (
            ["--index", _NO_INDEX, "session", "--json", "show", "ID"],
            "treehop session show: error: unrecognized arguments: --json (before 'show'); "
            "--json is an option of 'treehop session show': give it after 'show'",
        ),
        (
            ["--index", _NO_INDEX, "--jsn", "index", "d"],
            "treehop index: error: unrecognized arguments: --jsn (before 'index'); "
            "--jsn: did you mean --json, after 'index'?",
        ),
        (
            ["-k", "3", "find", "q"],
            "treehop find: error: unrecognized arguments: -k 3 (before 'find'); "
            "-k: did you mean --limit, after 'find'?",
        ),
        (
            ["--zzzz", "index", "d"],
            "treehop index: error: unrecognized arguments: --zzzz (before 'index'); "
            "options of 'treehop index' go after 'index'",
        ),
        (
            ["find", "q", "--version"],
            "treehop find: error: unrecognized arguments: --version; "
            "--version is an option of 'treehop' itself: give it before 'find'",
        ),
        (
            ["session", "show", "ID", "--vers"],
            "treehop session show: error: unrecognized arguments: --vers; "
            "--vers is an option of 'treehop' itself: give it before 'session'",
        ),
    ],
)
def test_a_misplaced_option_is_told_where_it_goes(
    capsys: pytest.CaptureFixture[str], argv: list[str], error: str
) -> None:
    code, err = _run(capsys, *argv)
    assert code == ExitCode.USAGE
    assert err.rstrip().endswith(error), err
    usage = error.split(": error:")[0]
    assert f"usage: {usage} " in err, err  # (the command's own usage line)


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (["find", "q", "--limt", "2"], "--limt 2; --limt: did you mean --limit?"),
        (["find", "q", "--zzzzzz", "1"], "unrecognized arguments: --zzzzzz 1"),
        (["--index", _NO_INDEX, "-5", "find", "q"], "invalid choice: '-5'"),
    ],
)
def test_what_was_told_before_is_told_as_before_control(
    capsys: pytest.CaptureFixture[str], argv: list[str], error: str
) -> None:
    # control: an unknown option after the command, and a negative number read as a
    # command, as before (a line of options naming no command: now named with the
    # commands that read them, tests/test_stop72_options_without_command.py)
    code, err = _run(capsys, *argv)
    assert code == ExitCode.USAGE
    assert error in err, err
    assert "is an option of" not in err


def test_an_option_after_double_dash_is_a_word_offered_no_fix(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # c3a05a97 (and this branch before hypothesis found it): "--json: did you mean --json?"
    code, err = _run(capsys, "--index", _NO_INDEX, "find", "q", "--", "--json")
    assert code == ExitCode.USAGE
    assert err.rstrip().endswith("treehop find: error: unrecognized arguments: --json"), err


@pytest.mark.parametrize(
    "argv",
    [
        ["--ind", _NO_INDEX, "--us", "bob", "find", "q", "--limit", "2"],
        ["--index=" + _NO_INDEX, "find", "q", "--json"],
        ["find", "q", "--index", _NO_INDEX, "--user", "bob"],
        ["--index", _NO_INDEX, "session", "show", "ID", "--json"],
    ],
)
def test_options_in_their_places_still_parse_control(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    # control: a right command line (abbreviations, ``=``, the shared options after the
    # command) gets past parsing to the missing index
    code, err = _run(capsys, *argv)
    assert code == ExitCode.NOT_FOUND, err
    assert "no treehop index" in err or "no session" in err, err


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command path with no subcommands below it (``("session", "show")``)."""
    sub = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
    if sub is None:
        return [path]
    return [p for name, child in sub.choices.items() for p in _commands(child, (*path, name))]


_PARSER = build_parser()
_COMMANDS = [c for c in _commands(_PARSER) if c != ("demo",)]
_TOP = {o for a in _PARSER._actions for o in a.option_strings}


def _leaf(path: tuple[str, ...]) -> argparse.ArgumentParser:
    parser = _PARSER
    for name in path:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[name]
    return parser


_OWN_OPTIONS = [
    (path, option)
    for path in _COMMANDS
    for a in _leaf(path)._actions
    for option in a.option_strings
    if option.startswith("--") and option not in _TOP
]


def _usage_error(argv: list[str]) -> str:
    """What parsing ``argv`` as ``main`` does writes to stderr (nothing runs: parse only)."""
    err, out = io.StringIO(), io.StringIO()
    with (
        contextlib.redirect_stderr(err),
        contextlib.redirect_stdout(out),
        contextlib.suppress(SystemExit),
    ):
        _parse(build_parser(), ["--index", _NO_INDEX, *argv])
    return err.getvalue()


@given(st.sampled_from(_OWN_OPTIONS))
def test_every_commands_own_option_before_it_is_named_as_its_own(
    case: tuple[tuple[str, ...], str],
) -> None:
    # c3a05a97: each one "did you mean <itself>?" (or an invalid choice, where it takes a
    # value and the value took the command's place)
    path, option = case
    for before in ([f"{option}=1"], [option, "1"]):
        text = _usage_error([*before, *path, "x"])
        assert f"{option} is an option of 'treehop {' '.join(path)}': give it after" in text, text
        assert f"did you mean {option}" not in text


_WORDS = st.sampled_from(
    [
        *sorted({o for _, o in _OWN_OPTIONS}),
        *sorted(_TOP - {"-h", "--help", "--version"}),
        *sorted({p[0] for p in _COMMANDS}),
        "show",
        "list",
        "q",
        "3",
        "--",
        "-k",
        "--zzz",
        "--limt",
        "--version",
        "--vers",
    ]
)


@given(st.lists(_WORDS, max_size=8))
def test_no_usage_error_offers_an_option_as_its_own_fix(argv: list[str]) -> None:
    # c3a05a97: "--json: did you mean --json?" for a command's option before the command
    text = _usage_error(argv)
    for given_, meant in re.findall(r"(\S+): did you mean (--?[\w-]+)", text):
        assert given_.split("=", 1)[0] != meant, text
