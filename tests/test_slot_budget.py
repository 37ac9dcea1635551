"""How much text a slot shows: the ``slot_chars`` search option, and a question's passage
slot sized to the block ``assemble_context`` fills (issue 33 item 3: what a slot carries
beyond its hit is chosen by its gain at a fixed budget)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import treehop.context_assembly as ca
from treehop import Treehop
from treehop.context_assembly import CHARS_PER_BLOCK_TOKEN, context_limit, context_slot_chars
from treehop.errors import InvalidQueryError

R = "viking://resources"
QUESTION = "How does oauth token scopes refresh rotation work?"


def _guide(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    long = "\n\n".join(f"oauth token scopes refresh rotation detail {i}. " * 5 for i in range(16))
    other = "\n\n".join(f"kubernetes rollout readiness probes {i}. " * 6 for i in range(6))
    (root / "guide.md").write_text(f"# Guide\n\n## Tokens\n\n{long}\n\n## Deploying\n\n{other}")
    return root


@given(
    st.integers(1, 200_000),
    st.integers(1, 200_000),
    st.integers(0, 5_000),
    st.one_of(st.none(), st.integers(0, 20_000)),
)
def test_context_slot_chars_stays_between_the_two_extents_and_grows_with_the_budget(
    small: int, large: int, document_chars: int, question_chars: int | None
) -> None:
    small, large = sorted((small, large))
    a = context_slot_chars(small, document_chars, question_chars)
    b = context_slot_chars(large, document_chars, question_chars)
    assert a <= b  # a larger block never shows less of a passage
    if question_chars is None:
        assert a == b == document_chars
        return
    assert b <= question_chars  # never more than find() alone shows
    assert a >= min(document_chars, question_chars)  # never less than a document slot
    if CHARS_PER_BLOCK_TOKEN * large >= question_chars:
        assert b == question_chars


def test_the_defaults_give_a_question_two_thousand_chars_at_1000_tokens_and_3000_at_2000() -> None:
    assert context_slot_chars(500, 2000, 3000) == 2000
    assert context_slot_chars(1000, 2000, 3000) == 2000
    assert context_slot_chars(1250, 2000, 3000) == 2500
    assert context_slot_chars(2000, 2000, 3000) == 3000


def test_slot_chars_option_sets_how_much_a_slot_shows(bow, tmp_path: Path) -> None:
    with Treehop(embedder=bow, tagger=None, chunk_chars=300) as th:
        th.add_resource(_guide(tmp_path), target_uri=f"{R}/docs")
        default = th.find(QUESTION, limit=3).resources[0]
        assert 2000 < len(default.slot_text) <= 3000  # the config's question extent
        for chars in (0, 800, 2000):
            top = th.find(QUESTION, limit=3, slot_chars=chars).resources[0]
            if chars == 0:
                assert top.slot_text == top.content  # the face alone
            else:
                assert len(top.content) < len(top.slot_text) <= chars
        # a keyword query's document slot takes the option too
        kw = th.find("oauth token scopes refresh rotation", limit=3, slot_chars=800)
        assert len(kw.resources[0].slot_text) <= 800


@pytest.mark.parametrize("bad", [-1, 20_001, 1.5, "2000", True])
def test_a_bad_slot_chars_is_refused_before_any_work(bow, tmp_path: Path, bad: object) -> None:
    with Treehop(embedder=bow, tagger=None) as th:
        calls_before = bow.calls if hasattr(bow, "calls") else None
        with pytest.raises(InvalidQueryError, match="slot_chars"):
            th.find(QUESTION, slot_chars=bad)  # type: ignore[arg-type]
        with pytest.raises(InvalidQueryError, match="slot_chars"):
            th.assemble_context(QUESTION, max_tokens=500, slot_chars=bad)
        if calls_before is not None:
            assert bow.calls == calls_before


def test_assemble_context_sizes_a_question_slot_to_its_block(
    bow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Inside a 1,000-token block a question's passage slot shows what
    ``context_slot_chars`` allows (2,000 characters), not find()'s 3,000: the block equals
    the one built from an explicitly sized find(), and differs from an unsized one."""
    # every chunk of the guide's section repeats its heading path; said once
    # (``HEADINGS_ONCE``) the whole section fits 1,000 tokens both ways, and the two
    # extents could no longer be told apart by the blocks
    monkeypatch.setattr(ca, "HEADINGS_ONCE", False)
    with Treehop(embedder=bow, tagger=None, chunk_chars=300) as th:
        th.add_resource(_guide(tmp_path), target_uri=f"{R}/docs")
        scope = f"{R}/docs"
        for budget in (1000, 2000):
            limit = context_limit(budget)
            chars = context_slot_chars(
                budget, th.config.document_context_chars, th.config.question_context_chars
            )
            block = th.assemble_context(QUESTION, max_tokens=budget, target_uri=scope)
            sized = th.find(QUESTION, limit=limit, target_uri=scope, slot_chars=chars)
            unsized = th.find(QUESTION, limit=limit, target_uri=scope)
            assert block.text == th.assemble_context(sized, max_tokens=budget).text
            if chars < th.config.question_context_chars:
                assert block.text != th.assemble_context(unsized, max_tokens=budget).text
            else:
                assert block.text == th.assemble_context(unsized, max_tokens=budget).text
        # a caller's own slot_chars wins over the budget's
        mine = th.assemble_context(QUESTION, max_tokens=1000, target_uri=scope, slot_chars=900)
        explicit = th.find(QUESTION, limit=10, target_uri=scope, slot_chars=900)
        assert mine.text == th.assemble_context(explicit, max_tokens=1000).text


def test_a_keyword_query_keeps_the_document_extent_inside_a_block(bow, tmp_path: Path) -> None:
    """Only question-shaped queries over documents are sized by the block: a keyword query's
    block is the one its plain find() gives."""
    with Treehop(embedder=bow, tagger=None, chunk_chars=300) as th:
        th.add_resource(_guide(tmp_path), target_uri=f"{R}/docs")
        keywords = "oauth token scopes refresh rotation"
        for budget in (1000, 3000):
            block = th.assemble_context(keywords, max_tokens=budget, target_uri=f"{R}/docs")
            plain = th.find(keywords, limit=context_limit(budget), target_uri=f"{R}/docs")
            assert block.text == th.assemble_context(plain, max_tokens=budget).text


@pytest.mark.parametrize("name", ["context_tokens", "bogus", "max_tokens_"])
def test_assemble_context_refuses_an_unknown_find_argument(bow, name: str) -> None:
    """A name that is no ``find()`` argument (``context_tokens`` is internal) is a typed
    error, never Python's TypeError from the call underneath."""
    with Treehop(embedder=bow, tagger=None) as th, pytest.raises(InvalidQueryError, match=name):
        th.assemble_context(QUESTION, max_tokens=500, **{name: 5})
