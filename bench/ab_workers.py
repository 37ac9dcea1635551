"""Two checkouts side by side: one worker process per tree, asked in turn over a pipe.

The A/B scripts (``bench_memory_ab.py``, ``bench_add_memory_ab.py``,
``bench_natural_find_ab.py``, ``bench_folder_sessions_ab.py``) time the same calls on an old
and a new checkout in one run, alternating which tree goes first, so that the load of this
shared machine falls on both alike. Each starts its own script again as a worker under each
tree's ``PYTHONPATH`` (``retrieval/`` and ``integrations/`` of that checkout), writes one line
per call and reads one line back. Why one module: the four scripts had the same process
plumbing written out four times (dedup, stop 59)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Mapping

TREES = ("old", "new")


def start_workers(
    script: str, roots: Mapping[str, str], *args: str
) -> dict[str, subprocess.Popen[str]]:
    """``script`` started once per tree (``{"old": path, "new": path}``) as
    ``python script x x *args``, in that checkout with its packages first on the path."""
    procs = {}
    for tree in TREES:
        root = roots[tree]
        env = dict(os.environ, PYTHONPATH=f"{root}/retrieval:{root}/integrations")
        procs[tree] = subprocess.Popen(
            [sys.executable, os.path.abspath(script), "x", "x", *args],
            cwd=root,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
    return procs


def first_lines(procs: Mapping[str, subprocess.Popen[str]]) -> dict[str, str]:
    """Each worker's first line (``ready``, or what it loaded), stripped."""
    return {tree: read_line(p) for tree, p in procs.items()}


def read_line(p: subprocess.Popen[str]) -> str:
    assert p.stdout is not None
    return p.stdout.readline().strip()


def ask(p: subprocess.Popen[str], line: str) -> list[str]:
    """Send one request line to a worker; its one-line answer, split on whitespace."""
    assert p.stdin is not None
    p.stdin.write(line + "\n")
    p.stdin.flush()
    return read_line(p).split()


def turns(i: int) -> Iterator[str]:
    """The trees in the order the ``i``-th call asks them (alternating who goes first)."""
    return iter(TREES if i % 2 == 0 else TREES[::-1])


def stop_workers(procs: Mapping[str, subprocess.Popen[str]]) -> None:
    """Close each worker's input (its loop ends) and wait for it."""
    for p in procs.values():
        assert p.stdin is not None
        p.stdin.close()
        p.wait()
