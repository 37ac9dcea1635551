"""Metadata that is not JSON but equals a JSON value is stored as that value (helper
leftovers65c).

A program hands a vector store a ``pathlib.Path`` as ``source``, numpy numbers (a pandas
column, a score array's item) or a ``datetime.date``; LangChain's ``InMemoryVectorStore``
and LlamaIndex's ``SimpleVectorStore`` keep them. treehop stores metadata as JSON: the
LangChain store refused each with an ``IngestError`` naming the type, and the LlamaIndex
store let a raw ``PydanticSerializationError`` escape for a numpy number. Now
``kit.plain_metadata`` stores numpy booleans / integers / ``float16``-``float64`` as the
Python values ``.item()`` gives (exact), a path as ``str(path)`` and a date as its ISO text
(what LlamaIndex's own ``node_to_metadata_dict`` stores for a path or a date), nested too;
they read back equal to what was given. Arrays, ``longdouble`` and NaN stay refused, as
``IngestError``s naming the type.

Checked against the real stores (``get_by_ids`` / ``get_nodes`` read what was stored); the
expected values are built beside the given ones by the strategy, not by the converter.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.documents import Document
from llama_index.core import Document as LiDocument
from llama_index.core.schema import TextNode

from langchain_treehop import TreehopVectorStore as LangChainStore
from langchain_treehop import add_documents as lc_add
from llama_index.retrievers.treehop import TreehopEmbedding
from llama_index.retrievers.treehop import add_documents as li_add
from llama_index.vector_stores.treehop import TreehopVectorStore as LlamaIndexStore
from treehop import Treehop
from treehop import integration_kit as kit
from treehop.errors import IngestError

from treehop_test_doubles import BagOfWordsEmbedder

_TEXT = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=12)
_I64 = st.integers(-(2**63), 2**63 - 1)


def _pair(given: Any, expected: Any) -> tuple[Any, Any]:
    return given, expected


_LEAVES = st.one_of(
    _I64.map(lambda i: _pair(np.int64(i), i)),
    st.integers(-(2**31), 2**31 - 1).map(lambda i: _pair(np.int32(i), i)),
    st.integers(0, 255).map(lambda i: _pair(np.uint8(i), i)),
    st.floats(allow_nan=False, allow_infinity=False, width=32).map(
        lambda f: _pair(np.float32(f), float(f))
    ),
    st.floats(allow_nan=False, allow_infinity=False, width=16).map(
        lambda f: _pair(np.float16(f), float(f))
    ),
    st.booleans().map(lambda b: _pair(np.bool_(b), b)),
    st.dates().map(lambda d: _pair(d, d.isoformat())),
    st.from_regex(r"[a-z0-9_ -]{0,12}", fullmatch=True).map(
        lambda t: _pair(PurePosixPath("/docs", t), "/docs" + ("/" + t if t else ""))
    ),
    # plain JSON passes as given
    _TEXT.map(lambda t: _pair(t, t)),
    _I64.map(lambda i: _pair(i, i)),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda f: _pair(f, f)),
    st.none().map(lambda n: _pair(n, n)),
)


def _lists(children: st.SearchStrategy[tuple[Any, Any]]) -> st.SearchStrategy[tuple[Any, Any]]:
    as_list = st.lists(children, max_size=4).map(
        lambda xs: _pair([g for g, _ in xs], [e for _, e in xs])
    )
    as_dict = st.dictionaries(_TEXT, children, max_size=4).map(
        lambda d: _pair({k: g for k, (g, _) in d.items()}, {k: e for k, (_, e) in d.items()})
    )
    return as_list | as_dict


_VALUES = st.recursive(_LEAVES, _lists, max_leaves=8)


@pytest.fixture(scope="module")
def lc_store() -> Iterator[LangChainStore]:
    store = LangChainStore(Treehop(embedder=BagOfWordsEmbedder(), tagger=None))
    yield store
    store.client.close()


@pytest.fixture(scope="module")
def li_store() -> Iterator[LlamaIndexStore]:
    store = LlamaIndexStore(embed_model=TreehopEmbedding(BagOfWordsEmbedder()), tagger=None)
    yield store
    store.close()


def _li_node(metadata: dict[str, Any], node_id: str = "doc") -> TextNode:
    node = TextNode(id_=node_id, text="hello world", metadata=metadata)
    node.embedding = TreehopEmbedding(BagOfWordsEmbedder()).get_text_embedding("hello world")
    return node


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(pair=_VALUES)
def test_langchain_store_keeps_the_json_value_equal_to_each(
    lc_store: LangChainStore, pair: tuple[Any, Any]
) -> None:
    value, expected = pair
    metadata = {"m": value}
    ids = lc_store.add_documents([Document("hello world", metadata=metadata)], ids=["doc"])
    assert lc_store.get_by_ids(ids)[0].metadata == {"m": expected}
    assert metadata == {"m": value}  # the caller's dict is its own


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(pair=_VALUES)
def test_llamaindex_store_keeps_the_json_value_equal_to_each(
    li_store: LlamaIndexStore, pair: tuple[Any, Any]
) -> None:
    value, expected = pair
    node = _li_node({"m": value})
    li_store.add([node])
    assert li_store.get_nodes(["doc"])[0].metadata == {"m": expected}
    assert node.metadata["m"] is value  # the caller's node keeps its own


@given(pair=_VALUES)
def test_plain_json_is_returned_as_given(pair: tuple[Any, Any]) -> None:
    """Nothing to convert (the expected side is plain JSON): the mapping itself comes back,
    not a copy (the stores' hot path adds nothing for metadata that is JSON already)."""
    _, expected = pair
    metadata = {"m": expected}
    assert kit.plain_metadata(metadata) is metadata


def test_the_values_a_user_hands_over_read_back_equal() -> None:
    """The three of the open item, by hand: each stored value turns back into the given one."""
    given_ = {
        "source": Path("/srv/docs/a.md"),
        "score": np.float32(0.1),
        "day": dt.date(2024, 1, 31),
    }
    with Treehop(embedder=BagOfWordsEmbedder(), tagger=None) as client:
        store = LangChainStore(client)
        ids = store.add_documents([Document("hello world", metadata=given_)])
        back = store.get_by_ids(ids)[0].metadata
    assert Path(back["source"]) == given_["source"]
    assert back["score"] == given_["score"] and isinstance(back["score"], float)
    assert dt.date.fromisoformat(back["day"]) == given_["day"]


@pytest.mark.parametrize(
    ("value", "named"),
    [
        # (an array of numbers is stored as its list since leftovers66b; one of complex
        # numbers has no JSON value)
        (np.array([1j, 2]), "complex128"),
        (np.longdouble(1.5), "longdouble"),
        (np.float32("nan"), "float32"),
        ([np.float32("inf")], "float32"),
    ],
)
def test_what_has_no_equal_json_value_is_refused_naming_it(
    li_store: LlamaIndexStore, lc_store: LangChainStore, value: Any, named: str
) -> None:
    """Refused before anything is written: the converted node ahead of it is not stored."""
    ahead = {"m": np.float32(1.0)}
    with pytest.raises(IngestError, match=named):
        li_store.add([_li_node(ahead, "ahead"), _li_node({"m": value}, "refused")])
    assert li_store.get_nodes(["ahead", "refused"]) == []
    docs = [Document("hello world", metadata=ahead), Document("hi", metadata={"m": value})]
    with pytest.raises(IngestError):
        lc_store.add_documents(docs, ids=["ahead", "refused"])
    assert lc_store.get_by_ids(["ahead", "refused"]) == []


@pytest.mark.parametrize("framework", ["langchain", "llamaindex"])
def test_the_tree_helpers_place_a_path_as_its_text(framework: str) -> None:
    """``add_documents`` (the tree-ingest helpers) place a document by its ``source`` /
    ``file_path``: a ``Path`` there lands where its text does, the numpy number and the date
    beside it read back as JSON (both were an ``IngestError`` naming the type)."""

    def add(client: Treehop, path: Any, **extra: Any) -> list[str]:
        if framework == "langchain":
            return lc_add(client, [Document("hello world", metadata={"source": path, **extra})])
        doc = LiDocument(text="hello world", metadata={"file_path": path, **extra})
        return li_add(client, [doc])

    with Treehop(embedder=BagOfWordsEmbedder(), tagger=None) as client:
        as_text = add(client, "guide/install.md")
    with Treehop(embedder=BagOfWordsEmbedder(), tagger=None) as client:
        as_path = add(client, Path("guide/install.md"), rank=np.int64(2), day=dt.date(2024, 1, 31))
        hit = client.find("hello world").resources[0]
    assert as_path == as_text
    assert hit.uri == as_text[0]
    assert {k: hit.metadata[k] for k in ("rank", "day")} == {"rank": 2, "day": "2024-01-31"}
