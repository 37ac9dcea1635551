"""A closed client's ``repr`` leaves its store closed (helper usage78).

``repr(AsyncTreehop)`` counts the store's nodes; on a closed client that count reopened the
store ``close()`` had released (``nodes.bin`` mapped again, a descriptor held until exit).
Found through LangChain: ``asyncio.run`` of a coroutine returning a closed ``TreehopRetriever``
took the task's repr, which reprs the retriever and its client. A closed client now shows
``closed=True`` instead of a count.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from treehop import AsyncTreehop, Treehop

from treehop_test_doubles import BagOfWordsEmbedder, index_files_open


def test_repr_of_a_closed_client_does_not_reopen_its_store(tmp_path: Path) -> None:
    idx = tmp_path / "idx"
    with Treehop(idx, embedder=BagOfWordsEmbedder(), tagger=None) as th:
        th.add_resource("The tides turn twice a day.", target_uri="viking://resources/t.md")
        assert "store=" in repr(th)  # (the control: an open client shows its store)
    assert index_files_open(idx) == []
    shown = repr(th)
    assert index_files_open(idx) == []
    assert "closed=True" in shown and "store=" not in shown

    async def run() -> None:
        ath = AsyncTreehop(idx, embedder=BagOfWordsEmbedder(), tagger=None)
        assert (await ath.find("tides", limit=1)).contexts()
        assert index_files_open(idx) != []  # (premise: an open store holds its files)
        assert "store=" in repr(ath)
        await ath.close()
        assert index_files_open(idx) == []
        shown = repr(ath)
        assert index_files_open(idx) == []
        assert shown.startswith("AsyncTreehop(") and "closed=True" in shown

    asyncio.run(run())
