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
and whose last ``*`` of a name is possessive, the fixed characters after it checked by a
look-behind (so ``*???...?b`` reads a name once instead of once per place it could start); a
name-only pattern is matched on the last name alone (not tried after every ``/`` of a deep
path); of two ``**`` the first is matched at the first depth its folders fit, atomically (the
greedy rule fnmatch uses for ``*``). With at most :data:`MAX_GLOBSTARS` ``**`` per pattern a
path is matched in O(depth x name) per pattern at worst, depth bounded by
``loaders.MAX_DIR_DEPTH`` (helper attacks76: 256 patterns of ``*`` and 120 ``[a]`` took 34 s
on one 250-folder path, each ``*`` retried after every ``/`` and every character), and the
names between two ``**`` are bounded for all patterns together (:data:`MAX_MIDDLE_NAMES`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import InvalidQueryError
from ..redaction import redact

MAX_PATTERNS = 256
"""Most patterns one call takes (a list longer than this is a list of files, not patterns)."""
MAX_PATTERN_CHARS = 512
"""Longest pattern: a relative path of a few folders and a name, with room to spare."""
MAX_GLOBSTARS = 2
"""Most ``**`` segments per pattern, a name-only pattern's implicit leading one included."""
MAX_MIDDLE_NAMES = 64
"""Most names between two ``**`` (``**/a/b/**``: two), summed over one call's patterns. Why
(helper attacks76): the first ``**`` tries those names at every depth of a path, each try
reading up to all of them; 256 patterns of 120 names took 10 s on one 250-folder path. The
sum bounds that to about 64 x depth names a path, for every pattern together."""

_UNSHOWN = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_ANY_DEPTH = "(?:[^/]*/)*"


@dataclass(frozen=True)
class Exclude:
    """Checked ``exclude`` patterns and the two expressions a walk asks: whether a folder
    (:meth:`folder`) or a file (:meth:`file`) is left out. Empty: nothing is. A name-only
    pattern is asked of the last name alone (``_file_names`` / ``_folder_names``), one with a
    ``/`` of the whole path (``_files`` / ``_folders``)."""

    patterns: tuple[str, ...] = ()
    _files: re.Pattern[str] | None = None
    _folders: re.Pattern[str] | None = None
    _file_names: re.Pattern[str] | None = None
    _folder_names: re.Pattern[str] | None = None
    _split: tuple[_Split, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def file(self, rel: str) -> bool:
        """Whether the file at relative POSIX path ``rel`` is left out by its own path (the
        folders above it were asked as the walk reached them)."""
        return _hit(self._file_names, self._files, rel) or any(
            x.hit(rel) for x in self._split if not x.folder_only
        )

    def folder(self, rel: str) -> bool:
        """Whether the folder at relative POSIX path ``rel`` (and so all below it) is left
        out."""
        return _hit(self._folder_names, self._folders, rel) or any(x.hit(rel) for x in self._split)


@dataclass(frozen=True)
class _Split:
    """A pattern whose last ``**`` is followed by two names or more (``**/api/*.html``): the
    path is cut before its last ``n`` names, ``tail`` asked of them and ``head`` (everything
    up to the last ``**``, ending in ``/``) of the rest. Why: as one expression, the ``**``
    tried the tail at every depth, each try reading up to ``n`` names (9 s for 256 such
    patterns on one 250-folder path)."""

    folder_only: bool
    head: re.Pattern[str]
    n: int
    tail: re.Pattern[str]

    def hit(self, rel: str) -> bool:
        end = len(rel)
        for _ in range(self.n - 1):
            end = rel.rfind("/", 0, end)
            if end < 0:
                return False  # (fewer names than the tail)
        start = rel.rfind("/", 0, end) + 1
        return (
            self.head.fullmatch(rel, 0, start) is not None
            and self.tail.fullmatch(rel, start) is not None
        )


def _hit(names: re.Pattern[str] | None, paths: re.Pattern[str] | None, rel: str) -> bool:
    return (names is not None and names.fullmatch(rel, rel.rfind("/") + 1) is not None) or (
        paths is not None and paths.fullmatch(rel) is not None
    )


NO_EXCLUDE = Exclude()


def check_exclude(value: object) -> Exclude:
    """``value`` (``add_resource``'s ``exclude``: None, or a list or tuple of patterns) as an
    :class:`Exclude`, or :class:`InvalidQueryError` naming what is wrong, before anything is
    opened. A lone string is refused: ``exclude="*.css"`` would otherwise be read as the
    patterns ``*``, ``.``, ``c``... The list is read once (a subclass's ``__iter__`` could
    answer other patterns a second time) and its size taken from the built-in type."""
    if value is None:
        return NO_EXCLUDE
    if not isinstance(value, (list, tuple)):
        raise InvalidQueryError(
            "exclude must be a list of glob patterns such as ['developers-reference.html', "
            f"'_static/'], got {type(value).__name__}"
        )
    size = list.__len__(value) if isinstance(value, list) else tuple.__len__(value)
    if size <= MAX_PATTERNS:
        try:
            items = tuple(value)
        except Exception as e:  # (a subclass's own __iter__)
            raise InvalidQueryError(
                f"exclude could not be read as a list ({type(e).__name__})"
            ) from None
        size = len(items)
    if size > MAX_PATTERNS:
        raise InvalidQueryError(f"exclude holds {size} patterns; at most {MAX_PATTERNS}")
    parts: dict[tuple[bool, bool], list[str]] = {}
    patterns: list[str] = []
    split: list[_Split] = []
    middle = 0
    for p in items:
        pattern, folder_only, anchored, rx, between = _translate(p)
        patterns.append(pattern)
        middle += between
        if middle > MAX_MIDDLE_NAMES:
            raise _bad(
                pattern,
                f"puts the patterns over {MAX_MIDDLE_NAMES} names between two '**' in all "
                "(each such name is tried at every depth of every path)",
            )
        if isinstance(rx, _Split):
            split.append(rx)
            continue
        parts.setdefault((True, anchored), []).append(rx)
        if not folder_only:
            parts.setdefault((False, anchored), []).append(rx)
    try:
        files, folders, file_names, folder_names = (
            re.compile("|".join(parts[key]), re.IGNORECASE) if key in parts else None
            for key in ((False, True), (True, True), (False, False), (True, False))
        )
    except (re.error, RecursionError, OverflowError):  # (each part compiled alone below)
        raise InvalidQueryError("exclude: the patterns do not compile together") from None
    return Exclude(tuple(patterns), files, folders, file_names, folder_names, tuple(split))


def _bad(p: str, why: str) -> InvalidQueryError:
    return InvalidQueryError(f"exclude: {_shown(p)} {why}")


def _shown(p: str) -> str:
    # (redacted: a registered key pasted as a pattern was echoed, helper attacks76)
    return redact(repr(_UNSHOWN.sub("?", p[:60])))


def _translate(value: object) -> tuple[str, bool, bool, str | _Split, int]:
    """One checked pattern as (the pattern, folders only, anchored, a regular expression for
    ``fullmatch``: on the whole relative path when anchored, else on the last name; or a
    :class:`_Split` when two names or more follow its last ``**``; how many names it holds
    between two ``**``)."""
    if not isinstance(value, str):
        raise InvalidQueryError(f"exclude: a pattern must be a string, got {type(value).__name__}")
    p = str.__str__(value)  # (a str subclass's own split / startswith answer nothing here)
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
    # ('**/**' is '**': two in a row would try every split of the same folders between them)
    segs = [s for k, s in enumerate(segs) if not (s == "**" and k and segs[k - 1] == "**")]
    out = ""
    stars_at = [k for k, x in enumerate(segs) if x == "**"]
    cut, last_star = 0, stars_at[-1] if stars_at else -1
    between = stars_at[1] - stars_at[0] - 1 if len(stars_at) == 2 else 0
    k = 0
    while k < len(segs):
        seg, last = segs[k], k == len(segs) - 1
        if seg != "**":
            out += _segment(seg) + ("" if last else "/")
        elif last:
            out += ".*"
        elif "**" in segs[k + 1 :]:
            # A '**' then folders then another '**': the folders at the first depth they
            # fit, kept (atomic). Any later fit only narrows what the second '**' may take,
            # so nothing is lost, and the pairs of depths are never all tried.
            nxt = segs.index("**", k + 1)
            out += "(?>" + _ANY_DEPTH + "?" + "/".join(map(_segment, segs[k + 1 : nxt]))
            out += "/)"
            k = nxt
            continue
        else:
            out += _ANY_DEPTH
        if k == last_star:
            cut = len(out)  # (where the names after the last '**' begin)
        k += 1
    try:
        re.compile(out, re.IGNORECASE)
    except (re.error, RecursionError, OverflowError):
        raise _bad(p, "is not a valid glob pattern (a range such as [z-a)?)") from None
    tail_names = len(segs) - 1 - last_star if last_star >= 0 else 0
    if tail_names >= 2:
        # (each part compiles: a cut between whole segments of the expression just compiled)
        split = _Split(
            folder_only,
            re.compile(out[:cut], re.IGNORECASE),
            tail_names,
            re.compile(out[cut:], re.IGNORECASE),
        )
        return p, folder_only, anchored, split, between
    return p, folder_only, anchored, f"(?:{out})", between


def _segment(seg: str) -> str:
    """One path segment's glob as a regular expression that never matches ``/``. Every ``*``
    but the last is an atomic lazy scan to the next fixed piece (fnmatch's own translation):
    matching the piece at its first place loses no match, and nothing is tried twice. The
    last ``*`` takes the rest of the name at once (possessive), and the fixed characters
    after it, one character each, are checked by a look-behind on the name's last ones: a
    greedy ``*`` would give back one character at a time and try them after each."""
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
    head, *middle, tail = pieces
    rest = f"[^/]{{{len(tail)}}}[^/]*+(?<={''.join(tail)})" if tail else "[^/]*+"
    return "".join(head) + "".join(f"(?>[^/]*?{''.join(m)})" for m in middle if m) + rest


def _char_class(stuff: str) -> str:
    """``[...]``'s inside (``!`` negates) as a regular-expression class without ``/``: each
    character escaped, ``x-y`` a range (fnmatch's reading: a ``-`` first, last or after a
    range is itself; ``[a--b]`` is the range ``a`` to ``-``, backwards, so refused)."""
    neg = stuff.startswith("!")
    stuff = stuff[1:] if neg else stuff
    inner: list[str] = []
    k, n = 0, len(stuff)
    while k < n:
        if k + 2 < n and stuff[k + 1] == "-":
            inner.append(f"{re.escape(stuff[k])}-{re.escape(stuff[k + 2])}")
            k += 3
        else:
            inner.append(re.escape(stuff[k]))
            k += 1
    body = "".join(inner)
    return f"[^/{body}]" if neg else f"(?!/)[{body}]"


def shown_patterns(patterns: Sequence[str]) -> str:
    """The patterns for a message, bounded."""
    return ", ".join(_shown(p) for p in patterns[:8]) + (" ..." if len(patterns) > 8 else "")
