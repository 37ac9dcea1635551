"""80e60c2's ``validation.has_invisible_format`` and ``loaders._addressable``, verbatim: the
oracle the hypothesis tests in ``test_perf58.py`` and ``test_leftovers58.py`` compare the
faster versions with. Frozen on purpose: it is the behaviour the rewrites must keep, so it is
never to follow later changes to the core (a change of answer there must fail those tests,
not be copied here). One copy, so the two tests cannot drift apart. Also ``count_calls``,
the measure both files' one-pass tests use."""

from __future__ import annotations

import re
import sys
import unicodedata
from collections.abc import Callable

_OLD_UNSHOWN_NAME = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_OLD_UNSHOWN = re.compile(r"[\x80-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def old_has_invisible_format(s: str) -> bool:
    """80e60c2's ``validation.has_invisible_format``, verbatim."""
    if s.isascii():
        return False
    last = len(s) - 1
    for i, ch in enumerate(s):
        if ch.isascii() or unicodedata.category(ch) != "Cf":
            continue
        if ch not in "\u200c\u200d" or i == 0 or i == last:
            return True
        before, after = s[i - 1], s[i + 1]
        if (
            before.isascii()
            or after.isascii()
            or "Cf" in {unicodedata.category(before), unicodedata.category(after)}
        ):
            return True
    return False


def old_addressable(name: str) -> bool:
    """80e60c2's ``loaders._addressable`` and what it called, verbatim."""
    if name.isascii():
        return name.isprintable()
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    if _OLD_UNSHOWN_NAME.search(name) is not None:
        return False
    return not (_OLD_UNSHOWN.search(name) or old_has_invisible_format(name))


def count_calls(fn: Callable[[], object]) -> int:
    """Function calls (Python and C, a generator's resumptions too) made while ``fn`` runs:
    the work a call costs, counted rather than timed so that the one-pass tests are exact on
    a loaded machine."""
    n = 0

    def count(frame: object, event: str, arg: object) -> None:
        nonlocal n
        n += event in ("call", "c_call")

    sys.setprofile(count)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return n
