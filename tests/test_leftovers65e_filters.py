"""LangChain and LlamaIndex filter refusals: keys and values redacted and bounded (helper
leftovers65e).

Each refusal the two filter translators raise (``langchain_treehop/filters.py``,
``llama_index/retrievers/treehop/filters.py``) quoted the caller's key and value with
``{x!r:.100}``: a registered secret given as a field name or a value was echoed whole
(attacks77 redacted the ``None`` refusal only), and the whole repr of the value was built
before the cut (a list nested 10**5 deep raised ``RecursionError``, not a ``TreehopError``;
an element whose ``__repr__`` raises escaped as its own error). Now they go through
``shown_name`` / ``shown_value``. Reached through the public API: ``similarity_search``,
``as_retriever``, the LlamaIndex vector store's ``query`` and ``TreehopRetriever``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.documents import Document
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores.types import (
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
)

from langchain_treehop import TreehopVectorStore as LCStore
from langchain_treehop.filters import to_treehop_filter
from llama_index.retrievers.treehop import TreehopRetriever
from llama_index.retrievers.treehop.filters import to_treehop_filters, validate
from llama_index.vector_stores.treehop import TreehopVectorStore as LIStore
from treehop import Treehop
from treehop.errors import InvalidFilterError, TreehopError
from treehop.redaction import register_secret

from treehop_test_doubles import BagOfWordsEmbedder

SECRET = "sk-leftovers65eKEYvalue0123456789abcdef"
register_secret(SECRET)


def _clean(exc: BaseException) -> None:
    """Neither the secret nor a 10-character piece of it in the message or the repr."""
    for text in (str(exc), repr(exc)):
        assert SECRET not in text
        assert not any(SECRET[i : i + 10] in text for i in range(len(SECRET) - 9)), text


def _deep(n: int) -> list[Any]:
    out: list[Any] = []
    for _ in range(n):
        out = [out]
    return out


def _assert_same_small_message(refuse: Callable[[int], None]) -> None:
    """The refusal of a value of 10**4 and of 10**6 items reads the same, under 500
    characters (the message does not grow with the value)."""
    messages = []
    for n in (10**4, 10**6):
        with pytest.raises(InvalidFilterError) as info:
            refuse(n)
        messages.append(str(info.value))
    assert len(messages[1]) < 500
    assert messages[0] == messages[1]


class _Boom:
    def __repr__(self) -> str:
        raise RuntimeError("a caller's object whose repr raises")


# ---------------------------------------------------------------- LangChain


@pytest.fixture(scope="module")
def lc_store() -> Iterator[LCStore]:
    s = LCStore(Treehop(embedder=BagOfWordsEmbedder(), tagger=None))
    s.add_documents(
        [Document("autoescape protects html output", metadata={"lang": "en", "n": 1}, id="a")]
    )
    yield s
    s.client.close()


def _lc_search(store: LCStore, flt: object) -> None:
    store.similarity_search("html", 2, filter=flt)


def _lc_retriever(store: LCStore, flt: object) -> None:
    store.as_retriever(search_kwargs={"filter": flt}).invoke("html")


LC_WAYS = [_lc_search, _lc_retriever]
S = SECRET
LC_REFUSED = {
    "key, a list value": {S: [1]},
    "value in a list": {"lang": [S]},
    "key and value, $exists": {S: {"$exists": S}},
    "key and value, $between": {S: {"$between": [S, 1]}},
    "key and value, $gt": {S: {"$gt": S}},
    "operator": {"lang": {S: 1}},
    "top-level operator": {"$" + S: 1},
    "value under $and": {"$and": [S]},
    "value under $or": {"$or": [{"lang": "en"}, S]},
    "key, an empty $in": {S: {"$in": []}},
    "key, an empty condition": {S: {}},
    "key, None": {S: None},
    "key, $ne None": {S: {"$ne": None}},
}


@pytest.mark.parametrize("way", LC_WAYS, ids=lambda w: w.__name__)
@pytest.mark.parametrize("flt", LC_REFUSED.values(), ids=list(LC_REFUSED))
def test_a_langchain_refusal_never_shows_a_registered_key(
    lc_store: LCStore, way: Callable[[LCStore, object], None], flt: dict[str, Any]
) -> None:
    with pytest.raises(InvalidFilterError) as info:
        way(lc_store, flt)
    _clean(info.value)
    assert "***" in str(info.value)  # (the place of the key is shown masked)


def _lc_big(n: int) -> list[dict[str, Any]]:
    items = list(range(n))
    return [
        {"lang": items},
        {"n": {"$between": items}},
        {"n": {"$gt": items}},
        {"lang": {"$exists": items}},
        {"$and": [items]},
        {"k" * n: [1]},
        {"lang": {"k" * n: 1}},
    ]


@pytest.mark.parametrize("way", LC_WAYS, ids=lambda w: w.__name__)
@pytest.mark.parametrize("i", range(7))
def test_a_langchain_refusal_of_a_huge_value_stays_small(
    lc_store: LCStore, way: Callable[[LCStore, object], None], i: int
) -> None:
    _assert_same_small_message(lambda n: way(lc_store, _lc_big(n)[i]))


@pytest.mark.parametrize(
    "flt",
    [
        {"lang": _deep(10**5)},
        {"n": {"$between": _deep(10**5)}},
        {"$and": [_deep(10**5)]},
        {"lang": [_Boom()]},
        {"lang": {"$exists": _Boom()}},
    ],
    ids=["deep list", "deep $between", "deep under $and", "repr raises", "repr raises, $exists"],
)
def test_a_langchain_refusal_of_a_deep_or_unprintable_value_is_typed(
    lc_store: LCStore, flt: dict[str, Any]
) -> None:
    # (before: RecursionError / the object's own RuntimeError from ``{value!r:.100}``)
    with pytest.raises(InvalidFilterError) as info:
        _lc_search(lc_store, flt)
    assert len(str(info.value)) < 400


def test_a_short_langchain_refusal_reads_as_before(lc_store: LCStore) -> None:
    # Control: a value that fits is shown exactly as repr writes it.
    with pytest.raises(InvalidFilterError) as info:
        _lc_search(lc_store, {"lang": ["en", "de"]})
    assert str(info.value) == (
        "filter 'lang' ==: expects one value, got ['en', 'de']; "
        "{'lang': {'$in': [...]}} keeps any of several values"  # (usage76: the fix named)
    )


_LEAF = st.one_of(
    st.just(SECRET),
    st.just("lang"),
    st.integers(-5, 5),
    st.none(),
    st.booleans(),
    st.lists(st.sampled_from([SECRET, 1, "en", None]), max_size=3),
)
_OPS = st.sampled_from(
    ["$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$exists", "$between", SECRET]
)
_KEYS = st.sampled_from([SECRET, "lang", "n", "$" + SECRET])
_COND = st.one_of(_LEAF, st.dictionaries(_OPS, _LEAF, max_size=3))
_MONGO = st.recursive(
    st.dictionaries(_KEYS, _COND, min_size=1, max_size=3),
    lambda inner: st.one_of(
        st.dictionaries(_KEYS, _COND, min_size=1, max_size=3),
        st.builds(
            lambda k, subs: {k: subs},
            st.sampled_from(["$and", "$or"]),
            st.lists(st.one_of(inner, _LEAF), max_size=3),
        ),
    ),
    max_leaves=8,
)


@settings(max_examples=300, deadline=None)
@given(_MONGO)
def test_property_no_langchain_filter_refusal_shows_the_secret(flt: dict[str, Any]) -> None:
    try:
        to_treehop_filter(flt)
    except TreehopError as exc:
        assert isinstance(exc, InvalidFilterError)
        _clean(exc)


# ---------------------------------------------------------------- LlamaIndex


@pytest.fixture(scope="module")
def li() -> Iterator[tuple[Treehop, LIStore]]:
    emb = BagOfWordsEmbedder()
    client = Treehop(embedder=emb, tagger=None)
    store = LIStore(client)
    text = "kubernetes rollback deploy"
    store.add(
        [TextNode(text=text, metadata={"lang": "en", "n": 1}, embedding=emb.embed([text])[0])]
    )
    client.add_resource("kubernetes rollback deploy notes", target_uri="viking://resources/d/a")
    yield client, store
    client.close()


def _li_store(li: tuple[Treehop, LIStore], filters: MetadataFilters) -> None:
    vector = BagOfWordsEmbedder().embed(["rollback"])[0].tolist()
    li[1].query(
        VectorStoreQuery(
            query_str="rollback", query_embedding=vector, similarity_top_k=2, filters=filters
        )
    )


def _li_retriever(li: tuple[Treehop, LIStore], filters: MetadataFilters) -> None:
    TreehopRetriever(li[0], similarity_top_k=2, filters=filters).retrieve("rollback")


LI_WAYS = [_li_store, _li_retriever]


def _f(*filters: Any, condition: FilterCondition = FilterCondition.AND) -> MetadataFilters:
    return MetadataFilters(filters=list(filters), condition=condition)


def _m(key: str, value: Any, op: FilterOperator = FilterOperator.EQ) -> MetadataFilter:
    return MetadataFilter(key=key, value=value, operator=op)


LI_REFUSED = {
    "key, a list for ==": _f(_m(S, [1])),
    "value in a list for ==": _f(_m("lang", [S])),
    "key, a string range": _f(_m(S, "x", FilterOperator.GT)),
    "value, a string range": _f(_m("n", S, FilterOperator.GT)),
    "key, None": _f(_m(S, None)),
    "key, None with !=": _f(_m(S, None, FilterOperator.NE)),
    "context type value": _f(_m("context_type", S)),
    "key, an empty in": _f(_m(S, [], FilterOperator.IN)),
    "key, an empty text_match": _f(_m(S, "", FilterOperator.TEXT_MATCH)),
    "key, a list for >, in OR": _f(
        _m(S, [1], FilterOperator.GT), _m("n", 1), condition=FilterCondition.OR
    ),
}


@pytest.mark.parametrize("way", LI_WAYS, ids=lambda w: w.__name__)
@pytest.mark.parametrize("filters", LI_REFUSED.values(), ids=list(LI_REFUSED))
def test_a_llamaindex_refusal_never_shows_a_registered_key(
    li: tuple[Treehop, LIStore], way: Callable[..., None], filters: MetadataFilters
) -> None:
    with pytest.raises(InvalidFilterError) as info:
        way(li, filters)
    _clean(info.value)
    assert "***" in str(info.value)


def test_a_tag_filter_in_an_or_group_never_shows_a_registered_key(
    li: tuple[Treehop, LIStore],
) -> None:
    # (the retriever only: ``tags`` is treehop's tags there, refused inside OR with the group)
    group = _f(_m("tags", S), _m(S, 1), condition=FilterCondition.OR)
    with pytest.raises(InvalidFilterError) as info:
        _li_retriever(li, _f(group, _m("lang", "en")))
    _clean(info.value)


def _li_big(n: int) -> list[MetadataFilters]:
    items = list(range(n))
    return [
        _f(_m("lang", items)),
        _f(_m("n", items, FilterOperator.GT)),
        _f(_m("k" * n, [1])),
        _f(_m("context_type", ["x" * n])),
    ]


@pytest.mark.parametrize("way", LI_WAYS, ids=lambda w: w.__name__)
@pytest.mark.parametrize("i", range(4))
def test_a_llamaindex_refusal_of_a_huge_value_stays_small(
    li: tuple[Treehop, LIStore], way: Callable[..., None], i: int
) -> None:
    _assert_same_small_message(lambda n: way(li, _li_big(n)[i]))


def test_a_short_llamaindex_refusal_reads_as_before(li: tuple[Treehop, LIStore]) -> None:
    # Control: the description's form (key unquoted, value as repr) is unchanged.
    with pytest.raises(InvalidFilterError) as info:
        _li_retriever(li, _f(_m("lang", ["en"])))
    assert str(info.value).startswith("filter \"lang == ['en']\": operator '==' takes one")


_LI_VALUE = st.one_of(
    st.just(SECRET),
    st.just(""),
    st.integers(-3, 3),
    st.none(),
    st.lists(st.just(SECRET), max_size=2),
    st.lists(st.integers(0, 3), max_size=2),
)
_LI_LEAF = st.builds(
    _m,
    st.sampled_from([SECRET, "lang", "context_type", "tags"]),
    _LI_VALUE,
    st.sampled_from(list(FilterOperator)),
)
_LI_TREE = st.recursive(
    _LI_LEAF,
    lambda inner: st.builds(
        lambda fs, c: MetadataFilters(filters=fs, condition=c),
        st.lists(inner, min_size=1, max_size=3),
        st.sampled_from(list(FilterCondition)),
    ),
    max_leaves=6,
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(_LI_TREE, min_size=1, max_size=3),
    st.sampled_from(list(FilterCondition)),
    st.booleans(),
)
def test_property_no_llamaindex_filter_refusal_shows_the_secret(
    filters: list[Any], condition: FilterCondition, tags_are_metadata: bool
) -> None:
    try:
        args = to_treehop_filters(
            MetadataFilters(filters=filters, condition=condition),
            tags_are_metadata=tags_are_metadata,
        )
        # (the retriever's validation; the secret may be a stored key's name: ``source``
        # is what ``repr`` shows)
        assert SECRET not in args.source
        validate(args)
    except TreehopError as exc:  # (an empty tag is the core's InvalidTagError)
        _clean(exc)
