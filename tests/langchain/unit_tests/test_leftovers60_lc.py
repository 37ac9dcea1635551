"""Leftovers of stop 60 (LangChain): a filter on the ``source`` every Document shows.

``context_to_document`` shows ``metadata["source"]`` for every hit: a stored ``source`` (a
LangChain Document's), else the ``source_path`` the writer stored (a file's path, the name
given to a text). A filter on ``source`` matched only a stored ``source``: the user filtered
on the value they saw and got a subset, or a refusal ("no stored node has ``source``").
The oracle here is the shown value itself: every filter's result is the unfiltered result's
documents whose shown ``source`` satisfies the condition, evaluated in Python.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.documents import Document

from langchain_treehop import LangChainEmbedder, TreehopRetriever, add_documents
from treehop import AsyncTreehop, Treehop
from treehop.errors import InvalidFilterError

from lc_helpers import WordHashEmbeddings
from treehop_test_doubles import add_rollback_notes

QUERY = "kubernetes rollback deploy"


def _write(client: Treehop, tmp: Path, stored_source: bool) -> None:
    add_rollback_notes(client, tmp)
    if stored_source:
        add_documents(
            client,
            [
                Document(
                    page_content="kubernetes rollback deploy pdf", metadata={"source": "d/a.pdf"}
                )
            ],
        )


@pytest.fixture(params=[True, False], ids=["some-store-source", "none-stores-source"])
def tree(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Treehop]:
    client = Treehop(None, embedder=LangChainEmbedder(WordHashEmbeddings()), tagger=None)
    _write(client, tmp_path, request.param)
    yield client
    client.close()


def _shown(docs: list[Document]) -> dict[str, Any]:
    return {str(d.id): d.metadata.get("source") for d in docs}


CASES: list[tuple[dict[str, Any], Callable[[Any], bool]]] = [
    ({"source": "beta"}, lambda s: s == "beta"),
    ({"source": {"$eq": "alpha.md"}}, lambda s: s == "alpha.md"),
    ({"source": "d/a.pdf"}, lambda s: s == "d/a.pdf"),
    ({"source": {"$ne": "beta"}}, lambda s: s != "beta"),
    (
        {"source": {"$in": ["beta", "gamma.md", "d/a.pdf"]}},
        lambda s: s in {"beta", "gamma.md", "d/a.pdf"},
    ),
    ({"source": {"$nin": ["beta", "d/a.pdf"]}}, lambda s: s not in {"beta", "d/a.pdf"}),
    ({"source": {"$exists": True}}, lambda s: bool(s)),
    ({"source": {"$exists": False}}, lambda s: not s),
    ({"$or": [{"source": "beta"}, {"source": "alpha.md"}]}, lambda s: s in {"beta", "alpha.md"}),
    (
        {"$and": [{"source": {"$ne": "beta"}}, {"source": {"$exists": True}}]},
        lambda s: bool(s) and s != "beta",
    ),
]


@pytest.mark.parametrize(("spec", "shown_matches"), CASES, ids=[str(c[0]) for c in CASES])
def test_a_filter_on_source_matches_the_shown_source(
    tree: Treehop, spec: dict[str, Any], shown_matches: Callable[[Any], bool]
) -> None:
    r = TreehopRetriever(client=tree, k=50, include_directories=True)
    everything = _shown(r.invoke(QUERY))
    assert "viking://resources/beta" in everything  # the oracle sees every kind of node
    # (a directory shows its URI: nothing stored names it; helper leftovers71b)
    assert any(v == u and u.startswith("viking://") for u, v in everything.items())
    expected = {u for u, s in everything.items() if shown_matches(s)}
    got = _shown(r.invoke(QUERY, metadata_filter=spec))
    assert set(got) == expected
    assert all(shown_matches(s) for s in got.values())


async def test_the_async_path_and_the_dsl_agree(tmp_path: Path) -> None:
    client = AsyncTreehop(None, embedder=LangChainEmbedder(WordHashEmbeddings()), tagger=None)
    (tmp_path / "n").mkdir()
    (tmp_path / "n" / "alpha.md").write_text("# Alpha\n\nkubernetes rollback deploy alpha.\n")
    await client.add_resource(str(tmp_path / "n"))
    await client.add_resource("kubernetes rollback deploy beta", name="beta")
    r = TreehopRetriever(client=client, k=50)
    dsl = {"op": "must", "field": "source", "conds": ["beta"]}
    for spec in ({"source": "beta"}, dsl):
        docs = await r.ainvoke(QUERY, metadata_filter=spec)
        assert [d.metadata["source"] for d in docs] == ["beta"]
    await client.close()


def test_a_stored_empty_source_shows_the_path(tmp_path: Path) -> None:
    # (a stored "" / None shows the path, as the filter counts it: empty is no value)
    client = Treehop(None, embedder=LangChainEmbedder(WordHashEmbeddings()), tagger=None)
    add_documents(
        client,
        [
            Document(
                page_content="kubernetes rollback deploy",
                metadata={"source": "", "uri": "viking://resources/x.md"},
            )
        ],
    )
    r = TreehopRetriever(client=client, k=5)
    [doc] = r.invoke(QUERY)
    assert doc.metadata["source"] == doc.metadata["source_path"] != ""
    assert [d.id for d in r.invoke(QUERY, metadata_filter={"source": doc.metadata["source"]})] == [
        doc.id
    ]
    client.close()


def test_nothing_shows_source_is_still_refused() -> None:
    client = Treehop(None, embedder=LangChainEmbedder(WordHashEmbeddings()), tagger=None)
    client.add_resource("kubernetes rollback deploy beta", name="beta")
    r = TreehopRetriever(client=client, k=5)
    with pytest.raises(InvalidFilterError, match="sourse"):
        r.invoke(QUERY, metadata_filter={"sourse": "beta"})
    client.close()


# -- 2. a wrapper over a closed client: ClientClosedError, sync client or async ---------------


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_the_wrappers_refuse_a_closed_client(kind: str) -> None:
    import asyncio

    from langchain_treehop import TreehopStore, TreehopVectorStore
    from treehop.errors import ClientClosedError

    emb = LangChainEmbedder(WordHashEmbeddings())
    client: Treehop | AsyncTreehop
    if kind == "sync":
        client = Treehop(None, embedder=emb, tagger=None)
    else:
        client = AsyncTreehop(None, embedder=emb, tagger=None)
    vs = TreehopVectorStore(client=client)
    [pid] = vs.add_texts(["kubernetes rollback deploy"])
    store = TreehopStore(client=client)
    store.put(("notes",), "k", {"text": "kubernetes"})
    retriever = TreehopRetriever(client=client, k=3)
    assert retriever.invoke(QUERY) and vs.get_by_ids([pid])  # (the control: open, answered)
    if isinstance(client, Treehop):
        client.close()
    else:
        asyncio.run(client.close())
    calls: list[Callable[[], Any]] = [
        lambda: retriever.invoke(QUERY),
        lambda: asyncio.run(retriever.ainvoke(QUERY)),
        lambda: vs.similarity_search(QUERY),
        lambda: vs.add_texts(["written after the close"]),
        lambda: vs.get_by_ids([pid]),
        lambda: vs.delete([pid]),
        lambda: store.search(("notes",)),
        lambda: store.put(("notes",), "k2", {"text": "after"}),
    ]
    for call in calls:
        with pytest.raises(ClientClosedError, match="closed"):
            call()
