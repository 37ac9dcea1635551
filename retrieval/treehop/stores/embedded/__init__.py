"""The default store: in-process numpy, columnar, persisted to a directory (format 3).

Where each part lives (``EmbeddedStore`` in ``store.py`` is composed of the mixin classes that
``manifest``, ``search_paths``, ``writes``, ``lexical_sync`` and ``ann_worker`` define):

- ``store.py``        ``EmbeddedStore``: open, basic reads, state blobs, refresh, close, exit hook
- ``manifest.py``     CURRENT, manifests, opening a generation, rollback, cleanup, legacy
- ``column_files.py`` the data files: extents and checksums, memory maps, lookup arrays, fsync
- ``snapshot.py``     ``_Snap`` / ``_Tail`` / ``_UriView``: the immutable view a reader works on
- ``search_paths.py`` search, search_columns, search_arrays, search_batch: candidates, masks, ANN
- ``writes.py``       upsert, delete, update, apply, compaction, save and commit
- ``lexical_sync.py`` the BM25 index: write side, load, replay, save
- ``ann_worker.py``   the HNSW graph: background worker, load, save, warm-up of an opened snapshot
- ``layout.py``       format constants, column set, block sizes, array aliases, hashing helpers
- ``attributes.py``   the instance attributes (and, for mypy, the methods) the mixins share

**In memory** every node is one *row*; rows are immutable once written. A replaced node gets a
new row and its old row is marked dead; a deleted node's row is marked dead; compaction (at a
save, once dead rows outnumber live ones) rewrites the live rows and reclaims the rest. Because
rows never change, readers need no lock: every read takes the current :class:`_Snap` (one
attribute read) and works on it, while the single writer builds the next snapshot and publishes
it. Columns are numpy arrays: vectors, URI/parent hashes, chunk index, leaf flag, level and
context type, and byte offsets into two blobs that hold each row's URI and its node as JSON.
:class:`~treehop.models.Node` objects are parsed only for the rows a call returns (a bounded
cache keeps the hot ones). The lookup structures are sorted arrays (rows by URI hash, by URI,
by parent hash; tag-label hash -> rows; each row's parent row), merged incrementally on writes.

**On disk** (``<path>/``)::

    CURRENT                  "MANIFEST-000012 <crc32 of that file>"
    MANIFEST-000012.json     format version, row counts, file sizes + checksums, meta
    data-000003/*.bin        append-only columns of epoch 3 (vectors, hashes, offsets, blobs)
    index-000012.bin         the lookup arrays of generation 12 (one file, checksummed)
    lexical-000011/          the BM25 index, rewritten only when it changed
    ann-000010.bin           the usearch HNSW graph, rewritten only when it grew enough
    state/                   opaque blobs (sessions, settings), each replaced atomically
    LOCK                     the writer lock (see :mod:`.._filelock`)

A save appends the rows written since the previous save to the epoch's column files (whatever an
interrupted save or a rolled-back generation left beyond the committed sizes is dropped first,
by a copy of the committed bytes renamed over the file: another client may still map it), writes
the small lookup file, then a manifest, then swaps ``CURRENT`` (write, fsync, rename). Each
append is recorded in the manifest as extents of at most 32 MiB with their checksums, so every
byte is checksummed (XXH3-64; extents written by format 2 keep their CRC-32, see
:mod:`.._checksum`). The BM25 file is rewritten only after a compaction or once the rows changed
since it was written pass ``_LEX_REPLAY``; until then those rows are replayed from the node
texts when it loads.

**Verification** (``verify=True``, the default): nothing unverified is ever served. Before
``open`` returns, every extent of every file but the node texts is checksummed and every vector
checked finite. The checksums run on the memory maps the searches use (no copy into buffers,
whose fresh pages cost a fault each, more than the checksum itself), the extents are independent
jobs on all cores (the checksums and numpy release the GIL), and the finiteness check reads each
vector block right after its checksum, while it is in cache. The node texts (a quarter of the
bytes) are checked lazily, before first use: a reader verifies the 1 MiB extents holding the
rows it reads, a background pass the rest, a save all of them (it may rewrite checksums), and a
damaged extent raises :class:`~treehop.errors.IndexCorruptError` to whoever reads it; the URI
and node pages are unmapped after their check, so they need not stay resident. Vectors are not
deferred: the first exact search reads every one, so that would only move the cost into the
first query. A generation recovered without ``CURRENT`` is verified whole at open.
``verify="background"`` checks vectors and texts in a thread instead (calls made before it ends
are unprotected); ``False`` trusts the files.

**Writers**: one per index across processes (a file lock taken at the first write and released
by the save that commits it; a waiting writer gives up after ``lock_timeout`` seconds with
:class:`~treehop.errors.IndexLockedError`). A writer that takes the lock after another process
committed reloads first, so no committed update is lost. Inside one process, clients share one
store per path through :meth:`EmbeddedStore.shared`.

**Search** is exact (numpy ``einsum`` matvec) except the global step of a large index, which
asks a persisted HNSW graph (usearch, 8-bit vectors, see :mod:`.._ann`) for candidates and
rescores them exactly; rows written after the graph was last extended are searched exactly
beside it. The graph is kept out of the write path: writes publish rows and return, a
background worker extends the graph afterwards, and a save persists it as far as it got.
:meth:`EmbeddedStore.close` and an interpreter-exit hook stop and join the worker (and every
other background thread: a daemon thread left inside usearch's C++ at exit aborts the
process) and save the graph so far; the next open resumes the build from there.
A saved graph opens memory-mapped (O(1)). The query over-fetches by the share of the index
the scope admits, and its answer is kept briefly so that the descent's deeper global step
(same query, larger limit) slices it instead of searching again. Reads take no lock (usearch
releases the GIL, so searches from several threads run in parallel); ``search_batch``
answers many queries with one graph call or one matrix product.
"""

from .layout import FORMAT_VERSION, READABLE_FORMATS
from .manifest import AUTO_VERIFY_BYTES
from .search_paths import HEADING_PATH
from .store import DEFAULT_ANN_MIN_ROWS, EmbeddedStore
from .writes import reads_for_a_write

__all__ = [
    "AUTO_VERIFY_BYTES",
    "DEFAULT_ANN_MIN_ROWS",
    "FORMAT_VERSION",
    "HEADING_PATH",
    "READABLE_FORMATS",
    "EmbeddedStore",
    "reads_for_a_write",
]
