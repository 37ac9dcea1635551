"""Automatic keyword tags: extraction quality on small real-looking texts, the conservative
filters (stopwords, too generic, too rare), determinism, persistence and tag propagation."""

from __future__ import annotations

import json
import logging
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import tags as tags_mod
from treehop.errors import IndexCorruptError, InvalidTagError, TreehopError
from treehop.tagging import (
    EN_STOPWORDS,
    ZH_STOPWORDS,
    KeywordTagger,
    TaggerError,
    TaggerNotFittedError,
    auto_tags,
    propagate,
    tokenize,
)
from treehop.tagging import keywords as tagging

EN = [
    # 0: the seed's machine-learning subtree
    "Model training with PyTorch: we train transformer models on GPUs using mixed precision. "
    "Model training needs a good learning rate schedule, checkpoints and careful evaluation. "
    "PyTorch makes distributed model training on several GPUs straightforward.",
    # 1: data-engineering/feature-store
    "A feature store keeps the features used for model training and online inference "
    "consistent. Feature engineering pipelines write features to the feature store in batch "
    "and streaming modes.",
    # 2: devops/ml-ops
    "MLOps pipelines automate model training, evaluation and deployment. A training pipeline "
    "built on PyTorch and Kubernetes retrains models when new data arrives and pushes them to a "
    "model registry.",
    "Deploying services on Kubernetes: a k8s cluster runs containers in pods; deployments, "
    "services and ingress rules expose them. Helm charts package the Kubernetes manifests.",
    "Data pipelines extract, transform and load records from operational databases into the "
    "warehouse. ETL jobs run nightly; streaming pipelines use Kafka for fresher data.",
    "Database indexing: a B-tree index speeds up range queries on a table, while a hash index "
    "serves equality lookups. Schema design and query plans decide database performance.",
    "Monitoring production services with Prometheus and Grafana: alerts fire when latency or "
    "error rates cross thresholds, and dashboards show cluster health.",
    "Transformers use self-attention to model long sequences. Pretrained transformer models are "
    "fine-tuned for classification, and GPUs are needed for pretraining and fine-tuning.",
]

ZH = [
    "特征工程是模型训练的基础。特征工程把原始数据转换为特征，特征存储保证训练和推理使用一致的特征。",
    "机器学习模型训练需要大量数据和算力，模型训练的最佳实践包括学习率调度和模型评估。",
    "模型训练流水线在集群上自动运行，流水线负责数据校验、模型训练和模型部署。",
    "数据管道负责从业务数据库抽取数据，经过清洗和转换后写入数据仓库。",
    "部署运维团队使用容器和集群管理服务，监控告警保证服务稳定。",
    "特征存储为在线推理提供低延迟的特征查询，离线特征由特征工程流水线批量生成。",
]


@pytest.fixture(scope="module")
def en_tagger() -> KeywordTagger:
    t = KeywordTagger()
    t.fit(EN)
    return t


@pytest.fixture(scope="module")
def zh_tagger() -> KeywordTagger:
    t = KeywordTagger()
    t.fit(ZH)
    return t


def _parts(label: str) -> list[str]:
    return label.split("-")


# ------------------------------------------------------------------ tokenisation


def test_tokenize_keeps_tech_tokens_and_folds_plurals() -> None:
    toks = tokenize(
        "Training PyTorch models on k8s clusters with C++ and node.js, e.g. APIs on AWS."
    )
    assert toks == [
        "training",
        "pytorch",
        "model",
        "k8s",
        "cluster",
        "c++",
        "node.js",
        "api",
        "aws",
    ]


def test_tokenize_keeps_hyphenated_terms_and_singular_s_words() -> None:
    toks = tokenize("Self-attention on Kubernetes; the physics of pandas; studies of boxes.")
    assert toks == ["self-attention", "kubernetes", "physics", "pandas", "study", "box"]


def test_tokenize_drops_numbers_and_stopwords() -> None:
    assert tokenize("In 1958 the results were 3.11 and 42, which is what we used.") == ["result"]


def test_tokenize_contractions_and_possessives() -> None:
    assert tokenize("Don’t use the model's cache; it doesn't help Kafka’s brokers.") == [
        "model",
        "cache",
        "kafka",
        "broker",
    ]


def test_tokenize_chinese_keeps_nouns_only() -> None:
    toks = tokenize("特征工程用于模型训练，并且提供一致的特征。")
    assert "特征" in toks and "模型" in toks and "训练" in toks
    assert not set(toks) & {"的", "用于", "并且", "提供", "一致"}


def test_jieba_logging_is_silenced() -> None:
    tokenize("模型训练")
    assert logging.getLogger("jieba").getEffectiveLevel() >= logging.WARNING


# ------------------------------------------------------------------ extraction quality


def test_english_pytorch_paragraph_gets_obvious_tags(en_tagger: KeywordTagger) -> None:
    got = en_tagger.extract(EN[0])
    assert "pytorch" in got
    assert "model-training" in got
    assert 1 <= len(got) <= 5


def test_english_kubernetes_paragraph(en_tagger: KeywordTagger) -> None:
    got = en_tagger.extract(EN[3])
    assert got[0] == "kubernetes" or "kubernetes" in got[:2]


def test_chinese_feature_engineering_paragraph(zh_tagger: KeywordTagger) -> None:
    got = zh_tagger.extract(ZH[0])
    assert {"特征", "特征工程"} & set(got)
    assert zh_tagger.extract(ZH[1]) == ["模型训练"]


def test_mixed_language_text() -> None:
    texts = [
        "使用 PyTorch 进行模型训练，模型训练在 GPU 集群上运行。",
        "PyTorch 模型训练与部署到 Kubernetes 集群。",
        "数据仓库与数据管道。",
        "Model serving on Kubernetes.",
        "监控告警与运维。",
    ]
    t = KeywordTagger()
    t.fit(texts)
    got = t.extract(texts[0])
    assert "pytorch" in got and "模型训练" in got


def test_bigram_replaces_its_parts(en_tagger: KeywordTagger) -> None:
    got = en_tagger.extract(EN[0])
    assert "model-training" in got
    assert "model" not in got and "training" not in got


def test_textrank_and_tfidf_both_work() -> None:
    for method in ("tfidf", "textrank"):
        t = KeywordTagger(method=method)  # type: ignore[arg-type]
        t.fit(EN)
        got = t.extract(EN[0])
        assert "model-training" in got, method
        assert "gpu" in got, method
        zt = KeywordTagger(method=method)  # type: ignore[arg-type]
        zt.fit(ZH)
        assert "特征工程" in zt.extract(ZH[0]), method


def test_stopwords_never_appear() -> None:
    noisy = [
        *EN,
        *ZH,
        "This is what we would have done; however, it is the same as these, and those.",
        "我们可以通过这个方法进行使用，但是没有什么问题，因为这些情况已经非常一般。",
    ]
    zh_multi = {w for w in ZH_STOPWORDS if len(w) > 1}
    for method in ("tfidf", "textrank"):
        t = KeywordTagger(method=method, max_tags=50, min_score=0.0, min_df=1, max_df_ratio=1.0)  # type: ignore[arg-type]
        t.fit(noisy)
        labels = [lab for doc in t.extract_many(noisy) for lab in doc]
        assert len(labels) > 40, method  # wide open: everything but stopwords may come out
        for lab in labels:
            assert lab not in EN_STOPWORDS and lab not in ZH_STOPWORDS
            assert not set(_parts(lab)) & EN_STOPWORDS
            assert not any(w in lab for w in zh_multi)
        assert t.extract(noisy[-2]) == []
        assert t.extract(noisy[-1]) == []


def test_seed_scenario_directories_share_model_training() -> None:
    """The seed's tree: the three subtrees must share a tag a hop can follow."""
    nodes = {
        "machine-learning": "模型训练与算法",
        "machine-learning/transformers": "Transformer 模型的结构与模型训练技巧",
        "data-engineering": "数据管道与ETL",
        "data-engineering/feature-store": "特征工程用于模型训练，特征存储管理在线与离线特征",
        "data-engineering/warehouse": "数据仓库建模与数据管道调度",
        "devops": "部署运维",
        "devops/ml-ops": "模型训练流水线：自动化训练、评估与部署",
        "devops/monitoring": "服务监控与告警，部署后的运维值守",
    }
    t = KeywordTagger()
    t.fit(list(nodes.values()))
    got = dict(zip(nodes, t.extract_many(list(nodes.values())), strict=True))
    for uri in ("machine-learning", "data-engineering/feature-store", "devops/ml-ops"):
        assert "模型训练" in got[uri], (uri, got[uri])
    assert "模型训练" not in got["data-engineering"] and "模型训练" not in got["devops"]
    # Directories gain their children's topics, so a hop can land on the subtree root.
    de = t.aggregate(
        [got["data-engineering/feature-store"], got["data-engineering/warehouse"]],
        own_labels=got["data-engineering"],
    )
    assert "模型训练" in de


def test_terms_in_every_document_are_dropped() -> None:
    corpus = [f"platform platform platform {doc}" for doc in EN]
    strict = KeywordTagger(max_tags=50, min_score=0.0)
    strict.fit(corpus)
    assert all("platform" not in tags for tags in strict.extract_many(corpus))
    # The same term passes when the ceiling is lifted: the filter, not the scorer, removed it.
    lax = KeywordTagger(max_tags=50, min_score=0.0, max_df_ratio=1.0, max_df_floor=len(corpus))
    lax.fit(corpus)
    assert all("platform" in tags for tags in lax.extract_many(corpus))


def test_too_generic_ratio_on_a_large_corpus() -> None:
    # 30 documents; "pipeline" in 9 (30%) is above max_df_ratio=0.2 (6 documents) and above the
    # small-corpus floor of 5; every other word is shared by exactly two documents.
    corpus = [
        ("pipeline pipeline pipeline " if i < 9 else "") + f"word{i // 2}x word{i // 2}y"
        for i in range(30)
    ]
    t = KeywordTagger(max_df_ratio=0.2, bigrams=False)
    t.fit(corpus)
    assert t.max_df() == pytest.approx(6.0)
    assert t.document_frequency("pipeline") == 9
    got = t.extract_many(corpus)
    assert all("pipeline" not in tags for tags in got)
    assert got[0] == ["word0x", "word0y"]
    lax = KeywordTagger(max_df_ratio=0.5, bigrams=False)
    lax.fit(corpus)
    assert lax.extract(corpus[0])[0] == "pipeline"


def test_terms_in_one_document_are_dropped() -> None:
    corpus = [*EN, "Zanzibar zanzibar zanzibar cloves and Kafka streaming."]
    t = KeywordTagger()
    t.fit(corpus)
    assert "zanzibar" not in t.extract(corpus[-1])
    assert "kafka" in t.extract(corpus[-1])  # shared with the ETL paragraph: a bridge
    t1 = KeywordTagger(min_df=1)
    t1.fit(corpus)
    assert t1.extract(corpus[-1])[0] == "zanzibar"


def test_max_tags_and_min_score() -> None:
    t = KeywordTagger(max_tags=2, min_score=0.0)
    t.fit(EN)
    assert all(len(tags) <= 2 for tags in t.extract_many(EN))
    loose = KeywordTagger(max_tags=20, min_score=0.0)
    loose.fit(EN)
    tight = KeywordTagger(max_tags=20, min_score=0.9)
    tight.fit(EN)
    n_loose = sum(map(len, loose.extract_many(EN)))
    n_tight = sum(map(len, tight.extract_many(EN)))
    assert n_tight < n_loose
    for scored in tight.extract_many_scored(EN):
        assert all(s >= 0.9 for _, s in scored)


def test_zero_max_tags_gives_nothing() -> None:
    t = KeywordTagger(max_tags=0)
    t.fit(EN)
    assert t.extract_many(EN) == [[] for _ in EN]


def test_empty_and_contentless_text() -> None:
    t = KeywordTagger()
    t.fit(EN)
    assert t.extract("") == []
    assert t.extract("   \n\t ") == []
    assert t.extract("the of and, which is; 1958.") == []
    assert t.extract_many([]) == []
    assert t.extract_many(["", EN[0]])[0] == []
    tr = KeywordTagger(method="textrank")
    tr.fit(EN)
    assert tr.extract("") == []


def test_unseen_text_gets_only_corpus_backed_tags(en_tagger: KeywordTagger) -> None:
    got = en_tagger.extract("Quantum annealing of PyTorch models on GPUs.")
    assert "quantum" not in got and "annealing" not in got
    assert "pytorch" in got


# ------------------------------------------------------------------ determinism


def test_deterministic_and_independent_of_corpus_order() -> None:
    for method in ("tfidf", "textrank"):
        a = KeywordTagger(method=method)  # type: ignore[arg-type]
        a.fit(EN + ZH)
        shuffled = list(EN + ZH)
        random.Random(7).shuffle(shuffled)
        b = KeywordTagger(method=method)  # type: ignore[arg-type]
        b.fit(shuffled)
        first = a.extract_many(EN + ZH)
        assert first == a.extract_many(EN + ZH)
        assert first == b.extract_many(EN + ZH)
        assert first == [a.extract(x) for x in EN + ZH]


def test_partial_fit_equals_fit() -> None:
    whole = KeywordTagger()
    whole.fit(EN + ZH)
    inc = KeywordTagger()
    inc.partial_fit(EN[:3])
    inc.partial_fit(EN[3:] + ZH)
    assert inc.n_docs == whole.n_docs == len(EN) + len(ZH)
    assert inc.extract_many(EN + ZH) == whole.extract_many(EN + ZH)
    before = inc.to_dict()
    with pytest.raises(TaggerError):
        inc.partial_fit(["PyTorch again", None])  # type: ignore[list-item]
    assert inc.to_dict() == before  # a bad batch changes nothing
    with pytest.raises(TaggerError):
        inc.fit(["fresh corpus", 3])  # type: ignore[list-item]
    assert inc.to_dict() == before
    refit = KeywordTagger()
    refit.fit(ZH)
    refit.fit(EN)  # fit replaces, it does not accumulate
    assert refit.n_docs == len(EN)
    assert refit.document_frequency("特征") == 0


# ------------------------------------------------------------------ persistence


def test_serialisation_round_trip() -> None:
    for method in ("tfidf", "textrank"):
        t = KeywordTagger(method=method, max_tags=4, max_df_ratio=0.3)  # type: ignore[arg-type]
        t.fit(EN + ZH)
        state = json.loads(json.dumps(t.to_dict()))
        back = KeywordTagger.from_dict(state)
        assert back.params() == t.params()
        assert back.n_docs == t.n_docs and back.vocabulary_size == t.vocabulary_size
        assert back.extract_many(EN + ZH) == t.extract_many(EN + ZH)
        back.partial_fit(["PyTorch on Kubernetes"])
        assert back.document_frequency("pytorch") == t.document_frequency("pytorch") + 1


def test_unfitted_state_round_trip_stays_unfitted() -> None:
    back = KeywordTagger.from_dict(KeywordTagger().to_dict())
    with pytest.raises(TaggerNotFittedError):
        back.extract("x")


@pytest.mark.parametrize(
    "damage",
    [
        lambda s: s.pop("df"),
        lambda s: s.update(version=99),
        lambda s: s.update(df=s["df"][:-1]),
        lambda s: s.update(df=[0] * len(s["df"])),
        lambda s: s["params"].update(method="bm25"),
        lambda s: s.update(n_docs="many"),
    ],
)
def test_damaged_state_raises_index_corrupt(damage: object) -> None:
    t = KeywordTagger()
    t.fit(EN)
    state = t.to_dict()
    damage(state)  # type: ignore[operator]
    with pytest.raises(IndexCorruptError):
        KeywordTagger.from_dict(state)


# ------------------------------------------------------------------ errors


def test_extract_before_fit_raises() -> None:
    with pytest.raises(TaggerNotFittedError):
        KeywordTagger().extract("PyTorch model training")
    assert issubclass(TaggerNotFittedError, TreehopError)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"method": "bm25"},
        {"max_tags": -1},
        {"min_df": 0},
        {"max_df_ratio": 0.0},
        {"max_df_ratio": 1.5},
        {"min_score": 2.0},
        {"window": 1},
        {"max_tags": True},
        {"max_dir_tags": -2},
    ],
)
def test_bad_parameters_raise(kwargs: dict[str, object]) -> None:
    with pytest.raises(TaggerError):
        KeywordTagger(**kwargs)  # type: ignore[arg-type]


def test_bad_text_raises(en_tagger: KeywordTagger) -> None:
    with pytest.raises(TaggerError):
        en_tagger.extract(42)  # type: ignore[arg-type]
    with pytest.raises(TaggerError):
        en_tagger.extract_many("one string, not a list")
    with pytest.raises(TaggerError):
        KeywordTagger().fit("one string, not a list")


# ------------------------------------------------------------------ tag helpers


def test_auto_tags_are_sourced_and_normalised() -> None:
    assert auto_tags(["PyTorch", "model training", "pytorch", "特征工程"]) == [
        "auto:pytorch",
        "auto:model-training",
        "auto:特征工程",
    ]
    with pytest.raises(InvalidTagError):
        auto_tags(["bad;tag"])


def test_propagate_marks_inherit_and_keeps_child_tags_first() -> None:
    got = propagate(["user:machine-learning", "auto:pytorch"], ["user:PyTorch", "auto:gpu"])
    assert got == ["user:pytorch", "auto:gpu", "inherit:machine-learning"]


def test_propagate_never_overrides_user_or_auto_tags() -> None:
    got = propagate(["user:model-training", "user:ops"], ["auto:model-training"])
    assert got == ["auto:model-training", "inherit:ops"]
    # Applied top-down, inherited tags travel on to grandchildren, still marked inherit.
    child = propagate(["user:ml"], [])
    grandchild = propagate(child, ["auto:gpu"])
    assert grandchild == ["auto:gpu", "inherit:ml"]


def test_propagate_rejects_invalid_tags() -> None:
    with pytest.raises(InvalidTagError):
        propagate(["nosuchsource:x"], [])


def test_aggregate_directory_tags(en_tagger: KeywordTagger) -> None:
    children = [
        ["auto:pytorch", "auto:gpu", "inherit:ml-root"],
        ["auto:pytorch", "auto:model-training"],
        ["user:Model Training", "auto:pytorch", "auto:kubernetes"],
    ]
    got = en_tagger.aggregate(children, own_labels=["Transformers"])
    assert got[0] == "transformers"  # the directory's own words first
    assert got[1] == "pytorch"  # in all three children
    assert got[2] == "model-training"  # in two
    assert "ml-root" not in got  # came from above
    assert set(got[3:]) == {"gpu", "kubernetes"}
    assert en_tagger.aggregate(children, max_tags=2) == ["pytorch", "model-training"]
    assert len(KeywordTagger(max_dir_tags=3).aggregate(children, ["a", "b"])) == 3


# ------------------------------------------------------------------ pagerank


def test_pagerank_matches_the_linear_solution() -> None:
    rng = np.random.default_rng(0)
    w = rng.random((6, 6))
    w = w + w.T
    np.fill_diagonal(w, 0.0)
    tele = rng.random(6)
    tele /= tele.sum()
    got = tagging._pagerank(w, tele, damping=0.85, tol=1e-12, max_iter=1000)
    trans = w / w.sum(axis=0)
    exact = np.linalg.solve(np.eye(6) - 0.85 * trans, 0.15 * tele)
    assert np.allclose(got, exact, atol=1e-9)
    assert got.sum() == pytest.approx(1.0)


def test_pagerank_handles_isolated_nodes() -> None:
    w = np.zeros((3, 3))
    w[0, 1] = w[1, 0] = 1.0
    got = tagging._pagerank(w, np.full(3, 1 / 3))
    assert got.sum() == pytest.approx(1.0)
    assert got[2] < got[0] == pytest.approx(got[1])


# ---------------------------------------------------------------- batched analysis == per text


_PIECES = st.sampled_from(
    [
        "model",
        "training",
        "feature",
        "store",
        "k8s",
        "c++",
        "node.js",
        "APIs",
        "the",
        "of",
        "1958",
        "don't",
        "a-b",
        "b-c",
        "re-use",
        ".",
        ",",
        ";",
        "!",
        "\n\n",
        " ",
        "  ",
        "'",
        "-",
        "_",
        "#",
        "+",
        "é",
        "中文特征工程",
        "\x01",
        "Feature-Store",
        "GPUs",
    ]
)


def _per_text(
    texts: list[str], bigrams: bool
) -> list[tuple[list[str], dict[str, tuple[str, str]]]]:
    return [tagging._analyse(t).terms(bigrams) for t in texts]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(_PIECES, max_size=30).map("".join), max_size=6), st.booleans())
def test_batched_terms_equal_per_text_terms(texts: list[str], bigrams: bool) -> None:
    """The batched (one regex pass) analysis finds each text's terms and bigram splits exactly
    as the per-text analysis does, whatever the punctuation, scripts and empty texts."""
    flat = tagging._flat_terms(texts, bigrams)
    want = _per_text(texts, bigrams)
    for i, (terms, parts) in enumerate(want):
        got = sorted(t for d, t in zip(flat.doc.tolist(), flat.terms, strict=True) if d == i)
        assert got == sorted(terms)
        got_parts = {
            t: p for (d, t), p in flat.parts(np.ones(len(flat.terms), bool)).items() if d == i
        }
        assert got_parts == parts


def test_compact_state_round_trips_and_reads_the_json_form() -> None:
    t = KeywordTagger(max_tags=3)
    t.fit(EN)
    for raw in (t.to_bytes(), json.dumps(t.to_dict()).encode()):
        back = KeywordTagger.from_bytes(raw)
        assert back.to_dict() == t.to_dict()
        assert back.extract_many(EN) == t.extract_many(EN)


@pytest.mark.parametrize("cut", [1, 10, -1, -3])
def test_damaged_compact_state_is_index_corrupt(cut: int) -> None:
    t = KeywordTagger()
    t.fit(EN)
    raw = t.to_bytes()
    with pytest.raises(IndexCorruptError):
        KeywordTagger.from_bytes(raw[:cut])


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["auto", "user", "llm", "inherit", "AUTO", "x", ""]),
    st.text(alphabet=st.sampled_from([*"abzAZ09_.+#- :;,'\t", "é", "ﬁ", "\x00"]), max_size=70),
)
def test_tag_fast_path_agrees_with_parse_tag(source: str, label: str) -> None:
    """Tags recognised as already normal skip the parser: the result is what ``parse_tag``
    returns (or the same error), whatever the source, case, characters and length."""
    tag = f"{source}:{label}" if source else label
    try:
        want: str | type[Exception] = tags_mod.parse_tag(tag, default_source="auto")
    except InvalidTagError:
        want = InvalidTagError
    try:
        got: str | type[Exception] = tagging._parsed_tag(tag)
    except InvalidTagError:
        got = InvalidTagError
    assert got == want


def _aggregate_reference(
    tagger: KeywordTagger, child_tags: list[list[str]], own: list[str], limit: int
) -> list[str]:
    """The directory aggregation as first written (one sort over every label): the
    vectorised ranking must choose the same labels in the same order."""
    from collections import Counter

    out = tags_mod.dedupe(tags_mod.normalize_label(x) for x in own)
    counts: Counter[str] = Counter()
    for child in child_tags:
        seen: set[str] = set()
        for tag in child:
            parsed = tags_mod.parse_tag(tag, default_source="auto")
            if parsed.startswith("inherit:"):
                continue
            lab = tags_mod.label_of(parsed)
            if lab not in seen:
                seen.add(lab)
                counts[lab] += 1
    mine = set(out)
    ranked = sorted(
        (lab for lab in counts if lab not in mine),
        key=lambda x: (-counts[x], tagger.document_frequency(x), x),
    )
    return (out + ranked)[:limit]


_AGG_LABEL = st.sampled_from(
    ["alpha", "beta", "gamma", "delta", "kafka", "feature-store", "Tensor Flow", "c++", "zeta"]
)
_AGG_TAG = st.builds(
    lambda src, lab: f"{src}{lab}" if src else lab,
    st.sampled_from(["", "auto:", "user:", "inherit:", "llm:"]),
    _AGG_LABEL,
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.lists(_AGG_TAG, max_size=6), max_size=8),
    st.lists(_AGG_LABEL, max_size=3),
    st.integers(0, 10),
    st.booleans(),
)
def test_aggregate_matches_the_reference_ranking(
    child_tags: list[list[str]], own: list[str], limit: int, fitted: bool
) -> None:
    tagger = KeywordTagger(min_df=1)
    if fitted:
        tagger.fit(["alpha beta kafka", "alpha gamma", "alpha delta zeta", "beta"])
    want = _aggregate_reference(tagger, child_tags, own, limit)
    assert tagger.aggregate(child_tags, own, max_tags=limit) == want


# ---------------------------------------------------------------- integer keys == string terms

import keywords_reference as reference  # noqa: E402  (the tagger before integer keys)

_DOC_WORDS = st.sampled_from(
    [
        "feature",
        "store",
        "feature-store",
        "Feature",
        "stores",
        "data",
        "pipelines",
        "data-pipeline",
        "a-b",
        "b-c",
        "a",
        "b",
        "c",
        "b-c-d",
        "k8s",
        "c++",
        "c#",
        "node.js",
        "GPUs",
        "x",
        "the",
        "model",
        "models",
        "kafka",
        "stream",
        "特征工程",
        "特征",
        "工程",
        "re-use",
        "re",
        "use",
        "zz" * 20,
        "café",
    ]
)
_DOC_GAPS = st.sampled_from([" ", " ", " ", ". ", ", ", "\n\n", "; ", " - "])
_DOC = st.lists(st.tuples(_DOC_WORDS, _DOC_GAPS), max_size=25).map(
    lambda ws: "".join(w + g for w, g in ws)
)


def _same_tags(new: list[list[tuple[str, float]]], old: list[list[tuple[str, float]]]) -> None:
    assert [[lab for lab, _ in d] for d in new] == [[lab for lab, _ in d] for d in old]
    for a, b in zip(new, old, strict=True):
        assert [s for _, s in a] == pytest.approx([s for _, s in b], abs=1e-12)


def _stats_of(t: KeywordTagger | reference.KeywordTagger) -> tuple[int, dict[str, int]]:
    d = t.to_dict()
    return d["n_docs"], dict(zip(d["terms"], d["df"], strict=True))


@settings(max_examples=120, deadline=None)
@given(
    st.lists(_DOC, min_size=1, max_size=14),
    st.lists(_DOC, max_size=5),
    st.sampled_from([(5, 0.5, True), (2, 0.0, True), (8, 0.3, False), (1, 1.0, True)]),
    st.integers(1, 3),
    st.sampled_from([0, 1, tagging._SLACK]),
)
def test_integer_key_tagger_equals_the_string_reference(
    docs: list[str], later: list[str], params: tuple[int, float, bool], min_df: int, slack: int
) -> None:
    """Same tags, scores, document frequencies and statistics as the string-term tagger on
    random corpora of hyphenated, plural, CJK, too-long and repeated words: fit-and-extract,
    a later incremental batch, extraction of unseen texts, and TextRank. A small ranking
    prefix (``slack``) makes most documents take the whole-ranking path too."""
    default = tagging._SLACK
    tagging._SLACK = slack
    try:
        _compare_with_reference(docs, later, params, min_df)
    finally:
        tagging._SLACK = default


def _compare_with_reference(
    docs: list[str], later: list[str], params: tuple[int, float, bool], min_df: int
) -> None:
    max_tags, min_score, bigrams = params
    kw = {"max_tags": max_tags, "min_score": min_score, "bigrams": bigrams, "min_df": min_df}
    new, old = KeywordTagger(**kw), reference.KeywordTagger(**kw)
    got = new.partial_fit_extract(docs, docs)
    assert got == old.partial_fit_extract(docs, docs)
    assert _stats_of(new) == _stats_of(old)
    if later:
        assert new.partial_fit_extract(later, later) == old.partial_fit_extract(later, later)
        assert _stats_of(new) == _stats_of(old)
    unseen = [*later, "feature store data pipelines", "zebra-crossing zebra crossing"]
    if new.vocabulary_size:  # (the reference raised IndexError on an empty vocabulary)
        _same_tags(new.extract_many_scored(unseen), old.extract_many_scored(unseen))
    for word in ("feature-store", "a-b-c", "特征", "nothing", "b-c-d"):
        assert new.document_frequency(word) == old.document_frequency(word)
    tr_new = KeywordTagger(method="textrank", **kw)
    tr_old = reference.KeywordTagger(method="textrank", **kw)
    tr_new.fit(docs)
    tr_old.fit(docs)
    _same_tags(tr_new.extract_many_scored(docs[:4]), tr_old.extract_many_scored(docs[:4]))


@pytest.mark.parametrize("slack", [0, tagging._SLACK])
def test_integer_key_tagger_equals_the_reference_on_a_generated_corpus(
    slack: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A larger corpus (the ingest benchmark's shape: Zipf words, topic words, sentences,
    hyphenated file names and words): every document's tags and scores equal the
    reference's, also when the ranking prefix is cut short (``slack`` 0: many documents
    then rank all their candidates, which the spy checks)."""
    monkeypatch.setattr(tagging, "_SLACK", slack)
    whole = []
    real = KeywordTagger._select_whole
    monkeypatch.setattr(
        KeywordTagger,
        "_select_whole",
        lambda self, out, docs, *cols: (whole.append(len(docs)), real(self, out, docs, *cols)),
    )
    rng = random.Random(7)
    common = [f"w{i}x" for i in range(400)]
    weights = [1.0 / (i + 1) for i in range(len(common))]
    docs = []
    for d in range(600):
        topic = rng.sample(common[50:], 12)
        words = rng.choices(common, weights=weights, k=30) + rng.choices(topic, k=30)
        rng.shuffle(words)
        body = ". ".join(" ".join(words[i : i + 10]) for i in range(0, 60, 10))
        if d % 5 == 0:
            body = body.replace("1x", "1-x")
        docs.append(f"note-{d % 37:04d}\n{body}.")
    for kw in ({}, {"max_tags": 3, "min_score": 0.0}):
        new, old = KeywordTagger(**kw), reference.KeywordTagger(**kw)
        got = new.partial_fit_extract(docs, docs)
        assert got == old.partial_fit_extract(docs, docs)
        assert sum(map(len, got)) > 1000
    assert (sum(whole) > 0) == (slack == 0)
    _same_tags(new.extract_many_scored(docs[:50]), old.extract_many_scored(docs[:50]))


def test_state_of_the_string_format_migrates_with_its_delta() -> None:
    """An index written before integer keys (term-string base and delta) loads to the same
    statistics and tags; the next save writes a new base in the current format."""
    old = reference.KeywordTagger()
    old.fit(EN[:5])
    base = old.full_state()
    old.partial_fit([*EN[5:], "feature-store pipelines", "a-b-c and a b-c"])
    delta = old.state_delta(max_share=1.0)
    assert delta is not None
    new = KeywordTagger.from_bytes(base)
    assert new.apply_delta(delta)
    assert _stats_of(new) == _stats_of(old)
    assert new.extract_many(EN) == old.extract_many(EN)
    assert new.state_delta() is None  # a legacy base: a new one is due
    again = KeywordTagger.from_bytes(new.full_state())
    assert _stats_of(again) == _stats_of(old)
    new.partial_fit(["feature store again", "kafka stream joins"])
    d2 = new.state_delta(max_share=1.0)
    assert d2 is not None and again.apply_delta(d2)
    assert _stats_of(again) == _stats_of(new)
    assert again.extract_many(EN) == new.extract_many(EN)


@pytest.mark.parametrize("field", ["key", "atom"])
def test_state_with_a_non_canonical_or_repeated_entry_is_corrupt(field: str) -> None:
    t = KeywordTagger()
    t.fit(["feature store data", "feature store model"])
    raw = bytearray(t.to_bytes())
    head_end = raw.index(b"\n")
    atoms_end = raw.index(b"\n", head_end + 1)
    if field == "atom":  # an atom repeated: two ids for one string
        atoms = bytes(raw[head_end + 1 : atoms_end]).split(b"\x00")
        atoms[1] = atoms[0]
        raw[head_end + 1 : atoms_end] = b"\x00".join(atoms)
    else:  # a key whose first atom holds a hyphen would spell a string twice
        t2 = KeywordTagger()
        t2.fit(["a-b c", "a-b d"])
        raw = bytearray(t2.to_bytes())
        head_end = raw.index(b"\n")
        atoms_end = raw.index(b"\n", head_end + 1)
        atoms = bytes(raw[head_end + 1 : atoms_end]).split(b"\x00")
        atoms[0] = b"x-y"
        raw[head_end + 1 : atoms_end] = b"\x00".join(atoms)
    with pytest.raises(IndexCorruptError):
        KeywordTagger.from_bytes(bytes(raw))


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from([*"abzAZ09_.+#- :;,'\t", "é", "ﬁ", "\x00"]), max_size=70))
def test_label_fast_path_agrees_with_normalize_label(key: str) -> None:
    try:
        want: str | None = tags_mod.normalize_label(key)
    except InvalidTagError:
        want = None
    tagging._LABEL_CACHE.clear()
    assert tagging._label(key) == want


def test_a_fit_without_terms_extracts_nothing_from_unseen_texts() -> None:
    """A corpus of empty or stopword-only texts leaves an empty vocabulary: extracting from
    new texts gives no tags (it raised a bare IndexError before)."""
    t = KeywordTagger()
    assert t.partial_fit_extract(["", "the of and"], ["", "the of and"]) == [[], []]
    assert t.extract_many(["feature store pipelines", ""]) == [[], []]


_ASSIGN_LABEL = st.sampled_from(["alpha", "beta", "gamma", "c++", "feature-store"])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["auto", "user", "llm", "inherit"]), _ASSIGN_LABEL)),
    st.lists(st.tuples(st.sampled_from(["user", "auto"]), _ASSIGN_LABEL), max_size=3),
    st.lists(_ASSIGN_LABEL, max_size=6),
)
def test_assign_tags_fast_path_equals_the_merge(
    auto: list[tuple[str, str]], users: list[tuple[str, str]], outside: list[str]
) -> None:
    """A node's tags (and what it hands down) equal the two-step ``tags.merge`` whatever its
    computed tags (plain ``auto:`` ones take a shortcut), user tags and inherited labels."""
    from treehop.models import Node
    from treehop.tagging import NodeTags, assign_tags

    base = {"context_type": "resource"}
    parent = Node(
        uri="viking://resources/d", parent_uri="viking://resources", level=1, is_leaf=False, **base
    )
    leaf = Node(
        uri="viking://resources/d/f.md",
        parent_uri="viking://resources/d",
        level=2,
        is_leaf=True,
        **base,
    )
    auto_tags_ = [f"{s}:{lab}" for s, lab in auto]
    user = [f"{s}:{lab}" for s, lab in users]
    computed = {
        parent.uri: NodeTags(auto=["auto:gamma"], own_labels=["gamma"]),
        leaf.uri: NodeTags(auto=auto_tags_, own_labels=[lab for _, lab in auto][:2]),
    }
    assign_tags([parent, leaf], computed, {leaf.uri: user}, {"viking://resources": list(outside)})
    parent_labels = tags_mod.dedupe([*outside, "gamma"])
    own = tags_mod.merge(user, auto_tags_)
    want = tags_mod.merge(own, [f"inherit:{lab}" for lab in parent_labels])
    assert leaf.tags == want
    assert parent.tags == tags_mod.merge(
        ["auto:gamma"], [f"inherit:{lab}" for lab in tags_mod.dedupe(outside)]
    )


def test_accented_words_are_whole_tokens() -> None:
    """``café`` is one token and one tag, not ``caf`` (the token class was ASCII-only)."""
    from treehop.tagging.keywords import KeywordTagger, tokenize

    assert "café" in tokenize("Le café noir, naïve straße")
    assert {"naïve", "strasse"} <= set(tokenize("Le café noir, naïve straße"))  # (casefold)
    texts = [
        "Le café est une boisson. Le café noir.",
        "The café serves coffee and café au lait every day.",
        "Tea is served in the tea room.",
    ]
    tags = KeywordTagger().partial_fit_extract(texts, texts)
    assert "café" in tags[0] and "café" in tags[1]
    assert not any("caf" in t for tt in tags for t in tt if t != "café")
