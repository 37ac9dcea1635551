"""OpenAICompatibleEmbedder against a fake OpenAI embeddings server over real HTTP on 127.0.0.1."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import httpx
import numpy as np
import pytest
from pydantic import SecretStr

from treehop._http import RetryPolicy
from treehop.embedders import Embedder, OpenAICompatibleEmbedder
from treehop.errors import EmbeddingError

from fake_servers.openai_embeddings import FakeOpenAIEmbeddingsServer, Reply, expected_unit

KEY = "sk-test-very-secret-0123456789"
DIM = 16
FAST_RETRY = RetryPolicy(max_retries=2, backoff_s=0.01, max_backoff_s=1.0)
TEXTS = [
    "the wing stalls at high angle of attack",
    "boundary layer transition",
    "heat transfer in hypersonic flow",
    "a cat sleeps on the mat",
    "shock waves",
    "pressure distribution on a cone",
    "turbulent skin friction",
]


@pytest.fixture
def server() -> Iterator[FakeOpenAIEmbeddingsServer]:
    with FakeOpenAIEmbeddingsServer(dim=DIM, api_key=KEY) as srv:
        yield srv


@pytest.fixture(autouse=True)
def _no_env_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TREEHOP_EMBEDDING_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def make(server: FakeOpenAIEmbeddingsServer, **kw: object) -> OpenAICompatibleEmbedder:
    opts: dict[str, object] = {"base_url": server.base_url, "api_key": KEY, "retry": FAST_RETRY}
    opts.update(kw)
    return OpenAICompatibleEmbedder("fake-embed", **opts)  # type: ignore[arg-type]


def expected(texts: list[str], dim: int = DIM) -> np.ndarray:
    return np.stack([expected_unit(t, dim) for t in texts])


# -- the normal path -------------------------------------------------------------------------


def test_sync_embed_sends_the_documented_request_and_normalises(
    server: FakeOpenAIEmbeddingsServer,
) -> None:
    with make(server) as emb:
        assert isinstance(emb, Embedder)
        vecs = emb.embed(TEXTS)
    assert vecs.shape == (len(TEXTS), DIM) and vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(vecs, expected(TEXTS), atol=1e-5)
    (req,) = server.requests
    assert req.path == "/v1/embeddings"
    assert req.headers["authorization"] == f"Bearer {KEY}"
    assert req.body == {"model": "fake-embed", "input": TEXTS}


def test_batching_splits_requests_and_keeps_order(server: FakeOpenAIEmbeddingsServer) -> None:
    with make(server, max_batch=3) as emb:
        vecs = emb.embed(TEXTS)
    assert [len(b) for b in server.inputs()] == [3, 3, 1]
    assert [t for batch in server.inputs() for t in batch] == TEXTS
    np.testing.assert_allclose(vecs, expected(TEXTS), atol=1e-5)


def test_rows_are_ordered_by_their_index_field(server: FakeOpenAIEmbeddingsServer) -> None:
    server.enqueue(Reply.reversed_rows())
    with make(server) as emb:
        vecs = emb.embed(TEXTS)
    np.testing.assert_allclose(vecs, expected(TEXTS), atol=1e-5)


def test_dimension_is_learnt_lazily_and_probed_on_demand(
    server: FakeOpenAIEmbeddingsServer,
) -> None:
    with make(server) as emb:
        assert isinstance(emb, Embedder)  # reads .dimension: must not send anything
        assert emb.dimension == 0
        assert server.requests == []
        assert emb.discover_dimension() == DIM
        assert len(server.requests) == 1
        assert emb.dimension == emb.discover_dimension() == DIM
        emb.embed(["x"])
    assert len(server.requests) == 2
    assert server.inputs()[0] == ["dimension probe"]


def test_send_dimensions_asks_the_server_for_shorter_vectors(
    server: FakeOpenAIEmbeddingsServer,
) -> None:
    with make(server, dimension=8, send_dimensions=True) as emb:
        vecs = emb.embed(TEXTS[:2])
        assert "d8" in emb.name
    assert server.requests[0].body["dimensions"] == 8
    np.testing.assert_allclose(vecs, expected(TEXTS[:2], 8), atol=1e-5)


def test_base64_encoding_is_decoded(server: FakeOpenAIEmbeddingsServer) -> None:
    with make(server, extra_body={"encoding_format": "base64"}) as emb:
        vecs = emb.embed(TEXTS)
    assert isinstance(server.requests[0].body, dict)
    assert server.requests[0].body["encoding_format"] == "base64"
    np.testing.assert_allclose(vecs, expected(TEXTS), atol=1e-5)


def test_blank_texts_are_not_sent_and_get_zero_vectors(
    server: FakeOpenAIEmbeddingsServer,
) -> None:
    with make(server, dimension=DIM) as emb:
        vecs = emb.embed(["alpha", "", "  ", "beta"])
        assert server.inputs() == [["alpha", "beta"]]
        np.testing.assert_array_equal(vecs[1:3], 0.0)
        np.testing.assert_allclose(vecs[[0, 3]], expected(["alpha", "beta"]), atol=1e-5)
        assert emb.embed([]).shape == (0, DIM)


def test_long_texts_are_truncated_before_sending(server: FakeOpenAIEmbeddingsServer) -> None:
    with make(server, max_input_chars=10) as emb:
        emb.embed(["0123456789abcdef", "short"])
    assert server.inputs() == [["0123456789", "short"]]


def test_embed_query_is_one_row(server: FakeOpenAIEmbeddingsServer) -> None:
    with make(server) as emb:
        q = emb.embed_query("shock waves")
    assert q.shape == (DIM,)
    np.testing.assert_allclose(q, expected_unit("shock waves", DIM), atol=1e-5)


# -- retries, errors, timeouts --------------------------------------------------------------


def test_503_twice_then_ok_is_retried(server: FakeOpenAIEmbeddingsServer) -> None:
    server.enqueue(Reply.error(503), Reply.error(503))
    with make(server) as emb:
        vecs = emb.embed(TEXTS[:2])
    assert len(server.requests) == 3
    np.testing.assert_allclose(vecs, expected(TEXTS[:2]), atol=1e-5)


def test_retries_are_bounded(server: FakeOpenAIEmbeddingsServer) -> None:
    server.enqueue(*[Reply.error(503)] * 5)
    with make(server) as emb, pytest.raises(EmbeddingError, match=r"HTTP 503.*3 attempts"):
        emb.embed(["x"])
    assert len(server.requests) == 3


def test_429_retry_after_is_honoured(server: FakeOpenAIEmbeddingsServer) -> None:
    server.enqueue(Reply.error(429, "slow down", Retry_After="0.3"))
    with make(server) as emb:
        t0 = time.perf_counter()
        emb.embed(["x"])
        elapsed = time.perf_counter() - t0
    assert len(server.requests) == 2
    assert elapsed >= 0.28


def test_400_is_not_retried(server: FakeOpenAIEmbeddingsServer) -> None:
    server.enqueue(Reply.error(400, "model not found"))
    with make(server) as emb, pytest.raises(EmbeddingError, match=r"HTTP 400.*model not found"):
        emb.embed(["x"])
    assert len(server.requests) == 1


def test_wrong_key_is_a_clear_error_without_the_key(server: FakeOpenAIEmbeddingsServer) -> None:
    wrong = "sk-wrong-key-abcdef"
    with make(server, api_key=wrong) as emb, pytest.raises(EmbeddingError) as info:
        emb.embed(["x"])
    assert "HTTP 401" in str(info.value) and "API key" in str(info.value)
    assert wrong not in str(info.value)
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    ("reply", "pattern"),
    [
        (Reply.malformed(), "non-JSON"),
        (Reply.drop_last_row(), r"6 rows for 7 inputs"),
        (Reply(body={"object": "list"}), "no 'data' list"),
        (Reply(body={"error": "boom"}), "no 'data' list"),
        (
            Reply(transform=lambda a: {**a, "data": [{**r, "index": 0} for r in a["data"]]}),
            "not a permutation",
        ),
        (
            Reply(
                transform=lambda a: {**a, "data": [{**r, "embedding": [1.0]} for r in a["data"]]}
            ),
            "1-dimensional vectors, expected 16",
        ),
        (
            Reply(
                transform=lambda a: {
                    **a,
                    "data": [
                        {**r, "embedding": r["embedding"][: 4 + r["index"]]} for r in a["data"]
                    ],
                }
            ),
            "different widths",
        ),
        (
            Reply(transform=lambda a: {**a, "data": [{**r, "embedding": "@@"} for r in a["data"]]}),
            "base64",
        ),
        (
            Reply(transform=lambda a: {**a, "data": [{**r, "embedding": None} for r in a["data"]]}),
            "expected a list",
        ),
    ],
    ids=["malformed", "rows", "no-data", "error-body", "dup-index", "dim", "ragged", "b64", "null"],
)
def test_bad_answers_raise_embedding_error(
    server: FakeOpenAIEmbeddingsServer, reply: Reply, pattern: str
) -> None:
    server.enqueue(reply)
    with make(server, dimension=DIM) as emb, pytest.raises(EmbeddingError, match=pattern):
        emb.embed(TEXTS)


def test_nan_values_are_rejected(server: FakeOpenAIEmbeddingsServer) -> None:
    server.enqueue(
        Reply(body={"data": [{"index": 0, "embedding": [float("nan")] * DIM}]}),
    )
    # json.dumps writes NaN, which Python's json (and httpx) read back as nan.
    with make(server) as emb, pytest.raises(EmbeddingError, match="NaN"):
        emb.embed(["x"])


def test_slow_server_times_out(server: FakeOpenAIEmbeddingsServer) -> None:
    server.enqueue(Reply.slow(2.0))
    retry = RetryPolicy(max_retries=0)
    with make(server, timeout_s=0.2, retry=retry) as emb:
        t0 = time.perf_counter()
        with pytest.raises(EmbeddingError, match="timed out"):
            emb.embed(["x"])
        assert time.perf_counter() - t0 < 1.5


def test_timeout_is_retried_then_succeeds(server: FakeOpenAIEmbeddingsServer) -> None:
    server.enqueue(Reply.slow(1.0))
    with make(server, timeout_s=0.2) as emb:
        vecs = emb.embed(["x"])
    assert len(server.requests) == 2
    np.testing.assert_allclose(vecs[0], expected_unit("x", DIM), atol=1e-5)


def test_unreachable_server_is_an_embedding_error() -> None:
    with FakeOpenAIEmbeddingsServer() as srv:
        url = srv.base_url  # the port is free again once the server stops
    emb = OpenAICompatibleEmbedder("m", base_url=url, retry=RetryPolicy(max_retries=1, backoff_s=0))
    with emb, pytest.raises(EmbeddingError, match="failed"):
        emb.embed(["x"])


# -- the API key --------------------------------------------------------------------------------


def test_key_never_appears_in_repr_or_str(server: FakeOpenAIEmbeddingsServer) -> None:
    for key in (KEY, SecretStr(KEY)):
        emb = make(server, api_key=key)
        assert KEY not in repr(emb) and KEY not in str(emb)
        assert "api_key=set" in repr(emb)
        emb.embed(["x"])  # the SecretStr form authenticates too
        emb.close()
    assert [r.headers["authorization"] for r in server.requests] == [f"Bearer {KEY}"] * 2


def test_key_env_fallback_order(
    server: FakeOpenAIEmbeddingsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-openai-env")
    monkeypatch.setenv("TREEHOP_EMBEDDING_API_KEY", KEY)
    with make(server, api_key=None) as emb:
        emb.embed(["x"])
        assert KEY not in repr(emb)
    monkeypatch.delenv("TREEHOP_EMBEDDING_API_KEY")
    with make(server, api_key=None) as emb, pytest.raises(EmbeddingError, match="401"):
        emb.embed(["x"])
    assert [r.headers["authorization"] for r in server.requests] == [
        f"Bearer {KEY}",
        "Bearer sk-from-openai-env",
    ]


def test_no_key_sends_no_authorization_header() -> None:
    with FakeOpenAIEmbeddingsServer(dim=DIM) as srv:
        emb = OpenAICompatibleEmbedder("nomic-embed-text", base_url=srv.base_url + "/")
        with emb:
            emb.embed(["x"])
        assert "authorization" not in srv.requests[0].headers
        assert "api_key=none" in repr(emb)
        assert srv.requests[0].path == "/v1/embeddings"


# -- bad input and configuration -------------------------------------------------------------


def test_bad_input_is_rejected_before_any_request(server: FakeOpenAIEmbeddingsServer) -> None:
    with make(server) as emb:
        with pytest.raises(EmbeddingError, match="single string"):
            emb.embed("not a list")
        with pytest.raises(EmbeddingError, match=r"texts\[1\] is int"):
            emb.embed(["a", 3])  # type: ignore[list-item]
    assert server.requests == []


@pytest.mark.parametrize(
    "kw",
    [
        {"max_batch": 0},
        {"max_batch": 5000},
        {"timeout_s": 0},
        {"dimension": 0},
        {"send_dimensions": True},
        {"base_url": "ftp://x"},
        {"max_concurrency": 0},
    ],
)
def test_bad_configuration_is_rejected(kw: dict[str, object]) -> None:
    with pytest.raises(EmbeddingError):
        OpenAICompatibleEmbedder("m", **kw)  # type: ignore[arg-type]
    with pytest.raises(EmbeddingError, match="model"):
        OpenAICompatibleEmbedder("  ")


def test_close_keeps_a_caller_owned_client(server: FakeOpenAIEmbeddingsServer) -> None:
    own = httpx.Client(timeout=5)
    with make(server, http_client=own) as emb:
        emb.embed(["x"])
    assert not own.is_closed
    own.close()
    with make(server) as emb:
        emb.embed(["x"])
        created = emb._client
        assert created is not None
    assert created.is_closed


# -- async ----------------------------------------------------------------------------------


async def test_async_batches_run_concurrently_on_the_async_client(
    server: FakeOpenAIEmbeddingsServer,
) -> None:
    # Each answer waits until all 4 requests are in flight (sequential requests would each
    # wait the 5 s out). It was "4 requests of 0.4 s within 1.2 s", which a loaded machine
    # failed; the server's count of requests in flight at once is the same claim, timeless.
    server.default = Reply(delay_s=5.0, together=4)
    async with make(server, max_batch=2, max_concurrency=4) as emb:
        vecs = await emb.aembed(TEXTS)  # 4 requests
        assert emb._client is None  # the sync client was never created: no thread hop
    assert len(server.requests) == 4
    assert server.max_in_flight == 4
    np.testing.assert_allclose(vecs, expected(TEXTS), atol=1e-5)


async def test_async_concurrency_is_bounded(server: FakeOpenAIEmbeddingsServer) -> None:
    server.default = Reply.slow(0.3)
    async with make(server, max_batch=1, max_concurrency=1) as emb:
        t0 = time.perf_counter()
        await emb.aembed(TEXTS[:3])
        assert time.perf_counter() - t0 >= 0.85


async def test_async_retry_order_and_query(server: FakeOpenAIEmbeddingsServer) -> None:
    server.enqueue(Reply.error(503), Reply.reversed_rows())
    async with make(server) as emb:
        vecs = await emb.aembed(TEXTS)
        q = await emb.aembed_query("shock waves")
        assert await emb.adimension() == DIM
    np.testing.assert_allclose(vecs, expected(TEXTS), atol=1e-5)
    np.testing.assert_allclose(q, expected_unit("shock waves", DIM), atol=1e-5)
    assert len(server.requests) == 3


async def test_async_errors_are_embedding_errors(server: FakeOpenAIEmbeddingsServer) -> None:
    server.enqueue(Reply(), Reply.error(400, "bad batch"))
    async with make(server, max_batch=3, max_concurrency=1) as emb:
        with pytest.raises(EmbeddingError, match="bad batch"):
            await emb.aembed(TEXTS)
        server.enqueue(Reply.slow(2.0))
    async with make(server, timeout_s=0.2, retry=RetryPolicy(max_retries=0)) as emb:
        server.enqueue(Reply.slow(2.0))
        with pytest.raises(EmbeddingError, match="timed out"):
            await emb.aembed(["x"])


async def test_async_dimension_discovery_without_blocking(
    server: FakeOpenAIEmbeddingsServer,
) -> None:
    async with make(server) as emb:
        vecs = await emb.aembed(["", " "])  # only blanks: an async probe learns the width
        assert vecs.shape == (2, DIM)
        assert emb._client is None
    np.testing.assert_array_equal(vecs, 0.0)
    assert server.inputs() == [["dimension probe"]]


def test_one_embedder_across_two_event_loops(server: FakeOpenAIEmbeddingsServer) -> None:
    emb = make(server)
    clients: list[httpx.AsyncClient] = []

    async def run() -> np.ndarray:
        out = await emb.aembed(["x"])
        assert emb._aclient is not None
        clients.append(emb._aclient)
        return out

    a = asyncio.run(run())
    # asyncio.run closed its loop: the client bound to it was closed before the loop went away.
    assert clients[0].is_closed and emb._aclient is None
    b = asyncio.run(run())  # a new loop gets a new AsyncClient, not a dead pool
    np.testing.assert_array_equal(a, b)
    assert clients[1] is not clients[0] and clients[1].is_closed
    assert len(server.requests) == 2


async def test_caller_owned_async_client_is_used_and_not_closed(
    server: FakeOpenAIEmbeddingsServer,
) -> None:
    async with httpx.AsyncClient(timeout=5) as own:
        async with make(server, async_http_client=own) as emb:
            await emb.aembed(["x"])
            assert emb._aclient is None
        assert not own.is_closed
    assert len(server.requests) == 1
    async with make(server) as emb:
        await emb.aembed(["x"])
        created = emb._aclient
        assert created is not None and not created.is_closed
    assert created.is_closed
