"""Adversarial pass on stop 60's surface (helper attacks67).

Each test failed on main ``4adff59``:

- a LangChain ``FunctionMessage`` (``type`` ``function``, no ``role``: a tool's result in
  the legacy form) was remembered as the user's words;
- a filter on a shown key (LangChain ``source``) within the DSL's bounds as written was
  refused at the search with a bound it did not reach ("nested deeper than 32 levels" for
  31, "more than 1000 objects" for 85), and ``show_fields`` given a hostile spec directly
  raised ``RecursionError`` / ``TypeError``;
- a *folder* of a tree being ingested, swapped for a symlink to outside the tree between
  the scan and the read, was followed and the outside file indexed (``O_NOFOLLOW`` checks
  the last component only).
"""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import FunctionMessage, FunctionMessageChunk, HumanMessage

from langchain_treehop import TreehopRetriever
from treehop import Treehop
from treehop.errors import InvalidFilterError, TreehopError
from treehop.filters import ShownField, show_fields
from treehop.ingest import writer as writer_mod
from treehop.stores._filelock import WaitLine

from treehop_test_doubles import BagOfWordsEmbedder, report_from_a_fork

SOURCE = ShownField("source", over=("source",), fallback="source_path", when="source_path")


def test_a_function_message_is_a_tool_turn_not_the_users_words() -> None:
    th = Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None)
    r = th.add_messages(
        [
            HumanMessage("what is the weather in Lisbon"),
            FunctionMessage(name="weather", content="sunny and 24 degrees"),
            FunctionMessageChunk(name="weather", content="windy tomorrow"),
        ]
    )
    text = th.read(r.session_uri) or ""
    assert "- user: what is the weather in Lisbon" in text
    assert "- tool: sunny and 24 degrees" in text
    assert "- tool: windy tomorrow" in text
    assert "user: sunny" not in text and "user: windy" not in text
    th.close()


@pytest.fixture
def lc_client() -> Any:
    th = Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None)
    th.add_resource("kubernetes rollback deploy, a text named beta", name="beta")
    yield th
    th.close()


def _nested(levels: int) -> dict[str, Any]:
    f: dict[str, Any] = {"source": "beta"}
    for i in range(levels):
        f = {"$and": [f, {"source": {"$ne": f"x{i}"}}]}
    return f


def test_a_shown_key_filter_crossing_the_bounds_only_by_its_rewrite_says_so(
    lc_client: Treehop,
) -> None:
    # within the bounds after the rewrite: answered as shown
    ok = TreehopRetriever(
        client=lc_client,
        metadata_filter={"$or": [{"source": f"x{i}"} for i in range(82)] + [{"source": "beta"}]},
    )
    assert [d.metadata["source"] for d in ok.invoke("kubernetes rollback")] == ["beta"]
    assert [
        d.metadata["source"]
        for d in TreehopRetriever(client=lc_client, metadata_filter=_nested(10)).invoke(
            "kubernetes rollback"
        )
    ] == ["beta"]
    # 600 leaves (601 objects), 32 levels: within the DSL's bounds as written (85 leaves
    # crossed them before helper leftovers61's smaller rewrite; now answered), refused at
    # construction since then (pydantic's ValidationError, a ValueError, with the message)
    r = TreehopRetriever(
        client=lc_client, metadata_filter={"$or": [{"source": f"x{i}"} for i in range(85)]}
    )
    assert r.invoke("kubernetes rollback") == []
    for spec in ({"$or": [{"source": f"x{i}"} for i in range(600)]}, _nested(31)):
        with pytest.raises(ValueError) as err:
            TreehopRetriever(client=lc_client, metadata_filter=spec)
        msg = str(err.value)
        assert "shown key(s) 'source'" in msg and "'source_path'" in msg, msg
        assert "within the filter's bounds as written" in msg
        r = TreehopRetriever(client=lc_client)  # a call's own filter: refused at the call
        with pytest.raises(InvalidFilterError, match="within the filter's bounds as written"):
            r.invoke("kubernetes rollback", metadata_filter=spec)


@pytest.mark.parametrize(
    "spec",
    [
        "deep",
        {"op": "and", "conds": 5},
        {"op": "or", "conds": [3]},
        {"op": "and"},
        {"op": "must", "field": "source", "conds": [None]},
    ],
    ids=["10000-deep", "conds-int", "cond-int", "no-conds", "none-value"],
)
def test_show_fields_refuses_a_hostile_spec_with_a_typed_error(spec: Any) -> None:
    if spec == "deep":
        spec = {"op": "must", "field": "source", "conds": ["a"]}
        for _ in range(10_000):
            spec = {"op": "and", "conds": [spec]}
    with pytest.raises(InvalidFilterError):
        show_fields(spec, [SOURCE])


def test_a_tree_folder_swapped_for_a_symlink_after_the_scan_is_not_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "notes.md").write_text("# Keys\n\nTOPSECRET hunter2 credentials outside\n")
    src = tmp_path / "src"
    (src / "sub").mkdir(parents=True)
    (src / "a.md").write_text("# Alpha\n\nalpha text about rivers\n")
    (src / "sub" / "notes.md").write_text("# Notes\n\nbeta text about mountains\n")
    real_scan = writer_mod.scan_columns

    def scan_then_swap(*args: Any, **kwargs: Any) -> Any:
        got = real_scan(*args, **kwargs)
        (src / "sub" / "notes.md").unlink()  # (another user of the tree, meanwhile)
        (src / "sub").rmdir()
        os.symlink(outside, src / "sub")
        return got

    monkeypatch.setattr(writer_mod, "scan_columns", scan_then_swap)
    th = Treehop(str(tmp_path / "idx"), embedder=BagOfWordsEmbedder(), tagger=None)
    r = th.add_resource(str(src), target_uri="viking://resources/src")
    assert "sub/notes.md" in r.skipped_unreadable
    assert "alpha" in (th.read("viking://resources/src/a.md") or "")
    for h in th.find("TOPSECRET hunter2 credentials", limit=10).contexts():
        assert "TOPSECRET" not in (th.read(h.uri) or "")
    # The top the caller names is theirs to name through a link: still followed.
    monkeypatch.setattr(writer_mod, "scan_columns", real_scan)
    (src / "sub").unlink()
    (src / "sub").mkdir()
    (src / "sub" / "notes.md").write_text("# Notes\n\nbeta text about mountains\n")
    os.symlink(src, tmp_path / "linked")
    again = th.add_resource(str(tmp_path / "linked"), target_uri="viking://resources/linked")
    assert again.files == 2 and not again.skipped_unreadable
    assert "mountains" in (th.read("viking://resources/linked/sub/notes.md") or "")
    th.close()


LONG = 60.0
"""A waiter's pause between tries, far past ``BOUND``: only a wake ends one."""
BOUND = 20.0


async def _queued(line: WaitLine, n: int) -> None:
    while len(line._queue) < n:  # (yields to the waiters until they stand in line)
        await asyncio.sleep(0)


async def test_a_woken_waiter_cancelled_before_it_runs_hands_its_wake_on() -> None:
    # (perf60's release wakes the first waiter only; that one cancelled before it ran, the
    # next slept out its pause beside a free lock: 60 s here, up to 50 ms in the store)
    line, lock = WaitLine(), threading.Lock()
    await line.take(lock, None, None)  # the holder
    first = asyncio.create_task(line.take(lock, None, None, (LONG, LONG)))
    await _queued(line, 1)
    second = asyncio.create_task(line.take(lock, None, None, (LONG, LONG)))
    await _queued(line, 2)
    line.release(lock)  # wakes the first ...
    first.cancel()  # ... which is cancelled before it runs
    await asyncio.gather(first, return_exceptions=True)
    assert first.cancelled()
    await asyncio.wait_for(second, BOUND)
    assert lock.locked()
    line.release(lock)
    assert not line._queue and not lock.locked()


def test_a_sync_client_written_to_in_a_forked_child_says_why(tmp_path: Path) -> None:
    # (os.fork copies the forking thread only: the client's event loop thread is not in the
    # child; its writes raised "closed before the call ran" about a client nobody closed)
    path = str(tmp_path / "idx")
    th = Treehop(path, embedder=BagOfWordsEmbedder(), tagger=None)
    th.add_resource("alpha text about rivers", name="a")

    def child() -> str:  # (anything else it raises is reported, and the test fails on it)
        out = [f"find {len(th.find('rivers').contexts())}"]
        try:
            th.add_resource("beta text from the child", name="b")
            out.append("write ok")
        except TreehopError as e:
            out.append(f"{type(e).__name__}: {e}")
        fresh = Treehop(path, embedder=BagOfWordsEmbedder(), tagger=None)
        fresh.add_resource("gamma text from a new client", name="g")
        fresh.close()
        out.append("new client ok")
        return "\n".join(out)

    report = report_from_a_fork(child)[0].splitlines()
    assert report[0] == "find 1", report
    assert report[1].startswith("ClientClosedError: "), report
    assert "before os.fork()" in report[1] and "open a new client" in report[1], report
    assert report[2] == "new client ok", report
    th.add_resource("delta text from the parent", name="d")  # the parent's client: unharmed
    names = {c.uri.rsplit("/", 1)[-1] for c in th.ls("viking://resources")}
    assert names == {"a", "d", "g"}
    th.close()
