"""Loopback fault suite: every remote dependency against every way a server can misbehave.

For each dependency -- the OpenAI-compatible embedder, the ``/rerank`` HTTP reranker, the
VikingDB reranker, the LLM reranker, the chat model as query planner and as session summariser
-- and each fault of :mod:`fake_servers.fault_server` (5xx, 429, a 401 echoing the key, hang,
byte trickle in the body and in the headers, TCP reset, malformed JSON, HTML, answers of the
wrong size, NaN/Infinity, a 10 GB declared body, an endless stream), the test checks the
documented outcome:

* the embedder: a typed :class:`~treehop.errors.EmbeddingError` from ``find()``;
* rerankers: ``find()`` succeeds on vector scores with ``rerank_fallback`` and a reason;
* the planner: ``search()`` succeeds with ``QueryPlan.fallback`` and a reason;
* the summariser: the session falls back to an extractive summary with a reason;

always within the configured deadline (plus scheduling slack), and with the API key nowhere:
not in the result, the exception's message, repr or formatted traceback (chained causes
included), nor in any log record.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
import traceback
from collections.abc import Iterator
from typing import Any

import pytest

from treehop import AsyncTreehop, Treehop
from treehop._http import RetryPolicy
from treehop.embedders.openai_compatible import OpenAICompatibleEmbedder
from treehop.errors import EmbeddingError, TreehopError
from treehop.llm.openai_compatible import OpenAICompatibleLLM
from treehop.redaction import WINDOW
from treehop.rerankers.http_rerank import HTTPReranker
from treehop.rerankers.llm_rerank import LLMReranker
from treehop.rerankers.vikingdb_rerank import VikingDBReranker
from treehop.sessions import SessionStore

from fake_servers.fault_server import MODES, FaultServer
from treehop_test_doubles import BagOfWordsEmbedder

SECRET = "sk-FAULTsuite-7c1d9e2f4a6b8c0d1e3f5a7b"
VOLC_AK = "AKLTfaultSuiteAccessKey0123456789"
VOLC_SK = "ZmF1bHRTdWl0ZVNlY3JldEtleTAxMjM0NTY3ODk="
DEADLINE = 0.3
SENT_DEADLINE = 1.0
"""The deadline of the tests that also check the key was sent: on a loaded machine a 0.3 s
deadline could end the call before its request left (creating the client and connecting
are inside it), and "the key was sent" failed though nothing was wrong."""
SLACK = 10.0
"""Scheduling slack on a loaded 2-core CI machine; a missing deadline costs 40 s or more (the
``trickle`` modes send one byte every 0.1 s of a 400-byte answer; ``huge`` and ``hang`` never
end; the planner's and summariser's own timeouts are 30 s), so a bound of the deadline plus
10 s still fails a lost deadline by 4x. (It was 1.5 s, then 3 s: a find() on a machine at load
15 took 2.2 s; with the suite on every core (helper ci75) the margin over 3 s was thin.)"""
FAST = RetryPolicy(max_retries=1, backoff_s=0.01, max_backoff_s=0.05)


def _windows(secret: str) -> set[str]:
    return {secret[i : i + WINDOW] for i in range(len(secret) - WINDOW + 1)}


def assert_clean(*texts: str, secrets: tuple[str, ...] = (SECRET,)) -> None:
    """No secret, nor any 8-character piece of one, in any of ``texts``."""
    for text in texts:
        for secret in secrets:
            assert secret not in text
            leaked = [w for w in _windows(secret) if w in text]
            assert not leaked, f"a piece of a secret leaked: {leaked[:3]} in {text[:300]!r}"


def exception_texts(exc: BaseException) -> list[str]:
    return [str(exc), repr(exc), "".join(traceback.format_exception(exc))]


@pytest.fixture(autouse=True)
def _small_response_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    """1 MiB instead of 64 MiB, so the endless-stream fault trips the cap in ~80 ms."""
    import treehop._http

    monkeypatch.setattr(treehop._http, "MAX_RESPONSE_BYTES", 1024 * 1024)


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    with caplog.at_level(logging.DEBUG):
        yield caplog


# -- protocol-specific bad answers -------------------------------------------------------------


def _n_docs(body: bytes, key: str) -> int:
    try:
        return len(json.loads(body)[key])
    except (ValueError, KeyError, TypeError):
        return 1


def embed_bodies() -> dict[str, Any]:
    return {
        "wrong_len": lambda b: json.dumps(
            {"data": [{"index": i, "embedding": [0.1, 0.2]} for i in range(3)]}
        ),
        "nan": lambda b: '{"data": [{"index": 0, "embedding": [NaN, Infinity]}]}',
    }


def cohere_bodies() -> dict[str, Any]:
    return {
        "wrong_len": lambda b: json.dumps(
            {"results": [{"index": 0, "relevance_score": 0.5}] * (_n_docs(b, "documents") + 1)}
        ),
        "nan": lambda b: (
            '{"results": ['
            + ", ".join(
                f'{{"index": {i}, "relevance_score": NaN}}' for i in range(_n_docs(b, "documents"))
            )
            + "]}"
        ),
    }


def viking_bodies() -> dict[str, Any]:
    return {
        "wrong_len": lambda b: json.dumps({"code": 0, "data": {"scores": [0.5]}}),
        "nan": lambda b: (
            '{"code": 0, "data": {"scores": ['
            + ", ".join("Infinity" for _ in range(_n_docs(b, "datas")))
            + "]}}"
        ),
    }


def chat_bodies(content_wrong: str, content_nan: str) -> dict[str, Any]:
    def wrap(content: str) -> str:
        return json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]})

    return {"wrong_len": lambda b: wrap(content_wrong), "nan": lambda b: wrap(content_nan)}


# -- a small index shared by the reranker tests -----------------------------------------------


@pytest.fixture(scope="module")
def index() -> Iterator[Treehop]:
    th = Treehop(embedder=BagOfWordsEmbedder(), tagger=None)
    th.add_resource(
        "Kubernetes deployments roll out pods.\n\nA rollout can be paused.",
        target_uri="viking://resources/k8s",
    )
    th.add_resource(
        "Postgres vacuum reclaims storage.\n\nAutovacuum runs in the background.",
        target_uri="viking://resources/pg",
    )
    yield th
    th.close()


# -- the embedder ------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_embedder_fault_is_a_typed_error_within_the_deadline(
    mode: str, logs: pytest.LogCaptureFixture
) -> None:
    with FaultServer(mode, embed_bodies()) as srv:
        emb = OpenAICompatibleEmbedder(
            "fault-model",
            base_url=srv.base_url + "/v1",
            api_key=SECRET,
            dimension=2,
            timeout_s=0.2,
            deadline_s=SENT_DEADLINE,
            retry=FAST,
        )

        async def run() -> None:
            client = AsyncTreehop(embedder=emb, tagger=None)
            try:
                await client.find("kubernetes rollout")
            finally:
                await client.close()

        t0 = time.monotonic()
        with pytest.raises(EmbeddingError) as info:
            asyncio.run(run())
        async_elapsed = time.monotonic() - t0

        t0 = time.monotonic()
        with pytest.raises(EmbeddingError) as sync_info:
            emb.embed(["kubernetes rollout"])  # the sync path has its own deadline mechanism
        sync_elapsed = time.monotonic() - t0
        emb.close()
    assert async_elapsed < SENT_DEADLINE + SLACK, f"async find() took {async_elapsed:.2f}s"
    assert sync_elapsed < SENT_DEADLINE + SLACK, f"sync embed() took {sync_elapsed:.2f}s"
    assert_clean(
        *exception_texts(info.value), *exception_texts(sync_info.value), logs.text, repr(emb)
    )
    # The key was really sent (so "not leaked" is not just "never had it").
    assert any(SECRET in h.get("authorization", "") for h in srv.requests)


# -- rerankers: fallback to vector scores -------------------------------------------------------


def _check_rerank_fallback(index: Treehop, reranker: Any, logs: pytest.LogCaptureFixture) -> None:
    index.aio.reranker = reranker
    try:
        t0 = time.monotonic()
        res = index.find("kubernetes rollout", mode="thinking", limit=3)
        elapsed = time.monotonic() - t0
    finally:
        index.aio.reranker = None
    assert res.resources, "the vector-score fallback must still answer"
    hit = res.resources[0]
    assert hit.rerank_fallback is True
    assert hit.rerank_fallback_reason
    assert elapsed < DEADLINE + SLACK, f"find() took {elapsed:.2f}s"
    assert_clean(
        res.model_dump_json(),
        json.dumps(hit.provenance(), default=str),
        logs.text,
        repr(reranker),
        secrets=(SECRET, VOLC_AK, VOLC_SK),
    )


@pytest.mark.parametrize("mode", MODES)
def test_http_reranker_fault_falls_back_without_leaking(
    mode: str, index: Treehop, logs: pytest.LogCaptureFixture
) -> None:
    with FaultServer(mode, cohere_bodies()) as srv:
        rr = HTTPReranker(
            srv.base_url, api_key=SECRET, timeout_s=0.2, deadline_s=DEADLINE, retry=FAST
        )
        _check_rerank_fallback(index, rr, logs)
        t0 = time.monotonic()
        with pytest.raises(TreehopError) as info:
            rr.rerank("q", ["a", "b"])
        assert time.monotonic() - t0 < DEADLINE + SLACK
        rr.close()
    assert_clean(*exception_texts(info.value))


@pytest.mark.parametrize("mode", MODES)
def test_vikingdb_reranker_fault_falls_back_without_leaking(
    mode: str, index: Treehop, logs: pytest.LogCaptureFixture
) -> None:
    with FaultServer(mode, viking_bodies()) as srv:
        rr = VikingDBReranker(
            ak=VOLC_AK,
            sk=VOLC_SK,
            host=srv.address,
            scheme="http",
            timeout_s=0.2,
            deadline_s=SENT_DEADLINE,
            retry=FAST,
        )
        _check_rerank_fallback(index, rr, logs)
        t0 = time.monotonic()
        with pytest.raises(TreehopError) as info:
            rr.rerank("q", ["a", "b"])
        assert time.monotonic() - t0 < SENT_DEADLINE + SLACK
        rr.close()
    assert_clean(*exception_texts(info.value), secrets=(VOLC_AK, VOLC_SK))
    # The signed Authorization header carried the access key: the echo had something to leak.
    assert any(VOLC_AK in h.get("authorization", "") for h in srv.requests)


def _chat(srv: FaultServer) -> OpenAICompatibleLLM:
    return OpenAICompatibleLLM(
        "fault-chat",
        base_url=srv.base_url + "/v1",
        api_key=SECRET,
        timeout_s=0.2,
        deadline_s=DEADLINE,
        max_retries=1,
        backoff_s=0.01,
    )


@pytest.mark.parametrize("mode", MODES)
def test_llm_reranker_fault_falls_back_without_leaking(
    mode: str, index: Treehop, logs: pytest.LogCaptureFixture
) -> None:
    bodies = chat_bodies('{"scores": [7]}' + SECRET, '{"scores": [NaN, NaN, NaN, NaN]}')
    with FaultServer(mode, bodies) as srv:
        llm = _chat(srv)
        _check_rerank_fallback(index, LLMReranker(llm, batch_size=50), logs)
        llm.close()


# -- the chat model as planner and as summariser -----------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_planner_fault_falls_back_without_leaking(
    mode: str, logs: pytest.LogCaptureFixture
) -> None:
    bodies = chat_bodies(
        '{"queries": [{"query": "' + SECRET + '", "context_type": "nope"}]}', "[NaN]"
    )
    with FaultServer(mode, bodies) as srv:
        llm = _chat(srv)
        th = Treehop(embedder=BagOfWordsEmbedder(), tagger=None, llm=llm, intent_timeout_s=30)
        try:
            th.add_resource("Vacuum reclaims storage.", target_uri="viking://resources/pg")
            sid = th.create_session()
            th.add_message(sid, "user", "tell me about postgres")
            t0 = time.monotonic()
            res = th.search("how does vacuum work", session_id=sid)
            elapsed = time.monotonic() - t0
        finally:
            th.close()
    plan = res.query_plan
    assert plan is not None and plan.fallback is True and plan.fallback_reason
    assert elapsed < DEADLINE + SLACK, f"search() took {elapsed:.2f}s"
    assert_clean(res.model_dump_json(), logs.text)


@pytest.mark.parametrize("mode", MODES)
def test_session_summary_fault_falls_back_without_leaking(
    mode: str, logs: pytest.LogCaptureFixture
) -> None:
    with FaultServer(mode, chat_bodies("", "")) as srv:
        llm = _chat(srv)
        store = SessionStore(llm=llm, max_messages=2, keep_recent=1, summary_timeout_s=30)
        sid = store.create_session("alice")
        t0 = time.monotonic()
        for i in range(3):
            asyncio.run(store.aadd_message(sid, "user", f"Message number {i}. More text."))
        elapsed = time.monotonic() - t0
        session = store.get(sid)
        llm.close()
    if mode in ("wrong_len", "nan"):
        # A well-formed answer with an empty text: "empty summary" is the documented fallback.
        assert session.summary_method == "extractive"
    else:
        assert session.summary_method == "extractive"
        assert session.summary_fallback_reason
    assert elapsed < 2 * (DEADLINE + SLACK)
    assert_clean(session.model_dump_json(), logs.text)


# -- the VikingDB knowledge source (SDK-based) --------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_vikingdb_knowledge_fault_is_typed_within_the_deadline(
    mode: str, logs: pytest.LogCaptureFixture
) -> None:
    from treehop.vikingdb_knowledge import VikingDBKnowledgeSource

    bodies = {
        "wrong_len": '{"code": 0, "data": {"result_list": [1]}}',
        "nan": '{"code": 0, "data": {"result_list": [], "count": NaN}}',
    }
    with FaultServer(mode, bodies) as srv:
        source = VikingDBKnowledgeSource(
            "kb",
            host=srv.address,
            scheme="http",
            ak=VOLC_AK,
            sk=VOLC_SK,
            timeout_s=1,
            retry=FAST,
            deadline_s=DEADLINE,
        )
        t0 = time.monotonic()
        try:
            result = source.find("kubernetes rollout")
        except TreehopError as exc:
            texts = exception_texts(exc)
        else:
            # A well-formed (if odd) answer is an empty result, never a crash.
            assert mode in ("nan", "trickle") and result.total == 0
            texts = [result.model_dump_json()]
        elapsed = time.monotonic() - t0
        source.close()
    assert elapsed < DEADLINE + SLACK, f"find() took {elapsed:.2f}s"
    assert_clean(*texts, logs.text, repr(source), secrets=(VOLC_AK, VOLC_SK))


@pytest.mark.parametrize("mode", ["trickle", "trickle_headers", "hang"])
def test_a_callers_own_sync_client_also_honours_the_deadline(mode: str) -> None:
    import httpx

    with FaultServer(mode) as srv, httpx.Client(timeout=0.2) as own:
        emb = OpenAICompatibleEmbedder(
            "m",
            base_url=srv.base_url,
            api_key=SECRET,
            dimension=2,
            deadline_s=DEADLINE,
            retry=FAST,
            http_client=own,
        )
        t0 = time.monotonic()
        with pytest.raises(EmbeddingError, match=r"deadline|timed out"):
            emb.embed(["hello"])
        assert time.monotonic() - t0 < DEADLINE + SLACK


@pytest.mark.parametrize("mode", MODES)
def test_vikingdb_store_fault_is_typed_within_the_deadline(
    mode: str, logs: pytest.LogCaptureFixture
) -> None:
    from treehop.stores.vikingdb import VikingDBStore

    bodies = {
        "wrong_len": '{"code": "Success", "result": {"fetch": [1]}}',
        "nan": '{"code": "Success", "result": {"fetch": [{"fields": {"x": NaN}}]}}',
    }
    with FaultServer(mode, bodies) as srv:
        t0 = time.monotonic()
        with pytest.raises(TreehopError) as info:
            store = VikingDBStore(
                "c",
                dimension=4,
                host=srv.address,
                scheme="http",
                ak=VOLC_AK,
                sk=VOLC_SK,
                timeout_s=1,
                retry=FAST,
                deadline_s=DEADLINE,
            )
            store.get(["viking://resources/x"])
        elapsed = time.monotonic() - t0
    # Two bounded calls at most (connect, then one read), plus the SDK's first import.
    assert elapsed < 2 * DEADLINE + 2 * SLACK, f"took {elapsed:.2f}s"
    assert_clean(*exception_texts(info.value), logs.text, secrets=(VOLC_AK, VOLC_SK))


ONCE = RetryPolicy(max_retries=0)


def test_vikingdb_store_ping_has_the_per_read_timeout_without_a_deadline() -> None:
    """``deadline_s=None`` leaves each read to ``timeout_s``, the constructor's ping included:
    the SDK pinged with no timeout, so a silent server held the constructor for good."""
    from treehop.stores.vikingdb import VikingDBStore, VikingDBUnavailableError

    caught: list[BaseException] = []

    def connect(address: str) -> None:
        try:
            VikingDBStore(
                "c", dimension=4, host=address, scheme="http", ak=VOLC_AK, sk=VOLC_SK,
                timeout_s=1, retry=ONCE, deadline_s=None,
            )  # fmt: skip
        except BaseException as exc:  # (checked below, in the test's thread)
            caught.append(exc)

    with FaultServer("hang") as srv:
        worker = threading.Thread(target=connect, args=(srv.address,), daemon=True)
        t0 = time.monotonic()
        worker.start()
        worker.join(1 + SLACK)
        elapsed = time.monotonic() - t0
        hung = worker.is_alive()
    worker.join()  # (the server has stopped: a hung ping ends now)
    assert not hung, f"the constructor still waited on the ping after {elapsed:.1f}s"
    assert len(caught) == 1 and isinstance(caught[0], VikingDBUnavailableError), caught
    assert_clean(*exception_texts(caught[0]), secrets=(VOLC_AK, VOLC_SK))


@pytest.mark.parametrize("mode", ["hang", "endless"])
def test_vikingdb_store_ping_abandoned_at_the_deadline_ends(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The thread the deadline abandons ends on its own while the server still misbehaves:
    the ping reads with ``timeout_s`` (``hang``) and under the size cap (``endless``)."""
    import treehop.stores.vikingdb as vikingdb_store

    monkeypatch.setattr(vikingdb_store, "MAX_RESPONSE_BYTES", 1024 * 1024)
    before = set(threading.enumerate())
    with FaultServer(mode) as srv:
        with pytest.raises(TreehopError, match=r"deadline|larger than 1048576"):
            vikingdb_store.VikingDBStore(
                "c", dimension=4, host=srv.address, scheme="http", ak=VOLC_AK, sk=VOLC_SK,
                timeout_s=1, retry=ONCE, deadline_s=DEADLINE,
            )  # fmt: skip
        callers = [t for t in threading.enumerate() if t not in before]
        callers = [t for t in callers if t.name == "treehop-deadline-call"]
        assert callers or mode == "endless"  # (the cap may end that one before the deadline)
        for t in callers:
            t.join(1 + SLACK)
        left = [t for t in callers if t.is_alive()]
    assert not left, "the abandoned ping still reads from the server"


@pytest.mark.parametrize("mode", ["huge", "endless"])
@pytest.mark.parametrize("sync", [True, False])
def test_an_oversized_answer_is_refused_not_buffered(mode: str, sync: bool) -> None:
    """The size cap, not the deadline, ends these calls (the deadline here is generous)."""
    with FaultServer(mode) as srv:
        emb = OpenAICompatibleEmbedder(
            "m", base_url=srv.base_url, api_key=SECRET, dimension=2, deadline_s=30, retry=FAST
        )
        t0 = time.monotonic()
        with pytest.raises(EmbeddingError, match="larger than 1048576 bytes"):
            if sync:
                emb.embed(["hello"])
            else:
                asyncio.run(emb.aembed(["hello"]))
        assert time.monotonic() - t0 < 5
        emb.close()
