"""``add_resource(path, exclude=[...])``: glob patterns that leave files and folders out of a
folder's walk.

Why: nothing but the suffix list (:data:`treehop.ingest.loaders.SKIP_SUFFIXES`) could leave a
file out, and a manual shipped both split and on one page (Debian's developers-reference:
``developers-reference.html`` beside its chapter pages) answered every question twice, as the
chapter's chunk and as the one-page copy's (helper usage72). LlamaIndex users know
``SimpleDirectoryReader(exclude=[...])``, LangChain users ``DirectoryLoader(exclude=...)``.

The rules (glob's, on the POSIX path relative to the folder given, **without regard to
case**, as the suffix list compares suffixes and the loaders read a file's kind: ``*.pdf``
leaves ``MANUAL.PDF`` out, ``[a-z]`` matches ``Q``). Why one rule (helper leftovers65b): a
tree copied from a case-insensitive file system (macOS's, Windows') carries ``.PDF`` /
``.HTML`` beside ``.pdf`` / ``.html``; with ``exclude`` case-sensitive, ``exclude=["*.pdf"]``
kept the one and ``skip_suffixes=[".pdf"]`` skipped both. Case-insensitive is the choice that
leaves out what the user named (the cost: two names in one folder that differ only in case
cannot be told apart by a pattern, which on Linux trees is rare). Matching is Python's
``re.IGNORECASE`` (per character, so ``?`` stays one character):

- ``*`` matches any run of characters within one name, ``?`` one character, ``[abc]`` /
  ``[!abc]`` / ``[a-z]`` one character of (not of) a set: none of them ever matches ``/``
  (``fnmatch`` rules inside one path segment, as ``glob`` applies them).
- ``**`` as a whole segment matches any number of folders, none included (``glob``'s
  ``recursive=True``, ``pathlib.PurePath.full_match``'s ``**``); ``a**b`` is ``a*b``.
- A pattern without ``/`` matches a name at any depth (``*.css``, ``developers-reference.html``),
  as ``DirectoryLoader``'s ``Path.match`` and ``SimpleDirectoryReader(recursive=True)`` do; one
  with a ``/`` matches the whole relative path from the top (``api/*.html``,
  ``**/_build/**``); a leading ``./`` anchors a name to the top (``./index.html``).
- A trailing ``/`` matches folders only (``build/``).
- A pattern that matches a folder leaves its whole subtree out: the walk does not enter it.

Each pattern is compiled to one regular expression whose ``*`` is fnmatch's atomic lazy scan
(linear in a name), with at most :data:`MAX_GLOBSTARS` ``**`` per pattern (a name-only
pattern's "any depth" counts as one): each ``**`` tries every depth, so a path is matched in
O(depth ** 2) at worst, and depth is bounded by ``loaders.MAX_DIR_DEPTH``."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import InvalidQueryError

MAX_PATTERNS = 256
"""Most patterns one call takes (a list longer than this is a list of files, not patterns)."""
MAX_PATTERN_CHARS = 512
"""Longest pattern: a relative path of a few folders and a name, with room to spare."""
MAX_GLOBSTARS = 2
"""Most ``**`` segments per pattern, a name-only pattern's implicit leading one included."""

_UNSHOWN = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_ANY_DEPTH = "(?:[^/]*/)*"


@dataclass(frozen=True)
class Exclude:
    """Checked ``exclude`` patterns and the two expressions a walk asks: whether a folder
    (:meth:`folder`) or a file (:meth:`file`) is left out. Empty: nothing is."""

    patterns: tuple[str, ...] = ()
    _files: re.Pattern[str] | None = None
    _folders: re.Pattern[str] | None = None

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def file(self, rel: str) -> bool:
        """Whether the file at relative POSIX path ``rel`` is left out by its own path (the
        folders above it were asked as the walk reached them)."""
        return self._files is not None and self._files.fullmatch(rel) is not None

    def folder(self, rel: str) -> bool:
        """Whether the folder at relative POSIX path ``rel`` (and so all below it) is left
        out."""
        return self._folders is not None and self._folders.fullmatch(rel) is not None


NO_EXCLUDE = Exclude()


def check_exclude(value: object) -> Exclude:
    """``value`` (``add_resource``'s ``exclude``: None, or a list or tuple of patterns) as an
    :class:`Exclude`, or :class:`InvalidQueryError` naming what is wrong, before anything is
    opened. A lone string is refused: ``exclude="*.css"`` would otherwise be read as the
    patterns ``*``, ``.``, ``c``..."""
    if value is None:
        return NO_EXCLUDE
    if not isinstance(value, (list, tuple)):
        raise InvalidQueryError(
            "exclude must be a list of glob patterns such as ['developers-reference.html', "
            f"'_static/'], got {type(value).__name__}"
        )
    if len(value) > MAX_PATTERNS:
        raise InvalidQueryError(f"exclude holds {len(value)} patterns; at most {MAX_PATTERNS}")
    files: list[str] = []
    folders: list[str] = []
    for p in value:
        folder_only, rx = _translate(p)
        folders.append(rx)
        if not folder_only:
            files.append(rx)
    patterns = tuple(value)
    try:
        return Exclude(
            patterns,
            re.compile("|".join(files), re.IGNORECASE) if files else None,
            re.compile("|".join(folders), re.IGNORECASE),
        )
    except (re.error, RecursionError, OverflowError):  # (each part compiled alone below)
        raise InvalidQueryError("exclude: the patterns do not compile together") from None


def _bad(p: str, why: str) -> InvalidQueryError:
    return InvalidQueryError(f"exclude: {_shown(p)} {why}")


def _shown(p: str) -> str:
    return repr(_UNSHOWN.sub("?", p[:60]))


def _translate(p: object) -> tuple[bool, str]:
    """One checked pattern as (folders only, a regular expression for ``fullmatch``)."""
    if not isinstance(p, str):
        raise InvalidQueryError(f"exclude: a pattern must be a string, got {type(p).__name__}")
    if not p or len(p) > MAX_PATTERN_CHARS:
        raise _bad(p, f"must be 1 to {MAX_PATTERN_CHARS} characters long")
    if _UNSHOWN.search(p) or any(0xD800 <= ord(c) <= 0xDFFF for c in p):
        raise _bad(p, "holds a control character or a lone surrogate (no file name does)")
    if "\\" in p:
        raise _bad(p, "holds a backslash: separate folders with '/' (match a '\\' with '?')")
    if p.startswith("/"):
        raise _bad(p, "is absolute: patterns are relative to the folder given ('./x' anchors)")
    anchored = p.startswith("./")
    body = p[2:] if anchored else p
    folder_only = body.endswith("/")
    body = body[:-1] if folder_only else body
    segs = body.split("/")
    if not body or "" in segs or "." in segs or ".." in segs:
        raise _bad(p, "has an empty, '.' or '..' segment: give a path below the folder")
    anchored = anchored or len(segs) > 1
    stars = segs.count("**") + (0 if anchored else 1)
    if stars > MAX_GLOBSTARS:
        raise _bad(p, f"has more than {MAX_GLOBSTARS} '**' (a name alone counts as one)")
    # A name alone is one segment, never holding '/': it can only match after the last '/'
    # (greedy, tried first; ~4x faster than trying every depth from the top).
    out = "" if anchored else "(?:.*/)?"
    for i, seg in enumerate(segs):
        last = i == len(segs) - 1
        if seg == "**":
            out += ".*" if last else _ANY_DEPTH
        else:
            out += _segment(seg) + ("" if last else "/")
    try:
        re.compile(out)
    except (re.error, RecursionError, OverflowError):
        raise _bad(p, "is not a valid glob pattern (a range such as [z-a)?)") from None
    return folder_only, f"(?:{out})"


def _segment(seg: str) -> str:
    """One path segment's glob as a regular expression that never matches ``/``. Every ``*``
    but the last is an atomic lazy scan to the next fixed piece (fnmatch's own translation):
    matching the piece at its first place loses no match, and nothing is tried twice."""
    pieces: list[list[str]] = [[]]
    i, n = 0, len(seg)
    while i < n:
        c = seg[i]
        i += 1
        if c == "*":
            if pieces[-1] or len(pieces) == 1:
                pieces.append([])
        elif c == "?":
            pieces[-1].append("[^/]")
        elif c == "[":
            j = i + 1 if i < n and seg[i] == "!" else i
            j = j + 1 if j < n and seg[j] == "]" else j
            while j < n and seg[j] != "]":
                j += 1
            if j >= n:
                pieces[-1].append(re.escape(c))
                continue
            pieces[-1].append(_char_class(seg[i:j]))
            i = j + 1
        else:
            pieces[-1].append(re.escape(c))
    if len(pieces) == 1:
        return "".join(pieces[0])
    head, *middle, tail = ("".join(x) for x in pieces)
    return head + "".join(f"(?>[^/]*?{m})" for m in middle if m) + "[^/]*" + tail


def _char_class(stuff: str) -> str:
    """``[...]``'s inside (``!`` negates) as a regular-expression class without ``/``."""
    neg = stuff.startswith("!")
    stuff = stuff[1:] if neg else stuff
    last = len(stuff) - 1
    inner = "".join("-" if c == "-" and 0 < k < last else re.escape(c) for k, c in enumerate(stuff))
    return f"[^/{inner}]" if neg else f"(?!/)[{inner}]"


def shown_patterns(patterns: Sequence[str]) -> str:
    """The patterns for a message, bounded."""
    return ", ".join(_shown(p) for p in patterns[:8]) + (" ..." if len(patterns) > 8 else "")
