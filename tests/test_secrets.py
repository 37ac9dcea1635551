"""One rule for provider secrets (``treehop.secrets.resolve_secret``)."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from treehop.errors import EmbeddingError, InvalidQueryError
from treehop.redaction import redact
from treehop.secrets import resolve_secret


def test_explicit_value_wins_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TH_TEST_KEY", "from-env-1234567")
    got = resolve_secret("explicit-key-98765", "TH_TEST_KEY")
    assert isinstance(got, SecretStr) and got.get_secret_value() == "explicit-key-98765"
    assert "explicit-key-98765" not in repr(got)


def test_first_non_empty_variable_is_used_and_stripped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TH_A", "")
    monkeypatch.setenv("TH_B", "  env-secret-24680\n")
    got = resolve_secret(None, ("TH_A", "TH_B"))
    assert got is not None and got.get_secret_value() == "env-secret-24680"
    # Registered for redaction: a server echoing it cannot put it in an error message.
    assert "env-secret-24680" not in redact("the server said env-secret-24680")


def test_empty_means_absent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TH_NONE", raising=False)
    assert resolve_secret("", "TH_NONE") is None
    assert resolve_secret(SecretStr(""), "TH_NONE") is None
    assert resolve_secret(None, None) is None


def test_a_non_string_is_the_callers_typed_error() -> None:
    with pytest.raises(InvalidQueryError, match="api_key must be a str"):
        resolve_secret(1234, "X")  # type: ignore[arg-type]
    with pytest.raises(EmbeddingError, match="ak must be"):
        resolve_secret(b"bytes", "X", error=EmbeddingError, what="ak")  # type: ignore[arg-type]
