"""Every code block of README.md and docs/*.md runs, so the docs cannot drift from the code.

How a document is run:

- its ```` ```python ```` blocks are joined, in order, into one script (later blocks use what
  earlier ones defined, as a reader would run them) and run as ``python script.py`` in a
  fresh directory holding ``docs/`` (the bundled sample tree's documents), the way a user
  runs an example: top-level ``await`` is a syntax error there, and a ``__main__`` guard
  matters for code that starts processes;
- its ```` ```bash ```` blocks' ``treehop ...`` lines run as ``python -m treehop.cli ...`` in
  such a directory (other lines, ``pip`` or ``git``, install and are not run);
- only the network is replaced: OpenAI-compatible clients (LangChain's ``ChatOpenAI`` and
  ``OpenAIEmbeddings``, LlamaIndex's ``OpenAI``, treehop's ``OpenAICompatibleLLM``) reach a
  loopback fake of the OpenAI API through the environment variables they read
  (``OPENAI_BASE_URL``, ``OPENAI_API_BASE``), tiktoken reads the encodings LlamaIndex ships,
  and any other connection leaving the machine is refused (a ``sitecustomize`` guard, in the
  example's worker processes too), so a block that needs the internet fails here;
- a block preceded by ``<!-- no-run: REASON -->`` is only compiled; such marks are for
  services no loopback fake can stand in for in a user's example (a cloud account), and
  :func:`test_no_run_marks_are_rare_and_explained` keeps them few.

A failure names the document, the block's line and the error.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from fake_servers.openai_api import FakeOpenAIServer

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "retrieval" / "treehop" / "sample_tree"
DOC_FILES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
_FENCE = re.compile(r"^(`{3,}|~{3,})\s*([\w+-]*)")
_NO_RUN = re.compile(r"^<!--\s*no-run:\s*(?P<reason>\S.*?)\s*-->$")
MAX_NO_RUN = 6
TIMEOUT_S = 600

_GUARD = '''\
"""Installed by tests/test_docs_code_blocks.py: only loopback connections are allowed."""
import socket

_real_connect = socket.socket.connect
_real_create = socket.create_connection


def _loopback(address):
    host = address[0] if isinstance(address, tuple) else address
    return isinstance(host, str) and (
        host in ("localhost", "::1") or host.startswith("127.") or host.startswith("/")
    )


def _connect(self, address):
    if self.family in (socket.AF_INET, socket.AF_INET6) and not _loopback(address):
        raise OSError(f"docs test: network access to {address!r} is not allowed")
    return _real_connect(self, address)


def _create_connection(address, *args, **kwargs):
    if not _loopback(address):
        raise OSError(f"docs test: network access to {address!r} is not allowed")
    return _real_create(address, *args, **kwargs)


socket.socket.connect = _connect
socket.create_connection = _create_connection
'''


@dataclass(frozen=True)
class Block:
    path: Path
    line: int
    """1-based line of the opening fence."""
    lang: str
    code: str
    no_run: str | None
    """The reason given in a ``<!-- no-run: ... -->`` mark before the block."""

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(REPO)}:{self.line}"


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of a Markdown file (the fence's language, its code, its mark)."""
    lines = path.read_text(encoding="utf-8").split("\n")
    out: list[Block] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if m is None:
            i += 1
            continue
        fence, lang = m.group(1), m.group(2).lower()
        j = i + 1
        while j < len(lines) and not lines[j].startswith(fence[0] * len(fence)):
            j += 1
        prev = i - 1
        while prev >= 0 and not lines[prev].strip():
            prev -= 1
        mark = _NO_RUN.match(lines[prev].strip()) if prev >= 0 else None
        code = "\n".join(lines[i + 1 : j])
        out.append(Block(path, i + 1, lang, code, mark.group("reason") if mark else None))
        i = j + 1
    return out


def _all(lang: str) -> list[Block]:
    return [b for p in DOC_FILES for b in blocks(p) if b.lang == lang]


def _files_with(lang: str) -> list[Path]:
    return [p for p in DOC_FILES if any(b.lang == lang and not b.no_run for b in blocks(p))]


@pytest.fixture(scope="module")
def openai_server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as srv:
        yield srv


def _workdir(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    shutil.copytree(SAMPLE / "resources", work / "docs")
    return work


def _env(tmp_path: Path, server: FakeOpenAIServer) -> dict[str, str]:
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(_GUARD, encoding="utf-8")
    import llama_index.core

    tiktoken_cache = Path(llama_index.core.__file__).parent / "_static" / "tiktoken_cache"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TREEHOP_", "OPENAI_"))}
    paths = [str(site), str(REPO / "retrieval"), str(REPO / "integrations")]
    env.update(
        PYTHONPATH=os.pathsep.join([*paths, env.get("PYTHONPATH", "")]).rstrip(os.pathsep),
        OPENAI_API_KEY="sk-docs-test",
        OPENAI_BASE_URL=server.base_url,
        OPENAI_API_BASE=server.base_url,
        TIKTOKEN_CACHE_DIR=str(tiktoken_cache),
        HF_HUB_OFFLINE="1",
        PYTHONUNBUFFERED="1",
    )
    return env


def _script(doc_blocks: list[Block]) -> tuple[str, list[tuple[int, Block]]]:
    """One script of the runnable blocks, and the script line each block starts at."""
    parts: list[str] = []
    starts: list[tuple[int, Block]] = []
    line = 1
    for b in doc_blocks:
        header = f"# ---- {b.where}\n"
        starts.append((line + 1, b))
        parts.append(header + b.code + "\n\n")
        line += 1 + b.code.count("\n") + 2
    return "".join(parts), starts


def _block_of(stderr: str, script: Path, starts: list[tuple[int, Block]]) -> str:
    """The document line of the deepest traceback frame inside the script."""
    lines = [int(n) for n in re.findall(rf'File "{re.escape(str(script))}", line (\d+)', stderr)]
    if not lines:
        return "?"
    at = lines[-1]
    start, block = max((s for s in starts if s[0] <= at), key=lambda s: s[0])
    return f"{block.path.relative_to(REPO)}:{block.line + 1 + (at - start)}"


@pytest.mark.parametrize("doc", _files_with("python"), ids=lambda p: p.name)
def test_python_blocks_run(doc: Path, tmp_path: Path, openai_server: FakeOpenAIServer) -> None:
    runnable = [b for b in blocks(doc) if b.lang == "python" and not b.no_run]
    source, starts = _script(runnable)
    work = _workdir(tmp_path)
    script = work / "doc_example.py"
    script.write_text(source, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, str(script)],
        cwd=work,
        env=_env(tmp_path, openai_server),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, (
        f"{doc.name}: the block at {_block_of(proc.stderr, script, starts)} failed:\n"
        f"{proc.stderr[-4000:]}"
    )


def _cli_lines(code: str) -> list[list[str]]:
    """The ``treehop ...`` commands of a bash block, as argument lists (comments dropped)."""
    out = []
    for raw in code.split("\n"):
        if raw.strip().startswith("treehop "):
            out.append(shlex.split(raw, comments=True)[1:])
    return out


@pytest.mark.parametrize(
    "doc",
    [p for p in DOC_FILES if any(_cli_lines(b.code) for b in blocks(p) if b.lang == "bash")],
    ids=lambda p: p.name,
)
def test_cli_lines_run(doc: Path, tmp_path: Path, openai_server: FakeOpenAIServer) -> None:
    work = _workdir(tmp_path)
    env = _env(tmp_path, openai_server)
    ran = 0
    for b in blocks(doc):
        if b.lang != "bash" or b.no_run:
            continue
        for args in _cli_lines(b.code):
            proc = subprocess.run(
                [sys.executable, "-m", "treehop.cli", *args],
                cwd=work,
                env=env,
                capture_output=True,
                text=True,
                timeout=TIMEOUT_S,
                stdin=subprocess.DEVNULL,  # `treehop mcp` serves stdio until its input ends
            )
            assert proc.returncode == 0, (
                f"{b.where}: `treehop {shlex.join(args)}` exited {proc.returncode}:\n"
                f"{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
            )
            ran += 1
    assert ran


@pytest.mark.parametrize("block", _all("python"), ids=lambda b: b.where)
def test_every_python_block_compiles_as_a_script(block: Block) -> None:
    # No top-level await (a script cannot run one: asyncio.run(...) it), no syntax slips,
    # also in blocks that are not run.
    try:
        compile(block.code, block.where, "exec", dont_inherit=True)
    except SyntaxError as exc:
        pytest.fail(f"{block.where}: {exc}")


def test_no_run_marks_are_rare_and_explained() -> None:
    marked = [b for p in DOC_FILES for b in blocks(p) if b.no_run is not None]
    assert len(marked) <= MAX_NO_RUN, [b.where for b in marked]
    for b in marked:
        assert b.no_run and len(b.no_run.split()) >= 3, f"{b.where}: say why it cannot run"


def test_blocks_are_found() -> None:
    # The parser sees the examples (a fence it missed would silently leave a block untested).
    py = _all("python")
    assert len(py) >= 30 and all(b.code.strip() for b in py)
    assert any("TreehopVectorStore" in b.code for b in py)


# ------------------------------------------------------------------ what the docs list


def _extras() -> set[str]:
    data = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    return set(data["project"]["optional-dependencies"])


def test_readme_lists_every_extra() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    listed = readme[readme.index("The extras are") :].split("\n\n", 1)[0]
    missing = sorted(e for e in _extras() if f"`{e}`" not in listed)
    assert not missing, f"README's extras list omits {missing}"


def test_cli_doc_covers_every_command() -> None:
    from treehop.cli._app import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    commands = set(sub.choices)  # type: ignore[attr-defined]
    doc = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    missing = sorted(c for c in commands if f"treehop {c}" not in doc)
    assert not missing, f"docs/cli.md does not document {missing}"
