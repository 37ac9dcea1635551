"""The summariser's ``directory_children_enough`` is called as its other methods are (helper
leftovers68a, bench/README.md "(helper leftovers68a)"; helper leftovers67a's open item).

A write re-describes the directories above it from a page of their children at a time, asking
the summariser's ``directory_children_enough`` whether it has read enough
(:class:`treehop.ingest.summaries.BoundedSummarizer`). That call ran on the event loop outside
``treehop._plugins.call``: a caller's summariser that raised left the write with its own
exception (not a ``TreehopError``), and a slow one stalled the client without being named
by a queued write's lock-timeout error. It now goes through ``call`` (in a worker thread for
a caller's summariser, inline for treehop's own), and its answer must be a bool.

Each test fails on 05a7cdf8 unless it says it is a control.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from test_leftovers67a_lock import WORK, _names, _queued_behind
from treehop import Treehop
from treehop.errors import IngestError
from treehop.ingest.summaries import ChildSummary, ExtractiveSummarizer
from treehop.ingest.writer import FIRST_CHILDREN_PAGE
from treehop.redaction import register_secret
from treehop.stores.embedded import EmbeddedStore

from treehop_test_doubles import BagOfWordsEmbedder

SECRET = "sk-leftovers68aSUMMARYkey0123456789abcd"
register_secret(SECRET)


class _Asks(ExtractiveSummarizer):
    """Answers ``directory_children_enough`` with ``answer`` once armed; the first armed call
    sleeps ``sleep`` seconds or raises ``raises``."""

    def __init__(
        self, answer: object = True, sleep: float = 0.0, raises: BaseException | None = None
    ) -> None:
        super().__init__()
        self.answer, self.sleep, self.raises = answer, sleep, raises
        self.armed = False
        self.calls: list[int] = []
        self.on_loop: list[bool] = []
        self._guard = threading.Lock()

    def directory_children_enough(
        self, name: str, children: Sequence[ChildSummary], readme: str | None
    ) -> bool:
        self.calls.append(len(children))
        try:
            asyncio.get_running_loop()
            self.on_loop.append(True)
        except RuntimeError:
            self.on_loop.append(False)
        with self._guard:
            go, self.armed = self.armed, False
        if go and self.raises is not None:
            raise self.raises
        if go and self.sleep:
            time.sleep(self.sleep)
        return self.answer  # type: ignore[return-value]


def _client(tmp_path: Path, summarizer: _Asks, lock_timeout: float = 30.0) -> Treehop:
    """A client whose folder ``viking://resources/d`` holds a full first page of children
    (so the next write there asks the summariser), the summariser not yet armed."""
    store = EmbeddedStore(tmp_path / "idx", lock_timeout=lock_timeout)
    th = Treehop(store=store, embedder=BagOfWordsEmbedder(), summarizer=summarizer, tagger=None)
    for i in range(FIRST_CHILDREN_PAGE):
        th.add_resource(
            f"Note {i} about topic {i}", target_uri=f"viking://resources/d/n{i}.md", is_text=True
        )
    assert summarizer.calls  # (the page was asked about: the premise of these tests)
    summarizer.armed = True
    return th


def test_a_raising_directory_children_enough_is_a_typed_error(tmp_path: Path) -> None:
    # 05a7cdf8: the write raised the summariser's own ValueError (the key in its message)
    summarizer = _Asks(raises=ValueError(f"quota exceeded for {SECRET}"))
    th = _client(tmp_path, summarizer)
    with pytest.raises(IngestError, match="the summarizer failed: ValueError: quota") as info:
        th.add_resource("One more", target_uri="viking://resources/d/more.md", is_text=True)
    assert SECRET not in str(info.value) and SECRET not in repr(info.value)
    th.add_resource("One more", target_uri="viking://resources/d/more.md", is_text=True)
    assert "viking://resources/d/more.md" in {e.uri for e in th.ls("viking://resources/d")}
    th.close()


@pytest.mark.parametrize("answer", ["no", None, 1])
def test_an_answer_that_is_no_bool_is_refused(tmp_path: Path, answer: object) -> None:
    # 05a7cdf8: taken by its truth ("no" and 1 as True: the rest of the children unread)
    summarizer = _Asks(answer=True)
    th = _client(tmp_path, summarizer)
    summarizer.answer = answer
    with pytest.raises(IngestError, match="must answer True or False; got"):
        th.add_resource("One more", target_uri="viking://resources/d/more.md", is_text=True)
    th.close()


def test_a_callers_directory_children_enough_runs_off_the_event_loop(tmp_path: Path) -> None:
    # 05a7cdf8: called on the event loop (every other call of the client stalled meanwhile)
    summarizer = _Asks(answer=True)
    th = _client(tmp_path, summarizer)
    summarizer.on_loop.clear()
    th.add_resource("One more", target_uri="viking://resources/d/more.md", is_text=True)
    assert summarizer.on_loop and not any(summarizer.on_loop)
    th.close()


def test_a_write_queued_behind_a_slow_directory_children_enough_names_the_summarizer(
    tmp_path: Path,
) -> None:
    # 05a7cdf8: the call ran on the event loop, so the queued write could not see its
    # lock_timeout pass: it waited the whole call out and wrote (no error at all)
    summarizer = _Asks(answer=True, sleep=WORK)
    th = _client(tmp_path, summarizer, lock_timeout=1.0)
    error = _queued_behind(
        th,
        lambda: th.add_resource(
            "One more", target_uri="viking://resources/d/more.md", is_text=True
        ),
        "summarizer",
    )
    _names(error, "summarizer")
    th.close()
