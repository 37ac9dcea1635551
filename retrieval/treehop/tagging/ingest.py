"""Writing tags at ingest: automatic keywords, user tags, and inheritance down the tree.

The keyword statistics (document frequencies over the index's leaves) persist with the index,
so that a later ``add_resource`` or a backfill sees the whole corpus, not one batch.

Which tags a node gets:

- ``user:`` tags given to ``add_resource`` (and kept across re-tagging);
- ``auto:`` keywords: extracted from a leaf's content; for a directory, its own abstract's
  keywords plus the most shared keywords of its children (so that a hop, which looks up
  directories, can reach a topic that lives only in the content below);
- ``inherit:`` tags: a directory's user tags and its *own* keywords, passed down to every
  descendant (the seed's "L0 tags propagate to children"). Keywords a directory only
  aggregated from its children are not passed back down to their siblings.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

import numpy as np
import numpy.typing as npt

from .. import tags as tagmod
from .._plugins import call
from ..ingest.summaries import humanize, is_readme
from ..models import Node
from ..stores._filelock import holding_named
from ..stores.base import VectorStore
from .base import NodeTags
from .keywords import KeywordTagger, TaggerError, _distinct, _parsed_tag
from .second_process import PreparedFit, fit_extract

STATE_KEY = "tagger/keywords.bin"
DELTA_KEY = "tagger/keywords-delta.bin"
"""What was counted since ``STATE_KEY`` was written (``KeywordTagger.state_delta``): a small
write saves a delta instead of rewriting every term's statistics."""
STATS_LOCK = "tagger"
"""The index's lock (:meth:`~treehop.stores.embedded.EmbeddedStore.named_lock`) held from
a read of the statistics to their save, so that two processes' counts both land."""
LEGACY_STATE_KEY = "tagger/keywords.json"
"""Where indexes written before the compact format keep the statistics (read, not written)."""


WRITE_COUNTS: ContextVar[list[IngestTagger] | None] = ContextVar(
    "treehop_write_counts", default=None
)
"""Inside a client's write (:class:`~treehop.ingest.writer.WriteLock`): the keyword taggers
that counted texts into the statistics during it. A tagger joins at its first count
(:meth:`IngestTagger._note_count`, one :meth:`~IngestTagger.start_batch`); the write, when
it ends, takes their counts back if it failed before any commit, and closes the batches."""


def _same(a: bytes | None, b: bytes | None) -> bool:
    """Two blobs equal (the store hands back the bytes it holds: mostly the same object)."""
    return a is b or (a is not None and b is not None and a == b)


@dataclass
class _Journal:
    """The texts a batch counted (:meth:`IngestTagger.start_batch`), the statistics blobs
    stored before its first count, and those it last saved."""

    start: tuple[bytes | None, bytes | None] | None = None
    """The blobs read right before the batch's first count (``None``: nothing counted yet).
    Read then, under the statistics lock, not when the batch starts: a write that counts
    nothing (a remove, a set_tags) reads no blob, and no other writer's save can fall
    between the read and the count."""
    last: tuple[bytes | None, bytes | None] = (None, None)
    texts: list[str] = field(default_factory=list)
    foreign: bool = False
    """Another writer saved statistics between two of the batch's counts."""
    refitted: bool = False
    """The batch recounted the statistics over the stored leaves (:meth:`IngestTagger.refit`)."""
    depth: int = 1
    """Open :meth:`IngestTagger.start_batch` calls: a client's write opens one
    (:class:`~treehop.ingest.writer.WriteLock`) and ``add_records`` another inside it."""


def ingest_taggers(tagger: object) -> list[IngestTagger]:
    """The keyword taggers of a tagger chain (``tagger``, then its ``base``, ... as
    :class:`~treehop.tagging.llm_tagger.LLMTagger` wraps one): those whose statistics a
    write counts into."""
    out: list[IngestTagger] = []
    seen: set[int] = set()
    while tagger is not None and id(tagger) not in seen:
        seen.add(id(tagger))
        if isinstance(tagger, IngestTagger):
            out.append(tagger)
        # (a caller's ``base`` property raising anything but AttributeError, which reads as
        # "no base": a TaggerError, as its tag_nodes raising is)
        tagger = call("the tagger's base", TaggerError, getattr, tagger, "base", None)
    return out


def _unchanged(store: VectorStore, seen: tuple[bytes | None, bytes | None]) -> bool:
    """Whether the stored statistics blobs are still ``seen`` (no writer saved since). On a
    remote engine (no statistics lock either) assumed, as :meth:`IngestTagger._stale` does:
    each look would fetch both blobs."""
    if getattr(getattr(store, "capabilities", None), "remote", False):
        return True
    state, delta = store.get_state(STATE_KEY), store.get_state(DELTA_KEY)
    return _same(state, seen[0]) and _same(delta or None, seen[1] or None)


def _owner(store: VectorStore | None) -> int:
    """The key of the batch journal of ``store`` (:attr:`IngestTagger._journals`): the
    store whose state blobs the statistics are read from and saved to, so that a view
    reading through to a store (the writer's children cache) counts into that store's
    batch, as the write that opened it on the store itself expects."""
    if store is None:
        return 0
    return id(getattr(store.get_state, "__self__", store))


class IngestTagger:
    """Keeps a :class:`KeywordTagger` fitted on the index and tags batches of nodes."""

    def __init__(self, tagger: KeywordTagger | None = None) -> None:
        self._template = tagger
        self._tagger: KeywordTagger | None = None
        self._seen: tuple[bytes | None, bytes | None] = (None, None)
        """The statistics and delta blobs the tagger in memory was read from or saved as."""
        self._journals: dict[int, _Journal] = {}
        """What a batch counted, to take back if it fails (:meth:`start_batch`), by the
        store it counted into (:func:`_owner`). Why by store (helper attacks73): one tagger
        given to two clients of two indexes (an ``LLMTagger`` built once for a server's
        clients) ran both clients' writes in one journal; a failed write on one index then
        took the other write's texts out of its statistics (``df outside [1, n_docs]``:
        the index's statistics no longer loaded), or put back blobs read from the other
        index."""
        self._mutex = threading.RLock()
        """Held while the statistics in memory (``_tagger``, ``_seen``) are read, counted
        into and saved. Why (helper attacks73): the same shared tagger's two writes, each
        under its own index's statistics lock, replaced ``_tagger`` under each other: one
        index saved the other's statistics, or its own count was lost. Taken inside the
        statistics lock (never the reverse), and nothing waits under it."""

    def forget(self) -> None:
        """Drop the statistics held in memory: the next use reads them from the store's
        state again (after a failed batch whose counts were restored there)."""
        self._tagger = None

    def _stale(self, store: VectorStore) -> bool:
        """Whether the store's statistics are no longer the ones held in memory: another
        process (or another client on the index) counted documents since. Why: the
        statistics were read once per client and each save wrote this client's counts over
        the stored ones, so a long-lived process (a server) that added a document after a
        ``treehop index`` run elsewhere dropped that run's documents from the frequencies
        (3 documents stored, ``n_docs`` 2). Two ``get_state`` calls, each a ``stat`` of an
        unchanged blob and its cached bytes, on an index on disk; a remote engine would
        fetch the blobs on every write, so there the statistics stay read once."""
        caps = getattr(store, "capabilities", None)
        if getattr(caps, "remote", False):
            return False
        state, delta = store.get_state(STATE_KEY), store.get_state(DELTA_KEY)
        seen_state, seen_delta = self._seen
        return not (_same(state, seen_state) and _same(delta or None, seen_delta or None))

    def _get(self, store: VectorStore) -> KeywordTagger:
        if self._tagger is not None and self._stale(store):
            self._tagger = None
        if self._tagger is None:
            raw = store.get_state(STATE_KEY)
            delta = store.get_state(DELTA_KEY) if raw else None
            self._seen = (raw, delta)
            if raw:
                self._tagger = KeywordTagger.from_bytes(raw)
                if delta:
                    self._tagger.apply_delta(delta)
            elif raw := store.get_state(LEGACY_STATE_KEY):
                self._tagger = KeywordTagger.from_bytes(raw)
            elif self._template is not None:
                self._tagger = KeywordTagger(**self._template.params())
            else:
                self._tagger = KeywordTagger()
        return self._tagger

    def _save(self, store: VectorStore) -> None:
        assert self._tagger is not None
        delta = self._tagger.state_delta()
        if delta is not None:
            store.put_state(DELTA_KEY, delta)
            self._seen = (self._seen[0], delta)
            return
        # A new base, then the old delta cleared: a stop in between leaves a delta of the old
        # base, which the next load ignores (the new base already holds it).
        full = self._tagger.full_state()
        store.put_state(STATE_KEY, full)
        store.put_state(DELTA_KEY, b"")
        self._seen = (full, b"")

    def tag_nodes(
        self,
        nodes: Sequence[Node],
        store: VectorStore,
        new_texts: Sequence[str] | None = None,
        counted: Mapping[str, LabelCounts] | None = None,
    ) -> dict[str, NodeTags]:
        """Automatic tags for ``nodes``; ``new_texts`` (leaf texts not yet counted) update the
        corpus statistics first. Returns uri -> :class:`NodeTags`.

        A directory in ``nodes`` whose other children are already stored (an incremental
        re-add sends only what changed) aggregates their stored ``auto:`` tags too.

        ``counted``: for some directories, the labels of their stored children as counted by
        the caller (:class:`LabelCounts`, what :func:`stored_label_lists` reads), standing for
        that read. The caller vouches that they are the stored children's, and that no node
        of ``nodes`` is one of them (a stored child that ``nodes`` rewrites would not count).
        Why: an append to a memory session re-tags the session, whose children are its every
        turn (:func:`treehop.memory.add_messages` keeps the count).
        """
        leaves = [n for n in nodes if n.is_leaf]
        texts = [n.embedding_text() for n in leaves]
        if new_texts is None:
            new_texts = texts
        if not new_texts:
            with self._mutex:
                tagger = self._get(store)
            labels = fit_extract(tagger, [], texts) if texts else []
        else:
            # The texts are analysed and counted before the statistics lock, and scored
            # after it: held through both, a large ingest (seconds) made another process's
            # tagging wait and then fail with IndexLockedError (helper leftovers56). Under
            # it: the read, the merge of the counts and the save, so that two processes'
            # counts both land (``n_docs`` 23 of 24 without it; helper races58). Taken last
            # in the lock order (see :func:`~treehop.stores._filelock.holding_named`).
            fit = PreparedFit.count(self._params(), list(new_texts), texts)
            try:
                with holding_named(store, STATS_LOCK), self._mutex:
                    journal = self._note_count(store)
                    tagger = self._get(store)
                    fit.merge(tagger)
                    self._save(store)
                    if journal is not None:
                        journal.texts.extend(new_texts)
                        journal.last = self._seen
                labels = fit.labels(tagger)
            finally:
                fit.close()
        return self._compute(tagger, nodes, leaves, labels, store, counted or {})

    def _params(self) -> dict[str, Any]:
        """The parameters the statistics are counted with: the tagger's in memory (read
        from the index), else the one this client was given (the lock's holder checks them
        against the stored statistics' own: :meth:`PreparedFit.merge`)."""
        known = self._tagger or self._template or KeywordTagger()
        return known.params()

    # ---------------------------------------------------------- a batch's counts, taken back
    def start_batch(self, store: VectorStore | None = None) -> None:
        """Record what the next tagging calls into ``store`` count, until :meth:`end_batch`
        or :meth:`take_back` of that store (a client's write, all or nothing; an
        ``add_records`` batch inside one). A batch started while one of the same store is
        open belongs to it (one more :meth:`end_batch` to close)."""
        with self._mutex:
            journal = self._journals.get(_owner(store))
            if journal is not None:
                journal.depth += 1
            else:
                self._journals[_owner(store)] = _Journal()

    def end_batch(self, store: VectorStore | None = None) -> None:
        """Close the batch :meth:`start_batch` opened on ``store``, keeping its counts."""
        with self._mutex:
            journal = self._journals.get(_owner(store))
            if journal is not None:
                journal.depth -= 1
                if journal.depth <= 0:
                    del self._journals[_owner(store)]

    def _note_count(self, store: VectorStore) -> _Journal | None:
        """Before a count (the statistics lock held): inside a client's write, join it
        (:data:`WRITE_COUNTS`); then, in an open batch of ``store``, the blobs it starts
        from at its first count, else whether another writer saved since its last.
        Returns that batch's journal (``None``: no batch open on ``store``)."""
        joined = WRITE_COUNTS.get()
        if joined is not None and not any(t is self for t in joined):
            self.start_batch(store)
            joined.append(self)
        journal = self._journals.get(_owner(store))
        if journal is None:
            return None
        if journal.start is None:
            blobs = (store.get_state(STATE_KEY), store.get_state(DELTA_KEY))
            journal.start = journal.last = blobs
        elif not _unchanged(store, journal.last):
            journal.foreign = True
        return journal

    def take_back(self, store: VectorStore) -> None:
        """Undo the counts of the batch recorded since :meth:`start_batch`, keeping any
        other writer's: when no other writer saved statistics meanwhile, the blobs read at
        the start are put back as they were; else the stored statistics are read and the
        batch's texts taken out of them (:meth:`KeywordTagger.unfit`), under the lock.

        Why: putting back the blobs read at the start also dropped the documents another
        process (or another client) counted while the batch ran (races58, "Left")."""
        with self._mutex:
            journal = self._journals.pop(_owner(store), None)
        if journal is None or journal.start is None:
            return  # (nothing counted: the statistics in memory are the stored ones)
        with holding_named(store, STATS_LOCK), self._mutex:
            self._tagger = None  # (it counted the batch: read again from what is stored)
            if not journal.foreign and _unchanged(store, journal.last):
                for key, value in zip((STATE_KEY, DELTA_KEY), journal.start, strict=True):
                    if not _same(store.get_state(key), value):
                        store.put_state(key, value if value is not None else b"")
                return
            if journal.refitted:
                # (a recount of the stored leaves, then another writer's counts: the
                # batch's own cannot be told apart; what is stored is kept)
                return
            tagger = self._get(store)
            tagger.unfit(journal.texts)
            self._save(store)

    def refit(self, store: VectorStore) -> None:
        """Recount the statistics over every leaf of the index (used by the backfill)."""
        texts = [n.embedding_text() for n in store.iter_nodes() if n.is_leaf]
        with holding_named(store, STATS_LOCK), self._mutex:
            journal = self._note_count(store)
            self._get(store).fit(texts)
            self._save(store)
            if journal is not None:
                journal.refitted = True
                journal.last = self._seen

    def _compute(
        self,
        tagger: KeywordTagger,
        nodes: Sequence[Node],
        leaves: Sequence[Node],
        labels: Sequence[list[str]],
        store: VectorStore,
        counted: Mapping[str, LabelCounts],
    ) -> dict[str, NodeTags]:
        out: dict[str, NodeTags] = {}
        # The labels behind each node's ``auto:`` tags, for its directory's aggregation.
        auto_labels: dict[str, Sequence[str]] = {}
        # Extracted labels are normalised already: the tags are built without re-checking.
        for n, labs in zip(leaves, labels, strict=True):
            out[n.uri] = NodeTags(auto=[f"auto:{lab}" for lab in labs], own_labels=list(labs))
            auto_labels[n.uri] = labs
        children: dict[str, list[str]] = {}
        for n in nodes:
            if n.parent_uri is not None:
                children.setdefault(n.parent_uri, []).append(n.uri)
        dirs = sorted((n for n in nodes if not n.is_leaf), key=lambda n: -n.uri.count("/"))
        own_texts = [_own_text(d, children.get(d.uri, [])) for d in dirs]
        wanted = [t for t in own_texts if t]
        own_of = dict(zip(wanted, tagger.extract_many(wanted), strict=True)) if wanted else {}
        owns = [own_of[t] if t else [] for t in own_texts]
        # One level at a time, deepest first: a directory aggregates its subdirectories'
        # labels, so a level is ranked once the level below it is known, and all of its
        # directories are ranked together (:func:`aggregate_many`).
        start = 0
        while start < len(dirs):
            depth = dirs[start].uri.count("/")
            end = start + 1
            while end < len(dirs) and dirs[end].uri.count("/") == depth:
                end += 1
            level = dirs[start:end]
            kid_labels: list[list[Sequence[str]]] = []
            kept: list[Mapping[str, int] | None] = []
            for d, own in zip(level, owns[start:end], strict=True):
                kids: list[Sequence[str]] = [
                    auto_labels[c] for c in children.get(d.uri, []) if c in out
                ]
                table = counted.get(d.uri)
                if table is None:
                    if not _all_children_fresh(store, d.uri, out):
                        kids += _stored_auto_labels(store, d.uri, out)
                    kept.append(None)
                else:
                    kept.append(table.rankable(kids, own, tagger.max_dir_tags))
                kid_labels.append(kids)
            aggs = aggregate_many(tagger, kid_labels, owns[start:end], kept)
            for d, own, agg in zip(level, owns[start:end], aggs, strict=True):
                out[d.uri] = NodeTags(auto=[f"auto:{lab}" for lab in agg], own_labels=list(own))
                auto_labels[d.uri] = agg
            start = end
        return out


def aggregate_many(
    tagger: KeywordTagger,
    child_labels: Sequence[Sequence[Sequence[str]]],
    own_labels: Sequence[Sequence[str]],
    counted: Sequence[Mapping[str, int] | None] | None = None,
) -> list[list[str]]:
    """:meth:`KeywordTagger.aggregate_labels` of many directories at once: directory ``j``
    aggregates the label lists ``child_labels[j]`` (one per child) below its own labels
    ``own_labels[j]``. The result is the same, label for label and in order.

    ``counted[j]`` (optional): more children of directory ``j``, as the number of them
    carrying each label (what :class:`LabelCounts` keeps), added to ``child_labels[j]``'s
    counts: the result is the one of those children's label lists given in ``child_labels``
    (:meth:`LabelCounts.rankable` leaves out labels that cannot rank, with the same result).

    Why batched: a re-add re-describes every directory above a changed file, each with all
    of its stored children (~100 directories x ~100 children x ~8 labels at 100k nodes).
    Counting and ranking them per directory in Python, with one vocabulary lookup per
    directory, was most of the re-add's tagging. Here the labels of all of them are interned
    once (their sorted order is the alphabetical tie-break), looked up in the vocabulary
    once, counted with one ``np.unique`` and ranked with one ``lexsort`` by (directory,
    -children carrying it, document frequency, label)."""
    limit = tagger.max_dir_tags
    outs = [tagmod.dedupe(tagmod.normalize_label(x) for x in own) for own in own_labels]
    extra = [(j, c) for j, c in enumerate(counted or ()) if c]
    flat: list[str] = []
    per_child: list[int] = []
    per_dir: list[int] = []
    for kids in child_labels:
        per_dir.append(len(kids))
        for labs in kids:
            flat += labs
            per_child.append(len(labs))
    if not flat and not extra:
        return [o[:limit] for o in outs]
    names = sorted(set(flat).union(*(c for _, c in extra)))
    pos = dict(zip(names, range(len(names)), strict=True))
    n_labels = len(names)
    lab = np.fromiter(map(pos.__getitem__, flat), np.int64, len(flat))
    child = np.repeat(np.arange(len(per_child), dtype=np.int64), per_child)
    dir_of_child = np.repeat(np.arange(len(per_dir), dtype=np.int64), per_dir)
    # A label counts once per child carrying it, then once per (directory, label) pair.
    # (sorted distinct by a sort: numpy's hashing ``unique`` is many times slower here)
    pairs = _distinct(child * n_labels + lab)
    per_dir_keys = dir_of_child[pairs // n_labels] * n_labels + pairs % n_labels
    keys, counts = np.unique(per_dir_keys, return_counts=True)
    if extra:  # the counted children's (directory, label) counts added
        more = [(j * n_labels + pos[x], k) for j, c in extra for x, k in c.items() if k > 0]
        all_keys = np.concatenate([keys, np.asarray([k for k, _ in more], np.int64)])
        all_counts = np.concatenate([counts, np.asarray([k for _, k in more], np.int64)])
        keys, inv = np.unique(all_keys, return_inverse=True)
        counts = np.bincount(inv.ravel(), weights=all_counts, minlength=keys.size)
        counts = counts.astype(np.int64)
    d, lab = keys // n_labels, keys % n_labels
    own_keys = [j * n_labels + pos[x] for j, o in enumerate(outs) for x in o if x in pos]
    if own_keys:
        keep = ~np.isin(keys, np.asarray(own_keys, np.int64))
        d, lab, counts = d[keep], lab[keep], counts[keep]
    if not d.size:
        return [o[:limit] for o in outs]
    # Only labels counted at least as often as a directory's last place can rank in it: the
    # document frequencies (a vocabulary lookup, Python for two-word labels) are looked up
    # for those alone, a few per directory instead of every label of every child.
    room = np.asarray([max(limit - len(o), 0) for o in outs], np.int64)
    order = np.lexsort((-counts, d))
    first = np.searchsorted(d[order], np.arange(len(outs) + 1, dtype=np.int64))
    last = np.minimum(first[:-1] + room, first[1:]) - 1  # the last place's row, per directory
    floor = np.where(last >= first[:-1], counts[order][np.maximum(last, 0)], np.iinfo(np.int64).max)
    near = counts >= floor[d]
    d, lab, counts = d[near], lab[near], counts[near]
    uniq, inv = np.unique(lab, return_inverse=True)
    df = tagger.document_frequencies([names[i] for i in uniq.tolist()])[inv]
    order = np.lexsort((lab, df, -counts, d))
    d, lab = d[order], lab[order]
    # Each directory keeps its first (limit - own labels) ranked labels.
    first = np.searchsorted(d, np.arange(len(outs), dtype=np.int64))
    take = (np.arange(d.size) - first[d]) < room[d]
    d, lab = d[take], lab[take]
    ends = np.searchsorted(d, np.arange(len(outs) + 1, dtype=np.int64)).tolist()
    picked = [names[i] for i in lab.tolist()]
    return [(o + picked[ends[j] : ends[j + 1]])[:limit] for j, o in enumerate(outs)]


def _own_text(d: Node, kids: Sequence[str]) -> str:
    """A directory's own words: its README's abstract when it has one; otherwise only its
    name (an abstract listing its children's titles would hand each child's topic down to
    all of its siblings). Roots and the implicit directories above an added resource
    ("resources", "memories") describe the storage layout, not a topic: they get none."""
    if d.level == 0 or bool(d.metadata.get("implicit")):
        return ""
    has_readme = any(is_readme(c.rsplit("/", 1)[-1]) for c in kids)
    return d.abstract if has_readme else humanize(d.uri.rsplit("/", 1)[-1])


_LABEL = rf"[a-z0-9_.+#](?:[a-z0-9_.+#-]{{0,{tagmod.MAX_LABEL_LENGTH - 2}}}[a-z0-9_.+#])?"
_NORMAL_AUTO_LINES = re.compile(rf"auto:{_LABEL}(?:\nauto:{_LABEL})*")
_NORMAL_AUTO = re.compile(rf"auto:{_LABEL}")
"""``auto:`` tags in normal form (as ``keywords._NORMAL_TAG`` recognises one), one a line."""


def _all_children_fresh(store: VectorStore, uri: str, fresh: Mapping[str, NodeTags]) -> bool:
    """True when every stored child of ``uri`` is in ``fresh`` (this batch tags it anew), so
    that :func:`_stored_auto_labels` would return nothing; read from the children's URIs alone
    (``child_uris``: no JSON parsed, no node built). False where the store has no such read
    or no ``children_fields`` (the writer's :class:`~treehop.ingest.writer._ChildrenCache`
    hands the tagger the children it read, less those the write deletes: they are read as
    before).

    Why: a small index is re-tagged whole after every write (``TreeWriter.finish``, up to
    ``retag_all_below`` nodes), every node in one batch; each directory's stored children
    are then all in the batch, and reading their tags only to leave every one out was ~15 ms
    of a memory append at 300 sessions (``bench/bench_append_siblings.py --tagger
    --phases``)."""
    if getattr(store, "children_fields", None) is None:
        return False
    uris = getattr(store, "child_uris", None)
    if uris is None:
        return False
    return all(u in fresh for u in uris(uri))


def _stored_auto_labels(
    store: VectorStore, uri: str, fresh: Mapping[str, NodeTags]
) -> list[list[str]]:
    """Labels of the ``auto:`` tags of ``uri``'s stored children that this batch does not
    rewrite (see :func:`stored_label_lists`)."""
    fields = getattr(store, "children_fields", None)
    if fields is not None:
        # the stored JSON's URI and tags, no node built (~3x cheaper: an append to a memory
        # session re-tags the session, whose children are its every turn)
        kids = [(str(d["uri"]), d["tags"] or ()) for d in fields(uri, ("uri", "tags"))]
    else:
        kids = [(kid.uri, kid.tags) for kid in store.children(uri)]
    return stored_label_lists([tags for kid_uri, tags in kids if kid_uri not in fresh])


def stored_label_lists(tag_lists: Iterable[Sequence[str]]) -> list[list[str]]:
    """The labels of the ``auto:`` tags of stored children, one list per child that has any
    (parsed as :meth:`KeywordTagger.aggregate` parses tags). Tags as the tagger wrote them are
    normal already: all of them are recognised by one regex pass over them joined by newlines
    (no normal tag holds one: a tag that does makes the line count differ), and the label is
    what follows ``auto:``; otherwise every tag is parsed (the same labels for normal tags,
    so that children parsed apart give what they give together). A label repeated within a
    child is counted once by :func:`aggregate_many`."""
    autos = [a for tags in tag_lists if (a := [t for t in tags if t.startswith("auto:")])]
    if not autos:
        return []
    joined = "\n".join(chain.from_iterable(autos))
    if joined.count("\n") == sum(map(len, autos)) - 1 and _NORMAL_AUTO_LINES.fullmatch(joined):
        return [[t[5:] for t in a] for a in autos]
    return [[_parsed_tag(t).partition(":")[2] for t in a] for a in autos]


class LabelCounts:
    """How many children of a directory carry each label: the whole table, every label (not
    only the ranked ones), so that :func:`aggregate_many` over it and more children ranks
    exactly as over every child's label list.

    Why the whole table: a directory keeps its children's most shared labels, ties broken by
    the labels' current document frequencies (which move with every write) and then by name;
    a label outside the top places now may enter them after a few more children, so no
    shorter summary stays exact. Kept per memory session by :func:`treehop.memory.add_messages`
    so that an append counts its new turns' labels instead of reading every turn's tags.

    Immutable (:meth:`plus` returns a new table): a kept table is never changed in place."""

    __slots__ = ("_counts", "_names", "_slot")

    def __init__(
        self, names: list[str], slot: dict[str, int], counts: npt.NDArray[np.int64]
    ) -> None:
        self._names, self._slot, self._counts = names, slot, counts

    @staticmethod
    def of(label_lists: Iterable[Sequence[str]]) -> LabelCounts:
        """The table of these children (one label list each)."""
        return LabelCounts([], {}, np.zeros(0, np.int64)).plus(label_lists)

    @staticmethod
    def of_tags(tag_lists: Sequence[Sequence[str]]) -> LabelCounts:
        """``of(stored_label_lists(tag_lists))``: the table of children given by their stored
        tags. Where every distinct ``auto:`` tag is normal (as the tagger writes them), a
        label is its tag less ``auto:``, one tag one label, so the children carrying a label
        are those carrying its tag: the distinct tags are tallied (one C-level count over
        all children) and parsed once each, instead of a label list built per child (a
        session read whole holds every turn)."""
        tally = Counter(
            chain.from_iterable({t for t in tags if t.startswith("auto:")} for tags in tag_lists)
        )
        if not all(_NORMAL_AUTO.fullmatch(t) for t in tally):
            return LabelCounts.of(stored_label_lists(tag_lists))
        names = [t[5:] for t in tally]
        counts = np.fromiter(tally.values(), np.int64, len(tally))
        return LabelCounts(names, dict(zip(names, range(len(names)), strict=True)), counts)

    def plus(self, label_lists: Iterable[Sequence[str]]) -> LabelCounts:
        """This table with more children (one label list each; a label counts once a child)."""
        names, slot = list(self._names), dict(self._slot)
        tally = Counter(chain.from_iterable(map(set, label_lists)))
        for lab in tally:
            if lab not in slot:
                slot[lab] = len(names)
                names.append(lab)
        counts = np.zeros(len(names), np.int64)
        counts[: self._counts.size] = self._counts
        if tally:
            rows = np.fromiter(map(slot.__getitem__, tally), np.int64, len(tally))
            counts[rows] += np.fromiter(tally.values(), np.int64, len(tally))
        return LabelCounts(names, slot, counts)

    def as_dict(self) -> dict[str, int]:
        """``{label: children carrying it}`` (for tests and checks)."""
        return dict(zip(self._names, self._counts.tolist(), strict=True))

    def __len__(self) -> int:
        return len(self._names)

    def rankable(
        self, batch: Sequence[Sequence[str]], own: Sequence[str], limit: int
    ) -> dict[str, int]:
        """The part of this table that can rank in a directory whose other children carry
        ``batch`` (one label list each) and whose own labels are ``own``: every label counted
        (here plus in ``batch``) at least as often as the last of the ``limit - len(own)``
        places, with this table's count. :func:`aggregate_many` of ``batch`` with it ranks
        as with the whole table: it looks up the document frequencies only of the labels
        counted at least as often as the last place (the same ones), and a label left out is
        counted in ``batch`` alone, below that (one numpy pass over the table, no Python
        loop over it: a long session's turns carry many labels)."""
        outs = tagmod.dedupe(tagmod.normalize_label(x) for x in own)
        room = limit - len(outs)
        if room <= 0 or not self._names:
            return {}
        total = self._counts.copy()
        fresh: dict[str, int] = {}
        for labs in batch:
            for lab in set(labs):
                i = self._slot.get(lab)
                if i is None:
                    fresh[lab] = fresh.get(lab, 0) + 1
                else:
                    total[i] += 1
        mine = set(outs)
        for lab in mine:
            i = self._slot.get(lab)
            if i is not None:
                total[i] = 0  # (a directory's own label is not ranked among its children's)
        ranked = np.concatenate(
            [total, np.asarray([k for x, k in fresh.items() if x not in mine], np.int64)]
        )
        ranked = ranked[ranked > 0]
        floor = int(np.partition(ranked, -room)[-room]) if ranked.size > room else 1
        keep = np.flatnonzero((total >= floor) & (self._counts > 0)).tolist()
        counts = self._counts[keep].tolist()
        return {self._names[i]: k for i, k in zip(keep, counts, strict=True)}


def assign_tags(
    nodes: Sequence[Node],
    computed: Mapping[str, NodeTags],
    user_tags: Mapping[str, list[str]],
    inherited_from_outside: Mapping[str, list[str]] | None = None,
) -> None:
    """Set ``node.tags`` = user + auto + inherited (top-down), in place.

    ``inherited_from_outside``: inheritable labels of parents that are not in ``nodes`` (when
    re-tagging a subtree whose ancestors keep their tags).
    """
    inheritable: dict[str, list[str]] = dict(inherited_from_outside or {})
    for n in sorted(nodes, key=lambda x: x.uri.count("/") + (1 if "#" in x.uri else 0)):
        users = user_tags.get(n.uri, [])
        got = computed.get(n.uri)
        auto = got.auto if got is not None else []
        parent_labels = inheritable.get(n.parent_uri or "", [])
        # Inheritable labels are normalised (user tags by parse_tags, own labels by the
        # tagger), so the tag is built without normalising again.
        fast = None if users else _plain_auto(auto)
        if fast is not None:
            # Only ``auto:`` tags of distinct labels: the merge keeps them all, in order,
            # then the inherited labels they do not carry (auto outranks inherit).
            n.tags = list(auto)
            for lab in parent_labels:
                if lab not in fast:
                    fast.add(lab)
                    n.tags.append(f"inherit:{lab}")
        else:
            own = tagmod.merge(users, auto)
            n.tags = tagmod.merge(own, [f"inherit:{lab}" for lab in parent_labels])
        if not n.is_leaf:  # (a leaf hands nothing down: its own labels are not needed)
            mine = [tagmod.label_of(t) for t in users]
            if got is not None:
                mine += got.own_labels
            inheritable[n.uri] = tagmod.dedupe([*parent_labels, *mine])


def _plain_auto(auto: Sequence[str]) -> set[str] | None:
    """The labels of ``auto`` when every tag is ``auto:<label>`` and no label repeats (what
    :class:`IngestTagger` writes); None otherwise (another tagger's tags take the merge)."""
    labs = {t[5:] for t in auto if t.startswith("auto:")}
    return labs if len(labs) == len(auto) and all(":" not in x for x in labs) else None
