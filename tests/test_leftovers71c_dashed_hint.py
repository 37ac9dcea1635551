"""helper leftovers71c: an option typed with a page's dashes gets its "did you mean".

attacks83 taught the CLI's listing of unknown arguments to read ``—api-key`` (an em dash
where a page typeset ``--``; ``–-token``, ``−−password``, a full-width ``－``) as a credential
option; its control showed that ``treehop find q —limit 3``, a known option in the same
spelling, was listed with no hint at all (the hints looked only at words starting with an
ASCII ``-``). Now such a word is read with ASCII dashes for the hint: "—limit: did you mean
--limit?", the word itself still shown as typed, a key after a dashed credential option
still masked.
"""

from __future__ import annotations

import argparse

from hypothesis import given
from hypothesis import strategies as st

from test_leftovers68b_cli import _usage_error  # (parse only, over a missing index)
from treehop.cli._app import build_parser

_LONG_LEADS = ["\u2014", "\u2013-", "\u2013\u2013", "\u2212\u2212", "\uff0d", "-\u2014", "\u2015"]


def _find_options() -> list[str]:
    """``treehop find``'s long options (``--help`` aside), read from the parser itself."""
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    find = sub.choices["find"]
    return sorted(
        o for a in find._actions for o in a.option_strings if o.startswith("--") and o != "--help"
    )


_FIND_OPTIONS = _find_options()


def test_an_em_dashed_limit_is_asked_did_you_mean() -> None:
    text = _usage_error(["find", "q", "\u2014limit", "3"])
    assert "unrecognized arguments: \u2014limit 3" in text  # (shown as typed)
    assert "\u2014limit: did you mean --limit?" in text, text


@given(lead=st.sampled_from(_LONG_LEADS), option=st.sampled_from(_FIND_OPTIONS))
def test_every_find_option_in_any_dash_spelling_is_hinted(lead: str, option: str) -> None:
    word = lead + option.removeprefix("--")
    text = _usage_error(["find", "q", word, "x"])
    assert f"{word}: did you mean {option}?" in text, text


def test_a_dashed_option_of_treehop_itself_is_sent_before_the_command() -> None:
    text = _usage_error(["find", "q", "\u2013-version"])
    assert "\u2013-version is an option of 'treehop' itself: give it before 'find'" in text


def test_a_dashed_typo_gets_the_closest_option_and_a_value_after_eq() -> None:
    text = _usage_error(["find", "q", "\u2014limt=3"])
    assert "\u2014limt: did you mean --limit?" in text, text
    text = _usage_error(["find", "q", "\u2013k", "3"])  # (one letter: -k, read as --limit)
    assert "\u2013k: did you mean --limit?" in text, text


def test_control_a_dashed_key_is_still_masked_and_unknown_words_get_no_hint() -> None:
    text = _usage_error(["find", "q", "\u2014api-key", "zqSECRETkey123"])
    assert "zqSECRETkey123" not in text and "did you mean" not in text
    text = _usage_error(["find", "q", "\u2014keyboard", "visible"])
    assert "\u2014keyboard visible" in text and "did you mean" not in text
    # (an ASCII spelling of the command's own option is still never its own fix)
    text = _usage_error(["find", "q", "--", "--limit"])
    assert "did you mean --limit" not in text
