"""A LangGraph item's abstract, and so its namespace directory's abstract and overview, read
the item's indexed fields as text (helper store57).

Before: the abstract was the embedded text cut at 300 characters, which with the default
``index_fields=["$"]`` is the value's JSON, so a namespace of ``{"text": ...}`` items was
described as ``memories: {"text"; {"text"; ...`` and its overview's lines were JSON. The
embedded text of the item itself (its ``content``) is unchanged: what LangGraph's index
config selects (the JSON for ``"$"``, as ``InMemoryStore`` embeds it).
"""

from __future__ import annotations

import json
import string
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langgraph.store.base import PutOp
from langgraph.store.base.embed import get_text_at_path

from langchain_treehop import TreehopStore
from langchain_treehop.store import select_at_path, value_text
from treehop import Treehop
from treehop.errors import InvalidQueryError

from treehop_test_doubles import BagOfWordsEmbedder

NS = ("users", "u1", "memories")
FACTS = [
    "prefers oat milk in coffee",
    "lives in Lisbon since spring",
    "allergic to peanuts",
    "plays cello on weekends",
    "works night shifts at the hospital",
    "daughter starts school in September",
]
JSON_MARKS = ('{"', '"text"', '":', '["', "}")


def _client() -> Treehop:
    return Treehop(None, embedder=BagOfWordsEmbedder())


def _node(th: Treehop, uri: str) -> Any:
    node = th.store.get([uri])[0]
    assert node is not None
    return node


def test_the_namespace_directory_reads_item_values_as_text() -> None:
    """Default fields (``$``): the directory's abstract and overview carry each item's words
    as ``text = ...``, no JSON punctuation; the items' own embedded text is still the JSON."""
    th = _client()
    try:
        store = TreehopStore(th)
        store.batch([PutOp(NS, f"m{i}", {"text": f}) for i, f in enumerate(FACTS)])
        d = _node(th, store.namespace_uri(NS))
        for mark in JSON_MARKS:
            assert mark not in d.abstract and mark not in d.overview
        assert d.abstract.startswith("memories: text = prefers oat milk in coffee; text = ")
        for f in FACTS:
            assert f"text = {f}" in d.overview
        item = _node(th, store.item_uri(NS, "m2"))
        assert item.abstract == "text = allergic to peanuts"
        assert item.content == json.dumps({"text": FACTS[2]})  # what "$" embeds, unchanged
        # the directory above names the namespace by its items' words too
        assert "prefers oat milk" in _node(th, store.namespace_uri(NS[:2])).overview
    finally:
        th.close()


def test_index_fields_choose_the_text_of_the_abstract() -> None:
    """``index_fields=["text"]``: the abstract is the field's text, as embedded; a put's own
    ``index`` overrides it, and ``index=False`` reads the whole value."""
    th = _client()
    try:
        store = TreehopStore(th, index_fields=["text"])
        value = {"text": "plays cello on weekends", "kind": "hobby", "tags": ["music", "art"]}
        store.put(NS, "a", value)
        store.put(NS, "b", value, index=["kind", "tags[*]"])
        store.put(NS, "c", value, index=False)
        store.put(NS, "d", {"profile": {"city": "Lisbon", "pets": [{"name": "Rex"}]}})
        a, b, c, d = (_node(th, store.item_uri(NS, k)) for k in "abcd")
        assert a.abstract == a.content == "plays cello on weekends"
        assert b.abstract == "hobby; music; art" and b.content == "hobby\nmusic\nart"
        assert c.abstract == "kind = hobby; tags = music, art; text = plays cello on weekends"
        assert c.content == json.dumps(value)  # unindexed: stored as before (in key order, usage64)
        # "text" selects nothing in d: unindexed, its whole value read as text
        assert d.abstract == "profile.city = Lisbon; profile.pets.name = Rex"
        overview = _node(th, store.namespace_uri(NS)).overview
        assert "- @a: plays cello on weekends" in overview
        assert "- @d: profile.city = Lisbon" in overview
    finally:
        th.close()


def test_a_value_mixing_int_and_str_keys_is_refused_typed() -> None:
    """``{1: "x", "b": 2}`` passed the check (json.dumps without sort_keys) and raised a
    ``TypeError`` out of the write, which dumps with ``sort_keys``."""
    th = _client()
    try:
        store = TreehopStore(th)
        with pytest.raises(InvalidQueryError, match="JSON-serialisable"):
            store.put(NS, "k", {1: "x", "b": 2})
        assert store.get(NS, "k") is None
    finally:
        th.close()


def test_a_deep_or_large_value_is_read_within_the_bound() -> None:
    """The reading is iterative and bounded: a value nested 500 deep, or holding 200,000
    list items, gives a short abstract, no RecursionError."""
    deep: Any = "bottom"
    for _ in range(500):
        deep = {"k": deep}
    text = value_text(deep, ["$"])
    assert text.endswith(".k = bottom") and text.startswith("k.k.k")
    long_keys: Any = "bottom"
    for _ in range(900):  # (names are cut at the limit: not 900 x 2,000-character prefixes)
        long_keys = {"k" * 2000: long_keys}
    assert value_text(long_keys, ["$"]) == "k" * 1264
    big = {"xs": list(range(200_000))}
    out = value_text(big, ["$"], limit=100)
    assert len(out) == 100 and out.startswith("xs = 0, 1, 2, ")


# ------------------------------------------------------------------ property checks
_scalars = st.one_of(
    st.text(alphabet=string.ascii_letters + " ", max_size=6),
    st.integers(-50, 50),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
)
_keys = st.sampled_from(["a", "b", "text", "c"])
_values = st.recursive(
    _scalars,
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(_keys, kids, max_size=3),
    max_leaves=12,
)
_paths = st.sampled_from(
    ["$", "a", "a.b", "text", "a[0]", "a[-1]", "a[*]", "a[*].b", "*", "*.text", "{a,b.c}", "b[7]"]
)


def _as_langgraph(obj: Any) -> str:
    if isinstance(obj, (list, dict)):
        return json.dumps(obj, sort_keys=True, ensure_ascii=False)
    return str(obj)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_keys, _values, max_size=4), _paths)
def test_the_selection_is_langgraphs(value: dict[str, Any], path: str) -> None:
    """``select_at_path`` selects what ``get_text_at_path`` embeds, object for text: the
    abstract reads the same fields the item's vector is made from."""
    assert [_as_langgraph(o) for o in select_at_path(value, path)] == get_text_at_path(value, path)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_keys, _values, max_size=4), st.integers(1, 400))
def test_the_text_has_no_json_punctuation_and_keeps_every_word(
    value: dict[str, Any], limit: int
) -> None:
    """Values of letters, numbers and booleans read as text: no brace, bracket or quote, at
    most ``limit`` characters, and (uncut) every non-blank string value's text present."""
    out = value_text(value, ["$"], limit=limit)
    assert len(out) <= limit
    assert not set(out) & set('{}[]"')
    whole = value_text(value, ["$"], limit=10**6)
    assert whole.startswith(out)
    words: list[str] = []
    stack: list[Any] = [value]
    while stack:
        o = stack.pop()
        if isinstance(o, dict):
            stack.extend(o.values())
        elif isinstance(o, list):
            stack.extend(o)
        elif isinstance(o, str) and o.strip():
            words.append(o)
    for w in words:
        assert w in whole
