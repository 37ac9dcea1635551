"""The sync client is the async one, typed: same signatures, same docs, same type errors.

``Treehop``'s methods are generated from ``AsyncTreehop``'s with ``ParamSpec``; these tests
check what a user sees (``inspect.signature``, ``help()``) and what a type checker sees (mypy
``--strict`` on a small program with a misspelt keyword and a wrong type, on both clients).
"""

from __future__ import annotations

import inspect
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from treehop import AsyncTreehop, Treehop
from treehop.errors import InvalidQueryError
from treehop.search_options import SEARCH_OPTIONS

from treehop_test_doubles import BagOfWordsEmbedder

REPO = Path(__file__).resolve().parents[1]
PUBLIC = [
    name
    for name, fn in inspect.getmembers(AsyncTreehop, inspect.iscoroutinefunction)
    # (close has its own sync twin below; aclose is its asyncio name, AsyncTreehop only: a
    # sync client closes with close() or its context manager)
    if not name.startswith("_") and name not in ("close", "aclose")
]


@pytest.mark.parametrize("name", PUBLIC)
def test_every_async_method_has_a_sync_twin_with_its_signature_and_doc(name: str) -> None:
    sync = getattr(Treehop, name, None)
    assert sync is not None, f"Treehop has no {name}()"
    assert inspect.signature(sync) == inspect.signature(getattr(AsyncTreehop, name))
    assert sync.__doc__ == getattr(AsyncTreehop, name).__doc__
    assert not inspect.iscoroutinefunction(sync)


def test_sync_twin_runs_and_raises_the_async_errors() -> None:
    with Treehop(None, embedder=BagOfWordsEmbedder()) as th:
        res = th.add_resource("alpha beta gamma", target_uri="viking://resources/note")
        assert res.embedded >= 1
        hits = th.find("alpha", limit=3)
        assert hits.resources and hits.resources[0].uri.startswith("viking://resources/note")
        with pytest.raises(InvalidQueryError):
            th.find("   ")


def test_help_shows_parameters_and_docstring() -> None:
    text = inspect.getdoc(Treehop.find) or ""
    assert "One query, no LLM" in text and "SearchKwargs" in text
    options = inspect.signature(Treehop.find).parameters["options"]
    assert options.kind is inspect.Parameter.VAR_KEYWORD
    assert "SearchKwargs" in str(options.annotation)
    assert {"limit", "filter", "collapse_chunks", "since"} <= SEARCH_OPTIONS


def test_options_are_declared_once_and_checked_at_run_time() -> None:
    """``**kwargs`` built at run time bypass the type checker: unknown names are typed errors,
    and a per-call option reaches the retriever (``collapse_chunks``)."""
    long_text = " ".join(f"alpha sentence number {i}." for i in range(400))
    with Treehop(None, embedder=BagOfWordsEmbedder(), chunk_chars=300) as th:
        th.add_resource(long_text, target_uri="viking://resources/long.md")
        th.config.few_document_passages = False  # (one document: one slot, not 5 passages)
        kwargs: dict[str, object] = {"limt": 3}
        with pytest.raises(InvalidQueryError, match="unknown search option"):
            th.find("alpha", **kwargs)  # type: ignore[arg-type]
        one_slot = th.find("alpha", limit=5, include_directories=False)
        every_chunk = th.find("alpha", limit=5, include_directories=False, collapse_chunks=False)
        assert len(one_slot.resources) == 1 and one_slot.resources[0].collapsed
        assert len(every_chunk.resources) == 5
        assert all(not m.collapsed for m in every_chunk.resources)


PROGRAM = """
from treehop import AsyncTreehop, Treehop


def sync_ok(th: Treehop) -> int:
    return th.find("q", limit=5, target_uri="viking://resources").total


def sync_misspelt(th: Treehop) -> None:
    th.find("q", limt=5)


def sync_wrong_type(th: Treehop) -> None:
    th.find("q", limit="5")


async def async_misspelt(th: AsyncTreehop) -> None:
    await th.find("q", limt=5)
"""


def test_mypy_strict_catches_a_misspelt_keyword_on_both_clients(tmp_path: Path) -> None:
    prog = tmp_path / "prog.py"
    prog.write_text(textwrap.dedent(PROGRAM))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--cache-dir",
            str(tmp_path / "cache"),
            str(prog),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    errors = [line for line in proc.stdout.splitlines() if ": error:" in line]
    lines = sorted(int(e.split(":")[1]) for e in errors)
    assert lines == [10, 14, 18], proc.stdout
    assert 'Unexpected keyword argument "limt"' in errors[0]
    assert 'incompatible type "str"; expected "int"' in proc.stdout


def test_integration_kit_opens_or_checks_a_client(tmp_path: object) -> None:
    """Both vector stores open their client through one core helper: a client is checked
    (type, not with a path, the same embedding model), else one is opened and owned."""
    from treehop.integration_kit import EmbeddingSlot, as_async, open_client, reject_extra

    class Wrapped(BagOfWordsEmbedder):
        def __init__(self, model: object) -> None:
            super().__init__()
            self.model = model

    slot = EmbeddingSlot(Wrapped, "model", "m")
    model = object()
    opened, owned = open_client(None, None, model, slot)
    try:
        assert owned and isinstance(opened, Treehop)
        assert as_async(opened).embedder.model is model  # type: ignore[attr-defined]
        same, owned_again = open_client(opened, None, model, slot)
        assert same is opened and not owned_again
        assert as_async(as_async(opened)) is opened.aio
        with pytest.raises(InvalidQueryError, match="m= differs"):
            open_client(opened, None, object(), slot)
        with pytest.raises(InvalidQueryError, match="not both"):
            open_client(opened, "idx", None, slot)
        with pytest.raises(InvalidQueryError, match="must be a treehop"):
            open_client("x", None, None, slot)
        with pytest.raises(InvalidQueryError, match="unknown argument"):
            reject_extra({"k": 1}, "where")
        reject_extra({}, "where")
    finally:
        opened.close()
