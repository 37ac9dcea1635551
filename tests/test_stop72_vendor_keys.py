"""Stop 72 (the lead; helper review72's open item): keys in the shapes vendors give them are
masked wherever a message quotes them, named or not.

``treehop --limit sk-proj-...`` (a key pasted as the value of an option whose name says
nothing) printed the key whole in the usage error, and ``treehop find q --limit sk-...`` in
argparse's own "invalid int value: 'sk-...'"; :func:`treehop.redaction.redact` masked a key
only when registered, after a credential's name, or in a URL's userinfo / query.
"""

from __future__ import annotations

import contextlib
import io
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from treehop.cli._app import main
from treehop.redaction import MASK, redact

_ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

_SHAPES = {
    # (a bare ``sk-`` key is one run of 32+ letters and digits, not all lowercase letters;
    # ``sk-`` + any 20 of ``[A-Za-z0-9_-]`` is a slug's shape too: helper leftovers74)
    "sk-": st.text(_ALNUM, min_size=32, max_size=80).filter(
        lambda b: any(c.isupper() or c.isdigit() for c in b)
    ),
    "sk-proj-": st.text(_ALNUM, min_size=20, max_size=80),
    "sk-ant-api03-": st.text(_ALNUM, min_size=20, max_size=80),
    "ghp_": st.text(_ALNUM, min_size=36, max_size=36),
    "github_pat_": st.text(_ALNUM + "_", min_size=40, max_size=82),
    "hf_": st.text(_ALNUM, min_size=34, max_size=34),
    "xoxb-": st.text(_ALNUM + "-", min_size=10, max_size=60),
    "glpat-": st.text(_ALNUM, min_size=20, max_size=20),
    "AKIA": st.text(_UPPER, min_size=16, max_size=16),
    "AIza": st.text(_ALNUM + "_-", min_size=35, max_size=35),
}


@settings(max_examples=150, deadline=None)
@given(
    case=st.sampled_from(sorted(_SHAPES)).flatmap(
        lambda p: st.tuples(st.just(p), _SHAPES[p].filter(lambda b: b.strip("-_") != ""))
    ),
    before=st.sampled_from(["", "key ", "'", '"', "(", "=", ": ", "invalid int value: '", "\n"]),
    after=st.sampled_from(["", " ", "'", '"', ")", ",", ".", "\n", "; next"]),
)
def test_a_vendor_shaped_key_is_masked_wherever_it_stands(
    case: tuple[str, str], before: str, after: str
) -> None:
    prefix, body = case
    key = prefix + body
    out = redact(f"error: {before}{key}{after} end")
    assert key not in out and body not in out, out
    assert MASK in out, out


def test_words_that_only_start_like_a_key_are_left() -> None:
    text = (
        "sklearn sk-learn hf_hub_download ghp_short xoxb-1 glpat-x AKIAshort "
        "disk-usage-report-for-every-volume-mounted task-queue-length-exceeded-limits "
        "max_tokens=512 risk-of-a-very-long-hyphenated-word-in-prose"
    )
    assert redact(text) == text


def test_the_scan_stays_linear() -> None:
    # (a run of prefixes with no key after any: every start tried once)
    small, big = "-sk-" * 20_000, "-sk-" * 160_000
    t0 = time.perf_counter()
    redact(small)
    t1 = time.perf_counter()
    redact(big)
    t2 = time.perf_counter()
    assert (t2 - t1) < max(0.5, 40 * (t1 - t0)), (t1 - t0, t2 - t1)


def _stderr(argv: list[str]) -> str:
    err, out = io.StringIO(), io.StringIO()
    with (
        contextlib.redirect_stderr(err),
        contextlib.redirect_stdout(out),
        contextlib.suppress(SystemExit),
    ):
        main(argv)
    return err.getvalue()


def test_a_key_pasted_as_an_options_value_is_not_printed() -> None:
    key = "sk-proj-" + "Ab3" * 12
    for argv in (
        ["--limit", key],
        ["find", "q", "--limit", key],
        ["find", "q", "--x", key],
    ):
        text = _stderr(argv)
        assert text, argv
        assert key not in text and "Ab3Ab3Ab3" not in text, text
