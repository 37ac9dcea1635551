"""Checks every natural set's tests make of its dev / test halves (``bench_tree.sampled_halves``):
fixed, disjoint and whole, and stable when the FAQ gains a question (no question moves to the
other half: a half measured once stays the half it was)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import bench_tree as bt

Questions = Sequence[Any]


def halves_of(build: Callable[[], Any]) -> tuple[Questions, Questions, Questions]:
    """The set's questions and their two halves, checked: no question in both, none in
    neither, and the same halves when the set is built again."""
    first = build().questions
    dev, test = bt.sampled_halves(first, None)
    assert {q.qid for q in dev}.isdisjoint({q.qid for q in test})
    assert {q.qid for q in dev} | {q.qid for q in test} == {q.qid for q in first}
    assert (dev, test) == bt.sampled_halves(build().questions, None)
    return first, dev, test


def assert_halves_kept(
    build: Callable[[], Any], first: Questions, dev: Questions, test: Questions
) -> None:
    """After the test added one question to the package's FAQ: the set has one more, and every
    earlier question stays in its half."""
    again = build().questions
    assert len(again) == len(first) + 1
    dev2, test2 = bt.sampled_halves(again, None)
    assert {q.qid for q in dev} <= {q.qid for q in dev2}
    assert {q.qid for q in test} <= {q.qid for q in test2}
