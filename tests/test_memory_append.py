"""Appending to a memory session without reading it (helper append): ``add_messages`` keeps a
per-session tail (:class:`treehop.memory._Tail`) and, while the store still holds the session
it describes, writes the next turns and the session node from it instead of reading every
turn. These tests hold it to the path that reads the session (the path of main, still taken
by stores without ``family_state`` and whenever the tail does not match): the same nodes
written, URI for URI, text for text, metadata for metadata, over the same calls."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from treehop import Treehop
from treehop import memory as mem
from treehop.ingest.summaries import OVERVIEW_CHARS, _clip, first_sentence
from treehop.memory import SESSION_ABSTRACT_TURNS, Turn
from treehop.models import Node
from treehop.timestamps import TIMESTAMP_FIELD, to_iso

from treehop_test_doubles import BagOfWordsEmbedder

CONVS = "viking://~/memories/conversations"


def main_session_node(
    conversation_id: str, session_id: str, turns: Sequence[Turn], summary: str | None
) -> tuple[str, str | None, dict[str, Any]]:
    """The session node's abstract, overview and metadata as main (db5191f) built them from
    every turn: its ``_session_node``, copied (the branch builds it from a record)."""
    start = min(t.timestamp for t in turns)
    end = max(t.timestamp for t in turns)
    speakers = list(dict.fromkeys(t.speaker for t in turns))
    first, last = to_iso(start)[:10], to_iso(end)[:10]
    day = first if first == last else f"{first} to {last}"
    header = f"Conversation {conversation_id}, {session_id} ({day}), {' and '.join(speakers)}"
    if summary:
        abstract = _clip(f"{header}: {summary}", 600)
    else:
        quoted = "; ".join(
            first_sentence(t.content) or t.content for t in turns[:SESSION_ABSTRACT_TURNS]
        )
        abstract = _clip(f"{header}: {quoted}", 600)
    overview = "\n".join(f"- {t.speaker}: {t.content}" for t in turns)
    if len(overview) > OVERVIEW_CHARS:
        overview = overview[: overview.rfind("\n", 0, OVERVIEW_CHARS) + 1].rstrip() or _clip(
            overview, OVERVIEW_CHARS
        )
    meta = {
        "name": session_id,
        "kind": "session",
        "conversation": conversation_id,
        "session": session_id,
        "speakers": speakers,
        "turns": len(turns),
        TIMESTAMP_FIELD: start,
        "timestamp_end": end,
        **({"summary": summary} if summary else {}),
    }
    return abstract, overview, meta


@contextlib.contextmanager
def reading_path() -> Iterator[None]:
    """``add_messages`` as on main: no store has the cheap family read, so every call reads
    the session's turns."""
    saved = mem._family_state
    mem._family_state = lambda store: None  # type: ignore[assignment]
    try:
        yield
    finally:
        mem._family_state = saved


def stored(c: Treehop) -> dict[str, tuple[Any, ...]]:
    """Every stored node under the memories: what a write decides (texts, metadata, tags).
    A fact's ``extracted_at`` (when the append it was extracted after was written: a clock
    reading, not a decision) is left out; that it is there is checked."""
    out = {}
    for n in c.store.iter_nodes():
        meta = dict(n.metadata)
        if meta.get("kind") == "fact":
            assert isinstance(meta.pop("extracted_at"), float)
        out[n.uri] = (
            n.parent_uri,
            n.level,
            n.is_leaf,
            n.abstract,
            n.overview,
            n.content,
            meta,
            sorted(n.tags),
        )
    return out


def check_sessions_as_main(c: Treehop, only: str | None = None) -> None:
    """Each session node written by ``add_messages`` (or ``only``, a display URI) equals
    main's, built from its turns."""
    for n in c.store.iter_nodes():
        if n.metadata.get("kind") != "session":
            continue
        if only is not None and n.uri != c.aio.resolve(only):
            continue
        kids = [k for k in c.store.children(n.uri) if k.metadata.get("kind") == "turn"]
        kids.sort(key=lambda k: mem._index_of(k.uri.rsplit("/", 1)[-1], "turn-"))
        turns = [mem._turn_of(k) for k in kids]
        want = main_session_node(
            n.metadata["conversation"], n.metadata["session"], turns, n.metadata.get("summary")
        )
        assert (n.abstract, n.overview, n.metadata) == want


class StubExtractor:
    """A deterministic extractor: the summary names the turn count, one fact a speaker."""

    async def extract(self, turns: Sequence[Turn]) -> tuple[str, list[str]]:
        return f"{len(turns)} turns.", [f"{t.speaker} spoke." for t in turns[:2]]


def counting_children(c: Treehop) -> list[int]:
    """How many nodes ``store.children`` returned from now on (a list of one count)."""
    seen = [0]
    orig = c.store.children

    def children(uri: str) -> list[Node]:
        out = orig(uri)
        seen[0] += len(out)
        return out

    c.store.children = children  # type: ignore[method-assign]
    return seen


def msgs(n: int, start: int = 0, speaker: str = "Ann") -> list[dict[str, Any]]:
    return [
        {"speaker": speaker if i % 2 else "Bob", "content": f"line {i}. more", "timestamp": 60 * i}
        for i in range(start, start + n)
    ]


def test_an_append_reads_no_turn_and_writes_what_main_writes(tmp_path: Path) -> None:
    fast = Treehop(tmp_path / "a", embedder=BagOfWordsEmbedder(), tagger=None)
    slow = Treehop(tmp_path / "b", embedder=BagOfWordsEmbedder(), tagger=None)
    fast.add_messages(msgs(300), conversation_id="c", session_id="s")
    with reading_path():
        slow.add_messages(msgs(300), conversation_id="c", session_id="s")
    read = counting_children(fast)
    for i in range(5):
        fast.add_messages(msgs(1 + i % 2, 300 + 2 * i), conversation_id="c", session_id="s")
        with reading_path():
            slow.add_messages(msgs(1 + i % 2, 300 + 2 * i), conversation_id="c", session_id="s")
    # the writer re-describes the conversation and the roots above it (a handful of
    # sessions and folders), never the session's 300+ turns
    assert read[0] < 20
    assert stored(fast) == stored(slow)
    check_sessions_as_main(fast)
    fast.close()
    slow.close()


def test_the_family_count_is_the_live_children(tmp_path: Path) -> None:
    c = Treehop(tmp_path / "a", embedder=BagOfWordsEmbedder(), tagger=None)
    c.add_messages(msgs(40), conversation_id="c", session_id="s")
    uri = c.aio.resolve(f"{CONVS}/c/s")
    c.store.delete([f"{uri}/turn-00003", f"{uri}/turn-00039"])
    count, present = c.store.family_state(uri, [f"{uri}/turn-00003", f"{uri}/turn-00004"])
    assert count == len(c.store.children(uri)) == 38
    assert present == [False, True]
    c.close()


Op = tuple[Any, ...]

contents = st.sampled_from(
    [
        "Hello there.",
        "I went hiking. It rained all day!",
        "a  b\n\n  c … ",
        "word " * 500,  # a long line: the overview's _clip branch
        "x" * 1900,  # one line longer than the overview
        "Line one.\nLine two.\nLine three.",
        "…",
    ]
)
message = st.fixed_dictionaries(
    {"content": contents},
    optional={
        "speaker": st.sampled_from(["Ann", "Bob", "Caroline"]),
        "role": st.sampled_from(["user", "assistant"]),
        "timestamp": st.sampled_from([0, 59.5, 86_400 * 3, 1_683_000_000, -0.0]),
        "id": st.sampled_from(["m1", "m2"]),
    },
)
where = st.tuples(st.sampled_from(["c1", "c2"]), st.sampled_from(["s1", "s1", "s2", None]))
ops = st.lists(
    st.one_of(
        st.tuples(st.just("add"), where, st.lists(message, min_size=1, max_size=4)),
        st.tuples(st.just("add"), where, st.lists(message, min_size=1, max_size=2)),
        st.tuples(st.just("add"), where, st.lists(message, min_size=20, max_size=40)),
        st.tuples(st.just("remove"), where, st.integers(0, 50)),
        st.tuples(st.just("raw_delete"), where, st.integers(0, 50)),
        st.tuples(st.just("extract"), where, st.lists(message, min_size=1, max_size=2)),
        st.tuples(st.just("reopen")),
    ),
    min_size=1,
    max_size=16,
)


def _apply(c: Treehop, op: Op) -> Any:
    kind = op[0]
    if kind == "reopen":
        return None
    conv, session = op[1]
    if kind in ("add", "extract"):
        res = c.add_messages(
            op[2],
            conversation_id=conv,
            session_id=session,
            session_time=1_700_000_000,
            extractor=StubExtractor() if kind == "extract" else None,
        )
        check_sessions_as_main(c, res.session_uri)
        return res.turn_uris
    uri = c.aio.resolve(f"{CONVS}/{conv}/{session or 's1'}")
    if c.store.get([uri])[0] is None:
        return None
    turns = sorted(k.uri for k in c.store.children(uri) if k.metadata.get("kind") == "turn")
    if not turns:
        return None
    victim = turns[op[2] % len(turns)]
    if kind == "remove":
        return c.remove(victim)
    return c.store.delete([victim])  # beneath the writer: the session node stays


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(ops)
def test_any_sequence_of_calls_writes_what_main_writes(
    tmp_path_factory: pytest.TempPathFactory, seq: list[Op]
) -> None:
    root = tmp_path_factory.mktemp("seq")

    def open_(name: str) -> Treehop:
        return Treehop(root / name, embedder=BagOfWordsEmbedder(), tagger=None)

    fast, slow = open_("a"), open_("b")
    try:
        for op in seq:
            if op[0] == "reopen":
                fast.close()
                slow.close()
                fast, slow = open_("a"), open_("b")
                continue
            got = _apply(fast, op)
            with reading_path():
                want = _apply(slow, op)
            assert got == want
            assert stored(fast) == stored(slow)
    finally:
        fast.close()
        slow.close()


def test_with_the_keyword_tagger_the_same_nodes_and_tags(tmp_path: Path) -> None:
    fast = Treehop(tmp_path / "a", embedder=BagOfWordsEmbedder(), retag_all_below=0)
    slow = Treehop(tmp_path / "b", embedder=BagOfWordsEmbedder(), retag_all_below=0)
    for c, ctx in ((fast, contextlib.nullcontext()), (slow, reading_path())):
        with ctx:
            c.add_messages(msgs(50), conversation_id="c", session_id="s")
            for i in range(4):
                c.add_messages(msgs(2, 50 + 2 * i, "Zed"), conversation_id="c", session_id="s")
            c.add_messages(msgs(3), conversation_id="c")  # a new session, numbered
    assert stored(fast) == stored(slow)
    fast.close()
    slow.close()


def test_another_client_appending_is_seen(tmp_path: Path) -> None:
    """Two clients of one index (one process): each append by the other one rewrites the
    session node, so the kept tail no longer matches and the session is read."""
    a = Treehop(tmp_path / "a", embedder=BagOfWordsEmbedder(), tagger=None)
    a.add_messages(msgs(10), conversation_id="c", session_id="s")
    b = Treehop(tmp_path / "a", embedder=BagOfWordsEmbedder(), tagger=None)
    assert b.add_messages(msgs(1, 10), conversation_id="c", session_id="s").turn_uris == [
        f"{CONVS}/c/s/turn-00010"
    ]
    b.close()
    res = a.add_messages(msgs(1, 11), conversation_id="c", session_id="s")
    assert res.turn_uris == [f"{CONVS}/c/s/turn-00011"]
    check_sessions_as_main(a)
    a.close()


def _in_threads(fn: Callable[[int], object], n: int) -> list[BaseException]:
    """``fn(0)`` ... ``fn(n - 1)`` run at once, one thread each; what they raised."""
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            fn(i)
        except BaseException as exc:  # (returned to the test)
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def _turn_indexes(c: Treehop, session_uri: str) -> list[int]:
    """The stored turn numbers of a session, sorted."""
    kids = c.store.children(c.aio.resolve(session_uri))
    return sorted(mem._index_of(k.uri.rsplit("/", 1)[-1], "turn-") for k in kids)


def test_concurrent_appends_then_an_append_as_main(tmp_path: Path) -> None:
    """Concurrent appends to one session take turns (:func:`treehop.memory.
    _conversation_lock`), in no set order; the next append, alone, is main's: numbered after
    the stored turns, its session node built from them."""
    c = Treehop(tmp_path / "a", embedder=BagOfWordsEmbedder(), tagger=None)
    c.add_messages(msgs(20), conversation_id="c", session_id="s")
    c.add_messages(msgs(1, 20), conversation_id="c", session_id="s")

    def append(i: int) -> None:
        c.add_messages(msgs(1 + i % 2, 100 + 10 * i), conversation_id="c", session_id="s")

    assert not _in_threads(append, 4)
    top = _turn_indexes(c, f"{CONVS}/c/s")[-1]
    res = c.add_messages(msgs(1, 500), conversation_id="c", session_id="s")
    assert res.turn_uris == [f"{CONVS}/c/s/turn-{top + 1:05d}"]
    check_sessions_as_main(c, f"{CONVS}/c/s")
    c.close()


def _contents(c: Treehop, session: str) -> list[str]:
    uri = c.aio.resolve(f"{CONVS}/c/{session}")
    kids = [k for k in c.store.children(uri) if k.metadata.get("kind") == "turn"]
    return [k.content or "" for k in kids]


def test_racing_appends_to_one_session_lose_no_message(tmp_path: Path) -> None:
    """Threads and tasks appending to one session at once: every message is stored, each
    under a turn of its own, numbered without a gap (racing appends both wrote
    ``turn-00002`` and one message was lost, every run, before the conversation lock)."""
    import asyncio

    from treehop import AsyncTreehop

    c = Treehop(tmp_path / "a", embedder=BagOfWordsEmbedder(), tagger=None)
    c.add_messages(msgs(3), conversation_id="c", session_id="s")

    def append(i: int) -> None:
        for j in range(4):
            c.add_messages(msgs(1, 1000 + 10 * i + j), conversation_id="c", session_id="s")

    assert not _in_threads(append, 4)
    got = _contents(c, "s")
    assert len(got) == 3 + 16
    assert {f"line {1000 + 10 * i + j}. more" for i in range(4) for j in range(4)} <= {
        t.split(": ", 1)[-1] for t in got
    }
    assert _turn_indexes(c, f"{CONVS}/c/s") == list(range(19))
    # two sessions picked at once (no session_id): two sessions, not one merged
    assert not _in_threads(lambda i: c.add_messages(msgs(2), conversation_id="d"), 2)
    sessions = c.store.children(c.aio.resolve(f"{CONVS}/d"))
    assert sorted(k.uri.rsplit("/", 1)[-1] for k in sessions if not k.is_leaf) == [
        "session-0000",
        "session-0001",
    ]
    c.close()

    async def tasks() -> None:
        async with AsyncTreehop(tmp_path / "b", embedder=BagOfWordsEmbedder(), tagger=None) as a:
            await asyncio.gather(
                *(
                    a.add_messages(msgs(1, 2000 + i), conversation_id="c", session_id="s")
                    for i in range(6)
                )
            )
            uri = a.resolve(f"{CONVS}/c/s")
            kids = await a._io(a.store.children, uri)
            assert sorted(mem._index_of(k.uri.rsplit("/", 1)[-1], "turn-") for k in kids) == list(
                range(6)
            )

    asyncio.run(tasks())


def test_a_cancelled_wait_for_the_conversation_lock_holds_nothing(tmp_path: Path) -> None:
    """An append waiting behind another one of its conversation and cancelled meanwhile
    leaves nothing written and the lock free: the next append goes through."""
    import asyncio

    from treehop import AsyncTreehop

    async def run() -> None:
        async with AsyncTreehop(tmp_path / "a", embedder=BagOfWordsEmbedder(), tagger=None) as a:
            conv = a.resolve(f"{CONVS}/c")
            async with mem._conversation_lock(a.store, conv):  # (another append's turn)
                waiting = asyncio.create_task(
                    a.add_messages(msgs(1), conversation_id="c", session_id="s")
                )
                await asyncio.sleep(0.05)
                assert not waiting.done()
                waiting.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await waiting
            assert await a._io(a.store.children, f"{conv}/s") == []
            res = await asyncio.wait_for(
                a.add_messages(msgs(2), conversation_id="c", session_id="s"), timeout=5
            )
            assert res.turn_uris == [f"{CONVS}/c/s/turn-{i:05d}" for i in range(2)]

    asyncio.run(run())
