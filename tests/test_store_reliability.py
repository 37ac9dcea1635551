"""The embedded store under attack: killed writers, two writers, damaged files, full disks,
threaded readers against a writer, and indexes written by the previous format."""

from __future__ import annotations

import errno
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from treehop.errors import IndexCorruptError, IndexLockedError, StoreError
from treehop.filters import TagFilter
from treehop.models import ContextType, Node
from treehop.stores import _checksum as ck
from treehop.stores.base import Scope
from treehop.stores.embedded import EmbeddedStore
from treehop.stores.embedded import column_files as emb_files
from treehop.stores.embedded import layout as emb_layout
from treehop.stores.embedded import manifest as emb_manifest
from treehop.stores.embedded import search_paths as emb_search
from treehop.stores.embedded import snapshot as emb_snapshot
from treehop.stores.embedded import store as emb_store
from treehop.stores.embedded import writes as emb_writes

from treehop_test_doubles import store_leaf as leaf
from treehop_test_doubles import unit_vectors as vecs

R = "viking://resources"
DIM = 8
REPO = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": f"{REPO / 'retrieval'}{os.pathsep}{REPO / 'integrations'}"}


def dirnode(uri: str) -> Node:
    return Node(
        uri=uri,
        parent_uri=uri.rsplit("/", 1)[0],
        context_type=ContextType.RESOURCE,
        level=1,
        is_leaf=False,
        abstract=uri.rsplit("/", 1)[-1],
    )


def filled(path: Path, n: int = 20, saves: int = 2) -> EmbeddedStore:
    """A saved index of ``n`` leaves under ``d``, written in ``saves`` generations."""
    s = EmbeddedStore(path)
    s.upsert([dirnode(f"{R}/d")], vecs(1, 99))
    per = n // saves
    for g in range(saves):
        s.upsert([leaf(f"{R}/d/f{g * per + i}.md", i=i) for i in range(per)], vecs(per, g))
        s.save()
    return s


def current_manifest(path: Path) -> dict[str, Any]:
    m: dict[str, Any] = json.loads((path / (path / "CURRENT").read_text().split()[0]).read_text())
    return m


def rewrite_current_manifest(path: Path, change: Any) -> None:
    """Edit the current manifest and re-sign it (and CURRENT), as a buggy writer would."""
    name = (path / "CURRENT").read_text().split()[0]
    m = json.loads((path / name).read_text())
    m.pop("crc32")
    change(m)
    emb_manifest._write_manifest(path, m)


def resign_file(path: Path, f: Path) -> None:
    """Recompute the checksums the manifest holds for an edited data or index file."""

    def fix(m: dict[str, Any]) -> None:
        if f.name.startswith("index-"):
            for algo in (ck.CRC32, ck.XXH3):
                m["index"].pop(algo, None)
            m["index"]["crc32"] = zlib.crc32(f.read_bytes())  # a format-2 record still counts
            return
        info = m["files"][f.name[:-4]]
        info["extents"] = [[0, info["size"], zlib.crc32(f.read_bytes()[: info["size"]])]]

    rewrite_current_manifest(path, fix)


# ---------------------------------------------------------------------- damaged files
def test_flipped_bytes_in_any_file_are_a_typed_error(tmp_path: Path) -> None:
    filled(tmp_path / "good")
    targets = ["vectors.bin", "uris.bin", "nodes.bin", "uri_hash.bin", "node_end.bin", "leaf.bin"]
    for name in [*targets, "index", "manifest"]:
        p = tmp_path / name
        shutil.copytree(tmp_path / "good", p)
        if name == "index":
            f = p / current_manifest(p)["index"]["file"]
        elif name == "manifest":
            f = p / (p / "CURRENT").read_text().split()[0]
        else:
            f = next(p.glob(f"data-*/{name}"))
        raw = bytearray(f.read_bytes())
        raw[len(raw) // 2] ^= 0x5A
        f.write_bytes(bytes(raw))
        if name == "manifest":
            # CURRENT names a damaged manifest: the previous complete generation is used
            s = EmbeddedStore(p)
            assert len(s) == 11 and s.generation == 1
            continue
        if name == "nodes.bin":
            # node texts are verified before their first use (by a reader or in the
            # background), never served unverified
            s = EmbeddedStore(p)
            with pytest.raises(IndexCorruptError):
                list(s.iter_nodes())
            with pytest.raises(IndexCorruptError):
                s.upsert([leaf(f"{R}/d/new.md")], vecs(1, 5))
                s.save()
            continue
        with pytest.raises(IndexCorruptError):
            EmbeddedStore(p)


def _format2_index(path: Path, monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """An index written exactly as format 2 did: CRC-32 everywhere, no algorithm names;
    returns its URIs."""
    with monkeypatch.context() as mp:
        mp.setattr(ck, "DEFAULT", ck.CRC32)
        mp.setattr(emb_writes, "FORMAT_VERSION", 2)
        s = filled(path)
        uris = {n.uri for n in s.iter_nodes()}
        s.close()
    m = current_manifest(path)
    assert m["format_version"] == 2 and "crc32" in m["index"]
    assert all(len(e) == 3 for info in m["files"].values() for e in info["extents"])
    return uris


def test_format2_crc32_index_opens_verifies_and_migrates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    uris = _format2_index(tmp_path / "old", monkeypatch)
    shutil.copytree(tmp_path / "old", tmp_path / "bad")
    s = EmbeddedStore(tmp_path / "old")
    assert len(s) == len(uris) == 21
    assert {n.uri for n in s.iter_nodes()} == uris
    # the first save appends XXH3 extents beside the CRC-32 ones and writes format 3
    s.upsert([leaf(f"{R}/d/new.md")], vecs(1, 9))
    s.save()
    s.close()
    m = current_manifest(tmp_path / "old")
    assert m["format_version"] == emb_layout.FORMAT_VERSION == 3
    algos = {ck.parse_extent(e)[3] for e in m["files"]["vectors"]["extents"]}
    assert algos == {ck.CRC32, ck.XXH3}
    assert ck.XXH3 in m["index"] and ck.CRC32 not in m["index"]
    again = EmbeddedStore(tmp_path / "old")
    assert len(again) == 22 and again.get([f"{R}/d/new.md"])[0].uri == f"{R}/d/new.md"
    # a flipped byte in a CRC-32 extent of the old data is still caught
    f = next((tmp_path / "bad").glob("data-*/vectors.bin"))
    raw = bytearray(f.read_bytes())
    raw[5] ^= 0x01
    f.write_bytes(bytes(raw))
    with pytest.raises(IndexCorruptError, match="checksum"):
        EmbeddedStore(tmp_path / "bad")


def test_flipped_byte_is_caught_under_both_checksums(tmp_path: Path) -> None:
    data = bytearray(np.random.default_rng(3).bytes(1 << 16))
    f = tmp_path / "blob"
    for algo in (ck.CRC32, ck.XXH3):
        f.write_bytes(bytes(data))
        whole = ck.file_digest(f, 0, len(data), algo)
        assert whole == ck.digest(bytes(data), algo)
        rec = ck.extent(0, len(data), whole, algo)
        assert ck.parse_extent(rec) == (0, len(data), whole, algo)
        for i in (0, 1234, len(data) - 1):
            bad = bytearray(data)
            bad[i] ^= 0x80
            f.write_bytes(bytes(bad))
            assert ck.file_digest(f, 0, len(data), algo) != whole
            assert not ck.whole_file_ok(f, len(data), ck.tagged(whole, algo))
        assert ck.file_digest(f, 0, len(data) + 1, algo) == -1  # a short file
    with pytest.raises(IndexCorruptError):
        ck.parse_extent([0, 1, 2, 3])
    with pytest.raises(IndexCorruptError):
        ck.digest(b"x", "md5")


def test_truncated_and_missing_files_are_a_typed_error(tmp_path: Path) -> None:
    filled(tmp_path / "good")
    for name in ("vectors.bin", "nodes.bin", "chunk.bin"):
        p = tmp_path / f"trunc-{name}"
        shutil.copytree(tmp_path / "good", p)
        f = next(p.glob(f"data-*/{name}"))
        with open(f, "r+b") as fh:
            fh.truncate(f.stat().st_size - 3)
        with pytest.raises(IndexCorruptError):
            EmbeddedStore(p)
    p = tmp_path / "no-index"
    shutil.copytree(tmp_path / "good", p)
    for f in p.glob("index-*.bin"):
        f.unlink()
    with pytest.raises(IndexCorruptError):
        EmbeddedStore(p)


def test_nan_rows_and_inconsistent_arrays_are_caught_even_with_valid_checksums(
    tmp_path: Path,
) -> None:
    filled(tmp_path / "good")
    p = tmp_path / "nan"
    shutil.copytree(tmp_path / "good", p)
    f = next(p.glob("data-*/vectors.bin"))
    v = np.fromfile(f, dtype=np.float32)
    v[DIM * 3] = np.nan
    v.tofile(f)
    resign_file(p, f)
    with pytest.raises(IndexCorruptError, match="NaN"):
        EmbeddedStore(p)
    # a parent link pointing past the end, and a lookup row that is dead
    for arr, value in (("parent_row", 10_000), ("by_hash", 10_000)):
        p = tmp_path / arr
        shutil.copytree(tmp_path / "good", p)
        m = current_manifest(p)
        f = p / m["index"]["file"]
        off, _ = m["index"]["arrays"][arr]
        raw = bytearray(f.read_bytes())
        raw[off : off + 8] = np.int64(value).tobytes()
        f.write_bytes(bytes(raw))
        resign_file(p, f)
        with pytest.raises(IndexCorruptError, match="inconsistent"):
            EmbeddedStore(p)
    # invalid node JSON that was checksummed as written: a typed error when it is read
    p = tmp_path / "json"
    shutil.copytree(tmp_path / "good", p)
    f = next(p.glob("data-*/nodes.bin"))
    raw = bytearray(f.read_bytes())
    raw[0:1] = b"["
    f.write_bytes(bytes(raw))
    resign_file(p, f)
    s = EmbeddedStore(p)
    with pytest.raises(IndexCorruptError, match="invalid node"):
        list(s.iter_nodes())


def test_missing_or_damaged_current_recovers_the_newest_generation(tmp_path: Path) -> None:
    filled(tmp_path / "good")
    for damage in ("missing", "garbage", "wrong-crc"):
        p = tmp_path / damage
        shutil.copytree(tmp_path / "good", p)
        cur = p / "CURRENT"
        if damage == "missing":
            cur.unlink()
        elif damage == "garbage":
            cur.write_bytes(b"\x00\xff junk")
        else:
            cur.write_text(cur.read_text().split()[0] + " 00000000\n")
        s = EmbeddedStore(p)
        assert len(s) == 21 and s.generation == 2
        assert emb_manifest._read_current(p) is not None  # repaired
        # and the next save keeps every row
        s.upsert([leaf(f"{R}/d/new.md")], vecs(1, 5))
        s.save()
        assert len(EmbeddedStore(p)) == 22


def test_an_index_never_opens_empty_over_existing_data(tmp_path: Path) -> None:
    filled(tmp_path / "good")
    p = tmp_path / "no-manifests"
    shutil.copytree(tmp_path / "good", p)
    for f in p.glob("MANIFEST-*"):
        f.unlink()
    with pytest.raises(IndexCorruptError):
        EmbeddedStore(p)
    # an index path that is a file
    f = tmp_path / "file"
    f.write_text("not an index")
    with pytest.raises(StoreError, match="not a directory"):
        EmbeddedStore(f)


def test_lexical_index_damage_is_repaired_from_the_texts(tmp_path: Path) -> None:
    s = filled(tmp_path / "i")
    q = vecs(1, 7)[0]
    want = [h.node.uri for h in s.search(q, Scope(), 5, query_text="f3", dense_weight=0.3)]
    lex = tmp_path / "i" / current_manifest(tmp_path / "i")["lexical"]["dir"]
    victim = sorted(lex.iterdir())[0]
    victim.write_bytes(victim.read_bytes()[:-1] + b"\x01")
    again = EmbeddedStore(tmp_path / "i")
    got = [h.node.uri for h in again.search(q, Scope(), 5, query_text="f3", dense_weight=0.3)]
    assert got == want


def test_leftover_temporaries_are_removed_at_open(tmp_path: Path) -> None:
    filled(tmp_path / "i")
    (tmp_path / "i" / ".tmp-gen-000007-1234").mkdir()
    (tmp_path / "i" / ".tmp-gen-000007-1234" / "vectors.npy").write_bytes(b"x" * 100)
    (tmp_path / "i" / ".tmp-index-000009.bin").write_bytes(b"x")
    (tmp_path / "i" / "MANIFEST-000009.json").write_text("{}")  # never committed
    vec = next((tmp_path / "i").glob("data-*/vectors.bin"))
    size = vec.stat().st_size
    with open(vec, "ab") as fh:  # an append that was never committed
        fh.write(b"\x01" * 64)
    s = EmbeddedStore(tmp_path / "i")
    assert len(s) == 21
    names = {p.name for p in (tmp_path / "i").iterdir()}
    assert not [n for n in names if n.startswith(".tmp-")]
    assert "MANIFEST-000009.json" not in names
    s.upsert([leaf(f"{R}/d/more.md")], vecs(1, 3))
    s.save()
    assert vec.stat().st_size == size + DIM * 4  # the garbage was truncated first
    assert len(EmbeddedStore(tmp_path / "i")) == 22


# ---------------------------------------------------------------------- failing disks
@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS])
def test_disk_full_or_read_only_is_a_store_error_and_memory_equals_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    s = filled(tmp_path / "i")
    s.upsert([leaf(f"{R}/d/x{i}.md") for i in range(5)], vecs(5, 8))
    real = os.fsync
    calls = {"n": 0}

    def failing(fd: int) -> None:
        calls["n"] += 1
        if calls["n"] == 3:  # after part of the appends reached the files
            raise OSError(code, os.strerror(code))
        real(fd)

    monkeypatch.setattr(os, "fsync", failing)
    with pytest.raises(StoreError, match="reverted"):
        s.save()
    monkeypatch.setattr(os, "fsync", real)
    assert len(s) == 21 and f"{R}/d/x0.md" not in s  # memory == disk
    assert len(EmbeddedStore(tmp_path / "i")) == 21
    # the store keeps working, and the lock was released
    other = EmbeddedStore(tmp_path / "i", lock_timeout=0)
    other.upsert([leaf(f"{R}/d/y.md")], vecs(1, 9))
    other.save()
    assert len(EmbeddedStore(tmp_path / "i")) == 22


def test_bad_vectors_are_rejected_before_any_write(tmp_path: Path) -> None:
    s = filled(tmp_path / "i")
    bad = vecs(2, 1)
    bad[1, 0] = np.nan
    with pytest.raises(StoreError, match="NaN"):
        s.upsert([leaf(f"{R}/d/a.md"), leaf(f"{R}/d/b.md")], bad)
    assert len(s) == 21 and not s._dirty


# ---------------------------------------------------------------------- writers
def test_a_second_writer_waits_then_gets_a_typed_error_and_loses_nothing(
    tmp_path: Path,
) -> None:
    a = filled(tmp_path / "i")
    b = EmbeddedStore(tmp_path / "i", lock_timeout=0.2)
    a.upsert([leaf(f"{R}/d/from-a.md")], vecs(1, 1))  # a holds the lock until it saves
    t0 = time.monotonic()
    with pytest.raises(IndexLockedError):
        b.upsert([leaf(f"{R}/d/from-b.md")], vecs(1, 2))
    assert time.monotonic() - t0 >= 0.19
    assert f"{R}/d/from-b.md" not in b
    a.save()
    b.upsert([leaf(f"{R}/d/from-b.md")], vecs(1, 2))  # b reloads a's commit first
    b.save()
    final = EmbeddedStore(tmp_path / "i")
    assert f"{R}/d/from-a.md" in final and f"{R}/d/from-b.md" in final


def test_shared_store_per_path_in_one_process(tmp_path: Path) -> None:
    one = EmbeddedStore.shared(tmp_path / "i")
    two = EmbeddedStore.shared(str(tmp_path / "i" / ".." / "i"))
    assert one is two


WRITER = """
import sys, numpy as np
from treehop.models import Node, ContextType
from treehop.stores.embedded import EmbeddedStore
path, tag, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
rng = np.random.default_rng(abs(hash(tag)) % 1000)
s = EmbeddedStore(path, lock_timeout=60)
for i in range(rounds):
    uris = [f"viking://resources/{tag}/r{i}-{j}.md" for j in range(20)]
    nodes = [Node(uri=u, parent_uri=f"viking://resources/{tag}", context_type=ContextType.RESOURCE,
                  level=2, is_leaf=True, content=u * 20) for u in uris]
    v = rng.standard_normal((20, 8)).astype(np.float32)
    s.upsert(nodes, v / np.linalg.norm(v, axis=1, keepdims=True))
    if i % 3 == 2:
        s.delete([f"viking://resources/{tag}/r{i - 1}-0.md"])
    s.save()
    print(i, flush=True)
"""


def test_two_writer_processes_lose_no_update(tmp_path: Path) -> None:
    path = str(tmp_path / "i")
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, path, tag, "6"],
            env=ENV,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag in ("a", "b")
    ]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    s = EmbeddedStore(path)
    for tag in ("a", "b"):
        for i in range(6):
            for j in range(20):
                uri = f"{R}/{tag}/r{i}-{j}.md"
                deleted = j == 0 and i in (1, 4)
                assert (uri in s) != deleted, uri
    assert len(s) == 2 * (6 * 20 - 2)


def test_sigkill_during_writes_and_saves_loses_nothing_committed(tmp_path: Path) -> None:
    path = str(tmp_path / "i")
    committed: set[str] = set()
    deleted: set[str] = set()
    rng = random.Random(4)
    for round_ in range(4):
        tag = f"k{round_}"
        p = subprocess.Popen(
            [sys.executable, "-c", WRITER, path, tag, "1000"],
            env=ENV,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert p.stdout is not None
        first = p.stdout.readline()  # the first save has committed
        assert first.strip() == "0"
        time.sleep(rng.uniform(0.0, 0.4))
        p.send_signal(signal.SIGKILL)
        rest = p.stdout.read()
        p.wait()
        done = [int(x) for x in (first + rest).split()]
        for i in done:
            for j in range(20):
                uri = f"{R}/{tag}/r{i}-{j}.md"
                if j == 0 and (i + 1) % 3 == 2:
                    # deleted by round i + 1: gone if that round reported its save; if the kill
                    # fell between its save and its report, either state is correct
                    if i + 1 in done:
                        deleted.add(uri)
                    continue
                committed.add(uri)
        s = EmbeddedStore(path)
        missing = [u for u in committed if u not in s]
        assert not missing, missing[:3]
        assert not [u for u in deleted if u in s]
        names = [q.name for q in Path(path).iterdir()]
        assert not [n for n in names if n.startswith(".tmp-")]
        assert len([n for n in names if n.startswith("MANIFEST-")]) <= 2
        assert len([n for n in names if n.startswith("data-")]) == 1


# ---------------------------------------------------------------------- readers vs writer
def test_threaded_readers_against_a_writer(tmp_path: Path) -> None:
    s = EmbeddedStore(tmp_path / "i")
    dirs = [f"{R}/d{k}" for k in range(4)]
    s.upsert([dirnode(d) for d in dirs], vecs(4, 1))
    stable = [leaf(f"{d}/keep{i}.md") for d in dirs for i in range(25)]
    s.upsert(stable, vecs(len(stable), 2))
    s.save()
    stop = threading.Event()
    errors: list[BaseException] = []
    checks = {"n": 0}

    def reader(seed: int) -> None:
        rng = np.random.default_rng(seed)
        try:
            while not stop.is_set():
                d = dirs[int(rng.integers(4))]
                kids = s.children(d)
                assert all(k.parent_uri == d for k in kids)
                assert {f"{d}/keep{i}.md" for i in range(25)} <= {k.uri for k in kids}
                want = [n.uri for n in stable[int(rng.integers(len(stable))) :][:5]]
                assert [n.uri if n else None for n in s.get(want)] == want
                hits = s.search(vecs(1, seed)[0], Scope(parent_uri=d), 5)
                assert all(h.node.parent_uri == d for h in hits)
                s.search(vecs(1, seed + 1)[0], Scope(), 10)
                checks["n"] += 1
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=reader, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for i in range(40):
        d = dirs[i % 4]
        s.upsert([leaf(f"{d}/tmp{i}.md") for _ in range(1)], vecs(1, i + 10))
        if i % 2:
            s.delete([f"{dirs[(i - 1) % 4]}/tmp{i - 1}.md"])
        if i % 5 == 0:
            s.save()
    stop.set()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    assert checks["n"] > 10
    assert len(s) == 4 + 100 + 20 and len(EmbeddedStore(tmp_path / "i")) == 4 + 100 + 18


# ---------------------------------------------------------------------- format 1
def write_format1(path: Path, nodes: list[Node], vectors: np.ndarray) -> None:
    """The on-disk layout of format 1 (what every index saved before format 2 looks like)."""
    gen = path / "gen-000003"
    gen.mkdir(parents=True)
    np.save(gen / "vectors.npy", vectors.astype(np.float32))
    (gen / "nodes.json").write_bytes(emb_files._NODES.dump_json(nodes))
    meta = {"format_version": 1, "dimension": DIM, "count": len(nodes), "meta": {"e": "bow"}}
    (gen / "meta.json").write_text(json.dumps(meta))
    (gen / "lexical").mkdir()
    (path / "CURRENT").write_text("gen-000003")
    (path / ".tmp-gen-000004-999").mkdir()  # an interrupted format-1 save


def test_format1_index_is_migrated_on_open(tmp_path: Path) -> None:
    nodes = [dirnode(f"{R}/d")] + [leaf(f"{R}/d/f{i}.md", i=i) for i in range(12)]
    v = vecs(len(nodes), 3)
    write_format1(tmp_path / "old", nodes, v)
    s = EmbeddedStore(tmp_path / "old")
    assert len(s) == 13 and s.meta == {"e": "bow"}
    assert s.get([n.uri for n in nodes]) == nodes
    np.testing.assert_array_equal(s.get_vectors([n.uri for n in nodes]), v)
    assert [c.uri for c in s.children(f"{R}/d")] == sorted(n.uri for n in nodes[1:])
    names = {p.name for p in (tmp_path / "old").iterdir()}
    assert not any(n.startswith(("gen-", ".tmp-")) for n in names)
    assert any(n.startswith("MANIFEST-") for n in names)
    again = EmbeddedStore(tmp_path / "old")  # format 2 now
    assert again.generation == 1 and again.get([nodes[5].uri]) == [nodes[5]]
    hits = again.search(v[4], Scope(), 1)
    assert hits[0].node.uri == nodes[4].uri


# ---------------------------------------------------------------------- compaction, batches
def test_removal_marks_rows_and_compaction_reclaims_them(tmp_path: Path) -> None:
    s = EmbeddedStore(tmp_path / "i")
    nodes = [leaf(f"{R}/d/f{i}.md") for i in range(3000)]
    v = vecs(3000, 1)
    s.upsert(nodes, v)
    s.save()
    epoch = {p.name for p in (tmp_path / "i").glob("data-*")}
    assert s.delete([n.uri for n in nodes[:2500]]) == 2500
    assert len(s) == 500 and s._snap.n == 3000  # marked, not yet reclaimed
    assert [h.node.uri for h in s.search(v[2600], Scope(), 1)] == [nodes[2600].uri]
    s.save()
    assert s._snap.n == 500  # compacted at the save
    assert {p.name for p in (tmp_path / "i").glob("data-*")} != epoch
    t = EmbeddedStore(tmp_path / "i")
    assert len(t) == 500 and nodes[0].uri not in t
    assert t.get([nodes[2999].uri]) == [nodes[2999]]
    assert [h.node.uri for h in t.search(v[2700], Scope(), 1)] == [nodes[2700].uri]


def test_batch_search_equals_one_by_one() -> None:
    s = EmbeddedStore()
    nodes = [dirnode(f"{R}/d")] + [leaf(f"{R}/d/f{i}.md") for i in range(200)]
    s.upsert(nodes, vecs(len(nodes), 2))
    qs = vecs(7, 11)
    for scope in (Scope(), Scope(parent_uri=f"{R}/d"), Scope(leaves_only=True)):
        batch = s.search_batch(qs, scope, 5)
        for q, got in zip(qs, batch, strict=True):
            want = s.search(q, scope, 5)
            assert [h.node.uri for h in got] == [h.node.uri for h in want]
            assert [h.score for h in got] == pytest.approx([h.score for h in want], abs=1e-5)


def test_unchanged_upsert_writes_nothing(tmp_path: Path) -> None:
    s = filled(tmp_path / "i")
    nodes = list(s.iter_nodes())
    s.upsert(nodes, s.get_vectors([n.uri for n in nodes]))
    assert not s._dirty and s._snap.n == 21


def test_clients_of_two_users_on_one_path_share_the_writer(tmp_path: Path, bow: Any) -> None:
    from treehop import Treehop

    alice = Treehop(tmp_path / "i", user="alice", embedder=bow, tagger=None)
    bob = Treehop(tmp_path / "i", user="bob", embedder=bow, tagger=None)
    assert alice.store is bob.store
    for i in range(3):
        alice.add_memory(f"alice likes tea number {i}", name=f"a{i}")
        bob.add_memory(f"bob likes coffee number {i}", name=f"b{i}")
    alice.close()
    bob.close()
    again = EmbeddedStore(tmp_path / "i")
    uris = set(again.iter_uris())
    for i in range(3):
        assert f"viking://user/alice/memories/a{i}" in uris
        assert f"viking://user/bob/memories/b{i}" in uris


def test_remove_and_readd_use_the_cheap_listings(tmp_path: Path, bow: Any) -> None:
    from treehop import Treehop

    src = tmp_path / "src"
    (src / "a").mkdir(parents=True)
    for i in range(4):
        (src / "a" / f"f{i}.md").write_text(f"# f{i}\n\nsome text about topic {i}\n")
    with Treehop(tmp_path / "i", embedder=bow, tagger=None) as th:
        first = th.add_resource(src, target_uri="viking://resources/src")
        (src / "a" / "f1.md").write_text("# f1\n\nchanged text\n")
        (src / "a" / "f3.md").unlink()
        again = th.add_resource(src, target_uri="viking://resources/src")
        assert again.embedded >= 1 and again.unchanged >= 2 and again.deleted == 1
        assert first.embedded > again.embedded
        store = th.store
        assert isinstance(store, EmbeddedStore)
        hashes = store.content_hashes("viking://resources/src")
        assert hashes == {n.uri: n.content_hash for n in store.iter_nodes("viking://resources/src")}
        assert th.remove("viking://resources/src/a") == len(
            [u for u in hashes if u.startswith("viking://resources/src/a")]
        )


def test_hash_collisions_never_return_a_wrong_node(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a hash that collides for every URI of the same length (and every tag label)
    for mod in (emb_layout, emb_snapshot, emb_search, emb_writes, emb_store):
        monkeypatch.setattr(mod, "_h64", lambda text: len(text) + 1)
    s = EmbeddedStore(tmp_path / "i")
    dirs = [dirnode(f"{R}/a"), dirnode(f"{R}/b")]
    kids = [leaf(f"{R}/{d}/f{i}.md") for d in "ab" for i in range(5)]
    for i, k in enumerate(kids):
        k.tags = ["auto:ml"] if i % 2 else ["auto:xy"]  # labels of equal length collide
    s.upsert(dirs + kids, vecs(12, 4))
    s.save()
    for store in (s, EmbeddedStore(tmp_path / "i")):
        assert [n.uri if n else None for n in store.get([k.uri for k in kids])] == [
            k.uri for k in kids
        ]
        assert store.get([f"{R}/a/f9.md"]) == [None]
        assert [c.uri for c in store.children(f"{R}/a")] == [f"{R}/a/f{i}.md" for i in range(5)]
        assert {c.uri for c in store.iter_nodes(f"{R}/b")} == {f"{R}/b"} | {
            f"{R}/b/f{i}.md" for i in range(5)
        }
        ml = {k.uri for i, k in enumerate(kids) if i % 2}
        hits = store.search(vecs(1, 5)[0], Scope(tags=TagFilter(any_of=("ml",))), 20)
        assert {h.node.uri for h in hits} == ml
        assert {n.uri for n in store.find_by_tags(["ml"], Scope(), 20)["ml"]} == ml
    assert s.delete([f"{R}/a/f2.md"]) == 1
    assert f"{R}/a/f2.md" not in s and f"{R}/b/f2.md" in s


def test_content_hashes_read_the_node_field_whatever_the_metadata_says(tmp_path: Path) -> None:
    s = EmbeddedStore(tmp_path / "i")
    tricky = leaf(f"{R}/d/t.md", content_hash="fake", note='"content_hash":"evil"')
    tricky.content = 'text with "content_hash":"inner" and \\ backslashes'
    tricky.content_hash = "abc123"
    plain = leaf(f"{R}/d/p.md")
    plain.content_hash = 'we"ird\\'
    s.upsert([tricky, plain], vecs(2, 1))
    s.save()
    for store in (s, EmbeddedStore(tmp_path / "i")):
        assert store.content_hashes(f"{R}/d") == {tricky.uri: "abc123", plain.uri: 'we"ird\\'}
        assert list(store.iter_uris(f"{R}/d")) == [plain.uri, tricky.uri]


def test_background_verification_opens_at_once_and_then_refuses_damage(tmp_path: Path) -> None:
    filled(tmp_path / "good")
    fine = EmbeddedStore(tmp_path / "good", verify="background")
    fine.wait_verified()
    assert len(fine) == 21 and fine.get([f"{R}/d/f3.md"])[0] is not None
    p = tmp_path / "bad"
    shutil.copytree(tmp_path / "good", p)
    f = next(p.glob("data-*/vectors.bin"))
    raw = bytearray(f.read_bytes())
    raw[40] ^= 0x10
    f.write_bytes(bytes(raw))
    with pytest.raises(IndexCorruptError):
        EmbeddedStore(p)  # the default checks before opening
    s = EmbeddedStore(p, verify="background")
    with pytest.raises(IndexCorruptError, match="checksum"):
        s.wait_verified()
    with pytest.raises(IndexCorruptError):
        s.get([f"{R}/d/f3.md"])
    with pytest.raises(IndexCorruptError):
        s.search(vecs(1, 1)[0], Scope(), 3)
    # damage in a small file is still found at open
    p2 = tmp_path / "bad-uris"
    shutil.copytree(tmp_path / "good", p2)
    f = next(p2.glob("data-*/uris.bin"))
    raw = bytearray(f.read_bytes())
    raw[3] ^= 0x10
    f.write_bytes(bytes(raw))
    with pytest.raises(IndexCorruptError):
        EmbeddedStore(p2, verify="background")


def _flip_vector_byte(src: Path, dst: Path) -> None:
    shutil.copytree(src, dst)
    f = next(dst.glob("data-*/vectors.bin"))
    raw = bytearray(f.read_bytes())
    raw[40] ^= 0x10
    f.write_bytes(bytes(raw))


def test_auto_verification_checks_a_small_index_before_the_open_returns(tmp_path: Path) -> None:
    """``verify="auto"`` (the default) on an index under ``AUTO_VERIFY_BYTES``: the whole
    check at open, so a flipped vector byte is an error from the constructor."""
    filled(tmp_path / "good")
    store = EmbeddedStore(tmp_path / "good")
    assert store.verify == "auto" and store._verify is True
    _flip_vector_byte(tmp_path / "good", tmp_path / "bad")
    with pytest.raises(IndexCorruptError):
        EmbeddedStore(tmp_path / "bad")


def test_auto_verification_moves_a_large_index_to_the_background(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Above ``AUTO_VERIFY_BYTES`` the open returns before the vectors are read whole (a
    1M-row index: 1.9 s instead of 4.5-7.9 s cold) and the check still runs: damage is found
    by the background pass and every later call refuses to serve."""
    filled(tmp_path / "good")
    _flip_vector_byte(tmp_path / "good", tmp_path / "bad")
    monkeypatch.setattr(emb_manifest, "AUTO_VERIFY_BYTES", 0)  # every index is "large"
    store = EmbeddedStore(tmp_path / "bad")  # no error yet: the check runs in a thread
    assert store._verify == "background"
    with pytest.raises(IndexCorruptError, match="checksum"):
        store.wait_verified()
    with pytest.raises(IndexCorruptError):
        store.search(vecs(1, 1)[0], Scope(), 3)
    fine = EmbeddedStore(tmp_path / "good")
    fine.wait_verified()
    assert fine._verify == "background" and len(fine) == 21


def test_verify_mode_by_size_and_settings() -> None:
    big = emb_manifest.AUTO_VERIFY_BYTES
    small_m = {"rows": 1000, "dimension": 384, "ann": {"size": 10_000}}
    large_m = {"rows": big // (4 * 384) + 1, "dimension": 384}
    graph_m = {"rows": 10, "dimension": 4, "ann": {"size": big}}
    assert emb_manifest._verify_mode("auto", small_m) is True
    assert emb_manifest._verify_mode("auto", large_m) == "background"
    assert emb_manifest._verify_mode("auto", graph_m) == "background"  # the graph counts too
    assert emb_manifest._verify_mode("auto", {"rows": "x"}) is True  # unreadable: the full check
    for setting in (True, False, "background"):
        assert emb_manifest._verify_mode(setting, large_m) == setting


@pytest.mark.parametrize("bad", ["yes", "Background", None, 2])
def test_an_unknown_verify_setting_is_refused(tmp_path: Path, bad: Any) -> None:
    with pytest.raises(StoreError, match="verify"):
        EmbeddedStore(tmp_path / "i", verify=bad)


def test_refresh_follows_each_commit_of_another_store_and_nothing_else(tmp_path: Path) -> None:
    path = tmp_path / "idx"
    writer = filled(path, n=4, saves=1)
    reader = EmbeddedStore(path)
    assert not reader.refresh() and not reader.refresh()  # nothing new: nothing reopened
    for g in range(3):
        writer.upsert([leaf(f"{R}/d/new{g}.md", i=g)], vecs(1, 50 + g))
        assert not reader.refresh()  # not committed yet
        writer.save()
        assert reader.refresh()
        assert f"{R}/d/new{g}.md" in reader and reader.generation == writer.generation
        assert not reader.refresh()
    # a pointer replaced by one that names the same generation: no reopen either
    current = (path / "CURRENT").read_bytes()
    (path / "CURRENT.tmp").write_bytes(current)
    os.replace(path / "CURRENT.tmp", path / "CURRENT")
    assert not reader.refresh()
    # this store's own save moves the pointer to its own generation: nothing to reopen
    reader.upsert([leaf(f"{R}/d/mine.md", i=9)], vecs(1, 77))
    assert not reader.refresh()  # unsaved writes of its own: never replaced
    reader.save()
    assert not reader.refresh() and f"{R}/d/mine.md" in reader
    reader.close()
    writer.close()
