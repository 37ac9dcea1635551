"""A memory hit carries its exchange: a conversation turn's slot holds its neighbouring turns.

Why: a turn is a poor unit to hand a reader. "Yes, last Saturday!" answers "when did Caroline
go to the support group?" only together with the turn before it, and the evidence of one
question is often two or three consecutive turns. A framework user who splits whole session
transcripts into 1,000-character chunks gets about ten turns per result slot; a turn returned
alone gets one. So a memory turn found by ``find()`` comes with the turns around it, in the
same slot, the way a document's other chunks come in
:attr:`~treehop.models.MatchedContext.collapsed`:

- **which neighbours** - the tree decides: the previous and next turns of the same session
  (the hit's parent), grown one turn at a time from the hit outwards, each step on the side
  whose next turn has the higher own score for the query (a tie takes the earlier turn: the
  question usually comes before its answer), while the slot's text stays within
  ``budget`` characters (:attr:`~treehop.config.RetrievalConfig.memory_context_chars`; the
  hit's own text included). A side stops at the session's edge, at a turn the query's filters
  exclude, and at a turn another slot already holds, so every turn is in at most one slot.
- **merging** - a hit further down the list that an earlier slot already carries does not take
  a slot of its own: it is merged into that slot (``carried=False`` on its entry, because it
  was ranked on its own score), and the next hit moves up.
- **what counts as a turn** - a leaf of the memory context type, not a chunk, whose ``kind``
  metadata is ``turn`` (what the memory write path stores; a caller who ingests messages
  another way marks them so). Its neighbours must be turns too. Notes (``remember``),
  extracted facts and memory files (a user's preferences, one document each) are independent
  statements, not parts of an exchange, so they never carry context; resources and skills are
  untouched (a document's chunks fold into one slot on their own).

Everything here is a pure function of the ranked groups and the sessions' scored turns; the
retriever fetches those (one scoped search) and turns the slots into results.

**Reading the neighbours** (:func:`gather_slots`): a session the tree context scored whole is
read from it; any other, on a store that reads siblings by order (``sibling_window``: the
embedded store), only around each turn hit (:class:`Window`: ``FIRST_WINDOW`` turns a side,
four times as many while a slot grows past them); elsewhere, one search of the session.
The slots are the same either way: a window holds the hit's neighbours in its whole session,
scored as that search scores them. Why: a search of a 100,000-turn session read 10,000 turn
nodes a find, and past 10,000 turns its neighbours were those among the session's best 10,000
turns, not the session's (``bench/README.md``, "a turn's neighbours read by order").

**Session evidence** (:func:`session_lexical_scores`): a question's words are often spread over
several turns of one exchange (the question's subject in one turn, the answer's words in the
next), so no single turn matches them all. The tree knows which turns form one conversation:
before the slots are built, each turn's tree-context score also takes BM25 of its session's
joined turns (Liu & Croft's cluster-based retrieval with the session as the cluster).
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

import numpy as np
import numpy.typing as npt

from .descent import Candidate
from .errors import InvalidURIError
from .lexical import LexicalIndex
from .models import ChunkContext, ContextType, Node
from .stores.base import ScoredNode, SiblingWindow
from .tree_scoring import sibling_order_key
from .uri import context_type_of

TURN_KIND = "turn"
"""``kind`` metadata of a conversation turn, the only leaf that carries its neighbours."""


def carries_context(node: Node) -> bool:
    """True for a conversation turn (see the module docstring), the only node that carries
    neighbouring turns."""
    return (
        node.is_leaf
        and node.context_type is ContextType.MEMORY
        and node.chunk_index is None
        and node.parent_uri is not None
        and node.metadata.get("kind") == TURN_KIND
    )


def day_prefix(timestamp: float) -> str:
    """``(8 May 2023) ``: the day a dated turn text starts with (``add_messages``'s
    ``dated_text``), from its epoch seconds (UTC). The context block drops it from a turn
    listed under a session header of the same day (the header says it once)."""
    dt = datetime.fromtimestamp(timestamp, tz=UTC)
    return f"({dt.day} {dt:%B %Y}) "


def turn_text(node: Node) -> str:
    """The text a turn contributes to its slot (and to the slot's character budget)."""
    return node.content or node.abstract


@dataclass
class ContextTurn:
    """A turn held in a slot besides its hit."""

    hit: ScoredNode
    position: int
    """Its place relative to the slot's hit in the session: -1 the turn before, +1 after."""
    carried: bool = True
    """True: in the slot only as context; False: a ranked hit merged into this slot."""


@dataclass
class Slot:
    """One result slot: a ranked group (hit first) and the turns it carries."""

    group: list[Candidate]
    turns: list[ContextTurn] = field(default_factory=list)

    def context(self) -> list[ChunkContext]:
        """The carried turns as :class:`ChunkContext`, in conversation order."""
        return [
            ChunkContext(
                uri=t.hit.node.uri,
                score=t.hit.score,
                abstract=t.hit.node.abstract,
                content=t.hit.node.content,
                position=t.position,
                carried=t.carried,
            )
            for t in sorted(self.turns, key=lambda t: t.position)
        ]


def session_lexical_scores(
    query: str, parents: Iterable[str], leaves_of: Callable[[str], Sequence[Node]]
) -> dict[str, float]:
    """BM25 of each session's joined turn texts for ``query``, divided by the best session's
    (0..1; a session with no query word scores 0; none when no session has one), among the
    memory ``parents`` given: the
    sessions of the query's best turns. ``leaves_of(parent)`` returns *every* leaf of one;
    only turns (:func:`carries_context`) make up a session's text, and a parent without turns
    (or outside the memories: a document's file or folder, whose leaves are never read) is
    left out.

    Why these sessions and not all: the store keeps term statistics per leaf, not per session,
    so the joined texts are scored at query time, with the sessions in play as the collection
    (their document frequencies and mean length). On the LoCoMo dev half, BM25 over the sessions
    of the best 30 turns gave the same gain as over every session of the conversation
    (``bench/README.md``, "Session evidence"). Each turn is tokenised once (a bounded cache
    of its term counts), so the cost is linear in the turns' text the first time and in their
    number times the query's terms after.
    """
    terms = Counter(_TOKENIZER.tokenize(query))
    names: list[str] = []
    lengths: list[int] = []
    tfs: list[list[int]] = []
    for parent in parents:
        if not _in_memories(parent):
            continue
        counted = [
            _turn_counts(node.lexical_text()) for node in leaves_of(parent) if carries_context(node)
        ]
        length = sum(n for _, n in counted)
        if length:
            names.append(parent)
            lengths.append(length)
            tfs.append([sum(c.get(t, 0) for c, _ in counted) for t in terms])
    if not names:
        return {}
    scores = _bm25(np.array(tfs, np.float64), np.array(lengths, np.float64), terms)
    best = float(scores.max())
    if best <= 0:  # no session holds a query word: no evidence either way
        return {}
    return {p: float(v) / best for p, v in zip(names, scores.tolist(), strict=True)}


def _bm25(
    tf: npt.NDArray[np.float64], lengths: npt.NDArray[np.float64], terms: Counter[str]
) -> npt.NDArray[np.float64]:
    """BM25 of each session (rows of ``tf``: the query terms' counts) with the sessions as the
    collection: :class:`~treehop.lexical.LexicalIndex`'s formula and defaults (idf
    ``log(1 + (n - df + 0.5) / (df + 0.5))`` times the term's count in the query, k1 1.2,
    b 0.75), computed from cached per-turn counts instead of a new index per query."""
    n = float(tf.shape[0])
    df = (tf > 0).sum(axis=0).astype(np.float64)
    idf = np.log1p((n - df + 0.5) / (df + 0.5)) * np.fromiter(terms.values(), np.float64)
    k1, b = _TOKENIZER.k1, _TOKENIZER.b
    norm = k1 * (1.0 - b + b * lengths / lengths.mean())
    out: npt.NDArray[np.float64] = (tf * (k1 + 1.0) / (tf + norm[:, None])) @ idf
    return out


@functools.lru_cache(maxsize=1 << 14)
def _turn_counts(text: str) -> tuple[Counter[str], int]:
    """A turn's BM25 term counts and length (the lexical index's default tokenizer), kept:
    every query of a conversation joins the same turns again."""
    tokens = _TOKENIZER.tokenize(text)
    return Counter(tokens), len(tokens)


_TOKENIZER = LexicalIndex()
"""Only its tokenizer and its BM25 parameters are used (the defaults, as a store's lexical
index has them)."""


def _in_memories(uri: str) -> bool:
    try:
        return context_type_of(uri) is ContextType.MEMORY
    except InvalidURIError:
        return False


def with_session_evidence(
    finals: Sequence[float],
    parents: Sequence[str],
    session_scores: Mapping[str, float],
    weight: float,
    total: float,
) -> list[float]:
    """Each final score blended with its session's score (:func:`session_lexical_scores`) at
    ``weight`` against the tree context's ``total`` weight: a weighted mean, so the score stays
    on the store's scale. Leaves whose parent has no session score are unchanged."""
    out = list(finals)
    for i, p in enumerate(parents):
        s = session_scores.get(p)
        if s is not None:
            out[i] = (out[i] * total + weight * s) / (total + weight)
    return out


def session_turns(family: Sequence[ScoredNode]) -> dict[str, list[ScoredNode]]:
    """The scored turns of each parent, in conversation order (chunk index, then the natural
    order of the names: ``turn-00009`` before ``turn-00010``)."""
    by_parent: dict[str, list[ScoredNode]] = {}
    for h in family:
        if carries_context(h.node):
            by_parent.setdefault(h.node.parent_uri or "", []).append(h)
    for turns in by_parent.values():
        turns.sort(key=sibling_order_key)
    return by_parent


def build_slots(
    groups: Sequence[list[Candidate]],
    sessions: Mapping[str, Sequence[ScoredNode]],
    budget: int,
    limit: int,
) -> list[Slot]:
    """The first ``limit`` slots of ``groups`` (ranked, best first), each turn hit with its
    neighbouring turns from ``sessions`` (see the module docstring).

    ``sessions`` maps a parent URI to every turn under it, in conversation order, with its own
    score for the query and whether it passes the query's filters (``matches``); a turn hit
    whose session is not in it gets no context. With a budget of 0 (or no turn hits) the
    slots are the groups, unchanged.
    """
    return plan_slots(groups, sessions, budget, limit, complete=False)[0]


def plan_slots(
    groups: Sequence[list[Candidate]],
    sessions: Mapping[str, Sequence[ScoredNode]],
    budget: int,
    limit: int,
    complete: bool = True,
    windows: Mapping[str, Window] | None = None,
    inside: Callable[[str], bool] | None = None,
) -> tuple[list[Slot], str | WindowWant | None]:
    """:func:`build_slots`, stopping at the first turn hit whose session is not in
    ``sessions`` (``complete``): returns the slots so far and that session's URI, so that the
    caller fetches only the sessions the slots reach (``None`` once every slot is built).

    ``windows``: a turn hit whose session is not in ``sessions`` takes its neighbours from
    its :class:`Window` (by the hit's URI) instead; where it has none yet, or the slot grows
    past the turns its window holds, the plan stops with a :class:`WindowWant` (read it, or
    a wider one, and plan again).

    ``inside``: whether a URI lies in the search's scope (its roots); a neighbour outside it
    ends a side, as a filtered turn does. Why: a ``target_uri`` naming one turn searches that
    turn, and its slot carried the session's other turns (text the caller left out) in
    ``collapsed``, ``slot_text`` and an assembled block. Checked only for a hit whose session
    lies outside the scope (a root that is a turn): a session inside it holds no other turn."""
    slots: list[Slot] = []
    held: dict[str, tuple[Slot, ContextTurn | None]] = {}
    index: dict[str, dict[str, int]] = {}
    for group in groups:
        if len(slots) >= limit:
            break
        node = group[0].node
        where = held.get(node.uri)
        if where is not None:
            slot, turn = where
            if turn is not None:  # a ranked hit an earlier slot already carries: merged
                turn.carried = False
            continue
        slot = Slot(list(group))
        slots.append(slot)
        held[node.uri] = (slot, None)
        if budget <= 0 or not carries_context(node):
            continue
        room = budget - len(turn_text(node))
        confine = None if inside is None or inside(node.parent_uri or "") else inside
        turns = sessions.get(node.parent_uri or "")
        if turns is None and windows is not None:
            window = windows.get(node.uri)
            if window is None:
                return slots, WindowWant(node, FIRST_WINDOW)
            try:
                _grow(slot, window.at, room, held, confine)
            except _Short:
                return slots, WindowWant(node, 4 * window.asked)
            continue
        if turns is None and complete:
            return slots, node.parent_uri
        if not turns:
            continue
        where_in = index.get(node.parent_uri or "")
        if where_in is None:
            where_in = index[node.parent_uri or ""] = {h.node.uri: i for i, h in enumerate(turns)}
        pos = where_in.get(node.uri)
        if pos is None:
            continue
        _grow(slot, _in_list(turns, pos), room, held, confine)
    return slots, None


FIRST_WINDOW = 8
"""Turns read on each side of a hit at first (a slot of ``memory_context_chars`` = 1,000
holds ~10 LoCoMo turns in all); a slot that grows past them reads four times as many."""


@dataclass(frozen=True)
class WindowWant:
    """:func:`plan_slots` needs ``count`` turns on each side of the turn hit ``hit``."""

    hit: Node
    count: int


@dataclass(frozen=True)
class Window:
    """A turn hit's neighbouring turns read by their order (a store's
    :class:`~treehop.stores.base.SiblingWindow`, turns only): nearest first on each side,
    ``asked`` siblings asked on each; ``first`` / ``last``: the session holds no further turn
    on that side. The same turns, in the same order and with the same scores, as the hit's
    neighbours in its whole session (:func:`session_turns` of a search of it)."""

    before: list[ScoredNode]
    after: list[ScoredNode]
    first: bool
    last: bool
    asked: int

    @classmethod
    def of(cls, found: SiblingWindow, asked: int) -> Window:
        """The turns of a store's window (its other leaves, notes or facts stored under the
        session, are not part of the exchange: :func:`session_turns` leaves them out too)."""
        return cls(
            [h for h in found.before if carries_context(h.node)],
            [h for h in found.after if carries_context(h.node)],
            found.first,
            found.last,
            asked,
        )

    def at(self, side: int, k: int) -> ScoredNode | None:
        """The ``k``-th turn (from 1) before (``side`` 0) or after (1) the hit; ``None`` past
        the session's edge; :class:`_Short` where the window ends before the session."""
        turns, edge = (self.after, self.last) if side else (self.before, self.first)
        if k <= len(turns):
            return turns[k - 1]
        if edge:
            return None
        raise _Short


class _Short(Exception):
    """A slot grows past the turns its :class:`Window` holds."""


def _in_list(turns: Sequence[ScoredNode], pos: int) -> Callable[[int, int], ScoredNode | None]:
    """:meth:`Window.at` over a whole session's turns, the hit at ``pos``."""

    def at(side: int, k: int) -> ScoredNode | None:
        i = pos + k if side else pos - k
        return turns[i] if 0 <= i < len(turns) else None

    return at


async def gather_slots(
    groups: Sequence[list[Candidate]],
    budget: int,
    limit: int,
    search: Callable[[tuple[str, ...]], Awaitable[Sequence[ScoredNode]]],
    known: Mapping[str, Sequence[ScoredNode]] | None = None,
    window: Callable[[Node, int], Awaitable[Window | None]] | None = None,
    inside: Callable[[str], bool] | None = None,
) -> list[Slot]:
    """:func:`build_slots`, scoring only the sessions the slots reach: ``search(parents)``
    returns the scored leaves below ``parents`` (the query's filters applied). It is asked for
    the sessions of the turn hits among the next ``limit`` groups at once, and again whenever
    the slots run past them (merged hits free slots), never for a session twice.

    ``known`` maps a parent to *every* scored leaf child of it, already scored for this query
    with the same filters (the tree context's families): those sessions are read from it
    instead of scored again, so ``search`` is asked only for the others.

    ``window(hit, count)``: where given, a turn hit of any other session reads only its
    neighbours, ``count`` on each side by the session's order (:class:`Window`, the store's
    ``sibling_window``), wider as its slot grows; ``None`` from it (a store that cannot read
    that session by order) searches that session whole, as without it. The slots are the
    same either way: a window holds the hit's neighbours of its whole session.

    ``inside``: the search's scope (:func:`plan_slots`): no slot carries a turn outside it."""
    n = limit
    fetched: dict[str, list[ScoredNode]] = {}
    sessions = _KnownFirst(fetched, known or {})
    windows: dict[str, Window] | None = {} if window is not None else None
    while True:
        slots, missing = plan_slots(groups, sessions, budget, limit, windows=windows, inside=inside)
        if missing is None:
            return slots
        if isinstance(missing, WindowWant):
            assert window is not None and windows is not None  # (only asked with windows)
            got = await window(missing.hit, missing.count)
            if got is not None:
                windows[missing.hit.uri] = got
                continue
            # this session cannot be read by order: searched whole (it alone)
            parent = missing.hit.parent_uri or ""
            found = await search((parent,))
            fetched.update(session_turns([h for h in found if h.node.parent_uri == parent]))
            fetched.setdefault(parent, [])
            continue
        heads = (g[0].node for g in groups[:n])
        want = {missing} | {h.parent_uri for h in heads if carries_context(h) and h.parent_uri}
        want = {p for p in want if p not in sessions}
        found = await search(tuple(sorted(want)))
        fetched.update(session_turns([h for h in found if h.node.parent_uri in want]))
        fetched.update((p, []) for p in want if p not in fetched)
        n *= 2


class _KnownFirst(Mapping[str, Sequence[ScoredNode]]):
    """The sessions :func:`gather_slots` has: those it searched, and the known ones, each
    ordered on first use. Known sessions are there from the start, so that one
    :func:`plan_slots` pass runs through them instead of stopping (and starting over) at
    each."""

    def __init__(
        self, fetched: dict[str, list[ScoredNode]], known: Mapping[str, Sequence[ScoredNode]]
    ) -> None:
        self.fetched = fetched
        self.known = known

    def __getitem__(self, parent: str) -> Sequence[ScoredNode]:
        turns = self.fetched.get(parent)
        if turns is None:
            kids = self.known[parent]  # KeyError: neither searched nor known
            turns = self.fetched[parent] = session_turns(kids).get(parent, [])
        return turns

    def __contains__(self, parent: object) -> bool:
        return parent in self.fetched or parent in self.known

    def __iter__(self) -> Iterator[str]:
        return iter(self.fetched.keys() | self.known.keys())

    def __len__(self) -> int:
        return len(self.fetched.keys() | self.known.keys())


def _grow(
    slot: Slot,
    at: Callable[[int, int], ScoredNode | None],
    room: int,
    held: dict[str, tuple[Slot, ContextTurn | None]],
    inside: Callable[[str], bool] | None = None,
) -> None:
    """Add neighbours of the slot's hit to ``slot``, the better side first, within ``room``.
    ``at(side, k)``: the ``k``-th turn (from 1) before (``side`` 0) or after (1) the hit in
    its session, ``None`` past the session's edge; ``inside``: a turn it rejects ends a side
    (outside the search's scope, :func:`plan_slots`)."""
    steps = [1, 1]  # the next turn to take on each side, counted from the hit
    sign = (-1, 1)
    open_ = [True, True]

    def usable(side: int) -> bool:
        if not open_[side]:
            return False
        h = at(side, steps[side])
        if (
            h is None
            or h.node.uri in held
            or not h.matches
            or len(turn_text(h.node)) + 1 > room
            or (inside is not None and not inside(h.node.uri))
        ):
            open_[side] = False  # the window stays contiguous: this side is done
            return False
        return True

    while True:
        sides = [s for s in (0, 1) if usable(s)]
        if not sides:
            return
        side = max(sides, key=lambda s: (_score(_taken(at, s, steps[s])), -s))
        h = _taken(at, side, steps[side])
        turn = ContextTurn(h, sign[side] * steps[side])
        slot.turns.append(turn)
        held[h.node.uri] = (slot, turn)
        room -= len(turn_text(h.node)) + 1
        steps[side] += 1


def _taken(at: Callable[[int, int], ScoredNode | None], side: int, k: int) -> ScoredNode:
    """``at(side, k)`` where :func:`_grow` found a usable turn."""
    h = at(side, k)
    assert h is not None
    return h


def _score(h: ScoredNode) -> float:
    return h.score if math.isfinite(h.score) else -math.inf
