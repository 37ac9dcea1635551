"""The embedded store's open robustness items after stop 64 (helper leftovers65a).

1. A column file cut short by another program *during* a store call (a long exact scan, a
   checksum pass): the read holds a read lease on the file, so the cut waits for it (or, from
   a program opening with ``O_NONBLOCK`` such as ``truncate``, is refused) and the next call
   is an ``IndexCorruptError`` -- not SIGBUS. Run in child processes: a signal there is a
   return code below zero, not a dead test run.
2. A write failing in its embedder or summarizer after some ``upsert``s into a caller's
   store without ``discard_unsaved``: the error keeps its type and says what the store kept
   (a note, and ``written`` / ``deleted`` / ``discarded`` as ``PartialWriteError`` has).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from treehop import Treehop
from treehop.errors import EmbeddingError, IndexCorruptError, IngestError
from treehop.ingest.summaries import ExtractiveSummarizer
from treehop.stores.base import Scope
from treehop.stores.embedded import EmbeddedStore
from treehop.stores.embedded import column_files as emb_columns

from treehop_test_doubles import BagOfWordsEmbedder, child_process, clustered_tree

HERE = Path(__file__).resolve().parent
DIM = 384


@pytest.fixture(scope="module")
def big_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """10,050 rows of 384-d vectors (15 MB: one map, scanned whole by an exact search)."""
    path = tmp_path_factory.mktemp("l65") / "idx"
    nodes, v = clustered_tree(50, 200, DIM)
    s = EmbeddedStore(path, ann_min_rows=None, lexical=False)
    s.upsert(nodes, v)
    s.save()
    s.close()
    return path


def _copy(src: Path, dst: Path) -> Path:
    import shutil

    shutil.copytree(src, dst)
    return dst


def _vectors(idx: Path) -> Path:
    return sorted(idx.glob("data-*"))[-1] / "vectors.bin"


_CUT_DURING_A_CALL = r"""
import os, sys, threading, time
import numpy as np
from treehop.errors import TreehopError
from treehop.stores.base import Scope
from treehop.stores.embedded import EmbeddedStore
idx, f = sys.argv[1], sys.argv[2]
s = EmbeddedStore(idx, ann_min_rows=None, lexical=False)
qs = np.random.default_rng(1).standard_normal((1500, 384)).astype(np.float32)
s.search_batch(qs[:2], Scope(), 3)  # (warm)
main = threading.main_thread().ident
def scanning():
    # (the main thread inside the scan's product: base_block's read of the map)
    fr = sys._current_frames().get(main)
    while fr is not None:
        up = fr.f_back
        if fr.f_code.co_name == "<lambda>" and up and up.f_code.co_name == "base_block":
            return True
        fr = fr.f_back
    return False
def cut():
    give_up = time.monotonic() + 60
    while not scanning():
        if time.monotonic() > give_up:  # (the scan's frames renamed: say so, not hang)
            print("no scan seen", flush=True)
            return
        time.sleep(0.001)
    os.truncate(f, 0)  # (blocks while the scan holds its lease)
    print("cut", flush=True)
t = threading.Thread(target=cut)
t.start()
for name in ("long call", "next call"):
    try:
        s.search_batch(qs, Scope(), 3)
        print(name, "answered", flush=True)
    except TreehopError as exc:
        print(name, type(exc).__name__, flush=True)
    t.join()  # (the next call starts after the cut: the call's own check sees it)
"""


def test_a_file_cut_short_during_a_long_call_is_a_typed_error_not_sigbus(
    big_index: Path, tmp_path: Path
) -> None:
    """The cut lands in the middle of one ``search_batch`` (another thread waits until the
    call is inside its product over the vectors' map, however fast the machine): before,
    the process died of SIGBUS; now the cut waits for the call's lease, the call answers,
    and the next one is the typed error."""
    idx = _copy(big_index, tmp_path / "idx")
    got = child_process(_CUT_DURING_A_CALL, str(idx), str(_vectors(idx)), timeout=180)
    assert got.returncode == 0, (got.returncode, got.stderr[-2000:])
    lines = got.stdout.split("\n")
    # (the cut goes on as the call's scan lets its lease go: printed before or after)
    assert sorted(lines[:2]) == ["cut", "long call answered"], got.stdout
    assert lines[2] == "next call IndexCorruptError", got.stdout


def _big_map(tmp_path: Path, size: int) -> tuple[Path, Any]:
    f = tmp_path / "col.bin"
    f.write_bytes(b"\1" * size)
    arr = emb_columns._mapped(f, np.uint8, size)
    return f, emb_columns._map_of(arr)


def test_a_long_map_read_holds_a_lease_another_program_cannot_break(tmp_path: Path) -> None:
    """While a long read through a map holds its lease, coreutils' ``truncate`` (an
    ``O_NONBLOCK`` open) is refused and a blocking ``truncate(2)`` waits until the read
    ends; after it the file is cut and the size check says so."""
    size = emb_columns._LEASE_BYTES
    f, mm = _big_map(tmp_path, size)
    done: list[float] = []

    def cut() -> None:
        os.truncate(f, 0)
        done.append(time.monotonic())

    with emb_columns._map_read(str(f), mm, size, size):
        refused = subprocess.run(["truncate", "-s", "0", str(f)], capture_output=True, text=True)
        assert refused.returncode != 0, refused
        assert f.stat().st_size == size
        t = threading.Thread(target=cut)
        t.start()
        time.sleep(0.3)
        assert not done and f.stat().st_size == size  # (the cut waits for the read)
        left = time.monotonic()
    t.join(10)
    assert done and done[0] >= left and f.stat().st_size == 0
    late = emb_columns._map_read(str(f), mm, size, size)
    with pytest.raises(IndexCorruptError, match="cut short by another program"), late:
        pass


def test_a_short_map_read_takes_no_lease(tmp_path: Path) -> None:
    """Control: below ``_LEASE_BYTES`` a read is only checked (a lease costs ~10 us)."""
    size = emb_columns._LEASE_BYTES - 4096
    f, mm = _big_map(tmp_path, size)
    with emb_columns._map_read(str(f), mm, size, size):
        assert not emb_columns._HELD
        ok = subprocess.run(["truncate", "-s", str(size), str(f)], capture_output=True)
        assert ok.returncode == 0


def test_the_stores_own_writer_waits_for_a_long_read_and_both_finish(
    big_index: Path, tmp_path: Path
) -> None:
    """treehop's own save appends to the file a scan in another thread holds a lease on:
    the append's open waits for the scan's lease (no deadlock, no error), and a reader
    sees the new rows after a refresh."""
    idx = _copy(big_index, tmp_path / "idx")
    reader = EmbeddedStore(idx, ann_min_rows=None, lexical=False)
    writer = EmbeddedStore(idx, ann_min_rows=None, lexical=False)
    qs = np.random.default_rng(2).standard_normal((400, DIM)).astype(np.float32)
    errors: list[BaseException] = []
    stop = threading.Event()

    def scans() -> None:
        try:
            while not stop.is_set():
                reader.search_batch(qs, Scope(), 3)
        except BaseException as exc:  # (reported below)
            errors.append(exc)

    t = threading.Thread(target=scans)
    t.start()
    try:
        time.sleep(0.2)
        nodes, v = clustered_tree(2, 5, DIM, seed=7)
        renamed = [n.model_copy(update={"uri": n.uri.replace("/d", "/new")}) for n in nodes]
        for n in renamed:
            if n.parent_uri and n.parent_uri.startswith("viking://resources/d"):
                n.parent_uri = n.parent_uri.replace("/d", "/new")
        writer.upsert(renamed, v)
        writer.save()
    finally:
        stop.set()
        t.join(60)
    assert not errors, errors
    reader.refresh()
    assert reader.get([renamed[-1].uri])[0] is not None
    reader.close()
    writer.close()


def test_the_checksum_pass_leases_each_long_extent(
    big_index: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The open's (and ``verify="background"``'s) checksum pass reads the vectors through
    their map: each extent of 4 MiB or more is read under a lease (the real
    ``_read_lease``, counted)."""
    idx = _copy(big_index, tmp_path / "idx")
    taken: list[str] = []
    real = emb_columns._read_lease

    def counted(path: str) -> int | None:
        fd = real(path)
        if fd is not None:
            taken.append(os.path.basename(path))
        return fd

    monkeypatch.setattr(emb_columns, "_read_lease", counted)
    s = EmbeddedStore(idx, ann_min_rows=None, lexical=False, verify="background")
    s.wait_verified()
    assert "vectors.bin" in taken
    s.close()


def _saved_in_pieces(path: Path, saves: int = 12, rows: int = 250) -> None:
    """An index whose vectors file (4.6 MB) is many small extents: one per save."""
    s = EmbeddedStore(path, ann_min_rows=None, lexical=False)
    nodes, v = clustered_tree(saves, rows - 1, DIM)
    for k in range(saves):
        s.upsert(nodes[k * rows : (k + 1) * rows], v[k * rows : (k + 1) * rows])
        s.save()
    s.close()


def test_a_pass_over_many_small_extents_is_leased_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each save appends one extent; twelve of 384 KB each are each under ``_LEASE_BYTES``,
    but the pass over the 4.6 MB file reads them all: it reads them in runs, each under a
    lease. A flipped byte in one of them is still found, by its own range."""
    idx = tmp_path / "idx"
    _saved_in_pieces(idx)
    vec = _vectors(idx)
    assert vec.stat().st_size >= emb_columns._LEASE_BYTES
    taken: list[str] = []
    real = emb_columns._read_lease

    def counted(path: str) -> int | None:
        fd = real(path)
        if fd is not None:
            taken.append(os.path.basename(path))
        return fd

    monkeypatch.setattr(emb_columns, "_read_lease", counted)
    s = EmbeddedStore(idx, ann_min_rows=None, lexical=False, verify=True)
    assert taken.count("vectors.bin") >= 1
    s.close()
    size = vec.stat().st_size
    time.sleep(0.05)  # (a coarse file-system clock: the rewrite must change the mtime)
    with open(vec, "r+b") as fh:
        fh.seek(size // 2)
        fh.write(b"\x7f\x7f\x7f\x7f")
    with pytest.raises(IndexCorruptError, match=r"vectors.bin: checksum mismatch in \[\d+, \d+\)"):
        EmbeddedStore(idx, ann_min_rows=None, lexical=False, verify=True)


_FORK_IN_A_LEASE = r"""
import os, subprocess, sys, time
import numpy as np
from treehop.stores.embedded import column_files as c
f = sys.argv[1]
size = c._LEASE_BYTES
open(f, "wb").write(b"\1" * size)
mm = c._map_of(c._mapped(f, np.uint8, size))
ready_r, ready_w = os.pipe()
with c._map_read(f, mm, size, size):
    pid = os.fork()
    if pid == 0:
        os.write(ready_w, b"x")  # (fork returned here: the at-fork hooks have run)
        time.sleep(3)  # (a child that lives on)
        os._exit(0)
# (the truncate waits for the child to have run: until then it holds the kernel's copy of
# every descriptor, the lease's too, which only its at-fork hook closes; on a loaded machine
# the parent's truncate ran first -- a CI run -- and the test measured the scheduler)
os.read(ready_r, 1)
r = subprocess.run(["truncate", "-s", "0", f], capture_output=True, text=True)
print("truncate rc", r.returncode, r.stderr.strip(), flush=True)
os.waitpid(pid, 0)
"""


def test_a_forked_child_does_not_keep_the_lease(tmp_path: Path) -> None:
    """A child forked while a read held a lease closes its copy of the descriptor: the
    lease ends with the parent's read, not with the child's life."""
    got = child_process(_FORK_IN_A_LEASE, str(tmp_path / "col.bin"), timeout=180)
    assert got.returncode == 0, got.stderr[-2000:]
    assert got.stdout.startswith("truncate rc 0"), got.stdout


# ------------------------------------ 2. a write failing in its embedder or summarizer


def _recipe_store() -> type[Any]:
    # (docs/extending.md's FolderStore in memory, as the conformance suite builds it)
    sys.path.insert(0, str(HERE / "store_conformance"))
    from store_conf_helpers import recipe_store_class

    return recipe_store_class()


class _FailingEmbedder(BagOfWordsEmbedder):
    """Raises from its ``fail_after + 1``-th call on (an embedding service going down)."""

    fail_after: int | None = None
    calls = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self.fail_after is not None:
            self.calls += 1
            if self.calls > self.fail_after:
                raise RuntimeError("embedder down")
        return super().embed(texts)


class _ParentFailingSummarizer(ExtractiveSummarizer):
    """Describes the added folder, then fails on the folder above it (armed)."""

    armed = False

    def summarize_directory(self, name: str, children: Any, readme: str | None) -> Any:
        if self.armed and name != "d":
            raise RuntimeError("summarizer down")
        return super().summarize_directory(name, children, readme)


def _folder(tmp_path: Path, n: int = 5) -> Path:
    src = tmp_path / "d"
    src.mkdir()
    for i in range(n):
        (src / f"f{i}.md").write_text(f"file {i} about rotation " * 20)
    return src


def _client(store: Any, emb: Any = None, summ: Any = None) -> tuple[Treehop, set[str]]:
    th = Treehop(embedder=emb or BagOfWordsEmbedder(), store=store, summarizer=summ)
    th.add_resource("seed about rotation", target_uri="viking://resources/seed.md")
    return th, set(store._nodes)


def test_an_embedder_failing_after_upserts_says_what_the_store_kept(tmp_path: Path) -> None:
    store = _recipe_store()()
    emb = _FailingEmbedder()
    th, before = _client(store, emb)
    emb.fail_after = 3  # (the folder's leaves and node embedded and written; then its parent)
    with pytest.raises(EmbeddingError) as ei:
        th.add_resource(_folder(tmp_path), target_uri="viking://resources/d")
    kept = set(store._nodes) - before
    assert len(kept) == 6  # (the store writes at once, and has no discard_unsaved)
    err: Any = ei.value
    assert set(err.written) == kept and err.deleted == () and err.discarded is False
    (note,) = err.__notes__
    assert "6 node(s) this write wrote before" in note and "kept by the store" in note
    assert "'viking://resources/d/f0.md'" in note and len(note) <= 500


def test_a_summarizer_failing_after_upserts_says_what_the_store_kept(tmp_path: Path) -> None:
    store = _recipe_store()()
    summ = _ParentFailingSummarizer()
    th, before = _client(store, summ=summ)
    summ.armed = True
    with pytest.raises(IngestError) as ei:
        th.add_resource(_folder(tmp_path), target_uri="viking://resources/d")
    err: Any = ei.value
    assert set(err.written) == set(store._nodes) - before and len(err.written) == 6
    assert "kept by the store" in err.__notes__[0]


def test_an_embedder_failing_before_any_upsert_adds_nothing(tmp_path: Path) -> None:
    """Control: nothing written before the failure, nothing said (and nothing kept)."""
    store = _recipe_store()()
    emb = _FailingEmbedder()
    th, before = _client(store, emb)
    emb.fail_after = 0
    with pytest.raises(EmbeddingError) as ei:
        th.add_resource(_folder(tmp_path), target_uri="viking://resources/d")
    assert set(store._nodes) == before
    assert not hasattr(ei.value, "written") and not getattr(ei.value, "__notes__", None)


def _store_rolling_back(answer: str) -> Any:
    """The docs' ``FolderStore`` with a ``discard_unsaved`` that drops what the write upserted
    since the last save (``"drops"``), raises (``"raises"``) or answers that it dropped
    nothing (``"nothing"``)."""

    class Store(_recipe_store()):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.committed: set[str] = set()

        def save(self) -> None:
            self.committed = set(self._nodes)

        def discard_unsaved(self) -> bool:
            if answer == "raises":
                raise RuntimeError("cannot roll back")
            if answer == "nothing":
                return False
            for uri in set(self._nodes) - self.committed:
                del self._nodes[uri]
            return True

    return Store()


def _embedder_fails_in_a_folder_write(tmp_path: Path, answer: str) -> tuple[Any, Any, set[str]]:
    store = _store_rolling_back(answer)
    emb = _FailingEmbedder()
    th, before = _client(store, emb)
    emb.fail_after = 3  # (the folder's leaves and node embedded and written; then its parent)
    with pytest.raises(EmbeddingError) as ei:
        th.add_resource(_folder(tmp_path), target_uri="viking://resources/d")
    return ei.value, store, before


def test_a_rollback_that_drops_the_write_leaves_nothing_to_say(tmp_path: Path) -> None:
    """Control (the lead's merge of attacks76 and this helper): ``discard_unsaved`` dropped
    the six nodes (the writer's save after it ends the journal): nothing kept, nothing said."""
    err, store, before = _embedder_fails_in_a_folder_write(tmp_path, "drops")
    assert set(store._nodes) == before
    assert not hasattr(err, "written") and not getattr(err, "__notes__", None)


@pytest.mark.parametrize("answer", ["raises", "nothing"])
def test_a_rollback_that_fails_or_drops_nothing_says_kept(tmp_path: Path, answer: str) -> None:
    """attacks76 corrected a store's own ``PartialWriteError`` when its rollback failed;
    an embedder's failure's note follows what the rollback did in the same way."""
    err, store, before = _embedder_fails_in_a_folder_write(tmp_path, answer)
    kept = set(store._nodes) - before
    assert len(kept) == 6 and set(err.written) == kept
    assert err.discarded is False
    (note,) = err.__notes__
    assert "dropped through" not in note
    assert note.endswith(
        "kept by the store (its discard_unsaved failed or dropped nothing): "
        "check or remove them, or add the same input again"
    )
    assert len(note) <= 500


# ------------------------------------------------ 3. isinstance of a guarded store


class _SubclassOfBuiltIn(EmbeddedStore):
    """A caller's subclass of a built-in store that overrides a method (so it is guarded)."""

    def search(self, *args: Any, **kwargs: Any) -> Any:
        return super().search(*args, **kwargs)


def _classes_to_ask(obj: object) -> list[type]:
    import collections.abc as cabc

    from treehop.stores import base
    from treehop.stores.milvus import MilvusStore
    from treehop.stores.vikingdb import VikingDBStore

    abcs = [getattr(cabc, n) for n in cabc.__all__ if isinstance(getattr(cabc, n), type)]
    protocols = [
        v
        for v in vars(base).values()
        if isinstance(v, type) and getattr(v, "_is_runtime_protocol", False)
    ]
    return [
        *type(obj).__mro__,
        EmbeddedStore,
        MilvusStore,
        VikingDBStore,
        dict,
        Treehop,
        *abcs,
        *protocols,
    ]


@pytest.mark.parametrize("kind", ["recipe", "recipe subclass", "embedded subclass"])
def test_isinstance_of_the_guard_answers_as_the_callers_object(kind: str, tmp_path: Path) -> None:
    """Decided: ``isinstance(client.store, C)`` answers what ``isinstance(store, C)`` does for
    the object the caller passed, for every class -- its own, a built-in store's it
    subclasses (``EmbeddedStore`` for a subclass of it: Python's rule, which a LangChain
    user's check relies on), one it does not (``MilvusStore``), treehop's runtime protocols,
    ``collections.abc`` -- with one exception: ``GuardedStore`` itself, how the guard is told
    apart (as ``type()`` and ``client.store.inner``)."""
    from treehop.stores.guarded import GuardedStore

    recipe = _recipe_store()
    if kind == "recipe":
        obj: Any = recipe()
    elif kind == "recipe subclass":
        obj = type("MyFolderStore", (recipe,), {})()
    else:
        obj = _SubclassOfBuiltIn(tmp_path / "idx", lexical=False)
    th = Treehop(embedder=BagOfWordsEmbedder(), store=obj)
    guard = th.store
    assert type(guard) is GuardedStore and guard.inner is obj
    differ = [c for c in _classes_to_ask(obj) if isinstance(guard, c) != isinstance(obj, c)]
    assert differ == [], differ
    assert isinstance(guard, GuardedStore) and not isinstance(obj, GuardedStore)
    assert isinstance(guard, EmbeddedStore) is (kind == "embedded subclass")
    th.close()
