"""``treehop mcp`` ends promptly when its client closes stdin (helper usage58).

Profiled: the server returns within a millisecond of EOF and the index closes in another (no
thread join, no timeout); what followed was the interpreter's teardown collecting the heap of
the ~1,000 modules the MCP SDK and the models import (0.4-0.7 s idle, 1-3 s on a loaded
machine; the rest of the 6-10 s usage57 saw was starting: imports and opening the model). The
console script now freezes the heap once the server and the index are closed, so those final
collections skip it. Checked on the code path (the heap is frozen after ``main()`` as the
console script runs it, and only then), and end to end with a bound far above the work left.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from treehop import Treehop
from treehop.embedders.base import BaseEmbedder

from treehop_test_doubles import SAMPLE_TREE

REPO = Path(__file__).resolve().parents[1]
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "usage58", "version": "1"},
    },
}
# The console script (argv=None), then what it left: gc.freeze() moved the heap to the
# permanent generation (get_freeze_count() > 0) or not.
PROGRAM = (
    "import gc, sys\n"
    "from treehop.cli import main\n"
    "command = sys.argv[2]\n"
    "sys.argv = ['treehop', '--index', sys.argv[1], command]\n"
    "code = main() if command == 'mcp' else main(sys.argv[1:])\n"
    "print('frozen', gc.get_freeze_count(), file=sys.stderr)\n"
    "sys.exit(code)\n"
)


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory, minilm: BaseEmbedder) -> Path:
    path = tmp_path_factory.mktemp("mcp58") / "idx"
    with Treehop(path, embedder=minilm) as c:
        c.add_resource(SAMPLE_TREE / "resources" / "devops", target_uri="viking://resources/devops")
    return path


def _env() -> dict[str, str]:
    path = os.pathsep.join(
        p for p in (str(REPO / "retrieval"), os.environ.get("PYTHONPATH", "")) if p
    )
    return {**os.environ, "PYTHONPATH": path}


def _serve_until_eof(args: list[str]) -> tuple[int, float, str]:
    """Start the server, wait for its answer to ``initialize``, close stdin: the exit code,
    the seconds from EOF to exit, and stderr."""
    proc = subprocess.Popen(
        [sys.executable, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(),
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    proc.stdin.write((json.dumps(INIT) + "\n").encode())
    proc.stdin.flush()
    answer = json.loads(proc.stdout.readline())
    assert answer["id"] == 1 and "capabilities" in answer["result"]
    eof = time.monotonic()
    proc.stdin.close()
    try:
        code = proc.wait(timeout=60)
    finally:
        proc.kill()
    return code, time.monotonic() - eof, proc.stderr.read().decode()


def test_the_console_script_skips_the_heap_collection_after_the_server(index: Path) -> None:
    code, _, err = _serve_until_eof(["-c", PROGRAM, str(index), "mcp"])
    assert code == 0, err
    frozen = int(err.rsplit("frozen ", 1)[1].split()[0])
    assert frozen > 10_000  # the modules' objects, all of them
    # main(argv) from a program that goes on (tests, embedding): its heap is left alone
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, str(index), "tree"], env=_env(), capture_output=True
    )
    assert done.returncode == 0, done.stderr
    assert b"frozen 0" in done.stderr


def test_treehop_mcp_exits_on_stdin_eof(index: Path) -> None:
    code, seconds, err = _serve_until_eof(["-m", "treehop.cli", "--index", str(index), "mcp"])
    assert code == 0, err
    assert seconds < 20, seconds  # (a bound for a loaded machine: idle it is ~0.05 s)
