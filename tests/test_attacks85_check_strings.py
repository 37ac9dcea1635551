"""helper attacks85: ``check_strings`` hands back plain strings.

A ``str`` subclass passed the check with its own methods, and they ran inside the call:
``get_by_ids([S("viking://...")])`` with a ``startswith`` that raises escaped as a
``RuntimeError`` out of ``PassageIndex.get`` (LangChain ``get_by_ids``, LlamaIndex
``get_nodes``). Now each value is the plain string it holds, read by ``str``'s own methods.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from llama_index.vector_stores.treehop import TreehopVectorStore as LlamaStore
from treehop import Treehop
from treehop.errors import InvalidQueryError
from treehop.validation import check_strings

sys.path.insert(0, str(Path(__file__).resolve().parent / "langchain"))
import test_leftovers71d_store_source as same_index
from langchain_treehop import TreehopVectorStore

client = same_index.client
KEYS = "viking://resources/docs/keys.md"


class Lying(str):
    """A string whose methods raise or lie (a hostile caller's id type)."""

    def startswith(self, *args: object, **kwargs: object) -> bool:
        raise RuntimeError("lying startswith")

    def __hash__(self) -> int:
        raise RuntimeError("lying hash")

    def __eq__(self, other: object) -> bool:
        return True

    def __len__(self) -> int:
        return 0


class Plain(str):
    """An honest subclass (a ``StrEnum``-like id type)."""


@given(
    values=st.lists(
        st.tuples(st.text(max_size=30), st.sampled_from([str, Lying, Plain])), max_size=12
    )
)
def test_check_strings_answers_plain_strings_equal_to_the_values(
    values: list[tuple[str, type[str]]],
) -> None:
    given_ = [kind(text) for text, kind in values]
    out = check_strings(given_, "ids")
    assert [type(v) for v in out] == [str] * len(values)
    assert [str.__str__(v) for v in out] == [text for text, _ in values]


@given(bad=st.one_of(st.none(), st.integers(), st.binary(), st.lists(st.text(), max_size=2)))
def test_a_value_that_is_no_string_is_still_refused(bad: object) -> None:
    with pytest.raises(InvalidQueryError, match="ids must be strings"):
        check_strings(["viking://resources/a", bad], "ids")


def test_get_by_ids_with_a_lying_string_subclass_reads_the_node(client: Treehop) -> None:
    store = TreehopVectorStore(client=client)
    assert [d.id for d in store.get_by_ids([Lying(KEYS)])] == [KEYS]
    nodes = LlamaStore(client=client).get_nodes(node_ids=[Lying(KEYS)])
    assert [n.node_id for n in nodes] == [KEYS]
