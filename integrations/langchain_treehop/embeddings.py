"""``LangChainEmbedder``: any LangChain ``Embeddings`` as treehop's embedder; and
``TreehopEmbeddings``: treehop's embedder (the bundled offline MiniLM by default) as a LangChain
``Embeddings``, the twin of LlamaIndex's ``TreehopEmbedding``.

Treehop's index assumes unit rows (dot product = cosine) and one stable ``name`` per vector
space (stored with the index, so that opening it with another model is refused instead of
silently mixing spaces). LangChain embeddings promise neither, so this adapter normalises every
row, checks shapes and finiteness, and derives a name from the class and model.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, cast

import numpy as np
from langchain_core.embeddings import Embeddings

from treehop.embedders.base import Embedder, Vectors, normalize_rows
from treehop.embedders.fallback import given_or_default, is_offline_default
from treehop.errors import EmbeddingError, InvalidQueryError
from treehop.ingest.writer import EMBED_BATCH
from treehop.redaction import redact_exception
from treehop.secrets import register_object_secrets
from treehop.validation import check_strings, shown_value

_NO_ROWS = np.zeros((0, 0), np.float32)  # what an empty batch embeds to (no model call)
_MODEL_ATTRS = ("model", "model_name", "model_id", "deployment")


def default_name(embeddings: Embeddings) -> str:
    """``langchain:<Class>:<model>``, e.g. ``langchain:OpenAIEmbeddings:text-embedding-3-small``."""
    model = next(
        (str(v) for a in _MODEL_ATTRS if isinstance(v := getattr(embeddings, a, None), str) and v),
        None,
    )
    base = f"langchain:{type(embeddings).__name__}"
    return f"{base}:{model}" if model else base


def _space_name(embeddings: Embeddings) -> str:
    """The stored name of ``embeddings``' vector space: a :class:`TreehopEmbeddings` is the
    treehop embedder it wraps, so its embedder's own name (the offline MiniLM's
    ``minilm-l6-v2-int8-onnx``); any other model :func:`default_name`. Why:
    ``LangChainEmbedder(TreehopEmbeddings())`` stored ``langchain:TreehopEmbeddings:...`` for
    the default model's vectors, so ``Treehop(path)``, the CLI and the MCP server refused the
    index it built ("would mix vector spaces"), and it refused an index they built."""
    if isinstance(embeddings, TreehopEmbeddings):
        return embeddings.embedder.name
    return default_name(embeddings)


class LangChainEmbedder:
    """Wraps a LangChain ``Embeddings`` in treehop's :class:`~treehop.embedders.base.Embedder`.

    Args:
        embeddings: the LangChain model (``OpenAIEmbeddings``, ``HuggingFaceEmbeddings``, ...).
        name: the identifier stored with the index; give one when the class and model attributes
            do not pin the vector space down (for example a custom endpoint).
        dimension: the vector size if known; otherwise learnt from the first answer.

    The async methods call ``aembed_documents`` / ``aembed_query``, so a model with a native
    async client never blocks the event loop (LangChain's default falls back to a thread).
    """

    def __init__(
        self, embeddings: Embeddings, *, name: str | None = None, dimension: int | None = None
    ) -> None:
        if not isinstance(embeddings, Embeddings):
            raise EmbeddingError(
                f"embeddings must be a langchain_core Embeddings, got {type(embeddings).__name__}"
            )
        if name is not None and (not isinstance(name, str) or not name.strip()):
            raise InvalidQueryError("name must be a non-empty string")
        if dimension is not None and (
            isinstance(dimension, bool) or not isinstance(dimension, int) or dimension < 1
        ):  # (a str raised TypeError at ``<``; 1.5 was kept and failed at the first call)
            raise InvalidQueryError(
                f"dimension must be a positive integer, got {shown_value(dimension)}"
            )
        self.embeddings = embeddings
        register_object_secrets(embeddings)  # its errors may echo its key (_errors redacts)
        self.name: str = name or _space_name(embeddings)
        """The identifier stored with the index (one per vector space)."""
        self.former_names: tuple[str, ...] = (
            (default_name(embeddings),)
            if name is None and isinstance(embeddings, TreehopEmbeddings)
            else ()
        )
        """Names this vector space was stored under before (an index built then still opens)."""
        self._dimension = dimension or 0

    @property
    def dimension(self) -> int:
        """The vector size; 0 until known (given, or seen in the first answer)."""
        return self._dimension

    def __repr__(self) -> str:
        return f"LangChainEmbedder(name={self.name!r}, dimension={self._dimension or None})"

    def _finish(self, raw: object, rows: int) -> Vectors:
        try:
            arr = np.asarray(raw, dtype=np.float32)
        except (TypeError, ValueError, OverflowError) as exc:  # Overflow: an int like 10**400
            raise EmbeddingError(f"{self.name} returned vectors that are not numeric") from exc
        if arr.ndim == 2 and arr.shape[0] == 0 and rows == 0:
            return np.zeros((0, self._dimension), np.float32)
        out = normalize_rows(arr, rows, self._dimension or None)
        if not self._dimension:
            self._dimension = int(out.shape[1])
        return out

    @staticmethod
    def _texts(texts: Sequence[str]) -> list[str]:
        return check_strings(texts, "texts", EmbeddingError)

    @contextmanager
    def _errors(self) -> Iterator[None]:
        """Any failure of the LangChain model as an :class:`EmbeddingError` naming it."""
        try:
            yield
        except EmbeddingError:
            raise
        except Exception as exc:
            # redacted and not chained: a provider's error may quote its key or a signed URL
            raise EmbeddingError(f"{self.name} failed: {redact_exception(exc)}"[:1000]) from None

    def embed(self, texts: Sequence[str]) -> Vectors:
        items = self._texts(texts)
        with self._errors():
            raw = self.embeddings.embed_documents(items) if items else _NO_ROWS
        return self._finish(raw, len(items))

    async def aembed(self, texts: Sequence[str]) -> Vectors:
        items = self._texts(texts)
        with self._errors():
            raw = await self.embeddings.aembed_documents(items) if items else _NO_ROWS
        return self._finish(raw, len(items))

    def embed_query(self, text: str) -> Vectors:
        with self._errors():
            raw = self.embeddings.embed_query(check_query_text(text))
        return self._finish([raw], 1).reshape(-1)

    async def aembed_query(self, text: str) -> Vectors:
        with self._errors():
            raw = await self.embeddings.aembed_query(check_query_text(text))
        return self._finish([raw], 1).reshape(-1)


def check_query_text(text: object) -> str:
    if not isinstance(text, str):
        raise EmbeddingError(f"query must be a string, got {type(text).__name__}")
    return text


class TreehopEmbeddings(Embeddings):
    """A treehop embedder as a LangChain ``Embeddings``: by default the offline MiniLM that
    ships with treehop (``all-MiniLM-L6-v2``, int8 ONNX; no API key, nothing downloaded).

    Why: LangChain code that needs an ``Embeddings`` (a text splitter's semantic chunker,
    another vector store, an ``EmbeddingsFilter``, LangGraph's store ``index``) can use the
    same vector space as a treehop index built with the default, instead of a second model.
    ``TreehopVectorStore(embedding=TreehopEmbeddings(), ...)`` is the same index as no
    ``embedding`` at all (the treehop embedder is used directly, under its own name).

    Rows are unit-length (cosine = dot product). ``aembed_documents`` / ``aembed_query``
    await the embedder's own async methods (the model runs in a worker thread, never on the
    event loop).

    ``embed_documents`` / ``aembed_documents`` call the embedder once per
    :data:`~treehop.ingest.writer.EMBED_BATCH` texts, one slice after another (as treehop's
    own ingest does, and as LangChain's ``OpenAIEmbeddings`` sends its chunks): a remote
    embedder's ``deadline_s`` bounds one embed call, so a vector store that embeds thousands
    of documents in one ``add_texts`` is bounded per slice instead of failing past one
    deadline in all.

    Args:
        embedder: a treehop :class:`~treehop.embedders.base.Embedder` (``None``: the
            process-wide offline MiniLM, loaded on first use; needs the ``local`` extra).
    """

    def __init__(self, embedder: Embedder | None = None) -> None:
        self.embedder: Embedder = given_or_default(embedder)
        """The treehop embedder answering every call."""

    @property
    def model(self) -> str:
        """The embedder's stored name (what LangChain tooling reads as the model)."""
        return self.embedder.name

    def __repr__(self) -> str:
        return f"TreehopEmbeddings(model={self.embedder.name!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its constructor call: the process-wide MiniLM as ``TreehopEmbeddings()``
        (loaded again on the other side, as LlamaIndex's ``TreehopEmbedding`` comes back),
        another embedder as itself (pickled by its own rules). Why: pickling the MiniLM
        failed with ``TypeError: cannot pickle '_thread.lock' object`` (its ONNX session),
        and a multiprocessing pool or a cached chain pickles the embeddings it holds."""
        default = is_offline_default(self.embedder)
        if default:
            return (type(self), ())
        return (type(self), (self.embedder,))

    def __deepcopy__(self, memo: dict[int, Any]) -> TreehopEmbeddings:
        """A copy answering with the same embedder. Why: deep-copying the model failed with
        ``TypeError: cannot pickle '_thread.lock' object`` (its ONNX session), and a chain or
        agent config that deep-copies its parts copies this one too; an embedder is read-only
        weights (the process-wide MiniLM is one object for every user), so sharing it is
        what ``copy.copy`` does and what the copy needs."""
        memo[id(self.embedder)] = self.embedder
        new = type(self).__new__(type(self))
        new.__dict__.update(copy.deepcopy(self.__dict__, memo))
        return new

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        items = check_strings(texts, "texts", EmbeddingError)
        return [
            row
            for i in range(0, len(items), EMBED_BATCH)
            for row in _rows(self.embedder.embed(items[i : i + EMBED_BATCH]))
        ]

    def embed_query(self, text: str) -> list[float]:
        vec = self.embedder.embed_query(check_query_text(text))
        return _row(vec)

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        items = check_strings(texts, "texts", EmbeddingError)
        out: list[list[float]] = []
        for i in range(0, len(items), EMBED_BATCH):
            out += _rows(await self.embedder.aembed(items[i : i + EMBED_BATCH]))
        return out

    async def aembed_query(self, text: str) -> list[float]:
        vec = await self.embedder.aembed_query(check_query_text(text))
        return _row(vec)


def _rows(vectors: object) -> list[list[float]]:
    return cast(list[list[float]], np.asarray(vectors, dtype=np.float32).tolist())


def _row(vector: object) -> list[float]:
    out: list[float] = np.asarray(vector, dtype=np.float32).ravel().tolist()
    return out


def as_treehop_embedder(embeddings: Embeddings) -> Embedder:
    """The treehop embedder for a LangChain model: the embedder itself for
    :class:`TreehopEmbeddings` (one vector space, one stored name), else a
    :class:`LangChainEmbedder` around it."""
    if isinstance(embeddings, TreehopEmbeddings):
        return embeddings.embedder
    return LangChainEmbedder(embeddings)
