"""A text given as text is read as the file its name says, as the folder walk reads it.

helper usage81: chrony's ``FAQ`` (plain text, one ``# chronyd -q 'pool pool.ntp.org
iburst'`` shell prompt in it) added through LlamaIndex's ``SimpleDirectoryReader`` +
``VectorStoreIndex`` over ``TreehopVectorStore`` was titled by that command line in
``treehop ls`` (``chronyd -q 'pool pool.ntp.org iburst': Frequently Asked Questions ...``),
where ``treehop index`` of the same folder titles it ``Frequently Asked Questions``: every
text given as text (a LangChain / LlamaIndex document, a splitter's chunks of one file,
``add_resource(text, is_text=True)``) was read as Markdown, whatever its file name."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.documents import Document
from langchain_text_splitters import RecursiveCharacterTextSplitter

from langchain_treehop import add_documents
from treehop import Treehop
from treehop.ingest.loaders import LoadReport, given_text_kind, read_file

from treehop_test_doubles import BagOfWordsEmbedder

FAQ = (
    "Frequently Asked Questions\n\nHow do I set the clock once at boot?\n\n"
    "Run this as root:\n\n# chronyd -q 'pool pool.ntp.org iburst'\n\n"
    "It steps the clock once and exits.\n\n" + "More about servers and the clock. " * 40
)
SCRIPT = (
    '"""Rotate the service keys."""\n\n# read the old key first\nimport os\n\n'
    "def rotate():\n    # the new key\n    return os.urandom(8)\n"
)


def _abstracts(th: Treehop, uris: list[str]) -> list[str]:
    return [n.abstract if n is not None else "" for n in th.store.get(uris)]


def _routes(th: Treehop, tmp_path: Path, name: str, text: str) -> list[str]:
    """The file node's abstract by the four ways a file's text gets in."""
    add_documents(th, [Document(page_content=text, metadata={"source": f"whole/{name}"})])
    split = RecursiveCharacterTextSplitter(chunk_size=300, add_start_index=True)
    add_documents(
        th, split.split_documents([Document(page_content=text, metadata={"source": f"cut/{name}"})])
    )
    th.add_resource(text, is_text=True, target_uri=f"viking://resources/text/{name}")
    folder = tmp_path / "folder"
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(text, encoding="utf-8")
    th.add_resource(str(folder), target_uri="viking://resources/folder")
    return _abstracts(
        th,
        [f"viking://resources/{where}/{name}" for where in ("whole", "cut", "text", "folder")],
    )


def test_a_plain_text_files_shell_prompt_is_no_title(tmp_path: Path) -> None:
    with Treehop(None, embedder=BagOfWordsEmbedder()) as th:
        whole, cut, text, folder = _routes(th, tmp_path, "FAQ.txt", FAQ)
        assert folder == "Frequently Asked Questions"  # the folder walk's reading
        assert whole == cut == text == folder
        chunks = [n for n in th.store.children("viking://resources/whole/FAQ.txt")]
        assert chunks and not any(
            "chronyd -q" in str(c.metadata.get("chunk_title", "")) for c in chunks
        )


def test_a_code_files_comment_is_no_title(tmp_path: Path) -> None:
    with Treehop(None, embedder=BagOfWordsEmbedder()) as th:
        whole, cut, text, folder = _routes(th, tmp_path, "rotate.py", SCRIPT)
        assert folder.startswith("Rotate the service keys")
        assert whole == cut == text == folder


def test_control_markdown_and_a_name_without_suffix_keep_their_headings(tmp_path: Path) -> None:
    md = "# Key rotation\n\nKeys rotate every 90 days.\n"
    with Treehop(None, embedder=BagOfWordsEmbedder()) as th:
        whole, cut, text, folder = _routes(th, tmp_path, "keys.md", md)
        assert whole == cut == text == folder
        assert whole.startswith("Key rotation")
        th.add_resource(md, is_text=True, target_uri="viking://resources/note")
        add_documents(th, [Document(page_content=md, id="keys-note")])
        for abstract in _abstracts(th, ["viking://resources/note", "viking://resources/keys-note"]):
            assert abstract.startswith("Key rotation")


_SUFFIXES = [".txt", ".text", ".md", ".rst", ".py", ".js", ".log", ".csv", ".org", ".adoc"]
_LINES = st.sampled_from(
    ["# chronyd -q", "Title", "=====", "Intro text.", ".. note::", "* item", "", "def f(): pass"]
)


@settings(max_examples=80, deadline=None)
@given(
    stem=st.text(alphabet="abcXYZ_-", min_size=1, max_size=8),
    suffix=st.sampled_from(_SUFFIXES),
    lines=st.lists(_LINES, min_size=1, max_size=12),
)
def test_the_kind_is_the_folder_walks_for_a_text_plain_or_code_name(
    tmp_path_factory: pytest.TempPathFactory, stem: str, suffix: str, lines: list[str]
) -> None:
    """For a plain-text, reST or code file name the kind is the one the walk reads the file
    as (read back from a real file); Markdown names stay Markdown."""
    text = "\n".join(lines) + "\nSome words.\n"
    name = stem + suffix
    path = tmp_path_factory.getbasetemp() / name
    path.write_text(text, encoding="utf-8")
    loaded = read_file(path, name, LoadReport())
    assert loaded is not None
    assert given_text_kind(name, text) == loaded.kind


def test_names_no_walk_reads_as_text_stay_markdown() -> None:
    for name in ("note", "keys-note", "3f2a9b1c", "page.html", "guide.md", "a.b.markdown"):
        assert given_text_kind(name, "# Heading\n\ntext\n") == "markdown"
