"""A local cross-encoder loaded from a model directory the user points to: no key, no network.

No PyPI package ships a good cross-encoder's weights, and treehop never downloads weights at run
time, so the user brings the model directory (for example a ``bge-reranker`` or
``ms-marco-MiniLM`` export). Two layouts load:

* ONNX: ``model.onnx`` (or ``onnx/model.onnx``) plus ``tokenizer.json``, run with
  ``onnxruntime`` and ``tokenizers`` (the ``treehop[local]`` extra). Inputs the graph declares
  among ``input_ids`` / ``attention_mask`` / ``token_type_ids`` are fed, so BERT-style and
  XLM-R-style exports both work.
* sentence-transformers: ``CrossEncoder(model_dir)`` when that package is installed (it is not
  a treehop dependency; it pulls in torch).

Scores: a single-logit head goes through a sigmoid (``activation="auto"``), a multi-class head
through a softmax whose last class is "relevant", so scores live in [0, 1] and a
``rerank_threshold`` means the same thing as with the hosted rerankers. Both heavy imports happen
only when a reranker is built, so ``import treehop.rerankers`` stays cheap.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from .._http import truncate
from ..errors import RerankError
from ..validation import shown_value
from .base import BaseReranker

Backend = Literal["auto", "onnx", "sentence-transformers"]
Activation = Literal["auto", "sigmoid", "none"]

_ONNX_CANDIDATES = ("model.onnx", "onnx/model.onnx")
_KNOWN_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_PAD_TOKENS = ("[PAD]", "<pad>", "<|pad|>", "<unk>")


def _to_scores(logits: npt.NDArray[Any], activation: Activation) -> npt.NDArray[np.float64]:
    """Logits of shape ``(n,)``, ``(n, 1)`` or ``(n, classes)`` to one score per pair."""
    arr = np.asarray(logits, dtype=np.float64)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim == 1:
        if activation == "none":
            return arr
        # tanh form of the sigmoid: no overflow warning for large negative logits.
        sig: npt.NDArray[np.float64] = 0.5 * (1.0 + np.tanh(0.5 * arr))
        return sig
    if arr.ndim != 2:
        raise RerankError(f"cross-encoder output has shape {arr.shape}; expected (n,) or (n, c)")
    if activation == "none":
        return arr[:, -1]
    shifted = arr - arr.max(axis=1, keepdims=True)
    exp = np.exp(shifted)
    probs: npt.NDArray[np.float64] = exp[:, -1] / exp.sum(axis=1)
    return probs


class CrossEncoderReranker(BaseReranker):
    """Scores (query, document) pairs with a cross-encoder from a local directory.

    Args:
        model_dir: The directory holding the model files.
        backend: ``"onnx"``, ``"sentence-transformers"`` or ``"auto"`` (ONNX when a ``.onnx``
            file is present, else sentence-transformers).
        max_length: Token limit per pair (longest-first truncation), capped by the tokenizer's
            ``model_max_length`` when ``tokenizer_config.json`` states one.
        batch_size: Pairs per forward pass; documents are sorted by length first so that a
            batch pads to similar lengths.
        activation: ONNX only. ``"auto"``/``"sigmoid"`` map logits to [0, 1]; ``"none"`` returns
            raw logits (same order). sentence-transformers applies its model's own default.
        max_chars: A character bound applied before tokenising, so a huge chunk costs nothing.
        onnx_file: The graph file inside ``model_dir`` when it is not one of the usual names.
        intra_op_threads: onnxruntime's thread count (``None`` lets it choose).
    """

    def __init__(
        self,
        model_dir: str | Path,
        *,
        backend: Backend = "auto",
        max_length: int = 512,
        batch_size: int = 16,
        activation: Activation = "auto",
        max_chars: int = 4000,
        onnx_file: str | None = None,
        intra_op_threads: int | None = None,
    ) -> None:
        self.model_dir = Path(model_dir).expanduser()
        if not self.model_dir.is_dir():
            raise RerankError(f"cross-encoder model directory not found: {self.model_dir}")
        if backend not in ("auto", "onnx", "sentence-transformers"):
            raise RerankError(f"unknown cross-encoder backend {shown_value(backend)}")
        if activation not in ("auto", "sigmoid", "none"):
            raise RerankError(f"unknown activation {shown_value(activation)}")
        for label, value in (("max_length", max_length), ("batch_size", batch_size)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise RerankError(f"{label} must be a positive integer, got {shown_value(value)}")
        if max_chars < 1:
            raise RerankError(f"max_chars must be positive, got {shown_value(max_chars)}")
        self.batch_size = batch_size
        self.activation: Activation = activation
        self.max_chars = max_chars
        self.max_length = self._cap_max_length(max_length)
        onnx_path = self._find_onnx(onnx_file)
        if backend == "onnx" or (backend == "auto" and onnx_path is not None):
            if onnx_path is None:
                names = [onnx_file] if onnx_file else list(_ONNX_CANDIDATES)
                raise RerankError(f"no ONNX model in {self.model_dir} (looked for {names})")
            self.backend: Literal["onnx", "sentence-transformers"] = "onnx"
            self._load_onnx(onnx_path, intra_op_threads)
        else:
            self.backend = "sentence-transformers"
            self._load_sentence_transformers()
        self.name = f"cross-encoder:{self.model_dir.name}"

    def __repr__(self) -> str:
        return (
            f"CrossEncoderReranker(model_dir={str(self.model_dir)!r}, backend={self.backend!r}, "
            f"max_length={self.max_length})"
        )

    # -- loading ---------------------------------------------------------------------------

    def _cap_max_length(self, max_length: int) -> int:
        cfg = self.model_dir / "tokenizer_config.json"
        if cfg.is_file():
            try:
                limit = json.loads(cfg.read_text(encoding="utf-8")).get("model_max_length")
            except (ValueError, OSError, AttributeError):
                limit = None
            # HF writes a huge sentinel (1e30) when the limit is unknown.
            if isinstance(limit, int) and 0 < limit < 1_000_000:
                return min(max_length, limit)
        return max_length

    def _find_onnx(self, onnx_file: str | None) -> Path | None:
        names = (onnx_file,) if onnx_file else _ONNX_CANDIDATES
        for name in names:
            path = self.model_dir / name
            if path.is_file():
                return path
        return None

    def _load_onnx(self, onnx_path: Path, intra_op_threads: int | None) -> None:
        try:
            ort = importlib.import_module("onnxruntime")
            tokenizers = importlib.import_module("tokenizers")
        except ImportError as exc:
            raise RerankError(
                f"the ONNX cross-encoder needs onnxruntime and tokenizers "
                f"(pip install -e '.[local]' in a treehop clone): {exc}"
            ) from exc
        tok_path = self.model_dir / "tokenizer.json"
        if not tok_path.is_file():
            raise RerankError(f"no tokenizer.json in {self.model_dir}")
        try:
            tokenizer = tokenizers.Tokenizer.from_file(str(tok_path))
        except Exception as exc:
            raise RerankError(f"cannot read {tok_path}: {exc}") from exc
        tokenizer.no_padding()  # padding is done in numpy below, per sorted batch
        tokenizer.enable_truncation(max_length=self.max_length, strategy="longest_first")
        self._tokenizer = tokenizer
        self._pad_id = self._find_pad_id(tokenizer)
        options = ort.SessionOptions()
        if intra_op_threads is not None:
            options.intra_op_num_threads = intra_op_threads
        try:
            session = ort.InferenceSession(
                str(onnx_path), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:
            raise RerankError(f"cannot load ONNX model {onnx_path}: {exc}") from exc
        inputs = {i.name: i for i in session.get_inputs()}
        unknown = sorted(set(inputs) - set(_KNOWN_INPUTS))
        if unknown or "input_ids" not in inputs:
            raise RerankError(
                f"{onnx_path} declares inputs {sorted(inputs)}; a cross-encoder export takes "
                f"input_ids plus optionally attention_mask / token_type_ids"
            )
        self._feeds = [n for n in _KNOWN_INPUTS if n in inputs]
        self._int_dtype = {
            n: (np.int32 if inputs[n].type == "tensor(int32)" else np.int64) for n in self._feeds
        }
        self._output = session.get_outputs()[0].name
        self._session = session

    @staticmethod
    def _find_pad_id(tokenizer: Any) -> int:
        padding = tokenizer.padding
        if padding and isinstance(padding.get("pad_id"), int):
            return int(padding["pad_id"])
        for token in _PAD_TOKENS:
            tid = tokenizer.token_to_id(token)
            if tid is not None:
                return int(tid)
        return 0

    def _load_sentence_transformers(self) -> None:
        try:
            st = importlib.import_module("sentence_transformers")
        except ImportError as exc:
            raise RerankError(
                f"{self.model_dir} has no model.onnx, and loading it as a sentence-transformers "
                "CrossEncoder needs `pip install sentence-transformers` (not a treehop "
                "dependency). Alternatively export the model to ONNX with a tokenizer.json."
            ) from exc
        try:
            self._st_model = st.CrossEncoder(str(self.model_dir), max_length=self.max_length)
        except Exception as exc:
            raise RerankError(f"cannot load CrossEncoder from {self.model_dir}: {exc}") from exc

    # -- scoring ---------------------------------------------------------------------------

    def _onnx_logits(self, pairs: list[tuple[str, str]]) -> npt.NDArray[Any]:
        encodings = self._tokenizer.encode_batch(pairs)
        width = max(len(e.ids) for e in encodings)
        n = len(encodings)
        ids = np.full((n, width), self._pad_id, dtype=np.int64)
        mask = np.zeros((n, width), dtype=np.int64)
        types = np.zeros((n, width), dtype=np.int64)
        for row, enc in enumerate(encodings):
            k = len(enc.ids)
            ids[row, :k] = enc.ids
            mask[row, :k] = 1
            types[row, :k] = enc.type_ids
        arrays = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        feed = {name: arrays[name].astype(self._int_dtype[name]) for name in self._feeds}
        (out,) = self._session.run([self._output], feed)
        logits = np.asarray(out)
        if logits.shape[0] != n:
            raise RerankError(f"cross-encoder returned {logits.shape[0]} rows for {n} pairs")
        return logits

    def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        """One score per document, in input order (CPU-bound; ``arerank`` runs it in a thread)."""
        for i, d in enumerate(documents):
            if not isinstance(d, str):
                raise RerankError(f"document {i} is not a string: {type(d).__name__}")
        if not documents:
            return []
        q = truncate(query, self.max_chars)
        docs = [truncate(d, self.max_chars) for d in documents]
        if self.backend == "sentence-transformers":
            raw = self._st_model.predict(
                [(q, d) for d in docs],
                batch_size=self.batch_size,
                show_progress_bar=False,
                convert_to_numpy=True,
            )
            scores = np.asarray(raw, dtype=np.float64).reshape(len(docs))
        else:
            # Longest first, so that each batch pads to nearly its own length.
            order = np.argsort([-len(d) for d in docs], kind="stable")
            scores = np.empty(len(docs), dtype=np.float64)
            for start in range(0, len(docs), self.batch_size):
                idx = order[start : start + self.batch_size]
                logits = self._onnx_logits([(q, docs[i]) for i in idx])
                scores[idx] = _to_scores(logits, self.activation)
        if not np.all(np.isfinite(scores)):
            raise RerankError("cross-encoder produced non-finite scores")
        return [float(s) for s in scores]
