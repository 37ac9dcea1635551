"""Credentials a user pastes in the spellings other tools and pages give them (helper
attacks83, bench/README.md "(helper attacks83)").

Found on a62913ab: :func:`treehop.redaction.redact` masked ``api_key=...`` but not
``OPENAI_API_KEY=...`` (nor LangChain's ``openai_api_key=``, nor ``AWS_SECRET_ACCESS_KEY=``):
the name had to start a word, and ``_`` is no word boundary. So an environment line pasted
after a command (``treehop find q OPENAI_API_KEY=sk-...``) and any error or log line quoting a
``.env`` file showed the key. The CLI's listing of unknown arguments masked a credential
option's value only after an ASCII ``-``: a command copied from a page that typeset
``--api-key`` as ``—api-key`` (an em dash; ``–-token``, an en dash) or a config line's
``--password: ...`` showed it. Each test fails on a62913ab unless it says it is a control.
"""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from test_attacks81_cli import _SECRETS  # ("zq" + 8 or more key characters)
from test_leftovers68b_cli import _usage_error  # (parse only, over a missing index)
from treehop.redaction import redact

_PREFIXES = ["OPENAI_", "openai_", "ANTHROPIC_", "COHERE_", "MY_SERVICE_", "AZURE_OPENAI_"]
_NAMES = st.one_of(
    st.builds(
        lambda p, n: p + n,
        st.sampled_from(_PREFIXES),
        st.sampled_from(["API_KEY", "api_key", "APIKEY", "Api-Key"]),
    ),
    st.sampled_from(
        ["AWS_SECRET_ACCESS_KEY", "aws_secret_access_key", "MINIO_SECRET_KEY", "S3_ACCESS_KEY"]
    ),
)
_ASSIGNMENTS = st.sampled_from(["{n}={v}", "{n} = {v}", '{n}="{v}"', '"{n}": "{v}"', "{n}: {v}"])


@given(name=_NAMES, form=_ASSIGNMENTS, secret=_SECRETS, before=st.text(max_size=30))
@example(name="OPENAI_API_KEY", form="{n}={v}", secret="zqAbCdEf12", before="export ")
def test_a_prefixed_key_names_value_is_masked(
    name: str, form: str, secret: str, before: str
) -> None:
    text = redact(before + " " + form.format(n=name, v=secret) + " and more")
    assert secret not in text and secret[:8] not in text
    assert name in text  # (the name is still said)


def test_control_words_that_only_contain_key_are_kept() -> None:
    # (as on a62913ab: no credential assignment, nothing masked)
    text = "max_tokens=512 keyboard=us monkey=1 api_keys=3 secret_keys_count=4 hotkey=F5"
    assert redact(text) == text


_DASHED = [
    "\u2014api-key",
    "\u2013-token",
    "\u2013\u2013password",
    "\u2212\u2212api-key",
    "\uff0dtoken",
]


@given(
    option=st.sampled_from([*_DASHED, "--password:", "--key:", "\u2014api-key:"]),
    secret=_SECRETS,
    where=st.sampled_from(["before", "after"]),
)
@example(option="\u2014api-key", secret="zqAbCdEf12", where="after")
def test_a_credential_option_spelt_with_another_dash_hides_its_value(
    option: str, secret: str, where: str
) -> None:
    argv = [option, secret, "find", "q"] if where == "before" else ["find", "q", option, secret]
    text = _usage_error(argv)
    assert "unrecognized arguments" in text or "invalid choice" in text, text
    assert secret not in text and secret[:8] not in text


@given(secret=_SECRETS)
def test_an_environment_line_pasted_after_the_command_hides_its_key(secret: str) -> None:
    text = _usage_error(["find", "q", f"OPENAI_API_KEY={secret}"])
    assert "unrecognized arguments: OPENAI_API_KEY=***" in text, text
    assert secret not in text


def test_control_other_words_after_a_dash_are_still_shown() -> None:
    # (as on a62913ab: an unknown word that names no credential is listed as given)
    text = _usage_error(["find", "q", "\u2014limit", "3", "\u2014keyboard", "visible"])
    assert "\u2014limit 3 \u2014keyboard visible" in text, text
