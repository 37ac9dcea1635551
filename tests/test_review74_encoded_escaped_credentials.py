"""A credential named in escaped JSON that is then URL-encoded is masked (helper review74).

attacks87 masked a credential named in JSON escaped inside a JSON string
(``{\\"password\\": \\"...\\"}``) and one named in a URL-encoded text
(``%22password%22%3A%22...``), but not the two together: a JSON body quoted in a JSON string
and then carried in a URL or a form (``?state=`` / ``next=`` of a redirect, a logged request
line) writes the name ``%5C%22password%5C%22%3A%20%5C%22...``, and the value was shown whole.
"""

from __future__ import annotations

import json
import time
from urllib.parse import quote, quote_plus

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop.redaction import redact

VALUE = "Zq8vK2mN4pR7tX1wLb"


def _escaped(body: dict[str, str], depth: int) -> str:
    text = json.dumps(body)
    for _ in range(depth):
        text = json.dumps(text)
    return text


@pytest.mark.parametrize("name", ["password", "api_key", "client_secret", "access_token"])
@pytest.mark.parametrize("depth", [1, 2])
@pytest.mark.parametrize("encode", [quote, quote_plus, lambda t: quote(quote(t, safe=""))])
def test_escaped_json_then_url_encoded_is_masked(name: str, depth: int, encode) -> None:
    text = "state=" + encode(_escaped({name: VALUE, "user": "me"}, depth))
    out = redact(text)
    assert VALUE not in out, out
    assert VALUE[:6] not in out and VALUE[-6:] not in out, out
    assert "user" in out  # (only the value goes)


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from(["password", "token", "secret", "api_key", "passphrase"]),
    st.text(alphabet="ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnpqrstuvwxyz23456789", min_size=12),
    st.integers(0, 3),
)
def test_property_an_escaped_encoded_credential_is_masked(
    name: str, value: str, depth: int
) -> None:
    out = redact("q=" + quote(_escaped({name: value}, depth), safe=""))
    assert value not in out, out


def test_ordinary_escaped_encoded_text_stays() -> None:
    """Control (passes on the base too)."""
    text = "q=" + quote(_escaped({"user": "me", "max_tokens": "512"}, 1), safe="")
    assert redact(text) == text


def test_a_run_of_encoded_backslashes_after_a_name_stays_linear() -> None:
    """300,000 characters of ``password%5C%5C...`` (no quote after them) take at most 25
    times what a plain text of the same length with a ``%`` takes, plus 0.5 s."""
    n = 300_000
    unit = "password" + "%5C" * 40
    text = (unit * (n // len(unit) + 1))[:n]
    plain = "%" + ("the quick brown fox jumps over the lazy dog " * (n // 44 + 1))[: n - 1]

    def best(t: str) -> float:
        times = []
        for _ in range(3):
            start = time.process_time()
            redact(t)
            times.append(time.process_time() - start)
        return min(times)

    assert best(text) <= 25 * best(plain) + 0.5
    assert best("password" + "%5C" * n) <= 25 * best(plain) + 0.5
