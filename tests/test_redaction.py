"""The redaction rule itself: registered secrets, partial echoes, encodings, header shapes, logs."""

from __future__ import annotations

import json
import logging
from urllib.parse import quote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop.embedders.openai_compatible import OpenAICompatibleEmbedder
from treehop.llm.openai_compatible import OpenAICompatibleLLM
from treehop.redaction import MASK, RedactingFilter, redact, register_secret
from treehop.rerankers.http_rerank import HTTPReranker

KEY = "sk-redact-UNITtest-0a1b2c3d4e5f6a7b8c9d"


@pytest.fixture(autouse=True)
def _registered() -> None:
    register_secret(KEY)


def test_a_registered_secret_is_masked_in_every_encoding() -> None:
    for text in (
        f"Incorrect API key provided: {KEY}.",
        f"url?api_key={quote(KEY, safe='')}&x=1",
        json.dumps({"echo": KEY + '"quoted'}),
        f"<p>{KEY}</p>",
    ):
        out = redact(text)
        assert KEY not in out and quote(KEY, safe="") not in out
        assert MASK in out


def test_a_partial_echo_of_a_secret_is_masked_whole() -> None:
    out = redact(f"Incorrect API key provided: {KEY[:14]}****************{KEY[-4:]}")
    assert KEY[:14] not in out
    out = redact(f"key starts {KEY[3:20]} and more")
    assert KEY[3:20] not in out


@pytest.mark.parametrize(
    "text",
    [
        "Authorization: Bearer unregistered-token-value",
        'headers={"authorization": "Bearer another-unknown-value"}',
        "x-api-key: plain-unknown-api-key",
        "api_key=unknownvalue123&model=m",
        "HMAC-SHA256 Credential=AKLTunknownAccessKey/20260101/cn-beijing/air/request",
        "https://user:hunter2secret@example.com/v1",
    ],
)
def test_credentials_in_known_shapes_are_masked_even_when_unregistered(text: str) -> None:
    out = redact(text)
    for secret in (
        "unregistered-token-value",
        "another-unknown-value",
        "plain-unknown-api-key",
        "unknownvalue123",
        "AKLTunknownAccessKey",
        "hunter2secret",
    ):
        assert secret not in out


def test_ordinary_text_is_left_alone() -> None:
    text = "HTTP 503 from http://127.0.0.1:8080/v1/embeddings: upstream overloaded (request 42)"
    assert redact(text) == text


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60), st.text(max_size=60))
def test_a_registered_secret_never_survives_in_any_context(prefix: str, suffix: str) -> None:
    assert KEY not in redact(prefix + KEY + suffix)


def test_clients_register_their_keys_and_hide_them_from_repr() -> None:
    keys = ["sk-emb-" + "1" * 24, "sk-llm-" + "2" * 24, "sk-rr-" + "3" * 24]
    objs = [
        OpenAICompatibleEmbedder("m", base_url="http://127.0.0.1:9", api_key=keys[0]),
        OpenAICompatibleLLM("m", base_url="http://127.0.0.1:9", api_key=keys[1]),
        HTTPReranker("http://127.0.0.1:9", api_key=keys[2]),
    ]
    for key, obj in zip(keys, objs, strict=True):
        assert key not in repr(obj) and key not in str(obj)
        assert key not in redact(f"echo {key} echo")


def test_the_log_filter_redacts_records(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("httpcore.http11")
    with caplog.at_level(logging.DEBUG, logger="httpcore.http11"):
        logger.debug("receive_response_headers.complete return_value=%r", [(b"X-Echo", KEY)])
    assert KEY not in caplog.text
    assert "X-Echo" in caplog.text
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "token %s", (KEY,), None)
    assert RedactingFilter().filter(record) is True
    assert KEY not in record.getMessage()
