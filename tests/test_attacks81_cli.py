"""A credential given to an option the CLI does not have is never echoed (helper attacks81,
bench/README.md "(helper attacks81)").

Stop 68's misplaced-option error (leftovers68b) lists an unknown option given before the
command together with the words after it (its values): ``treehop --api-key sk-... find q``
printed ``unrecognized arguments: --api-key sk-... (before 'find')``. The same held after
the command (``treehop find q --api-key sk-...``: a line pasted from another tool) and for
``--key=...`` / ``--credentials=...``, which :func:`treehop.redaction.redact` does not
know (it knows ``--api-key=...``). The error goes to the terminal and any CI log.

Each test fails on d32e6e34 unless it says it is a control.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from test_leftovers68b_cli import _usage_error  # (parse only, over a missing index)
from treehop.cli._app import SHOWN_EXTRAS

_SECRET_OPTIONS = [
    "--api-key",
    "--api_key",
    "--key",
    "--token",
    "--hf-token",
    "--auth",
    "--password",
    "--secret",
    "--credentials",
    "-token",
]


_SECRETS = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.", min_size=8
).map(lambda s: "zq" + s)  # (never a word of the usage text)


@given(
    option=st.sampled_from(_SECRET_OPTIONS),
    secret=_SECRETS,
    joined=st.booleans(),
    where=st.sampled_from(["before", "after", "after-positional"]),
)
def test_a_credential_named_options_value_is_never_shown(
    option: str, secret: str, joined: bool, where: str
) -> None:
    # d32e6e34: shown whole given as the next word (both places), and with "=" for --key,
    # --auth, --credentials, -token
    given_as = [f"{option}={secret}"] if joined else [option, secret]
    argv = {
        "before": [*given_as, "find", "q"],
        "after": ["find", "q", *given_as],
        "after-positional": ["find", "q", "--limit", "3", *given_as, "--json"],
    }[where]
    text = _usage_error(argv)
    assert "unrecognized arguments" in text, text
    assert secret not in text
    assert secret[:12] not in text
    assert option.split("=")[0] in text  # (the option itself is still named)


def test_the_masked_listing_keeps_its_bound_and_its_other_words() -> None:
    # control (d32e6e34 shows the same words and count): other unknown words are listed as
    # before, ten at most, then "and N more"
    extras = [f"--opt{i}" for i in range(SHOWN_EXTRAS + 3)]
    text = _usage_error(["find", "q", *extras])
    assert "--opt0 --opt1" in text
    assert f"--opt{SHOWN_EXTRAS - 1} and 3 more" in text
    text = _usage_error(["--limit3", "visible-value", "find", "q"])
    assert "--limit3 visible-value (before 'find')" in text


@pytest.mark.parametrize(
    "argv",
    [
        ["--api-key", "sk-abcdefghijklmnopqrstuvwx", "find", "q"],
        ["find", "q", "--api-key", "sk-abcdefghijklmnopqrstuvwx"],
        ["find", "q", "--key=sk-abcdefghijklmnopqrstuvwx"],
    ],
)
def test_an_openai_style_key_is_masked_where_it_was_shown(argv: list[str]) -> None:
    # d32e6e34: "unrecognized arguments: --api-key sk-abcdefghijklmnopqrstuvwx ..."
    text = _usage_error(argv)
    assert "sk-abc" not in text
    assert "***" in text
