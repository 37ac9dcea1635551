"""Helper fewdocs: a find over fewer documents than its limit builds only the slots it returns.

``Collected.ranked`` cut every candidate into passage slots and then kept the first ``limit``
of ``filled_slots`` (stop 51's ``few_document_passages``); over one long file the descent
collects every chunk (thousands), and the cut read every chunk's node to return ten slots.
``filled_top`` builds each document's slots one at a time and stops once the limit is filled.
These tests compare it with the whole cut (``descent.FILLED_TOP`` off): the same groups, the
same members in the same order, on generated candidates (gaps in the chunk indexes, passage
marks with and without a recorded start, headings, ties, a document's own node, documents
that are not chunks) and on generated one-file trees end to end.
"""

from __future__ import annotations

import random
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


@st.composite
def _candidates(draw: Any) -> list[Candidate]:
    """One to four chunked documents (chunk indexes with gaps, passages with and without a
    recorded start, two heading paths, texts of 5-400 chars, scores from a few values:
    ties) plus, maybe, a chunked document's own node and whole files."""
    scores = st.sampled_from([0.1, 0.2, 0.3, 0.35, 0.5, 0.5, 0.7, 0.9])
    out: list[Candidate] = []
    for d in range(draw(st.integers(1, 4))):
        doc = f"viking://resources/doc{d}.md"
        n = draw(st.integers(1, 40))
        indexes = sorted(draw(st.sets(st.integers(0, 60), min_size=n, max_size=n)))
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
def test_filled_top_is_the_first_k_of_every_slot_filled(
    cands: list[Candidate], extra: int, budget: int, join: bool, by_own: bool
) -> None:
    """The first ``k`` groups of the whole cut, object for object, for every ``k`` above the
    number of documents (``filled_slots``' case), each grow rule and budget."""
    items = sorted(cands, key=lambda c: c.final.vec, reverse=True)  # (stable: ties kept)
    docs = len({c.document for c in items})
    k = docs + extra
    grow = (lambda c: c.own.vec) if by_own else None
    whole = filled_slots(passage_groups(items, budget, join, grow), k)[:k]
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
