"""Every Python block of ``docs/extending.md`` runs, in order, in one namespace.

The recipes assert what they promise (a custom embedder finds the right file, a broken reranker
falls back), so a change to a protocol that breaks a recipe fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "extending.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def blocks() -> list[str]:
    return BLOCK.findall(DOC.read_text(encoding="utf-8"))


def test_the_page_has_a_recipe_per_stage() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert len(blocks()) >= 2
    for heading in ("## An embedder", "## A reranker", "## A tagger", "## A store"):
        assert heading in text


def test_recipes_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "extending_recipes"}
    for i, code in enumerate(blocks()):
        try:
            exec(compile(code, f"{DOC.name}[block {i}]", "exec"), namespace)
        except Exception as exc:  # name the block in the failure
            raise AssertionError(f"recipe block {i} of {DOC.name} failed: {exc!r}") from exc
