"""``treehop read`` of a document a vector store wrote (helper usage57).

A LangChain / LlamaIndex vector store stores each document as a file node over its chunks;
a document of one chunk reads the same as its file's overview, and ``read`` compared the
two to tell a file from a directory: it printed the text but said on stderr "(... is a
directory: showing its overview)" about a file.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.documents import Document

from langchain_treehop import TreehopVectorStore
from treehop import Treehop
from treehop.cli import ClientOptions, ExitCode, main

from treehop_test_doubles import BagOfWordsEmbedder


def _factory(options: ClientOptions) -> Treehop:
    return Treehop(options.path, user=options.user, embedder=BagOfWordsEmbedder())


def test_read_calls_a_one_chunk_file_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    index = tmp_path / "index"
    store = TreehopVectorStore(client=Treehop(index, embedder=BagOfWordsEmbedder(), tagger=None))
    text = "Run helm rollback with the previous revision."
    store.add_documents(
        [
            Document(page_content=text, metadata={"source": "ops/rollback.md"}),
            Document(
                page_content="Part one.", metadata={"source": "ops/long.md", "start_index": 0}
            ),
            Document(
                page_content="Part two.", metadata={"source": "ops/long.md", "start_index": 9}
            ),
        ]
    )
    store.client.close()
    for uri, expected in [
        ("viking://resources/ops/rollback.md", text),
        ("viking://resources/ops/long.md", "Part one.\n\nPart two."),
    ]:
        code = main(["read", uri, "--index", str(index)], client_factory=_factory)
        out, err = capsys.readouterr()
        assert code == ExitCode.OK
        assert out.strip() == expected
        assert "directory" not in err, err
    code = main(["read", "viking://resources/ops", "--index", str(index)], client_factory=_factory)
    out, err = capsys.readouterr()
    assert code == ExitCode.OK and "is a directory: showing its overview" in err


def test_a_mongo_style_filter_says_what_the_dsl_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--filter '{"team": "ops"}'`` (how LangChain users write a filter) said only
    "unknown op None"; it now names the missing key and shows the DSL's form."""
    index = tmp_path / "index"
    store = TreehopVectorStore(client=Treehop(index, embedder=BagOfWordsEmbedder(), tagger=None))
    store.add_texts(["Run helm rollback."], metadatas=[{"source": "a.md", "team": "ops"}])
    store.client.close()
    argv = ["find", "rollback", "--index", str(index), "--filter", '{"team": "ops"}']
    code = main(argv, client_factory=_factory)
    _, err = capsys.readouterr()
    assert code == ExitCode.USAGE
    assert "no 'op' key (keys: 'team')" in err and '"op": "must"' in err
    dsl = '{"op": "must", "field": "team", "conds": ["ops"]}'
    code = main([*argv[:-1], dsl], client_factory=_factory)
    out, _ = capsys.readouterr()
    assert code == ExitCode.OK and "a.md" in out
