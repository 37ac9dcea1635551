"""A conversation memory in a token-budgeted block (``add_messages`` + ``assemble_context``):
the budget is never exceeded, the ranked turns come before the turns their slots carry, turn
lines are compact (no label, no repeated day) and read in conversation order, and token counts
are reused across calls."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from treehop import Treehop
from treehop.context_assembly import (
    HeuristicCounter,
    assemble_context,
    default_token_counter,
)
from treehop.memory_context import TURN_KIND
from treehop.models import ChunkContext, ContextType, MatchedContext

from treehop_test_doubles import BagOfWordsEmbedder

CONV = "viking://~/memories/conversations/c1"
TOPICS = [
    "pottery workshop bowl",
    "Berlin marathon training",
    "adoption agency research",
    "camping trip mountains",
    "violin lessons weekly",
    "new puppy named Oscar",
]


@pytest.fixture(scope="module")
def client() -> Treehop:
    c = Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None)
    for s in range(3):
        msgs = []
        for t in range(12):
            topic = TOPICS[(s * 12 + t) % len(TOPICS)]
            who = "Ann" if t % 2 == 0 else "Bob"
            msgs.append({"speaker": who, "content": f"Session {s} turn {t}: about the {topic}."})
        c.add_messages(
            msgs,
            conversation_id="c1",
            session_id=f"s{s}",
            session_time=f"2024-03-0{s + 1}T10:00:00Z",
        )
    return c


@pytest.mark.parametrize("budget", [60, 120, 250, 500, 1000])
def test_block_fits_and_holds_the_best_turn(client: Treehop, budget: int) -> None:
    counter = default_token_counter()
    res = client.find("violin lessons", target_uri=CONV)
    out = client.assemble_context(res, max_tokens=budget)
    assert counter.count(out.text) <= budget
    assert out.tokens == counter.count(out.text)
    top = res.memories[0]
    said = top.content.split(") ", 1)[1]  # "Ann: Session ..." without its day
    assert said in out.text
    assert len(set(out.uris)) == len(out.uris)


def test_turn_lines_are_compact_and_in_conversation_order(client: Treehop) -> None:
    out = client.assemble_context("violin lessons", max_tokens=1000, target_uri=CONV)
    blocks = out.text.split("\n\n")
    assert len(blocks) >= 2
    for block in blocks:
        header, *lines = block.split("\n")
        m = re.fullmatch(r"\[c1/s\d, (\d) March 2024 10:00\]", header)
        assert m, header
        # the day is in the header once, not in every line; no turn labels
        assert all(line.startswith(("- Ann: ", "- Bob: ")) for line in lines), lines
        turns = [int(re.search(r"turn (\d+):", line).group(1)) for line in lines]
        assert turns == sorted(turns)
        assert {re.search(r"Session (\d)", x).group(1) for x in lines} == {str(int(m.group(1)) - 1)}
    # every section is a turn of the conversation, and it says which
    assert all(u.startswith(CONV + "/s") for u in out.uris)


def test_slots_are_packed_whole_best_first(client: Treehop) -> None:
    res = client.find("violin lessons", target_uri=CONV, limit=4)
    slots = res.memories
    assert len(slots) >= 2 and all(s.collapsed for s in slots)
    slot_of = {s.uri: i for i, s in enumerate(slots)}
    slot_of |= {c.uri: i for i, s in enumerate(slots) for c in s.collapsed}
    big = assemble_context(res, max_tokens=1000)
    order = [slot_of[s.uri] for s in big.sections]
    assert order == sorted(order)  # the best slot's turns first, then the next slot's
    firsts = [big.sections[order.index(i)].uri for i in sorted(set(order))]
    assert firsts == [slots[i].uri for i in sorted(set(order))]  # each slot led by its hit
    # a budget that holds the first slot but not the second's hit: the first slot is whole
    one = assemble_context(res.memories[:1], max_tokens=1000)
    small = assemble_context(res, max_tokens=one.tokens + 3)
    assert small.uris[: len(one.uris)] == one.uris
    assert slots[1].uri not in small.uris  # a turn line is more than 3 tokens


def test_a_different_day_stays_on_the_line() -> None:
    base = f"{CONV}/s9"
    head = MatchedContext(
        uri=f"{base}/turn-00001",
        context_type=ContextType.MEMORY,
        is_leaf=True,
        abstract="",
        content="(1 March 2024) Bob: it was great",
        score=0.9,
        metadata={"kind": TURN_KIND, "timestamp": 1709287200.0},  # 2024-03-01 10:00 UTC
        collapsed=[
            ChunkContext(
                uri=f"{base}/turn-00002",
                score=0.2,
                content="(2 March 2024) Ann: next morning",
                position=1,
                carried=True,
            ),
            ChunkContext(
                uri=f"{base}/turn-00000",
                score=0.5,
                content="(1 March 2024) Ann: how was it?",
                position=-1,
                carried=True,
            ),
        ],
    )
    out = assemble_context([head], max_tokens=200)
    assert out.text.split("\n")[1:] == [
        "- Ann: how was it?",
        "- Bob: it was great",
        "- (2 March 2024) Ann: next morning",
    ]


class CountingCounter(HeuristicCounter):
    def __init__(self) -> None:
        self.calls = 0

    def count(self, text: str) -> int:
        self.calls += 1
        return super().count(text)


def test_token_counts_are_reused_across_calls(client: Treehop) -> None:
    res = client.find("marathon training", target_uri=CONV)
    counter = CountingCounter()
    first = assemble_context(res, max_tokens=300, token_counter=counter)
    n_first = counter.calls
    second = assemble_context(res, max_tokens=300, token_counter=counter)
    assert second.text == first.text and second.uris == first.uris
    assert counter.calls - n_first == 1  # only the finished block is counted again
    assert n_first > 5


TEXT = st.text(alphabet=st.sampled_from("ab cd,.é日 "), max_size=60)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    slots=st.lists(
        st.tuples(TEXT, st.lists(st.tuples(TEXT, st.booleans()), max_size=6)), max_size=6
    ),
    budget=st.integers(1, 300),
)
def test_memory_blocks_never_exceed_the_budget(
    slots: list[tuple[str, list[tuple[str, bool]]]], budget: int
) -> None:
    hits = []
    n = 0
    for i, (text, around) in enumerate(slots):
        base = f"{CONV}/s{i % 2}"
        n += 1
        head_uri = f"{base}/turn-{n:05d}"
        collapsed = []
        for j, (t, carried) in enumerate(around):
            n += 1
            collapsed.append(
                ChunkContext(
                    uri=f"{base}/turn-{n:05d}",
                    score=0.1 * j,
                    content=f"(1 March 2024) Ann: {t}",
                    position=j + 1,
                    carried=carried,
                )
            )
        hits.append(
            MatchedContext(
                uri=head_uri,
                context_type=ContextType.MEMORY,
                is_leaf=True,
                abstract="",
                content=f"(1 March 2024) Bob: {text}",
                score=1.0 - 0.1 * i,
                metadata={"kind": TURN_KIND, "timestamp": 1709287200.0},
                collapsed=collapsed,
            )
        )
    for counter in (default_token_counter(), HeuristicCounter()):
        out = assemble_context(hits, max_tokens=budget, token_counter=counter)
        assert counter.count(out.text) <= budget
        assert len(set(out.uris)) == len(out.uris)
        # slot by slot: a slot's turns all come before the next slot's, its hit first
        slot_of = {h.uri: i for i, h in enumerate(hits)}
        slot_of |= {c.uri: i for i, h in enumerate(hits) for c in h.collapsed}
        order = [slot_of[u] for u in out.uris]
        assert order == sorted(order)
