"""Running the async core from synchronous code, safely even inside a running event loop.

The sync client owns one daemon thread with its own event loop and submits coroutines to it.
This works the same in a script, in Jupyter (whose loop is already running) and inside another
framework's async code, where ``asyncio.run`` would fail.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from .errors import ClientClosedError

T = TypeVar("T")


class LoopThread:
    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="treehop-loop", daemon=True
        )
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        if self._loop.is_closed():
            coro.close()
            raise ClientClosedError("this treehop client is closed")
        if threading.current_thread() is self._thread:
            coro.close()
            raise ClientClosedError(
                "cannot call the sync treehop client from its own event loop (use client.aio)"
            )
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    @property
    def closed(self) -> bool:
        return self._loop.is_closed()

    def close(self) -> None:
        if self._loop.is_closed():
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
        self._loop.close()
