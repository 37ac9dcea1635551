"""The retriever end to end on every store: ingest, find, search, sessions, tag hops, chunks.

Each test runs through the public client (``Treehop(store=...)``) or the retriever itself, with
the deterministic bag-of-words embedder, and asserts outcomes that do not depend on the engine.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from store_conf_helpers import StoreFactory

from treehop import RetrievalConfig, StopRule, TagHopTrigger, Treehop
from treehop import tags as tagmod
from treehop.demo import index_sample_tree
from treehop.errors import EmbeddingError, NotFoundError
from treehop.hierarchical_retriever import HierarchicalRetriever, RetrievalRequest
from treehop.models import ContextType, FoundBy, Node, TypedQuery
from treehop.stores.base import VectorStore
from treehop.uri import ancestors_of, is_within, parent_of

R = "viking://resources"


@pytest.fixture
def sample(store_factory: StoreFactory, bow: Any) -> Iterator[Treehop]:
    # Dense only: the rankings asserted below are the bag-of-words embedder's.
    th = Treehop(
        embedder=bow,
        store=store_factory("sample"),
        tagger=None,
        config=RetrievalConfig(dense_weight=1.0),
    )
    index_sample_tree(th)
    yield th
    th.close()


def test_sample_tree_is_indexed_whole(sample: Treehop) -> None:
    assert len(sample.store) == 44
    assert {c.uri.rsplit("/", 1)[-1] for c in sample.store.children(R)} == {
        "data-engineering",
        "devops",
        "docs-templates",
        "machine-learning",
        "security",
    }
    assert sample.read("viking://resources/security/auth/oauth.md").startswith("# OAuth")


def test_find_ranks_and_scopes(sample: Treehop) -> None:
    res = sample.find("how do we validate OAuth tokens", limit=5, include_directories=True)
    assert res.contexts()[0].uri == "viking://resources/security/auth"
    # By default a directory whose overview is generated from its children (security/auth
    # has no README) routes the descent but takes no slot; one with its own README may.
    default = sample.find("how do we validate OAuth tokens", limit=5).contexts()
    assert "viking://resources/security/auth" not in {m.uri for m in default}
    assert all(m.is_leaf or m.metadata.get("overview_from") == "README.md" for m in default[:1])
    leaves = sample.find("how do we validate OAuth tokens", include_directories=False)
    assert all(m.is_leaf for m in leaves.contexts())
    scoped = sample.find("validate tokens", target_uri="viking://resources/security", limit=20)
    assert scoped.total > 0
    assert all(is_within(m.uri, "viking://resources/security") for m in scoped.resources)
    skills = sample.find("write an RFC document", context_type="skill")
    assert skills.skills[0].uri == "viking://~/skills/create-rfc"
    assert skills.resources == [] and skills.memories == []
    mem = sample.find("code style preferences", target_uri="viking://~/memories")
    assert mem.memories[0].uri == "viking://~/memories/code-style.md"
    with pytest.raises(NotFoundError):
        sample.find("x", target_uri="viking://resources/nope")


def test_find_metadata_filters(sample: Treehop) -> None:
    md = {"op": "must", "field": "kind", "conds": ["markdown"]}
    res = sample.find(
        "pipelines", filter=md, include_directories=False, limit=50, score_threshold=-1.0
    )
    markdown = [n for n in sample.store.iter_nodes() if n.metadata.get("kind") == "markdown"]
    assert res.total == len(markdown) == 26
    assert all(m.metadata["kind"] == "markdown" for m in res.contexts())
    no_md = sample.find(
        "pipelines",
        filter={"op": "must_not", "field": "kind", "conds": ["markdown"]},
        limit=50,
        score_threshold=-1.0,
    )
    assert no_md.total > 0 and all(not m.is_leaf for m in no_md.contexts())
    named = sample.find(
        "anything",
        filter={
            "op": "or",
            "conds": [
                {"op": "must", "field": "name", "conds": ["oauth.md"]},
                {"op": "must", "field": "source_path", "conds": ["code-style.md"]},
            ],
        },
        score_threshold=-1.0,
    )
    assert {m.uri for m in named.contexts()} == {
        "viking://resources/security/auth/oauth.md",
        "viking://~/memories/code-style.md",
    }


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


@pytest.fixture
def tagged(store_factory: StoreFactory, bow: Any, tmp_path: Path) -> Iterator[Treehop]:
    """Two topical subtrees tagged at ingest; the platform one never mentions the query words."""
    # The seed's stop rule: with the bound the exact top-k needs no hop to be reached.
    cfg = RetrievalConfig(
        tag_hop_trigger=TagHopTrigger.ALWAYS, global_search_topk=4, stop_rule=StopRule.CONVERGENCE
    )
    th = Treehop(embedder=bow, store=store_factory("tagged"), tagger=None, config=cfg)
    ml = _write(
        tmp_path / "ml",
        {
            "training.md": "model training best practices: learning rate, batch size, epochs",
            "evaluation.md": "model training evaluation: validation loss and early stopping",
        },
    )
    platform = _write(
        tmp_path / "platform",
        {
            "feature-jobs.md": "nightly spark jobs write features to the warehouse",
            "serving.md": "low latency lookups from redis for online inference",
        },
    )
    ops = _write(tmp_path / "ops", {"oncall.md": "pager rotation and incident reviews"})
    th.add_resource(ml, target_uri=f"{R}/ml", tags="model-training;ml")
    th.add_resource(platform, target_uri=f"{R}/platform", tags=["model-training", "data"])
    th.add_resource(ops, target_uri=f"{R}/ops", tags="ops")
    th.add_resource(
        "a note on learning rate warmup", target_uri=f"{R}/notes/warmup", tags="ml;tips"
    )
    yield th
    th.close()


def test_find_tag_filters(tagged: Treehop) -> None:
    res = tagged.find("learning rate", tags="ml", limit=20, score_threshold=-1.0)
    assert res.total > 0
    for m in res.contexts():
        assert "ml" in tagmod.labels(m.tags)
    both = tagged.find(
        "learning rate",
        tags_all="ml;tips",
        limit=20,
        score_threshold=-1.0,
        include_directories=False,
    )
    assert [m.uri for m in both.contexts()] == [f"{R}/notes/warmup"]
    src = tagged.find("spark", tags="user:data", limit=20, score_threshold=-1.0)
    assert src.total > 0 and all(is_within(m.uri, f"{R}/platform") for m in src.contexts())


def test_tag_hops_reach_a_subtree_the_query_never_mentions(tagged: Treehop) -> None:
    res = tagged.find(
        "model training best practices", target_uri=R, limit=10, include_directories=False
    )
    assert res.query_results is not None
    hops = res.query_results[0].tag_hops
    assert hops.triggered and "model-training" in hops.tags_used
    assert f"{R}/platform" in hops.subtrees_added
    hopped = [m for m in res.contexts() if m.found_by is FoundBy.TAG_HOP]
    assert hopped and all(is_within(m.uri, f"{R}/platform") for m in hopped)
    assert all(m.hop_tag == "model-training" for m in hopped)
    tagged.config.tag_hop_trigger = TagHopTrigger.OFF
    off = tagged.find(
        "model training best practices", target_uri=R, limit=10, include_directories=False
    )
    assert not any(m.found_by is FoundBy.TAG_HOP for m in off.contexts())


def _seed_store(store: VectorStore) -> None:
    """The seed's scenario (placed vectors): only machine-learning/ matches by its summary."""

    def vec(*pairs: tuple[int, float]) -> np.ndarray:
        v = np.zeros(8, np.float32)
        for i, x in pairs:
            v[i] = x
        return v / np.linalg.norm(v)

    train = (0, 1.0)
    spec: dict[str, tuple[np.ndarray, list[str]]] = {
        R: (vec((7, 1.0)), []),
        f"{R}/machine-learning": (vec(train, (1, 0.3)), ["auto:model-training"]),
        f"{R}/machine-learning/transformers": (vec(train, (1, 0.5)), ["auto:model-training"]),
        f"{R}/machine-learning/transformers/ft.md": (vec(train, (1, 0.4)), ["auto:model-training"]),
        f"{R}/machine-learning/basics.md": (vec(train, (1, 0.6)), ["auto:model-training"]),
        f"{R}/data-engineering": (vec((2, 1.0)), ["auto:etl"]),
        f"{R}/data-engineering/etl.md": (vec((2, 1.0), (3, 0.2)), ["auto:etl"]),
        f"{R}/data-engineering/feature-store": (vec((2, 1.0), (3, 0.5)), ["auto:model-training"]),
        f"{R}/data-engineering/feature-store/fe.md": (vec(train, (3, 1.0)), ["auto:features"]),
        f"{R}/devops": (vec((4, 1.0)), ["auto:deploy"]),
        f"{R}/devops/k8s.md": (vec((4, 1.0), (5, 0.3)), []),
        f"{R}/devops/ml-ops": (vec((4, 1.0), (6, 0.6)), ["auto:model-training"]),
        f"{R}/devops/ml-ops/pipelines.md": (vec(train, (6, 1.0)), []),
    }
    nodes = [
        Node(
            uri=u,
            parent_uri=parent_of(u),
            context_type=ContextType.RESOURCE,
            level=2 if u.endswith(".md") else (0 if u == R else 1),
            is_leaf=u.endswith(".md"),
            abstract=u.rsplit("/", 1)[-1],
            tags=t,
            ancestors=ancestors_of(u),
        )
        for u, (_, t) in spec.items()
    ]
    store.upsert(nodes, np.stack([v for v, _ in spec.values()]))


@pytest.mark.parametrize("trigger", [TagHopTrigger.ALWAYS, TagHopTrigger.ON_DEMAND])
def test_retriever_tag_hops_on_direct_upserts(
    store_factory: StoreFactory, trigger: TagHopTrigger
) -> None:
    store = store_factory(dim=8)
    _seed_store(store)
    cfg = RetrievalConfig(
        global_search_topk=3,
        tag_hop_trigger=trigger,
        score_threshold=0.1,
        stop_rule=StopRule.CONVERGENCE,  # the seed's rule, under which hops decide reach
    )
    q = np.zeros(8, np.float32)
    q[0] = 1.0
    req = RetrievalRequest(
        query=TypedQuery(query="model training"),
        vector=q,
        roots=[R],
        limit=10,
        include_directories=False,
    )
    res = asyncio.run(HierarchicalRetriever(store, cfg).retrieve(req))
    found = {m.uri.rsplit("/", 1)[-1]: m for m in res.matched_contexts}
    assert found["fe.md"].found_by is FoundBy.TAG_HOP
    assert found["fe.md"].hop_tag == "model-training"
    assert set(res.tag_hops.subtrees_added) == {
        f"{R}/data-engineering/feature-store",
        f"{R}/devops/ml-ops",
    }
    assert res.tag_hops.hits_in_topk >= 2


def test_search_with_the_fallback_planner(sample: Treehop) -> None:
    res = sample.search("how do we validate OAuth tokens", include_directories=True)
    assert res.query_plan is not None and res.query_plan.fallback
    assert len(res.query_plan.queries) == 3
    assert res.resources and res.memories and res.skills
    assert res.resources[0].uri == "viking://resources/security/auth"


def test_sessions_persist_through_the_store(
    store_factory: StoreFactory, bow: Any, sample: Treehop
) -> None:
    sid = sample.create_session()
    sample.add_message(sid, "user", "we are migrating the auth service to OAuth")
    sample.add_message(sid, "assistant", "noted: the auth service moves to OAuth")
    first = sample.search("token validation", session_id=sid)
    sample.save()
    with Treehop(
        embedder=bow, store=store_factory("sample"), tagger=None, config=sample.config
    ) as again:
        sess = again.get_session(sid)
        assert [m.content for m in sess.messages] == [
            "we are migrating the auth service to OAuth",
            "noted: the auth service moves to OAuth",
        ]
        again.add_message(sid, "user", "and API keys?")
        assert again.get_session(sid).message_count == 3
        res = again.search("token validation", session_id=sid)
        assert [m.uri for m in res.contexts()] == [m.uri for m in first.contexts()]
        with pytest.raises(NotFoundError):
            again.get_session("0" * 32)


def test_reopening_with_another_embedder_is_refused(
    store_factory: StoreFactory, sample: Treehop
) -> None:
    sample.save()

    class Other(type(sample.aio.embedder)):  # type: ignore[misc]
        name = "another-embedder"

    with pytest.raises(EmbeddingError, match="another-embedder"):
        Treehop(embedder=Other(), store=store_factory("sample"), tagger=None)


def test_remove_and_browse(sample: Treehop) -> None:
    n0 = len(sample.store)
    removed = sample.remove("viking://resources/devops")
    assert removed == 8 and len(sample.store) == n0 - 8
    with pytest.raises(NotFoundError):
        sample.ls("viking://resources/devops")
    names = {e.uri.rsplit("/", 1)[-1] for e in sample.ls(R)}
    assert "devops" not in names and "security" in names
    res = sample.find("deploy kubernetes", limit=20, score_threshold=-1.0)
    assert not any("devops" in m.uri for m in res.contexts())


def test_chunks_reassemble_and_diffuse(store_factory: StoreFactory, bow: Any) -> None:
    paras = [f"Section {i}. " + " ".join(f"word{i}x{j}" for j in range(30)) for i in range(6)]
    text = "\n\n".join(paras)
    with Treehop(embedder=bow, store=store_factory(), tagger=None, chunk_chars=300) as th:
        res = th.add_resource(text, target_uri=f"{R}/long-doc")
        assert res.chunks >= 3
        kids = th.store.children(f"{R}/long-doc")
        assert [k.chunk_index for k in kids] == list(range(len(kids)))
        assert th.read(f"{R}/long-doc").split() == text.split()
        hit = th.find("word2x5 word2x7", limit=1, include_directories=False)
        first = hit.contexts()[0]
        assert first.chunk_index == 2
        wide = th.find(
            "word2x5 word2x7", limit=1, include_directories=False, chunk_diffusion_count=1
        )
        got = {m.chunk_index: m.found_by for m in wide.contexts()}
        assert got[2] is not FoundBy.NEIGHBOUR
        assert got[1] is FoundBy.NEIGHBOUR and got[3] is FoundBy.NEIGHBOUR
