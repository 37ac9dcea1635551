"""helper usage82: the CLI browses an index built with another embedder.

The README's LangChain quick start says ``from_documents(chunks, OpenAIEmbeddings(),
path=...)``; docs/llamaindex.md says ``TreehopVectorStore(embed_model=OpenAIEmbedding(),
path=...)``. The CLI opens an index with treehop's own embedder, which such an index
refuses ("would mix vector spaces") -- right for ``find``, which embeds its query, but
``treehop ls`` / ``tree`` / ``read`` / ``tag`` (show) / ``session list`` never embed, and
were refused the same way: the tree a user had just built from Python could not be looked
at. The index here is built with the test bag-of-words embedder (another model's name);
the commands run through the CLI's own client factory, as the console script does.
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from treehop import Treehop
from treehop.cli import ClientOptions, ExitCode, main

from treehop_test_doubles import BagOfWordsEmbedder


@pytest.fixture(scope="module")
def other_model_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("u82browse")
    docs = root / "docs"
    (docs / "ops").mkdir(parents=True)
    (docs / "ops" / "deploy.md").write_text(
        "# Deployments\n\nRoll back with `kubectl rollout undo deployment/web`.\n",
        encoding="utf-8",
    )
    (docs / "README.md").write_text("# Handbook\n\nOperations guides.\n", encoding="utf-8")
    path = root / "idx"
    with Treehop(path, embedder=BagOfWordsEmbedder()) as th:
        th.add_resource(docs, target_uri="viking://resources/docs")
        th.set_tags("viking://resources/docs/ops/deploy.md", add=["runbook"])
    return path


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))  # the default client factory, as the console script
    return code, out.getvalue(), err.getvalue()


def test_the_premise_treehop_refuses_the_index_with_its_own_embedder(
    other_model_index: Path,
) -> None:
    # (the guard that stays: find embeds its query with MiniLM, the index holds other vectors)
    code, out, err = _run("--index", str(other_model_index), "find", "roll back")
    assert code == ExitCode.ERROR
    assert "would mix vector spaces" in err
    assert out == ""


def test_ls_tree_and_read_browse_an_index_built_with_another_embedder(
    other_model_index: Path,
) -> None:
    idx = str(other_model_index)
    code, out, err = _run("--index", idx, "ls", "viking://resources/docs")
    assert (code, err) == (ExitCode.OK, "")
    assert "viking://resources/docs/ops" in out and "viking://resources/docs/README.md" in out

    code, out, err = _run("--index", idx, "tree", "--json")
    assert (code, err) == (ExitCode.OK, "")
    tree = json.loads(out)
    assert tree["children"][0]["uri"] == "viking://resources/docs"

    code, out, err = _run("--index", idx, "read", "viking://resources/docs/ops/deploy.md")
    assert (code, err) == (ExitCode.OK, "")
    assert "kubectl rollout undo" in out


def test_tag_shows_and_session_lists_on_such_an_index(other_model_index: Path) -> None:
    idx = str(other_model_index)
    code, out, err = _run("--index", idx, "tag", "viking://resources/docs/ops/deploy.md", "--json")
    assert (code, err) == (ExitCode.OK, "")
    assert "user:runbook" in json.loads(out)["tags"]

    code, out, err = _run("--index", idx, "session", "list", "--json")
    assert (code, err) == (ExitCode.OK, "")
    assert json.loads(out) == []


def test_browsing_leaves_the_index_as_it_was(other_model_index: Path) -> None:
    # A browse opens the index under the embedder name it stores, read-only: nothing is
    # written back, and the model the index names is the one it was built with.
    before = sorted((p.name, p.stat().st_mtime_ns) for p in other_model_index.iterdir())
    assert _run("--index", str(other_model_index), "ls")[0] == ExitCode.OK
    assert sorted((p.name, p.stat().st_mtime_ns) for p in other_model_index.iterdir()) == before
    with Treehop(other_model_index, embedder=BagOfWordsEmbedder()) as th:
        hits = th.find("kubectl rollout undo", limit=1).contexts()
        assert hits[0].uri == "viking://resources/docs/ops/deploy.md"


def test_a_command_that_embeds_says_what_still_works(other_model_index: Path) -> None:
    code, _, err = _run("--index", str(other_model_index), "find", "roll back")
    assert code == ExitCode.ERROR
    # the hint: the CLI's model, how to search it (Python, its own embedder), what works
    assert "treehop's default embedder" in err
    assert "Treehop(path, embedder=" in err
    assert "ls, tree and read" in err


def test_an_index_of_the_default_embedder_browses_as_before(tmp_path: Path) -> None:
    # (control: an index built by the CLI itself)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nAlpha text.\n", encoding="utf-8")
    idx = str(tmp_path / "idx")
    assert _run("--index", idx, "index", str(docs))[0] == ExitCode.OK
    code, out, _ = _run("--index", idx, "ls", "viking://resources/docs")
    assert code == ExitCode.OK and "viking://resources/docs/a.md" in out
    code, out, _ = _run("--index", idx, "find", "alpha", "--json")
    assert code == ExitCode.OK
    assert json.loads(out)["resources"][0]["uri"] == "viking://resources/docs/a.md"


def test_a_file_of_one_chunk_is_one_chunk(tmp_path: Path) -> None:
    # An IngestionPipeline's node of a short file, a LangChain store's one-chunk source: the
    # file holds one chunk, shown "1 chunks" by ls and tree (helper usage82).
    from langchain_core.documents import Document

    from langchain_treehop import TreehopVectorStore

    idx = tmp_path / "idx"
    store = TreehopVectorStore(client=Treehop(idx, embedder=BagOfWordsEmbedder()))
    store.add_documents(
        [
            Document(page_content="Rotate API keys every 90 days.", metadata={"source": "a.md"}),
            Document(page_content="One part.", metadata={"source": "b.md", "start_index": 0}),
            Document(page_content="Two part.", metadata={"source": "b.md", "start_index": 10}),
        ]
    )
    store.client.close()

    def bow(options: ClientOptions) -> Treehop:  # (this test is about the words alone)
        return Treehop(options.path, user=options.user, embedder=BagOfWordsEmbedder())

    def run(*argv: str) -> tuple[int, str]:
        out = io.StringIO()
        with redirect_stdout(out):
            code = main(["--index", str(idx), *argv], client_factory=bow)
        return code, out.getvalue()

    code, out = run("tree")
    assert code == ExitCode.OK
    assert "a.md (1 chunk) " in out and "b.md (2 chunks) " in out
    code, out = run("ls")
    assert code == ExitCode.OK
    assert " 1 chunk " in out and " 2 chunks " in out
    code, out = run("tree", "viking://resources/a.md")
    assert code == ExitCode.OK
    assert "a file of 1 chunk: print it with" in out
