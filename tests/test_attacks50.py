"""Helper attacks50's adversarial pass: what attacks48 left open, and a second set of probes.

- One document of many short near-identical chunks, fewer documents than the find's
  ``limit``: the k-th best slot stays unknown, so the descent pages through the document
  ``max_children_per_dir`` rows a round, each round excluding the rows seen so far. The
  store looked every excluded URI up again each round (hashed and compared: quadratic in
  the rounds); now a round looks up only the URIs it has not looked up before.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from treehop import Treehop
from treehop import hierarchical_retriever as hr
from treehop.config import RetrievalConfig
from treehop.ingest.records import add_records
from treehop.stores.embedded import snapshot as snapmod

from treehop_test_doubles import BagOfWordsEmbedder

QUERY = "why does alpha beta fail?"


def _entries(n: int) -> str:
    return "# FAQ\n\n" + "".join(
        f"({i})\nwhy does alpha beta fail {i}? because gamma delta.\n\n" for i in range(n)
    )


def _paging_client(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Treehop:
    """A small copy of the 16,000-entry repro: the global step may fetch only 20 rows, so
    the one document's ~200 chunks are paged 10 a round."""
    monkeypatch.setattr(hr, "MAX_GLOBAL_FETCH", 20)
    c = Treehop(
        tmp_path / "idx",
        embedder=BagOfWordsEmbedder(),
        tagger=None,
        chunk_chars=200,
        config=RetrievalConfig(max_children_per_dir=10, max_rounds=100),
    )
    add_records(c, [(_entries(800), {"source": "faq.md"})])
    return c


def test_paging_one_document_hashes_each_excluded_uri_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each round of a paged directory searches it with every row seen so far excluded;
    the URIs hashed to find those rows grow with the rows seen, not with rounds x rows."""
    c = _paging_client(tmp_path, monkeypatch)
    try:
        want = c.find(QUERY, limit=10)
        rounds = want.query_results[0].rounds
        assert rounds >= 15, rounds  # (the case: many rounds of one directory)
        hashed: list[int] = []
        real = snapmod._hashes

        def counting(texts: Any) -> Any:
            hashed.append(len(texts))
            return real(texts)

        monkeypatch.setattr(snapmod, "_hashes", counting)
        got = c.find(QUERY, limit=10)
        seen = 10 * (rounds - 1)  # (rows excluded by the last round)
        # (before: 32,482 URIs hashed, the excluded set again each round; now each excluded
        # URI once, plus one lookup of the directories searched)
        assert sum(hashed) <= seen + rounds + 10, (str(hashed), seen, rounds)
        # the same answer, to the bit
        assert [(r.uri, r.score) for r in got.resources] == [
            (r.uri, r.score) for r in want.resources
        ]
        assert got.query_results[0].rounds == rounds
    finally:
        c.close()
