"""LangGraph ``TreehopStore`` search scores are cosines whatever the embedder's vector length
(helper attacks88).

Before (``61de7c96``): the score was the stored (unit) vector times the query's vector as the
embedder returned it, so an embedder that does not normalise (Ollama's, many Hugging Face
models') scored an item 841.3 where its cosine is 0.841, against the documented "cosine of
the query's and the item's stored vectors".
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from langgraph.store.base import PutOp

from treehop import Treehop
from treehop.integration_kit import as_async

from treehop_test_doubles import BagOfWordsEmbedder

sys.path.insert(0, str(Path(__file__).resolve().parent / "langchain"))
from langchain_treehop import TreehopStore

NS = ("users", "u1", "memories")


class Unnormalised(BagOfWordsEmbedder):
    """The same directions, at length ``scale`` (a model that returns raw vectors)."""

    name = "test-bag-of-words-64-raw"
    scale = 1000.0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return super().embed(texts) * self.scale


@pytest.mark.parametrize("scale", [1000.0, 0.001])
def test_scores_are_cosines_for_an_embedder_that_does_not_normalise(scale: float) -> None:
    emb = Unnormalised()
    emb.scale = scale
    th = Treehop(None, embedder=emb, tagger=None)
    try:
        store = TreehopStore(th)
        store.batch(
            [PutOp(NS, f"m{i}", {"text": f"likes topic{i % 4} fact {i}"}) for i in range(12)]
        )
        q = "likes topic2"
        qv = np.asarray(emb.embed([q])[0], dtype=np.float64)
        qv /= np.linalg.norm(qv)
        aio = as_async(th)
        items = store.search(NS[:1], query=q, limit=8)
        assert len(items) == 8
        for item in items:
            uri = aio.resolve(store.namespace_uri(NS) + "/@" + item.key)
            v = np.asarray(th.store.get_vectors([uri])[0], dtype=np.float64)
            cosine = float(v @ qv / np.linalg.norm(v))
            assert item.score is not None and -1.0 - 1e-5 <= item.score <= 1.0 + 1e-5
            assert item.score == pytest.approx(cosine, abs=1e-4), item.key
    finally:
        th.close()
