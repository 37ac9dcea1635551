"""A memory hit carries its exchange (``treehop.memory_context``): neighbouring turns in the
hit's slot, within the character budget, the better side first, hits already carried merged
into one slot; documents, notes and facts untouched."""

from __future__ import annotations

from pathlib import Path

import pytest

from treehop import Treehop
from treehop.descent import Candidate, Score
from treehop.errors import InvalidQueryError
from treehop.memory_context import (
    build_slots,
    carries_context,
    gather_slots,
    plan_slots,
    session_turns,
)
from treehop.models import ChunkContext, ContextType, FoundBy, MatchedContext, Node
from treehop.stores.base import ScoredNode

from treehop_test_doubles import BagOfWordsEmbedder

S = "viking://user/u/memories/chat/s1"


def turn(i: int, text: str = "", kind: str | None = "turn", parent: str = S) -> Node:
    return Node(
        uri=f"{parent}/turn-{i:05d}",
        parent_uri=parent,
        context_type=ContextType.MEMORY,
        level=2,
        is_leaf=True,
        content=text or f"A: message number {i}",
        metadata={"kind": kind} if kind else {},
    )


def scored(node: Node, score: float, matches: bool = True) -> ScoredNode:
    return ScoredNode(node, score, score, matches=matches)


def group(node: Node, score: float) -> list[Candidate]:
    return [Candidate(node, Score(score), Score(score), score, FoundBy.GLOBAL)]


def names(slot_turns: list[ChunkContext]) -> list[str]:
    return [c.uri.rsplit("/", 1)[-1] for c in slot_turns]


def session(scores: list[float], text_len: int = 20) -> list[Node]:
    return [turn(i, f"A: {'x' * (text_len - 3)}") for i in range(len(scores))]


def test_neighbours_grow_on_the_better_side_within_the_budget() -> None:
    scores = [0.1, 0.2, 0.9, 0.5, 0.0, 0.3]
    nodes = session(scores)  # every turn 20 characters (+1 for its line break)
    sessions = session_turns([scored(n, s) for n, s in zip(nodes, scores, strict=True)])
    # 20 (hit) + 3 x 21 = 83 <= 90 < 104: three neighbours fit.
    slots = build_slots([group(nodes[2], 0.9)], sessions, budget=90, limit=10)
    ctx = slots[0].context()
    # +1 (0.5) beats -1 (0.2); then -1 (0.2) beats +2 (0.0); then -2 (0.1) beats +2 (0.0).
    assert names(ctx) == ["turn-00000", "turn-00001", "turn-00003"]
    assert [c.position for c in ctx] == [-2, -1, 1]
    assert all(c.carried for c in ctx)
    assert sum(len(c.content) + 1 for c in ctx) + len(nodes[2].content) <= 90


def test_a_tie_takes_the_earlier_turn_and_the_hit_alone_when_nothing_fits() -> None:
    nodes = session([0.5, 0.9, 0.5])
    sessions = session_turns([scored(n, s) for n, s in zip(nodes, [0.5, 0.9, 0.5], strict=True)])
    slots = build_slots([group(nodes[1], 0.9)], sessions, budget=41, limit=10)
    assert names(slots[0].context()) == ["turn-00000"]
    # a budget the hit alone fills: no context, and budget 0 switches it off
    assert build_slots([group(nodes[1], 0.9)], sessions, budget=20, limit=10)[0].turns == []
    assert build_slots([group(nodes[1], 0.9)], sessions, budget=0, limit=10)[0].turns == []


def test_a_listed_neighbour_merges_into_the_slot_and_the_next_hit_moves_up() -> None:
    other = "viking://user/u/memories/chat/s2"
    nodes = session([0.2, 0.9, 0.8, 0.1])
    far = turn(0, "B: something else entirely", parent=other)
    scores = [0.2, 0.9, 0.8, 0.1]
    sessions = session_turns(
        [scored(n, s) for n, s in zip(nodes, scores, strict=True)] + [scored(far, 0.5)]
    )
    groups = [group(nodes[1], 0.9), group(nodes[2], 0.8), group(far, 0.5)]
    slots = build_slots(groups, sessions, budget=42, limit=2)
    assert [s.group[0].node.uri for s in slots] == [nodes[1].uri, far.uri]
    ctx = slots[0].context()
    assert names(ctx) == ["turn-00002"]
    assert ctx[0].carried is False  # a ranked hit, merged: not context only
    # without context every group takes its own slot
    plain = build_slots(groups, sessions, budget=0, limit=2)
    assert [s.group[0].node.uri for s in plain] == [nodes[1].uri, nodes[2].uri]


def test_a_turn_is_in_one_slot_only_and_filtered_turns_end_a_side() -> None:
    scores = [0.3, 0.9, 0.1, 0.2, 0.8, 0.4]
    nodes = session(scores)
    hidden = {0}
    sessions = session_turns(
        [scored(n, s, i not in hidden) for i, (n, s) in enumerate(zip(nodes, scores, strict=True))]
    )
    groups = [group(nodes[1], 0.9), group(nodes[4], 0.8)]
    slots = build_slots(groups, sessions, budget=62, limit=10)  # room for two neighbours
    first, second = (names(s.context()) for s in slots)
    # turn 0 is excluded by the query's filter: the first slot grows forward only, and the
    # second slot cannot take turn 3 back from it
    assert first == ["turn-00002", "turn-00003"]
    assert second == ["turn-00005"]


def test_documents_notes_and_facts_carry_no_context() -> None:
    doc = Node(
        uri="viking://resources/docs/a.md",
        parent_uri="viking://resources/docs",
        context_type=ContextType.RESOURCE,
        level=2,
        is_leaf=True,
        content="a document",
    )
    chunk = turn(3).model_copy(update={"chunk_index": 0})
    assert not carries_context(doc)
    assert not carries_context(chunk)
    assert not carries_context(turn(1, kind="note")) and not carries_context(turn(1, kind="fact"))
    assert carries_context(turn(1))
    # a memory file (a user's preferences) is a document of its own, not a turn
    assert not carries_context(turn(1, kind="text")) and not carries_context(turn(1, kind=None))
    # a turn's neighbours are of its own kind: a fact between turns ends that side
    nodes = [turn(0), turn(1), turn(2, kind="fact")]
    sessions = session_turns([scored(n, 0.5) for n in nodes])
    assert [h.node.uri for h in sessions[S]] == [nodes[0].uri, nodes[1].uri]
    slots = build_slots([group(nodes[1], 0.9)], sessions, budget=500, limit=10)
    assert names(slots[0].context()) == ["turn-00000"]


def test_slot_text_reads_the_exchange_in_order() -> None:
    m = MatchedContext(
        uri=f"{S}/turn-00001",
        context_type=ContextType.MEMORY,
        is_leaf=True,
        abstract="",
        score=1.0,
        content="Bob: yes, last Saturday!",
        collapsed=[
            ChunkContext(uri=f"{S}/turn-00002", score=0.1, content="Ann: nice", position=1),
            ChunkContext(uri=f"{S}/turn-00000", score=0.5, content="Ann: did you go?", position=-1),
        ],
    )
    assert m.slot_text == "Ann: did you go?\nBob: yes, last Saturday!\nAnn: nice"
    doc = m.model_copy(update={"collapsed": [ChunkContext(uri="x#1", score=0.2, content="c")]})
    assert doc.slot_text == doc.text  # a document's collapsed chunks are not an exchange


@pytest.fixture
def client() -> Treehop:
    c = Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None)
    c.add_messages(
        [
            {"speaker": "Ann", "content": "Did you go to the pottery workshop?"},
            {"speaker": "Bob", "content": "Yes, last Saturday, it was great."},
            {"speaker": "Ann", "content": "What did you make there?"},
            {"speaker": "Bob", "content": "A bowl for my mother."},
            {"speaker": "Ann", "content": "I am training for the Berlin marathon."},
        ],
        conversation_id="c1",
        session_id="s1",
        session_time="2024-03-01T10:00:00Z",
    )
    c.remember("Ann likes pottery and ceramics workshops", name="pottery", speaker="Ann")
    return c


def test_find_returns_a_turn_with_its_exchange(client: Treehop) -> None:
    res = client.find("pottery workshop", target_uri="viking://~/memories/conversations", limit=3)
    top = res.memories[0]
    assert top.uri.endswith("turn-00000")
    assert [c.position for c in top.collapsed] == [1, 2, 3, 4]  # the whole session fits
    assert top.slot_text.splitlines()[1] == "(1 March 2024) Bob: Yes, last Saturday, it was great."
    assert len(top.slot_text) <= client.config.memory_context_chars
    # every turn of the session is in this one slot: no second slot repeats one
    assert len(res.memories) == 1
    client.config.memory_context_chars = 0
    alone = client.find("pottery workshop", target_uri="viking://~/memories/conversations")
    assert all(not m.collapsed for m in alone.memories) and len(alone.memories) > 1


def test_notes_and_documents_are_unaffected(client: Treehop, tmp_path: Path) -> None:
    res = client.find("pottery workshops", target_uri="viking://~/memories/notes")
    assert res.memories and all(not m.collapsed for m in res.memories)
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(4):
        (docs / f"page-{i}.md").write_text(f"# Page {i}\n\nPottery workshop notes, part {i}.\n")
    client.add_resource(str(docs), target_uri="viking://resources/docs")
    found = client.find("pottery workshop", target_uri="viking://resources/docs", limit=4)
    assert len(found.resources) == 4  # one slot per page, no page carried by another
    assert all(not m.collapsed and m.slot_text == m.text for m in found.resources)


def test_langchain_and_llamaindex_show_the_exchange(client: Treehop) -> None:
    from langchain_treehop import context_to_document
    from llama_index.retrievers.treehop.nodes import to_node_with_score

    top = client.find("pottery workshop", target_uri="viking://~/memories/conversations").memories[
        0
    ]
    assert context_to_document(top).page_content == top.slot_text
    assert to_node_with_score(top).node.get_content() == top.slot_text
    assert "A bowl for my mother." in top.slot_text


def test_plan_slots_asks_for_the_first_session_it_lacks() -> None:
    other = "viking://user/u/memories/chat/s2"
    a, b = turn(0), turn(0, parent=other)
    groups = [group(a, 0.9), group(b, 0.8)]
    sessions = session_turns([scored(a, 0.9)])
    slots, missing = plan_slots(groups, sessions, budget=500, limit=10)
    assert missing == other and [s.group[0].node.uri for s in slots] == [a.uri, b.uri]
    slots, missing = plan_slots(groups, {**sessions, other: []}, budget=500, limit=10)
    assert missing is None and len(slots) == 2
    # without context there is nothing to fetch
    assert plan_slots(groups, {}, budget=0, limit=10)[1] is None


def test_dated_text_puts_the_day_in_the_turn_text() -> None:
    c = Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None)
    msgs = [{"speaker": "Ann", "content": "We adopted a puppy."}]
    c.add_messages(
        msgs,
        conversation_id="c",
        session_id="s",
        session_time="2023-05-08T13:56:00Z",
        dated_text=False,
    )
    c.add_messages(
        [{"speaker": "Bob", "content": "What is its name?"}],
        conversation_id="c",
        session_id="s",
        session_time="2023-05-08T14:00:00Z",
    )
    base = "viking://~/memories/conversations/c/s"
    assert c.read(f"{base}/turn-00000") == "Ann: We adopted a puppy."
    assert c.read(f"{base}/turn-00001") == "(8 May 2023) Bob: What is its name?"
    # the session's overview reads the turns back without their dates
    assert c.stat(base).overview == "- Ann: We adopted a puppy.\n- Bob: What is its name?"
    hit = c.find("puppy name in May 2023", target_uri=base, limit=1).memories[0]
    assert "(8 May 2023) Bob: What is its name?" in hit.slot_text


@pytest.mark.parametrize("bad", ["no", 0, None])
def test_dated_text_must_be_a_bool_and_nothing_is_written(bad: object) -> None:
    c = Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None)
    with pytest.raises(InvalidQueryError, match="dated_text"):
        c.add_messages(
            [{"speaker": "Ann", "content": "hello"}],
            conversation_id="c",
            session_id="s",
            dated_text=bad,  # type: ignore[arg-type]
        )
    assert len(c.store) == 0


def test_explain_says_a_slot_carries_turns() -> None:
    from treehop.cli._render import tree_effect_lines
    from treehop.models import QueryResult, TypedQuery

    m = MatchedContext(
        uri=f"{S}/turn-00001",
        context_type=ContextType.MEMORY,
        is_leaf=True,
        abstract="",
        score=1.0,
        content="Bob: yes",
        collapsed=[
            ChunkContext(
                uri=f"{S}/turn-00000", score=0.5, content="Ann: ?", position=-1, carried=True
            ),
            ChunkContext(uri=f"{S}/turn-00002", score=0.9, content="Ann: !", position=1),
        ],
    )
    qr = QueryResult(query=TypedQuery(query="q"), matched_contexts=[m])
    (line,) = tree_effect_lines(qr, str)
    assert "carries 2 neighbouring turns (1 of them hits merged into this slot)" in line


def test_gather_slots_scores_only_the_sessions_the_slots_reach() -> None:
    import asyncio

    parents = [f"viking://user/u/memories/chat/s{i}" for i in range(4)]
    nodes = {p: [turn(j, parent=p) for j in range(3)] for p in parents}
    asked: list[tuple[str, ...]] = []

    async def search(wanted: tuple[str, ...]) -> list[ScoredNode]:
        asked.append(wanted)
        return [scored(n, 0.5) for p in wanted for n in nodes[p]]

    # the best hits lie in s0 (two of them) and s1; s2 and s3 only further down
    groups = [
        group(nodes[parents[0]][1], 0.9),
        group(nodes[parents[0]][0], 0.8),
        group(nodes[parents[1]][1], 0.7),
        group(nodes[parents[2]][1], 0.6),
        group(nodes[parents[3]][1], 0.5),
    ]
    slots = asyncio.run(gather_slots(groups, 500, 2, search))
    # s0's turn 0 merges into the first slot, so the second slot is s1's
    assert [s.group[0].node.parent_uri for s in slots] == parents[:2]
    assert names(slots[0].context()) == ["turn-00000", "turn-00002"]
    # first the sessions of the first `limit` groups (both s0), then, when the slots run past
    # them, those of the next groups; no session twice, s3 (never reached) never scored
    assert asked[0] == (parents[0],)
    assert parents[1] in asked[1]
    flat = [p for a in asked for p in a]
    assert len(flat) == len(set(flat)) and parents[3] not in flat


def test_gather_slots_reads_known_sessions_instead_of_scoring_them() -> None:
    import asyncio

    parents = [f"viking://user/u/memories/chat/s{i}" for i in range(3)]
    nodes = {p: [turn(j, parent=p) for j in range(4)] for p in parents}
    scores = {n.uri: 0.1 * (j % 3) for p in parents for j, n in enumerate(nodes[p])}
    asked: list[tuple[str, ...]] = []

    async def search(wanted: tuple[str, ...]) -> list[ScoredNode]:
        asked.append(wanted)
        return [scored(n, scores[n.uri]) for p in wanted for n in nodes[p]]

    groups = [group(nodes[p][1], 0.9 - 0.1 * i) for i, p in enumerate(parents)]
    plain = asyncio.run(gather_slots(groups, 45, 3, search))
    assert asked == [tuple(parents)]
    # the tree context scored s0 and s1 whole (s1 in reverse order, as a search may return)
    known = {p: [scored(n, scores[n.uri]) for n in nodes[p]] for p in parents[:2]}
    known[parents[1]].reverse()
    asked.clear()
    reused = asyncio.run(gather_slots(groups, 45, 3, search, known))
    assert asked == [(parents[2],)]
    assert [s.context() for s in reused] == [s.context() for s in plain]
    assert all(s.turns for s in reused)
    # every session known: no search at all
    asked.clear()
    known[parents[2]] = [scored(n, scores[n.uri]) for n in nodes[parents[2]]]
    again = asyncio.run(gather_slots(groups, 45, 3, search, known))
    assert asked == [] and [s.context() for s in again] == [s.context() for s in plain]
