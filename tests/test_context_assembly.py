"""Context assembly: the budget is a hard bound, tiers fall back instead of cutting, quotas,
exclusions, and dedup across the turns of a session."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from treehop import AsyncTreehop, Treehop
from treehop.context_assembly import (
    HeuristicCounter,
    HFTokenizerCounter,
    assemble_context,
    default_token_counter,
    resolve_counter,
)
from treehop.errors import InvalidQueryError
from treehop.models import ContextType, FindResult, MatchedContext

from treehop_test_doubles import BagOfWordsEmbedder

WORDS = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"]), max_size=80)


def _hit(i: int, abstract: str, overview: str, content: str, ct: ContextType) -> MatchedContext:
    return MatchedContext(
        uri=f"viking://resources/doc{i}",
        context_type=ct,
        is_leaf=bool(content),
        abstract=abstract,
        overview=overview,
        content=content,
        score=1.0 - i * 0.01,
    )


hits_strategy = st.lists(
    st.tuples(WORDS, WORDS, st.text(max_size=600), st.sampled_from(list(ContextType))),
    max_size=12,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    hits=hits_strategy,
    max_tokens=st.integers(1, 400),
    quota=st.one_of(st.none(), st.integers(0, 200)),
    tiers=st.sets(st.sampled_from(["abstract", "overview", "content"]), min_size=1),
)
def test_never_exceeds_max_tokens(hits, max_tokens, quota, tiers) -> None:
    counter = default_token_counter()
    ms = [_hit(i, a, o, c, ct) for i, (a, o, c, ct) in enumerate(hits)]
    quotas = {ContextType.MEMORY: quota} if quota is not None else None
    out = assemble_context(ms, max_tokens=max_tokens, quotas=quotas, tiers=sorted(tiers))
    assert counter.count(out.text) <= max_tokens
    assert out.tokens == (counter.count(out.text) if out.text else 0)
    assert len(set(out.uris)) == len(out.uris)
    assert {s.tier for s in out.sections} <= tiers
    if quota is not None:
        assert sum(s.tokens for s in out.sections if s.context_type is ContextType.MEMORY) <= quota
    # every hit is either used or skipped with a reason
    assert len(out.sections) + len(out.skipped) == len(ms)


def test_real_tokenizer_is_the_minilm_wordpiece() -> None:
    counter = default_token_counter()
    assert isinstance(counter, HFTokenizerCounter)
    # WordPiece splits a rare word into pieces and counts the long text in full (no truncation
    # at the embedder's 256 tokens)
    assert counter.count("hello") == 1
    assert counter.count("tokenization") >= 2
    assert counter.count("word " * 600) == 600


def test_tier_falls_back_to_smaller_tier_not_cut() -> None:
    long = " ".join(f"Sentence number {i} about gearboxes." for i in range(200))
    m = _hit(
        0, "Gearbox notes.", "Overview: gearbox maintenance and repair.", long, ContextType.RESOURCE
    )
    c = default_token_counter()
    # a whole-file leaf is a group of its own (FILE_GROUPS); the common root is not said
    head = "[doc0]\n- ({}): "
    n_overview = c.count(head.format("overview") + m.overview)
    n_abstract = c.count(head.format("abstract") + m.abstract)
    out = assemble_context([m], max_tokens=n_overview)
    assert [s.tier for s in out.sections] == ["overview"]
    assert out.text.endswith("Overview: gearbox maintenance and repair.")
    out = assemble_context([m], max_tokens=n_overview - 1)
    assert [s.tier for s in out.sections] == ["abstract"]
    assert out.text.endswith("Gearbox notes.")
    out = assemble_context([m], max_tokens=5000)
    assert [s.tier for s in out.sections] == ["content"] and long in out.text
    out = assemble_context([m], max_tokens=n_abstract - 1)
    assert out.text == "" and out.skipped == [("viking://resources/doc0", "budget")]


def test_quotas_keep_room_for_other_types() -> None:
    mems = [
        _hit(i, f"memory {i}", "", f"memory text {i} " * 5, ContextType.MEMORY) for i in range(5)
    ]
    res = [
        _hit(10 + i, f"res {i}", "", f"resource text {i} " * 5, ContextType.RESOURCE)
        for i in range(3)
    ]
    out = assemble_context([*mems, *res], max_tokens=200, quotas={"memory": 40})
    by_type = out.tokens_by_type()
    assert by_type["memory"] <= 40
    assert by_type["resource"] > 0
    assert ("viking://resources/doc4", "quota") in out.skipped or any(
        r == "quota" for _, r in out.skipped
    )


def test_exclude_uris_drop_subtrees() -> None:
    hits = [_hit(i, f"a{i}", "", f"text {i}", ContextType.RESOURCE) for i in range(3)]
    hits.append(
        MatchedContext(
            uri="viking://resources/doc1#chunk-2",
            context_type=ContextType.RESOURCE,
            is_leaf=True,
            abstract="chunk",
            content="chunk text",
            score=0.1,
        )
    )
    out = assemble_context(hits, max_tokens=500, exclude_uris=["viking://resources/doc1"])
    assert "viking://resources/doc1" not in out.uris
    assert "viking://resources/doc1#chunk-2" not in out.uris
    assert out.uris == ["viking://resources/doc0", "viking://resources/doc2"]


def test_findresult_input_and_bad_arguments() -> None:
    fr = FindResult(resources=[_hit(0, "a", "", "alpha", ContextType.RESOURCE)], total=1)
    assert assemble_context(fr, max_tokens=50).uris == ["viking://resources/doc0"]
    for bad in (
        {"max_tokens": 0},
        {"max_tokens": True},
        {"max_tokens": 10, "quotas": {"bogus": 3}},
        {"max_tokens": 10, "quotas": {"memory": -1}},
        {"max_tokens": 10, "tiers": []},
        {"max_tokens": 10, "tiers": ["summary"]},
        {"max_tokens": 10, "token_counter": "nope"},
    ):
        with pytest.raises(InvalidQueryError):
            assemble_context(fr, **bad)


def test_hits_are_grouped_under_their_parent() -> None:
    def hit(uri: str, text: str, score: float, ts: float | None = None, leaf: bool = True):
        return MatchedContext(
            uri=uri,
            context_type=ContextType.MEMORY,
            is_leaf=leaf,
            abstract=text[:20],
            overview="" if leaf else "- a long list of every child abstract " * 5,
            content=text if leaf else "",
            score=score,
            metadata={} if ts is None else {"timestamp": ts},
        )

    s1 = "viking://~/memories/conversations/c/s1"
    hits = [
        hit(f"{s1}/turn-00003", "Ann: I moved to Porto.", 0.9, 0.0),
        hit("viking://~/memories/notes/dog", "The dog is Rui.", 0.8),
        hit(f"{s1}/turn-00001", "Bob: Porto is lovely.", 0.7, 60.0),
        hit(s1, "Session one", 0.6, 0.0, leaf=False),
    ]
    out = assemble_context(hits, max_tokens=500)
    assert out.text == (
        "[viking://~/memories/conversations/c/s1] (memory, 1970-01-01 00:00)\n"
        "- turn-00003: Ann: I moved to Porto.\n"
        "- turn-00001 (1970-01-01 00:01): Bob: Porto is lovely.\n\n"
        "[viking://~/memories/notes] (memory)\n"
        "- dog: The dog is Rui.\n\n"
        "[viking://~/memories/conversations/c] (memory, 1970-01-01 00:00)\n"
        "- s1 (abstract): Session one"
    )
    # a directory whose own hits are listed is shown by its abstract, not its overview
    assert out.sections[-1].tier == "abstract"


def test_heuristic_counter_is_linear_and_bounds_words() -> None:
    c = HeuristicCounter()
    assert c.count("") == 0
    assert c.count("a, b.") == 4
    assert c.count("internationalization") == 5
    assert resolve_counter("heuristic").name == "heuristic"
    assert c.count("x" * 200_000) == 50_000


@pytest.fixture
def memory_client() -> Treehop:
    c = Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None)
    c.add_messages(
        [
            {"speaker": "Ann", "content": "My sister Jo lives in Lisbon and loves surfing."},
            {"speaker": "Bob", "content": "Lisbon has great surfing beaches."},
            {"speaker": "Ann", "content": "I am training for the Berlin marathon."},
        ],
        conversation_id="c1",
        session_id="s1",
        session_time="2024-03-01T10:00:00Z",
    )
    return c


def test_dedup_across_turns_of_a_session(memory_client: Treehop) -> None:
    kw = {"max_tokens": 30, "target_uri": "viking://~/memories", "tiers": ["content"]}
    first = memory_client.assemble_context("surfing in Lisbon", session_id="chat-1", **kw)
    second = memory_client.assemble_context("surfing in Lisbon", session_id="chat-1", **kw)
    assert first.uris and second.uris
    assert not set(first.uris) & set(second.uris)
    assert {u for u, r in second.skipped if r == "seen"} == set(first.uris)
    # another session is not affected, and no session means no dedup
    other = memory_client.assemble_context("surfing in Lisbon", session_id="chat-2", **kw)
    assert other.uris == first.uris
    assert memory_client.assemble_context("surfing in Lisbon", **kw).uris == first.uris
    # the dated header shows when the memory was said
    assert "[c1/s1, 1 March 2024 10:00]" in first.text


def test_dedup_ledger_persists_with_the_index(tmp_path) -> None:
    path = tmp_path / "idx"
    with Treehop(path, embedder=BagOfWordsEmbedder(), tagger=None) as c:
        c.remember("Ann prefers window seats on trains.", name="seat", timestamp=0)
        first = c.assemble_context("window seats", max_tokens=80, session_id="s")
        assert "viking://~/memories/notes/seat" in first.uris
    with Treehop(path, embedder=BagOfWordsEmbedder(), tagger=None) as c:
        again = c.assemble_context("window seats", max_tokens=80, session_id="s")
        assert "viking://~/memories/notes/seat" not in again.uris


def test_client_validates_before_searching(memory_client: Treehop) -> None:
    with pytest.raises(InvalidQueryError):
        memory_client.assemble_context("x", max_tokens=-5)
    with pytest.raises(InvalidQueryError):
        memory_client.assemble_context("x", session_id="bad id!")
    fr = memory_client.find("marathon")
    with pytest.raises(InvalidQueryError):
        memory_client.assemble_context(fr, limit=3)
    out = memory_client.assemble_context(
        fr, max_tokens=100, exclude_uris="viking://~/memories/conversations/c1/s1"
    )
    assert all("/c1/s1" not in u for u in out.uris)


async def test_async_client_assembles() -> None:
    c = AsyncTreehop(None, embedder=BagOfWordsEmbedder(), tagger=None)
    await c.remember("Bob is allergic to peanuts.", name="allergy", speaker="Bob", timestamp=10)
    out = await c.assemble_context("peanuts allergy", max_tokens=50, token_counter="heuristic")
    assert out.uris[0] == "viking://~/memories/notes/allergy"
    assert out.token_counter == "heuristic"
    assert "Bob: Bob is allergic to peanuts." in out.text
    await c.close()


async def test_a_missing_space_root_is_an_empty_scope_not_an_error() -> None:
    # A fresh index has no viking://~/memories yet: the context for it is empty (what the
    # middleware and docs/agents.md promise), not a NotFoundError; a missing URI below a
    # root is still an error (a typo).
    from treehop.errors import NotFoundError

    with Treehop(embedder=BagOfWordsEmbedder(), tagger=None) as th:
        th.add_resource("Deploys roll out in waves.", target_uri="viking://resources/d.md")
        ctx = th.assemble_context("sister", max_tokens=100, target_uri="viking://~/memories")
        assert ctx.text == "" and ctx.uris == [] and ctx.tokens == 0
        both = th.find("deploys", target_uri=["viking://resources", "viking://~/skills"])
        assert [m.uri for m in both.resources] == ["viking://resources/d.md"]
        assert th.search("deploys", target_uri="viking://~/memories").total == 0
        with pytest.raises(NotFoundError, match="memories/notes"):
            th.find("x", target_uri="viking://~/memories/notes")
    async with AsyncTreehop(embedder=BagOfWordsEmbedder(), tagger=None) as ath:
        actx = await ath.assemble_context("x", max_tokens=50, target_uri="viking://~/skills")
        assert actx.uris == []
