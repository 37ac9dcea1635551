"""Framework users' first scripts, round six (bench/README.md, "(helper usage65)"): what a
LangChain / LangGraph / LlamaIndex user's first scripts still tripped on after usage63-64,
each checked against the framework's own habit. Each test fails on 0151fe9 (main before this
round)."""

from __future__ import annotations

import copy
import pickle
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.documents import Document
from langgraph.store.memory import InMemoryStore

import treehop
from langchain_treehop import TreehopRetriever, TreehopStore, TreehopVectorStore
from treehop import (
    AsyncTreehop,
    InvalidFilterError,
    InvalidQueryError,
    SessionNotFoundError,
    Treehop,
    TreehopError,
    UnsupportedUseError,
)

from treehop_test_doubles import BagOfWordsEmbedder, indexed_kb


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Treehop]:
    with indexed_kb(tmp_path) as th:
        yield th


def test_langgraph_store_string_ranges_compare_as_strings(tmp_path: Path) -> None:
    # 0151fe9: docs/agents.md tells users to store a datetime as its ISO text (values are
    # JSON), and a range filter on it matched nothing, silently: the comparison went through
    # float() and answered False for every non-number (InMemoryStore raises ValueError there;
    # LangGraph's Postgres store compares JSON strings as strings)
    values = {
        "a": {"at": "2024-03-01T09:00:00+00:00", "n": "10", "kind": "pref"},
        "b": {"at": "2024-05-02T10:30:00+00:00", "n": "9", "kind": "fact"},
        "c": {"at": "2024-07-15T08:00:00+00:00", "n": 3, "kind": "fact"},
    }
    store = TreehopStore(Treehop(embedder=BagOfWordsEmbedder(), tagger=None))
    reference = InMemoryStore()
    for key, value in values.items():
        store.put(("u",), key, value)
        reference.put(("u",), key, value)

    def keys(filter_: dict[str, object], query: str | None = None) -> list[str]:
        return sorted(i.key for i in store.search(("u",), query=query, filter=filter_))

    assert keys({"at": {"$gte": "2024-05-01"}}) == ["b", "c"]
    assert keys({"at": {"$gte": "2024-05-01", "$lt": "2024-06-01"}}) == ["b"]
    assert keys({"at": {"$lt": "2024-05-01"}}, query="pref") == ["a"]
    assert keys({"kind": {"$gt": "fact"}}) == ["a"]
    with pytest.raises(ValueError, match="convert string to float"):
        reference.search(("u",), filter={"at": {"$gte": "2024-05-01"}})
    # numbers and numeric strings still compare as numbers, exactly as InMemoryStore does
    # ("10" > "9" as numbers, not as text), and a string never matches a number's range
    for numeric in ({"n": {"$gt": "9"}}, {"n": {"$lte": 9}}, {"n": {"$gte": 3, "$lt": "10"}}):
        want = sorted(i.key for i in reference.search(("u",), filter=numeric))
        assert keys(numeric) == want
    assert keys({"n": {"$gt": "9"}}) == ["a"]
    assert keys({"kind": {"$gt": 1}}) == []


def test_langchain_filters_take_exists_and_between(tmp_path: Path) -> None:
    # 0151fe9: PGVector's / Pinecone's `$exists` and PGVector's `$between` were
    # "unknown operator" errors, sending the user to treehop's DSL for one condition
    store = TreehopVectorStore(Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder()))
    store.add_texts(
        ["keys doc", "ops doc", "null doc", "far doc"],
        [{"owner": "x", "n": 1}, {"n": 5}, {"owner": None, "n": 9}, {"owner": "y", "n": 20}],
        ids=["a", "b", "c", "d"],
    )

    def ids(filter_: dict[str, object]) -> list[str]:
        return sorted(d.id or "" for d in store.similarity_search("doc", k=10, filter=filter_))

    assert ids({"owner": {"$exists": True}}) == ["a", "d"]
    # a key stored with null counts as absent (documented: PGVector counts it present)
    assert ids({"owner": {"$exists": False}}) == ["b", "c"]
    assert ids({"n": {"$between": [5, 20]}}) == ["b", "c", "d"]
    assert ids({"n": {"$between": [1, 5]}, "owner": {"$exists": True}}) == ["a"]
    assert ids({"$or": [{"n": {"$between": [20, 30]}}, {"owner": {"$exists": False}}]}) == [
        "b",
        "c",
        "d",
    ]
    for bad in (
        {"owner": {"$exists": 1}},
        {"n": {"$between": [1]}},
        {"n": {"$between": ["a", "z"]}},
        {"n": {"$between": 3}},
    ):
        with pytest.raises(InvalidFilterError):
            store.similarity_search("doc", filter=bad)
    with pytest.raises(InvalidFilterError, match=r"\$exists, \$between"):
        store.similarity_search("doc", filter={"n": {"$like": "%x%"}})
    # the retriever's filters are the same translation
    retriever = TreehopRetriever(client=store.client, k=10)
    docs = retriever.invoke("doc", filter={"owner": {"$exists": True}})
    assert sorted(d.metadata["owner"] for d in docs) == ["x", "y"]


def test_search_with_an_add_messages_session_id_says_which_session_it_reads() -> None:
    # 0151fe9: add_messages(session_id="s1") then search(q, session_id="s1") answered
    # "no session 's1'" about the id just written: two kinds of session, nothing said so
    th = Treehop(embedder=BagOfWordsEmbedder(), tagger=None)
    th.add_messages(
        [{"role": "user", "content": "I moved to Lisbon and I am vegetarian."}],
        conversation_id="c1",
        session_id="s1",
    )
    with pytest.raises(SessionNotFoundError) as err:
        th.search("where do I live?", session_id="s1")
    text = str(err.value)
    assert text.startswith("no session 's1': ")
    assert "create_session()" in text and "add_messages(session_id=...)" in text
    # the way the message points to works: the turns are memories, found without a session
    res = th.search("where do I live Lisbon")
    assert [m.uri for m in res.memories][:1] == [
        "viking://~/memories/conversations/c1/s1/turn-00000"
    ]
    sid = th.create_session()
    th.add_message(sid, "user", "I moved to Lisbon.")
    assert th.search("where do I live Lisbon", session_id=sid).memories
    # another user's session reads the same words (no existence oracle)
    other = Treehop(embedder=BagOfWordsEmbedder(), tagger=None, store=th.store, user="bob")
    with pytest.raises(SessionNotFoundError) as theirs:
        other.search("x", session_id=sid)
    assert str(theirs.value) == text.replace("'s1'", repr(sid[:40]))


def test_llama_index_treehop_embedding_defaults_to_the_offline_model() -> None:
    # 0151fe9: TreehopEmbedding() was a TypeError (a required embedder) and the retrievers
    # package did not export it; LangChain's TreehopEmbeddings() is the offline MiniLM
    from llama_index.core import Document as LIDocument
    from llama_index.core import Settings, StorageContext, VectorStoreIndex

    from llama_index.retrievers.treehop import TreehopEmbedding
    from llama_index.vector_stores.treehop import TreehopEmbedding as FromStores
    from llama_index.vector_stores.treehop import TreehopVectorStore
    from treehop.embedders.fallback import offline_default

    assert TreehopEmbedding is FromStores
    model = TreehopEmbedding()
    assert model.embedder is offline_default()
    assert model.model_name == offline_default().name
    with pytest.raises(TreehopError, match="treehop Embedder, got str"):
        TreehopEmbedding("minilm")  # type: ignore[arg-type]
    saved = Settings._embed_model
    try:
        Settings.embed_model = TreehopEmbedding()
        store = TreehopVectorStore()  # the offline MiniLM too: one vector space
        VectorStoreIndex.from_documents(
            [LIDocument(text="Keys rotate every 90 days.", id_="faq")],
            storage_context=StorageContext.from_defaults(vector_store=store),
        )
        nodes = VectorStoreIndex.from_vector_store(store).as_retriever().retrieve("keys rotate")
    finally:
        Settings._embed_model = saved
    assert [n.node.ref_doc_id for n in nodes] == ["faq"]


def test_a_client_refuses_pickle_and_copies_with_a_typed_error(client: Treehop) -> None:
    # 0151fe9: copy.deepcopy of a client (or of a vector store / retriever holding one)
    # failed on "cannot pickle '_contextvars.Context'" after an "Exception ignored" traceback
    # from a half-built event loop; copy.copy gave a second handle whose close() closed both
    for obj in (
        client,
        TreehopVectorStore(client=client),
        TreehopRetriever(client=client),
    ):
        for how in (pickle.dumps, copy.deepcopy):
            with pytest.raises(UnsupportedUseError, match="cannot be pickled or copied"):
                how(obj)
    with pytest.raises(TypeError, match="open the index again by its path"):
        copy.copy(client)
    assert client.find("rotate api keys").contexts()  # untouched
    script = (
        "import copy, sys\n"
        f"sys.path[:0] = {[str(Path(treehop.__file__).parents[1])]!r}\n"
        "from treehop import Treehop\n"
        "th = Treehop(None)\n"
        "try:\n    copy.deepcopy(th)\nexcept TypeError as exc:\n    print(type(exc).__name__)\n"
        "th.close()\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == "UnsupportedUseError"
    assert "Exception ignored" not in out.stderr


def test_async_client_refuses_pickle_too() -> None:
    async_client = AsyncTreehop(embedder=BagOfWordsEmbedder(), tagger=None)
    with pytest.raises(UnsupportedUseError, match="AsyncTreehop client"):
        pickle.dumps(async_client)


def test_a_sync_method_s_bad_arguments_name_treehop_and_what_it_takes(client: Treehop) -> None:
    # 0151fe9: th.add_resource(d, uri=...) raised Python's TypeError naming
    # AsyncTreehop.add_resource(), no TreehopError; the constructor and find() name the
    # keywords they take in an InvalidQueryError
    with pytest.raises(InvalidQueryError) as err:
        client.add_resource("x", uri="viking://resources/x")  # type: ignore[call-arg]
    assert str(err.value).startswith(
        "Treehop.add_resource() got an unexpected keyword argument 'uri'; it takes "
        "path_or_text, target_uri,"
    )
    with pytest.raises(InvalidQueryError, match=r"^Treehop\.add_messages\(\) got an unexp.*"):
        client.add_messages([], conversation="c")  # type: ignore[call-arg]
    with pytest.raises(InvalidQueryError, match=r"^Treehop\.read\(\) missing 1 required"):
        client.read()  # type: ignore[call-arg]
    assert client.ls("viking://resources/kb")  # a good call is unchanged


def test_langchain_retriever_documents_show_a_file_s_path_as_source(client: Treehop) -> None:
    # 0151fe9: a file that add_resource ingested has `source_path`, not `source`, so the
    # README's own format_docs (d.metadata["source"]) failed with KeyError over such a tree
    docs = TreehopRetriever(client=client, k=2).invoke("rotate api keys")
    assert docs[0].metadata["source"] == "sec/keys.md" == docs[0].metadata["source_path"]
    assert all(d.metadata["source"] == d.metadata["source_path"] for d in docs)
    # shown, not stored: a filter on it matches the value shown (leftovers60; it was refused,
    # naming the stored field)
    hits = TreehopRetriever(client=client, k=5).invoke("keys", filter={"source": "sec/keys.md"})
    assert [d.metadata["source"] for d in hits] == ["sec/keys.md"]
    # a document's own `source` is kept as stored
    store = TreehopVectorStore(client=client, base_uri="viking://resources/lc")
    store.add_documents([Document("keys rotate quarterly", metadata={"source": "wiki/k.md"})])
    scoped = TreehopRetriever(client=client, k=1, target_uri="viking://resources/lc")
    assert scoped.invoke("keys rotate")[0].metadata["source"] == "wiki/k.md"


def test_langchain_vector_store_takes_a_client_first_as_llama_index_s_does(
    client: Treehop,
) -> None:
    # 0151fe9: TreehopVectorStore(Treehop(path)) was "embeddings must be a langchain_core
    # Embeddings, got Treehop" (the first positional is LangChain's embedding); LlamaIndex's
    # TreehopVectorStore takes its client first
    from llama_index.vector_stores.treehop import TreehopVectorStore as LIStore

    for store in (TreehopVectorStore(client), LIStore(client)):
        assert store.client is client
    store = TreehopVectorStore(client, base_uri="viking://resources/lc")
    assert store.add_texts(["keys rotate quarterly"], ids=["q"]) == ["q"]
    assert [d.id for d in store.similarity_search("keys rotate", k=1)] == ["q"]
    with pytest.raises(InvalidQueryError, match="client must be"):
        TreehopVectorStore(client=object())  # type: ignore[arg-type]


def test_the_command_line_keeps_its_own_session_advice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the Python API's advice (create_session(), add_messages) is replaced on the command
    # line by its own commands, as the MCP server replaces it with its own words
    from treehop.cli import ClientOptions, main
    from treehop.errors import SEARCH_SESSION_HINT

    def factory(options: ClientOptions) -> Treehop:
        return Treehop(options.path, user=options.user, embedder=BagOfWordsEmbedder())

    idx = str(tmp_path / "idx")
    with Treehop(idx, embedder=BagOfWordsEmbedder()) as th:
        th.add_resource("Roll back with kubectl rollout undo.", name="ops.md")
    code = main(
        ["search", "roll back", "--session", "nosuch", "--index", idx], client_factory=factory
    )
    err = capsys.readouterr().err
    assert code == 3
    assert err.splitlines()[0] == "treehop: error: no session 'nosuch'"
    assert "treehop session new" in err and "create_session()" not in err
    assert SEARCH_SESSION_HINT.startswith("search(session_id=...) reads a chat session")


def test_llama_index_retriever_nodes_name_a_file_as_a_reader_s_nodes_do(client: Treehop) -> None:
    # 0151fe9: a file that add_resource ingested has `name` / `source_path`; LlamaIndex code
    # reads node.metadata["file_name"] (SimpleDirectoryReader's key) and got KeyError
    from llama_index.core.schema import MetadataMode

    from llama_index.retrievers.treehop import TreehopRetriever as LIRetriever

    [hit] = LIRetriever(client, similarity_top_k=1).retrieve("rotate api keys")
    meta = hit.node.metadata
    assert (meta["file_name"], meta["file_path"]) == ("keys.md", "sec/keys.md")
    assert (meta["name"], meta["source_path"]) == ("keys.md", "sec/keys.md")
    # not said twice in the prompt or the embedded text
    for mode in (MetadataMode.LLM, MetadataMode.EMBED):
        text = hit.node.get_content(metadata_mode=mode)
        assert "file_name" not in text and "file_path" not in text
    assert "source_path: sec/keys.md" in hit.node.get_content(metadata_mode=MetadataMode.LLM)
    # shown, not stored: a filter on it matches the value shown (leftovers60; it was refused,
    # naming the stored fields)
    from llama_index.core.vector_stores import MetadataFilter, MetadataFilters

    only = MetadataFilters(filters=[MetadataFilter(key="file_name", value="keys.md")])
    hits = LIRetriever(client, similarity_top_k=5, filters=only).retrieve("keys")
    assert [h.node.metadata["file_name"] for h in hits] == ["keys.md"]
