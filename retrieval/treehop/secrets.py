"""Secrets of providers (API keys, access keys): one rule for every client that needs one.

Embedders, LLM clients, rerankers and the VikingDB store all take a key as an argument or from
the environment. Why one helper: the rule (an explicit value wins, then the first non-empty
environment variable, an empty value means absent) and its safety (the key is held as a
:class:`~pydantic.SecretStr`, so a ``repr``, a log line or a traceback's locals never print it,
and registered with :mod:`treehop.redaction`, so a server echoing it cannot put it in an error)
were written three times and had started to differ.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from pydantic import SecretStr

from .errors import InvalidQueryError, TreehopError
from .redaction import register_secret


def resolve_secret(
    value: str | SecretStr | None,
    env_vars: str | Sequence[str] | None = None,
    *,
    error: type[TreehopError] = InvalidQueryError,
    what: str = "api_key",
) -> SecretStr | None:
    """An explicit secret wins; otherwise the first non-empty environment variable of
    ``env_vars`` (surrounding whitespace dropped from either: a pasted key, or one read
    from a file, often ends with a newline); an empty value means absent. A value that is
    not a string raises ``error``."""
    if isinstance(value, SecretStr):
        raw = value.get_secret_value()
        if isinstance(raw, str) and raw != raw.strip():  # (as an explicit str, below)
            value = SecretStr(raw.strip())
        register_secret(value.get_secret_value())
        return value if value.get_secret_value() else None
    if value is not None and not isinstance(value, str):
        raise error(f"{what} must be a str, a SecretStr or None, got {type(value).__name__}")
    if value:
        # Surrounding whitespace dropped as from the environment: a key read from a file
        # ends with a newline, and every request then failed ("Illegal header value").
        value = value.strip()
    if value:
        register_secret(value)
        return SecretStr(value)
    names = [env_vars] if isinstance(env_vars, str) else list(env_vars or ())
    for name in names:
        env = os.environ.get(name, "").strip()
        if env:
            register_secret(env)
            return SecretStr(env)
    return None


SECRET_NAME_PARTS = ("key", "token", "secret", "password")
"""The words that make a name a credential's (``api_key``, ``auth_token``): a value under
such a name is registered here, and left out of an error that names the argument
(:func:`treehop.integration_kit.looks_secret`)."""


def register_object_secrets(obj: object) -> None:
    """Register the credentials a framework's model object holds (its own attributes, one
    level): every :class:`~pydantic.SecretStr`, and a string in an attribute whose name ends
    in key, token, secret or password (LlamaIndex keeps ``api_key`` as a plain ``str``;
    ``tokenizer_name`` is no credential).

    Why: an adapter around a LangChain or LlamaIndex model quotes the model's own exception,
    and a provider's 401 may echo the key it was given; treehop never saw that key, so
    :func:`~treehop.redaction.redact` could not mask it (its patterns miss ``"Incorrect API key
    provided: sk-..."``). Registered, it is masked wherever a message quotes it."""
    try:
        items = list(vars(obj).items())
    except TypeError:  # no __dict__ (slots, builtins): nothing to read
        return
    extra = getattr(obj, "__pydantic_extra__", None)
    if isinstance(extra, dict):
        items.extend(extra.items())
    for name, value in items:
        if isinstance(value, SecretStr):
            register_secret(value.get_secret_value())
        elif isinstance(value, str) and str(name).lower().endswith(SECRET_NAME_PARTS):
            register_secret(value)
