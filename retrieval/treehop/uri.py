"""URI rules for the ``viking://`` tree.

Three context types live under fixed roots. ``~`` stands for the current user's space and is
resolved to ``viking://user/<name>/...`` so that stored URIs are unambiguous across users. A URI
may never climb out of its root or into another user's space: ``..`` segments (plain or
percent-encoded), empty segments, backslashes and absolute filesystem paths are rejected.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from urllib.parse import unquote

from .errors import InvalidURIError
from .models import ContextType
from .redaction import redact
from .validation import has_invisible_format

SCHEME = "viking://"
RESOURCES_ROOT = "viking://resources"
MEMORIES_ROOT = "viking://~/memories"
SKILLS_ROOT = "viking://~/skills"
USER_SPACE_PREFIX = "viking://user/"
CHUNK_MARK = "#chunk-"

_USER_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")
_FORBIDDEN_CHARS = re.compile(r"[\x00-\x1f\x7f\\]")
MAX_URI_LENGTH = 2048
MAX_URI_DEPTH = 256
"""The most path segments a URI may have (``viking://resources/a/b`` has 3). Why a limit:
a tree is walked level by level (its directory summaries bottom-up, each node's ancestors),
and a 1,000-level directory ran those walks into Python's recursion limit; 256 levels is
far beyond any real tree and well inside it (``add_resource`` checks the depth of what it
would write before writing: :data:`treehop.ingest.loaders.MAX_DIR_DEPTH`)."""


_UNSHOWN = re.compile(r"[\x80-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
"""C1 controls (``\x9b`` is a terminal's CSI), the line and paragraph separators (U+2028 /
U+2029: a line break inside one URI in ``treehop ls``, a log line or a JSON-lines reader) and
the bidirectional embeddings, overrides and isolates: characters that make a URI show as
another one (``\u202edm.exe.md``)."""


def unshown_in_new(text: str) -> str | None:
    """What a new URI or a file's name (its segment to be) may not hold, named; ``None`` when
    ``text`` is fine: an :data:`_UNSHOWN` character, or an invisible format character inside
    visible text (zero-width space, word joiner, BOM, soft hyphen, LRM...; a joiner kept
    between two non-ASCII characters: :func:`~treehop.validation.has_invisible_format`, the
    rule of new tags). Linear in ``text``; nothing to scan for ASCII text."""
    if text.isascii():
        return None
    if _UNSHOWN.search(text):
        return "a C1 control, line / paragraph separator or bidirectional formatting character"
    if has_invisible_format(text):
        return (
            "an invisible format character (zero-width space, joiner, BOM, soft hyphen...): "
            "it would look like another URI"
        )
    return None


def _shown(uri: str) -> str:
    """A URI as an error quotes it: its repr, redacted (:func:`~treehop.redaction.redact`).

    Why (helper attacks85): an error quoted the caller's URI whole, and a URI given where a
    ``viking://`` one belongs is often a web address that carries credentials
    (``https://bob:<token>@host/...``, ``?api_key=...``, a label in ``treehop eval``'s file,
    a ``target_uri`` pasted from a browser): the token reached the exception, ``treehop``'s
    stderr and an MCP tool's answer. The URI is at most :data:`MAX_URI_LENGTH` characters
    here (checked first), and :func:`redact` is linear."""
    return redact(repr(uri))


def check_new(uri: str) -> str:
    """``uri`` (resolved) for a node about to be *written*: :func:`normalize` also refuses
    here what :func:`unshown_in_new` names, as ingest skips a file name holding one. Every
    writer that makes a URI up calls it before its first write: an add's target
    (``AsyncTreehop._target_for``), ``add_records``' placements, a ``PassageStore`` write.

    Why not in :func:`normalize`: every read (``read``, ``ls``, ``stat``, ``remove``, a
    find's ``target_uri``) resolves its URI through it, and a node stored before this check
    (or written by another program) must stay readable and removable by its own URI."""
    why = unshown_in_new(uri)
    if why is not None:
        shown = uri.encode("unicode_escape").decode("ascii")
        raise InvalidURIError(f"URI {_shown(shown[:200])} contains {why}")
    return uri


def validate_user(user: str) -> str:
    """Return ``user`` if it is a valid user name (letters, digits, ``_.-``; at most 64)."""
    if not isinstance(user, str) or not _USER_RE.match(user):
        raise InvalidURIError(
            f"invalid user name {user!r:.100}: use 1-64 letters, digits, '_', '.' or '-'"
        )
    return user


def user_root(user: str) -> str:
    """The stored prefix of ``user``'s private space."""
    return f"{USER_SPACE_PREFIX}{validate_user(user)}"


def root_for(context_type: ContextType, user: str) -> str:
    """The resolved root directory of a context type for ``user``."""
    if context_type is ContextType.RESOURCE:
        return RESOURCES_ROOT
    base = user_root(user)
    return f"{base}/memories" if context_type is ContextType.MEMORY else f"{base}/skills"


def display_root(context_type: ContextType) -> str:
    """The root as users write it (with ``~``)."""
    return {
        ContextType.RESOURCE: RESOURCES_ROOT,
        ContextType.MEMORY: MEMORIES_ROOT,
        ContextType.SKILL: SKILLS_ROOT,
    }[context_type]


def normalize(uri: str, user: str) -> str:
    """Validate ``uri`` and resolve ``~`` to ``user``'s space.

    Accepts ``viking://resources/...``, ``viking://~/memories/...``, ``viking://~/skills/...``
    and the resolved ``viking://user/<user>/...`` form of the caller's own space. Trailing
    slashes are dropped so that ``viking://resources/`` and ``viking://resources`` are one node.

    A valid pair's answer is kept (a pure function of two strings): a find resolves its
    target URIs again with every query, and the checks (a regex, a surrogate scan, a double
    unquote per segment) were ~10 us of each. An invalid one raises every time.
    """
    if type(uri) is str and type(user) is str:
        return _normalized(uri, user)
    return _normalize(uri, user)


def _normalize(uri: str, user: str) -> str:
    """:func:`normalize`, checked from scratch."""
    if not isinstance(uri, str):
        # (named: "must be a non-empty string" for th.read(Path(...)) sent a reader looking
        # for an empty value)
        raise InvalidURIError(f"URI must be a string, got {type(uri).__name__}")
    if not uri:
        raise InvalidURIError("URI must be a non-empty string")
    if len(uri) > MAX_URI_LENGTH:
        raise InvalidURIError(f"URI longer than {MAX_URI_LENGTH} characters")
    if not uri.startswith(SCHEME):
        raise InvalidURIError(f"URI {_shown(uri)} must start with {SCHEME!r}")
    if any("\ud800" <= ch <= "\udfff" for ch in uri):
        raise InvalidURIError("URI contains a lone surrogate (not valid Unicode text)")
    if _FORBIDDEN_CHARS.search(uri):
        raise InvalidURIError(f"URI {_shown(uri)} contains control characters or backslashes")
    body = uri[len(SCHEME) :].rstrip("/")
    fragment = ""
    if CHUNK_MARK[:1] in body:
        body, _, frag = body.partition("#")
        fragment = "#" + frag
        if not re.fullmatch(r"#chunk-\d{1,6}", fragment):
            raise InvalidURIError(
                f"URI {_shown(uri)} has an invalid fragment {_shown(fragment)}; a '#' in a file or "
                f"folder name is written %23 in a URI, as ls / tree show it: "
                f"{_shown(uri.replace('#', '%23'))}"
            )
    segments = body.split("/")
    if len(segments) > MAX_URI_DEPTH:
        raise InvalidURIError(
            f"URI has {len(segments)} path segments; the limit is {MAX_URI_DEPTH} (MAX_URI_DEPTH)"
        )
    for seg in segments:
        if seg == "" and body != "":
            raise InvalidURIError(f"URI {_shown(uri)} has an empty path segment")
        if name_leaves_root(unquote(seg)):
            raise InvalidURIError(f"URI {_shown(uri)} tries to leave its root ({seg!r})")
    validate_user(user)
    head = segments[0]
    if head == "resources":
        resolved = SCHEME + body
    elif head == "~":
        if len(segments) < 2 or segments[1] not in {"memories", "skills"}:
            raise InvalidURIError(
                f"URI {_shown(uri)}: the user space holds only 'memories' and 'skills'"
            )
        resolved = user_root(user) + "/" + "/".join(segments[1:])
    elif head == "user":
        if len(segments) < 2 or segments[1] != user:
            raise InvalidURIError(f"URI {_shown(uri)} reaches into another user's space")
        if len(segments) > 2 and segments[2] not in {"memories", "skills"}:
            raise InvalidURIError(
                f"URI {_shown(uri)}: the user space holds only 'memories' and 'skills'"
            )
        resolved = SCHEME + body
    else:
        raise InvalidURIError(
            f"URI {_shown(uri)} is outside the known roots "
            f"({RESOURCES_ROOT}, {MEMORIES_ROOT}, {SKILLS_ROOT})"
        )
    return resolved + fragment


_RAW_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")


def as_stored_names(uri: str) -> str:
    """``uri`` with a ``%`` that starts no escape and every ``?`` written as a folder's walk
    writes them in a node's name (``%25``, ``%3F``); the chunk mark is kept.

    Why (helper usage80): a file named ``100%.txt`` or ``what?.txt`` is stored as
    ``100%25.txt`` / ``what%3F.txt``, and ``read`` / ``ls`` / ``rm`` of the name as typed
    from the disk answered "no node at ..." with nothing about the escaping. Used only to
    name the node meant in that error, never to resolve a URI: a node written through
    another path (a memory, a ``target_uri`` given whole) may hold those characters raw."""
    body, mark, frag = uri.partition(CHUNK_MARK)
    return (
        _RAW_PERCENT.sub("%25", body[len(SCHEME) :]).replace("?", "%3F").join((SCHEME, mark + frag))
    )


def name_leaves_root(name: str) -> bool:
    """Whether ``name`` (a segment decoded once: a file's name, as ingest escapes it, every
    ``%`` and ``\\`` percent-encoded) is refused by :func:`normalize`: decoded (again) it is
    ``.`` / ``..`` or holds a ``/`` or ``\\``.

    Why a function: a folder's file named ``x%2Fy.md`` or ``a\\b.md`` was indexed as
    ``x%252Fy.md`` / ``a%5Cb.md``, which every read (``read``, ``ls``, ``remove``, a
    find's ``target_uri``) then refused: found, never opened or removed. The walk skips
    such a name by this same rule."""
    decoded = unquote(name) if "%" in name else name
    return decoded in {".", ".."} or "/" in decoded or "\\" in decoded


_normalized = functools.lru_cache(maxsize=1024)(_normalize)
"""The answers :func:`normalize` keeps (a find's targets, the few URIs a client reads)."""


def context_type_of(uri: str) -> ContextType:
    """The context type a resolved URI belongs to."""
    if uri.startswith(RESOURCES_ROOT):
        return ContextType.RESOURCE
    if uri.startswith(USER_SPACE_PREFIX):
        parts = uri[len(USER_SPACE_PREFIX) :].split("/")
        if len(parts) >= 2 and parts[1].split("#")[0] == "memories":
            return ContextType.MEMORY
        if len(parts) >= 2 and parts[1].split("#")[0] == "skills":
            return ContextType.SKILL
    raise InvalidURIError(f"URI {_shown(uri)} belongs to no context type")


def segment_count(uri: str) -> int:
    """The path segments of a resolved URI (``viking://resources/a/b``: 3; a chunk's
    ``#chunk-N`` adds none): what :data:`MAX_URI_DEPTH` bounds, for a writer that checks
    URIs it built itself rather than ones a caller passed (:func:`normalize` checks those)."""
    return uri.count("/") - 1


def parent_of(uri: str) -> str | None:
    """The parent URI of a resolved URI (``None`` for a context-type root)."""
    if CHUNK_MARK in uri:
        return uri.split("#", 1)[0]
    body = uri[len(SCHEME) :]
    if body in {"resources"} or (body.startswith("user/") and body.count("/") <= 2):
        return None
    return SCHEME + body.rsplit("/", 1)[0]


def ancestors_of(uri: str) -> list[str]:
    """All ancestors of a resolved URI, nearest last (root first)."""
    out: list[str] = []
    cur = parent_of(uri)
    while cur is not None:
        out.append(cur)
        cur = parent_of(cur)
    out.reverse()
    return out


def is_within(uri: str, scope: str) -> bool:
    """True when ``uri`` is ``scope`` itself or one of its descendants."""
    return uri == scope or uri.startswith(child_prefixes(scope))


def within_any(uri: str, scopes: Iterable[str]) -> bool:
    """True when ``uri`` is within one of ``scopes`` (:func:`is_within`)."""
    return any(is_within(uri, s) for s in scopes)


def child_prefixes(scope: str) -> tuple[str, str]:
    """What every descendant of ``scope`` starts with (a child path or a fragment): the
    prefixes a caller testing many URIs against one scope makes once."""
    return scope + "/", scope + "#"


def uri_prefixes(uri: str) -> list[str]:
    """Every proper prefix of ``uri`` that ends before a ``/`` or ``#`` (scheme parts skipped).

    These are exactly the scopes that contain ``uri`` under :func:`is_within`, so a store that
    keeps them in a list field answers "inside subtree X" with one any-of match on X.
    """
    out: list[str] = []
    for i, ch in enumerate(uri):
        if ch in "/#" and i > 0:
            p = uri[:i]
            if not (p.endswith(":") or p.endswith(":/")):
                out.append(p)
    return out


def join(parent: str, name: str) -> str:
    """Append one path segment, refusing names that would escape."""
    if not name or name in {".", ".."} or "/" in name or "\\" in name or "#" in name:
        raise InvalidURIError(f"invalid path segment {name!r}")
    return f"{parent}/{name}"


def shown_root(uri: str, user: str) -> str | None:
    """``uri`` as users write it (``viking://~/memories``) when it names a context-type root,
    else ``None`` (an invalid URI too: the caller's own call reports it).

    Why: a root exists before anything is stored under it, but the store holds no node for it
    until a first write, so ``ls`` / ``tree`` of ``viking://resources`` on an index of
    memories only (or a new one) failed with "no node at viking://resources" and a hint to
    run that same command. The command line and the MCP server list such a root as empty."""
    try:
        resolved = normalize(uri, user)
    except InvalidURIError:
        return None
    if resolved not in {root_for(ct, user) for ct in ContextType}:
        return None
    return to_display(resolved, user)


def to_display(uri: str, user: str) -> str:
    """Turn a resolved URI of ``user``'s own space back into the ``~`` form."""
    return display_under(uri, user_root(user))


def display_under(uri: str, prefix: str) -> str:
    """:func:`to_display` given the user's :func:`user_root` (a client keeps it: a find
    shows ~20 URIs, and validating the user name for each cost a tenth of its own time)."""
    if uri.startswith(prefix + "/"):
        return "viking://~" + uri[len(prefix) :]
    return uri
