"""``bench/bench_context_budget.py``: where a context block's tokens go (issue 33, round 14).

The accounting must add up to the block and must say, for an answer the ranking delivered
but the block does not hold, whether its slot was never reached or only part of it was
placed: the two causes ask for different fixes (fewer tokens above it, or a slot placed
whole), so a report that confused them would send the next round the wrong way.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import bench_context_budget as cb
import bench_natural as bn

ANSWER = " ".join(f"answer{i}" for i in range(40))
OTHER = " ".join(f"other{i}" for i in range(30))
FAR = " ".join(f"far{i}" for i in range(30))
HALF_A, HALF_B = " ".join(ANSWER.split()[:20]), " ".join(ANSWER.split()[20:])


class Words:
    name = "words"

    def count(self, text: str) -> int:
        return len(text.split())


@dataclass
class Chunk:
    uri: str
    content: str
    position: int | None = None


@dataclass
class Slot:
    uri: str
    content: str
    slot_text: str
    collapsed: list[Chunk] = field(default_factory=list)


@dataclass
class Found:
    slots: list[Slot]

    def contexts(self) -> list[Slot]:
        return self.slots


@dataclass
class Section:
    uri: str
    tier: str
    tokens: int
    excerpt: bool = False


@dataclass
class Block:
    text: str
    tokens: int
    sections: list[Section]


def test_find_block_parts_add_up_and_name_each_loss() -> None:
    counter = Words()
    # slot 0: the first answer, its hit and extension both placed
    a = Slot("d/a.md#chunk-1", HALF_A, ANSWER, [Chunk("d/a.md#chunk-2", HALF_B, 1)])
    # slot 1: a second answer's hit placed without the extension that holds the rest of it
    b = Slot("d/b.md#chunk-1", HALF_A.replace("answer", "b"), ANSWER.replace("answer", "b"))
    b.collapsed = [Chunk("d/b.md#chunk-2", HALF_B.replace("answer", "b"), 1)]
    # slot 2: another text; slot 3: a third answer the budget never reached
    c = Slot("d/c.md", OTHER, OTHER)
    d = Slot("d/d.md", ANSWER.replace("answer", "d"), ANSWER.replace("answer", "d"))
    text = "\n".join(
        ["[a]", f"- {HALF_A}", f"- {HALF_B}", "[b]", f"- {b.content}", "[c]", f"- {OTHER}"]
    )
    tokens = counter.count(text)
    secs = [
        Section(a.uri, "content", 1 + 21),
        Section("d/a.md#chunk-2", "content", 21),
        Section(b.uri, "content", 1 + 21),
        Section(c.uri, "content", 1 + 31),
    ]
    assert sum(s.tokens for s in secs) == tokens
    answers = [ANSWER, ANSWER.replace("answer", "b"), ANSWER.replace("answer", "d")]
    acc = cb.find_block_account(
        Found([a, b, c, d]), Block(text, tokens, secs), answers, bn.Judge(), counter, 200
    )
    assert acc["found"] == 1 / 3
    assert acc["in-slots"] == 1.0
    assert acc["docs"] == 3 and acc["pieces"] == 4
    assert acc["lost:partial"] == 1 and acc["lost:not-reached"] == 1
    assert "lost:excerpt" not in acc
    assert acc["unused"] == 200 - tokens
    parts = acc["answer"] + acc["other"] + acc["layout"] + acc["unused"]
    assert abs(parts - 200) < 1e-9
    assert acc["answer"] > 0 and acc["other"] > acc["answer"]  # b's half is not an answer


def test_flat_block_counts_pieces_judged_alone() -> None:
    counter = Words()
    acc = cb.flat_block_account([ANSWER, OTHER], [ANSWER, FAR], bn.Judge(), counter, 100)
    assert acc["found"] == 0.5
    assert acc["answer"] == 40 and acc["other"] == 30
    assert acc["pieces"] == 2 and acc["unused"] == 30
