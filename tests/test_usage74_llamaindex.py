"""A LlamaIndex user's first hour, stop 65 (helper usage74): a query transform's texts.

LlamaIndex's ``HyDEQueryTransform`` (behind ``TransformQueryEngine``, or any transform that
sets ``QueryBundle.custom_embedding_strs``) asks the retriever to embed a hypothetical answer
in place of the question. ``VectorIndexRetriever`` does (its embed model's
``get_agg_embedding_from_queries``: the mean of the texts' query embeddings); the treehop
retriever searched with the question alone, so the transform changed nothing, in silence.
Now it embeds those texts with the client's model and averages them, the question still
scoring the lexical side; ``QueryBundle.embedding`` (a cache another retriever may fill with
its own model) is not used.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from llama_index.core.base.llms.types import CompletionResponse, LLMMetadata
from llama_index.core.indices.query.query_transform import HyDEQueryTransform
from llama_index.core.llms import CustomLLM, MockLLM
from llama_index.core.query_engine import TransformQueryEngine
from llama_index.core.schema import QueryBundle

from llama_index.retrievers.treehop import TreehopQueryEngine, TreehopRetriever
from treehop import AsyncTreehop, Treehop
from treehop._http import RetryPolicy
from treehop.errors import InvalidQueryError

from fake_servers.vikingdb_knowledge_setup import (
    knowledge_server,
    make_knowledge_source,
    oauth_points,
)
from treehop_test_doubles import BagOfWordsEmbedder

TEXTS = {
    "rollback": "To roll back a release run helm rollback with the previous revision number.",
    "keys": "API keys rotate every ninety days and the old key stays valid for one day.",
    "lunch": "The cafeteria serves pizza on Fridays and soup on Mondays.",
    "deploys": "Deployments go out on Tuesdays after the weekly freeze ends.",
}
QUESTION = "what does the cafeteria do"
HYPOTHETICAL = "run helm rollback with the previous revision"
ROLLBACK = "viking://resources/docs/rollback"
LUNCH = "viking://resources/docs/lunch"


@pytest.fixture
def client() -> Iterator[Treehop]:
    th = Treehop(embedder=BagOfWordsEmbedder(), tagger=None)
    for name, text in TEXTS.items():
        th.add_resource(text, target_uri=f"viking://resources/docs/{name}")
    yield th
    th.close()


def _ids(nodes: list[Any]) -> list[str]:
    return [n.node.node_id for n in nodes]


def _hyde(strs: list[str]) -> QueryBundle:
    return QueryBundle(query_str=QUESTION, custom_embedding_strs=strs)


def test_the_premise_the_question_alone_finds_the_cafeteria(client: Treehop) -> None:
    """Control: without a transform the question's own text leads to the lunch page."""
    retriever = TreehopRetriever(client, similarity_top_k=2, dense_weight=1.0)
    assert _ids(retriever.retrieve(QUESTION))[0] == LUNCH


def test_a_transforms_texts_steer_the_search(client: Treehop) -> None:
    retriever = TreehopRetriever(client, similarity_top_k=2, dense_weight=1.0)
    got = retriever.retrieve(_hyde([HYPOTHETICAL]))
    assert _ids(got)[0] == ROLLBACK


def test_the_texts_are_averaged_as_llamaindex_averages_them(client: Treehop) -> None:
    """The same hits and scores as a find with the mean of the texts' query embeddings (what
    ``VectorIndexRetriever`` computes with ``get_agg_embedding_from_queries``), the question
    still the lexical text."""
    texts = [HYPOTHETICAL, "API keys rotate"]
    retriever = TreehopRetriever(client, similarity_top_k=3)
    got = retriever.retrieve(_hyde(texts))
    embedder = client.aio.embedder
    mean = np.mean([embedder.embed_query(t) for t in texts], axis=0)
    want = client.find(QUESTION, query_vector=mean, limit=3).contexts()[:3]
    assert _ids(got) == [m.uri for m in want]
    assert [n.score for n in got] == pytest.approx([m.score for m in want])


def test_aretrieve_answers_as_retrieve(client: Treehop) -> None:
    retriever = TreehopRetriever(client, similarity_top_k=3)
    bundle = _hyde([HYPOTHETICAL])
    sync = retriever.retrieve(bundle)
    awaited = asyncio.run(retriever.aretrieve(bundle))
    assert _ids(awaited) == _ids(sync)
    assert _ids(sync)[0] == ROLLBACK


def test_an_async_client_takes_the_texts_too() -> None:
    async def build() -> AsyncTreehop:
        th = AsyncTreehop(embedder=BagOfWordsEmbedder(), tagger=None)
        for name, text in TEXTS.items():
            await th.add_resource(text, target_uri=f"viking://resources/docs/{name}")
        return th

    th = asyncio.run(build())
    try:
        retriever = TreehopRetriever(th, similarity_top_k=2, dense_weight=1.0)
        assert _ids(retriever.retrieve(_hyde([HYPOTHETICAL])))[0] == ROLLBACK
        assert _ids(retriever.retrieve(QUESTION))[0] == LUNCH
    finally:
        asyncio.run(th.close())


class HypotheticalAnswer(CustomLLM):
    """A scripted LLM: HyDE asks it for a passage answering the question."""

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="scripted-hyde")

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text=HYPOTHETICAL)

    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
        yield self.complete(prompt)


def test_hyde_through_a_transform_query_engine(client: Treehop) -> None:
    """The flow LlamaIndex's HyDE guide shows: ``TransformQueryEngine(engine, hyde)``."""
    retriever = TreehopRetriever(client, similarity_top_k=2, dense_weight=1.0)
    engine = TreehopQueryEngine.from_args(retriever, llm=MockLLM(max_tokens=4))
    plain = engine.query(QUESTION)
    assert plain.source_nodes[0].node.node_id == LUNCH
    hyde = TransformQueryEngine(
        engine, HyDEQueryTransform(llm=HypotheticalAnswer(), include_original=False)
    )
    assert hyde.query(QUESTION).source_nodes[0].node.node_id == ROLLBACK


def test_a_bundles_embedding_is_not_used(client: Treehop) -> None:
    """Decided: ``QueryBundle.embedding`` is a cache another retriever fills with its own
    model (``VectorIndexRetriever`` writes it into the bundle ``QueryFusionRetriever`` shares),
    so it is not searched as this index's vector: the answer is the question's."""
    retriever = TreehopRetriever(client, similarity_top_k=2, dense_weight=1.0)
    other = client.aio.embedder.embed_query(HYPOTHETICAL)
    bundle = QueryBundle(query_str=QUESTION, embedding=[float(x) for x in other])
    assert _ids(retriever.retrieve(bundle)) == _ids(retriever.retrieve(QUESTION))


def test_the_question_as_its_own_text_is_the_plain_search(client: Treehop) -> None:
    """Control: ``custom_embedding_strs=[query_str]`` (HyDE's ``include_original`` alone) is
    the search without a transform."""
    retriever = TreehopRetriever(client, similarity_top_k=3)
    assert _ids(retriever.retrieve(_hyde([QUESTION]))) == _ids(retriever.retrieve(QUESTION))


def test_search_mode_refuses_the_texts(client: Treehop) -> None:
    retriever = TreehopRetriever(client, mode="search", similarity_top_k=2)
    with pytest.raises(InvalidQueryError, match="apply to mode='find'"):
        retriever.retrieve(_hyde([HYPOTHETICAL]))
    with pytest.raises(InvalidQueryError, match="apply to mode='find'"):
        asyncio.run(retriever.aretrieve(_hyde([HYPOTHETICAL])))


@pytest.mark.parametrize("strs", [[""], ["   "], ["ok", "\x00"]])
def test_blank_texts_are_refused(client: Treehop, strs: list[str]) -> None:
    retriever = TreehopRetriever(client, similarity_top_k=2)
    with pytest.raises(InvalidQueryError):
        retriever.retrieve(_hyde(strs))
    with pytest.raises(InvalidQueryError):
        asyncio.run(retriever.aretrieve(_hyde(strs)))


def test_a_knowledge_source_refuses_the_texts_and_sends_nothing() -> None:
    """A VikingDB knowledge base (the real SDK over loopback HTTP to the fake service)
    embeds the query string on its service: the texts are refused, not dropped."""
    ak, sk = "AKLTfake-usage74", "fake-usage74-secret"
    with knowledge_server(ak, sk, oauth_points()) as srv:
        source = make_knowledge_source(srv, ak=ak, sk=sk, retry=RetryPolicy(max_retries=0))
        try:
            retriever = TreehopRetriever(source, similarity_top_k=2)
            with pytest.raises(InvalidQueryError, match="embeds the query string on its service"):
                retriever.retrieve(_hyde([HYPOTHETICAL]))
            with pytest.raises(InvalidQueryError, match="embeds the query string on its service"):
                asyncio.run(retriever.aretrieve(_hyde([HYPOTHETICAL])))
            assert srv.posts() == []
            assert retriever.retrieve(QUESTION) is not None  # (the source answers a question)
            assert srv.posts()
        finally:
            source.close()
