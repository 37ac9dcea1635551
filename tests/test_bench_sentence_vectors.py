"""The window-cutting and max-pooling of ``bench/bench_sentence_vectors.py`` (the screen of a
leaf scored by its best sentence window) on hand-made text and vectors: no model."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import bench_sentence_vectors as sv


def test_a_leaf_no_longer_than_a_window_has_no_windows() -> None:
    assert sv.sentence_windows("One short leaf. Two sentences.", 300) == []


def test_windows_start_at_every_sentence_and_stay_within_the_size() -> None:
    text = " ".join(f"Sentence {k} says a thing about topic {k} here." for k in range(20))
    windows = sv.sentence_windows(text, 120)
    assert windows and all(len(w) <= 120 for w in windows)
    for k in range(19):  # (the last one may be too short alone, joined to none)
        assert any(w.startswith(f"Sentence {k} ") for w in windows)


@settings(max_examples=80, deadline=None)
@given(st.text(alphabet="ab .?!\n-1", max_size=600), st.integers(min_value=20, max_value=200))
def test_any_text_gives_bounded_windows_of_its_own_words(text: str, size: int) -> None:
    windows = sv.sentence_windows(text, size)
    words = set(text.split())
    for w in windows:
        assert len(w) <= size
        assert set(w.split()) <= words


class _Flat:
    def __init__(self, texts: list[str]) -> None:
        self.texts = texts
        self.matrix = np.eye(3, dtype=np.float32)[: len(texts)]


class _Embedder:
    """Each window's vector: the unit axis named by the digit in its text."""

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), 3), dtype=np.float32)
        for i, t in enumerate(texts):
            out[i, int(next(ch for ch in t if ch.isdigit()))] = 1.0
        return out


def test_each_leaf_takes_its_best_window_and_a_leaf_without_windows_none() -> None:
    long_a = (
        "Axis 1 sentence here, long enough to stand. " * 3
        + "Axis 2 sentence, long enough to stand alone."
    )
    flat = _Flat([long_a, "short 0"])
    wi = sv.WindowIndex(flat, _Embedder(), 80)  # type: ignore[arg-type]
    best = wi.best(np.array([0.0, 0.0, 1.0], dtype=np.float32))
    assert best[0] == 1.0  # the leaf's axis-2 window, though most of it is axis 1
    assert best[1] == -np.inf
