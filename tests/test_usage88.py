"""A LangChain / LangGraph user's first hour over lynx's documentation (helper usage88).

- An over-long code block (lynx's key tables, ``KEYMAP`` lists, a ``<pre>`` block) was cut
  like prose: mid-line at a space or after a ``.``, the next piece's first line without its
  indentation, and only the first piece had the opening fence.
- ``treehop_ls`` of one long file listed every chunk with its abstract (``lynx.cfg``: 178
  entries, 53,592 characters) where ``treehop_read`` shows 8,000.
- ``TreehopVectorStore.max_marginal_relevance_search_by_vector`` took ``*args, **kwargs``:
  no ``k`` / ``fetch_k`` / ``lambda_mult`` in its signature, unlike its async twin and
  LangChain's base class.
"""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.documents import Document

from langchain_treehop import TreehopVectorStore, create_treehop_tools
from treehop import Treehop
from treehop.errors import InvalidQueryError
from treehop.ingest.chunking import split_text

from treehop_test_doubles import BagOfWordsEmbedder

KEYS = "abcdefghijklmnopqrstuvwxyz"


def _key_table(n: int = 26) -> list[str]:
    """lynx's keystroke_help: a ``<pre>`` table of keys, no blank line, no sentence end."""
    return [
        f"       {KEYS[i % 26]}              - Show the list number {i} of the document"
        for i in range(n)
    ]


def _inner_lines(text: str) -> list[str]:
    return [line for line in text.split("\n") if not line.startswith("```")]


def test_a_long_code_block_is_cut_at_line_ends_with_its_fence_around_each_piece() -> None:
    lines = _key_table()
    page = "# Keystrokes\n\n## Other\n\n```\n" + "\n".join(lines) + "\n```\n"
    chunks = split_text(page, "markdown", 1000)
    assert len(chunks) >= 2
    body: list[str] = []
    for c in chunks:
        inner = [x for x in _inner_lines(c.text) if x != "Other"]
        assert all(x in lines for x in inner), inner  # whole lines, indentation kept
        assert c.text.count("```") == 2, c.text  # its fence opened and closed
        assert len(c.text) <= 1000
        body += inner
    assert body == lines  # nothing lost or repeated


def test_a_config_file_without_sentence_ends_is_cut_at_line_ends() -> None:
    """lynx.cfg's commented KEYMAP list: plain text, one block, no sentence end."""
    lines = [
        f"#KEYMAP:^{KEYS[i % 26]}:HOME\t\t# Go to top of current document {i}" for i in range(60)
    ]
    chunks = split_text("\n".join(lines) + "\n", "text", 1000)
    assert len(chunks) >= 2
    assert [x for c in chunks for x in c.text.split("\n")] == lines


def test_prose_is_still_cut_at_sentence_ends() -> None:
    """Control: a paragraph of sentences is cut after a sentence, as before."""
    prose = " ".join(f"Sentence number {i} says something about cookies." for i in range(60))
    chunks = split_text(prose, "text", 1000)
    assert len(chunks) >= 2
    assert all(c.text.endswith(".") for c in chunks)
    assert " ".join(c.text for c in chunks) == prose


@settings(max_examples=40)
@given(
    st.lists(
        st.text(alphabet="ab .:#\t-", min_size=20, max_size=90).map(lambda s: "  x" + s.rstrip()),
        min_size=30,
        max_size=60,
    ),
    st.integers(min_value=200, max_value=800),
)
def test_code_pieces_are_whole_lines_in_order_and_fenced(lines: list[str], size: int) -> None:
    page = "# T\n\n```\n" + "\n".join(lines) + "\n```\n"
    chunks = split_text(page, "markdown", size)
    got: list[str] = []
    for c in chunks:
        assert c.text.count("```") % 2 == 0, c.text
        got += [x for x in _inner_lines(c.text)]
    assert got == lines


def _long_file(tmp_path: Path) -> Path:
    d = tmp_path / "lynx"
    d.mkdir()
    sections = [
        f"## SETTING_{i}\n\nThe setting number {i} controls how lynx shows page {i}. "
        + "It is read from lynx.cfg at start-up and can be changed in the options menu. " * 8
        for i in range(16)
    ]
    (d / "body.md").write_text("# Settings\n\n" + "\n\n".join(sections), encoding="utf-8")
    return d


def test_treehop_ls_of_a_long_file_shows_what_fits_and_counts_the_rest(tmp_path: Path) -> None:
    with Treehop(None, embedder=BagOfWordsEmbedder()) as th:
        th.add_resource(str(_long_file(tmp_path)), target_uri="viking://resources/lynx")
        uri = "viking://resources/lynx/body.md"
        n = len(th.ls(uri))
        assert n >= 16
        ls = {t.name: t for t in create_treehop_tools(th, include=["ls"], ls_max_chars=1000)}[
            "treehop_ls"
        ]
        msg = ls.invoke(
            {"type": "tool_call", "id": "1", "name": "treehop_ls", "args": {"uri": uri}}
        )
        text, artifact = msg.content, msg.artifact
        listed = [x for x in text.split("\n") if x.startswith("- ")]
        assert 1 <= len(listed) < n
        assert len(text) <= 1000 + 200  # the entries within the limit and the note
        assert f"[{n - len(listed)} more entries not shown" in text
        assert len(artifact) == n  # the program still gets every entry
        amsg = asyncio.run(
            ls.ainvoke({"type": "tool_call", "id": "1", "name": "treehop_ls", "args": {"uri": uri}})
        )
        assert amsg.content == text
        # the default is 8,000 characters; a small folder is listed whole
        tools = {t.name: t for t in create_treehop_tools(th, include=["ls"])}
        whole = tools["treehop_ls"].invoke({"uri": "viking://resources/lynx"})
        assert "more entries not shown" not in whole and "body.md" in whole


def test_ls_max_chars_is_checked() -> None:
    with Treehop(None, embedder=BagOfWordsEmbedder()) as th:
        for bad in (0, -1, True, 2.5, "8000"):
            try:
                create_treehop_tools(th, ls_max_chars=bad)
            except InvalidQueryError as e:
                assert "ls_max_chars must be a positive integer" in str(e)
            else:
                raise AssertionError(f"ls_max_chars={bad!r} accepted")


def test_mmr_by_vector_names_its_arguments_as_langchain_does() -> None:
    from langchain_core.vectorstores import VectorStore

    sync = inspect.signature(TreehopVectorStore.max_marginal_relevance_search_by_vector)
    base = inspect.signature(VectorStore.max_marginal_relevance_search_by_vector)
    assert list(sync.parameters) == list(base.parameters)
    assert [p.default for p in sync.parameters.values()][2:5] == [4, 20, 0.5]
    emb = BagOfWordsEmbedder()
    store = TreehopVectorStore(client=Treehop(None, embedder=emb))
    store.add_documents(
        [
            Document(page_content=f"cookie setting {i} for lynx", metadata={"source": f"{i}.md"})
            for i in range(6)
        ]
    )
    vec = emb.embed(["cookie setting"])[0].tolist()
    by_name = store.max_marginal_relevance_search_by_vector(vec, k=2, fetch_k=4, lambda_mult=0.3)
    assert len(by_name) == 2
    assert [d.id for d in by_name] == [
        d.id for d in store.max_marginal_relevance_search_by_vector(vec, 2, 4, 0.3)
    ]
    store.client.close()
