"""``RetrievalConfig.find_pool``: a find whose ``limit`` is below the pool runs at the pool
and keeps its first ``limit`` results, so every limit up to the pool answers a prefix of one
ranked list (a framework's ``k=3`` is the first three of its ``k=10``).

Why: find() reads its ``limit`` in the descent's stop rule, the chunk window's pool
(``max(WINDOW_POOL, 3 * limit)``), the few-documents passage fill (fewer documents than the
limit: passage slots) and the deeper memory runs, so its first ``k`` results changed with the
limit asked (issue 33, stop 72, helper quality76). The tree here is real text embedded by the
offline MiniLM: three documents, one of them four chunks long; a title query takes one slot
per document at ``limit=3`` (three documents) and passage slots at ``limit=4`` (fewer
documents than slots), so with the pool off ``find(limit=3)`` is not the first three of
``find(limit=4)``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from treehop import InvalidConfigError, RetrievalConfig, Treehop
from treehop.embedders.base import BaseEmbedder

R = "viking://resources/auth"
POOL = 20


def _s(*parts: str) -> str:
    return " ".join(parts)


DOCS = {
    "keys.md": [
        "# API keys",
        "## Rotating an API key\n\n"
        + _s(
            "To rotate an API key, create a second API key, deploy the new key to every client,",
            "and only then revoke the old key. Rotating API keys every ninety days limits what a",
            "leaked key can do. Key rotation never needs downtime when both keys are valid for a",
            "day. Automate API key rotation with the command line tool: keys rotate --grace 24h.",
        ),
        "## Revoking an API key\n\n"
        + _s(
            "Revoke an API key from the console when it leaks. A revoked key fails every request",
            "at once, so clients holding it must get a new API key before you revoke it.",
            "Revocation is logged with the name of the person who revoked the key. A revoked",
            "API key cannot be restored; create a new one.",
        ),
        "## API key scopes\n\n"
        + _s(
            "Each API key carries scopes that say which endpoints it may call. Give a key the",
            "fewest scopes its client needs, and rotate the API key when its scopes change. A",
            "key without scopes can read public data only. Scopes are checked on every request.",
        ),
        "## Storing API keys\n\n"
        + _s(
            "Never commit an API key to a repository. Keep API keys in the secret manager and",
            "read them at start-up. A key found in a repository must be rotated at once, since",
            "its history keeps it. Scanners look for API key patterns in every push.",
        ),
    ],
    "oauth.md": [
        "# OAuth",
        "## Access tokens\n\n"
        + _s(
            "An OAuth access token expires after an hour. The client trades its refresh token",
            "for a new access token without asking the user again. Access tokens are bearer",
            "tokens: whoever holds one may use it. Send the token in the Authorization header.",
        ),
        "## Consent\n\n"
        + _s(
            "The consent screen lists the scopes an application asks for. The user grants or",
            "refuses them, and may withdraw consent later from the account page. Withdrawn",
            "consent revokes every token of that application.",
        ),
    ],
    "sso.md": [
        "# Single sign-on",
        "## SAML\n\n"
        + _s(
            "Single sign-on with SAML sends the user to the identity provider, which answers",
            "with a signed assertion naming the user. The service checks the signature against",
            "the provider's certificate. Assertions are valid for five minutes.",
        ),
        "## Sessions\n\n"
        + _s(
            "A single sign-on session lasts eight hours. Signing out of the identity provider",
            "ends every application's session. Idle sessions end after thirty minutes without a",
            "request.",
        ),
    ],
}
TITLE = "API key rotation"
QUERIES = (TITLE, "How do I rotate an API key?", "OAuth tokens", "Rotating credentials")


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("auth")
    for name, parts in DOCS.items():
        (root / name).write_text("\n\n".join(parts) + "\n", encoding="utf-8")
    return root


def _client(minilm: BaseEmbedder, tree: Path, pool: int) -> Treehop:
    config = RetrievalConfig(find_pool=pool) if pool else RetrievalConfig()  # (off: as is)
    th = Treehop(embedder=minilm, tagger=False, chunk_chars=400, config=config)
    th.add_resource(tree, target_uri=R)
    return th


@pytest.fixture(scope="module")
def off(minilm: BaseEmbedder, tree: Path) -> Iterator[Treehop]:
    th = _client(minilm, tree, 0)
    yield th
    th.close()


@pytest.fixture(scope="module")
def on(minilm: BaseEmbedder, tree: Path) -> Iterator[Treehop]:
    th = _client(minilm, tree, POOL)
    yield th
    th.close()


def _hits(th: Treehop, q: str, k: int) -> list[tuple[str, float]]:
    return [(m.uri, round(m.score, 6)) for m in th.find(q, target_uri=R, limit=k).contexts()]


def test_off_the_first_k_depend_on_the_limit(off: Treehop) -> None:
    """The defect, kept as the default: three documents, a title query. At ``limit=3`` every
    document takes one slot; at ``limit=4`` (fewer documents than slots) keys.md is cut
    into passages and its second passage is second, ahead of oauth.md."""
    three, four = _hits(off, TITLE, 3), _hits(off, TITLE, 4)
    assert len(three) == 3 and len(four) == 4
    assert [u for u, _ in three] != [u for u, _ in four[:3]]
    assert sum(u.split("#")[0].endswith("keys.md") for u, _ in four) == 2


def test_pool_every_limit_is_a_prefix_of_the_pool(on: Treehop) -> None:
    for q in QUERIES:
        full = _hits(on, q, POOL)
        assert len(full) >= 4, q
        for k in range(1, POOL + 1):
            assert _hits(on, q, k) == full[:k], (q, k)


def test_pool_answers_the_first_limit_of_a_find_at_the_pool(off: Treehop, on: Treehop) -> None:
    """The pool changes which list a small limit is cut from, nothing else: the first ``k``
    of the pool-off find at ``limit=POOL``, URIs and scores."""
    for q in QUERIES:
        full = _hits(off, q, POOL)
        for k in (1, 3, 4, 10):
            assert _hits(on, q, k) == full[:k], (q, k)


def test_pool_limit_above_the_pool_runs_at_its_own(off: Treehop, on: Treehop) -> None:
    for q in QUERIES:
        assert _hits(on, q, POOL + 10) == _hits(off, q, POOL + 10), q


def test_pool_find_many_and_search_cut_to_the_limit(on: Treehop) -> None:
    many = on.find_many(list(QUERIES), target_uri=R, limit=3)
    for q, res in zip(QUERIES, many, strict=True):
        assert [(m.uri, round(m.score, 6)) for m in res.contexts()] == _hits(on, q, POOL)[:3]
    assert len(on.search(TITLE, target_uri=R, limit=2).contexts()) == 2


def test_pool_default_off() -> None:
    assert RetrievalConfig().find_pool == 0


@given(n=st.integers(min_value=-5, max_value=1005))
def test_pool_bounds(n: int) -> None:
    if 0 <= n <= 1000:
        assert RetrievalConfig(find_pool=n).find_pool == n
    else:
        with pytest.raises(InvalidConfigError, match="find_pool"):
            RetrievalConfig(find_pool=n)


@pytest.mark.parametrize("bad", ["20", 2.5, None, True])
def test_pool_refuses_non_integers(bad: object) -> None:
    with pytest.raises(InvalidConfigError, match="find_pool"):
        RetrievalConfig(find_pool=bad)  # type: ignore[arg-type]
