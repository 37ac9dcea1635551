"""Sessions: messages, folding into a summary (model or extractive), persistence, safety."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence

import pytest

from treehop.errors import (
    IndexCorruptError,
    InvalidQueryError,
    InvalidURIError,
    NotFoundError,
    SessionNotFoundError,
)
from treehop.llm import BaseLLM, ChatMessage
from treehop.sessions import MemoryState, SessionStore, extractive_summary


class BlobState:
    """A put/get state object that is not MemoryState (any object with the two methods)."""

    def __init__(self) -> None:
        self.blobs: dict[str, bytes] = {}
        self.puts = 0

    def get_state(self, key: str) -> bytes | None:
        return self.blobs.get(key)

    def put_state(self, key: str, value: bytes) -> None:
        assert isinstance(value, bytes)
        self.puts += 1
        self.blobs[key] = value


class SummaryLLM(BaseLLM):
    """Summarises by counting what it was asked to fold; records prompts."""

    name = "fake-summarizer"

    def __init__(self, fail: bool = False, delay_s: float = 0.0) -> None:
        self.fail = fail
        self.delay_s = delay_s
        self.prompts: list[str] = []

    def complete(self, messages: Sequence[ChatMessage], *, json_mode: bool = False) -> str:
        self.prompts.append(messages[-1].content)
        if self.fail:
            raise RuntimeError("model down")
        n = messages[-1].content.count("[user] ")
        return f"LLM SUMMARY #{len(self.prompts)} ({n} messages)"

    async def acomplete(self, messages: Sequence[ChatMessage], *, json_mode: bool = False) -> str:
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        return self.complete(messages, json_mode=json_mode)


def test_create_add_get_and_context() -> None:
    store = SessionStore()
    sid = store.create_session("alice")
    assert len(sid) == 32
    store.add_message(sid, "user", "I am writing an RFC about OAuth.")
    m = store.add_message(sid, "assistant", "Great, which section first?")
    assert m.seq == 1
    s = store.get(sid)
    assert s.user == "alice"
    assert [x.role for x in s.messages] == ["user", "assistant"]
    summary, recent = store.context_for_intent(sid)
    assert summary == ""
    assert [x.content for x in recent] == [
        "I am writing an RFC about OAuth.",
        "Great, which section first?",
    ]


def test_context_gives_last_five_messages() -> None:
    store = SessionStore(max_messages=20)
    sid = store.create_session()
    for i in range(9):
        store.add_message(sid, "user" if i % 2 == 0 else "assistant", f"message {i}")
    _, recent = store.context_for_intent(sid)
    assert [m.content for m in recent] == [f"message {i}" for i in range(4, 9)]


def test_get_returns_a_copy() -> None:
    store = SessionStore()
    sid = store.create_session()
    store.add_message(sid, "user", "hello")
    copy = store.get(sid)
    copy.messages.clear()
    copy.summary = "tampered"
    assert len(store.get(sid).messages) == 1
    assert store.get(sid).summary == ""


def test_errors_are_typed() -> None:
    store = SessionStore()
    sid = store.create_session()
    with pytest.raises(NotFoundError):
        store.get("0" * 32)
    with pytest.raises(NotFoundError):
        store.add_message("nope", "user", "x")
    with pytest.raises(InvalidQueryError, match="role"):
        store.add_message(sid, "robot", "x")
    with pytest.raises(InvalidQueryError):
        store.add_message(sid, "user", "   ")
    with pytest.raises(InvalidQueryError):
        store.add_message(sid, "user", 42)  # type: ignore[arg-type]
    with pytest.raises(InvalidURIError):
        store.create_session("../evil")
    with pytest.raises(InvalidQueryError):
        SessionStore(max_messages=10, keep_recent=11)
    assert store.get(sid).messages == []  # failed adds changed nothing


def test_extractive_fold_without_llm() -> None:
    store = SessionStore(max_messages=6, keep_recent=3)
    sid = store.create_session()
    for i in range(7):
        store.add_message(sid, "user", f"Point number {i} matters. Details follow here.")
    s = store.get(sid)
    # 7 > 6 held: the oldest 4 were folded so that 3 remain.
    assert [m.seq for m in s.messages] == [4, 5, 6]
    assert s.folded_count == 4
    assert s.message_count == 7
    assert s.summary_method == "extractive"
    assert s.summary_fallback_reason is None
    assert s.summary.splitlines() == [f"user: Point number {i} matters." for i in range(4)]
    assert "Details follow" not in s.summary  # first sentence only


def test_extractive_summary_is_bounded_and_keeps_newest() -> None:
    folded = [
        ChatMessage(role="user", content=f"Fact {i:03d} is important. More.") for i in range(200)
    ]
    text = extractive_summary("", folded, max_chars=300)
    assert len(text) <= 300
    assert text.splitlines()[-1] == "user: Fact 199 is important."
    assert "Fact 000" not in text
    # Chinese sentence ends need no following space.
    zh = extractive_summary("", [ChatMessage(role="user", content="帮我写RFC。然后发给团队。")])
    assert zh == "user: 帮我写RFC。"
    # A decimal point is not a sentence end.
    assert extractive_summary("", [ChatMessage(role="user", content="Use v3.14 now. Ok.")]) == (
        "user: Use v3.14 now."
    )


def test_summary_stays_bounded_over_a_long_conversation() -> None:
    store = SessionStore(max_messages=10, keep_recent=5, max_summary_chars=400)
    sid = store.create_session()
    for i in range(300):
        store.add_message(sid, "user", f"Turn {i} mentions project-{i}. Filler text.")
    s = store.get(sid)
    assert len(s.summary) <= 400
    assert s.folded_count > 280
    assert f"project-{s.folded_count - 1}." in s.summary  # the newest folded turn is kept
    assert "project-0." not in s.summary  # the oldest were dropped to stay bounded
    assert s.messages[0].seq == s.folded_count
    assert len(s.messages) <= 10


def test_llm_fold_sync() -> None:
    llm = SummaryLLM()
    store = SessionStore(llm=llm, max_messages=4, keep_recent=2)
    sid = store.create_session()
    for i in range(5):
        store.add_message(sid, "user", f"msg {i}")
    s = store.get(sid)
    assert s.summary_method == "llm"
    assert s.summary == "LLM SUMMARY #1 (3 messages)"
    assert [m.content for m in s.messages] == ["msg 3", "msg 4"]
    assert "[user] msg 0" in llm.prompts[0] and "[user] msg 2" in llm.prompts[0]
    assert "msg 3" not in llm.prompts[0]
    # The next fold passes the previous summary to the model.
    for i in range(5, 8):
        store.add_message(sid, "user", f"msg {i}")
    assert "LLM SUMMARY #1" in llm.prompts[1]
    assert store.get(sid).summary.startswith("LLM SUMMARY #2")


async def test_llm_fold_async() -> None:
    llm = SummaryLLM(delay_s=0.01)
    store = SessionStore(llm=llm, max_messages=4, keep_recent=2)
    sid = store.create_session()
    for i in range(5):
        await store.aadd_message(sid, "user", f"msg {i}")
    s = store.get(sid)
    assert s.summary_method == "llm"
    assert s.folded_count == 3
    assert len(llm.prompts) == 1


async def test_llm_failure_and_timeout_fall_back_to_extractive() -> None:
    store = SessionStore(llm=SummaryLLM(fail=True), max_messages=2, keep_recent=1)
    sid = store.create_session()
    for i in range(3):
        await store.aadd_message(sid, "user", f"Sentence {i}. Tail.")
    s = store.get(sid)
    assert s.summary_method == "extractive"
    assert s.summary_fallback_reason is not None and "model down" in s.summary_fallback_reason
    assert "Sentence 0." in s.summary

    slow = SessionStore(
        llm=SummaryLLM(delay_s=2.0), max_messages=2, keep_recent=1, summary_timeout_s=0.1
    )
    sid = slow.create_session()
    for i in range(3):
        await slow.aadd_message(sid, "user", f"Sentence {i}. Tail.")
    s = slow.get(sid)
    assert s.summary_method == "extractive"
    assert s.summary_fallback_reason == "timeout after 0.1s"


async def test_messages_added_during_a_fold_are_kept() -> None:
    llm = SummaryLLM(delay_s=0.2)
    store = SessionStore(llm=llm, max_messages=4, keep_recent=2)
    sid = store.create_session()
    for i in range(4):
        await store.aadd_message(sid, "user", f"msg {i}")
    # The 5th message starts a slow fold; 3 more arrive while it runs.
    folding = asyncio.create_task(store.aadd_message(sid, "user", "msg 4"))
    await asyncio.sleep(0.05)
    for i in range(5, 8):
        await store.aadd_message(sid, "user", f"msg {i}")
    await folding
    s = store.get(sid)
    # Exactly the batch chosen at fold time was folded; every later message survives.
    assert s.folded_count == 3
    assert [m.content for m in s.messages] == [f"msg {i}" for i in range(3, 8)]
    assert len(llm.prompts) == 1  # no second fold of the same messages while the first ran


class FoldRacingLLM(SummaryLLM):
    """While it writes a summary, another process (a second store on the same state) appends
    a message to the session and folds it first."""

    def __init__(self, other: SessionStore, session_id: str) -> None:
        super().__init__()
        self.other = other
        self.session_id = session_id

    def complete(self, messages: Sequence[ChatMessage], *, json_mode: bool = False) -> str:
        self.other.add_message(self.session_id, "user", "from the other process")
        return super().complete(messages, json_mode=json_mode)


def test_a_fold_another_process_made_first_is_not_applied_twice() -> None:
    """Each store's in-progress folds are its own (``_folding``): two processes could fold
    the same oldest messages, and the second fold counted them again (a CI run: folded_count
    56 with 15 kept, of 60 appended) and replaced the first's summary."""
    state = MemoryState()
    other = SessionStore(state, max_messages=4, keep_recent=2)
    sid = other.create_session()
    racing = FoldRacingLLM(other, sid)
    store = SessionStore(state, llm=racing, max_messages=4, keep_recent=2)
    for i in range(5):
        store.add_message(sid, "user", f"msg {i}")
    assert len(racing.prompts) == 1  # the fold that lost the race did run
    s = SessionStore(state).get(sid)
    assert s.next_seq == 6
    assert s.folded_count + len(s.messages) == 6
    assert s.folded_count == 4
    assert [m.content for m in s.messages] == ["msg 4", "from the other process"]
    # The summary is the fold that was applied (the other store's, extractive), and it
    # holds every folded message.
    assert s.summary_method == "extractive"
    assert all(f"msg {i}" in s.summary for i in range(4))


def test_persists_and_reloads_through_state_object() -> None:
    state = BlobState()
    store = SessionStore(state, max_messages=4, keep_recent=2)
    a = store.create_session("alice")
    b = store.create_session("bob")
    for i in range(5):
        store.add_message(a, "user", f"Alice says {i}. More.")
    store.add_message(b, "assistant", "Hello Bob.")
    assert state.puts > 0

    reloaded = SessionStore(state)
    sa = reloaded.get(a)
    assert sa.folded_count == 3
    assert [m.content for m in sa.messages] == ["Alice says 3. More.", "Alice says 4. More."]
    assert sa.summary == store.get(a).summary != ""
    assert [s.session_id for s in reloaded.list_sessions()] == [a, b]
    assert [s.session_id for s in reloaded.list(user="bob")] == [b]
    # A reloaded store keeps appending with the right sequence numbers.
    assert reloaded.add_message(a, "user", "next").seq == 5


def test_delete_forgets_and_scrubs() -> None:
    state = MemoryState()
    store = SessionStore(state)
    sid = store.create_session()
    store.add_message(sid, "user", "secret plan")
    store.delete(sid)
    with pytest.raises(NotFoundError):
        store.get(sid)
    with pytest.raises(NotFoundError):
        store.delete(sid)
    assert state.get_state(f"sessions/{sid}") == b""
    assert SessionStore(state).list_sessions() == []


def test_corrupt_index_is_typed_error_when_strict_else_rebuilt_loudly() -> None:
    from treehop.errors import RecoveryWarning

    state = MemoryState()
    kept = SessionStore(state).create_session()
    state.put_state("sessions/_index", b"{not json")
    with pytest.raises(IndexCorruptError):
        SessionStore(state, strict=True)
    with pytest.warns(RecoveryWarning):
        rebuilt = SessionStore(state)
    assert rebuilt.get(kept).session_id == kept and rebuilt.recovery is not None


def test_state_object_must_have_both_methods() -> None:
    with pytest.raises(TypeError):
        SessionStore(object())  # type: ignore[arg-type]


def test_thread_safe_concurrent_adds() -> None:
    store = SessionStore(max_messages=1000)
    sid = store.create_session()

    def worker(t: int) -> None:
        for i in range(50):
            store.add_message(sid, "user", f"t{t}-{i}")

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    s = store.get(sid)
    assert len(s.messages) == 400
    assert sorted(m.seq for m in s.messages) == list(range(400))
    assert len({m.content for m in s.messages}) == 400


# -- sessions belong to their user ---------------------------------------------------------------


def test_a_user_bound_view_treats_other_users_sessions_as_missing() -> None:
    store = SessionStore()
    alice_sid = store.create_session("alice")
    store.add_message(alice_sid, "user", "my bank pin is 4321", user="alice")
    bob = store.for_user("bob")
    bob_sid = bob.create_session()
    missing = "f" * 32
    for call in (
        bob.get,
        bob.delete,
        bob.context_for_intent,
        lambda s: bob.add_message(s, "user", "hi"),
    ):
        with pytest.raises(NotFoundError) as theirs:
            call(alice_sid)
        with pytest.raises(NotFoundError) as absent:
            call(missing)
        assert str(theirs.value).replace(alice_sid, "X") == str(absent.value).replace(missing, "X")
        # one class for both too (no oracle), the one a caller tells from a missing URI by
        assert type(theirs.value) is type(absent.value) is SessionNotFoundError
    assert [s.session_id for s in bob.list_sessions()] == [bob_sid]
    assert bob.list_sessions(user="alice") == []
    with pytest.raises(InvalidQueryError):
        bob.create_session("alice")
    # Alice's session is untouched and still hers.
    alice = store.for_user("alice")
    assert alice.get(alice_sid).messages[0].content == "my bank pin is 4321"
    assert [s.session_id for s in alice.list_sessions()] == [alice_sid]


async def test_async_add_message_checks_the_user() -> None:
    store = SessionStore()
    sid = store.create_session("alice")
    with pytest.raises(NotFoundError):
        await store.for_user("bob").aadd_message(sid, "user", "hello")
    assert store.get(sid).messages == []


def test_session_content_must_be_valid_unicode() -> None:
    store = SessionStore()
    sid = store.create_session("alice")
    with pytest.raises(InvalidQueryError):
        store.add_message(sid, "user", "bad \ud800 text")
    with pytest.raises(InvalidQueryError):
        store.add_message(sid, 5, "text")  # type: ignore[arg-type]
