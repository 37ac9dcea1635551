"""80e60c2's ``validation.has_invisible_format`` and ``loaders._addressable``, verbatim: the
oracle the hypothesis tests in ``test_perf58.py`` and ``test_leftovers58.py`` compare the
faster versions with. Frozen on purpose: it is the behaviour the rewrites must keep, so it is
never to follow later changes to the core (a change of answer there must fail those tests,
not be copied here). One copy, so the two tests cannot drift apart. Also ``count_calls``,
the measure both files' one-pass tests use, and ``short_texts``, the small domain both files'
oracles check exhaustively (helper ci77: the oracles above are unchanged)."""

from __future__ import annotations

import functools
import itertools
import re
import sys
import unicodedata
from collections.abc import Callable, Iterator

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


CORE = (
    "a \x00\x85\u0645\U0001f469\u094d\xa0\u200c\u200d\u200b\u2060\ufeff\u202e"
    "\U000e0041\u2028\u2029\ud800"
)
"""One character of each kind the two functions tell apart (helper ci77): ASCII printable,
ASCII and C1 controls (``\x9b`` is a CSI), a non-ASCII letter, an emoji, a combining mark, a
no-break space (unprintable, not Cf), both joiners, Cf characters that are not joiners (a
zero-width space, a word joiner, a BOM, the bidi overrides and isolates, a tag character),
the line and paragraph separators, a lone surrogate. (Private-use and unassigned code
points are among the characters put between each pair of them.)"""

# (every (general category, ASCII, printable) class of Unicode 15 by its first and last code
# point, and every format character: the characters checked between each pair of CORE)
_CLASS_ENDS = (
    "\x00\x7f\x80\x9f\xad\U000e007f\u0378\U0010ffff\ue000\U0010fffd\ud800\udfff\xb5"
    "\U0001e943\x61\x7a\u02b0\U0001e94b\xaa\U0003134a\u01c5\u1ffc\xc0\U0001e921\x41\x5a"
    "\u0903\U0001d172\u0488\ua672\u0300\U000e01ef\u0660\U0001fbf9\x30\x39\u16ee"
    "\U0001246e\xb2\U0001f10c\u203f\uff3f\x5f\u058a\U00010ead\x2d\u0f3b\uff63\x29\x7d"
    "\xbb\u2e21\xab\u2e20\xa1\U0001e95f\x21\x5c\u0f3a\uff62\x28\x7b\xa2\U0001ecb0\x24"
    "\xa8\U0001f3ff\x5e\x60\xac\U0001eef1\x2b\x7e\xa6\U0001fbca\u2028\u2029\xa0\u3000"
    "\x20\u0600\u061c\u0628\u0915\u4e2d\xe9\u200e\x1f\x9b\u2066\ue000\U000f0000"
)


@functools.cache
def _middle() -> tuple[str, ...]:
    cf = (chr(c) for c in range(0x110000) if unicodedata.category(chr(c)) == "Cf")
    return tuple(sorted(set(_CLASS_ENDS).union(cf)))


def short_texts() -> Iterator[str]:
    """Every text of at most four CORE characters (111,151), then every Unicode class end
    and every format character (Cf) alone, after, before and between each pair of CORE
    characters: each position a character can hold (an end, beside any kind of neighbour,
    between two) for every kind of character, which the old 3,000 random strings of up to
    40 characters sampled (helper ci77)."""
    for size in range(5):
        for chars in itertools.product(CORE, repeat=size):
            yield "".join(chars)
    for ch in _middle():
        yield ch
        for x in CORE:
            yield x + ch
            yield ch + x
            for y in CORE:
                yield x + ch + y
