"""The keyword tagger above a memory session (helper tagcounts).

What an ``add_messages`` append re-tags with the default keyword tagger: the session (its
label counts are kept per session: ``tests/test_memory_tagcount.py``) and, on an index of at
most ``retag_all_below`` nodes, every node (``TreeWriter.finish`` re-tags it whole). The
directories above the session are re-tagged only by that whole re-tag, whose batch holds
every stored node: there the tagger skips reading a directory's stored children's tags when
all of them are in the batch (``tagging.ingest._all_children_fresh``: their URIs alone),
since the read would leave every one out. These tests hold the tags written to the path
that reads them (the shortcut switched off): random sequences of appends, new sessions and
conversations, removals of turns, sessions and conversations, files added to a folder, on
an index re-tagged whole and on one past ``retag_all_below``; a reopened client; batches
that leave some children out (the read must happen there); stores without the URI read."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from treehop import Treehop
from treehop.tagging import ingest
from treehop.tagging.base import NodeTags
from treehop.tagging.ingest import IngestTagger

from treehop_test_doubles import BagOfWordsEmbedder

CONVS = "viking://~/memories/conversations"
WORDS = ["guitar", "camping", "recipe", "chess", "marathon", "bakery", "camera", "violin"]
DAY = 1_700_000_000.0


def _msgs(i: int, n: int) -> list[dict[str, Any]]:
    return [
        {
            "role": "user" if j % 2 == 0 else "assistant",
            "content": f"We talked about {WORDS[(i + j) % 8]} and {WORDS[(3 * i + j) % 8]} "
            f"then {WORDS[(5 * i + 2 * j) % 8]} again",
        }
        for j in range(n)
    ]


@contextlib.contextmanager
def full_read() -> Iterator[list[int]]:
    """The tagger without the shortcut (every directory's stored children read, as before);
    yields how often the shortcut was asked (0: it was off)."""
    orig = ingest._all_children_fresh
    asked = [0]

    def never(*a: Any) -> bool:
        asked[0] += 1
        return False

    ingest._all_children_fresh = never  # type: ignore[assignment]
    try:
        yield asked
    finally:
        ingest._all_children_fresh = orig


def client(path: Path, retag_all_below: int) -> Treehop:
    return Treehop(
        path, embedder=BagOfWordsEmbedder(), tagger="auto", retag_all_below=retag_all_below
    )


def every_tag(c: Treehop) -> dict[str, list[str]]:
    return {n.uri: list(n.tags) for n in c.store.iter_nodes()}


def apply(c: Treehop, op: tuple[Any, ...], src: Path) -> None:
    kind = op[0]
    if kind == "append":
        _, conv, sess, i, n = op
        c.add_messages(
            _msgs(i, n), conversation_id=f"c{conv}", session_id=f"s{sess}", session_time=DAY
        )
    elif kind == "remove":
        _, what, conv, sess, turn = op
        uri = f"{CONVS}/c{conv}"
        if what != "conversation":
            uri += f"/s{sess}"
        if what == "turn":
            uri += f"/turn-{turn:05d}"
        with contextlib.suppress(Exception):  # (nothing there: a no-op, the same in both)
            c.remove(uri)
    elif kind == "file":
        _, i = op
        p = src / f"f{i}.md"
        p.write_text(f"# Note {i}\n\n{' '.join(WORDS[i % 8 :] + WORDS[: i % 3])}\n", "utf-8")
        c.add_resource(p, target_uri=f"viking://resources/folder/f{i}.md")


ops = st.lists(
    st.one_of(
        st.tuples(
            st.just("append"),
            st.integers(0, 2),
            st.integers(0, 2),
            st.integers(0, 50),
            st.integers(1, 3),
        ),
        st.tuples(
            st.just("remove"),
            st.sampled_from(["turn", "session", "conversation"]),
            st.integers(0, 2),
            st.integers(0, 2),
            st.integers(0, 4),
        ),
        st.tuples(st.just("file"), st.integers(0, 6)),
    ),
    min_size=1,
    max_size=10,
)


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(seq=ops, retag_all_below=st.sampled_from([0, 1000]))
def test_random_writes_tag_as_the_full_read(
    seq: list[tuple[Any, ...]], retag_all_below: int
) -> None:
    """Every stored node's tags after each call equal those of the same calls with every
    directory's children read."""
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        (root / "a").mkdir()
        (root / "b").mkdir()
        fast, slow = client(root / "fast", retag_all_below), client(root / "slow", retag_all_below)
        try:
            for op in seq:
                apply(fast, op, root / "a")
                with full_read():
                    apply(slow, op, root / "b")
                assert every_tag(fast) == every_tag(slow), op
        finally:
            fast.close()
            slow.close()


def test_whole_retag_reads_no_stored_children(tmp_path: Path) -> None:
    """On an index re-tagged whole the append reads no directory's children for the tagger
    but the session's (its batch holds the session and its new turn only), and the tags
    equal the full read's. Fails with the shortcut removed (one read per directory)."""
    c = client(tmp_path / "idx", 1000)
    try:
        for i in range(12):
            c.add_messages(_msgs(i, 2), conversation_id="c1", session_id=f"s{i}", session_time=DAY)
        read: list[str] = []
        orig = ingest._stored_auto_labels

        def spy(store: Any, uri: str, fresh: Any) -> Any:
            read.append(uri)
            return orig(store, uri, fresh)

        ingest._stored_auto_labels = spy
        try:
            c.add_messages(_msgs(99, 1), conversation_id="c1", session_id="s11", session_time=DAY)
        finally:
            ingest._stored_auto_labels = orig
        assert read == [c.aio.resolve(f"{CONVS}/c1/s11")]
        tags = every_tag(c)
        c.aio.writer.retag_sync(None, False)  # (the store's own whole re-tag, shortcut off)
        with full_read() as asked:
            c.aio.writer.retag_sync(None, False)
        assert asked[0] > 0
        assert every_tag(c) == tags
    finally:
        c.close()


def test_reopened_client_tags_as_the_full_read(tmp_path: Path) -> None:
    """A client reopened on the index (nothing kept in memory) writes the same tags."""
    for name, ctx in (("fast", contextlib.nullcontext), ("slow", full_read)):
        c = client(tmp_path / name, 1000)
        try:
            with ctx():
                for i in range(6):
                    c.add_messages(_msgs(i, 2), conversation_id=f"c{i % 2}", session_time=DAY)
        finally:
            c.close()
        c = client(tmp_path / name, 1000)
        try:
            with ctx():
                c.remove(f"{CONVS}/c0/session-0001")
                c.add_messages(_msgs(50, 3), conversation_id="c0", session_time=DAY)
        finally:
            c.close()
    fast, slow = client(tmp_path / "fast", 1000), client(tmp_path / "slow", 1000)
    try:
        assert every_tag(fast) == every_tag(slow)
    finally:
        fast.close()
        slow.close()


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_partial_batches_read_what_they_leave_out(data: st.DataObject) -> None:
    """``tag_nodes`` of any subset of the stored nodes (some directories' children left out
    of the batch: they must be read) gives the full read's tags, node for node."""
    with tempfile.TemporaryDirectory() as d:
        c = client(Path(d) / "idx", 0)
        try:
            for i in range(8):
                c.add_messages(_msgs(i, 1 + i % 3), conversation_id=f"c{i % 3}", session_time=DAY)
            nodes = sorted(c.store.iter_nodes(), key=lambda n: n.uri)
            keep = data.draw(st.lists(st.booleans(), min_size=len(nodes), max_size=len(nodes)))
            batch = [n for n, k in zip(nodes, keep, strict=True) if k]
            tagger = c.aio.writer.tagger
            assert isinstance(tagger, IngestTagger)
            got = tagger.tag_nodes(batch, c.store, new_texts=[])
            with full_read():
                want = tagger.tag_nodes(batch, c.store, new_texts=[])
            assert {u: (t.auto, t.own_labels) for u, t in got.items()} == {
                u: (t.auto, t.own_labels) for u, t in want.items()
            }
        finally:
            c.close()


def test_store_without_uri_read_reads_children(tmp_path: Path) -> None:
    """A store without ``child_uris`` or ``children_fields`` (another engine; the writer's
    children cache) is read as before: the shortcut answers False."""

    class Bare:
        def children_fields(self, uri: str, fields: Any) -> list[Any]:
            return []

    class NoFields:
        children_fields = None

        def child_uris(self, uri: str) -> list[str]:
            return []

    assert not ingest._all_children_fresh(Bare(), "viking://x", {})  # type: ignore[arg-type]
    assert not ingest._all_children_fresh(NoFields(), "viking://x", {})  # type: ignore[arg-type]


@pytest.mark.parametrize("retag_all_below", [0, 1000])
def test_new_child_outside_the_batch_is_read(tmp_path: Path, retag_all_below: int) -> None:
    """A directory with a stored child the batch lacks: the shortcut says False."""
    c = client(tmp_path / "idx", retag_all_below)
    try:
        c.add_messages(_msgs(1, 2), conversation_id="c1", session_id="s1", session_time=DAY)
        c.add_messages(_msgs(2, 2), conversation_id="c1", session_id="s2", session_time=DAY)
        conv = c.aio.resolve(f"{CONVS}/c1")
        kids = [n for n in c.store.iter_nodes() if n.parent_uri == conv]
        assert len(kids) == 2
        fresh = {kids[0].uri: NodeTags(auto=[], own_labels=[])}
        assert not ingest._all_children_fresh(c.store, conv, fresh)
        fresh[kids[1].uri] = NodeTags(auto=[], own_labels=[])
        assert ingest._all_children_fresh(c.store, conv, fresh)
    finally:
        c.close()
