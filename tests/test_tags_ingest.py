"""Tags written at ingest (user, auto, inherit), filtered at search, re-tagged by backfill."""

from __future__ import annotations

from pathlib import Path

import pytest

from treehop import Treehop
from treehop import tags as t
from treehop.errors import IndexCorruptError, InvalidTagError
from treehop.stores.embedded import EmbeddedStore
from treehop.tagging.ingest import DELTA_KEY, STATE_KEY, IngestTagger
from treehop.tagging.keywords import KeywordTagger


@pytest.fixture
def th(bow, sample_tree: Path):  # type: ignore[no-untyped-def]
    with Treehop(embedder=bow) as client:
        for name in ["machine-learning", "data-engineering", "devops"]:
            client.add_resource(sample_tree / "resources" / name, target_uri="viking://resources")
        client.add_resource(
            sample_tree / "resources" / "security",
            target_uri="viking://resources",
            tags="Security; user:Compliance",
        )
        yield client


def sources(tags: list[str]) -> set[str]:
    return {t.source_of(x) for x in tags}


def test_user_tags_are_normalised_and_on_every_node(th: Treehop) -> None:
    for n in th.store.iter_nodes("viking://resources/security"):
        assert {"user:security", "user:compliance"} <= set(n.tags), n.uri
    for n in th.store.iter_nodes("viking://resources/devops"):
        assert "user" not in sources(n.tags)


def test_automatic_keywords_name_their_source(th: Treehop) -> None:
    leaf = th.stat("viking://resources/devops/ml-ops/training-pipelines.md")
    assert "auto:model-training" in leaf.tags
    d = th.stat("viking://resources/devops/ml-ops")
    # a directory carries its children's shared topics, so a hop can find the subtree
    assert "auto:model-training" in d.tags
    assert all(x.split(":", 1)[0] in t.SOURCES for x in leaf.tags)


def test_directory_tags_are_inherited_and_marked(th: Treehop) -> None:
    # machine-learning/README.md says "Model training and algorithms": its own keywords pass down
    ml = th.stat("viking://resources/machine-learning")
    assert "auto:model-training" in ml.tags
    deep = th.stat("viking://resources/machine-learning/classical/gradient-boosting.md")
    assert "inherit:model-training" in deep.tags
    # ... but keywords a directory only aggregated from one child are not handed to siblings
    registry = th.stat("viking://resources/devops/ml-ops/model-registry.md")
    assert "inherit:model-training" not in registry.tags


def test_invalid_user_tags_are_rejected(th: Treehop, sample_tree: Path) -> None:
    with pytest.raises(InvalidTagError):
        th.add_resource(sample_tree / "resources" / "docs-templates", tags="bad,tag")
    with pytest.raises(InvalidTagError):
        th.add_resource(sample_tree / "resources" / "docs-templates", tags=["nobody:x"])


def test_tag_filters_any_all_and_with_target(th: Treehop) -> None:
    res = th.find(
        "keys", tags="compliance", include_directories=False, score_threshold=-1, limit=50
    )
    assert res.total == 3 and all("security" in m.uri for m in res.resources)
    res = th.find(
        "training",
        tags_all=["model-training", "pipeline"],
        include_directories=False,
        score_threshold=-1,
        limit=50,
    )
    assert "viking://resources/devops/ml-ops/training-pipelines.md" in [
        m.uri for m in res.resources
    ]
    assert all({"model-training", "pipeline"} <= t.labels(m.tags) for m in res.resources)
    res = th.find(
        "training",
        tags="model-training",
        target_uri="viking://resources/devops",
        include_directories=False,
        score_threshold=-1,
        limit=50,
    )
    assert {m.uri for m in res.resources} == {
        "viking://resources/devops/ml-ops/training-pipelines.md"
    }
    assert th.find("x", tags="no-such-tag").total == 0


def test_backfill_retags_without_re_embedding(th: Treehop, bow) -> None:  # type: ignore[no-untyped-def]
    uris = [n.uri for n in th.store.iter_nodes("viking://resources")]
    before = {u: th.store.get([u])[0].tags for u in uris}  # type: ignore[union-attr]
    keep_user = {u: [x for x in tags if x.startswith("user:")] for u, tags in before.items()}
    th.store.update_tags(keep_user)  # an index written before auto tags existed
    calls = bow.texts_embedded
    changed = th.retag()
    assert changed > 10
    assert bow.texts_embedded == calls
    after = {u: th.store.get([u])[0].tags for u in uris}  # type: ignore[union-attr]
    assert after == before  # small index: ingest already tagged with whole-index statistics
    assert th.retag() == 0  # idempotent


def test_set_tags_updates_node_and_descendants(th: Treehop) -> None:
    tags = th.set_tags("viking://resources/devops/ml-ops", add="mlops", remove=[])
    assert "user:mlops" in tags
    leaf = th.stat("viking://resources/devops/ml-ops/model-registry.md")
    assert "inherit:mlops" in leaf.tags
    th.set_tags("viking://resources/devops/ml-ops", remove="mlops")
    assert "inherit:mlops" not in th.stat("viking://resources/devops/ml-ops/model-registry.md").tags
    assert "user:mlops" not in th.stat("viking://resources/devops/ml-ops").tags


def test_tagger_statistics_persist(bow, sample_tree: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    with Treehop(tmp_path / "i", embedder=bow) as a:
        a.add_resource(sample_tree / "resources" / "devops", target_uri="viking://resources")
        n_before = a.aio.tagger._get(a.store).n_docs
    with Treehop(tmp_path / "i", embedder=bow) as b:
        assert b.aio.tagger._get(b.store).n_docs == n_before > 0


def _stats(tagger: KeywordTagger) -> tuple[int, dict[str, int]]:
    d = tagger.to_dict()
    return d["n_docs"], dict(zip(d["terms"], d["df"], strict=True))


_BATCHES = [
    # A first batch large enough that the later small ones touch under 1/8 of its terms.
    [f"topic{i} area{i % 7} note{i % 11} feature store" for i in range(200)]
    + ["feature store pipelines", "feature store serving latency", "kafka stream pipelines"],
    ["kafka stream joins", "vector index recall", "vector index build time"],
    ["feature store backfill", "stream joins windowing"],
]


def test_tagger_state_saves_deltas_and_reloads_equal(tmp_path: Path) -> None:
    """After the first save (a base), saves write a delta; a store reopened from disk loads
    base + delta and has exactly the statistics and tags of the tagger that saved them."""
    store = EmbeddedStore(tmp_path / "i")
    live = IngestTagger()
    for batch in _BATCHES:
        live._get(store).partial_fit(batch)
        live._save(store)
    base = store.get_state(STATE_KEY)
    delta = store.get_state(DELTA_KEY)
    assert base and delta  # the later saves wrote a delta, the base stayed
    store.close()
    reopened = EmbeddedStore(tmp_path / "i")
    loaded = IngestTagger()._get(reopened)
    want = live._get(store)
    assert _stats(loaded) == _stats(want)
    texts = [t for b in _BATCHES for t in b]
    assert loaded.extract_many(texts) == want.extract_many(texts)
    reopened.close()


def test_tagger_state_delta_of_another_base_is_ignored_and_damage_is_typed() -> None:
    a = KeywordTagger()
    a.partial_fit(_BATCHES[0])
    base = a.full_state()
    a.partial_fit(_BATCHES[1])
    delta = a.state_delta()
    assert delta is not None
    fresh = KeywordTagger.from_bytes(base)
    assert fresh.apply_delta(delta) and _stats(fresh) == _stats(a)
    # A delta left behind by a save that wrote a new base: ignored, the new base holds it.
    newer = KeywordTagger.from_bytes(a.full_state())
    assert not newer.apply_delta(delta) and _stats(newer) == _stats(a)
    for damaged in (delta[:-3], delta[: delta.index(b"\n")], b"{}\nx\n"):
        with pytest.raises(IndexCorruptError):
            KeywordTagger.from_bytes(base).apply_delta(damaged)


def test_tagger_state_writes_a_new_base_when_the_delta_grows() -> None:
    t = KeywordTagger()
    t.partial_fit(_BATCHES[0])
    t.full_state()
    t.partial_fit(_BATCHES[0][:50])
    assert t.state_delta(max_share=0.01) is None  # most terms touched: a new base is due
    assert t.state_delta(max_share=1.0) is not None
