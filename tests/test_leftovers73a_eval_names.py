"""``treehop eval`` names each metric one way in its table, its ``--per-query`` columns and
its ``--json`` keys (helper leftovers73a; usage83's open item).

The table printed the mean reciprocal rank as ``MRR@10`` while ``--json`` keys it ``RR@10``
(``ir_measures``' name, as the per-query columns already were): a script keyed by what the
table showed found no such key. The table now prints ``RR@10``; the JSON is unchanged, so
no reader of it breaks.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from treehop import Treehop
from treehop.cli import ClientOptions, main

from treehop_test_doubles import BagOfWordsEmbedder


def _factory(options: ClientOptions) -> Treehop:
    return Treehop(options.path, user=options.user, embedder=BagOfWordsEmbedder())


@pytest.fixture(scope="module")
def labelled(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    tmp = tmp_path_factory.mktemp("l73a_eval")
    src = tmp / "docs"
    src.mkdir()
    (src / "deploy.md").write_text("# Deploy\n\nRoll back with kubectl rollout undo.\n")
    (src / "keys.md").write_text("# Keys\n\nRotate API keys every 90 days.\n")
    (src / "backup.md").write_text("# Backup\n\nSnapshots run nightly with restic.\n")
    idx = str(tmp / "idx")
    assert main(["index", str(src), "--index", idx], client_factory=_factory) == 0
    qfile = tmp / "q.jsonl"
    lines = [
        {
            "id": "undo",
            "query": "kubectl rollout undo",
            "relevant": {"viking://resources/docs/deploy.md": 1},
        },
        {
            "id": "rotate",
            "query": "nightly snapshots",
            "relevant": {"viking://resources/docs/keys.md": 1},
        },
    ]
    qfile.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return idx, qfile


def _run(capsys: pytest.CaptureFixture[str], idx: str, qfile: Path, *extra: str) -> str:
    capsys.readouterr()
    code = main(["eval", str(qfile), "--index", idx, *extra], client_factory=_factory)
    out = capsys.readouterr().out
    assert code == 0, out
    return out


@pytest.mark.parametrize("k", ["10", "3"])
def test_every_name_the_table_prints_is_a_json_key_with_its_value(
    capsys: pytest.CaptureFixture[str], labelled: tuple[str, Path], k: str
) -> None:
    idx, qfile = labelled
    report = json.loads(_run(capsys, idx, qfile, "--json", "--k", k))
    table = _run(capsys, idx, qfile, "--k", k)
    rows = re.findall(r"^  (\S+@\d+)\s+(\d\.\d{4})$", table, re.M)
    assert [name for name, _ in rows] == list(report["metrics"]), table
    for name, value in rows:
        assert value == f"{report['metrics'][name]:.4f}", (name, table)


def test_the_per_query_columns_are_the_per_query_keys(
    capsys: pytest.CaptureFixture[str], labelled: tuple[str, Path]
) -> None:
    idx, qfile = labelled
    report = json.loads(_run(capsys, idx, qfile, "--json"))
    table = _run(capsys, idx, qfile, "--per-query")
    header = next(line for line in table.splitlines() if line.startswith("id "))
    metrics = [word for word in header.split() if "@" in word]
    assert metrics == list(report["metrics"]), header
    assert all(set(metrics) <= set(row) for row in report["per_query"])


def test_the_json_keys_readers_use_are_unchanged(
    capsys: pytest.CaptureFixture[str], labelled: tuple[str, Path]
) -> None:
    """Control (passes on the base too): the JSON keeps ``RR@10``, no key renamed."""
    idx, qfile = labelled
    report = json.loads(_run(capsys, idx, qfile, "--json"))
    assert set(report["metrics"]) == {"nDCG@10", "R@10", "RR@10"}
    assert set(report) == {"queries", "k", "metrics", "per_query", "unknown_relevant"}
