"""Keyless rerankers: the ONNX / sentence-transformers cross-encoder, and the LLM reranker.

No weights can be downloaded here, so the cross-encoder tests build a tiny but real model
directory: a ``tokenizer.json`` made with the ``tokenizers`` library (WordLevel vocabulary, BERT's
``[CLS] A [SEP] B [SEP]`` pair template) and a ``model.onnx`` whose graph is encoded below as
protobuf by hand (the ``onnx`` package is not a dependency). The graph reads ``input_ids``,
``attention_mask`` and ``token_type_ids`` like an exported BERT cross-encoder and outputs
``logits`` of shape ``(batch, 1)``: the sum of a per-token weight over the document segment's
unmasked tokens. That is not a language model, but it runs the real loading, tokenising,
padding, batching and scoring code, and every score it gives can be computed independently.
"""

from __future__ import annotations

import asyncio
import json
import math
import struct
import subprocess
import sys
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from treehop.errors import LLMError, RerankError
from treehop.llm.base import BaseLLM, ChatMessage
from treehop.rerankers import CrossEncoderReranker, LLMReranker, Reranker, safe_rerank
from treehop.rerankers.cross_encoder import _to_scores
from treehop.rerankers.llm_rerank import parse_scores

# -- a minimal protobuf writer for ONNX ------------------------------------------------------


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # negative int64 as two's complement, like protobuf does
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _int(field: int, value: int) -> bytes:
    return _varint(field << 3) + _varint(value)


def _bytes(field: int, value: bytes | str) -> bytes:
    data = value.encode() if isinstance(value, str) else value
    return _varint(field << 3 | 2) + _varint(len(data)) + data


FLOAT, INT32, INT64 = 1, 6, 7  # TensorProto.DataType


def _tensor(name: str, dims: Sequence[int], dtype: int, raw: bytes) -> bytes:
    return b"".join(_int(1, d) for d in dims) + _int(2, dtype) + _bytes(8, name) + _bytes(9, raw)


def _value_info(name: str, dtype: int, dims: Sequence[int | str]) -> bytes:
    shape = b"".join(_bytes(1, _bytes(2, d) if isinstance(d, str) else _int(1, d)) for d in dims)
    tensor_type = _int(1, dtype) + _bytes(2, shape)
    return _bytes(1, name) + _bytes(2, _bytes(1, tensor_type))


def _node(op: str, inputs: Sequence[str], outputs: Sequence[str], **int_attrs: int) -> bytes:
    out = b"".join(_bytes(1, i) for i in inputs) + b"".join(_bytes(2, o) for o in outputs)
    out += _bytes(3, f"{op}_{outputs[0]}") + _bytes(4, op)
    for key, value in int_attrs.items():
        out += _bytes(5, _bytes(1, key) + _int(20, 2) + _int(3, value))  # AttributeType.INT
    return out


def build_onnx(
    weights: Sequence[float], *, token_types: bool = True, index_dtype: int = INT64
) -> bytes:
    """logits[b] = sum_t weights[input_ids[b,t]] * mask[b,t] (* token_type_ids[b,t])."""
    nodes = [
        _node("Gather", ["W", "input_ids"], ["e"]),
        _node("Cast", ["attention_mask"], ["m"], to=FLOAT),
        _node("Mul", ["e", "m"], ["em"]),
    ]
    last = "em"
    inputs = [
        _value_info("input_ids", index_dtype, ["batch", "seq"]),
        _value_info("attention_mask", index_dtype, ["batch", "seq"]),
    ]
    if token_types:
        nodes += [
            _node("Cast", ["token_type_ids"], ["t"], to=FLOAT),
            _node("Mul", ["em", "t"], ["emt"]),
        ]
        last = "emt"
        inputs.append(_value_info("token_type_ids", index_dtype, ["batch", "seq"]))
    nodes.append(_node("ReduceSum", [last, "axes"], ["logits"], keepdims=1))
    w_raw = struct.pack(f"<{len(weights)}f", *weights)
    graph = (
        b"".join(_bytes(1, n) for n in nodes)
        + _bytes(2, "tiny-cross-encoder")
        + _bytes(5, _tensor("W", [len(weights)], FLOAT, w_raw))
        + _bytes(5, _tensor("axes", [1], INT64, struct.pack("<q", 1)))
        + b"".join(_bytes(11, i) for i in inputs)
        + _bytes(12, _value_info("logits", FLOAT, ["batch", 1]))
    )
    opset = _bytes(1, "") + _int(2, 13)
    return _int(1, 8) + _bytes(2, "treehop-tests") + _bytes(7, graph) + _bytes(8, opset)


# -- the tiny model directory ----------------------------------------------------------------

SPECIAL = ["[PAD]", "[CLS]", "[SEP]", "[UNK]"]
WORD_WEIGHTS = {
    "treehop": 3.0,
    "retrieval": 2.0,
    "tags": 1.0,
    "tree": 0.5,
    "the": 0.0,
    "a": 0.0,
    "about": 0.0,
    "banana": -2.0,
    "bread": -1.0,
}
# [PAD] weighs 7: if padding were not masked out, short documents would gain score.
SPECIAL_WEIGHTS = {"[PAD]": 7.0, "[CLS]": 0.0, "[SEP]": 0.0, "[UNK]": -0.25}
VOCAB = {tok: i for i, tok in enumerate(SPECIAL + list(WORD_WEIGHTS))}
WEIGHTS = [SPECIAL_WEIGHTS.get(tok, WORD_WEIGHTS.get(tok, 0.0)) for tok in VOCAB]


def write_model_dir(
    path: Path, *, token_types: bool = True, index_dtype: int = INT64, model_max: int | None = None
) -> Path:
    from tokenizers import Tokenizer, normalizers, pre_tokenizers, processors
    from tokenizers.models import WordLevel

    tok = Tokenizer(WordLevel(VOCAB, unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", VOCAB["[CLS]"]), ("[SEP]", VOCAB["[SEP]"])],
    )
    path.mkdir(parents=True, exist_ok=True)
    tok.save(str(path / "tokenizer.json"))
    (path / "model.onnx").write_bytes(
        build_onnx(WEIGHTS, token_types=token_types, index_dtype=index_dtype)
    )
    if model_max is not None:
        (path / "tokenizer_config.json").write_text(json.dumps({"model_max_length": model_max}))
    return path


def word_weight(word: str) -> float:
    return WORD_WEIGHTS.get(word.lower(), SPECIAL_WEIGHTS["[UNK]"])


def doc_logit(doc: str) -> float:
    """What the graph computes with token types: the document segment's weights."""
    return sum(word_weight(w) for w in doc.split())


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


QUERY = "treehop retrieval"
DOCS = [
    "a banana bread",
    "treehop retrieval with tags",
    "the tree",
    "retrieval about the tree and tags and a treehop",  # 'and' / 'with' are [UNK]
    "treehop",
]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_model_dir(tmp_path_factory.mktemp("ce") / "tiny-ce")


# -- CrossEncoderReranker (ONNX) -------------------------------------------------------------


def test_onnx_scores_match_the_graph_and_rank_sensibly(model_dir: Path) -> None:
    rr = CrossEncoderReranker(model_dir)
    assert isinstance(rr, Reranker)
    assert rr.backend == "onnx"
    scores = rr.rerank(QUERY, DOCS)
    assert scores == pytest.approx([sigmoid(doc_logit(d)) for d in DOCS], rel=1e-5)
    assert max(range(len(DOCS)), key=lambda i: scores[i]) == 3
    assert min(range(len(DOCS)), key=lambda i: scores[i]) == 0


@pytest.fixture(scope="module")
def no_types_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_model_dir(tmp_path_factory.mktemp("ce") / "xlmr-like", token_types=False)


@pytest.mark.parametrize("token_types", [True, False])
@pytest.mark.parametrize("batch_size", [1, 3, 16])
def test_batching_and_padding_do_not_change_scores(
    model_dir: Path, no_types_dir: Path, batch_size: int, token_types: bool
) -> None:
    # Documents of very different lengths share a padded batch; [PAD] weighs 7, so any
    # leak of padding into the score, or a batch put back in the wrong order, would show.
    docs = ["treehop", "bread " * 30, "tags", "retrieval tree " * 5, "banana", "a tree"]
    rr = CrossEncoderReranker(
        model_dir if token_types else no_types_dir, batch_size=batch_size, activation="none"
    )
    query_part = 0.0 if token_types else doc_logit("q")  # no segment ids: query counts too
    expected = [doc_logit(d) + query_part for d in docs]
    assert rr.rerank("q", docs) == pytest.approx(expected, rel=1e-5)


def test_async_path_matches_sync(model_dir: Path) -> None:
    rr = CrossEncoderReranker(model_dir)
    assert asyncio.run(rr.arerank(QUERY, DOCS)) == rr.rerank(QUERY, DOCS)
    outcome = asyncio.run(safe_rerank(rr, QUERY, DOCS, timeout_s=10))
    assert outcome.fallback_reason is None and outcome.scores == rr.rerank(QUERY, DOCS)


def test_max_length_truncates_pairs(model_dir: Path) -> None:
    early = "treehop " + "the " * 30
    late = "the " * 30 + "treehop"
    full = CrossEncoderReranker(model_dir, activation="none")
    assert full.rerank("q", [early, late]) == pytest.approx([3.0, 3.0])
    short = CrossEncoderReranker(model_dir, max_length=12, activation="none")
    s_early, s_late = short.rerank("q", [early, late])
    assert s_early == pytest.approx(3.0) and s_late == pytest.approx(0.0)


def test_tokenizer_config_caps_max_length(tmp_path: Path) -> None:
    d = write_model_dir(tmp_path / "capped", model_max=10)
    assert CrossEncoderReranker(d, max_length=512).max_length == 10
    huge = write_model_dir(tmp_path / "unknown", model_max=10**30)  # HF's "no limit" sentinel
    assert CrossEncoderReranker(huge, max_length=64).max_length == 64


def test_max_chars_bounds_text_before_tokenising(model_dir: Path) -> None:
    rr = CrossEncoderReranker(model_dir, max_chars=8, activation="none")
    # "treehop " is 8 characters: everything after it is cut before tokenisation.
    assert rr.rerank("q", ["treehop treehop treehop"]) == pytest.approx([3.0])


def test_graph_without_token_type_ids_and_int32_inputs(tmp_path: Path) -> None:
    d = write_model_dir(tmp_path / "xlmr-like", token_types=False, index_dtype=INT32)
    rr = CrossEncoderReranker(d, activation="none")
    # Without segment ids the graph sums query and document tokens alike.
    expected = [doc_logit(QUERY) + doc_logit(doc) for doc in DOCS]
    assert rr.rerank(QUERY, DOCS) == pytest.approx(expected, rel=1e-5)


def test_onnx_in_subfolder_and_explicit_file(tmp_path: Path) -> None:
    d = write_model_dir(tmp_path / "hf-layout")
    (d / "onnx").mkdir()
    (d / "model.onnx").rename(d / "onnx" / "model.onnx")
    assert CrossEncoderReranker(d).rerank(QUERY, ["treehop"]) == pytest.approx([sigmoid(3.0)])
    (d / "onnx" / "model.onnx").rename(d / "reranker_quant.onnx")
    rr = CrossEncoderReranker(d, onnx_file="reranker_quant.onnx")
    assert rr.rerank(QUERY, ["treehop"]) == pytest.approx([sigmoid(3.0)])


def test_empty_documents(model_dir: Path) -> None:
    assert CrossEncoderReranker(model_dir).rerank(QUERY, []) == []


def test_logits_to_scores() -> None:
    single = _to_scores(np.array([[0.0], [2.0], [-800.0]]), "auto")
    assert single == pytest.approx([0.5, sigmoid(2.0), 0.0])
    two = _to_scores(np.array([[0.0, 0.0], [1.0, 3.0]]), "auto")
    assert two == pytest.approx([0.5, math.exp(3) / (math.exp(1) + math.exp(3))])
    assert _to_scores(np.array([[1.0, 3.0]]), "none") == pytest.approx([3.0])
    assert _to_scores(np.array([1.5, -1.5]), "none") == pytest.approx([1.5, -1.5])
    with pytest.raises(RerankError, match="shape"):
        _to_scores(np.zeros((2, 2, 2)), "auto")


# -- CrossEncoderReranker: errors and the sentence-transformers path -------------------------


def test_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(RerankError, match="not found"):
        CrossEncoderReranker(tmp_path / "nope")


def test_missing_tokenizer(tmp_path: Path) -> None:
    d = write_model_dir(tmp_path / "m")
    (d / "tokenizer.json").unlink()
    with pytest.raises(RerankError, match=r"no tokenizer\.json"):
        CrossEncoderReranker(d)


def test_corrupt_onnx(tmp_path: Path) -> None:
    d = write_model_dir(tmp_path / "m")
    (d / "model.onnx").write_bytes(b"definitely not protobuf")
    with pytest.raises(RerankError, match="cannot load ONNX model"):
        CrossEncoderReranker(d)


def test_forced_onnx_without_a_graph(tmp_path: Path) -> None:
    d = write_model_dir(tmp_path / "m")
    (d / "model.onnx").unlink()
    with pytest.raises(RerankError, match="no ONNX model"):
        CrossEncoderReranker(d, backend="onnx")


def test_without_onnx_and_without_sentence_transformers_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = tmp_path / "st-model"
    d.mkdir()
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # import -> ImportError
    with pytest.raises(RerankError, match="pip install sentence-transformers"):
        CrossEncoderReranker(d)


def test_sentence_transformers_backend(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The glue around ``CrossEncoder``: path, max_length, pairs, batch size, order."""
    calls: dict[str, Any] = {}

    class FakeCrossEncoder:
        def __init__(self, path: str, max_length: int) -> None:
            calls["init"] = (path, max_length)

        def predict(self, pairs: list[tuple[str, str]], **kwargs: Any) -> np.ndarray:
            calls["pairs"], calls["kwargs"] = pairs, kwargs
            return np.array([len(d) / 100 for _, d in pairs], dtype=np.float32)

    module = types.ModuleType("sentence_transformers")
    module.CrossEncoder = FakeCrossEncoder  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "sentence_transformers", module)
    d = tmp_path / "st-model"
    d.mkdir()
    rr = CrossEncoderReranker(d, max_length=256, batch_size=4, max_chars=5)
    assert rr.backend == "sentence-transformers"
    assert rr.rerank("query", ["ab", "abcdefgh"]) == pytest.approx([0.02, 0.05])
    assert calls["init"] == (str(d), 256)
    assert calls["pairs"] == [("query", "ab"), ("query", "abcde")]
    assert calls["kwargs"]["batch_size"] == 4


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"backend": "torch"}, "unknown cross-encoder backend"),
        ({"activation": "relu"}, "unknown activation"),
        ({"batch_size": 0}, "batch_size"),
        ({"max_length": 0}, "max_length"),
    ],
)
def test_bad_cross_encoder_configuration(
    model_dir: Path, kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(RerankError, match=message):
        CrossEncoderReranker(model_dir, **kwargs)


def test_importing_rerankers_loads_no_heavy_dependency() -> None:
    code = (
        "import sys, treehop.rerankers\n"
        "heavy = {'onnxruntime', 'tokenizers', 'vikingdb', 'volcengine', 'sentence_transformers'}\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=None
    )
    assert out.stdout.strip() == "[]"


# -- LLMReranker -----------------------------------------------------------------------------


class FakeLLM(BaseLLM):
    """An in-process LLM: answers from a function of the prompt, records every prompt."""

    name = "fake-llm"

    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.prompts: list[list[ChatMessage]] = []
        self.json_modes: list[bool] = []

    def complete(self, messages: Sequence[ChatMessage], *, json_mode: bool = False) -> str:
        self.prompts.append(list(messages))
        self.json_modes.append(json_mode)
        result = self.answer(messages)
        if isinstance(result, Exception):
            raise result
        return str(result)


def passages_of(messages: Sequence[ChatMessage]) -> list[str]:
    """The numbered passages in a prompt, in order."""
    lines = messages[-1].content.splitlines()
    return [line.split("] ", 1)[1] for line in lines if line.startswith("[")]


def keyword_grader(messages: Sequence[ChatMessage]) -> str:
    """Grades by keyword, like a (very) simple judge: 'treehop' is what the query is about."""
    grades = [10 if "treehop" in p else 4 if "tree" in p else 0 for p in passages_of(messages)]
    return json.dumps({"scores": grades})


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_llm_reranker_batches_and_scales(mode: str) -> None:
    llm = FakeLLM(keyword_grader)
    rr = LLMReranker(llm, batch_size=2)
    assert isinstance(rr, Reranker)
    docs = ["treehop walks trees", "a tree", "bread", "more treehop", "nothing"]
    scores = rr.rerank(QUERY, docs) if mode == "sync" else asyncio.run(rr.arerank(QUERY, docs))
    assert scores == [1.0, 0.4, 0.0, 1.0, 0.0]
    assert len(llm.prompts) == 3  # ceil(5 / 2) prompts, one per batch
    assert sorted(len(passages_of(p)) for p in llm.prompts) == [1, 2, 2]
    assert all(llm.json_modes)
    assert all(QUERY in p[-1].content for p in llm.prompts)


def test_llm_prompt_bounds_lengths_and_keeps_passages_on_one_line() -> None:
    llm = FakeLLM(lambda m: '{"scores": [5]}')
    LLMReranker(llm, max_chars=12, max_query_chars=4).rerank("abcdefgh", ["line one\nline two x"])
    user = llm.prompts[0][-1].content
    assert "Query: abcd\n" in user
    assert passages_of(llm.prompts[0]) == ["line one lin"]
    assert "exactly 1 grades" in user


@pytest.mark.parametrize(
    "answer, expected",
    [
        ('{"scores": [10, 0, 7.5]}', [1.0, 0.0, 0.75]),
        ('```json\n{"scores": [1, 2, 3]}\n```', [0.1, 0.2, 0.3]),
        ('Here you go: {"scores": [3, 2, 1]} hope it helps', [0.3, 0.2, 0.1]),
        ("[4, 5, 6]", [0.4, 0.5, 0.6]),
        ('{"scores": ["9", " 8 ", 7]}', [0.9, 0.8, 0.7]),
        ('{"2": 1, "0": 3, "1": 2}', [0.3, 0.2, 0.1]),
    ],
)
def test_llm_answer_parsing_tolerates_harmless_noise(answer: str, expected: list[float]) -> None:
    assert parse_scores(answer, 3) == pytest.approx(expected)


@pytest.mark.parametrize(
    "answer, message",
    [
        ("I think the first one is best.", "not JSON"),
        ('{"scores": [1, 2]}', "2 grades for 3"),
        ('{"scores": [1, 2, 11]}', "outside 0-10"),
        ('{"scores": [1, -1, 2]}', "outside 0-10"),
        ('{"scores": [1, NaN, 2]}', "outside 0-10"),
        ('{"scores": [1, "high", 2]}', "not a number"),
        ('{"scores": [1, true, 2]}', "boolean"),
        ('{"scores": [1, null, 2]}', "not a number"),
        ('{"ranking": [1, 2, 3]}', "no 'scores'"),
        ('{"scores": "1,2,3"}', "not a list"),
        ('{"0": 1, "1": 2, "5": 3}', "expected 0..2"),
    ],
)
def test_llm_garbage_raises_rerank_error(answer: str, message: str) -> None:
    with pytest.raises(RerankError, match=message):
        parse_scores(answer, 3)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_llm_failures_fall_back_visibly(mode: str) -> None:
    docs = ["treehop", "tree"]
    cases = {
        "LLMError": FakeLLM(lambda m: LLMError("model timed out")),
        "not JSON": FakeLLM(lambda m: "sorry, I cannot help"),
        "1 grades for 2": FakeLLM(lambda m: '{"scores": [3]}'),
    }
    for reason, llm in cases.items():
        rr = LLMReranker(llm)
        if mode == "sync":
            with pytest.raises(RerankError, match=reason):
                rr.rerank(QUERY, docs)
        outcome = asyncio.run(safe_rerank(rr, QUERY, docs, timeout_s=5))
        assert outcome.scores is None
        assert outcome.fallback_reason is not None and reason in outcome.fallback_reason


def test_llm_async_concurrency_is_bounded() -> None:
    state = {"running": 0, "peak": 0}

    class SlowLLM(FakeLLM):
        async def acomplete(
            self, messages: Sequence[ChatMessage], *, json_mode: bool = False
        ) -> str:
            state["running"] += 1
            state["peak"] = max(state["peak"], state["running"])
            await asyncio.sleep(0.02)
            state["running"] -= 1
            return keyword_grader(messages)

    rr = LLMReranker(SlowLLM(keyword_grader), batch_size=1, concurrency=2)
    scores = asyncio.run(rr.arerank(QUERY, ["treehop"] * 6))
    assert scores == [1.0] * 6
    assert state["peak"] == 2


def test_llm_reranker_configuration() -> None:
    with pytest.raises(RerankError, match="LLM protocol"):
        LLMReranker(object())  # type: ignore[arg-type]
    with pytest.raises(RerankError, match="batch_size"):
        LLMReranker(FakeLLM(keyword_grader), batch_size=0)
    rr = LLMReranker(FakeLLM(keyword_grader))
    assert rr.name == "llm-rerank:fake-llm"
    assert rr.rerank(QUERY, []) == []
