"""A total deadline over a reranker's batches (helper deadline58), and bounded VikingDB
knowledge-base URIs for very long ``doc_id`` values.

Before: ``LLMReranker.rerank`` (and ``HTTPReranker.rerank`` with ``max_batch``) called outside
``find`` ran batch after batch, each allowed the whole per-request deadline, so a slow server
held one call for batches x deadline; ``arerank``'s batches queued behind ``concurrency``
without a bound on the wait. Every test talks to a loopback fake speaking the real protocol.
"""

from __future__ import annotations

import asyncio
import time

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from treehop import uri as urimod
from treehop._http import RetryPolicy
from treehop.errors import InvalidURIError, RerankError
from treehop.llm.openai_compatible import OpenAICompatibleLLM
from treehop.rerankers.http_rerank import HTTPReranker
from treehop.rerankers.llm_rerank import LLMReranker
from treehop.rerankers.vikingdb_rerank import VikingDBReranker
from treehop.vikingdb_knowledge import _SHORTENED, _segment, _unsegment

from fake_servers._http_base import RecordedRequest
from fake_servers._http_base import Reply as BaseReply
from fake_servers.openai_chat import FakeOpenAIChatServer, Reply
from fake_servers.rerank_servers import FakeRerankServer, FakeVikingDBRerankServer
from fake_servers.vikingdb_knowledge_setup import (
    costs_point,
    knowledge_server,
    make_knowledge_source,
)

NO_RETRY = RetryPolicy(max_retries=0)
VK_AK, VK_SK = "AKLTdeadline58vk", "deadline58-vk-secret"
DOCS = [f"passage {i} about deadlines" for i in range(6)]


def _llm(srv: FakeOpenAIChatServer) -> OpenAICompatibleLLM:
    return OpenAICompatibleLLM(
        "fake-model", base_url=srv.base_url, api_key="k", deadline_s=30.0, max_retries=0
    )


def test_llm_rerank_sync_total_deadline_across_batches() -> None:
    # 6 batches of one passage, each answered after 0.5 s: 3 s in sequence without a total.
    with FakeOpenAIChatServer(default=Reply.chat('{"scores": [5]}', delay_s=0.5)) as srv:
        rr = LLMReranker(_llm(srv), batch_size=1, deadline_s=1.2)
        t0 = time.monotonic()
        with pytest.raises(RerankError, match="deadline"):
            rr.rerank("q", DOCS)
        elapsed = time.monotonic() - t0
        assert elapsed < 2.0, elapsed
        assert len(srv.requests) < len(DOCS)


def test_llm_rerank_sync_deadline_stops_an_answer_in_progress() -> None:
    # One batch whose answer takes 4 s; the model's own deadline (30 s) would wait for it.
    with FakeOpenAIChatServer(default=Reply.chat('{"scores": [5, 5]}', delay_s=4.0)) as srv:
        rr = LLMReranker(_llm(srv), deadline_s=0.5)
        t0 = time.monotonic()
        with pytest.raises(RerankError, match=r"0\.5s deadline"):
            rr.rerank("q", DOCS[:2])
        assert time.monotonic() - t0 < 2.0


def test_llm_rerank_sync_within_deadline_still_grades() -> None:
    with FakeOpenAIChatServer(default=Reply.chat('{"scores": [7, 3]}')) as srv:
        rr = LLMReranker(_llm(srv), batch_size=2, deadline_s=10.0)
        assert rr.rerank("q", DOCS[:4]) == [0.7, 0.3, 0.7, 0.3]


def test_llm_rerank_async_total_deadline_covers_the_queue() -> None:
    # concurrency=1: the batches queue behind the gate, each then allowed the model's 30 s.
    with FakeOpenAIChatServer(default=Reply.chat('{"scores": [5]}', delay_s=0.5)) as srv:
        rr = LLMReranker(_llm(srv), batch_size=1, concurrency=1, deadline_s=1.2)

        async def go() -> float:
            t0 = time.monotonic()
            with pytest.raises(RerankError, match="deadline"):
                await rr.arerank("q", DOCS)
            return time.monotonic() - t0

        assert asyncio.run(go()) < 2.0


def test_llm_rerank_deadline_validated() -> None:
    with FakeOpenAIChatServer() as srv:
        for bad in (0, -1, float("nan"), True, "5"):
            with pytest.raises(RerankError, match="deadline_s"):
                LLMReranker(_llm(srv), deadline_s=bad)  # type: ignore[arg-type]
        assert LLMReranker(_llm(srv), deadline_s=None).deadline_s is None


class SlowRerankServer(FakeRerankServer):
    """The real ``/rerank`` answer, sent after ``delay_s``."""

    def __init__(self, delay_s: float) -> None:
        super().__init__()
        self.delay_s = delay_s

    def answer(self, req: RecordedRequest) -> BaseReply:
        reply = super().answer(req)
        reply.delay_s = self.delay_s
        return reply


def test_http_rerank_sync_total_deadline_across_batches() -> None:
    with SlowRerankServer(0.5) as srv:
        rr = HTTPReranker(srv.base_url, max_batch=1, deadline_s=1.2, retry=NO_RETRY)
        try:
            t0 = time.monotonic()
            with pytest.raises(RerankError, match="deadline passed"):
                rr.rerank("deadlines", DOCS)
            assert time.monotonic() - t0 < 2.0
            assert len(srv.requests) < len(DOCS)
        finally:
            rr.close()


def test_http_rerank_sync_batches_within_deadline() -> None:
    with SlowRerankServer(0.05) as srv:
        rr = HTTPReranker(srv.base_url, max_batch=2, deadline_s=10.0, retry=NO_RETRY)
        try:
            assert len(rr.rerank("deadlines", DOCS)) == len(DOCS)
            assert len(srv.requests) == 3
        finally:
            rr.close()


# -- VikingDB knowledge base: a doc_id too long for a URI --------------------------------------

KB_AK, KB_SK = "AKLTdeadline58", "deadline58-secret"


@pytest.mark.parametrize("stem", ["a" * 5000, "\u00e9/" * 2000], ids=["plain", "encoded"])
def test_a_very_long_doc_id_gives_a_bounded_unique_uri(stem: str) -> None:
    """Before: ``viking://resources/<kb>/<5,000 characters>#chunk-0``, a URI no URI argument
    takes back (``normalize`` refuses past 2,048). Now bounded, still distinct per id, the
    whole id in the metadata, and ``doc_id_of`` / ``target_uri`` refuse it with a typed error
    that says how to target it."""
    ids = [stem + "1", stem + "2"]
    points = [costs_point(ids[0]), costs_point(ids[1])]
    with knowledge_server(KB_AK, KB_SK, points) as srv:
        src = make_knowledge_source(srv, ak=KB_AK, sk=KB_SK, retry=RetryPolicy(max_retries=0))
        try:
            hits = src.find("quarterly report costs", limit=5).resources
            assert len(hits) == 2
            for hit in hits:
                assert hit.parent_uri is not None
                for u in (hit.uri, hit.parent_uri):
                    assert len(u) <= urimod.MAX_URI_LENGTH
                    assert urimod.normalize(u, "default") == u
                with pytest.raises(InvalidURIError, match="doc_filter"):
                    src.doc_id_of(hit.parent_uri)
                with pytest.raises(InvalidURIError):
                    src.find("costs", target_uri=hit.parent_uri)
            assert {h.metadata["doc_info"]["doc_id"] for h in hits} == set(ids)
            assert len({h.parent_uri for h in hits}) == 2
            assert src.doc_uri(ids[0]) != src.doc_uri(ids[1])
            # An id that fits keeps its reversible segment.
            assert src.doc_id_of(src.doc_uri(stem[:300])) == stem[:300]
        finally:
            src.close()


def test_a_uri_prefix_leaving_no_room_for_ids_is_refused() -> None:
    with (
        knowledge_server(KB_AK, KB_SK, [costs_point()]) as srv,
        pytest.raises(InvalidURIError, match="uri_prefix"),
    ):
        make_knowledge_source(
            srv,
            ak=KB_AK,
            sk=KB_SK,
            retry=RetryPolicy(max_retries=0),
            uri_prefix="viking://resources/" + "p" * 1500,
        )


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400), st.integers(min_value=40, max_value=600))
@example("~", 40)  # a plain id holding the mark: kept as it is, and reversible
@example("a~b", 40)
def test_segment_bounded_and_reversible_when_it_fits(raw: str, max_len: int) -> None:
    seg = _segment(raw, max_len)
    assert len(seg) <= max_len
    if seg.startswith("b64-") and _SHORTENED in seg:
        assert seg.startswith("b64-") and len(_segment(raw)) > max_len
        with pytest.raises(InvalidURIError):
            _unsegment(seg)
    else:
        assert seg == _segment(raw) and _unsegment(seg) == raw


class SlowVikingDBRerankServer(FakeVikingDBRerankServer):
    """The real signed VikingDB rerank answer, sent after ``delay_s``."""

    def __init__(self, delay_s: float) -> None:
        super().__init__(ak=VK_AK, sk=VK_SK)
        self.delay_s = delay_s

    def answer(self, req: RecordedRequest) -> BaseReply:
        reply = super().answer(req)
        reply.delay_s = self.delay_s
        return reply


def test_vikingdb_rerank_sync_total_deadline_across_batches() -> None:
    with SlowVikingDBRerankServer(0.5) as srv:
        rr = VikingDBReranker(
            ak=VK_AK,
            sk=VK_SK,
            host=srv.address,
            scheme="http",
            retry=NO_RETRY,
            max_batch=1,
            deadline_s=1.2,
        )
        try:
            t0 = time.monotonic()
            with pytest.raises(RerankError, match="deadline passed"):
                rr.rerank("deadlines", DOCS)
            assert time.monotonic() - t0 < 2.0
            assert len(srv.requests) < len(DOCS)
        finally:
            rr.close()
