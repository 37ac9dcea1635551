"""helper leftovers71d: an option typed with a page's dashes *before* the command.

leftovers71c taught the hints after a command to read ``—limit`` (an em dash where a page
typeset ``--``) as ``--limit``; before the command, ``treehop —limit 3 find q`` was still
argparse's "invalid choice: '—limit'" with the top-level usage: the pass that finds the
options given before a command (``_options_before_command``) read an option by an ASCII
``-`` only. Now such a word is an option there, reported by the command's parser with the
one it meant, shown as typed.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from test_leftovers68b_cli import _usage_error  # (parse only, over a missing index)
from test_leftovers71c_dashed_hint import _FIND_OPTIONS, _LONG_LEADS  # (the same spellings)
from treehop.cli._app import build_parser

_TOP_LEVEL = {o for a in build_parser()._actions for o in a.option_strings if o.startswith("--")}
"""treehop's own options, given before the command: a dashed one is hinted as itself (the
merge of attacks84's and this helper's readings: ``—user x find q`` means ``--user``)."""


def test_an_em_dashed_limit_before_find_is_hinted_by_find() -> None:
    text = _usage_error(["\u2014limit", "3", "find", "q"])
    assert "invalid choice" not in text, text
    assert "treehop find: error: unrecognized arguments: \u2014limit 3 (before 'find')" in text
    assert "\u2014limit: did you mean --limit, after 'find'?" in text, text


@given(lead=st.sampled_from(_LONG_LEADS), option=st.sampled_from(_FIND_OPTIONS))
def test_every_find_option_in_any_dash_spelling_before_find(lead: str, option: str) -> None:
    word = lead + option.removeprefix("--")
    text = _usage_error([word, "x", "find", "q"])
    assert "invalid choice" not in text, text
    if option in _TOP_LEVEL:  # (``--user``: treehop's own too, right before the command)
        assert f"{word}: did you mean {option}?" in text, text
    else:
        assert f"{word}: did you mean {option}, after 'find'?" in text, text


def test_a_typo_a_value_after_eq_and_one_letter() -> None:
    text = _usage_error(["\u2014limt=3", "find", "q"])
    assert "\u2014limt: did you mean --limit, after 'find'?" in text, text
    text = _usage_error(["\u2013k", "3", "find", "q"])  # (one letter: -k, read as --limit)
    assert "\u2013k: did you mean --limit, after 'find'?" in text, text


def test_control_a_key_after_a_dashed_credential_option_stays_masked() -> None:
    key = "sk-Secret0123456789abcdef"
    text = _usage_error(["\u2014api-key", key, "find", "q"])
    assert key not in text and "Secret" not in text, text
    # an ASCII-dashed misplaced option reads as before
    text = _usage_error(["--limit", "3", "find", "q"])
    assert "--limit is an option of 'treehop find': give it after 'find'" in text, text
