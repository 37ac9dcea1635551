"""A name with words added is hinted only as an option that takes no value or whose value
argparse checks (helper review73; leftovers73a's open item).

leftovers73a hinted an unknown option whose first word is a known option's whole name as
that option (``--json-lines`` as ``--json``, ``--limit-docs`` as ``--limit``), and so also
``treehop find q --user-agent x`` as ``--user``: a free-text option takes whatever it is
given, so the hint, followed, stores memories under a user named by a browser string. Such
a name is hinted only where the option is a flag or its value is checked (a number,
``choices``); a close spelling (``--usr``) is hinted as before.
"""

from __future__ import annotations

import argparse
import difflib

from hypothesis import given
from hypothesis import strategies as st

from test_leftovers68b_cli import _usage_error  # (parse only, over a missing index)
from treehop.cli._app import NAMED_ALIKE, _meant_option, build_parser

VALUE_WORDS = {"path", "dir", "directory", "folder", "location", "url", "id", "name"}

_SUBS = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
_COMMANDS = ["find", "ls", "index", "eval", "read", "tree", "tag", "search"]


def _free_text(command: str) -> list[str]:
    """The long options of ``command`` that take an unchecked value (``--user``, ``--filter``)."""
    sub = _SUBS.choices[command]
    return sorted(
        o[2:]
        for a in sub._actions
        if a.nargs != 0 and a.type is None and a.choices is None
        for o in a.option_strings
        if o.startswith("--")
    )


def test_user_agent_is_not_hinted_as_user() -> None:
    text = _usage_error(["find", "q", "--user-agent", "Mozilla/5.0"])
    assert "unrecognized arguments: --user-agent" in text, text
    assert "did you mean" not in text, text


def test_with_no_command_user_agent_reads_as_no_option() -> None:
    text = _usage_error(["--user-agent", "Mozilla/5.0"])
    assert "a command is missing" in text, text
    assert "reads as --user" not in text, text


def test_flags_and_checked_values_keep_their_hint() -> None:
    """Controls (pass on the base too): leftovers73a's hints stay."""
    for argv, word, meant in (
        (["find", "q"], "--json-lines", "--json"),
        (["find", "q", "--limit-docs", "3"], "--limit-docs", "--limit"),
        (["find", "q", "--mode-name", "fast"], "--mode-name", "--mode"),
        (["find", "q", "--usr", "me"], "--usr", "--user"),  # (a spelling: still hinted)
    ):
        if word not in argv:
            argv = [*argv, word]
        text = _usage_error(argv)
        assert f"{word}: did you mean {meant}?" in text, text


@given(
    command=st.sampled_from(_COMMANDS),
    data=st.data(),
    words=st.lists(st.from_regex(r"[a-z]{2,12}", fullmatch=True), min_size=1, max_size=3),
)
def test_a_free_text_option_with_words_added_is_never_hinted_by_its_first_word(
    command: str, data: st.DataObject, words: list[str]
) -> None:
    names = [n for n in _free_text(command) if len(n) >= 3]
    if not names:
        return
    name = data.draw(st.sampled_from(names))
    given_name = "-".join([name, *words])
    if len(words) == 1 and words[0] in VALUE_WORDS:
        return  # (the option's name and its value's kind: leftovers74's hint, ``--index-url``)
    if difflib.SequenceMatcher(None, given_name, name).ratio() >= NAMED_ALIKE:
        return  # (a close spelling as a whole name: leftovers72c's hint, not this rule's)
    assert _meant_option(_SUBS.choices[command], "--" + given_name) != "--" + name
