"""Ingest a batch of plain ``(text, metadata)`` records into the tree, each at its own path.

This is the framework-neutral half of the LangChain and LlamaIndex ``add_documents`` helpers:
they only turn their ``Document`` types into :class:`IngestRecord`\\ s and call
:func:`add_records` / :func:`aadd_records`, so placement, tag and duplicate rules are the same
whichever framework the documents came from.

Each record is placed by, in this order: ``metadata[uri_key]`` (a full ``viking://`` URI,
removed from the stored metadata because it *is* the node's URI; at or below ``base_uri``
when the call names a base other than ``viking://resources``, never in the conversations'
subtree nor on a directory of memories: a loader's metadata chooses it),
``metadata[path_key]`` (a path or URL placed under ``base_uri`` segment by segment; kept in
the metadata, as loaders write it there as provenance; absolute or climbing paths are first
made relative to the directory the batch's paths share), the record's ``id``, or else a
stable id derived from its text and metadata. ``metadata[tags_key]`` (a list or ``a;b``)
and ``tags`` become user tags (a tagger's ``auto:`` / ``inherit:`` / ``llm:`` tags in the
metadata, as a retriever's documents show them, are left to the taggers); the rest of the
metadata is written on every node the text becomes (file and chunks), so metadata filters
select on it. Records sharing one path (a loader's pages, a splitter's chunks) become the
ordered chunks of that file (:class:`PassageStore`).

The whole batch is planned and validated by :func:`plan_records` before anything is written,
so a bad record in the middle of a batch does not leave half the batch ingested; it is then
built and embedded whole before the first write, and written under one lock with one save
(:func:`_awrite`: all or nothing). A record of its own is built as the public
``add_resource(..., is_text=True)`` builds it: its text is never read as a path, even when it
names an existing file.

The second half of the module, :class:`PassageStore`, is the id-addressed model of the
frameworks' vector stores (see the notes above it).
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import math
import posixpath
import re
import weakref
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict
from urllib.parse import urlsplit

import numpy as np

from .. import arguments as argmod
from .. import tags as tagmod
from .. import uri as urimod
from .._plugins import report
from ..client import AddResult, AsyncTreehop, Treehop
from ..errors import IngestError, InvalidQueryError, InvalidURIError, TreehopError
from ..filters import ShownField
from ..memory import check_outside_conversations, document_above
from ..memory import is_document as holds_text
from ..models import Level, Node
from ..redaction import LISTED_NAMES, shown_name
from ..stores.embedded import EmbeddedStore
from ..tagging import ingest as tagger_keys
from ..validation import check_strings, is_blank, shown_value
from .loaders import MAX_FILE_BYTES, check_text_size, given_text_kind
from .tree_builder import finalize, segment, summarize
from .writer import EMBED_BATCH, AddCall, ProgressCallback, to_thread_to_the_end

OnDuplicate = Literal["chunks", "error", "number"]


class PlacementKwargs(TypedDict, total=False):
    """Where :func:`add_records` places each record (see its docstring); declared once so
    that the framework ``add_documents`` helpers take them with ``Unpack``."""

    uri_key: str | None
    path_key: str | None
    base_uri: str
    tags_key: str | None
    tags: str | Sequence[str] | None
    on_duplicate: OnDuplicate
    batch_size: int | None


AsyncRunner = Callable[[Coroutine[Any, Any, list[str]]], list[str]]
"""Runs a coroutine to completion from sync code (see :func:`add_records`)."""

# URL schemes whose host is a meaningful first segment (``https://wiki/x`` -> ``wiki/x``).
_URL_SCHEMES = frozenset({"http", "https", "ftp", "s3", "gs"})
_DRIVE = re.compile(r"^[A-Za-z]:\Z")


@dataclass(frozen=True)
class IngestRecord:
    """One text to ingest: its metadata and, as a last resort for its place, an id."""

    text: str
    metadata: Mapping[str, Any] = field(default_factory=dict)
    id: str | None = None
    offset: float | None = None
    """Where the text starts inside its source page, when the framework knows (a LlamaIndex
    node's ``start_char_idx``); orders chunks sharing a source."""


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
    id: str | None = None
    offset: float | None = None
    chunk_of: bool = False
    """True when several records share ``target_uri``: they are its ordered chunks."""
    source_path: str | None = None
    """The record's path below ``base_uri`` when its ``path_key`` placed it (made relative
    as :func:`relative_sources` makes it): stored as ``source_path``, as ``add_resource`` of
    a folder stores each file's path under the folder (:func:`_build_doc`)."""


def path_segments(value: str) -> list[str]:
    """Split a relative path, an absolute path or a URL into tree segments.

    ``..`` is refused rather than resolved: a record must not be able to climb out of
    ``base_uri`` by what its metadata says. Empty segments, ``.`` and Windows drive letters are
    dropped, so ``/data/x.md``, ``data/x.md`` and ``C:\\data\\x.md`` land in the same place.
    """
    return [segment(p) for p in _path_parts(value)]


def _path_parts(value: str) -> list[str]:
    """:func:`path_segments` before each part becomes a URI segment (the names as given)."""
    parts = urlsplit(value)
    if parts.scheme in _URL_SCHEMES and parts.netloc:
        # (the host, without a ``user:password@``: the credentials became the first segment
        # of the URI and of ``source_path``, shown in every result; helper attacks71)
        raw = [parts.netloc.rpartition("@")[2], *parts.path.split("/")]
    else:
        raw = value.replace("\\", "/").split("/")
    out: list[str] = []
    for p in raw:
        p = p.strip()
        if not p or p == "." or _DRIVE.match(p):
            continue
        if p == "..":
            raise InvalidURIError(f"path {value!r} contains '..'")
        out.append(p)
    return out


MAX_PASSAGE_METADATA_BYTES = MAX_FILE_BYTES
"""The most one passage's metadata may take as JSON: the largest file treehop ingests (a
document written whole is held to ``arguments.MAX_METADATA_BYTES``). Why a bound at all
(helper attacks78): metadata sharing one list at every level is exponentially larger as
JSON than as given (70 references, 10**7 values), and every check writing it whole ran for
minutes to hours; :func:`arguments.json_bytes_problem` stops at this bound."""


def _check_bounded(meta: Mapping[str, Any], where: str) -> None:
    """Refuse metadata over :data:`MAX_PASSAGE_METADATA_BYTES` as JSON, a cycle, or one whose
    own methods raise, before anything writes it out whole (``stable_id``, ``json.dumps``)."""
    problem = argmod.json_bytes_problem(meta, MAX_PASSAGE_METADATA_BYTES)
    if problem is not None:
        raise IngestError(f"{where}: metadata {problem}")


def _check_metadata(meta: Mapping[str, Any], where: str) -> None:
    # Stores persist metadata as JSON; refusing here keeps a bad value from failing (or being
    # silently mangled) after half the batch was written.
    # (sorted keys, as a store writes them: a non-string key beside string ones fails
    # there; nesting past the recursion limit fails in any JSON writer)
    _check_bounded(meta, where)
    try:
        json.dumps(meta, allow_nan=False, sort_keys=True)
    except (TypeError, ValueError, RecursionError) as exc:
        raise IngestError(f"{where}: metadata must be JSON-serialisable ({exc})") from exc
    for key, value in meta.items():
        if isinstance(value, float) and not math.isfinite(value):
            raise IngestError(f"{where}: metadata[{key!r}] is not a finite number")
    # A non-string key alone passes json.dumps: the node model refuses it at the top (after
    # earlier passages were written), and nested it would come back from the store as text.
    stack: list[object] = [meta]
    while stack:
        value = stack.pop()
        if isinstance(value, Mapping):
            bad = next((k for k in value if not isinstance(k, str)), None)
            if bad is not None:
                raise IngestError(
                    f"{where}: metadata keys must be strings, got {type(bad).__name__}"
                )
            stack.extend(value.values())
        elif isinstance(value, (list, tuple)):
            stack.extend(value)


def _check_placed_metadata(meta: Mapping[str, Any], where: str) -> None:
    """A record's metadata, by the rules ``add_resource`` applies when it writes the record
    (64-bit integers, depth, size): a record that broke them was found only after the
    records before it were written."""
    _check_metadata(meta, where)
    try:
        argmod.check_metadata(meta)
    except InvalidQueryError as exc:
        raise IngestError(f"{where}: {exc}") from None


def _check_unicode(p: Passage, where: str) -> None:
    """A lone surrogate (``"\\ud800"``: a Python string, not Unicode text) in a passage's text,
    id, embedding text or metadata fails when it is hashed, stored or sent: refused here,
    before any write."""
    try:
        for text in (p.text, p.id, p.embed_text):
            if isinstance(text, str):
                text.encode("utf-8")
        json.dumps(p.metadata, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise IngestError(
            f"{where}: the text, id or metadata contains a lone surrogate (not valid Unicode)"
        ) from None


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
    # Checked here, for every record, because the write refuses them only when it reaches
    # the record: the documents before it would already be written.
    if argmod.has_lone_surrogate(rec.text) or (
        rec.id is not None and argmod.has_lone_surrogate(rec.id)
    ):
        raise IngestError(f"{where}: the text or id contains a lone surrogate (not valid Unicode)")
    _check_offset(rec.offset, where)
    return rec


def _check_offset(off: object, where: str) -> None:
    """A chunk's offset in its page: a string or list failed the chunks' sort with
    TypeError (after the batch was planned), NaN ordered them anyhow."""
    if off is not None and (
        isinstance(off, bool)
        or not isinstance(off, int | float)
        or (isinstance(off, float) and not math.isfinite(off))
    ):
        raise IngestError(f"{where}: offset must be a finite number or None, got {off!r:.40}")


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
    relative: str | None = None,
    chunk: int | None = None,
) -> str:
    """The resolved URI of one record; pops ``uri_key`` from ``meta`` when it decides.

    ``relative``: the record's source made relative (:func:`relative_sources`). ``chunk``:
    the record is a retrieved chunk (:func:`retrieved_chunk`): placed at its document."""
    if uri_key and meta.get(uri_key) is not None:
        raw = meta.pop(uri_key)
        if not isinstance(raw, str):
            raise InvalidURIError(f"{where}: metadata[{uri_key!r}] must be a string URI")
        if chunk is not None:
            raw = raw.partition(urimod.CHUNK_MARK)[0]
        if not raw.startswith(urimod.SCHEME):
            raise InvalidURIError(
                f"{where}: metadata[{uri_key!r}]={raw!r} is not a viking:// URI "
                f"(put relative paths in metadata[{path_key!r}] instead)"
            )
        target = client.resolve(raw)
        if base != client.resolve(DEFAULT_BASE_URI) and not (
            target == base or target.startswith(base + "/")
        ):
            raise InvalidURIError(
                f"{where}: metadata[{uri_key!r}]={client.display(target)[:200]!r} lies outside "
                f"base_uri {client.display(base)[:200]!r} (a call naming its base keeps its "
                "records below it)"
            )
    elif path_key and meta.get(path_key) is not None:
        raw = meta[path_key]
        if not isinstance(raw, str):
            raise InvalidURIError(f"{where}: metadata[{path_key!r}] must be a string path")
        segs = path_segments(relative if relative is not None else raw)
        if not segs:
            raise InvalidURIError(f"{where}: metadata[{path_key!r}]={raw!r} names no file")
        target = base
        for s in segs:
            target = urimod.join(target, s)
        # Round-trip through the display form so the URI gets the same validation (length,
        # characters) as one given directly.
        target = client.resolve(client.display(target))
    elif rec.id:
        target = urimod.join(base, id_segment(rec.id))
    else:
        # No URI, no source, no id: a stable id from the text and metadata, so re-running
        # the same ingest replaces instead of duplicating.
        try:
            made = stable_id(rec.text, rec.metadata)
        except (TypeError, ValueError, RecursionError) as exc:
            # (a non-string key beside string ones cannot be sorted; nested past the
            # recursion limit: refused as the metadata check below refuses them)
            raise IngestError(f"{where}: metadata must be JSON-serialisable ({exc})") from None
        target = urimod.join(base, made)
    if urimod.parent_of(target) is None:
        raise InvalidURIError(f"{where}: {target} is a root; give a path below it")
    if urimod.CHUNK_MARK in target:
        raise InvalidURIError(
            f"{where}: cannot place a document at a chunk URI ({target}): name its document "
            "(the part before '#'); a chunk retrieved from a treehop index, whose metadata "
            "keeps the retriever's chunk_index, is placed there by itself"
        )
    try:
        check_outside_conversations(client, target, where, InvalidURIError)
    except InvalidURIError as exc:
        if meta.get("kind") != "turn":
            raise
        raise InvalidURIError(
            f"{exc}: this document is a conversation turn retrieved from a treehop index; "
            "copy the conversation with add_messages, or leave the turn out (or drop its "
            f"metadata[{uri_key!r}] to store it as a document under base_uri)"
        ) from None
    try:  # (every placement, a passage-mode file too: its write never reaches _target_for)
        return urimod.check_new(target)
    except InvalidURIError as exc:
        raise InvalidURIError(f"{where}: {exc}") from None


DEFAULT_BASE_URI = "viking://resources"
"""``add_records``' default ``base_uri``. With it a record's ``uri`` metadata may name any
place (documented: ``viking://~/memories/style`` is a memory); a call naming another base
keeps every record at or below it (:func:`_target_of`)."""


def retrieved_chunk(meta: Mapping[str, Any], uri_key: str | None) -> int | None:
    """The chunk number of a record that is a chunk retrieved from a treehop index (its
    ``uri_key`` names ``<document>#chunk-N`` and its ``chunk_index``, a key every retrieved
    ``Document`` / node carries, is that ``N``), else ``None``.

    Why (helper leftovers62): ``add_documents(other, retriever.invoke(q))``, the copy of
    results into another store a LangChain user writes, refused the whole batch as soon as
    one result was a chunk ("cannot place a document at a chunk URI"): a retrieved
    document's ``uri`` is read as its place, and a chunk's names no place a document can
    take. Such a record is placed at its document; the chunks of one document copied
    together become that document's chunks in their order (``N``, as a chunk's offset),
    one alone the document's text. Both keys are asked for, so a caller's own
    ``{"uri": "...#chunk-1"}`` without the retriever's ``chunk_index`` is still refused."""
    if not uri_key:
        return None
    raw, index = meta.get(uri_key), meta.get("chunk_index")
    if not isinstance(raw, str) or not isinstance(index, int) or isinstance(index, bool):
        return None
    _, mark, number = raw.partition(urimod.CHUNK_MARK)
    if not mark or not number.isascii() or not number.isdigit() or len(number) > 6:
        return None
    return index if int(number) == index else None


def _check_outside_documents(client: AsyncTreehop, plan: Sequence[Placement]) -> None:
    """Refuse a record placed below a document (a leaf, or a file stored as chunks), as
    ``add_resource`` refuses its target there (``AsyncTreehop._outside_documents``). Why:
    ``{"uri": "viking://resources/a.md/x"}`` over the document ``a.md`` made it a directory
    of records, its text gone (:func:`treehop.memory.document_above`)."""
    found = document_above(client.store, sorted({p.target_uri for p in plan}))
    if found is not None:
        inside, holder = found
        raise InvalidURIError(
            f"{client.display(inside)[:200]} lies inside the document "
            f"{client.display(holder)[:200]}; a record there would replace it"
        )


def _check_memory_targets(client: AsyncTreehop, plan: Sequence[Placement]) -> None:
    """Refuse a record placed on a directory of the user's memories (a child that is not
    one of its own chunks), as ``remember`` / ``add_memory`` refuse it
    (:func:`treehop.memory.check_memory_target`): a loader's ``{"uri":
    "viking://~/memories/notes"}`` replaced every note. One read of the targets there."""
    _check_outside_documents(client, plan)
    memories = client.resolve("viking://~/memories")
    mine = sorted({p.target_uri for p in plan if p.target_uri.startswith(memories + "/")})
    if not mine:
        return
    for node in client.store.get(mine):
        if node is None or node.is_leaf:
            continue
        if any(k.chunk_index is None for k in client.store.children(node.uri)):
            raise InvalidURIError(
                f"{client.display(node.uri)[:200]} is a directory of memories; a record there "
                "would replace everything under it"
            )


def plan_records(
    client: Treehop | AsyncTreehop,
    records: Iterable[RecordLike],
    *,
    uri_key: str | None = "uri",
    path_key: str | None = "source",
    base_uri: str = "viking://resources",
    tags_key: str | None = "tags",
    tags: str | Sequence[str] | None = None,
    on_duplicate: OnDuplicate = "chunks",
) -> list[Placement]:
    """Validate a whole batch and decide where each record goes; writes nothing.

    Shared by :func:`add_records` and :func:`aadd_records` (and usable on its own, for a dry
    run). Raises :class:`~treehop.errors.InvalidURIError` for a record with no valid place, two
    records at one path (unless ``on_duplicate="number"``) or one record inside another's path;
    :class:`~treehop.errors.IngestError` for an empty text or metadata that cannot be stored.
    """
    if isinstance(records, str | bytes | IngestRecord) or not isinstance(records, Iterable):
        raise IngestError("records must be a list of IngestRecords or (text, metadata) pairs")
    # (``x in set`` hashes x: a list here raised TypeError, not a refusal)
    if not isinstance(on_duplicate, str) or on_duplicate not in {"chunks", "error", "number"}:
        raise InvalidQueryError(
            f"on_duplicate must be 'chunks', 'error' or 'number', got {shown_value(on_duplicate)}"
        )
    for key_name, key in (("uri_key", uri_key), ("path_key", path_key), ("tags_key", tags_key)):
        if key is not None and not isinstance(key, str):
            raise InvalidQueryError(
                f"{key_name} must be a metadata key (a string) or None, got {type(key).__name__}"
            )
    if not isinstance(client, Treehop | AsyncTreehop):
        raise InvalidQueryError(
            f"client must be a treehop.Treehop or treehop.AsyncTreehop, got {type(client).__name__}"
        )
    aclient = client.aio if isinstance(client, Treehop) else client
    # A closed client is refused, as its own methods refuse it (helper attacks68): over a
    # closed ``Treehop`` or ``AsyncTreehop``, ``aadd_records`` (and so LangChain's and
    # LlamaIndex's ``aadd_documents``, and ``add_documents`` over an ``AsyncTreehop``) wrote
    # into the index its close had saved for the last time and returned the new URIs.
    aclient._check_open()
    base = aclient.resolve(base_uri)
    if urimod.CHUNK_MARK in base:
        raise InvalidURIError("base_uri cannot be a chunk URI")
    common_tags = tagmod.user_tags(tags)
    recs = [_as_record(item, f"document {i}") for i, item in enumerate(records)]
    # Machine paths (absolute, or climbing out with ..) become relative to the directory the
    # batch's files share: SimpleDirectoryReader("docs") output lands at <base>/cli.md.
    sourced = {
        i: r.metadata[path_key]
        for i, r in enumerate(recs)
        if path_key
        and isinstance(r.metadata.get(path_key), str)
        and not (uri_key and r.metadata.get(uri_key) is not None)
    }
    # A later batch under a directory an earlier one used keeps it (root_for).
    root = root_for(aclient, base, path_key, sourced.values()) if path_key and sourced else None
    relative = dict(zip(sourced, relative_sources(list(sourced.values()), root), strict=True))
    planned: list[Placement] = []
    for i, rec in enumerate(recs):
        where = f"document {i}"
        if is_blank(rec.text):
            raise IngestError(f"{where}: the text is empty (no visible character)")
        _check_bounded(rec.metadata, where)  # (before stable_id writes it out whole)
        meta = dict(rec.metadata)
        chunk = retrieved_chunk(meta, uri_key)
        target = _target_of(
            aclient,
            rec,
            meta,
            base,
            where,
            uri_key=uri_key,
            path_key=path_key,
            base_uri=base_uri,
            relative=relative.get(i),
            chunk=chunk,
        )
        doc_tags = list(common_tags)
        if tags_key and tags_key in meta:
            doc_tags = tagmod.merge(doc_tags, tagmod.document_tags(meta.pop(tags_key)))
        _check_metadata(meta, where)
        reserved = INTERNAL_KEYS & set(meta)
        if reserved:
            raise IngestError(f"{where}: metadata keys {sorted(reserved)} are reserved")
        rel = relative.get(i)  # (set exactly for the records their path_key places)
        source_path = "/".join(_path_parts(rel)) if rel is not None else None
        offset = rec.offset if rec.offset is not None or chunk is None else float(chunk)
        planned.append(
            Placement(i, target, rec.text, doc_tags, meta, rec.id, offset, False, source_path)
        )
    plan = _dedupe(planned, on_duplicate)
    _check_memory_targets(aclient, plan)
    max_bytes = aclient.writer.builder.max_file_bytes
    for p in plan:
        if not p.chunk_of:  # a whole document: written by add_resource, checked by its rules
            _check_placed_metadata(p.metadata, f"document {p.index}")
            argmod.check_text_size(p.text)
            check_text_size(p.text, f"document {p.index}", max_bytes)
    if path_key:  # (once the batch is valid: a refused batch teaches no root)
        remember_roots(aclient, base, path_key, sourced, relative)
    return plan


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
        if on_duplicate == "chunks":
            out.extend(dataclasses.replace(p, chunk_of=True) for p in group)
            continue
        if on_duplicate == "error":
            few = ", ".join(str(p.index) for p in group[:LISTED_NAMES])
            more = len(group) - LISTED_NAMES
            raise InvalidURIError(
                f"documents {few}{f' and {more} more' if more > 0 else ''} all map to {target}; "
                "give each a distinct URI or path, or pass on_duplicate='chunks' (the default: "
                "the ordered chunks of one file) or 'number' (numbered parts of that path)"
            )
        width = len(str(len(group)))
        for n, p in enumerate(group, start=1):
            numbered = urimod.join(target, f"part-{n:0{width}d}")
            out.append(dataclasses.replace(p, target_uri=numbered))
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
    on_duplicate: OnDuplicate = "chunks",
    batch_size: int | None = None,
    run_async: AsyncRunner | None = None,
    progress: ProgressCallback | None = None,
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

    ``progress`` is called as ``progress("documents", done, total)`` as records are written
    (``total`` counts records; the records of one file are written, and counted, together).

    A batch is written all or nothing: every record is built and embedded before the first
    write, so a model that fails (an :class:`~treehop.errors.EmbeddingError`) leaves every
    store as it was; the writes then run under one lock and are committed by one save, and a
    failure after the first write (the summary or vector of a directory above the batch,
    the store itself) reverts the embedded store to the generation before the call (in
    memory: to its state before the call). A remote engine (Milvus, VikingDB: written at
    once) keeps what was written before such a late failure; re-adding the batch completes
    it.

    ``batch_size`` (default None: the whole batch at once) writes the batch in parts of at
    most that many records, each part all or nothing as above, in the records' order (the
    records of one file are never split: a file's chunks are one part, whatever their
    number). The whole batch is still validated before the first write. What it buys: a
    failure (a remote embedder's outage at record 90,000) keeps the parts written before
    it, so re-adding the batch embeds only the rest (unchanged records are not embedded
    again), and only one part's nodes and vectors are held at a time. What it costs: the
    batch is no longer all or nothing, and each part is committed, and its directories
    re-described, on its own (``bench/bench_add_records.py --batch-size``). The stored
    result is the same as in one batch.
    """
    _check_progress(progress)
    _check_batch_size(batch_size)
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
        return run_async(
            aadd_records(client, records, **options, batch_size=batch_size, progress=progress)
        )
    plan = plan_records(client, records, **options)
    return client.run(_awrite_parts(client.aio, plan, base_uri, batch_size, progress))


async def aadd_records(
    client: Treehop | AsyncTreehop,
    records: Iterable[RecordLike],
    *,
    uri_key: str | None = "uri",
    path_key: str | None = "source",
    base_uri: str = "viking://resources",
    tags_key: str | None = "tags",
    tags: str | Sequence[str] | None = None,
    on_duplicate: OnDuplicate = "chunks",
    batch_size: int | None = None,
    progress: ProgressCallback | None = None,
) -> list[str]:
    """The async twin of :func:`add_records`; a sync client is used through its ``.aio``.

    Embedding is awaited on the caller's loop, never blocking it.
    """
    _check_progress(progress)
    _check_batch_size(batch_size)
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
    return await _awrite_parts(aclient, plan, base_uri, batch_size, progress)


def _check_batch_size(batch_size: object) -> None:
    if batch_size is not None and (
        isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1
    ):
        raise InvalidQueryError(
            f"batch_size must be a positive integer or None, got {shown_value(batch_size)}"
        )


def batch_parts(plan: Sequence[Placement], batch_size: int | None) -> list[list[Placement]]:
    """``plan`` cut into parts of at most ``batch_size`` records, in order, the records of
    one file (``chunk_of``: they share a target) always in one part (a part written with
    some of a file's chunks would replace the file by them): each file counts where its
    first record is, with all of its records; a file with more records than ``batch_size``
    is a part of its own. One part (the plan) when ``batch_size`` is None."""
    if batch_size is None or len(plan) <= batch_size:
        return [list(plan)] if plan else []
    files: dict[str, list[Placement]] = {}
    for p in plan:
        if p.chunk_of:
            files.setdefault(p.target_uri, []).append(p)
    parts: list[list[Placement]] = []
    part: list[Placement] = []
    for p in plan:
        if p.chunk_of:
            unit = files[p.target_uri]
            if unit[0] is not p:
                continue  # (written with its file's first record)
        else:
            unit = [p]
        if part and len(part) + len(unit) > batch_size:
            parts.append(part)
            part = []
        part.extend(unit)
    if part:
        parts.append(part)
    return [sorted(q, key=lambda p: p.index) for q in parts]


async def _awrite_parts(
    client: AsyncTreehop,
    plan: Sequence[Placement],
    base_uri: str,
    batch_size: int | None,
    progress: ProgressCallback | None,
) -> list[str]:
    """:func:`_awrite` of each part of :func:`batch_parts` in turn; the ``"documents"``
    progress counts the whole batch (``"embed"`` counts each part's texts)."""
    parts = batch_parts(plan, batch_size)
    if len(parts) <= 1:
        return await _awrite(client, plan, base_uri, progress)
    uris: dict[int, str] = {}
    for part in parts:
        done = len(uris)

        def counted(stage: str, n: int, total: int, done: int = done) -> None:
            assert progress is not None
            if stage == "documents":
                report(progress, stage, done + n, len(plan))
            else:
                report(progress, stage, n, total)

        written = await _awrite(client, part, base_uri, counted if progress else None)
        uris.update(zip((p.index for p in part), written, strict=True))
    return [uris[p.index] for p in plan]


@dataclass
class _DocWrite:
    """One whole-document record, built and compared with the store (nothing written yet)."""

    placement: Placement
    target: str
    call: AddCall
    nodes: list[Node]
    changed: list[Node]
    same: list[Node]
    stale: list[str]
    added: int = 0
    """How many of its nodes are not stored yet (the index grows by them)."""


async def _build_doc(client: AsyncTreehop, p: Placement) -> _DocWrite:
    """What ``add_resource(p.text, is_text=True, ...)`` would build for ``p``, by the same
    argument rules (so the nodes are the same), without writing; the diff against the store
    is taken under the write lock (:func:`_diff_docs`)."""
    kw = _add_kwargs(p)
    argmod.check_uri_arg(kw["target_uri"], "target_uri")
    text = argmod.check_text_size(p.text)
    name = argmod.check_name(kw["name"])
    meta = dict(argmod.check_metadata(kw["metadata"]) or {})
    user_tags = tagmod.user_tags(kw["tags"])
    target = client._target_for(kw["target_uri"], name or "note")
    call = AddCall(user_tags, meta, None, 0.0, name or "")
    builder = client.writer.builder
    ctype = urimod.context_type_of(target)
    built = await asyncio.to_thread(builder.build_text, text, target, ctype, call.name)
    if p.source_path is not None:
        # A record its path placed stores that path (``guide/deploy.md``), as ``add_resource``
        # of a folder stores each file's path under the folder; it stored the name alone
        # (``deploy.md``, what ``build_text`` stores for a text), so a filter on
        # ``source_path`` written for a folder's files missed the same files added as
        # documents, and LlamaIndex's LLM text showed ``source_path: deploy.md`` under a
        # reader's ``file_path`` of ``.../guide/deploy.md``. Metadata only: the text, hence
        # the vectors, are the same, so an index written before gets the path when the
        # documents are added again, without embedding. (The record's own ``source_path``,
        # merged next, still wins.)
        for n in built.nodes:
            if "source_path" in n.metadata:
                n.metadata = {**n.metadata, "source_path": p.source_path}
    if meta:  # (as TreeWriter.write merges it)
        for n in built.nodes:
            n.metadata = {**n.metadata, **meta}
    return _DocWrite(p, target, call, list(built.nodes), [], [], [])


async def _diff_docs(client: AsyncTreehop, docs: Sequence[_DocWrite]) -> None:
    """Which of each document's nodes changed (to embed), stayed (to refresh) or are gone
    (to delete), as :meth:`TreeWriter.write` decides it. The batch's targets are disjoint
    and none is inside another (:func:`_dedupe`), so reading them all before writing any
    reads what the one-at-a-time writes read."""
    writer = client.writer
    for d in docs:
        old = await writer.io(writer._stored_hashes, d.target)
        wanted = {n.uri for n in d.nodes}
        d.stale = [u for u in old if u not in wanted]
        d.changed = [n for n in d.nodes if old.get(n.uri) != n.content_hash]
        d.same = [n for n in d.nodes if old.get(n.uri) == n.content_hash]
        d.added = sum(1 for n in d.nodes if n.uri not in old)


def _ingest_taggers(client: AsyncTreehop) -> list[tagger_keys.IngestTagger]:
    """The keyword taggers of the client's tagger chain (whose statistics a batch counts
    into: state blobs written at once, outside the store's generations)."""
    return tagger_keys.ingest_taggers(client.writer.tagger)


def _start_tagger_batch(client: AsyncTreehop) -> list[tagger_keys.IngestTagger]:
    """Record what the batch's tagging counts, to take it back if the batch fails."""
    taggers = _ingest_taggers(client)
    for t in taggers:
        t.start_batch(client.store)
    return taggers


def _revert(client: AsyncTreehop, taggers: Sequence[tagger_keys.IngestTagger]) -> bool:
    """Undo a failed batch's uncommitted writes: the embedded store goes back to the
    generation committed before the call (what ``save`` does when a commit fails; in memory,
    its state at the last save). Returns False where the store cannot (a remote engine,
    which writes at once: see :func:`add_records`)."""
    store = client.store
    # The batch's own counts are taken out of the keyword statistics; another writer's,
    # counted meanwhile, stay (putting back the blobs saved before the batch dropped them).
    for t in taggers:
        t.take_back(store)
    _ROOTS.pop(client, None)  # (re-read from what is stored: the batch's roots are not)
    return isinstance(store, EmbeddedStore) and store.discard_unsaved()


def _with_source_paths(
    planned: dict[str, Passage], order: Sequence[str], group: Sequence[Placement]
) -> dict[str, Passage]:
    """The passages of one chunk-mode file, each carrying the ``source_path`` its record's
    path placed it by (:attr:`Placement.source_path`), as a whole document stores it
    (:func:`_build_doc`); a record's own ``source_path`` wins, and one placed by a URI or
    an id gets none (nor does a whole document: it stores its name).

    Why (helper leftovers62b): a file built from several documents sharing one source (a
    loader's pages, a splitter's chunks, LlamaIndex nodes of one ``file_path``) stored no
    ``source_path`` at all, where the same file added as one document stored
    ``guide/deploy.md``: a filter on ``source_path`` missed the chunks, and the file's
    node had none to show. Added after the ids are planned (an id made from the metadata,
    :func:`stable_id`, stays the one an index written before holds) and outside the
    texts, so the vectors are reused: an index written before gets the path when its
    documents are added again, with nothing embedded. The vector stores' own writes
    (``PassageStore``) store the metadata exactly as given, as before."""
    paths = {pid: g.source_path for pid, g in zip(order, group, strict=True)}
    out: dict[str, Passage] = {}
    for pid, q in planned.items():
        path = paths.get(pid)
        if path is not None and "source_path" not in q.metadata:
            q = dataclasses.replace(q, metadata={**q.metadata, "source_path": path})
        out[pid] = q
    return out


def _retag_point(
    client: AsyncTreehop,
    plan: Sequence[Placement],
    docs: Mapping[int, _DocWrite],
    files: Sequence[tuple[str, list[Placement], dict[str, Passage], list[str]]],
) -> int:
    """After how many of ``plan``'s first placements the one-record-at-a-time write last
    re-tagged the whole index (``k``: after ``plan[:k]``; 0 or ``len(plan)``: never, or after
    the last, as the batch's own save decides).

    That write saved after every record, and each save re-tags the whole index while it
    holds at most :attr:`TreeWriter.retag_all_below` nodes (:meth:`TreeWriter.finish`): the
    last such re-tag fixed the tags of everything stored then, and the records after it kept
    the tags they were written with. The index's size after each record is counted here
    (its new nodes, its deletions, the directories its write creates above it), so the batch
    re-tags once, at the same point, and stores the same tags. (Not counted: a passage that
    moves from another file, and the file it leaves when emptied.)"""
    writer = client.writer
    store = client.store
    limit = writer.retag_all_below
    if writer.tagger is None:
        return len(plan)
    size = len(store)
    targets = {p.index: docs[p.index].target for p in plan if p.index in docs}
    targets.update({g[0].index: uri for uri, g, _, _ in files})
    above = sorted({a for t in targets.values() for a in urimod.ancestors_of(t)})
    present = {u for u, n in zip(above, store.get(above), strict=True) if n is not None}
    by_file = {uri: planned for uri, _, planned, _ in files}
    last_ok = 0
    for k, p in enumerate(plan, start=1):
        target = targets.get(p.index)  # (None: a later record of a file, written with its first)
        if target is not None:
            d = docs.get(p.index)
            if d is not None:
                size += d.added - len(d.stale)
            else:
                size += 1 + len(by_file[target]) - len(writer._stored_uris(target))
            for a in urimod.ancestors_of(target):
                if a not in present:
                    present.add(a)
                    size += 1
        if size <= limit:
            last_ok = k
    return last_ok


async def _awrite(
    client: AsyncTreehop,
    plan: Sequence[Placement],
    base_uri: str,
    progress: ProgressCallback | None = None,
) -> list[str]:
    """Write a validated plan, all or nothing: whole documents as ``add_resource`` builds
    them (summarised and chunked), records sharing a source as the ordered chunks of one
    file (:meth:`PassageStore.awrite_file`).

    Every document is built and every new text embedded (:data:`EMBED_BATCH` at a time,
    across records) before the first write, so a model that fails writes nothing, on any
    store. The writes then run under the one write lock: tags record by record in the
    batch's order (the keyword statistics evolve as one record at a time made them), one
    upsert, the ancestors re-described once for the batch, one save. A failure after the
    first write (an ancestor's summary or vector, the store) reverts the embedded store to
    the generation before the call. The nodes and vectors written are those the one-record-
    at-a-time path wrote (``tests/test_records_atomic.py``)."""
    writer = client.writer
    out: dict[int, str] = {}

    def advance() -> None:
        if progress is not None:
            report(progress, "documents", len(out), len(plan))

    if not plan:
        return []
    groups: dict[str, list[Placement]] = {}
    for p in plan:
        if p.chunk_of:
            groups.setdefault(p.target_uri, []).append(p)
    await client._io(client._fresh_write)  # (as add_resource: diff against the latest commit)
    writer.lock.refuse_nested()  # (before the build, which calls the summarizer)
    try:
        with writer.lock.building():
            docs = {p.index: await _build_doc(client, p) for p in plan if not p.chunk_of}
    except BaseException:
        _ROOTS.pop(client, None)  # (the roots plan_records learned: re-read from the store)
        raise
    store = PassageStore(client, base_uri=base_uri, path_key=None) if groups else None
    async with writer.lock:
        # (the plan's places checked again under the lock, right before the write: checked
        # only when planned, a document or memory this client wrote in between was not
        # seen, and a record landed below it; helper races59)
        try:
            await client._io(_check_memory_targets, client, plan)
        except BaseException:
            _ROOTS.pop(client, None)  # (a refused batch teaches no root)
            raise
        try:
            await _diff_docs(client, list(docs.values()))
            changed = [n for d in docs.values() for n in d.changed]
            vectors = await writer.embed_nodes(changed, progress)
            files: list[tuple[str, list[Placement], dict[str, Passage], list[str]]] = []
            if store is not None:
                # Every file's new texts embedded together (keyed by file and id: one id
                # may sit in two files of a batch).
                todo: dict[str, Passage] = {}
                known: dict[str, Node] = {}
                for uri, group in groups.items():
                    passages = [Passage(g.text, g.metadata, g.id, offset=g.offset) for g in group]
                    planned = store._plan(passages)
                    order = [
                        q.id if q.id is not None else stable_id(q.text, q.metadata)
                        for q in passages
                    ]
                    planned = _with_source_paths(planned, order, group)
                    existing = await client._io(store._lookup, list(planned))
                    todo.update({f"{uri}\0{pid}": q for pid, q in planned.items()})
                    known.update({f"{uri}\0{pid}": n for pid, n in existing.items()})
                    files.append((uri, group, planned, order))
                store._fresh = await store._embed_new(todo, known, None)
        except BaseException:
            _ROOTS.pop(client, None)
            raise
        # Nothing is written above this line. (A store with unsaved writes of another
        # caller is committed first, so that a revert below takes back only this batch.)
        if isinstance(client.store, EmbeddedStore) and client.store.unsaved:
            await writer.io(client.store.save)
        taggers = await writer.io(_start_tagger_batch, client)
        split = await writer.io(_retag_point, client, plan, docs, files)
        try:
            written: list[Node] = []
            next_file = iter(files)

            async def write_part(part: Sequence[Placement], last: bool) -> None:
                """Tag and write ``part`` in order, then its ancestors; save at the end of
                the batch (``last``), else re-tag the whole index as the save after the
                part's last record did (:func:`_retag_point`)."""
                mine_docs = [docs[p.index] for p in part if p.index in docs]
                mine_files: list[str] = []
                for p in part:
                    d = docs.get(p.index)
                    if d is not None:
                        await to_thread_to_the_end(
                            writer.apply_tags,
                            d.nodes,
                            d.call.user_tags,
                            d.changed,
                            d.target,
                            {},
                            frozenset(d.stale),
                        )
                        out[p.index] = client.display(d.target)
                        advance()
                        continue
                    if store is None or p.target_uri not in groups or p.index in out:
                        continue
                    uri, group, planned, order = next(next_file)
                    assert uri == p.target_uri
                    tags = tagmod.merge(*(g.tags for g in group))
                    places: dict[str, str | None] = dict.fromkeys(planned, uri)
                    mine = await store._write_locked(
                        planned, places, list(tags), replace=True, deferred=True
                    )
                    written.extend(mine)
                    mine_files.append(uri)
                    # (the file is exactly these passages: each id's node is among them)
                    where = {n.metadata.get(ID_KEY): n.uri for n in mine if n.is_leaf}
                    for g, pid in zip(group, order, strict=True):
                        out[g.index] = client.display(where[pid])
                    advance()
                same = [n for d in mine_docs for n in d.same]
                if same:
                    await writer.refresh_unchanged(same)
                embedded = [n for d in mine_docs for n in d.changed]
                if embedded:
                    vecs = vectors[[row[id(n)] for n in embedded]]
                    await writer.io(client.store.upsert, embedded, vecs)
                stale = [u for d in mine_docs for u in d.stale]
                if stale:
                    await writer.io(client.store.delete, stale)
                await writer.refresh_ancestors([d.target for d in mine_docs] + mine_files)
                for d in mine_docs:
                    await writer.route_directories(d.target)
                if last:
                    await writer.finish()
                else:
                    await to_thread_to_the_end(writer.retag_sync, None, False)

            row = {id(n): i for i, n in enumerate(changed)}
            if 0 < split < len(plan):
                await write_part(plan[:split], last=False)
            await write_part(plan[split:] if split < len(plan) else plan, last=True)
        except BaseException:
            await writer.io(_revert, client, taggers)
            raise
        finally:
            for t in taggers:
                t.end_batch(client.store)
            if store is not None:
                store._fresh = {}
        if store is not None:
            store._remember(written)
    return [out[p.index] for p in plan]


# =========================================================================== passages
#
# The vector-store model of LangChain and LlamaIndex: the caller hands over pre-split texts
# ("passages": loader pages, splitter chunks, LlamaIndex nodes), each addressed by its own id,
# and expects to get them back verbatim by id, to upsert them by id and to delete them by id.
# :class:`PassageStore` maps that model onto the tree:
#
# - passages sharing a source (``metadata[path_key]``: a PDF's pages, a splitter's chunks) become
#   the ordered chunks ``<file>#chunk-<i>`` of one file node ``<base>/<source path>``, ordered
#   by page, then by offset in the page (``start_index`` / a framework's character offset),
#   then by arrival; the file node gets an abstract and overview like any treehop file, so the
#   descent can pick the right document before the right passage;
# - a passage with no source is a leaf ``<base>/<id>``; a passage with no id gets a stable id
#   derived from its text and metadata (re-adding it is an idempotent upsert, not a duplicate);
# - the id is stored on the node (``metadata[ID_KEY]``); an id -> URI index per (client, base)
#   is built from the store on first use and kept up to date by every write made through a
#   PassageStore, and every lookup is checked against the node, so a write that bypassed it
#   (``client.remove``) can never return the wrong passage.

ID_KEY = "treehop_id"
"""Node metadata key holding a passage's caller-facing id."""
ORDER_KEY = "treehop_order"
"""Node metadata key holding a chunk's ``[page, offset]`` order key (``None`` = unknown)."""
INTERNAL_KEYS = frozenset({ID_KEY, ORDER_KEY})
"""Metadata keys a PassageStore adds; stripped from what the frameworks get back."""
PAGE_KEYS = ("page", "page_number", "page_label")
OFFSET_KEYS = ("start_index", "start_char_idx")
_SAFE_ID = re.compile(r"[A-Za-z0-9._@:+=,-]{1,96}")
_HASH_LEN = 16


@dataclass(frozen=True)
class Passage:
    """One pre-split text with its id, metadata and (optionally) its embedding."""

    text: str
    metadata: Mapping[str, Any] = field(default_factory=dict)
    id: str | None = None
    embed_text: str | None = None
    """The text given to the embedder (default: ``text``). LlamaIndex puts the metadata its
    ``excluded_embed_metadata_keys`` allow in front of the text; LangChain embeds the text."""
    vector: Sequence[float] | None = None
    """A precomputed embedding (a LlamaIndex node's ``embedding``); it must come from the
    client's embedder, whose vector space the directories above the passage are embedded in."""
    offset: float | None = None
    """The position of the text inside its source page (character offset), when known."""


def stable_id(text: str, metadata: Mapping[str, Any]) -> str:
    """A deterministic id for a passage that has none: the same text and metadata, the same
    id, so re-running an ingest script upserts instead of duplicating."""
    blob = json.dumps(dict(metadata), sort_keys=True, default=str) + "\x00" + text
    return "doc-" + hashlib.sha1(blob.encode("utf-8")).hexdigest()[:_HASH_LEN]


def id_segment(doc_id: str) -> str:
    """One URI segment for an id: the id itself when it is plain, else a readable prefix and
    a hash (ids may contain ``/``, ``#`` or be very long; the segment must stay injective)."""
    if _SAFE_ID.fullmatch(doc_id) and doc_id not in {".", ".."}:
        return doc_id
    head = re.sub(r"[^A-Za-z0-9._-]+", "_", doc_id)[:40].strip("._") or "id"
    return f"{head}-{hashlib.sha1(doc_id.encode('utf-8')).hexdigest()[:_HASH_LEN]}"


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float) and math.isfinite(value):
        return float(value)
    if isinstance(value, str):
        try:
            out = float(value.strip())
        except ValueError:
            return None
        return out if math.isfinite(out) else None
    return None


def order_key(metadata: Mapping[str, Any], offset: float | None = None) -> list[float | None]:
    """``[page, offset]`` of a chunk from what loaders and splitters write (``None`` = unknown).

    ``page`` (PyPDF, 0-based), ``page_number`` (Unstructured) or a numeric ``page_label``
    (LlamaIndex's PDF reader); the offset from ``start_index`` (LangChain splitters with
    ``add_start_index=True``), ``start_char_idx`` or the caller's ``offset``.
    """
    page = next((n for k in PAGE_KEYS if (n := _number(metadata.get(k))) is not None), None)
    off = offset
    if off is None:
        off = next((n for k in OFFSET_KEYS if (n := _number(metadata.get(k))) is not None), None)
    return [page, off]


def _sort_key(order: Sequence[float | None], rank: tuple[int, int]) -> tuple[Any, ...]:
    page, off = [*list(order), None, None][:2]
    return (
        page is None,
        page if page is not None else 0.0,
        off is None,
        off if off is not None else 0.0,
        rank,
    )


def relative_sources(values: Sequence[str], root: str | None = None) -> list[str]:
    """Make machine paths relative before they become URIs.

    Absolute paths and paths that climb (``../x``) are made relative to ``root`` when given,
    else to the deepest directory common to all of them in this batch (one file: its name).
    Relative paths without ``..`` and URLs are kept. So ``SimpleDirectoryReader("docs")``
    output lands at ``<base>/cli.md``, never at ``<base>/home/<user>/project/docs/cli.md``.
    """
    out = list(values)
    anchored: dict[int, str] = {}
    for i, v in enumerate(values):
        parts = urlsplit(v)
        if parts.scheme in _URL_SCHEMES and parts.netloc:
            continue
        norm = posixpath.normpath(v.replace("\\", "/"))
        drive = norm[:2] if len(norm) >= 2 and _DRIVE.match(norm[:2]) else ""
        body = norm[len(drive) :]
        if posixpath.isabs(body) or body == ".." or body.startswith("../"):
            anchored[i] = body
    if not anchored:
        return out
    fixed: str | None = None
    if root is not None:
        fixed = posixpath.normpath(root.replace("\\", "/"))
        fixed = fixed[2:] if len(fixed) >= 2 and _DRIVE.match(fixed[:2]) else fixed
    # Absolute paths and climbing paths are rooted differently: each kind gets its own
    # common directory.
    kinds: dict[bool, dict[int, str]] = {}
    for i, p in anchored.items():
        kinds.setdefault(posixpath.isabs(p), {})[i] = p
    for is_abs, group in kinds.items():
        base = fixed if fixed is not None and posixpath.isabs(fixed) == is_abs else None
        if base is None:
            base = posixpath.commonpath([posixpath.dirname(p) for p in group.values()])
        for i, p in group.items():
            rel = posixpath.relpath(p, base) if base else p
            # Whatever still climbs out of the root keeps only what lies below the climb.
            segs = [s for s in rel.split("/") if s not in {"", ".", ".."}]
            out[i] = "/".join(segs) or posixpath.basename(p)
    return out


def _absolute_body(value: str) -> str | None:
    """``value`` as :func:`relative_sources` reads an absolute machine path (POSIX, without
    a drive letter); ``None`` for a URL, a relative or a climbing path."""
    parts = urlsplit(value)
    if parts.scheme in _URL_SCHEMES and parts.netloc:
        return None
    norm = posixpath.normpath(value.replace("\\", "/"))
    drive = norm[:2] if len(norm) >= 2 and _DRIVE.match(norm[:2]) else ""
    body = norm[len(drive) :]
    return body if posixpath.isabs(body) else None


def _root_above(body: str, depth: int) -> str | None:
    """The directory ``depth`` path segments above the absolute ``body`` (the root it was made
    relative to when it became a file ``depth`` segments below the base); ``None`` if none."""
    parts = body.split("/")  # "/a/b/c.md" -> ["", "a", "b", "c.md"]
    if depth < 1 or depth >= len(parts):
        return None
    return "/".join(parts[:-depth]) or "/"


def _is_under(body: str, root: str) -> bool:
    return root == "/" or body.startswith(root.rstrip("/") + "/")


_ROOTS: weakref.WeakKeyDictionary[AsyncTreehop, dict[tuple[str, str], set[str]]] = (
    weakref.WeakKeyDictionary()
)
"""Per client, base URI and path key: the directories absolute source paths were made
relative to (:func:`learned_roots`)."""


def learned_roots(client: AsyncTreehop, base: str, path_key: str) -> set[str]:
    """The directories absolute sources (``metadata[path_key]``) under the resolved ``base``
    were made relative to: read once per client from the stored nodes (a file ``n`` segments
    below the base whose source is ``/x/y/a/b.md`` was placed from ``n`` segments above it),
    then kept up to date by :func:`remember_roots`."""
    per_client = _ROOTS.setdefault(client, {})
    roots = per_client.get((base, path_key))
    if roots is not None:
        return roots
    roots = set()
    prefix = base.rstrip("/") + "/"
    for node in client.store.iter_nodes(base):
        raw = node.metadata.get(path_key)
        if not isinstance(raw, str) or not node.uri.startswith(prefix):
            continue
        body = _absolute_body(raw)
        file_uri = node.uri[len(prefix) :].split(urimod.CHUNK_MARK, 1)[0]
        root = None if body is None else _root_above(body, file_uri.count("/") + 1)
        if root is not None:
            roots.add(root)
    per_client[(base, path_key)] = roots
    return roots


def root_for(client: AsyncTreehop, base: str, path_key: str, values: Iterable[str]) -> str | None:
    """Without a given root: the directory an earlier batch made its absolute sources relative
    to, when it holds every absolute source of this batch (the deepest such). So re-adding one
    changed file (its own batch) keeps it where the folder's ingest put it (``<base>/ops/a.md``)
    instead of placing it at ``<base>/a.md``; ``None`` (this batch's own common directory)
    when no earlier root holds them all."""
    bodies = [b for b in map(_absolute_body, values) if b is not None]
    if not bodies:
        return None
    roots = learned_roots(client, base, path_key)
    fits = [r for r in roots if all(_is_under(b, r) for b in bodies)]
    return max(fits, key=len) if fits else None


def remember_roots(
    client: AsyncTreehop,
    base: str,
    path_key: str,
    sources: Mapping[Any, str],
    rel: Mapping[Any, str],
) -> None:
    """Record the directory each absolute source of a batch was made relative to."""
    for key, raw in sources.items():
        body = _absolute_body(raw)
        relative = rel[key]
        if body is None or not body.endswith("/" + relative):
            continue  # not absolute, or a climbing path cut short: no root to learn
        root = _root_above(body, relative.count("/") + 1)
        if root is not None:
            learned_roots(client, base, path_key).add(root)


@dataclass
class _IdIndex:
    uris: dict[str, str] = field(default_factory=dict)
    built_at: int = -1
    """``len(store)`` when the index was last built from the store (-1: never)."""
    seen: tuple[int, int] = (0, 0)
    """The store's ``(generation, commits)`` at that build (:func:`_others_committed`)."""


def _store_counts(store: object) -> tuple[int, int] | None:
    gen, commits = getattr(store, "generation", None), getattr(store, "commits", None)
    return (gen, commits) if type(gen) is int and type(commits) is int else None


def _others_committed(store: object, seen: tuple[int, int]) -> bool:
    """Whether another process committed to ``store`` since ``seen`` (an embedded store's
    generation moved by more than this store object's own commits did). Why: the id
    index is kept in step with this client's writes and rebuilt on a miss only when the
    store's size changed; another process's upsert of a new id and delete of another
    leave the size as it was, and the new id stayed unknown (``get_by_ids`` answered
    without it) until some later write changed the size."""
    now = _store_counts(store)
    return now is not None and now[0] - seen[0] > now[1] - seen[1]


_INDEXES: weakref.WeakKeyDictionary[AsyncTreehop, dict[str, _IdIndex]] = weakref.WeakKeyDictionary()


class PassageStore:
    """Id-addressed passages in one subtree of a treehop tree (see the module notes above).

    Every method is async and runs on the caller's loop; a sync client's integrations run
    them through :meth:`treehop.Treehop.run`. Writes hold the client's write lock, and a
    whole batch is validated before the first write.
    """

    def __init__(
        self,
        client: Treehop | AsyncTreehop,
        *,
        base_uri: str = "viking://resources",
        path_key: str | None = "source",
        source_root: str | None = None,
    ) -> None:
        if not isinstance(client, Treehop | AsyncTreehop):
            raise InvalidQueryError(
                "client must be a treehop.Treehop or treehop.AsyncTreehop, "
                f"got {type(client).__name__}"
            )
        self._client = client.aio if isinstance(client, Treehop) else client
        base = self.client.resolve(base_uri)
        if urimod.CHUNK_MARK in base:
            raise InvalidURIError("base_uri cannot be a chunk URI")
        check_outside_conversations(self.client, base, "base_uri", InvalidURIError)
        self.base = base
        self.base_display = self.client.display(base)
        self.path_key = path_key
        self.source_root = source_root
        self._fresh: dict[str, np.ndarray[Any, Any]] = {}
        """The current write's new texts' vectors (:meth:`_embed_new`), under the write lock."""

    @property
    def client(self) -> AsyncTreehop:
        """The async client, refused once closed (:class:`~treehop.errors.ClientClosedError`).
        Why: a vector store's ``add_texts`` / ``get_by_ids`` reach the store through here, and
        over a closed ``AsyncTreehop`` they kept writing and reading."""
        self._client._check_open()
        return self._client

    def is_empty(self) -> bool:
        """Whether nothing was added under the base yet (its node is not written): a store
        before its first add, whose every query is ``[]`` (a filter's fields, a
        ``target_uri`` cannot be typos there; helpers usage81, usage86)."""
        return self.client.store.get([self.base])[0] is None

    # ------------------------------------------------------------------ the id index
    def _index(self) -> _IdIndex:
        per_client = _INDEXES.setdefault(self.client, {})
        return per_client.setdefault(self.base, _IdIndex())

    def _rebuild(self) -> _IdIndex:
        idx = self._index()
        idx.uris = {
            str(n.metadata[ID_KEY]): n.uri
            for n in self.client.store.iter_nodes(self.base)
            if n.is_leaf and isinstance(n.metadata.get(ID_KEY), str)
        }
        idx.built_at = len(self.client.store)
        idx.seen = _store_counts(self.client.store) or (0, 0)
        return idx

    def _lookup(
        self, ids: Sequence[str], *, uris: bool = False, fresh: bool = False
    ) -> dict[str, Node]:
        """The stored node of each id that exists (checked against the node itself); with
        ``uris`` (reads and deletes, never a write's plan) a passage's URI names it too.

        ``fresh`` (a read outside the write lock, :meth:`aget`): first the consistency check
        every client call starts with (``AsyncTreehop._fresh``). Why: ``get_by_ids`` /
        ``get_nodes(node_ids)`` of a long-lived store answered from the generation it last
        looked at, so after another process's upsert it returned the old text, and after
        that process's ``delete`` the deleted document, while the same store's searches (which
        check) no longer found it. (A write's lookups run under the writer lock, which
        takes the latest commit first.)"""
        if fresh:
            self.client._fresh()
        idx = self._index()
        if idx.built_at < 0:
            idx = self._rebuild()
        found = self._verified(ids, idx)
        store = self.client.store
        if len(found) < len(set(ids)) and (
            idx.built_at != len(store) or _others_committed(store, idx.seen)
        ):
            # Someone wrote around this index (another base, a direct client call): rebuild
            # once, only on a miss, only when the store changed size or another process
            # committed since the last build.
            found = self._verified(ids, self._rebuild())
        if uris and len(found) < len(set(ids)):
            found.update(self._by_uri([i for i in ids if i not in found]))
        return found

    def _by_uri(self, ids: Sequence[str]) -> dict[str, Node]:
        """The passages named by their URI rather than their id. Why: the client's own
        retrievers (LangChain's ``TreehopRetriever``, LlamaIndex's) name a hit by its URI, and
        ``store.delete([doc.id])`` of such a hit deleted nothing, silently (unknown ids are
        ignored); a flat store's retriever returns the ids its store takes. An id that is a
        passage's own id wins (checked first); a URI outside the base, of no passage, or
        malformed stays unknown."""
        uris: dict[str, str] = {}
        for i in ids:
            if not i.startswith(urimod.SCHEME):
                continue
            try:
                uri = self.client.resolve(i)
            except TreehopError:
                continue
            if urimod.is_within(uri, self.base):
                uris[i] = uri
        if not uris:
            return {}
        nodes = self.client.store.get(list(uris.values()))
        return {
            i: n
            for i, n in zip(uris, nodes, strict=True)
            if n is not None and n.is_leaf and isinstance(n.metadata.get(ID_KEY), str)
        }

    def _verified(self, ids: Sequence[str], idx: _IdIndex) -> dict[str, Node]:
        wanted = [i for i in dict.fromkeys(ids) if i in idx.uris]
        nodes = self.client.store.get([idx.uris[i] for i in wanted]) if wanted else []
        out: dict[str, Node] = {}
        for i, node in zip(wanted, nodes, strict=True):
            if node is not None and node.metadata.get(ID_KEY) == i:
                out[i] = node
            else:
                idx.uris.pop(i, None)
        return out

    # ------------------------------------------------------------------ reads
    async def aget(self, ids: Sequence[str]) -> list[Node]:
        """The stored passages of ``ids`` that exist, in the order asked (missing ids skipped)."""
        ids = _check_ids(ids)
        found = await self.client._io(lambda: self._lookup(ids, uris=True, fresh=True))
        # (one node per passage: an id and the URI of the same passage are one document)
        return list({found[i].uri: found[i] for i in dict.fromkeys(ids) if i in found}.values())

    async def aids(self) -> dict[str, str]:
        """Every passage id under the base and its (display) URI."""

        def run() -> dict[str, str]:
            self.client._fresh()
            return {i: self.client.display(u) for i, u in self._rebuild().uris.items()}

        return await self.client._io(run)

    def passage_id(self, node: Node | Mapping[str, Any], uri: str) -> str:
        """The caller-facing id of a stored node or hit: its passage id, else its URI."""
        meta = node.metadata if isinstance(node, Node) else node
        value = meta.get(ID_KEY)
        return value if isinstance(value, str) else uri

    async def aexists(self) -> bool:
        """Whether the base directory exists (an empty store has none)."""
        return (await self.client._io(self.client.store.get, [self.base]))[0] is not None

    # ------------------------------------------------------------------ writes
    def _plan(self, passages: Sequence[Passage]) -> dict[str, Passage]:
        if isinstance(passages, str | bytes | Passage) or not isinstance(passages, Sequence):
            raise IngestError("passages must be a list of Passage objects")
        planned: dict[str, Passage] = {}
        for i, p in enumerate(passages):
            where = f"document {i}"
            if not isinstance(p, Passage):
                raise IngestError(f"{where}: expected a Passage, got {type(p).__name__}")
            if not isinstance(p.text, str) or is_blank(p.text):
                raise IngestError(f"{where}: the text is empty (no visible character)")
            if not isinstance(p.metadata, Mapping):
                raise IngestError(f"{where}: metadata must be a mapping")
            reserved = INTERNAL_KEYS & set(p.metadata)
            if reserved:
                raise IngestError(f"{where}: metadata keys {sorted(reserved)} are reserved")
            _check_metadata(p.metadata, where)
            if p.id is not None and (not isinstance(p.id, str) or not p.id):
                raise IngestError(f"{where}: id must be a non-empty string, got {p.id!r}")
            if p.vector is not None:
                _check_vector(p.vector, where)
            _check_offset(p.offset, where)
            _check_unicode(p, where)
            pid = p.id if p.id is not None else stable_id(p.text, p.metadata)
            # The same id twice in one batch: the later passage wins (an upsert).
            planned.pop(pid, None)
            planned[pid] = Passage(p.text, dict(p.metadata), pid, p.embed_text, p.vector, p.offset)
        return planned

    def _places(self, planned: Mapping[str, Passage]) -> dict[str, str | None]:
        """Each id's file URI (``None``: a stand-alone leaf ``<base>/<id>``)."""
        sources: dict[str, str] = {}
        if self.path_key:
            for pid, p in planned.items():
                raw = p.metadata.get(self.path_key)
                if raw is None:
                    continue
                if not isinstance(raw, str) or not raw.strip():
                    raise InvalidURIError(
                        f"document {pid!r}: metadata[{self.path_key!r}] must be a non-empty "
                        "string path"
                    )
                sources[pid] = raw
        root = self.source_root
        if root is None and sources and self.path_key:
            root = root_for(self.client, self.base, self.path_key, sources.values())
        rel = dict(zip(sources, relative_sources(list(sources.values()), root), strict=True))
        if self.path_key:
            remember_roots(self.client, self.base, self.path_key, sources, rel)
        out: dict[str, str | None] = {}
        for pid in planned:
            if pid not in rel:
                out[pid] = None
                continue
            segs = path_segments(rel[pid])
            if not segs:
                raise InvalidURIError(f"document {pid!r}: its source names no file")
            target = self.base
            for s in segs:
                target = urimod.join(target, s)
            out[pid] = self.client.resolve(self.client.display(target))
        return out

    async def aupsert(
        self,
        passages: Sequence[Passage],
        *,
        tags: str | Sequence[str] | None = None,
        progress: ProgressCallback | None = None,
    ) -> list[str]:
        """Insert or replace passages by id; returns their ids in input order.

        A passage whose text (embedding text) is unchanged keeps its vector; a passage whose
        source changed moves. Raises :class:`~treehop.errors.InvalidURIError` when a source
        path collides with a stand-alone passage or a non-passage node. ``progress`` is
        called as ``progress("embed", done, total)`` after each batch of new texts embedded
        (the long part of a large upsert).
        """
        _check_progress(progress)
        planned = self._plan(passages)
        places = self._places(planned)
        order = [p.id if p.id is not None else stable_id(p.text, p.metadata) for p in passages]
        user_tags = tagmod.user_tags(tags)
        await self._write(planned, places, user_tags, progress=progress)
        return order

    async def awrite_file(
        self,
        file_uri: str,
        passages: Sequence[Passage],
        *,
        tags: Sequence[str] = (),
        progress: ProgressCallback | None = None,
    ) -> list[str]:
        """Make the (resolved) ``file_uri`` exactly these ordered passages, replacing whatever
        was there (a document, or chunks of an earlier version); returns each passage's URI.

        This is how :func:`add_records` stores several records sharing one source (a
        loader's pages, a splitter's chunks): the file is the unit, as for ``add_resource``.
        """
        planned = self._plan(passages)
        order = [p.id if p.id is not None else stable_id(p.text, p.metadata) for p in passages]
        places: dict[str, str | None] = dict.fromkeys(planned, file_uri)
        await self._write(planned, places, list(tags), replace=True, progress=progress)
        found = await self.client._io(self._lookup, order)
        return [self.client.display(found[i].uri) for i in order]

    async def _write(
        self,
        planned: Mapping[str, Passage],
        places: Mapping[str, str | None],
        user_tags: list[str],
        replace: bool = False,
        progress: ProgressCallback | None = None,
    ) -> None:
        async with self.client.writer.lock:
            written = await self._write_locked(
                planned, places, user_tags, replace=replace, progress=progress
            )
            self._remember(written)

    async def _write_locked(
        self,
        planned: Mapping[str, Passage],
        places: Mapping[str, str | None],
        user_tags: list[str],
        replace: bool = False,
        progress: ProgressCallback | None = None,
        deferred: bool = False,
    ) -> list[Node]:
        """:meth:`_write` under the held write lock; returns the nodes written.

        ``deferred`` (a file of :func:`add_records`' batch): the new texts' vectors are in
        :attr:`_fresh` already, and the ancestors' refresh, the save and the id index are
        left to the batch, once for all of its files."""
        client = self.client
        # Each URI this write may make up (a file's, the base of a stand-alone passage),
        # checked as a new URI before anything is written (add_records checked its own
        # placements when it planned them: ``deferred``).
        for uri in {self.base if f is None else f for f in places.values()}:
            urimod.check_new(uri)
        existing = await client._io(self._lookup, list(planned))
        if not replace:
            await client._io(self._check_ids_name_no_other_node, planned)
        if not deferred:
            self._fresh = await self._embed_new(planned, existing, progress)
        old: list[str] = []
        if replace:
            files = {f for f in places.values() if f is not None}
            old = await client._io(
                lambda: [n.uri for f in files for n in client.store.iter_nodes(f)]
            )
        else:
            await client._io(self._check_places, planned, places, existing)
        touched_files = await self._leave_old_places(existing, places)
        written, vectors, stale, groups = await self._build(planned, places, existing, replace)
        touched_files -= set(groups)
        if replace:
            new_uris = {n.uri for n in written}
            stale.extend(u for u in old if u not in new_uris and u not in stale)
        await self._store(written, vectors, stale, user_tags)
        for f in touched_files:
            await self._regroup_after_delete(f)
        if deferred:
            return written
        # Every directory above what was written, re-described once (deepest first).
        await client.writer.refresh_ancestors(
            [n.uri for n in written if n.is_leaf and n.chunk_index is None] + list(groups)
        )
        await client.writer.finish()
        self._fresh = {}
        return written

    async def _embed_new(
        self,
        planned: Mapping[str, Passage],
        existing: Mapping[str, Node],
        progress: ProgressCallback | None,
    ) -> dict[str, np.ndarray[Any, Any]]:
        """The vectors of the batch's new texts, by text hash, embedded :data:`EMBED_BATCH`
        at a time (one model call per batch instead of one per passage; ``progress`` after
        each). Texts with a vector of their own, or unchanged under the same id, are left to
        be reused; a text shared by several passages is embedded once."""
        todo: dict[str, str] = {}
        for pid, p in planned.items():
            if p.vector is not None:
                continue
            text = p.embed_text or p.text
            h = _hash(text)
            old = existing.get(pid)
            if old is None or old.content_hash != h:
                todo.setdefault(h, text)
        items = list(todo.items())
        out: dict[str, np.ndarray[Any, Any]] = {}
        for i in range(0, len(items), EMBED_BATCH):
            part = items[i : i + EMBED_BATCH]
            rows = np.asarray(await self.client._embedder.aembed([t for _, t in part]))
            for (h, _), row in zip(part, rows, strict=True):
                out[h] = row
            if progress is not None:
                report(progress, "embed", min(i + EMBED_BATCH, len(items)), len(items))
        return out

    async def _leave_old_places(
        self, existing: Mapping[str, Node], places: Mapping[str, str | None]
    ) -> set[str]:
        """Passages that move (source changed, or chunk <-> stand-alone) leave their old place
        first, so that their old file is regrouped without them; returns those files."""
        moved = [
            pid
            for pid, node in existing.items()
            if _file_of(node) != places[pid]
            or (places[pid] is None and node.uri != self._leaf_uri(pid))
        ]
        if moved:
            await self.client._io(self.client.store.delete, [existing[pid].uri for pid in moved])
        return {f for pid in moved if (f := _file_of(existing[pid]))}

    async def _build(
        self,
        planned: Mapping[str, Passage],
        places: Mapping[str, str | None],
        existing: Mapping[str, Node],
        replace: bool,
    ) -> tuple[list[Node], list[np.ndarray[Any, Any]], list[str], dict[str, list[str]]]:
        """The nodes (and vectors) of stand-alone passages and of each grouped file; the
        stale URIs the files leave behind; the passages of each file."""
        groups: dict[str, list[str]] = {}
        singles: list[str] = []
        for pid, f in places.items():
            if f is None:
                singles.append(pid)
            else:
                groups.setdefault(f, []).append(pid)
        written: list[Node] = []
        vectors: list[np.ndarray[Any, Any]] = []
        stale: list[str] = []
        for pid in singles:
            node, vec = await self._leaf(pid, planned[pid], existing.get(pid))
            written.append(node)
            vectors.append(vec)
        for f, pids in groups.items():
            nodes, vecs, gone = await self._file(f, [planned[p] for p in pids], replace)
            written.extend(nodes)
            vectors.extend(vecs)
            stale.extend(gone)
        return written, vectors, stale, groups

    async def _store(
        self,
        written: list[Node],
        vectors: list[np.ndarray[Any, Any]],
        stale: list[str],
        user_tags: list[str],
    ) -> None:
        client = self.client
        await to_thread_to_the_end(client.writer.apply_tags, written, user_tags, written, self.base)
        if written:
            await client._io(client.store.upsert, written, np.vstack(vectors))
        if stale:
            await client._io(client.store.delete, stale)

    def _remember(self, written: Sequence[Node]) -> None:
        """Index the written passages by id (the lookup of a later write)."""
        idx = self._index()
        for node in written:
            if node.is_leaf and isinstance(node.metadata.get(ID_KEY), str):
                idx.uris[node.metadata[ID_KEY]] = node.uri
        if idx.built_at >= 0:
            idx.built_at = len(self.client.store)

    def _leaf_uri(self, pid: str) -> str:
        return urimod.join(self.base, id_segment(pid))

    def _other_nodes_named(self, ids: Iterable[str]) -> list[tuple[str, Node]]:
        """The (URI, node) of each id that is the URI of a node under the base that no
        passage store wrote (a file ``treehop index`` wrote, one of its chunks, a directory);
        an id that is not a URI, names nothing, lies outside the base or is a passage's URI
        is left out (a passage: its searches name it by its own id, and a new passage whose
        id is its URI is another document beside it, usage63's rule)."""
        client = self.client
        named: dict[str, str] = {}
        for pid in ids:
            if not pid.startswith(urimod.SCHEME):
                continue
            try:
                uri = client.resolve(pid)
            except TreehopError:
                continue  # (not a URI the store's reads would resolve either)
            if urimod.is_within(uri, self.base):
                named[pid] = uri
        if not named:
            return []
        uris = list(named.values())
        return [
            (uri, node)
            for uri, node in zip(uris, client.store.get(uris), strict=True)
            if node is not None and not isinstance(node.metadata.get(ID_KEY), str)
        ]

    def _check_ids_name_no_other_node(self, planned: Mapping[str, Passage]) -> None:
        """Refuse, before anything is written, an id that is the URI of a node under the base
        that no passage store wrote (a file ``treehop index`` wrote, one of its chunks, a
        directory): the node its searches name by that very id.

        Why (helper leftovers72c; attacks85's open item): the store's searches name such a
        node by its URI, so ``add_documents(docs, ids=["viking://resources/docs/keys.md"])``
        (or adding back Documents a search returned: their ``id`` is that URI) stored a record
        beside the file under the same id. ``similarity_search`` then returned two Documents
        with one id, and ``get_by_ids`` / ``delete`` of it reached only the record. A flat
        store (LangChain's ``InMemoryVectorStore``) keeps one document per id; the file is not
        this store's to replace (re-indexing would bring it back), so the id is refused. An
        id that is a URI of nothing yet, or outside the base, is an ordinary id."""
        client = self.client
        for uri, node in self._other_nodes_named(planned):
            if node.is_leaf:
                what = "a document added another way (treehop index, add_resource)"
                fix = (
                    "give this document another id, or, to change that document, edit its "
                    "file and run treehop index again"
                )
            else:
                what = "a node of the tree that holds others (a directory, a file's chunks)"
                fix = "give this document another id"
            raise InvalidURIError(
                f"id {client.display(uri)} is the URI of {what}; this store's searches and "
                f"get_by_ids name that node by this id, so two documents would share it: {fix}"
            )

    def _check_places(
        self,
        planned: Mapping[str, Passage],
        places: Mapping[str, str | None],
        existing: Mapping[str, Node],
    ) -> None:
        """Refuse a batch that would turn a node of one kind into another, before writing."""
        store = self.client.store
        files = {f for f in places.values() if f is not None}
        leaves = {self._leaf_uri(pid): pid for pid, f in places.items() if f is None}
        for uri, pid in leaves.items():
            if uri in files:
                raise InvalidURIError(
                    f"document {pid!r} (no source) would be stored at {self.client.display(uri)}, "
                    "which is also the path of a source file in this batch"
                )
        targets = [*files, *leaves]
        found = dict(zip(targets, store.get(targets), strict=True)) if targets else {}
        for uri, node in found.items():
            if node is None:
                continue
            if uri in files and (node.is_leaf or not _is_passage_file(store, node)):
                raise InvalidURIError(
                    f"{self.client.display(uri)} already holds "
                    f"{'a document' if node.is_leaf else 'a directory'} that was not added as "
                    "passages of one source; give these passages another source or base_uri"
                )
            if uri in leaves and node.metadata.get(ID_KEY) != leaves[uri]:
                raise InvalidURIError(
                    f"document {leaves[uri]!r} would replace {self.client.display(uri)}, which "
                    "is not that passage; use another id or base_uri"
                )
        # (every ancestor, the base's own included, and a chunked document as a leaf: only
        # a leaf at or below the base was refused, so a base at a chunked file or below any
        # document turned that document into a directory holding passages; each ancestor
        # is judged once, a batch's passages share theirs)
        is_document: dict[str, bool] = {}
        for uri in targets:
            ancestors = urimod.ancestors_of(uri)
            for anc in ancestors:
                if anc in leaves or (anc != uri and anc in files):
                    raise InvalidURIError(
                        f"{self.client.display(uri)} would lie inside another document "
                        f"({self.client.display(anc)})"
                    )
            unjudged = [a for a in ancestors if a not in is_document]
            for a, node in zip(unjudged, store.get(unjudged) if unjudged else [], strict=True):
                is_document[a] = node is not None and (
                    node.is_leaf or (holds_text(store, node) and not _is_passage_file(store, node))
                )
            for a in ancestors:
                if is_document[a]:
                    raise InvalidURIError(
                        f"{self.client.display(uri)} would lie inside the document "
                        f"{self.client.display(a)}"
                    )
        del planned, existing

    async def _vector_for(
        self, p: Passage, text_hash: str, reuse: Mapping[str, np.ndarray[Any, Any]]
    ) -> np.ndarray[Any, Any]:
        if p.vector is not None:
            v = np.asarray(p.vector, dtype=np.float32).ravel()
            return v / float(np.linalg.norm(v))
        if text_hash in reuse:
            return reuse[text_hash]
        fresh = self._fresh.get(text_hash)
        if fresh is not None:
            return fresh
        return np.asarray((await self.client._embedder.aembed([p.embed_text or p.text]))[0])

    async def _leaf(
        self, pid: str, p: Passage, old: Node | None
    ) -> tuple[Node, np.ndarray[Any, Any]]:
        uri = self._leaf_uri(pid)
        text_hash = _hash(p.embed_text or p.text)
        reuse: dict[str, np.ndarray[Any, Any]] = {}
        if old is not None and old.uri == uri and old.content_hash == text_hash:
            reuse[text_hash] = (await self.client._io(self.client.store.get_vectors, [uri]))[0]
        node = self._passage_node(
            uri, urimod.parent_of(uri), pid, p, None, order_key(p.metadata, p.offset)
        )
        node.content_hash = text_hash
        return node, await self._vector_for(p, text_hash, reuse)

    def _passage_node(
        self,
        uri: str,
        parent: str | None,
        pid: str,
        p: Passage,
        chunk_index: int | None,
        order: Sequence[float | None],
    ) -> Node:
        meta: dict[str, Any] = {**p.metadata, ID_KEY: pid}
        if chunk_index is not None:
            meta[ORDER_KEY] = list(order)
        node = finalize(
            Node(
                uri=uri,
                parent_uri=parent,
                context_type=urimod.context_type_of(uri),
                level=Level.CONTENT,
                is_leaf=True,
                abstract=_abstract(p.text),
                content=p.text,
                metadata=meta,
                chunk_index=chunk_index,
            )
        )
        return node

    async def _file(
        self, file_uri: str, new: Sequence[Passage], replace: bool = False
    ) -> tuple[list[Node], list[np.ndarray[Any, Any]], list[str]]:
        """The nodes of one source file after merging ``new`` into its existing chunks (or,
        with ``replace``, instead of them; their vectors are reused when a text is unchanged)."""
        store = self.client.store
        old_kids = [k for k in await self.client._io(store.children, file_uri) if k.is_leaf]
        new_ids = {p.id for p in new}
        keep = [] if replace else [k for k in old_kids if k.metadata.get(ID_KEY) not in new_ids]
        old_vecs: dict[str, np.ndarray[Any, Any]] = {}
        if old_kids:
            vecs = await self.client._io(store.get_vectors, [k.uri for k in old_kids])
            old_vecs = {k.content_hash: v for k, v in zip(old_kids, vecs, strict=True)}
        entries: list[tuple[tuple[Any, ...], Passage, list[float | None]]] = []
        for k in keep:
            pid = k.metadata.get(ID_KEY)
            stored_order = k.metadata.get(ORDER_KEY)
            order = list(stored_order) if isinstance(stored_order, list) else [None, None]
            meta = {m: v for m, v in k.metadata.items() if m not in INTERNAL_KEYS}
            p = Passage(k.content, meta, str(pid) if pid is not None else k.uri)
            entries.append((_sort_key(order, (0, k.chunk_index or 0)), p, order))
        for i, p in enumerate(new):
            order = order_key(p.metadata, p.offset)
            entries.append((_sort_key(order, (1, i)), p, order))
        entries.sort(key=lambda e: e[0])
        nodes: list[Node] = []
        vectors: list[np.ndarray[Any, Any]] = []
        kept_hash = {k.metadata.get(ID_KEY): k.content_hash for k in keep}
        for i, (_, p, order) in enumerate(entries):
            assert p.id is not None
            uri = f"{file_uri}{urimod.CHUNK_MARK}{i}"
            node = self._passage_node(uri, file_uri, p.id, p, i, order)
            text_hash = kept_hash.get(p.id) or _hash(p.embed_text or p.text)
            node.content_hash = text_hash
            nodes.append(node)
            vectors.append(await self._vector_for(p, text_hash, old_vecs))
        file_node = await self._file_node(file_uri, nodes)
        kept = {n.uri for n in nodes}
        gone = [k.uri for k in old_kids if k.uri not in kept]
        return [file_node, *nodes], [await self._dir_vector(file_node), *vectors], gone

    async def _file_node(self, file_uri: str, chunks: Sequence[Node]) -> Node:
        name = file_uri.rsplit("/", 1)[-1]
        text = "\n\n".join(c.content for c in chunks)
        abstract, overview = await asyncio.to_thread(
            summarize,
            self.client.summarizer.summarize_file,
            name,
            text,
            given_text_kind(name, text),
        )
        common: dict[str, Any] = {}
        if chunks:
            first = {k: v for k, v in chunks[0].metadata.items() if k not in INTERNAL_KEYS}
            common = {
                k: v for k, v in first.items() if all(c.metadata.get(k) == v for c in chunks[1:])
            }
        for k in (*PAGE_KEYS, *OFFSET_KEYS):
            if len(chunks) > 1:
                common.pop(k, None)
        return finalize(
            Node(
                uri=file_uri,
                parent_uri=urimod.parent_of(file_uri),
                context_type=urimod.context_type_of(file_uri),
                level=Level.OVERVIEW,
                is_leaf=False,
                abstract=abstract,
                overview=overview,
                metadata={**common, "name": name, "chunks": len(chunks)},
            )
        )

    async def _dir_vector(self, node: Node) -> np.ndarray[Any, Any]:
        old = (await self.client._io(self.client.store.get, [node.uri]))[0]
        if old is not None and old.content_hash == node.content_hash:
            return np.asarray((await self.client._io(self.client.store.get_vectors, [node.uri]))[0])
        return np.asarray((await self.client._embedder.aembed([node.embedding_text()]))[0])

    async def _regroup_after_delete(self, file_uri: str) -> None:
        """Renumber a file's remaining chunks after some left it (or remove the empty file)."""
        store = self.client.store
        kids = [k for k in await self.client._io(store.children, file_uri) if k.is_leaf]
        kids.sort(key=lambda k: k.chunk_index or 0)
        if not kids:
            await self.client._io(store.delete, [file_uri])
            await self._prune(urimod.parent_of(file_uri))
            return
        vecs = await self.client._io(store.get_vectors, [k.uri for k in kids])
        moved: list[Node] = []
        for i, k in enumerate(kids):
            uri = f"{file_uri}{urimod.CHUNK_MARK}{i}"
            moved.append(finalize(k.model_copy(update={"uri": uri, "chunk_index": i}, deep=True)))
            moved[-1].content_hash = k.content_hash
        file_node = await self._file_node(file_uri, moved)
        old = (await self.client._io(store.get, [file_uri]))[0]
        if old is not None:
            file_node.tags = list(old.tags)
        fvec = await self._dir_vector(file_node)
        kept = {m.uri for m in moved}
        gone = [k.uri for k in kids if k.uri not in kept]
        if gone:
            await self.client._io(store.delete, gone)
        await self.client._io(store.upsert, [file_node, *moved], np.vstack([fvec, vecs]))
        idx = self._index()
        for m in moved:
            pid = m.metadata.get(ID_KEY)
            if isinstance(pid, str):
                idx.uris[pid] = m.uri
        await self.client.writer.refresh_ancestors(file_uri)

    async def _prune(self, uri: str | None) -> None:
        """Delete directories left empty by a delete, up to (and including) the base, then
        re-describe what remains above."""
        store = self.client.store
        while (
            uri is not None
            and urimod.parent_of(uri) is not None
            and urimod.is_within(uri, self.base)
        ):
            if await self.client._io(store.children, uri):
                break
            await self.client._io(store.delete, [uri])
            uri = urimod.parent_of(uri)
        if uri is not None and urimod.parent_of(uri) is not None:
            # Re-describe ``uri`` itself and its ancestors (``_refresh_ancestors`` refreshes
            # the ancestors of its argument), unless it is a passage file (handled by caller).
            node = (await self.client._io(store.get, [uri]))[0]
            if node is not None and node.metadata.get("implicit"):
                await self.client.writer.refresh_ancestors(urimod.join(uri, "_"))
            else:
                await self.client.writer.refresh_ancestors(uri)

    async def adelete(self, ids: Sequence[str]) -> int:
        """Delete passages by id; unknown ids are ignored. Returns how many were deleted."""
        ids = _check_ids(ids)
        client = self.client
        async with client.writer.lock:
            asked = await client._io(lambda: self._lookup(ids, uris=True))
            # (keyed by the passage's own id: an id and its URI are one passage)
            found = {str(n.metadata[ID_KEY]): n for n in asked.values()}
            missing = [i for i in dict.fromkeys(ids) if i not in asked]
            others = await client._io(self._other_nodes_named, missing) if missing else []
            if others:
                # (before anything is deleted: the whole call is refused)
                shown = ", ".join(shown_value(client.display(uri)) for uri, _ in others[:3])
                more = f" and {len(others) - 3} more" if len(others) > 3 else ""
                raise InvalidURIError(
                    f"delete: {len(others)} of the ids asked name a node this store did not "
                    f"write ({shown}{more}: stored by treehop index or add_resource, or a "
                    "directory); nothing was deleted. Remove a file with Treehop.remove(<its "
                    "uri>) or delete its source and index the folder again"
                )
            if not found:
                return 0
            await client._io(client.store.delete, [n.uri for n in found.values()])
            idx = self._index()
            for pid in found:
                idx.uris.pop(pid, None)
            files = {f for n in found.values() if (f := _file_of(n)) is not None}
            for f in files:
                await self._regroup_after_delete(f)
            for n in found.values():
                if _file_of(n) is None:
                    await self._prune(urimod.parent_of(n.uri))
            await client._io(client.store.save)
            idx.built_at = len(client.store)
            return len(found)

    async def adelete_where(self, key: str, values: Sequence[Any]) -> int:
        """Delete every passage whose ``metadata[key]`` is one of ``values`` (LlamaIndex's
        ``delete(ref_doc_id)``)."""
        wanted = set(values)

        def scan() -> list[str]:
            return [
                str(n.metadata[ID_KEY])
                for n in self.client.store.iter_nodes(self.base)
                if n.is_leaf and n.metadata.get(key) in wanted and ID_KEY in n.metadata
            ]

        ids = await self.client._io(scan)
        return await self.adelete(ids) if ids else 0

    async def aclear(self) -> int:
        """Delete everything under the base (the base directory too)."""
        client = self.client
        async with client.writer.lock:
            uris = await client._io(lambda: [n.uri for n in client.store.iter_nodes(self.base)])
            n = await client._io(client.store.delete, uris) if uris else 0
            self._index().uris.clear()
            parent = urimod.parent_of(self.base)
            if uris and parent is not None:
                await self._prune(parent)
            await client._io(client.store.save)
            self._index().built_at = len(client.store)
            return int(n)


def _file_of(node: Node) -> str | None:
    return node.parent_uri if node.chunk_index is not None else None


def _is_passage_file(store: Any, node: Node) -> bool:
    kids = store.children(node.uri)
    return bool(kids) and all(k.is_leaf and ID_KEY in k.metadata for k in kids)


def _hash(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def _abstract(text: str, limit: int = 200) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def _check_progress(progress: object) -> None:
    if progress is not None and not callable(progress):
        raise InvalidQueryError("progress must be a callable (stage, done, total) or None")


def _check_ids(ids: Sequence[str]) -> list[str]:
    return check_strings(ids, "ids")


def _check_vector(vector: Sequence[float], where: str) -> None:
    try:
        v = np.asarray(vector, dtype=np.float32).ravel()
    except (TypeError, ValueError) as exc:
        raise IngestError(f"{where}: the embedding must be a list of numbers") from exc
    if not v.size or not np.isfinite(v).all() or not np.linalg.norm(v):
        raise IngestError(f"{where}: the embedding must be finite and non-zero")


# =========================================================================== filter fields
#
# A metadata filter on a field that no stored node has matches nothing, silently: a typo
# (``sorce``) or a provenance key (``score``, ``found_by``: computed per result, never stored)
# would turn a RAG answer into "I don't know". Both integrations check a filter's fields
# against the fields actually stored, and raise a typed error naming the field instead.

_FIELDS: weakref.WeakKeyDictionary[AsyncTreehop, tuple[int, frozenset[str]]] = (
    weakref.WeakKeyDictionary()
)
_LABELS: weakref.WeakKeyDictionary[AsyncTreehop, tuple[int, frozenset[str]]] = (
    weakref.WeakKeyDictionary()
)


def filter_fields(spec: Mapping[str, Any]) -> set[str]:
    """The metadata fields a treehop filter DSL node reads."""
    from ..filters import MetadataFilter

    parsed = MetadataFilter.parse(spec)
    return set(parsed.fields()) if parsed is not None else set()


def _stored_scan(
    client: Treehop | AsyncTreehop,
    cache: weakref.WeakKeyDictionary[AsyncTreehop, tuple[int, frozenset[str]]],
    of_node: Callable[[Node], Iterable[str]],
    refresh: bool,
) -> frozenset[str]:
    """The union of ``of_node`` over every stored node: one scan, then cached per client until
    the store changes size (or ``refresh``)."""
    aclient = client.aio if isinstance(client, Treehop) else client
    n = len(aclient.store)
    cached = cache.get(aclient)
    if cached is not None and cached[0] == n and not refresh:
        return cached[1]
    found: set[str] = set()
    for node in aclient.store.iter_nodes():
        found.update(of_node(node))
    out = frozenset(found)
    cache[aclient] = (n, out)
    return out


def stored_fields(client: Treehop | AsyncTreehop, *, refresh: bool = False) -> frozenset[str]:
    """Every metadata key of every stored node (cached until the store changes size).

    One scan of the store, then a cache; a field missing from the cache triggers one more scan
    before it is reported (metadata can change without the node count changing).
    """
    return _stored_scan(client, _FIELDS, lambda node: node.metadata, refresh)


def stored_tag_labels(client: Treehop | AsyncTreehop, *, refresh: bool = False) -> frozenset[str]:
    """Every tag label of every stored node (``auto:kubernetes`` -> ``kubernetes``), cached
    like :func:`stored_fields` (a label missing from the cache triggers one more scan)."""
    return _stored_scan(
        client, _LABELS, lambda node: (tagmod.label_of(t) for t in node.tags), refresh
    )


def check_tag_labels(
    client: Treehop | AsyncTreehop,
    *tag_filters: str | Sequence[str] | None,
    scope_empty: bool = False,
) -> None:
    """Raise :class:`~treehop.errors.InvalidFilterError` for a tag filter naming a label no
    stored node has: like a metadata field no node has, it is a typo (or a tag that was
    never added) and would match nothing, so it is reported, not answered with ``[]``.
    ``scope_empty``: the caller's scope holds nothing yet (see :func:`check_filter_fields`):
    the labels are checked as labels only."""
    from ..errors import InvalidFilterError

    wanted: set[str] = set()
    for value in tag_filters:
        wanted.update(tagmod.normalize_filter_labels(value))
    if not wanted or scope_empty:
        return
    missing = wanted - stored_tag_labels(client)
    if missing:
        missing -= stored_tag_labels(client, refresh=True)
    if not missing:
        return
    known = sorted(stored_tag_labels(client))
    gone = sorted(missing)  # (each shown cut, redacted: a pasted key as a tag, leftovers65e)
    shown = ", ".join(known[:30]) + (" ..." if len(known) > 30 else "")
    # A vector store keeps a document's metadata as added, ``tags`` included: a tag filter
    # over such documents (``similarity_search(q, tags=[...])``) read node tags and said only
    # "add tags=..." (helper usage70).
    as_metadata = (
        "; a 'tags' metadata field (as vector stores keep a document's metadata) is not the "
        "tags: filter it as metadata ({'tags': ...} in the metadata filter)"
        if "tags" in stored_fields(client)
        else ""
    )
    raise InvalidFilterError(
        f"no stored node has tag(s) [{', '.join(shown_name(t, 100) for t in gone[:10])}"
        f"{' ...' if len(gone) > 10 else ''}], so the tag filter would match nothing; "
        f"tags in this index: {shown or '(none: add tags=... or use a tagger when indexing)'}"
        f"{as_metadata}"
    )


HIDDEN_FIELDS = INTERNAL_KEYS | frozenset({"implicit", "overview_from"})
"""Metadata keys treehop keeps for itself (passage ids and order, implicit directories, where
an overview came from): never listed to a user as fields to filter on."""


def check_filter_fields(
    client: Treehop | AsyncTreehop,
    spec: Mapping[str, Any] | None,
    provenance: Iterable[str] = (),
    *,
    tags: Sequence[str | Sequence[str] | None] = (),
    shown: Iterable[ShownField] = (),
    stored: Iterable[str] = (),
    hidden: Iterable[str] = (),
    scope_empty: bool = False,
) -> None:
    """Raise :class:`~treehop.errors.InvalidFilterError` for a field no stored node has, and
    for a tag filter (each of ``tags``: a ``tags`` / ``tags_all`` value) naming a label no
    stored node has (:func:`check_tag_labels`).

    ``provenance``: keys an integration adds to each result (scores, ``found_by``, ...); a
    filter on one gets a message saying so. ``shown``: keys an integration shows from other
    stored fields (:class:`~treehop.filters.ShownField`; ``spec`` names them before
    :func:`~treehop.filters.show_fields`): one is known where a field it is shown from is.
    ``stored``: provenance names that are stored metadata for this caller (a vector store's
    ``tags``, kept as added): a filter on one that no node has is a missing field, not
    provenance ("cannot filter on ['tags']: provenance ..., filter on ... tags instead").
    ``hidden``: stored keys the caller's framework writes for itself (LlamaIndex's
    ``_node_content``, ``_node_type``, ``doc_id``, ``document_id``), left out of the list of
    stored fields the message offers, as treehop's own are (:data:`HIDDEN_FIELDS`).
    ``scope_empty``: the caller's scope holds nothing yet (a vector store before its first
    add): a field or tag no node has is not a typo there, only a filter on provenance is
    refused. Why (helper usage86): README's chain over ``from_documents([])`` (a glob that
    matched nothing) was refused ``no stored node has metadata field(s) ['start_index'] ...
    stored fields: (none)``, where the same store answers ``[]`` unfiltered and for a
    ``target_uri``, and LangChain's ``InMemoryVectorStore`` / LlamaIndex's
    ``SimpleVectorStore`` answer an empty store's filtered query ``[]``.
    """
    from ..errors import InvalidFilterError
    from ..models import PROVENANCE_KEYS

    if tags:
        check_tag_labels(client, *tags, scope_empty=scope_empty)
    if not spec:
        return
    wanted = filter_fields(spec)
    if scope_empty:
        missing = set(wanted)
    else:
        missing = wanted - stored_fields(client)
        if missing:
            missing -= stored_fields(client, refresh=True)
        for f in shown:
            if f.key in missing and {*f.over, f.fallback} & stored_fields(client):
                missing.discard(f.key)
    if not missing:
        return
    computed = sorted(missing & ((set(PROVENANCE_KEYS) | set(provenance)) - set(stored)))
    if computed:
        raise InvalidFilterError(
            f"cannot filter on {computed}: provenance is computed for each result, not stored "
            "metadata (filter on stored fields, tags or target_uri instead)"
        )
    if scope_empty:
        return
    held = stored_fields(client)
    # The keys the caller shows on its results (LangChain's ``source``, LlamaIndex's
    # ``file_name`` / ``file_path``) are offered too: a filter reads them (helper usage84: a
    # retriever's message listed ``source_path`` but not the ``source`` every Document shows
    # and a filter takes).
    # (offered where a filter on it is accepted: the rule above)
    offered = {f.key for f in shown if {*f.over, f.fallback} & held}
    known = sorted((held - HIDDEN_FIELDS - set(hidden)) | offered)
    # (each name at most 100 characters, at most 30 / 10 of them: a filter on a field of a
    # million characters made a message of a million)
    listed = ", ".join(f"{k:.100}" for k in known[:30]) + (" ..." if len(known) > 30 else "")
    gone = sorted(missing)
    absent = ", ".join(shown_name(k, 100) for k in gone[:10]) + (" ..." if len(gone) > 10 else "")
    raise InvalidFilterError(
        f"no stored node has metadata field(s) [{absent}], so the filter would match "
        f"nothing; stored fields: {listed or '(none)'}"
    )
