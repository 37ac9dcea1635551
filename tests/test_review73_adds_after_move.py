"""A client's adds still make a new index after its index folder moved (helper review73;
leftovers73b's ``reads_for_a_write``): through a ``GuardedStore``, and by ``remember`` /
``add_messages``.

leftovers73b made a direct store's reads raise once its folder left its path, except the
reads a client's add makes before it takes the write lock (``reads_for_a_write(client.store)``).
A subclass that overrides one of the store's methods is wrapped (``guard_store``): the
wrapper was marked, not the store it wraps, so ``add_resource`` / ``add_memory`` after the
move raised the "renamed, moved or removed" ``StoreError`` from their place checks, where a
plain ``EmbeddedStore`` (and this subclass at 01b50d4c) made a new index at the path.

``remember`` and ``add_messages`` read the store before their write lock too (the
conversation's kept sessions, the note's place) and were not marked: after the move they
raised the error whose own text says "a write through this client makes a new, empty index
here", where at 01b50d4c they wrote it. (Helper leftovers73c found and fixed the same in
parallel; ``client.py``'s two hunks here are byte-identical to its, so either merges cleanly.)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from treehop import Treehop
from treehop.errors import StoreError
from treehop.stores.embedded import EmbeddedStore
from treehop.stores.guarded import GuardedStore

from treehop_test_doubles import BagOfWordsEmbedder


class _Instrumented(EmbeddedStore):
    """A user's subclass: one method of its own (so the client wraps it)."""

    searches = 0

    def search(self, *args: Any, **kwargs: Any) -> Any:
        type(self).searches += 1
        return super().search(*args, **kwargs)


@pytest.mark.parametrize("add", ["add_resource", "add_memory"])
def test_an_add_after_the_move_makes_a_new_index_through_the_wrapper(
    tmp_path: Path, add: str
) -> None:
    idx, moved = tmp_path / "idx", tmp_path / "moved"
    c = Treehop(store=_Instrumented(idx), embedder=BagOfWordsEmbedder())
    assert isinstance(c.store, GuardedStore)
    c.add_resource("the keys rotate every ninety days", name="keys.md")
    os.rename(idx, moved)
    with pytest.raises(StoreError, match="renamed, moved or removed"):
        c.ls("viking://resources")  # (the store now knows: other reads raise)
    if add == "add_resource":
        c.add_resource("the backups run nightly", name="backups.md")
        assert [e.uri for e in c.ls("viking://resources")] == ["viking://resources/backups.md"]
    else:
        c.add_memory("prefers tea", name="tea")
        assert [e.uri for e in c.ls("viking://~/memories")] == ["viking://~/memories/tea"]
    c.close()
    assert (idx / "CURRENT").exists()
    old = Treehop(path=str(moved), embedder=BagOfWordsEmbedder())
    assert [e.uri for e in old.ls("viking://resources")] == ["viking://resources/keys.md"]
    old.close()


def test_other_reads_through_the_wrapper_still_raise(tmp_path: Path) -> None:
    """A control (passes on the base too): only the add's reads see the new index."""
    idx = tmp_path / "idx"
    c = Treehop(store=_Instrumented(idx), embedder=BagOfWordsEmbedder())
    c.add_resource("the keys rotate every ninety days", name="keys.md")
    os.rename(idx, tmp_path / "moved")
    for read in (lambda: c.ls("viking://resources"), lambda: c.find("keys")):
        with pytest.raises(StoreError, match="renamed, moved or removed"):
            read()
    assert not idx.exists()
    c.close()


@pytest.mark.parametrize("add", ["remember", "add_messages", "add_messages_session"])
def test_memory_writes_after_the_move_make_a_new_index(tmp_path: Path, add: str) -> None:
    idx, moved = tmp_path / "idx", tmp_path / "moved"
    c = Treehop(path=str(idx), embedder=BagOfWordsEmbedder())
    c.add_resource("the keys rotate every ninety days", name="keys.md")
    os.rename(idx, moved)
    with pytest.raises(StoreError, match="renamed, moved or removed"):
        c.ls("viking://resources")
    if add == "remember":
        c.remember("prefers tea", name="tea")
        want = "viking://~/memories/notes"
    else:
        session = {"session_id": "s1"} if add == "add_messages_session" else {}
        c.add_messages([{"role": "user", "content": "I prefer tea"}], **session)
        want = "viking://~/memories/conversations"
    assert [e.uri for e in c.ls("viking://~/memories")] == [want]
    assert c.find("tea").contexts()  # (the new index answers)
    c.close()
    assert (idx / "CURRENT").exists()
    old = Treehop(path=str(moved), embedder=BagOfWordsEmbedder())
    assert [e.uri for e in old.ls("viking://resources")] == ["viking://resources/keys.md"]
    assert [e.uri for e in old.ls("viking://~/memories")] == []
    old.close()
