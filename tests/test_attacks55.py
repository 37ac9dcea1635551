"""Adversarial pass attacks55: remote answers, stores, framework adapters.

Each test was written failing first (bench/README.md, "Adversarial pass (helper attacks55)").
"""

from __future__ import annotations

from pathlib import Path

import pytest

from treehop import Treehop
from treehop.errors import TreehopError

from treehop_test_doubles import BagOfWordsEmbedder

# An int no float can hold: ``float(BIG)`` and ``math.isfinite(BIG)`` raise OverflowError.
BIG = 10**400


@pytest.fixture
def client(tmp_path: Path) -> Treehop:
    t = Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder())
    t.add_resource("alpha beta gamma text here", target_uri="viking://resources/a.md")
    return t


@pytest.mark.parametrize("value", [BIG, -BIG], ids=["big", "-big"])
def test_a_time_past_float_range_is_a_typed_error(client: Treehop, value: int) -> None:
    calls = [
        lambda: client.find("alpha", since=value),
        lambda: client.find("alpha", until=value),
        lambda: client.assemble_context("alpha", since=value),
        lambda: client.remember("Ann likes tea", timestamp=value),
        lambda: client.add_messages(
            [{"role": "user", "content": "hi", "timestamp": value}], session_id="s1"
        ),
    ]
    for call in calls:
        with pytest.raises(TreehopError, match="finite"):
            call()
