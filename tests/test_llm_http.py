"""The OpenAI-compatible chat client against a fake server over real HTTP on 127.0.0.1."""

from __future__ import annotations

import asyncio
import gc
import time
import warnings
from collections.abc import Iterator

import pytest
from pydantic import SecretStr

from treehop.errors import LLMError
from treehop.llm import (
    LLM,
    ChatMessage,
    LLMConfig,
    ModelRegistry,
    ModelsConfig,
    OpenAICompatibleLLM,
)

from fake_servers.openai_chat import FakeOpenAIChatServer, Reply

MSGS = [ChatMessage(role="system", content="be brief"), ChatMessage(role="user", content="hi")]


@pytest.fixture
def server() -> Iterator[FakeOpenAIChatServer]:
    with FakeOpenAIChatServer() as srv:
        yield srv


@pytest.fixture(autouse=True)
def _no_env_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "TREEHOP_LLM_API_KEY",
        "OPENAI_API_KEY",
        "TREEHOP_LLM_BASE_URL",
        "OPENAI_BASE_URL",
    ):
        monkeypatch.delenv(name, raising=False)


def make(server: FakeOpenAIChatServer, **kw: object) -> OpenAICompatibleLLM:
    opts: dict[str, object] = {"base_url": server.base_url, "backoff_s": 0.01, "timeout_s": 5.0}
    opts.update(kw)
    return OpenAICompatibleLLM("fake-model", **opts)  # type: ignore[arg-type]


def test_sync_request_shape_and_answer(server: FakeOpenAIChatServer) -> None:
    server.enqueue(Reply.chat("hello there"))
    llm = make(server, api_key="sk-test-123", temperature=0.3, max_tokens=77)
    assert isinstance(llm, LLM)
    assert llm.complete(MSGS) == "hello there"
    (req,) = server.requests
    assert req.path == "/v1/chat/completions"
    assert req.headers["authorization"] == "Bearer sk-test-123"
    assert req.body["model"] == "fake-model"
    assert req.body["messages"] == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "hi"},
    ]
    assert req.body["temperature"] == 0.3
    assert req.body["max_tokens"] == 77
    assert "response_format" not in req.body
    llm.close()


def test_json_mode_sends_response_format(server: FakeOpenAIChatServer) -> None:
    server.enqueue(Reply.chat('{"a": 1}'), Reply.chat('{"a": 2}'))
    llm = make(server)
    assert llm.complete(MSGS, json_mode=True) == '{"a": 1}'
    assert server.requests[0].body["response_format"] == {"type": "json_object"}
    plain = make(server, json_mode_supported=False)
    plain.complete(MSGS, json_mode=True)
    assert "response_format" not in server.requests[1].body
    llm.close()
    plain.close()


async def test_async_path_uses_async_client(server: FakeOpenAIChatServer) -> None:
    server.enqueue(Reply.chat("async answer"))
    llm = make(server)

    def boom(*a: object, **k: object) -> str:
        raise AssertionError("the async path must not call the sync client")

    llm.complete = boom  # type: ignore[method-assign]
    assert await llm.acomplete(MSGS, json_mode=True) == "async answer"
    assert server.requests[0].body["response_format"] == {"type": "json_object"}
    await llm.aclose()
    await llm.aclose()  # idempotent


async def test_async_calls_run_concurrently(server: FakeOpenAIChatServer) -> None:
    # Each answer waits until all 4 requests are in flight (sequential calls would each wait
    # the 5 s out). It was "4 answers of 0.4 s within 1.2 s", which a loaded machine failed;
    # the server's count of requests in flight at once is the same claim, timeless.
    server.default = Reply.chat("slow", delay_s=5.0)
    server.default.together = 4
    llm = make(server)
    answers = await asyncio.gather(*(llm.acomplete(MSGS) for _ in range(4)))
    assert answers == ["slow"] * 4
    assert server.max_in_flight == 4
    await llm.aclose()


def test_fresh_event_loops_get_fresh_clients(server: FakeOpenAIChatServer) -> None:
    llm = make(server)

    async def call_then_close() -> str:
        try:
            return await llm.acomplete(MSGS)
        finally:
            await llm.aclose()

    assert asyncio.run(llm.acomplete(MSGS)) == "ok"  # not closed: its pool dies with the loop
    # A second loop must not reuse the first loop's (now dead) connection pool.
    assert asyncio.run(call_then_close()) == "ok"
    with warnings.catch_warnings():
        # The first loop's pool could not be closed after its loop ended (documented).
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()
    assert asyncio.run(call_then_close()) == "ok"  # usable again after aclose
    assert len(server.requests) == 3


@pytest.mark.parametrize("status", [503, 429, 500])
def test_retries_transient_status_then_succeeds(server: FakeOpenAIChatServer, status: int) -> None:
    server.enqueue(Reply.error(status, "busy", **{"Retry-After": "0"}), Reply.chat("after retry"))
    llm = make(server, max_retries=2)
    assert llm.complete(MSGS) == "after retry"
    assert len(server.requests) == 2
    llm.close()


async def test_async_retries_then_gives_up_with_llm_error(
    server: FakeOpenAIChatServer,
) -> None:
    server.default = Reply.error(503, "overloaded")
    llm = make(server, max_retries=2)
    with pytest.raises(LLMError, match="503"):
        await llm.acomplete(MSGS)
    assert len(server.requests) == 3  # 1 + max_retries, bounded
    await llm.aclose()


def test_client_error_is_not_retried(server: FakeOpenAIChatServer) -> None:
    server.enqueue(Reply.error(400, "bad request: unknown model"))
    llm = make(server, max_retries=3, api_key="sk-secret-xyz")
    with pytest.raises(LLMError) as info:
        llm.complete(MSGS)
    assert "400" in str(info.value)
    assert "unknown model" in str(info.value)
    assert "sk-secret-xyz" not in str(info.value)
    assert len(server.requests) == 1
    llm.close()


def test_timeout_raises_llm_error_quickly(server: FakeOpenAIChatServer) -> None:
    server.enqueue(Reply.chat("too late", delay_s=2.0))
    llm = make(server, timeout_s=0.3, max_retries=0)
    t0 = time.perf_counter()
    with pytest.raises(LLMError, match="timeout"):
        llm.complete(MSGS)
    assert time.perf_counter() - t0 < 1.5
    llm.close()


async def test_async_timeout_raises_llm_error(server: FakeOpenAIChatServer) -> None:
    server.enqueue(Reply.chat("too late", delay_s=2.0))
    llm = make(server, timeout_s=0.3, max_retries=0)
    t0 = time.perf_counter()
    with pytest.raises(LLMError, match="timeout"):
        await llm.acomplete(MSGS)
    assert time.perf_counter() - t0 < 1.5
    await llm.aclose()


def test_connection_refused_is_llm_error() -> None:
    srv = FakeOpenAIChatServer().start()
    base = srv.base_url
    srv.stop()
    llm = OpenAICompatibleLLM("m", base_url=base, max_retries=1, backoff_s=0.01, timeout_s=2)
    with pytest.raises(LLMError, match="transport error"):
        llm.complete(MSGS)
    llm.close()


@pytest.mark.parametrize(
    ("reply", "match"),
    [
        (Reply(body="<html>gateway</html>"), "not JSON"),
        (Reply(body={"object": "chat.completion", "choices": []}), "no choices"),
        (Reply(body={"error": {"message": "quota"}}), "quota"),
        (Reply.chat(None), "NoneType"),
    ],
)
def test_malformed_answers_are_llm_errors(
    server: FakeOpenAIChatServer, reply: Reply, match: str
) -> None:
    server.enqueue(reply)
    llm = make(server)
    with pytest.raises(LLMError, match=match):
        llm.complete(MSGS)
    llm.close()


def test_content_parts_are_joined(server: FakeOpenAIChatServer) -> None:
    body = Reply.chat("x").body
    body["choices"][0]["message"]["content"] = [
        {"type": "text", "text": "part one, "},
        {"type": "text", "text": "part two"},
    ]
    server.enqueue(Reply(body=body))
    llm = make(server)
    assert llm.complete(MSGS) == "part one, part two"
    llm.close()


def test_api_key_env_fallback_order(
    server: FakeOpenAIChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    def call(llm: OpenAICompatibleLLM) -> None:
        with llm:
            llm.complete(MSGS)

    call(make(server))
    assert "authorization" not in server.requests[-1].headers  # local servers need no key

    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai")
    call(make(server))
    assert server.requests[-1].headers["authorization"] == "Bearer sk-openai"

    monkeypatch.setenv("TREEHOP_LLM_API_KEY", "sk-treehop")
    call(make(server))
    assert server.requests[-1].headers["authorization"] == "Bearer sk-treehop"

    call(make(server, api_key=SecretStr("sk-explicit")))
    assert server.requests[-1].headers["authorization"] == "Bearer sk-explicit"


def test_key_never_in_repr(server: FakeOpenAIChatServer) -> None:
    llm = make(server, api_key="sk-very-secret")
    assert "sk-very-secret" not in repr(llm)
    assert "api_key=set" in repr(llm)
    cfg = LLMConfig(model="m", api_key=SecretStr("sk-very-secret"))
    assert "sk-very-secret" not in repr(cfg)
    assert "sk-very-secret" not in cfg.model_dump_json()
    registry = ModelsConfig(default=cfg).build()
    assert "sk-very-secret" not in repr(registry)


def test_invalid_construction_is_typed_error() -> None:
    with pytest.raises(LLMError):
        OpenAICompatibleLLM("")
    with pytest.raises(LLMError):
        OpenAICompatibleLLM("m", base_url="ftp://example")
    with pytest.raises(LLMError):
        OpenAICompatibleLLM("m", timeout_s=0)
    with pytest.raises(LLMError):
        OpenAICompatibleLLM("m").complete([])


def test_query_planner_falls_back_to_default_model() -> None:
    only_default = ModelsConfig(default=LLMConfig(model="chat-large")).build()
    assert only_default.planner is only_default.default
    assert only_default.planner is not None and only_default.planner.name == "chat-large"

    both = ModelsConfig(
        default=LLMConfig(model="chat-large"), query_planner=LLMConfig(model="planner-small")
    ).build()
    assert both.planner is not None and both.planner.name == "planner-small"
    assert both.summarizer is not None and both.summarizer.name == "chat-large"

    assert ModelRegistry().planner is None


def test_config_builds_a_working_client(server: FakeOpenAIChatServer) -> None:
    server.enqueue(Reply.chat("from config"))
    cfg = LLMConfig(model="cfg-model", base_url=server.base_url, max_tokens=12)
    registry = ModelsConfig(query_planner=cfg).build()
    assert registry.planner is not None
    assert registry.planner.complete(MSGS) == "from config"
    assert server.requests[0].body["model"] == "cfg-model"
    assert server.requests[0].body["max_tokens"] == 12
    registry.close()


def test_base_url_from_the_environment(
    server: FakeOpenAIChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No base_url: TREEHOP_LLM_BASE_URL, then OPENAI_BASE_URL (what the OpenAI SDKs read), so
    # one environment points every OpenAI-compatible client of a program at one server.
    monkeypatch.delenv("TREEHOP_LLM_BASE_URL", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    with OpenAICompatibleLLM("m", api_key="k", max_retries=0) as llm:
        assert llm.base_url == server.base_url
        assert llm.complete(MSGS) == "ok"
    monkeypatch.setenv("TREEHOP_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    assert OpenAICompatibleLLM("m", api_key="k").base_url == "http://127.0.0.1:9/v1"
    assert OpenAICompatibleLLM("m", base_url="https://x.test/v1").base_url == "https://x.test/v1"
    monkeypatch.delenv("TREEHOP_LLM_BASE_URL")
    monkeypatch.delenv("OPENAI_BASE_URL")
    assert OpenAICompatibleLLM("m", api_key="k").base_url == "https://api.openai.com/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", "not a url")
    with pytest.raises(LLMError, match="base_url"):
        OpenAICompatibleLLM("m", api_key="k")
