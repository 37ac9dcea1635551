"""The sync client's event loops are closed as ``asyncio.run`` closes its own: async
generators finalised, worker threads waited for, within a deadline (helper leftovers68b,
bench/README.md "(helper leftovers68b)"; stop 67's open item from helper leftovers68a).

``LoopThread.close()`` and ``_CallerLoop.close()`` called ``loop.close()`` alone: an async
generator that ties a resource to its loop (the chat model's HTTP pool, ``_loop_guard``)
never ran its ``finally``, so a model used on a sync client's loop and then the client closed
left its pool's socket to the garbage collector (``ResourceWarning: unclosed
<socket.socket ...>``, ``unclosed transport``: the two warnings of
``test_memory::test_llm_failure_never_loses_turns``); and a worker thread (``to_thread``) was
left running after ``close()`` returned.

Each test fails on c3a05a97 unless it says it is a control.
"""

from __future__ import annotations

import asyncio
import gc
import threading
import time
import warnings
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from typing import Any

import httpx
import pytest

from treehop import LLMMemoryExtractor, Treehop
from treehop._sync import CANCEL_GRACE_S, WIND_DOWN_S, LoopThread
from treehop.errors import ClientClosedError
from treehop.llm.base import ChatMessage
from treehop.llm.openai_compatible import OpenAICompatibleLLM

from fake_servers.openai_chat import FakeOpenAIChatServer, Reply
from treehop_test_doubles import BagOfWordsEmbedder

_ASK = [ChatMessage(role="user", content="q")]


@pytest.fixture
def server() -> Iterator[FakeOpenAIChatServer]:
    with FakeOpenAIChatServer(default=Reply.chat("hi")) as srv:
        yield srv


def _model(server: FakeOpenAIChatServer) -> OpenAICompatibleLLM:
    return OpenAICompatibleLLM("m", base_url=server.base_url, api_key="sk-test", max_retries=0)


def _unclosed(run: Callable[[], None]) -> list[str]:
    """The ResourceWarnings of ``run()`` and of a full collection after it."""
    gc.collect()  # (earlier garbage collected first, outside the check)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always", ResourceWarning)
        run()
        gc.collect()
        gc.collect()
    return [str(w.message) for w in seen if issubclass(w.category, ResourceWarning)]


def _calling(
    runner: LoopThread, coro: Coroutine[Any, Any, None]
) -> tuple[threading.Thread, list[BaseException]]:
    """A thread running ``coro`` through ``runner.run`` (a sync call), and what it raised."""
    errors: list[BaseException] = []

    def caller() -> None:
        try:
            runner.run(coro)
        except BaseException as exc:
            errors.append(exc)

    t = threading.Thread(target=caller)
    t.start()
    return t, errors


def test_a_models_pool_on_the_clients_loop_thread_is_closed_with_the_client(
    server: FakeOpenAIChatServer,
) -> None:
    # c3a05a97: "unclosed <socket.socket ...>" and "unclosed transport <_SelectorSocketTransport
    # ...>" once the model is dropped after the client's close
    def run() -> None:
        llm = _model(server)
        client = Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None)
        assert client.run(llm.acomplete(_ASK)) == "hi"
        pool = llm._aclient
        client.close()
        assert pool is not None and pool.is_closed  # closed on its loop, before it closed
        assert llm._aclient is None  # (forgotten: the next loop gets a new pool)
        llm.close()

    assert _unclosed(run) == []


def test_test_memorys_extractor_pattern_leaves_no_unclosed_socket(
    server: FakeOpenAIChatServer,
) -> None:
    # c3a05a97: test_memory::test_llm_failure_never_loses_turns's two warnings: a memory
    # extractor's model used by add_messages (on the loop thread), the client closed, the
    # model never aclose()d
    def run() -> None:
        client = Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None)
        res = client.add_messages(
            [{"speaker": "Melanie", "content": "We camped by the river."}],
            conversation_id="trip",
            session_id="s1",
            session_time=1_687_305_600,
            extractor=LLMMemoryExtractor(_model(server)),
        )
        assert res.turn_uris and res.extraction_error  # ("hi" is no extraction's JSON)
        client.close()

    assert _unclosed(run) == []


def test_a_calling_threads_loop_is_finalised_when_the_client_closes(
    server: FakeOpenAIChatServer,
) -> None:
    # c3a05a97: the calling thread's loop (run_here) closed by the client's close() from
    # another thread, its generators never finalised: the same two warnings
    def run() -> None:
        runner = LoopThread()
        llm = _model(server)
        used, release = threading.Event(), threading.Event()
        answers: list[str] = []

        def caller() -> None:
            answers.append(runner.run_here(llm.acomplete(_ASK)))
            used.set()
            release.wait(10)  # (alive while the client closes: its loop is closed from here)

        t = threading.Thread(target=caller)
        t.start()
        assert used.wait(10) and answers == ["hi"]
        pool = llm._aclient
        runner.close()
        assert pool is not None and pool.is_closed
        release.set()
        t.join()
        llm.close()

    assert _unclosed(run) == []


def test_a_calling_threads_loop_is_finalised_when_the_thread_ends(
    server: FakeOpenAIChatServer,
) -> None:
    # c3a05a97: the thread's storage drops its loop when the thread ends (``__del__``),
    # closed without finalising its generators
    def run() -> None:
        runner = LoopThread()
        llm = _model(server)
        answers: list[object] = []

        def caller() -> None:
            answers.append(runner.run_here(llm.acomplete(_ASK)))
            answers.append(llm._aclient)

        t = threading.Thread(target=caller)
        t.start()
        t.join()
        assert answers[0] == "hi"
        pool = answers.pop()
        assert isinstance(pool, httpx.AsyncClient) and pool.is_closed
        assert llm._aclient is None
        runner.close()
        llm.close()

    assert _unclosed(run) == []


def test_close_waits_for_a_worker_thread_that_ends_within_the_deadline() -> None:
    # c3a05a97: close() returned with the cancelled call's worker thread still running
    runner = LoopThread()
    started, finished = threading.Event(), threading.Event()

    def work() -> None:
        started.set()
        time.sleep(0.6)
        finished.set()

    async def call() -> None:
        await asyncio.to_thread(work)

    t, errors = _calling(runner, call())
    assert started.wait(10)
    runner.close()
    assert finished.is_set()  # the worker's item ran to its end before close() returned
    t.join(10)
    assert [type(e) for e in errors] == [ClientClosedError]


def test_close_is_bounded_by_a_stuck_worker_and_a_stuck_generator_control() -> None:
    # control (passes on c3a05a97, which waited for neither): a worker thread that never
    # ends and a generator whose ``finally`` never ends hold close() no longer than the
    # deadline; the worker is left to end on its own
    runner = LoopThread()
    started, release = threading.Event(), threading.Event()

    async def stuck_guard() -> AsyncIterator[None]:
        try:
            yield
        finally:
            await asyncio.sleep(60)

    async def call() -> None:
        gen = stuck_guard()
        await gen.__anext__()
        call.gen = gen  # type: ignore[attr-defined]  (held: finalised by the close)
        await asyncio.to_thread(lambda: (started.set(), release.wait(30)))

    t, errors = _calling(runner, call())
    assert started.wait(10)
    began = time.monotonic()
    runner.close()
    took = time.monotonic() - began
    release.set()
    t.join(10)
    assert runner.closed and [type(e) for e in errors] == [ClientClosedError]
    assert took < CANCEL_GRACE_S + WIND_DOWN_S + 1.5, took


def test_a_client_closed_still_refuses_calls_and_a_second_close_does_nothing_control() -> None:
    # control: the close's order is unchanged for callers: a call after it is refused, a
    # second close returns at once, a calling thread's next read is refused too
    client = Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None)
    client.remember("alpha beta", name="a")
    assert client.find("alpha").contexts()
    client.close()
    began = time.monotonic()
    client.close()
    assert time.monotonic() - began < 0.5
    with pytest.raises(ClientClosedError):
        client.find("alpha")
