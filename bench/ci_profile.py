"""Where the CI suite's CPU goes: per test, per file, per worker (helper ci76).

Runs the README's test command (``python -m pytest -n auto --nbmake tests notebooks``) with
``CI=true`` (Hypothesis's fixed example sequence, as ``.ci/run``) and the plugin
``bench/ci_cpu_plugin.py``, which records the CPU time (user + sys, the process and its
reaped children: subprocesses, notebook kernels) of every test's setup / call / teardown, of
each worker's start and of its collection. Then prints:

- the whole run's CPU (every process: ``os.times`` of this script's children) and wall;
- per worker: start (imports), collection, tests, the rest (xdist's own work, idle polling);
- the slowest tests by CPU (``--top``, default 60), with their wall time beside;
- the costliest files by CPU.

Wall time on a loaded machine measures the load; CPU time much less, so compare CPU.

    python bench/ci_profile.py                       # the whole suite (about 25 CPU minutes)
    python bench/ci_profile.py -- tests/test_attacks57.py -n 0   # any pytest arguments after --
    python bench/ci_profile.py --report /tmp/cpu      # print the tables of an earlier run again

Set the brief's ``PYTHONPATH`` (``retrieval:integrations:tests:bench``) first, or install the
project (``pip install -e ".[dev]"``) and keep ``bench`` on ``PYTHONPATH`` for the plugin.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

DEFAULT_ARGS = ["-n", "auto", "--nbmake", "tests", "notebooks"]


def run(out: Path, pytest_args: list[str]) -> tuple[float, float, int]:
    env = {**os.environ, "CI": "true", "CI_CPU_OUT": str(out)}
    bench = str(Path(__file__).resolve().parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (env.get("PYTHONPATH"), bench) if p)
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "ci_cpu_plugin"]
    cmd += ["--durations=0", "--durations-min=1000000"]  # (keeps pytest's own table out)
    cmd += pytest_args
    print("$", " ".join(cmd), flush=True)
    before, t0 = os.times(), time.perf_counter()
    code = subprocess.call(cmd, env=env)
    after = os.times()
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    return cpu, time.perf_counter() - t0, code


def _cpu_of(r: dict[str, float]) -> float:
    return r.get("setup", 0) + r.get("call", 0) + r.get("teardown", 0)


def report(out: Path, top: int) -> None:
    procs = [json.loads(p.read_text()) for p in sorted(out.glob("*.json"))]
    seen = {p["worker"] for p in procs}
    for path in sorted(out.glob("*.jsonl")):  # a worker stopped early: its per-test lines
        if path.stem.split("-")[0] in seen:
            continue
        lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
        head = next((x for x in lines if "collect" in x), {"start": 0.0, "collect": 0.0})
        recs = {x["test"]: x for x in lines if "test" in x}
        done = sum(_cpu_of(r) for r in recs.values())
        procs.append(
            {
                "worker": path.stem.split("-")[0] + "*",
                "start": head["start"],
                "collect": head["collect"],
                "tests": recs,
                "total": head["start"] + head["collect"] + done,
            }
        )
        print(f"(partial: {path.name} stopped early; its 'other' is not known, shown as 0)")
    tests: dict[str, dict[str, float]] = {}
    print(f"\n{'process':<8} {'start':>7} {'collect':>8} {'tests':>8} {'other':>7} {'total':>8}")
    for p in procs:
        t = sum(_cpu_of(r) for r in p["tests"].values())
        other = p["total"] - p["start"] - p.get("collect", 0) - t
        print(
            f"{p['worker']:<8} {p['start']:>7.1f} {p.get('collect', 0):>8.1f} {t:>8.1f} "
            f"{other:>7.1f} {p['total']:>8.1f}"
        )
        tests.update(p["tests"])
    cpu = {k: _cpu_of(r) for k, r in tests.items()}
    print(f"\n{len(tests)} tests, {sum(cpu.values()) / 60:.1f} CPU minutes in tests")
    print(f"\nslowest {top} by CPU (s): setup / call / teardown, and wall")
    print(f"{'cpu':>6} {'setup':>6} {'call':>6} {'tear':>5} {'wall':>6}  test")
    for k in sorted(cpu, key=cpu.get, reverse=True)[:top]:  # type: ignore[arg-type]
        r = tests[k]
        print(
            f"{cpu[k]:>6.2f} {r.get('setup', 0):>6.2f} {r.get('call', 0):>6.2f} "
            f"{r.get('teardown', 0):>5.2f} {r['wall']:>6.2f}  {k}"
        )
    files: dict[str, float] = defaultdict(float)
    count: dict[str, int] = defaultdict(int)
    for k, v in cpu.items():
        files[k.split("::")[0]] += v
        count[k.split("::")[0]] += 1
    print("\ncostliest 25 files by CPU (s)")
    for f in sorted(files, key=files.get, reverse=True)[:25]:  # type: ignore[arg-type]
        print(f"{files[f]:>7.1f} {count[f]:>5}  {f}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--out", type=Path, help="per-process JSON folder (default: a new temp one)")
    ap.add_argument("--report", type=Path, help="only print the tables of an earlier --out")
    ap.add_argument("--top", type=int, default=60)
    ap.add_argument("pytest_args", nargs="*", help="after --: pytest's arguments")
    a = ap.parse_args()
    if a.report:
        report(a.report, a.top)
        return 0
    out = a.out or Path(tempfile.mkdtemp(prefix="ci-cpu-"))
    cpu, wall, code = run(out, a.pytest_args or DEFAULT_ARGS)
    report(out, a.top)
    print(f"\nwhole run: {cpu / 60:.1f} CPU minutes (user + sys, every process)", end="")
    print(f", {wall / 60:.1f} min wall, exit {code}")
    print(f"per-process JSON: {out}")
    return code


if __name__ == "__main__":
    sys.exit(main())
