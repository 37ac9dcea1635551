"""The consistency model across processes (docs/stores.md, "Consistency") and loud recovery.

Real processes write while this one reads: a client opened after another process committed
sees the commit, a long-lived client sees each commit at its next call, a writer sees its own
writes at once. A damaged current manifest or sessions index is never a silent rollback: a
``RecoveryWarning`` and a record on the client, or ``IndexRecoveryError`` with
``strict=True``. Files are damaged on disk, not simulated.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

from treehop import (
    AsyncTreehop,
    EmbeddedStore,
    IndexRecoveryError,
    NotFoundError,
    RecoveryWarning,
    Treehop,
)
from treehop.sessions import INDEX_KEY, SessionStore

from treehop_test_doubles import BagOfWordsEmbedder

REPO = Path(__file__).resolve().parents[1]
ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join(str(REPO / d) for d in ("retrieval", "integrations", "tests")),
}
R = "viking://resources"

WRITER = textwrap.dedent(
    """
    import sys
    from treehop import Treehop
    from treehop_test_doubles import BagOfWordsEmbedder

    path, n = sys.argv[1], int(sys.argv[2])
    with Treehop(path, embedder=BagOfWordsEmbedder(), tagger=None) as th:
        for i in range(n):
            th.add_resource(f"commit {i} zebra{i}", target_uri=f"viking://resources/c{i}",
                            is_text=True)
            print(i, flush=True)  # committed: add_resource saves before it returns
            if sys.stdin.readline() != "next\\n":
                break
    """
)


def _client(path: Path, **kw: object) -> Treehop:
    return Treehop(path, embedder=BagOfWordsEmbedder(), tagger=None, **kw)  # type: ignore[arg-type]


def _writer(path: Path, n: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path), str(n)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=ENV,
    )


def _drop_open_stores() -> None:
    """Forget this process's open stores (a fresh process opens from disk)."""
    gc.collect()
    EmbeddedStore._registry.clear()


def test_a_client_reopened_in_the_same_process_sees_another_process_commit(
    tmp_path: Path,
) -> None:
    path = tmp_path / "idx"
    first = _client(path)
    first.add_resource("the first document", target_uri=f"{R}/a", is_text=True)
    first.close()  # ``first`` stays referenced: its store object stays open in this process
    w = _writer(path, 1)
    assert w.stdout is not None and w.stdin is not None
    assert w.stdout.readline() == "0\n"
    w.stdin.write("stop\n")
    w.stdin.close()
    assert w.wait(60) == 0
    again = _client(path)
    assert again.store is first.store  # the same open store ...
    assert "commit 0" in again.read(f"{R}/c0")  # ... brought up to the disk's generation
    assert again.find("zebra0", limit=3).resources[0].uri.endswith("/c0")
    again.close()


def test_a_long_lived_client_sees_each_commit_at_its_next_call(tmp_path: Path) -> None:
    """The bound: a commit another process finished before a call starts is seen by that
    call (each call starts with a stat of ``CURRENT``), no ``refresh()`` needed."""
    path = tmp_path / "idx"
    with _client(path) as th:
        th.add_resource("seed document", target_uri=f"{R}/seed", is_text=True)
        n = 6
        w = _writer(path, n)
        assert w.stdout is not None and w.stdin is not None
        try:
            for i in range(n):
                assert w.stdout.readline() == f"{i}\n"  # process 2 committed commit i
                assert f"commit {i}" in th.read(f"{R}/c{i}")
                uris = [m.uri for m in th.find(f"zebra{i}", limit=2).resources]
                assert uris[0].endswith(f"/c{i}")
                assert len(th.ls(R)) == i + 2
                w.stdin.write("next\n")
                w.stdin.flush()
            w.stdin.close()
            assert w.wait(60) == 0
        finally:
            if w.poll() is None:
                w.kill()
        # and the writer's own writes stay visible at once, on top of the others'
        th.add_resource("my own note", target_uri=f"{R}/mine", is_text=True)
        assert th.read(f"{R}/mine") == "my own note"
        assert th.store.generation == n + 2


def test_the_async_client_follows_commits_too(tmp_path: Path) -> None:
    path = tmp_path / "idx"

    async def run() -> None:
        async with AsyncTreehop(path, embedder=BagOfWordsEmbedder(), tagger=None) as th:
            await th.add_resource("seed", target_uri=f"{R}/seed", is_text=True)
            with pytest.raises(NotFoundError):
                await th.read(f"{R}/c0")
            w = _writer(path, 1)
            assert w.stdout is not None and w.stdin is not None
            line = await asyncio.to_thread(w.stdout.readline)
            assert line == "0\n"
            w.stdin.write("stop\n")
            w.stdin.close()
            assert await asyncio.to_thread(w.wait, 60) == 0
            assert "commit 0" in await th.read(f"{R}/c0")
            assert (await th.stat(f"{R}/c0")).uri.endswith("/c0")

    asyncio.run(run())


def test_refresh_does_not_pick_up_over_unsaved_writes(tmp_path: Path) -> None:
    """A client with unsaved writes keeps them: they are never replaced by a reopen."""
    path = tmp_path / "idx"
    with _client(path) as th:
        th.add_resource("seed", target_uri=f"{R}/seed", is_text=True)
        store = th.store
        assert isinstance(store, EmbeddedStore)
        from treehop_test_doubles import store_leaf, unit_vectors

        store.upsert([store_leaf(f"{R}/unsaved.md")], unit_vectors(1, 3, dim=64))
        assert store.unsaved
        assert store.refresh() is False
        assert f"{R}/unsaved.md" in store


# ---------------------------------------------------------------------- loud recovery
def _two_generations(path: Path) -> None:
    with _client(path) as th:
        th.add_resource("older document", target_uri=f"{R}/old", is_text=True)
        th.add_resource("newest document", target_uri=f"{R}/new", is_text=True)
    _drop_open_stores()


@pytest.mark.parametrize("damage", ["deleted", "bit-flipped", "truncated"])
def test_a_damaged_current_manifest_is_a_loud_rollback_or_a_strict_error(
    tmp_path: Path, damage: str
) -> None:
    path = tmp_path / "idx"
    _two_generations(path)
    cur = (path / "CURRENT").read_text().split()[0]
    gen = int(cur[9:15])
    victim = path / cur
    if damage == "deleted":
        victim.unlink()
    elif damage == "bit-flipped":
        body = bytearray(victim.read_bytes())
        body[len(body) // 2] ^= 0x04
        victim.write_bytes(bytes(body))
    else:
        victim.write_bytes(victim.read_bytes()[:-7])
    with pytest.raises(IndexRecoveryError) as info:
        _client(path, strict=True)
    assert info.value.record.expected == gen and info.value.record.opened == gen - 1
    assert victim.exists() == (damage != "deleted")  # a strict open repairs nothing
    _drop_open_stores()
    with pytest.warns(RecoveryWarning, match=f"generation {gen}"):
        th = _client(path)
    try:
        [rec] = th.recovery
        assert (rec.kind, rec.expected, rec.opened) == ("generation", gen, gen - 1)
        assert f"generation {gen}" in rec.lost and str(path) == rec.path
        assert th.read(f"{R}/old") == "older document"
        with pytest.raises(NotFoundError):
            th.read(f"{R}/new")  # lost, and said so
        # a long-lived client does not reopen (nor warn) again on every call
        gen_open = th.store.generation
        th.find("older", limit=1)
        assert th.store.generation == gen_open
    finally:
        th.close()


def test_a_store_opened_directly_records_and_raises_too(tmp_path: Path) -> None:
    path = tmp_path / "idx"
    _two_generations(path)
    victim = path / (path / "CURRENT").read_text().split()[0]
    victim.unlink()
    with pytest.raises(IndexRecoveryError):
        EmbeddedStore(path, strict=True)
    with pytest.warns(RecoveryWarning):
        s = EmbeddedStore(path)
    assert s.recovery is not None and s.recovery.opened == s.generation


def test_an_intact_index_opens_without_a_record(tmp_path: Path) -> None:
    path = tmp_path / "idx"
    _two_generations(path)
    (path / "CURRENT").unlink()  # CURRENT lost, the newest manifest intact: nothing lost
    with warnings.catch_warnings():
        warnings.simplefilter("error", RecoveryWarning)
        th = _client(path, strict=True)
    assert th.recovery == [] and th.read(f"{R}/new") == "newest document"
    th.close()


def _with_sessions(path: Path) -> list[str]:
    with _client(path) as th:
        th.add_resource("a document", target_uri=f"{R}/a", is_text=True)
        ids = [th.create_session() for _ in range(3)]
        for sid in ids:
            th.add_message(sid, "user", f"hello from {sid}")
    _drop_open_stores()
    return ids


@pytest.mark.parametrize("damage", ["zero-length", "deleted", "id-bit-flipped", "json-broken"])
def test_a_damaged_sessions_index_is_rebuilt_loudly_or_refused(tmp_path: Path, damage: str) -> None:
    path = tmp_path / "idx"
    ids = _with_sessions(path)
    f = path / "state" / INDEX_KEY
    raw = f.read_bytes()
    if damage == "zero-length":
        f.write_bytes(b"")
    elif damage == "deleted":
        f.unlink()
    elif damage == "id-bit-flipped":
        at = raw.index(ids[1].encode()) + 5
        body = bytearray(raw)
        body[at] ^= 0x01  # still a hex digit: only the checksum sees it
        f.write_bytes(bytes(body))
    else:
        f.write_bytes(raw[:-3])
    with pytest.raises(IndexRecoveryError, match="sessions index"):
        _client(path, strict=True)
    _drop_open_stores()
    with pytest.warns(RecoveryWarning, match="sessions index"):
        th = _client(path)
    try:
        [rec] = th.recovery
        assert rec.kind == "sessions" and rec.opened == 3 and rec.lost == ""
        assert [s.session_id for s in th.list_sessions()] == ids  # oldest first, as before
        for sid in ids:
            assert th.get_session(sid).messages[0].content == f"hello from {sid}"
        # the next write stores a whole index again
        th.create_session()
        assert json.loads(f.read_bytes())["crc32"]
    finally:
        th.close()


def test_every_single_bit_flip_of_the_sessions_index_keeps_every_session(tmp_path: Path) -> None:
    path = tmp_path / "idx"
    ids = _with_sessions(path)
    f = path / "state" / INDEX_KEY
    raw = f.read_bytes()
    warned = 0
    for at in range(0, len(raw), 3):
        for bit in (0x01, 0x20):
            body = bytearray(raw)
            body[at] ^= bit
            f.write_bytes(bytes(body))
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                sessions = SessionStore(EmbeddedStore(path, verify=False))
            assert sessions._index == ids, (at, bit)
            # a flip the index cannot see (in a key name, a space, the version) harms nothing
            loud = any(issubclass(w.category, RecoveryWarning) for w in seen)
            assert (sessions.recovery is not None) == loud
            warned += loud
    assert warned > len(raw) // 3  # most flips are damage, and each of those was loud
    f.write_bytes(raw)
    assert SessionStore(EmbeddedStore(path)).recovery is None


def test_a_session_lost_with_its_blob_is_named_as_lost(tmp_path: Path) -> None:
    path = tmp_path / "idx"
    ids = _with_sessions(path)
    (path / "state" / "sessions" / ids[0]).unlink()
    with pytest.warns(RecoveryWarning, match="1 listed session"):
        th = _client(path)
    [rec] = th.recovery
    assert rec.expected == 3 and rec.opened == 2 and "1 listed session" in rec.lost
    with pytest.raises(NotFoundError):
        th.get_session(ids[0])
    assert th.get_session(ids[1]).session_id == ids[1]
    th.close()


FAST_WRITER = textwrap.dedent(
    """
    import sys
    from treehop import Treehop
    from treehop_test_doubles import BagOfWordsEmbedder

    path, who, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with Treehop(path, embedder=BagOfWordsEmbedder(), tagger=None) as th:
        for i in range(n):
            th.add_resource(f"{who} note {i}", target_uri=f"viking://resources/{who}{i}",
                            is_text=True)
            print(i, flush=True)
    """
)


def test_readers_reopening_in_a_loop_while_two_processes_write(tmp_path: Path) -> None:
    """The attack of issue 36: opens and calls race two writers' commits (and their
    clean-up of old generations' files); every open succeeds, generations never go back,
    and every commit is seen."""
    path = tmp_path / "idx"
    with _client(path) as th:
        th.add_resource("seed", target_uri=f"{R}/seed", is_text=True)
    n = 12
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", FAST_WRITER, str(path), who, str(n)],
            stdout=subprocess.DEVNULL,
            env=ENV,
        )
        for who in ("a", "b")
    ]
    long_lived = _client(path)
    last, opens = 0, 0
    try:
        while any(w.poll() is None for w in writers) or opens < 3:
            store = EmbeddedStore(path)  # a fresh open, racing the commits
            assert store.generation >= last
            last = store.generation
            opens += 1
            uris = list(store.iter_uris(R))
            del store
            long_lived.ls(R)  # the long-lived client's check races them too
            assert long_lived.store.generation >= last  # (what an open saw before it)
            assert f"{R}/seed" in uris
        assert [w.wait(120) for w in writers] == [0, 0]
    finally:
        for w in writers:
            if w.poll() is None:
                w.kill()
    names = {e.uri.rsplit("/", 1)[-1] for e in long_lived.ls(R)}
    assert names == {"seed"} | {f"{who}{i}" for who in "ab" for i in range(n)}
    assert long_lived.store.generation == 1 + 2 * n
    long_lived.close()
