"""The BM25 index beside the embedded store, its tokenizer, and the hybrid score mix."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import text_tokenize
from treehop.errors import IndexCorruptError, InvalidQueryError, StoreError
from treehop.lexical import LexicalIndex, hybrid_scores, normalize_lexical, validate_dense_weight
from treehop.text_tokenize import porter_stem, tokenize


def split(text: str) -> list[str]:
    return text.split()


def plain_index(**kwargs: float) -> LexicalIndex:
    """An index with a whitespace tokenizer, so expected scores can be written by hand."""
    return LexicalIndex(tokenizer=split, tokenizer_id="split", **kwargs)


def reference_bm25(
    docs: dict[int, list[str]], query: list[str], k1: float = 1.2, b: float = 0.75
) -> dict[int, float]:
    """Textbook Okapi BM25 with Lucene's IDF, one document at a time."""
    n = len(docs)
    avgdl = sum(len(d) for d in docs.values()) / n
    out: dict[int, float] = {}
    for row, toks in docs.items():
        s = 0.0
        for q in query:
            df = sum(1 for d in docs.values() if q in d)
            tf = toks.count(q)
            if df == 0 or tf == 0:
                continue
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            s += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(toks) / avgdl))
        out[row] = s
    return out


# ------------------------------------------------------------------------------ scoring


def test_scores_match_hand_computed_bm25() -> None:
    idx = plain_index()
    idx.upsert([0, 1, 2], ["cat dog", "cat cat fish", "bird"])
    # N = 3, avgdl = 2; "cat" has df 2: idf = ln(1 + 1.5 / 2.5) = ln 1.6.
    # row 0: tf 1, dl 2 -> 1 * 2.2 / (1 + 1.2 * (0.25 + 0.75)) = 1.0
    # row 1: tf 2, dl 3 -> 2 * 2.2 / (2 + 1.2 * (0.25 + 0.75 * 1.5)) = 4.4 / 3.65
    expected = [math.log(1.6), math.log(1.6) * 4.4 / 3.65, 0.0]
    assert idx.score("cat") == pytest.approx(expected, rel=1e-6)
    # "fish": df 1, idf = ln(1 + 2.5 / 1.5); row 1 tf 1, dl 3 -> 2.2 / (1 + 1.65).
    fish = math.log(1 + 2.5 / 1.5) * 2.2 / 2.65
    assert idx.score("fish") == pytest.approx([0.0, fish, 0.0], rel=1e-6)
    # Query terms add up; a repeated query term counts twice (as in Lucene and bm25s).
    assert idx.score("cat fish")[1] == pytest.approx(expected[1] + fish, rel=1e-6)
    assert idx.score("fish fish")[1] == pytest.approx(2 * fish, rel=1e-6)
    assert idx.score("unknown words") == pytest.approx([0.0, 0.0, 0.0])
    assert idx.avgdl == pytest.approx(2.0)
    assert len(idx) == 3


def test_k1_and_b_are_used() -> None:
    docs = {0: ["a", "b", "c", "a"], 1: ["a", "d"], 2: ["e", "f", "g", "h", "i"]}
    for k1, b in [(0.5, 0.0), (2.0, 1.0)]:
        idx = plain_index(k1=k1, b=b)
        idx.upsert(list(docs), [" ".join(t) for t in docs.values()])
        ref = reference_bm25(docs, ["a", "d"], k1, b)
        assert idx.score("a d") == pytest.approx([ref[r] for r in range(3)], rel=1e-6)
    with pytest.raises(InvalidQueryError):
        LexicalIndex(b=1.5)
    with pytest.raises(InvalidQueryError):
        LexicalIndex(k1=float("nan"))
    with pytest.raises(InvalidQueryError, match="tokenizer_id"):
        LexicalIndex(tokenizer=split)


def test_sparse_rows_and_size_alignment() -> None:
    idx = plain_index()
    idx.upsert([5, 2], ["x y", "x"])
    full = idx.score("x")
    assert full.shape == (6,) and full.dtype == np.float32
    assert full[[0, 1, 3, 4]].tolist() == [0, 0, 0, 0]
    assert full[2] > full[5] > 0  # shorter document, same tf
    # size pads or truncates to line up with the store's row count.
    assert idx.score("x", size=8).shape == (8,)
    assert idx.score("x", size=3).tolist() == pytest.approx(full[:3].tolist())
    assert idx.contains([2, 3, 5, 100]).tolist() == [True, False, True, False]


def test_upsert_replaces_a_rows_text() -> None:
    idx = plain_index()
    idx.upsert([0, 1], ["apple banana", "banana"])
    assert idx.document_frequency("banana") == 2
    idx.upsert([0], ["cherry cherry cherry"])
    assert len(idx) == 2
    assert idx.score("apple").tolist() == [0.0, 0.0]
    assert idx.document_frequency("apple") == 0
    assert idx.document_frequency("banana") == 1
    assert idx.avgdl == pytest.approx(2.0)  # (3 + 1) / 2
    fresh = plain_index()
    fresh.upsert([0, 1], ["cherry cherry cherry", "banana"])
    for q in ["cherry", "banana", "cherry banana"]:
        assert idx.score(q) == pytest.approx(fresh.score(q), rel=1e-6)


def test_delete_removes_documents_and_updates_statistics() -> None:
    idx = plain_index()
    idx.upsert([0, 1, 2], ["red blue", "red", "green"])
    assert idx.delete([1, 7]) == 1  # row 7 never existed
    assert idx.delete([1]) == 0
    assert len(idx) == 2
    assert idx.document_frequency("red") == 1
    assert idx.contains([0, 1, 2]).tolist() == [True, False, True]
    assert idx.score("red")[1] == 0.0
    fresh = plain_index()
    fresh.upsert([0, 2], ["red blue", "green"])
    assert idx.score("red blue green") == pytest.approx(fresh.score("red blue green"), rel=1e-6)
    # A deleted row can be reused.
    idx.upsert([1], ["green green"])
    assert idx.document_frequency("green") == 2


def test_scores_follow_each_write_right_after_a_query() -> None:
    """Per-row length norms are cached between writes; every kind of write must refresh them."""
    idx = plain_index()
    docs = {0: "a b", 1: "a c c"}
    idx.upsert(list(docs), list(docs.values()))

    def check() -> None:
        idx.score("a")  # fills the cache
        ref = reference_bm25({r: t.split() for r, t in docs.items()}, ["a", "c"])
        assert idx.score("a c", sorted(ref)).tolist() == pytest.approx(
            [ref[r] for r in sorted(ref)], rel=1e-6
        )
        assert idx.score("a c", size=4)[sorted(ref)].tolist() == pytest.approx(
            [ref[r] for r in sorted(ref)], rel=1e-6
        )

    check()
    idx.upsert([2], ["a d d d d d"])  # a new row: avgdl changes, no row is replaced
    docs[2] = "a d d d d d"
    check()
    idx.delete([0])
    del docs[0]
    check()
    idx.remap(np.array([-1, 0, 3]))
    docs = {0: docs[1], 3: docs[2]}
    check()


def test_empty_texts_count_as_documents() -> None:
    idx = plain_index()
    idx.upsert([0, 1], ["word", ""])
    assert len(idx) == 2
    assert idx.avgdl == pytest.approx(0.5)
    assert idx.top("word", 5)[0].tolist() == [0]


@pytest.mark.parametrize("rows", [[3, 0, 0, 9, 1], [1], list(range(12)), []])
def test_subset_scores_equal_full_scores_restricted(rows: list[int]) -> None:
    idx = plain_index()
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(6)]
    texts = [" ".join(rng.choice(words, size=rng.integers(1, 8))) for _ in range(10)]
    idx.upsert(np.arange(10), texts)
    for q in ["w0", "w1 w2 w3", "w5 w5", "nothing"]:
        full = idx.score(q)
        sub = idx.score(q, rows)
        # Rows past the last document (10, 11) score 0.
        expected = [float(full[r]) if r < full.shape[0] else 0.0 for r in rows]
        assert sub.shape == (len(rows),)
        assert sub.tolist() == pytest.approx(expected, rel=1e-6)


@settings(max_examples=60, deadline=None)
@given(
    docs=st.lists(
        st.lists(st.sampled_from(["w0", "w1", "w2", "w3", "w4"]), min_size=0, max_size=6),
        min_size=1,
        max_size=25,
    ),
    dead=st.lists(st.integers(0, 30), max_size=8),
    query=st.lists(st.sampled_from(["w0", "w2", "w4", "zz"]), min_size=0, max_size=3),
    size=st.integers(0, 40),
)
def test_max_score_is_the_max_of_the_padded_scores(
    docs: list[list[str]], dead: list[int], query: list[str], size: int
) -> None:
    """``max_score(q, size)``: the value of ``score(q, size=size).max()`` (0 for size 0),
    read without that array: below, at and past the scored rows, after deletions, and for a
    query with no indexed term (then no row is scored)."""
    idx = plain_index()
    idx.upsert(np.arange(len(docs)), [" ".join(d) for d in docs])
    idx.delete(dead)
    q = " ".join(query)
    full = idx.score(q, size=size)
    expected = float(full.max()) if full.size else 0.0
    assert idx.max_score(q, size) == expected  # (the same float, not an approximation)
    with pytest.raises(InvalidQueryError):
        idx.max_score(q, -1)
    assert idx.max_score(q, np.int64(size)) == expected  # (a store's row count may be numpy's)


@pytest.mark.parametrize("size", [2.5, "3", None, True, float("nan")])
def test_max_score_refuses_a_size_that_is_not_an_integer(size: object) -> None:
    """A hostile ``size`` is a typed error (it was a ``TypeError`` from slicing, or a bool
    read as a row count)."""
    idx = plain_index()
    idx.upsert(np.arange(3), ["w0 w1", "w0", "w2"])
    with pytest.raises(InvalidQueryError, match="size"):
        idx.max_score("w0", size)  # type: ignore[arg-type]


def test_subset_uses_the_cheaper_path_and_both_agree() -> None:
    """A small subset walks its own documents; a large one gathers from the full scores."""
    idx = plain_index()
    n = 300
    texts = [f"common t{i % 7} filler{i}" for i in range(n)]
    idx.upsert(np.arange(n), texts)
    small = np.array([5, 17, 250])
    large = np.arange(n)[::-1]
    for q in ["common t3", "t3", "filler5 common"]:
        full = idx.score(q)
        assert idx.score(q, small) == pytest.approx(full[small], rel=1e-6)
        assert idx.score(q, large) == pytest.approx(full[large], rel=1e-6)


def test_top_orders_by_score_then_row_and_skips_zero_scores() -> None:
    idx = plain_index()
    idx.upsert([0, 1, 2, 3, 4], ["a", "b", "a", "a a", "c"])
    rows, scores = idx.top("a", 10)
    assert rows.tolist() == [3, 0, 2]  # row 3 has tf 2; rows 0 and 2 tie, lower row first
    assert scores[1] == scores[2] and scores[0] > scores[1]
    assert idx.top("a", 2)[0].tolist() == [3, 0]
    assert idx.top("a", 0)[0].tolist() == []
    # "b" is rarer than "a": row 1 first; row 4 matches nothing and is never padded in.
    rows, _ = idx.top("a b", 10, rows=[4, 2, 1])
    assert rows.tolist() == [1, 2]
    with pytest.raises(InvalidQueryError):
        idx.top("a", -1)


# ------------------------------------------------------------------------------ remap


def test_remap_follows_store_compaction() -> None:
    idx = plain_index()
    idx.upsert([0, 1, 2, 3], ["zero", "one", "two", "three"])
    idx.delete([1])
    # The store drops row 1 and shifts the rest down.
    idx.remap(np.array([0, -1, 1, 2]))
    assert len(idx) == 3
    assert idx.row_bound == 3
    assert idx.top("two", 1)[0].tolist() == [1]
    assert idx.top("three", 1)[0].tolist() == [2]
    assert idx.top("one", 1)[0].tolist() == []
    # A present row mapped to -1 is deleted with its statistics.
    idx.remap(np.array([-1, 0, 1]))
    assert len(idx) == 2 and idx.document_frequency("zero") == 0
    assert idx.top("three", 1)[0].tolist() == [1]
    with pytest.raises(StoreError, match="same row"):
        idx.remap(np.array([0, 0]))
    other = plain_index()
    other.upsert([0, 1, 2], ["x", "y", "z"])
    with pytest.raises(StoreError, match="same row"):
        other.remap(np.array([-1, 5, 5]))
    assert len(other) == 3 and other.top("x", 1)[0].tolist() == [0]  # nothing deleted
    with pytest.raises(StoreError, match="holds a document"):
        idx.remap(np.array([0]))
    with pytest.raises(StoreError):
        idx.remap(np.array([[0, 1]]))


@pytest.mark.parametrize("eager", [False, True])
def test_incremental_updates_equal_a_fresh_build(eager: bool) -> None:
    """Random upserts, deletes and remaps give the scores of an index built from scratch.

    ``eager`` forces a tail merge and a compaction at every chance, the paths a large
    collection takes; otherwise the tail stays unsorted and dead postings stay in the log.
    """
    rng = np.random.default_rng(42)
    words = [f"t{i}" for i in range(40)]
    idx = plain_index()
    if eager:
        idx._merge_min = 0
        idx._compact_min = 0
    docs: dict[int, str] = {}
    for step in range(60):
        op = rng.random()
        if op < 0.6 or not docs:
            rows = rng.choice(50, size=rng.integers(1, 6), replace=False)
            texts = [" ".join(rng.choice(words, size=rng.integers(0, 9))) for _ in rows]
            idx.upsert(rows, texts)
            docs.update(zip(rows.tolist(), texts, strict=True))
        elif op < 0.85:
            rows = rng.choice(60, size=rng.integers(1, 4), replace=False)
            assert idx.delete(rows) == sum(1 for r in rows.tolist() if r in docs)
            for r in rows.tolist():
                docs.pop(r, None)
        else:
            present = sorted(docs)
            mapping = np.full(max(present) + 1, -1, dtype=np.int64)
            targets = rng.permutation(70)[: len(present)]
            mapping[present] = targets
            idx.remap(mapping)
            docs = {int(t): docs[p] for p, t in zip(present, targets.tolist(), strict=True)}
        if step % 5 == 0 and docs:
            query = " ".join(rng.choice(words, size=3))
            ref = reference_bm25({r: t.split() for r, t in docs.items()}, query.split())
            got = idx.score(query, sorted(ref))
            assert got.tolist() == pytest.approx([ref[r] for r in sorted(ref)], rel=1e-5)
    fresh = plain_index()
    fresh.upsert(sorted(docs), [docs[r] for r in sorted(docs)])
    assert len(idx) == len(fresh) == len(docs)
    for w in words:
        assert idx.document_frequency(w) == fresh.document_frequency(w)
        assert idx.score(w, size=80) == pytest.approx(fresh.score(w, size=80), rel=1e-5)


def test_large_update_batches_merge_and_compact() -> None:
    """Past the default thresholds the log is re-sorted and compacted, scores unchanged."""
    idx = plain_index()
    n = 5000
    texts = [f"alpha a{i % 50} b{i % 13} c{i}" for i in range(n)]
    idx.upsert(np.arange(n), texts)
    idx.upsert(np.arange(n), [t + " extra" for t in texts])  # 12k new postings: a long tail
    before = idx.score("alpha a7 b3 extra")
    assert idx._msorted == idx._m  # the query merged the tail
    idx.delete(np.arange(0, n, 2))  # now dead postings outnumber the live ones
    assert idx._dead == 0  # compacted
    fresh = plain_index()
    fresh.upsert(np.arange(1, n, 2), [t + " extra" for t in texts[1::2]])
    after = idx.score("alpha a7 b3 extra")
    assert after == pytest.approx(fresh.score("alpha a7 b3 extra", size=n), rel=1e-5)
    assert after[1::2].tolist() != pytest.approx(before[1::2].tolist())  # N changed
    # Deleting most documents drops their now-unused terms.
    idx.delete(np.arange(1, n - 10, 2))
    assert idx.vocabulary_size == fresh_vocab(texts[n - 9 :: 2])
    assert len(idx._terms) < 2 * idx.vocabulary_size + 1


def fresh_vocab(texts: list[str]) -> int:
    return len({w for t in texts for w in (t + " extra").split()})


# ------------------------------------------------------------------------------ validation


def test_bad_input_raises_typed_errors() -> None:
    idx = plain_index()
    with pytest.raises(StoreError, match="rows but"):
        idx.upsert([0, 1], ["only one"])
    with pytest.raises(StoreError, match="unique"):
        idx.upsert([3, 3], ["a", "b"])
    with pytest.raises(StoreError, match="non-negative"):
        idx.upsert([-1], ["a"])
    with pytest.raises(StoreError, match="one string"):
        idx.upsert([0], "a")
    with pytest.raises(StoreError, match="integers"):
        idx.upsert([0.5], ["a"])
    with pytest.raises(StoreError, match="strings"):
        idx.upsert([0], [b"bytes"])  # type: ignore[list-item]
    with pytest.raises(StoreError, match="not one string"):
        idx.upsert_tokens([0], ["abc"])
    idx.upsert([0], ["a"])
    with pytest.raises(InvalidQueryError):
        idx.score("a", [[0]])
    with pytest.raises(InvalidQueryError):
        idx.score("a", [-2])
    with pytest.raises(InvalidQueryError):
        idx.score(None)  # type: ignore[arg-type]
    assert len(idx) == 1  # failed writes changed nothing


# ------------------------------------------------------------------------------ persistence


def test_save_load_round_trip(tmp_path: Path) -> None:
    idx = LexicalIndex(k1=1.5, b=0.6)
    texts = [
        "The wing was tested in a slipstream",
        "Boundary layer control on wings",
        "人工智能技术在医疗中的应用",
        "unrelated text about cooking",
    ]
    idx.upsert([0, 1, 2, 4], texts)
    idx.delete([4])
    idx.upsert([3], ["slipstream effects on lift"])
    target = tmp_path / "lex"
    idx.save(target)
    loaded = LexicalIndex.load(target)
    assert (loaded.k1, loaded.b, len(loaded)) == (1.5, 0.6, 4)
    assert loaded.vocabulary_size == idx.vocabulary_size
    for q in ["wing slipstream", "医疗应用", "cooking", "lift"]:
        assert loaded.score(q) == pytest.approx(idx.score(q), rel=1e-6)
        assert loaded.score(q, [3, 0]) == pytest.approx(idx.score(q, [3, 0]), rel=1e-6)
    assert loaded.document_frequency(porter_stem("cooking")) == 0
    # The loaded index keeps working incrementally.
    loaded.upsert([5], ["cooking again"])
    loaded.delete([0])
    assert loaded.top("cooking", 3)[0].tolist() == [5]
    assert loaded.top("wing", 3)[0].tolist() == [1]


def test_an_emptied_index_saves_without_its_old_terms(tmp_path: Path) -> None:
    idx = plain_index()
    idx.upsert([0, 1], ["a b", "c"])
    idx.delete([0, 1])
    idx.save(tmp_path)
    assert json.loads((tmp_path / "lexical.json").read_text())["terms"] == []
    loaded = LexicalIndex.load(tmp_path, tokenizer=split, tokenizer_id="split")
    assert len(loaded) == 0 and loaded.score("a").shape == (0,)
    loaded.upsert([3], ["a d"])
    assert loaded.top("a", 3)[0].tolist() == [3]


def test_load_rejects_missing_corrupt_and_foreign_indexes(tmp_path: Path) -> None:
    idx = plain_index()
    idx.upsert([0, 1], ["a b", "b c"])
    idx.save(tmp_path / "ok")
    with pytest.raises(IndexCorruptError):
        LexicalIndex.load(tmp_path / "missing")
    # Built with the whitespace tokenizer: the default tokenizer must not read it.
    with pytest.raises(IndexCorruptError, match="tokenizer"):
        LexicalIndex.load(tmp_path / "ok")
    assert len(LexicalIndex.load(tmp_path / "ok", tokenizer=split, tokenizer_id="split")) == 2

    def broken(name: str) -> Path:
        d = tmp_path / name
        idx.save(d)
        return d

    d = broken("short")
    np.save(d / "lexical_log_row.npy", np.zeros(1, dtype=np.int32))
    with pytest.raises(IndexCorruptError, match="inconsistent"):
        LexicalIndex.load(d, tokenizer=split, tokenizer_id="split")
    d = broken("range")
    np.save(d / "lexical_log_term.npy", np.full(4, 99, dtype=np.int32))
    with pytest.raises(IndexCorruptError, match="inconsistent"):
        LexicalIndex.load(d, tokenizer=split, tokenizer_id="split")
    d = broken("perm")
    np.save(d / "lexical_perm.npy", np.array([0, 1, 2, -7]))
    with pytest.raises(IndexCorruptError, match="permutation"):
        LexicalIndex.load(d, tokenizer=split, tokenizer_id="split")
    d = broken("overlap")
    start = np.load(d / "lexical_start.npy")
    start[1] = start[0]  # two rows claiming the same block
    np.save(d / "lexical_start.npy", start)
    with pytest.raises(IndexCorruptError, match="tile"):
        LexicalIndex.load(d, tokenizer=split, tokenizer_id="split")
    d = broken("rows")
    rows = np.load(d / "lexical_log_row.npy")
    rows[[0, -1]] = rows[[-1, 0]]  # blocks still tile the log, but hold another row's postings
    np.save(d / "lexical_log_row.npy", rows)
    with pytest.raises(IndexCorruptError, match="do not match the postings"):
        LexicalIndex.load(d, tokenizer=split, tokenizer_id="split")
    d = broken("meta")
    meta = json.loads((d / "lexical.json").read_text())
    meta["documents"] = 5
    (d / "lexical.json").write_text(json.dumps(meta))
    with pytest.raises(IndexCorruptError, match="document count"):
        LexicalIndex.load(d, tokenizer=split, tokenizer_id="split")
    d = broken("garbage")
    (d / "lexical_perm.npy").write_bytes(b"not numpy")
    with pytest.raises(IndexCorruptError):
        LexicalIndex.load(d, tokenizer=split, tokenizer_id="split")


# ------------------------------------------------------------------------------ tokenizer


def test_english_tokens_are_folded_stemmed_and_filtered() -> None:
    assert tokenize("The Wings were TESTED, in a slip-stream!") == [
        "wing",
        "test",
        "slip",
        "stream",
    ]
    assert tokenize("ＡＢＣ Mach 2.5") == ["abc", "mach", "2", "5"]  # NFKC folds full-width
    assert tokenize("") == []


@pytest.mark.parametrize(
    ("word", "stem"),
    [
        ("caresses", "caress"),
        ("ponies", "poni"),
        ("cats", "cat"),
        ("agreed", "agre"),
        ("plastered", "plaster"),
        ("motoring", "motor"),
        ("hopping", "hop"),
        ("filing", "file"),
        ("happy", "happi"),
        ("relational", "relat"),
        ("generalizations", "gener"),
        ("controlling", "control"),
        ("adjustment", "adjust"),
        ("adoption", "adopt"),
        ("rate", "rate"),
        ("probate", "probat"),
        ("aerodynamic", "aerodynam"),
        ("is", "is"),
    ],
)
def test_porter_stemmer(word: str, stem: str) -> None:
    assert porter_stem(word) == stem


def test_chinese_is_segmented_with_sub_words() -> None:
    toks = tokenize("中华人民共和国的人工智能")
    assert {"中华人民共和国", "人民", "共和国", "人工智能", "智能"} <= set(toks)
    assert "的" not in toks
    assert text_tokenize.tokenizer_id().endswith("+jieba")


def test_chinese_query_matches_chinese_documents() -> None:
    idx = LexicalIndex()
    idx.upsert(
        [0, 1, 2, 3],
        [
            "人工智能技术在医疗诊断中的应用越来越广泛",
            "今天的天气很好，我们去公园散步",
            "中华人民共和国成立于1949年",
            "Deep learning for medical imaging",
        ],
    )
    assert idx.top("人工智能的应用", 5)[0].tolist() == [0]
    assert idx.top("人民", 5)[0].tolist() == [2]  # a sub-word of 中华人民共和国
    assert idx.top("公园", 5)[0].tolist() == [1]
    assert set(idx.top("什么是医疗 imaging", 5)[0].tolist()) == {0, 3}


def test_without_jieba_chinese_falls_back_to_bigrams(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(text_tokenize._jieba_state, "module", None)
    assert tokenize("人工智能") == ["人工", "工智", "智能"]
    assert tokenize("书") == ["书"]
    assert text_tokenize.tokenizer_id().endswith("+bigram")


def test_jieba_initialisation_is_silent() -> None:
    """jieba announces its dictionary load on stderr unless told not to; we tell it."""
    # A fresh interpreter, so that jieba really initialises; the module is loaded from its
    # file (it has no package-relative imports) to keep the start-up short.
    code = (
        "import importlib.util as u, sys; "
        "s = u.spec_from_file_location('tt', sys.argv[1]); m = u.module_from_spec(s); "
        "s.loader.exec_module(m); print(m.tokenize('我们研究中文分词'))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, text_tokenize.__file__],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "分词" in proc.stdout
    assert proc.stderr == ""


# ------------------------------------------------------------------------------ hybrid


@pytest.mark.parametrize("bad", [0.1, 1.01, -1, float("nan"), float("inf"), True, "0.5", None])
def test_dense_weight_is_validated(bad: object) -> None:
    with pytest.raises(InvalidQueryError, match="dense_weight"):
        validate_dense_weight(bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidQueryError):
        hybrid_scores(np.zeros(2), np.zeros(2), bad)  # type: ignore[arg-type]


def test_hybrid_combines_dense_with_max_normalised_lexical() -> None:
    dense = np.array([0.9, 0.5, 0.1], dtype=np.float32)
    lex = np.array([0.0, 4.0, 2.0], dtype=np.float32)
    got = hybrid_scores(dense, lex, 0.6)
    assert got.dtype == np.float32
    assert got == pytest.approx([0.6 * 0.9, 0.6 * 0.5 + 0.4, 0.6 * 0.1 + 0.4 * 0.5])
    assert hybrid_scores(dense, lex, 1.0) == pytest.approx(dense)
    assert hybrid_scores(dense, lex, 0.2) == pytest.approx(0.2 * dense + 0.8 * lex / 4)
    # No lexical match anywhere: the dense order is kept, scaled.
    assert hybrid_scores(dense, np.zeros(3), 0.5) == pytest.approx(0.5 * dense)
    mm = hybrid_scores(dense, lex, 0.5, normalization="minmax")
    assert mm == pytest.approx(0.5 * dense + 0.5 * np.array([0.0, 1.0, 0.5]))
    assert normalize_lexical(np.array([3.0, 3.0]), "minmax").tolist() == [0.0, 0.0]
    with pytest.raises(InvalidQueryError, match="normalization"):
        normalize_lexical(lex, "zscore")  # type: ignore[arg-type]
    with pytest.raises(InvalidQueryError, match="one length"):
        hybrid_scores(dense, lex[:2], 0.5)


_ASCII_PIECES = st.sampled_from([*"abcXYZ019 _-.'\n\t,;:!?()#+@~\x00\x7f", "is", "the", "Runs"])


@settings(max_examples=300, deadline=None)
@given(st.lists(_ASCII_PIECES, max_size=40).map("".join))
def test_ascii_fast_path_finds_the_words_the_unicode_regex_finds(text: str) -> None:
    """ASCII text takes a translate + split path; its tokens are those of the general path
    (NFKC, casefold, the Unicode word regex), whatever the punctuation and control bytes."""
    expected = [
        t for t in map(text_tokenize._term, text_tokenize._WORD_RE.findall(text.casefold())) if t
    ]
    assert tokenize(text) == expected


def test_repeated_query_scores_follow_every_write() -> None:
    """A query's terms and score vector are kept between calls (one find scores the same
    query several times); a write, delete or compaction must never serve the stale answer."""
    from treehop.lexical import LexicalIndex

    docs = ["red apple pie", "green apple", "blue sky", "red red car", "apple apple apple"]
    idx = LexicalIndex()
    idx.upsert(list(range(len(docs))), docs)
    first = idx.score("red apple").copy()
    assert np.array_equal(idx.score("red apple"), first)
    assert np.array_equal(idx.score("red apple", [3, 0]), first[[3, 0]])
    idx.upsert([5], ["red apple red apple"])
    fresh = LexicalIndex()
    fresh.upsert(list(range(6)), [*docs, "red apple red apple"])
    assert np.allclose(idx.score("red apple"), fresh.score("red apple"), rtol=1e-6)
    assert idx.score("red apple")[5] > 0
    idx.delete([0])
    assert idx.score("red apple")[0] == 0.0
    assert idx.score("red apple", [0, 5])[0] == 0.0
