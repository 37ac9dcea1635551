"""Framework users' open items, round two (helper usage60), each beside LangChain's own
``VectorStoreRetriever`` over ``InMemoryVectorStore``.

- ``TreehopRetriever(search_type="mmr")`` at construction was pydantic's bare "Extra inputs are
  not permitted"; per call it said "Use mode instead of search_type", which sends an MMR user
  the wrong way (``mode`` picks find or search). Both now say what to write: for MMR, the
  vector store's retriever over the same client.
- ``TreehopRetriever(k=5000)`` ("everything") was refused by pydantic (``le=1000``) while
  ``VectorStoreRetriever(search_kwargs={"k": 5000})`` answers with all its store holds (and
  our vector store does, usage59). Now every passage one search returns when the retriever's
  scope holds at most 1,000; a larger scope, or a knowledge source that cannot count what it
  holds, is an ``InvalidQueryError`` that says so.
- ``TreehopContextMiddleware(max_tokens=0)`` was refused while ``k=0`` injects nothing
  (deadline59); a budget of nothing now injects nothing too.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.vectorstores import InMemoryVectorStore, VectorStoreRetriever
from pydantic import ValidationError

from langchain_treehop import (
    LangChainEmbedder,
    TreehopContextMiddleware,
    TreehopRetriever,
    TreehopVectorStore,
)
from treehop import AsyncTreehop, Treehop
from treehop._http import RetryPolicy
from treehop.errors import InvalidQueryError
from treehop.validation import MAX_LIMIT

from fake_servers.vikingdb_knowledge_setup import (
    k8s_point,
    knowledge_server,
    make_knowledge_source,
    oauth_points,
)
from lc_helpers import ScriptedChatModel, WordHashEmbeddings, count_context_calls
from treehop_test_doubles import BagOfWordsEmbedder

TEXTS = [
    "To roll back a deployment run helm rollback with the previous revision.",
    "API keys rotate every ninety days.",
    "The cafeteria serves pizza on Fridays.",
    "Deployments go out on Tuesdays after the freeze.",
    "Helm charts template the kubernetes manifests.",
    "Canary deployments send a little traffic first.",
]
Q = "roll back the deployment"


@pytest.fixture
def client() -> Iterator[Treehop]:
    th = Treehop(embedder=BagOfWordsEmbedder(), tagger=None)
    for i, t in enumerate(TEXTS):
        th.add_resource(t, target_uri=f"viking://resources/docs/d{i}")
    yield th
    th.close()


# ----------------------------------------------------------------------- 1: search_type


def test_the_reference_takes_search_type_mmr() -> None:
    store = InMemoryVectorStore.from_texts(TEXTS, WordHashEmbeddings())
    r = VectorStoreRetriever(vectorstore=store, search_type="mmr", search_kwargs={"k": 2})
    assert len(r.invoke(Q)) == 2
    with pytest.raises(ValueError, match="search_type of bogus not allowed"):
        VectorStoreRetriever(vectorstore=store, search_type="bogus")


def test_search_type_at_construction_names_the_way_to_mmr(client: Treehop) -> None:
    # a ValidationError, as every constructor error here and the reference's own (usage61:
    # "similarity", "similarity_score_threshold" with a floor and "mmr" are accepted)
    with pytest.raises(ValidationError, match="score_threshold="):
        TreehopRetriever(client=client, search_type="similarity_score_threshold")
    with pytest.raises(ValidationError, match="not allowed") as got:
        TreehopRetriever.from_path("/nonexistent-usage60", search_type="bogus")
    assert "Extra inputs" not in str(got.value)
    with pytest.raises(ValidationError, match="not allowed"):
        TreehopRetriever(client=client, search_kwargs={"k": 2}, search_type="bogus")
    with pytest.raises(ValidationError, match=r"x\.\.\. not allowed") as got:
        TreehopRetriever(client=client, search_type="x" * 10_000)
    assert "x" * 100 not in str(got.value).split("input_value")[0]


def test_search_type_per_call_names_the_same_way(client: Treehop) -> None:
    r = TreehopRetriever(client=client)
    with pytest.raises(InvalidQueryError, match=r"TreehopRetriever\(\.\.\., search_type='mmr'"):
        r.invoke(Q, search_type="mmr")


def test_the_named_way_does_mmr_over_the_same_client(client: Treehop) -> None:
    # what the message tells the user to write works on an index add_resource built
    mmr = TreehopVectorStore(client=client).as_retriever(
        search_type="mmr", search_kwargs={"k": 4, "fetch_k": 20}
    )
    docs = mmr.invoke(Q)
    assert len(docs) == 4 and "roll back" in docs[0].page_content


# ----------------------------------------------------------------------- 2: k above 1,000


def test_the_reference_answers_k_5000_with_everything() -> None:
    store = InMemoryVectorStore.from_texts(TEXTS, WordHashEmbeddings())
    assert len(store.as_retriever(search_kwargs={"k": 5000}).invoke(Q)) == len(TEXTS)


def test_k_above_the_limit_is_every_passage_of_a_small_scope(client: Treehop) -> None:
    # k=1000 is one search's answer, under the client's score floor (4 of the 6 here)
    searched = TreehopRetriever(client=client, k=MAX_LIMIT).invoke(Q)
    assert len(searched) < len(TEXTS)
    every = [d.id for d in TreehopRetriever(client=client, k=5000).invoke(Q)]
    # "everything": all six, as the reference, the best first, the same order as k=1000's
    assert sorted(every) == sorted(f"viking://resources/docs/d{i}" for i in range(len(TEXTS)))
    assert every[: len(searched)] == [d.id for d in searched]
    for k in (MAX_LIMIT + 1, 5000, 10**9):
        r = TreehopRetriever(client=client, k=k)
        assert [d.id for d in r.invoke(Q)] == every
        assert [d.id for d in asyncio.run(r.ainvoke(Q))] == every
        assert [[d.id for d in b] for b in r.batch([Q, Q])] == [every, every]
        assert [d.id for d in TreehopRetriever(client=client).invoke(Q, k=k)] == every
    by_kwargs = TreehopRetriever(client=client, search_kwargs={"k": 5000})
    assert [d.id for d in by_kwargs.invoke(Q)] == every
    # scoped: the count is of the targets, and the answer stays inside them
    scoped = TreehopRetriever(client=client, k=5000, target_uri="viking://resources/docs")
    assert [d.id for d in scoped.invoke(Q)] == every
    # a floor the caller sets still holds
    floored = TreehopRetriever(client=client, k=5000, score_threshold=0.25).invoke(Q)
    assert floored and all(d.metadata["score"] >= 0.25 for d in floored)
    assert len(floored) < len(every)
    with pytest.raises(ValueError, match="greater than or equal to 0"):  # (pydantic's, as before)
        TreehopRetriever(client=client, k=-1)
    with pytest.raises(InvalidQueryError):
        TreehopRetriever(client=client).invoke(Q, k=-1)


@pytest.fixture(scope="module")
def big() -> Iterator[Treehop]:
    th = Treehop(embedder=BagOfWordsEmbedder(), tagger=None)
    n = MAX_LIMIT + 1
    TreehopVectorStore(client=th, base_uri="viking://resources/big").add_texts(
        [f"note {i} about item{i}" for i in range(n)],
        metadatas=[{"source": f"d{i % 10}/f{i}.md"} for i in range(n)],
    )
    th.add_resource("a small note", target_uri="viking://resources/small/one")
    yield th
    th.close()


def test_k_above_the_limit_over_a_larger_scope_is_refused_saying_why(big: Treehop) -> None:
    r = TreehopRetriever(client=big, k=5000)
    with pytest.raises(InvalidQueryError, match="more than 1000 passages") as got:
        r.invoke("note")
    assert "k of at most 1000" in str(got.value) and "target_uri" in str(got.value)
    with pytest.raises(InvalidQueryError, match="more than 1000 passages"):
        asyncio.run(r.ainvoke("note"))
    with pytest.raises(InvalidQueryError, match="more than 1000 passages"):
        r.batch(["note", "item"])
    assert len(TreehopRetriever(client=big, k=MAX_LIMIT).invoke("note")) == MAX_LIMIT
    # narrowed as the message says: a target holding few passages answers them all
    small = TreehopRetriever(client=big, k=5000, target_uri="viking://resources/small")
    assert [d.id for d in small.invoke("note")] == ["viking://resources/small/one"]


def test_k_above_the_limit_on_a_knowledge_source_says_it_cannot_count() -> None:
    ak, sk = "AKLTfake-usage60", "fake-usage60-secret"
    with knowledge_server(ak, sk, [*oauth_points(), k8s_point()]) as srv:
        src = make_knowledge_source(srv, ak=ak, sk=sk, retry=RetryPolicy(max_retries=0))
        try:
            r = TreehopRetriever(client=src, k=5000)
            with pytest.raises(InvalidQueryError, match="cannot say how many") as got:
                r.invoke("tokens")
            assert sk not in str(got.value)
            assert srv.posts("/search_knowledge") == []  # refused before anything is sent
            assert TreehopRetriever(client=src, k=3).invoke("tokens")
        finally:
            src.close()


# ----------------------------------------------------------------------- 3: max_tokens=0


def _system_text(messages: list[Any]) -> str:
    return "\n".join(m.text for m in messages if isinstance(m, SystemMessage))


def test_middleware_max_tokens_zero_injects_nothing_as_k_zero(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    client = Treehop(None, embedder=LangChainEmbedder(WordHashEmbeddings()), tagger=None)
    client.add_messages(
        [{"speaker": "Ann", "content": "My sister Jo lives in Lisbon and surfs."}],
        conversation_id="old",
        session_id="s1",
        session_time="2024-01-01",
    )
    calls = count_context_calls(monkeypatch)
    scope = {"target_uri": "viking://~/memories"}
    outputs = {}
    for name, kw in (("k0", {"k": 0}), ("t0", {"max_tokens": 0}), ("t200", {"max_tokens": 200})):
        model = ScriptedChatModel(messages=iter([AIMessage("Lisbon.")]))
        mw = TreehopContextMiddleware(client, find_kwargs=scope, **kw)
        agent = create_agent(model, tools=[], system_prompt="Be brief.", middleware=[mw])
        agent.invoke({"messages": [HumanMessage("where does my sister Jo live")]})
        outputs[name] = _system_text(model.seen[0])
    assert outputs["t0"] == outputs["k0"] == "Be brief."
    assert "Jo lives in Lisbon" in outputs["t200"]  # the same index does have the context
    assert len(calls) == 1  # only the max_tokens=200 agent searched
    # the rest of the budget is still checked, and a negative budget refused
    for bad in ({"max_tokens": 0, "quotas": {"nope": 1}}, {"max_tokens": -1}):
        with pytest.raises(InvalidQueryError):
            TreehopContextMiddleware(client, **bad)  # type: ignore[arg-type]
    for bad_value in (True, 0.0, "0"):
        with pytest.raises(InvalidQueryError, match="max_tokens"):
            TreehopContextMiddleware(client, max_tokens=bad_value)  # type: ignore[arg-type]
    client.close()


async def test_middleware_max_tokens_zero_async() -> None:
    client = AsyncTreehop(None, embedder=LangChainEmbedder(WordHashEmbeddings()), tagger=None)
    await client.add_messages(
        [{"speaker": "Ann", "content": "I say hello to everyone."}],
        conversation_id="old",
        session_id="s1",
        session_time="2024-01-01",
    )
    model = ScriptedChatModel(messages=iter([AIMessage("hi")]))
    mw = TreehopContextMiddleware(
        client, max_tokens=0, find_kwargs={"target_uri": "viking://~/memories"}
    )
    agent = create_agent(model, tools=[], system_prompt="Sys.", middleware=[mw])
    await agent.ainvoke({"messages": [HumanMessage("hello")]})
    assert _system_text(model.seen[0]) == "Sys."
    await client.close()
