"""Test doubles shared by the test suites (a uniquely named module, importable from any
test directory: ``from treehop_test_doubles import BagOfWordsEmbedder``)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from treehop.embedders.base import BaseEmbedder, normalize_rows

SAMPLE_TREE = Path(__file__).resolve().parents[1] / "retrieval" / "treehop" / "sample_tree"
_WORD = re.compile(r"[\w-]+")


class BagOfWordsEmbedder(BaseEmbedder):
    name = "test-bag-of-words-64"
    dimension = 64

    def __init__(self) -> None:
        self.calls = 0
        self.texts_embedded = 0

    def _word_vec(self, word: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.md5(word.encode()).digest()[:4], "little")
        return np.random.default_rng(seed).standard_normal(self.dimension)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        self.texts_embedded += len(texts)
        out = np.zeros((len(texts), self.dimension))
        for i, t in enumerate(texts):
            for w in _WORD.findall(t.lower()):
                out[i] += self._word_vec(w)
        return normalize_rows(out, len(texts), self.dimension)
