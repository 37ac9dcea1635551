"""Stop 72 (the lead): options given with no command after them.

``treehop --limit 3`` was argparse's "invalid choice: '3'" (the option's value read as a
misspelled command, the option never named), and ``treehop --api-key sk-...`` printed the
key whole inside that "invalid choice". Now the arguments are listed as every other usage
error lists them (a key masked) and an option some command reads is named with those
commands, to be given after one of them.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from test_leftovers68b_cli import _OWN_OPTIONS
from test_leftovers68b_cli import _usage_error as _error  # (parse only)
from test_leftovers71c_dashed_hint import _LONG_LEADS


def test_a_commands_option_with_no_command_is_named_with_its_commands() -> None:
    text = _error(["--limit", "3"])
    assert "invalid choice" not in text, text
    assert "a command is missing; unrecognized arguments: --limit 3" in text, text
    assert "--limit is an option of 'find', 'search'" in text, text
    assert "then --limit after it (treehop find ... --limit ...)" in text, text


def test_another_tools_count_name_and_a_typo_read_as_limit() -> None:
    for word in ("--top-k", "-k", "--lmit", "\u2014limit"):
        text = _error([word, "3"])
        assert f"{word} reads as --limit, an option of 'find', 'search'" in text, text


def test_an_unknown_short_option_is_listed_without_a_guess() -> None:
    text = _error(["-x", "3"])
    assert "a command is missing; unrecognized arguments: -x 3" in text, text
    assert "reads as" not in text and "invalid choice" not in text, text


@settings(max_examples=60, deadline=None)
@given(case=st.sampled_from(_OWN_OPTIONS))
def test_every_commands_option_alone_is_hinted_after_a_command(
    case: tuple[tuple[str, ...], str],
) -> None:
    _path, option = case
    text = _error([option, "v"])
    assert "invalid choice" not in text, text
    assert "a command is missing" in text, text
    assert f"then {option} after it" in text or f"{option} reads as" in text, text


@settings(max_examples=80, deadline=None)
@given(
    lead=st.sampled_from(["--", *_LONG_LEADS]),
    name=st.sampled_from(["api-key", "token", "password", "openai-api-key", "auth"]),
    key=st.text("abcdefghijklmnopqrstuvwxyzABCDEFGHIJ0123456789_", min_size=16, max_size=48),
    joined=st.booleans(),
)
def test_a_key_given_with_no_command_is_never_printed(
    lead: str, name: str, key: str, joined: bool
) -> None:
    argv = [f"{lead}{name}={key}"] if joined else [f"{lead}{name}", key]
    text = _error(argv)
    assert key not in text, text
    assert "***" in text, text


def test_an_unrelated_word_is_not_hinted_as_some_commands_option() -> None:
    """Helper review72: the fuzzy match over every command's options compared the dashed
    spellings (``--`` two matching characters), so any word found a "close" option in some
    command: ``--verbose`` read as ``--role``, ``--quiet`` as ``--user``, ``--debug`` as
    ``--mode``, ``--secret`` as ``--user``. A typo of a real option still reads as it
    (``--lmit``: the test above; ``--limt``, ``--mdoe``, ``--usr`` here)."""
    for word in ("--verbose", "--quiet", "--debug", "--secret"):
        text = _error([word])
        assert "a command is missing; unrecognized arguments: " + word in text, text
        assert "reads as" not in text, text
    for typo, meant in (("--limt", "--limit"), ("--mdoe", "--mode"), ("--usr", "--user")):
        text = _error([typo, "3"])
        assert f"{typo} reads as {meant}, an option of " in text, text
