"""What a new user's first command-line session expects (helper usage56).

A tag or a metadata field that no stored node has is a typo (or something never indexed):
the LangChain and LlamaIndex integrations report it as ``InvalidFilterError`` naming what the
index holds, and the command line does the same (exit status 2, "bad arguments") instead of
printing "no results" as if the search had run and found nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from treehop import Treehop
from treehop.cli import ClientOptions, ExitCode, main

from treehop_test_doubles import BagOfWordsEmbedder


def _factory(options: ClientOptions) -> Treehop:
    return Treehop(options.path, user=options.user, embedder=BagOfWordsEmbedder())


@pytest.fixture
def index(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    (docs / "devops").mkdir(parents=True)
    (docs / "devops" / "rollback.md").write_text(
        "# Rollbacks\n\nRun kubectl rollout undo to roll back a deployment.\n", encoding="utf-8"
    )
    (docs / "food.md").write_text("# Cafeteria\n\nFish on Fridays.\n", encoding="utf-8")
    idx = tmp_path / "idx"
    argv = ["index", str(docs), "--index", str(idx), "--tag", "handbook", "--progress", "none"]
    assert main(argv, client_factory=_factory) == 0
    return idx


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv), client_factory=_factory)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("option", ["--tag", "--tag-all"])
def test_find_with_a_tag_no_node_has_says_so(
    index: Path, capsys: pytest.CaptureFixture[str], option: str
) -> None:
    code, out, _ = _run(capsys, "find", "roll back", "--index", str(index), option, "handbook")
    assert code == ExitCode.OK and "roll" in out  # unchanged: that tag exists
    code, out, err = _run(capsys, "find", "roll back", "--index", str(index), option, "handbok")
    assert code == ExitCode.USAGE, out
    assert "handbok" in err and "handbook" in err  # names the typo and what the index holds


def test_find_with_a_field_no_node_has_says_so(
    index: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = '{"op": "must", "field": "sourse", "conds": ["x"]}'
    code, out, err = _run(capsys, "find", "roll back", "--index", str(index), "--filter", spec)
    assert code == ExitCode.USAGE, out
    assert "sourse" in err


def test_search_checks_its_tags_too(index: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "search", "roll back", "--index", str(index), "--tag", "nope")
    assert code == ExitCode.USAGE, out
    assert "nope" in err


def test_eval_checks_its_tag(
    index: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    queries = tmp_path / "q.jsonl"
    queries.write_text(
        '{"query": "roll back", "relevant": {"viking://resources/docs/devops/rollback.md": 1}}\n',
        encoding="utf-8",
    )
    code, out, err = _run(capsys, "eval", str(queries), "--index", str(index), "--tag", "nope")
    assert code == ExitCode.USAGE, out
    assert "nope" in err
