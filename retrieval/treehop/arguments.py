"""Whole-call argument checks for the client's public methods, run before any work or write.

Why a separate module: every public entry point must fail with a typed
:class:`~treehop.errors.TreehopError` on bad input -- never a ``ValueError`` from an enum, a
``TypeError`` from ``list(5)`` or a ``RecursionError`` from a deep structure -- and a write must
be refused *before* its first node is touched, so that one bad value cannot half-write a
tree and poison the client. The checks live here, called from :mod:`treehop.client`, so that
the client's methods stay readable and the rules are tested in one place.

Text rules shared by URIs, names, metadata and texts: a lone surrogate (``"\\ud800"``, what
Python makes of undecodable bytes) is not Unicode text -- it cannot be written as UTF-8, so
it would fail at save time, after the index was changed -- and is rejected up front. NUL and
other C0 control characters are rejected in URIs and names (they make nodes that cannot be
addressed again) but allowed in document text.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable, Mapping, Sequence, Set
from pathlib import Path
from typing import Any

import numpy as np

from ._plugins import call
from .errors import (
    EmbeddingError,
    InvalidQueryError,
    InvalidURIError,
    LLMError,
    RerankError,
    StoreError,
    TreehopError,
)
from .ingest.loaders import check_text_size as ingest_size_check
from .models import ContextType, RetrievalMode
from .redaction import listed
from .validation import integral, shown_value

MAX_NAME_CHARS = 255
MAX_TARGETS = 100
MAX_TREE_DEPTH = 64
MAX_METADATA_BYTES = 64_000
MAX_METADATA_DEPTH = 16

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")
_FILE_EXT = re.compile(r"\.[A-Za-z0-9]{1,8}$")


def has_lone_surrogate(text: str) -> bool:
    """True when ``text`` holds a code point that UTF-8 cannot encode."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def shown(text: str, limit: int = 80) -> str:
    """A printable, bounded rendering of user input for error messages."""
    safe = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return repr(safe[:limit] + ("…" if len(safe) > limit else ""))


def check_text_value(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise InvalidQueryError(f"{what} must be a string, got {type(value).__name__}")
    if has_lone_surrogate(value):
        raise InvalidQueryError(f"{what} contains a lone surrogate (not valid Unicode text)")
    return value


def check_uri_arg(value: object, what: str = "URI") -> str:
    """A URI argument's type and characters (the URI grammar is :func:`treehop.uri.normalize`)."""
    if not isinstance(value, str):
        raise InvalidURIError(f"{what} must be a string, got {type(value).__name__}")
    if has_lone_surrogate(value):
        raise InvalidURIError(f"{what} contains a lone surrogate (not valid Unicode text)")
    if _CONTROL.search(value):
        raise InvalidURIError(f"{what} {shown(value)} contains a NUL or control character")
    return value


def check_target_uris(value: object) -> list[str]:
    """``target_uri``: one URI string or a list/tuple of them (``None``: no targets)."""
    if value is None:
        return []
    if isinstance(value, str):
        return [check_uri_arg(value, "target_uri")]
    if isinstance(value, (Mapping, bytes, bytearray)) or not isinstance(value, Sequence):
        raise InvalidURIError(
            f"target_uri must be a URI string or a list of them, got {type(value).__name__}"
        )
    if not value:
        raise InvalidURIError("target_uri is an empty list; pass None to search every root")
    if len(value) > MAX_TARGETS:
        raise InvalidURIError(f"target_uri has {len(value)} URIs; the limit is {MAX_TARGETS}")
    return [check_uri_arg(v, "target_uri") for v in value]


def check_uri_list(value: object, what: str) -> list[str]:
    """A URI string or a list, tuple or set of them, which may be empty (``exclude_uris``). Why: it
    was read with ``list(value)``, so ``exclude_uris=1`` raised ``TypeError`` and a bytes
    string became a list of ints."""
    if isinstance(value, str):
        return [check_uri_arg(value, what)]
    if isinstance(value, (Mapping, bytes, bytearray)) or not isinstance(value, Sequence | Set):
        raise InvalidURIError(
            f"{what} must be a URI string or a list of them, got {type(value).__name__}"
        )
    return [check_uri_arg(v, what) for v in value]


def check_context_type(value: object, what: str = "context_type") -> ContextType | None:
    if value is None:
        return None
    if isinstance(value, ContextType):
        return value
    if isinstance(value, str):
        try:
            return ContextType(value)
        except ValueError:
            pass
    choices = ", ".join(c.value for c in ContextType)
    raise InvalidQueryError(f"unknown {what} {_short(value)}; expected one of {choices}")


def check_context_types(value: object) -> list[ContextType] | None:
    if value is None:
        return None
    if isinstance(value, (str, ContextType)):
        return [check_context_type(value, "context_types")]  # type: ignore[list-item]
    if isinstance(value, (Mapping, bytes, bytearray)) or not isinstance(value, Sequence):
        raise InvalidQueryError(
            f"context_types must be a list of context types, got {type(value).__name__}"
        )
    if not value:
        raise InvalidQueryError("context_types is an empty list; pass None for every type")
    out = [check_context_type(v, "context_types") for v in value]
    return [c for c in out if c is not None]


def check_mode(value: object) -> RetrievalMode:
    if isinstance(value, RetrievalMode):
        return value
    if isinstance(value, str):
        try:
            return RetrievalMode(value)
        except ValueError:
            pass
    choices = ", ".join(m.value for m in RetrievalMode)
    raise InvalidQueryError(f"unknown mode {_short(value)}; expected one of {choices}")


def check_bool(value: object, what: str) -> bool:
    if not isinstance(value, bool):
        raise InvalidQueryError(f"{what} must be True or False, got {_short(value)}")
    return value


def check_depth(value: object) -> int:
    n = integral(value)
    if n is None:
        raise InvalidQueryError(f"depth must be an integer, got {_short(value)}")
    if not 0 <= n <= MAX_TREE_DEPTH:
        raise InvalidQueryError(f"depth must be in 0..{MAX_TREE_DEPTH}, got {_short(value)}")
    return n


def check_session_id(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidQueryError(f"session_id must be a string, got {type(value).__name__}")
    return value


def check_name(value: object) -> str | None:
    """A node name given by the caller: one path segment's worth of printable text."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidURIError(f"name must be a string, got {type(value).__name__}")
    if not value.strip():
        raise InvalidURIError("name must not be empty")
    if len(value) > MAX_NAME_CHARS:
        raise InvalidURIError(f"name is {len(value)} characters; the limit is {MAX_NAME_CHARS}")
    if has_lone_surrogate(value):
        raise InvalidURIError("name contains a lone surrogate (not valid Unicode text)")
    if _CONTROL.search(value):
        raise InvalidURIError(f"name {shown(value)} contains a NUL or control character")
    return value


_JSON_SCALARS = frozenset({int, float, bool, type(None)})


def json_bytes_problem(value: object, limit: int) -> str | None:
    """Why ``value`` cannot be metadata of at most ``limit`` bytes as JSON, found by a walk
    that stops as soon as it knows: ``"is larger than <limit> bytes as JSON"``, ``"holds
    itself (a cycle)"``, ``"could not be read (<Type> raised ...)"``; ``None`` when the walk
    finds none of these (the other checks still run).

    The walk counts a lower bound of the JSON text (each value at least a byte, a string its
    characters and quotes, a key its characters, quotes and colon, a container its brackets
    and commas), so it visits at most about ``limit`` values, whatever the value's size. Why
    (helper attacks78): metadata holding one list ten times, each holding one list ten times,
    seven levels deep (70 references) is 10**7 values as JSON; ``json.dumps``, the checks
    after it and ``plain_metadata``'s walk each wrote or walked all of them: 76-91 s for one
    document before "larger than 64000 bytes", and a few levels more ran for hours. A cycle
    is named as one (it was Python's raw ``ValueError`` out of ``stable_id``), and a mapping
    or list whose own methods raise is refused, not let through as its own exception.

    A numpy array (which :func:`treehop.integration_kit.plain_metadata` stores as its lists)
    counts by its size, and an object array's items are walked as a list's. Why (helper
    attacks79): an array counted as one value, so ``np.zeros(10**7)`` passed the bound and
    was turned into 10**7 Python floats (3.9 s, 600 MB) before the core refused it, and an
    object array holding the shared list above was walked path by path again (31 s)."""
    left = limit
    reading = _TEXT_ARRAY_READ * limit  # (the bytes of numpy text arrays read for lengths)
    active: set[int] = set()
    stack: list[tuple[Any, int | None]] = [(value, None)]
    try:
        while stack:
            item, leaving = stack.pop()
            if leaving is not None:
                active.discard(leaving)
                continue
            kind = type(item)
            if kind in _JSON_SCALARS:  # (the common values first: no ABC check)
                left -= 1
            elif kind is str or isinstance(item, str):
                left -= len(item) + 2
            elif kind is dict or kind is list or isinstance(item, Mapping | list | tuple):
                if id(item) in active:
                    return "holds itself (a cycle)"
                left -= len(item) + 1  # (brackets and commas)
                if left < 0:
                    break
                active.add(id(item))
                stack.append((item, id(item)))
                if isinstance(item, Mapping):
                    for key, element in item.items():  # (a key: its text, quotes, colon)
                        left -= len(key) + 3 if isinstance(key, str) else 3
                        if left < 0:
                            # (a caller's mapping whose ``len()`` lies was read for as long
                            # as it yielded: stopped at the bound; helper leftovers71d)
                            break
                        stack.append((element, None))
                    if left < 0:
                        break
                else:
                    stack.extend((element, None) for element in item)
            elif isinstance(item, np.ndarray):
                # (counted by its shape, never converted: its lists' brackets and commas,
                # each number at least a byte, each text item its characters and quotes; a
                # 0-d array is its one item. An object array's items are walked as a list's)
                objects = item.dtype.kind == "O"
                left -= _array_json_floor(item, left)
                if left < 0:
                    break
                if item.dtype.kind == "U":  # (its lengths read over each padded item)
                    reading -= item.size * item.itemsize
                    if reading < 0:
                        return (
                            f"holds numpy text arrays of more than {_TEXT_ARRAY_READ * limit} "
                            f"bytes to read (items up to {item.itemsize // 4} characters wide "
                            "in their padded form): store their items as lists"
                        )
                    left -= int(np.char.str_len(item).sum()) + item.size
                    if left < 0:
                        break
                if objects and item.size:
                    if id(item) in active:
                        return "holds itself (a cycle)"
                    active.add(id(item))
                    stack.append((item, id(item)))
                    stack.extend((element, None) for element in item.flat)
            else:
                left -= 1
            if left < 0:
                break
    except Exception as exc:  # (a caller's mapping or list whose own methods raise)
        return f"could not be read ({type(exc).__name__} raised)"
    return f"is larger than {limit} bytes as JSON" if left < 0 else None


# A numpy text array's items are read (their lengths, then ``tolist()``'s strings) over each
# item's whole padded width: at most this many times the bound's bytes of them are read.
_TEXT_ARRAY_READ = 16


def _array_json_floor(item: np.ndarray[Any, Any], left: int) -> int:
    """A lower bound of ``item``'s JSON bytes as :func:`json_bytes_problem` counts it (more
    than ``left`` where it stops early; an object array's items are left to the walk).

    Its nested lists (``1 + d0 + d0*d1 + ...`` of them) exactly: two brackets each and a
    comma between any two children; each number at least a byte, each text item its
    characters and two quotes (those the caller adds). Why (helper attacks80): the brackets
    were counted for the outer list only and a text item as a byte, so ``np.empty((10**7,
    0))`` (no item, no memory) counted one byte and ``tolist()`` made ten million lists
    (51 s, 640 MB), and a 100 kB string broadcast to 1,000 items (one string's memory)
    counted 2 kB and became 100 MB of Python strings, before the core refused either."""
    marks, lists = 0, 1
    for width in map(int, item.shape):
        children = lists * width
        marks += 2 * lists + max(children - lists, 0)  # (a level's brackets and commas)
        lists = children
        if marks > left:
            return marks
    return marks if item.dtype.kind == "O" else marks + int(item.size)  # (a 0-d array: 1)


def check_metadata(value: object) -> dict[str, Any] | None:
    """Metadata merged into every written node: a JSON object of bounded size and depth.

    It must survive the store's JSON round trip unchanged, so non-string keys, NaN/infinity,
    sets, bytes, arbitrary objects and lone surrogates are refused here rather than at save.
    Numpy scalars (``np.bool_``, an integer, ``np.float16`` / ``float32`` / ``float64``,
    ``np.str_``) are taken as the Python value they equal exactly and stored as it.

    Why (helper leftovers69b; stop 68's open item): ``metadata={"n": np.int64(3)}`` was
    refused ("int64 is not JSON-serialisable") while the integrations stored it as ``3``
    (``integration_kit.plain_metadata``) and the core's filters take numpy values as the
    Python ones (``filters._python_conds``); an ``np.float64`` (a float subclass) was kept
    as numpy in the node an in-memory store returned. An ``np.longdouble`` (more digits than
    a float holds) and numpy arrays stay refused, naming their type: a long double has no
    exact JSON number, and an array is the integrations' conversion to lists.
    """
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise InvalidQueryError(f"metadata must be a mapping, got {type(value).__name__}")
    problem = json_bytes_problem(value, MAX_METADATA_BYTES)
    if problem is not None:
        raise InvalidQueryError(f"metadata {problem}")
    plain = _check_json(value, "metadata", 0)
    try:
        blob = json.dumps(dict(plain), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:  # pragma: no cover - _check_json
        raise InvalidQueryError(f"metadata is not JSON-serialisable: {exc}") from None
    if len(blob.encode("utf-8")) > MAX_METADATA_BYTES:
        raise InvalidQueryError(f"metadata is larger than {MAX_METADATA_BYTES} bytes as JSON")
    return dict(plain)


PLAIN_NUMBERS: tuple[type, ...] = (np.bool_, np.integer, np.float16, np.float32, np.float64)
"""The numpy scalars that metadata takes as the Python value they equal exactly
(``.item()``: a ``bool``, an ``int``, a ``float``): the core's :func:`check_metadata` and the
integrations' ``integration_kit.plain_metadata`` read the same list. An ``np.longdouble``
(more digits than a float) is not one of them."""


def _plain_scalar(value: object) -> object:
    """A numpy scalar of :data:`PLAIN_NUMBERS` as the Python value it equals exactly (a bool
    stays a bool, never ``1``), an ``np.str_`` as its ``str``; anything else as given."""
    if isinstance(value, np.generic) and isinstance(value, PLAIN_NUMBERS):
        return value.item()
    if isinstance(value, np.str_):
        return str(value)
    return value


def _check_json(value: object, where: str, depth: int) -> Any:
    """``value`` checked as a JSON value, with its numpy scalars made Python ones
    (:func:`_plain_scalar`); a container is copied only when something in it changed."""
    if depth > MAX_METADATA_DEPTH:
        raise InvalidQueryError(f"{where}: nested deeper than {MAX_METADATA_DEPTH} levels")
    value = _plain_scalar(value)
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        if int.bit_length(value) > 63:  # (int's own: a subclass's may say 1; helper attacks82)
            raise InvalidQueryError(f"{where}: integer outside the 64-bit range")
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidQueryError(f"{where}: {value!r} is not a JSON number")
        return value
    if isinstance(value, str):
        if has_lone_surrogate(value):
            raise InvalidQueryError(f"{where}: a string contains a lone surrogate")
        return value
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        changed = False
        for k, v in value.items():
            if not isinstance(k, str):
                raise InvalidQueryError(f"{where}: keys must be strings, got {type(k).__name__}")
            if has_lone_surrogate(k):
                raise InvalidQueryError(f"{where}: a key contains a lone surrogate")
            out[k] = got = _check_json(v, f"{where}.{k[:40]}", depth + 1)
            changed = changed or got is not v
        return out if changed else value
    if isinstance(value, (list, tuple)):
        items = [_check_json(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value)]
        if all(a is b for a, b in zip(items, value, strict=True)):
            return value
        return type(value)(items) if type(value) in (list, tuple) else items
    raise InvalidQueryError(f"{where}: {type(value).__name__} is not JSON-serialisable")


def check_is_text(value: object) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    raise InvalidQueryError(f"is_text must be True, False or None, got {_short(value)}")


def check_progress(value: object) -> None:
    if value is not None and not callable(value):
        raise InvalidQueryError("progress must be a callable (stage, done, total) or None")


def looks_like_path(text: str) -> bool:
    """Whether a string that names nothing on disk was probably meant as a path.

    A one-line string that starts like a path (``./``, ``../``, ``/``, ``~/``, ``C:\\``) or
    has no whitespace and a separator or a file extension. ``add_resource("./missing")`` is
    then an error (a typo must not index the path string as a document); texts that look
    like paths are added with ``is_text=True``.
    """
    if "\n" in text or len(text) > 4096:
        return False
    s = text.strip()
    if s.startswith(("./", "../", "/", "~/", "~", ".\\", "..\\")) or _DRIVE.match(s):
        return True
    if any(ch.isspace() for ch in s):
        return False
    return "/" in s or "\\" in s or bool(_FILE_EXT.search(s))


def check_path_or_text(value: object) -> str | os.PathLike[str]:
    if isinstance(value, os.PathLike):
        path = os.fspath(value)
        if not isinstance(path, str):
            raise InvalidQueryError("path_or_text must be a str path, not bytes")
        return value
    if not isinstance(value, str):
        raise InvalidQueryError(
            f"path_or_text must be a path or a string, got {type(value).__name__}"
        )
    return value


def check_text_size(text: str) -> str:
    """A text for ``add_resource(is_text=True)``: within the one ingest size limit (the same
    cap as a file, :data:`treehop.ingest.loaders.MAX_FILE_BYTES`) and free of lone surrogates
    and NULs."""
    ingest_size_check(text, "the text")
    return check_text_value(text, "text")


def path_name(path: Path) -> str:
    """A path's last component as a node name; undecodable bytes are an error, not a crash."""
    name = path.name or path.resolve().name
    if has_lone_surrogate(name):
        raise InvalidURIError(
            f"the name of {shown(str(path))} is not valid UTF-8; pass name= to choose one"
        )
    return name


def _short(value: object) -> str:
    """A caller's value in a choice's error, 60 characters at most: built only as far as it is
    shown (:func:`treehop.validation.shown_value`; a whole ``repr`` of a 5M-item list took a
    second, that of a 5,000-digit integer raised ValueError)."""
    return shown_value(value, 60)


def check_keywords(owner: str, given: Set[str], accepted: Sequence[str]) -> None:
    """Unknown constructor keywords as a typed error that names the accepted ones.

    Why not Python's own ``TypeError``: every other bad constructor argument is an
    ``InvalidQueryError`` (so is an unknown LangChain search keyword), a caller guarding a
    client's construction with ``except TreehopError`` expects a misspelt keyword to be one
    too, and ``Treehop`` forwards its keywords, so Python's message named ``AsyncTreehop``.
    Names are shown through :func:`shown` (a hostile ``**kwargs`` key may be long).
    """
    unknown = [k for k in given if k not in accepted]
    if unknown:
        raise InvalidQueryError(
            f"{owner}() got unknown keyword argument(s) {listed(unknown)}; "
            f"it takes {', '.join(accepted)}"
        )


def check_plugin(
    name: str, value: object, proto: type, error: Callable[[str], TreehopError]
) -> None:
    """``value`` (a client's plug-in, or ``None``) implements ``proto``, else an
    :class:`~treehop.errors.InvalidQueryError` naming ``name``."""
    if value is not None and not call(f"the {name}", error, isinstance, value, proto):
        raise InvalidQueryError(
            f"{name} must implement treehop's {proto.__name__} protocol, got {type(value).__name__}"
        )


def check_client_args(
    *,
    path: object,
    user: object,
    embedder: object,
    store: object,
    reranker: object,
    config: object,
    llm: object,
    query_planner: object,
    tagger: object,
    intent_timeout_s: object,
    chunk_chars: object,
    retag_all_below: object,
    commit_files: object = 100,
    commit_seconds: object = 20.0,
    max_file_bytes: object = 5_000_000,
) -> None:
    """The constructor's arguments, checked before anything is opened or started.

    Imports are local: this module is imported by the client, and the protocols below import
    heavier modules (numpy, pydantic models) that need not load for the other checks.
    """
    from .config import RetrievalConfig
    from .embedders.base import Embedder
    from .llm.base import LLM
    from .rerankers.base import Reranker
    from .stores.base import VectorStore
    from .tagging.keywords import TaggerError

    if path is not None:
        if not isinstance(path, (str, os.PathLike)):
            raise InvalidQueryError(f"path must be a str or a path, got {type(path).__name__}")
        text = os.fspath(path)
        if not isinstance(text, str):
            raise InvalidQueryError("path must be a str path, not bytes")
        if "\x00" in text or has_lone_surrogate(text) or not text:
            raise InvalidQueryError(f"path {shown(text)} is empty or not a valid file name")
    if not isinstance(user, str):
        raise InvalidURIError(f"user must be a string, got {type(user).__name__}")
    for name, value, proto, error in (
        ("embedder", embedder, Embedder, EmbeddingError),
        ("store", store, VectorStore, StoreError),
        ("reranker", reranker, Reranker, RerankError),
        ("llm", llm, LLM, LLMError),
        ("query_planner", query_planner, LLM, LLMError),
    ):
        # (the protocol check reads each member with ``hasattr``, which lets anything but an
        # ``AttributeError`` through: a property of the caller's object that raises becomes
        # that plug-in's typed error, as its later calls' failures do)
        check_plugin(name, value, proto, error)
    if config is not None and not isinstance(config, RetrievalConfig):
        raise InvalidQueryError(f"config must be a RetrievalConfig, got {type(config).__name__}")
    if not (
        tagger is None
        or tagger is False
        or (isinstance(tagger, str) and tagger == "auto")
        or (
            not isinstance(tagger, (str, bool, int, float))
            and call("the tagger", TaggerError, hasattr, tagger, "tag_nodes")
        )
    ):
        raise InvalidQueryError(
            "tagger must be 'auto', None/False or an object with tag_nodes() and refit()"
        )
    if (
        isinstance(intent_timeout_s, bool)
        or not isinstance(intent_timeout_s, (int, float))
        or not 0 < intent_timeout_s < 1e6
    ):
        raise InvalidQueryError(
            f"intent_timeout_s must be a positive number, got {_short(intent_timeout_s)}"
        )
    for name, value, low, high in (
        ("chunk_chars", chunk_chars, 50, 1_000_000),
        ("retag_all_below", retag_all_below, 0, 10**12),
        ("commit_files", commit_files, 1, 10**12),
        ("max_file_bytes", max_file_bytes, 1, 10**12),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise InvalidQueryError(
                f"{name} must be an integer in {low}..{high}, got {_short(value)}"
            )
    if (
        isinstance(commit_seconds, bool)
        or not isinstance(commit_seconds, (int, float))
        or not 0 < commit_seconds < 1e9
    ):
        raise InvalidQueryError(
            f"commit_seconds must be a positive number, got {_short(commit_seconds)}"
        )
