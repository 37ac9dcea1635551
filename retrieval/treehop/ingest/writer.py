"""The write side of the tree: :class:`TreeWriter` turns files, texts and built nodes into
stored, tagged, embedded nodes, keeps directory summaries current, and removes subtrees.

Why a class apart from the client: the client answers queries and validates arguments; every
write (``add_resource``, memories, passages, re-tagging, removal) goes through one writer that
owns the store, the embedder, the tagger, the summarizer and the write lock, so the rules of a
write (embed only what changed, tag new leaves against the index's statistics, re-describe the
directories above, save once) are written once.

Incremental re-add: a directory's files are listed with their size and mtime first and compared
with a manifest saved with the index (per target: relative path, size, mtime, a hash of the
text). A file whose size and mtime match is not read at all; one whose stat changed is read and
hashed, and kept when its text is the same. Only new or changed files are parsed, summarised,
tagged and embedded; only directories with a change below them are re-described. The manifest
also records how the nodes were built (chunk size, summarizer, user tags, metadata, tagger):
when any of it differs, the whole directory is rebuilt as on a first add.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, cast

import numpy as np

from .. import tags as tagmod
from .. import uri as urimod
from ..embedders.base import Embedder
from ..errors import NotFoundError
from ..models import ContextType, Level, Node
from ..stores.base import IncrementalStore, VectorStore
from ..tagging import Tagger, assign_tags
from .loaders import FileEntry, LoadedFile, LoadReport, read_file, scan
from .summaries import Summarizer, is_readme
from .tree_builder import (
    _ESCAPE_TABLE,
    BuiltTree,
    KeptFile,
    TreeBuilder,
    finalize,
    no_files_error,
    segment,
    summarize_ancestor,
)

ProgressCallback = Callable[[str, int, int], None]
DIRECTORY_VECTORS = ("summary", "centroid", "mixed")
"""How a directory's vector is made: its summary's embedding, the centroid of its children's
vectors, or both added (see :meth:`TreeWriter.route_directories`)."""
EMBED_BATCH = 64
MANIFEST_VERSION = 1
RACY_NS = 2_000_000_000
"""A file modified less than this before the manifest was written may have changed again
within the same mtime tick: its stat is not trusted and its text is hashed (git's "racy")."""
_T = TypeVar("_T")


@dataclass
class AddResult:
    """What one ``add_resource`` call did."""

    root_uri: str
    directories: int = 0
    files: int = 0
    chunks: int = 0
    embedded: int = 0
    unchanged: int = 0
    deleted: int = 0
    skipped_binary: list[str] = field(default_factory=list)
    skipped_unreadable: list[str] = field(default_factory=list)
    skipped_other: list[str] = field(default_factory=list)
    skipped_dirs: list[str] = field(default_factory=list)
    """Directories not descended into: tool folders (``venv``, ``node_modules``, ``.git``...),
    hidden folders and folders whose name is not valid UTF-8."""
    skipped_hidden: list[str] = field(default_factory=list)
    """Hidden files (``.env``, ``.DS_Store``...)."""
    skipped_names: list[str] = field(default_factory=list)
    """Files whose name is not valid UTF-8 (shown with ``\\xNN`` escapes)."""
    elapsed_s: float = 0.0
    read: int = 0
    """Files read in this call (an incremental re-add skips unchanged files unread)."""

    @property
    def skipped(self) -> int:
        """How many files and directories were skipped, for every reason."""
        return (
            len(self.skipped_binary)
            + len(self.skipped_unreadable)
            + len(self.skipped_other)
            + len(self.skipped_dirs)
            + len(self.skipped_hidden)
            + len(self.skipped_names)
        )


@dataclass(frozen=True)
class AddCall:
    """What one ``add_resource`` call asks, beyond the source and the target."""

    user_tags: list[str]
    metadata: Mapping[str, Any]
    progress: ProgressCallback | None
    t0: float
    name: str = ""
    """The document name of an added text."""


@dataclass
class _Manifest:
    """What the last add of a directory read: relpath -> (size, mtime_ns, text hash)."""

    fingerprint: str = ""
    written_ns: int = 0
    files: dict[str, tuple[int, int, str]] = field(default_factory=dict)

    def encode(self) -> bytes:
        # One line per file: names cannot hold tabs or newlines (loaders refuse control
        # characters), and a line format parses ~5x faster than JSON for 100k files.
        head = json.dumps(
            {"version": MANIFEST_VERSION, "fingerprint": self.fingerprint, "at": self.written_ns}
        )
        lines = [f"{r}\t{s}\t{m}\t{h}" for r, (s, m, h) in self.files.items()]
        return "\n".join([head, *lines]).encode("utf-8")

    @classmethod
    def decode(cls, raw: bytes | None) -> _Manifest:
        """A manifest, or an empty one when it is missing or unreadable (a full rebuild is
        always correct, so a damaged manifest costs time, never data)."""
        if not raw:
            return cls()
        try:
            head, *lines = raw.decode("utf-8").split("\n")
            meta = json.loads(head)
            if meta.get("version") != MANIFEST_VERSION:
                return cls()
            files: dict[str, tuple[int, int, str]] = {}
            for line in lines:
                rel, size, mtime, digest = line.split("\t")
                files[rel] = (int(size), int(mtime), digest)
            return cls(str(meta["fingerprint"]), int(meta["at"]), files)
        except (ValueError, KeyError, TypeError, AttributeError):
            return cls()


@dataclass
class _Plan:
    """An incremental re-add: what to read, what to keep, what to delete."""

    files: list[LoadedFile | KeptFile]
    kept_dirs: dict[str, str]
    kept_files: set[str]
    """URIs of the file nodes kept as stored (their chunks are kept with them)."""
    live_dirs: set[str]
    """URIs of every directory that still holds a file."""
    hashes: dict[str, tuple[int, int, str]]
    report: LoadReport
    read: int
    children: dict[str, list[Node]] = field(default_factory=dict)
    """Stored children of the directories re-described (read once, for summaries and tags)."""


def _text_hash(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()


class TreeWriter:
    """Writes the tree: ingest, memories and passages, re-tagging, removal.

    ``store``, ``embedder``, ``summarizer`` and ``tagger`` are the client's; ``lock`` is the one
    write lock of the client (readers never take it).
    """

    def __init__(
        self,
        store: VectorStore,
        embedder: Embedder,
        *,
        summarizer: Summarizer,
        tagger: Tagger | None,
        chunk_chars: int = 1000,
        retag_all_below: int = 1000,
        directory_vectors: str = "summary",
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.summarizer = summarizer
        self.tagger = tagger
        self.builder = TreeBuilder(summarizer, chunk_chars=chunk_chars)
        self.retag_all_below = retag_all_below
        self.directory_vectors = directory_vectors
        self.lock = asyncio.Lock()

    async def io(self, fn: Callable[..., _T], *args: Any) -> _T:
        """Call the store: directly for in-process stores, in a worker thread for remote ones
        (their SDKs are blocking and would stall the event loop)."""
        if self.store.capabilities.remote:
            return await asyncio.to_thread(fn, *args)
        return fn(*args)

    # ------------------------------------------------------------------ add_resource
    async def add(self, source: Path | str, target: str, call: AddCall) -> AddResult:
        """Ingest a directory (incrementally), a file, or a text (``str``) at ``target``."""
        ctype = urimod.context_type_of(target)
        if isinstance(source, str) or source.is_file():
            b = self.builder
            built = await asyncio.to_thread(
                *(
                    (b.build_text, source, target, ctype, call.name)
                    if isinstance(source, str)
                    else (b.build_directory, source, target, ctype)
                )
            )
            async with self.lock:
                return await self.write(built, target, call)
        return await self._add_directory(source, target, ctype, call)

    async def _add_directory(
        self, path: Path, target: str, ctype: ContextType, call: AddCall
    ) -> AddResult:
        user_tags, metadata = call.user_tags, call.metadata
        fingerprint = self._fingerprint(target, user_tags, metadata)
        async with self.lock:
            manifest = _Manifest.decode(await self.io(self.store.get_state, _manifest_key(target)))
            if manifest.fingerprint != fingerprint:
                manifest = _Manifest()
            old_uris = await self.io(self._stored_uris, target)
            plan = await asyncio.to_thread(self._plan, path, target, manifest, old_uris)
            built = BuiltTree(report=plan.report)  # nothing changed: no node to rebuild
            if plan.files:
                built = await asyncio.to_thread(
                    self.builder.build_tree,
                    path.name,
                    target,
                    ctype,
                    plan.files,
                    plan.kept_dirs,
                    plan.report,
                )
            res = await self.write(built, target, call, plan=plan, old_uris=old_uris)
            fresh = _Manifest(fingerprint, time.time_ns(), plan.hashes)
            await self.io(self.store.put_state, _manifest_key(target), fresh.encode())
            return res

    def _fingerprint(self, target: str, user_tags: list[str], metadata: Mapping[str, Any]) -> str:
        """How this call builds nodes: a manifest made under other settings is not reused."""
        b = self.builder
        how = {
            "target": target,
            "chunk_chars": b.chunk_chars,
            "leaf_chars": b.leaf_chars,
            "max_file_bytes": b.max_file_bytes,
            "summarizer": f"{type(self.summarizer).__qualname__}:"
            f"{getattr(self.summarizer, 'name', '')}",
            "tagger": type(self.tagger).__qualname__ if self.tagger is not None else None,
            "user_tags": sorted(user_tags),
            "metadata": json.dumps(dict(metadata), sort_keys=True, default=repr),
        }
        return hashlib.sha1(json.dumps(how, sort_keys=True).encode()).hexdigest()

    def _stored_uris(self, target: str) -> set[str]:
        if isinstance(self.store, IncrementalStore):
            return set(self.store.iter_uris(target))
        return {n.uri for n in self.store.iter_nodes(target)}

    def _plan(self, root: Path, target: str, manifest: _Manifest, old_uris: set[str]) -> _Plan:
        """Stat every file, compare with the manifest, read only what may have changed."""
        entries, report = scan(root, self.builder.max_file_bytes)
        uris = _UriMap(target)
        uri_of = {e.relpath: uris.file(e.relpath) for e in entries}
        kept = {e.relpath for e in entries if uri_of[e.relpath] in old_uris}
        same, loaded, hashes = self._read_changed(entries, manifest, kept, report)
        if not hashes:
            raise no_files_error(root, report)
        dirty = _all_dirs([*loaded, *(set(manifest.files) - set(hashes))])
        self._read_dirty_readmes(entries, same, dirty, loaded, report)
        # The stored children of every directory to re-describe, read once: their abstracts
        # feed the summaries and their tags the tagger's directory aggregation.
        children = {uris.dir(d): self.store.children(uris.dir(d)) for d in dirty}
        abstracts = {k.uri: k.abstract for kids in children.values() for k in kids}
        kept_dirs = self._kept_dirs(uris, same, dirty, abstracts)
        files: list[LoadedFile | KeptFile] = []
        in_dirty = {r for r in same if r.rpartition("/")[0] in dirty}
        for e in entries:
            rel = e.relpath
            if rel in loaded:
                files.append(loaded[rel])
            elif rel in in_dirty:
                files.append(KeptFile(rel, abstracts.get(uri_of[rel], "")))
        kept_files = {uri_of[r] for r in same}
        live = {uris.dir(d) for d in _all_dirs(hashes)}
        return _Plan(files, kept_dirs, kept_files, live, hashes, report, len(loaded), children)

    def _read_changed(
        self,
        entries: Sequence[FileEntry],
        manifest: _Manifest,
        stored: set[str],
        report: LoadReport,
    ) -> tuple[set[str], dict[str, LoadedFile], dict[str, tuple[int, int, str]]]:
        """Files kept unread (stat as in the manifest, node stored), files read and kept (same
        text), files read to rebuild; and the new manifest entries."""
        same = {e.relpath for e in entries if e.relpath in stored and _unchanged(e, manifest)}
        loaded: dict[str, LoadedFile] = {}
        hashes: dict[str, tuple[int, int, str]] = {}
        for e in entries:
            if e.relpath in same:
                hashes[e.relpath] = manifest.files[e.relpath]
                continue
            f = read_file(Path(e.path), e.relpath, report, self.builder.max_file_bytes, e.size)
            if f is None:
                continue
            digest = _text_hash(f.text)
            hashes[e.relpath] = (e.size, e.mtime_ns, digest)
            old = manifest.files.get(e.relpath)
            if old is not None and old[2] == digest and e.relpath in stored:
                same.add(e.relpath)  # touched, not changed
            else:
                loaded[e.relpath] = f
        return same, loaded, hashes

    def _read_dirty_readmes(
        self,
        entries: Sequence[FileEntry],
        same: set[str],
        dirty: set[str],
        loaded: dict[str, LoadedFile],
        report: LoadReport,
    ) -> None:
        """A changed directory is re-described from its README's text: read it if kept."""
        for e in entries:
            d = e.relpath.rpartition("/")[0]
            if e.relpath in same and d in dirty and is_readme(e.relpath.rsplit("/", 1)[-1]):
                f = read_file(Path(e.path), e.relpath, report, self.builder.max_file_bytes, e.size)
                if f is not None:
                    loaded[e.relpath] = f
                    same.discard(e.relpath)

    @staticmethod
    def _kept_dirs(
        uris: _UriMap, same: set[str], dirty: set[str], abstracts: Mapping[str, str]
    ) -> dict[str, str]:
        """Directories with nothing changed below them whose parent is re-described: their
        stored abstract stands for them (the walk below them is not needed)."""
        clean = _all_dirs(same) - dirty
        top = {d: uris.dir(d) for d in clean if d.rpartition("/")[0] in dirty}
        return {d: abstracts.get(u, "") for d, u in top.items()}

    # ------------------------------------------------------------------ writing nodes
    async def write(
        self,
        built: BuiltTree,
        target: str,
        call: AddCall,
        *,
        plan: _Plan | None = None,
        old_uris: set[str] | None = None,
    ) -> AddResult:
        """Store a built tree at ``target`` (the caller holds :attr:`lock`): embed only nodes
        whose text changed, delete stored nodes the tree no longer has, re-describe the
        directories above, save."""
        user_tags, metadata = call.user_tags, call.metadata
        if metadata:
            for n in built.nodes:
                n.metadata = {**n.metadata, **dict(metadata)}
        res = _result(target, built)
        nodes = built.nodes
        if plan is None:
            old = await self.io(self._stored_hashes, target)
            wanted = {n.uri for n in nodes}
            stale = [u for u in old if u not in wanted]
        else:
            assert old_uris is not None
            old = await self.io(self._hashes_of, [n.uri for n in nodes])
            stale, kept_chunks = _stale(old_uris, nodes, plan)
            res.files = len(plan.hashes)
            res.chunks = built.chunks + kept_chunks
            res.directories = len(plan.live_dirs)
            res.read = plan.read
        changed = [n for n in nodes if old.get(n.uri) != n.content_hash]
        same = [n for n in nodes if old.get(n.uri) == n.content_hash]
        kids = plan.children if plan is not None else {}
        await asyncio.to_thread(self.apply_tags, nodes, user_tags, changed, target, kids)
        vectors = await self.embed_nodes(changed, call.progress)
        if changed:
            await self.io(self.store.upsert, changed, vectors)
        if same:
            # Text unchanged: keep vectors, refresh tags/metadata without re-embedding.
            await self.refresh_unchanged(same)
        if stale:
            res.deleted = await self.io(self.store.delete, stale)
        res.embedded = len(changed)
        res.unchanged = len(same) + (len(old_uris or ()) - len(stale) - len(old))
        await self.refresh_ancestors(target)
        await self.route_directories(target)
        await self.finish()
        res.elapsed_s = time.perf_counter() - call.t0
        return res

    async def finish(self) -> None:
        """End a write: re-tag a small index whole, then save once."""
        if self.tagger is not None and len(self.store) <= self.retag_all_below:
            # Keyword statistics moved with this batch; on a small index re-extracting every
            # node's tags is cheap (~1.5 ms a leaf) and keeps tags independent of ingest order.
            await asyncio.to_thread(self.retag_sync, None, False)
        await self.io(self.store.save)

    def _stored_hashes(self, target: str) -> dict[str, str]:
        """``{uri: content_hash}`` under ``target``; cheap on stores that can skip parsing."""
        if isinstance(self.store, IncrementalStore):
            return dict(self.store.content_hashes(target))
        return {n.uri: n.content_hash for n in self.store.iter_nodes(target)}

    def _hashes_of(self, uris: Sequence[str]) -> dict[str, str]:
        found = self.store.get(list(uris))
        return {n.uri: n.content_hash for n in found if n is not None}

    async def write_nodes(
        self,
        nodes: Sequence[Node],
        *,
        delete: Sequence[str] = (),
        user_tags: Sequence[str] = (),
        prune_below: str | None = None,
    ) -> int:
        """Store explicitly built nodes (and delete ``delete``) in one locked write.

        Only nodes whose text changed are embedded; the directories above the written nodes
        are created or re-described from their children, as ``add_resource`` does. With
        ``prune_below``, directories strictly inside it that a deletion left empty are removed
        too. Returns the number of nodes embedded.
        """
        nodes = [finalize(n) for n in nodes]
        uris = {n.uri for n in nodes}
        async with self.lock:
            old = await self.io(self.store.get, [n.uri for n in nodes])
            fresh = [
                o is None or o.content_hash != n.content_hash
                for n, o in zip(nodes, old, strict=True)
            ]
            changed = [n for n, f in zip(nodes, fresh, strict=True) if f]
            same = [n for n, f in zip(nodes, fresh, strict=True) if not f]
            tops = [n for n in nodes if n.parent_uri not in uris]
            if nodes:
                await asyncio.to_thread(
                    self.apply_tags, list(nodes), list(user_tags), changed, tops[0].uri
                )
            vectors = await self.embed_nodes(changed, None)
            if changed:
                await self.io(self.store.upsert, changed, vectors)
            if same:
                await self.refresh_unchanged(same)
            gone = list(delete)
            if gone:
                await self.io(self.store.delete, gone)
            if gone and prune_below is not None:
                gone += await self.io(_prune_empty, self.store, gone, prune_below)
            await self._refresh_after(tops, gone, uris)
            await self.finish()
            return len(changed)

    async def _refresh_after(
        self, tops: Sequence[Node], gone: Sequence[str], uris: set[str]
    ) -> None:
        """Re-describe, once each, the parents of what was written and of what was deleted."""
        refreshed: set[str] = set()
        for top in tops:
            parent = top.parent_uri
            if parent is None or parent in refreshed:
                continue
            refreshed.add(parent)
            await self.refresh_ancestors(top.uri)
        for uri in gone:
            parent = urimod.parent_of(uri)
            if parent is not None and parent not in refreshed and parent not in uris:
                refreshed.add(parent)
                if (await self.io(self.store.get, [parent]))[0] is not None:
                    await self.refresh_ancestors(uri)

    # ------------------------------------------------------------------ tags
    def apply_tags(
        self,
        nodes: list[Node],
        user_tags: list[str],
        changed: Sequence[Node],
        target: str,
        children: Mapping[str, list[Node]] | None = None,
    ) -> None:
        """User tags on every node; automatic keywords; inheritance down the tree.

        ``children``: stored children already read (the tagger gets them without a second
        read of the store)."""
        computed = {}
        if self.tagger is not None and nodes:
            new_texts = [n.embedding_text() for n in changed if n.is_leaf]
            store = _ChildrenCache(self.store, children) if children else self.store
            computed = self.tagger.tag_nodes(nodes, cast(VectorStore, store), new_texts)
        users = {n.uri: list(user_tags) for n in nodes}
        assign_tags(nodes, computed, users, self.outside_inheritance(target))

    def outside_inheritance(self, uri: str) -> dict[str, list[str]]:
        """Inheritable labels of ``uri``'s parent, from the tags already stored above it."""
        parent = urimod.parent_of(uri)
        if parent is None:
            return {}
        node = self.store.get([parent])[0]
        if node is None:
            return {}
        labels = [
            tagmod.label_of(t) for t in node.tags if tagmod.source_of(t) in ("user", "inherit")
        ]
        return {parent: tagmod.dedupe(labels)}

    async def retag(self, root: Node | None) -> int:
        """Backfill: recount the keyword statistics, recompute automatic and inherited tags of
        ``root``'s subtree (everything when None) without re-embedding; user tags are kept."""
        async with self.lock:
            return await asyncio.to_thread(self.retag_sync, root, True)

    async def set_tags(self, node: Node, adds: list[str], drops: set[str]) -> list[str]:
        """Add or remove user tags of a node; descendants' inherited tags follow."""
        async with self.lock:
            user = tagmod.merge(
                [
                    t
                    for t in node.tags
                    if tagmod.source_of(t) == "user" and tagmod.label_of(t) not in drops
                ],
                adds,
            )
            others = [
                t
                for t in node.tags
                if tagmod.source_of(t) != "user" and tagmod.label_of(t) not in drops
            ]
            await self.io(self.store.update_tags, {node.uri: tagmod.merge(user, others)})
            await asyncio.to_thread(self.retag_sync, node, False)
        stored = (await self.io(self.store.get, [node.uri]))[0]
        if stored is None:
            raise NotFoundError(f"{node.uri} was removed while its tags were set")
        return list(stored.tags)

    def retag_sync(self, root: Node | None, refit: bool) -> int:
        """Recompute the tags of ``root``'s subtree (or of the whole index) in place."""
        if root is None:
            nodes = [n.model_copy(deep=True) for n in self.store.iter_nodes()]
            outside: dict[str, list[str]] = {}
        else:
            nodes = [n.model_copy(deep=True) for n in self.store.iter_nodes(root.uri)]
            outside = self.outside_inheritance(root.uri)
        if not nodes:
            return 0
        before = {n.uri: list(n.tags) for n in nodes}
        users = {n.uri: [t for t in n.tags if tagmod.source_of(t) == "user"] for n in nodes}
        computed = {}
        if self.tagger is not None:
            if refit:
                self.tagger.refit(self.store)
            computed = self.tagger.tag_nodes(nodes, self.store, new_texts=[])
        assign_tags(nodes, computed, users, outside)
        changed = {n.uri: n.tags for n in nodes if n.tags != before[n.uri]}
        if changed:
            self.store.update_tags(changed)
        self.store.save()
        return len(changed)

    # ------------------------------------------------------------------ vectors
    async def refresh_unchanged(self, same: Sequence[Node]) -> None:
        """Rewrite nodes whose text (hence vector) is unchanged: tags and metadata only.

        A store with ``update_nodes`` (the embedded store) rewrites the changed rows in place and
        keeps their vectors; any other store gets its own vectors back through ``upsert``.
        """
        if isinstance(self.store, IncrementalStore):
            await self.io(self.store.update_nodes, list(same))
            return
        kept = await self.io(self.store.get_vectors, [n.uri for n in same])
        await self.io(self.store.upsert, list(same), kept)

    async def embed_nodes(
        self, nodes: Sequence[Node], progress: ProgressCallback | None
    ) -> np.ndarray[Any, np.dtype[np.float32]]:
        """The embeddings of ``nodes``' texts, in batches of :data:`EMBED_BATCH`."""
        if not nodes:
            return np.zeros((0, self.embedder.dimension or 1), np.float32)
        texts = [n.embedding_text() for n in nodes]
        parts = []
        for i in range(0, len(texts), EMBED_BATCH):
            parts.append(await self.embedder.aembed(texts[i : i + EMBED_BATCH]))
            if progress is not None:
                progress("embed", min(i + EMBED_BATCH, len(texts)), len(texts))
        return np.vstack(parts).astype(np.float32)

    async def refresh_ancestors(self, target: str | Sequence[str]) -> None:
        """Create missing ancestors of ``target`` and re-describe them from their children.

        Several targets (a batch of files) share their ancestors: each is re-described once,
        deepest first, instead of once per target.
        """
        targets = [target] if isinstance(target, str) else list(target)
        if not targets:
            return
        chain = sorted(
            {a for t in targets for a in urimod.ancestors_of(t)},
            key=lambda u: (u.count("/"), u),
            reverse=True,
        )
        ctype = urimod.context_type_of(targets[0])
        for uri in chain:
            await self._refresh_one(uri, ctype)

    async def _refresh_one(self, uri: str, ctype: ContextType) -> None:
        kids = await self.io(self.store.children, uri)
        name = uri.rsplit("/", 1)[-1]
        abstract, overview = summarize_ancestor(self.summarizer, uri, name, kids)
        level = Level.ABSTRACT if urimod.parent_of(uri) is None else Level.OVERVIEW
        node = finalize(
            Node(
                uri=uri,
                parent_uri=urimod.parent_of(uri),
                context_type=ctype,
                level=level,
                is_leaf=False,
                abstract=abstract,
                overview=overview,
                metadata={"name": name, "implicit": True},
            )
        )
        existing = (await self.io(self.store.get, [uri]))[0]
        if existing is not None and existing.content_hash == node.content_hash:
            return
        if existing is not None:
            node.tags = existing.tags
        vec = await self.embedder.aembed([node.embedding_text()])
        await self.io(self.store.upsert, [node], vec)

    async def route_directories(self, target: str) -> None:
        """Give the directories of ``target``'s subtree (and its ancestors) routing vectors that
        represent what is below them: the centroid of their children's vectors, alone
        (``centroid``) or added to their summary's embedding (``mixed``).

        Bottom-up, so a directory's centroid uses its subdirectories' routing vectors.
        """
        if self.directory_vectors == "summary":
            return
        chain = list(urimod.ancestors_of(target))
        inside = await self.io(lambda: [n for n in self.store.iter_nodes(target)])
        dirs = [n for n in inside if not n.is_leaf]
        dirs += [n for n in await self.io(self.store.get, chain) if n is not None]
        if not dirs:
            return
        summary = await self.embed_nodes(dirs, None)
        routed: dict[str, np.ndarray[Any, np.dtype[np.float32]]] = {}
        for i in sorted(range(len(dirs)), key=lambda i: -dirs[i].uri.count("/")):
            node = dirs[i]
            kids = await self.io(self.store.children, node.uri)
            vec = summary[i]
            if kids:
                kv = await self.io(self.store.get_vectors, [k.uri for k in kids])
                rows = [routed.get(k.uri, kv[j]) for j, k in enumerate(kids)]
                cen = np.mean(np.stack(rows), axis=0)
                cen = cen / (float(np.linalg.norm(cen)) or 1.0)
                vec = cen if self.directory_vectors == "centroid" else vec + cen
            routed[node.uri] = (vec / (float(np.linalg.norm(vec)) or 1.0)).astype(np.float32)
        await self.io(self.store.upsert, dirs, np.stack([routed[n.uri] for n in dirs]))

    # ------------------------------------------------------------------ removal
    async def remove(self, node: Node) -> int:
        """Delete a node and its subtree; the directories above are re-described."""
        async with self.lock:
            uris = sorted(await self.io(self._stored_uris, node.uri))
            n = await self.io(self.store.delete, uris)
            if urimod.parent_of(node.uri) is not None:
                await self.refresh_ancestors(node.uri)
            await self.io(self.store.save)
            return n


def _unchanged(e: FileEntry, manifest: _Manifest) -> bool:
    """Size and mtime as in the manifest, and old enough that the mtime can be trusted."""
    old = manifest.files.get(e.relpath)
    return (
        old is not None
        and old[0] == e.size
        and old[1] == e.mtime_ns
        and e.mtime_ns < manifest.written_ns - RACY_NS
    )


def _manifest_key(target: str) -> str:
    return "ingest/manifest-" + hashlib.sha1(target.encode("utf-8")).hexdigest()[:32]


class _ChildrenCache:
    """A store whose ``children`` of some directories were read already; everything else is
    the store's own (reads only: the tagger looks up stored children and state)."""

    def __init__(self, store: VectorStore, children: Mapping[str, list[Node]]) -> None:
        self._store = store
        self._children = children

    def children(self, uri: str) -> list[Node]:
        kids = self._children.get(uri)
        return list(kids) if kids is not None else self._store.children(uri)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def __len__(self) -> int:
        return len(self._store)


class _UriMap:
    """Relative paths to URIs, each directory's URI built once (100k files share ~1k)."""

    def __init__(self, target: str) -> None:
        self.target = target
        self._dirs: dict[str, str] = {"": target}

    def dir(self, rel: str) -> str:
        uri = self._dirs.get(rel)
        if uri is None:
            head, _, name = rel.rpartition("/")
            uri = self._dirs[rel] = urimod.join(self.dir(head), segment(name))
        return uri

    def file(self, rel: str) -> str:
        head, _, name = rel.rpartition("/")
        seg = name.translate(_ESCAPE_TABLE)
        if not seg or seg in {".", ".."} or "/" in seg:
            return urimod.join(self.dir(head), segment(name))  # raises the usual error
        # What segment() + urimod.join() return for an ordinary name, without two calls
        # per file (a re-add maps every scanned file).
        parent = self._dirs.get(head)
        return f"{parent if parent is not None else self.dir(head)}/{seg}"


def _all_dirs(relpaths: Iterable[str]) -> set[str]:
    """Every directory above the given relative paths (``""`` is the root)."""
    out: set[str] = set()
    for d in {r.rpartition("/")[0] for r in relpaths}:
        while d not in out:
            out.add(d)
            if not d:
                break
            d = d.rpartition("/")[0]
    return out


def _stale(old_uris: set[str], nodes: Sequence[Node], plan: _Plan) -> tuple[list[str], int]:
    """Stored URIs under the target that the new tree has no place for, and how many chunks
    of kept files stay. A stored node stays when it is rebuilt, is (a chunk of) a kept file,
    or is a directory that still holds a file."""
    wanted = {n.uri for n in nodes}
    stale: list[str] = []
    kept_chunks = 0
    for u in old_uris:
        if u in wanted or u in plan.live_dirs:
            continue
        base, mark, _ = u.partition(urimod.CHUNK_MARK)
        if base in plan.kept_files:
            kept_chunks += bool(mark)
            continue
        stale.append(u)
    return stale, kept_chunks


def _result(target: str, built: BuiltTree) -> AddResult:
    r = built.report
    return AddResult(
        root_uri=target,
        directories=built.directories,
        files=built.files,
        chunks=built.chunks,
        skipped_binary=r.skipped_binary,
        skipped_unreadable=r.skipped_unreadable,
        skipped_other=r.skipped_other + r.skipped_large + r.skipped_empty,
        skipped_dirs=list(r.skipped_dirs),
        skipped_hidden=list(r.skipped_hidden),
        skipped_names=list(r.skipped_names),
    )


def _prune_empty(store: VectorStore, deleted: Sequence[str], stop: str) -> list[str]:
    """Delete the directories strictly inside ``stop`` left without children; their URIs."""
    removed: list[str] = []
    candidates = {urimod.parent_of(u) for u in deleted}
    while candidates:
        nxt: set[str | None] = set()
        for d in candidates:
            if d is None or d == stop or not urimod.is_within(d, stop):
                continue
            if not store.children(d) and store.get([d])[0] is not None:
                store.delete([d])
                removed.append(d)
                nxt.add(urimod.parent_of(d))
        candidates = nxt
    return removed


def is_path_like(value: str | os.PathLike[str]) -> bool:
    """Whether ``add_resource``/``add_skill`` read ``value`` as an existing path."""
    from .. import arguments as argmod

    return isinstance(value, os.PathLike) or (
        "\n" not in value
        and len(value) < 4096
        and "\x00" not in value
        and not argmod.has_lone_surrogate(value)
        and Path(value).exists()
    )
