"""Hostile use of stop 63's surface (bench/README.md, "(helper attacks74)"). Each test fails
on 7f12a19 unless it says it is a control."""

from __future__ import annotations

import asyncio
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from treehop import AsyncTreehop, Treehop
from treehop.errors import StoreError

from treehop_test_doubles import BagOfWordsEmbedder


def _recipe() -> type[Any]:
    # (the conformance suite's helper module, as its conftest puts it on the path)
    sys.path.insert(0, str(Path(__file__).resolve().parent / "store_conformance"))
    from store_conf_helpers import recipe_store_class

    return recipe_store_class()


_Base = _recipe()


def _answering(name: str, answer: Callable[..., object]) -> Any:
    """docs/extending.md's ``FolderStore`` (in memory) whose ``name`` answers ``answer(...)``
    once armed."""

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        if self.__dict__.get("armed"):
            return answer(*args, **kwargs)
        return getattr(_Base, name)(self, *args, **kwargs)

    return type(f"Answering_{name}", (_Base,), {name: method})()


def _seeded(store: Any) -> Treehop:
    th = Treehop(embedder=BagOfWordsEmbedder(), store=store)
    th.add_resource("the seed document about rotation", target_uri="viking://resources/seed.md")
    store.__dict__["armed"] = True
    return th


CALLS: dict[str, Callable[[Treehop], object]] = {
    "find": lambda th: th.find("rotation"),
    "search": lambda th: th.search("rotation"),
    "ls": lambda th: th.ls("viking://resources"),
    "read": lambda th: th.read("viking://resources/seed.md"),
    "add_resource": lambda th: th.add_resource("another", target_uri="viking://resources/b.md"),
}
WRONG: dict[str, list[object]] = {
    "search": [None, [1, 2], "abc", [None]],
    "get": [None, [], [1], "x"],
    "children": [None, [1]],
    "iter_nodes": [None, 5],
}


@pytest.mark.parametrize(
    ("method", "answer"), [(m, a) for m, answers in WRONG.items() for a in answers], ids=repr
)
def test_a_custom_stores_wrongly_shaped_answer_is_typed(method: str, answer: object) -> None:
    for call in CALLS.values():
        store = _answering(method, lambda *a, **k: answer)
        th = _seeded(store)
        try:
            call(th)
        except StoreError as err:
            assert method in str(err) and len(str(err)) <= 500
        # (an answer a call does not read is not an error: ``ls`` reads no ``search``)


async def _async_answer(*args: Any, **kwargs: Any) -> object:
    return None


@pytest.mark.parametrize("method", ["search", "get", "upsert", "save", "delete"])
def test_a_custom_stores_async_method_is_a_store_error_not_a_lost_write(method: str) -> None:
    store = _answering(method, _async_answer)
    th = _seeded(store)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a coroutine never awaited is a RuntimeWarning
        with pytest.raises(StoreError, match=f"{method}.*coroutine"):
            if method in ("search", "get"):
                th.find("rotation")
            elif method == "delete":
                th.remove("viking://resources/seed.md")
            else:
                th.add_resource("another", target_uri="viking://resources/b.md")

        async def main() -> None:
            ath = AsyncTreehop(embedder=BagOfWordsEmbedder(), store=store)
            if method in ("search", "get"):
                await ath.find("rotation")
            else:
                await ath.add_resource("more", target_uri="viking://resources/c.md")

        if method != "delete":
            with pytest.raises(StoreError, match="coroutine"):
                asyncio.run(main())


def test_a_custom_store_with_right_answers_still_answers_control() -> None:
    store = _answering("search", lambda *a, **k: [])
    th = _seeded(store)
    assert th.find("rotation").resources == []
    assert [e.uri for e in th.ls("viking://resources")] == ["viking://resources/seed.md"]


def test_a_store_answering_every_attribute_with_none_is_a_store_error() -> None:
    class AnyAttr(_Base):  # type: ignore[misc,valid-type]
        def __getattr__(self, name: str) -> Any:
            if name.startswith("__"):
                raise AttributeError(name)
            return lambda *a, **k: None

    with pytest.raises(StoreError, match="state_keys"):
        Treehop(embedder=BagOfWordsEmbedder(), store=AnyAttr())


@pytest.mark.parametrize("answer", [b"", "a string", 5])
def test_a_stores_get_state_of_the_wrong_type_is_a_store_error(answer: object) -> None:
    store = _answering("get_state", lambda *a, **k: answer)
    guarded = Treehop(embedder=BagOfWordsEmbedder(), store=store).store
    store.__dict__["armed"] = True
    if isinstance(answer, bytes):
        assert guarded.get_state("k") == answer  # control
    else:
        with pytest.raises(StoreError, match="get_state"):
            guarded.get_state("k")


def test_a_stores_raising_repr_does_not_raise_from_the_guards_repr() -> None:
    class ReprRaise(_Base):  # type: ignore[misc,valid-type]
        def __repr__(self) -> str:
            raise RuntimeError("repr boom")

    guarded = Treehop(embedder=BagOfWordsEmbedder(), store=ReprRaise()).store
    assert repr(guarded) == "GuardedStore(<ReprRaise>)"


# ---------------------------------------------------------------- _plugins' description


class Abort(BaseException):
    """A plug-in's own ``BaseException`` (a framework's abort signal), not a Ctrl-C."""


class _StrRaises(Exception):
    def __str__(self) -> str:
        raise Abort("from __str__")


def test_an_exception_whose_str_raises_a_base_exception_is_described() -> None:
    from treehop import _plugins

    def plugin() -> None:
        raise _StrRaises()

    with pytest.raises(StoreError, match="_StrRaises: <unprintable>"):
        _plugins.call("the store's x", StoreError, plugin)


class _StrInterrupts(Exception):
    def __str__(self) -> str:
        raise KeyboardInterrupt


def test_a_ctrl_c_while_describing_still_passes_control() -> None:
    from treehop import _plugins

    def plugin() -> None:
        raise _StrInterrupts()

    with pytest.raises(KeyboardInterrupt):
        _plugins.call("the store's x", StoreError, plugin)


def test_an_exception_group_holding_a_ctrl_c_passes() -> None:
    from treehop import _plugins

    def plugin() -> None:
        raise BaseExceptionGroup("workers", [ValueError("x"), KeyboardInterrupt()])

    with pytest.raises(BaseExceptionGroup):
        _plugins.call("the store's x", StoreError, plugin)

    def ordinary() -> None:
        raise ExceptionGroup("workers", [ValueError("x")])

    with pytest.raises(StoreError, match="ExceptionGroup"):  # control
        _plugins.call("the store's x", StoreError, ordinary)


def test_a_summarizer_writing_a_text_through_its_own_client_is_refused_not_a_hang(
    tmp_path: Path,
) -> None:
    """attacks74's open deadlock (lead, stop 63): a summarizer calling its own client's
    ``add_resource(text)`` during a folder ingest. The text's build calls the summarizer
    before the write takes the lock, so the nested write recursed, each level holding a
    worker thread, until the pool ran out and every level waited for good (no
    ``IndexLockedError`` after 95 s). The nested write is now refused before its build; the
    outer ingest completes. Bounded by a thread join: a hang is a failure."""
    import threading

    from treehop.errors import IndexLockedError
    from treehop.ingest.summaries import ExtractiveSummarizer
    from treehop.stores.embedded import EmbeddedStore

    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(3):
        (docs / f"p{i}.md").write_text(f"# Page {i}\n\ntext {i}\n")
    nested: list[BaseException | None] = []
    holder: dict[str, Treehop] = {}

    class WritingSummarizer(ExtractiveSummarizer):
        def summarize_file(self, name: str, text: str, kind: str) -> tuple[str, str]:
            try:
                holder["th"].add_resource("nested note", target_uri="viking://resources/n.md")
                nested.append(None)
            except IndexLockedError as exc:
                nested.append(exc)
            return super().summarize_file(name, text, kind)

    th = Treehop(
        store=EmbeddedStore(tmp_path / "idx", lock_timeout=2.0),
        embedder=BagOfWordsEmbedder(),
        summarizer=WritingSummarizer(),
    )
    holder["th"] = th
    out: list[object] = []
    worker = threading.Thread(
        target=lambda: out.append(th.add_resource(docs, target_uri="viking://resources/docs")),
        daemon=True,
    )
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "the folder ingest hung"
    assert out, "the folder ingest failed"
    assert len(nested) == 3 and all(isinstance(e, IndexLockedError) for e in nested)
    assert "inside one of its own writes" in str(nested[0])
    assert {e.uri for e in th.ls("viking://resources")} == {"viking://resources/docs"}
    th.close()
