"""Mutants against the three differential oracles ci77 made cheaper (helper ci77).

Runs each oracle test of ``tests/test_attacks57.py`` (glued navigation header),
``tests/test_perf58.py`` (``has_invisible_format``) and ``tests/test_leftovers58.py``
(``loaders._addressable``) against a set of hand-made mutants of the code they check, once
with the test files as they are and once with the files of a base commit (``--base``, read
with ``git show``), and prints which mutants each version kills and the CPU it spent.
Hypothesis runs CI's profile (``derandomize=True``: the fixed example sequence ``.ci/run``
runs), so a kill is reproducible.

    export PYTHONPATH=$PWD/retrieval:$PWD/integrations:$PWD/tests:$PWD/bench
    python bench/ci_oracle_mutants.py --base f6cb28d7

A mutant is applied by replacing a module attribute (a compiled pattern, a constant, a
function) for the length of one test call, never by editing a file.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import subprocess
import sys
import tempfile
import time
import unicodedata
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

from hypothesis import settings

import treehop.validation as validation
from treehop.ingest import loaders

settings.register_profile("ci77", derandomize=True, deadline=None, database=None)
settings.load_profile("ci77")

ROOT = Path(__file__).resolve().parent.parent
FILES = {
    "glued": ("tests/test_attacks57.py", "test_the_glued_header_matches_as_before"),
    "invisible": ("tests/test_perf58.py", "test_has_invisible_format_answers_as_before"),
    "addressable": ("tests/test_leftovers58.py", "test_addressable_answers_as_before"),
}

_NEW = (
    r"(?P<title>[^\n]{1,160}?)(?P=title)?\s*+Prev\s*+Up\s*+"
    r"(?P<part>(?:[^\n]{0,159}?\S)?)\s*+Home\s*+Next"
)
GLUED: dict[str, str] = {
    "no title twice": _NEW.replace("(?P=title)?", ""),
    "title bound 159": _NEW.replace("{1,160}?", "{1,159}?"),
    "title bound 161": _NEW.replace("{1,160}?", "{1,161}?"),
    "title greedy": _NEW.replace("{1,160}?", "{1,160}"),
    "blanks [ \\t] only": _NEW.replace(r"\s*+", r"[ \t]*+"),
    "part required": _NEW.replace(r"\S)?)", r"\S))"),
    "part crosses lines": _NEW.replace(r"(?:[^\n]{0,159}", r"(?:[\s\S]{0,159}"),
    "title crosses lines": _NEW.replace(r"(?P<title>[^\n]", r"(?P<title>[\s\S]"),
    "a blank before Home": _NEW.replace(r"\s*+Home", r"\s++Home"),
    "part ends at a blank": _NEW.replace(r"?\S)?)", r"?\s)?)"),
}


def _unneeded(variant: str) -> Callable[[str, int], bool]:
    def at(s: str, i: int) -> bool:
        joiners = validation.JOINERS
        if s[i] not in joiners or (variant != "start" and i == 0):
            return True
        if variant != "end" and i == len(s) - 1:
            return True
        before, after = s[i - 1], s[(i + 1) % len(s)]
        if variant == "after":
            return before.isascii() or "Cf" in {unicodedata.category(before)}
        if variant == "cf":
            return before.isascii() or after.isascii()
        return (
            before.isascii()
            or after.isascii()
            or "Cf" in {unicodedata.category(before), unicodedata.category(after)}
        )

    return at


@contextmanager
def _patched(pairs: list[tuple[Any, str, Any]]) -> Iterator[None]:
    saved = [(obj, name, getattr(obj, name)) for obj, name, _ in pairs]
    try:
        for obj, name, value in pairs:
            setattr(obj, name, value)
        yield
    finally:
        for obj, name, value in saved:
            setattr(obj, name, value)


def _format_mutants() -> dict[str, list[tuple[Any, str, Any]]]:
    def both(fn: Callable[[str, int], bool]) -> list[tuple[Any, str, Any]]:
        return [(validation, "unneeded_format_at", fn), (loaders, "unneeded_format_at", fn)]

    return {
        "ZWJ not kept (JOINERS = ZWNJ)": [(validation, "JOINERS", "\u200c")],
        "ZWNJ not kept (JOINERS = ZWJ)": [(validation, "JOINERS", "\u200d")],
        "word joiner kept": [(validation, "JOINERS", "\u200c\u200d\u2060")],
        "joiner before an ASCII char kept": both(_unneeded("after")),
        "joiner beside a Cf kept": both(_unneeded("cf")),
        "joiner at the start kept": both(_unneeded("start")),
        "joiner at the end kept": both(_unneeded("end")),
    }


def _addressable_mutants() -> dict[str, list[tuple[Any, str, Any]]]:
    cats = loaders._REFUSED_CATEGORIES
    out = {f"{c} not refused": [(loaders, "_REFUSED_CATEGORIES", cats - {c})] for c in sorted(cats)}
    out["Cf not checked"] = [(loaders, "unneeded_format_at", lambda s, i: False)]
    out["Co refused"] = [(loaders, "_REFUSED_CATEGORIES", cats | {"Co"})]
    out.update(_format_mutants())
    return out


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _oracles(module: ModuleType, stem: str) -> list[Callable[[], None]]:
    return [
        getattr(module, n)
        for n in dir(module)
        if n.startswith(stem) and n.startswith("test_") and callable(getattr(module, n))
    ]


def _killed(tests: list[Callable[[], None]], pairs: list[tuple[Any, str, Any]]) -> bool:
    with _patched(pairs):
        for test in tests:
            try:
                test()
            except Exception:
                return True
    return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="f6cb28d7", help="the commit whose tests to compare")
    parser.add_argument("--only", choices=sorted(FILES), action="append", help="one oracle")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="ci77_mutants_"))
    for which, (rel, stem) in FILES.items():
        if args.only and which not in args.only:
            continue
        base_src = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{args.base}:{rel}"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        (tmp / f"base_{which}.py").write_text(base_src)
        versions = {
            args.base: _load(tmp / f"base_{which}.py", f"base_{which}"),
            "head": _load(ROOT / rel, f"head_{which}"),
        }
        if which == "glued":
            mutants = {
                name: [(m, "_GLUED_NAV", re.compile(p)) for m in versions.values()]
                for name, p in GLUED.items()
            }
        elif which == "invisible":
            mutants = _format_mutants()
        else:
            mutants = _addressable_mutants()
        print(f"\n{rel} ({stem}*)", flush=True)
        for label, module in versions.items():
            tests = _oracles(module, stem)
            t0 = time.process_time()
            assert not _killed(tests, []), f"{label}: the oracle fails unmutated"
            clean = time.process_time() - t0
            kills = []
            for name, pairs in mutants.items():
                mine = [p for p in pairs if p[0] is module or p[0] in (validation, loaders)]
                kills.append((name, _killed(tests, mine)))
            n = sum(k for _, k in kills)
            print(
                f"  {label:>8}: {len(tests)} test(s), {clean:.2f} s CPU unmutated, "
                f"{n} of {len(kills)} mutants killed"
            )
            for name, k in kills:
                print(f"            {'killed' if k else 'LIVES '}  {name}", flush=True)


if __name__ == "__main__":
    main()
