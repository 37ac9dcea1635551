from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from treehop import AsyncTreehop, EmbeddedStore, StoreCapabilities, Treehop
from treehop.errors import (
    EmbeddingError,
    InvalidFilterError,
    InvalidQueryError,
    InvalidURIError,
    NotFoundError,
)


@pytest.fixture
def th(bow, sample_tree: Path):  # type: ignore[no-untyped-def]
    with Treehop(embedder=bow, tagger=None) as client:
        client.add_resource(sample_tree / "resources" / "security", target_uri="viking://resources")
        client.add_resource(sample_tree / "resources" / "devops", target_uri="viking://resources")
        yield client


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"query": ""}, InvalidQueryError, "empty"),
        ({"query": "x" * 8001}, InvalidQueryError, "8000"),
        ({"query": "ok", "limit": 0}, InvalidQueryError, "between 1 and 1000"),
        ({"query": "ok", "limit": 1001}, InvalidQueryError, "between 1 and 1000"),
        ({"query": "ok", "limit": True}, InvalidQueryError, "integer"),
        ({"query": "ok", "target_uri": "viking://resources/nope"}, NotFoundError, "unknown"),
        ({"query": "ok", "target_uri": "viking://resources/../x"}, InvalidURIError, "leave"),
        ({"query": "ok", "filter": {"op": "bogus"}}, InvalidFilterError, "unknown op"),
        ({"query": "ok", "dense_weight": 0.1}, InvalidQueryError, "dense_weight"),
        ({"query": "ok", "mode": "fast"}, ValueError, "fast"),
    ],
)
def test_find_rejects_bad_input(th: Treehop, kwargs: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        th.find(**kwargs)


def test_find_scope_filters_and_split_by_type(th: Treehop) -> None:
    res = th.find("rotate keys for service accounts", limit=3, include_directories=False)
    assert res.resources[0].uri == "viking://resources/security/auth/api-keys.md"
    assert res.total == len(res.resources) + len(res.memories) + len(res.skills)
    scoped = th.find("rotate keys", target_uri="viking://resources/devops", limit=5)
    assert all(m.uri.startswith("viking://resources/devops") for m in scoped.resources)
    both = th.find(
        "rotate keys",
        target_uri=["viking://resources/devops", "viking://resources/security/auth"],
        limit=20,
    )
    roots = {m.uri.split("/")[3] for m in both.resources}
    assert roots == {"devops", "security"}
    md = th.find(
        "anything",
        filter={"op": "must", "field": "kind", "conds": ["markdown"]},
        include_directories=False,
        limit=50,
        score_threshold=-1.0,
    )
    assert md.total == 8 and all(m.metadata["kind"] == "markdown" for m in md.resources)


def test_the_retriever_follows_the_clients_config_store_and_reranker(th: Treehop) -> None:
    """The client keeps one retriever (it holds no per-query state) while its store, config
    and reranker stay the same objects; a find after any of them is replaced uses the new
    one."""
    a = th._async
    kept = a.retriever()
    assert a.retriever() is kept
    before = th.find("deploy rollback", limit=5)
    assert any(m.score != m.own_score for m in before.resources)  # the tree context moved some
    a.config = a.config.model_copy(
        update={
            "context_neighbour_weight": 0.0,
            "context_parent_weight": 0.0,
            "context_sibling_weight": 0.0,
        }
    )
    flat = th.find("deploy rollback", limit=5)
    assert a.retriever() is not kept and a.retriever().config is a.config
    assert all(m.score == m.own_score for m in flat.resources)
    now = a.retriever()
    a.store = a.store  # the same object: kept
    assert a.retriever() is now
    stub = object()
    a.reranker = stub  # type: ignore[assignment]
    assert a.retriever().reranker is stub
    a.reranker = None
    assert a.retriever().reranker is None and a.retriever().store is a.store


def test_ls_read_tree_remove(th: Treehop) -> None:
    tree = th.tree("viking://resources", depth=2)
    assert {c["uri"] for c in tree["children"]} == {
        "viking://resources/security",
        "viking://resources/devops",
    }
    with pytest.raises(InvalidURIError, match="leaf"):
        th.ls("viking://resources/security/auth/oauth.md")
    removed = th.remove("viking://resources/devops")
    assert removed == 8
    with pytest.raises(NotFoundError):
        th.ls("viking://resources/devops")
    assert "devops" not in th.stat("viking://resources").abstract


def test_persisted_index_reopens(bow, sample_tree: Path, tmp_path: Path) -> None:
    with Treehop(tmp_path / "idx", embedder=bow, tagger=None) as a:
        a.add_resource(sample_tree / "resources" / "security", target_uri="viking://resources")
        before = [m.uri for m in a.find("OAuth tokens").contexts()]
    with Treehop(tmp_path / "idx", embedder=bow, tagger=None) as b:
        assert [m.uri for m in b.find("OAuth tokens").contexts()] == before


def test_reopening_with_another_embedder_is_refused(bow, sample_tree: Path, tmp_path: Path) -> None:
    with Treehop(tmp_path / "idx", embedder=bow, tagger=None) as a:
        a.add_resource(sample_tree / "resources" / "security", target_uri="viking://resources")

    class Other(type(bow)):  # type: ignore[misc]
        name = "other-model"

    with pytest.raises(EmbeddingError, match="mix vector spaces"):
        Treehop(tmp_path / "idx", embedder=Other(), tagger=None)


def test_users_are_isolated(bow) -> None:
    with Treehop(embedder=bow, tagger=None, user="alice") as alice:
        alice.add_memory("Alice likes green tea.", name="tea")
        store = alice.store
        bob = AsyncTreehop(embedder=bow, store=store, tagger=None, user="bob")
        res = asyncio.run(bob.find("green tea", context_type="memory"))
        assert res.memories == []
        with pytest.raises(InvalidURIError):
            asyncio.run(bob.read("viking://user/alice/memories/tea"))


async def test_async_client_runs_queries_concurrently(bow, sample_tree: Path) -> None:
    client = AsyncTreehop(embedder=bow, tagger=None)
    await client.add_resource(
        sample_tree / "resources" / "security", target_uri="viking://resources"
    )
    results = await asyncio.gather(
        *(client.find(q, include_directories=False) for q in ["OAuth", "API keys", "SSO"])
    )
    assert [r.resources[0].uri.rsplit("/", 1)[-1] for r in results][:2] == [
        "oauth.md",
        "api-keys.md",
    ]


def test_sync_client_works_inside_a_running_loop(bow, sample_tree: Path) -> None:
    async def inner() -> int:
        with Treehop(embedder=bow, tagger=None) as th:
            th.add_resource(sample_tree / "resources" / "security", target_uri="viking://resources")
            return th.find("OAuth").total

    assert asyncio.run(inner()) > 0


class SlowRemoteStore(EmbeddedStore):
    """An in-process store that claims to be remote and blocks like a network SDK would:
    each search/get waits until the event loop has run a callback meanwhile (5 s at most).
    A call made on the loop's own thread blocks the loop, so the callback cannot run and the
    call counts as blocking. (It used to sleep 0.05 s and the test counted a 10 ms ticker's
    ticks against the wall clock, which a loaded machine failed: 12 ticks in 0.27 s.)"""

    def __init__(self) -> None:
        super().__init__()
        self.capabilities = StoreCapabilities(remote=True, prefix_scope=True)
        self.loop: asyncio.AbstractEventLoop | None = None
        self.calls = 0
        self.blocking_calls = 0

    def _wait_for_the_loop(self) -> None:
        if self.loop is None:
            return
        ran = threading.Event()
        self.loop.call_soon_threadsafe(ran.set)
        self.calls += 1
        if not ran.wait(5):
            self.blocking_calls += 1

    def search(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        self._wait_for_the_loop()
        return super().search(*args, **kwargs)

    def get(self, uris):  # type: ignore[no-untyped-def]
        self._wait_for_the_loop()
        return super().get(uris)


async def test_remote_store_calls_do_not_block_the_event_loop(bow, sample_tree: Path) -> None:  # type: ignore[no-untyped-def]
    store = SlowRemoteStore()
    client = AsyncTreehop(embedder=bow, tagger=None, store=store)
    await client.add_resource(
        sample_tree / "resources" / "security", target_uri="viking://resources"
    )
    store.loop = asyncio.get_running_loop()
    res = await client.find("OAuth", include_directories=False)
    await client.ls("viking://resources/security")
    assert res.total > 0
    # the loop kept running while the store waited: each call saw it run a callback
    assert store.calls > 0
    assert store.blocking_calls == 0, (store.blocking_calls, store.calls)


def test_close_is_idempotent(bow) -> None:  # type: ignore[no-untyped-def]
    th = Treehop(embedder=bow, tagger=None)
    th.close()
    th.close()
    with pytest.raises(RuntimeError, match="closed"):
        th.find("anything")
