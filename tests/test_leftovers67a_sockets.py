"""A model dropped without ``close()`` closes its pooled socket (helper leftovers67a,
bench/README.md "(helper leftovers67a)"; stop 66's open item).

Stop 66's CI run failed one test: its ``gc.collect()`` under warnings-as-errors collected a
loopback socket some earlier test had left in a reference cycle (``ResourceWarning: unclosed
<socket.socket ... laddr=('127.0.0.1', ...)>``). The source: the OpenAI-compatible embedder's
and chat model's connection pools were closed only by ``close()`` / ``aclose()``, so one built,
used and dropped (a test's, a retriever's planner) left its keep-alive socket to whatever
later moment the garbage collector came (26 such warnings in 7 of the 24 socket-opening
test files CI runs before ``test_attacks75``, found with a ``gc.collect()`` after each test).
The rerankers already closed theirs when dropped; the embedder and the chat model now do too
(:func:`treehop._http.sync_client`'s ``owner``; the chat model's async pool on its loop).

Each test fails on 2bd9fe6d unless it says it is a control.
"""

from __future__ import annotations

import gc
import time
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from treehop.embedders.openai_compatible import OpenAICompatibleEmbedder
from treehop.integration_kit import run_sync
from treehop.llm.base import ChatMessage
from treehop.llm.openai_compatible import OpenAICompatibleLLM

from fake_servers.openai_chat import FakeOpenAIChatServer, Reply
from fake_servers.openai_embeddings import FakeOpenAIEmbeddingsServer

_ASK = [ChatMessage(role="user", content="q")]


def _embedder_sync(url: str) -> Any:
    emb = OpenAICompatibleEmbedder("m", base_url=url, dimension=4)
    assert emb.embed(["a"]).shape == (1, 4)
    return emb


def _chat_sync(url: str) -> Any:
    llm = OpenAICompatibleLLM("m", base_url=url, api_key="sk-test")
    assert llm.complete(_ASK) == "hi"
    return llm


def _chat_async_on_the_shared_loop(url: str) -> Any:
    # (the loop a LangChain / LlamaIndex wrapper's sync call runs an AsyncTreehop on: it
    # keeps running, so the pool is closed there)
    llm = OpenAICompatibleLLM("m", base_url=url, api_key="sk-test")
    assert run_sync(llm.acomplete(_ASK)) == "hi"
    return llm


@pytest.fixture
def servers() -> Iterator[tuple[str, str]]:
    with (
        FakeOpenAIEmbeddingsServer(dim=4) as emb,
        FakeOpenAIChatServer(default=Reply.chat("hi")) as chat,
    ):
        yield emb.base_url, chat.base_url


@pytest.mark.parametrize(
    "use",
    [_embedder_sync, _chat_sync, _chat_async_on_the_shared_loop],
    ids=["embedder", "chat-model", "chat-model-async"],
)
def test_a_model_dropped_in_a_reference_cycle_leaves_no_unclosed_socket(
    servers: tuple[str, str], use: Callable[[str], Any]
) -> None:
    # 2bd9fe6d: "ResourceWarning: unclosed <socket.socket fd=4, family=2, type=1, proto=6,
    # laddr=('127.0.0.1', 60778), raddr=('127.0.0.1', 38853)>" at the collection (and an
    # "unclosed transport" for the async pool)
    gc.collect()  # (earlier garbage collected first, outside the check)
    url = servers[0] if use is _embedder_sync else servers[1]
    model = use(url)
    model.cycle = model  # (unreachable only to the garbage collector, as in a test's frame)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always", ResourceWarning)
        del model
        gc.collect()
        time.sleep(0.2)  # (the async pool is closed on its loop's thread)
        gc.collect()
    unclosed = [str(w.message) for w in seen if issubclass(w.category, ResourceWarning)]
    assert unclosed == []


def test_a_model_kept_keeps_its_pool_control(servers: tuple[str, str]) -> None:
    # control: only a dropped model's pool is closed; one still held reuses its connection,
    # and close() still closes it at once
    llm = _chat_sync(servers[1])
    gc.collect()
    pool = llm._client
    assert pool is not None and not pool.is_closed
    assert llm.complete(_ASK) == "hi" and llm._client is pool
    llm.close()
    assert pool.is_closed
