"""A user's first hour, stop 61 (LangChain): a filter brought from ``InMemoryVectorStore``, and
``LangChainEmbedder(TreehopEmbeddings())``'s vector space.

LangChain's own in-memory store filters with a Python predicate
(``similarity_search(q, filter=lambda doc: ...)``); a user swapping ``TreehopVectorStore`` in
keeps the call. treehop's filters run inside the tree search (and in Milvus / VikingDB), where
a predicate cannot: the refusal must say so and show the dict to write, where it said only
"filter must be a dict, got function".
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.documents import Document
from langchain_core.vectorstores import InMemoryVectorStore

from langchain_treehop import (
    LangChainEmbedder,
    TreehopEmbeddings,
    TreehopRetriever,
    TreehopVectorStore,
)
from treehop import Treehop
from treehop.errors import EmbeddingError, InvalidFilterError, InvalidQueryError

from lc_helpers import WordHashEmbeddings
from treehop_test_doubles import BagOfWordsEmbedder, assert_one_vector_space

_DOCS = [
    Document("Backups run nightly.", metadata={"source": "ops.md", "start_index": 0}),
    Document("Keys rotate every 90 days.", metadata={"source": "sec.md", "start_index": 0}),
]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[TreehopVectorStore]:
    with Treehop(
        path=tmp_path / "ix", embedder=LangChainEmbedder(WordHashEmbeddings()), tagger=None
    ) as c:
        s = TreehopVectorStore(client=c)
        s.add_documents(_DOCS, ids=["b", "k"])
        yield s


def _predicate(doc: Document) -> bool:
    return bool(doc.metadata["source"] == "ops.md")


def test_the_reference_store_takes_a_predicate() -> None:
    """The call as the user wrote it against LangChain's own store (the control)."""
    ref = InMemoryVectorStore.from_documents(_DOCS, WordHashEmbeddings())
    assert [d.page_content for d in ref.similarity_search("backups", k=2, filter=_predicate)] == [
        "Backups run nightly."
    ]


@pytest.mark.parametrize(
    "call",
    [
        lambda s: s.similarity_search("backups", k=2, filter=_predicate),
        lambda s: s.similarity_search_with_score("backups", k=2, filter=lambda d: True),
        lambda s: s.max_marginal_relevance_search("backups", k=1, filter=_predicate),
        lambda s: s.as_retriever(search_kwargs={"filter": _predicate}).invoke("backups"),
    ],
)
def test_a_predicate_filter_is_refused_with_what_to_write(store: TreehopVectorStore, call) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InvalidFilterError) as err:
        call(store)
    msg = str(err.value)
    assert "callable" in msg and "InMemoryVectorStore" in msg
    assert '{"source": "a.md"}' in msg and "$in" in msg


def test_the_retriever_names_the_predicate_too(store: TreehopVectorStore) -> None:
    retriever = TreehopRetriever(client=store.client)
    with pytest.raises(InvalidQueryError, match="InMemoryVectorStore"):
        retriever.invoke("backups", filter=_predicate)


def test_other_non_dicts_show_the_dict_to_write(store: TreehopVectorStore) -> None:
    with pytest.raises(InvalidFilterError) as err:
        store.similarity_search("backups", k=1, filter="source == 'ops.md'")  # type: ignore[arg-type]
    assert str(err.value).endswith("got str") and '{"source": "a.md"}' in str(err.value)
    # the dict the message shows answers the predicate's question
    got = store.similarity_search("backups", k=2, filter={"source": "ops.md"})
    assert [d.id for d in got] == ["b"]


def test_langchain_embedder_of_treehop_embeddings_is_the_embedders_space(tmp_path: Path) -> None:
    """``LangChainEmbedder(TreehopEmbeddings(e))`` embeds with ``e``: one vector space, so
    the index it builds opens with ``e`` itself (``Treehop(path)``, the CLI, the MCP server
    use the default model) and the other way round; it stored ``langchain:TreehopEmbeddings:
    ...`` and each refused the other's index ("would mix vector spaces")."""
    embedder = BagOfWordsEmbedder()
    assert_one_vector_space(tmp_path, embedder, LangChainEmbedder(TreehopEmbeddings(embedder)))


def test_other_langchain_models_keep_their_own_space_name() -> None:
    assert LangChainEmbedder(WordHashEmbeddings()).name == "langchain:WordHashEmbeddings"
    named = LangChainEmbedder(TreehopEmbeddings(BagOfWordsEmbedder()), name="mine")
    assert named.name == "mine"  # an explicit name still wins


def test_an_index_stored_under_the_old_wrapper_name_still_opens(tmp_path: Path) -> None:
    """An index built before stored ``langchain:TreehopEmbeddings:<name>``: the same code
    still opens it (another model's index is still refused)."""
    embedder = BagOfWordsEmbedder()
    old = LangChainEmbedder(
        TreehopEmbeddings(embedder), name=f"langchain:TreehopEmbeddings:{embedder.name}"
    )
    with Treehop(path=tmp_path / "old", embedder=old, tagger=None) as c:
        c.add_resource("Backups run nightly.", name="ops")
    wrapped = LangChainEmbedder(TreehopEmbeddings(embedder))
    with Treehop(path=tmp_path / "old", embedder=wrapped, tagger=None) as c:
        assert [m.uri for m in c.find("backups").contexts()] == ["viking://resources/ops"]
    with pytest.raises(EmbeddingError, match="mix vector spaces"):
        Treehop(
            path=tmp_path / "old",
            embedder=LangChainEmbedder(WordHashEmbeddings()),
            tagger=None,
        )


def test_the_retriever_takes_its_client_first(store: TreehopVectorStore) -> None:
    """``TreehopRetriever(client, k=1)`` as LlamaIndex's ``TreehopRetriever(client, ...)`` and
    ``TreehopVectorStore(client)`` take it; it was pydantic's bare ``TypeError: BaseModel.
    __init__() takes 1 positional argument but 2 were given``."""
    client = store.client
    first = TreehopRetriever(client, k=1, content_field="content")
    by_name = TreehopRetriever(client=client, k=1, content_field="content")
    assert first.client is client and first.k == 1
    assert [d.page_content for d in first.invoke("backups")] == [
        d.page_content for d in by_name.invoke("backups")
    ]
    with pytest.raises(InvalidQueryError, match="client is given twice"):
        TreehopRetriever(client, client=client)
