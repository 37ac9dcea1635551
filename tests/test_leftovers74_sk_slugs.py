"""``sk-`` keys are masked by their vendors' shapes, not every ``sk-`` slug (helper
leftovers74; leftovers73c's open item).

Before: any ``sk-`` + 20 of ``[A-Za-z0-9_-]`` at a token's start was masked, so ordinary
hyphenated words were: ``sk-learn-contrib-imbalanced-learn`` -> ``***``, ``the
sk-lookup-table-for-every-case`` -> ``the ***``, a branch ``sk-1234-fix-the-login-redirect``.
Now a bare ``sk-`` key needs one run of letters and digits (32+, not all lowercase; or 20+
with a digit at a token's start) or a vendor's second prefix. Keys are drawn from a seeded
random generator in each vendor's published shape (length, alphabet) and placed everywhere
the redaction tests place them: a token's start after punctuation, after an escape (``\\n``,
``%0A``), glued after ``_`` / a letter / a digit, inside a ``repr``, through ``shown_name``.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from treehop.redaction import redact, shown_name
from vendor_keys import vendor_key as _key

KINDS = [
    "openai-legacy",
    "openai-proj",
    "openai-svcacct",
    "openai-admin",
    "anthropic",
    "deepseek",
    "openrouter",
]
BEFORE = ["", " ", "key ", "'", '"', "(", "=", ": ", "\n", "\\n", "\\t", "%0A", "MY_KEY_", "x", "9"]
AFTER = ["", " ", "'", '"', ")", ",", ".", "\n", "; next"]


@settings(max_examples=400, deadline=None)
@given(
    kind=st.sampled_from(KINDS),
    seed=st.integers(0, 2**32),
    before=st.sampled_from(BEFORE),
    after=st.sampled_from(AFTER),
    text=st.text(max_size=20),
)
def test_a_vendor_key_is_masked_wherever_it_stands(
    kind: str, seed: int, before: str, after: str, text: str
) -> None:
    key = _key(kind, seed)
    body = key[len(key) // 2 :][:16]  # (16 characters from its middle)
    for said in (
        redact(f"{text}error: {before}{key}{after} end"),
        redact(repr(f"{before}{key}{after}")),
        shown_name(f"{before}{key}"),
    ):
        assert key not in said and body not in said, said


WORDS = [
    "learn", "lookup", "table", "for", "every", "case", "contrib", "imbalanced", "video",
    "image", "the", "login", "redirect", "fix", "bug", "notes", "prod", "cluster", "eu",
    "west", "v2", "py3", "x86", "utf8", "sha256", "k8s", "i18n", "Learn", "SK", "API",
    "Python", "README", "2024", "1234", "64", "supercalifragilistic", "internationalization",
]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(
    words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=12),
    seps=st.lists(st.sampled_from(["-", "_"]), min_size=12, max_size=12),
    before=st.sampled_from(["", " ", "see ", "(", "pip install ", "\n", "'"]),
    after=st.sampled_from(["", " ", ".", ")", " is installed", "'"]),
)
def test_ordinary_sk_words_are_never_masked(
    words: list[str], seps: list[str], before: str, after: str
) -> None:
    slug = "sk-" + "".join(w + s for w, s in zip(words, seps, strict=False))[:-1]
    text = f"{before}{slug}{after}"
    assert redact(text) == text
    assert redact(repr(text)) == repr(text)


def test_the_slugs_named_in_the_notes() -> None:
    for text in (
        "sk-learn-contrib-imbalanced-learn",
        "the sk-lookup-table-for-every-case here",
        "git checkout sk-1234-fix-the-login-redirect",
        "sk-abcdefghijklmnopqrstuvwxyz",
    ):
        assert redact(text) == text, redact(text)


def test_control_keys_in_the_older_tests_shapes_stay_masked() -> None:
    """Control (passes on the base too)."""
    for key in (
        "sk-proj-A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6",
        "sk-" + "0123456789abcdef" * 2,
        "sk-Xq3kLmN0pQrStUvWx1ab",
        "sk-ant-api03-" + "Ab3_" * 20,
    ):
        assert key not in redact(f"got {key} here"), key
