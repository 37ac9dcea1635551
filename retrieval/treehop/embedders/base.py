"""The embedder protocol: batched, sync and async, unit-normalised float32 vectors."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from ..errors import EmbeddingError

Vectors = npt.NDArray[np.float32]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors. Rows must be L2-normalised so that dot product is cosine.

    An embedder may also have ``former_names`` (a tuple of strings): names an index stored
    for this same vector space before ``name`` was chosen; such an index opens (and stores
    ``name`` with its next write) instead of being refused as another model's."""

    @property
    def name(self) -> str:
        """A stable identifier (model and settings); stored with the index."""
        ...

    @property
    def dimension(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed documents: returns an array of shape ``(len(texts), dimension)``."""
        ...

    async def aembed(self, texts: Sequence[str]) -> Vectors: ...

    def embed_query(self, text: str) -> Vectors:
        """Embed one query (models with query instructions differ from documents)."""
        ...

    async def aembed_query(self, text: str) -> Vectors: ...


class BaseEmbedder:
    """Helpers shared by embedders: async via a worker thread, query = one document."""

    name: str = "embedder"
    dimension: int = 0

    def embed(self, texts: Sequence[str]) -> Vectors:  # pragma: no cover - abstract
        raise NotImplementedError

    async def aembed(self, texts: Sequence[str]) -> Vectors:
        # CPU-bound local models run in a thread so that the event loop stays free.
        return await asyncio.to_thread(self.embed, texts)

    def embed_query(self, text: str) -> Vectors:
        return np.asarray(self.embed([text])[0], dtype=np.float32)

    async def aembed_query(self, text: str) -> Vectors:
        return np.asarray((await self.aembed([text]))[0], dtype=np.float32)


WRAPPER_NAME_PREFIXES = ("langchain:TreehopEmbeddings:", "llamaindex:TreehopEmbedding:")
"""What the LangChain / LlamaIndex wrappers of treehop's own embedder stored before stop 61:
``<prefix><the wrapped embedder's name>`` (``langchain:TreehopEmbeddings:minilm-l6-v2-int8-onnx``).
The same vectors as the embedder's own, now stored under its own name. Only the names: the
core never imports a framework."""


def same_vector_space(stored: str, name: str, former: object = ()) -> bool:
    """Whether an index stored under ``stored`` holds the vectors of an embedder ``name``
    (with ``former_names`` ``former``): the same name, one of its former names, or one of
    :data:`WRAPPER_NAME_PREFIXES` followed by exactly ``name``.

    Why the prefixes here and not only in the wrappers' ``former_names``: an index such a
    wrapper built was refused by a plain ``Treehop(path)``, the CLI and the MCP server
    ("would mix vector spaces") until a wrapper had opened it and written once; the rule is
    a string comparison, so another model (``langchain:OpenAIEmbeddings:...``, or a wrapper
    of another treehop model) is still refused."""
    if stored == name:
        return True
    if isinstance(former, tuple | list | frozenset | set) and stored in former:
        return True
    return any(stored == prefix + name for prefix in WRAPPER_NAME_PREFIXES)


def normalize_rows(mat: npt.ArrayLike, expected_rows: int, dimension: int | None) -> Vectors:
    """Check shape and finiteness, then L2-normalise rows (zero rows stay zero)."""
    arr = np.asarray(mat, dtype=np.float32)
    if arr.ndim != 2 or arr.shape[0] != expected_rows:
        raise EmbeddingError(
            f"embedder returned shape {arr.shape}, expected ({expected_rows}, dim)"
        )
    if dimension and arr.shape[1] != dimension:
        raise EmbeddingError(f"embedder returned dimension {arr.shape[1]}, expected {dimension}")
    if not np.all(np.isfinite(arr)):
        raise EmbeddingError("embedder returned NaN or infinite values")
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(arr / norms, dtype=np.float32)
