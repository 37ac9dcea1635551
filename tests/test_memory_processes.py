"""Appends to one conversation from two processes (the embedded store's key locks).

An append reads where its session ends, then writes; the store's writer lock is held only
around the write. Two processes appending to one session both wrote the same next turn and
one process's messages were lost without an error (helper attacks55: 73 of 81 turns). The
conversation's key lock (``EmbeddedStore.key_lock``) is now held from before the read to
the commit, and the store picks up the other process's commit first."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from treehop import AsyncTreehop, Treehop
from treehop.errors import IndexLockedError
from treehop.stores._filelock import WriterLock
from treehop.stores.embedded import EmbeddedStore

from treehop_test_doubles import BagOfWordsEmbedder

TESTS = Path(__file__).resolve().parent
SESSION = "viking://~/memories/conversations/default/s1"

WRITER = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {tests!r})
    from treehop import Treehop
    from treehop_test_doubles import BagOfWordsEmbedder
    path, tag, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    t = Treehop(path, embedder=BagOfWordsEmbedder(), tagger=None)
    for i in range(n):
        t.add_messages([{{"role": "user", "content": f"{{tag}} says message {{i}}"}}],
                       session_id="s1")
    t.close()
    """
)


def _stored_texts(path: Path) -> list[str]:
    with Treehop(path, embedder=BagOfWordsEmbedder(), tagger=None) as t:
        return [t.read(e.uri) for e in t.ls(SESSION) if e.is_leaf]


def test_two_processes_appending_to_one_session_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "idx"
    with Treehop(path, embedder=BagOfWordsEmbedder(), tagger=None) as t:
        t.add_messages([{"role": "user", "content": "hello"}], session_id="s1")
    script = tmp_path / "writer.py"
    script.write_text(WRITER.format(tests=str(TESTS)))
    n = 30
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), str(path), tag, str(n)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag in ("A", "B")
    ]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-2000:]
    texts = _stored_texts(path)
    assert len(texts) == 1 + 2 * n
    for tag in "AB":
        got = {i for i in range(n) if any(f"{tag} says message {i}" in x for x in texts)}
        assert got == set(range(n)), f"{tag} lost {sorted(set(range(n)) - got)}"


def test_an_append_waits_for_another_holder_then_refuses_typed(tmp_path: Path) -> None:
    """Another process's hold (a second open file of the same lock file: ``flock`` excludes
    it as it excludes a process) makes the append wait ``lock_timeout`` and raise before
    anything is read or written; once released, the append goes through."""
    path = tmp_path / "idx"
    with Treehop(path, embedder=BagOfWordsEmbedder(), tagger=None) as t:
        t.add_messages([{"role": "user", "content": "hello"}], session_id="s1")
        store = t.store
        assert isinstance(store, EmbeddedStore)
        mine = store.key_lock(t.aio.resolve("viking://~/memories/conversations/default"))
        assert mine is not None
        other = WriterLock(mine.path)
        assert other.try_acquire()
        store.lock_timeout = 0.3
        try:
            with pytest.raises(IndexLockedError, match="another process"):
                t.add_messages([{"role": "user", "content": "blocked"}], session_id="s1")
        finally:
            other.release()
        assert not any("blocked" in x for x in [t.read(e.uri) for e in t.ls(SESSION)])
        t.add_messages([{"role": "user", "content": "after"}], session_id="s1")
        assert any("after" in t.read(e.uri) for e in t.ls(SESSION))


def test_conversations_sharing_one_lock_file_in_one_process_do_not_wait_on_themselves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every conversation in one lock file: this process shares its hold among its calls
    (a second ``flock`` of the file from the same process would wait for the first)."""
    monkeypatch.setattr(EmbeddedStore, "KEY_LOCK_BUCKETS", 1)

    async def run() -> None:
        async with AsyncTreehop(tmp_path / "a", embedder=BagOfWordsEmbedder(), tagger=None) as a:
            a.store.lock_timeout = 2.0
            await asyncio.gather(
                *(
                    a.add_messages(
                        [{"role": "user", "content": f"chat {c} turn {i}"} for i in range(3)],
                        conversation_id=f"c{c}",
                        session_id="s",
                    )
                    for c in range(6)
                )
            )
            for c in range(6):
                kids = await a.ls(f"viking://~/memories/conversations/c{c}/s")
                assert len([k for k in kids if k.is_leaf]) == 3

    asyncio.run(run())
    # (and the store write lock's two files, helper xproc59)
    assert sorted(p.name for p in (tmp_path / "a" / "locks").iterdir()) == [
        "key-0",
        "writes",
        "writes-turn",
    ]


def test_a_store_in_memory_has_no_key_lock() -> None:
    assert EmbeddedStore(None).key_lock("viking://x") is None
