"""A user's first hour, continued (stop 61): what usage68 left open, in the core and the CLI.

- ``source_path``: a file that ``add_resource`` of a folder ingested stores its path under the
  folder (``guide/deploy.md``); a document that ``add_documents`` / ``add_records`` placed by
  its path stored only its name (``deploy.md``). A filter on ``source_path`` written for one
  missed the other, and LlamaIndex's LLM text showed ``source_path: deploy.md`` under a
  reader's ``file_path`` of ``.../guide/deploy.md``.
- ``treehop session add ID user "text"`` (the role as a word) was argparse's bare
  "unrecognized arguments".
- An index stored under a framework wrapper's old name for treehop's own embedder
  (``langchain:TreehopEmbeddings:<e>``, ``llamaindex:TreehopEmbedding:<e>``) was refused by a
  plain ``Treehop(path)``, the CLI and the MCP server until a wrapper had written to it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from treehop import Treehop
from treehop.cli import ClientOptions, ExitCode, main
from treehop.embedders.local_minilm import MODEL_NAME
from treehop.errors import EmbeddingError
from treehop.ingest.records import add_records

from treehop_test_doubles import BagOfWordsEmbedder

_DEPLOY = "# Deploy\n\nRun the deploy script with the blue-green flag to roll out a release.\n"
_BACKUP = "# Backups\n\nNightly backups rotate every seven days and are copied off site.\n"


def _meta(client: Treehop, uri: str) -> dict[str, Any]:
    node = client.store.get([client.aio.resolve(uri)])[0]
    assert node is not None, uri
    return dict(node.metadata)


# ---------------------------------------------------------------------------- source_path
def test_a_batch_of_machine_paths_stores_the_folders_source_paths(tmp_path: Path) -> None:
    """The same two files, once as ``add_resource`` of their folder and once as a batch of
    records carrying their absolute paths (what ``SimpleDirectoryReader(folder)`` or a
    LangChain ``DirectoryLoader`` gives): the same places below the base and now the same
    ``source_path`` (the path under the folder), where the records stored the bare name."""
    docs = tmp_path / "docs"
    (docs / "guide").mkdir(parents=True)
    (docs / "guide" / "deploy.md").write_text(_DEPLOY)
    (docs / "backups.md").write_text(_BACKUP)
    with Treehop(path=tmp_path / "a", embedder=BagOfWordsEmbedder(), tagger=None) as c:
        c.add_resource(str(docs))  # (at viking://resources/docs)
        folder = {
            u: _meta(c, u)["source_path"]
            for u in (
                "viking://resources/docs/guide/deploy.md",
                "viking://resources/docs/backups.md",
            )
        }
    assert list(folder.values()) == ["guide/deploy.md", "backups.md"]
    with Treehop(path=tmp_path / "b", embedder=BagOfWordsEmbedder(), tagger=None) as c:
        uris = add_records(
            c,
            [
                (_DEPLOY, {"source": str(docs / "guide" / "deploy.md")}),
                (_BACKUP, {"source": str(docs / "backups.md")}),
            ],
            base_uri="viking://resources/docs",
        )
        assert uris == list(folder)
        assert {u: _meta(c, u)["source_path"] for u in uris} == folder
        # the loader's own key is kept as given, the name is the file's
        meta = _meta(c, uris[0])
        assert meta["source"] == str(docs / "guide" / "deploy.md")
        assert meta["name"] == "deploy.md"


def test_a_relative_source_is_stored_as_its_path_below_the_base(tmp_path: Path) -> None:
    with Treehop(path=tmp_path / "ix", embedder=BagOfWordsEmbedder(), tagger=None) as c:
        uris = add_records(
            c,
            [
                (_DEPLOY, {"source": "guide/deploy.md"}),
                (_BACKUP, {"source": "https://wiki.example.com/ops/backups"}),
            ],
            base_uri="viking://resources/kb",
        )
        assert uris == [
            "viking://resources/kb/guide/deploy.md",
            "viking://resources/kb/wiki.example.com/ops/backups",
        ]
        assert _meta(c, uris[0])["source_path"] == "guide/deploy.md"
        assert _meta(c, uris[1])["source_path"] == "wiki.example.com/ops/backups"
        # a filter written for a folder's files selects these too
        hits = c.find(
            "deploy script",
            filter={"op": "must", "field": "source_path", "conds": ["guide/deploy.md"]},
        )
        assert [m.uri for m in hits.contexts()] == [c.aio.resolve(uris[0])]


def test_records_placed_without_a_path_keep_their_name_and_own_keys_win(tmp_path: Path) -> None:
    """Controls: a record placed by its id or a URI has no source path (its name, as
    ``add_resource(text, name=...)`` stores); a ``source_path`` in the record's own
    metadata is stored as given (the documented round trip)."""
    with Treehop(path=tmp_path / "ix", embedder=BagOfWordsEmbedder(), tagger=None) as c:
        from treehop.ingest.records import IngestRecord

        uris = add_records(
            c,
            [
                IngestRecord(_DEPLOY, {}, id="wiki-1"),
                (_BACKUP, {"uri": "viking://resources/ops/backups.md"}),
                ("Keys rotate every 90 days.", {"source": "sec/keys.md", "source_path": "mine"}),
            ],
        )
        assert [_meta(c, u)["source_path"] for u in uris] == ["wiki-1", "backups.md", "mine"]


def test_an_index_written_before_gets_the_path_on_re_add_without_embedding(
    tmp_path: Path,
) -> None:
    """An index written before stored the name (what ``add_resource(text, name=...)`` at the
    same place stores, as add_records built it); re-adding the same documents stores the
    path and embeds nothing (the text did not change)."""
    emb = BagOfWordsEmbedder()
    with Treehop(path=tmp_path / "ix", embedder=emb, tagger=None) as c:
        c.add_resource(
            _DEPLOY,
            target_uri="viking://resources/guide/deploy.md",
            name="deploy.md",
            metadata={"source": "guide/deploy.md"},
            is_text=True,
        )
        assert _meta(c, "viking://resources/guide/deploy.md")["source_path"] == "deploy.md"
        before = emb.texts_embedded
        add_records(c, [(_DEPLOY, {"source": "guide/deploy.md"})])
        assert emb.texts_embedded == before
        assert _meta(c, "viking://resources/guide/deploy.md")["source_path"] == "guide/deploy.md"


# ---------------------------------------------------------------------------- CLI roles
class _Factory:
    def __call__(self, options: ClientOptions) -> Treehop:
        return Treehop(options.path, user=options.user, embedder=BagOfWordsEmbedder())


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv), client_factory=_Factory())
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def session(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[list[str], str]:
    with Treehop(path=tmp_path / "ix", embedder=BagOfWordsEmbedder(), tagger=None) as c:
        c.add_resource("Backups run nightly.", name="ops")
    idx = ["--index", str(tmp_path / "ix")]
    code, out, err = _run(capsys, "session", "new", *idx)
    assert code == 0, err
    return idx, out.strip()


def _messages(capsys: pytest.CaptureFixture[str], idx: list[str], sid: str) -> list[list[str]]:
    code, out, err = _run(capsys, "session", "show", sid, "--json", *idx)
    assert code == 0, err
    return [[m["role"], m["content"]] for m in json.loads(out)["messages"]]


def test_the_role_may_come_before_the_text(
    session: tuple[list[str], str], capsys: pytest.CaptureFixture[str]
) -> None:
    idx, sid = session
    code, out, err = _run(capsys, "session", "add", sid, "assistant", "Use OAuth.", *idx)
    assert code == 0, err
    assert out == f"added a assistant message to session {sid} (1 message)\n"
    assert _run(capsys, "session", "add", sid, "user", "How do I log in?", *idx)[0] == 0
    # the same role twice is one role; the text alone is a user message, even a role word
    assert (
        _run(capsys, "session", "add", sid, "system", "Be brief.", "--role", "system", *idx)[0] == 0
    )
    assert _run(capsys, "session", "add", sid, "user", *idx)[0] == 0
    assert _run(capsys, "session", "add", sid, "--role", "assistant", "Fine.", *idx)[0] == 0
    assert _messages(capsys, idx, sid) == [
        ["assistant", "Use OAuth."],
        ["user", "How do I log in?"],
        ["system", "Be brief."],
        ["user", "user"],
        ["assistant", "Fine."],
    ]


@pytest.mark.parametrize(
    ("words", "said"),
    [
        (["hello", "world"], "'hello' is not a role"),  # an unquoted text of two words
        (["Use OAuth.", "assistant"], "'Use OAuth.' is not a role"),  # the role after it
        (["user", "wants", "a", "deploy"], "quote the text"),  # an unquoted text, role word first
        (["robot", "beep"], "'robot' is not a role"),
    ],
)
def test_words_that_are_not_role_then_text_are_refused_naming_the_role(
    session: tuple[list[str], str],
    capsys: pytest.CaptureFixture[str],
    words: list[str],
    said: str,
) -> None:
    idx, sid = session
    code, out, err = _run(capsys, "session", "add", sid, *words, *idx)
    assert code == ExitCode.USAGE and out == ""
    assert said in err and "unrecognized arguments" not in err
    assert "--role user" in err and "user, assistant, system" in err
    assert _messages(capsys, idx, sid) == []  # nothing was added


def test_two_different_roles_are_refused(
    session: tuple[list[str], str], capsys: pytest.CaptureFixture[str]
) -> None:
    idx, sid = session
    code, _, err = _run(capsys, "session", "add", sid, "user", "hi", "--role", "assistant", *idx)
    assert code == ExitCode.USAGE and "role" in err and "twice" in err
    assert _messages(capsys, idx, sid) == []


def test_the_help_shows_the_role_word(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["session", "add", "--help"]) == 0
    out = capsys.readouterr().out
    assert "[ROLE] TEXT" in out or "ROLE" in out.split("positional arguments")[1]
    assert "--role" in out


# ---------------------------------------------------------------------------- old names
class _Renamed(BagOfWordsEmbedder):
    """The bag-of-words vectors stored under another name (as a wrapper stored them)."""

    def __init__(self, name: str, dimension: int = BagOfWordsEmbedder.dimension) -> None:
        super().__init__()
        self.name = name
        self.dimension = dimension


@pytest.mark.parametrize("prefix", ["langchain:TreehopEmbeddings:", "llamaindex:TreehopEmbedding:"])
def test_an_old_wrapper_name_opens_with_the_embedder_it_wrapped(
    tmp_path: Path, prefix: str
) -> None:
    plain = BagOfWordsEmbedder()
    with Treehop(path=tmp_path / "ix", embedder=_Renamed(prefix + plain.name), tagger=None) as c:
        c.add_resource("Backups run nightly.", name="ops")
    with Treehop(path=tmp_path / "ix", embedder=plain, tagger=None) as c:
        assert [m.uri for m in c.find("backups").contexts()] == ["viking://resources/ops"]
        c.add_resource("The pager rota moved.", name="pager")  # a write stores the name
        assert c.store.meta["embedder"] == plain.name


@pytest.mark.parametrize(
    "stored",
    [
        "langchain:TreehopEmbeddings:another-model",  # the wrapper of another treehop model
        "langchain:OpenAIEmbeddings:test-bag-of-words-64",  # another class, the same model text
        "llamaindex:TreehopEmbedding:test-bag-of-words-64-v2",
        "langchain:TreehopEmbeddings",  # no model at all
        "test-bag-of-words-64:langchain:TreehopEmbeddings:",
    ],
)
def test_other_names_are_still_another_vector_space(tmp_path: Path, stored: str) -> None:
    with Treehop(path=tmp_path / "ix", embedder=_Renamed(stored), tagger=None) as c:
        c.add_resource("Backups run nightly.", name="ops")
    with pytest.raises(EmbeddingError, match="mix vector spaces"):
        Treehop(path=tmp_path / "ix", embedder=BagOfWordsEmbedder(), tagger=None)


def test_the_cli_opens_an_index_the_old_langchain_wrapper_built(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``LangChainEmbedder(TreehopEmbeddings())`` before stop 61 stored
    ``langchain:TreehopEmbeddings:minilm-l6-v2-int8-onnx``; ``treehop ls`` (the default
    embedder, opened read-only) refused the index with "would mix vector spaces"."""
    old = _Renamed(f"langchain:TreehopEmbeddings:{MODEL_NAME}", dimension=384)
    with Treehop(path=tmp_path / "ix", embedder=old, tagger=None) as c:
        c.add_resource("Backups run nightly.", name="ops")
    code = main(["--index", str(tmp_path / "ix"), "ls", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert [e["uri"] for e in json.loads(out)] == ["viking://resources/ops"]
