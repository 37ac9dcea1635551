"""Helpers for the LlamaIndex integration tests: offline models and sample-tree loading.

Everything is deterministic and offline. ``WordHashEmbedding`` is a LlamaIndex
``BaseEmbedding`` (so every test also exercises :class:`LlamaIndexEmbedder`): each word maps to
a fixed random direction, so texts sharing words are close. ``Settings.llm`` and
``Settings.embed_model`` are replaced by mocks for every test, because LlamaIndex's defaults
call OpenAI and nothing here may reach the network.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import time
from pathlib import Path
from typing import Any

import numpy as np
from llama_index.core.base.embeddings.base import BaseEmbedding
from pydantic import PrivateAttr

from treehop import Treehop

SAMPLE_TREE = Path(__file__).resolve().parents[2] / "retrieval" / "treehop" / "sample_tree"
_WORD = re.compile(r"[\w-]+")
DIM = 64


def word_vector(text: str) -> list[float]:
    out = np.zeros(DIM)
    for w in _WORD.findall(text.lower()):
        seed = int.from_bytes(hashlib.md5(w.encode()).digest()[:4], "little")
        out += np.random.default_rng(seed).standard_normal(DIM)
    # Deliberately not normalised: the adapter must normalise.
    return (out * 3.0).tolist()


class WordHashEmbedding(BaseEmbedding):
    """A deterministic LlamaIndex embedding model that counts sync and async calls."""

    _sync_calls: int = PrivateAttr(default=0)
    _async_calls: int = PrivateAttr(default=0)

    @classmethod
    def class_name(cls) -> str:
        return "WordHashEmbedding"

    @property
    def sync_calls(self) -> int:
        return self._sync_calls

    @property
    def async_calls(self) -> int:
        return self._async_calls

    def _get_query_embedding(self, query: str) -> list[float]:
        self._sync_calls += 1
        return word_vector(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        self._async_calls += 1
        return word_vector(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        self._sync_calls += 1
        return word_vector(text)

    async def _aget_text_embedding(self, text: str) -> list[float]:
        self._async_calls += 1
        return word_vector(text)


class SlowAsyncEmbedding(WordHashEmbedding):
    """Async queries *await* ``delay_s``; the sync query path blocks and can be forbidden."""

    delay_s: float = 0.3
    forbid_sync_query: bool = False

    def _get_query_embedding(self, query: str) -> list[float]:
        if self.forbid_sync_query:
            raise AssertionError("the sync embedding path was used from async code")
        time.sleep(self.delay_s)
        return super()._get_query_embedding(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        await asyncio.sleep(self.delay_s)
        return await super()._aget_query_embedding(query)


def load_sample_tree(client: Treehop) -> None:
    """Three resource subtrees (two tagged) and the memories of the sample tree."""
    res = SAMPLE_TREE / "resources"
    client.add_resource(res / "devops", target_uri="viking://resources", tags=["ops"])
    client.add_resource(res / "security", target_uri="viking://resources", tags=["security"])
    client.add_resource(res / "machine-learning", target_uri="viking://resources")
    client.add_resource(SAMPLE_TREE / "memories", target_uri="viking://~/memories")


#: Four short documents that all mention kubernetes, with metadata and tags to filter on.
FILTER_DOCS: list[dict[str, Any]] = [
    {
        "name": "rollout",
        "text": "kubernetes rollout of a deployment with readiness probes",
        "meta": {"year": 2020, "lang": "en", "topics": ["k8s", "ops"], "tags": ["ops"]},
    },
    {
        "name": "pager",
        "text": "kubernetes incident response and the pager rotation",
        "meta": {"year": 2022, "lang": "de", "topics": ["ops"], "tags": ["ops", "oncall"]},
    },
    {
        "name": "ingress",
        "text": "kubernetes ingress with tls certificates",
        "meta": {"year": 2024, "lang": "en", "topics": ["k8s", "security"], "tags": ["security"]},
    },
    {
        "name": "costs",
        "text": "kubernetes cost dashboards per namespace",
        "meta": {"year": 2023, "lang": "fr", "topics": ["finops"]},
    },
]
