"""Adversarial pass attacks55: remote answers, stores, framework adapters.

Each test was written failing first (bench/README.md, "Adversarial pass (helper attacks55)").
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from treehop import Treehop
from treehop._http import RetryPolicy
from treehop.embedders.openai_compatible import OpenAICompatibleEmbedder
from treehop.errors import EmbeddingError, LLMError, RerankError, StoreError, TreehopError
from treehop.intent_analysis import IntentAnalyzer, PlanParseError, extract_json
from treehop.llm import ChatMessage
from treehop.llm.openai_compatible import OpenAICompatibleLLM
from treehop.rerankers.base import safe_rerank
from treehop.rerankers.http_rerank import HTTPReranker
from treehop.rerankers.llm_rerank import LLMReranker, parse_scores, unfence
from treehop.rerankers.vikingdb_rerank import VikingDBReranker

from fake_servers.fault_server import FaultServer
from treehop_test_doubles import BagOfWordsEmbedder, raw_answer_server

# An int no float can hold: ``float(BIG)`` and ``math.isfinite(BIG)`` raise OverflowError.
BIG = 10**400


@pytest.fixture
def client(tmp_path: Path) -> Treehop:
    t = Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder())
    t.add_resource("alpha beta gamma text here", target_uri="viking://resources/a.md")
    return t


@pytest.mark.parametrize("value", [BIG, -BIG], ids=["big", "-big"])
def test_a_time_past_float_range_is_a_typed_error(client: Treehop, value: int) -> None:
    calls = [
        lambda: client.find("alpha", since=value),
        lambda: client.find("alpha", until=value),
        lambda: client.assemble_context("alpha", since=value),
        lambda: client.remember("Ann likes tea", timestamp=value),
        lambda: client.add_messages(
            [{"role": "user", "content": "hi", "timestamp": value}], session_id="s1"
        ),
    ]
    for call in calls:
        with pytest.raises(TreehopError, match="finite"):
            call()


# -- remote answers holding an int past float range ---------------------------------------------
# JSON allows any integer, and Python parses ``1e400``-sized integers (up to 4,300 digits) into
# ints; ``float()`` / ``math.isfinite()`` of one raise OverflowError, which no check caught.

BIG_JSON = str(BIG)
FAST = RetryPolicy(max_retries=0, backoff_s=0.01, max_backoff_s=0.05)
VOLC_AK = "AKLTattacks55AccessKey0123456789"
VOLC_SK = "YXR0YWNrczU1U2VjcmV0S2V5MDEyMzQ1Njc4OQ=="


def _chat_body(content: str) -> str:
    return json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]})


def _llm(srv: FaultServer) -> OpenAICompatibleLLM:
    return OpenAICompatibleLLM(
        "m", base_url=srv.base_url + "/v1", api_key="sk-attacks55-key", max_retries=0
    )


def test_an_embedding_past_float_range_is_an_embedding_error() -> None:
    body = '{"data": [{"index": 0, "embedding": [0.5, ' + BIG_JSON + "]}]}"
    with FaultServer("wrong_len", {"wrong_len": body}) as srv:
        emb = OpenAICompatibleEmbedder("m", base_url=srv.base_url, retry=FAST)
        with pytest.raises(EmbeddingError, match=r"non-numeric|finite|range"):
            emb.embed(["x"])
        emb.close()


def test_a_rerank_score_past_float_range_is_a_rerank_error() -> None:
    body = (
        '{"results": [{"index": 0, "relevance_score": ' + BIG_JSON + "}, "
        '{"index": 1, "relevance_score": 0.1}]}'
    )
    with FaultServer("wrong_len", {"wrong_len": body}) as srv:
        rr = HTTPReranker(base_url=srv.base_url, model="m", retry=FAST)
        with pytest.raises(RerankError):
            rr.rerank("q", ["a", "b"])
        rr.close()


@pytest.mark.parametrize(
    "content", ["[" + BIG_JSON + ", 1]", '{"scores": [1, ' + BIG_JSON + "]}"], ids=["list", "dict"]
)
def test_an_llm_grade_past_float_range_is_a_rerank_error(content: str) -> None:
    with FaultServer("wrong_len", {"wrong_len": _chat_body(content)}) as srv:
        llm = _llm(srv)
        with pytest.raises(RerankError):
            LLMReranker(llm).rerank("q", ["a", "b"])
        llm.close()


def test_a_vikingdb_rerank_score_past_float_range_is_a_rerank_error() -> None:
    body = '{"code": 0, "data": {"scores": [' + BIG_JSON + ", 0.5]}}"
    with FaultServer("wrong_len", {"wrong_len": body}) as srv:
        rr = VikingDBReranker(ak=VOLC_AK, sk=VOLC_SK, host=srv.address, scheme="http", retry=FAST)
        with pytest.raises(RerankError):
            rr.rerank("q", ["a", "b"])
        rr.close()


def test_a_planner_priority_past_float_range_falls_back_to_the_default() -> None:
    plan = '{"queries": [{"query": "alpha beta", "context_type": "resource", "priority": '
    with FaultServer("wrong_len", {"wrong_len": _chat_body(plan + BIG_JSON + "}]}")}) as srv:
        llm = _llm(srv)
        result = asyncio.run(IntentAnalyzer(llm).analyze("what is alpha?"))
        llm.close()
    assert result.queries and result.queries[0].priority == 3


class _HugeScores:
    """A caller's reranker whose scores no float can hold."""

    name = "huge"

    def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        return [BIG] * len(documents)  # type: ignore[list-item]

    async def arerank(self, query: str, documents: Sequence[str]) -> list[float]:
        return self.rerank(query, documents)


def test_a_callers_rerank_score_past_float_range_falls_back() -> None:
    outcome = asyncio.run(safe_rerank(_HugeScores(), "q", ["a", "b"], 5.0))  # type: ignore[arg-type]
    assert outcome.scores is None
    assert outcome.fallback_reason and "score" in outcome.fallback_reason


# -- the Milvus store's credentials -------------------------------------------------------------


def test_milvus_credentials_reach_no_error_repr_or_echo() -> None:
    """A server URI may carry ``user:password@``, and ``token`` is a credential: neither may
    reach the StoreError's message, and a server echoing the token is redacted."""
    pytest.importorskip("pymilvus")
    from treehop.redaction import redact
    from treehop.stores.milvus import MilvusStore

    password, token = "pwQz7Milvus123", "root:tokQz7Milvus456"
    with pytest.raises(StoreError) as info:
        MilvusStore(f"http://root:{password}@127.0.0.1:1", collection="c1", token=token, timeout=1)
    for text in (str(info.value), repr(info.value)):
        assert password not in text and token not in text
    assert "tokQz7Milvus456" not in redact(f"server said: bad token {token}")


# -- a planner answer that made the parser quadratic -----------------------------------------


@pytest.mark.parametrize(
    "answer",
    ["<think>" * 10_000, "<THINK>x" * 10_000, "[" * 20_000, '{"a":' * 20_000, "x [" * 20_000],
    ids=["think", "think-upper", "brackets", "objects", "prose-brackets"],
)
def test_a_hostile_planner_answer_is_parsed_in_linear_time(answer: str) -> None:
    """``<think>.*?</think>`` rescanned the rest of the answer from every unclosed
    ``<think>`` (10,000 of them, 70 KB: 4.7 s; 20,000: 20.6 s), and a JSON start was tried
    at every ``[`` / ``{`` (each failing near the recursion limit: 20,000 ``[``, 5.2 s), on
    the event loop, whatever the planner's deadline."""
    t0 = time.thread_time()  # (CPU time of this thread: a loaded machine's waits do not count)
    with pytest.raises(PlanParseError):
        extract_json(answer)
    assert time.thread_time() - t0 < 1.0


@pytest.mark.parametrize(
    ("answer", "value"),
    [
        ('<think>a</think>{"q": 1}', {"q": 1}),
        ('<Think>a {"x": 0} </THINK> then {"q": 1}', {"q": 1}),
        ('<think>a</think><think>b {"x": 0}</think>{"q": 1}', {"q": 1}),
        ('<think>never closed {"q": 1}', {"q": 1}),
        ('</think>{"q": 1}', {"q": 1}),
        ('Here [are] {the} plans: ```json\n{"q": 1}\n```', {"q": 1}),
        ("prose " + "[x " * 50 + '{"q": 1}', {"q": 1}),
    ],
    ids=["think", "think-case", "two-thinks", "unclosed", "close-only", "fence", "prose"],
)
def test_the_planner_parser_still_finds_the_json(answer: str, value: object) -> None:
    assert extract_json(answer) == value


# -- an LLM reranker answer that made the fence regex cubic ---------------------------------

_OLD_FENCE = re.compile(r"^\s*```[a-zA-Z]*\s*(.*?)\s*```\s*$", re.DOTALL)


def test_a_hostile_llm_rerank_answer_is_parsed_in_linear_time() -> None:
    """``^\\s*```[a-zA-Z]*\\s*(.*?)\\s*```\\s*$`` backtracked through every whitespace run
    at every position: "```" and 5,000 spaces and "x" took 90 s (2,000: ~6 s), on the event
    loop, past the reranker's timeout."""
    t0 = time.thread_time()  # (CPU time of this thread: a loaded machine's waits do not count)
    for answer in ["```" + " " * 20_000 + "x", "```json\n" + "\n \t" * 20_000 + "."]:
        with pytest.raises(RerankError):
            parse_scores(answer, 2)
    assert time.thread_time() - t0 < 1.0


def test_the_fence_is_read_as_the_regex_read_it() -> None:
    rng = random.Random(55)
    alphabet = ["`", "```", " ", "\n", "json", "x", "{", "}", "7", "\u3000"]
    for _ in range(20_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12))).strip()
        old = _OLD_FENCE.match(text)
        assert unfence(text) == (old.group(1) if old else None), repr(text)


# -- a reranker's request that httpx cannot build --------------------------------------------


@pytest.mark.parametrize(
    ("base_url", "key"),
    [
        ("http://[::1", None),
        ("http://127.0.0.1:1/v1\n", None),
        ("http://127.0.0.1:1", "sk-ключ-Qz7abcdef"),
    ],
    ids=["bad-port", "newline", "non-ascii-key"],
)
def test_a_request_httpx_cannot_build_is_a_rerank_error(base_url: str, key: str | None) -> None:
    """``httpx.InvalidURL`` (not an ``httpx.HTTPError``) and the ``UnicodeEncodeError`` of a
    non-ASCII header escaped ``HTTPReranker.rerank`` / ``arerank`` raw."""
    rr = HTTPReranker(base_url=base_url, model="m", api_key=key, retry=FAST)
    _check_unbuildable(rr)


@pytest.mark.parametrize(
    ("host", "ak"),
    [("[::1", VOLC_AK), ("127.0.0.1:1\n", VOLC_AK), ("127.0.0.1:1", "AKключQz7abcdef")],
    ids=["bad-port", "newline", "non-ascii-key"],
)
def test_a_vikingdb_request_that_cannot_be_built_is_a_rerank_error(host: str, ak: str) -> None:
    rr = VikingDBReranker(ak=ak, sk=VOLC_SK, host=host, scheme="http", retry=FAST)
    _check_unbuildable(rr)


def _check_unbuildable(rr: HTTPReranker | VikingDBReranker) -> None:
    with pytest.raises(RerankError):
        rr.rerank("q", ["a"])
    with pytest.raises(RerankError):
        asyncio.run(rr.arerank("q", ["a"]))
    rr.close()


# -- a server's bytes quoted whole in a transport error ----------------------------------------


def test_a_transport_error_quotes_a_bounded_part_of_the_server_bytes() -> None:
    """h11 quotes an illegal status line whole (``bytearray(b'...')``): a server answering
    12,000 bytes of garbage made each client's error message 12,000+ characters (an MCP or
    tool error lands in an agent's context)."""
    url, srv = raw_answer_server(b"\x00" + b"A" * 12_000 + b"\r\n\r\n")
    try:
        emb = OpenAICompatibleEmbedder("m", base_url=url, retry=FAST)
        llm = OpenAICompatibleLLM("m", base_url=url, max_retries=0)
        rr = HTTPReranker(base_url=url, model="m", retry=FAST)
        calls = [
            (EmbeddingError, lambda: emb.embed(["x"])),
            (LLMError, lambda: llm.complete([ChatMessage(role="user", content="x")])),
            (RerankError, lambda: rr.rerank("q", ["a"])),
        ]
        for error, call in calls:
            with pytest.raises(error) as info:
                call()
            assert len(str(info.value)) < 1_000
            assert "RemoteProtocolError" in str(info.value)
    finally:
        srv.close()
