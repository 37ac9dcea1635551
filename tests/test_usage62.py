"""Newcomer leftovers, round four (bench/README.md, "(helper usage62)"): each test fails on
381faf7 and names the row it covers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from treehop import AsyncTreehop, InvalidQueryError, Treehop, TreehopError


@pytest.mark.parametrize("cls", [Treehop, AsyncTreehop])
def test_unknown_constructor_keyword_is_a_typed_error_naming_the_accepted_ones(
    tmp_path: Path, cls: Any
) -> None:
    # 381faf7: Python's TypeError, naming AsyncTreehop.__init__ even for Treehop
    with pytest.raises(InvalidQueryError) as err:
        cls(tmp_path / "idx", read_only=True)
    msg = str(err.value)
    assert isinstance(err.value, TreehopError)
    assert msg.startswith(f"{cls.__name__}() got unknown keyword argument(s) 'read_only'")
    assert "reader_processes" in msg and "max_file_bytes" in msg and "strict" in msg
    assert not (tmp_path / "idx").exists()  # refused before anything was opened
    # a hostile key is bounded; the valid keywords still construct
    with pytest.raises(InvalidQueryError) as err:
        cls(tmp_path / "idx", **{"k" * 100_000: 1})
    assert len(str(err.value)) < 600
    client = cls(None, reader_processes=0, chunk_chars=500)
    if cls is Treehop:
        client.close()


def test_remember_says_when_a_name_replaced_a_note(tmp_path: Path) -> None:
    # 381faf7: the second remember replaced the first without a word (MemoryWriteResult)
    with Treehop(tmp_path / "idx", reader_processes=0) as c:
        first = c.remember("I live in Porto", name="home")
        again = c.remember("I live in Lisbon", name="home")
        other = c.remember("I like tea", name="drink")
        assert (first.replaced, again.replaced, other.replaced) == (False, True, False)
        assert again.turn_uris == first.turn_uris
        assert c.read(again.turn_uris[0]).strip() == "I live in Lisbon"


async def test_mcp_add_memory_says_replaced(tmp_path: Path) -> None:
    # 381faf7: {"uri": ...} both times; the first memory was gone in silence
    from mcp import Client

    from test_mcp_server import _call, _params

    async with Client(_params(tmp_path / "idx")) as client:
        tool = next(t for t in (await client.list_tools()).tools if t.name == "add_memory")
        assert "replaced: true" in (tool.description or "")
        first = await _call(client, "add_memory", {"text": "I live in Porto", "name": "home"})
        again = await _call(client, "add_memory", {"text": "I live in Lisbon", "name": "home"})
        assert first == {"uri": again["uri"], "replaced": False}
        assert again["replaced"] is True
        unnamed = await _call(client, "add_memory", {"text": "I like tea"})
        assert unnamed["replaced"] is False
        text = await _call(client, "read", {"uri": again["uri"]})
        assert "Lisbon" in text["text"]


def test_cli_tree_of_a_leaf_says_it_is_a_leaf(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 381faf7: the leaf's line, then "0 directories, 0 leaves (depth 3)" as for an empty tree
    from test_cli import Recorder, run

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Deploy\n\nRoll out with blue green.\n")
    idx = ("--index", str(tmp_path / "idx"))
    assert run(capsys, *idx, "index", str(docs), factory=Recorder())[0] == 0
    leaf = "viking://resources/docs/a.md"
    code, out, err = run(capsys, *idx, "tree", leaf, "--no-abstract")
    assert (code, err) == (0, "")
    assert out.splitlines() == [leaf, f"a leaf: print it with: treehop read {leaf}"]
    # the same hint as ls gives a leaf; a directory's tree keeps its count line
    code, _, err = run(capsys, *idx, "ls", leaf)
    assert code == 2 and f"print it with: treehop read {leaf}" in err
    code, out, _ = run(capsys, *idx, "tree", "viking://resources/docs", "--no-abstract")
    assert out.splitlines()[-1] == "0 directories, 1 leaf (depth 3)"


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--threshold", "nan"], "argument --threshold: must be a finite number"),
        (["--threshold", "inf"], "argument --threshold: must be a finite number"),
        (["--threshold=-1e10"], "argument --threshold: must be a finite number"),
        (["--dense-weight", "nan"], "argument --dense-weight: must be a number in [0.2, 1]"),
        (["--dense-weight", "1.5"], "argument --dense-weight: must be a number in [0.2, 1]"),
    ],
)
def test_cli_find_numbers_are_refused_under_the_options_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], said: str
) -> None:
    # 381faf7: "treehop: error: score_threshold out of range: nan" (the Python keyword)
    from test_cli import run

    code, out, err = run(capsys, "--index", str(tmp_path / "idx"), "find", "deploy", *argv)
    assert (code, out) == (2, "")
    assert said in err
    assert "score_threshold" not in err and "dense_weight" not in err


def test_text_match_filter_semantics(tmp_path: Path) -> None:
    # 381faf7: "unknown op 'text_match'" (LlamaIndex's TEXT_MATCH had no core operator)
    from treehop import InvalidFilterError
    from treehop.filters import MetadataFilter

    from treehop_test_doubles import BagOfWordsEmbedder

    docs = {
        "a": {"title": "Blue-green Deploy", "lang": "en"},
        "b": {"title": "deploy checklist", "lang": ["de", "EN"]},
        "c": {"title": 2024, "lang": "fr"},
        "d": {"lang": "en"},
    }
    with Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), reader_processes=0) as c:
        for name, md in docs.items():
            c.add_resource(
                f"kubernetes notes {name}",
                target_uri=f"viking://resources/k/{name}",
                is_text=True,
                metadata=md,
            )

        def hits(spec: dict[str, Any]) -> set[str]:
            res = c.find("kubernetes notes", limit=20, filter=spec, include_directories=False)
            return {h.uri.rsplit("/", 1)[-1] for h in res.resources}

        assert hits({"op": "text_match", "field": "title", "value": "Deploy"}) == {"a"}
        assert hits(
            {"op": "text_match", "field": "title", "value": "DEPLOY", "ignore_case": True}
        ) == {"a", "b"}
        # a list matches through one of its strings; numbers and missing values never
        assert hits({"op": "text_match", "field": "lang", "value": "EN"}) == {"b"}
        assert hits({"op": "text_match", "field": "title", "value": "20"}) == set()
        assert hits(
            {
                "op": "or",
                "conds": [
                    {"op": "text_match", "field": "lang", "value": "f"},
                    {"op": "text_match", "field": "title", "value": "check"},
                ],
            }
        ) == {"b", "c"}
        # the negation keeps missing and non-string values; empty: missing, "", [] or null
        assert hits({"op": "text_match_not", "field": "title", "value": "Deploy"}) == {
            "b",
            "c",
            "d",
        }
        assert hits({"op": "empty", "field": "title"}) == {"d"}
        assert hits({"op": "not_empty", "field": "title"}) == {"a", "b", "c"}
    for bad, said in [
        ({"op": "text_match", "field": "t"}, "non-empty string 'value'"),
        ({"op": "text_match", "field": "t", "value": "x", "ignore_case": "yes"}, "ignore_case"),
        ({"op": "text_match", "field": "t", "value": "x" * 1001}, "longer than 1000"),
        ({"op": "text_match", "field": "t", "value": "\ud800"}, "lone surrogate"),
        ({"op": "text_match", "field": "t", "value": "x", "conds": ["x"]}, "unknown keys"),
        ({"op": "empty", "field": "t", "value": "x"}, "unknown keys"),
        ({"op": "not_empty"}, "non-empty string 'field'"),
    ]:
        with pytest.raises(InvalidFilterError, match=said):
            MetadataFilter.parse(bad)


def test_a_knowledge_base_refuses_text_match(tmp_path: Path) -> None:
    # the VikingDB knowledge base sends doc_filter to the service, which has no substring match
    from treehop.vikingdb_knowledge import KnowledgeSearchOptions

    for leaf in (
        {"op": "text_match", "field": "title", "value": "x"},
        {"op": "not_empty", "field": "title"},
    ):
        spec = {"op": "and", "conds": [leaf]}
        with pytest.raises(TreehopError, match="doc_filter has no text_match, text_match_not"):
            KnowledgeSearchOptions(doc_filter=spec)


def test_llama_index_is_empty_and_negated_text_match_follow_llama_index(tmp_path: Path) -> None:
    # 381faf7: IS_EMPTY had "no treehop equivalent"; NOT(TEXT_MATCH) too. Expected sets are
    # LlamaIndex's own filter function over the same metadata.
    from llama_index.core.vector_stores.types import (
        FilterCondition,
        FilterOperator,
        MetadataFilters,
    )
    from llama_index.core.vector_stores.types import MetadataFilter as F
    from llama_index.core.vector_stores.utils import build_metadata_filter_fn

    from llama_index.retrievers.treehop import TreehopRetriever

    from treehop_test_doubles import BagOfWordsEmbedder

    meta: dict[str, dict[str, Any]] = {
        "a": {"owner": "ann", "note": "Deploy on friday"},
        "b": {"owner": "", "note": "deploy checklist"},
        "c": {"owner": [], "note": "costs"},
        "d": {"note": "pager"},
        "e": {"owner": "bob"},
    }
    cases = [
        MetadataFilters(filters=[F(key="owner", value=None, operator=FilterOperator.IS_EMPTY)]),
        MetadataFilters(
            filters=[F(key="owner", value=None, operator=FilterOperator.IS_EMPTY)],
            condition=FilterCondition.NOT,
        ),
        MetadataFilters(
            filters=[F(key="note", value="Deploy", operator=FilterOperator.TEXT_MATCH)],
            condition=FilterCondition.NOT,
        ),
        MetadataFilters(
            filters=[
                F(key="note", value="DEPLOY", operator=FilterOperator.TEXT_MATCH_INSENSITIVE),
                F(key="owner", value=None, operator=FilterOperator.IS_EMPTY),
            ],
            condition=FilterCondition.NOT,
        ),
    ]
    with Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), reader_processes=0) as c:
        for name, md in meta.items():
            c.add_resource(
                f"kubernetes notes {name}",
                target_uri=f"viking://resources/k/{name}",
                is_text=True,
                metadata=md,
            )
        got_sets = []
        for filters in cases:
            want = {n for n in meta if build_metadata_filter_fn(lambda k: meta[k], filters)(n)}
            r = TreehopRetriever(c, similarity_top_k=20, filters=filters, include_directories=False)
            got = {n.node.node_id.rsplit("/", 1)[-1] for n in r.retrieve("kubernetes notes")}
            assert got == want, filters
            got_sets.append(frozenset(got))
    # discriminating: each a proper, non-empty subset, all different
    assert all(0 < len(g) < len(meta) for g in got_sets) and len(set(got_sets)) == len(cases)
