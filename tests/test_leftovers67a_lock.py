"""The lock-timeout error names every plug-in call that held the lock (helper leftovers67a,
bench/README.md "(helper leftovers67a)"; stop 66's open item).

A write of a client queued behind one long plug-in call of the same client's write in progress
fails past ``lock_timeout`` (helper leftovers66c's decision) and says what held the lock. Only
the embedder's calls were named (``calling("embedder")`` at three call sites); a slow
summarizer or tagger was "no batch embedded, summary made or batch committed". Every plug-in
call is now noted where treehop calls a plug-in (``treehop._plugins.call``, and the embedder
guard's awaited call), in the context of the hold.

Each test fails on 2bd9fe6d unless it says it is a control.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from treehop import AsyncTreehop, Treehop
from treehop._plugins import call as plugin_call
from treehop.errors import IndexLockedError, StoreError
from treehop.ingest.summaries import ChildSummary, ExtractiveSummarizer
from treehop.models import Node
from treehop.stores.base import VectorStore
from treehop.stores.embedded import EmbeddedStore
from treehop.tagging import NodeTags
from treehop.tagging.ingest import IngestTagger, LabelCounts
from treehop.tagging.keywords import TaggerError

from treehop_test_doubles import BagOfWordsEmbedder

BOUND = 120.0
"""How long any wait of these tests may take before it is a failure (not a hang)."""

WORK = 3.0
"""How long the one slow plug-in call takes (``lock_timeout`` is 1 s)."""


class _SlowOnce:
    """The first call that sees the word ``slow`` sleeps :data:`WORK` s: one long call of the
    write's own (later calls, the repeated write's included, are quick)."""

    def __init__(self) -> None:
        self._left = 1
        self._guard = threading.Lock()

    def maybe_sleep(self, texts: Sequence[str]) -> None:
        if any("slow" in t for t in texts):
            with self._guard:
                go, self._left = self._left > 0, self._left - 1
            if go:
                time.sleep(WORK)


class _SlowDirectorySummarizer(ExtractiveSummarizer):
    """Describes a directory holding a ``slow`` child slowly once (the re-description of the
    ancestors, under the lock)."""

    def __init__(self) -> None:
        super().__init__()
        self.slow = _SlowOnce()

    def summarize_directory(
        self, name: str, children: Sequence[ChildSummary], readme: str | None
    ) -> tuple[str, str]:
        self.slow.maybe_sleep([c.abstract for c in children])
        return super().summarize_directory(name, children, readme)


class _SlowFileSummarizer(ExtractiveSummarizer):
    """Describes a file holding ``slow`` slowly once (a folder's build, under the lock)."""

    def __init__(self) -> None:
        super().__init__()
        self.slow = _SlowOnce()

    def summarize_file(self, name: str, text: str, kind: str) -> tuple[str, str]:
        self.slow.maybe_sleep([text])
        return super().summarize_file(name, text, kind)


class _SlowTagger(IngestTagger):
    """Tags a batch holding ``slow`` slowly once (the write's tagging, under the lock)."""

    def __init__(self) -> None:
        super().__init__()
        self.slow = _SlowOnce()

    def tag_nodes(
        self,
        nodes: Sequence[Node],
        store: VectorStore,
        new_texts: Sequence[str] | None = None,
        counted: Mapping[str, LabelCounts] | None = None,
    ) -> dict[str, NodeTags]:
        self.slow.maybe_sleep(list(new_texts or []))
        return super().tag_nodes(nodes, store, new_texts, counted)


def _queued_behind(th: Treehop, first: Callable[[], object], plugin: str) -> IndexLockedError:
    """Run ``first`` (a write whose one ``plugin`` call is slow); once that call holds the
    lock, a second write of the same client waits for it; the second write's error."""
    lock = th.aio.writer.lock
    results: list[Any] = [None, None]

    def one() -> None:
        results[0] = first()

    def two() -> None:
        try:
            results[1] = th.add_resource(
                "A short note", target_uri="viking://resources/short.md", is_text=True
            )
        except IndexLockedError as exc:
            results[1] = exc

    a = threading.Thread(target=one, daemon=True)
    a.start()
    deadline = time.monotonic() + BOUND
    while lock._calling is None or lock._calling[0] != plugin:  # (inside the slow call)
        assert time.monotonic() < deadline and a.is_alive(), (lock._calling, results)
        time.sleep(0.001)
    b = threading.Thread(target=two, daemon=True)
    b.start()
    for t in (a, b):
        t.join(BOUND)
        assert not t.is_alive()
    error = results[1]
    assert isinstance(error, IndexLockedError), results
    return error


def _names(error: IndexLockedError, plugin: str) -> None:
    text = str(error)
    assert "waited 1 s" in text and "wrote nothing" in text, text
    found = re.search(rf"held the lock for ([\d.]+) s, inside one call of its {plugin} for", text)
    assert found is not None, text
    assert float(found.group(1)) >= 1.0  # (at least the wait; the call began before it)


def _repeat_runs(th: Treehop, first: str) -> None:
    """The first write completed and the second wrote nothing; repeated, it runs as it is."""
    assert {e.uri for e in th.ls("viking://resources")} == {first}
    th.add_resource("A short note", target_uri="viking://resources/short.md", is_text=True)
    assert {e.uri for e in th.ls("viking://resources")} == {
        first,
        "viking://resources/short.md",
    }


def test_a_write_queued_behind_a_slow_directory_summary_names_the_summarizer(
    tmp_path: Path,
) -> None:
    # 2bd9fe6d: the summary of the ancestors ran on the event loop, so the waiting write
    # could not see its deadline pass: it waited the whole call out and did not fail (every
    # other call of the client stalled meanwhile), and the summary was never named
    store = EmbeddedStore(tmp_path / "idx", lock_timeout=1.0)
    th = Treehop(
        store=store,
        embedder=BagOfWordsEmbedder(),
        summarizer=_SlowDirectorySummarizer(),
        tagger=None,
    )
    error = _queued_behind(
        th,
        lambda: th.add_resource(
            "A slow note", target_uri="viking://resources/slow.md", is_text=True
        ),
        "summarizer",
    )
    _names(error, "summarizer")
    _repeat_runs(th, "viking://resources/slow.md")
    th.close()


def test_a_write_queued_behind_a_slow_file_summary_of_a_folder_names_the_summarizer(
    tmp_path: Path,
) -> None:
    # 2bd9fe6d: "with no batch embedded, summary made or batch committed for the last 1.0 s
    # (a call of its embedder, summarizer or tagger, or a stalled hold)": a folder is built
    # under the lock, in a worker thread, and its summarizer's calls were not noted
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.md").write_text("# A\n\nA slow note about lighthouses.\n")
    store = EmbeddedStore(tmp_path / "idx", lock_timeout=1.0)
    th = Treehop(
        store=store, embedder=BagOfWordsEmbedder(), summarizer=_SlowFileSummarizer(), tagger=None
    )
    error = _queued_behind(
        th, lambda: th.add_resource(folder, target_uri="viking://resources/notes"), "summarizer"
    )
    _names(error, "summarizer")
    _repeat_runs(th, "viking://resources/notes")
    th.close()


def test_a_write_queued_behind_a_slow_tagger_names_the_tagger(tmp_path: Path) -> None:
    # 2bd9fe6d: "with no batch embedded, summary made or batch committed ..." (the tagger's
    # call, in a worker thread under the lock, was not noted)
    store = EmbeddedStore(tmp_path / "idx", lock_timeout=1.0)
    th = Treehop(store=store, embedder=BagOfWordsEmbedder(), tagger=_SlowTagger())
    error = _queued_behind(
        th,
        lambda: th.add_resource(
            "A slow note", target_uri="viking://resources/slow.md", is_text=True
        ),
        "tagger",
    )
    _names(error, "tagger")
    _repeat_runs(th, "viking://resources/slow.md")
    th.close()


async def test_a_call_inside_a_plugin_call_leaves_the_outer_one_named(tmp_path: Path) -> None:
    # the store a tagger reads: what holds the lock is the outer call, and it stays named
    # until it returns (2bd9fe6d: no call made through treehop._plugins.call was named)
    th = AsyncTreehop(store=EmbeddedStore(tmp_path / "idx"), embedder=BagOfWordsEmbedder())
    lock = th.writer.lock
    seen: list[object] = []

    def store_get() -> None:
        seen.append(lock._calling)

    def tag_nodes() -> None:
        seen.append(lock._calling)
        plugin_call("the store's get", StoreError, store_get)
        seen.append(lock._calling)

    async with lock:
        plugin_call("the tagger", TaggerError, tag_nodes)
        seen.append(lock._calling)
    names = [s[0] if isinstance(s, tuple) else s for s in seen]
    assert names == ["tagger", "tagger", "tagger", None]
    await th.close()


def test_the_embedders_calls_are_named_in_a_write_and_not_outside_it_control(
    tmp_path: Path,
) -> None:
    # control: the embedder's calls, named at three call sites before, are still named in a
    # write (now by its guard); a find's call, with no write holding the lock, names nothing
    named: list[object] = []

    class _Spy(BagOfWordsEmbedder):
        def embed(self, texts: Sequence[str]) -> Any:
            named.append(lock._calling[0] if lock._calling is not None else None)
            return super().embed(texts)

    th = Treehop(store=EmbeddedStore(tmp_path / "idx"), embedder=_Spy(), tagger=None)
    lock = th.aio.writer.lock
    th.add_resource("A note on tides", target_uri="viking://resources/a.md", is_text=True)
    assert named and set(named) == {"embedder"}, named
    named.clear()
    assert th.find("tides", limit=1)
    assert named == [None]
    th.close()
