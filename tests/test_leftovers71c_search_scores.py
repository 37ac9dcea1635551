"""helper leftovers71c: ``treehop search`` says its scores are fused ranks.

``search`` fuses its typed queries by reciprocal-rank fusion, so its scores fall 1.000,
0.984, 0.968, ... down the list whatever the hits' similarities (usage82: a file at
cosine 0.024 showed 0.924). Its table headed them ``score``, as ``find`` heads its
cosines, and ``--json`` gave them as ``score`` with nothing saying which. Now the column
is ``fused``, a line under the table says what that is, and the JSON carries
``score_kind``; ``find``'s table and JSON are as before.
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from treehop import Treehop
from treehop.cli import ClientOptions, main

from treehop_test_doubles import BagOfWordsEmbedder


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("l71c_search")
    docs = root / "docs"
    docs.mkdir()
    for name, text in {
        "deploy.md": "# Deploy\n\nRoll back a deployment with kubectl rollout undo.\n",
        "oncall.md": "# On call\n\nPage the on call engineer when the deployment fails.\n",
        "oauth.md": "# OAuth\n\nValidate access tokens before a deployment call.\n",
    }.items():
        (docs / name).write_text(text, encoding="utf-8")
    path = root / "idx"
    with Treehop(path, embedder=BagOfWordsEmbedder()) as th:
        th.add_resource(docs, target_uri="viking://resources/docs")
    return path


def _run(index: Path, *argv: str) -> tuple[int, str, str]:
    def factory(options: ClientOptions) -> Treehop:
        return Treehop(options.path, user=options.user, embedder=BagOfWordsEmbedder())

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["--index", str(index), *argv], client_factory=factory)
    return code, out.getvalue(), err.getvalue()


def _header(out: str) -> list[str]:
    return next(ln for ln in out.splitlines() if ln.lstrip().startswith("#")).split()


def test_search_heads_its_scores_fused_and_says_what_they_are(index: Path) -> None:
    code, out, err = _run(index, "search", "deployment roll back")
    assert code == 0, err
    assert _header(out)[:2] == ["#", "fused"]
    assert "score" not in _header(out)
    lines = out.splitlines()
    note = [ln for ln in lines if ln.startswith("fused: ")]
    assert len(note) == 1
    assert "reciprocal-rank fusion" in note[0] and "not a similarity" in note[0]
    # (under the table: after its last row, before the per-query summary lines)
    assert lines.index(note[0]) < next(i for i, ln in enumerate(lines) if "search: " in ln)


def test_search_json_names_the_score_kind(index: Path) -> None:
    code, out, err = _run(index, "search", "deployment roll back", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["score_kind"] == "fused_rank"
    hits = doc["resources"]
    assert hits and hits[0]["score"] == pytest.approx(1.0)  # the fused rank, as the table
    assert doc["query_plan"] is not None


def test_find_keeps_its_score_column_and_json(index: Path) -> None:
    # (control: find's scores are similarities, headed and dumped as before)
    code, out, err = _run(index, "find", "deployment roll back")
    assert code == 0, err
    assert _header(out)[:2] == ["#", "score"]
    assert not any(ln.startswith("fused") for ln in out.splitlines())
    code, out, err = _run(index, "find", "deployment roll back", "--json")
    assert code == 0, err
    assert "score_kind" not in json.loads(out)
