"""Use LlamaIndex models inside treehop: any ``BaseEmbedding`` as the embedder and any ``LLM``
as the intent-analysis (and summary) model.

The adapters speak treehop's protocols (:class:`treehop.embedders.base.Embedder`,
:class:`treehop.llm.base.LLM`) and call the LlamaIndex model's *own* async methods on the async
path, so a model with a real async client (OpenAI, Ollama, ...) keeps the event loop free; a
model without one behaves exactly as it does inside LlamaIndex.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Self

import numpy as np
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.base.llms.types import ChatMessage as LIChatMessage
from llama_index.core.base.llms.types import MessageRole
from llama_index.core.llms import LLM as LlamaLLM
from pydantic import PrivateAttr

from treehop.embedders.base import BaseEmbedder, Embedder, Vectors, normalize_rows
from treehop.embedders.fallback import given_or_default, is_offline_default
from treehop.errors import EmbeddingError, LLMError
from treehop.llm.base import BaseLLM, ChatMessage
from treehop.redaction import redact_exception
from treehop.secrets import register_object_secrets

_ROLES = {
    "system": MessageRole.SYSTEM,
    "user": MessageRole.USER,
    "assistant": MessageRole.ASSISTANT,
}


class LlamaIndexEmbedder(BaseEmbedder):
    """A treehop embedder backed by a LlamaIndex :class:`BaseEmbedding`.

    Rows are L2-normalised here because treehop scores by dot product and many embedding APIs
    return unnormalised vectors. ``name`` is stored with the index: opening the index later with
    a different model is refused instead of mixing vector spaces, so give a stable ``name`` if the
    model's class and ``model_name`` do not identify it.

    ``dimension`` may be given; otherwise it is learnt from the first answer and every later
    answer must match it.
    """

    def __init__(
        self,
        embed_model: BaseEmbedding,
        *,
        name: str | None = None,
        dimension: int | None = None,
    ) -> None:
        if not isinstance(embed_model, BaseEmbedding):
            raise EmbeddingError(
                f"embed_model must be a llama_index BaseEmbedding, got {type(embed_model).__name__}"
            )
        if dimension is not None and dimension <= 0:
            raise EmbeddingError(f"dimension must be positive, got {dimension}")
        self.embed_model = embed_model
        register_object_secrets(embed_model)  # the client's guard redacts its errors
        # A TreehopEmbedding is the treehop embedder it wraps: its vectors are that embedder's,
        # so the index stores that embedder's name. Why: ``LlamaIndexEmbedder(TreehopEmbedding())``
        # (docs/llamaindex.md's own example) stored ``llamaindex:TreehopEmbedding:...`` for the
        # default model's vectors, and ``Treehop(path)``, the CLI and the MCP server refused
        # the index it built ("would mix vector spaces"), as it refused theirs.
        own = f"llamaindex:{type(embed_model).__name__}:{embed_model.model_name}"
        inner = embed_model.embedder if isinstance(embed_model, TreehopEmbedding) else None
        treehops = name is None and inner is not None
        self.name = name or (inner.name if inner is not None else own)
        # (the name stored before: an index built with it still opens; renamed at its next write)
        self.former_names: tuple[str, ...] = (own,) if treehops else ()
        self.dimension = dimension or 0

    def _finish(self, rows: Sequence[Sequence[float]], expected: int) -> Vectors:
        try:
            out = normalize_rows(rows, expected, self.dimension or None)
        except ValueError as exc:  # ragged rows
            raise EmbeddingError(f"{self.name} returned malformed vectors: {exc}") from exc
        if not self.dimension:
            self.dimension = int(out.shape[1])
        return out

    def embed(self, texts: Sequence[str]) -> Vectors:
        texts = list(texts)
        if not texts:
            return self._empty()
        return self._finish(self.embed_model.get_text_embedding_batch(texts), len(texts))

    async def aembed(self, texts: Sequence[str]) -> Vectors:
        texts = list(texts)
        if not texts:
            return self._empty()
        rows = await self.embed_model.aget_text_embedding_batch(texts)
        return self._finish(rows, len(texts))

    def embed_query(self, text: str) -> Vectors:
        row: Vectors = self._finish([self.embed_model.get_query_embedding(text)], 1)[0]
        return row

    async def aembed_query(self, text: str) -> Vectors:
        row: Vectors = self._finish([await self.embed_model.aget_query_embedding(text)], 1)[0]
        return row

    def _empty(self) -> Vectors:
        import numpy as np

        return np.zeros((0, self.dimension or 1), np.float32)

    def __repr__(self) -> str:
        return f"LlamaIndexEmbedder(name={self.name!r}, dimension={self.dimension})"


def _unpickled_embedding(embedder: Embedder | None, fields: dict[str, Any]) -> TreehopEmbedding:
    """:meth:`TreehopEmbedding.__reduce__`'s other side (module level, so pickle finds it)."""
    return TreehopEmbedding(embedder, **fields)


class TreehopEmbedding(BaseEmbedding):
    """A treehop embedder (the offline MiniLM by default) as a LlamaIndex embedding model.

    So an index and the tree above it share one vector space without an API key:
    ``VectorStoreIndex(..., embed_model=store.embed_model)``. ``TreehopEmbedding()`` (no
    embedder) is the process-wide offline MiniLM, as LangChain's ``TreehopEmbeddings()`` is.
    Why: ``Settings.embed_model = TreehopEmbedding()`` is how a LlamaIndex user sets a model
    once, and the required argument made it a ``TypeError``; a non-embedder was an
    ``AttributeError`` on ``.name``.
    """

    _embedder: Embedder = PrivateAttr()

    def __init__(self, embedder: Embedder | None = None, **kwargs: Any) -> None:
        embedder = given_or_default(embedder)
        if kwargs.get("model_name", embedder.name) == embedder.name:
            kwargs.pop("model_name", None)  # (its own name: ``from_dict(e.to_dict())``)
        else:
            # (attacks65: pydantic's raw "multiple values for keyword argument" TypeError)
            raise EmbeddingError(
                f"TreehopEmbedding takes no model_name: it is the embedder's name "
                f"({embedder.name!r:.100}); pass another treehop embedder as embedder="
            )
        super().__init__(model_name=embedder.name, **kwargs)
        self._embedder = embedder

    @classmethod
    def class_name(cls) -> str:
        return "TreehopEmbedding"

    @property
    def embedder(self) -> Embedder:
        """The treehop embedder this model is (what a client opened with it embeds with)."""
        return self._embedder

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> Self:
        """A copy whose fields are copied and whose embedder is shared. Why: deep-copying
        the model failed with ``TypeError: cannot pickle '_thread.lock' object`` (its ONNX
        session); an embedder is read-only weights (the process-wide MiniLM is one object
        for every user), so sharing it is what ``copy.copy`` does and what a copy needs.
        (The vector stores refuse a deep copy: they hold an open index; this holds none.)"""
        memo = {} if memo is None else memo
        memo[id(self._embedder)] = self._embedder
        return super().__deepcopy__(memo)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its constructor call, as LangChain's ``TreehopEmbeddings`` is: the
        process-wide MiniLM as ``TreehopEmbedding()``, another embedder as itself (pickled by
        its own rules: one that cannot be pickled fails here, at ``dumps``), with the batch
        size and workers kept. Why (lead, stop 60): LlamaIndex's own pickling drops a private
        attribute it cannot pickle with a logged warning and rebuilds from the fields; for an
        embedder other than the default that rebuild failed (the stored ``model_name`` is
        not the default's) and the copy came back without its embedder, an
        ``AttributeError`` at its first use, far from the cause."""
        default = is_offline_default(self._embedder)
        fields = {"embed_batch_size": self.embed_batch_size, "num_workers": self.num_workers}
        return (_unpickled_embedding, (None if default else self._embedder, fields))

    def _get_query_embedding(self, query: str) -> list[float]:
        return [float(x) for x in np.asarray(self._embedder.embed_query(query)).ravel()]

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return [float(x) for x in np.asarray(await self._embedder.aembed_query(query)).ravel()]

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._get_text_embeddings([text])[0]

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return [[float(x) for x in row] for row in np.asarray(self._embedder.embed(texts))]

    async def _aget_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        rows = np.asarray(await self._embedder.aembed(texts))
        return [[float(x) for x in row] for row in rows]


def as_treehop_embedder(model: BaseEmbedding) -> Embedder:
    """The treehop embedder for a LlamaIndex model: the embedder itself for a
    :class:`TreehopEmbedding` (``store.embed_model``, given back when the index is reopened:
    one vector space, one stored name), else a :class:`LlamaIndexEmbedder` around it. Wrapped
    again, treehop's own model was stored under another name
    (``llamaindex:TreehopEmbedding:...``) and the index it built refused it."""
    if isinstance(model, TreehopEmbedding):
        return model.embedder
    return LlamaIndexEmbedder(model)


class LlamaIndexLLM(BaseLLM):
    """A treehop chat model backed by a LlamaIndex :class:`LLM` (``chat``/``achat``).

    ``json_mode`` cannot be passed on uniformly (each provider spells it differently), so it is
    not forwarded: treehop's planner prompt asks for a JSON object and its parser tolerates
    fences and prose around it. Any exception of the model is re-raised as
    :class:`~treehop.errors.LLMError`; intent analysis then falls back to the raw query.
    """

    def __init__(self, llm: LlamaLLM, *, name: str | None = None) -> None:
        if not isinstance(llm, LlamaLLM):
            raise LLMError(f"llm must be a llama_index LLM, got {type(llm).__name__}")
        self.llm = llm
        register_object_secrets(llm)  # its errors may echo its key (redacted below)
        model = llm.metadata.model_name
        self.name = name or f"llamaindex:{type(llm).__name__}:{model}"

    @staticmethod
    def _messages(messages: Sequence[ChatMessage]) -> list[LIChatMessage]:
        return [LIChatMessage(role=_ROLES[m.role], content=m.content) for m in messages]

    def complete(self, messages: Sequence[ChatMessage], *, json_mode: bool = False) -> str:
        try:
            response = self.llm.chat(self._messages(messages))
        except Exception as exc:
            # redacted and not chained: a provider's error may quote its key or a signed URL
            raise LLMError(f"{self.name} failed: {redact_exception(exc)}"[:1000]) from None
        return response.message.content or ""

    async def acomplete(self, messages: Sequence[ChatMessage], *, json_mode: bool = False) -> str:
        try:
            response = await self.llm.achat(self._messages(messages))
        except Exception as exc:
            # redacted and not chained: a provider's error may quote its key or a signed URL
            raise LLMError(f"{self.name} failed: {redact_exception(exc)}"[:1000]) from None
        return response.message.content or ""

    def __repr__(self) -> str:
        return f"LlamaIndexLLM(name={self.name!r})"
