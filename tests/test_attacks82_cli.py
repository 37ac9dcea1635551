"""An ``Authorization`` / bearer / signature option's value, and a credential that starts
with a dash, are masked in the CLI's unknown-argument errors (helper attacks82,
bench/README.md "(helper attacks82)").

attacks81's ``_shown_args`` masks the value of a credential-named unknown option, given as
the next word or after ``=``. Two spellings got past it: ``--authorization`` (and
``--bearer``, ``--signature``, names :func:`treehop.redaction.redact` knows), whose
``=`` form redact masked while the next-word form -- ``curl``'s habit, a line pasted from
another tool -- was shown whole; and a value that starts with a dash (a URL-safe base64
key does one time in 64): ``--api-key -Xk3...`` was shown as if it were an option.

Each test fails on 4b7966c0 unless it says it is a control.
"""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from test_attacks81_cli import _SECRETS  # ("zq" + 8 or more key characters)
from test_leftovers68b_cli import _usage_error  # (parse only, over a missing index)

_NEW_NAMES = ["--authorization", "--Authorization", "--bearer", "--signature", "--x-signature"]
_KNOWN_NAMES = ["--api-key", "--token", "--password", "--hf-auth", "--credentials"]


@given(
    option=st.sampled_from(_NEW_NAMES),
    secret=_SECRETS,
    joined=st.booleans(),
    where=st.sampled_from(["before", "after"]),
)
def test_an_authorization_options_value_is_never_shown(
    option: str, secret: str, joined: bool, where: str
) -> None:
    # 4b7966c0: shown whole as the next word (the "=" form was redact's already)
    given_as = [f"{option}={secret}"] if joined else [option, secret]
    argv = [*given_as, "find", "q"] if where == "before" else ["find", "q", *given_as]
    text = _usage_error(argv)
    assert "unrecognized arguments" in text, text
    assert secret not in text and secret[:12] not in text
    assert option in text  # (the option itself is still named)


@given(
    option=st.sampled_from(_KNOWN_NAMES + _NEW_NAMES),
    secret=_SECRETS,
    where=st.sampled_from(["before", "after"]),
)
@example(option="--api-key", secret="zq00ARGETU", where="after")
@example(option="--token", secret="zqtarget-ur", where="before")
def test_a_credential_that_starts_with_a_dash_is_never_shown(
    option: str, secret: str, where: str
) -> None:
    # 4b7966c0: "-zq..." after --api-key read as an option and shown whole; a first fix
    # masked the listing but still hinted "-zq00ARGETU: did you mean --target-uri?"
    given_as = [option, f"-{secret}"]
    argv = [*given_as, "find", "q"] if where == "before" else ["find", "q", *given_as]
    text = _usage_error(argv)
    assert "unrecognized arguments" in text, text
    assert secret not in text and secret[:12] not in text


def test_control_a_long_option_after_a_credential_name_is_still_named() -> None:
    # control (as on 4b7966c0): a "--name" after a credential-named option with no value is
    # another option, listed as such; other words are shown as before
    text = _usage_error(["find", "q", "--api-key", "--frobnicate", "visible"])
    assert "--api-key --frobnicate visible" in text
    text = _usage_error(["find", "q", "--authorisation-mode", "visible"])
    assert "--authorisation-mode visible" in text
