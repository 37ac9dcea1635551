"""Helper attacks52's adversarial pass (see bench/README.md, "Adversarial pass (helper
attacks52)"): hostile input to the memory write path, the conversation lock, the few-document
passage slots, the slot stop rule and the session window."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import Treehop
from treehop import vikingdb_knowledge as vk
from treehop.errors import InvalidQueryError, InvalidURIError, TreehopError

from treehop_test_doubles import BagOfWordsEmbedder


def _client(tmp_path: Path, **kw: Any) -> Treehop:
    return Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None, **kw)


def _uris(c: Treehop) -> list[str]:
    return [n.uri for n in c.store.iter_nodes()]  # type: ignore[attr-defined]


# ------------------------------------------------------------- 1. an id's trailing newline
# ``re.match(r"^...$")`` lets one "\n" follow the match (``$`` matches before a final
# newline): ids checked that way took a trailing newline into URIs and state file names.
@pytest.mark.parametrize("field", ["session_id", "conversation_id"])
def test_add_messages_refuses_an_id_with_a_trailing_newline(tmp_path: Path, field: str) -> None:
    c = _client(tmp_path)
    try:
        with pytest.raises(InvalidQueryError):
            c.add_messages([{"content": "hello there"}], **{field: "s1\n"})  # type: ignore[arg-type]
        assert not [u for u in _uris(c) if "\n" in u]
        with pytest.raises(InvalidQueryError):
            c.remember("a note", name="n1\n")
        with pytest.raises(InvalidQueryError):
            c.remember("a note", speaker="Ann\n")
    finally:
        c.close()


def test_a_user_name_with_a_trailing_newline_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidURIError):
        _client(tmp_path, user="bob\n")


def test_a_context_session_with_a_trailing_newline_is_refused(tmp_path: Path) -> None:
    c = _client(tmp_path)
    try:
        c.add_messages([{"content": "hello there"}])
        with pytest.raises(InvalidQueryError):
            c.assemble_context("hello", session_id="x\n", max_tokens=100)
        assert not [p for p in (tmp_path / "idx").rglob("*") if "\n" in p.name]
    finally:
        c.close()


def test_service_ids_with_a_trailing_newline_are_encoded() -> None:
    assert vk._unsegment(vk._segment("doc1\n")) == "doc1\n"
    assert "\n" not in vk._segment("doc1\n")


def test_typed_errors_only(tmp_path: Path) -> None:
    assert issubclass(InvalidURIError, TreehopError)


# ------------------------------------------------ 2. one lock kept per conversation, forever
def test_conversation_locks_are_not_kept_after_use(tmp_path: Path) -> None:
    """A lock per conversation stayed in ``_conversation_locks`` after its append (~226
    bytes each: 100,000 conversations kept 22.6 MB, a server's many chat threads grow
    without bound); a lock now lives while a call holds or waits for it."""
    import asyncio

    from treehop import memory as mem

    c = _client(tmp_path)
    try:
        for i in range(30):
            c.add_messages([{"content": f"hello number {i}"}], conversation_id=f"c{i}")
        assert len(mem._conversation_locks.get(c.store) or {}) == 0

        async def waits() -> None:
            conv = "viking://user/default/memories/conversations/x"
            async with mem._conversation_lock(c.store, conv):
                waiting = asyncio.create_task(_hold(mem, c.store, conv))
                await asyncio.sleep(0.02)
                assert len(mem._conversation_locks[c.store]) == 1
                waiting.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await waiting
                assert len(mem._conversation_locks[c.store]) == 1  # (still held here)
            assert len(mem._conversation_locks[c.store]) == 0
            await asyncio.wait_for(_hold(mem, c.store, conv, 0.0), timeout=5)

        asyncio.run(waits())
    finally:
        c.close()


async def _hold(mem: object, store: object, conv: str, pause: float = 10.0) -> None:
    import asyncio

    async with mem._conversation_lock(store, conv):  # type: ignore[attr-defined]
        await asyncio.sleep(pause)


# --------------------------------- 3. a topical query over one paged file: filled slots
TOPICAL = "alpha beta gamma delta"


def test_a_topical_query_over_one_paged_file_settles_by_its_filled_slots(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``few_document_passages`` gives a topical query over one file ``limit`` passage
    slots, but the stop rule by slots was asked only for a question's: the document count
    stayed below ``limit``, so the descent paged the file to ``max_rounds`` (16,000 entries:
    200 rounds, ~0.55 s a find, against 1 round for the question). The filled slots settle
    as a question's do; the answer is what unbounded paging returns."""
    from test_paging_slots import UNBOUNDED, _entries, _find, _signature
    from test_paging_slots import _client as paged_client
    from treehop import hierarchical_retriever as hr
    from treehop.ingest.records import add_records

    monkeypatch.setattr(hr, "MAX_GLOBAL_FETCH", 560)
    c = paged_client(tmp_path / "idx")
    try:
        # (the weak entries last: a slot at the file's end stays open, its next chunk unknown)
        strong, weak = _entries(0, 1500), _entries(200, 0).removeprefix("# FAQ\n\n")
        add_records(c, [(strong + weak, {"source": "faq.md"})])
        before = _find(c, TOPICAL, 10, False, 40).query_results[0]
        assert before.rounds == 40 and before.stop_reason.startswith("max_rounds")
        got = _find(c, TOPICAL, 10, True, 40)
        qr = got.query_results[0]
        assert qr.rounds <= 2, (qr.rounds, qr.stop_reason)
        assert "slots settled" in qr.stop_reason
        full = _find(c, TOPICAL, 10, False, UNBOUNDED)
        assert full.query_results[0].stop_reason == "heap empty"
        assert len(got.resources) == 10
        assert _signature(got) == _signature(full)
        many = c.find_many([TOPICAL, "gamma delta"], limit=10)
        assert _signature(many[0]) == _signature(got)
    finally:
        c.close()


# ------------------------------------------- 4. a message's role and speaker as they are
@pytest.mark.parametrize("role", [0, False, [], {}, 0.0, b"user"])
def test_a_role_that_is_not_a_role_is_refused(tmp_path: Path, role: object) -> None:
    """``role or "user"`` took any false value (0, False, [], {}) for the default role: a
    message whose role was not a role was stored as the user's."""
    c = _client(tmp_path)
    try:
        with pytest.raises(InvalidQueryError):
            c.add_messages([{"content": "fine"}, {"content": "hello there", "role": role}])
        assert not [u for u in _uris(c) if "turn-" in u]
        # (a missing or empty role is still the default)
        res = c.add_messages([{"content": "a", "role": None}, {"content": "b", "role": ""}])
        assert len(res.turn_uris) == 2
    finally:
        c.close()


@pytest.mark.parametrize("speaker", [0, False, [], "Ann\x7fBob", "Ann\x85Bob", "Ann\u2028Bob"])
def test_a_speaker_that_is_not_a_name_is_refused(tmp_path: Path, speaker: object) -> None:
    """A false speaker (0, False, []) was taken for the role; DEL, C1 controls and line
    separators passed the speaker check, which refused only C0 controls."""
    c = _client(tmp_path)
    try:
        with pytest.raises(InvalidQueryError):
            c.add_messages([{"content": "hello there", "speaker": speaker}])
        with pytest.raises(InvalidQueryError):
            c.remember("a note", speaker=speaker)  # type: ignore[arg-type]
        assert not [u for u in _uris(c) if "turn-" in u or "notes" in u]
    finally:
        c.close()


# ------------------------------------- 5. a caller's extractor: its failures are reported
class _Extractor:
    """A caller's :class:`~treehop.memory.MemoryExtractor` answering ``answer`` (a callable
    run inside ``extract``)."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer

    async def extract(self, turns: Any) -> Any:
        return self.answer()


def _raises() -> Any:
    raise ValueError("the model said no: api_key=sk-abcdefghijklmnopqrstuvwx")


BAD_ANSWERS = {
    "raises": _raises,
    "none": lambda: None,
    "summary-int": lambda: (123, ["a fact"]),
    "facts-str": lambda: ("a summary", "abc"),
    "facts-ints": lambda: ("a summary", [1, 2]),
    "fact-surrogate": lambda: ("a summary", ["\ud800"]),
    "summary-surrogate": lambda: ("\ud800", []),
    "three-values": lambda: ("a summary", [], 1),
    "fact-too-long": lambda: ("a summary", ["x" * 20_001]),
    "summary-too-long": lambda: ("x" * 20_001, []),
    "too-many-facts": lambda: ("a summary", ["a fact"] * 1_001),
}


@pytest.mark.parametrize("name", sorted(BAD_ANSWERS))
def test_an_extractors_failure_is_reported_never_raised(tmp_path: Path, name: str) -> None:
    """``_extract`` caught only ``TreehopError``: a caller's extractor that raised its own
    exception, or answered anything but a summary and a list of facts, passed a raw
    ``ValueError`` / ``TypeError`` / ``UnicodeEncodeError`` out of ``add_messages`` after
    its turns were written; ``"abc"`` as the facts wrote three facts ``a``, ``b``, ``c``.
    Now the turns stay, the result says why the extraction did not happen (redacted), and
    nothing of the answer is written."""
    c = _client(tmp_path)
    try:
        res = c.add_messages([{"content": "hello there"}], extractor=_Extractor(BAD_ANSWERS[name]))
        assert res.extraction_error, name
        assert "sk-abcdefghijklmnopqrstuvwx" not in res.extraction_error
        assert res.fact_uris == [] and res.summary is None
        assert len(res.turn_uris) == 1
        assert not [u for u in _uris(c) if "fact-" in u]
    finally:
        c.close()


def test_an_extractor_without_extract_is_refused_before_any_write(tmp_path: Path) -> None:
    c = _client(tmp_path)
    try:
        with pytest.raises(InvalidQueryError):
            c.add_messages([{"content": "hello there"}], extractor=object())  # type: ignore[arg-type]
        assert not [u for u in _uris(c) if "turn-" in u]
        # (a good answer as a list is still taken)
        ok = _Extractor(lambda: ["a summary", ["Ann likes tea."]])
        res = c.add_messages([{"content": "hello there"}], extractor=ok)
        assert res.extraction_error is None and len(res.fact_uris) == 1
    finally:
        c.close()


# ----------------------------- 6. an extraction's write describes the session as it is
def test_an_extraction_describes_the_turns_appended_while_it_ran(tmp_path: Path) -> None:
    """The extraction runs after the conversation's lock is released (a model call may be
    slow) and then rewrote the session node from the turns it was given: an append to the
    session meanwhile left the node saying 1 turn (and one speaker) where 2 were stored,
    until the next append. Its write now takes the lock and describes the stored turns."""
    import asyncio

    from treehop import AsyncTreehop

    async def run() -> None:
        async with AsyncTreehop(tmp_path / "a", embedder=BagOfWordsEmbedder(), tagger=None) as a:

            class Meanwhile:
                async def extract(self, turns: Any) -> tuple[str, list[str]]:
                    await a.add_messages([{"content": "me too", "speaker": "Bob"}], session_id="s")
                    return "They talked.", ["Ann said hello."]

            res = await a.add_messages(
                [{"content": "hello there", "speaker": "Ann"}],
                session_id="s",
                extractor=Meanwhile(),
            )
            assert res.extraction_error is None and len(res.fact_uris) == 1
            sess = a.resolve("viking://~/memories/conversations/default/s")
            node = (await a._io(a.store.get, [sess]))[0]
            assert node is not None
            assert node.metadata["turns"] == 2, node.metadata
            assert node.metadata["speakers"] == ["Ann", "Bob"]
            assert node.metadata["summary"] == "They talked."
            # (and the next append numbers after both)
            more = await a.add_messages([{"content": "bye"}], session_id="s")
            assert more.turn_uris[0].endswith("turn-00002")

    asyncio.run(run())


def test_an_extraction_for_a_session_removed_meanwhile_writes_nothing(tmp_path: Path) -> None:
    import asyncio

    from treehop import AsyncTreehop

    async def run() -> None:
        async with AsyncTreehop(tmp_path / "a", embedder=BagOfWordsEmbedder(), tagger=None) as a:
            sess = "viking://~/memories/conversations/default/s"

            class Removes:
                async def extract(self, turns: Any) -> tuple[str, list[str]]:
                    await a.remove(sess)
                    return "They talked.", ["Ann said hello."]

            res = await a.add_messages(
                [{"content": "hello there"}], session_id="s", extractor=Removes()
            )
            assert res.extraction_error and res.fact_uris == []
            assert (await a._io(a.store.get, [a.resolve(sess)]))[0] is None

    asyncio.run(run())


# ---------------------------------------- 7. two unnamed notes of one time are two notes
def test_unnamed_notes_of_the_same_time_are_all_kept(tmp_path: Path) -> None:
    """An unnamed note is ``note-<epoch ms>``: a second ``remember`` with the same
    timestamp (two facts of one day, ``timestamp="2023-05-08"``, or two calls in one
    millisecond) replaced the first, which was lost. A taken name now gets a suffix."""
    import threading

    c = _client(tmp_path)
    try:
        first = c.remember("Ann likes tea", timestamp="2023-05-08")
        second = c.remember("Bob likes coffee", timestamp="2023-05-08")
        assert first.turn_uris == ["viking://~/memories/notes/note-1683504000000"]
        assert second.turn_uris != first.turn_uris
        errors: list[BaseException] = []

        def note(i: int) -> None:
            try:
                c.remember(f"Cy likes fact {i}", timestamp="2023-05-09")
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=note, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors
        notes = [
            n.content
            for n in c.store.iter_nodes()
            if "/memories/notes/" in n.uri and n.is_leaf  # type: ignore[attr-defined]
        ]
        assert sorted(notes) == sorted(
            ["Ann likes tea", "Bob likes coffee", *(f"Cy likes fact {i}" for i in range(4))]
        )
        # (a named note is still replaced by its name)
        c.remember("v1", name="pref")
        c.remember("v2", name="pref")
        assert [n.content for n in c.store.iter_nodes() if n.uri.endswith("/pref")] == ["v2"]  # type: ignore[attr-defined]
    finally:
        c.close()


# --------------------------- 8. a memory's name never replaces a directory of memories
def _memory_counts(c: Treehop) -> tuple[int, int]:
    nodes = list(c.store.iter_nodes())  # type: ignore[attr-defined]
    return (
        sum(1 for n in nodes if "/turn-" in n.uri),
        sum(1 for n in nodes if "/memories/notes/" in n.uri),
    )


@pytest.mark.parametrize(
    "name", ["conversations", "notes", "conversations/c1", "conversations/default/s"]
)
def test_add_memory_by_a_directorys_name_replaces_nothing(tmp_path: Path, name: str) -> None:
    """``add_memory(text, name="conversations")`` is an ``add_resource`` of the text at
    ``~/memories/conversations``: it deleted every conversation (turns and sessions);
    ``name="notes"`` every remembered note. A name is now refused where it names a
    directory, or lies in the conversations' subtree (add_messages' own), before any write."""
    c = _client(tmp_path)
    try:
        c.add_messages([{"content": f"hello {i}"} for i in range(3)], session_id="s")
        c.remember("Ann likes tea", name="tea")
        before = _memory_counts(c)
        with pytest.raises(InvalidQueryError):
            c.add_memory("clobbering text", name=name)
        assert _memory_counts(c) == before == (3, 1)
        # (a memory's own name is replaced as before, a long, chunked one too)
        c.add_memory("a long memory text. " * 400, name="long")
        c.add_memory("a long memory text again. " * 400, name="long")
    finally:
        c.close()


@pytest.mark.parametrize(("category", "name"), [("conversations", "c1"), ("store", "users")])
def test_remember_never_replaces_a_directory(tmp_path: Path, category: str, name: str) -> None:
    """``remember(..., category="conversations", name="default")`` turned the conversation
    directory into a leaf note (its sessions under a leaf until the next append, which then
    lost the note); a note named like an existing directory is refused, and the
    conversations' category is add_messages' own."""
    c = _client(tmp_path)
    try:
        c.add_messages([{"content": "hello there"}], session_id="s")
        c.add_memory("a store item", name="store/users/u1")
        with pytest.raises(InvalidQueryError):
            c.remember("clobber", category="conversations", name="default")
        with pytest.raises(InvalidQueryError):
            c.remember("clobber", category=category, name=name)
        node = c.store.get(["viking://user/default/memories/conversations/default"])[0]
        assert node is not None and not node.is_leaf
    finally:
        c.close()


def test_unnamed_memories_added_at_once_are_all_kept(tmp_path: Path) -> None:
    """An unnamed memory is ``memory-<epoch ms>``: calls in one millisecond (6 threads: 3
    kept) replaced each other. A taken name now gets a suffix, chosen under a lock."""
    import threading

    c = _client(tmp_path)
    try:
        errors: list[BaseException] = []

        def add(i: int) -> None:
            try:
                c.add_memory(f"memory text number {i}")
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=add, args=(i,)) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors
        texts = {
            n.content
            for n in c.store.iter_nodes()  # type: ignore[attr-defined]
            if "/memories/memory-" in n.uri and n.is_leaf
        }
        assert texts == {f"memory text number {i}" for i in range(6)}
    finally:
        c.close()


# ------------------------------------------------------- 9. a text re-added: its counts
def test_a_text_readded_counts_no_negative_unchanged(tmp_path: Path) -> None:
    """A text added again at its target (``add_memory`` by name, ``add_resource`` of a
    text) reported ``unchanged=-11``: the count subtracted the nodes it had replaced, a
    term meant for a directory's files skipped unread (``old_uris``), which a text has not."""
    c = _client(tmp_path)
    try:
        first = c.add_memory("a long memory text. " * 400, name="long")
        again = c.add_memory("a long memory text. " * 400, name="long")
        other = c.add_memory("another long memory text. " * 400, name="long")
        assert first.unchanged == 0 and again.unchanged >= 0
        assert other.embedded > 0 and other.unchanged >= 0, other
    finally:
        c.close()


# ----------------------------- 10. the document penalty's order: no re-push per choice
def _spread_lazy(
    scores: list[float], documents: list[str], penalty: float, first: int | None = None
) -> tuple[list[int], list[float]]:
    """``chunk_window.spread_over_documents`` as it was (a lazy heap of every slot): the
    reference the new one must equal."""
    import heapq

    n = len(scores)
    if penalty <= 0 or n < 2:
        return list(range(n)), [float(s) for s in scores]
    k = n if first is None else max(0, min(first, n))
    held: dict[str, int] = {}
    heap = [(-float(s), i, 0) for i, s in enumerate(scores)]
    heapq.heapify(heap)
    order: list[int] = []
    adjusted: list[float] = []
    while heap and len(order) < k:
        neg, i, seen = heapq.heappop(heap)
        now = held.get(documents[i], 0)
        if now != seen:
            heapq.heappush(heap, (-(float(scores[i]) - penalty * now), i, now))
            continue
        order.append(i)
        adjusted.append(-neg)
        held[documents[i]] = now + 1
    if heap:
        rest = sorted(
            (-(float(scores[i]) - penalty * held.get(documents[i], 0)), i) for _, i, _ in heap
        )
        order.extend(i for _, i in rest)
        adjusted.extend(-neg for neg, _ in rest)
    return order, adjusted


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    scores=st.lists(
        st.sampled_from([1.0, 0.9, 0.85, 0.8, 0.5, 0.49, 0.2, 0.0, -0.1]), min_size=0, max_size=40
    ),
    docs=st.lists(st.sampled_from("abcd"), min_size=40, max_size=40),
    penalty=st.sampled_from([0.0, 0.01, 0.05, 0.1, 0.3, 1.0]),
    first=st.one_of(st.none(), st.integers(0, 45)),
    ordered=st.booleans(),
)
def test_spread_over_documents_equals_the_lazy_heap(
    scores: list[float], docs: list[str], penalty: float, first: int | None, ordered: bool
) -> None:
    from treehop.chunk_window import spread_over_documents

    if ordered:
        scores = sorted(scores, reverse=True)
    documents = docs[: len(scores)]
    assert spread_over_documents(scores, documents, penalty, first) == _spread_lazy(
        scores, documents, penalty, first
    )


def test_spread_over_one_document_pops_each_slot_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """One document of 4,000 close slots, 1,000 chosen: each choice re-pushed every slot
    still within the penalty of the best (15.3M heap pops over one limit-1,000 question find
    of bench_paging_pathology's 16,000 entries: 9 s against 1.2 s with the stop rule by
    slots off, which asks it at each try)."""
    import heapq

    from treehop import chunk_window

    pops = [0]
    real = heapq.heappop

    def counting(heap: list[Any]) -> Any:
        pops[0] += 1
        return real(heap)

    monkeypatch.setattr(chunk_window.heapq, "heappop", counting)
    scores = [1.0 - i * 1e-6 for i in range(4_000)]
    order, _ = chunk_window.spread_over_documents(scores, ["d"] * 4_000, 0.05, 1_000)
    assert order == list(range(4_000))
    assert pops[0] <= 4_000, pops[0]
