"""``TiktokenCounter(encoding=...)``: a refused name shown bounded and redacted (helper
leftovers65e).

``{encoding!r}`` wrote the caller's value whole into the error and tiktoken's own "Unknown
encoding <name>" (in the message and in the chained exception) quoted it again: a megabyte
name made a two-megabyte message, a pasted key was echoed twice. Unknown names fail in
tiktoken's registry lookup, before any download, so no network is involved."""

from __future__ import annotations

import pytest

from treehop.context_assembly import TiktokenCounter
from treehop.errors import EmbeddingError
from treehop.redaction import register_secret

SECRET = "sk-leftovers65eENCODINGkey0123456789xyz"
register_secret(SECRET)


def _all_text(exc: BaseException) -> str:
    """The message, the repr and every chained exception's: what a traceback prints."""
    out = []
    seen: BaseException | None = exc
    while seen is not None:
        out += [str(seen), repr(seen)]
        seen = seen.__cause__ or seen.__context__
    return "\n".join(out)


def test_a_registered_key_as_the_encoding_is_masked() -> None:
    with pytest.raises(EmbeddingError) as info:
        TiktokenCounter(SECRET)
    text = _all_text(info.value)
    assert SECRET not in text
    assert "***" in str(info.value)


@pytest.mark.parametrize(
    "make",
    [lambda n: "x" * n, lambda n: list(range(n)), lambda n: {i: i for i in range(n)}],
    ids=["a long string", "a list", "a dict"],
)
def test_a_huge_encoding_makes_a_small_message(make: object) -> None:
    messages = []
    for n in (10**4, 10**6):
        with pytest.raises(EmbeddingError) as info:
            TiktokenCounter(make(n))  # type: ignore[operator]
        messages.append(str(info.value))
        assert len(_all_text(info.value)) < 2000
    assert len(messages[1]) < 400
    assert messages[0] == messages[1]


def test_an_unknown_short_name_is_still_named() -> None:
    # Control: the name a user mistyped is shown as before, with tiktoken's reason.
    with pytest.raises(EmbeddingError, match=r"cannot load tiktoken encoding 'cl100k_bsae'"):
        TiktokenCounter("cl100k_bsae")
