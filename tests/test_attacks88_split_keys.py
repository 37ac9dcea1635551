"""A key pasted with something inside it is masked whole; ordinary text around such breaks is
left alone (helper attacks88; attacks87's and leftovers74's open items).

Before (``61de7c96``): a vendor key with a zero-width character inside, soft-broken by
quoted-printable (``=`` + line break), with its ``-`` written as a JSON ``\\u002d`` or an
URL-encoded ``%2D``, or hard-wrapped across lines was shown whole, or its tail after the
break was (the head alone masked where it kept a vendor's shape). A proxy's short key
(``sk-`` + ``token_urlsafe(16)``) with a ``-`` / ``_`` early was shown; ``password: 'v'``
(a name unquoted, its value quoted, bare or escaped) was shown; an escaped-then-encoded
value lost its ``%5C`` before the closing quote to the mask.
"""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from treehop.cli import main
from treehop.redaction import redact, shown_name
from vendor_keys import URLSAFE
from vendor_keys import vendor_key as _key

KINDS = ["openai-legacy", "openai-proj", "anthropic", "deepseek", "github", "huggingface", "aws"]
KINDS += ["google"]
BREAKS = ["\u200b", "\u200d", "\ufeff", "\u00ad", "=\n", "=\r\n", "\n", "\r\n"]


def _shown_windows(key: str, said: str, n: int = 10) -> list[str]:
    return [key[i : i + n] for i in range(len(key) - n + 1) if key[i : i + n] in said]


@settings(max_examples=400, deadline=None)
@given(
    kind=st.sampled_from(KINDS),
    seed=st.integers(0, 2**32),
    brk=st.sampled_from(BREAKS),
    where=st.floats(0.0, 1.0),
    before=st.sampled_from(["", " ", "key: ", "'", '"', "=", "\n"]),
    after=st.sampled_from(["", " end", "'", '"', ".", "\n", "\nNext line."]),
)
def test_a_key_with_a_break_inside_is_masked_whole(
    kind: str, seed: int, brk: str, where: float, before: str, after: str
) -> None:
    key = _key(kind, seed)
    i = 1 + int(where * (len(key) - 2))
    tail = key[i:]
    if brk in {"\n", "\r\n"}:
        # (a hard wrap is read as one only before 4+ key characters with a digit in their
        # first run of letters: the next line's first word of ordinary text has none)
        run = tail.split("-")[0].split("_")[0] if tail[:1] not in "-_" else tail
        assume(len(tail) >= 4 and any(c.isdigit() for c in run))
    text = f"error: {before}{key[:i]}{brk}{tail}{after}"
    for said in (redact(text), redact(repr(text)), shown_name(text, 200)):
        assert not _shown_windows(key, said), (text, said)


@settings(max_examples=300, deadline=None)
@given(
    kind=st.sampled_from(KINDS),
    seed=st.integers(0, 2**32),
    doubled=st.booleans(),
    encoded=st.sampled_from(["%2D", "%2d", "%252D"]),
)
def test_a_key_with_its_dashes_escaped_is_masked(
    kind: str, seed: int, doubled: bool, encoded: str
) -> None:
    key = _key(kind, seed)
    assume("-" in key or "_" in key)
    json_escaped = key.replace("-", "\\\\u002d" if doubled else "\\u002d").replace("_", "\\u005f")
    url_encoded = key.replace("-", encoded).replace("_", "%5F")
    for text in (f'{{"detail": "{json_escaped}"}}', f"next=/v1?q={url_encoded}&x=1"):
        said = redact(text)
        body = key[-12:]
        assert body not in said, (text, said)


def test_named_breaks() -> None:
    key = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"
    cases = [
        f"key {key[:20]}\n{key[20:]} end",  # (head 12 after its prefix: no shape alone)
        f"key={key[:30]}=\r\n{key[30:]} end",  # (head kept a shape: the tail was shown)
        f"key {key[:10]}\u200b{key[10:]} end",
        f"key s\u200bk-proj-{key[8:]} end",
        '{"msg": "sk\\u002dproj\\u002d' + key[8:] + '"}',
        "sk%2Dproj%2D" + key[8:],
    ]
    for text in cases:
        said = redact(text)
        assert "1wXy4z" not in said and "Ab3dEf" not in said, said
        assert said.endswith(("end", "}", "***")), said


def test_a_proxy_short_key_with_a_dash_early_is_masked() -> None:
    shown = []
    for seed in range(400):
        body = "".join(random.Random(seed).choice(URLSAFE) for _ in range(22))
        # (a lower-case letter followed by an upper-case one, and a digit: about 19 in 20
        # such keys; a slug's words are one case or capitalised)
        camel = any(a.islower() and b.isupper() for a, b in itertools.pairwise(body))
        if not (camel and any(c.isdigit() for c in body)):
            continue
        key = "sk-" + body
        if key in redact(f"proxy rejected {key}: quota"):
            shown.append(key)
    assert not shown, shown[:5]
    # (and the form named: a ``-`` in the first 20 characters)
    assert "Xy3k" not in redact("sk-a-bXy3kLmN0pQrS7tUvW1zA2")


SLUGS = [
    "sk-learn-contrib-imbalanced-learn",
    "sk-1234-fix-the-login-redirect",
    "sk-Learn-Contrib-Imbalanced-Learn",
    "sk-lookup-table-for-every-case",
    "sk-v2-migration-notes-for-the-team",
    "sk-Learn-learn-v2-Learn-README",
]


def test_slugs_stay() -> None:
    for slug in SLUGS:
        assert redact(f"branch {slug} merged") == f"branch {slug} merged"


def test_a_quoted_value_after_a_secret_name_and_a_colon() -> None:
    assert redact("{password: \\'hunter22\\'}") == "{password: \\'***\\'}"
    assert redact("password: 'hunter22'") == "password: '***'"
    assert redact('db_secret: "s3cr3tvalue"') == 'db_secret: "***"'
    assert redact('Passphrase:\\"open-sesame\\"') == 'Passphrase:\\"***\\"'
    # (controls: prose and parser errors keep their text)
    for text in (
        "unexpected token: '}' at line 3",
        "password: see below",
        "reset your password: it expired",
        "token: 'abc' is not a keyword",
    ):
        assert redact(text) == text


def test_an_escaped_then_encoded_value_keeps_its_closing_escape() -> None:
    text = "body=%7B%5C%22password%5C%22%3A%5C%22hunter22%5C%22%7D"
    assert redact(text) == "body=%7B%5C%22password%5C%22%3A%5C%22***%5C%22%7D"
    # (an encoded backslash inside a value is still part of it)
    assert "new" not in redact("password%3DC%3A%5Cnew%5Cpath")


WORDS = ["the", "index", "build", "failed", "retry", "Next", "line", "v2", "see", "below"]


@settings(max_examples=300, deadline=None)
@given(
    items=st.lists(
        st.one_of(
            st.sampled_from(WORDS),
            st.binary(min_size=16, max_size=32).map(bytes.hex),
            st.uuids().map(str),
            st.binary(min_size=12, max_size=60).map(
                lambda b: __import__("base64").b64encode(b).decode()
            ),
            st.integers(0, 10**12).map(str),
        ),
        max_size=12,
    ),
    seps=st.lists(st.sampled_from([" ", "\n", "=\n", "\u200b", "\r\n", ", "]), max_size=12),
)
def test_ordinary_text_with_breaks_is_left_alone(items: list[str], seps: list[str]) -> None:
    """Hex digests, UUIDs, base64, numbers and words around zero-width characters, soft
    and hard line breaks: nothing masked (no vendor prefix is formed by a join)."""
    text = "".join(item + (seps[i] if i < len(seps) else " ") for i, item in enumerate(items))
    joined = text.replace("\u200b", "").replace("=\n", "").replace("\r\n", "").replace("\n", "")
    assume(not any(p in joined for p in ("AKIA", "AIza", "sk-", "hf_")))
    assert redact(text) == text


def test_a_split_key_given_to_a_cli_option_is_masked(capsys: pytest.CaptureFixture[str]) -> None:
    """argparse quotes the value (``invalid int value: '...'``), its ``repr`` escaping a
    zero-width character as ``\\u200b``: the key was printed whole."""
    key = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"
    for value in (f"{key[:20]}\u200b{key[20:]}", f"{key[:20]}=\n{key[20:]}"):
        assert main(["find", "q", "--limit", value]) != 0
        err = capsys.readouterr().err
        assert "--limit" in err and "Ab3dEf" not in err and "1wXy4z" not in err, err
