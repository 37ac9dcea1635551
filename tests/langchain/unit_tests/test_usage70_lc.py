"""A user's first hour, stop 62 (LangChain): ``store.as_retriever(k=1)``, and the agent's
``treehop_ls`` on a new index.

- ``as_retriever(k=1)`` (for ``search_kwargs={"k": 1}``, a common slip), ``filter=...`` or a
  misspelt ``search_kwarg=``: LangChain's ``VectorStoreRetriever`` ignores extra keywords
  (``extra="ignore"``), so the retriever answered 4 unfiltered documents in silence.
  ``InMemoryVectorStore`` does the same (kept here as the reference's behaviour).
- ``TreehopRetriever(client=th, mode="search", llm=chat_model)``: "llm only apply when the
  retriever opens the index itself (path=...); configure the client you pass instead",
  leaving the user to find ``LangChainChatLLM``; now it names how the client takes it.
- ``TreehopStore(th, index={"dims": 1536, "embed": "openai:text-embedding-3-small"})``
  (``InMemoryStore``'s arguments carried over): "index['dims'] is 1536, but the client's
  embedder ... gives 384-dimensional vectors", without the way to use that model that the
  ``embed`` check's message gives.
- ``store.similarity_search(q, tags=["helm"])`` over documents added with
  ``metadata={"tags": [...]}``: "no stored node has tag(s) ['helm'] ... (none: add tags=...
  or use a tagger when indexing)"; the store keeps ``tags`` as metadata, which ``filter``
  reads: the message now says so.
- ``treehop_ls`` of ``viking://resources`` on a new index answered the agent "Nothing exists
  at viking://resources; list its parent directory with treehop_ls first": a root has no
  parent, and the hint looped.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.vectorstores import InMemoryVectorStore
from pydantic import ValidationError

from langchain_treehop import (
    LangChainChatLLM,
    TreehopEmbeddings,
    TreehopRetriever,
    TreehopStore,
    TreehopVectorStore,
    create_treehop_tools,
)
from treehop import Treehop
from treehop.errors import (
    EmbeddingError,
    InvalidFilterError,
    InvalidQueryError,
    UnknownArgumentError,
)

from treehop_test_doubles import BagOfWordsEmbedder

_DOCS = [
    Document(page_content=t, id=str(i), metadata={"n": i})
    for i, t in enumerate(
        [
            "Keys rotate every 90 days.",
            "Deploys roll back with helm rollback.",
            "Tokens are validated by the gateway.",
            "The cache is flushed nightly.",
            "Backups are copied off site.",
        ]
    )
]


@pytest.fixture
def client() -> Iterator[Treehop]:
    with Treehop(embedder=BagOfWordsEmbedder(), tagger=None) as c:
        yield c


@pytest.fixture
def store(client: Treehop) -> TreehopVectorStore:
    s = TreehopVectorStore(client)
    s.add_documents(_DOCS)
    return s


@pytest.mark.parametrize(
    ("given", "goes"),
    [
        ({"k": 1}, "search_kwargs={'k': ...}"),
        ({"top_k": 1}, "search_kwargs={'k': ...}"),
        ({"filter": {"n": 1}}, "search_kwargs={'filter': ...}"),
        ({"fetch_k": 5}, "search_kwargs={'fetch_k': ...}"),
        ({"score_threshold": 0.2}, "search_kwargs={'score_threshold': ...}"),
        ({"search_kwarg": {"k": 1}}, "did you mean 'search_kwargs'?"),
        ({"serch_type": "mmr"}, "did you mean 'search_type'?"),
    ],
)
def test_a_search_keyword_given_to_as_retriever_says_where_it_goes(
    store: TreehopVectorStore, given: dict[str, object], goes: str
) -> None:
    with pytest.raises(UnknownArgumentError) as info:
        store.as_retriever(**given)
    assert goes in str(info.value)
    assert isinstance(info.value, TypeError) and isinstance(info.value, InvalidQueryError)
    assert "It takes name, tags, metadata, search_type, search_kwargs" in str(info.value)


def test_a_secret_looking_value_is_not_echoed(store: TreehopVectorStore) -> None:
    with pytest.raises(UnknownArgumentError) as info:
        store.as_retriever(api_key="sk-live-abc123")
    assert "sk-live" not in str(info.value)


def test_the_retrievers_own_fields_still_work(store: TreehopVectorStore) -> None:
    # (control: every keyword VectorStoreRetriever takes)
    r = store.as_retriever(
        search_type="mmr", search_kwargs={"k": 2}, tags=["kb"], metadata={"m": 1}, name="kb"
    )
    assert (r.search_type, r.search_kwargs, r.tags, r.metadata, r.name) == (
        "mmr",
        {"k": 2},
        ["kb"],
        {"m": 1},
        "kb",
    )
    assert len(r.invoke("keys rotate")) == 2
    assert len(store.as_retriever().invoke("keys rotate")) == 4  # LangChain's default k


def test_the_reference_store_ignores_k_in_silence() -> None:
    # (control: what a user of InMemoryVectorStore gets; unchanged there)
    ref = InMemoryVectorStore.from_documents(_DOCS, TreehopEmbeddings(BagOfWordsEmbedder()))
    assert len(ref.as_retriever(k=1).invoke("keys rotate")) == 4


def test_ls_of_an_empty_root_tells_the_agent_it_is_empty(client: Treehop) -> None:
    [ls] = create_treehop_tools(client, include=["ls"])
    for args in ({"uri": "viking://resources"}, {}, {"uri": "viking://~/skills"}):
        said = ls.invoke(args)
        assert "list its parent directory" not in said  # (the hint looped on a root)
        assert "is an empty directory" in said
    said = ls.invoke({"uri": "viking://resources/docs"})  # below a root: still not found
    assert "NotFoundError" in said


_PLAN = (
    '{"queries": [{"query": "helm rollback", "context_type": "resource", "intent": "find", '
    '"priority": 1}], "reasoning": "a how-to"}'
)


def test_an_llm_beside_a_client_says_how_the_client_takes_it(client: Treehop) -> None:
    with pytest.raises(ValidationError) as info:
        TreehopRetriever(client=client, mode="search", llm=FakeListChatModel(responses=["x"]))
    said = str(info.value)
    assert "llm applies only when the retriever opens the index itself" in said
    assert "Treehop(path, llm=LangChainChatLLM(llm))" in said
    # ... and that spelling plans the search with the chat model
    planner = LangChainChatLLM(FakeListChatModel(responses=[_PLAN] * 3))
    with Treehop(embedder=BagOfWordsEmbedder(), tagger=None, llm=planner) as th:
        TreehopVectorStore(th).add_documents(_DOCS)
        docs = TreehopRetriever(client=th, mode="search", k=2).invoke("undo a bad release")
    assert docs and {d.metadata["query"] for d in docs} == {"helm rollback"}


def test_a_store_index_of_other_dims_says_how_to_use_that_model(client: Treehop) -> None:
    index = {"dims": 1536, "embed": "openai:text-embedding-3-small", "fields": ["text"]}
    with pytest.raises(EmbeddingError) as info:
        TreehopStore(client, index=index)
    said = str(info.value)
    assert "index['dims'] is 1536" in said and "gives 64-dimensional vectors" in said
    assert "Treehop(path, embedder=LangChainEmbedder(your_embeddings))" in said
    # (control: the client's own dimension is taken)
    assert TreehopStore(client, index={"dims": 64, "fields": ["text"]}).index_fields == ["text"]


def test_a_tag_filter_over_tags_metadata_points_at_the_metadata_filter(client: Treehop) -> None:
    store = TreehopVectorStore(client)
    store.add_documents(
        [
            Document(page_content="Deploys roll back with helm.", metadata={"tags": ["helm"]}),
            Document(page_content="Keys rotate every 90 days.", metadata={"tags": ["keys"]}),
        ]
    )
    with pytest.raises(InvalidFilterError) as info:
        store.similarity_search("deploys", k=1, tags=["helm"])
    assert "filter it as metadata ({'tags': ...} in the metadata filter)" in str(info.value)
    [doc] = store.similarity_search("deploys", k=1, filter={"tags": "helm"})  # what it says
    assert doc.metadata == {"tags": ["helm"]}


def test_without_tags_metadata_the_tag_message_is_as_before(store: TreehopVectorStore) -> None:
    # (control: no 'tags' field stored, no such sentence)
    with pytest.raises(InvalidFilterError) as info:
        store.similarity_search("deploys", k=1, tags=["helm"])
    assert str(info.value).endswith("(none: add tags=... or use a tagger when indexing)")
