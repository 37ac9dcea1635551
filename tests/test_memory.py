"""The memory write path: conversation → session → turn nodes, time filters, the optional LLM
extractor (over a fake OpenAI server on loopback HTTP) that never loses the raw turns."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from treehop import LLMMemoryExtractor, MetadataFilter, Treehop
from treehop.errors import InvalidFilterError, InvalidQueryError
from treehop.llm import OpenAICompatibleLLM
from treehop.timestamps import time_range_filter, to_epoch

from fake_servers.openai_chat import FakeOpenAIChatServer, Reply
from treehop_test_doubles import BagOfWordsEmbedder

CONV = "viking://~/memories/conversations/trip"
MAY = datetime(2023, 5, 8, 13, 56, tzinfo=UTC).timestamp()
JUNE = datetime(2023, 6, 20, 9, 0, tzinfo=UTC).timestamp()


@pytest.fixture
def client() -> Treehop:
    c = Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None)
    c.add_messages(
        [
            {"speaker": "Caroline", "content": "I went to a support group yesterday."},
            {"speaker": "Melanie", "content": "I painted a sunrise over the lake."},
        ],
        conversation_id="trip",
        session_id="session-1",
        session_time=MAY,
    )
    c.add_messages(
        [{"speaker": "Caroline", "content": "I adopted a puppy, she loves the lake."}],
        conversation_id="trip",
        session_id="session-2",
        session_time=JUNE,
    )
    return c


def test_structure_speakers_and_timestamps(client: Treehop) -> None:
    assert [e.uri for e in client.ls(CONV)] == [f"{CONV}/session-1", f"{CONV}/session-2"]
    turns = client.ls(f"{CONV}/session-1")
    assert [e.uri.rsplit("/", 1)[1] for e in turns] == ["turn-00000", "turn-00001"]
    node = client.stat(f"{CONV}/session-1/turn-00001")
    # the day it was said heads the turn text (add_messages(dated_text=True), the default)
    assert node.content == "(8 May 2023) Melanie: I painted a sunrise over the lake."
    assert node.metadata["speaker"] == "Melanie"
    assert node.metadata["timestamp"] == MAY
    assert node.metadata["conversation"] == "trip"
    session = client.stat(f"{CONV}/session-1")
    assert session.metadata["speakers"] == ["Caroline", "Melanie"]
    assert session.metadata["timestamp"] == MAY
    assert "2023-05-08" in session.abstract
    assert "Melanie: I painted a sunrise over the lake." in session.overview


def test_appending_continues_the_session_deterministically(client: Treehop) -> None:
    before = client.stat(f"{CONV}/session-1/turn-00000")
    res = client.add_messages(
        [{"role": "assistant", "content": "Noted.", "timestamp": "2023-05-08T14:00:00Z"}],
        conversation_id="trip",
        session_id="session-1",
    )
    assert res.turn_uris == [f"{CONV}/session-1/turn-00002"]
    assert client.stat(f"{CONV}/session-1/turn-00000") == before
    added = client.stat(f"{CONV}/session-1/turn-00002")
    assert added.content == "(8 May 2023) assistant: Noted."
    assert added.metadata["role"] == "assistant"
    assert client.stat(f"{CONV}/session-1").metadata["turns"] == 3
    # no session id: the next free one
    res = client.add_messages([{"content": "hello"}], conversation_id="trip", session_time=0)
    assert res.session_id == "session-0002"


def test_since_until_on_find_and_search(client: Treehop) -> None:
    hits = client.find("lake", target_uri="viking://~/memories", include_directories=False)
    assert {m.uri.rsplit("/", 2)[1] for m in hits.contexts()} == {"session-1", "session-2"}
    june = client.find(
        "lake", target_uri="viking://~/memories", since="2023-06-01", include_directories=False
    )
    assert [m.uri for m in june.contexts()] == [f"{CONV}/session-2/turn-00000"]
    may = client.find("lake", until=datetime(2023, 6, 1, tzinfo=UTC), include_directories=False)
    assert {m.uri for m in may.contexts()} <= {
        f"{CONV}/session-1/turn-00000",
        f"{CONV}/session-1/turn-00001",
    }
    assert may.contexts()
    # the half-open window: until excludes the exact instant
    exact = client.find("lake", since=MAY, until=MAY + 1, include_directories=False)
    assert exact.contexts() and all("session-1" in m.uri for m in exact.contexts())
    between = client.find("lake", since=MAY + 1, until=JUNE, include_directories=False)
    assert between.contexts() == []
    searched = client.search("lake", since="2023-06-01")
    assert searched.memories and all(
        m.metadata.get("timestamp", 0) >= to_epoch("2023-06-01") for m in searched.memories
    )
    # the DSL's time op is the same window, and combines with other filters
    dsl = client.find(
        "lake",
        filter={
            "op": "and",
            "conds": [
                {"op": "time", "since": "2023-06-01"},
                {"op": "must", "field": "speaker", "conds": ["Caroline"]},
            ],
        },
        include_directories=False,
    )
    assert [m.uri for m in dsl.contexts()] == [f"{CONV}/session-2/turn-00000"]


def test_time_filter_validation() -> None:
    with pytest.raises(InvalidQueryError):
        time_range_filter("2024-01-02", "2024-01-01")
    with pytest.raises(InvalidQueryError):
        to_epoch("yesterday")
    with pytest.raises(InvalidQueryError):
        to_epoch(float("nan"))
    with pytest.raises(InvalidQueryError):
        to_epoch(True)
    for bad in (
        {"op": "time"},
        {"op": "time", "since": "soon"},
        {"op": "time", "since": 1, "bogus": 2},
        {"op": "time", "field": "", "since": 1},
        {"op": "or", "conds": [{"op": "time", "until": "x"}]},
    ):
        with pytest.raises(InvalidFilterError):
            MetadataFilter.parse(bad)
    f = MetadataFilter.parse({"op": "time", "since": "1970-01-01T00:01:00Z", "until": 120})
    assert f is not None and f.spec == {
        "op": "range",
        "field": "timestamp",
        "gte": 60.0,
        "lt": 120.0,
    }
    assert f.matches({"timestamp": 60}) and not f.matches({"timestamp": 120})
    assert not f.matches({})


@given(st.datetimes(timezones=st.just(UTC)))
def test_iso_and_datetime_agree(dt: datetime) -> None:
    assert to_epoch(dt.isoformat()) == pytest.approx(to_epoch(dt))
    assert to_epoch(dt.isoformat().replace("+00:00", "Z")) == pytest.approx(dt.timestamp())


def test_whole_call_validated_before_any_write(client: Treehop) -> None:
    n = len(client.store)
    bad_calls = [
        ([{"content": "ok"}, {"content": ""}], {}),
        ([{"content": "ok"}, {"content": "x", "role": "robot"}], {}),
        ([{"content": "ok"}, {"content": "x", "speaker": "a:b"}], {}),
        ([{"content": "ok"}, {"content": "x", "timestamp": "later"}], {}),
        ([{"content": "ok"}], {"conversation_id": "../etc"}),
        ([{"content": "ok"}], {"session_id": "a/b"}),
        ([], {}),
        ("just a string", {}),
    ]
    for messages, kw in bad_calls:
        with pytest.raises(InvalidQueryError):
            client.add_messages(messages, **kw)
    assert len(client.store) == n


def _extractor(srv: FakeOpenAIChatServer) -> LLMMemoryExtractor:
    llm = OpenAICompatibleLLM(
        "fake-model", base_url=srv.base_url, api_key="sk-test", max_retries=0, timeout_s=5
    )
    return LLMMemoryExtractor(llm)


def test_llm_extractor_writes_summary_and_facts_on_top(client: Treehop) -> None:
    answer = {
        "summary": "Caroline adopted a puppy in June 2023.",
        "facts": ["Caroline adopted a puppy in June 2023.", "The puppy loves the lake."],
    }
    with FakeOpenAIChatServer(default=Reply.chat(json.dumps(answer))) as srv:
        res = client.add_messages(
            [{"speaker": "Caroline", "content": "Her name is Luna."}],
            conversation_id="trip",
            session_id="session-2",
            extractor=_extractor(srv),
        )
        prompt = srv.requests[-1].body["messages"][1]["content"]
    assert "Caroline: I adopted a puppy, she loves the lake." in prompt
    assert "Caroline: Her name is Luna." in prompt
    assert res.extraction_error is None
    assert res.summary == answer["summary"]
    assert res.fact_uris == [f"{CONV}/session-2/fact-00000", f"{CONV}/session-2/fact-00001"]
    fact = client.stat(res.fact_uris[0])
    assert fact.content == answer["facts"][0] and fact.metadata["kind"] == "fact"
    assert fact.metadata["timestamp"] == JUNE
    session = client.stat(f"{CONV}/session-2")
    assert answer["summary"] in session.abstract
    # the raw turns are all still there
    kinds = [client.stat(e.uri).metadata["kind"] for e in client.ls(f"{CONV}/session-2")]
    assert kinds.count("turn") == 2 and kinds.count("fact") == 2
    # appending keeps the summary until the extractor runs again
    client.add_messages([{"content": "bye"}], conversation_id="trip", session_id="session-2")
    assert answer["summary"] in client.stat(f"{CONV}/session-2").abstract


@pytest.mark.parametrize(
    "reply",
    [Reply.error(500, "boom"), Reply.chat("not json at all"), Reply.chat('{"facts": "x"}')],
)
def test_llm_failure_never_loses_turns(client: Treehop, reply: Reply) -> None:
    with FakeOpenAIChatServer(default=reply) as srv:
        res = client.add_messages(
            [{"speaker": "Melanie", "content": "We camped by the river."}],
            conversation_id="trip",
            session_id="session-3",
            session_time=JUNE + 86400,
            extractor=_extractor(srv),
        )
    assert res.extraction_error
    assert "sk-test" not in res.extraction_error
    assert res.fact_uris == []
    assert client.read(res.turn_uris[0]) == "(21 June 2023) Melanie: We camped by the river."


def test_remember_a_timestamped_note(client: Treehop) -> None:
    res = client.remember(
        "Caroline's birthday is on 12 March.",
        name="birthday",
        speaker="Melanie",
        timestamp="2023-03-01",
        tags=["family"],
    )
    assert res.turn_uris == ["viking://~/memories/notes/birthday"]
    node = client.stat("viking://~/memories/notes/birthday")
    assert node.metadata["timestamp"] == to_epoch("2023-03-01")
    assert "user:family" in node.tags
    hits = client.find("birthday", until="2023-04-01", include_directories=False)
    assert [m.uri for m in hits.contexts()] == ["viking://~/memories/notes/birthday"]
    with pytest.raises(InvalidQueryError):
        client.remember("")
    with pytest.raises(InvalidQueryError):
        client.remember("x", category="a/b")
