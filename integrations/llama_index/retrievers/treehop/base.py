"""``TreehopRetriever``: a native LlamaIndex retriever over a treehop tree."""

from __future__ import annotations

import asyncio
import inspect
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.callbacks.base import CallbackManager
from llama_index.core.callbacks.schema import CBEventType, EventPayload
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.instrumentation.events.rerank import ReRankEndEvent, ReRankStartEvent
from llama_index.core.llms import LLM as LlamaLLM
from llama_index.core.prompts.mixin import PromptDictType
from llama_index.core.schema import BaseNode, IndexNode, NodeWithScore, QueryBundle
from llama_index.core.utils import print_text
from llama_index.core.vector_stores.types import MetadataFilters
from llama_index_instrumentation import get_dispatcher
from llama_index_instrumentation.event_handlers.null import NullEventHandler

from treehop import AsyncTreehop, FindResult, MatchedContext, Treehop
from treehop import integration_kit as kit
from treehop import uri as urimod
from treehop.arguments import check_mode, check_target_uris
from treehop.embedders.base import Embedder
from treehop.errors import EmbeddingError, InvalidFilterError, InvalidQueryError
from treehop.filters import show_fields
from treehop.ingest import records
from treehop.integration_kit import KnowledgeSource, RetrieverClient, is_knowledge_source
from treehop.models import ContextType, FoundBy, RetrievalMode
from treehop.postprocess import check_controls
from treehop.search_options import SearchKwargs
from treehop.stage_events import (
    DescentStage,
    GlobalSearchStage,
    IntentAnalysisStage,
    RerankFallbackStage,
    StageEvent,
    TagHopStage,
    stage_events,
)
from treehop.validation import (
    MAX_LIMIT,
    check_dense_weight,
    check_limit,
    check_query,
    check_threshold,
    shown_value,
)

from .adapters import LlamaIndexLLM, as_treehop_embedder
from .events import (
    TreehopDescentEvent,
    TreehopGlobalSearchEvent,
    TreehopQueryPlanEvent,
    TreehopRerankFallbackEvent,
    TreehopTagHopEvent,
)
from .filters import CONTEXT_ALIASES, TreehopFilterArgs, to_treehop_filters, validate
from .ingest import add_documents
from .nodes import PROVENANCE, SHOWN_FIELDS, TreeLinks, to_node_with_score
from .prompts import INTENT_PROMPT_KEY, from_prompt, to_prompt

if TYPE_CHECKING:
    from .query_engine import TreehopQueryEngine

dispatcher = get_dispatcher(__name__)

DEFAULT_SIMILARITY_TOP_K = 10
NO_LIMIT_RERANK_POOL = 100
"""``similarity_top_k=0`` when a reranker scores the retrieval: the reranked best this many
(or ``retrieve_count``), not the ~1,000 candidates a no-limit search reranks. Ten times the
default ``similarity_top_k``: a cost bound (rerank pairs per query), not a quality setting."""
MAX_EMBEDDING_STRS = 64
"""Most texts a query's ``custom_embedding_strs`` may hold (HyDE gives one or two; each is
one embedder call, so a list of thousands was thousands of calls before the search)."""
Mode = Literal["find", "search"]


def _listening() -> bool:
    """Whether any instrumentation handler would receive this module's events (the same
    walk ``Dispatcher.event`` makes), so that no event is built for nobody."""
    d: Any = dispatcher
    while d is not None:
        if any(not isinstance(h, NullEventHandler) for h in d.event_handlers):
            return True
        if not d.propagate:
            return False
        try:
            d = d.parent
        except KeyError:
            return False
    return False


def _context_types(
    value: Sequence[ContextType | str] | ContextType | str | None,
) -> tuple[ContextType, ...] | None:
    if value is None:
        return None
    if not isinstance(value, str | ContextType | Iterable):  # (an int: TypeError at list())
        raise InvalidQueryError(
            f"context_types must be a context type or a list of them, got {type(value).__name__}"
        )
    items = [value] if isinstance(value, str | ContextType) else list(value)
    out: list[ContextType] = []
    for v in items:
        ct = v if isinstance(v, ContextType) else CONTEXT_ALIASES.get(str(v).strip().casefold())
        if ct is None:
            raise InvalidQueryError(f"unknown context type {v!r}: use resource, memory or skill")
        if ct not in out:
            out.append(ct)
    if not out:
        raise InvalidQueryError("context_types must not be empty (use None for all)")
    return tuple(out)


_EVENTS: dict[type[StageEvent], type[BaseEvent]] = {
    IntentAnalysisStage: TreehopQueryPlanEvent,
    GlobalSearchStage: TreehopGlobalSearchEvent,
    DescentStage: TreehopDescentEvent,
    TagHopStage: TreehopTagHopEvent,
}
"""Stage events emitted after a retrieval (the rerank fallback goes inside the rerank span)."""


def _print_stage(stage: StageEvent) -> None:
    if isinstance(stage, IntentAnalysisStage):
        shown = "; ".join(f"{q['context_type']}: {q['query']}" for q in stage.queries)
        print_text(f"treehop plan: {shown or '(no retrieval)'}\n", color="llama_blue")
    elif isinstance(stage, TagHopStage):
        print_text(
            f"treehop tag hops via {stage.tags_used}: {len(stage.subtrees_added)} "
            f"subtree(s), {stage.hits_in_topk} hit(s) in the top-k\n",
            color="llama_turquoise",
        )


_SYNONYMS = {
    "top_k": "similarity_top_k",
    "k": "similarity_top_k",
    "limit": "similarity_top_k",
    "filter": "filters",
    "metadata_filter": "filters",
    "metadata_filters": "filters",
}
"""Other APIs' names for :class:`TreehopRetriever`'s keywords (LangChain's ``k``, a vector
database's ``top_k``, treehop's own ``metadata_filter``)."""
_FROM_DEFAULTS_ONLY = {
    "llm": "the planner of search mode is the client's: Treehop(path, "
    "llm=LlamaIndexLLM(llm)), or TreehopRetriever.from_defaults(path=..., llm=llm)",
    "embed_model": "the client embeds with its own model: Treehop(path, "
    "embedder=LlamaIndexEmbedder(embed_model)), or TreehopRetriever.from_defaults(path=..., "
    "embed_model=embed_model)",
}
"""Where the model keywords of :meth:`TreehopRetriever.from_defaults` go when a client is
given (``TreehopRetriever(client, llm=MockLLM())`` named only what the retriever takes)."""
_ELSEWHERE = {
    **_FROM_DEFAULTS_ONLY,
    **dict.fromkeys(
        ("node_ids", "doc_ids"),
        "this retriever searches the tree and takes no ids: narrow it with filters= or "
        "target_uri=, or query a TreehopVectorStore through LlamaIndex's own "
        "VectorIndexRetriever(index, node_ids=[...], doc_ids=[...])",
    ),
}
"""Where a keyword :class:`TreehopRetriever` does not take goes instead (``node_ids`` is a
``VectorIndexRetriever`` keyword; helper leftovers63b)."""


class TreehopRetriever(BaseRetriever, kit.ClosesOnExit):
    """Retrieve from a treehop tree: hierarchical search, tag hops, rerank, optional planning.

    Args:
        client: an open :class:`treehop.Treehop` or :class:`treehop.AsyncTreehop`; both
            ``retrieve`` and ``aretrieve`` work with either (``aretrieve`` always awaits the
            native async client, so it never blocks the event loop). Or a read-only knowledge
            source (an object with ``find`` and ``afind``, such as
            :class:`treehop.vikingdb_knowledge.VikingDBKnowledgeSource`): ``mode="find"``
            only; ``similarity_top_k`` becomes its ``limit``, the metadata filters its
            ``doc_filter``, ``retrieval_mode="thinking"`` turns its rerank on; a ``tags``
            filter, ``mode="search"`` or a ``target_uri`` outside it is refused here.
        similarity_top_k: how many nodes to return. 0 is no limit and above 1,000 is
            "everything", as in LlamaIndex's ``VectorIndexRetriever`` over its
            ``SimpleVectorStore``: every node of the scope (up to one search's 1,000; above it
            only where the scope holds at most 1,000, else ``InvalidQueryError``). 0 when the
            retrieval reranks is the reranked best ``retrieve_count`` (default
            :data:`NO_LIMIT_RERANK_POOL`): the reranker's cost stays bounded.
        filters: LlamaIndex ``MetadataFilters``; the key ``tags`` filters on tags,
            ``context_type`` on the context types, every other key on stored metadata. A filter
            treehop cannot express raises :class:`~treehop.errors.InvalidFilterError` here, at
            construction, never silently at query time.
        mode: ``"find"`` (one query, no LLM) or ``"search"`` (intent analysis over the session,
            several typed queries fused).
        retrieval_mode: ``"quick"`` (never rerank) or ``"thinking"`` (rerank when the client has
            a reranker); ``None`` keeps the method's default (find: quick, search: thinking).
        target_uri: one or several ``viking://`` directories to search in.
        context_types: limit to these context types (``resource``, ``memory``, ``skill``).
        score_threshold: drop nodes scoring below it (in find mode the ``similarity_top_k``
            best, less those below it; search mode passes it to each typed query's search).
        session_id: the conversation whose context ``search`` plans from (search mode only).
        include_relationships: fill PARENT/CHILD (and chunk PREVIOUS/NEXT) relationships; costs
            one store lookup per directory hit. With a knowledge source (no store) PREVIOUS/NEXT
            link only to neighbouring chunks present in the same result (``chunk_diffusion_count``
            brings them), SOURCE names the document, and there are no CHILD links.
        collapse_chunks: one node per document (its best chunk) when ``None``/``True`` (the
            core's default); ``False`` returns every matching chunk as its own node.
        retrieve_count, rerank_threshold, chunk_diffusion_count, chunk_group: passed to the
            core unchanged (how many candidates to rerank, a floor on rerank scores, neighbouring
            chunks to add, chunks grouped under their file).

    Each result is ``NodeWithScore(TextNode(id_=uri, ...), score)`` whose metadata carries the
    provenance of the hit (``found_by``, ``hop_tag``, ``rerank_fallback``, ...; the pre-rerank
    vector score as ``retrieval_score``), hidden from the LLM and embedding text.
    """

    def __init__(
        self,
        client: RetrieverClient,
        *,
        similarity_top_k: int = DEFAULT_SIMILARITY_TOP_K,
        filters: MetadataFilters | None = None,
        mode: Mode = "find",
        retrieval_mode: RetrievalMode | str | None = None,
        target_uri: str | Sequence[str] | None = None,
        context_types: Sequence[ContextType | str] | ContextType | str | None = None,
        score_threshold: float | None = None,
        dense_weight: float | None = None,
        session_id: str | None = None,
        include_directories: bool = False,
        include_relationships: bool = True,
        collapse_chunks: bool | None = None,
        retrieve_count: int | None = None,
        rerank_threshold: float | None = None,
        chunk_diffusion_count: int = 0,
        chunk_group: bool = False,
        callback_manager: CallbackManager | None = None,
        object_map: dict[str, Any] | None = None,
        objects: list[IndexNode] | None = None,
        verbose: bool = False,
        **unknown: Any,
    ) -> None:
        if unknown:
            # Python's "got an unexpected keyword argument 'top_k'" named no keyword it
            # takes; a TypeError still (UnknownArgumentError), and treehop's own.
            raise kit.unknown_arguments(
                "TreehopRetriever",
                unknown,
                _TAKES,
                synonyms=_SYNONYMS,
                elsewhere=_ELSEWHERE,
            )
        self._client = kit.check_retriever_client(client)
        self._opened: Treehop | None = None  # (set by from_defaults: the client it opened)
        self._source: KnowledgeSource | None = None
        self._tree: AsyncTreehop | None = None
        if is_knowledge_source(self._client):
            self._source = self._client
        else:
            self._tree = kit.as_async(self._client)
        if mode not in ("find", "search"):
            raise InvalidQueryError(f"mode must be 'find' or 'search', got {mode!r}")
        if mode == "search" and self._source is not None:
            raise InvalidQueryError(kit.source_refusal(self._source, "mode='search'", tree=False))
        self.mode: Mode = mode
        self.similarity_top_k = similarity_top_k
        self.filters = filters
        self.retrieval_mode = check_mode(retrieval_mode) if retrieval_mode is not None else None
        targets = check_target_uris(target_uri)  # typed errors for wrong types
        for t in targets:
            self._resolve(t)  # raises InvalidURIError early
        self.target_uri: list[str] = targets
        self.context_types = context_types
        self.session_id = session_id
        self.include_relationships = include_relationships
        # The search options the core names alike (read by kit.shared_options); the ones
        # checked here fail at construction instead of at the first query.
        self.score_threshold = check_threshold(score_threshold)
        self.include_directories = include_directories
        self.dense_weight = check_dense_weight(dense_weight)
        self.collapse_chunks = collapse_chunks
        self.rerank_threshold = check_threshold(rerank_threshold, "rerank_threshold")
        self.retrieve_count = retrieve_count
        self.chunk_diffusion_count, self.chunk_group = chunk_diffusion_count, chunk_group
        # The core checks these per call; checking once here fails at construction instead.
        # A source checks whether its rerank is on itself (its defaults may turn it on), so
        # only the ranges are checked here for one.
        kit.check_retrieve_count(self._top_k_setting, retrieve_count, "similarity_top_k")
        check_controls(
            self._similarity_top_k,
            retrieve_count,
            self._source is not None or self._reranker_name(self._effective_mode()) is not None,
            chunk_diffusion_count,
        )
        super().__init__(
            callback_manager=callback_manager,
            object_map=object_map,
            objects=objects,
            verbose=verbose,
        )

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_defaults(
        cls,
        client: RetrieverClient | None = None,
        *,
        path: str | os.PathLike[str] | None = None,
        user: str = "default",
        embed_model: BaseEmbedding | Embedder | None = None,
        llm: LlamaLLM | None = None,
        documents: Sequence[BaseNode] | None = None,
        client_kwargs: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> TreehopRetriever:
        """Build a retriever, opening a :class:`treehop.Treehop` when no client is given.

        ``embed_model`` may be a LlamaIndex ``BaseEmbedding`` (adapted) or a treehop embedder;
        without one, treehop's offline default (MiniLM) is used -- deliberately *not*
        ``Settings.embed_model``, whose default calls OpenAI. ``llm`` (a LlamaIndex ``LLM``)
        plans the queries of ``mode="search"``. ``documents`` are ingested with
        :func:`~llama_index.retrievers.treehop.add_documents`; without them ``path`` must hold
        a saved index (``NotFoundError``: a typo'd path read as an empty index forever).
        ``client_kwargs`` go to the new :class:`treehop.Treehop` (``reranker``, ``config``,
        ``tagger``, ...); other keyword arguments to the retriever's constructor.

        The retriever owns the client it opens: :meth:`close` (or ``with``, ``async with``)
        saves and closes it, and so does the retriever's collection when it is dropped
        unclosed (in a thread of its own: :func:`treehop.integration_kit.close_when_dropped`);
        a client you pass is left open. Why: the opened store stayed open (its files, its
        background threads, the client's loop thread) until the process exited.
        """
        opened: Treehop | None = None
        if client is None:
            if path is not None and not documents:  # (a reader of a typo'd path: [] forever)
                kit.check_index_exists(path, "TreehopRetriever.from_defaults")
            opts: dict[str, Any] = {"user": user, **(client_kwargs or {})}
            if embed_model is not None:
                opts["embedder"] = (
                    as_treehop_embedder(embed_model)
                    if isinstance(embed_model, BaseEmbedding)
                    else embed_model
                )
            if llm is not None:
                opts["llm"] = LlamaIndexLLM(llm)
            client = opened = Treehop(path, **opts)
        elif any(x is not None for x in (embed_model, llm, path, client_kwargs)):
            raise InvalidQueryError(
                "path, embed_model, llm and client_kwargs configure a new client; they cannot "
                "be combined with an existing client"
            )
        try:
            if documents:
                if is_knowledge_source(client):
                    raise InvalidQueryError(
                        f"a {type(client).__name__} is read-only: add documents to it with its "
                        "own service, not with documents="
                    )
                add_documents(client, documents)
            retriever = cls(client, **kwargs)
        except BaseException:
            if opened is not None:  # (a refused argument left the opened store open)
                opened.close()
            raise
        retriever._opened = opened
        if opened is not None:
            # (dropped without close(): closed when collected; helper leftovers68b)
            kit.close_when_dropped(retriever, opened.close)
        return retriever

    # ------------------------------------------------------------------ lifecycle
    def close(self) -> None:
        """Save and close the client :meth:`from_defaults` opened for this retriever (its
        store's files and threads released); a later query raises
        :class:`~treehop.errors.ClientClosedError`. A client you passed is yours to close:
        it is left open. Calling it again does nothing."""
        if self._opened is not None:
            self._opened.close()

    async def aclose(self) -> None:
        """:meth:`close` from async code, in a worker thread (the save must not stall the
        event loop)."""
        if self._opened is not None:
            await asyncio.to_thread(self._opened.close)

    @property
    def client(self) -> RetrieverClient:
        """The treehop client (or knowledge source) this retriever queries."""
        return self._client

    @property
    def _display(self) -> Callable[[str], str] | None:
        """How the client writes a URI for its user, as in the nodes' ids (``None`` for a
        knowledge source): the stage events name URIs the same way."""
        return None if self._tree is None else self._tree.display

    @property
    def _aclient(self) -> AsyncTreehop:
        """The native async client behind a treehop client (never used for a source)."""
        if self._tree is None:  # pragma: no cover - every caller checks for a source first
            raise InvalidQueryError("a knowledge source has no treehop client")
        return self._tree

    def _resolve(self, uri: str) -> str:
        """A target URI resolved; one a knowledge source cannot scope to is refused."""
        if self._tree is not None:
            return self._tree.resolve(uri)
        if self._source is not None:
            kit.check_source_targets(self._source, [uri])
        return urimod.normalize(uri, "default")

    @property
    def similarity_top_k(self) -> int:
        """As set: 0 reads back 0 (no limit), as ``VectorIndexRetriever``'s does."""
        return self._top_k_setting

    @similarity_top_k.setter
    def similarity_top_k(self, value: int) -> None:
        # 0 is "no limit" in LlamaIndex: ``VectorStoreIndex.as_retriever(similarity_top_k=0)``
        # over ``SimpleVectorStore`` (or over our vector store) returns every node. Here, as
        # many as one search returns (MAX_LIMIT); the search's own limit is that number. Above
        # MAX_LIMIT ("everything", which ``VectorIndexRetriever`` answers with all its store
        # holds) the same, where the scope holds at most MAX_LIMIT (checked per retrieval).
        if type(value) is not int:
            check_limit(value, "similarity_top_k")  # raises: not an integer
        if value < 0:
            raise InvalidQueryError(
                "similarity_top_k must be 0 (no limit) or a positive integer, "
                f"got {shown_value(value)}"
            )
        self._top_k_setting = value

    @property
    def _similarity_top_k(self) -> int:
        """The search's limit for :attr:`similarity_top_k`.

        ``0`` ("no limit") is as many as one search returns, but a reranker scores every
        candidate the descent reaches for such a search (1,321 pairs on a 1,500-passage index,
        against 221 for the default 10): when this retrieval reranks, "no limit" is the
        reranked best ``retrieve_count`` (default :data:`NO_LIMIT_RERANK_POOL`) instead, so
        the reranker's cost stays that of a bounded ask. ``retrieval_mode="quick"`` lists
        every node unreranked; an explicit ``similarity_top_k`` reranks what it asks for."""
        value = self._top_k_setting
        if value == 0:
            if self._reranker_name(self._effective_mode()) is None:
                return MAX_LIMIT
            return self.retrieve_count or NO_LIMIT_RERANK_POOL
        return min(value, MAX_LIMIT)

    async def _acheck_whole(self) -> None:
        """A ``similarity_top_k`` above one search's limit: refused unless the scope holds
        at most that many (:func:`treehop.integration_kit.whole_limit`). Also checks it
        beside ``retrieve_count`` (either may have been set since construction)."""
        kit.check_retrieve_count(self._top_k_setting, self.retrieve_count, "similarity_top_k")
        if self._top_k_setting > MAX_LIMIT:
            await kit.whole_limit(
                self._client,
                self._top_k_setting,
                "similarity_top_k",
                target_uri=self.target_uri or None,
                context_types=self.context_types,
                directories=self.include_directories,
            )

    @property
    def filters(self) -> MetadataFilters | None:
        return self._filters

    @filters.setter
    def filters(self, value: MetadataFilters | None) -> None:
        if value is not None and not isinstance(value, MetadataFilters):
            raise InvalidFilterError(
                f"filters must be a llama_index MetadataFilters, got {type(value).__name__}"
            )
        mapped = to_treehop_filters(value)
        validate(mapped)
        source = getattr(self, "_source", None)
        if source is not None and (mapped.tags is not None or mapped.tags_all):
            raise InvalidFilterError(kit.source_refusal(source, "a 'tags' filter"))
        if getattr(self, "_tree", None) is not None:
            # (as the search will read it: here, not at the first query, a filter whose
            # shown-key rewrite crosses the DSL's bounds is refused; helper leftovers61)
            show_fields(mapped.filter, SHOWN_FIELDS)
        self._filters = value
        self._mapped: TreehopFilterArgs = mapped

    @property
    def context_types(self) -> tuple[ContextType, ...] | None:
        return self._context_types

    @context_types.setter
    def context_types(self, value: Sequence[ContextType | str] | ContextType | str | None) -> None:
        self._context_types = _context_types(value)

    @property
    def session_id(self) -> str | None:
        return self._session_id

    @session_id.setter
    def session_id(self, value: str | None) -> None:
        if value is not None and self.mode != "search":
            raise InvalidQueryError(
                "session_id only applies to mode='search' (find() takes one query and no "
                "conversation)"
            )
        self._session_id = value

    # ------------------------------------------------------------------ prompts
    def _intent_analyzer(self) -> Any:
        return getattr(self._tree, "intent_analyzer", None)

    def _get_prompts(self) -> PromptDictType:
        """The intent-analysis prompt, when the client plans queries (``search``)."""
        analyzer = self._intent_analyzer()
        if analyzer is None:
            return {}
        return {INTENT_PROMPT_KEY: to_prompt(analyzer.prompt_template)}

    def _update_prompts(self, prompts: PromptDictType) -> None:
        if INTENT_PROMPT_KEY not in prompts:
            return
        analyzer = self._intent_analyzer()
        if analyzer is None:
            raise InvalidQueryError("this treehop client has no intent analyzer to update")
        analyzer.prompt_template = from_prompt(prompts[INTENT_PROMPT_KEY])

    # ------------------------------------------------------------------ query arguments
    def _effective_mode(self) -> RetrievalMode:
        if self.retrieval_mode is not None:
            return self.retrieval_mode
        return RetrievalMode.QUICK if self.mode == "find" else RetrievalMode.THINKING

    def _scope(self) -> tuple[list[str], tuple[ContextType, ...] | None]:
        """Target URIs and context types after intersecting them with the filter's."""
        ctypes = self.context_types
        from_filter = self._mapped.context_types
        if from_filter is not None:
            ctypes = from_filter if ctypes is None else tuple(c for c in ctypes if c in from_filter)
            if not ctypes:
                raise InvalidFilterError(
                    "the context_type filter excludes every context type of context_types="
                    f"{[c.value for c in self.context_types or ()]}"
                )
        targets = list(self.target_uri)
        if targets and ctypes is not None:
            kept = [t for t in targets if urimod.context_type_of(self._resolve(t)) in ctypes]
            if not kept:
                raise InvalidFilterError(
                    f"no target URI lies in the context types {[c.value for c in ctypes]}"
                )
            targets = kept
        return targets, ctypes

    def _shown_filter(self) -> Mapping[str, Any] | None:
        """The metadata filter for the core: on a treehop client a filter on ``file_name`` /
        ``file_path`` matches the value each node shows (``SHOWN_FIELDS``), not only a
        stored one; a knowledge source's goes to its service as given."""
        if self._tree is None:
            return self._mapped.filter
        return show_fields(self._mapped.filter, SHOWN_FIELDS)

    def _options(self) -> SearchKwargs:
        """The retriever's settings mapped onto treehop's search options (the scope aside)."""
        kw = kit.shared_options(self)
        kw.update(
            {
                "limit": self._similarity_top_k,
                "filter": self._shown_filter(),
                "tags": list(self._mapped.tags) if self._mapped.tags is not None else None,
                "tags_all": list(self._mapped.tags_all) if self._mapped.tags_all else None,
                "mode": self._effective_mode(),
            }
        )
        if self._everything() and self.score_threshold is None:
            # every node, as SimpleVectorStore's "no limit" and our vector stores' answer it:
            # the client's own floor (RetrievalConfig.score_threshold) left 2 of 18 out
            kw["score_threshold"] = kit.NO_FLOOR
        return kw

    def _everything(self) -> bool:
        """Whether this retrieval asks for every node of its scope: ``similarity_top_k``
        above one search's limit, or 0 ("no limit") when nothing reranks it (a search that
        reranks is the reranked best :data:`NO_LIMIT_RERANK_POOL`, a bounded ask)."""
        value = self._top_k_setting
        if value == 0:
            return self._source is None and self._reranker_name(self._effective_mode()) is None
        return value > MAX_LIMIT and self._source is None

    def _find_scope(
        self, targets: list[str], ctypes: tuple[ContextType, ...] | None
    ) -> tuple[list[str] | None, ContextType | None]:
        """``find()`` takes target URIs or one context type: (target_uri, context_type)."""
        if targets or ctypes is None:
            return targets or None, None
        if len(ctypes) == 1:
            return None, ctypes[0]
        if self._source is not None:
            # A knowledge source holds resources only: all it has, or honestly nothing.
            return None, ContextType.RESOURCE if ContextType.RESOURCE in ctypes else ctypes[0]
        # Several context types become their root directories (only the ones that exist: a
        # missing root would be an error, an empty one matches nothing).
        roots = [self._aclient.root(c) for c in ctypes]
        found = self._aclient.store.get(roots)
        existing = [self._aclient.display(r) for r, n in zip(roots, found, strict=True) if n]
        return (existing, None) if existing else (None, ctypes[0])

    def _find_args(self) -> tuple[SearchKwargs, ContextType | None]:
        """``find()``'s options and context type (a knowledge source answers nothing else)."""
        if self.mode == "search" and self._source is not None:
            raise InvalidQueryError(kit.source_refusal(self._source, "mode='search'", tree=False))
        kw = self._options()
        floor = kw.get("score_threshold")
        # a floor on the returned nodes' scores (:meth:`_min_score`); above the client's own
        # default it is not passed to the core, which prunes its search with it on the
        # scores before the tree context (a node that ends above it was lost)
        if (
            self._tree is not None
            and floor is not None
            and floor > self._tree.config.score_threshold
        ):
            kw.pop("score_threshold")
        targets, ctypes = self._scope()
        kw["target_uri"], ctype = self._find_scope(targets, ctypes)
        return kw, ctype

    def _embedding_strs(self, query_bundle: QueryBundle) -> list[str] | None:
        """The texts a query transform asked to embed in place of the query string
        (``QueryBundle.custom_embedding_strs``), checked; ``None`` when there are none (or
        they are the query string alone: the search embeds it anyway).

        Why (helper usage74): LlamaIndex's ``HyDEQueryTransform`` (and any transform that
        sets ``custom_embedding_strs``) hands the retriever a hypothetical answer to embed;
        ``VectorIndexRetriever`` embeds those texts and averages them (its embed model's
        ``get_agg_embedding_from_queries``), and this retriever searched with the query
        string alone, so ``TransformQueryEngine(engine, HyDEQueryTransform(...))`` over it
        answered exactly as without the transform, in silence. Here they are embedded with
        the client's own model and averaged the same way, the query string still scoring
        the lexical side (as a vector store query with both a string and an embedding).

        ``QueryBundle.embedding`` is not used: it is a cache any earlier retriever fills with
        *its* model (``VectorIndexRetriever`` writes it into the bundle it was given, and
        ``QueryFusionRetriever`` gives one bundle to each of its retrievers), so a vector of
        another index's model would be searched here as this index's. ``mode="search"``
        plans and embeds its own queries, and a knowledge source embeds on its service:
        both refuse such texts rather than drop them."""
        strs = query_bundle.custom_embedding_strs
        if strs is None:
            return None
        # (a list or tuple, read once: an int was a raw TypeError, a generator was read twice
        # and came back empty, a raw ValueError from numpy; helper attacks77)
        if not isinstance(strs, list | tuple):
            shown = shown_value(strs) if isinstance(strs, str | bytes) else type(strs).__name__
            raise InvalidQueryError(f"custom_embedding_strs must be a list of strings, got {shown}")
        texts = list(strs)
        if not texts or texts == [query_bundle.query_str]:
            return None
        if len(texts) > MAX_EMBEDDING_STRS:
            # (each text is one embedder call: 20,000 texts took 5.8 s with a local
            # bag-of-words model, a remote one a request each; helper attacks77)
            raise InvalidQueryError(
                f"custom_embedding_strs holds {len(texts)} texts; at most {MAX_EMBEDDING_STRS} "
                "(a query transform's hypothetical answers, each embedded once)"
            )
        if not all(isinstance(t, str) for t in texts):
            raise InvalidQueryError(
                f"custom_embedding_strs must be a list of strings, got {shown_value(texts)}"
            )
        if self._source is not None:
            raise InvalidQueryError(
                f"custom_embedding_strs (a query transform's texts to embed, such as HyDE's "
                f"hypothetical answer) cannot reach {type(self._source).__name__}: a knowledge "
                "source embeds the query string on its service"
            )
        if self.mode == "search":
            raise InvalidQueryError(
                "custom_embedding_strs (a query transform's texts to embed, such as HyDE's "
                "hypothetical answer) apply to mode='find': mode='search' plans and embeds "
                "its own queries"
            )
        return [check_query(t) for t in texts]

    def _min_score(self) -> float | None:
        """The floor a find on a treehop client applies to the returned nodes' scores."""
        if self._tree is not None and self.mode == "find":
            return self.score_threshold
        return None

    async def _query(self, query: str) -> FindResult:
        """One retrieval, awaited: ``find()`` (a source's too) or ``search()``."""
        if self.mode == "find" or self._source is not None:
            kw, ctype = self._find_args()
            return await kit.afind(self._client, query, context_type=ctype, **kw)
        kw = self._options()
        targets, ctypes = self._scope()
        kw["target_uri"] = targets or None
        return await self._aclient.search(
            query,
            session_id=self._session_id,
            context_types=list(ctypes) if ctypes is not None else None,
            **kw,
        )

    def _reranker_name(self, mode: RetrievalMode) -> str | None:
        """The model that reranks a retrieval in ``mode``, or ``None`` when nothing reranks.

        A knowledge source reranks on its service when ``thinking`` (or its own ``defaults``)
        turn its rerank on; its model is the one its ``defaults`` name, else the service's
        default.
        """
        if self._source is not None:
            defaults = getattr(self._source, "defaults", None)
            defaults = defaults if isinstance(defaults, Mapping) else {}
            if mode is not RetrievalMode.THINKING and not defaults.get("rerank_switch"):
                return None
            model = defaults.get("rerank_model")
            return str(model or f"{type(self._source).__name__} default rerank")
        if mode is not RetrievalMode.THINKING:
            return None
        reranker = self._aclient.reranker
        if reranker is None:
            return None
        return str(getattr(reranker, "name", type(reranker).__name__))

    # ------------------------------------------------------------------ instrumentation
    @contextmanager
    def _rerank_events(
        self, query_bundle: QueryBundle
    ) -> Iterator[Callable[[list[NodeWithScore], FindResult], None]]:
        """LlamaIndex's rerank start/end events around a retrieval that reranks.

        treehop reranks inside its search, once per heap round, interleaved with the descent;
        the candidates are not known before the search starts, so the start event carries no
        nodes and the end event carries the final, reranked nodes. A fallback to vector scores
        is reported between them.
        """
        model_name = self._reranker_name(self._effective_mode())
        if model_name is None:
            yield lambda nodes, result: None
            return
        dispatcher.event(
            ReRankStartEvent(
                query=query_bundle, nodes=[], top_n=self._similarity_top_k, model_name=model_name
            )
        )
        with self.callback_manager.event(
            CBEventType.RERANKING,
            payload={
                EventPayload.NODES: [],
                EventPayload.MODEL_NAME: model_name,
                EventPayload.QUERY_STR: query_bundle.query_str,
                EventPayload.TOP_K: self._similarity_top_k,
            },
        ) as cb_event:

            def finish(nodes: list[NodeWithScore], result: FindResult) -> None:
                for stage in stage_events(query_bundle.query_str, result, self._display):
                    if isinstance(stage, RerankFallbackStage):
                        dispatcher.event(
                            TreehopRerankFallbackEvent(
                                **stage.model_dump(),
                                reason=stage.first_reason,
                                model_name=model_name,
                            )
                        )
                        if self._verbose:
                            why = stage.first_reason
                            print_text(f"treehop: rerank fell back ({why})\n", color="red")
                cb_event.on_end(payload={EventPayload.NODES: nodes})
                dispatcher.event(ReRankEndEvent(nodes=nodes))

            yield finish

    def _check_fields(self) -> None:
        """A metadata filter on a field no stored node has (a typo, or provenance) is an
        error, not an empty result. Checked per query: the index may grow after the
        retriever is built."""
        if self._tree is not None:
            records.check_filter_fields(
                self._tree,
                self._mapped.filter,
                PROVENANCE,
                tags=self._tag_filters(),
                shown=SHOWN_FIELDS,
            )

    def _tag_filters(self) -> tuple[list[str] | None, list[str] | None]:
        """The ``tags`` filters of this retriever (any of, all of), checked like fields."""
        m = self._mapped
        return (
            list(m.tags) if m.tags is not None else None,
            list(m.tags_all) if m.tags_all else None,
        )

    def _stage_events(
        self, query_bundle: QueryBundle, result: FindResult, nodes: list[NodeWithScore]
    ) -> None:
        """The core's stage events as instrumentation events (built only when a handler
        listens), and the plan and tag hops printed when ``verbose``."""
        listening = _listening()
        if not (listening or self._verbose):
            return
        hop_ids = [
            n.node.node_id for n in nodes if n.node.metadata.get("found_by") == FoundBy.TAG_HOP
        ]
        for stage in stage_events(query_bundle.query_str, result, self._display):
            if self._verbose:
                _print_stage(stage)
            event_type = _EVENTS.get(type(stage))
            if listening and event_type is not None:
                data = stage.model_dump()
                if isinstance(stage, TagHopStage):
                    data["node_ids"] = hop_ids
                dispatcher.event(event_type.model_validate(data))

    # ------------------------------------------------------------------ results
    def _tree_links(self, hits: Sequence[MatchedContext]) -> list[TreeLinks | None]:
        """Children of directory hits and chunk counts of chunk hits, from the store."""
        if self._source is not None:
            return self._source_links(hits)
        if not self.include_relationships:
            return [None] * len(hits)
        ac = self._aclient
        store = ac.store
        chunk_parents = sorted(
            {ac.resolve(m.parent_uri) for m in hits if m.chunk_index is not None and m.parent_uri}
        )
        counts: dict[str, int | None] = {}
        if chunk_parents:
            for uri, node in zip(chunk_parents, store.get(chunk_parents), strict=True):
                n = node.metadata.get("chunks") if node is not None else None
                counts[uri] = n if isinstance(n, int) else None
        out: list[TreeLinks | None] = []
        for m in hits:
            children: list[tuple[str, bool]] = []
            if not m.is_leaf:
                kids = store.children(ac.resolve(m.uri))
                kids.sort(key=lambda k: (k.is_leaf, k.chunk_index or 0, k.uri))
                children = [(ac.display(k.uri), k.is_leaf) for k in kids]
            count = None
            if m.chunk_index is not None and m.parent_uri:
                count = counts.get(ac.resolve(m.parent_uri))
            out.append(TreeLinks(children=children, chunk_count=count))
        return out

    def _source_links(self, hits: Sequence[MatchedContext]) -> list[TreeLinks | None]:
        """What a knowledge source's own results say around each hit (there is no store).

        Its chunk ids give the order of chunks in a document, but not how many there are nor
        whether they count from 0, so PREVIOUS/NEXT link only to chunks of the same document
        that this result holds; without ``include_relationships`` none are linked. SOURCE is
        the document.
        """
        seen: dict[str, set[int]] = {}
        if self.include_relationships:
            for m in hits:
                if m.chunk_index is not None and m.parent_uri:
                    seen.setdefault(m.parent_uri, set()).add(m.chunk_index)
        return [
            TreeLinks(
                chunk_ids=frozenset(seen.get(m.parent_uri or "", ())),
                ref_doc=m.parent_uri if self.include_relationships else None,
            )
            for m in hits
        ]

    @staticmethod
    def _to_nodes(hits: list[MatchedContext], links: list[TreeLinks | None]) -> list[NodeWithScore]:
        return [to_node_with_score(m, link) for m, link in zip(hits, links, strict=True)]

    # ------------------------------------------------------------------ retrieval
    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        self._check_fields()
        if self._top_k_setting > MAX_LIMIT:
            kit.run_on(self._client, self._acheck_whole())
        texts = self._embedding_strs(query_bundle)
        with self._rerank_events(query_bundle) as finish:
            if texts is not None:
                # (the texts embedded in this thread, as a sync find embeds its query)
                assert self._tree is not None
                embedder = self._tree.embedder
                vector = _mean_row([embedder.embed_query(t) for t in texts])
                kw, ctype = self._find_args()
                q = query_bundle.query_str
                if isinstance(self._client, Treehop):
                    result = self._client.find(q, context_type=ctype, query_vector=vector, **kw)
                else:
                    found = self._tree.find(q, context_type=ctype, query_vector=vector, **kw)
                    result = kit.run_on(self._client, found)
            elif self.mode == "find" or self._source is not None:
                # a source's SDK, or a sync client's own find(), in this thread: no hop to a
                # loop thread, so threads run side by side (as :meth:`_query` does, awaited)
                kw, ctype = self._find_args()
                result = kit.find(self._client, query_bundle.query_str, context_type=ctype, **kw)
            else:
                result = kit.run_on(self._client, self._query(query_bundle.query_str))
            hits = kit.top_hits(self._client, result, self._similarity_top_k, self._min_score())
            nodes = self._to_nodes(hits, self._tree_links(hits))
            finish(nodes, result)
        self._stage_events(query_bundle, result, nodes)
        return nodes

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        if self._tree is not None:
            await kit.acheck_filter_fields(
                self._tree,
                self._mapped.filter,
                PROVENANCE,
                tags=self._tag_filters(),
                shown=SHOWN_FIELDS,
            )
        await self._acheck_whole()
        texts = self._embedding_strs(query_bundle)
        with self._rerank_events(query_bundle) as finish:
            if texts is not None:
                assert self._tree is not None
                embedder = self._tree.embedder
                vector = _mean_row([await embedder.aembed_query(t) for t in texts])
                kw, ctype = self._find_args()
                result = await self._tree.find(
                    query_bundle.query_str, context_type=ctype, query_vector=vector, **kw
                )
            else:
                result = await self._query(query_bundle.query_str)
            hits = kit.top_hits(self._client, result, self._similarity_top_k, self._min_score())
            nodes = self._to_nodes(hits, await self._atree_links(hits))
            finish(nodes, result)
        self._stage_events(query_bundle, result, nodes)
        return nodes

    async def _atree_links(self, hits: list[MatchedContext]) -> list[TreeLinks | None]:
        """:meth:`_tree_links` off the event loop when the store is remote."""
        if self._tree is not None and self._tree.store.capabilities.remote:
            return await asyncio.to_thread(self._tree_links, hits)
        return self._tree_links(hits)

    def as_query_engine(self, **kwargs: Any) -> TreehopQueryEngine:
        """A :class:`TreehopQueryEngine` over this retriever (``from_args`` keyword arguments)."""
        from .query_engine import TreehopQueryEngine

        return TreehopQueryEngine.from_args(self, **kwargs)

    def __repr__(self) -> str:
        return (
            f"TreehopRetriever(mode={self.mode!r}, similarity_top_k={self._top_k_setting}, "
            f"filters={self._mapped.source or None!r}, target_uri={self.target_uri or None!r}, "
            f"client={self._client!r})"
        )


def _mean_row(rows: Sequence[Any]) -> list[float]:
    """The mean of query embeddings, as LlamaIndex's ``mean_agg`` averages them (the search
    makes the row a unit vector)."""
    flat = [np.asarray(r, dtype=np.float32).ravel() for r in rows]
    if len({r.shape for r in flat}) > 1:
        # (an embedder answering vectors of two sizes was numpy's raw ValueError; attacks77)
        raise EmbeddingError(
            "the embedder returned query vectors of different sizes for custom_embedding_strs: "
            + ", ".join(sorted({str(r.shape[0]) for r in flat}))
        )
    stacked = np.stack(flat)
    return [float(x) for x in stacked.mean(axis=0)]


_TAKES = tuple(
    name
    for name in inspect.signature(TreehopRetriever.__init__).parameters
    if name not in {"self", "client", "unknown"}
)
"""The keywords :class:`TreehopRetriever` takes (named when it is given another)."""
