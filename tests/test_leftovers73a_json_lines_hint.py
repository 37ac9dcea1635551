"""An unknown option that is a known option's name with words added is hinted as it
(helper leftovers73a; leftovers72c's open item).

leftovers72c measured hints on the names without dashes at 0.7 (``_named_alike``), which
removed review72's false hints (``--secret`` read as ``--user``) but also a useful one:
``json-lines`` / ``json`` is 0.57, so ``treehop find q --json-lines`` (another tool's JSON
option) was a bare "unrecognized arguments: --json-lines" where it had been asked "did you
mean --json?". A name whose first word (or words) is a whole known name of three letters or
more, followed by ``-``, now reads as that option (``_first_words_named``); the words
leftovers72c and review72 un-hinted have no ``-`` and stay un-hinted (their tests, run
beside this file, pin that).
"""

from __future__ import annotations

import argparse

import pytest
from hypothesis import given
from hypothesis import strategies as st

from test_leftovers68b_cli import _usage_error  # (parse only, over a missing index)
from treehop.cli._app import _meant_option, _named_alike, build_parser

_SUBS = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
_COMMANDS = ["find", "ls", "index", "eval", "read", "tree", "tag"]


def _long_names(command: str) -> list[str]:
    sub = _SUBS.choices[command]
    return sorted(
        o[2:]
        for a in sub._actions
        for o in a.option_strings
        if o.startswith("--") and o != "--help"
    )


def _checked(command: str, name: str) -> bool:
    action = _SUBS.choices[command]._option_string_actions["--" + name]
    return action.nargs == 0 or action.type is not None or action.choices is not None


@pytest.mark.parametrize(
    ("argv", "word"),
    [
        (["find", "q"], "--json-lines"),
        (["ls"], "--json-lines"),
        (["index", "docs"], "--json-output"),
        (["find", "q"], "--json_lines"),
    ],
)
def test_a_json_option_of_another_tool_is_hinted_as_json(argv: list[str], word: str) -> None:
    text = _usage_error([*argv, word])
    assert f"unrecognized arguments: {word}; {word}: did you mean --json?" in text, text


def test_a_count_option_with_a_word_added_is_hinted_as_limit() -> None:
    text = _usage_error(["find", "q", "--limit-docs", "3"])
    assert "--limit-docs: did you mean --limit?" in text, text


def test_with_no_command_it_reads_as_the_commands_json() -> None:
    text = _usage_error(["--json-lines"])
    assert "a command is missing; unrecognized arguments: --json-lines; " in text, text
    assert "--json-lines reads as --json, an option of 'index', 'find'" in text, text


def test_a_name_that_only_shares_letters_or_a_short_head_is_not_hinted() -> None:
    """Controls (pass on the base too): the rule takes a whole name of three letters or
    more followed by ``-``, never letters shared (``--jsonish-x``) or ``eval``'s ``--k``."""
    for argv, word in (
        (["find", "q"], "--jsonish-lines"),
        (["find", "q"], "--lines-json"),
        (["eval", "q.jsonl"], "--k-folds"),
    ):
        text = _usage_error([*argv, word])
        assert "unrecognized arguments" in text, text
        assert "did you mean" not in text, text


@given(
    command=st.sampled_from(_COMMANDS),
    data=st.data(),
    words=st.lists(st.from_regex(r"[a-z]{2,12}", fullmatch=True), min_size=1, max_size=3),
)
def test_any_long_option_with_words_added_is_hinted_as_an_option_it_starts_with(
    command: str, data: st.DataObject, words: list[str]
) -> None:
    # (an option whose value argparse checks, or a flag: review73 took free-text options
    # out of this hint, ``--user-agent`` read as ``--user``; tests/test_review73_hints.py)
    names = [n for n in _long_names(command) if len(n) >= 3 and _checked(command, n)]
    if not names:
        return
    name = data.draw(st.sampled_from(names))
    given_name = "-".join([name, *words])
    if any(n.startswith(given_name) for n in _long_names(command)):
        return  # (argparse reads an unambiguous prefix of a known option as it)
    meant = _meant_option(_SUBS.choices[command], "--" + given_name)
    assert meant is not None, (command, given_name)
    assert _named_alike(given_name, meant), (given_name, meant)
