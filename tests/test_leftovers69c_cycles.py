"""A call that raised leaves no reference cycle through its caller's frames, so a retriever
dropped after a failed call closes the client it opened at its last reference, not at the
next cyclic collection (helper leftovers69c, bench/README.md "(helper leftovers69c)"; stop
68's open item from helper leftovers68b).

Two cycles held a retriever (and so its open client) past ``del``: the sync runner kept the
failed task as a local while ``task.result()`` raised (task -> exception -> traceback -> the
runner's frame -> task), and the LangChain retriever's per-call option check kept pydantic's
errors (whose ``ctx`` holds the validator's exception, whose frames name the check's frame as
their caller) while it raised. Every sync call that raised through ``LoopThread.run`` (a
``Treehop`` write, any LangChain / LlamaIndex call on the shared loop) made the first.

The tests turn the cyclic collector off, so only reference counts free anything. Each fails
on d32e6e34 unless it says it is a control.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import threading
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from langchain_treehop import TreehopRetriever
from treehop import AsyncTreehop
from treehop._sync import LoopThread
from treehop.errors import TreehopError

from treehop_test_doubles import BagOfWordsEmbedder, two_note_index


@pytest.fixture
def no_cycle_collection() -> Iterator[None]:
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect()


@pytest.fixture
def index(tmp_path: Path) -> Path:
    built: Path = two_note_index(tmp_path / "idx")
    return built


def _dropped_closes_joined() -> None:
    """Wait for the closes that collected retrievers started (``close_aside``'s threads)."""
    for t in threading.enumerate():
        if t.name == "treehop-close-dropped":
            t.join(10)


class _Held:
    """Something a caller's frame holds while its sync call fails."""


async def _fails() -> None:
    await asyncio.sleep(0)
    raise ValueError("no")


def test_a_failed_call_on_the_loop_thread_frees_what_its_caller_held(
    no_cycle_collection: None,
) -> None:
    # d32e6e34: the held object lives on (the runner's frame kept the failed task)
    runner = LoopThread()
    try:
        held = _Held()
        ref = weakref.ref(held)

        def caller(obj: _Held) -> None:
            runner.run(_fails())

        with contextlib.suppress(ValueError):
            caller(held)
        del held
        assert ref() is None
    finally:
        runner.close()


@pytest.mark.parametrize(
    "call",
    [
        pytest.param({"filter": {"$bad": 1}}, id="a bad filter"),
        pytest.param({"filter": {"x": {"$in": []}}}, id="an empty $in"),
        pytest.param({"target_uri": "viking://nope/x"}, id="a target outside the tree"),
    ],
)
def test_a_retriever_whose_call_raised_closes_its_client_at_del(
    index: Path, no_cycle_collection: None, call: dict[str, Any]
) -> None:
    # d32e6e34: the retriever outlived ``del`` (its client open) until a cyclic collection
    r = TreehopRetriever.from_path(index, embedding=BagOfWordsEmbedder(), k=1)
    client = r.client
    assert isinstance(client, AsyncTreehop)
    try:
        r.invoke("tides in the harbour", **call)
    except TreehopError:
        pass
    else:  # pragma: no cover - the premise
        pytest.fail("the call was expected to raise")
    ref = weakref.ref(r)
    del r
    assert ref() is None
    _dropped_closes_joined()
    assert client._closed


def test_an_async_call_that_raised_frees_the_retriever_at_del(
    index: Path, no_cycle_collection: None
) -> None:
    # d32e6e34: the option check's frame kept pydantic's errors, which name it
    async def main() -> weakref.ref[TreehopRetriever]:
        r = TreehopRetriever.from_path(index, embedding=BagOfWordsEmbedder(), k=1)
        with contextlib.suppress(TreehopError):
            await r.ainvoke("tides in the harbour", filter={"$bad": 1})
        ref = weakref.ref(r)
        await r.aclose()
        del r
        return ref

    assert asyncio.run(main())() is None


def test_a_retriever_whose_calls_answered_is_freed_at_del_control(
    index: Path, no_cycle_collection: None
) -> None:
    # control (passes on d32e6e34): no failed call, no cycle
    r = TreehopRetriever.from_path(index, embedding=BagOfWordsEmbedder(), k=1)
    client = r.client
    assert isinstance(client, AsyncTreehop)
    assert len(r.invoke("tides in the harbour")) == 1
    ref = weakref.ref(r)
    del r
    assert ref() is None
    _dropped_closes_joined()
    assert client._closed
