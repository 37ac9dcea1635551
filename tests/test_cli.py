"""The ``treehop`` command line, driven as a user drives it.

Most tests call ``main(argv, client_factory=...)`` in-process with the bag-of-words embedder
(fast, deterministic) and check what is printed and the exit code; two tests run the real
console entry point in a subprocess with the offline MiniLM embedder on the sample tree.
"""

from __future__ import annotations

import io
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from treehop import FindResult, MatchedContext, Treehop
from treehop.cli import ClientOptions, ExitCode, main
from treehop.cli import _render as render
from treehop.ingest import loaders
from treehop.models import FoundBy
from treehop.uri import to_display

from fake_servers.openai_chat import FakeOpenAIChatServer, Reply
from treehop_test_doubles import SAMPLE_TREE, BagOfWordsEmbedder

REPO = Path(__file__).resolve().parents[1]
SECURITY = SAMPLE_TREE / "resources" / "security"
ML = SAMPLE_TREE / "resources" / "machine-learning"
OAUTH = "viking://resources/security/auth/oauth.md"


class Recorder:
    """A client factory using the bag-of-words embedder; keeps the embedders it made."""

    def __init__(self) -> None:
        self.embedders: list[BagOfWordsEmbedder] = []
        self.options: list[ClientOptions] = []

    def __call__(self, options: ClientOptions) -> Treehop:
        emb = BagOfWordsEmbedder()
        self.embedders.append(emb)
        self.options.append(options)
        return Treehop(options.path, user=options.user, llm=options.llm, embedder=emb)


def run(
    capsys: pytest.CaptureFixture[str], *argv: str, factory: Any = None
) -> tuple[int, str, str]:
    code = main(list(argv), client_factory=factory or Recorder())
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "160")
    for var in ("TREEHOP_INDEX", "TREEHOP_USER", "TREEHOP_LLM_MODEL", "TREEHOP_LLM_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.delenv("TREEHOP_LLM_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


@pytest.fixture(scope="module")
def built_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """security + machine-learning under viking://resources, memories under viking://~."""
    idx = tmp_path_factory.mktemp("cli") / "index"
    for src, extra in [
        (SECURITY, []),
        (ML, ["--tag", "ml"]),
        (SAMPLE_TREE / "memories", ["--target-uri", "viking://~/memories/prefs"]),
    ]:
        assert (
            main(["index", str(src), "--index", str(idx), *extra], client_factory=Recorder()) == 0
        )
    return idx


@pytest.fixture
def index_copy(built_index: Path, tmp_path: Path) -> Path:
    """A private copy for tests that change the index (tags, sessions)."""
    dst = tmp_path / "index"
    shutil.copytree(built_index, dst)
    return dst


def shown(uri: str) -> str:
    """Results and traces hold resolved URIs of the user's space; the CLI prints the ~ form."""
    return to_display(uri, "default")


def table_rows(out: str) -> list[str]:
    """Data rows of the first table (lines starting with a rank number)."""
    return [ln for ln in out.splitlines() if re.match(r"^\s*\d+\s+-?\d\.\d{3}\s", ln)]


# ---------------------------------------------------------------------------------- index
def test_index_counts_and_skipped_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = tmp_path / "docs"
    (docs / "guides").mkdir(parents=True)
    (docs / "guides" / "kafka.md").write_text("# Kafka\n\nPartitions and consumer groups.\n")
    (docs / "guides" / "flink.md").write_text("# Flink\n\nStateful stream processing.\n")
    (docs / "notes.txt").write_text("Release notes for the streaming platform.\n")
    (docs / "secret.md").write_text("# Secret\n\nnever read\n")
    (docs / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    (docs / "data.bin").write_bytes(bytes(range(256)))
    real_read = loaders._read_bytes

    def deny(
        path: Path | str,
        limit: int | None = None,
        *,
        follow: bool = True,
        below: int = 0,
        folders: loaders.FolderCursor | None = None,
    ) -> bytes:
        if Path(path).name == "secret.md":  # (as EACCES would make it)
            raise PermissionError(13, "Permission denied", str(path))
        return real_read(path, limit, follow=follow, below=below, folders=folders)

    monkeypatch.setattr(loaders, "_read_bytes", deny)
    idx = tmp_path / "idx"
    code, out, err = run(capsys, "index", str(docs), "--index", str(idx), "--tag", "streaming")
    assert code == ExitCode.OK, err
    assert "-> viking://resources/docs" in out
    assert "2 directories, 3 files, 0 chunks (5 embedded, 0 unchanged, 0 removed)" in out
    assert "skipped 2 binary files: data.bin, logo.png" in out
    assert "skipped 1 unreadable file: secret.md" in out
    assert f"index {idx} holds " in out
    assert (idx / "CURRENT").is_file()

    # Re-indexing unchanged files embeds nothing; --json carries the same counts.
    rec = Recorder()
    code, out, _ = run(capsys, "index", str(docs), "--index", str(idx), "--json", factory=rec)
    data = json.loads(out)
    assert code == 0
    assert (data["directories"], data["files"], data["embedded"], data["unchanged"]) == (2, 3, 0, 5)
    assert data["skipped_binary"] == ["data.bin", "logo.png"]
    assert data["skipped_unreadable"] == ["secret.md"]
    assert data["root_uri"] == "viking://resources/docs"
    assert rec.embedders[0].texts_embedded == 0


def test_index_user_tags_reach_every_node(
    built_index: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(
        capsys,
        "tag",
        "viking://resources/machine-learning/classical/evaluation.md",
        "--index",
        str(built_index),
    )
    assert code == 0
    assert re.search(r"^\s+user\s+ml$", out, re.M)


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_index_progress_bar_on_a_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = tmp_path / "many"
    docs.mkdir()
    for i in range(70):  # more than one embedding batch of 64
        (docs / f"note-{i:02d}.md").write_text(f"# Note {i}\n\nabout topic number {i}\n")
    tty = FakeTTY()
    monkeypatch.setattr(sys, "stderr", tty)
    code = main(["index", str(docs), "--index", str(tmp_path / "idx")], client_factory=Recorder())
    assert code == 0
    shown = tty.getvalue()
    assert "reading and summarising" in shown
    frames = re.findall(r"\rembedding\s+[█░]+ (\d+)/(\d+)", shown)
    assert [int(d) for d, _ in frames] == [64, 71]  # 70 files + their directory
    assert {t for _, t in frames} == {"71"}
    assert shown.endswith("71/71\n")


def test_progress_prints_plain_lines_when_not_a_terminal() -> None:
    """A log file (no TTY) gets whole lines at an interval, not ``\r`` frames, with files,
    nodes, nodes/s and an ETA; ``none`` prints nothing; ``bar`` is the terminal frame."""
    now = [0.0]
    stream = io.StringIO()
    p = render.Progress(stream, interval_s=10, clock=lambda: now[0])
    assert p.mode == "plain"
    p("files", 0, 40)
    p("embed", 50, 1000)  # the first line: no rate yet
    now[0] = 5.0
    p("files", 4, 40)
    p("embed", 150, 1000)  # within the interval: no line
    now[0] = 10.0
    p("files", 8, 40)
    p("embed", 250, 1000)
    now[0] = 20.0
    p("files", 40, 40)
    p("embed", 1000, 1000)  # the end always prints
    lines = stream.getvalue().splitlines()
    assert lines == [
        "progress: 0/40 files, 50/1000 nodes",
        "progress: 8/40 files, 250/1000 nodes, 20.0 nodes/s, ETA 38s",
        "progress: 40/40 files, 1000/1000 nodes, 47.5 nodes/s",
    ]
    assert "\r" not in stream.getvalue()

    quiet = io.StringIO()
    q = render.Progress(quiet, mode="none")
    q("embed", 3, 10)
    q.note("reading")
    q.finish()
    assert quiet.getvalue() == ""
    forced = render.Progress(stream := io.StringIO(), mode="bar")
    forced("embed", 5, 10)
    forced.finish()
    assert stream.getvalue() == "\rembedding   ████████████░░░░░░░░░░░░ 5/10\n"
    with pytest.raises(ValueError):
        render.Progress(io.StringIO(), mode="fancy")


def test_index_progress_lines_in_a_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    docs = tmp_path / "many"
    docs.mkdir()
    for i in range(70):
        (docs / f"note-{i:02d}.md").write_text(f"# Note {i}\n\nabout topic number {i}\n")
    code, _, err = run(capsys, "index", str(docs), "--index", str(tmp_path / "idx"))
    assert code == 0
    assert "reading and summarising" in err
    assert "progress: 70/70 files, 71/71 nodes" in err  # the final line, always printed
    assert "\r" not in err
    code, _, err = run(
        capsys, "index", str(docs), "--index", str(tmp_path / "i2"), "--progress", "none"
    )
    assert code == 0 and err == ""


def test_index_mistakes_have_clear_messages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    idx = tmp_path / "idx"
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out, err = run(capsys, "index", str(empty), "--index", str(idx))
    assert code == ExitCode.INGEST
    assert f"no readable text files under {empty}" in err
    assert "Traceback" not in err and out == ""
    assert not idx.exists(), "a failed first index must not leave an empty index behind"

    binary = tmp_path / "binary"
    binary.mkdir()
    (binary / "a.bin").write_bytes(b"\x00\x01\x02")
    (binary / "b.bin").write_bytes(b"\x00\x03")
    code, _, err = run(capsys, "index", str(binary), "--index", str(idx))
    assert code == ExitCode.INGEST and "(2 binary skipped)" in err

    code, _, err = run(capsys, "index", str(tmp_path / "missing"), "--index", str(idx))
    assert code == ExitCode.INGEST and "no such file or directory" in err

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("alpha\n")
    code, _, err = run(capsys, "index", str(docs), "--index", str(docs / "idx"))
    assert code == ExitCode.USAGE and "would index itself" in err
    code, _, err = run(capsys, "index", str(docs), "--index", str(docs))
    assert code == ExitCode.USAGE and "is the directory being indexed" in err
    code, _, err = run(capsys, "index", str(docs), "--index", str(idx), "--tag", "bad;tag")
    assert code == ExitCode.USAGE and "forbidden character" in err
    code, _, err = run(capsys, "index", str(docs), "--index", str(docs / "a.md"))
    assert code == ExitCode.USAGE  # the index must be a directory
    other = tmp_path / "not-an-index"
    other.mkdir()
    (other / "keep.txt").write_text("mine")
    code, _, err = run(capsys, "index", str(docs), "--index", str(other))
    assert code == ExitCode.USAGE and "is not a treehop index" in err
    assert sorted(p.name for p in other.iterdir()) == ["keep.txt"]
    # a first write that failed leaves only treehop's own locks: still a new index
    started = tmp_path / "started"
    (started / "locks").mkdir(parents=True)
    (started / "locks" / "key-7").write_bytes(b"")
    (started / "LOCK").write_bytes(b"")
    code, _, err = run(capsys, "index", str(docs), "--index", str(started))
    assert code == 0, err


def test_a_hidden_index_inside_the_directory_is_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("alpha beta\n")
    idx = docs / ".treehop"
    assert run(capsys, "index", str(docs), "--index", str(idx))[0] == 0
    code, out, _ = run(capsys, "index", str(docs), "--index", str(idx))
    assert code == 0 and "1 directory, 1 file, 0 chunks (0 embedded, 2 unchanged" in out


# ---------------------------------------------------------------------------------- no index
@pytest.mark.parametrize(
    "argv",
    [
        ["find", "oauth"],
        ["search", "oauth"],
        ["ls"],
        ["tree"],
        ["read", OAUTH],
        ["tag", OAUTH],
        ["retag"],
        ["session", "new"],
    ],
)
def test_commands_without_an_index_say_how_to_create_one(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    idx = tmp_path / "nowhere"
    factory = Recorder()
    code, out, err = run(capsys, *argv, "--index", str(idx), factory=factory)
    assert code == ExitCode.NOT_FOUND
    assert f"no treehop index at {idx}" in err
    assert f"treehop index DIR --index {idx}" in err
    assert out == "" and factory.options == []  # nothing opened, nothing created
    assert not idx.exists()


def test_index_path_from_environment_and_after_the_command(
    built_index: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    rec = Recorder()
    monkeypatch.setenv("TREEHOP_INDEX", str(built_index))
    assert run(capsys, "ls", factory=rec)[0] == 0
    assert run(capsys, "--index", str(built_index), "ls", factory=rec)[0] == 0
    assert run(capsys, "ls", "--index", str(built_index), "--user", "bob", factory=rec)[0] == 0
    assert [o.path for o in rec.options] == [built_index] * 3
    assert [o.user for o in rec.options] == ["default", "default", "bob"]
    monkeypatch.setenv("TREEHOP_INDEX", str(built_index.parent / "nope"))
    assert run(capsys, "ls")[0] == ExitCode.NOT_FOUND


# ---------------------------------------------------------------------------------- find
def test_find_prints_a_ranked_table_with_provenance(
    built_index: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    q = "OAuth access tokens refresh tokens"
    dense = ("--dense-weight", "1")  # dense only: the score column is the vector score
    code, out, err = run(capsys, "find", q, "--index", str(built_index), *dense)
    assert code == 0, err
    code, js, _ = run(capsys, "find", q, "--index", str(built_index), "--json", *dense)
    res = FindResult.model_validate(json.loads(js))
    hits = res.contexts()
    assert OAUTH in [h.uri for h in hits]
    lines = out.splitlines()
    assert lines[0] == f"{len(hits)} hits for {q!r}"
    # Tree context moves scores off the vector score, so the vector column is shown beside.
    assert re.match(r"^\s*#\s+score\s+vector\s+uri\s+found\s+abstract$", lines[1])
    rows = table_rows(out)
    assert len(rows) == len(hits)
    for rank, (row, hit) in enumerate(zip(rows, hits, strict=True), 1):
        cells = row.split()
        assert cells[0] == str(rank) and cells[1] == f"{hit.score:.3f}" and cells[3] == hit.uri
        assert cells[2] == f"{hit.vector_score:.3f}"
        assert render.how_found(hit, shown) in row
    qr = (res.query_results or [])[0]
    assert f"stopped: {qr.stop_reason}" in out


def test_find_explain_prints_the_heap_search_path(
    built_index: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    q = "OAuth access tokens"
    args = ["find", q, "--index", str(built_index), "--explain", "--limit", "3"]
    code, out, _ = run(capsys, *args)
    assert code == 0
    _, js, _ = run(capsys, *args, "--json")
    qr = FindResult.model_validate(json.loads(js)).query_results[0]  # type: ignore[index]
    # The bound may settle the top-k without opening a directory (zero rounds); every round
    # that did run is recorded.
    assert len(qr.trace) == qr.rounds, "--explain must record every round"
    path = out[out.index("search path for") :]

    assert f"starting points ({len(qr.starting_points)}):" in path
    assert any(u.startswith("viking://user/default/") for u, _ in qr.starting_points)
    for uri, s in qr.starting_points:
        assert f"{s:7.3f}  {shown(uri)}" in path
    assert "viking://user/" not in path
    assert f"rounds ({qr.rounds}):" in path
    for t in qr.trace:
        assert f"{t.round:>3}. popped {shown(t.popped)} ({t.popped_score:.3f})" in path
        for child, s in t.best_children:
            assert f"-> {s:.3f}  {shown(child)}" in path
    assert f"stopped: {qr.stop_reason}" in path
    assert "tree effect:" in path and "found below the global step" in path
    assert "tag hops:" in path
    # Without --explain there is no path section.
    _, plain, _ = run(capsys, *args[:-3])
    assert "search path for" not in plain


def test_find_scopes_and_filters(built_index: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["--index", str(built_index), "--json"]

    def uris(*extra: str, query: str = "model training evaluation tokens") -> list[str]:
        code, out, err = run(capsys, "find", query, *base, *extra)
        assert code == 0, err
        return [m.uri for m in FindResult.model_validate(json.loads(out)).contexts()]

    everything = uris()
    assert any(u.startswith("viking://resources/security") for u in everything)
    scoped = uris("--target-uri", "viking://resources/machine-learning")
    assert scoped and all(u.startswith("viking://resources/machine-learning") for u in scoped)
    tagged = uris("--tag", "ml", "--files-only")
    assert tagged and all(u.startswith("viking://resources/machine-learning/") for u in tagged)
    assert all(u.endswith(".md") for u in tagged)
    mem = uris("--type", "memory")
    assert mem and all(u.startswith("viking://~/memories/prefs") for u in mem)
    filt = json.dumps({"op": "must", "field": "name", "conds": ["oauth.md", "attention.md"]})
    both = "OAuth access tokens; self-attention over every token of a sequence"
    assert sorted(uris("--filter", filt, query=both)) == [
        "viking://resources/machine-learning/transformers/attention.md",
        OAUTH,
    ]


def test_find_bad_input_is_a_usage_error_without_traceback(
    built_index: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    idx = ["--index", str(built_index)]
    cases = [
        (["find", "x", "--filter", "{not json"], ExitCode.USAGE, "--filter is not valid JSON"),
        (["find", "x", "--filter", "[1]"], ExitCode.USAGE, "must be a JSON object"),
        (["find", "x", "--filter", '{"op": "nope"}'], ExitCode.USAGE, "nope"),
        (["find", "   "], ExitCode.USAGE, "query is empty"),
        (["find", "x", "--limit", "0"], ExitCode.USAGE, "limit must be between 1 and 1000"),
        (["find", "x", "--target-uri", "http://x"], ExitCode.USAGE, "must start with 'viking://'"),
        (["find", "x", "--target-uri", "viking://resources/nope"], ExitCode.NOT_FOUND, "unknown"),
        (["find", "x", "--tag", "a:b"], ExitCode.USAGE, "unknown source"),
        (["find", "x", "--mode", "fast"], ExitCode.USAGE, "invalid choice"),
        (["find"], ExitCode.USAGE, "required: query"),
        (["frobnicate"], ExitCode.USAGE, "invalid choice"),
        (["ls", "viking://resources/../etc"], ExitCode.USAGE, "tries to leave its root"),
        (["ls", "viking://resources/nope"], ExitCode.NOT_FOUND, "no node at"),
        (["ls", OAUTH], ExitCode.USAGE, "is a leaf, not a directory"),
        (["read", "viking://~/secrets"], ExitCode.USAGE, "holds only 'memories' and 'skills'"),
        (["tree", "--depth", "-1"], ExitCode.USAGE, "--depth must be >= 0"),
    ]
    for argv, want, message in cases:
        code, out, err = run(capsys, *argv, *idx)
        assert code == want, (argv, err)
        assert message in err, (argv, err)
        assert "Traceback" not in err and out == "", argv


def test_invalid_uri_error_carries_a_hint(
    built_index: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "read", "resources/a.md", "--index", str(built_index))
    assert code == ExitCode.USAGE
    assert err.splitlines() == [
        "treehop: error: URI 'resources/a.md' must start with 'viking://'",
        "  URIs look like viking://resources/<path>, viking://~/memories/<path> or "
        "viking://~/skills/<path>",
    ]


def test_debug_env_shows_the_traceback(
    built_index: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from treehop.errors import InvalidURIError

    monkeypatch.setenv("TREEHOP_DEBUG", "1")
    with pytest.raises(InvalidURIError):
        main(["read", "nope", "--index", str(built_index)], client_factory=Recorder())


# ---------------------------------------------------------------------------------- browse
def test_ls_tree_read(built_index: Path, capsys: pytest.CaptureFixture[str]) -> None:
    idx = ["--index", str(built_index)]
    code, out, _ = run(capsys, "ls", *idx)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["kind", "children", "uri"]
    assert [ln.split()[2] for ln in lines[1:] if ln.startswith("dir")] == [
        "viking://resources/machine-learning",
        "viking://resources/security",
    ]
    _, out, _ = run(capsys, "ls", "viking://resources/security/auth", *idx, "--json")
    entries = json.loads(out)
    assert [e["uri"].rsplit("/", 1)[1] for e in entries] == [
        "api-keys.md",
        "oauth.md",
        "单点登录.md",
    ]
    assert all(e["is_leaf"] for e in entries)

    code, out, _ = run(capsys, "tree", "viking://resources/security", *idx, "--no-abstract")
    assert code == 0
    assert out.splitlines() == [
        "viking://resources/security/",
        "└── auth/",
        "    ├── api-keys.md",
        "    ├── oauth.md",
        "    └── 单点登录.md",
        "1 directory, 3 leaves (depth 3)",
    ]
    _, out, _ = run(capsys, "tree", *idx, "--depth", "1")
    assert out.splitlines()[-1] == "2 directories, 0 leaves (depth 1)"
    _, out, _ = run(capsys, "tree", "viking://~/memories", *idx, "--depth", "1")
    assert "└── prefs/" in out and "viking://user/" not in out

    code, out, err = run(capsys, "read", OAUTH, *idx)
    assert code == 0 and err == ""
    assert out == (SECURITY / "auth" / "oauth.md").read_text().strip() + "\n"
    code, out, err = run(capsys, "read", "viking://resources/security/auth", *idx)
    assert code == 0 and "is a directory: showing its overview" in err
    assert "oauth" in out.lower()


def test_table_fits_width_and_aligns_wide_characters() -> None:
    cols = [render.Column("#", ">"), render.Column("uri"), render.Column("abstract", flex=True)]
    rows = [
        ["1", "viking://resources/单点登录.md", "统一接入单点登录 " * 10],
        ["10", "viking://x", "short"],
    ]
    lines = render.table(cols, rows, 70)
    assert all(render.cell_width(ln) <= 70 for ln in lines)
    marks = ["abstract", "统一", "short"]
    starts = {render.cell_width(ln[: ln.index(m)]) for ln, m in zip(lines, marks, strict=True)}
    assert len(starts) == 1, lines  # the abstract column starts at the same terminal column
    assert lines[1].endswith("…")
    narrow = render.table(cols, rows, 40)  # too narrow: the abstract moves under its row
    assert narrow[0].split() == ["#", "uri"]
    assert narrow[2].startswith("    统一接入") and narrow[4] == "    short"
    assert render.truncate("abcdef", 4) == "abc…" and render.truncate("单点登录", 5) == "单点…"


def test_how_found_phrases() -> None:
    def hit(**kw: Any) -> MatchedContext:
        base: dict[str, Any] = {
            "uri": "viking://resources/a/b/c.md",
            "context_type": "resource",
            "is_leaf": True,
            "abstract": "",
            "score": 0.5,
        }
        return MatchedContext(**{**base, **kw})

    def disp(u: str) -> str:
        return u.replace("viking://user/alice", "viking://~")

    assert render.how_found(hit(), disp) == "global"
    assert render.how_found(
        hit(found_by=FoundBy.CHILD, found_via="viking://resources/a/b"), disp
    ) == ("child of …/b/")
    assert render.how_found(
        hit(found_by=FoundBy.CHILD, found_via="viking://resources/z"), disp
    ) == ("child of viking://resources/z")
    hop = hit(
        found_by=FoundBy.TAG_HOP,
        found_via="viking://resources/a/b",
        hop_tag="oauth",
        hop_source="viking://user/alice/memories/m.md",
    )
    assert render.how_found(hop, disp) == "tag hop via 'oauth' from viking://~/memories/m.md"
    near = hit(found_by=FoundBy.NEIGHBOUR, found_via="viking://resources/a/b/c.md#chunk-1")
    assert render.how_found(near, disp) == "neighbour of viking://resources/a/b/c.md#chunk-1"


# ---------------------------------------------------------------------------------- tags
def test_tag_add_remove_and_retag_without_reembedding(
    index_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    idx = ["--index", str(index_copy)]
    rec = Recorder()
    code, out, err = run(
        capsys, "tag", "viking://resources/security", "--add", "Identity", "sso", *idx, factory=rec
    )
    assert code == 0, err
    assert out.splitlines()[0].startswith("viking://resources/security: ")
    assert re.search(r"^\s+user\s+identity, sso$", out, re.M)
    # The tag filter now finds the subtree through the new tag (inherited by descendants).
    _, out, _ = run(capsys, "find", "tokens", *idx, "--tag", "identity", "--json", factory=rec)
    uris = [m.uri for m in FindResult.model_validate(json.loads(out)).contexts()]
    assert uris and all(u.startswith("viking://resources/security") for u in uris)
    code, out, _ = run(
        capsys, "tag", "viking://resources/security", "--remove", "sso", *idx, "--json", factory=rec
    )
    tags = json.loads(out)["tags"]
    assert "user:identity" in tags and "user:sso" not in tags
    code, out, _ = run(capsys, "retag", *idx, factory=rec)
    assert code == 0 and re.fullmatch(
        r"re-tagged \d+ nodes? in the whole index \(vectors unchanged\)\n", out
    )
    code, out, _ = run(capsys, "retag", "viking://resources/security", *idx, "--json", factory=rec)
    assert code == 0 and isinstance(json.loads(out)["retagged"], int)
    # Tag edits and re-tagging never call the embedder (the find above embedded one query).
    assert sum(e.texts_embedded for e in rec.embedders) == 1
    code, _, err = run(capsys, "tag", "viking://resources/nope", "--add", "x", *idx)
    assert code == ExitCode.NOT_FOUND and "no node at" in err


# ---------------------------------------------------------------------------------- search
def test_sessions_and_search_without_llm_fall_back_visibly(
    index_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    idx = ["--index", str(index_copy)]
    code, out, _ = run(capsys, "session", "new", *idx)
    sid = out.strip()
    assert code == 0 and re.fullmatch(r"[0-9a-f]{32}", sid)
    code, out, _ = run(capsys, "session", "add", sid, "I set up login for our web app", *idx)
    assert code == 0 and out == f"added a user message to session {sid} (1 message)\n"
    run(capsys, "session", "add", sid, "Use OAuth.", "--role", "assistant", *idx)
    code, out, _ = run(capsys, "session", "show", sid, *idx)
    assert out.splitlines() == [
        f"session {sid} (2 messages)",
        "  [0] user: I set up login for our web app",
        "  [1] assistant: Use OAuth.",
    ]
    _, out, _ = run(capsys, "session", "list", *idx, "--json")
    assert [s["session_id"] for s in json.loads(out)] == [sid]

    code, out, err = run(capsys, "search", "OAuth access tokens", "--session", sid, *idx)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "plan: fallback (no LLM configured); searching the raw query"
    assert {ln.split()[1] for ln in lines[1:4]} == {"memory", "resource", "skill"}
    header = next(ln for ln in lines if ln.lstrip().startswith("#"))
    assert header.split() == ["#", "fused", "vector", "uri", "found", "queries", "abstract"]
    rows = table_rows(out)
    assert rows and all(re.search(r"\sq[123]\s", r) for r in rows)
    assert any(OAUTH in r for r in rows)
    code, _, err = run(capsys, "search", "x", "--session", "0" * 32, *idx)
    assert code == ExitCode.NOT_FOUND and "no session" in err
    code, _, err = run(capsys, "session", "add", sid, "hi", "--role", "robot", *idx)
    assert code == ExitCode.USAGE


def test_search_with_an_llm_planner_over_http(
    index_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    idx = ["--index", str(index_copy)]
    sid = run(capsys, "session", "new", *idx)[1].strip()
    run(capsys, "session", "add", sid, "We are adding single sign-on to the portal", *idx)
    plan = {
        "reasoning": "the user asks about token validation for their SSO work",
        "queries": [
            {
                "query": "OAuth access token validation",
                "context_type": "resource",
                "priority": 5,
                "intent": "how tokens are checked",
            },
            {"query": "the user's current projects", "context_type": "memory", "priority": 2},
        ],
    }
    with FakeOpenAIChatServer(default=Reply.chat(json.dumps(plan))) as srv:
        code, out, err = run(
            capsys,
            "search",
            "how do I check them?",
            "--session",
            sid,
            *idx,
            "--llm-model",
            "planner-x",
            "--llm-base-url",
            srv.base_url,
            "--explain",
        )
        sent = srv.requests
    assert code == 0, err
    assert len(sent) == 1 and sent[0].body["model"] == "planner-x"
    prompt = json.dumps(sent[0].body["messages"])
    assert "single sign-on to the portal" in prompt and "how do I check them?" in prompt
    lines = out.splitlines()
    assert lines[0].startswith("plan by ") and lines[0].endswith(": 2 typed queries")
    assert (
        lines[1]
        == "  q1  resource  priority 5  'OAuth access token validation'  -- how tokens are checked"
    )
    assert lines[2] == '  q2  memory    priority 2  "the user\'s current projects"'
    rows = table_rows(out)
    assert any(OAUTH in r and re.search(r"\sq1\s", r) for r in rows)
    assert any("viking://~/memories/prefs" in r and re.search(r"\sq2\s", r) for r in rows)
    assert "search path (q1) for 'OAuth access token validation' [resource]" in out
    assert 'search path (q2) for "the user\'s current projects" [memory]' in out


# ---------------------------------------------------------------------------------- eval
def _rank_of(idx: Path, capsys: pytest.CaptureFixture[str], query: str, uri: str) -> int | None:
    _, out, _ = run(capsys, "find", query, "--index", str(idx), "--json")
    uris = [m.uri for m in FindResult.model_validate(json.loads(out)).contexts()]
    return uris.index(uri) + 1 if uri in uris else None


def test_eval_metrics_match_the_rankings(
    built_index: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    q1, rel1 = "OAuth access tokens", OAUTH
    q2, rel2 = (
        "gradient boosted trees",
        "viking://resources/machine-learning/classical/gradient-boosting.md",
    )
    r1 = _rank_of(built_index, capsys, q1, rel1)
    r2 = _rank_of(built_index, capsys, q2, rel2)
    assert r1 is not None and r2 is not None
    qfile = tmp_path / "queries.jsonl"
    qfile.write_text(
        "# a comment, then a blank line\n\n"
        + json.dumps({"id": "a", "query": q1, "relevant": {rel1: 1}})
        + "\n"
        + json.dumps({"query": q2, "relevant": {rel2 + "/": 1, "viking://resources/gone.md": 1}})
        + "\n"
    )
    code, out, err = run(capsys, "eval", str(qfile), "--index", str(built_index), "--json")
    assert code == 0, err
    rep = json.loads(out)
    per = {p["id"]: p for p in rep["per_query"]}
    assert set(per) == {"a", "line-4"}
    assert per["a"]["RR@10"] == pytest.approx(1 / r1)
    assert per["a"]["nDCG@10"] == pytest.approx(1 / math.log2(r1 + 1))
    assert per["a"]["R@10"] == 1.0
    # Two relevant URIs, one of them not in the index: recall 1/2, and a warning says so.
    assert per["line-4"]["R@10"] == 0.5
    assert per["line-4"]["RR@10"] == pytest.approx(1 / r2)
    assert rep["unknown_relevant"] == {"line-4": ["viking://resources/gone.md"]}
    assert "warning: query line-4: not in the index: viking://resources/gone.md" in err
    for name in ("nDCG@10", "R@10", "RR@10"):
        assert rep["metrics"][name] == pytest.approx((per["a"][name] + per["line-4"][name]) / 2)

    code, out, _ = run(capsys, "eval", str(qfile), "--index", str(built_index), "--per-query")
    assert code == 0
    assert out.splitlines()[0] == f"eval: 2 queries from {qfile}, k=10"
    assert f"  RR@10    {rep['metrics']['RR@10']:.4f}" in out
    assert re.search(
        rf"^a\s+{per['a']['nDCG@10']:.3f}\s+1\.000\s+{1 / r1:.3f}\s+\d+\s+{q1}$", out, re.M
    )


def test_eval_counts_a_query_that_finds_nothing_as_zero() -> None:
    from treehop.cli import _eval

    qs = [
        _eval.LabelledQuery("hit", "q1", {"viking://resources/a": 1}, 1),
        _eval.LabelledQuery("none", "q2", {"viking://resources/b": 1}, 2),
    ]
    # Equal scores must not reorder the ranking: b is second although "b" < "z" would not matter
    # and "a" sorts first by id -- the ranks passed on are the ones treehop produced.
    rep = _eval.evaluate(qs, [["viking://resources/z", "viking://resources/a"], []], k=10)
    per = {p["id"]: p for p in rep.per_query}
    assert per["hit"]["RR@10"] == 0.5 and per["hit"]["R@10"] == 1.0
    assert per["none"] == {
        "id": "none",
        "query": "q2",
        "retrieved": 0,
        "nDCG@10": 0.0,
        "R@10": 0.0,
        "RR@10": 0.0,
    }
    assert rep.metrics["RR@10"] == 0.25 and rep.metrics["R@10"] == 0.5
    assert rep.metrics["nDCG@10"] == pytest.approx(1 / math.log2(3) / 2)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "no queries"),
        ("{not json\n", ":1: not valid JSON"),
        ('["a"]\n', ":1: expected an object"),
        ('{"relevant": {"viking://resources/a": 1}}\n', ":1: 'query' must be a non-empty string"),
        ('{"query": "q", "relevant": {}}\n', ":1: 'relevant' must be a non-empty object"),
        ('{"query": "q", "relevant": {"viking://resources/a": 1.5}}\n', "must be an integer >= 0"),
        ('{"query": "q", "relevant": {"viking://resources/a": 0}}\n', "no URI has a grade > 0"),
        ('\n{"query": "q", "relevant": {"http://a": 1}}\n', ":2: URI 'http://a' must start with"),
        ('{"id": 1, "query": "q", "relevant": {"viking://resources/a": 1}}\n' * 2, ":2: duplicate"),
    ],
)
def test_eval_rejects_malformed_query_files(
    content: str,
    message: str,
    built_index: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    qfile = tmp_path / "q.jsonl"
    qfile.write_text(content)
    code, out, err = run(capsys, "eval", str(qfile), "--index", str(built_index))
    assert code == ExitCode.USAGE
    assert message in err and out == "" and "Traceback" not in err


def test_eval_missing_file(
    built_index: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "eval", str(tmp_path / "nope.jsonl"), "--index", str(built_index))
    assert code == ExitCode.USAGE and "query file not found" in err


# ---------------------------------------------------------------------------------- misc
def test_help_version_and_demo_dispatch(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--help")
    assert code == 0
    for cmd in (
        "index",
        "find",
        "search",
        "session",
        "ls",
        "tree",
        "read",
        "tag",
        "retag",
        "eval",
        "demo",
    ):
        assert re.search(rf"^\s+{cmd}\s", out, re.M), cmd
    assert "exit codes:" in out
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.startswith("treehop ")
    code, out, _ = run(capsys, "demo", "--help")
    assert code == 0 and "queries to run" in out  # treehop.demo's own parser answered


def test_console_script_entry_point_resolves() -> None:
    meta = tomllib.loads((REPO / "pyproject.toml").read_text())
    target = meta["project"]["scripts"]["treehop"]
    module, _, attr = target.partition(":")
    import importlib

    assert getattr(importlib.import_module(module), attr) is main


# ---------------------------------------------------------------------------------- subprocess
def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "retrieval"), "COLUMNS": "140"}
    env.pop("TREEHOP_INDEX", None)
    return subprocess.run(
        [sys.executable, "-m", "treehop.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def real_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The sample tree's security folder, indexed by the real CLI into ./.treehop."""
    work = tmp_path_factory.mktemp("real")
    p = _cli("index", str(SECURITY), cwd=work)
    assert p.returncode == 0, p.stderr
    # Not a terminal: plain progress lines, no ``\r`` frames of a bar.
    assert "\r" not in p.stderr
    assert p.stderr.splitlines()[-1] == "progress: 3/3 files, 5/5 nodes"
    assert "2 directories, 3 files, 0 chunks (5 embedded" in p.stdout
    assert (work / ".treehop" / "CURRENT").is_file()
    yield work


def test_subprocess_index_then_find_with_the_real_embedder(real_index: Path) -> None:
    current = (real_index / ".treehop" / "CURRENT").read_text()
    p = _cli("find", "how do we validate OAuth tokens", "--limit", "3", cwd=real_index)
    assert p.returncode == 0, p.stderr
    rows = table_rows(p.stdout)
    assert len(rows) == 3
    # hybrid by default: the table shows score and vector columns before the URI
    assert next(c for c in rows[0].split() if c.startswith("viking://")) == OAUTH
    p = _cli("tree", "--no-abstract", cwd=real_index)
    assert p.stdout.splitlines()[:3] == [
        "viking://resources/",
        "└── security/",
        "    └── auth/",
    ]
    # Read-only commands do not write a new generation of the index.
    assert (real_index / ".treehop" / "CURRENT").read_text() == current


def test_subprocess_failure_exits_non_zero_without_traceback(
    real_index: Path, tmp_path: Path
) -> None:
    p = _cli("read", "viking://resources/nope.md", cwd=real_index)
    assert p.returncode == ExitCode.NOT_FOUND
    assert p.stderr.startswith("treehop: error: no node at viking://resources/nope.md")
    assert "Traceback" not in p.stderr and p.stdout == ""


def _long_doc(tmp_path: Path) -> Path:
    docs = tmp_path / "site"
    docs.mkdir()
    para = "Vacuum reclaims storage occupied by dead tuples in the table heap. " * 6
    body = "\n\n".join(f"Paragraph {i}. {para}" for i in range(12))
    (docs / "guide.md").write_text(
        "# Maintenance\n\nIntro text.\n\n## Routine vacuuming\n\n"
        f"{body}\n\n## Reindexing\n\nDone.\n"
    )
    (docs / "small.md").write_text("# Small\n\nA short page.\n")
    return docs


def test_read_shows_each_heading_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    docs = _long_doc(tmp_path)
    idx = str(tmp_path / "idx")
    assert run(capsys, "index", str(docs), "--index", idx)[0] == 0
    code, out, _ = run(capsys, "read", "viking://resources/site/guide.md", "--index", idx)
    assert code == 0
    assert out.count("Routine vacuuming") == 1, out
    assert out.count("Maintenance") == 1
    assert "›" not in out  # no heading paths glued in front of every chunk
    assert re.search(r"^(## )?Routine vacuuming$", out, re.M)
    assert all(f"Paragraph {i}." in out for i in range(12))
    assert out.index("Intro text.") < out.index("Paragraph 0.") < out.index("Done.")


def test_ls_and_tree_show_a_chunked_file_as_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = _long_doc(tmp_path)
    idx = str(tmp_path / "idx")
    assert run(capsys, "index", str(docs), "--index", idx)[0] == 0
    _, out, _ = run(capsys, "ls", "viking://resources/site", "--index", idx, "--json")
    entries = {e["uri"].rsplit("/", 1)[-1]: e for e in json.loads(out)}
    guide = entries["guide.md"]
    assert guide["kind"] == "file" and not guide["is_leaf"] and guide["children"] > 3
    assert entries["small.md"]["kind"] == "file"
    _, out, _ = run(capsys, "ls", "viking://resources/site", "--index", idx)
    row = next(line for line in out.splitlines() if "guide.md" in line)
    assert row.split()[0] == "file" and f"{guide['children']} chunks" in row
    _code, out, _ = run(capsys, "tree", "viking://resources/site", "--index", idx, "--depth", "1")
    assert f"guide.md ({guide['children']} chunks)" in out
    assert "guide.md/" not in out


def test_rm_removes_a_folder_and_keeps_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = _long_doc(tmp_path)
    (docs / "sub").mkdir()
    (docs / "sub" / "a.md").write_text("# A\n\nalpha text\n")
    idx = str(tmp_path / "idx")
    assert run(capsys, "index", str(docs), "--index", idx)[0] == 0
    code, out, _ = run(capsys, "rm", "viking://resources/site/sub", "--index", idx)
    assert code == 0 and out.startswith("removed viking://resources/site/sub (2 nodes)")
    code, _, err = run(capsys, "read", "viking://resources/site/sub/a.md", "--index", idx)
    assert code == ExitCode.NOT_FOUND
    code, out, _ = run(capsys, "ls", "viking://resources/site", "--index", idx)
    assert "sub" not in out and "guide.md" in out
    code, _, err = run(capsys, "rm", "viking://resources", "--index", idx)
    assert code == ExitCode.USAGE and "root" in err
    code, _, err = run(capsys, "rm", "viking://resources/nope", "--index", idx)
    assert code == ExitCode.NOT_FOUND
    # Re-indexing brings the removed folder back (its files are no longer stored).
    code, out, _ = run(capsys, "index", str(docs), "--index", idx, "--json")
    assert code == 0 and json.loads(out)["read"] == 1
    code, out, _ = run(capsys, "read", "viking://resources/site/sub/a.md", "--index", idx)
    assert "alpha text" in out


def test_a_file_over_the_size_limit_names_the_limit_and_the_setting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = _long_doc(tmp_path)
    (docs / "big.txt").write_text("word " * 3000)  # 15 kB
    idx = str(tmp_path / "idx")
    code, out, _ = run(capsys, "index", str(docs), "--index", idx, "--max-file-bytes", "10000")
    assert code == 0
    assert (
        "skipped 1 file over 10 kB (max_file_bytes=10000; raise it with --max-file-bytes): big.txt"
        in out
    )
    code, out, _ = run(capsys, "index", str(docs), "--index", idx, "--max-file-bytes", "20000")
    assert code == 0 and "skipped" not in out
    code, _, _err = run(capsys, "index", str(docs), "--index", idx, "--max-file-bytes", "0")
    assert code == ExitCode.USAGE
