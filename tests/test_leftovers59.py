"""Stop 58's small leftovers (helper leftovers59).

1. ``add_memory`` read its target's ancestors twice under the write lock: once in
   :func:`treehop.memory.check_memory_target` (the memories' scope) and once in
   ``add_resource``'s :meth:`~treehop.AsyncTreehop._outside_documents` (the whole path).
   Now one read answers both, with the same answers (the refusals below, and races59's and
   attacks62's tests).
"""

from __future__ import annotations

from typing import Any

import pytest

from treehop import Treehop, memory
from treehop import uri as urimod
from treehop.errors import InvalidQueryError, InvalidURIError
from treehop.models import ContextType, Level, Node

from treehop_test_doubles import BagOfWordsEmbedder


def _client() -> Treehop:
    return Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None)


# -- 1. add_memory: the target's ancestors read once under the write lock --------------------


def test_add_memory_reads_its_ancestors_once_under_the_write_lock(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``add_memory(..., name="home/x")`` beside the memory ``home/y``: before, the ancestors
    (``~/memories``, ``~/memories/home``) were read by two ``document_above`` calls under
    the write lock (and two before it); now by one each time, over the whole path."""
    c = _client()
    with c:
        c.add_memory("I moved to Porto", name="home/y")
        a = c.aio
        target = a.resolve("viking://~/memories/home/x")
        reads: list[tuple[bool, list[str]]] = []
        real = memory.document_above

        def counted(store: Any, targets: Any, *args: Any, **kwargs: Any) -> Any:
            below = args[0] if args else kwargs.get("below")
            asked = [u for t in targets for u in urimod.ancestors_of(t)]
            reads.append(
                (
                    a.writer.lock.locked(),
                    [u for u in asked if below is None or u.startswith(below + "/")],
                )
            )
            return real(store, targets, *args, **kwargs)

        monkeypatch.setattr(memory, "document_above", counted)
        result = c.add_memory("I live in Porto now", name="home/x")
        assert result.replaced is False
        whole = urimod.ancestors_of(target)
        assert [r for locked, r in reads if locked] == [whole]
        assert [r for locked, r in reads if not locked] == [whole]
        assert c.read("viking://~/memories/home/x").startswith("I live in Porto now")
        c.add_memory("I live in Braga", name="home/x")
        assert [r for locked, r in reads if locked] == [whole, whole]


def test_add_memory_keeps_each_refusal_from_the_one_read() -> None:
    """The same answers from the one read, in the same order: a place below a memory
    (``InvalidQueryError``), a name over a directory of memories (``InvalidQueryError``),
    and a place inside a document that is not a memory (``InvalidURIError``, add_resource's
    wording: a document standing at the memories' root, written past the writers' checks,
    the only document a memory's place can lie in outside the memories' scope)."""
    c = _client()
    with c:
        c.add_memory("I live in Lisbon", name="home")
        with pytest.raises(InvalidQueryError, match="lies below the memory"):
            c.add_memory("I moved", name="home/x")
        c.add_memory("I like tea", name="likes/tea")
        with pytest.raises(InvalidQueryError, match="directory of memories"):
            c.add_memory("I like coffee", name="likes")
        a = c.aio
        root = a.resolve("viking://~/memories")
        leaf = Node(
            uri=root,
            parent_uri=urimod.parent_of(root),
            context_type=ContextType.MEMORY,
            level=Level.CONTENT,
            is_leaf=True,
            abstract="a stray text",
            content="a stray text",
        )
        c.run(memory.write_nodes(a, [leaf]))
        with pytest.raises(InvalidURIError, match="lies inside the document"):
            c.add_memory("I moved", name="fresh")
        assert c.read("viking://~/memories") == "a stray text"


# -- 2. add_resource: one signature; add_memory's check rides in a context variable -----------


def test_add_resource_signature_is_the_public_one_and_the_check_does_not_leak() -> None:
    """``add_resource``'s signature and docs live once (races59 had a private twin with the
    same parameters plus ``memory_check``); ``add_memory``'s check reaches it through
    ``client._MEMORY_TARGET_CHECK``, reset when ``add_memory`` ends, also by an error: a
    later ``add_resource`` in the same task is checked by its own rule."""
    import asyncio
    import inspect

    from treehop import AsyncTreehop
    from treehop import client as clientmod
    from treehop.errors import IngestError

    params = list(inspect.signature(AsyncTreehop.add_resource).parameters)
    assert params == [
        "self",
        "path_or_text",
        "target_uri",
        "tags",
        "name",
        "metadata",
        "progress",
        "is_text",
        "exclude",
    ]
    assert not hasattr(AsyncTreehop, "_add_resource")
    assert list(inspect.signature(Treehop.add_resource).parameters)[1:] == params[1:]

    async def go(a: AsyncTreehop) -> None:
        huge = "word " * (clientmod.MAX_FILE_BYTES // 5 + 1)
        with pytest.raises(IngestError):
            await a.add_memory(huge, name="big")
        assert clientmod._MEMORY_TARGET_CHECK.get() is None
        await a.add_resource("a text", target_uri="viking://resources/a.md", is_text=True)
        with pytest.raises(InvalidURIError, match="inside the document"):
            await a.add_resource("b", target_uri="viking://resources/a.md/b.md", is_text=True)
        assert await a.add_memory("I live in Lisbon", name="home")
        assert clientmod._MEMORY_TARGET_CHECK.get() is None

    c = _client()
    with c:
        c.run(go(c.aio))
    assert asyncio.iscoroutinefunction(AsyncTreehop.add_resource)
