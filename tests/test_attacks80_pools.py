"""Attacks on stop 67's pool closing (helper attacks80, bench/README.md "(helper attacks80)").

Stop 67 closes an HTTP plug-in's pool when its owner is collected (``_http.sync_client(owner=)``,
the chat model's ``weakref.finalize(model, _close_on_its_loop, client, loop)``). The
finaliser holds its pool (and the loop) until the owner dies, and nothing removed it when the
owner closed the pool itself, so an owner that closes and reopens kept every pool it ever had:
``asyncio.run(llm.acomplete(...))`` per call held one ``AsyncClient`` and one closed event
loop a call for the model's life (100 calls: 100 of each), and ``complete`` + ``close()``
(the embedder's ``embed`` + ``close()``, a reranker's) one ``httpx.Client`` a cycle.

Each test fails on c3a05a97 unless it says it is a control.
"""

from __future__ import annotations

import asyncio
import gc
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from treehop.embedders.openai_compatible import OpenAICompatibleEmbedder
from treehop.llm.base import ChatMessage
from treehop.llm.openai_compatible import OpenAICompatibleLLM
from treehop.rerankers.http_rerank import HTTPReranker

from fake_servers.openai_chat import FakeOpenAIChatServer, Reply
from fake_servers.openai_embeddings import FakeOpenAIEmbeddingsServer
from fake_servers.rerank_servers import FakeRerankServer

_ASK = [ChatMessage(role="user", content="q")]
_ROUNDS = 4


def _loop_type() -> type:
    loop = asyncio.new_event_loop()
    loop.close()
    return type(loop)


_LOOP = _loop_type()


def _alive(kind: type) -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if type(o) is kind)


@pytest.fixture(scope="module")
def urls() -> Iterator[dict[str, str]]:
    with (
        FakeOpenAIEmbeddingsServer(dim=4) as emb,
        FakeOpenAIChatServer(default=Reply.chat("hi")) as chat,
        FakeRerankServer("cohere") as rerank,
    ):
        yield {"embedder": emb.base_url, "chat": chat.base_url, "rerank": rerank.base_url}


def test_asyncio_run_per_call_keeps_no_pool_or_loop(urls: dict[str, str]) -> None:
    # c3a05a97: each asyncio.run left its AsyncClient and its closed loop in the model's
    # finaliser: 4 more of each after 4 calls
    llm = OpenAICompatibleLLM("m", base_url=urls["chat"], api_key="sk-test")
    loops, pools = _alive(_LOOP), _alive(httpx.AsyncClient)
    for _ in range(_ROUNDS):
        assert asyncio.run(llm.acomplete(_ASK)) == "hi"
    assert _alive(httpx.AsyncClient) == pools
    assert _alive(_LOOP) == loops
    del llm


def _chat(url: str) -> Any:
    llm = OpenAICompatibleLLM("m", base_url=url, api_key="sk-test")
    return llm, lambda: llm.complete(_ASK) == "hi"


def _embedder(url: str) -> Any:
    emb = OpenAICompatibleEmbedder("m", base_url=url, dimension=4)
    return emb, lambda: emb.embed(["a"]).shape == (1, 4)


def _reranker(url: str) -> Any:
    rr = HTTPReranker(url, api_key="k", api_key_env=None)
    return rr, lambda: len(rr.rerank("q", ["a b", "q"])) == 2


@pytest.mark.parametrize(
    ("make", "url"),
    [(_chat, "chat"), (_embedder, "embedder"), (_reranker, "rerank")],
    ids=["chat-model", "embedder", "reranker"],
)
def test_close_then_use_again_keeps_no_closed_pool(
    urls: dict[str, str], make: Callable[[str], Any], url: str
) -> None:
    # c3a05a97: each close() left the closed httpx.Client in the finaliser (4 more after 4)
    owner, use = make(urls[url])
    pools = _alive(httpx.Client)
    for _ in range(_ROUNDS):
        assert use()
        owner.close()
    assert _alive(httpx.Client) == pools
    del owner, use


def test_a_dropped_model_still_closes_its_pools_control(urls: dict[str, str]) -> None:
    # control (passes on c3a05a97): a model used, its pools left open and dropped in a
    # reference cycle, is still closed by its finaliser (stop 67's fix kept)
    gc.collect()
    llm = OpenAICompatibleLLM("m", base_url=urls["chat"], api_key="sk-test")
    assert llm.complete(_ASK) == "hi"
    pool = llm._client
    llm.cycle = llm
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always", ResourceWarning)
        del llm
        gc.collect()
    assert pool is not None and pool.is_closed
    assert [w for w in seen if issubclass(w.category, ResourceWarning)] == []
