"""State blobs and an empty folder at the path read as the rest of a moved index does
(helper leftovers73c; the open items of leftovers73b and attacks86).

Before: after the index folder left its path, every snapshot read of the store raised the
"renamed, moved or removed since this client read it" ``StoreError`` (leftovers72a,
leftovers73b), but the state blobs, read by path, answered "nothing": ``get_state``
``None``, ``state_keys`` ``[]``, a client's ``get_session`` ``NotFoundError``,
``list_sessions`` ``[]``. And an empty folder put at the path (a ``mkdir`` after the move)
was read as an empty index: ``ls`` ``[]``, ``find`` no hits. Now both raise the same error;
a write still makes a new index at the path, and an index committed there is read.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import numpy as np
import pytest

from treehop import Treehop
from treehop.errors import NotFoundError, StoreError
from treehop.stores.embedded import EmbeddedStore

from treehop_test_doubles import BagOfWordsEmbedder, resource_leaf

VECS = np.random.default_rng(0).standard_normal((4, 16)).astype(np.float32)


def _saved(path: Path) -> EmbeddedStore:
    s = EmbeddedStore(path)
    s.upsert([resource_leaf(f"viking://resources/a{i}.md", f"a{i}") for i in range(4)], VECS)
    s.put_state("sessions/s1", b"v")
    s.save()
    return s


@pytest.mark.parametrize("then", ["nothing", "empty_folder"])
def test_state_reads_raise_after_the_folder_left(tmp_path: Path, then: str) -> None:
    idx, moved = tmp_path / "idx", tmp_path / "moved"
    s = _saved(idx)
    os.rename(idx, moved)
    if then == "empty_folder":
        idx.mkdir()
    assert s.refresh() is True
    with pytest.raises(StoreError, match="renamed, moved or removed"):
        s.get_state("sessions/s1")
    with pytest.raises(StoreError, match="renamed, moved or removed"):
        s.state_keys("sessions")
    with pytest.raises(StoreError, match="renamed, moved or removed"):
        len(s)
    s.close()
    assert EmbeddedStore(moved).get_state("sessions/s1") == b"v"


def test_a_state_write_after_the_move_makes_the_new_index_and_reads_it(tmp_path: Path) -> None:
    idx = tmp_path / "idx"
    s = _saved(idx)
    os.rename(idx, tmp_path / "moved")
    s.refresh()
    with pytest.raises(StoreError):
        s.get_state("sessions/s1")
    s.put_state("sessions/s2", b"w")
    assert s.get_state("sessions/s2") == b"w"
    assert s.state_keys("sessions") == ["sessions/s2"]
    s.close()


def _client(path: Path) -> Treehop:
    return Treehop(path=str(path), embedder=BagOfWordsEmbedder())


@pytest.mark.parametrize("then", ["nothing", "empty_folder"])
def test_client_reads_raise_after_the_move(tmp_path: Path, then: str) -> None:
    idx, moved = tmp_path / "idx", tmp_path / "moved"
    c = _client(idx)
    c.add_resource("the keys rotate every ninety days", name="keys.md")
    sid = c.create_session()
    c.add_message(sid, "user", "hello")
    os.rename(idx, moved)
    if then == "empty_folder":
        idx.mkdir()
    for read in (
        lambda: c.get_session(sid),
        c.list_sessions,
        lambda: c.ls("viking://resources"),
        lambda: c.find("keys"),
    ):
        with pytest.raises(StoreError, match="renamed, moved or removed"):
            read()
    c.close()
    old = _client(moved)
    assert [m.content for m in old.get_session(sid).messages] == ["hello"]
    old.close()


def test_a_session_write_after_the_move_makes_a_new_index(tmp_path: Path) -> None:
    idx = tmp_path / "idx"
    c = _client(idx)
    c.add_resource("the keys rotate every ninety days", name="keys.md")
    os.rename(idx, tmp_path / "moved")
    with pytest.raises(StoreError):
        c.list_sessions()
    sid = c.create_session()
    c.add_message(sid, "user", "hello")
    assert [m.content for m in c.get_session(sid).messages] == ["hello"]
    assert [x.session_id for x in c.list_sessions()] == [sid]
    c.close()


def test_control_another_index_put_at_the_path_is_read(tmp_path: Path) -> None:
    """Control (passes on the base too): a folder holding an index is read."""
    idx, moved, other = tmp_path / "idx", tmp_path / "moved", tmp_path / "other"
    c = _client(idx)
    c.add_resource("the keys rotate every ninety days", name="keys.md")
    o = _client(other)
    o.add_resource("the backups run nightly", name="backups.md")
    o.close()
    os.rename(idx, moved)
    os.rename(other, idx)
    assert [e.uri for e in c.ls("viking://resources")] == ["viking://resources/backups.md"]
    c.close()


def test_control_a_new_client_at_an_empty_folder_reads_an_empty_index(tmp_path: Path) -> None:
    """Control: an empty folder opened by a new client is a new index (not "moved")."""
    (tmp_path / "idx").mkdir()
    c = _client(tmp_path / "idx")
    assert c.ls("viking://resources") == [] and c.list_sessions() == []
    with pytest.raises(NotFoundError):
        c.get_session("nope")
    c.close()


def test_control_an_async_session_write_after_the_move(tmp_path: Path) -> None:
    idx = tmp_path / "idx"
    c = _client(idx)
    c.add_resource("the keys rotate every ninety days", name="keys.md")
    os.rename(idx, tmp_path / "moved")

    async def go() -> list[str]:
        sid = await c.aio.create_session()
        await c.aio.add_message(sid, "user", "hi")
        return [m.content for m in (await c.aio.get_session(sid)).messages]

    assert asyncio.run(go()) == ["hi"]
    c.close()


@pytest.mark.parametrize("write", ["add_messages", "remember"])
def test_memory_writes_after_a_read_raised_make_a_new_index(tmp_path: Path, write: str) -> None:
    """The memory writes read the store before they take its lock (the sessions kept, a
    key lock's folder made first). On the base, once a read had raised they raised too
    ("nothing is stored at that path now"), where ``add_memory`` made a new index; now they
    make one, as the adds do."""
    idx = tmp_path / "idx"
    c = _client(idx)
    c.add_resource("the keys rotate every ninety days", name="keys.md")
    os.rename(idx, tmp_path / "moved")
    with pytest.raises(StoreError):
        c.ls("viking://resources")
    if write == "add_messages":
        got = c.add_messages([{"role": "user", "content": "I like tea"}], conversation_id="c1")
    else:
        got = c.remember("prefers tea")
    assert got.session_uri is not None
    assert c.ls("viking://~/memories") != []
    assert (idx / "CURRENT").exists()
    c.close()
