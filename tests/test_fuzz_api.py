"""Property-based fuzzing of the public API: only typed errors, and no invalid input accepted.

Each argument is drawn from a strategy that yields ``(value, valid)`` -- values built to be
valid, and values built to be invalid (wrong types, lone surrogates, NUL, blank strings made of
no-break and ideographic spaces, huge integers, NaN, deep filters, empty tag strings, dicts,
unknown modes and context types...). The oracle is therefore known by construction:

* if every drawn argument is valid, the call must succeed;
* if any is invalid, the call must raise a :class:`~treehop.errors.TreehopError` subclass
  (never ``ValueError``/``TypeError``/``RecursionError``/``OverflowError``), and a write call
  must leave the index exactly as it was, with the client still usable.

``max_examples`` keeps CI time bounded (a few seconds per property); ``deadline=None`` because
a loaded CI machine makes per-example timing meaningless.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from treehop import AsyncTreehop, Treehop
from treehop.errors import InvalidURIError, TreehopError
from treehop.models import ContextType, RetrievalMode

from treehop_test_doubles import BagOfWordsEmbedder

SETTINGS = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
INTEGRATION_SETTINGS = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

Pair = tuple[Any, bool | None]

# -- building blocks ---------------------------------------------------------------------------

any_text = st.text(st.characters(codec=None, exclude_categories=()), max_size=30)
"""Any code points, lone surrogates and control characters included."""
clean_text = st.text(
    st.characters(exclude_categories=("Cs", "Cc")), min_size=1, max_size=40
).filter(lambda s: s.strip() != "")
surrogate_text = st.builds(lambda a, b: a + "\ud800" + b, clean_text, clean_text)
blank = st.text(st.sampled_from(" \t\u00a0\u3000\u2003\n"), min_size=1, max_size=6)
junk = st.one_of(
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.binary(max_size=5),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    st.lists(st.integers(), min_size=1, max_size=2),
    st.just(object()),
    st.just(10**400),
)


def valid(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Pair]:
    return strategy.map(lambda v: (v, True))


def invalid(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Pair]:
    return strategy.map(lambda v: (v, False))


def deep_filter(depth: int) -> dict[str, Any]:
    node: dict[str, Any] = {"op": "must", "field": "lang", "conds": ["en"]}
    for _ in range(depth):
        node = {"op": "and", "conds": [node]}
    return node


label = st.from_regex(r"[a-z][a-z0-9]{0,9}", fullmatch=True)
queries = st.one_of(
    valid(clean_text),
    valid(st.builds(lambda a, b: a + "\u00a0" + b + "\u3000", clean_text, clean_text)),
    invalid(blank),
    invalid(surrogate_text),
    invalid(st.just("x" * 8001)),
    invalid(junk),
    invalid(st.none()),
)
limits = st.one_of(
    valid(st.integers(1, 1000)),
    invalid(st.integers(max_value=0)),
    invalid(st.integers(min_value=1001)),
    invalid(st.one_of(st.floats(), st.text(max_size=3), st.booleans(), st.none())),
)
modes = st.one_of(
    valid(st.sampled_from(["quick", "thinking", RetrievalMode.QUICK, RetrievalMode.THINKING])),
    invalid(any_text.filter(lambda s: s not in ("quick", "thinking"))),
    invalid(junk),
    invalid(st.none()),
)
ctypes = st.one_of(
    valid(st.sampled_from([None, "resource", "memory", "skill", ContextType.RESOURCE])),
    invalid(any_text.filter(lambda s: s not in ("resource", "memory", "skill"))),
    invalid(junk),
)
tag_args = st.one_of(
    valid(st.none()),
    valid(st.lists(label, min_size=1, max_size=3)),
    valid(st.lists(label, min_size=1, max_size=3).map(";".join)),
    invalid(st.sampled_from(["", ";;", " ; ", "bad:tag", "a<b", "x" * 65, "\ud800"])),
    invalid(st.lists(st.integers(), min_size=1, max_size=2)),
    invalid(st.one_of(st.integers(), st.floats(), st.dictionaries(label, label, max_size=2))),
)
targets = st.one_of(
    valid(st.sampled_from([None, "viking://resources", ["viking://resources"]])),
    invalid(
        st.sampled_from(
            [
                "",
                "http://x",
                "viking://resources/../etc",
                "viking://resources/a\x00b",
                "viking://resources/\ud800",
                "viking://user/mallory/memories",
                [],
                [5],
            ]
        )
    ),
    invalid(junk),
)
thresholds = st.one_of(
    valid(st.none()),
    valid(st.floats(-1, 1)),
    invalid(st.sampled_from([math.nan, math.inf, -math.inf, 1e10, 10**400, "0.5", True])),
)
filters = st.one_of(
    valid(st.none()),
    valid(st.just({"op": "must", "field": "lang", "conds": ["en"]})),
    valid(st.builds(lambda lo: {"op": "range", "field": "year", "gte": lo}, st.integers(-9, 9))),
    valid(st.integers(1, 30).map(deep_filter)),
    invalid(st.integers(40, 1200).map(deep_filter)),
    invalid(
        st.sampled_from(
            [
                {"op": "range", "field": "year", "gt": 10**400},
                {"op": "range", "field": "year", "gt": math.nan},
                {"op": "bogus", "field": "a"},
                {"op": "must", "field": "a", "conds": []},
                {"op": "must", "field": "", "conds": ["x"]},
                {"op": "must", "field": "a", "conds": [{"x": 1}]},
                {"op": "and", "conds": "nope"},
                {1: 2},
            ]
        )
    ),
    invalid(st.one_of(st.integers(), st.text(max_size=3), st.lists(st.integers(), max_size=2))),
)
flags = st.one_of(
    valid(st.booleans()), invalid(st.one_of(st.integers(), st.none(), st.text(max_size=2)))
)
optional_flags = st.one_of(  # None: the option's own default (include_directories' rule)
    valid(st.one_of(st.booleans(), st.none())),
    invalid(st.one_of(st.integers(), st.text(max_size=2))),
)
diffusion = st.one_of(
    valid(st.integers(0, 5)),
    invalid(st.integers(min_value=6)),
    invalid(st.integers(max_value=-1)),
    invalid(st.one_of(st.floats(), st.text(max_size=2), st.none())),
)
dense = st.one_of(
    valid(st.none()),
    valid(st.floats(0.2, 1)),
    invalid(st.one_of(st.floats(max_value=0.19), st.just(math.nan), st.text(max_size=2))),
)

FIND_ARGS = {
    "limit": limits,
    "mode": modes,
    "context_type": ctypes,
    "tags": tag_args,
    "tags_all": tag_args,
    "target_uri": targets,
    "score_threshold": thresholds,
    "filter": filters,
    "include_directories": optional_flags,
    "explain": flags,
    "chunk_group": flags,
    "chunk_diffusion_count": diffusion,
    "dense_weight": dense,
}


def find_options(draw: st.DrawFn) -> tuple[dict[str, Any], bool]:
    """``find``'s keyword arguments, and whether all of them are valid."""
    chosen = draw(st.sets(st.sampled_from(sorted(FIND_ARGS)), max_size=4))
    kwargs: dict[str, Any] = {}
    ok = True
    for name in sorted(chosen):
        value, good = draw(FIND_ARGS[name])
        kwargs[name] = value
        ok = ok and good
    return kwargs, ok


@st.composite
def find_calls(draw: st.DrawFn) -> tuple[Any, dict[str, Any], bool]:
    query, query_ok = draw(queries)
    kwargs, opts_ok = find_options(draw)
    return query, kwargs, query_ok and opts_ok


# -- fixtures ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("fuzz") / "idx"
    th = Treehop(path, embedder=BagOfWordsEmbedder(), tagger=None)
    th.add_resource(
        "Kubernetes pods roll out in waves.\n\nPause a rollout with kubectl.",
        target_uri="viking://resources/k8s",
        tags="ops;kubernetes",
        metadata={"lang": "en", "year": 2024},
    )
    th.add_memory("The user prefers short answers.", name="style")
    th.close()
    return path


@pytest.fixture(scope="module")
def client(index_dir: Path) -> Iterator[Treehop]:
    th = Treehop(index_dir, embedder=BagOfWordsEmbedder(), tagger=None)
    yield th
    th.close()


def check(call: Any, ok: bool) -> Any:
    """Run ``call``; enforce the oracle; return its result (or None when it raised)."""
    try:
        result = call()
    except TreehopError:
        assert not ok, "valid input was rejected"
        return None
    except BaseException as exc:  # pragma: no cover - the assertion is the test
        raise AssertionError(f"untyped exception {type(exc).__name__}: {exc}") from exc
    assert ok, "invalid input was silently accepted"
    return result


# -- properties --------------------------------------------------------------------------------


@SETTINGS
@given(find_calls())
def test_find_fuzz(client: Treehop, call: tuple[Any, dict[str, Any], bool]) -> None:
    query, kwargs, ok = call
    check(lambda: client.find(query, **kwargs), ok)


@SETTINGS
@given(find_calls(), st.one_of(valid(st.none()), invalid(junk), invalid(st.just("nope"))))
def test_search_fuzz(
    client: Treehop, call: tuple[Any, dict[str, Any], bool], session: Pair
) -> None:
    query, kwargs, ok = call
    kwargs = dict(kwargs)
    if "context_type" in kwargs:  # search() takes context_types (a list)
        ct = kwargs.pop("context_type")
        kwargs["context_types"] = None if ct is None else [ct]
    session_id, session_ok = session
    check(lambda: client.search(query, session_id=session_id, **kwargs), ok and session_ok)


@st.composite
def find_many_calls(draw: st.DrawFn) -> tuple[Any, dict[str, Any], bool]:
    """A batch (a list of drawn queries, empty or not, or something that is no list) and
    ``find``'s options: valid only when the batch is a non-empty list of valid queries."""
    items = draw(st.lists(queries, max_size=4))
    batch: Any = [q for q, _ in items]
    ok = bool(items) and all(good for _, good in items)
    shape = draw(st.sampled_from(["list", "tuple", "str", "junk"]))
    if shape == "tuple":
        batch = tuple(batch)
    elif shape == "str":
        batch, ok = "one query", False
    elif shape == "junk":
        batch, ok = draw(junk), False
    kwargs, opts_ok = find_options(draw)  # (not find_calls: its query is not in the batch)
    return batch, kwargs, ok and opts_ok


@SETTINGS
@given(find_many_calls())
def test_find_many_fuzz(client: Treehop, call: tuple[Any, dict[str, Any], bool]) -> None:
    """Typed errors only, nothing invalid accepted, and each answer the one ``find`` gives."""
    batch, kwargs, ok = call
    got = check(lambda: client.find_many(batch, **kwargs), ok)
    if got is not None:
        assert len(got) == len(batch)
        for q, res in zip(batch, got, strict=True):
            one = client.find(q, **kwargs)
            assert [(m.uri, m.score) for m in res.contexts()] == [
                (m.uri, m.score) for m in one.contexts()
            ]


def test_find_fuzz_async(index_dir: Path) -> None:
    """The native async client under the same oracle (one event loop for all examples)."""
    loop = asyncio.new_event_loop()
    aclient = AsyncTreehop(index_dir, embedder=BagOfWordsEmbedder(), tagger=None)

    @SETTINGS
    @given(find_calls())
    def prop(call: tuple[Any, dict[str, Any], bool]) -> None:
        query, kwargs, ok = call
        check(lambda: loop.run_until_complete(aclient.find(query, **kwargs)), ok)

    try:
        prop()
    finally:
        loop.run_until_complete(aclient.close())
        loop.close()


uris = st.one_of(
    valid(st.sampled_from(["viking://resources", "viking://resources/k8s", "viking://~/memories"])),
    invalid(any_text),
    invalid(junk),
    invalid(st.sampled_from(["viking://resources/..", "viking://user/mallory/memories"])),
)
depths = st.one_of(
    valid(st.integers(0, 64)),
    invalid(st.integers(min_value=65)),
    invalid(st.integers(max_value=-1)),
    invalid(st.one_of(st.text(max_size=2), st.floats(), st.none(), st.booleans())),
)


@SETTINGS
@given(uris, depths)
def test_browse_fuzz(client: Treehop, uri: Pair, depth: Pair) -> None:
    value, ok = uri
    check(lambda: client.stat(value), ok)
    check(lambda: client.tree(value, depth=depth[0]), ok and depth[1])


names = st.one_of(
    valid(st.from_regex(r"[a-z][a-z0-9-]{0,20}", fullmatch=True)),
    valid(st.just("#x")),  # (percent-encoded into its segment: viking://resources/%23x)
    # Refused only where the name makes the URI (no target_uri): with a target_uri it is the
    # resource's shown name, which may hold any text ("a/b" as a title). Marked None: the
    # property decides by the target drawn beside it.
    st.sampled_from(["a/b", ".."]).map(lambda v: (v, None)),
    invalid(st.sampled_from(["", "   ", "a\x00b", "x\ud800", "tab\there"])),
    invalid(st.text(min_size=256, max_size=300, alphabet="ab")),
    invalid(junk.filter(lambda v: v is not None)),
)
json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**62), 2**62),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(st.characters(exclude_categories=("Cs",)), max_size=10),
)
metadatas = st.one_of(
    valid(st.none()),
    valid(
        st.dictionaries(label, st.one_of(json_leaf, st.lists(json_leaf, max_size=3)), max_size=4)
    ),
    invalid(
        st.sampled_from(
            [
                {"a": object()},
                {"a": math.nan},
                {"a": math.inf},
                {1: "x"},
                {"a": {1, 2}},
                {"a": b"x"},
                {"a": "\ud800"},
                {"\udc80": 1},
                {"a": 10**400},
                "meta",
                5,
                ["a"],
            ]
        )
    ),
)
add_tags = st.one_of(
    valid(st.none()),
    valid(st.lists(label, min_size=1, max_size=3)),
    invalid(st.sampled_from(["", ";;", {"a": 1}, 5, ["ok", 5], "bad:tag"])),
)
add_targets = st.one_of(
    valid(st.just(None)),
    valid(st.from_regex(r"viking://resources/fz-[a-z0-9]{1,8}", fullmatch=True)),
    invalid(
        st.sampled_from(
            [
                5,
                "",
                "viking://resources/\ud800",
                "viking://resources/a\x00",
                "viking://resources/a#chunk-1",
                "viking://user/mallory/memories/x",
                "ftp://x",
            ]
        )
    ),
)
texts = st.one_of(
    valid(st.builds(lambda a: a + " words here", clean_text)),
    invalid(st.builds(lambda a: a + " \ud800", clean_text)),
    invalid(st.just("   ")),
    invalid(st.one_of(st.integers(), st.none(), st.binary(max_size=3))),
)
is_texts = st.one_of(valid(st.just(True)), invalid(st.sampled_from(["yes", 1, 0.0])))


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(texts, names, add_targets, metadatas, add_tags, is_texts)
def test_add_resource_fuzz_validates_before_any_write(
    tmp_path_factory: pytest.TempPathFactory,
    text: Pair,
    name: Pair,
    target: Pair,
    metadata: Pair,
    tags: Pair,
    is_text: Pair,
) -> None:
    path = tmp_path_factory.mktemp("add") / "idx"
    th = Treehop(path, embedder=BagOfWordsEmbedder(), tagger=None)
    try:
        th.add_resource("Seed text about kubernetes.", name="seed", is_text=True)
        before = sorted(n.uri for n in th.store.iter_nodes())
        if name[1] is None:  # (a name that cannot be a URI segment: see ``names``)
            name = (name[0], target[0] is not None)
        ok = all(p[1] for p in (text, name, target, metadata, tags, is_text))
        if target[0] is None and name[0] is None:
            ok = False  # a text needs a name or a target
        kwargs = {
            "name": name[0],
            "target_uri": target[0],
            "metadata": metadata[0],
            "tags": tags[0],
            "is_text": is_text[0],
        }
        result = check(lambda: th.add_resource(text[0], **kwargs), ok)
        if result is None:
            assert sorted(n.uri for n in th.store.iter_nodes()) == before
        # Whatever happened, the client still works and saves.
        th.add_resource("Another text about postgres.", name="after", is_text=True)
        assert th.find("postgres").total >= 1
    finally:
        th.close()
    reopened = Treehop(path, embedder=BagOfWordsEmbedder(), tagger=None)
    try:
        assert reopened.stat("viking://resources/after").is_leaf is not None
    finally:
        reopened.close()


@pytest.mark.parametrize("name", ["a/b", ".."])
def test_a_name_that_cannot_be_a_segment_is_refused_only_where_it_makes_the_uri(
    tmp_path: Path, name: str
) -> None:
    """The oracle of the property above, pinned: without ``target_uri`` such a name would make
    a URI no call can name again (refused, nothing written); with one it is the shown name."""
    th = Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None)
    try:
        with pytest.raises(InvalidURIError):
            th.add_resource("Words about kubernetes.", name=name, is_text=True)
        assert list(th.store.iter_nodes()) == []
        for target in ("viking://resources", None):
            with pytest.raises(InvalidURIError):
                th.add_resource("Words about kubernetes.", name=name, target_uri=target)
        th.add_resource("Words about kubernetes.", name=name, target_uri="viking://resources/k8s")
        assert th.read("viking://resources/k8s").startswith("Words about kubernetes")
        th.add_resource("Words about postgres.", name="#x", is_text=True)
        assert th.read("viking://resources/%23x").startswith("Words about postgres")
    finally:
        th.close()


@pytest.fixture(scope="module")
def tags_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Treehop]:
    """An index of its own for the set_tags fuzz: the tags it adds must not reach the
    shared ``index_dir``, whose stored labels the integration fuzz's oracle lists
    (``STORED_LABELS``: a tag filter naming any other label is refused). Sharing it, a CI run
    on a newer Hypothesis drew ``add="a"`` here and then ``tag_filter=["a"]`` there, which was
    then (rightly) accepted."""
    th = Treehop(
        tmp_path_factory.mktemp("fuzz-tags") / "idx", embedder=BagOfWordsEmbedder(), tagger=None
    )
    th.add_resource("Kubernetes pods.", target_uri="viking://resources/k8s", tags="ops")
    yield th
    th.close()


@INTEGRATION_SETTINGS
@given(st.one_of(valid(label), invalid(any_text.filter(lambda s: s.strip() == "")), invalid(junk)))
def test_set_tags_fuzz(tags_client: Treehop, tag: Pair) -> None:
    value, ok = tag
    check(lambda: tags_client.set_tags("viking://resources/k8s", add=value, remove=value), ok)


# -- through the integrations -----------------------------------------------------------------

lc_k = st.one_of(
    valid(st.integers(1, 100)),
    # k=0 is no documents (as VectorStoreRetriever, usage58), and above 1,000 every passage
    # when the retriever's scope holds at most 1,000 (usage60): this index holds a handful.
    valid(st.just(0)),
    valid(st.integers(min_value=1001, max_value=10**6)),
    invalid(st.integers(max_value=-1)),
    invalid(st.floats().filter(lambda f: not f.is_integer())),
)
STORED_LABELS = ("ops", "kubernetes")
"""The tag labels ``index_dir`` stores: a tag filter naming any other label is refused
(``InvalidFilterError``: it would match nothing), as an unknown metadata field is."""
lc_tags = st.one_of(
    valid(st.none()),
    valid(st.lists(st.sampled_from(STORED_LABELS), min_size=1, max_size=3)),
    invalid(st.lists(label.filter(lambda t: t not in STORED_LABELS), min_size=1, max_size=3)),
    invalid(st.sampled_from([[""], [";;"], ["bad:tag"], ["a<b"], [5], ""])),
)


@st.composite
def integration_calls(draw: st.DrawFn) -> tuple[Any, dict[str, Any], bool]:
    query, ok = draw(queries)
    parts = {
        "k": lc_k,
        "tag_filter": lc_tags,
        "metadata_filter": filters,
        "target_uri": st.one_of(
            valid(st.sampled_from([None, "viking://resources"])),
            invalid(st.sampled_from(["", "viking://resources/..", "viking://user/x/memories"])),
        ),
    }
    kwargs: dict[str, Any] = {}
    for name in sorted(draw(st.sets(st.sampled_from(sorted(parts)), max_size=3))):
        value, good = draw(parts[name])
        kwargs[name] = value
        ok = ok and good
    return query, kwargs, ok


@INTEGRATION_SETTINGS
@given(integration_calls())
def test_langchain_invoke_fuzz(client: Treehop, call: tuple[Any, dict[str, Any], bool]) -> None:
    from langchain_treehop import TreehopRetriever

    query, kwargs, ok = call
    retriever = TreehopRetriever(client=client)
    if not isinstance(query, str):
        ok = False
    check(lambda: retriever.invoke(query, **kwargs), ok)


def test_langchain_ainvoke_fuzz(index_dir: Path) -> None:
    from langchain_treehop import TreehopRetriever

    loop = asyncio.new_event_loop()
    aclient = AsyncTreehop(index_dir, embedder=BagOfWordsEmbedder(), tagger=None)
    retriever = TreehopRetriever(client=aclient)

    @INTEGRATION_SETTINGS
    @given(integration_calls())
    def prop(call: tuple[Any, dict[str, Any], bool]) -> None:
        query, kwargs, ok = call
        check(lambda: loop.run_until_complete(retriever.ainvoke(query, **kwargs)), ok)

    try:
        prop()
    finally:
        loop.run_until_complete(aclient.close())
        loop.close()


li_top_k = st.one_of(
    valid(st.integers(1, 1000)),
    # 0 is "no limit" (as SimpleVectorStore, usage58), and above 1,000 every node when the
    # retriever's scope holds at most 1,000 (as LlamaIndex's own retrievers, usage60): this
    # index holds a handful.
    valid(st.just(0)),
    valid(st.integers(min_value=1001, max_value=10**6)),
    invalid(st.integers(max_value=-1)),
    invalid(st.one_of(st.floats(), st.text(max_size=3), st.booleans(), st.none())),
)


@INTEGRATION_SETTINGS
@given(queries, targets, modes, thresholds, li_top_k)
def test_llamaindex_retrieve_fuzz(
    client: Treehop, query: Pair, target: Pair, mode: Pair, threshold: Pair, top_k: Pair
) -> None:
    from llama_index.core.schema import QueryBundle

    from llama_index.retrievers.treehop import TreehopRetriever

    ok = all(p[1] for p in (query, target, mode, threshold, top_k))

    def call() -> Any:
        retriever = TreehopRetriever(
            client,
            target_uri=target[0],
            retrieval_mode=mode[0],
            score_threshold=threshold[0],
            similarity_top_k=top_k[0],
        )
        if not isinstance(query[0], str):
            return retriever.retrieve(QueryBundle(query_str=query[0]))
        return retriever.retrieve(query[0])

    check(call, ok)


# -- sessions ---------------------------------------------------------------------------------

roles = st.one_of(
    valid(st.sampled_from(["user", "assistant", "system"])),
    invalid(any_text.filter(lambda s: s not in ("user", "assistant", "system"))),
    invalid(junk),
)
contents = st.one_of(
    valid(clean_text),
    invalid(blank),
    invalid(surrogate_text),
    invalid(st.just("x" * 100_001)),
    invalid(junk),
)
session_ids = st.one_of(
    valid(st.just("OWN")),
    invalid(st.just("f" * 32)),
    invalid(any_text),
    invalid(junk),
)


@INTEGRATION_SETTINGS
@given(session_ids, roles, contents)
def test_session_api_fuzz(client: Treehop, sid: Pair, role: Pair, content: Pair) -> None:
    own = client.create_session()
    value = own if sid[0] == "OWN" else sid[0]
    check(lambda: client.add_message(value, role[0], content[0]), sid[1] and role[1] and content[1])
    check(lambda: client.get_session(value), sid[1])
    check(lambda: client.search("kubernetes pods", session_id=value, limit=3), sid[1])
    check(lambda: client.delete_session(value), sid[1])
    if sid[0] != "OWN":
        client.delete_session(own)
    assert client.list_sessions() == []
