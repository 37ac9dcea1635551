"""Ingest LlamaIndex ``Document``s (or nodes) into the treehop tree.

Each document becomes one file node of the tree (treehop summarises it and splits long texts into
chunks itself, so pass whole documents rather than pre-split nodes). Its place comes from its
metadata or its id; its metadata is stored on the nodes so that ``MetadataFilters`` select on it
and retrieved nodes carry it back; its LlamaIndex id is kept as ``ref_doc_id``, so retrieved
nodes point back to their source document (``node.ref_doc_id``) as in any LlamaIndex index.

Everything is validated before anything is written: a bad document in the middle of a batch
does not leave half the batch ingested.
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

from llama_index.core.schema import BaseNode, MetadataMode

from treehop import tags as tagmod
from treehop import uri as urimod
from treehop.errors import IngestError, InvalidQueryError, InvalidURIError
from treehop.ingest.tree_builder import segment

from ._client import TreehopClient, async_client, call_async, call_sync, check_client
from .nodes import REF_DOC_ID_KEY


@dataclass(frozen=True)
class _Placement:
    index: int
    target_uri: str
    text: str
    tags: list[str]
    metadata: dict[str, Any]


_DRIVE = re.compile(r"^[A-Za-z]:$")


def _path_segments(value: str) -> list[str]:
    """Split a path or URL into tree segments; ``..`` is refused, never resolved."""
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


def _check_metadata(meta: Mapping[str, Any], where: str) -> None:
    try:
        json.dumps(meta, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise IngestError(f"{where}: metadata must be JSON-serialisable ({exc})") from exc
    for key, value in meta.items():
        if isinstance(value, float) and not math.isfinite(value):
            raise IngestError(f"{where}: metadata[{key!r}] is not a finite number")


def _plan(
    client: TreehopClient,
    documents: Sequence[BaseNode],
    *,
    uri_key: str | None,
    path_key: str | None,
    base_uri: str,
    tags_key: str | None,
    tags: str | Sequence[str] | None,
    on_duplicate: str,
) -> list[_Placement]:
    if isinstance(documents, str | bytes | BaseNode) or not isinstance(documents, Iterable):
        raise IngestError("documents must be a list of llama_index Documents or nodes")
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
        if not isinstance(doc, BaseNode):
            raise IngestError(
                f"{where}: expected a llama_index Document or node, got {type(doc).__name__}"
            )
        text = doc.get_content(metadata_mode=MetadataMode.NONE)
        if not text.strip():
            raise IngestError(f"{where}: the text is empty")
        meta = dict(doc.metadata)
        if uri_key and meta.get(uri_key) is not None:
            raw = meta.pop(uri_key)
            if not isinstance(raw, str) or not raw.startswith(urimod.SCHEME):
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
        else:
            target = urimod.join(base, segment(doc.node_id))
        if urimod.parent_of(target) is None:
            raise InvalidURIError(f"{where}: {target} is a root; give a path below it")
        if urimod.CHUNK_MARK in target:
            raise InvalidURIError(f"{where}: cannot place a document at a chunk URI ({target})")
        doc_tags = list(common_tags)
        if tags_key and tags_key in meta:
            doc_tags = tagmod.merge(doc_tags, tagmod.parse_tags(meta.pop(tags_key)))
        meta[REF_DOC_ID_KEY] = doc.ref_doc_id or doc.node_id
        _check_metadata(meta, where)
        planned.append(_Placement(i, target, text, doc_tags, meta))
    return _dedupe(planned, on_duplicate)


def _dedupe(planned: list[_Placement], on_duplicate: str) -> list[_Placement]:
    by_target: dict[str, list[_Placement]] = {}
    for p in planned:
        by_target.setdefault(p.target_uri, []).append(p)
    uris = set(by_target)
    out: list[_Placement] = []
    for target, group in by_target.items():
        # A document placed inside another document's path would turn that file into a
        # directory.
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
                f"documents {', '.join(str(p.index) for p in group)} all map to {target}; give "
                "each a distinct uri/path, or pass on_duplicate='number' to store them as "
                "numbered parts of that path (treehop splits long texts itself, so whole "
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
    own vectors, so nothing is re-embedded.
    """
    store = async_client(client).store
    nodes = list(store.iter_nodes(root_uri))
    if not nodes or not metadata:
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
    if native_metadata:
        kw["metadata"] = p.metadata
    return kw


def add_documents(
    client: TreehopClient,
    documents: Sequence[BaseNode],
    *,
    uri_key: str | None = "uri",
    path_key: str | None = "file_path",
    base_uri: str = "viking://resources",
    tags_key: str | None = "tags",
    tags: str | Sequence[str] | None = None,
    on_duplicate: Literal["error", "number"] = "error",
) -> list[str]:
    """Ingest LlamaIndex ``Document``s (or nodes); return the URI of each, in order.

    Each document is placed by, in this order: ``metadata[uri_key]`` (a full ``viking://``
    URI), ``metadata[path_key]`` (a path or URL placed under ``base_uri`` segment by segment;
    ``file_path`` is what ``SimpleDirectoryReader`` writes), or the document's id.
    ``metadata[tags_key]`` (a list or ``a;b``) and ``tags`` become user tags. The rest of the
    metadata is stored on the nodes. Several documents mapping to one path raise
    :class:`~treehop.errors.InvalidURIError` unless ``on_duplicate="number"``, which stores them
    as ``<path>/part-1``, ``part-2``, ... . Re-adding a document re-embeds it only if its text
    changed.
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
    client: TreehopClient,
    documents: Sequence[BaseNode],
    *,
    uri_key: str | None = "uri",
    path_key: str | None = "file_path",
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
