"""pytest plugin: CPU time (user + sys, this process and its reaped children) per test phase.

Load it with ``-p ci_cpu_plugin`` (``bench/`` on ``PYTHONPATH``) and set ``CI_CPU_OUT`` to a
folder: each process (the controller and every pytest-xdist worker) writes one JSON file there
at the end of its session with

- ``start``: CPU the process had spent when pytest configured it (interpreter start, plugin
  imports, conftest imports);
- ``collect``: CPU spent collecting (module imports of every test file, parametrisation);
- ``tests``: ``{nodeid: {"setup": s, "call": s, "teardown": s, "wall": s}}``, CPU seconds per
  phase (a module- or session-scoped fixture is charged to the setup of the first test that
  needs it, on each worker that runs such a test);
- ``total``: the process's CPU at the end of the session.

Wall time depends on the machine's load; CPU time much less, which is why this measures CPU.
``bench/ci_profile.py`` runs the suite with it and prints the tables.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def _cpu() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


_state: dict = {"tests": {}}


def pytest_configure(config: pytest.Config) -> None:
    _state["start"] = _cpu()


def pytest_collection(session: pytest.Session) -> None:
    _state["collect_start"] = _cpu()


def pytest_collection_finish(session: pytest.Session) -> None:
    _state["collect"] = _cpu() - _state.get("collect_start", _cpu())
    _state["items"] = len(session.items)
    _line({"start": _state["start"], "collect": _state["collect"]})


def _line(rec: dict) -> None:
    """One JSON line per event, written at once: a run stopped early still tells its part."""
    out = os.environ.get("CI_CPU_OUT")
    if out:
        Path(out).mkdir(parents=True, exist_ok=True)
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        with open(Path(out) / f"{worker}-{os.getpid()}.jsonl", "a") as f:
            f.write(json.dumps(rec) + "\n")


@contextmanager
def _phase(item: pytest.Item, phase: str) -> Iterator[dict]:
    """The CPU and wall time of one phase of a test, into its record (yielded)."""
    c, w = _cpu(), time.perf_counter()
    rec = _state["tests"].setdefault(item.nodeid, {"wall": 0.0})
    yield rec
    rec[phase] = _cpu() - c
    rec["wall"] += time.perf_counter() - w


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item):  # type: ignore[no-untyped-def]
    with _phase(item, "setup"):
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item):  # type: ignore[no-untyped-def]
    with _phase(item, "call"):
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None):  # type: ignore[no-untyped-def]
    with _phase(item, "teardown") as rec:
        yield
    _line({"test": item.nodeid, **rec})


def pytest_sessionfinish(session: pytest.Session) -> None:
    out = os.environ.get("CI_CPU_OUT")
    if not out:
        return
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    _state["total"] = _cpu()
    _state["worker"] = worker
    Path(out).mkdir(parents=True, exist_ok=True)
    (Path(out) / f"{worker}-{os.getpid()}.json").write_text(json.dumps(_state))
