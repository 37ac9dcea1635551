"""``treehop eval`` as a first-hour user runs it (helper usage80).

A labelled file is named by its file URI, as docs/cli.md's example does; a file long enough to
be chunked answers with its ``#chunk-N`` passages, which must count for it. A query file saved
with a UTF-8 byte order mark (Windows' editors, PowerShell 5's ``Out-File``) is read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from treehop import Treehop
from treehop.cli import ClientOptions, _eval, main

from treehop_test_doubles import BagOfWordsEmbedder

LONG = "viking://resources/guide/editor.md"
SHORT = "viking://resources/guide/credits.txt"


def _factory(options: ClientOptions) -> Treehop:
    return Treehop(options.path, user=options.user, embedder=BagOfWordsEmbedder())


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv), client_factory=_factory)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "160")
    monkeypatch.delenv("TREEHOP_INDEX", raising=False)


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with a long Markdown guide (chunked) and a short credits file."""
    root = tmp_path_factory.mktemp("u80eval")
    src = root / "guide"
    src.mkdir()
    sections = []
    topics = [
        ("Syntax highlighting", "colour keywords with the syntax and color directives"),
        ("Backups", "keep a backup file of every file saved with the backup option"),
        ("Mouse", "mouse support lets a click place the cursor"),
        ("Line wrapping", "hard wrapping breaks long lines at the fill column"),
    ]
    for title, body in topics:
        filler = " ".join(f"{body} paragraph {i}." for i in range(60))
        sections.append(f"## {title}\n\n{filler}\n")
    (src / "editor.md").write_text("# Editor guide\n\n" + "\n".join(sections))
    (src / "credits.txt").write_text("Thanks to the translators and the packagers.\n")
    idx = root / "index"
    assert main(["index", str(src), "--index", str(idx)], client_factory=_factory) == 0
    return idx


def _hits(capsys: pytest.CaptureFixture[str], idx: Path, query: str) -> list[str]:
    code, out, err = _run(capsys, "find", query, "--index", str(idx), "--json")
    assert code == 0, err
    return [m["uri"] for key in ("resources", "memories", "skills") for m in json.loads(out)[key]]


def _eval_json(
    capsys: pytest.CaptureFixture[str], idx: Path, qfile: Path, *extra: str
) -> dict[str, Any]:
    code, out, err = _run(capsys, "eval", str(qfile), "--index", str(idx), "--json", *extra)
    assert code == 0, err
    rep: dict[str, Any] = json.loads(out)
    return rep


def test_the_premise_a_long_files_hits_are_its_chunks(
    index: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hits = _hits(capsys, index, "syntax highlighting color directives")
    assert hits and hits[0].startswith(LONG + "#chunk-")
    assert LONG not in hits


def test_a_labelled_file_counts_its_chunks(
    index: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    qfile = tmp_path / "q.jsonl"
    qfile.write_text(
        json.dumps(
            {"id": "hl", "query": "syntax highlighting color directives", "relevant": {LONG: 1}}
        )
        + "\n"
    )
    for extra in ((), ("--files-only",)):
        rep = _eval_json(capsys, index, qfile, *extra)
        per = rep["per_query"][0]
        assert per["RR@10"] == 1.0 and per["R@10"] == 1.0 and per["nDCG@10"] == 1.0, extra
        assert rep["unknown_relevant"] == {}


def test_a_files_chunks_count_once_at_the_best_rank(
    index: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two relevant files, the long one first: nDCG as if each were found once, at the rank
    of its best passage (several chunks of one file are not several relevant results)."""
    query = "backup option backups saved"
    hits = _hits(capsys, index, query)
    files = list(dict.fromkeys(h.partition("#chunk-")[0] for h in hits))
    assert sum(h.startswith(LONG + "#") for h in hits) >= 2  # the premise: several chunks
    qfile = tmp_path / "q.jsonl"
    qfile.write_text(json.dumps({"query": query, "relevant": {LONG: 1, SHORT: 1}}) + "\n")
    rep = _eval_json(capsys, index, qfile)
    per = rep["per_query"][0]
    assert files[0] == LONG and per["RR@10"] == 1.0
    expected_recall = sum(f in files[:10] for f in (LONG, SHORT)) / 2
    assert per["R@10"] == pytest.approx(expected_recall)


def test_a_labelled_chunk_is_judged_as_itself() -> None:
    """A chunk labelled on its own keeps its exact match; another chunk of the same file is
    not it (only a label on the file takes its chunks)."""
    chunk3, chunk5 = LONG + "#chunk-3", LONG + "#chunk-5"
    qs = [_eval.LabelledQuery("c", "q", {chunk3: 1}, 1)]
    assert _eval.evaluate(qs, [[chunk5, chunk3]], k=10).per_query[0]["RR@10"] == 0.5
    assert _eval.evaluate(qs, [[chunk5]], k=10).per_query[0]["R@10"] == 0.0


def test_a_file_inside_a_labelled_directory_is_not_the_directory() -> None:
    qs = [_eval.LabelledQuery("d", "q", {"viking://resources/guide": 1}, 1)]
    rep = _eval.evaluate(qs, [[LONG + "#chunk-1", LONG, SHORT]], k=10)
    assert rep.per_query[0]["R@10"] == 0.0


def test_a_query_file_with_a_byte_order_mark_is_read(
    index: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = json.dumps({"query": "mouse support click cursor", "relevant": {LONG: 1}})
    qfile = tmp_path / "q.jsonl"
    qfile.write_bytes(
        b"\xef\xbb\xbf" + (line + "\r\n" + line.replace("mouse", "hard wrapping") + "\r\n").encode()
    )
    rep = _eval_json(capsys, index, qfile)
    assert rep["queries"] == 2
    assert rep["per_query"][0]["query"] == "mouse support click cursor"


def test_a_byte_order_mark_inside_the_file_is_still_an_error(tmp_path: Path) -> None:
    """Only the file's first character may be the mark: elsewhere it is text that is not JSON."""
    line = json.dumps({"query": "q", "relevant": {LONG: 1}})
    qfile = tmp_path / "q.jsonl"
    qfile.write_bytes((line + "\n").encode() + b"\xef\xbb\xbf" + line.encode())
    with pytest.raises(_eval.EvalFileError, match=r"q\.jsonl:2: not valid JSON"):
        _eval.load_queries(qfile, lambda u: u)
