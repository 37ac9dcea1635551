"""Adversarial pass attacks54, LangChain side (bench/README.md, "helper attacks54")."""

from __future__ import annotations

import pytest

from langchain_treehop import TreehopVectorStore
from treehop.errors import InvalidQueryError

from lc_helpers import WordHashEmbeddings


@pytest.mark.parametrize("value", ["yes", "false", 1, 0, [True]])
def test_include_directories_must_be_a_bool(value: object) -> None:
    """``include_directories`` went through ``bool()``: ``"false"`` (a configuration's
    string) turned directories *on*. Now anything but True / False (or None: the default)
    is refused, as the core's boolean options are."""
    store = TreehopVectorStore(WordHashEmbeddings(), tagger=None)
    store.add_texts(["alpha beta", "gamma delta"], [{"source": "a.md"}, {"source": "b.md"}])
    with pytest.raises(InvalidQueryError):
        store.similarity_search("alpha", k=2, include_directories=value)
    with pytest.raises(InvalidQueryError):
        store.as_retriever(search_kwargs={"k": 2, "include_directories": value}).invoke("alpha")
    assert store.similarity_search("alpha", k=1, include_directories=False)
    assert store.similarity_search("alpha", k=1, include_directories=None)  # (the default)
    assert store.similarity_search("alpha", k=3, include_directories=True)


def test_the_ls_tools_listing_is_bounded(tmp_path: object) -> None:
    """The LangChain ``ls`` tool listed every child into the model's context (a directory
    of 3,000 files: 3,000 lines with abstracts), where the MCP ``ls`` answers at most
    ``MAX_LIST_ENTRIES``. Now the same bound, saying how many were left out; the artifact
    (for the program, not the model) keeps every entry."""
    from pathlib import Path

    from langchain_treehop import create_treehop_tools
    from treehop import Treehop
    from treehop.mcp_server import MAX_LIST_ENTRIES

    from treehop_test_doubles import BagOfWordsEmbedder

    src = Path(str(tmp_path)) / "src"
    src.mkdir()
    for i in range(1_200):
        (src / f"f{i:04d}.txt").write_text(f"note {i} alpha")
    client = Treehop(Path(str(tmp_path)) / "idx", embedder=BagOfWordsEmbedder(), tagger=None)
    try:
        client.add_resource(src, target_uri="viking://resources/src")
        # (the entry bound alone: the character bound, usage88, held out of reach)
        tools = create_treehop_tools(client, ls_max_chars=10**7)
        ls = next(t for t in tools if t.name.endswith("ls"))
        msg = ls.invoke(
            {
                "type": "tool_call",
                "name": ls.name,
                "id": "1",
                "args": {"uri": "viking://resources/src"},
            }
        )
        lines = [x for x in msg.content.splitlines() if x.startswith("- ")]
        assert len(lines) == MAX_LIST_ENTRIES
        assert "200 more" in msg.content
        assert len(msg.artifact) == 1_200
    finally:
        client.close()


def test_a_vector_store_cannot_be_based_in_the_conversations() -> None:
    """A ``base_uri`` in the conversations' subtree is refused when the store is made (its
    passages were written beside a session's turns)."""
    from treehop.errors import InvalidURIError

    with pytest.raises(InvalidURIError, match="conversations' subtree"):
        TreehopVectorStore(
            WordHashEmbeddings(),
            tagger=None,
            base_uri="viking://~/memories/conversations/default",
        )
    ok = TreehopVectorStore(WordHashEmbeddings(), tagger=None, base_uri="viking://resources/p")
    assert ok.add_texts(["alpha beta"]) and ok.similarity_search("alpha", k=1)
