"""Treehop hits as LangChain ``Document``s, and LangChain ``Document``s into the tree.

Out: every hit becomes ``Document(id=uri, page_content=..., metadata=...)``. The metadata
carries the node's own metadata (what a loader or :func:`add_documents` stored, such as
``source``) overlaid with the provenance keys in :data:`PROVENANCE_KEYS`, so a program can
always tell *why* a document was returned (global search, child of a directory, sideways tag
hop), by which of the planned queries, and whether the rerank fell back to vector scores. The
provenance keys are always present (``None`` when they do not apply) so downstream code can
index them without ``.get``.

In: :func:`add_documents` places each ``Document`` in the tree by a URI or a path in its
metadata. Everything is validated before anything is written, so a bad document in the middle
of a batch does not leave half the batch ingested.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

from langchain_core.documents import Document

from treehop import AsyncTreehop, MatchedContext, Treehop
from treehop import tags as tagmod
from treehop import uri as urimod
from treehop.errors import IngestError, InvalidQueryError, InvalidURIError
from treehop.ingest.tree_builder import segment

from ._utils import TreehopClient, async_client, call_async, call_sync, check_client

ContentField = Literal["auto", "abstract", "overview", "content"]
CONTENT_FIELDS: tuple[str, ...] = ("auto", "abstract", "overview", "content")

PROVENANCE_KEYS: tuple[str, ...] = (
    "uri",
    "parent_uri",
    "context_type",
    "level",
    "is_leaf",
    "chunk_index",
    "score",
    "vector_score",
    "rerank_score",
    "rerank_fallback",
    "rerank_fallback_reason",
    "found_by",
    "found_via",
    "hop_source",
    "hop_tag",
    "query",
    "matched_queries",
    "tags",
    "abstract",
)
"""Metadata keys every returned ``Document`` has; they override node metadata of that name."""

# The fallback order of each content_field: the chosen text first, then the next richer one,
# so page_content is never empty when the node has any text at all.
_TEXT_ORDER: dict[str, tuple[str, ...]] = {
    "auto": ("content", "overview", "abstract"),
    "content": ("content", "overview", "abstract"),
    "overview": ("overview", "abstract", "content"),
    "abstract": ("abstract", "overview", "content"),
}


def page_content_of(hit: MatchedContext, content_field: str = "auto") -> str:
    """The text of a hit for ``page_content``.

    ``auto`` (the default) gives a leaf's full content and a directory's overview: the most
    useful text for an LLM either way. ``abstract`` gives the one-line L0 summaries (cheap
    context for many hits); ``overview`` the L1 summary.
    """
    order = _TEXT_ORDER.get(content_field)
    if order is None:
        raise InvalidQueryError(
            f"content_field must be one of {', '.join(CONTENT_FIELDS)}, got {content_field!r}"
        )
    for name in order:
        text: str = getattr(hit, name)
        if text:
            return text
    return ""


def provenance_metadata(hit: MatchedContext) -> dict[str, Any]:
    """The provenance of one hit as JSON-friendly values (enums as their string values)."""
    queries = [q.model_dump(mode="json") for q in hit.matched_queries]
    return {
        "uri": hit.uri,
        "parent_uri": hit.parent_uri,
        "context_type": hit.context_type.value,
        "level": int(hit.level),
        "is_leaf": hit.is_leaf,
        "chunk_index": hit.chunk_index,
        "score": float(hit.score),
        "vector_score": None if hit.vector_score is None else float(hit.vector_score),
        "rerank_score": None if hit.rerank_score is None else float(hit.rerank_score),
        "rerank_fallback": hit.rerank_fallback,
        "rerank_fallback_reason": hit.rerank_fallback_reason,
        "found_by": hit.found_by.value,
        "found_via": hit.found_via,
        "hop_source": hit.hop_source,
        "hop_tag": hit.hop_tag,
        "query": hit.matched_queries[0].query if hit.matched_queries else None,
        "matched_queries": queries,
        "tags": list(hit.tags),
        "abstract": hit.abstract,
    }


def context_to_document(hit: MatchedContext, content_field: str = "auto") -> Document:
    """One hit as a ``Document`` whose ``id`` is its (display) URI."""
    metadata = {**hit.metadata, **provenance_metadata(hit)}
    return Document(id=hit.uri, page_content=page_content_of(hit, content_field), metadata=metadata)


# --------------------------------------------------------------------------- ingest


@dataclass(frozen=True)
class _Placement:
    index: int
    target_uri: str
    text: str
    tags: list[str]
    metadata: dict[str, Any]


_DRIVE = re.compile(r"^[A-Za-z]:$")


def _path_segments(value: str) -> list[str]:
    """Split a relative path, an absolute path or a URL into tree segments.

    ``..`` is refused rather than resolved: a document must not be able to climb out of
    ``base_uri`` by what its metadata says.
    """
    parts = urlsplit(value)
    if parts.scheme in {"http", "https", "ftp", "s3", "gs"} and parts.netloc:
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


def _json_safe(value: Any, where: str) -> None:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise IngestError(f"{where}: metadata must be JSON-serialisable ({exc})") from exc


def _plan(
    client: TreehopClient,
    documents: Sequence[Document],
    *,
    uri_key: str | None,
    path_key: str | None,
    base_uri: str,
    tags_key: str | None,
    tags: str | Sequence[str] | None,
    on_duplicate: str,
) -> list[_Placement]:
    if isinstance(documents, (str, bytes, Document)) or not isinstance(documents, Iterable):
        raise IngestError("documents must be a list of langchain Document objects")
    if on_duplicate not in {"error", "number"}:
        raise InvalidQueryError(f"on_duplicate must be 'error' or 'number', got {on_duplicate!r}")
    aclient = async_client(client)
    base = aclient.resolve(base_uri)
    if urimod.CHUNK_MARK in base:
        raise InvalidURIError("base_uri cannot be a chunk URI")
    common_tags = tagmod.parse_tags(tags)
    planned: list[_Placement] = []
    for i, doc in enumerate(documents):
        where = f"document {i}"
        if not isinstance(doc, Document):
            raise IngestError(f"{where}: expected a langchain Document, got {type(doc).__name__}")
        if not doc.page_content.strip():
            raise IngestError(f"{where}: page_content is empty")
        meta = dict(doc.metadata)
        if uri_key and meta.get(uri_key) is not None:
            raw = meta.pop(uri_key)
            if not isinstance(raw, str):
                raise InvalidURIError(f"{where}: metadata[{uri_key!r}] must be a string URI")
            if not raw.startswith(urimod.SCHEME):
                raise InvalidURIError(
                    f"{where}: metadata[{uri_key!r}]={raw!r} is not a viking:// URI "
                    f"(put relative paths in metadata[{path_key!r}] instead)"
                )
            target = aclient.resolve(raw)
        elif path_key and meta.get(path_key) is not None:
            raw = meta[path_key]
            if not isinstance(raw, str):
                raise InvalidURIError(f"{where}: metadata[{path_key!r}] must be a string path")
            segs = _path_segments(raw)
            if not segs:
                raise InvalidURIError(f"{where}: metadata[{path_key!r}]={raw!r} names no file")
            target = base
            for s in segs:
                target = urimod.join(target, s)
            target = aclient.resolve(aclient.display(target))
        elif doc.id:
            target = urimod.join(base, segment(str(doc.id)))
        else:
            raise InvalidURIError(
                f"{where}: no place in the tree: set metadata[{uri_key!r}] (a viking:// URI), "
                f"metadata[{path_key!r}] (a path under {base_uri}) or Document.id"
            )
        if urimod.parent_of(target) is None:
            raise InvalidURIError(f"{where}: {target} is a root; give a path below it")
        if urimod.CHUNK_MARK in target:
            raise InvalidURIError(f"{where}: cannot place a document at a chunk URI ({target})")
        doc_tags = list(common_tags)
        if tags_key and tags_key in meta:
            doc_tags = tagmod.merge(doc_tags, tagmod.parse_tags(meta.pop(tags_key)))
        _json_safe(meta, where)
        for key, value in meta.items():
            if isinstance(value, float) and not math.isfinite(value):
                raise IngestError(f"{where}: metadata[{key!r}] is not a finite number")
        planned.append(_Placement(i, target, doc.page_content, doc_tags, meta))
    return _dedupe(planned, on_duplicate)


def _dedupe(planned: list[_Placement], on_duplicate: str) -> list[_Placement]:
    by_target: dict[str, list[_Placement]] = {}
    for p in planned:
        by_target.setdefault(p.target_uri, []).append(p)
    uris = set(by_target)
    out: list[_Placement] = []
    for target, group in by_target.items():
        # A document placed inside another document's path would turn that file into a
        # directory; checked through each URI's ancestors, O(documents x depth).
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
                "give each a distinct uri/source, or pass on_duplicate='number' to store them "
                "as numbered parts of that path (treehop splits long texts itself, so whole "
                "documents need no pre-splitting)"
            )
        width = len(str(len(group)))
        for n, p in enumerate(group, start=1):
            out.append(
                _Placement(
                    p.index, urimod.join(target, f"part-{n:0{width}d}"), p.text, p.tags, p.metadata
                )
            )
    return sorted(out, key=lambda p: p.index)


def _as_text(text: str) -> str:
    # add_resource treats a one-line string naming an existing file as a path; a document's
    # text must never be read as a path (a document saying "setup.py" would ingest that file).
    return text if "\n" in text else text + "\n"


def _supports_metadata(client: TreehopClient) -> bool:
    try:
        params = inspect.signature(async_client(client).add_resource).parameters
    except (TypeError, ValueError):  # pragma: no cover - builtins only
        return False
    return "metadata" in params


def _stamp_metadata(client: TreehopClient, root_uri: str, metadata: Mapping[str, Any]) -> None:
    """Write a document's metadata onto every node its text became (file and chunks).

    Needed while ``add_resource`` takes no ``metadata=``: the nodes are re-upserted with their
    own vectors, so nothing is re-embedded. Structural keys the builder wrote (``chunks``,
    ``chunk_title``) are kept; the document's keys win over the builder's ``name``/``kind``.
    """
    if not metadata:
        return
    store = async_client(client).store
    nodes = list(store.iter_nodes(root_uri))
    if not nodes:
        return
    for n in nodes:
        n.metadata = {**n.metadata, **metadata}
    store.upsert(nodes, store.get_vectors([n.uri for n in nodes]))
    store.save()


def _kwargs(p: _Placement, native_metadata: bool) -> dict[str, Any]:
    kw: dict[str, Any] = {
        "target_uri": p.target_uri,
        "tags": p.tags or None,
        "name": p.target_uri.rsplit("/", 1)[-1],
    }
    if native_metadata and p.metadata:
        kw["metadata"] = p.metadata
    return kw


def add_documents(
    client: Treehop | AsyncTreehop,
    documents: Sequence[Document],
    *,
    uri_key: str | None = "uri",
    path_key: str | None = "source",
    base_uri: str = "viking://resources",
    tags_key: str | None = "tags",
    tags: str | Sequence[str] | None = None,
    on_duplicate: Literal["error", "number"] = "error",
) -> list[str]:
    """Ingest LangChain ``Document``s into the tree; returns the URI of each, in order.

    Each document is placed by, in this order: ``metadata[uri_key]`` (a full ``viking://`` URI),
    ``metadata[path_key]`` (a path or URL, placed under ``base_uri`` segment by segment: the
    ``source`` a LangChain loader writes), or ``Document.id``. ``metadata[tags_key]`` (a list or
    ``a;b``) and ``tags`` become user tags. The rest of the metadata is stored on the nodes, so
    ``metadata_filter`` can select on it and retrieved ``Document``s carry it back.

    Treehop summarises and chunks texts itself, so pass whole documents. Several documents
    mapping to one path raise :class:`~treehop.errors.InvalidURIError` unless
    ``on_duplicate="number"``, which stores them as ``<path>/part-1``, ``part-2``, ... .
    Re-adding a document re-embeds it only if its text changed.
    """
    client = check_client(client)
    plan = _plan(
        client,
        documents,
        uri_key=uri_key,
        path_key=path_key,
        base_uri=base_uri,
        tags_key=tags_key,
        tags=tags,
        on_duplicate=on_duplicate,
    )
    native = _supports_metadata(client)
    aclient = async_client(client)
    out: list[str] = []
    for p in plan:
        res = call_sync(client, "add_resource", _as_text(p.text), **_kwargs(p, native))
        if not native:
            _stamp_metadata(client, res.root_uri, p.metadata)
        out.append(aclient.display(res.root_uri))
    return out


async def aadd_documents(
    client: Treehop | AsyncTreehop,
    documents: Sequence[Document],
    *,
    uri_key: str | None = "uri",
    path_key: str | None = "source",
    base_uri: str = "viking://resources",
    tags_key: str | None = "tags",
    tags: str | Sequence[str] | None = None,
    on_duplicate: Literal["error", "number"] = "error",
) -> list[str]:
    """The async twin of :func:`add_documents` (embedding is awaited, never blocking the loop)."""
    client = check_client(client)
    plan = _plan(
        client,
        documents,
        uri_key=uri_key,
        path_key=path_key,
        base_uri=base_uri,
        tags_key=tags_key,
        tags=tags,
        on_duplicate=on_duplicate,
    )
    native = _supports_metadata(client)
    aclient = async_client(client)
    out: list[str] = []
    for p in plan:
        res = await call_async(client, "add_resource", _as_text(p.text), **_kwargs(p, native))
        if not native:
            await asyncio.to_thread(_stamp_metadata, client, res.root_uri, p.metadata)
        out.append(aclient.display(res.root_uri))
    return out
