"""Ingest a batch of plain ``(text, metadata)`` records into the tree, each at its own path.

This is the framework-neutral half of the LangChain and LlamaIndex ``add_documents`` helpers:
they only turn their ``Document`` types into :class:`IngestRecord`\\ s and call
:func:`add_records` / :func:`aadd_records`, so placement, tag and duplicate rules are the same
whichever framework the documents came from.

Each record is placed by, in this order: ``metadata[uri_key]`` (a full ``viking://`` URI,
removed from the stored metadata because it *is* the node's URI), ``metadata[path_key]`` (a
path or URL placed under ``base_uri`` segment by segment; kept in the metadata, as loaders
write it there as provenance), or the record's ``id``. ``metadata[tags_key]`` (a list or
``a;b``) and ``tags`` become user tags; the rest of the metadata is written on every node the
text becomes (file and chunks), so metadata filters select on it.

The whole batch is planned and validated by :func:`plan_records` before anything is written,
so a bad record in the middle of a batch does not leave half the batch ingested. Writing goes
through the public ``add_resource(..., is_text=True)``: a record's text is never read as a
path, even when it names an existing file.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

from .. import tags as tagmod
from .. import uri as urimod
from ..client import AddResult, AsyncTreehop, Treehop
from ..errors import IngestError, InvalidQueryError, InvalidURIError
from .tree_builder import segment

OnDuplicate = Literal["error", "number"]
AsyncRunner = Callable[[Coroutine[Any, Any, list[str]]], list[str]]
"""Runs a coroutine to completion from sync code (see :func:`add_records`)."""

# URL schemes whose host is a meaningful first segment (``https://wiki/x`` -> ``wiki/x``).
_URL_SCHEMES = frozenset({"http", "https", "ftp", "s3", "gs"})
_DRIVE = re.compile(r"^[A-Za-z]:$")


@dataclass(frozen=True)
class IngestRecord:
    """One text to ingest: its metadata and, as a last resort for its place, an id."""

    text: str
    metadata: Mapping[str, Any] = field(default_factory=dict)
    id: str | None = None


RecordLike = IngestRecord | tuple[str, Mapping[str, Any]]
"""An :class:`IngestRecord` or a plain ``(text, metadata)`` pair."""


@dataclass(frozen=True)
class Placement:
    """Where one record goes and what is written there (the output of :func:`plan_records`)."""

    index: int
    """The record's position in the batch (error messages and ordering refer to it)."""
    target_uri: str
    """The internal (resolved) URI the text is written at."""
    text: str
    tags: list[str]
    metadata: dict[str, Any]


def path_segments(value: str) -> list[str]:
    """Split a relative path, an absolute path or a URL into tree segments.

    ``..`` is refused rather than resolved: a record must not be able to climb out of
    ``base_uri`` by what its metadata says. Empty segments, ``.`` and Windows drive letters are
    dropped, so ``/data/x.md``, ``data/x.md`` and ``C:\\data\\x.md`` land in the same place.
    """
    parts = urlsplit(value)
    if parts.scheme in _URL_SCHEMES and parts.netloc:
        raw = [parts.netloc, *parts.path.split("/")]
    else:
        raw = value.replace("\\", "/").split("/")
    out: list[str] = []
    for p in raw:
        p = p.strip()
        if not p or p == "." or _DRIVE.match(p):
            continue
        if p == "..":
            raise InvalidURIError(f"path {value!r} contains '..'")
        out.append(segment(p))
    return out


def _check_metadata(meta: Mapping[str, Any], where: str) -> None:
    # Stores persist metadata as JSON; refusing here keeps a bad value from failing (or being
    # silently mangled) after half the batch was written.
    try:
        json.dumps(meta, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise IngestError(f"{where}: metadata must be JSON-serialisable ({exc})") from exc
    for key, value in meta.items():
        if isinstance(value, float) and not math.isfinite(value):
            raise IngestError(f"{where}: metadata[{key!r}] is not a finite number")


def _as_record(item: object, where: str) -> IngestRecord:
    if isinstance(item, IngestRecord):
        rec = item
    elif isinstance(item, tuple) and len(item) == 2:
        rec = IngestRecord(item[0], item[1])
    else:
        raise IngestError(
            f"{where}: expected an IngestRecord or a (text, metadata) pair, "
            f"got {type(item).__name__}"
        )
    if not isinstance(rec.text, str):
        raise IngestError(f"{where}: the text must be a string, got {type(rec.text).__name__}")
    if not isinstance(rec.metadata, Mapping):
        raise IngestError(f"{where}: metadata must be a mapping, got {type(rec.metadata).__name__}")
    if rec.id is not None and not isinstance(rec.id, str):
        raise IngestError(f"{where}: id must be a string, got {type(rec.id).__name__}")
    return rec


def _target_of(
    client: AsyncTreehop,
    rec: IngestRecord,
    meta: dict[str, Any],
    base: str,
    where: str,
    *,
    uri_key: str | None,
    path_key: str | None,
    base_uri: str,
) -> str:
    """The resolved URI of one record; pops ``uri_key`` from ``meta`` when it decides."""
    if uri_key and meta.get(uri_key) is not None:
        raw = meta.pop(uri_key)
        if not isinstance(raw, str):
            raise InvalidURIError(f"{where}: metadata[{uri_key!r}] must be a string URI")
        if not raw.startswith(urimod.SCHEME):
            raise InvalidURIError(
                f"{where}: metadata[{uri_key!r}]={raw!r} is not a viking:// URI "
                f"(put relative paths in metadata[{path_key!r}] instead)"
            )
        target = client.resolve(raw)
    elif path_key and meta.get(path_key) is not None:
        raw = meta[path_key]
        if not isinstance(raw, str):
            raise InvalidURIError(f"{where}: metadata[{path_key!r}] must be a string path")
        segs = path_segments(raw)
        if not segs:
            raise InvalidURIError(f"{where}: metadata[{path_key!r}]={raw!r} names no file")
        target = base
        for s in segs:
            target = urimod.join(target, s)
        # Round-trip through the display form so the URI gets the same validation (length,
        # characters) as one given directly.
        target = client.resolve(client.display(target))
    elif rec.id:
        target = urimod.join(base, segment(rec.id))
    else:
        raise InvalidURIError(
            f"{where}: no place in the tree: set metadata[{uri_key!r}] (a viking:// URI), "
            f"metadata[{path_key!r}] (a path under {base_uri}) or an id"
        )
    if urimod.parent_of(target) is None:
        raise InvalidURIError(f"{where}: {target} is a root; give a path below it")
    if urimod.CHUNK_MARK in target:
        raise InvalidURIError(f"{where}: cannot place a document at a chunk URI ({target})")
    return target


def plan_records(
    client: Treehop | AsyncTreehop,
    records: Iterable[RecordLike],
    *,
    uri_key: str | None = "uri",
    path_key: str | None = "source",
    base_uri: str = "viking://resources",
    tags_key: str | None = "tags",
    tags: str | Sequence[str] | None = None,
    on_duplicate: OnDuplicate = "error",
) -> list[Placement]:
    """Validate a whole batch and decide where each record goes; writes nothing.

    Shared by :func:`add_records` and :func:`aadd_records` (and usable on its own, for a dry
    run). Raises :class:`~treehop.errors.InvalidURIError` for a record with no valid place, two
    records at one path (unless ``on_duplicate="number"``) or one record inside another's path;
    :class:`~treehop.errors.IngestError` for an empty text or metadata that cannot be stored.
    """
    if isinstance(records, str | bytes | IngestRecord) or not isinstance(records, Iterable):
        raise IngestError("records must be a list of IngestRecords or (text, metadata) pairs")
    if on_duplicate not in {"error", "number"}:
        raise InvalidQueryError(f"on_duplicate must be 'error' or 'number', got {on_duplicate!r}")
    if not isinstance(client, Treehop | AsyncTreehop):
        raise InvalidQueryError(
            f"client must be a treehop.Treehop or treehop.AsyncTreehop, got {type(client).__name__}"
        )
    aclient = client.aio if isinstance(client, Treehop) else client
    base = aclient.resolve(base_uri)
    if urimod.CHUNK_MARK in base:
        raise InvalidURIError("base_uri cannot be a chunk URI")
    common_tags = tagmod.parse_tags(tags)
    planned: list[Placement] = []
    for i, item in enumerate(records):
        where = f"document {i}"
        rec = _as_record(item, where)
        if not rec.text.strip():
            raise IngestError(f"{where}: the text is empty")
        meta = dict(rec.metadata)
        target = _target_of(
            aclient, rec, meta, base, where, uri_key=uri_key, path_key=path_key, base_uri=base_uri
        )
        doc_tags = list(common_tags)
        if tags_key and tags_key in meta:
            doc_tags = tagmod.merge(doc_tags, tagmod.parse_tags(meta.pop(tags_key)))
        _check_metadata(meta, where)
        planned.append(Placement(i, target, rec.text, doc_tags, meta))
    return _dedupe(planned, on_duplicate)


def _dedupe(planned: list[Placement], on_duplicate: str) -> list[Placement]:
    by_target: dict[str, list[Placement]] = {}
    for p in planned:
        by_target.setdefault(p.target_uri, []).append(p)
    uris = set(by_target)
    out: list[Placement] = []
    for target, group in by_target.items():
        # A record placed inside another record's path would turn that file into a directory;
        # checked through each URI's ancestors, O(records x depth).
        parent = next((a for a in urimod.ancestors_of(target) if a in uris), None)
        if parent is not None:
            raise InvalidURIError(
                f"document {group[0].index} is placed at {target}, inside document "
                f"{by_target[parent][0].index}'s own path {parent}"
            )
        if len(group) == 1:
            out.append(group[0])
            continue
        if on_duplicate == "error":
            raise InvalidURIError(
                f"documents {', '.join(str(p.index) for p in group)} all map to {target}; "
                "give each a distinct URI or path, or pass on_duplicate='number' to store them "
                "as numbered parts of that path (treehop splits long texts itself, so whole "
                "documents need no pre-splitting)"
            )
        width = len(str(len(group)))
        for n, p in enumerate(group, start=1):
            numbered = urimod.join(target, f"part-{n:0{width}d}")
            out.append(Placement(p.index, numbered, p.text, p.tags, p.metadata))
    return sorted(out, key=lambda p: p.index)


def _add_kwargs(p: Placement) -> dict[str, Any]:
    # ``name`` is the last segment so a text's title/summary names the file as its URI does.
    return {
        "target_uri": p.target_uri,
        "tags": p.tags or None,
        "name": p.target_uri.rsplit("/", 1)[-1],
        "metadata": p.metadata or None,
        "is_text": True,
    }


def _display(client: AsyncTreehop, res: AddResult) -> str:
    return client.display(res.root_uri)


def add_records(
    client: Treehop | AsyncTreehop,
    records: Iterable[RecordLike],
    *,
    uri_key: str | None = "uri",
    path_key: str | None = "source",
    base_uri: str = "viking://resources",
    tags_key: str | None = "tags",
    tags: str | Sequence[str] | None = None,
    on_duplicate: OnDuplicate = "error",
    run_async: AsyncRunner | None = None,
) -> list[str]:
    """Ingest ``records`` from sync code; returns each record's (display) URI, in order.

    Several records mapping to one path raise :class:`~treehop.errors.InvalidURIError` unless
    ``on_duplicate="number"``, which stores them as ``<path>/part-1``, ``part-2``, ... .
    Re-adding a record re-embeds it only if its text changed (its metadata is refreshed
    either way).

    A :class:`~treehop.Treehop` runs on its own loop thread. An
    :class:`~treehop.AsyncTreehop` needs ``run_async``: how the caller runs a coroutine to
    completion from sync code (a framework integration's persistent background loop). treehop
    does not pick one itself, because models and rerankers keep HTTP pools bound to the loop
    that opened them, so a throwaway ``asyncio.run`` per call would break them.
    """
    options: dict[str, Any] = {
        "uri_key": uri_key,
        "path_key": path_key,
        "base_uri": base_uri,
        "tags_key": tags_key,
        "tags": tags,
        "on_duplicate": on_duplicate,
    }
    if isinstance(client, AsyncTreehop):
        if run_async is None:
            raise InvalidQueryError(
                "add_records with an AsyncTreehop needs run_async= (or await aadd_records)"
            )
        return run_async(aadd_records(client, records, **options))
    plan = plan_records(client, records, **options)
    return [_display(client.aio, client.add_resource(p.text, **_add_kwargs(p))) for p in plan]


async def aadd_records(
    client: Treehop | AsyncTreehop,
    records: Iterable[RecordLike],
    *,
    uri_key: str | None = "uri",
    path_key: str | None = "source",
    base_uri: str = "viking://resources",
    tags_key: str | None = "tags",
    tags: str | Sequence[str] | None = None,
    on_duplicate: OnDuplicate = "error",
) -> list[str]:
    """The async twin of :func:`add_records`; a sync client is used through its ``.aio``.

    Embedding is awaited on the caller's loop, never blocking it.
    """
    plan = plan_records(
        client,
        records,
        uri_key=uri_key,
        path_key=path_key,
        base_uri=base_uri,
        tags_key=tags_key,
        tags=tags,
        on_duplicate=on_duplicate,
    )
    aclient = client.aio if isinstance(client, Treehop) else client
    return [_display(aclient, await aclient.add_resource(p.text, **_add_kwargs(p))) for p in plan]
