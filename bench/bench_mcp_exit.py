"""How long ``treehop mcp`` takes to start and to end when its client closes stdin (helper
usage58).

Starts ``python -m treehop.cli --index PATH mcp`` (the ``PYTHONPATH`` of this process: run it
on two checkouts to compare), sends MCP's ``initialize`` over stdio, waits for the answer (the
start: imports, opening the index and its model), closes stdin and waits for the exit::

    PYTHONPATH=retrieval OPENBLAS_NUM_THREADS=1 python bench/bench_mcp_exit.py --index ./index

The index must have been built with the CLI's default embedder (MiniLM).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
}


def one(index: str) -> tuple[float, float]:
    """Seconds to the ``initialize`` answer, and from stdin's EOF to the exit."""
    t0 = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "treehop.cli", "--index", index, "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write((json.dumps(INIT) + "\n").encode())
    proc.stdin.flush()
    if json.loads(proc.stdout.readline()).get("id") != 1:
        raise SystemExit("no answer to initialize")
    start = time.monotonic() - t0
    eof = time.monotonic()
    proc.stdin.close()
    if proc.wait(timeout=120) != 0:
        raise SystemExit(f"exit code {proc.returncode}")
    return start, time.monotonic() - eof


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--index", required=True)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args(argv)
    runs = [one(a.index) for _ in range(a.repeat)]
    for start, end in runs:
        print(f"start {start:.2f} s  EOF to exit {end:.2f} s")
    print(
        f"median: start {statistics.median(r[0] for r in runs):.2f} s, "
        f"EOF to exit {statistics.median(r[1] for r in runs):.2f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
