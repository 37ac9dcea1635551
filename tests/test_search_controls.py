"""The search_knowledge controls on find(): retrieve_count, rerank_threshold, chunk diffusion
and grouping."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from treehop import RetrievalConfig, Treehop
from treehop.errors import InvalidQueryError
from treehop.models import FoundBy
from treehop.rerankers.base import BaseReranker


class KeywordReranker(BaseReranker):
    """Scores 1.0 for documents containing the keyword, else 0.1 (a deterministic stand-in)."""

    name = "keyword"

    def __init__(self, keyword: str) -> None:
        self.keyword = keyword
        self.batches: list[int] = []

    def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        self.batches.append(len(documents))
        return [1.0 if self.keyword in d else 0.1 for d in documents]


@pytest.fixture
def long_doc(tmp_path: Path) -> Path:
    parts = [
        f"## Step {i}\n\n" + f"Instruction number {i} explains phase {i} in detail. " * 12
        for i in range(8)
    ]
    p = tmp_path / "guide.md"
    p.write_text("# Guide\n\n" + "\n\n".join(parts))
    return p


def test_retrieve_count_needs_rerank(bow, long_doc: Path) -> None:
    with Treehop(embedder=bow, tagger=None) as th:
        th.add_resource(long_doc, target_uri="viking://resources/guide.md")
        with pytest.raises(InvalidQueryError, match="only when rerank is on"):
            th.find("phase 3", retrieve_count=30)
    with Treehop(embedder=bow, tagger=None, reranker=KeywordReranker("x")) as th:
        th.add_resource(long_doc, target_uri="viking://resources/guide.md")
        with pytest.raises(InvalidQueryError, match=r">= limit"):
            th.find("phase 3", mode="thinking", limit=10, retrieve_count=5)
        with pytest.raises(InvalidQueryError, match=r"0\.\.5"):
            th.find("phase 3", chunk_diffusion_count=6)


def test_rerank_threshold_drops_low_rerank_scores(bow, long_doc: Path) -> None:
    rr = KeywordReranker("number 3 ")
    # Chunk-level hits (one slot per chunk), as VikingDB's search_knowledge returns them.
    chunks = RetrievalConfig(collapse_chunks=False)
    with Treehop(embedder=bow, tagger=None, reranker=rr, config=chunks) as th:
        th.add_resource(long_doc, target_uri="viking://resources/guide.md")
        res = th.find(
            "phase 3", mode="thinking", limit=5, rerank_threshold=0.5, include_directories=False
        )
        assert [m.chunk_index for m in res.resources] == [3]
        assert res.resources[0].rerank_score == 1.0
        loose = th.find("phase 3", mode="thinking", limit=5, include_directories=False)
        assert len(loose.resources) == 5


def test_chunk_diffusion_adds_neighbours(bow, long_doc: Path) -> None:
    with Treehop(embedder=bow, tagger=None) as th:
        th.add_resource(long_doc, target_uri="viking://resources/guide.md")
        res = th.find(
            "Instruction number 4 phase 4",
            limit=1,
            include_directories=False,
            chunk_diffusion_count=2,
        )
        hit = res.resources[0]
        assert hit.found_by is not FoundBy.NEIGHBOUR
        neighbours = res.resources[1:]
        assert {m.chunk_index for m in neighbours} == {
            i
            for i in range(hit.chunk_index - 2, hit.chunk_index + 3)  # type: ignore[operator]
            if i != hit.chunk_index and 0 <= i < 8
        }
        assert all(m.found_by is FoundBy.NEIGHBOUR and m.found_via == hit.uri for m in neighbours)


def test_chunk_group_orders_by_document_then_reading_order(
    bow, long_doc: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other.md"
    other.write_text(long_doc.read_text().replace("Instruction", "Directive"))
    with Treehop(embedder=bow, tagger=None) as th:
        th.add_resource(long_doc, target_uri="viking://resources/guide.md")
        th.add_resource(other, target_uri="viking://resources/other.md")
        res = th.find("Instruction phase 5", limit=6, include_directories=False, chunk_group=True)
        docs = [m.parent_uri for m in res.resources]
        # contiguous per document
        assert docs == sorted(docs, key=docs.index)
        for d in set(docs):
            idx = [m.chunk_index for m in res.resources if m.parent_uri == d]
            assert idx == sorted(idx)  # type: ignore[type-var]
        assert docs[0] == "viking://resources/guide.md"
