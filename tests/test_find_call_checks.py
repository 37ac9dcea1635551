"""A find() call is checked once, whole, before any work, on the sync and the async client.

The sync client checks the call (:meth:`AsyncTreehop._check_find`), embeds the query on the
calling thread and runs the checked call (:meth:`AsyncTreehop._find_checked`); it used to
hand the raw arguments to the async ``find``, which checked them all again. These tests pin
what must not change with that: the same typed error, with the same message, from both
clients for every bad call (and nothing embedded first); the same answer as the async client
given the vector the sync one embeds; one check per call; and the kept answers of
:meth:`SearchOptions.build` equal to checks from scratch.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import AsyncTreehop, EmbeddedStore, RetrievalMode, StoreCapabilities, Treehop
from treehop import search_options as so
from treehop.errors import InvalidQueryError, NotFoundError, TreehopError
from treehop.models import ContextType, Node
from treehop.search_options import SEARCH_OPTIONS, SearchOptions
from treehop.uri import root_for

from treehop_test_doubles import BagOfWordsEmbedder

DIM = BagOfWordsEmbedder.dimension
BAD_CALLS: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
    (("",), {}),
    (("   ",), {}),
    (("\u200b",), {}),
    ((None,), {}),
    ((b"bytes",), {}),
    (("x" * 8001,), {}),
    (("ok",), {"limit": 0}),
    (("ok",), {"limit": True}),
    (("ok",), {"limit": "10"}),
    (("ok",), {"mode": "fast"}),
    (("ok",), {"dense_weight": 0.1}),
    (("ok",), {"dense_weight": float("nan")}),
    (("ok",), {"filter": {"op": "bogus"}}),
    (("ok",), {"filter": "not a dict"}),
    (("ok",), {"tags": 5}),
    (("ok",), {"since": "not a time"}),
    (("ok",), {"nope": 1}),
    (("ok",), {"context_type": "music"}),
    (("ok",), {"context_type": 3}),
    (("ok",), {"target_uri": 7}),
    (("ok",), {"target_uri": []}),
    (("ok",), {"target_uri": "viking://resources/../x"}),
    (("ok",), {"target_uri": "viking://resources/a\x00b"}),
    (("ok",), {"slot_chars": -1}),
    (("ok",), {"explain": "yes"}),
    (("ok",), {"query_vector": []}),
    (("ok",), {"query_vector": [0.0] * DIM}),
    (("ok",), {"query_vector": [float("inf")] + [0.0] * (DIM - 1)}),
    (("ok",), {"query_vector": [1.0] * (DIM + 1)}),
    (("ok",), {"query_vector": "text"}),
    (("",), {"query_vector": [0.0] * DIM}),
    # two bad arguments: the one checked first is the one reported, on both clients
    (("",), {"limit": 0}),
    (("ok",), {"context_type": "music", "limit": 0}),
    (("ok",), {"limit": 0, "target_uri": 7}),
    (("ok",), {"query_vector": [], "limit": 0}),
    ((None,), {"query_vector": [1.0] * (DIM + 1)}),
]


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("find-checks") / "idx"
    with Treehop(path, embedder=BagOfWordsEmbedder(), tagger=None) as th:
        th.add_resource(
            "Rotate API keys every ninety days.\n\nRevoke a leaked key at once.",
            target_uri="viking://resources/security/keys",
            tags="ops",
        )
        th.add_resource(
            "Roll out a deployment in waves; pause the rollout with kubectl.",
            target_uri="viking://resources/devops/rollout",
        )
        th.add_memory("The user rotates keys on Mondays.", name="habit")
    return path


@pytest.fixture()
def th(index: Path) -> Iterator[Treehop]:
    with Treehop(index, embedder=BagOfWordsEmbedder(), tagger=None) as client:
        yield client


def _error(call: Any) -> tuple[type[BaseException], str] | None:
    try:
        call()
    except BaseException as exc:  # (compared by the caller)
        return type(exc), str(exc)
    return None


@pytest.mark.parametrize(("args", "kwargs"), BAD_CALLS)
def test_a_bad_find_raises_the_same_typed_error_on_both_clients_before_embedding(
    th: Treehop, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    emb = th.aio.embedder
    assert isinstance(emb, BagOfWordsEmbedder)
    before = emb.calls
    sync = _error(lambda: th.find(*args, **kwargs))
    assert emb.calls == before, "the sync client embedded a query before refusing the call"
    async_ = _error(lambda: th.run(th.aio.find(*args, **kwargs)))
    assert emb.calls == before
    assert sync is not None and issubclass(sync[0], TreehopError), sync
    assert sync == async_


def test_an_unknown_target_is_the_same_not_found_error_on_both_clients(th: Treehop) -> None:
    kwargs: dict[str, Any] = {"target_uri": ["viking://resources/security", "viking://resources/x"]}
    sync = _error(lambda: th.find("keys", **kwargs))
    assert sync is not None and sync[0] is NotFoundError and "resources/x" in sync[1]
    assert sync == _error(lambda: th.run(th.aio.find("keys", **kwargs)))


def _listed(res: Any) -> list[tuple[str, float, str]]:
    return [(m.uri, m.score, str(m.found_by)) for m in res.contexts()]


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"limit": 3, "include_directories": False},
        {"target_uri": "viking://resources/security"},
        {"target_uri": ["viking://resources/devops", "viking://~/memories"], "limit": 4},
        {"context_type": "memory"},
        {"context_type": ContextType.RESOURCE, "tags": "ops", "dense_weight": 1.0},
        {"collapse_chunks": False, "mode": RetrievalMode.QUICK, "explain": True},
    ],
)
def test_a_sync_find_answers_as_the_async_find_given_the_vector_it_embedded(
    th: Treehop, kwargs: dict[str, Any]
) -> None:
    q = "  rotate the keys  "
    vector = th.aio.embedder.embed_query(q.strip())
    sync = th.find(q, **kwargs)
    assert _listed(sync) == _listed(th.run(th.aio.find(q, query_vector=vector, **kwargs)))
    assert _listed(sync) == _listed(th.find(query=q, **kwargs))  # the keyword form
    assert sync.total == len(sync.contexts()) > 0
    assert sync.query_results is not None and sync.query_results[0].query.query == q.strip()


def test_a_find_checks_its_call_once_on_either_client(
    th: Treehop, monkeypatch: pytest.MonkeyPatch
) -> None:
    checks: list[str] = []
    original = AsyncTreehop._check_find

    def counted(self: AsyncTreehop, *args: Any, **kwargs: Any) -> Any:
        checks.append("check")
        return original(self, *args, **kwargs)

    monkeypatch.setattr(AsyncTreehop, "_check_find", counted)
    th.find("rotate keys", limit=3)
    assert checks == ["check"]
    checks.clear()
    th.run(th.aio.find("rotate keys", limit=3))
    assert checks == ["check"]


def test_a_find_without_a_query_is_refused_as_before(th: Treehop) -> None:
    with pytest.raises(InvalidQueryError, match="must be a string"):
        th.find()  # type: ignore[call-arg]


def test_an_embedding_of_another_size_than_the_index_is_refused_typed(
    tmp_path: Path, index: Path
) -> None:
    class Unsized(BagOfWordsEmbedder):
        """Claims no dimension (the same name), so the guard cannot check the answer's
        size: half of the index's."""

        dimension = 0

        def embed(self, texts: Sequence[str]) -> np.ndarray:
            v = BagOfWordsEmbedder().embed(texts)[:, : DIM // 2]
            return v / np.linalg.norm(v, axis=1, keepdims=True)  # type: ignore[no-any-return]

    emb = Unsized()
    with (
        Treehop(index, embedder=emb, tagger=None) as th,
        pytest.raises(InvalidQueryError, match=f"{DIM // 2} dimensions"),
    ):
        th.find("rotate keys")


def test_a_client_whose_user_changes_searches_that_users_spaces(th: Treehop) -> None:
    a = th.aio
    assert a._roots(None, None) == [root_for(ct, "default") for ct in ContextType]
    a.user = "bob"
    assert a._roots(None, None) == [root_for(ct, "bob") for ct in ContextType]
    assert a._roots(None, "memory") == [root_for(ContextType.MEMORY, "bob")]
    a.user = "default"
    assert a._roots(None, None) == [root_for(ct, "default") for ct in ContextType]


# ---------------------------------------------------------------- SearchOptions.build kept
PLAIN_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 1200),
    st.sampled_from(["", "quick", "thinking", "QUICK", "ops", "a;b", "user:ops", "10"]),
    st.sampled_from(list(RetrievalMode)),
    st.text(max_size=6),
)
NAMES = st.sampled_from([*sorted(SEARCH_OPTIONS - {"since", "until"}), "nope"])


def _outcome(options: dict[str, Any], mode: RetrievalMode, reranker: bool, fresh: bool) -> Any:
    build = SearchOptions._build if fresh else SearchOptions.build
    try:
        return build(options, default_mode=mode, reranker_set=reranker)  # type: ignore[arg-type]
    except TreehopError as exc:
        return type(exc), str(exc)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.dictionaries(NAMES, PLAIN_VALUES, max_size=4), min_size=1, max_size=6),
    st.sampled_from(list(RetrievalMode)),
    st.booleans(),
)
def test_kept_search_options_equal_checks_from_scratch(
    calls: list[dict[str, Any]], mode: RetrievalMode, reranker: bool
) -> None:
    for options in calls + calls:  # the second round answered from what was kept
        assert _outcome(options, mode, reranker, False) == _outcome(options, mode, reranker, True)


def test_a_kept_answer_is_never_given_for_an_equal_value_of_another_type() -> None:
    mode = RetrievalMode.QUICK
    assert SearchOptions.build({"limit": 1}, default_mode=mode, reranker_set=False).limit == 1
    with pytest.raises(InvalidQueryError, match="integer"):
        SearchOptions.build({"limit": True}, default_mode=mode, reranker_set=False)
    with pytest.raises(InvalidQueryError):
        SearchOptions.build({"limit": 1.0}, default_mode=mode, reranker_set=False)  # type: ignore[typeddict-item]
    # the reranker and the default mode are part of the answer, and of its key
    rc: Any = {"retrieve_count": 20}
    thinking = RetrievalMode.THINKING
    assert SearchOptions.build(rc, default_mode=thinking, reranker_set=True).retrieve_count == 20
    with pytest.raises(InvalidQueryError, match="retrieve_count applies only"):
        SearchOptions.build(rc, default_mode=mode, reranker_set=True)
    with pytest.raises(InvalidQueryError, match="retrieve_count applies only"):
        SearchOptions.build(rc, default_mode=thinking, reranker_set=False)


def test_only_plain_immutable_options_are_kept() -> None:
    mode = RetrievalMode.QUICK
    key = so._plain_key
    assert key({"limit": 3, "target_uri": "viking://resources"}, mode, False) is not None
    assert key({"tags": ["a"]}, mode, False) is None  # a list may change after the call
    assert key({"filter": {"year": 1}}, mode, False) is None
    assert key({"dense_weight": 0.5}, mode, False) is None
    assert key({"since": "2024-01-01"}, mode, False) is None  # read against the clock
    assert key({"until": None}, mode, False) is None
    assert key({"tags": "x" * 513}, mode, False) is None  # long strings are not held
    tags = ["ops"]
    first = SearchOptions.build({"tags": tags}, default_mode=mode, reranker_set=False)
    tags[0] = "dev"
    again = SearchOptions.build({"tags": tags}, default_mode=mode, reranker_set=False)
    assert (first.tags.any_of, again.tags.any_of) == (("ops",), ("dev",))


def test_what_is_kept_is_bounded() -> None:
    mode = RetrievalMode.QUICK
    for n in range(1, so._BUILT_MAX * 2 + 1):
        SearchOptions.build({"limit": n % 1000 + 1}, default_mode=mode, reranker_set=False)
        assert len(so._BUILT) <= so._BUILT_MAX


def test_the_async_client_on_its_own_loop_answers_the_same(index: Path) -> None:
    async def main() -> list[tuple[str, float, str]]:
        async with AsyncTreehop(index, embedder=BagOfWordsEmbedder(), tagger=None) as a:
            return _listed(await a.find("rotate keys", limit=3))

    with Treehop(index, embedder=BagOfWordsEmbedder(), tagger=None) as th:
        want = _listed(th.find("rotate keys", limit=3))
    got = asyncio.run(main())
    # the same hits; the scores agree to float32 precision, not to the last bit: the sync
    # client makes the vector it embedded a unit row as it does a caller's vector, the
    # async client takes the embedder's row as it is (as they always have)
    assert [(u, f) for u, _, f in got] == [(u, f) for u, _, f in want]
    assert [s for _, s, _ in got] == pytest.approx([s for _, s, _ in want], abs=1e-6)


class _RemoteStore(EmbeddedStore):
    """An in-process store that claims to be remote: each ``get`` / ``children`` notes its
    thread."""

    def __init__(self) -> None:
        super().__init__()
        self.capabilities = StoreCapabilities(remote=True, prefix_scope=True)
        self.threads: list[int] = []

    def get(self, uris: Sequence[str]) -> list[Node | None]:
        self.threads.append(threading.get_ident())
        return super().get(uris)

    def children(self, uri: str) -> list[Node]:
        self.threads.append(threading.get_ident())
        return super().children(uri)


@pytest.mark.parametrize("sync", [False, True])
def test_a_remote_store_is_never_called_on_the_event_loop(sync: bool) -> None:
    """A remote store's SDK blocks: a find's reads of it (the targets' check, the chunk
    diffusion) run in worker threads, never on the loop that serves the other calls."""
    store = _RemoteStore()
    with Treehop(embedder=BagOfWordsEmbedder(), tagger=None, store=store) as th:
        th.add_resource(
            "Rotate API keys.\n\n" * 200, target_uri="viking://resources/keys", is_text=True
        )
        kwargs: dict[str, Any] = {"target_uri": "viking://resources", "chunk_diffusion_count": 1}

        async def awaited() -> tuple[Any, int]:
            return await th.aio.find("rotate keys", **kwargs), threading.get_ident()

        store.threads.clear()
        if sync:
            res, loop_thread = th.find("rotate keys", **kwargs), th._runner._thread.ident
        else:
            res, loop_thread = th.run(awaited())
        assert res.total > 0
        assert len(store.threads) >= 2  # the targets, and the chunks around each hit
        assert loop_thread not in store.threads
