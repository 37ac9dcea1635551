"""Helper attacks52's adversarial pass (see bench/README.md, "Adversarial pass (helper
attacks52)"): hostile input to the memory write path, the conversation lock, the few-document
passage slots, the slot stop rule and the session window."""

from __future__ import annotations

from pathlib import Path

import pytest

from treehop import Treehop
from treehop import vikingdb_knowledge as vk
from treehop.errors import InvalidQueryError, InvalidURIError, TreehopError

from treehop_test_doubles import BagOfWordsEmbedder


def _client(tmp_path: Path, **kw: object) -> Treehop:
    return Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None, **kw)  # type: ignore[arg-type]


def _uris(c: Treehop) -> list[str]:
    return [n.uri for n in c.store.iter_nodes()]  # type: ignore[attr-defined]


# ------------------------------------------------------------- 1. an id's trailing newline
# ``re.match(r"^...$")`` lets one "\n" follow the match (``$`` matches before a final
# newline): ids checked that way took a trailing newline into URIs and state file names.
@pytest.mark.parametrize("field", ["session_id", "conversation_id"])
def test_add_messages_refuses_an_id_with_a_trailing_newline(tmp_path: Path, field: str) -> None:
    c = _client(tmp_path)
    try:
        with pytest.raises(InvalidQueryError):
            c.add_messages([{"content": "hello there"}], **{field: "s1\n"})  # type: ignore[arg-type]
        assert not [u for u in _uris(c) if "\n" in u]
        with pytest.raises(InvalidQueryError):
            c.remember("a note", name="n1\n")
        with pytest.raises(InvalidQueryError):
            c.remember("a note", speaker="Ann\n")
    finally:
        c.close()


def test_a_user_name_with_a_trailing_newline_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidURIError):
        _client(tmp_path, user="bob\n")


def test_a_context_session_with_a_trailing_newline_is_refused(tmp_path: Path) -> None:
    c = _client(tmp_path)
    try:
        c.add_messages([{"content": "hello there"}])
        with pytest.raises(InvalidQueryError):
            c.assemble_context("hello", session_id="x\n", max_tokens=100)
        assert not [p for p in (tmp_path / "idx").rglob("*") if "\n" in p.name]
    finally:
        c.close()


def test_service_ids_with_a_trailing_newline_are_encoded() -> None:
    assert vk._unsegment(vk._segment("doc1\n")) == "doc1\n"
    assert "\n" not in vk._segment("doc1\n")


def test_typed_errors_only(tmp_path: Path) -> None:
    assert issubclass(InvalidURIError, TreehopError)
