"""``TreehopRetriever.batch`` / ``abatch``: the finds of a batch made by one ``find_many``,
each input still its own ``invoke`` (its config, callbacks, run and events), the documents
those of one ``invoke`` each, and an input the core refuses failing alone."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document

from langchain_treehop import TreehopRetriever
from treehop import AsyncTreehop, Treehop
from treehop.errors import InvalidQueryError
from treehop.hierarchical_retriever import HierarchicalRetriever

QUERIES = [
    "kubernetes deployment rollout readiness probes",
    "rotate api keys",
    "how do I roll back a deployment?",
    "rotate api keys",
]


class Runs(BaseCallbackHandler):
    """Each retriever run's query, tags and custom events."""

    def __init__(self) -> None:
        self.starts: list[tuple[str, list[str]]] = []
        self.ends: list[UUID] = []
        self.errors: list[BaseException] = []
        self.events: list[tuple[str, UUID]] = []

    def on_retriever_start(
        self, serialized: Any, query: str, *, run_id: UUID, tags: Any = None, **kw: Any
    ) -> None:
        self.starts.append((query, sorted(tags or [])))

    def on_retriever_end(self, documents: Any, *, run_id: UUID, **kw: Any) -> None:
        self.ends.append(run_id)

    def on_retriever_error(self, error: BaseException, *, run_id: UUID, **kw: Any) -> None:
        self.errors.append(error)

    def on_custom_event(self, name: str, data: Any, *, run_id: UUID, **kw: Any) -> None:
        self.events.append((name, run_id))


def _docs(docs: Sequence[Document]) -> list[tuple[Any, ...]]:
    return [(d.id, d.page_content, d.metadata) for d in docs]


RETRIEVES: list[str] = []
"""Every query the retriever ran since the fixture started (find_many's and find's)."""


@pytest.fixture
def many_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The size of every batch of finds (``find_many`` of either client ends there); each
    query retrieved is appended to :data:`RETRIEVES`."""
    calls: list[int] = []
    RETRIEVES.clear()
    real = HierarchicalRetriever.retrieve_many
    one = HierarchicalRetriever._descend  # (every find's own search, alone or in a batch)

    async def spy(self: HierarchicalRetriever, reqs: Any) -> Any:
        calls.append(len(reqs))
        return await real(self, reqs)

    async def spy_one(self: HierarchicalRetriever, req: Any, *a: Any, **kw: Any) -> Any:
        RETRIEVES.append(req.query.query)
        return await one(self, req, *a, **kw)

    monkeypatch.setattr(HierarchicalRetriever, "retrieve_many", spy)
    monkeypatch.setattr(HierarchicalRetriever, "_descend", spy_one)
    return calls


def test_batch_is_one_find_many_and_one_run_per_input(
    lc_client: Treehop, many_calls: list[int]
) -> None:
    retriever = TreehopRetriever(client=lc_client, k=3)
    expected = [_docs(retriever.invoke(q)) for q in QUERIES]
    runs = Runs()
    configs: Any = [{"callbacks": [runs], "tags": [f"item{i}"]} for i in range(len(QUERIES))]
    RETRIEVES.clear()
    got = retriever.batch(QUERIES, configs, k=3)
    assert [_docs(d) for d in got] == expected
    assert many_calls == [3]  # the distinct queries, once
    assert sorted(RETRIEVES) == sorted(set(QUERIES))  # the invokes searched nothing again
    assert sorted(runs.starts) == sorted((q, [f"item{i}"]) for i, q in enumerate(QUERIES))
    assert len(runs.ends) == len(QUERIES) and not runs.errors
    # every run emits its own custom events (the stages of its find)
    assert {run for _, run in runs.events} >= set(runs.ends)


async def test_abatch_is_one_find_many_on_both_clients(
    lc_client: Treehop, alc_client: AsyncTreehop, many_calls: list[int]
) -> None:
    for client in (lc_client, alc_client):
        retriever = TreehopRetriever(client=client, k=4)
        expected = [_docs(await retriever.ainvoke(q)) for q in QUERIES]
        many_calls.clear()
        RETRIEVES.clear()
        runs = Runs()
        got = await retriever.abatch(QUERIES, {"callbacks": [runs]})
        assert [_docs(d) for d in got] == expected
        assert many_calls == [3]
        assert sorted(RETRIEVES) == sorted(set(QUERIES))
        assert sorted(q for q, _ in runs.starts) == sorted(QUERIES)
        assert len(runs.ends) == len(QUERIES)


@pytest.mark.parametrize("use_async", [False, True])
async def test_a_refused_input_fails_alone(
    lc_client: Treehop, many_calls: list[int], use_async: bool
) -> None:
    retriever = TreehopRetriever(client=lc_client, k=2)
    inputs = ["rotate api keys", "   ", "kubernetes deployment"]
    if use_async:
        got = await retriever.abatch(inputs, return_exceptions=True)
    else:
        got = retriever.batch(inputs, return_exceptions=True)
    assert many_calls == []  # refused as a whole before any search: one by one
    assert isinstance(got[1], InvalidQueryError)
    assert _docs(got[0]) == _docs(retriever.invoke(inputs[0]))  # type: ignore[arg-type]
    assert _docs(got[2]) == _docs(retriever.invoke(inputs[2]))  # type: ignore[arg-type]
    with pytest.raises(InvalidQueryError):
        retriever.batch(inputs)


def test_search_mode_and_single_inputs_go_one_by_one(
    lc_client: Treehop, many_calls: list[int]
) -> None:
    retriever = TreehopRetriever(client=lc_client, k=2)
    one = retriever.batch(["rotate api keys"])
    assert _docs(one[0]) == _docs(retriever.invoke("rotate api keys"))
    retriever.batch(["rotate api keys", "kubernetes"], mode="search")
    assert many_calls == []


def test_bad_per_call_options_fail_every_input(lc_client: Treehop, many_calls: list[int]) -> None:
    retriever = TreehopRetriever(client=lc_client)
    got = retriever.batch(["a b", "c d"], return_exceptions=True, k=-1)
    assert all(isinstance(e, InvalidQueryError) for e in got)
    assert many_calls == []
