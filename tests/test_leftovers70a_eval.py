"""``treehop eval --files-only`` with a labelled directory (helper leftovers70a).

``--files-only`` drops directories from the hits, so a query labelling a directory scored 0
whatever the ranking, as a chunked file's label did before usage80 judged a chunk as its
file. Under ``--files-only`` a hit inside a labelled directory now counts as that directory
(the deepest labelled one, once, at its best rank), unless the query labels the file itself;
without it a directory is a hit of its own and is judged by its own URI, as before.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from test_usage80_eval import _env, _factory  # noqa: F401 (_env: the autouse fixture)
from treehop.cli import _eval, main

DOCS = "viking://resources/docs"
EDITOR = DOCS + "/editor"
GUIDE = EDITOR + "/guide.md"
CREDITS = DOCS + "/credits/credits.txt"
QUERY = "syntax highlighting color directives"


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``docs/editor/guide.md`` (long: chunked), ``docs/editor/keys.txt``,
    ``docs/credits/credits.txt``."""
    root = tmp_path_factory.mktemp("l70eval")
    src = root / "docs"
    (src / "editor").mkdir(parents=True)
    (src / "credits").mkdir()
    sections = []
    for title, body in [
        ("Syntax highlighting", "colour keywords with the syntax and color directives"),
        ("Backups", "keep a backup file of every file saved with the backup option"),
        ("Mouse", "mouse support lets a click place the cursor"),
    ]:
        filler = " ".join(f"{body} paragraph {i}." for i in range(60))
        sections.append(f"## {title}\n\n{filler}\n")
    (src / "editor" / "guide.md").write_text("# Editor guide\n\n" + "\n".join(sections))
    (src / "editor" / "keys.txt").write_text("Key bindings: syntax of the bind directive.\n")
    (src / "credits" / "credits.txt").write_text("Thanks to the translators and packagers.\n")
    idx = root / "index"
    assert main(["index", str(src), "--index", str(idx)], client_factory=_factory) == 0
    return idx


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    code = main([*argv, "--json"], client_factory=_factory)
    out, err = capsys.readouterr()
    assert code == 0, err
    rep: dict[str, Any] = json.loads(out)
    return rep


def _hits(capsys: pytest.CaptureFixture[str], idx: Path, *extra: str) -> list[str]:
    found = _run(capsys, "find", QUERY, "--index", str(idx), *extra)
    return [m["uri"] for key in ("resources", "memories", "skills") for m in found[key]]


def _eval_one(
    capsys: pytest.CaptureFixture[str], idx: Path, tmp: Path, relevant: dict[str, int], *extra: str
) -> dict[str, Any]:
    qfile = tmp / "q.jsonl"
    qfile.write_text(json.dumps({"id": "q", "query": QUERY, "relevant": relevant}) + "\n")
    rep = _run(capsys, "eval", str(qfile), "--index", str(idx), *extra)
    assert rep["unknown_relevant"] == {}
    per: dict[str, Any] = rep["per_query"][0]
    return per


def test_a_labelled_directory_counts_its_files_under_files_only(
    index: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hits = _hits(capsys, index, "--files-only")
    assert hits[0].startswith(GUIDE + "#chunk-")  # the premise: a passage inside EDITOR first
    per = _eval_one(capsys, index, tmp_path, {EDITOR: 1}, "--files-only")
    assert per["RR@10"] == 1.0 and per["R@10"] == 1.0 and per["nDCG@10"] == 1.0


def test_without_files_only_a_directory_is_judged_by_its_own_uri(
    index: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A control (the rule before the change): the directory's own rank, or 0."""
    hits = _hits(capsys, index)
    want = 1 / (hits.index(EDITOR) + 1) if EDITOR in hits[:10] else 0.0
    assert _eval_one(capsys, index, tmp_path, {EDITOR: 1})["RR@10"] == pytest.approx(want)
    assert hits[0] != EDITOR  # (so the two rules differ on this query)


def test_a_files_own_label_beats_its_directorys() -> None:
    """A file labelled 0 inside a labelled directory is judged as itself (not relevant);
    the directory counts once, at the best rank of the others, the deepest label first."""
    qs = [_eval.LabelledQuery("q", "q", {DOCS: 1, EDITOR: 2, GUIDE: 0}, 1)]
    keys = EDITOR + "/keys.txt"
    rep = _eval.evaluate(qs, [[GUIDE + "#chunk-2", keys, CREDITS]], k=10, files_only=True)
    per = rep.per_query[0]
    assert per["RR@10"] == 0.5  # GUIDE is itself (grade 0); keys.txt is EDITOR, at rank 2
    assert per["R@10"] == 1.0  # EDITOR (via keys.txt) and DOCS (via credits.txt)
    same = _eval.evaluate(qs, [[GUIDE + "#chunk-2", keys, CREDITS, keys]], k=10, files_only=True)
    for name in _eval.metric_names(10):  # (a directory found twice is one result)
        assert same.per_query[0][name] == per[name]


def test_only_a_whole_segment_is_a_directory() -> None:
    """``docs/editor-old/x`` is not inside ``docs/editor``; the scheme's ``//`` is no
    directory either."""
    qs = [_eval.LabelledQuery("q", "q", {EDITOR: 1, "viking:": 1, "viking:/": 1}, 1)]
    hit = DOCS + "/editor-old/x.md"
    assert _eval.evaluate(qs, [[hit]], k=10, files_only=True).per_query[0]["R@10"] == 0.0
