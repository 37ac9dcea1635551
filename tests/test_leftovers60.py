"""Stop 59's leftovers (helper leftovers60), the core's part.

1. A filter on a key an integration shows (LangChain ``source``, LlamaIndex ``file_name`` /
   ``file_path``) matched only the stored key; :func:`treehop.filters.show_fields` rewrites
   it to match the value shown (the frameworks' tests check it end to end; here, that the
   rewrite is exact for every leaf op and stored combination).
2. A closed :class:`~treehop.AsyncTreehop` kept answering every call (its store still in
   memory) and wrote to an index it had saved for the last time, where a closed
   :class:`~treehop.Treehop` raised :class:`~treehop.errors.ClientClosedError`. Now both
   raise it, for every public method (read from the class, so a method added later is
   checked too); ``close()`` twice does nothing.
"""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import AsyncTreehop, Treehop
from treehop import hierarchical_retriever as hr
from treehop.errors import ClientClosedError
from treehop.filters import MetadataFilter, ShownField, show_fields

from treehop_test_doubles import BagOfWordsEmbedder, pottery_memory, recorded_searches, slot_shape

# -- 2. a closed client, sync or async: ClientClosedError from every public method -----------

ARGS: dict[str, tuple[Any, ...]] = {
    "add_memory": ("I moved to Porto",),
    "add_message": ("no-such-session", "user", "hello"),
    "add_messages": ([{"role": "user", "content": "I moved to Porto"}],),
    "add_resource": ("kubernetes rollback text",),
    "add_skill": ("a skill: roll back a deployment",),
    "assemble_context": ("rollback",),
    "delete_session": ("no-such-session",),
    "find": ("rollback",),
    "find_many": (["rollback", "porto"],),
    "get_session": ("no-such-session",),
    "read": ("viking://resources/doc",),
    "remember": ("I moved to Porto",),
    "remove": ("viking://resources/doc",),
    "search": ("rollback",),
    "set_tags": ("viking://resources/doc",),
    "stat": ("viking://resources/doc",),
}
KWARGS: dict[str, dict[str, Any]] = {
    "add_resource": {"name": "other"},
    "add_skill": {"name": "skill"},
    "set_tags": {"add": ["ops"]},
}
PUBLIC = sorted(
    n
    for n, f in inspect.getmembers(AsyncTreehop, inspect.iscoroutinefunction)
    # (the closing methods: close and its asyncio name aclose, usage86; the tests below close)
    if not n.startswith("_") and n not in ("close", "aclose")
)


def test_every_public_coroutine_method_is_listed() -> None:
    # (one added later without a call here fails this, not silently the check below)
    required = {
        n: [
            p
            for p in list(inspect.signature(getattr(AsyncTreehop, n)).parameters.values())[1:]
            if p.default is p.empty and p.kind is p.POSITIONAL_OR_KEYWORD
        ]
        for n in PUBLIC
    }
    assert {n for n, ps in required.items() if ps} <= set(ARGS)
    assert len(PUBLIC) == 22


def _written(path: Path) -> Treehop:
    th = Treehop(path, embedder=BagOfWordsEmbedder(), tagger=None)
    th.add_resource("kubernetes rollback deploy text", name="doc")
    return th


def _nodes(path: Path) -> int:
    with Treehop(path, embedder=BagOfWordsEmbedder(), tagger=None) as th:
        return len(th.store)


@pytest.mark.parametrize("name", PUBLIC)
def test_a_closed_async_client_refuses_every_call(tmp_path: Path, name: str) -> None:
    _written(tmp_path).close()
    before = _nodes(tmp_path)

    async def run() -> None:
        client = AsyncTreehop(tmp_path, embedder=BagOfWordsEmbedder(), tagger=None)
        method = getattr(client, name)
        try:  # the control: open, the call answers or raises something else
            await method(*ARGS.get(name, ()), **KWARGS.get(name, {}))
        except ClientClosedError:  # pragma: no cover - the control failing
            raise AssertionError(f"{name} refused on an open client") from None
        except Exception:
            pass
        await client.close()
        counted = len(client.store)
        with pytest.raises(ClientClosedError, match="closed"):
            await method(*ARGS.get(name, ()), **KWARGS.get(name, {}))
        assert len(client.store) == counted  # nothing written after the close
        await client.close()  # (again: nothing)

    asyncio.run(run())
    if name not in {n for n in PUBLIC if n.startswith(("add", "remember", "remove", "set"))}:
        assert _nodes(tmp_path) == before


@pytest.mark.parametrize("name", PUBLIC)
def test_a_closed_sync_client_refuses_every_call(tmp_path: Path, name: str) -> None:
    th = _written(tmp_path)
    th.close()
    with pytest.raises(ClientClosedError, match="closed"):
        getattr(th, name)(*ARGS.get(name, ()), **KWARGS.get(name, {}))
    with pytest.raises(ClientClosedError, match="closed"):  # its async twin too
        asyncio.run(getattr(th.aio, name)(*ARGS.get(name, ()), **KWARGS.get(name, {})))


def test_a_closed_async_client_refuses_its_retriever() -> None:
    async def run() -> None:
        client = AsyncTreehop(None, embedder=BagOfWordsEmbedder(), tagger=None)
        assert client.retriever() is client.retriever()
        await client.close()
        with pytest.raises(ClientClosedError):
            client.retriever()

    asyncio.run(run())


# -- 3. find_many's deeper run starts from the batch's first search ---------------------------

QUERY = "pottery workshop"


def test_find_many_deeper_run_reuses_the_batch_first_search(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A ``find_many`` query's first global search is answered by the batch
    (``search_columns_batch``); its deeper run (``_deeper_turn_slots``) asked that search
    again, word for word, where a ``find``'s deeper run reuses its own (perf59). Now the
    batch's answer is kept on ``_Query.initial`` as a find's is: no store search repeats
    it, and the answers equal ``find``'s (``test_deeper_turn_slots``)."""
    c = pottery_memory()
    searches = recorded_searches(monkeypatch)
    with c:
        monkeypatch.setattr(hr, "DEEPER_TURNS", False)
        c.find(QUERY, context_type="memory", limit=5)
        first = searches[0]  # a find's first global search: its scope and size
        monkeypatch.setattr(hr, "DEEPER_TURNS", True)
        alone = [slot_shape(c.find(q, context_type="memory", limit=5)) for q in (QUERY, "hiking")]
        searches.clear()
        batch = [
            slot_shape(r) for r in c.find_many([QUERY, "hiking"], context_type="memory", limit=5)
        ]
    assert batch == alone and len(alone[0]) == 5  # (the deeper run ran, and answered alike)
    assert searches, "the deeper run searched deeper"
    assert first not in searches


# -- 1. a filter on a shown key: the rewrite equals the leaf on the shown value ---------------

_MISSING = object()
_VALUES = st.sampled_from([_MISSING, None, "", "a", "b", [], ["a"], ["a", "b"], 0, 3])
_LEAVES = st.one_of(
    st.builds(
        lambda op, conds: {"op": op, "conds": conds},
        st.sampled_from(["must", "must_not"]),
        st.lists(st.sampled_from(["a", "b", "", 0, 3]), min_size=1, max_size=3),
    ),
    st.builds(
        lambda op, v, fold: {"op": op, "value": v, "ignore_case": fold},
        st.sampled_from(["text_match", "text_match_not"]),
        st.sampled_from(["a", "A", "b"]),
        st.booleans(),
    ),
    st.builds(lambda op: {"op": op}, st.sampled_from(["empty", "not_empty"])),
    st.builds(lambda op: {"op": op, "gte": 1}, st.sampled_from(["range", "range_out"])),
)
_FIELDS = [
    ShownField("source", over=("source",), fallback="source_path", when="source_path"),
    ShownField("file_name", over=("file_name", "file_path"), fallback="name", when="source_path"),
    ShownField(
        "file_path", over=("file_name", "file_path"), fallback="source_path", when="source_path"
    ),
]


@settings(max_examples=400, deadline=None)
@given(
    field=st.sampled_from(_FIELDS),
    stored=st.fixed_dictionaries(
        {k: _VALUES for k in ("source", "source_path", "file_name", "file_path", "name")}
    ),
    leaf=_LEAVES,
)
def test_a_rewritten_leaf_matches_as_the_leaf_on_the_shown_value(
    field: ShownField, stored: dict[str, Any], leaf: dict[str, Any]
) -> None:
    """``show_fields`` is exact: for every stored combination (missing, ``None``, ``""``,
    ``[]``, lists, numbers) and every leaf op, the rewritten filter matches exactly where
    the user's leaf matches the value the display shows (``falls_back``: the fallback's,
    else the stored key's)."""
    md = {k: v for k, v in stored.items() if v is not _MISSING}
    leaf = {**leaf, "field": field.key}
    shown = md.get(field.fallback) if field.falls_back(md) else md.get(field.key)
    spec = show_fields(leaf, [field])
    assert spec is not None
    rewritten = MetadataFilter.parse(spec)
    plain = MetadataFilter.parse(leaf)
    assert rewritten is not None and plain is not None
    assert rewritten.matches(md) == plain.matches({field.key: shown})


def test_show_fields_leaves_other_keys_and_nesting_alone() -> None:
    source = _FIELDS[0]
    other = {"op": "must", "field": "lang", "conds": ["en"]}
    assert show_fields(other, [source]) == other
    nested = {"op": "and", "conds": [other, {"op": "must", "field": "source", "conds": ["x"]}]}
    out = show_fields(nested, [source])
    # (helper leftovers61: the whole filter once per case, not each leaf rewritten) the
    # filter as written where the stored key is shown, renamed where the fallback is
    assert out is not None and out["op"] == "or"
    (_, as_written), (_, renamed) = (c["conds"] for c in out["conds"])
    assert as_written == nested and renamed["conds"][0] == other
    assert renamed["conds"][1] == {"op": "must", "field": source.fallback, "conds": ["x"]}
    assert show_fields(None, [source]) is None
