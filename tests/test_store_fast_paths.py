"""The embedded store's shortcuts give the same answers as the long way round: update_nodes
against get_vectors + upsert, a BM25 index replayed at load against one rebuilt from the texts,
block-wise verification against damage in any block, reused HNSW answers against fresh ones."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from treehop.errors import IndexCorruptError, NotFoundError
from treehop.models import ContextType, Node
from treehop.stores.base import Scope
from treehop.stores.embedded import EmbeddedStore
from treehop.stores.embedded import column_files as emb_files
from treehop.stores.embedded import layout as emb_layout
from treehop.stores.embedded import manifest as emb_manifest
from treehop.stores.embedded import search_paths as emb_search
from treehop.stores.embedded import snapshot as emb_snapshot

from treehop_test_doubles import store_folder
from treehop_test_doubles import store_leaf as leaf
from treehop_test_doubles import unit_vectors as vecs

R = "viking://resources"
DIM = 8


WORDS = ["kafka", "tree", "vector", "index", "river", "stone", "cloud", "bread"]


def corpus(n: int, seed: int = 0) -> list[Node]:
    rng = np.random.default_rng(seed)
    return [leaf(f"{R}/d/f{i}.md", " ".join(rng.choice(WORDS, size=6).tolist())) for i in range(n)]


# ---------------------------------------------------------------------- update_nodes
def test_update_nodes_keeps_vectors_and_rewrites_only_what_changed(tmp_path: Path) -> None:
    s = EmbeddedStore(tmp_path / "i")
    nodes = corpus(30)
    v = vecs(30, 1)
    s.upsert(nodes, v)
    s.save()
    rows_before = s._snap.n
    assert s.update_nodes(nodes) == 0  # nothing differs: nothing written
    assert not s._dirty and s._snap.n == rows_before
    edited = [n.model_copy(update={"tags": ["user:new"]}) for n in nodes[:3]]
    assert s.update_nodes(edited + nodes[3:]) == 3
    assert s._snap.n == rows_before + 3
    got = s.get([n.uri for n in nodes[:4]])
    assert [g.tags if g else None for g in got[:3]] == [["user:new"]] * 3
    assert got[3] is not None and got[3].tags == ["auto:alpha"]
    # vectors stay the stored ones, also after a save and a reopen
    np.testing.assert_array_equal(s.get_vectors([n.uri for n in nodes]), v)
    s.save()
    again = EmbeddedStore(tmp_path / "i")
    np.testing.assert_array_equal(again.get_vectors([n.uri for n in nodes]), v)
    assert again.get([nodes[0].uri])[0] == edited[0]


def test_update_nodes_checks_every_uri_before_writing(tmp_path: Path) -> None:
    s = EmbeddedStore(tmp_path / "i")
    nodes = corpus(5)
    s.upsert(nodes, vecs(5))
    s.save()
    changed = nodes[0].model_copy(update={"abstract": "changed"})
    with pytest.raises(NotFoundError):
        s.update_nodes([changed, leaf(f"{R}/d/missing.md")])
    assert not s._dirty and s.get([nodes[0].uri])[0] == nodes[0]


# ---------------------------------------------------------------------- lexical replay
def hybrid(s: EmbeddedStore, q: np.ndarray, text: str) -> list[tuple[str, float]]:
    return [
        (h.node.uri, round(h.score, 5))
        for h in s.search(q, Scope(), 8, query_text=text, dense_weight=0.3)
    ]


def test_small_changes_do_not_rewrite_bm25_and_are_replayed_at_load(tmp_path: Path) -> None:
    path = tmp_path / "i"
    s = EmbeddedStore(path)
    nodes = corpus(60)
    s.upsert(nodes, vecs(60, 2))
    s.save()
    first = s._committed["lexical"] if s._committed else None
    assert first is not None
    # a changed text, a new document and a deletion: the BM25 file stays, rows are recorded
    s.upsert([leaf(nodes[3].uri, "kafka kafka kafka river")], vecs(1, 3))
    s.upsert([leaf(f"{R}/d/new.md", "stone stone bread")], vecs(1, 4))
    s.delete([nodes[5].uri])
    s.save()
    m = s._committed
    assert m is not None and m["lexical"]["dir"] == first["dir"]
    q = vecs(1, 9)[0]
    want = {t: hybrid(s, q, t) for t in ("kafka river", "stone bread", "tree index")}
    s.close()
    # a fresh process: saved index + replayed rows == the index the writer had in memory
    again = EmbeddedStore(path)
    assert {t: hybrid(again, q, t) for t in want} == want
    assert again.lexical is not None and len(again.lexical) == len(again)
    # and == an index rebuilt from every text (the lexical directory removed)
    shutil.rmtree(path / first["dir"])
    rebuilt = EmbeddedStore(path)
    assert {t: hybrid(rebuilt, q, t) for t in want} == want


def test_many_changes_rewrite_bm25(tmp_path: Path) -> None:
    s = EmbeddedStore(tmp_path / "i")
    s.upsert(corpus(20), vecs(20))
    s.save()
    first = s._committed["lexical"]["dir"] if s._committed else None
    more = [leaf(f"{R}/e/g{i}.md", "cloud river") for i in range(emb_layout._LEX_REPLAY + 1)]
    s.upsert(more, vecs(len(more), 5))
    s.save()
    assert s._committed is not None and s._committed["lexical"]["dir"] != first
    assert s._committed["lexical"]["rows"] == s._snap.n


def test_a_compaction_after_a_kept_bm25_file_rewrites_it(tmp_path: Path) -> None:
    path = tmp_path / "i"
    s = EmbeddedStore(path)
    nodes = corpus(1500)
    s.upsert(nodes, vecs(1500, 2))
    s.save()
    first = s._committed["lexical"]["dir"] if s._committed else ""
    s.upsert([leaf(nodes[0].uri, "bread bread cloud")], vecs(1, 3))
    s.save()
    assert s._committed is not None and s._committed["lexical"]["dir"] == first
    s.delete([n.uri for n in nodes[100:1400]])  # dead rows outnumber live ones: compaction
    s.save()
    m = s._committed
    assert m is not None and m["rows"] == m["live"] == 200
    assert m["lexical"]["dir"] != first and m["lexical"]["rows"] == 200
    q = vecs(1, 9)[0]
    want = {t: hybrid(s, q, t) for t in ("bread cloud", "kafka tree")}
    s.close()
    assert {t: hybrid(EmbeddedStore(path), q, t) for t in want} == want


# ---------------------------------------------------------------------- verification
def test_every_block_of_a_large_file_is_verified(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(emb_files, "_BLOCK", 256)  # 8 vectors of 8 floats per extent
    s = EmbeddedStore(tmp_path / "good")
    s.upsert(corpus(40), vecs(40))
    s.save()
    s.close()
    m = emb_manifest._read_manifest(
        tmp_path / "good", (tmp_path / "good" / "CURRENT").read_text()[:20], None
    )
    assert len(m["files"]["vectors"]["extents"]) == 5
    for where in (0, 700, 1279):  # first, middle, last block
        p = tmp_path / f"flip{where}"
        shutil.copytree(tmp_path / "good", p)
        f = next(p.glob("data-*/vectors.bin"))
        raw = bytearray(f.read_bytes())
        raw[where] ^= 0x10
        f.write_bytes(bytes(raw))
        with pytest.raises(IndexCorruptError, match="checksum"):
            EmbeddedStore(p)
    # a NaN whose block checksum was recomputed (a buggy writer) is caught too
    p = tmp_path / "nan"
    shutil.copytree(tmp_path / "good", p)
    f = next(p.glob("data-*/vectors.bin"))
    arr = np.fromfile(f, dtype=np.float32)
    arr[100] = np.nan
    arr.tofile(f)
    cur = (p / "CURRENT").read_text().split()[0]
    m = emb_manifest._read_manifest(p, cur, None)
    m["files"]["vectors"]["extents"] = emb_files._sum_blocks(f, m["files"]["vectors"]["size"])
    emb_manifest._write_manifest(p, m)
    with pytest.raises(IndexCorruptError, match="NaN"):
        EmbeddedStore(p)
    assert len(EmbeddedStore(tmp_path / "good")) == 40


def test_node_texts_are_verified_before_first_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(emb_files, "_NODE_BLOCK", 512)
    s = EmbeddedStore(tmp_path / "good")
    nodes = corpus(60)
    s.upsert(nodes, vecs(60))
    s.save()
    s.close()
    m = emb_manifest._read_manifest(
        tmp_path / "good", (tmp_path / "good" / "CURRENT").read_text()[:20], None
    )
    assert len(m["files"]["nodes"]["extents"]) > 4
    # intact: opens, every extent verified by readers or the background pass
    ok = EmbeddedStore(tmp_path / "good")
    guard = ok._snap.nodes_guard
    assert guard is not None
    assert [n.uri for n in ok.iter_nodes()] == [n.uri for n in nodes]
    assert guard.done.all()
    # damaged last extent: the store opens, rows elsewhere are served, the damaged rows and
    # a save (which needs every byte verified) raise
    p = tmp_path / "bad"
    shutil.copytree(tmp_path / "good", p)
    f = next(p.glob("data-*/nodes.bin"))
    raw = bytearray(f.read_bytes())
    raw[-3] ^= 0x20
    f.write_bytes(bytes(raw))
    bad = EmbeddedStore(p)
    assert bad.get([nodes[0].uri])[0] == nodes[0]
    with pytest.raises(IndexCorruptError, match="checksum"):
        bad.get([nodes[-1].uri])
    with pytest.raises(IndexCorruptError):
        list(bad.iter_nodes())
    with pytest.raises(IndexCorruptError):
        bad.upsert([leaf(f"{R}/d/new.md")], vecs(1, 5))
        bad.save()
    # a generation recovered without CURRENT is verified whole before use
    (p / "CURRENT").unlink()
    with pytest.raises(IndexCorruptError):
        EmbeddedStore(p)


def test_many_small_appends_are_rechecksummed_in_blocks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(emb_files, "_MAX_EXTENTS", 3)
    monkeypatch.setattr(emb_files, "_BLOCK", 1024)
    s = EmbeddedStore(tmp_path / "i")
    for i in range(8):
        s.upsert([leaf(f"{R}/d/f{i}.md")], vecs(1, i))
        s.save()
    ext = s._committed["files"]["vectors"]["extents"] if s._committed else []
    assert len(ext) <= 3 + 1 and ext[-1][1] == 8 * DIM * 4
    assert len(EmbeddedStore(tmp_path / "i")) == 8


# ---------------------------------------------------------------------- HNSW answers
def test_reused_hnsw_answers_equal_fresh_queries() -> None:
    from treehop.stores import _ann

    rng = np.random.default_rng(0)
    s = EmbeddedStore(ann_min_rows=0, lexical=False)
    n = 600
    s.upsert([leaf(f"{R}/d/f{i}.md") for i in range(n)], vecs(n, 3, dim=32))
    assert s.wait_ann(timeout=60)
    q = rng.standard_normal(32).astype(np.float32)
    q /= np.linalg.norm(q)
    small = s.search(q, Scope(subtrees=(R,)), 10)
    ann = s._ann
    assert ann is not None and len(ann.recent) == 1
    deeper = s.search(q, Scope(subtrees=(R,)), 40)
    assert len(ann.recent) == 1  # the deeper step reused the first answer
    assert [h.node.uri for h in deeper[:10]] == [h.node.uri for h in small]
    # the same as asking the graph afresh at the same width (a query searches
    # ``search_width`` wide whatever its k; the graph's own expansion is only the check's)
    wide = max(64, _ann.search_width(ann.count))
    fresh = np.asarray(ann.index.search(q, wide).keys, dtype=np.int64)[:64]
    np.testing.assert_array_equal(ann.query(q, 64), fresh)
    # growing the index drops remembered answers
    s.upsert(
        [leaf(f"{R}/e/g{i}.md") for i in range(_ann.CATCH_UP_ROWS)], vecs(_ann.CATCH_UP_ROWS, 4, 32)
    )
    assert s.wait_ann(timeout=60)
    assert ann.count == n + _ann.CATCH_UP_ROWS and not ann.recent


def test_reused_exact_scores_equal_fresh_ones() -> None:
    s = EmbeddedStore(lexical=False)
    nodes = corpus(300)
    s.upsert(nodes, vecs(300, 6))
    q = vecs(1, 8)[0]
    wide = Scope(subtrees=(R,))
    first = s.search(q, wide, 10)
    kept = [k for k in s._snap.cache if k[0] == "dense"]
    assert len(kept) == 1
    deeper = s.search(q, wide, 40)
    assert [k for k in s._snap.cache if k[0] == "dense"] == kept  # answered from it
    assert [h.node.uri for h in deeper[:10]] == [h.node.uri for h in first]
    fresh = EmbeddedStore(lexical=False)
    fresh.upsert(nodes, vecs(300, 6))
    want = fresh.search(q, Scope(subtrees=(R,), leaves_only=True), 40)
    assert [(h.node.uri, h.score) for h in deeper] == [(h.node.uri, h.score) for h in want]
    # a write publishes a new snapshot: nothing is reused across it
    s.upsert([leaf(f"{R}/d/new.md")], q[None, :])
    assert s.search(q, wide, 1)[0].node.uri == f"{R}/d/new.md"


def test_wide_scopes_of_one_query_share_one_pass_over_the_vectors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # find() asks several wide scopes with one query (global step, tree context's leaf pool):
    # the cosines to every row are computed once and each scope gathers from them.
    s = EmbeddedStore(lexical=False)
    nodes = corpus(300)
    s.upsert(nodes, vecs(300, 6))
    q = vecs(1, 9)[0]
    passes = 0
    real = emb_snapshot._Snap.scores_all

    def counting(self: Any, qv: Any) -> Any:
        nonlocal passes
        passes += 1
        return real(self, qv)

    monkeypatch.setattr(emb_snapshot._Snap, "scores_all", counting)
    every = s.search(q, Scope(subtrees=(R,)), 10)
    leaves = s.search(q, Scope(subtrees=(R,), leaves_only=True), 30)
    assert passes == 1
    s.search(vecs(1, 10)[0], Scope(subtrees=(R,), leaves_only=True), 30)
    assert passes == 2  # another query is another pass
    fresh = EmbeddedStore(lexical=False)
    fresh.upsert(nodes, vecs(300, 6))
    for scope, got, k in (
        (Scope(subtrees=(R,)), every, 10),
        (Scope(subtrees=(R,), leaves_only=True), leaves, 30),
    ):
        want = fresh.search(q, scope, k)
        assert [(h.node.uri, h.score) for h in got] == [(h.node.uri, h.score) for h in want]
    # a write publishes a new snapshot, whose scores are computed afresh
    s.upsert([leaf(f"{R}/d/new.md")], q[None, :])
    passes = 2
    assert s.search(q, Scope(subtrees=(R,), leaves_only=True), 1)[0].node.uri == f"{R}/d/new.md"
    assert passes == 3


def test_optional_store_features_are_declared_protocols() -> None:
    # The client and the writer use these through the protocols in stores/base.py, not by
    # looking attributes up by name; a store without them takes the generic path.
    from treehop.stores.base import IncrementalStore, IndexMetaStore, VectorStore

    s = EmbeddedStore(lexical=False)
    assert isinstance(s, VectorStore)
    assert isinstance(s, IncrementalStore) and isinstance(s, IndexMetaStore)

    class OnlyMeta:
        def __init__(self) -> None:
            self.meta: dict[str, Any] = {}

    assert isinstance(OnlyMeta(), IndexMetaStore)
    assert not isinstance(OnlyMeta(), IncrementalStore)


# ---------------------------------------------------------------------- concurrent finds
def test_concurrent_sync_finds_answer_as_sequential_ones(tmp_path: Path, bow: Any) -> None:
    import threading

    from treehop import Treehop

    src = tmp_path / "src"
    for d in range(4):
        (src / f"d{d}").mkdir(parents=True)
        for f in range(5):
            text = " ".join(WORDS[(d + f + i) % len(WORDS)] for i in range(12))
            (src / f"d{d}" / f"f{f}.md").write_text(f"# doc {d} {f}\n\n{text}\n")
    with Treehop(tmp_path / "i", embedder=bow, tagger=None) as th:
        th.add_resource(src, target_uri="viking://resources/src")
        store = th.store
        assert isinstance(store, EmbeddedStore)
        searched_in: set[int] = set()

        def spying(original: Any) -> Any:
            def spy(*args: Any, **kwargs: Any) -> Any:
                searched_in.add(threading.get_ident())
                return original(*args, **kwargs)

            return spy

        # the retriever's own searches (children, tree context) read columns or arrays: spy
        # on every kind
        store.search = spying(store.search)  # type: ignore[method-assign]
        store.search_columns = spying(store.search_columns)  # type: ignore[method-assign]
        store.search_arrays = spying(store.search_arrays)  # type: ignore[method-assign]
        queries = [f"{a} {b}" for a in WORDS for b in WORDS[:3]]
        want = {q: [m.uri for m in th.find(q, limit=5).resources] for q in queries}
        # a sync find runs every search on the calling thread's own loop, inline (no worker
        # thread, no hop to the client's loop thread) ...
        assert searched_in == {threading.get_ident()}
        # ... and on the client's loop, the global step goes to a worker, children inline
        searched_in.clear()
        for q in queries[:3]:
            th.run(th.aio.find(q, limit=5))
        assert len(searched_in) >= 2 and threading.get_ident() not in searched_in
        searched_in.clear()
        got: dict[str, list[str]] = {}
        errors: list[BaseException] = []

        def run(part: list[str]) -> None:
            try:
                for q in part:
                    got[q] = [m.uri for m in th.find(q, limit=5).resources]
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        threads = [threading.Thread(target=run, args=(queries[i::3],)) for i in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors and got == want
        assert searched_in == {t.ident for t in threads}  # each thread searched itself


# ---------------------------------------------------------------------- memory
def test_node_texts_are_read_by_offset_and_caches_stay_bounded(tmp_path: Path) -> None:
    s = EmbeddedStore(tmp_path / "i", lexical=False)
    nodes = corpus(60)
    s.upsert(nodes, vecs(60))
    s.save()
    s.close()
    t = EmbeddedStore(tmp_path / "i", lexical=False)
    snap = t._snap
    assert snap.nodes_file is not None
    assert t.get([nodes[7].uri])[0] == nodes[7]
    # a scope over a different set of subtrees with every query (the tree context's family
    # search) must not grow the snapshot's cache without bound
    q = vecs(1, 4)[0]
    for i in range(200):
        t.search(q, Scope(subtrees=(nodes[i % 60].uri, nodes[(i * 7) % 60].uri)), 3)
    assert sum(1 for k in list(snap.cache) if k[0] == "subtrees") <= 64
    # texts are read from the file, not the map: a file cut short after open is a typed
    # error for the rows past its end (a map would have raised SIGBUS)
    if snap.nodes_guard is not None:
        snap.nodes_guard.verify_all()  # checked before the cut: the map is not read again
    t._node_cache.clear()
    f = next((tmp_path / "i").glob("data-*/nodes.bin"))
    with open(f, "r+b") as fh:
        fh.truncate(10)
    with pytest.raises(IndexCorruptError, match="shorter"):
        t.get([nodes[-1].uri])


@pytest.mark.parametrize(
    ("span", "few"), [(-(1 << 30), 64), (-(1 << 30), 0), (4096, 64), (4096, 0), (1 << 20, 64)]
)
def test_uri_decodes_of_near_and_far_rows_equal_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, span: int, few: int
) -> None:
    """``uris_of`` reads rows that lie close together as one slice, a few scattered ones
    one by one from a view of the blob, and more of them by a gather; directory URIs are
    kept per snapshot (``uris_with_dirs``). Every way answers
    what one decode per row does, row 0 and non-ASCII URIs included, and the kept
    directories follow writes: a new snapshot, and renumbered rows after a compaction.
    (``span``: a negative one reads every set as far apart, 1 MB every set as one slice;
    ``few``: up to this many rows the offsets are read as Python lists and far rows decoded
    one by one, else as arrays and gathered.)"""
    monkeypatch.setattr(emb_snapshot, "_SPAN_BYTES", span)
    monkeypatch.setattr(emb_snapshot, "_FEW_ROWS", few)
    s = EmbeddedStore(tmp_path / "i", lexical=False)
    dirs = [store_folder(f"{R}/d{k}", R) for k in range(3)]
    files = [
        leaf(f"{R}/d{k}/f{i}-{'é' if i == 3 else 'e'}.md") for k in range(3) for i in range(40)
    ]
    s.upsert([*dirs, *files], vecs(len(dirs) + len(files)))
    s.save()
    s.close()
    t = EmbeddedStore(tmp_path / "i", lexical=False)
    snap = t._snap
    assert snap.n_base == snap.n  # every row in the memory-mapped blob
    one = [snap.uri(r) for r in range(snap.n)]
    assert one[0] == dirs[0].uri and one[10] == files[7].uri
    for rows in (
        [0, 1, 2],
        [5, 6, 7, 8],
        [3, 4, 6],
        [0, 60, 122],
        [122, 0, 41, 41],
        list(range(123)),
    ):
        r = np.array(rows, np.int64)
        assert snap.uris_of(r) == [one[i] for i in rows]
        got, names = snap.uris_with_dirs(r, np.array([2, 0], np.int64))
        assert got == [one[i] for i in rows] and names == [dirs[2].uri, dirs[0].uri]
    assert snap.cache[("dir_uris",)] == {0: dirs[0].uri, 2: dirs[2].uri}
    assert snap.dir_uris(np.array([1, 2], np.int64)) == [dirs[1].uri, dirs[2].uri]
    # a search's parents come from the kept URIs, and equal the nodes' own
    hits = t.search_columns(vecs(1, 9)[0], Scope(subtrees=(R,), leaves_only=True), 50)
    assert hits.parent_uris == [u.rsplit("/", 1)[0] for u in hits.uris]
    # a write publishes a new snapshot, with nothing kept; a compaction renumbers the rows
    t.delete([dirs[0].uri, *(f.uri for f in files[:40])])
    t.upsert([store_folder(f"{R}/d9", R), leaf(f"{R}/d9/new.md")], vecs(2, 3))
    assert ("dir_uris",) not in t._snap.cache
    t.save()
    t.close()
    u = EmbeddedStore(tmp_path / "i", lexical=False)
    hits = u.search_columns(vecs(1, 9)[0], Scope(subtrees=(R,), leaves_only=True), 200)
    assert hits.parent_uris == [x.rsplit("/", 1)[0] for x in hits.uris]
    assert f"{R}/d9" in hits.parent_uris and f"{R}/d0" not in hits.parent_uris
    kept = u._snap.cache[("dir_uris",)]
    assert all(u._snap.uri(r) == uri for r, uri in kept.items())


def test_kept_rows_of_looked_up_uris_follow_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A few URIs' rows (a find's targets) are kept per snapshot: a write publishes a new
    snapshot, so a deleted URI is not found and a new one is, also after a compaction
    renumbers the rows; absent URIs are kept as absent; the kept rows stay bounded."""
    s = EmbeddedStore(tmp_path / "i", lexical=False)
    nodes = corpus(10)
    s.upsert(nodes, vecs(10))
    a, b, c = nodes[2].uri, nodes[5].uri, f"{R}/d/new.md"
    for _ in range(2):  # the second time from the kept rows
        assert s._snap.lookup([a, b, c]).tolist() == [2, 5, -1]
        assert [n.uri if n else None for n in s.get([a, c])] == [a, None]
    s.delete([a])
    s.upsert([leaf(c)], vecs(1, 2))
    for _ in range(2):
        assert s._snap.lookup([a, c]).tolist() == [-1, 10]
    s.save()  # compacts: the rows move
    s.close()
    t = EmbeddedStore(tmp_path / "i", lexical=False)
    rows = t._snap.lookup([b, c, a])
    assert rows[2] == -1 and [t._snap.uri(int(r)) for r in rows[:2]] == [b, c]
    assert t._snap.lookup([b, c, a]).tolist() == rows.tolist()
    monkeypatch.setattr(emb_snapshot, "_KEPT_ROWS", 3)
    for n in nodes[3:]:
        assert t._snap.lookup([n.uri]).tolist() == [t._snap.lookup([n.uri, b, c, a, b])[0]]
        assert len(t._snap.cache[("rows",)]) <= 3


def test_kept_directory_uris_stay_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    s = EmbeddedStore(tmp_path / "i", lexical=False)
    dirs = [store_folder(f"{R}/d{k}", R) for k in range(12)]
    s.upsert(dirs, vecs(12))
    s.save()
    snap = s._snap
    monkeypatch.setattr(emb_snapshot, "_DIR_URIS", 5)
    for k in range(0, 12, 3):
        rows = np.array([k, k + 1, k + 2], np.int64)
        assert snap.dir_uris(rows) == [dirs[i].uri for i in rows.tolist()]
        assert len(snap.cache[("dir_uris",)]) <= 5


# ---------------------------------------------------------------------- batches
def test_block_bound_keeps_every_rows_k_best() -> None:
    rng = np.random.default_rng(8)
    for n, k in ((5000, 10), (1030, 4), (300, 3), (2000, 40)):
        m = rng.standard_normal((6, n)).astype(np.float32)
        m[1, ::7] = 0.5  # ties around the bound
        m[2, 100:] = -np.inf  # a scope leaving few rows
        qi, pos = emb_search._top_candidates(m, k)
        for r in range(m.shape[0]):
            found = set(pos[qi == r].tolist())
            kth = np.sort(m[r])[-k]
            assert {int(i) for i in np.flatnonzero(m[r] >= kth)} <= found


def test_whole_index_batch_equals_one_by_one() -> None:
    s = EmbeddedStore(lexical=False)
    top = Node(
        uri=f"{R}/d", parent_uri=R, context_type=ContextType.RESOURCE, level=1, is_leaf=False
    )
    nodes = [top] + [leaf(f"{R}/d/f{i}.md") for i in range(3000)]
    s.upsert(nodes, vecs(len(nodes), 2))
    s.delete([nodes[5].uri, nodes[77].uri])
    qs = vecs(9, 12)
    for scope in (Scope(), Scope(leaves_only=True), Scope(subtrees=(f"{R}/d",))):
        batch = s.search_batch(qs, scope, 7)
        for q, got in zip(qs, batch, strict=True):
            want = s.search(q, scope, 7)
            assert [h.node.uri for h in got] == [h.node.uri for h in want]
            assert [h.score for h in got] == pytest.approx([h.score for h in want], abs=1e-5)


def test_finite_check_by_sum_is_exact() -> None:
    ok = np.ones(1000, np.float32)
    assert emb_files._all_finite(ok)
    big = np.full(1000, 3e38, np.float32)  # the sum overflows, every value is finite
    assert emb_files._all_finite(big)
    for bad in (np.nan, np.inf, -np.inf):
        x = ok.copy()
        x[517] = bad
        assert not emb_files._all_finite(x)
    x = ok.copy()
    x[3], x[9] = np.inf, -np.inf  # they cancel into NaN, still caught
    assert not emb_files._all_finite(x)


def test_writes_after_an_open_do_not_load_bm25_and_it_catches_up_when_used(
    tmp_path: Path,
) -> None:
    """The first write after an open used to load the whole BM25 index (3.6 s at 100k rows)
    before writing one row. Small writes now leave it unloaded; when a hybrid search (or a
    save that must rewrite it, or a compaction) loads it, the rows it lacks are replayed
    from the node texts, so every answer equals the one of an index that was always in
    memory."""
    path = tmp_path / "i"
    ref = EmbeddedStore(None)
    s = EmbeddedStore(path)
    nodes = corpus(1500)
    for st in (ref, s):
        st.upsert(nodes, vecs(1500, 2))
    s.save()
    s.close()
    again = EmbeddedStore(path)
    changes: list[tuple[str, Any]] = [
        ("up", ([leaf(nodes[3].uri, "kafka kafka kafka river")], vecs(1, 3))),
        ("up", ([leaf(f"{R}/d/new.md", "stone stone bread")], vecs(1, 4))),
        ("del", [nodes[5].uri, nodes[7].uri]),
    ]
    for st in (ref, again):
        for kind, arg in changes:
            if kind == "up":
                st.upsert(*arg)
            else:
                st.delete(arg)
    assert again._lex is None  # three writes, no BM25 load
    q = vecs(1, 9)[0]
    texts = ("kafka river", "stone bread", "tree index", "cloud")
    assert {t: hybrid(again, q, t) for t in texts} == {t: hybrid(ref, q, t) for t in texts}
    assert again._lex is not None and len(again._lex) == len(again) == len(ref)
    # unloaded at a save: the saved file is kept and the next process replays the rows
    first = again._committed["lexical"]["dir"] if again._committed else ""
    again.save()
    again.close()
    third = EmbeddedStore(path)
    third.upsert([leaf(f"{R}/d/more.md", "bread river")], vecs(1, 6))
    ref.upsert([leaf(f"{R}/d/more.md", "bread river")], vecs(1, 6))
    assert third._lex is None
    third.save()
    assert third._committed is not None and third._committed["lexical"]["dir"] == first
    # a compaction renumbers rows: the save loads the index (replaying) and rewrites it
    gone = [n.uri for n in nodes[100:1400]]
    third.delete(gone)
    ref.delete(gone)
    assert third._lex is None
    third.save()
    m = third._committed
    assert m is not None and m["rows"] == m["live"] and m["lexical"]["dir"] != first
    third.close()
    last = EmbeddedStore(path)
    assert {t: hybrid(last, q, t) for t in texts} == {t: hybrid(ref, q, t) for t in texts}


def test_rows_of_decoded_directory_uris_are_lookups_answers(tmp_path: Path) -> None:
    """The rows of directory URIs decoded by ``uris_with_dirs`` (a search's parents) are
    kept as ``lookup``'s answers (the tree context then searches those parents' subtrees
    without a binary search): each equals the row a fresh lookup finds, a dead directory
    row (its folder rewritten, so its URI names a newer row) is not kept, and the subtree
    searches answer as with nothing kept."""
    s = EmbeddedStore(tmp_path / "i", lexical=False)
    dirs = [store_folder(f"{R}/d{k}", R) for k in range(4)]
    files = [leaf(f"{R}/d{k}/f{i}.md", WORDS[i]) for k in range(4) for i in range(5)]
    s.upsert(dirs, vecs(4))
    s.upsert(files, vecs(20, 1))
    s.upsert([dirs[1]], vecs(1, 2))  # d1 rewritten: its first row (1) is dead, not compacted
    snap = s._snap
    assert not snap.alive[1] and int(snap.lookup([dirs[1].uri])[0]) != 1
    snap.cache.clear()
    q = vecs(1, 3)[0]
    leaves = s.search_columns(q, Scope(subtrees=(R,), leaves_only=True), 20)
    kept = dict(snap.cache[("rows",)])
    assert kept.pop(R) == -1  # (the scope's root, looked up: not stored)
    assert set(kept) == {d.uri for d in dirs}
    keys = snap.sorted_keys("uri_hash", snap.by_hash)
    assert all(snap._row_of(u, keys) == r for u, r in kept.items())
    assert snap.dir_uris(np.array([1], np.int64)) == [dirs[1].uri]  # the dead row
    assert snap.cache[("rows",)][dirs[1].uri] == kept[dirs[1].uri] != 1
    for k in range(4):
        scope = Scope(subtrees=(dirs[k].uri,))
        got = s.search_columns(q, scope, 20)
        snap.cache.clear()
        again = s.search_columns(q, scope, 20)
        assert (got.uris, got.scores) == (again.uris, again.scores)
        assert len(got) == 6
    assert len(leaves) == 20
