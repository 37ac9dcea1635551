"""A credential given after its option that starts with two dashes is masked in the CLI's
unknown-argument errors, not listed as another option (helper leftovers71a, bench/README.md
"(helper leftovers71a)"; attacks82's open item).

attacks82 masked a next-word value that starts with one dash; one that starts with two (a
URL-safe base64 key does one time in 4,096) was read as another option: ``treehop find q
--api-key --Xk3_...`` listed the key whole. Now a word after a credential-named option is
another option only when it has an option's shape (lower-case words joined by single
dashes), which a key of mixed case has not.

The first test fails on a62913ab; the second is a control.
"""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from test_leftovers68b_cli import _usage_error  # (parse only, over a missing index)

_NAMES = ["--api-key", "--token", "--password", "--hf-auth", "--authorization", "--Bearer"]
_KEY_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"

# ("zq", never a word of the usage text; an upper-case letter somewhere, as in nearly every
# random key; up to 60 key characters around it)
_DASHED_KEYS = st.tuples(
    st.text(alphabet=_KEY_CHARS, max_size=30),
    st.sampled_from("ABCDEFGHIJKLMNOPQRSTUVWXYZ"),
    st.text(alphabet=_KEY_CHARS, min_size=6, max_size=30),
).map(lambda t: f"--zq{t[0]}{t[1]}{t[2]}")


@given(option=st.sampled_from(_NAMES), key=_DASHED_KEYS, where=st.sampled_from(["before", "after"]))
@example(option="--api-key", key="--zqLimit", where="after")
@example(option="--token", key="--zqTarget-uri", where="before")
def test_a_credential_that_starts_with_two_dashes_is_never_shown(
    option: str, key: str, where: str
) -> None:
    # a62913ab: "unrecognized arguments: --api-key --zq..." with the key whole
    argv = [option, key, "find", "q"] if where == "before" else ["find", "q", option, key]
    text = _usage_error(argv)
    assert "unrecognized arguments" in text, text
    assert key not in text and key[2:14] not in text, text
    assert option in text  # (the option itself is still named)


def test_control_an_option_shaped_word_after_a_credential_name_is_still_named() -> None:
    # control (as on a62913ab): a lower-case "--name" there is another option, listed and
    # hinted at as before
    text = _usage_error(["find", "q", "--api-key", "--frobnicate", "visible"])
    assert "--api-key --frobnicate visible" in text
    text = _usage_error(["find", "q", "--token", "--limt", "3"])
    assert "--token --limt 3" in text and "did you mean --limit" in text, text
