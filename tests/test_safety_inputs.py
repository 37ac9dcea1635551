"""Hostile input at the client: typed errors, validation before any write, honest skip reports.

These are the concrete attacks of issue 14, one test each (the property-based versions are in
``test_fuzz_api.py``).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from treehop import Treehop
from treehop.errors import (
    IngestError,
    InvalidFilterError,
    InvalidQueryError,
    InvalidTagError,
    InvalidURIError,
    TreehopError,
)

from treehop_test_doubles import BagOfWordsEmbedder


def client(path: Path | None = None, user: str = "default") -> Treehop:
    return Treehop(path, user=user, embedder=BagOfWordsEmbedder(), tagger=None)


def test_failed_constructions_leak_no_threads() -> None:
    before = {t.ident for t in threading.enumerate()}
    for _ in range(50):
        with pytest.raises(TreehopError):
            Treehop(embedder=BagOfWordsEmbedder(), user="not a valid user")
    # Threads of earlier tests may end meanwhile; none may be left by these constructions.
    assert {t.ident for t in threading.enumerate()} <= before


def test_a_missing_path_is_an_error_unless_is_text(tmp_path: Path) -> None:
    with client(tmp_path / "idx") as th:
        for missing in ("./missing-folder", str(tmp_path / "nope"), "docs/readme.md"):
            with pytest.raises(IngestError, match="does not exist"):
                th.add_resource(missing)
        assert len(th.store) == 0
        res = th.add_resource("./missing-folder", is_text=True, name="literal")
        assert res.root_uri == "viking://resources/literal"
        assert th.read("viking://resources/literal") == "./missing-folder"


def test_every_skipped_file_and_folder_is_counted_and_named(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "venv" / "lib").mkdir(parents=True)
    (src / "venv" / "lib" / "site.py").write_text("print('x')")
    (src / "node_modules").mkdir()
    (src / ".git").mkdir()
    (src / "docs").mkdir()
    (src / "docs" / "guide.md").write_text("# Guide\n\nKubernetes pods roll out.")
    (src / ".env").write_text("SECRET=1")
    (src / "blob.bin").write_bytes(b"\x00\x01\x02" * 100)
    # A file whose name is not UTF-8 (bytes 0xff) and one with a newline in its name.
    with open(os.path.join(os.fsencode(src / "docs"), b"bad\xffname.md"), "wb") as fh:
        fh.write(b"# Bad name\n\nStill text.")
    (src / "docs" / "new\nline.md").write_text("# Newline\n\ntext")
    with client(tmp_path / "idx") as th:
        res = th.add_resource(src, target_uri="viking://resources/src")
        assert res.files == 1
        assert sorted(res.skipped_dirs) == [".git", "node_modules", "venv"]
        assert res.skipped_hidden == [".env"]
        assert res.skipped_binary == ["blob.bin"]
        assert sorted(res.skipped_names) == ["docs/bad\\xffname.md", "docs/new\\x0aline.md"]
        assert res.skipped == 7
        assert "Kubernetes" in th.read("viking://resources/src/docs/guide.md")
        # Every stored node can be read back and removed (no unaddressable names).
        for node in list(th.store.iter_nodes("viking://resources/src")):
            if node.chunk_index is None:
                th.stat(node.uri)
        assert th.remove("viking://resources/src") > 0


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"target_uri": "viking://resources/\ud800x"}, InvalidURIError),
        ({"name": "bad\ud800"}, InvalidURIError),
        ({"name": "nul\x00name"}, InvalidURIError),
        ({"name": "ok", "metadata": {"when": object()}}, InvalidQueryError),
        ({"name": "ok", "metadata": {"x": float("nan")}}, InvalidQueryError),
        ({"name": "ok", "metadata": {"x": "\udc80"}}, InvalidQueryError),
        ({"name": "ok", "tags": ""}, InvalidTagError),
        ({"name": "ok", "tags": {"a": 1}}, InvalidTagError),
        ({"name": "ok", "tags": 5}, InvalidTagError),
        ({"target_uri": 5}, InvalidURIError),
    ],
)
def test_a_bad_call_changes_nothing_and_leaves_the_client_usable(
    tmp_path: Path, kwargs: dict[str, object], error: type[TreehopError]
) -> None:
    path = tmp_path / "idx"
    th = client(path)
    th.add_resource("First text about pods.", name="first", is_text=True)
    before = sorted(n.uri for n in th.store.iter_nodes())
    with pytest.raises(error):
        th.add_resource("Some text to add here.", is_text=True, **kwargs)
    assert sorted(n.uri for n in th.store.iter_nodes()) == before
    th.add_resource("Second text about postgres.", name="second", is_text=True)
    th.close()
    with client(path) as again:
        assert "postgres" in again.read("viking://resources/second")
        assert "pods" in again.read("viking://resources/first")


def test_typed_errors_for_the_issue_inputs(tmp_path: Path) -> None:
    deep: dict[str, object] = {"op": "must", "field": "a", "conds": [1]}
    for _ in range(900):
        deep = {"op": "and", "conds": [deep]}
    with client(tmp_path / "idx") as th:
        th.add_resource("Kubernetes pods roll out.", name="k8s", is_text=True)
        cases = [
            (lambda: th.find("q", mode="bogus"), InvalidQueryError),
            (lambda: th.find("q", context_type="bogus"), InvalidQueryError),
            (lambda: th.search("q", context_types=["bogus"]), InvalidQueryError),
            (lambda: th.find("q", filter=deep), InvalidFilterError),
            (
                lambda: th.find("q", filter={"op": "range", "field": "a", "gt": 10**400}),
                InvalidFilterError,
            ),
            (lambda: th.find("q", tags=5), InvalidTagError),
            (lambda: th.find("q", tags=""), InvalidTagError),
            (lambda: th.find("q", tags=";;"), InvalidTagError),
            (lambda: th.find("q", tags={"a": "b"}), InvalidTagError),
            (lambda: th.find("q", target_uri=5), InvalidURIError),
            (lambda: th.tree("viking://resources", depth="3"), InvalidQueryError),  # type: ignore[arg-type]
            (lambda: th.find("\u00a0\u3000 \u00a0"), InvalidQueryError),
            (lambda: th.find("q", score_threshold=10**400), InvalidQueryError),
        ]
        for call, error in cases:
            with pytest.raises(error):
                call()
        # No-break and ideographic spaces inside a normal query are ordinary whitespace.
        assert th.find("kubernetes\u00a0pods\u3000roll").total >= 1


@pytest.mark.parametrize(
    "kwargs",
    [
        {"path": 5},
        {"path": b"/tmp/x"},
        {"path": "bad\x00path"},
        {"path": "bad\ud800path"},
        {"user": 5},
        {"user": "../alice"},
        {"embedder": "minilm"},
        {"store": object()},
        {"reranker": "cohere"},
        {"llm": 5},
        {"query_planner": "gpt"},
        {"config": {"alpha": 1}},
        {"tagger": "yes"},
        {"tagger": 1},
        {"intent_timeout_s": 0},
        {"intent_timeout_s": "5"},
        {"chunk_chars": "1000"},
        {"chunk_chars": 0},
        {"retag_all_below": -1},
    ],
)
def test_bad_constructor_arguments_are_typed_and_leak_nothing(kwargs: dict[str, object]) -> None:
    before = {t.ident for t in threading.enumerate()}
    args = {"embedder": BagOfWordsEmbedder(), **kwargs}
    path = args.pop("path", None)
    with pytest.raises(TreehopError):
        Treehop(path, **args)  # type: ignore[arg-type]
    # Threads of earlier tests may end meanwhile; none may be left by this construction.
    assert {t.ident for t in threading.enumerate()} <= before


def test_a_closed_client_raises_a_typed_error() -> None:
    from treehop.errors import ClientClosedError

    th = client()
    th.close()
    with pytest.raises(ClientClosedError, match="closed"):
        th.find("anything")
    th.close()  # closing twice does nothing
