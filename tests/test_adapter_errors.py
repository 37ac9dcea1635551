"""Only typed errors escape the adapters (issue 36): hypothesis drives the public calls of the
LangGraph store, the LangChain vector store and tools, the LlamaIndex vector store and the MCP
server's tools with hostile arguments (wrong types, lone surrogates, NUL, ``.`` in namespace
labels, odd limits and filters). A call may succeed or raise; what it raises must be a
:class:`~treehop.errors.TreehopError` (where the framework has its own error type, the class
raised is both: ``InvalidNamespaceError`` for LangGraph namespaces, ``ToolException`` for
LangChain tools). MCP tools answer an error result (``isError``), never a crash.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from treehop import Treehop
from treehop.errors import TreehopError

sys.path.insert(0, str(Path(__file__).resolve().parent / "langchain"))

from lc_helpers import WordHashEmbeddings

FUZZ = settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

text = st.text(st.characters(codec=None, exclude_categories=()), max_size=12)
hostile_text = st.one_of(
    text,
    st.sampled_from(["a.b", ".", "", "\x00", "\ud800", "x\udfffy", "..", "~", "@", "a/b", " "]),
)
anything = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True),
    hostile_text,
    st.lists(hostile_text, max_size=3),
    st.dictionaries(hostile_text, st.one_of(hostile_text, st.integers()), max_size=3),
)
namespace = st.one_of(st.tuples(hostile_text), st.tuples(hostile_text, hostile_text), anything)
value = st.one_of(
    st.dictionaries(hostile_text, st.one_of(hostile_text, st.integers(), st.none()), max_size=3),
    anything,
)


def _only_typed(call: Callable[[], Any], *also: type[BaseException]) -> None:
    try:
        call()
    except TreehopError:
        pass
    except also:
        pass


@pytest.fixture(scope="module")
def lc_client() -> Iterator[Treehop]:
    from langchain_treehop import LangChainEmbedder

    client = Treehop(None, embedder=LangChainEmbedder(WordHashEmbeddings()), tagger=None)
    client.add_resource("pasta in berlin", target_uri="viking://resources/notes/a", is_text=True)
    yield client
    client.close()


# ---------------------------------------------------------------------- LangGraph store
@pytest.fixture(scope="module")
def graph_store(lc_client: Treehop) -> Any:
    from langchain_treehop import TreehopStore

    store = TreehopStore(lc_client)
    store.put(("users", "u1"), "diet", {"text": "likes pasta", "n": 2})
    return store


def test_the_reported_store_failures_are_typed(graph_store: Any) -> None:
    from langgraph.store.base import InvalidNamespaceError

    from treehop.errors import InvalidQueryError

    with pytest.raises(InvalidQueryError):
        graph_store.search(("users",), limit="5")
    with pytest.raises(InvalidQueryError):
        graph_store.search(("users",), filter=1)
    with pytest.raises(InvalidQueryError):
        graph_store.put(("users",), "k\ud800", {"text": "x"})
    with pytest.raises(InvalidQueryError):
        graph_store.put(("users",), "k", {"text": "lone \udfff"})
    with pytest.raises(InvalidQueryError):
        graph_store.get(("u\ud800",), "k")
    for call in (
        lambda: graph_store.put(("a.b",), "k", {"text": "x"}),
        lambda: graph_store.get(("a.b",), "k"),
        lambda: graph_store.search(("a.b",)),
    ):
        with pytest.raises(TreehopError) as info:
            call()
        assert isinstance(info.value, InvalidNamespaceError)  # LangGraph's own type, too
    assert graph_store.get(("users", "u1"), "diet").value["n"] == 2  # unharmed


@FUZZ
@given(
    ns=namespace,
    key=st.one_of(hostile_text, anything),
    val=value,
    query=st.one_of(st.none(), hostile_text, anything),
    limit=st.one_of(st.integers(-3, 12), anything),
    offset=st.one_of(st.integers(-3, 5), anything),
    filt=st.one_of(st.none(), value),
)
def test_langgraph_store_calls_raise_only_typed_errors(
    graph_store: Any,
    ns: Any,
    key: Any,
    val: Any,
    query: Any,
    limit: Any,
    offset: Any,
    filt: Any,
) -> None:
    _only_typed(lambda: graph_store.put(ns, key, val))
    _only_typed(lambda: graph_store.get(ns, key))
    _only_typed(
        lambda: graph_store.search(ns, query=query, filter=filt, limit=limit, offset=offset)
    )
    _only_typed(lambda: graph_store.list_namespaces(prefix=ns, limit=limit, offset=offset))
    _only_typed(lambda: graph_store.delete(ns, key))
    _only_typed(lambda: asyncio.run(graph_store.aget(ns, key)))
    assert graph_store.get(("users", "u1"), "diet").value["n"] == 2


# ---------------------------------------------------------------------- LangChain
@pytest.fixture(scope="module")
def lc_vectorstore() -> Any:
    from langchain_treehop import TreehopVectorStore

    store = TreehopVectorStore(embedding=WordHashEmbeddings(), tagger=None)
    store.add_texts(["pasta in berlin", "cats like tea"], ids=["p1", "p2"])
    return store


@FUZZ
@given(
    texts=st.one_of(st.lists(hostile_text, max_size=3), anything),
    metadatas=st.one_of(st.none(), st.lists(value, max_size=3), anything),
    ids=st.one_of(st.none(), st.lists(st.one_of(hostile_text, anything), max_size=3), anything),
    query=st.one_of(hostile_text, anything),
    k=st.one_of(st.integers(-2, 8), anything),
    filt=st.one_of(st.none(), value),
)
def test_langchain_vectorstore_calls_raise_only_typed_errors(
    lc_vectorstore: Any, texts: Any, metadatas: Any, ids: Any, query: Any, k: Any, filt: Any
) -> None:
    vs = lc_vectorstore
    _only_typed(lambda: vs.add_texts(texts, metadatas, ids=ids))
    _only_typed(lambda: vs.similarity_search(query, k=k, filter=filt))
    _only_typed(lambda: vs.similarity_search_with_score(query, k=k))
    _only_typed(lambda: vs.similarity_search_by_vector(query, k=k))
    _only_typed(lambda: vs.max_marginal_relevance_search(query, k=k, fetch_k=k))
    _only_typed(lambda: vs.max_marginal_relevance_search("tea", lambda_mult=k))
    _only_typed(lambda: vs.add_documents(texts))  # not Documents: typed before LangChain reads .id
    _only_typed(lambda: vs.get_by_ids(ids))
    _only_typed(lambda: vs.delete(ids))  # (``delete(None)`` is refused: ``clear()`` empties)
    assert [d.page_content for d in vs.get_by_ids(["p2"])] == ["cats like tea"]


@FUZZ
@given(uri=st.one_of(hostile_text, anything), query=st.one_of(hostile_text, anything))
def test_langchain_tools_raise_only_typed_tool_errors(
    lc_client: Treehop, uri: Any, query: Any
) -> None:
    from langchain_core.tools import ToolException
    from pydantic import ValidationError

    from langchain_treehop import create_treehop_tools

    strict = {t.name: t for t in create_treehop_tools(lc_client, handle_tool_error=False)}
    handled = {t.name: t for t in create_treehop_tools(lc_client)}
    for name, args, arg in (
        ("treehop_ls", {"uri": uri}, uri),
        ("treehop_read", {"uri": uri}, uri),
        ("treehop_find", {"query": query}, query),
    ):
        try:
            strict[name].invoke(args)
        except ToolException as exc:
            assert isinstance(exc, TreehopError)  # the framework's type, and typed
        except ValidationError:
            # LangChain's own check of the arguments against the tool's schema (a string):
            # raised only for an argument that is not a string
            assert not isinstance(arg, str)
        # with handle_tool_error (the default), every failure is a message for the model
        out = handled[name].invoke(args)
        assert isinstance(out, str)


# ---------------------------------------------------------------------- LlamaIndex
@pytest.fixture(scope="module")
def li_vectorstore() -> Any:
    from llama_index.core.schema import TextNode

    from llama_index.retrievers.treehop import LlamaIndexEmbedder
    from llama_index.vector_stores.treehop import TreehopVectorStore

    sys.path.insert(0, str(Path(__file__).resolve().parent / "llamaindex"))
    from li_helpers import WordHashEmbedding

    client = Treehop(embedder=LlamaIndexEmbedder(WordHashEmbedding()), tagger=None)
    store = TreehopVectorStore(client)
    store.add([TextNode(text="pasta in berlin", id_="n1")])
    return store


@FUZZ
@given(
    query_str=st.one_of(st.none(), hostile_text, anything),
    emb=st.one_of(st.none(), st.lists(st.floats(allow_nan=True), max_size=9), anything),
    k=st.one_of(st.integers(-2, 8), anything),
    ref=st.one_of(hostile_text, anything),
    ids=st.one_of(st.none(), st.lists(st.one_of(hostile_text, anything), max_size=3), anything),
)
def test_llamaindex_vectorstore_calls_raise_only_typed_errors(
    li_vectorstore: Any, query_str: Any, emb: Any, k: Any, ref: Any, ids: Any
) -> None:
    from llama_index.core.vector_stores.types import VectorStoreQuery

    vs = li_vectorstore

    def query() -> None:
        q = VectorStoreQuery(query_str=query_str, query_embedding=emb, similarity_top_k=k)
        vs.query(q)

    _only_typed(query)
    for field in ("filters", "mode", "node_ids", "doc_ids", "alpha"):  # a plain dataclass
        q = VectorStoreQuery(query_str="pasta", similarity_top_k=2)
        setattr(q, field, ref)
        _only_typed(lambda q=q: vs.query(q))
    _only_typed(lambda: vs.add(ids))
    _only_typed(lambda: vs.delete(ref))
    _only_typed(lambda: vs.get_nodes(node_ids=ids))
    _only_typed(lambda: vs.delete_nodes(node_ids=ids))
    assert [n.get_content() for n in vs.get_nodes(node_ids=["n1"])] == ["pasta in berlin"]


def test_llamaindex_vectorstore_reported_failures_are_typed(li_vectorstore: Any) -> None:
    """Found by a random-call attack on the merged stop-33 code: a ``VectorStoreQuery`` (a
    plain dataclass) with a string for ``filters`` or ``mode``, and ``add`` of non-nodes,
    raised AttributeError / TypeError deep in the search or the ingest."""
    from llama_index.core.vector_stores.types import VectorStoreQuery

    from treehop.errors import InvalidQueryError

    vs = li_vectorstore
    for field, value, message in [
        ("filters", "lang == en", "filters must be MetadataFilters"),
        # (a string naming a mode is that mode, as in LlamaIndex's stores: test_usage58)
        ("mode", "mmr ", "mode must be a VectorStoreQueryMode"),
        ("doc_ids", 5, "doc_ids"),
        ("query_str", 5, "query_str must be a string"),
    ]:
        q = VectorStoreQuery(query_str="pasta", similarity_top_k=2)
        setattr(q, field, value)
        with pytest.raises(InvalidQueryError, match=message):
            vs.query(q)
    with pytest.raises(InvalidQueryError, match="LlamaIndex nodes"):
        vs.add(["pasta in berlin"])
    with pytest.raises(InvalidQueryError, match="LlamaIndex nodes"):
        vs.add(5)
    q = VectorStoreQuery(query_str="pasta berlin", similarity_top_k=1)
    assert [n.get_content() for n in vs.query(q).nodes or []] == ["pasta in berlin"]


# ---------------------------------------------------------------------- MCP
@pytest.fixture(scope="module")
def mcp_server(lc_client: Treehop) -> Any:
    from treehop.mcp_server import build_server

    return build_server(lc_client.aio)


@FUZZ
@example(tool="ls", args={"uri": "0"})  # (attacks55: the SDK's wrapping failed the old check)
@example(tool="read", args={"uri": "viking://resources/none"})
@given(
    tool=st.sampled_from(["find", "search", "context", "ls", "read", "tree", "add_memory"]),
    args=st.dictionaries(
        st.sampled_from(
            ["query", "uri", "target_uri", "limit", "depth", "max_chars", "text", "since"]
        ),
        anything,
        max_size=4,
    ),
)
def test_mcp_tools_answer_errors_as_tool_errors(
    lc_client: Treehop, mcp_server: Any, tool: str, args: dict[str, Any]
) -> None:
    import pydantic
    from mcp.server.mcpserver.exceptions import ToolError

    async def call() -> None:
        try:
            await mcp_server.call_tool(tool, args)
        except ToolError as exc:
            # The SDK wraps the ToolError our guard raises in its own ("Error executing tool
            # ls: ..."): follow the chain of ToolErrors to what raised first. A treehop error,
            # or the SDK's own argument validation: never an internal crash.
            cause: BaseException | None = exc
            while isinstance(cause, ToolError) and cause.__cause__ is not None:
                cause = cause.__cause__
            assert isinstance(cause, TreehopError | pydantic.ValidationError) or (
                isinstance(cause, ToolError) and "validation" in str(cause)
            ), repr(cause)

    lc_client.run(call())


def test_langchain_vectorstore_reported_failures_are_typed(lc_vectorstore: Any) -> None:
    """Found by a random-call attack on the merged stop-33 code: each raised a plain Python error
    (``AttributeError: 'str' object has no attribute 'id'``, ``TypeError`` comparing a float with
    a string, a list query reaching the embedder)."""
    from treehop.errors import InvalidQueryError

    vs = lc_vectorstore
    with pytest.raises(InvalidQueryError, match="Document"):
        vs.add_documents(["not a document"])
    with pytest.raises(InvalidQueryError, match="lambda_mult"):
        vs.max_marginal_relevance_search("tea", lambda_mult="x")
    with pytest.raises(InvalidQueryError, match="query"):
        vs.max_marginal_relevance_search(["tea"])
    with pytest.raises(InvalidQueryError, match="query"):
        asyncio.run(vs.amax_marginal_relevance_search(5))
    with pytest.raises(InvalidQueryError, match="k must be"):
        vs.max_marginal_relevance_search("tea", k=[None])
    with pytest.raises(InvalidQueryError, match="target_uri"):
        vs.similarity_search("tea", target_uri=5)
    for texts, metas in ((["\ud800"], None), (["ok"], [{"k": "\udfff"}])):
        with pytest.raises(TreehopError, match="lone surrogate"):
            vs.add_texts(texts, metas)
    assert [d.page_content for d in vs.max_marginal_relevance_search("cats tea", k=1)] == [
        "cats like tea"
    ]
