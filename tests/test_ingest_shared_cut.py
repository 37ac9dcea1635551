"""The BM25 index's words from the tagger's cut (``text_tokenize.sharing_cuts``) are exactly
the words it would cut itself: same distinct words in the same first-seen order (so the same
term ids), same occurrences, same documents; an ingest with sharing stores the same BM25
index, scores and nodes as one without.

Texts are hypothesis-generated from the pieces that matter: words, technical tokens,
punctuation, every kind of ASCII whitespace (blank lines, tabs, vertical tab, file
separators), marker and control characters (NUL, the tagger's two marks), non-ASCII letters
and Chinese (those texts go through other paths and must not disturb the ones shared)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import Treehop, text_tokenize
from treehop.lexical import LexicalIndex
from treehop.stores.embedded import EmbeddedStore
from treehop.tagging.keywords import KeywordTagger

from treehop_test_doubles import BagOfWordsEmbedder

_PIECES = st.sampled_from(
    [
        "feature",
        "Store",
        "stores",
        "k8s",
        "c++",
        "node.js",
        "a-b",
        "don't",
        "x_y",
        "GPUs",
        "the",
        "Running",
        "42",
        "x2",
        "café",
        "Straße",
        "中文",
        ".",
        ",",
        "-",
        "'",
        "_",
        "(",
        " ",
        "  ",
        "\t",
        "\n",
        "\n\n",
        "\n \n",
        "\r\n\r\n",
        "\x0b",
        "\x1c",
        "\x00",
        "\x01",
        "\x02",
        "\xa0",
    ]
)
_TEXT = st.lists(_PIECES, max_size=30).map("".join)


def _usable(texts: list[str]) -> list[str]:
    """What the BM25 batch path is given: texts with an ASCII form, as that form."""
    forms = [text_tokenize.ascii_form(t) for t in texts]
    return [f for f in forms if f is not None]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(_TEXT, max_size=8),
    st.lists(_TEXT, max_size=4),
    st.randoms(use_true_random=False),
)
def test_shared_words_equal_ascii_words(cut: list[str], others: list[str], rnd) -> None:  # type: ignore[no-untyped-def]
    """Any mix of texts the tagger cut (in any order, some twice) and texts it did not
    gives :func:`ascii_words`'s answer, also on a second call on the same cut."""
    with text_tokenize.sharing_cuts():
        assert text_tokenize.shared_words(["a b", "c"]) is None  # nothing cut yet
        KeywordTagger().partial_fit_extract(cut, cut)
        pool = [*cut, *others, *cut[:2]]
        rnd.shuffle(pool)
        for texts in (_usable(pool), _usable(pool[::-1])):
            got = text_tokenize.shared_words(texts)
            want = text_tokenize.ascii_words(texts)
            assert want is not None
            if got is None:  # no Latin text to cut: the tagger offered nothing
                assert (
                    not any(t.isascii() and "\x01" not in t and "\x02" not in t for t in cut)
                    or not cut
                )
                continue
            assert got[0] == want[0]
            assert got[1].tolist() == want[1].tolist()
            assert got[2].tolist() == want[2].tolist()
    assert text_tokenize.shared_words(["a b", "c"]) is None  # the scope ended


@settings(max_examples=100, deadline=None)
@given(st.lists(_TEXT, min_size=1, max_size=8), st.lists(_TEXT, max_size=3))
def test_lexical_upsert_in_scope_equals_without(cut: list[str], others: list[str]) -> None:
    """An index fed the texts inside a sharing scope holds the same vocabulary (term ids),
    postings and scores as one fed them outside."""
    texts = [*others, *cut]
    a, b = LexicalIndex(), LexicalIndex()
    with text_tokenize.sharing_cuts():
        KeywordTagger().partial_fit_extract(cut, cut)
        a.upsert(list(range(len(texts))), texts)
    b.upsert(list(range(len(texts))), texts)
    assert a._terms == b._terms
    assert len(a) == len(b) and a.avgdl == b.avgdl
    m = a._m
    assert m == b._m
    for name in ("_log_term", "_log_row", "_log_tf"):
        assert np.array_equal(getattr(a, name)[:m], getattr(b, name)[:m])
    for query in ("running store", "42 feature", "x2 strasse cafe"):
        assert np.array_equal(a.score(query, size=len(texts)), b.score(query, size=len(texts)))


def _tree(root: Path) -> None:
    words = ["river", "stone", "engine", "vector", "garden", "Signal", "harbor", "orbit"]
    for d in range(4):
        folder = root / f"topic-{d}"
        folder.mkdir(parents=True)
        (folder / "README.md").write_text(f"Topic {d}: {words[d]} and {words[d + 1]}.\n")
        for j in range(12):
            body = " ".join(words[(d + j + k) % 8] + ("." if k % 5 == 4 else "") for k in range(20))
            (folder / f"note-{j}.md").write_text(body + "\n\nSecond paragraph, résumé.\n")


def _ingest(root: Path, share: bool, monkeypatch: pytest.MonkeyPatch) -> EmbeddedStore:
    if not share:
        monkeypatch.setattr(text_tokenize, "offer_cut", lambda *a: None)
        monkeypatch.setattr("treehop.tagging.keywords.offer_cut", lambda *a: None)
    store = EmbeddedStore(None, ann_min_rows=None)
    with Treehop(embedder=BagOfWordsEmbedder(), tagger="auto", store=store) as th:
        th.add_resource(root, target_uri="viking://resources")
        (root / "topic-1" / "note-3.md").write_text("a changed note about the harbor engine.")
        th.add_resource(root, target_uri="viking://resources")
    monkeypatch.undo()
    return store


def test_ingest_with_shared_cut_stores_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cut_reuse: list[bool]
) -> None:
    """Two ingests (and re-adds) of one tree, with and without sharing, store the same
    nodes and the same BM25 index."""
    _tree(tmp_path / "a" / "tree")
    _tree(tmp_path / "b" / "tree")
    shared = _ingest(tmp_path / "a" / "tree", True, monkeypatch)
    assert any(cut_reuse)  # the shared path ran
    plain = _ingest(tmp_path / "b" / "tree", False, monkeypatch)
    a, b = shared.lexical, plain.lexical
    assert a is not None and b is not None
    assert a._terms == b._terms and a._m == b._m
    for name in ("_log_term", "_log_row", "_log_tf"):
        assert np.array_equal(getattr(a, name)[: a._m], getattr(b, name)[: b._m])
    for query in ("harbor engine", "river stone", "resume paragraph"):
        assert np.array_equal(a.score(query, size=200), b.score(query, size=200))
    na = {n.uri: n for n in shared.iter_nodes()}
    nb = {n.uri: n for n in plain.iter_nodes()}
    assert na == nb


@pytest.mark.parametrize(
    "texts",
    [
        ["alpha beta. Gamma,", "beta (delta) alpha", "epsilon"],  # chunks of one word each
        ["node.js and k8s", "don't stop", "alpha"],  # chunks of several words
    ],
)
def test_shared_words_one_and_several_words_a_chunk(texts: list[str]) -> None:
    """Both ways of expanding chunks to words (one word a chunk, several) give
    :func:`ascii_words`'s answer, with texts the tagger did not cut in between."""
    with text_tokenize.sharing_cuts():
        KeywordTagger().partial_fit_extract(texts, texts)
        run = [texts[2], "zeta alpha", texts[0], texts[1], "\x01 eta"]
        got = text_tokenize.shared_words(run)
        want = text_tokenize.ascii_words(run)
        assert got is not None and want is not None
        assert got[0] == want[0] == ["", *dict.fromkeys(got[0][1:])]
        assert got[1].tolist() == want[1].tolist()
        assert got[2].tolist() == want[2].tolist()


@settings(max_examples=100, deadline=None)
@given(st.lists(_TEXT, min_size=1, max_size=10), st.lists(_TEXT, max_size=4), st.randoms())
def test_shared_words_of_many_runs_cut_each_chunk_once(
    cut: list[str],
    others: list[str],
    rnd,  # type: ignore[no-untyped-def]
) -> None:
    """A BM25 upsert asks once per run of ASCII texts: every run gets ascii_words' answer,
    and the cut's chunks are cut into words once, not once per run (that made an ingest of
    a documentation site quadratic); texts not cut before add only their own chunks."""
    with text_tokenize.sharing_cuts():
        KeywordTagger().partial_fit_extract(cut, cut)
        share = text_tokenize._SHARE.get()
        assert share is not None
        pool = _usable([*cut, *others])
        kept = None
        for _ in range(4):
            a = rnd.randrange(len(pool) + 1)
            run = pool[a : a + rnd.randrange(1, 4)]
            got = text_tokenize.shared_words(run)
            if got is None or share.cut is None:
                continue
            want = text_tokenize.ascii_words(run)
            assert want is not None
            assert (got[0], got[1].tolist(), got[2].tolist()) == (
                want[0],
                want[1].tolist(),
                want[2].tolist(),
            )
            words = share.cut.chunk_words()
            if kept is not None and kept.n_chunks == words.n_chunks:
                assert words is kept  # nothing appended: nothing cut again
            if kept is not None:
                assert words.words[: len(kept.words)] == kept.words
            kept = words
