"""The keyword tagger's labels counted per append (helper tagcount): with the default tagger,
``add_messages`` keeps each session's label counts (:class:`treehop.memory._KeptLabels`, a
:class:`~treehop.tagging.ingest.LabelCounts` and the family stamp it was counted at) and
ranks the session node's automatic tags from them and the new turns, instead of reading every
turn's tags. These tests hold it to two oracles: the path that reads every turn (main's; by
stores without the family reads) and :meth:`KeywordTagger.aggregate` over every stored
child's tags (an independent Python implementation of the ranking). And they change the
session's children behind the kept counts every way a client can (a removed turn, tags
rewritten beneath the writer, ``set_tags``, ``retag``, another client, a reopened client, an
index small enough to be re-tagged whole) to show that a stale count is never used."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from treehop import Treehop
from treehop import memory as mem
from treehop.ingest.summaries import humanize
from treehop.models import ContextType, Node
from treehop.stores.embedded import EmbeddedStore
from treehop.tagging.ingest import IngestTagger, LabelCounts, aggregate_many, stored_label_lists
from treehop.tagging.keywords import KeywordTagger

from treehop_test_doubles import BagOfWordsEmbedder

CONVS = "viking://~/memories/conversations"
WORDS = [
    "guitar",
    "camping",
    "recipe",
    "chess",
    "marathon",
    "bakery",
    "camera",
    "concert",
    "garden",
    "violin",
]


# --------------------------------------------------------------------------- the ranking
def fitted_tagger(limit: int) -> KeywordTagger:
    """A keyword tagger whose document frequencies differ between labels (so that ties on
    the children count are broken by them, then by name)."""
    t = KeywordTagger(max_dir_tags=limit)
    t.fit([" ".join(WORDS[: 1 + i % len(WORDS)]) + " filler text" for i in range(25)])
    return t


label = st.sampled_from([*WORDS, "zeta", "alpha-beta", "x1"])
children = st.lists(st.lists(label, max_size=5), max_size=12)


@settings(max_examples=300, deadline=None)
@given(
    stored=children,
    batch=children,
    own=st.lists(label, max_size=3),
    limit=st.integers(0, 6),
)
def test_counted_children_rank_as_their_label_lists(
    stored: list[list[str]], batch: list[list[str]], own: list[str], limit: int
) -> None:
    """``aggregate_many`` of a batch with the rest of the children counted
    (:meth:`LabelCounts.rankable`) gives, label for label, what it gives over every child's
    label list and what ``KeywordTagger.aggregate_labels`` gives (few labels: ties on the
    count are the rule here)."""
    t = fitted_tagger(limit)
    table = LabelCounts.of(stored)
    got = aggregate_many(t, [batch], [own], [table.rankable(batch, own, limit)])
    assert got == aggregate_many(t, [[*stored, *batch]], [own])
    want = t.aggregate_labels([list(dict.fromkeys(x)) for x in [*stored, *batch]], own)
    assert got == [want]
    # a table built in steps counts what one built at once counts
    half = len(stored) // 2
    assert LabelCounts.of(stored[:half]).plus(stored[half:]).as_dict() == table.as_dict()


tag = st.sampled_from(
    [
        "auto:guitar",
        "auto:chess",
        "auto:x1",
        "user:guitar",
        "inherit:chess",
        "auto:Guitar",
        "auto:guitar ",
        "auto: chess",
        "AUTO:chess",
        "auto:a b",
        "auto:zeta",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(tag, max_size=6), max_size=10))
def test_a_table_of_stored_tags_counts_what_the_tagger_reads(tags: list[list[str]]) -> None:
    """:meth:`LabelCounts.of_tags` (a tally of the distinct tags where all are normal) counts
    what the tagger's read of the same children gives (:func:`stored_label_lists`, a label
    once a child), tags the tagger did not write (upper case, spaces, two spellings of one
    label in a child) included."""
    want = LabelCounts.of(stored_label_lists(tags)).as_dict()
    assert LabelCounts.of_tags(tags).as_dict() == want


def test_rankable_keeps_every_label_tied_at_the_last_place() -> None:
    """The last place's count is shared by several labels: all of them are handed on (their
    order is the document frequencies' and the names', which only the ranking knows)."""
    table = LabelCounts.of([["a", "b", "c"], ["a", "b", "c"], ["a", "d"], ["e"]])
    assert table.rankable([], [], 2) == {"a": 3, "b": 2, "c": 2}
    assert table.rankable([["d"]], [], 2) == {"a": 3, "b": 2, "c": 2, "d": 1}
    assert table.rankable([], ["a"], 3) == {"b": 2, "c": 2}
    assert table.rankable([], [], 0) == {}


# --------------------------------------------------------------------------- the store
def _node(uri: str, tags: Sequence[str] = ()) -> Node:
    return Node(
        uri=uri,
        parent_uri=uri.rsplit("/", 1)[0],
        context_type=ContextType.RESOURCE,
        level=2,
        is_leaf=True,
        abstract=uri,
        content=uri,
        tags=list(tags),
    )


def test_family_since_stamps_every_change_and_returns_the_new_rows(tmp_path: Path) -> None:
    s = EmbeddedStore(tmp_path / "idx")
    d = "viking://resources/d"
    vec = np.ones((1, 4), np.float32)
    s.upsert([_node(f"{d}/{i}", [f"auto:w{i}"]) for i in range(3)], np.repeat(vec, 3, 0))
    s.upsert([_node("viking://resources/other/x")], vec)
    s.save()
    stamp, rows = s.family_since(d, -1, ("uri", "tags"))
    assert stamp[1] == 3 and [r["uri"] for r in rows] == [f"{d}/{i}" for i in range(3)]
    assert s.family_since(d, stamp[2], ("uri",)) == (stamp, [])
    s.update_tags({f"{d}/1": ["auto:new"]})  # a rewrite: same count, a newer row
    after, rows = s.family_since(d, stamp[2], ("tags",))
    assert after[1] == stamp[1] and after[2] > stamp[2] and rows == [{"tags": ["auto:new"]}]
    s.delete([f"{d}/0"])
    gone, _ = s.family_since(d, -1, ())
    assert gone[1] == 2
    s.upsert([_node("viking://resources/other/y")], vec)  # another family: no change here
    assert s.family_since(d, -1, ())[0] == gone
    s.close()


def test_a_compaction_moves_the_stamp_s_epoch(tmp_path: Path) -> None:
    """Compacting renumbers the rows: the stamp's epoch moves, so that no count kept under
    the old numbering is taken for the new one."""
    s = EmbeddedStore(tmp_path / "idx")
    d = "viking://resources/d"
    n = 1100
    s.upsert([_node(f"{d}/{i}") for i in range(n)], np.ones((n, 4), np.float32))
    s.save()
    before, _ = s.family_since(d, -1, ())
    s.delete([f"{d}/{i}" for i in range(n - 5)])  # more dead rows than live ones: compacted
    s.save()
    after, rows = s.family_since(d, -1, ("uri",))
    assert after[0] == before[0] + 1 and after[1] == 5 == len(rows)
    s.close()


# --------------------------------------------------------------------------- add_messages
@contextlib.contextmanager
def reading_path() -> Iterator[None]:
    """``add_messages`` as on main: no store has the family reads, so every call reads the
    session's turns and the tagger reads every turn's tags."""
    saved = mem._family_state
    mem._family_state = lambda store: None
    try:
        yield
    finally:
        mem._family_state = saved


def stored(c: Treehop) -> dict[str, tuple[Any, ...]]:
    """Every stored node: what a write decides (texts, metadata, tags in order)."""
    return {
        n.uri: (n.parent_uri, n.level, n.abstract, n.overview, n.content, n.metadata, n.tags)
        for n in c.store.iter_nodes()
    }


def check_session_tags(c: Treehop, session_uri: str) -> None:
    """The session's ``auto:`` tags, right after this client appended to it, are what
    ``KeywordTagger.aggregate`` ranks from every stored child's ``auto:`` tags and the
    session's own name, with the statistics as they are now (the append's tagging was the
    last change to them)."""
    tagging = c.aio.writer.tagger
    assert isinstance(tagging, IngestTagger)
    t = tagging._get(c.store)
    n = c.store.get([c.aio.resolve(session_uri)])[0]
    assert n is not None
    kids = c.store.children(n.uri)
    name = humanize(n.uri.rsplit("/", 1)[-1])
    own = t.extract_many([name])[0] if name else []
    want = t.aggregate([[x for x in k.tags if x.startswith("auto:")] for k in kids], own)
    assert [x for x in n.tags if x.startswith("auto:")] == [f"auto:{x}" for x in want]


def msgs(n: int, start: int = 0, speaker: str = "Ann") -> list[dict[str, Any]]:
    return [
        {
            "speaker": speaker if i % 2 else "Bob",
            "content": f"{WORDS[i % len(WORDS)]} and {WORDS[(3 * i + 1) % len(WORDS)]} {i}.",
            "timestamp": 60 * i,
        }
        for i in range(start, start + n)
    ]


def _open(path: Path, retag_all_below: int = 0) -> Treehop:
    return Treehop(path, embedder=BagOfWordsEmbedder(), retag_all_below=retag_all_below)


def _session(c: Treehop, s: str = "s") -> str:
    return c.aio.resolve(f"{CONVS}/c/{s}")


def _kept(c: Treehop, s: str = "s") -> mem._KeptLabels | None:
    kept = mem._kept(c.store, create=False)
    tail = kept.get(_session(c, s)) if kept is not None else None
    return tail.labels if tail is not None else None


def _embedded(c: Treehop) -> EmbeddedStore:
    assert isinstance(c.store, EmbeddedStore)
    return c.store


def _path(c: Treehop) -> Path:
    path = _embedded(c).path
    assert path is not None
    return path


def counting_tag_reads(c: Treehop) -> list[int]:
    """How many children the tagger's read (``children_fields``) returned from now on."""
    seen = [0]
    store = _embedded(c)
    orig = store.children_fields

    def fields(uri: str, names: Sequence[str]) -> list[dict[str, Any]]:
        out = orig(uri, names)
        seen[0] += len(out)
        return out

    store.children_fields = fields  # type: ignore[method-assign,assignment]
    return seen


def test_an_append_reads_no_turn_s_tags_and_tags_as_main(tmp_path: Path) -> None:
    fast, slow = _open(tmp_path / "a"), _open(tmp_path / "b")
    fast.add_messages(msgs(300), conversation_id="c", session_id="s")
    with reading_path():
        slow.add_messages(msgs(300), conversation_id="c", session_id="s")
    read = counting_tag_reads(fast)
    for i in range(6):
        fast.add_messages(msgs(1 + i % 2, 300 + 2 * i), conversation_id="c", session_id="s")
        with reading_path():
            slow.add_messages(msgs(1 + i % 2, 300 + 2 * i), conversation_id="c", session_id="s")
        check_session_tags(fast, f"{CONVS}/c/s")
    assert read[0] == 0  # no child's tags read by the tagger: the counts stood for them
    kept = _kept(fast)
    assert kept is not None and kept.stamp[1] == 309
    assert stored(fast) == stored(slow)
    fast.close()
    slow.close()


def _rewrite_a_turn_s_tags(c: Treehop) -> None:
    """A turn's ``auto:`` tags replaced beneath the writer: the session node, the row count
    and the last turn are as the append left them; only the turn's row is newer."""
    uri = f"{_session(c)}/turn-00002"
    node = c.store.get([uri])[0]
    assert node is not None
    c.store.update_tags({uri: ["auto:zebra", "auto:guitar", *node.tags[:1]]})
    c.store.save()


@pytest.mark.parametrize(
    "change",
    [
        "raw_tags",
        "remove",
        "set_tags_turn",
        "set_tags_session",
        "retag",
        "other_client",
        "reopen",
        "reopen_collected",
        "whole_retag",
    ],
)
def test_a_stale_count_is_never_used(tmp_path: Path, change: str) -> None:
    """Whatever changed the session's children since the last append, the next append tags
    the session as main does. With the stamp check left out, ``raw_tags``,
    ``set_tags_session`` and ``retag`` fail; the others are caught by the tail's own checks
    (a removal, another client) or leave every label as it was (``set_tags`` on a turn
    here), or keep nothing (a re-tag of the whole index); a reopen in this process finds
    the same live store (``EmbeddedStore.shared``)."""
    fast, slow = _open(tmp_path / "a", 40), _open(tmp_path / "b", 40)
    for c, ctx in ((fast, contextlib.nullcontext()), (slow, reading_path())):
        with ctx:
            c.add_messages(msgs(60), conversation_id="c", session_id="s")
            c.add_messages(msgs(2, 60), conversation_id="c", session_id="s")
    assert _kept(fast) is not None  # (past 40 nodes: the counts are kept)
    for c in (fast, slow):
        if change == "raw_tags":
            _rewrite_a_turn_s_tags(c)
        elif change == "remove":
            c.remove(f"{CONVS}/c/s/turn-00005")
        elif change == "set_tags_turn":
            c.set_tags(f"{CONVS}/c/s/turn-00007", add="pinned")
        elif change == "set_tags_session":
            c.set_tags(f"{CONVS}/c/s", add="trip")
        elif change == "retag":
            c.retag(f"{CONVS}/c")
        elif change == "other_client":
            other = _open(_path(c))
            other.add_messages(msgs(2, 62, "Zed"), conversation_id="c", session_id="s")
            other.close()
        elif change == "whole_retag":  # the next write re-tags the index whole (a small one)
            c.aio.writer.retag_all_below = 10**6
    if change.startswith("reopen"):
        fast.close()
        slow.close()
        if change == "reopen_collected":  # (a fresh store object: no tail, no counts kept)
            del fast, slow
            gc.collect()
        fast, slow = _open(tmp_path / "a", 40), _open(tmp_path / "b", 40)
        assert (_kept(fast) is None) == (change == "reopen_collected")
    for i in range(3):
        fast.add_messages(msgs(1 + i % 2, 70 + 2 * i), conversation_id="c", session_id="s")
        with reading_path():
            slow.add_messages(msgs(1 + i % 2, 70 + 2 * i), conversation_id="c", session_id="s")
        assert stored(fast) == stored(slow)
        check_session_tags(fast, f"{CONVS}/c/s")
        if change == "whole_retag" and i == 0:
            assert _kept(fast) is None  # (re-tagged whole: nothing kept)
            for c in (fast, slow):
                c.aio.writer.retag_all_below = 40
    fast.close()
    slow.close()


def test_the_raw_tag_rewrite_changes_the_session_s_tags(tmp_path: Path) -> None:
    """The ``raw_tags`` case above is not vacuous: with the rewritten turn's labels counted
    as kept (the stamp check off), the next append ranks ``zebra`` lower than main."""
    c = _open(tmp_path / "a")
    c.add_messages(msgs(30), conversation_id="c", session_id="s")
    c.add_messages(msgs(1, 30), conversation_id="c", session_id="s")
    kept = _kept(c)
    assert kept is not None
    for i in range(12):  # zebra on 12 turns: more than any other label
        uri = f"{_session(c)}/turn-{i:05d}"
        node = c.store.get([uri])[0]
        assert node is not None
        c.store.update_tags({uri: ["auto:zebra", *node.tags]})
    c.store.save()
    c.add_messages(msgs(1, 31), conversation_id="c", session_id="s")
    node = c.store.get([_session(c)])[0]
    assert node is not None and node.tags[0] == "auto:zebra"
    check_session_tags(c, f"{CONVS}/c/s")
    c.close()


Op = tuple[Any, ...]
where = st.sampled_from(["s1", "s1", "s2"])
ops = st.lists(
    st.one_of(
        st.tuples(st.just("add"), where, st.integers(1, 3)),
        st.tuples(st.just("add"), where, st.integers(15, 30)),
        st.tuples(st.just("remove"), where, st.integers(0, 60)),
        st.tuples(st.just("raw_tags"), where, st.integers(0, 60)),
        st.tuples(st.just("set_tags"), where, st.integers(0, 60)),
        st.tuples(st.just("other_client"), where, st.integers(1, 2)),
        st.tuples(st.just("reopen")),
    ),
    min_size=1,
    max_size=12,
)


def _step(c: Treehop, op: Op, at: int) -> Any:
    kind = op[0]
    if kind == "add":
        res = c.add_messages(msgs(op[2], at), conversation_id="c", session_id=op[1])
        return res.turn_uris
    if kind == "other_client":
        other = _open(_path(c), c.aio.writer.retag_all_below)
        try:
            res = other.add_messages(msgs(op[2], at, "Zed"), conversation_id="c", session_id=op[1])
        finally:
            other.close()
        return res.turn_uris
    uri = _session(c, op[1])
    turns = sorted(k.uri for k in c.store.children(uri)) if c.store.get([uri])[0] else []
    if not turns:
        return None
    victim = turns[op[2] % len(turns)]
    if kind == "remove":
        return c.remove(victim)
    if kind == "set_tags":
        return c.set_tags(victim, add=f"t{op[2] % 3}")
    # a third of the turns retagged beneath the writer: ``zebra`` would lead the session
    c.store.update_tags(
        {u: ["auto:zebra", f"auto:{WORDS[op[2] % 4]}"] for u in turns[op[2] % 3 :: 3]}
    )
    c.store.save()
    return None


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(seq=ops, retag_all_below=st.sampled_from([0, 30]))
def test_any_sequence_of_calls_tags_as_main(
    tmp_path_factory: pytest.TempPathFactory, seq: list[Op], retag_all_below: int
) -> None:
    root = tmp_path_factory.mktemp("seq")
    fast, slow = _open(root / "a", retag_all_below), _open(root / "b", retag_all_below)
    try:
        for at, op in enumerate(seq):
            if op[0] == "reopen":
                fast.close()
                slow.close()
                fast, slow = _open(root / "a", retag_all_below), _open(root / "b", retag_all_below)
                continue
            got = _step(fast, op, 100 * at)
            with reading_path():
                want = _step(slow, op, 100 * at)
            assert got == want
            assert stored(fast) == stored(slow)
            if op[0] == "add":
                check_session_tags(fast, f"{CONVS}/c/{op[1]}")
    finally:
        fast.close()
        slow.close()


def test_a_stored_child_at_a_new_turn_s_uri_is_not_counted(tmp_path: Path) -> None:
    """A node stored beneath the writer at the URI the next append's second turn takes (not
    a turn: the turn numbering skips it) is replaced by that append, and the tagger leaves the
    child it replaces out of the count; the kept counts, which hold its labels, are not used."""
    fast, slow = _open(tmp_path / "a"), _open(tmp_path / "b")
    for c, ctx in ((fast, contextlib.nullcontext()), (slow, reading_path())):
        with ctx:
            c.add_messages(msgs(3), conversation_id="c", session_id="s")
            s = _session(c)
            foreign = Node(
                uri=f"{s}/turn-00005",
                parent_uri=s,
                context_type=ContextType.MEMORY,
                level=2,
                is_leaf=True,
                abstract="zebra",
                content="zebra",
                tags=["auto:zebra", "auto:okapi"],
                metadata={"kind": "note"},
            )
            dim = c.aio.embedder.dimension or 1
            c.store.upsert([foreign], np.ones((1, dim), np.float32))
            c.store.save()
            c.add_messages(msgs(1, 3), conversation_id="c", session_id="s")  # turn-00003
            c.add_messages(msgs(2, 4), conversation_id="c", session_id="s")  # 00004, 00005
    node = fast.store.get([_session(fast)])[0]
    assert node is not None and "auto:zebra" not in node.tags
    assert stored(fast) == stored(slow)
    check_session_tags(fast, f"{CONVS}/c/s")
    fast.close()
    slow.close()


def test_rows_rewritten_while_the_append_writes_are_counted_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another writer rewrites the session's turns between the append's write and its count
    (emulated: their tags replaced right after the write, in the same generation). The rows
    newer than the kept stamp are then not all new children (old ones died): the counts are
    counted again from every child, not brought forward (which would count the rewritten
    turns' old labels and new ones both)."""
    c = _open(tmp_path / "a")
    c.add_messages(msgs(30), conversation_id="c", session_id="s")
    c.add_messages(msgs(1, 30), conversation_id="c", session_id="s")
    s = _session(c)
    old_turns = [f"{s}/turn-{i:05d}" for i in range(31)]
    write = mem.write_nodes

    async def racing(client: Any, nodes: Sequence[Node], **kw: Any) -> int:
        n = await write(client, nodes, **kw)
        client.store.update_tags({u: ["auto:zebra"] for u in old_turns})
        return n

    monkeypatch.setattr(mem, "write_nodes", racing)
    c.add_messages(msgs(1, 31), conversation_id="c", session_id="s")
    monkeypatch.undo()
    c.store.save()
    kept = _kept(c)
    assert kept is not None and kept.counts.as_dict()["zebra"] == 31
    c.add_messages(msgs(1, 32), conversation_id="c", session_id="s")
    check_session_tags(c, f"{CONVS}/c/s")
    c.close()
