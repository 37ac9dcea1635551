"""The embedded store's open robustness items and a caller's store (helper leftovers64b).

1. A column file the open store reads through a map, cut short by another program: the
   next call is an ``IndexCorruptError``, not SIGBUS (run in a child process: a signal
   there is a return code below zero, not a dead test run).
2. A file of the committed generation rewritten in place (same size) between a close and
   the reopen of the same generation: checked again (``IndexCorruptError`` for damage, the
   same answers for the same bytes); an untouched reopen still skips the checksums.
3. A caller's store failing in the middle of a write: a ``PartialWriteError`` listing the
   URIs it keeps, or its ``discard_unsaved`` rolls them back.
4. A caller's subclass of the embedded store that overrides a method is guarded; a guarded
   store answers ``isinstance`` as its class; one wrapper per store object.
"""

from __future__ import annotations

import copy
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

import treehop
from treehop import PartialWriteError, Treehop
from treehop.errors import IndexCorruptError, StoreError
from treehop.models import Node
from treehop.stores.base import VectorStore
from treehop.stores.embedded import EmbeddedStore, manifest
from treehop.stores.guarded import GuardedStore

from treehop_test_doubles import BagOfWordsEmbedder

HERE = Path(__file__).resolve().parent


def _filled(idx: Path, files: int = 6) -> None:
    with Treehop(idx, embedder=BagOfWordsEmbedder(), tagger=None) as th:
        for i in range(files):
            th.add_resource(
                f"# F{i}\n\n" + f"apples pears notes {i} " * 60,
                target_uri=f"viking://resources/s/f{i}.md",
            )


def _data(idx: Path) -> Path:
    return sorted(idx.glob("data-*"))[-1]


_CUT_SHORT = r"""
import os, subprocess, sys
from treehop import Treehop
from treehop.errors import TreehopError
from treehop_test_doubles import BagOfWordsEmbedder
idx, fname, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
th = Treehop(idx, embedder=BagOfWordsEmbedder(), tagger=None, reader_processes=0)
assert th.find("apples pears").resources
assert th.read("viking://resources/s/f3.md")
data = sorted(p for p in os.listdir(idx) if p.startswith("data-"))[-1]
f = os.path.join(idx, data, fname)
# (another program cuts the file short while this one holds it mapped)
subprocess.run([sys.executable, "-c", f"open({f!r}, 'r+b').truncate({size})"], check=True)
for name, step in (
    ("find", lambda: th.find("notes 4 apples", limit=3)),
    ("get", lambda: th.store.get(["viking://resources/s/f2.md"])),
    ("read", lambda: th.read("viking://resources/s/f5.md")),
):
    try:
        step()
        print(name, "answered", flush=True)
    except TreehopError as exc:
        print(name, type(exc).__name__, flush=True)
"""


def _child(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    # (the treehop this test imported, and the tests' doubles)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(Path(treehop.__file__).parents[1]), str(HERE), env.get("PYTHONPATH", "")]
    )
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120, env=env
    )


@pytest.mark.parametrize("fname", ["uris.bin", "vectors.bin"])
@pytest.mark.parametrize("keep", ["none", "half"])
def test_a_mapped_file_cut_short_under_an_open_store_is_a_typed_error_not_sigbus(
    tmp_path: Path, fname: str, keep: str
) -> None:
    idx = tmp_path / "idx"
    _filled(idx)
    size = os.path.getsize(_data(idx) / fname)
    got = _child(_CUT_SHORT, str(idx), fname, str(0 if keep == "none" else size // 2))
    # (SIGBUS: returncode -7, nothing printed after the cut)
    assert got.returncode == 0, (got.returncode, got.stderr[-2000:])
    assert got.stdout.split("\n")[:3] == [
        "find IndexCorruptError",
        "get IndexCorruptError",
        "read IndexCorruptError",
    ], got.stdout


def test_a_mapped_file_grown_under_an_open_store_still_answers(tmp_path: Path) -> None:
    """Control: treehop's writers append past the committed size; a longer file is no
    damage, and the check must not refuse it."""
    idx = tmp_path / "idx"
    _filled(idx)
    th = Treehop(idx, embedder=BagOfWordsEmbedder(), tagger=None, reader_processes=0)
    before = [r.uri for r in th.find("notes 4 apples", limit=3).resources]
    for fname in ("uris.bin", "vectors.bin", "nodes.bin"):
        with open(_data(idx) / fname, "ab") as fh:
            fh.write(b"\0" * 100_000)
    assert [r.uri for r in th.find("notes 4 apples", limit=3).resources] == before
    assert th.store.get(["viking://resources/s/f2.md"])[0] is not None
    th.close()


def _spy_verify(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the checksum passes an open makes (the real function runs)."""
    calls: list[int] = []
    real = manifest._verify_segments

    def counted(*args: object, **kwargs: object) -> None:
        calls.append(1)
        real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(manifest, "_verify_segments", counted)
    return calls


@pytest.mark.parametrize(
    ("fname", "fill"),
    [("vectors.bin", b"\xff"), ("uri_hash.bin", b"\x00"), ("parent_hash.bin", b"\x01")],
)
def test_a_file_rewritten_in_place_between_close_and_reopen_is_checked_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fname: str, fill: bytes
) -> None:
    idx = tmp_path / "idx"
    _filled(idx)
    store = EmbeddedStore(idx)
    th = Treehop(idx, store=store, embedder=BagOfWordsEmbedder(), tagger=None)
    assert th.find("apples pears").resources
    th.close()
    f = _data(idx) / fname
    size = f.stat().st_size
    time.sleep(0.05)  # (past one tick of a file system's coarse clock: see _file_marks)
    with open(f, "r+b") as fh:  # (in place: same inode, same size, same generation)
        fh.write(fill * size)
    # (before: vectors of 0xff bytes (NaN) answered 0 hits, hashes of zeros "not found")
    with pytest.raises(IndexCorruptError, match="checksum mismatch"):
        Treehop(idx, store=store, embedder=BagOfWordsEmbedder(), tagger=None).find("apples")
    with pytest.raises(IndexCorruptError):
        store.get(["viking://resources/s/f2.md"])


def test_a_reopen_checks_only_when_a_file_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    idx = tmp_path / "idx"
    _filled(idx)
    store = EmbeddedStore(idx)
    th = Treehop(idx, store=store, embedder=BagOfWordsEmbedder(), tagger=None)
    want = [r.uri for r in th.find("notes 3 apples", limit=4).resources]
    calls = _spy_verify(monkeypatch)
    th.close()
    th = Treehop(idx, store=store, embedder=BagOfWordsEmbedder(), tagger=None)
    assert [r.uri for r in th.find("notes 3 apples", limit=4).resources] == want
    assert calls == []  # (untouched: the same generation mapped again without checksums)
    th.close()
    f = _data(idx) / "vectors.bin"
    same = f.read_bytes()
    time.sleep(0.05)
    with open(f, "r+b") as fh:  # (rewritten in place with the same bytes)
        fh.write(same)
    th = Treehop(idx, store=store, embedder=BagOfWordsEmbedder(), tagger=None)
    assert [r.uri for r in th.find("notes 3 apples", limit=4).resources] == want
    assert calls  # (a file's times moved: checked, and whole)
    th.close()


# ------------------------------------------------ 3. a caller's store failing midway


def _recipe_store() -> type[Any]:
    # (docs/extending.md's FolderStore in memory, as the conformance suite builds it)
    sys.path.insert(0, str(HERE / "store_conformance"))
    from store_conf_helpers import recipe_store_class

    return recipe_store_class()


class _Engine(_recipe_store()):  # type: ignore[misc]
    """The recipe's store whose ``fail_at``-th ``upsert`` of a write raises (an engine going
    down in the middle of a directory ingest)."""

    fail_at: int | None = None

    def upsert(self, nodes: Sequence[Node], vectors: Any) -> None:
        self.__dict__["upserts"] = self.__dict__.get("upserts", 0) + 1
        if self.fail_at is not None and self.__dict__["upserts"] >= self.fail_at:
            raise RuntimeError("engine down")
        super().upsert(nodes, vectors)


class _EngineWithRollback(_Engine):
    """The same, with a transaction of its own: ``discard_unsaved`` restores what the last
    ``save`` left."""

    def upsert(self, nodes: Sequence[Node], vectors: Any) -> None:
        self.__dict__.setdefault("saved", copy.deepcopy(self._nodes))
        super().upsert(nodes, vectors)

    def save(self) -> None:
        super().save()
        self.__dict__.pop("saved", None)

    def discard_unsaved(self) -> bool:
        saved = self.__dict__.pop("saved", None)
        if saved is None:
            return False
        self._nodes.clear()
        self._nodes.update(saved)
        return True


def _folder(tmp_path: Path, n: int = 5) -> Path:
    src = tmp_path / "d"
    src.mkdir()
    for i in range(n):
        (src / f"f{i}.md").write_text(f"file {i} about rotation " * 20)
    return src


def _failing_midway(store: _Engine, tmp_path: Path) -> tuple[Treehop, set[str]]:
    th = Treehop(embedder=BagOfWordsEmbedder(), store=store)
    th.add_resource("seed about rotation", target_uri="viking://resources/seed.md")
    store.__dict__["upserts"] = 0
    store.fail_at = 2  # (the folder's own nodes written, then its parent's upsert fails)
    return th, set(store._nodes)


def test_a_callers_store_failing_midway_says_exactly_which_uris_it_keeps(tmp_path: Path) -> None:
    store = _Engine()
    th, before = _failing_midway(store, tmp_path)
    src = _folder(tmp_path)
    with pytest.raises(PartialWriteError) as ei:
        th.add_resource(src, target_uri="viking://resources/d")
    kept = set(store._nodes) - before
    assert kept  # (the store wrote at once: the first upsert's nodes stay)
    assert set(ei.value.written) == kept and ei.value.deleted == ()
    assert not ei.value.discarded
    msg = str(ei.value)
    assert "engine down" in msg and "6 node(s) this write wrote" in msg
    assert "kept by the store" in msg and "'viking://resources/d/f0.md'" in msg
    assert len(msg) <= 500
    assert type(ei.value.__context__) is RuntimeError  # (the store's own error, kept)
    assert isinstance(ei.value, StoreError)
    store.fail_at = None
    th.add_resource(src, target_uri="viking://resources/d")  # (adding it again completes it)
    assert kept < set(store._nodes) and "viking://resources/d/f4.md" in store._nodes


def test_a_callers_store_with_discard_unsaved_is_rolled_back_midway(tmp_path: Path) -> None:
    store = _EngineWithRollback()
    th, before = _failing_midway(store, tmp_path)
    with pytest.raises(PartialWriteError) as ei:
        th.add_resource(_folder(tmp_path), target_uri="viking://resources/d")
    assert set(store._nodes) == before  # (rolled back through its discard_unsaved)
    assert ei.value.discarded and "discard_unsaved" in str(ei.value)
    assert len(ei.value.written) == 6


def test_a_failure_at_a_writes_first_call_is_a_plain_store_error(tmp_path: Path) -> None:
    """Control: nothing written before the failure, nothing to list."""
    store = _Engine()
    th, before = _failing_midway(store, tmp_path)
    store.fail_at = 1
    with pytest.raises(StoreError) as ei:
        th.add_resource(_folder(tmp_path), target_uri="viking://resources/d")
    assert type(ei.value) is StoreError and set(store._nodes) == before


# ------------------------------------------------ 4. subclasses and isinstance


class _Searching(EmbeddedStore):
    """A caller's subclass overriding ``search`` (a re-ranking hook, say), armed to raise."""

    def search(self, *args: Any, **kwargs: Any) -> Any:
        if self.__dict__.get("armed"):
            raise RuntimeError("my hook broke")
        return super().search(*args, **kwargs)


class _Plain(EmbeddedStore):
    """A subclass overriding nothing (a name of one's own)."""

    label = "mine"


def test_an_embedded_store_subclass_overriding_a_method_is_guarded(tmp_path: Path) -> None:
    store = _Searching(tmp_path / "idx")
    th = Treehop(tmp_path / "idx", store=store, embedder=BagOfWordsEmbedder(), tagger=None)
    th.add_resource("rotation of the logs, daily", target_uri="viking://resources/a.md")
    assert th.find("rotation logs").resources
    store.__dict__["armed"] = True
    with pytest.raises(StoreError, match="my hook broke"):  # (before: a raw RuntimeError)
        th.find("rotation logs")
    store.__dict__["armed"] = False
    # treehop still treats it as an embedded store (close, unsaved checks) and as the
    # caller's class; the wrapper is one per store object
    assert isinstance(th.store, EmbeddedStore) and isinstance(th.store, _Searching)
    assert type(th.store) is GuardedStore and th.store.inner is store
    other = Treehop(tmp_path / "idx", store=store, embedder=BagOfWordsEmbedder(), tagger=None)
    assert other.store is th.store
    th.remove("viking://resources/a.md")
    assert not th.find("rotation logs").resources
    th.close()
    other.close()


def test_an_embedded_store_subclass_overriding_nothing_is_used_as_it_is(tmp_path: Path) -> None:
    """Control: no code of the caller's on the store's paths, no wrapper."""
    store = _Plain(tmp_path / "idx")
    th = Treehop(tmp_path / "idx", store=store, embedder=BagOfWordsEmbedder(), tagger=None)
    assert th.store is store
    th.close()


def test_isinstance_of_a_guarded_callers_store_is_its_class() -> None:
    store = _Engine()
    th = Treehop(embedder=BagOfWordsEmbedder(), store=store)
    assert type(th.store) is GuardedStore and th.store.inner is store
    assert isinstance(th.store, _Engine) and isinstance(th.store, VectorStore)
    assert not isinstance(th.store, EmbeddedStore)
    assert Treehop(embedder=BagOfWordsEmbedder(), store=store).store is th.store
