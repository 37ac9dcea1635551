"""Write checks and their writes under one lock (helper races59).

attacks62's checks refuse a write below a memory or a document, and a memory's name over a
directory of memories (``memory.check_memory_target``, ``AsyncTreehop._outside_documents``,
``records._check_memory_targets``); leftovers58's ``AddResult.replaced`` is read by the same
check. They read the store before the write without the client's write lock, so a writer
that committed in between was not seen: the data loss the check refuses, or a stale
``replaced``.

Each test interleaves two writes of one client deterministically: the first holds the
write lock, stopped inside it (its embedding waits in a worker thread on an event); the
second is started and runs until it waits for a lock (or ends); then the first goes on.
Without the fix the second write's check ran before the first write committed, and its
write then landed below (or over) it. No sleep is a synchronisation: the waits are on
events and on the locks' own waiters (bounded by :data:`BOUND`).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import numpy as np
import pytest

from treehop import AsyncTreehop, Treehop
from treehop.errors import InvalidQueryError, InvalidURIError, NotFoundError

from treehop_test_doubles import BagOfWordsEmbedder

BOUND = 30.0
"""The longest any wait of these tests may take (a hang is a failure, not a stuck run)."""

GATE = "gateword"
"""A text holding this word stops its embedding until the test opens the gate."""


class GatedEmbedder(BagOfWordsEmbedder):
    """The bag-of-words embedder, whose embedding of a text holding :data:`GATE` (always in
    a worker thread: ``BaseEmbedder.aembed``) says so and waits for :attr:`gate`."""

    def __init__(self) -> None:
        super().__init__()
        self.entered = threading.Event()
        self.gate = threading.Event()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if any(GATE in t.lower() for t in texts) and not self.gate.is_set():
            self.entered.set()
            assert self.gate.wait(BOUND), "the gate was never opened"
        return super().embed(texts)


def _waiting(a: AsyncTreehop) -> bool:
    """Whether a call waits for the client's write lock or for a category's lock."""
    from treehop import memory

    if a.writer.lock.waiting():
        return True
    locks = memory._conversation_locks.get(a.store) or {}
    return any(e.users > 1 for e in locks.values())


def _interleave(
    c: Treehop,
    emb: GatedEmbedder,
    first: Callable[[AsyncTreehop], Awaitable[Any]],
    second: Callable[[AsyncTreehop], Awaitable[Any]],
) -> list[Any]:
    """Run ``first`` until its embedding waits (inside the write lock), then ``second``
    until it waits for a lock or ends, then let ``first`` finish; both outcomes (a result
    or the exception), in that order."""

    async def go() -> list[Any]:
        a = c.aio
        t1 = asyncio.ensure_future(first(a))
        assert await asyncio.to_thread(emb.entered.wait, BOUND), "first never embedded"
        t2 = asyncio.ensure_future(second(a))
        loop = asyncio.get_running_loop()
        give_up = loop.time() + BOUND
        while not (t2.done() or _waiting(a)):
            assert loop.time() < give_up, "the second write neither ended nor waited"
            await asyncio.sleep(0)
        emb.gate.set()
        return list(await asyncio.gather(t1, t2, return_exceptions=True))

    return c.run(go())


def _client() -> tuple[Treehop, GatedEmbedder]:
    emb = GatedEmbedder()
    return Treehop(None, embedder=emb, tagger=None), emb


# -- 1. a write below a memory, or a memory's name over memories, under the write lock ------


@pytest.mark.parametrize("how", ["add_memory", "remember", "add_records"])
def test_a_write_below_a_memory_written_meanwhile_is_refused(how: str) -> None:
    """The memory ``home`` is being written (inside the write lock) when a write at
    ``~/memories/home/x`` starts. Before: its check saw no ``home`` and it waited for the
    lock, then wrote ``x`` below the new ``home``: "I live in Lisbon" was gone (``home`` a
    directory holding ``x``). Now the check runs under the lock, after ``home``'s write."""
    from treehop.ingest.records import aadd_records

    c, emb = _client()
    with c:

        async def home(a: AsyncTreehop) -> Any:
            return await a.add_memory(f"I live in Lisbon {GATE}", name="home")

        async def below(a: AsyncTreehop) -> Any:
            if how == "add_memory":
                return await a.add_memory("I moved", name="home/x")
            if how == "remember":
                return await a.remember("I moved", category="home", name="x")
            return await aadd_records(a, [("I moved", {"uri": "viking://~/memories/home/x"})])

        first, second = _interleave(c, emb, home, below)
        assert first.replaced is False
        assert isinstance(second, (InvalidQueryError, InvalidURIError)), second
        assert "memor" in str(second)
        assert c.read("viking://~/memories/home").startswith("I live in Lisbon")
        [entry] = c.ls("viking://~/memories")
        assert entry.kind in ("text", "file")


@pytest.mark.parametrize("how", ["add_memory", "remember"])
def test_a_memory_name_over_memories_written_meanwhile_is_refused(how: str) -> None:
    """``~/memories/home/x`` is being written when ``add_memory(..., name="home")`` starts.
    Before: its check saw no ``home``, and the text then replaced the directory ``home``:
    the memory ``x`` was gone. Now the check runs under the lock and refuses the name (a
    directory of memories), as it does when ``x`` was written first."""
    c, emb = _client()
    with c:

        async def below(a: AsyncTreehop) -> Any:
            if how == "add_memory":
                return await a.add_memory(f"I moved {GATE}", name="home/x")
            return await a.remember(f"I moved {GATE}", category="home", name="x")

        async def home(a: AsyncTreehop) -> Any:
            return await a.add_memory("I live in Lisbon", name="home")

        first, second = _interleave(c, emb, below, home)
        assert not isinstance(first, BaseException), first
        assert isinstance(second, InvalidQueryError), second
        assert "directory of memories" in str(second)
        assert c.read("viking://~/memories/home/x").startswith("I moved")


def test_a_resource_below_a_document_written_meanwhile_is_refused() -> None:
    """``a.md`` is being written when ``add_resource(..., target_uri=".../a.md/b.md")``
    starts. Before: its check saw no ``a.md``, and ``b.md`` then made ``a.md`` a directory
    (its text gone). Now ``_outside_documents`` runs again under the write lock."""
    c, emb = _client()
    with c:

        async def doc(a: AsyncTreehop) -> Any:
            return await a.add_resource(
                f"The a document {GATE}", target_uri="viking://resources/a.md", is_text=True
            )

        async def below(a: AsyncTreehop) -> Any:
            return await a.add_resource(
                "The b document", target_uri="viking://resources/a.md/b.md", is_text=True
            )

        first, second = _interleave(c, emb, doc, below)
        assert not isinstance(first, BaseException), first
        assert isinstance(second, InvalidURIError), second
        assert "inside the document" in str(second)
        assert c.read("viking://resources/a.md").startswith("The a document")


def test_a_record_below_a_document_written_meanwhile_is_refused() -> None:
    """The same for ``add_records``: its plan's check ran before the write lock."""
    from treehop.ingest.records import aadd_records

    c, emb = _client()
    with c:

        async def doc(a: AsyncTreehop) -> Any:
            return await a.add_resource(
                f"The a document {GATE}", target_uri="viking://resources/a.md", is_text=True
            )

        async def below(a: AsyncTreehop) -> Any:
            return await aadd_records(a, [("The b record", {"uri": "viking://resources/a.md/b"})])

        first, second = _interleave(c, emb, doc, below)
        assert not isinstance(first, BaseException), first
        assert isinstance(second, InvalidURIError), second
        assert c.read("viking://resources/a.md").startswith("The a document")


def test_a_vector_store_write_below_a_document_written_meanwhile_is_refused() -> None:
    """The vector stores' check (``PassageStore._check_places``, every ancestor of a
    passage's place) already ran under the write lock, after the passages' embedding:
    held, this keeps it there (LangChain's and LlamaIndex's ``TreehopVectorStore`` write
    through it)."""
    from treehop.ingest.records import Passage, PassageStore

    c, emb = _client()
    with c:

        async def doc(a: AsyncTreehop) -> Any:
            return await a.add_resource(
                f"The a document {GATE}", target_uri="viking://resources/a.md", is_text=True
            )

        async def below(a: AsyncTreehop) -> Any:
            store = PassageStore(a, base_uri="viking://resources/a.md/sub")
            return await store.aupsert([Passage("a passage", id="p1")])

        first, second = _interleave(c, emb, doc, below)
        assert not isinstance(first, BaseException), first
        assert isinstance(second, InvalidURIError), second
        assert "inside the document" in str(second)
        assert c.read("viking://resources/a.md").startswith("The a document")


# -- 2. add_memory's ``replaced`` under concurrent writers ----------------------------------


def test_add_memory_replaced_is_read_with_its_write() -> None:
    """Two ``add_memory(..., name="home")`` at once: before, both checks ran before either
    write, and both results said ``replaced=False`` though the second write replaced the
    first. Now the check and the write take the category's lock (as ``remember``) and the
    check runs under the write lock: exactly one says it replaced a memory, and the text
    kept is the last one written."""
    c, emb = _client()
    with c:

        async def one(a: AsyncTreehop) -> Any:
            return await a.add_memory(f"I live in Lisbon {GATE}", name="home")

        async def two(a: AsyncTreehop) -> Any:
            return await a.add_memory("I live in Porto", name="home")

        first, second = _interleave(c, emb, one, two)
        assert not isinstance(first, BaseException), first
        assert not isinstance(second, BaseException), second
        assert (first.replaced, second.replaced) == (False, True)
        assert c.read("viking://~/memories/home").startswith("I live in Porto")


# -- 3. find with the user's space as its target: refused before embedding ------------------


class CountingEmbedder(BagOfWordsEmbedder):
    """Counts every text embedded (documents and queries, sync and async paths)."""


@pytest.mark.parametrize("context_type", ["memory", "skill", None])
@pytest.mark.parametrize("sync", [True, False], ids=["sync", "async"])
def test_find_in_the_users_space_fails_before_embedding(
    context_type: str | None, sync: bool
) -> None:
    """``find(..., target_uri="viking://user/<me>")`` (with or without a context type)
    embedded the query, then raised ``NotFoundError`` (no node is ever stored at a user's
    space: nothing has it as its parent). Now the same error comes before the embedder is
    asked."""
    emb = CountingEmbedder()
    with Treehop(None, embedder=emb, tagger=None, user="alice") as c:
        c.add_memory("I live in Lisbon", name="home")
        before = emb.texts_embedded
        with pytest.raises(NotFoundError, match="unknown target"):
            if sync:
                c.find("where", context_type=context_type, target_uri="viking://user/alice")
            else:
                c.run(
                    c.aio.find("where", context_type=context_type, target_uri="viking://user/alice")
                )
        assert emb.texts_embedded == before
        # (the control: the memories' root is searched)
        assert c.find("Lisbon", target_uri="viking://user/alice/memories").memories
