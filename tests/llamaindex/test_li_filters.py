"""MetadataFilters -> treehop filters: every operator, conditions, tags, and refusals.

Four documents that all mention kubernetes carry metadata (``year``, ``lang``, a list of
``topics``) and tags; a filtered query must return exactly the documents the filter selects.
Where LlamaIndex has a reference implementation (its in-memory vector store's filter function,
flat filters only), the expected set is computed by it, so the mapping is checked against
LlamaIndex's own semantics rather than our reading of them.
"""

from __future__ import annotations

from typing import Any

import pytest
from li_helpers import FILTER_DOCS
from llama_index.core.vector_stores.types import (
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
)
from llama_index.core.vector_stores.utils import build_metadata_filter_fn

from llama_index.retrievers.treehop import TreehopRetriever, to_treehop_filters
from treehop import Treehop
from treehop.errors import InvalidFilterError, InvalidTagError
from treehop.models import ContextType

ALL = {d["name"] for d in FILTER_DOCS}
F = MetadataFilter
Op = FilterOperator


def fs(*filters: Any, condition: str = "and") -> MetadataFilters:
    return MetadataFilters(filters=list(filters), condition=FilterCondition(condition))


def names(client: Treehop, filters: MetadataFilters) -> set[str]:
    retriever = TreehopRetriever(
        client, similarity_top_k=50, filters=filters, include_directories=False
    )
    nodes = retriever.retrieve("kubernetes")
    return {n.node.node_id.rsplit("/", 1)[-1] for n in nodes}


def reference(filters: MetadataFilters) -> set[str]:
    """What LlamaIndex's own filter function selects from the same metadata."""
    meta = {d["name"]: d["meta"] for d in FILTER_DOCS}
    fn = build_metadata_filter_fn(lambda name: meta[name], filters)
    return {name for name in meta if fn(name)}


FLAT_CASES = [
    fs(F(key="lang", value="en")),
    fs(F(key="lang", value="en", operator=Op.NE)),
    fs(F(key="year", value=2022, operator=Op.GT)),
    fs(F(key="year", value=2022, operator=Op.GTE)),
    fs(F(key="year", value=2022, operator=Op.LT)),
    fs(F(key="year", value=2022, operator=Op.LTE)),
    fs(F(key="year", value=2022.5, operator=Op.LT)),
    fs(F(key="lang", value=["de", "fr"], operator=Op.IN)),
    fs(F(key="lang", value=["de", "fr"], operator=Op.NIN)),
    fs(F(key="topics", value=["security", "finops"], operator=Op.ANY)),
    fs(F(key="topics", value=["k8s", "ops"], operator=Op.ALL)),
    fs(F(key="topics", value="k8s", operator=Op.CONTAINS)),
    fs(F(key="lang", value="en"), F(key="year", value=2021, operator=Op.GT)),
    fs(F(key="lang", value="de"), F(key="year", value=2024, operator=Op.GTE), condition="or"),
    fs(F(key="lang", value="en"), F(key="year", value=2023), condition="not"),
    fs(F(key="year", value=2022, operator=Op.GT), condition="not"),
    fs(F(key="topics", value=["k8s", "ops"], operator=Op.ALL), condition="not"),
    fs(F(key="lang", value="n", operator=Op.TEXT_MATCH)),
    fs(F(key="lang", value="E", operator=Op.TEXT_MATCH)),  # case kept: nothing
    fs(F(key="lang", value="FR", operator=Op.TEXT_MATCH_INSENSITIVE)),
    fs(F(key="lang", value="e", operator=Op.TEXT_MATCH), F(key="year", value=2022)),
]


@pytest.mark.parametrize("filters", FLAT_CASES, ids=lambda f: str(f.filters)[:60])
def test_flat_filters_match_llama_index_semantics(
    filter_client: Treehop, filters: MetadataFilters
) -> None:
    assert names(filter_client, filters) == reference(filters)


def test_reference_cases_are_discriminating() -> None:
    """Nearly every case selects a proper subset, and the subsets differ, so a mapping that
    ignored or loosened a filter could not pass the cases above."""
    subsets = [frozenset(reference(f)) for f in FLAT_CASES]
    assert sum(1 for s in subsets if 0 < len(s) < len(ALL)) >= len(FLAT_CASES) - 1
    assert len(set(subsets)) >= 8


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        (fs(F(key="lang", value="en")), {"rollout", "ingress"}),
        (fs(F(key="year", value=2022, operator=Op.GT)), {"ingress", "costs"}),
        (fs(F(key="topics", value=["k8s", "ops"], operator=Op.ALL)), {"rollout"}),
        (fs(F(key="lang", value="en"), F(key="year", value=2023), condition="not"), {"pager"}),
        # Nested groups (LlamaIndex's in-memory reference does not support them).
        (
            fs(
                F(key="year", value=2021, operator=Op.GTE),
                fs(
                    F(key="lang", value="de"),
                    F(key="topics", value="security", operator=Op.CONTAINS),
                    condition="or",
                ),
            ),
            {"pager", "ingress"},
        ),
        (
            fs(
                fs(F(key="lang", value="en"), F(key="year", value=2020), condition="and"),
                F(key="lang", value="fr"),
                condition="or",
            ),
            {"rollout", "costs"},
        ),
        (
            fs(
                fs(
                    F(key="lang", value="en"),
                    F(key="year", value=2020, operator=Op.GT),
                    condition="and",
                ),
                condition="not",
            ),
            {"rollout", "pager", "costs"},
        ),
    ],
)
def test_filters_select_expected_documents(
    filter_client: Treehop, filters: MetadataFilters, expected: set[str]
) -> None:
    assert names(filter_client, filters) == expected


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        (fs(F(key="tags", value="ops")), {"rollout", "pager"}),
        (fs(F(key="tags", value="oncall", operator=Op.CONTAINS)), {"pager"}),
        (fs(F(key="tags", value=["oncall", "security"], operator=Op.ANY)), {"pager", "ingress"}),
        (fs(F(key="tags", value=["security"], operator=Op.IN)), {"ingress"}),
        (fs(F(key="tags", value=["ops", "oncall"], operator=Op.ALL)), {"pager"}),
        (
            fs(F(key="tags", value="oncall"), F(key="tags", value="security"), condition="or"),
            {"pager", "ingress"},
        ),
        (fs(F(key="tags", value="ops"), F(key="year", value=2022, operator=Op.GTE)), {"pager"}),
        (
            fs(
                F(key="tags", value=["ops", "security"], operator=Op.ANY), F(key="lang", value="en")
            ),
            {"rollout", "ingress"},
        ),
        # Tag labels are normalised and a source prefix is ignored, as everywhere in treehop.
        (fs(F(key="tags", value="user:OnCall")), {"pager"}),
        (
            fs(F(key="tags", value="ops"), fs(F(key="tags", value="oncall"), condition="and")),
            {"pager"},
        ),
    ],
)
def test_tag_filters(filter_client: Treehop, filters: MetadataFilters, expected: set[str]) -> None:
    assert names(filter_client, filters) == expected


def test_mapping_shapes() -> None:
    args = to_treehop_filters(
        fs(
            F(key="tags", value="ops"),
            F(key="tags", value=["a", "b"], operator=Op.ANY),
            F(key="context_type", value=["memory", "skills"], operator=Op.IN),
            F(key="year", value=2020, operator=Op.GTE),
            F(key="lang", value=["en"], operator=Op.NIN),
        )
    )
    assert args.tags_all == ("ops",)
    assert args.tags == ("a", "b")
    assert args.context_types == (ContextType.MEMORY, ContextType.SKILL)
    assert args.filter == {
        "op": "and",
        "conds": [
            {"op": "range", "field": "year", "gte": 2020},
            {"op": "must_not", "field": "lang", "conds": ["en"]},
        ],
    }
    assert to_treehop_filters(None).filter is None
    assert to_treehop_filters(fs()).tags is None


def test_context_type_filter(client: Treehop) -> None:
    def kinds(filters: MetadataFilters, **kw: Any) -> set[str]:
        r = TreehopRetriever(client, similarity_top_k=50, filters=filters, **kw)
        return {n.node.metadata["context_type"] for n in r.retrieve("code style and api keys")}

    assert kinds(fs(F(key="context_type", value="memory"))) == {"memory"}
    assert kinds(fs(F(key="context_type", value=["memory", "resource"], operator=Op.IN))) == {
        "memory",
        "resource",
    }
    # The filter narrows the retriever's own context types and target URIs.
    narrowed = TreehopRetriever(
        client,
        similarity_top_k=50,
        target_uri=["viking://resources/devops", "viking://~/memories"],
        filters=fs(F(key="context_type", value="memory")),
    )
    got = narrowed.retrieve("code style and deployments")
    assert got and all(n.node.node_id.startswith("viking://~/memories") for n in got)
    contradiction = TreehopRetriever(
        client, context_types=["resource"], filters=fs(F(key="context_type", value="memory"))
    )
    with pytest.raises(InvalidFilterError, match="excludes every context type"):
        contradiction.retrieve("anything")


@pytest.mark.parametrize(
    ("filters", "match"),
    [
        (fs(F(key="lang", value=5, operator=Op.TEXT_MATCH)), "takes a non-empty string"),
        (fs(F(key="lang", value="", operator=Op.TEXT_MATCH_INSENSITIVE)), "non-empty string"),
        (fs(F(key="tags", value=["ops"], operator=Op.NIN)), "not exclude them"),
        (fs(F(key="tags", value="ops", operator=Op.NE)), "not exclude them"),
        (fs(F(key="tags", value=["ops", "x"])), "takes one tag"),
        (
            fs(F(key="tags", value="ops"), F(key="lang", value="en"), condition="or"),
            "only be filtered at the top level",
        ),
        (fs(F(key="tags", value="ops"), condition="not"), "only be filtered at the top level"),
        (fs(F(key="year", value="2020", operator=Op.GT)), "numbers only"),
        (fs(F(key="lang", value=["en", "de"])), "use IN for a list"),
        (fs(F(key="score", value=0.5, operator=Op.GT)), "provenance"),
        (fs(F(key="found_by", value="tag_hop")), "provenance"),
        (
            fs(
                F(key="tags", value=["a"], operator=Op.ANY),
                F(key="tags", value=["b"], operator=Op.IN),
            ),
            "one 'any of these tags' group",
        ),
        (fs(F(key="context_type", value="memory", operator=Op.NE)), "context_type takes"),
        (fs(F(key="context_type", value="documents")), "unknown context type"),
        (
            fs(F(key="context_type", value="memory"), F(key="context_type", value="skill")),
            "exclude each other",
        ),
        (fs(F(key="lang", value=[], operator=Op.IN)), "empty"),
        (fs(fs(condition="or")), "empty filter group"),
    ],
)
def test_unmappable_filters_raise_at_construction(
    filter_client: Treehop, filters: MetadataFilters, match: str
) -> None:
    with pytest.raises(InvalidFilterError, match=match):
        TreehopRetriever(filter_client, filters=filters)


def test_bad_tag_label_and_wrong_type(filter_client: Treehop) -> None:
    with pytest.raises(InvalidTagError):
        TreehopRetriever(filter_client, filters=fs(F(key="tags", value="a;b")))
    with pytest.raises(InvalidFilterError, match="MetadataFilters"):
        TreehopRetriever(filter_client, filters={"lang": "en"})  # type: ignore[arg-type]


def test_filters_can_be_replaced(filter_client: Treehop) -> None:
    retriever = TreehopRetriever(filter_client, similarity_top_k=50, include_directories=False)
    assert len(retriever.retrieve("kubernetes")) == 4
    retriever.filters = fs(F(key="lang", value="fr"))
    assert [n.node.node_id for n in retriever.retrieve("kubernetes")] == [
        "viking://resources/k8s/costs"
    ]
    with pytest.raises(InvalidFilterError):
        retriever.filters = fs(F(key="tags", value=["ops"], operator=Op.NIN))
    # A refused filter leaves the previous one in place.
    assert len(retriever.retrieve("kubernetes")) == 1
    retriever.filters = None
    assert len(retriever.retrieve("kubernetes")) == 4


@pytest.mark.parametrize(
    ("filters", "match"),
    [
        (fs(F(key="owner", value="bob", operator=Op.NE)), "owner"),  # a key no document has
        (fs(F(key="lnag", value="en")), "lnag"),  # a typo
        (fs(F(key="lang", value="en"), F(key="yaer", value=2020), condition="or"), "yaer"),
    ],
)
def test_a_field_no_document_has_is_a_typed_error(
    filter_client: Treehop, filters: MetadataFilters, match: str
) -> None:
    # Silently matching nothing (or, for !=, everything) would hide the typo from the user.
    retriever = TreehopRetriever(filter_client, filters=filters)
    with pytest.raises(InvalidFilterError, match=match):
        retriever.retrieve("kubernetes")
