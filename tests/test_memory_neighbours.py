"""A memory turn hit's neighbours read by the session's order (``EmbeddedStore.sibling_window``,
``memory_context.Window``) give the slots a search of the whole session gives: the same
slots, carried turns, order, positions and scores, for sessions of every size and shape.

The reference is the path without windows (``_window_reader`` answering ``None``: each session
searched whole), with its 10,000-turn bound (``MAX_SESSION_FETCH``) raised where a session is
longer: past the bound the old path read the neighbours among the session's best 10,000 turns
only, and the right neighbours are the session's (asserted to differ there, so the test can
see the bound)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import Treehop
from treehop import hierarchical_retriever as hr
from treehop.memory_context import FIRST_WINDOW
from treehop.models import ContextType, FindResult, Level, Node
from treehop.natural_order import name_key, natural_positions
from treehop.stores.base import Scope

from treehop_test_doubles import BagOfWordsEmbedder

WORDS = str.split(
    "pottery workshop marathon berlin garden piano concert recipe hiking camping painting "
    "adoption counselor school museum guitar novel puppy beach birthday festival bakery"
)
QUERIES = [
    "pottery workshop",
    "berlin marathon training",
    "adoption counselor",
    "guitar concert",
    "puppy at the beach",
]


def chat(
    n: int, start: int = 0, t0: float = 1_683_000_000, step: float = 60
) -> list[dict[str, Any]]:
    out = []
    for i in range(start, start + n):
        a, b, c = (WORDS[(i * k + k * k) % len(WORDS)] for k in (3, 7, 11))
        out.append(
            {
                "speaker": ("Ann", "Bob")[i % 2],
                "content": f"We talked about the {a} and the {b}, then {c} ({i}).",
                "timestamp": t0 + step * i,
            }
        )
    return out


def shape(res: FindResult) -> list[Any]:
    """Everything a find returns about its memory slots."""
    return [
        (
            m.uri,
            m.score,
            m.content,
            [(c.uri, c.score, c.position, c.carried, c.content) for c in m.collapsed],
        )
        for m in res.memories
    ]


@pytest.fixture
def old_path(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A context manager that runs finds on the path without windows (the reference)."""

    class _Old:
        def __enter__(self) -> None:
            monkeypatch.setattr(hr.HierarchicalRetriever, "_window_reader", lambda *a: None)

        def __exit__(self, *exc: object) -> None:
            monkeypatch.undo()

    yield _Old


def both(c: Treehop, old_path: Any, query: str, **kw: Any) -> tuple[list[Any], list[Any]]:
    new = shape(c.find(query, context_type="memory", **kw))
    with old_path():
        old = shape(c.find(query, context_type="memory", **kw))
    return new, old


def assert_same(c: Treehop, old_path: Any, queries: list[str] = QUERIES, **kw: Any) -> int:
    """Each query's slots equal the reference's; returns how many turns the slots carry (so a
    test can check its case exercised the neighbours at all)."""
    carried = 0
    for q in queries:
        new, old = both(c, old_path, q, **kw)
        assert new == old, q
        carried += sum(len(s[3]) for s in new)
    return carried


def session_uri(c: Treehop, tail: str) -> str:
    """The stored URI of a session (``conversation/session``)."""
    store: Any = c.store
    (uri,) = [u for u in store.iter_uris() if u.endswith(f"/conversations/{tail}")]
    return str(uri)


def client() -> Treehop:
    return Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None)


def write_turns(c: Treehop, session: str, names: list[str], kind: str = "turn") -> None:
    """Leaves named ``names`` under ``session``, written straight to the store (a caller's own
    turns: any names), with the embedder's vectors."""
    nodes = [
        Node(
            uri=f"{session}/{name}",
            parent_uri=session,
            context_type=ContextType.MEMORY,
            level=Level.CONTENT,
            is_leaf=True,
            content=f"Ann: the pottery workshop and the {WORDS[i % len(WORDS)]} ({name})",
            metadata={"kind": kind, "timestamp": 1_683_000_000.0 + i},
        )
        for i, name in enumerate(names)
    ]
    c.store.upsert(nodes, BagOfWordsEmbedder().embed([n.content for n in nodes]).astype(np.float32))


@pytest.mark.parametrize("n", [3, 40, 400])
def test_a_session_of_any_size_gives_the_same_slots(n: int, old_path: Any) -> None:
    c = client()
    c.add_messages(chat(n), conversation_id="c", session_id="s")
    carried = assert_same(c, old_path)
    assert carried > 0
    # a small memory budget (one turn a side) and a large one (the session grows past the
    # first window, which is then read four times as wide)
    for chars in (120, 5000):
        c.config.memory_context_chars = chars
        assert_same(c, old_path)
    assert max(len(m.collapsed) for m in c.find("pottery", context_type="memory").memories) > (
        2 * FIRST_WINDOW if n > 2 * FIRST_WINDOW else 0
    )


def test_turns_added_in_several_calls_two_sessions_and_equal_timestamps(old_path: Any) -> None:
    c = client()
    for part in range(4):  # one session appended four times
        c.add_messages(chat(25, start=25 * part), conversation_id="c", session_id="s1")
    # a second session whose turns all share one timestamp
    c.add_messages(chat(60, start=7, step=0), conversation_id="c", session_id="s2")
    c.add_messages(chat(30, start=3), conversation_id="d", session_id="s1")
    assert assert_same(c, old_path) > 0
    hit_sessions = {
        m.uri.rsplit("/", 1)[0] for q in QUERIES for m in c.find(q, context_type="memory").memories
    }
    assert len(hit_sessions) >= 2


def test_deleted_turns_leave_gaps_the_window_steps_over(old_path: Any) -> None:
    c = client()
    c.add_messages(chat(120), conversation_id="c", session_id="s")
    s = session_uri(c, "c/s")
    gone = [f"{s}/turn-{i:05d}" for i in (*range(10, 30), 31, 33, *range(50, 90, 3))]
    assert c.store.delete(gone) == len(gone)
    assert assert_same(c, old_path) > 0
    # no slot carries a deleted turn, and the positions count the turns that are there
    for q in QUERIES:
        for m in c.find(q, context_type="memory").memories:
            assert not {t.uri for t in m.collapsed} & set(gone)


def test_filters_and_exclusions_skip_turns_as_the_session_search_does(old_path: Any) -> None:
    c = client()
    c.add_messages(chat(200), conversation_id="c", session_id="s")
    # since / until keep a time range: turns outside it are skipped (the window bridges them)
    carried = assert_same(
        c, old_path, since=1_683_000_000 + 60 * 40, until=1_683_000_000 + 60 * 160
    )
    assert carried > 0
    # an exclusion list (assemble_context's): the excluded turns are not neighbours
    top = c.find("pottery workshop", context_type="memory").memories[0]
    excluded = [t.uri for t in top.collapsed[:3]]
    new = c.assemble_context("pottery workshop", max_tokens=800, exclude_uris=excluded)
    with old_path():
        old = c.assemble_context("pottery workshop", max_tokens=800, exclude_uris=excluded)
    assert new.text == old.text and new.text


def test_names_of_several_shapes_and_other_leaves_in_the_session(old_path: Any) -> None:
    c = client()
    c.add_messages(chat(12), conversation_id="c", session_id="s")
    s = session_uri(c, "c/s")
    # a caller's own turns: digit runs of several lengths (natural order, not string order:
    # turn-9 before turn-10 before turn-100), and leaves that are not turns between them
    write_turns(c, s, [f"turn-{i}" for i in (13, 19, 20, 99, 100, 101, 1000, 100000)])
    write_turns(c, s, ["note-1", "turn-50x", "zz"], kind="note")
    store: Any = c.store
    got = store.sibling_window(
        np.ones(64, np.float32) / 8, Scope(leaves_only=True), f"{s}/turn-100", 5, 20
    )
    assert got is not None and got.first is False and got.last is True
    before = [h.node.uri.rsplit("/", 1)[1] for h in got.before]
    after = [h.node.uri.rsplit("/", 1)[1] for h in got.after]
    assert before == ["turn-99", "turn-50x", "turn-20", "turn-19", "turn-13"]
    assert after == ["turn-101", "turn-1000", "turn-100000", "zz"]
    assert assert_same(c, old_path, queries=["pottery workshop", *QUERIES]) > 0


def test_names_that_tie_in_natural_order_fall_back_to_the_session_search(old_path: Any) -> None:
    c = client()
    c.add_messages(chat(8), conversation_id="c", session_id="s")
    s = session_uri(c, "c/s")
    write_turns(c, s, ["turn-5", "turn-005", "turn-6"])  # turn-5 and turn-005: one key
    store: Any = c.store
    hit = f"{s}/turn-6"
    scope = Scope(leaves_only=True)
    assert store.sibling_window(np.ones(64, np.float32) / 8, scope, hit, 4, 4) is None
    assert assert_same(c, old_path, queries=["pottery workshop", *QUERIES]) > 0


def test_a_session_past_the_old_bound_reads_its_true_neighbours(
    old_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """12,500 turns: every 500th holds every query word, its two neighbours none of them, every
    other turn one: a search of the session for its best 10,000 turns leaves out some of the
    rare turns' neighbours (the quiet turns score about as the others: the dated prefix and
    speaker are shared). The windows carry the session's own neighbours (the reference with
    the bound raised); the bounded search does not."""
    c = client()
    msgs = []
    for i in range(12_500):
        if i % 500 == 250:
            text = f"the zebra parade {i}"  # the rare hits
        elif i % 500 in (249, 251):
            text = f"quiet evening at home {i}"  # their neighbours, no query word
        else:
            text = f"marathon training in berlin {i % 7}"
        msgs.append({"speaker": "Ann", "content": text, "timestamp": 1_683_000_000 + i})
    c.add_messages(msgs, conversation_id="c", session_id="s")
    q = "zebra parade marathon"
    new = shape(c.find(q, context_type="memory"))
    with old_path():
        bounded = shape(c.find(q, context_type="memory"))
        monkeypatch.setattr(hr, "MAX_SESSION_FETCH", 10**6)
        unbounded = shape(c.find(q, context_type="memory"))
    assert new == unbounded
    assert new != bounded
    zebra = [s for s in new if "zebra" in s[2]]
    assert zebra
    for s in zebra:  # the right neighbours: the quiet turns right next to it
        assert all("quiet evening" in t[4] for t in s[3] if abs(t[2]) == 1)
    assert sum(abs(t[2]) == 1 for s in zebra for t in s[3]) >= len(zebra)


def test_the_window_reads_few_turns_of_a_long_session() -> None:
    c = client()
    c.add_messages(chat(3000), conversation_id="c", session_id="s")
    store: Any = c.store
    calls: list[int] = []
    read = store.sibling_window

    def counting(*a: Any, **kw: Any) -> Any:
        got = read(*a, **kw)
        if got is not None:
            calls.append(len(got.before) + len(got.after))
        return got

    store.sibling_window = counting
    res = c.find("pottery workshop", context_type="memory")
    assert res.memories and any(m.collapsed for m in res.memories)
    # a window of FIRST_WINDOW a side per turn hit, widened only for a slot that grows past it
    assert calls and max(calls) <= 2 * 4 * FIRST_WINDOW
    assert res.query_results[0].nodes_scored < 1000


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.integers(0, 2_000_000).map(lambda i: f"turn-{i:05d}"),
            st.integers(0, 300).map(lambda i: f"turn-{i}"),
            st.text(alphabet="tu-rn0123456789a\u0663\u00e9", min_size=1, max_size=8),
        ),
        max_size=40,
        unique=True,
    )
)
def test_natural_positions_equal_a_stable_sort_on_name_key(names: list[str]) -> None:
    """The store's order of a family (names in string order in, positions out) is the order of
    ``session_turns``' sort on the natural key; ``None`` exactly where two keys tie."""
    names = sorted(names)
    keys = [name_key.__wrapped__(n) for n in names]
    ref = sorted(range(len(names)), key=keys.__getitem__)
    tie = len(set(keys)) < len(keys)
    got = natural_positions(names)
    assert (got is None) == tie
    if got is not None:
        assert got == ref


def test_natural_positions_lays_shapes_end_to_end_without_a_key_a_name() -> None:
    names = sorted([f"turn-{i:05d}" for i in range(3000)] + ["turn-100000", "turn-100001"])
    assert [names[i] for i in natural_positions(names) or []][-3:] == [
        "turn-02999",
        "turn-100000",
        "turn-100001",
    ]
    assert natural_positions(["turn-5", "turn-05", "turn-6"]) is None
