"""Adversarial pass attacks58.

Each test was written failing first (bench/README.md, "Adversarial pass (helper attacks58)").
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import Treehop
from treehop.cli import ClientOptions, _eval, main
from treehop.cli._eval import EvalFileError

from treehop_test_doubles import SAMPLE_TREE, BagOfWordsEmbedder

OAUTH = "viking://resources/security/auth/oauth.md"


def _factory(options: ClientOptions) -> Treehop:
    return Treehop(options.path, user=options.user, llm=options.llm, embedder=BagOfWordsEmbedder())


@pytest.fixture(scope="module")
def security_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    idx = tmp_path_factory.mktemp("a58") / "index"
    src = SAMPLE_TREE / "resources" / "security"
    assert main(["index", str(src), "--index", str(idx)], client_factory=_factory) == 0
    return idx


# -- 1. treehop eval: ids and grades the metric provider's C code cannot hold ----------------

_EVAL_RUN = """
import sys
sys.path[:0] = {paths!r}
from treehop import Treehop
from treehop.cli import main
from treehop_test_doubles import BagOfWordsEmbedder
def factory(o):
    return Treehop(o.path, user=o.user, llm=o.llm, embedder=BagOfWordsEmbedder())
sys.exit(main(["eval", {file!r}, "--index", {index!r}], client_factory=factory))
"""


def test_eval_refuses_a_lone_surrogate_id_without_crashing(
    security_index: Path, tmp_path: Path
) -> None:
    # pytrec_eval encodes ids in C: a lone surrogate crashed the interpreter (SIGSEGV)
    qfile = tmp_path / "q.jsonl"
    line = {"id": "\ud800", "query": "oauth", "relevant": {OAUTH: 1}}
    qfile.write_text(json.dumps(line) + "\n", encoding="utf-8")
    paths = [p for p in sys.path if p]
    script = _EVAL_RUN.format(paths=paths, file=str(qfile), index=str(security_index))
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    assert "lone surrogate" in proc.stderr


@pytest.mark.parametrize(
    ("line", "said"),
    [
        # a NUL cut the id short in C: raw KeyError
        ({"id": "a\x00b", "query": "oauth", "relevant": {OAUTH: 1}}, "without NUL"),
        # a grade past a C int: SystemError (10**400) or silently 0 (2**32)
        ({"query": "oauth", "relevant": {OAUTH: 10**400}}, "integer from 0 to"),
        ({"query": "oauth", "relevant": {OAUTH: 2**32}}, "integer from 0 to"),
        ({"id": [1], "query": "oauth", "relevant": {OAUTH: 1}}, "string or an integer"),
        # a query find refuses is refused with its line, before any find runs
        ({"query": "\u200b", "relevant": {OAUTH: 1}}, ":1: query has no visible"),
    ],
)
def test_eval_refuses_ids_and_grades_trec_eval_cannot_hold(
    security_index: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    line: dict[str, object],
    said: str,
) -> None:
    qfile = tmp_path / "q.jsonl"
    qfile.write_text(json.dumps(line) + "\n", encoding="utf-8")
    code = main(["eval", str(qfile), "--index", str(security_index)], client_factory=_factory)
    err = capsys.readouterr().err
    assert code == 2, err
    assert said in err


def test_eval_keeps_a_large_grade_it_can_hold(
    security_index: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    qfile = tmp_path / "q.jsonl"
    line = {"id": 7, "query": "oauth tokens", "relevant": {OAUTH: 2**31 - 1}}
    qfile.write_text(json.dumps(line) + "\n", encoding="utf-8")
    code = main(
        ["eval", str(qfile), "--index", str(security_index), "--json"], client_factory=_factory
    )
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["per_query"][0]["id"] == "7"
    assert out["metrics"]["R@10"] == 1.0


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(), st.integers(), st.none(), st.booleans(), st.floats()))
def test_eval_query_id_is_a_c_safe_string_or_refused(value: object) -> None:
    try:
        qid = _eval._query_id(value, "f:1")
    except EvalFileError:
        return
    assert isinstance(value, (str, int)) and not isinstance(value, bool)
    assert qid == str(value) and "\x00" not in qid and qid.strip()
    qid.encode("utf-8")
