"""The README's test command, ``.ci/run`` and the ``dev`` extra agree (bench/README.md, "CI under
30 minutes ... (helper ci74)"). CI runs the suite on every core (``pytest -n auto``, pytest-xdist):
alone on one core it took 29 min 29 s, at CI's 30-minute bound."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COMMAND = "python -m pytest -n auto --nbmake tests notebooks"


def test_the_readme_and_ci_run_the_same_parallel_test_command() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    in_readme = re.findall(r"python -m pytest[^\n#]*", readme)
    in_ci = re.findall(r"python -m pytest[^\n#]*", ci)
    # README line 5 (the top of the page) and its "Development" section; .ci/run once.
    assert [c.strip() for c in in_readme] == [COMMAND, COMMAND]
    assert [c.strip() for c in in_ci] == [COMMAND]
    # CI installs from pyproject.toml only: the dev extra, nothing named by hand.
    assert 'pip install -e ".[dev]" && ' + COMMAND in ci
    assert not re.search(r"pip install (?!-e \"\.\[dev\]\"|--upgrade pip)", ci)


def test_the_dev_extra_installs_what_the_test_command_needs() -> None:
    meta = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    dev = [
        re.split(r"[<>=!~;\[ ]", d, maxsplit=1)[0]
        for d in meta["project"]["optional-dependencies"]["dev"]
    ]
    assert {"pytest", "pytest-xdist", "nbmake"} <= set(dev)
