"""``TreehopVectorStore.delete()`` without ids; the middleware's header (helper usage76).

A LangChain user's first hour: ``store.delete()`` (no ids) emptied the whole index under
``base_uri``, where LangChain's own ``InMemoryVectorStore.delete()`` deletes nothing and FAISS,
Weaviate and Astra DB refuse the call. Now a typed refusal; ``clear()`` empties the store.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.vectorstores import InMemoryVectorStore

from langchain_treehop import LangChainEmbedder, TreehopContextMiddleware, TreehopVectorStore
from treehop import Treehop
from treehop.errors import InvalidFilterError, InvalidQueryError

from lc_helpers import ScriptedChatModel, WordHashEmbeddings
from treehop_test_doubles import BagOfWordsEmbedder

DOCS = [
    Document("Keys rotate every 90 days.", id="keys", metadata={"source": "faq.md"}),
    Document("Deploys happen on Fridays.", id="deploys", metadata={"source": "ops.md"}),
]


def _store(client: Treehop, base: str = "viking://resources/lc") -> TreehopVectorStore:
    store = TreehopVectorStore(client=client, base_uri=base)
    store.add_documents([d.model_copy() for d in DOCS])
    return store


def test_the_premise_in_memory_delete_without_ids_deletes_nothing() -> None:
    mem = InMemoryVectorStore(WordHashEmbeddings())
    mem.add_documents([d.model_copy() for d in DOCS])
    mem.delete()
    assert [d.id for d in mem.get_by_ids(["keys", "deploys"])] == ["keys", "deploys"]


@pytest.mark.parametrize("call", ["delete()", "delete(None)", "delete(ids=None)", "adelete()"])
def test_delete_without_ids_is_refused_and_deletes_nothing(call: str) -> None:
    with Treehop(None, embedder=BagOfWordsEmbedder()) as client:
        store = _store(client)
        with pytest.raises(InvalidQueryError, match=r"store\.clear\(\)"):
            if call == "adelete()":
                asyncio.run(store.adelete())
            elif call == "delete(None)":
                store.delete(None)
            elif call == "delete(ids=None)":
                store.delete(ids=None)
            else:
                store.delete()
        assert [d.id for d in store.get_by_ids(["keys", "deploys"])] == ["keys", "deploys"]
        assert store.similarity_search("rotate keys", k=1)[0].id == "keys"


def test_clear_empties_its_base_uri_only() -> None:
    with Treehop(None, embedder=BagOfWordsEmbedder()) as client:
        store = _store(client)
        other = _store(client, "viking://resources/other")
        store.clear()
        assert store.get_by_ids(["keys", "deploys"]) == []
        assert store.similarity_search("rotate keys", k=2) == []
        assert [d.id for d in other.get_by_ids(["keys"])] == ["keys"]
        asyncio.run(other.aclear())
        assert other.get_by_ids(["keys", "deploys"]) == []


def test_an_empty_id_list_deletes_nothing() -> None:
    with Treehop(None, embedder=BagOfWordsEmbedder()) as client:
        store = _store(client)
        assert store.delete([]) is True
        assert len(store.get_by_ids(["keys", "deploys"])) == 2
        assert store.delete(["keys"]) is True
        assert [d.id for d in store.get_by_ids(["keys", "deploys"])] == ["deploys"]


# ------------------------------------------------------------------ the middleware's header
def test_the_middlewares_header_promises_only_what_the_block_shows(tmp_path: Path) -> None:
    """The injected block's resource sections are headed by compact names (``[faq]``), not
    URIs; the line before it told the model to cite "its viking:// URI", which it never saw."""
    doc = tmp_path / "chrony"
    doc.mkdir()
    (doc / "faq.md").write_text(
        "# FAQ\n\n## Is chronyd allowed to step the clock?\n\n"
        "The makestep directive lets chronyd step the clock at boot.\n"
    )
    with Treehop(None, embedder=LangChainEmbedder(WordHashEmbeddings()), tagger=None) as client:
        client.add_resource(str(doc), target_uri="viking://resources/chrony")
        model = ScriptedChatModel(messages=iter([AIMessage("Use makestep.")]))
        mw = TreehopContextMiddleware(client, max_tokens=300, k=3)
        agent = create_agent(model, tools=[], middleware=[mw])
        agent.invoke({"messages": [HumanMessage("may chronyd step the clock with makestep")]})
        system = "\n".join(m.text for m in model.seen[0] if isinstance(m, SystemMessage))
    header, _, block = system.partition("\n")
    assert "makestep directive" in block  # (the premise: context was injected)
    headers = [ln for ln in block.splitlines() if ln.startswith("[")]
    assert headers and all("viking://" not in h for h in headers)
    assert "viking://" not in header  # no promise of a URI the block does not hold
    assert "in brackets" in header


# ------------------------------------------------------------------ filter refusals name the fix
@pytest.mark.parametrize(
    # ($contains is taken since helper leftovers71b: test_leftovers71b_contains.py)
    ("op", "fold"),
    [("$like", False), ("$ilike", True), ("$regex", False)],
)
def test_a_substring_operator_names_text_match_and_that_filter_works(op: str, fold: bool) -> None:
    with Treehop(None, embedder=BagOfWordsEmbedder()) as client:
        store = _store(client)
        with pytest.raises(InvalidFilterError) as info:
            store.similarity_search("keys", k=2, filter={"source": {op: "%faq%"}})
        message = str(info.value)
        assert f"unknown operator '{op}'" in message
        named = "{'op': 'text_match', 'field': 'source', 'value': 'word'"
        assert named + (", 'ignore_case': True}" if fold else "}") in message
        # the filter it names, with the word, answers what the substring asks
        dsl = {"op": "text_match", "field": "source", "value": "FAQ" if fold else "faq"}
        if fold:
            dsl["ignore_case"] = True
        assert [d.id for d in store.similarity_search("keys", k=2, filter=dsl)] == ["keys"]


def test_a_list_for_equality_names_in_and_that_filter_works() -> None:
    with Treehop(None, embedder=BagOfWordsEmbedder()) as client:
        store = _store(client)
        with pytest.raises(InvalidFilterError, match=r"\{'source': \{'\$in': \[\.\.\.\]\}\}"):
            store.similarity_search("keys", k=2, filter={"source": ["faq.md", "ops.md"]})
        both = store.similarity_search(
            "keys", k=2, filter={"source": {"$in": ["faq.md", "ops.md"]}}
        )
        assert sorted(d.id for d in both) == ["deploys", "keys"]


def test_an_unknown_operator_without_a_substring_meaning_gets_no_hint() -> None:
    with Treehop(None, embedder=BagOfWordsEmbedder()) as client:
        store = _store(client)
        with pytest.raises(InvalidFilterError) as info:
            store.similarity_search("keys", k=2, filter={"source": {"$size": 2}})
        assert "text_match" not in str(info.value)


# ------------------------------------------------------------------ time ranges
def _dated(client: Treehop) -> TreehopVectorStore:
    store = TreehopVectorStore(client=client, base_uri="viking://resources/dated")
    store.add_documents(
        [
            Document("Release notes of May.", id="may", metadata={"when": dt.datetime(2024, 5, 1)}),
            Document("Release notes of old.", id="old", metadata={"when": dt.datetime(2023, 1, 1)}),
        ]
    )
    return store


def test_a_datetime_bound_compares_with_a_stored_datetime() -> None:
    with Treehop(None, embedder=BagOfWordsEmbedder()) as client:
        store = _dated(client)
        since = dt.datetime(2024, 1, 1)
        got = store.similarity_search("release notes", k=5, filter={"when": {"$gte": since}})
        assert [d.id for d in got] == ["may"]
        # the same as the epoch-seconds filter the docs name
        by_number = {"when": {"$gte": since.timestamp()}}
        assert [d.id for d in store.similarity_search("release notes", k=5, filter=by_number)] == [
            "may"
        ]
        window = {"when": {"$between": [dt.datetime(2022, 6, 1), dt.datetime(2023, 6, 1)]}}
        assert [d.id for d in store.similarity_search("release notes", k=5, filter=window)] == [
            "old"
        ]
        aware = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
        got = store.similarity_search("release notes", k=5, filter={"when": {"$lt": aware}})
        assert [d.id for d in got] == ["old"]


@pytest.mark.parametrize(
    ("flt", "ids"),
    [
        ({"when": dt.datetime(2024, 5, 1)}, ["may"]),
        ({"when": {"$eq": dt.datetime(2023, 1, 1)}}, ["old"]),
        ({"when": {"$ne": dt.datetime(2023, 1, 1)}}, ["may"]),
        ({"when": {"$in": [dt.datetime(2023, 1, 1), dt.datetime(1999, 1, 1)]}}, ["old"]),
        ({"when": {"$nin": [dt.datetime(2023, 1, 1)]}}, ["may"]),
    ],
)
def test_a_datetime_value_matches_the_stored_datetime(flt: dict[str, Any], ids: list[str]) -> None:
    # (it was the DSL's "filter: conds must be scalars, got datetime")
    with Treehop(None, embedder=BagOfWordsEmbedder()) as client:
        store = _dated(client)
        assert [d.id for d in store.similarity_search("release notes", k=5, filter=flt)] == ids


@pytest.mark.parametrize(
    "flt",
    [
        {"when": {"$gte": "2024-01-01"}},
        {"when": {"$lt": dt.date(2024, 1, 1)}},
        {"when": {"$between": ["2023-01-01", "2024-01-01"]}},
    ],
)
def test_a_text_or_date_bound_names_the_datetime_way(flt: dict[str, Any]) -> None:
    with Treehop(None, embedder=BagOfWordsEmbedder()) as client:
        store = _dated(client)
        with pytest.raises(InvalidFilterError, match=r"store a datetime in the metadata"):
            store.similarity_search("release notes", k=5, filter=flt)
