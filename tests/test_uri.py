from __future__ import annotations

import pytest

from treehop import uri as u
from treehop.errors import InvalidURIError
from treehop.models import ContextType


def test_tilde_resolves_to_the_users_space() -> None:
    assert u.normalize("viking://~/memories/prefs", "alice") == "viking://user/alice/memories/prefs"
    assert u.normalize("viking://~/skills", "bob") == "viking://user/bob/skills"


def test_trailing_slash_is_the_same_node() -> None:
    assert u.normalize("viking://resources/", "x") == "viking://resources"
    assert u.normalize("viking://resources/docs/", "x") == "viking://resources/docs"


@pytest.mark.parametrize(
    "bad",
    [
        "viking://resources/../user/bob/memories",
        "viking://resources/%2e%2e/secrets",
        "viking://resources/%252e%252e/secrets",
        "viking://resources/a/./b",
        "viking://resources//double",
        "viking://resources/a\\b",
        "/etc/passwd",
        "file:///etc/passwd",
        "viking://other/root",
        "viking://~/elsewhere",
        "viking://resources/a%2fb",
        "",
    ],
)
def test_escapes_are_rejected(bad: str) -> None:
    with pytest.raises(InvalidURIError):
        u.normalize(bad, "alice")


def test_other_users_space_is_rejected() -> None:
    assert u.normalize("viking://user/alice/memories", "alice") == "viking://user/alice/memories"
    with pytest.raises(InvalidURIError, match="another user"):
        u.normalize("viking://user/bob/memories", "alice")


def test_invalid_user_names() -> None:
    for bad in ["", "../x", "a/b", "x" * 65]:
        with pytest.raises(InvalidURIError):
            u.validate_user(bad)


def test_parent_ancestors_and_chunks() -> None:
    chunk = "viking://resources/docs/a.md#chunk-3"
    assert u.normalize(chunk, "x") == chunk
    assert u.parent_of(chunk) == "viking://resources/docs/a.md"
    assert u.ancestors_of(chunk) == [
        "viking://resources",
        "viking://resources/docs",
        "viking://resources/docs/a.md",
    ]
    assert u.parent_of("viking://resources") is None
    assert u.parent_of("viking://user/al/memories") is None
    with pytest.raises(InvalidURIError):
        u.normalize("viking://resources/a.md#frag", "x")


def test_context_types_and_within() -> None:
    assert u.context_type_of("viking://resources/x") is ContextType.RESOURCE
    assert u.context_type_of("viking://user/a/memories/m") is ContextType.MEMORY
    assert u.context_type_of("viking://user/a/skills") is ContextType.SKILL
    assert u.is_within("viking://resources/a/b", "viking://resources/a")
    assert not u.is_within("viking://resources/ab", "viking://resources/a")
    assert u.to_display("viking://user/al/skills/s", "al") == "viking://~/skills/s"


@pytest.mark.parametrize(
    "uri",
    ["viking://resources/a/b/", "viking://~/memories/s1", "viking://resources/x#chunk-3"],
)
def test_kept_answers_equal_a_fresh_check(uri: str) -> None:
    """``normalize`` keeps valid answers (a find resolves its targets with every query):
    the kept answer is the fresh one, for each user."""
    for user in ("default", "alice"):
        assert u.normalize(uri, user) == u._normalize(uri, user)
        assert u.normalize(uri, user) == u._normalize(uri, user)  # (now kept)


@pytest.mark.parametrize("bad", ["viking://resources/../x", "http://x", ""])
def test_invalid_uris_raise_every_time(bad: str) -> None:
    for _ in range(2):
        with pytest.raises(InvalidURIError):
            u.normalize(bad, "default")
    with pytest.raises(InvalidURIError):
        u.normalize("viking://~/memories/s1", "bad user")
    # a value that is no string (unhashable, too) is the same typed error, not a TypeError
    for odd in (["viking://resources"], None, b"viking://resources"):
        with pytest.raises(InvalidURIError):
            u.normalize(odd, "default")  # type: ignore[arg-type]
