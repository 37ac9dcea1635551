"""Adversarial pass over attacks68's client write lock and its open items (helper attacks70).

The client's write lock is a ``threading.Lock`` taken in turn (``WaitLine``) so that a sync
``Treehop`` writing on its own loop and its ``.aio`` writing from other event loops share it.
Here it is driven from many threads and loops at once, with a cancelled waiter, a write
from inside a callback of another write, and ``close()`` while writes wait. Every wait is
bounded by :data:`BOUND` (a hang fails the test); threads meet on events, never on sleeps.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from treehop import Treehop
from treehop.errors import ClientClosedError, IndexLockedError
from treehop.tagging.base import NodeTags

from treehop_test_doubles import BagOfWordsEmbedder, report_from_a_fork

BOUND = 60.0
"""The longest any wait may take (a hang is a failure, not a stuck run)."""


def _run_bounded(targets: list[Callable[[], Any]]) -> list[Any]:
    """Run each target on its own daemon thread; the results (or what each raised). A
    thread still running after :data:`BOUND` in all fails the test (a deadlock)."""
    out: list[Any] = [None] * len(targets)

    def wrap(i: int, f: Callable[[], Any]) -> None:
        try:
            out[i] = f()
        except BaseException as exc:  # (kept to assert on)
            out[i] = exc

    threads = [
        threading.Thread(target=wrap, args=(i, f), daemon=True) for i, f in enumerate(targets)
    ]
    for t in threads:
        t.start()
    done = threading.Event()

    def join_all() -> None:
        for t in threads:
            t.join()
        done.set()

    threading.Thread(target=join_all, daemon=True).start()
    assert done.wait(BOUND), "writes of one client from threads and event loops deadlocked"
    return out


def test_sync_writes_from_threads_and_aio_writes_from_two_loops_lose_nothing(
    tmp_path: Path,
) -> None:
    th = Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None)
    per = 4

    def sync_writer(w: int) -> Callable[[], list[str]]:
        def go() -> list[str]:
            return [
                th.add_resource(
                    f"sync {w} text {i}", target_uri=f"viking://resources/s{w}_{i}.md"
                ).root_uri
                for i in range(per)
            ]

        return go

    def aio_writer(w: int) -> Callable[[], list[str]]:
        async def one(i: int) -> str:
            res = await th.aio.add_resource(
                f"aio {w} text {i}", target_uri=f"viking://resources/a{w}_{i}.md"
            )
            return res.root_uri

        async def many() -> list[str]:
            return list(await asyncio.gather(*(one(i) for i in range(per))))

        return lambda: asyncio.run(many())

    out = _run_bounded([sync_writer(w) for w in range(4)] + [aio_writer(w) for w in range(2)])
    for r in out:
        assert isinstance(r, list), r
    expected = {f"viking://resources/s{w}_{i}.md" for w in range(4) for i in range(per)}
    expected |= {f"viking://resources/a{w}_{i}.md" for w in range(2) for i in range(per)}
    assert {u for r in out for u in r} == expected
    assert {e.uri for e in th.ls("viking://resources")} == expected
    assert not th.aio.writer.lock.locked() and not th.aio.writer.lock.waiting()
    th.close()
    with Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None) as again:
        assert {e.uri for e in again.ls("viking://resources")} == expected


def _hold_on_sync_loop(th: Treehop) -> tuple[threading.Thread, threading.Event, threading.Event]:
    """Hold ``th``'s write lock from its own loop thread until the returned ``go`` is set."""
    held, go = threading.Event(), threading.Event()

    async def hold() -> None:
        async with th.aio.writer.lock:
            held.set()
            await asyncio.to_thread(go.wait, BOUND)

    def run_hold() -> None:
        with contextlib.suppress(ClientClosedError):  # (a close() racing the hold: told, typed)
            th.run(hold())

    holder = threading.Thread(target=run_hold, daemon=True)
    holder.start()
    assert held.wait(BOUND)
    return holder, held, go


def _until(pred: Callable[[], bool]) -> None:
    """Wait (bounded) for ``pred``: an event made from a state the code under test sets."""
    ev = threading.Event()
    start = time.monotonic()
    while not pred():
        assert time.monotonic() - start < BOUND, "state never reached"
        ev.wait(0.001)  # (a poll of the state, not a sleep standing in for it)


def test_a_cancelled_aio_write_while_a_sync_write_waits_hands_the_lock_on(tmp_path: Path) -> None:
    th = Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None)
    lock = th.aio.writer.lock
    holder, _, go = _hold_on_sync_loop(th)
    sync_out: list[Any] = []

    def sync_write() -> None:
        sync_out.append(th.add_resource("sync waits", target_uri="viking://resources/sync.md"))

    async def aio_side() -> None:
        task = asyncio.ensure_future(
            th.aio.add_resource("aio cancelled", target_uri="viking://resources/gone.md")
        )
        while lock._line.waiting() < 1:
            await asyncio.sleep(0)
        t = threading.Thread(target=sync_write, daemon=True)
        t.start()
        while lock._line.waiting() < 2:  # (the sync write queued behind the aio one)
            assert t.is_alive()
            await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        go.set()
        await asyncio.to_thread(t.join, BOUND)
        assert not t.is_alive(), "the sync write behind a cancelled aio write hung"

    out = _run_bounded([lambda: asyncio.run(aio_side())])
    assert out == [None], out
    holder.join(BOUND)
    assert sync_out and sync_out[0].root_uri == "viking://resources/sync.md"
    assert {e.uri for e in th.ls("viking://resources")} == {"viking://resources/sync.md"}
    assert not lock.locked() and not lock.waiting()
    th.close()


class _TaggerCallsBack:
    """A tagger that, tagging, writes through ``write`` (a careless callback) and keeps what
    that write returned or raised."""

    def __init__(self, write: Callable[[], Any]) -> None:
        self.write = write
        self.inner: Any = None

    def tag_nodes(
        self, nodes: Sequence[Any], store: Any, new_texts: Any = None
    ) -> dict[str, NodeTags]:
        if self.inner is None:
            try:
                self.inner = self.write()
            except BaseException as exc:
                self.inner = exc
        return {n.uri: NodeTags(auto=[], own_labels=[]) for n in nodes}

    def refit(self, store: Any) -> None:
        return None


class _EmbedderCallsBack(BagOfWordsEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.write: Callable[[], Any] | None = None
        self.inner: Any = None

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self.write is not None and self.inner is None and any("trigger" in t for t in texts):
            try:
                self.inner = self.write()
            except BaseException as exc:
                self.inner = exc
        return super().embed(texts)


def _inner_writes(th: Treehop) -> dict[str, Callable[[], Any]]:
    inner = "viking://resources/in.md"
    return {
        "sync": lambda: th.add_resource("Inner text", target_uri=inner),
        "aio on a new loop": lambda: asyncio.run(
            th.aio.add_resource("Inner text", target_uri=inner)
        ),
    }


@pytest.mark.parametrize("how", ["sync", "aio on a new loop"])
@pytest.mark.parametrize("where", ["tagger", "embedder"])
def test_a_write_from_a_callback_of_another_write_is_refused_typed_never_a_hang(
    tmp_path: Path, where: str, how: str
) -> None:
    emb = _EmbedderCallsBack()
    tagger = _TaggerCallsBack(lambda: None) if where == "tagger" else None
    th = Treehop(tmp_path / "idx", embedder=emb, tagger=tagger)
    write = _inner_writes(th)[how]
    cb: Any
    if where == "tagger":
        assert tagger is not None
        tagger.write, cb = write, tagger
    else:
        emb.write, cb = write, emb
    out = _run_bounded(
        [lambda: th.add_resource("Outer trigger text", target_uri="viking://resources/out.md")]
    )
    assert not isinstance(out[0], BaseException), out[0]
    assert isinstance(cb.inner, IndexLockedError), cb.inner
    assert {e.uri for e in th.ls("viking://resources")} == {"viking://resources/out.md"}
    th.add_resource("Later", target_uri="viking://resources/later.md")  # (the lock is free)
    th.close()


def test_close_while_writes_wait_for_the_lock(tmp_path: Path) -> None:
    th = Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None)
    lock = th.aio.writer.lock
    holder, _, go = _hold_on_sync_loop(th)

    def sync_write() -> Any:
        return th.add_resource("sync waits", target_uri="viking://resources/sync.md")

    def aio_write() -> Any:
        return asyncio.run(th.aio.add_resource("aio waits", target_uri="viking://resources/aio.md"))

    results: list[Any] = []
    waiters = threading.Thread(
        target=lambda: results.extend(_run_bounded([sync_write, aio_write])), daemon=True
    )
    waiters.start()
    _until(lambda: lock._line.waiting() >= 2)
    closer = threading.Thread(target=th.close, daemon=True)
    closer.start()
    go.set()
    closer.join(BOUND)
    assert not closer.is_alive(), "close() while writes waited hung"
    waiters.join(BOUND)
    assert not waiters.is_alive()
    holder.join(BOUND)
    for r in results:  # each waiting write either ran before the close or was refused typed
        assert isinstance(r, ClientClosedError) or r.root_uri.startswith("viking://"), r
    written = {r.root_uri for r in results if not isinstance(r, BaseException)}
    with Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None) as again:
        assert {e.uri for e in again.ls("viking://resources")} == written


# -- attacks68's open items ---------------------------------------------------------------


@pytest.mark.parametrize("bad", [float("inf"), 1e12, 1e7, float("nan"), 0, -1])
def test_a_rerank_timeout_no_call_can_use_is_refused_when_the_config_is_made(bad: float) -> None:
    """``rerank_timeout_s=inf`` was accepted: no bound on a reranker call inside ``find``.
    Bounded as every other timeout (below ``_http.MAX_SECONDS``)."""
    from treehop._http import MAX_SECONDS
    from treehop.config import RetrievalConfig
    from treehop.errors import InvalidConfigError

    with pytest.raises(InvalidConfigError, match="rerank_timeout_s"):
        RetrievalConfig(rerank_timeout_s=bad)
    assert RetrievalConfig(rerank_timeout_s=MAX_SECONDS * 0.99).rerank_timeout_s < MAX_SECONDS


def test_deepcopy_of_an_openai_compatible_embedder_is_a_working_copy() -> None:
    """``copy.deepcopy`` raised a raw ``TypeError: cannot pickle '_thread.lock' object``.
    The copy embeds through a fake server speaking the protocol over loopback HTTP; a
    caller's ``http_client`` is shared, the embedder's own pools and lock are not."""
    import copy
    import json
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    import httpx

    from treehop.embedders.openai_compatible import OpenAICompatibleEmbedder

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            data = [
                {"index": i, "embedding": [1.0, float(i), 0.5]} for i in range(len(body["input"]))
            ]
            out = json.dumps({"data": data}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        def log_message(self, *a: Any) -> None:
            pass

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{srv.server_address[1]}/v1"
    try:
        e = OpenAICompatibleEmbedder(model="m", base_url=url, api_key="sk-secret-key-70")
        e.embed(["warm the pool"])  # (a pool and a lock in use when copied)
        c = copy.deepcopy(e)
        assert c is not e and c._lock is not e._lock and c._client is None
        assert repr(c) == repr(e) and "sk-secret-key-70" not in repr(c)
        assert c.embed(["a", "b"]).shape == (2, 3) and c._client is not e._client
        assert asyncio.run(c.aembed(["x"])).shape == (1, 3)
        e.close()  # (closing the original leaves the copy working)
        assert c.embed(["c"]).shape == (1, 3)
        c.close()
        mine = httpx.Client()
        shared = OpenAICompatibleEmbedder(model="m", base_url=url, http_client=mine)
        assert copy.deepcopy(shared)._client is mine
        mine.close()
    finally:
        srv.shutdown()
        srv.server_close()  # (its listening socket: a ResourceWarning at a later collection)


def _hold_then_fork(
    hold: Callable[[threading.Event, threading.Event], None], child: Callable[[], str]
) -> str:
    """Run ``hold(held, leave)`` on a thread until it sets ``held``, fork, and return what
    ``child()`` reported in the child (a raised error's name; a child stuck past 20 s is
    killed by its alarm and reports nothing)."""

    held, leave = threading.Event(), threading.Event()
    t = threading.Thread(target=hold, args=(held, leave), daemon=True)
    t.start()
    assert held.wait(BOUND)
    try:
        report, code = report_from_a_fork(child, alarm_s=20)
    finally:
        leave.set()
        t.join(BOUND)
    assert code == 0, f"the child hung on an inherited lock ({report!r})"
    return report


def _holding(get_lock: Callable[[], Any]) -> Callable[[threading.Event, threading.Event], None]:
    def hold(held: threading.Event, leave: threading.Event) -> None:
        with get_lock():
            held.set()
            leave.wait(BOUND)

    return hold


def test_a_child_forked_while_redaction_lock_is_held_can_register_and_redact() -> None:
    from treehop import redaction

    def child() -> str:
        redaction.register_secret("sk-forked-child-secret-70")
        return redaction.redact("key sk-forked-child-secret-70 here")

    report = _hold_then_fork(_holding(lambda: redaction._lock), child)
    assert "sk-forked-child-secret-70" not in report and "here" in report, report


def test_a_child_forked_while_jieba_loads_can_segment_chinese() -> None:
    from treehop import text_tokenize

    def child() -> str:
        text_tokenize._jieba_state.clear()  # (the child loads it, as it would first time)
        text_tokenize._jieba()
        return "ok"

    assert _hold_then_fork(_holding(lambda: text_tokenize._jieba_lock), child) == "ok"


def test_a_child_forked_while_the_default_token_counter_loads_can_assemble() -> None:
    from treehop import context_assembly

    def child() -> str:
        counter = context_assembly.default_token_counter()
        context_assembly._cached_count(counter)("one line")
        return "ok"

    assert _hold_then_fork(_holding(lambda: context_assembly._default_lock), child) == "ok"
    assert _hold_then_fork(_holding(lambda: context_assembly._count_lock), child) == "ok"


def test_a_child_forked_during_a_write_writes_and_keeps_numpys_page_hint(tmp_path: Path) -> None:
    from treehop.ingest import writer

    switch = writer._HUGEPAGE_SWITCH
    assert switch is not None  # (this numpy has the hint: the count is exercised)
    before = switch(True)
    switch(before)

    def in_a_write(held: threading.Event, leave: threading.Event) -> None:
        with writer._small_pages():
            held.set()
            leave.wait(BOUND)

    def child() -> str:
        users = writer._pages_users
        hint = switch(True)  # (what the child's hint was; set back below)
        switch(hint)
        with Treehop(tmp_path / "child", embedder=BagOfWordsEmbedder(), tagger=None) as th:
            th.add_resource("written in the child", target_uri="viking://resources/c.md")
        return f"{users} {hint} {writer._pages_users} {switch(hint) == hint}"

    assert _hold_then_fork(in_a_write, child) == f"0 {before} 0 True"
    assert _hold_then_fork(_holding(lambda: writer._pages_lock), child) == f"0 {before} 0 True"
