"""The chat model's async pool is closed before the loop that opened it ends (helper
leftovers68a, bench/README.md "(helper leftovers68a)"; helper leftovers67a's open item).

``asyncio.run(llm.acomplete(...))`` (or an ``IntentAnalyzer`` over it) and then the sync
``llm.close()`` left the async pool of a closed loop, which nothing could close any more, to
the garbage collector: ``ResourceWarning: unclosed <socket.socket ...>`` and ``unclosed
transport``, the last four of leftovers67a's leak search (``test_attacks55`` /
``test_attacks57``'s planner fallback). The pool is now tied to its loop by an async
generator, as the embedder's is (:func:`treehop.llm.openai_compatible._loop_guard`), and
``asyncio.run`` closes it before it closes the loop.

Each test fails on 05a7cdf8 unless it says it is a control.
"""

from __future__ import annotations

import asyncio
import gc
import pickle
import warnings
from collections.abc import Iterator

import pytest

from treehop.intent_analysis import IntentAnalyzer
from treehop.llm.base import ChatMessage
from treehop.llm.openai_compatible import OpenAICompatibleLLM

from fake_servers.openai_chat import FakeOpenAIChatServer, Reply

_ASK = [ChatMessage(role="user", content="q")]


@pytest.fixture
def server() -> Iterator[FakeOpenAIChatServer]:
    with FakeOpenAIChatServer(default=Reply.chat("hi")) as srv:
        yield srv


def _unclosed(run: object) -> list[str]:
    """The ResourceWarnings of ``run()`` and of a full collection after it."""
    gc.collect()  # (earlier garbage collected first, outside the check)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always", ResourceWarning)
        run()  # type: ignore[operator]
        gc.collect()
        gc.collect()
    return [str(w.message) for w in seen if issubclass(w.category, ResourceWarning)]


def test_asyncio_run_then_close_leaves_no_unclosed_socket(server: FakeOpenAIChatServer) -> None:
    # 05a7cdf8: "unclosed <socket.socket fd=.., laddr=('127.0.0.1', ..)>" and "unclosed
    # transport <_SelectorSocketTransport ...>" at the collection
    def run() -> None:
        llm = OpenAICompatibleLLM("m", base_url=server.base_url, api_key="sk-test")
        assert asyncio.run(llm.acomplete(_ASK)) == "hi"
        llm.close()

    assert _unclosed(run) == []


def test_the_planner_fallback_of_attacks55_leaves_no_unclosed_socket(
    server: FakeOpenAIChatServer,
) -> None:
    # 05a7cdf8: test_attacks55's / test_attacks57's pattern, IntentAnalyzer over asyncio.run
    def run() -> None:
        llm = OpenAICompatibleLLM("m", base_url=server.base_url, api_key="sk-test")
        asyncio.run(IntentAnalyzer(llm).analyze("what is alpha?"))
        llm.close()

    assert _unclosed(run) == []


def test_each_asyncio_run_gets_a_live_pool_control(server: FakeOpenAIChatServer) -> None:
    # control: a second asyncio.run opens a new pool (the closed loop's is not reused), and
    # one loop reuses its pool across calls
    llm = OpenAICompatibleLLM("m", base_url=server.base_url, api_key="sk-test")

    async def twice() -> object:
        assert await llm.acomplete(_ASK) == "hi"
        pool = llm._aclient
        assert await llm.acomplete(_ASK) == "hi"
        assert llm._aclient is pool and pool is not None and not pool.is_closed
        return pool

    first = asyncio.run(twice())
    second = asyncio.run(twice())
    assert first is not second
    assert llm._aclient in (None, second)  # (this branch: forgotten as its loop ended)
    llm.close()


def test_aclose_closes_the_pool_at_once_and_a_copy_has_none_control(
    server: FakeOpenAIChatServer,
) -> None:
    # control: aclose() on the pool's loop closes it then; a pickled copy travels without it
    llm = OpenAICompatibleLLM("m", base_url=server.base_url, api_key="sk-test")

    async def use() -> None:
        assert await llm.acomplete(_ASK) == "hi"
        pool = llm._aclient
        copy = pickle.loads(pickle.dumps(llm))
        assert copy._aclient is None and getattr(copy, "_aclient_guard", None) is None
        assert await copy.acomplete(_ASK) == "hi"
        await copy.aclose()
        await llm.aclose()
        assert pool is not None and pool.is_closed and llm._aclient is None

    asyncio.run(use())
