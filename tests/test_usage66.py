"""Framework users' first scripts, round seven (bench/README.md, "(helper usage66)"): what a
LangChain / LangGraph / LlamaIndex user's first scripts still tripped on after usage56-65,
each checked against the framework's own habit. Each test fails on 8b45267 (main before this
round)."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from llama_index.core import VectorStoreIndex
from llama_index.core.llms import ChatMessage
from llama_index.core.schema import TextNode

import treehop
from langchain_treehop import TreehopRetriever, add_documents
from llama_index.vector_stores.treehop import TreehopVectorStore as LlamaIndexStore
from treehop import (
    InvalidQueryError,
    InvalidTagError,
    InvalidURIError,
    Treehop,
    UnsupportedUseError,
)
from treehop.cli import main

from treehop_test_doubles import indexed_kb

AUTH = "viking://resources/kb/sec/keys.md"
SAMPLE_TREE = Path(treehop.__file__).parent / "sample_tree"


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Treehop]:
    with indexed_kb(tmp_path) as th:  # the default keyword tagger, as a user's client has
        yield th


def _turns(th: Treehop, uris: list[str]) -> list[tuple[str, str]]:
    out = []
    for uri in uris:
        node = th.stat(uri)
        out.append((node.metadata["role"], th.read(uri).split(") ", 1)[1]))
    return out


def test_langchain_messages_are_remembered_with_their_roles(client: Treehop) -> None:
    # 8b45267: th.add_messages(state["messages"]) read a message's role from `role`, which
    # LangChain's messages do not have (they say `type`: human / ai / system / tool), so every
    # AIMessage was stored as a user turn: "user: Nice, Lisbon is lovely." -- the assistant's
    # words remembered as the user's. LlamaIndex's ChatMessage (role=...) was right already.
    res = client.add_messages(
        [
            SystemMessage("You are a travel assistant."),
            HumanMessage("My sister lives in Lisbon."),
            AIMessage("Nice, Lisbon is lovely."),
            ToolMessage("weather: sunny", tool_call_id="call-1"),
        ],
        conversation_id="lc",
    )
    assert _turns(client, res.turn_uris) == [
        ("system", "system: You are a travel assistant."),
        ("user", "user: My sister lives in Lisbon."),
        ("assistant", "assistant: Nice, Lisbon is lovely."),
        ("tool", "tool: weather: sunny"),
    ]
    li = client.add_messages(
        [
            ChatMessage(role="user", content="I own a cat."),
            ChatMessage(role="assistant", content="Cats!"),
        ],
        conversation_id="li",
    )
    assert [r for r, _ in _turns(client, li.turn_uris)] == ["user", "assistant"]
    # a role given wins over the type; a dict without either is still a user turn
    mixed = client.add_messages(
        [{"role": "assistant", "type": "human", "content": "I can help."}, {"content": "hi"}],
        conversation_id="d",
    )
    assert [r for r, _ in _turns(client, mixed.turn_uris)] == ["assistant", "user"]


def test_langchain_content_blocks_are_read_as_their_text(client: Treehop) -> None:
    # 8b45267: an AIMessage whose content is a list of blocks (what many chat models answer)
    # was "content must be a string with a visible character"; LangChain's own .text joins
    # the text blocks (the retriever's chat_history reads the same); an AIMessage that only
    # calls tools has no text, and the refusal now says to leave it out
    blocks = AIMessage(content=[{"type": "text", "text": "Lisbon is lovely."}])
    res = client.add_messages([HumanMessage("Where?"), blocks], conversation_id="b")
    assert _turns(client, res.turn_uris)[1] == ("assistant", "assistant: Lisbon is lovely.")
    call = AIMessage(content="", tool_calls=[{"name": "find", "args": {}, "id": "c1"}])
    with pytest.raises(InvalidQueryError, match="only calls tools has no text: leave it out"):
        client.add_messages([call], conversation_id="b")


@pytest.mark.parametrize(
    ("messages", "said"),
    [
        (["My sister lives in Lisbon."], r"messages\[0\] must be a message, .* got str"),
        ([("user", "hello")], r"messages\[0\] must be a message, .* got tuple"),
        (
            [{"content": "ok"}, {"role": "user", "text": "hi"}],
            r"messages\[1\] has no 'content' key \(keys: 'role', 'text'\)",
        ),
    ],
)
def test_a_list_of_non_messages_is_named_as_such(
    client: Treehop, messages: list[Any], said: str
) -> None:
    # 8b45267: "messages[0]: content must be a string with a visible character" for the
    # string "My sister lives in Lisbon.", which has visible characters: the message named
    # the wrong fault (LangChain's ("user", "hello") tuples and a "text" key the same)
    nodes = len(client.store)
    with pytest.raises(InvalidQueryError, match=said):
        client.add_messages(messages, conversation_id="x")
    assert len(client.store) == nodes  # nothing written


def test_tags_naming_another_source_are_refused_not_dropped(
    client: Treehop, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 8b45267: add_resource(tags="auto:x"), set_tags(add=["llm:x"]) and
    # `treehop tag URI --add auto:x` answered as if done and the
    # tag was gone: auto:/inherit:/llm: tags are the taggers', recomputed on every write
    before, nodes = client.stat(AUTH).tags, len(client.store)
    with pytest.raises(InvalidTagError, match=r"'llm:reviewed' names the 'llm' source"):
        client.set_tags(AUTH, add=["security", "llm:reviewed"])
    assert client.stat(AUTH).tags == before  # the whole call refused: "security" not added
    assert "user:security" in client.set_tags(AUTH, add=["security", "user:audited"])
    with pytest.raises(InvalidTagError, match=r"'auto:ingested' names the 'auto' source"):
        client.add_resource("a note", target_uri="viking://resources/n.md", tags="auto:ingested")
    with pytest.raises(InvalidTagError, match="'auto:x'"):
        client.remember("Keys rotate.", name="keys", tags=["auto:x"])
    assert len(client.store) == nodes  # nothing written
    code = main(
        ["--index", str(tmp_path / "cli-idx"), "index", str(tmp_path / "kb"), "--tag", "auto:x"]
    )
    assert code != 0 and "'auto:x' names the 'auto' source" in capsys.readouterr().err
    assert not (tmp_path / "cli-idx").exists()  # refused before the index was created


def test_retrieved_documents_copy_into_another_store() -> None:
    # A retriever's documents show their node's tags (auto:/inherit: among them, written by
    # the default tagger) under "tags", the key add_documents reads: copying results into
    # another store must work (refusing those tags broke it: lead, stop 60), keeping the
    # user tags and leaving the taggers' to the taggers there
    source = Treehop()
    source.add_resource(str(SAMPLE_TREE))
    docs = TreehopRetriever(client=source, k=4).invoke("how do I rotate api keys")
    first = docs[0].metadata["uri"]
    source.set_tags(first, add=["reviewed"])
    docs = TreehopRetriever(client=source, k=4).invoke("how do I rotate api keys")
    shown = [t for d in docs for t in d.metadata["tags"]]
    assert "user:reviewed" in shown and any(t.startswith(("auto:", "inherit:")) for t in shown)
    other = Treehop()
    assert add_documents(other, docs) == [d.metadata["uri"] for d in docs]
    assert "user:reviewed" in other.stat(first).tags


def test_llamaindex_vector_store_refuses_pickle_and_deepcopy(client: Treehop) -> None:
    # 8b45267: LlamaIndex's BaseComponent pickles a component without the private attributes
    # that do not pickle (a logged warning), so pickle.dumps(store) -- or of the
    # VectorIndexRetriever holding it -- "worked" and the copy failed at its first call
    # (AttributeError: no attribute '_index'); deepcopy failed on "cannot pickle
    # '_thread.lock' object". The client refuses copies with UnsupportedUseError (README).
    store = LlamaIndexStore(client, base_uri="viking://resources/li")
    store.add([TextNode(text="Keys rotate every 90 days.", id_="n1")])
    retriever = VectorStoreIndex.from_vector_store(
        store, embed_model=store.embed_model
    ).as_retriever()
    for obj in (store, retriever):
        with pytest.raises(UnsupportedUseError, match="cannot be pickled or deep-copied"):
            pickle.dumps(obj)
    for how in (copy.deepcopy, lambda s: s.model_copy(deep=True)):
        with pytest.raises(UnsupportedUseError, match="TreehopVectorStore holds an open"):
            how(store)
    assert isinstance(UnsupportedUseError("x"), TypeError)  # what pickle's callers catch
    shared = copy.copy(store)  # a shallow copy shares the client, as model_copy() does
    assert [n.node_id for n in shared.get_nodes(node_ids=["n1"])] == ["n1"]
    assert [n.node.node_id for n in retriever.retrieve("keys rotate")] == ["n1"]


def test_a_uri_of_the_wrong_type_is_named(client: Treehop) -> None:
    # 8b45267: th.read(Path("viking://...")) said "URI must be a non-empty string"
    with pytest.raises(InvalidURIError, match="URI must be a string, got PosixPath"):
        client.read(Path(AUTH))  # type: ignore[arg-type]
    with pytest.raises(InvalidURIError, match="URI must be a non-empty string"):
        client.read("")
    assert "Rotate API keys" in client.read(AUTH)
