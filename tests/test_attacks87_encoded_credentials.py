"""A credential named in a text that was JSON-escaped or URL-encoded once more is masked,
and a hash glued after a word ending in ``sk`` is masked as the key it looks like (helper
attacks87; the lead, stop 74).

Stop 73 (helper attacks86) taught ``redact`` that a key may stand right after an escape
(``\\nsk-proj-...``, ``%0Ask-...``), but a credential *named* in such a text was still read
only with plain quotes and ``=``: a JSON body quoted inside another JSON string (an
upstream error's ``detail``, a log line's ``"message"``, ``json.dumps`` of a
``json.dumps``) writes ``{\\"password\\": \\"...\\"}``, and a URL carried inside a
URL's query (``next=`` / ``redirect_uri=`` of a login redirect) writes ``%3Fapi_key%3D...``
and ``Authorization%3A%20Bearer%20...``: each value was shown whole. And the other way: a
word ending in ``sk`` glued to a lower-case hex digest (``task-<md5>``, ``disk-<uuid hex>``,
a file or job name) reads as an ``sk-`` + 32 key glued to a word. attacks87 let it through
(an upper-case letter required after a letter); the lead kept it masked at the merge with
helper leftovers74, whose property test showed a DeepSeek key (``sk-`` + 32 lower-case hex)
glued after a letter shown whole by that rule: a secret shown is worse than a name masked.
"""

from __future__ import annotations

import json
import time
from urllib.parse import quote, quote_plus

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop.redaction import redact

NAMES = ["password", "api_key", "token", "access_token", "secret", "X-Api-Key", "client_secret"]
VALUE = "Hq7Zr2Vw9Xk4Pn"
"""A value in no vendor's shape: masked only as what a credential's name names."""


@pytest.mark.parametrize("name", NAMES)
def test_a_credential_in_json_inside_a_json_string_is_masked(name: str) -> None:
    inner = json.dumps({"error": "denied", name: VALUE})
    for text in (json.dumps(inner), json.dumps({"detail": inner}), repr(json.dumps(inner))):
        out = redact(text)
        assert VALUE not in out, out
        assert "***" in out


@pytest.mark.parametrize("depth", [2, 3])
def test_a_credential_in_json_escaped_twice_is_masked(depth: int) -> None:
    text = json.dumps({"password": VALUE})
    for _ in range(depth):
        text = json.dumps(text)
    assert VALUE not in redact(text)


@pytest.mark.parametrize(
    "text",
    [
        "login failed: next=%2Fv1%2Fsearch%3Fapi_key%3D" + VALUE + "%26q%3Dx",
        "redirect_uri=https%3A%2F%2Fhost%2Fcb%3Ftoken%3D" + VALUE,
        "h=Authorization%3A%20Bearer%20" + VALUE,
        "h=Authorization%3A+Bearer+" + VALUE,
        "body=password%3D" + VALUE + "%26user%3Dme",
        "h=X-Api-Key%3A%20" + VALUE,
        "q=%22password%22%3A%22" + VALUE + "%22",
        "h=bearer%20" + VALUE,
    ],
)
def test_a_credential_in_a_url_encoded_text_is_masked(text: str) -> None:
    out = redact(text)
    assert VALUE not in out, out
    assert "***" in out


@settings(max_examples=150, deadline=None)
@given(
    name=st.sampled_from(NAMES),
    value=st.text(alphabet="abcXYZ0189._~+/=", min_size=8, max_size=30),
    twice=st.booleans(),
)
def test_property_an_encoded_credential_is_masked(name: str, value: str, twice: bool) -> None:
    """Any credential's value, URL-encoded once or twice as a query inside a query, never
    shows (its encoded form is what the text holds)."""
    query = f"{name}={value}&next=1"
    encoded = quote(query, safe="")
    if twice:
        encoded = quote(encoded, safe="")
    text = "GET /login?r=" + encoded
    out = redact(text)
    assert encoded.split("%", 1)[0] in out  # (the name's text is kept)
    for shown in (value, quote(value, safe=""), quote(quote(value, safe=""), safe="")):
        if len(shown) >= 8:
            assert shown not in out, (text, out)


@settings(max_examples=150, deadline=None)
@given(
    name=st.sampled_from(NAMES),
    value=st.text(alphabet="abcXYZ0189._~+/=", min_size=8, max_size=30),
    depth=st.integers(1, 3),
)
def test_property_a_json_escaped_credential_is_masked(name: str, value: str, depth: int) -> None:
    text = json.dumps({name: value, "n": 1})
    for _ in range(depth):
        text = json.dumps(text)
    out = redact(text)
    assert value not in out, (text, out)


@pytest.mark.parametrize(
    "text",
    [
        "task-5d41402abc4b2a76b9719d911017c592",  # (md5)
        "disk-1b4e28ba2fa111d2883f0016d3cca427",  # (a UUID's hex)
        "risk-da39a3ee5e6b4b0d3255bfef95601890afd80709",  # (sha1)
        "viking://resources/jobs/task-0cc175b9c0f1b6a831c399e269772661.md",
        "flask-e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    ],
)
def test_a_hex_digest_glued_to_a_word_ending_in_sk_is_masked_as_the_key_it_looks_like(
    text: str,
) -> None:
    """Chosen (the lead, stop 74): ``task-<md5>`` and a DeepSeek key glued after a letter
    (``xsk-<32 hex>``) have one shape; the digest's tail is masked so the key's never shows."""
    digest = text.split("sk-", 1)[1].split(".")[0]
    assert digest not in redact(text)
    assert digest not in redact(repr(text))


@pytest.mark.parametrize(
    "text, expected",
    [
        # (controls, pass on the base too: glued after ``_`` / a digit, or mixed case)
        ("DEEPSEEK_KEY_sk-9f3e7d1c5b2a8f4e6d0c3b7a1e5d9c2f", "DEEPSEEK_KEY_***"),
        ("KEY9sk-9f3e7d1c5b2a8f4e6d0c3b7a1e5d9c2f", "KEY9***"),
        ("xsk-T3BlbkFJa9Qz7Wm2Xv9Rk4Tn8Yb3Lc6Pd1Hf5Gs0", "x***"),
        ("sk-9f3e7d1c5b2a8f4e6d0c3b7a1e5d9c2f", "***"),
        ("password=" + VALUE, "password=***"),
        ('{"password": "' + VALUE + '"}', '{"password": "***"}'),
        ("a\\nb C:\\new\\path", "a\\nb C:\\new\\path"),
        ("password=C:\\new\\path done", "password=*** done"),
    ],
)
def test_controls_stay_as_they_were(text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ('{\\"password\\": \\"' + VALUE + '\\"}', '{\\"password\\": \\"***\\"}'),
        ("q=password%3D" + VALUE + "%26user%3Dme", "q=password%3D***%26user%3Dme"),
        ("Authorization%3A%20Bearer%20" + VALUE, "Authorization%3A%20Bearer%20***"),
        # (ordinary encoded text stays)
        ("q=max_tokens%3D512%26n%3D1", "q=max_tokens%3D512%26n%3D1"),
        ("path=%2Fhome%2Fuser%2Fdocs", "path=%2Fhome%2Fuser%2Fdocs"),
    ],
)
def test_what_an_escaped_credential_reads_as(text: str, expected: str) -> None:
    """The name, its quotes and what follows the value are kept; only the value is masked."""
    assert redact(text) == expected


UNITS = [
    "password\\\\\\\\",
    'token\\"',
    "api_key%3D",
    "password%3A%20",
    "bearer%20",
    "Authorization%3A%20Bearer%20",
    "%3Dtoken%3D%3D",
    "tasksk-" + "a1" * 16,
    "sk-" + "a" * 40,
    "password%3D%2",
]


@pytest.mark.parametrize("unit", UNITS)
def test_redaction_stays_linear(unit: str) -> None:
    """300,000 characters of one adversarial unit take at most 25 times (plus 0.5 s for a
    loaded box) what a plain text of the same length with a ``%`` takes."""
    n = 300_000
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


def test_quote_plus_form_too() -> None:
    text = "r=" + quote_plus("api_key=" + VALUE + "&x=1")
    assert VALUE not in redact(text)
