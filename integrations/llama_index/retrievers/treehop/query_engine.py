"""``TreehopQueryEngine``: LlamaIndex's ``RetrieverQueryEngine`` over a ``TreehopRetriever``.

It is a ``RetrieverQueryEngine`` (so ``from_args`` keeps every option: ``llm``,
``response_mode``, the prompt templates, ``node_postprocessors``, ``streaming``, ``use_async``,
...) with two differences that matter for treehop:

- its prompts include the retriever's (the intent-analysis prompt of ``search`` mode appears in
  ``engine.get_prompts()`` as ``retriever:intent_analysis`` and can be updated from there);
- ``from_args`` refuses keyword arguments it does not know instead of dropping them, so a
  misplaced ``similarity_top_k=`` is an error rather than silently ignored.
"""

from __future__ import annotations

import inspect
from typing import Any

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.prompts.mixin import PromptMixinType
from llama_index.core.query_engine import RetrieverQueryEngine

from treehop.integration_kit import RetrieverClient
from treehop.redaction import listed

from .base import TreehopRetriever

_FROM_ARGS_PARAMS = frozenset(inspect.signature(RetrieverQueryEngine.from_args).parameters) - {
    "kwargs"
}


class TreehopQueryEngine(RetrieverQueryEngine):
    """A retriever query engine whose retriever is a :class:`TreehopRetriever`."""

    @property
    def treehop_retriever(self) -> BaseRetriever:
        return self._retriever

    def _get_prompt_modules(self) -> PromptMixinType:
        modules = dict(super()._get_prompt_modules())
        modules["retriever"] = self._retriever
        return modules

    @classmethod
    def from_args(cls, retriever: BaseRetriever, *args: Any, **kwargs: Any) -> TreehopQueryEngine:
        """``RetrieverQueryEngine.from_args``, rejecting unknown keyword arguments."""
        unknown = sorted(k for k in kwargs if k not in _FROM_ARGS_PARAMS)
        if unknown:
            raise TypeError(
                "TreehopQueryEngine.from_args() got unexpected keyword argument(s) "
                f"[{listed(unknown)}]; "
                "retriever options (similarity_top_k, filters, ...) belong to "
                "TreehopRetriever or TreehopQueryEngine.from_client"
            )
        engine = super().from_args(retriever, *args, **kwargs)
        assert isinstance(engine, cls)
        return engine

    @classmethod
    def from_client(
        cls,
        client: RetrieverClient,
        *,
        retriever_kwargs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> TreehopQueryEngine:
        """A query engine over a new :class:`TreehopRetriever` of ``client``.

        ``retriever_kwargs`` go to the retriever (``similarity_top_k``, ``filters``, ``mode``,
        ...); the other keyword arguments to :meth:`from_args`.
        """
        retriever = TreehopRetriever(client, **(retriever_kwargs or {}))
        return cls.from_args(retriever, **kwargs)
