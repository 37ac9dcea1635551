"""Helper fewdocs: a find over fewer documents than its limit builds only the slots it returns.

``Collected.ranked`` cut every candidate into passage slots and then kept the first ``limit``
of ``filled_slots`` (stop 51's ``few_document_passages``); over one long file the descent
collects every chunk (thousands), and the cut read every chunk's node to return ten slots.
``filled_top`` builds each document's slots one at a time and stops once the limit is filled.

Helper windows folded the two cuts into one (``_window_slots``: ``passage_groups`` takes all
of its slots, ``filled_top`` the first few), so the library no longer holds a second cut to
compare with: these tests hold both callers to a reference cut written here
(:func:`_reference_cut`, the rule as ``passage_groups`` states it, spelled out plainly: every
run computed up front, the best chunk left found by a scan), on generated candidates (gaps
and repeats in the chunk indexes, passage marks with and without a recorded start,
headings, ties, a document's own node, documents that are not chunks, documents of more
chunks than the cut orders in Python); ``filled_top`` is compared with the whole reference
cut filled (``filled_slots``), and with ``descent.FILLED_TOP`` off on generated one-file
trees end to end.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from treehop import Treehop
from treehop import descent as dm
from treehop.config import RetrievalConfig
from treehop.descent import (
    Candidate,
    Collected,
    Score,
    Track,
    filled_slots,
    filled_top,
    passage_groups,
    same_passage,
)
from treehop.ingest.records import add_records
from treehop.models import ContextType, FoundBy, Node

from treehop_test_doubles import BagOfWordsEmbedder, chunk_candidate


def _node_candidate(uri: str, score: float, leaf: bool) -> Candidate:
    """A candidate that is not a chunk: a whole file (``leaf``) or a chunked file's own
    node (not a leaf: it joins its document's first slot)."""
    node = Node(
        uri=uri,
        parent_uri="viking://resources",
        context_type=ContextType.RESOURCE,
        level=1,
        is_leaf=leaf,
        content=f"all of {uri}",
    )
    return Candidate(node, Score(score), Score(score), score, FoundBy.GLOBAL)


def _reference_cut(
    chunks: list[Candidate],
    budget: int,
    join: bool,
    grow: Callable[[Candidate], float] | None,
) -> list[list[Candidate]]:
    """One document's chunks (best first) cut into slots by the rule as written in
    ``passage_groups`` / ``_window_slots``' docstrings, plainly: chunks in chunk order (ties
    in rank order); a run is a stretch of consecutive chunk indexes of one passage
    (``same_passage``), numbered up front; the best chunk not in a slot opens the next slot,
    which takes a neighbour while the text (2 chars per join) fits ``budget`` and the
    neighbour's run is one of the slot's, or (``join``) it is right beside the slot, in the
    run of the best chunk still left (found by a scan), under the same heading path; of two
    such sides the one higher on ``grow`` where both are finite and differ, else the
    better-ranked. Each slot lists its chunks best first."""
    rank = {id(c): r for r, c in enumerate(chunks)}
    ordered = sorted(chunks, key=lambda c: c.chunk_index)
    n = len(ordered)
    run = [0] * n
    for i in range(1, n):
        a, b = ordered[i - 1], ordered[i]
        same = b.chunk_index - a.chunk_index == 1 and same_passage(a, b)
        run[i] = run[i - 1] if same else run[i - 1] + 1
    heading = [c.node.metadata.get("heading_path") for c in ordered]
    by_rank = sorted(range(n), key=lambda i: rank[id(ordered[i])])
    taken: set[int] = set()
    slots: list[list[Candidate]] = []
    for opener in by_rank:
        if opener in taken:
            continue
        taken.add(opener)
        members = [opener]
        chars = len(ordered[opener].node.content)
        while True:
            left = [i for i in by_rank if i not in taken]
            best = left[0] if left else None
            lo, hi = min(members), max(members)
            runs = {run[m] for m in members}
            sides = []
            for j, end in ((lo - 1, lo), (hi + 1, hi)):
                if j < 0 or j >= n or j in taken:
                    continue
                if chars + 2 + len(ordered[j].node.content) > budget:
                    continue
                across = (
                    join
                    and best is not None
                    and run[j] == run[best]
                    and abs(ordered[j].chunk_index - ordered[end].chunk_index) == 1
                    and heading[j] == heading[end]
                )
                if run[j] in runs or across:
                    sides.append(j)
            if not sides:
                break
            pick = min(sides, key=lambda j: rank[id(ordered[j])])
            if grow is not None and len(sides) == 2:
                keys = [grow(ordered[j]) for j in sides]
                if all(math.isfinite(x) for x in keys) and keys[0] != keys[1]:
                    pick = sides[0] if keys[0] > keys[1] else sides[1]
            taken.add(pick)
            members.append(pick)
            chars += 2 + len(ordered[pick].node.content)
        slots.append(sorted((ordered[m] for m in members), key=lambda c: rank[id(c)]))
    return slots


def _reference_groups(
    items: list[Candidate],
    budget: int,
    join: bool,
    grow: Callable[[Candidate], float] | None,
) -> list[list[Candidate]]:
    """``passage_groups`` over :func:`_reference_cut`: each document's chunks cut on their
    own, the document's own node joined to its first slot, any other node a slot of its own,
    the slots in rank order of their best candidate."""
    rank = {id(c): r for r, c in enumerate(items)}
    groups: list[list[Candidate]] = []
    for doc in dict.fromkeys(c.document for c in items):
        members = [c for c in items if c.document == doc]
        chunks = [c for c in members if c.chunk_index is not None and c.uri != doc]
        others = [c for c in members if c.chunk_index is None or c.uri == doc]
        slots = _reference_cut(chunks, budget, join, grow) if chunks else []
        if slots and others and others[0].uri == doc:
            slots[0] = sorted([*slots[0], others.pop(0)], key=lambda c: rank[id(c)])
        groups += slots + [[c] for c in others]
    return sorted(groups, key=lambda g: rank[id(g[0])])


@st.composite
def _candidates(draw: Any) -> list[Candidate]:
    """One to four chunked documents (chunk indexes with gaps, passages with and without a
    recorded start, two heading paths, texts of 5-400 chars, scores from a few values:
    ties) plus, maybe, a chunked document's own node and whole files."""
    scores = st.sampled_from([0.1, 0.2, 0.3, 0.35, 0.5, 0.5, 0.7, 0.9])
    out: list[Candidate] = []
    for d in range(draw(st.integers(1, 4))):
        doc = f"viking://resources/doc{d}.md"
        if draw(st.integers(0, 4)) == 0:  # (past _NUMPY_SORT_ABOVE: numpy orders the chunks)
            n = draw(st.integers(dm._NUMPY_SORT_ABOVE + 1, 2 * dm._NUMPY_SORT_ABOVE))
        else:
            n = draw(st.integers(1, 40))
        top = int(1.5 * n)
        indexes = sorted(draw(st.sets(st.integers(0, top), min_size=n, max_size=n)))
        if draw(st.integers(0, 5)) == 0:  # (a chunk index twice: the sort keeps rank order)
            indexes[-1] = indexes[0]
            indexes.sort()
        recorded = draw(st.booleans())
        start = 0
        for i in indexes:
            if draw(st.integers(0, 3)) == 0:
                start = i
            meta: dict[str, Any] = {"heading_path": [["A"], ["A", "B"]][draw(st.integers(0, 1))]}
            if recorded:
                meta["passage_start"] = start
            size = draw(st.integers(5, 400))
            out.append(chunk_candidate(doc, i, draw(scores), content="x" * size, **meta))
        if draw(st.booleans()):
            out.append(_node_candidate(doc, draw(scores), leaf=False))
    for f in range(draw(st.integers(0, 2))):
        out.append(_node_candidate(f"viking://resources/file{f}.txt", draw(scores), leaf=True))
    random.Random(draw(st.integers(0, 10**6))).shuffle(out)
    return out


def _ids(groups: list[list[Candidate]]) -> list[list[int]]:
    return [[id(c) for c in g] for g in groups]


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    _candidates(),
    st.integers(1, 30),
    st.sampled_from([0, 100, 500, 2000, 3000]),
    st.booleans(),
    st.booleans(),
)
def test_the_cut_and_filled_top_equal_the_reference_cut(
    cands: list[Candidate], extra: int, budget: int, join: bool, by_own: bool
) -> None:
    """``passage_groups`` is the reference cut, and ``filled_top`` the first ``k`` groups of
    the whole reference cut filled, object for object, for every ``k`` above the number of
    documents (``filled_slots``' case), each grow rule and budget."""
    items = sorted(cands, key=lambda c: c.final.vec, reverse=True)  # (stable: ties kept)
    docs = len({c.document for c in items})
    k = docs + extra
    grow = (lambda c: c.own.vec) if by_own else None
    reference = _reference_groups(items, budget, join, grow)
    assert _ids(passage_groups(items, budget, join, grow)) == _ids(reference)
    whole = filled_slots(reference, k)[:k]
    assert _ids(filled_top(items, k, budget, join, grow)) == _ids(whole)


@settings(max_examples=100, deadline=None, derandomize=True)
@given(_candidates(), st.integers(1, 20), st.booleans())
def test_ranked_builds_the_top_only_when_asked_for_the_fill(
    cands: list[Candidate], extra: int, join: bool
) -> None:
    """``Collected.ranked(top=fill)`` returns the whole ranking's first ``fill`` groups;
    ``top=None`` (a store that may hold turns reads further) still returns every group."""
    docs = len({c.document for c in cands})
    fill = docs + extra
    coll = Collected(collapse=True, budget=2000, passages=False, join_adjacent=join, fill=fill)
    for c in cands:
        coll.add(c, Track.VECTOR)
    whole = coll.ranked(Track.VECTOR)
    assert _ids(coll.ranked(Track.VECTOR, None, fill)) == _ids(whole[:fill])
    dm.FILLED_TOP = False
    try:
        assert _ids(coll.ranked(Track.VECTOR, None, fill)) == _ids(whole)
    finally:
        dm.FILLED_TOP = True


def test_filled_top_reads_only_the_nodes_its_slots_reach() -> None:
    """Why it is faster: of 2,000 chunks of one file, the ten slots of 2,000 chars read
    the nodes of the chunks they hold and border, not all of them (the whole cut reads
    every chunk's text and passage mark)."""
    cands = [
        chunk_candidate(
            "viking://resources/book.md", i, 1.0 / (1 + (i * 7919) % 2000), content="y" * 300
        )
        for i in range(2000)
    ]
    loads = 0

    def counted(c: Candidate) -> Candidate:
        node = c.node

        def load(at: Any) -> list[Node]:
            nonlocal loads
            loads += 1
            return [node]

        return Candidate.deferred_at(
            c.uri, c.parent_uri, c.chunk_index, c.is_leaf, load, 0, c.own, c.final, 0.0, c.found_by
        )

    items = sorted((counted(c) for c in cands), key=lambda c: c.final.vec, reverse=True)
    top = filled_top(items, 10, 2000)
    assert len(top) == 10 and all(len(g) == 6 for g in top)
    assert loads < 200


def _entries(rng: random.Random, n: int) -> str:
    """A markdown text of ``n`` sections (headings at two depths), each a few paragraphs of
    words from a small vocabulary (so a query matches many sections)."""
    words = [
        "alpha",
        "beta",
        "gamma",
        "delta",
        "fixture",
        "scope",
        "config",
        "logging",
        "request",
        "context",
        "plugin",
    ]
    parts = []
    for i in range(n):
        level = "#" if i % 5 == 0 else "##"
        parts.append(f"{level} {rng.choice(words)} {rng.choice(words)} {i}\n")
        for _ in range(rng.randint(1, 4)):
            parts.append(" ".join(rng.choice(words) for _ in range(rng.randint(5, 60))) + "\n")
    return "\n".join(parts)


def _signature(res: Any) -> list[tuple[Any, ...]]:
    """What a caller gets: each slot's URI, score, shown text and collapsed chunks."""
    return [
        (m.uri, m.score, m.slot_text, [(x.uri, x.score, x.content) for x in m.collapsed])
        for m in res.resources
    ]


@settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    st.integers(0, 10**6),
    st.integers(1, 2),
    st.integers(20, 120),
    st.sampled_from([3, 10, 25]),
    st.sampled_from([200, 400]),
)
def test_finds_over_few_files_equal_the_whole_cut(
    tmp_path_factory: Any, seed: int, files: int, sections: int, limit: int, chunk_chars: int
) -> None:
    """Generated trees of one or two long files, topical queries (keywords, headings: one
    slot per document, filled with passages): every result, its score, its shown text and
    its collapsed chunks equal with ``FILLED_TOP`` on and off, and in ``find_many``."""
    rng = random.Random(seed)
    path = tmp_path_factory.mktemp("few") / "idx"
    c = Treehop(
        path,
        embedder=BagOfWordsEmbedder(),
        tagger=None,
        chunk_chars=chunk_chars,
        config=RetrievalConfig(),
    )
    try:
        add_records(c, [(_entries(rng, sections), {"source": f"f{i}.md"}) for i in range(files)])
        queries = ["fixture scope", "logging config", "alpha", "request context plugin"]
        many = c.find_many(queries, limit=limit)  # (the batch's phases, filled_top on)
        for query, batched in zip(queries, many, strict=True):
            on = c.find(query, limit=limit)
            dm.FILLED_TOP = False
            try:
                off = c.find(query, limit=limit)
            finally:
                dm.FILLED_TOP = True
            assert _signature(on) == _signature(off) == _signature(batched)
    finally:
        c.close()
