"""Two CLI hints (helper leftovers74; review73's and the lead's open items).

- A free-text option's name followed by one word naming its value's kind (pip's
  ``--index-url``, ``--index-path``, ``--session-id``, ``--user-id``) is hinted as that
  option. review73 hints a name with words added only as a flag or a checked option, so
  ``--index-path`` and ``--session-id`` got no hint and ``--index-url`` got one only because
  its whole spelling is 0.71 alike; ``--user-agent`` (another thing, not a value's kind)
  stays un-hinted.
- ``treehop --session show ID`` (a global-looking flag before a subcommand) is hinted as
  the command that exists, ``treehop session show``; before, it was told to give ``search``
  first and ``--session`` after it.
"""

from __future__ import annotations

import argparse

from hypothesis import given
from hypothesis import strategies as st

from test_leftovers68b_cli import _usage_error  # (parse only, over a missing index)
from treehop.cli._app import _meant_option, build_parser

VALUE_WORDS = {"path", "dir", "directory", "folder", "location", "url", "id", "name"}

_SUBS = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))


def test_an_options_name_with_its_values_kind_is_hinted_as_it() -> None:
    for argv, word, meant in (
        (["find", "q", "--index-url", "https://pypi.org/simple"], "--index-url", "--index"),
        (["find", "q", "--index-path", "idx"], "--index-path", "--index"),
        (["find", "q", "--index-folder", "idx"], "--index-folder", "--index"),
        (["search", "q", "--session-id", "s1"], "--session-id", "--session"),
        (["find", "q", "--user-id", "u1"], "--user-id", "--user"),
    ):
        text = _usage_error(argv)
        assert f"{word}: did you mean {meant}?" in text, text


def test_control_user_agent_stays_unhinted() -> None:
    """Control (passes on the base too): review73's case."""
    text = _usage_error(["find", "q", "--user-agent", "Mozilla/5.0"])
    assert "did you mean" not in text, text


@given(
    command=st.sampled_from(["find", "search", "ls", "read", "tree", "index", "tag"]),
    data=st.data(),
)
def test_any_long_option_with_a_value_word_is_hinted_as_it(
    command: str, data: st.DataObject
) -> None:
    sub = _SUBS.choices[command]
    names = sorted(
        o[2:]
        for a in sub._actions
        if a.nargs != 0
        for o in a.option_strings
        if o.startswith("--") and len(o) >= 5
    )
    name = data.draw(st.sampled_from(names))
    word = data.draw(st.sampled_from(sorted(VALUE_WORDS)))
    meant = _meant_option(sub, f"--{name}-{word}")
    # (hinted as the option, or as another whose whole spelling is closer)
    assert meant is not None, (name, word)


def test_session_before_its_action_is_hinted_as_the_session_command() -> None:
    for argv, form in (
        (["--session", "show", "abc123"], "treehop session show"),
        (["--session", "list"], "treehop session list"),
        (["--session", "new"], "treehop session new"),
    ):
        text = _usage_error(argv)
        assert f"did you mean '{form}'?" in text, text
        assert "give the command first, then --session" not in text, text


def test_control_session_alone_still_names_searchs_option() -> None:
    """Control (passes on the base too): ``--session`` with no action after it is still
    ``search``'s option, to go after the command."""
    text = _usage_error(["--session", "s1"])
    assert "an option of 'search'" in text, text
    # (a command with no actions whose name commands also read as an option: that option)
    text = _usage_error(["--tag", "x"])
    assert "--tag is an option of" in text and "treehop tag'" not in text, text
