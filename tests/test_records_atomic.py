"""add_records writes a batch all or nothing (helper records, stop 54).

Before: records were written one ``add_resource`` at a time, each saved, so an embedder that
failed at its 3rd call left the records before it stored (attacks56, "Left"). Now every
record's nodes are built and embedded before the first write, the batch is written under one
lock and committed by one save, and a failure after the first write (an ancestor's summary or
vector, the store itself) reverts the embedded store to the generation before the call.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from treehop import Treehop
from treehop.errors import EmbeddingError, StoreError, TreehopError
from treehop.ingest.records import (
    IngestRecord,
    add_records,
)
from treehop.stores.embedded import EmbeddedStore
from treehop.tagging import ingest as tagger_ingest

from treehop_test_doubles import BagOfWordsEmbedder, add_records_one_by_one, settle_directory_tags


class FlakyEmbedder(BagOfWordsEmbedder):
    """Fails on its ``fail_at``-th call counted from :meth:`arm`."""

    def __init__(self) -> None:
        super().__init__()
        self.fail_at: int | None = None
        self.armed_calls = 0

    def arm(self, fail_at: int) -> None:
        self.fail_at, self.armed_calls = fail_at, 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self.fail_at is not None:
            self.armed_calls += 1
            if self.armed_calls == self.fail_at:
                raise EmbeddingError("boom")
        return super().embed(texts)


def snapshot(client: Treehop) -> dict[str, tuple[str, bytes]]:
    """Every stored node (its JSON) and its vector, by URI."""
    nodes = list(client.store.iter_nodes(None))
    vecs = np.asarray(client.store.get_vectors([n.uri for n in nodes]), np.float32)
    return {n.uri: (n.model_dump_json(), v.tobytes()) for n, v in zip(nodes, vecs, strict=True)}


def settled(client: Treehop) -> dict[str, tuple[str, bytes]]:
    """:func:`snapshot` after ``settle_directory_tags`` (everything else compared as stored)."""
    settle_directory_tags(client)
    return snapshot(client)


def tagger_state(client: Treehop) -> list[bytes | None]:
    """The keyword tagger's saved statistics (written outside the store's generations)."""
    return [client.store.get_state(k) for k in (tagger_ingest.STATE_KEY, tagger_ingest.DELTA_KEY)]


def records(n: int, words: int = 40, tag: str = "") -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    for i in range(n):
        text = f"record {i} {tag} " + " ".join(f"w{(i * 7 + k) % 97}" for k in range(words))
        out.append((text, {"source": f"r/{i}.txt", "n": i}))
    return out


def chunked(n: int) -> list[IngestRecord]:
    """Pages of a few sources: records sharing a source become the chunks of one file."""
    return [
        IngestRecord(f"page {i} of doc {i % 3} alpha beta {i}", {"source": f"d/{i % 3}.pdf"})
        for i in range(n)
    ]


EMBEDDERS: dict[int, FlakyEmbedder] = {}


@pytest.fixture(params=[None, "auto"], ids=["no-tagger", "keyword-tagger"])
def flaky_client(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Treehop]:
    emb = FlakyEmbedder()
    with Treehop(tmp_path / "idx", embedder=emb, tagger=request.param) as c:
        EMBEDDERS[id(c)] = emb
        c.add_resource(
            "seed document about nothing", target_uri="viking://resources/seed.md", is_text=True
        )
        add_records(c, records(3, tag="old"))  # records the failing batch replaces
        yield c


def _fail(client: Treehop, batch: Sequence[Any]) -> None:
    with pytest.raises(TreehopError):
        add_records(client, batch)


@pytest.mark.parametrize("fail_at", [1, 2, 3, 5])
def test_an_embedder_failing_midway_writes_nothing(flaky_client: Treehop, fail_at: int) -> None:
    before, stats = snapshot(flaky_client), tagger_state(flaky_client)
    emb = EMBEDDERS[id(flaky_client)]
    emb.arm(fail_at)
    # 300 records of 40 words: > EMBED_BATCH nodes, so the batch takes several embed calls
    _fail(flaky_client, [*records(300, tag="new"), *chunked(9)])
    emb.fail_at = None
    assert snapshot(flaky_client) == before
    assert tagger_state(flaky_client) == stats
    # nothing half-written on disk either: a fresh client reads the same
    store = flaky_client.aio.store
    assert isinstance(store, EmbeddedStore) and store.path is not None
    path = store.path
    flaky_client.close()
    with Treehop(path, embedder=BagOfWordsEmbedder(), tagger=None) as again:
        assert snapshot(again) == before


def test_a_failure_after_the_first_write_reverts_the_batch(
    flaky_client: Treehop, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ancestors are re-described after the batch's nodes are written: their summary or
    vector failing there reverts the store to the generation before the call."""
    before, stats = snapshot(flaky_client), tagger_state(flaky_client)
    writer = flaky_client.aio.writer

    async def broken(target: object) -> None:
        raise EmbeddingError("ancestor vector failed")

    monkeypatch.setattr(writer, "refresh_ancestors", broken)
    _fail(flaky_client, records(20, tag="new"))
    monkeypatch.undo()
    assert snapshot(flaky_client) == before
    assert tagger_state(flaky_client) == stats
    store = flaky_client.aio.store
    assert isinstance(store, EmbeddedStore) and not store.unsaved
    # and the client keeps working: the same batch then goes in whole
    out = add_records(flaky_client, records(20, tag="new"))
    assert len(out) == 20
    assert len(snapshot(flaky_client)) > len(before)


def test_a_store_upsert_failing_midway_writes_nothing(
    flaky_client: Treehop, monkeypatch: pytest.MonkeyPatch
) -> None:
    before, stats = snapshot(flaky_client), tagger_state(flaky_client)
    store = flaky_client.aio.store
    real = store.upsert
    calls = {"n": 0}

    def upsert(nodes: Any, vectors: Any) -> None:
        calls["n"] += 1
        if calls["n"] == 2:
            raise StoreError("disk full")
        real(nodes, vectors)

    monkeypatch.setattr(store, "upsert", upsert)
    _fail(flaky_client, [*records(40, tag="new"), *chunked(6)])
    monkeypatch.undo()
    assert snapshot(flaky_client) == before
    assert tagger_state(flaky_client) == stats


# ---------------------------------------------------------------- same result as before


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    n=st.integers(1, 40),
    pages=st.integers(0, 8),
    seed=st.integers(0, 10_000),
    tagger=st.sampled_from([None, "auto"]),
    limit=st.sampled_from([1000, 0, 8, 30, 80]),
)
def test_a_batch_stores_what_one_record_at_a_time_stored(
    tmp_path_factory: pytest.TempPathFactory,
    n: int,
    pages: int,
    seed: int,
    tagger: Any,
    limit: int,
) -> None:
    """``limit``: the writer's ``retag_all_below`` (the whole index is re-tagged after a
    write while it holds at most so many nodes): a batch that crosses it re-tags where the
    one-at-a-time write last did."""
    rng = np.random.default_rng(seed)
    batch: list[Any] = []
    for i in range(n):
        words = " ".join(f"v{int(x)}" for x in rng.integers(0, 60, int(rng.integers(3, 400))))
        meta: dict[str, Any] = {"source": f"s/{int(rng.integers(0, 4))}/{i}.md"}
        if rng.random() < 0.3:
            meta["tags"] = ["red"]
        batch.append((f"doc {i} {words}", meta))
    batch += chunked(pages)
    old_batch = records(3, tag="old")  # replaced by nothing, kept; re-added below
    out: list[dict[str, tuple[str, bytes]]] = []
    for write in (add_records_one_by_one, add_records):
        d = tmp_path_factory.mktemp("same")
        with Treehop(d / "idx", embedder=BagOfWordsEmbedder(), tagger=tagger) as c:
            c.aio.writer.retag_all_below = limit
            add_records(c, old_batch)
            write(c, batch)
            write(c, batch[: max(1, n // 2)])  # a re-add: unchanged texts, refreshed metadata
            out.append(settled(c))
    assert out[0] == out[1]


def test_re_adding_replaces_and_keeps_ids(tmp_path: Path) -> None:
    with Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None) as c:
        first = add_records(c, records(10))
        again = add_records(c, [(t + " changed", m) for t, m in records(10)])
        assert first == again
        texts = {n.uri: n.content for n in c.store.iter_nodes("viking://resources/r")}
        assert all("changed" in (texts.get(c.aio.resolve(u)) or "changed") for u in first)


@pytest.mark.parametrize("limit", [0, 60, 1000])
def test_a_batch_crossing_the_retag_limit_stores_the_same_tags(tmp_path: Path, limit: int) -> None:
    """The one-at-a-time write re-tagged the whole index after each record while it held at
    most ``retag_all_below`` nodes; a batch crossing that size re-tags once, where it last
    did (without it, the first records kept their write-time tags: other keywords)."""
    vocab = [
        "index",
        "tree",
        "node",
        "vector",
        "query",
        "chunk",
        "file",
        "summary",
        "store",
        "batch",
        "lock",
        "cache",
    ]
    rng = np.random.default_rng(7)
    batch = [
        (
            f"Record {i}: " + " ".join(vocab[j] for j in rng.integers(0, len(vocab), 12)),
            {"source": f"src{i % 5}/r{i}.txt"},
        )
        for i in range(120)
    ]
    out = []
    for k, write in enumerate((add_records_one_by_one, add_records)):
        with Treehop(tmp_path / f"idx{k}", embedder=BagOfWordsEmbedder(), tagger="auto") as c:
            c.aio.writer.retag_all_below = limit
            write(c, batch)
            out.append(settled(c))
    assert out[0] == out[1]


def test_discard_unsaved_goes_back_to_the_committed_generation(tmp_path: Path) -> None:
    """``EmbeddedStore.discard_unsaved`` (what ``add_records`` calls on a failed batch)."""
    th = Treehop(str(tmp_path / "idx"), embedder=BagOfWordsEmbedder(), tagger=None)
    th.add_resource("kept text about apples", target_uri="viking://resources/kept")
    store = th._async.store
    assert isinstance(store, EmbeddedStore)
    gen, count = store.generation, len(store)
    node = store.get(["viking://resources/kept"])[0]
    assert node is not None
    extra = node.model_copy(update={"uri": "viking://resources/extra", "parent_uri": None})
    store.upsert([extra], np.ones((1, store.dimension or 1), np.float32))
    assert store.unsaved and len(store) == count + 1
    assert store.discard_unsaved() is True
    assert not store.unsaved and len(store) == count and store.generation == gen
    assert store.get(["viking://resources/extra"]) == [None]
    memory = EmbeddedStore()
    memory.upsert([extra], np.ones((1, 4), np.float32))
    memory.save()  # (in memory: the commit point)
    memory.upsert([node], np.ones((1, 4), np.float32))
    # in memory too (helper leftovers61: it kept its writes): back to the last save
    assert memory.discard_unsaved() is True and len(memory) == 1
    assert memory.get([node.uri]) == [None] and memory.get([extra.uri])[0] == extra
