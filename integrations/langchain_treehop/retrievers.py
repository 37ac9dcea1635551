"""``TreehopRetriever``: treehop's ``find()`` and ``search()`` as a LangChain retriever.

Design choices, against what the existing OpenViking adapter gets wrong:

- The result count is ``k`` (LangChain's name), settable on the constructor *and* per call
  (``retriever.invoke(q, k=3)``), as are every filter and the scope.
- Nothing the caller sets is silently dropped: tag filters, the metadata filter, the threshold
  and the scope all reach the core, and an unknown per-call argument is an error, not a no-op.
- The tag filter is ``tag_filter`` / ``tag_filter_all``: ``tags`` is LangChain's own callback
  field (it labels runs in tracing) and keeps that meaning here.
- One call to the core per query: hits already carry their text and provenance, so no extra
  read per hit.
- ``_aget_relevant_documents`` awaits the native async client; it never hands the work to a
  thread pool running the sync path.
- The client may also be a read-only knowledge source (an existing VikingDB knowledge base,
  :class:`treehop.vikingdb_knowledge.VikingDBKnowledgeSource`): ``find`` mode only, and options
  that need a treehop tree (tags, ``search``) are refused at construction, not dropped.
"""

from __future__ import annotations

import contextvars
import functools
import os
import threading
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Annotated, Any, Literal, Self

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.callbacks.manager import adispatch_custom_event, dispatch_custom_event
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
)
from langchain_core.retrievers import BaseRetriever, LangSmithRetrieverParams
from langchain_core.runnables import RunnableConfig
from langchain_core.utils import secret_from_env
from langchain_core.vectorstores.utils import maximal_marginal_relevance
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from treehop import AsyncTreehop, ContextType, FindResult, MatchedContext
from treehop import integration_kit as kit
from treehop import stage_events as stages
from treehop import tags as tagmod
from treehop import uri as urimod
from treehop.arguments import check_target_uris
from treehop.embedders.base import Embedder
from treehop.errors import (
    InvalidFilterArgumentError,
    InvalidFilterError,
    InvalidQueryError,
    InvalidURIError,
    TreehopError,
    UnknownArgumentError,
)
from treehop.filters import show_fields
from treehop.ingest import records
from treehop.integration_kit import KnowledgeSource, RetrieverClient, is_knowledge_source
from treehop.memory import message_role
from treehop.postprocess import group_chunks
from treehop.redaction import first_few, listed, redact, redact_url
from treehop.search_options import SearchKwargs
from treehop.stage_events import stage_events
from treehop.validation import (
    MAX_LIMIT,
    check_dense_weight,
    check_query,
    check_threshold,
    integral,
)

from .chat_models import LangChainChatLLM
from .documents import CONTENT_FIELDS, SOURCE, ContentField, context_to_document
from .embeddings import as_treehop_embedder
from .filters import to_treehop_filter

LLM_API_KEY_ENV_VARS = ("TREEHOP_LLM_API_KEY", "OPENAI_API_KEY")
"""Where ``llm_api_key`` is read from when not given (the same order as the core's client)."""

EVENT_QUERY_PLAN = stages.IntentAnalysisStage.EVENT
EVENT_RERANK_FALLBACK = stages.RerankFallbackStage.EVENT
EVENT_TAG_HOPS = stages.TagHopStage.EVENT
EVENT_GLOBAL_SEARCH = stages.GlobalSearchStage.EVENT
"""Every retrieval: the starting points the global vector step picked, per typed query."""
EVENT_DESCENT = stages.DescentStage.EVENT
"""Every retrieval: the heap descent's rounds, stop reason and directories searched."""
# The clients retrievers opened from a path, with what they were opened with: a rebuild
# (every field given again, the client included) reuses its client (weak: it goes with them).
_OPENED_FROM: weakref.WeakKeyDictionary[Any, tuple[Any, ...]] = weakref.WeakKeyDictionary()
# A rebuild with other opening arguments (a configured embedding or llm) opens a client of its
# own: kept per configuration under the first client opened from the path (the root), so every
# run with that configuration reuses it instead of opening (and never closing) one per run: an
# embedded store's client holds background threads and file handles. A variant names its root
# weakly, and the root holds its variants: they live while it does (its retriever's lifetime).
_VARIANTS: weakref.WeakKeyDictionary[Any, list[tuple[tuple[Any, ...], AsyncTreehop]]] = (
    weakref.WeakKeyDictionary()
)
_ROOT_OF: weakref.WeakKeyDictionary[Any, weakref.ref[Any]] = weakref.WeakKeyDictionary()
# How many live retrievers hold a client opened from a path or one of its variants, per root
# (the first client opened from the path): the root and its variants are closed when the last
# of them is collected (:meth:`TreehopRetriever._hold_opened`). Counted, not closed with the
# retriever that opened them: a configured run's rebuild, and a copy, share the client.
_HOLDERS: dict[AsyncTreehop, int] = {}
_HOLDERS_LOCK = threading.RLock()  # (re-entrant: a collection may run a release inside a hold)
_IGNORED_CALL_KWARGS = frozenset({"verbose"})  # read by Runnable.invoke itself, then passed on
_DID_YOU_MEAN = {
    "limit": "k",
    "top_k": "k",
    "tags": "tag_filter (tags is LangChain's callback-tags field)",
    "tags_all": "tag_filter_all",
    "context_type": "context_types",
    "search_type": "mode",
}
# LangChain's VectorStoreRetriever search_type values. ``mode`` is not one of them (it picks
# find or search), so "use mode" alone sent an MMR user the wrong way.
SEARCH_TYPES = ("similarity", "similarity_score_threshold", "mmr")
"""The ``search_type`` values :class:`TreehopRetriever` takes, ``VectorStoreRetriever``'s
(``similarity_score_threshold`` needs a ``score_threshold``, as there)."""
MMR_FETCH_K = 20
"""``fetch_k`` of ``search_type="mmr"`` when not given (``max_marginal_relevance_search``'s)."""
MMR_LAMBDA_MULT = 0.5
"""``lambda_mult`` of ``search_type="mmr"`` when not given (LangChain's default)."""


def _shown(value: object) -> str:
    """``repr(value)`` redacted, cut to 40 characters (a message must not echo a 10 kB
    argument, nor a key given as one: helper attacks73)."""
    shown = redact(repr(value))
    return shown if len(shown) <= 40 else shown[:37] + "..."


def _search_type_hint(value: object) -> str:
    """Why ``search_type=value`` is refused and what to write instead: a per-call
    ``search_type`` (``VectorStoreRetriever`` takes it at construction only), or a value
    other than :data:`SEARCH_TYPES` (``"mmr"``, a typo)."""
    if value in SEARCH_TYPES:
        return (
            f"search_type ({_shown(value)}) is set when the retriever is built, as "
            f"VectorStoreRetriever's: TreehopRetriever(..., search_type={value!r})."
        )
    return (
        f"search_type of {_shown(value)} not allowed. Valid values are: "
        f"{', '.join(repr(t) for t in SEARCH_TYPES)}."
    )


class TreehopRetrievalOptions(BaseModel):
    """What one retrieval does. Every field may also be given per call as a keyword argument.

    Kept as its own model so that per-call overrides are validated by exactly the rules that
    validate the constructor.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    mode: Literal["find", "search"] = "find"
    """``find``: one query, no LLM, lowest latency. ``search``: the session and an LLM plan
    typed queries across resources, memories and skills, whose results are fused."""
    k: int = Field(default=4, ge=0, strict=True)
    """How many documents to return (LangChain's name for treehop's ``limit``): an ``int``
    (``"1"``, ``True`` or ``1.0`` are refused, as our vector stores refuse them, not read as 1:
    ``InMemoryVectorStore`` raises a ``TypeError`` on ``"1"``). ``0`` is
    answered ``[]`` after the call's checks, without a search, as LangChain's
    ``VectorStoreRetriever`` over ``InMemoryVectorStore`` answers it (a caller computing ``k``
    from a budget reaches it). Above one search's limit (1,000) it asks for everything, as
    ``VectorStoreRetriever(search_kwargs={"k": 5000})`` answers with all its store holds: every
    passage one search returns when the retriever's scope holds at most 1,000, else an
    ``InvalidQueryError`` at the call (:func:`treehop.integration_kit.whole_limit`)."""
    target_uri: str | list[str] | None = None
    """Restrict the search to these subtrees (``viking://resources/devops``, ...)."""
    context_types: list[Literal["resource", "memory", "skill"]] | None = None
    """Restrict to resources / memories / skills (``find`` takes at most one)."""
    tag_filter: list[str] | None = None
    """Keep only nodes carrying *any* of these tags (labels; a ``user:``/``auto:`` prefix is
    accepted and ignored). Not named ``tags``: that is LangChain's callback-tags field."""
    tag_filter_all: list[str] | None = None
    """Keep only nodes carrying *all* of these tags."""
    metadata_filter: dict[str, Any] | None = None
    """A metadata filter: MongoDB style as in other LangChain stores (``{"lang": "en"}``,
    ``{"year": {"$gte": 2020}}``, ``$in``/``$nin``/``$ne``/``$and``/``$or``) or treehop's DSL
    (``{"op": "must", "field": "lang", "conds": ["en"]}``). A field no stored node has (a
    typo, or provenance such as ``score``) raises
    :class:`~treehop.errors.InvalidFilterError` instead of silently returning nothing."""
    score_threshold: float | None = None
    """Drop hits scoring below this."""
    retrieval_mode: Literal["quick", "thinking"] | None = None
    """``quick`` (no rerank) or ``thinking`` (rerank when the client has a reranker); ``None``
    keeps the core's default: quick for find, thinking for search."""
    dense_weight: float | None = None
    """Hybrid weight in [0.2, 1] (1 = dense only), where the store supports hybrid search."""
    include_directories: bool = False
    """Also return directories and file overviews (a good summary of a whole subtree). Off by
    default: a RAG chain wants passages, and with a small ``k`` overviews would take the
    slots of the passages that hold the answer."""
    collapse_chunks: bool | None = None
    """One result per document (its best chunk, the others in ``metadata["collapsed"]``); the
    core's default (on) when ``None``; ``False`` returns every matching chunk on its own."""
    retrieve_count: int | None = Field(default=None, ge=1, le=MAX_LIMIT)
    """With rerank on: how many candidates are reranked (>= ``k``; the core's default 25)."""
    rerank_threshold: float | None = None
    """Drop reranked hits whose rerank score is below this."""
    chunk_diffusion_count: int = Field(default=0, ge=0, le=5, strict=True)
    """Add up to this many neighbouring chunks on each side of a chunk hit, so an answer split
    across chunk borders arrives whole. Neighbours come on top of the ``k`` hits."""
    chunk_group: bool = False
    """Regroup hits by document (best document first, its chunks in reading order)."""
    session_id: str | None = None
    """``search`` only: a treehop session whose summary and recent messages inform the plan."""
    chat_history: list[BaseMessage] | None = None
    """``search`` only: LangChain messages turned into a throw-away session for this call."""
    content_field: ContentField = "auto"
    """Which text becomes ``page_content``: ``auto`` (a leaf's content, a directory's
    overview), ``content``, ``overview`` or ``abstract`` (falling back to the next richer text
    when the chosen one is empty)."""
    fetch_k: int | None = Field(default=None, ge=1, strict=True)
    """``search_type="mmr"`` only: how many candidates the tree search returns for MMR to
    pick ``k`` from (``None``: :data:`MMR_FETCH_K`; at most one search's limit)."""
    lambda_mult: float | None = Field(default=None, ge=0.0, le=1.0)
    """``search_type="mmr"`` only: 1 is relevance alone, 0 diversity alone (``None``:
    :data:`MMR_LAMBDA_MULT`)."""

    @field_validator("k", "chunk_diffusion_count", "fetch_k", mode="before")
    @classmethod
    def _numpy_integer(cls, v: Any) -> Any:
        # A numpy integer is an integer to its caller (``k=np.int64(3)`` was a pydantic
        # ``int_type`` error under ``strict=True``; the core's checks take it too): made a
        # Python int here, before the strict check, which still refuses ``"3"`` and ``3.0``.
        n = integral(v)
        return v if n is None else n

    @field_validator("target_uri", mode="before")
    @classmethod
    def _check_target(cls, v: Any) -> Any:
        for u in check_target_uris(v):
            if not u.startswith(urimod.SCHEME):
                raise InvalidURIError(f"target_uri {u!r} is not a viking:// URI")
        return v

    @field_validator("context_types", mode="before")
    @classmethod
    def _one_context_type(cls, v: Any) -> Any:
        items = [v] if isinstance(v, str) else v
        if items is None:
            return None
        if not isinstance(items, Sequence):
            raise InvalidQueryError(f"context_types must be a list, got {v!r}")
        # Enum members become their values, so that ContextType.MEMORY and "memory" both work.
        return [c.value if isinstance(c, ContextType) else c for c in items]

    @field_validator("tag_filter", "tag_filter_all", mode="before")
    @classmethod
    def _normalise_tags(cls, v: Any) -> Any:
        if v is None:
            return None
        if not isinstance(v, (str, Sequence)):
            raise InvalidQueryError(f"tag filters must be a list of tags or 'a;b', got {v!r}")
        labels = list(tagmod.normalize_filter_labels(v))
        return labels or None

    @field_validator(
        "metadata_filter", "score_threshold", "dense_weight", "rerank_threshold", mode="before"
    )
    @classmethod
    def _core_check(cls, v: Any, info: ValidationInfo) -> Any:
        # The core's own check of each option (one validation site); a metadata filter may be
        # treehop's DSL or the MongoDB style of Chroma / PGVector / Qdrant filters.
        return _CORE_CHECKS[str(info.field_name)](v)

    @field_validator("content_field", mode="before")
    @classmethod
    def _check_content_field(cls, v: Any) -> Any:
        if v not in CONTENT_FIELDS:
            raise InvalidQueryError(
                f"content_field must be one of {', '.join(CONTENT_FIELDS)}, got {v!r}"
            )
        return v

    @model_validator(mode="after")
    def _check_combination(self) -> TreehopRetrievalOptions:
        if self.mode == "find":
            if self.session_id is not None or self.chat_history is not None:
                raise InvalidQueryError(
                    "session_id and chat_history only apply to mode='search' (find() takes one "
                    "query and no conversation)"
                )
            if self.context_types is not None and len(self.context_types) > 1:
                raise InvalidQueryError(
                    "mode='find' searches one context type (or all); use mode='search' or "
                    "target_uri for several"
                )
        if self.session_id is not None and self.chat_history is not None:
            raise InvalidQueryError("give session_id or chat_history, not both")
        # (at construction and per call: k=5000 beside retrieve_count=50 was the core's
        # "retrieve_count must be >= limit (1000)" at the first call)
        kit.check_retrieve_count(self.k, self.retrieve_count, "k")
        return self


_CORE_CHECKS: dict[str, Callable[[Any], Any]] = {
    "metadata_filter": to_treehop_filter,
    "score_threshold": check_threshold,
    "dense_weight": check_dense_weight,
    # (True and "0.3" were read as 1.0 and 0.3 by pydantic's lax mode; helper leftovers63b)
    "rerank_threshold": lambda v: check_threshold(v, "rerank_threshold"),
}
_OPTION_FIELDS = tuple(TreehopRetrievalOptions.model_fields)
# search_kwargs keys of LangChain's VectorStoreRetriever, as this retriever's option names.
_SEARCH_KWARG_NAMES = {
    "filter": "metadata_filter",
    "tags": "tag_filter",
    "tags_all": "tag_filter_all",
}


_FIELD_SYNONYMS = {
    "top_k": "k",
    "similarity_top_k": "k",
    "limit": "k",
    "n_results": "k",
    "vectorstore": "client",
    "vector_store": "client",
    "index": "client",
    "filter": "metadata_filter",
    "filters": "metadata_filter",
}
"""Other APIs' names for :class:`TreehopRetriever`'s fields (LlamaIndex's
``similarity_top_k``, ``VectorStoreRetriever``'s ``vectorstore``, the per-call ``filter``)."""


def _safe_input(loc: Sequence[int | str], value: Any) -> tuple[Any, bool]:
    """An error's input with what may be a secret left out, and whether anything was: the
    whole value under a secret-looking name (``llm_api_key=123``, an unknown ``api_key``),
    and in a dict (a model-level check's input: the constructor's whole dict) the values
    under such names, and the credentials of a ``*url*`` value
    (:func:`~treehop.redaction.redact_url`)."""
    if any(kit.looks_secret(part) for part in loc):
        return "***", True
    if not isinstance(value, Mapping):
        return value, False
    out: dict[Any, Any] = {}
    changed = False
    for key, item in value.items():
        if kit.looks_secret(key):
            out[key], changed = "***", True
        elif isinstance(key, str) and "url" in key.lower() and isinstance(item, str):
            out[key] = redact_url(item)
            changed = changed or out[key] != item
        else:
            out[key] = item
    return (out, True) if changed else (value, False)


def _is_extra(e: Any) -> bool:
    """Whether a pydantic error is an unknown keyword's (``extra_forbidden`` at a name)."""
    loc = e["loc"]
    return bool(e["type"] == "extra_forbidden" and len(loc) == 1 and isinstance(loc[0], str))


def _with_field_hints(exc: ValidationError, fields: Iterable[str]) -> ValidationError:
    """``exc`` with each "Extra inputs are not permitted" saying which field was meant
    (``top_k``: ``did you mean 'k'?``; :func:`treehop.integration_kit.did_you_mean`), and
    no secret in any error's input (:func:`_safe_input`).

    Still a ``ValidationError`` (every constructor error of a LangChain component is one)
    with the same errors: their types (``extra_forbidden``), places and inputs, only the
    message longer; the other errors of the call are rebuilt as they were. Why: pydantic
    named the field and not the one meant. The value given under a name that says it is a
    secret (``api_key=`` where ``llm_api_key`` is meant) is left out: pydantic echoed it as
    ``input_value='sk-...'``. So is every input where one holds a secret
    (:func:`~treehop.integration_kit.shows_secret`), and a name an error cannot show as
    given (a control character, a registered key, past 100 characters) is the place as
    :func:`~treehop.integration_kit.shown_name` shows it (helper attacks71).

    Why the inputs themselves, not only ``hide_input`` (helper leftovers62b): ``hide_input``
    hides them from the message only, and ``errors()`` / ``json()`` still held the whole
    constructor dict, an ``llm_api_key`` string included; and ``model_validate({...})``
    (which runs ``__init__``) re-raises the errors of this one without it, so its message
    showed ``input_value={'llm_api_key': 'sk-live-...``, the key's first characters."""
    errors = exc.errors(include_url=False)
    safe = [_safe_input(e["loc"], e["input"]) for e in errors]
    # (a registered key or a URL's password given under any name: pydantic echoed it as the
    # value; helper attacks71)
    safe = [("***", True) if kit.shows_secret(v) else (v, c) for v, c in safe]
    hide = any(changed for _, changed in safe)
    if not hide and not any(e["type"] == "extra_forbidden" for e in errors):
        return exc
    known = list(fields)
    rebuilt: list[InitErrorDetails] = []
    # (the first few unknown names only, then one error saying how many more: helper
    # leftovers63, 20,000 unknown keywords made a message of 1.7 MB)
    extra = {e["loc"][0]: i for i, e in enumerate(errors) if _is_extra(e)}
    kept, more = first_few(extra)
    if more:
        drop = set(extra.values()) - {extra[name] for name in kept}
        errors = [e for i, e in enumerate(errors) if i not in drop]
        safe = [s for i, s in enumerate(safe) if i not in drop]
    for e, (value, _) in zip(errors, safe, strict=True):
        loc = e["loc"]
        if _is_extra(e):
            meant = kit.did_you_mean(str(loc[0]), known, _FIELD_SYNONYMS)
            hint = f"; did you mean {meant!r}?" if meant else ""
            # the name as an error shows it (escaped, redacted, cut: kit.shown_name); an
            # ordinary name as it is
            shown = kit.shown_name(loc[0])
            rebuilt.append(
                {
                    "type": PydanticCustomError(
                        "extra_forbidden", "Extra inputs are not permitted{hint}", {"hint": hint}
                    ),
                    "loc": loc if shown[1:-1] == loc[0] else (shown,),
                    "input": value,
                }
            )
            continue
        detail: InitErrorDetails = {"type": e["type"], "loc": loc, "input": value}
        if "ctx" in e:
            detail["ctx"] = e["ctx"]
        rebuilt.append(detail)
    if more:
        rebuilt.append(
            {
                "type": PydanticCustomError(
                    "extra_forbidden",
                    "and {more} more unknown arguments (extra inputs are not permitted)",
                    {"more": more},
                ),
                "loc": ("...",),
                "input": None,
            }
        )
    try:
        return ValidationError.from_exception_data(exc.title, rebuilt, hide_input=hide)
    except (TypeError, ValueError, KeyError):  # pragma: no cover - an error pydantic cannot rebuild
        return exc


def _call_argument_error(exc: ValidationError) -> InvalidQueryError:
    """The error for a call's keyword arguments that pydantic refused (``exc``).

    A call's filter refused is an :class:`InvalidFilterArgumentError`: an
    ``InvalidFilterError``, as the vector store's ``similarity_search(filter=...)`` and the
    retriever at run time raise for a filter, and still an ``InvalidQueryError``, as it was
    (prefixed with pydantic's "Value error,"): helper usage79, ``except InvalidFilterError``
    around ``invoke(q, filter=...)`` missed it. Made anew: pydantic holds the original."""
    errors = exc.errors()
    cause = errors[0].get("ctx", {}).get("error") if len(errors) == 1 else None
    if isinstance(cause, InvalidFilterError):
        return InvalidFilterArgumentError(str(cause))
    details = "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in errors
    )
    return InvalidQueryError(f"invalid retriever argument(s): {details}")


def _unknown_call_arguments(
    unknown: Sequence[str], given: Mapping[str, Any]
) -> UnknownArgumentError:
    """The error for a call's keywords that are no option (``invoke(q, top_k=3)``): each
    with the option meant (the table's sentence, else ``did you mean 'k'?`` as the
    constructor says it: another API's name or the closest spelling), then the options.

    Why an :class:`~treehop.errors.UnknownArgumentError` (helper leftovers62b): the
    constructor's keyword errors name the field meant, a call's named it only for the six
    names of its table (``similarity_top_k``, a typo like ``metadata_filtr``: none), as an
    ``InvalidQueryError``; now as the constructor and the LlamaIndex retriever's, still an
    ``InvalidQueryError`` (and a ``TypeError``, as Python's own). LangChain's ``invoke``
    catches neither (its callbacks see the error, then it is raised)."""
    hints = []
    head, _ = first_few(unknown)  # (hints for the names shown: helper leftovers63)
    for u in head:
        if u == "search_type":
            hints.append(f" {_search_type_hint(given[u])}")
        elif u in _DID_YOU_MEAN:
            hints.append(f" Use {_DID_YOU_MEAN[u]} instead of {u}.")
        elif (meant := kit.did_you_mean(u, _OPTION_FIELDS, _FIELD_SYNONYMS)) in _OPTION_FIELDS:
            hints.append(f" {kit.shown_name(u)}: did you mean {meant!r}?")
    # (each name as an error shows it: escaped, redacted, cut; kit.shown_name)
    shown = listed(unknown, kit.shown_name)
    return UnknownArgumentError(
        f"unknown retriever argument(s) [{shown}].{''.join(hints)} Per-call arguments "
        f"are: {', '.join(_OPTION_FIELDS)}"
    )


_BATCHED: contextvars.ContextVar[tuple[object, Mapping[str, FindResult]] | None] = (
    contextvars.ContextVar("treehop_retriever_batched", default=None)
)
"""The retriever whose ``batch`` / ``abatch`` call runs in this context and its answers by
query (one ``find_many``): each ``invoke`` of that batch reads its query's answer here."""


_CLIENT_SPELLING = {
    "embedding": "Treehop(path, embedder=LangChainEmbedder(embedding))",
    "llm": "Treehop(path, llm=LangChainChatLLM(llm))",
    "llm_model": "Treehop(path, llm=OpenAICompatibleLLM(llm_model, base_url=...))",
    "llm_base_url": "Treehop(path, llm=OpenAICompatibleLLM(llm_model, base_url=llm_base_url))",
    "user": "Treehop(path, user=user)",
}
"""How a client is opened with what a retriever given that client was also given."""


class TreehopRetriever(BaseRetriever, TreehopRetrievalOptions, kit.ClosesOnExit):
    """Treehop retriever: hierarchical search over a tree of knowledge, with tag hops.

    Setup:
        .. code-block:: bash

            pip install -e ".[langchain,local]"   # from a clone of the treehop repository

    Key init args (retrieval; each can also be passed per call to ``invoke``):
        mode: ``"find"`` (one query, no LLM) or ``"search"`` (LLM-planned typed queries).
        k: number of documents to return.
        target_uri: subtree(s) to search, e.g. ``"viking://resources/devops"``.
        tag_filter / tag_filter_all: keep nodes carrying any / all of these tags.
        metadata_filter: treehop's metadata filter DSL.
        score_threshold: drop documents scoring below it.
        session_id / chat_history: conversation context for ``mode="search"``.
        content_field: which text becomes ``page_content``.

    Key init args (client):
        client: an open ``Treehop`` or ``AsyncTreehop``; or ``path`` (with ``embedding``,
        ``llm`` / ``llm_model``, ``llm_api_key``) to open an index; or a read-only knowledge
        source such as ``VikingDBKnowledgeSource`` (``find`` mode; ``k`` becomes its ``limit``,
        ``metadata_filter`` its ``doc_filter``, ``retrieval_mode="thinking"`` turns its rerank
        on; tag filters are refused).

    Instantiate:
        .. code-block:: python

            from treehop import Treehop
            from langchain_treehop import TreehopRetriever

            retriever = TreehopRetriever(client=Treehop("./index"), k=5)

    Usage:
        .. code-block:: python

            docs = retriever.invoke("how do I roll back a deployment?")
            docs = retriever.invoke("rollback", k=2, tag_filter=["kubernetes"])
            docs = await retriever.ainvoke("rollback")

    Use within a chain:
        .. code-block:: python

            chain = {"context": retriever | format_docs, "question": RunnablePassthrough()}
            chain = chain | prompt | llm | StrOutputParser()

    Each ``Document`` has ``id`` = the node's URI and its provenance in the metadata (see
    :data:`langchain_treehop.documents.PROVENANCE_KEYS`). During a call the retriever emits the
    custom callback events ``treehop_query_plan``, ``treehop_rerank_fallback`` and
    ``treehop_tag_hops``, visible to callback handlers and in ``astream_events``.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    search_type: Literal["similarity", "similarity_score_threshold", "mmr"] = "similarity"
    """LangChain's ``VectorStoreRetriever`` field and values: ``"similarity"`` (the default);
    ``"similarity_score_threshold"``, which needs a ``score_threshold`` (in ``search_kwargs``
    or given directly) and returns only documents scoring at least that; ``"mmr"``: the tree
    search's best ``fetch_k`` (as its hits come: one per document unless
    ``collapse_chunks=False``, the floor and filters applied), then ``k`` of them picked by
    LangChain's ``maximal_marginal_relevance`` on their stored vectors with ``lambda_mult``
    (``mode="find"`` on a treehop client: ``search`` fuses several queries, and a knowledge
    source keeps no vectors here). Set when the retriever is built, as there."""

    search_kwargs: dict[str, Any] | None = None
    """LangChain's ``VectorStoreRetriever`` spelling of the options, so code written for any
    vector-store retriever works: ``k``, ``filter``, ``score_threshold``, ``target_uri``,
    ``tags`` / ``tags_all`` (tag filters here) and every option name of this class. Merged
    into the options at construction (the field is then ``None``: the options hold the
    values); an unknown key is an error, never dropped. ``configurable_fields(search_kwargs=
    ConfigurableField(...))`` works as for ``VectorStoreRetriever``: the configured dict is
    applied over the retriever's options for that run."""

    client: RetrieverClient | None = Field(default=None, exclude=True)
    """An open treehop client or a knowledge source (an object with ``find`` and ``afind``,
    e.g. ``VikingDBKnowledgeSource``). Leave unset and give ``path`` to open an index."""
    path: str | None = None
    """An index directory to open when no ``client`` is given."""
    user: str = "default"
    """Whose ``~`` space the opened index resolves (only with ``path``)."""
    embedding: Embeddings | Embedder | None = Field(default=None, exclude=True)
    """Only with ``path``: a LangChain ``Embeddings`` or a treehop embedder. It must be the
    one the index was built with. ``None`` uses treehop's offline default (MiniLM)."""
    llm: Annotated[
        BaseChatModel | None,
        WithJsonSchema({"description": "a LangChain chat model (not serialised)"}),
    ] = Field(default=None, exclude=True)
    """Only with ``path``: a LangChain chat model used to plan ``search`` queries. (Its JSON
    schema is a description: a chat model's own fields hold callables, which have none, and
    ``TreehopRetriever.model_json_schema()`` raised ``PydanticInvalidForJsonSchema``.)"""
    llm_model: str | None = None
    """Only with ``path``: an OpenAI-compatible model name for planning, used when ``llm`` is
    not given (OpenAI, Volcengine Ark, Ollama, vLLM)."""
    llm_base_url: str | None = None
    """The OpenAI-compatible endpoint for ``llm_model`` (default: OpenAI's)."""
    llm_api_key: SecretStr | None = Field(
        default_factory=secret_from_env(list(LLM_API_KEY_ENV_VARS), default=None)
    )
    """The key for ``llm_model``; read from ``TREEHOP_LLM_API_KEY`` or ``OPENAI_API_KEY`` when
    not given. Never shown in ``repr``."""

    def __init__(self, client: RetrieverClient | None = None, /, **data: Any) -> None:
        """Keyword fields as in any LangChain retriever; the client may also come first,
        ``TreehopRetriever(Treehop("./index"), k=5)``, as LlamaIndex's ``TreehopRetriever``
        and this package's ``TreehopVectorStore`` take it. Why: that call was pydantic's
        bare ``TypeError: BaseModel.__init__() takes 1 positional argument``."""
        if client is not None:
            if "client" in data:
                raise InvalidQueryError("client is given twice (first and as client=)")
            data["client"] = client
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise _with_field_hints(exc, type(self).model_fields) from None

    # ``model_validate`` / ``_json`` / ``_strings`` run ``__init__`` (pydantic calls a
    # model's own ``__init__``), whose error pydantic re-raises as a new ``ValidationError``:
    # the hints stay, the hiding of inputs (``hide_input``) did not. Each gives the
    # constructor's error again (helper leftovers62b).
    @classmethod
    def model_validate(cls, obj: Any, *args: Any, **kwargs: Any) -> Self:
        """pydantic's ``model_validate``, its errors as the constructor's."""
        try:
            return super().model_validate(obj, *args, **kwargs)
        except ValidationError as exc:
            raise _with_field_hints(exc, cls.model_fields) from None

    @classmethod
    def model_validate_json(cls, json_data: Any, *args: Any, **kwargs: Any) -> Self:
        """pydantic's ``model_validate_json``, its errors as the constructor's."""
        try:
            return super().model_validate_json(json_data, *args, **kwargs)
        except ValidationError as exc:
            raise _with_field_hints(exc, cls.model_fields) from None

    @classmethod
    def model_validate_strings(cls, obj: Any, *args: Any, **kwargs: Any) -> Self:
        """pydantic's ``model_validate_strings``, its errors as the constructor's."""
        try:
            return super().model_validate_strings(obj, *args, **kwargs)
        except ValidationError as exc:
            raise _with_field_hints(exc, cls.model_fields) from None

    @model_validator(mode="before")
    @classmethod
    def _merge_search_kwargs(cls, data: Any) -> Any:
        if isinstance(data, dict) and "search_type" in data:
            # VectorStoreRetriever's values, checked as it checks them (a ValidationError,
            # like every constructor error here): "similarity" is what this retriever does,
            # "similarity_score_threshold" the same with a floor (which it requires); "mmr"
            # and anything else name the supported values and the way to MMR.
            _check_search_type(data)
        if not isinstance(data, dict) or not data.get("search_kwargs"):
            return data
        extra = data["search_kwargs"]
        if not isinstance(extra, Mapping):
            raise InvalidQueryError(f"search_kwargs must be a dict, got {type(extra).__name__}")
        # LangChain's configurable_fields(search_kwargs=ConfigurableField(...)) rebuilds the
        # retriever from every field of the built one plus the configured search_kwargs: there
        # the configured dict is the newer choice and wins. A user's own call never names every
        # field, so a conflict there stays an error.
        rebuild = set(cls.model_fields) <= data.keys()
        merged = dict(data)
        for key, value in extra.items():
            name = _SEARCH_KWARG_NAMES.get(key, key)
            if name not in _OPTION_FIELDS:
                raise InvalidQueryError(
                    f"unknown search_kwargs key {key!r}; use k, filter, score_threshold, "
                    f"target_uri, tags, tags_all or an option name ({', '.join(_OPTION_FIELDS)})"
                )
            if not rebuild and name in data and data[name] != value:
                raise InvalidQueryError(f"{name} is given twice (directly and in search_kwargs)")
            merged[name] = value
        # Consumed: the options now hold these values. A built retriever keeps no stale copy
        # that a later rebuild (a configurable k, say) would apply over the configured value.
        merged["search_kwargs"] = None
        return merged

    @model_validator(mode="after")
    def _check_mmr(self) -> TreehopRetriever:
        _check_mmr_options(self.search_type, self, self.client)
        return self

    @model_validator(mode="after")
    def _open_client(self) -> TreehopRetriever:
        from_path_only = {
            "embedding": self.embedding,
            "llm": self.llm,
            "llm_model": self.llm_model,
            "llm_base_url": self.llm_base_url,
        }
        if self.client is not None:
            opened = _OPENED_FROM.get(self.client) if self.path is not None else None
            if opened is not None and opened[0] == self.path:
                # A rebuild (configurable_fields, model_copy) of a retriever that opened this
                # client from ``path``: LangChain passes every field again, the opened client
                # included; that was "give client or path, not both" on every configured run.
                # Same opening arguments: the same client; a configured embedding, llm, ...:
                # a client opened with them (below).
                args = self._opening_args()
                if opened == args:
                    return self
                root_ref = _ROOT_OF.get(self.client)
                root = (root_ref() if root_ref is not None else None) or self.client
                variants = _VARIANTS.setdefault(root, [])
                for variant_args, variant in variants:
                    if variant_args == args:
                        self.client = variant
                        return self
                self.client = self._open(args)  # (the path was checked when the root opened)
                variants.append((args, self.client))
                _ROOT_OF[self.client] = weakref.ref(root)
                return self
        if self.client is not None:
            kit.check_retriever_client(self.client)
            if self.path is not None:
                raise InvalidQueryError("give client or path, not both")
            given = [name for name, value in from_path_only.items() if value is not None]
            if self.user != "default":
                given.append("user")
            if given:
                # (each with how the client takes it: "configure the client you pass instead"
                # left a user of TreehopRetriever(client=th, mode="search", llm=chat_model)
                # to find LangChainChatLLM alone; helper usage70)
                raise InvalidQueryError(
                    f"{', '.join(given)} {'applies' if len(given) == 1 else 'apply'} only when "
                    "the retriever opens the index itself (TreehopRetriever.from_path(path, "
                    "...)); over a client you pass, give it to the client: "
                    + "; ".join(_CLIENT_SPELLING[name] for name in given)
                )
            if is_knowledge_source(self.client):
                _check_source_options(self.client, self)
            return self
        if self.path is None:
            raise InvalidQueryError("TreehopRetriever needs client=... or path=...")
        kit.check_index_exists(self.path, "TreehopRetriever")
        self.client = self._open(self._opening_args())
        return self

    @model_validator(mode="after")
    def _hold_opened_client(self) -> TreehopRetriever:
        self._hold_opened()
        return self

    def __copy__(self) -> Self:
        """pydantic's copy (``model_copy()``), which shares the client: a copy holds a
        client opened from ``path`` as the retriever does (:meth:`_hold_opened`)."""
        copied = super().__copy__()
        copied._hold_opened()
        return copied

    def _hold_opened(self) -> None:
        """Count this retriever as a holder of the client it opened from ``path`` (or shares
        with the retriever that did: a configured run's rebuild, a copy); when the last
        holder of a root client or of its variants is collected, they are closed, in a
        thread of their own (:func:`treehop.integration_kit.close_when_dropped`). Why
        (helper leftovers68b; usage78's open item): a retriever dropped without
        :meth:`close` left its store open (files, threads) until exit, or until a cyclic
        collection freed it unsaved, its model pools unclosed. A client the caller passed
        is never counted (``path`` is then unset)."""
        root = self._opened_root()
        if root is None:
            return
        with _HOLDERS_LOCK:
            _HOLDERS[root] = _HOLDERS.get(root, 0) + 1
        finalizer = weakref.finalize(self, _release_opened, root)
        finalizer.atexit = False  # (at exit the process releases the store itself)

    def _opened_root(self) -> AsyncTreehop | None:
        """The root client (:data:`_VARIANTS`) of the client this retriever opened from
        ``path``, or ``None`` for a client the caller passed."""
        client = self.client
        if self.path is None or not isinstance(client, AsyncTreehop):
            return None
        if client not in _OPENED_FROM:  # pragma: no cover - path set, client not opened
            return None
        root_ref = _ROOT_OF.get(client)
        return (root_ref() if root_ref is not None else None) or client

    @model_validator(mode="after")
    def _check_shown_filter(self) -> TreehopRetriever:
        """The filter as the search will read it (a filter on ``source`` on the value each
        Document shows: :func:`~treehop.filters.show_fields`), checked at construction. Why
        (helper leftovers61): a filter within the DSL's bounds whose rewrite crossed them
        was accepted here and refused at the first ``invoke``."""
        if self.client is not None and not is_knowledge_source(self.client):
            show_fields(self.metadata_filter, (SOURCE,))
        return self

    def _open(self, args: tuple[Any, ...]) -> AsyncTreehop:
        """A client on ``path`` built from this retriever's opening arguments ``args``."""
        client = AsyncTreehop(
            self.path, user=self.user, embedder=self._build_embedder(), llm=self._build_llm()
        )
        _OPENED_FROM[client] = args
        return client

    def _opening_args(self) -> tuple[Any, ...]:
        """What a client opened from ``path`` was opened with (``path`` first)."""
        return (
            self.path,
            self.user,
            self.embedding,
            self.llm,
            self.llm_model,
            self.llm_base_url,
            self.llm_api_key,
        )

    def _build_embedder(self) -> Embedder | None:
        if self.embedding is None:
            return None
        if isinstance(self.embedding, Embeddings):
            return as_treehop_embedder(self.embedding)  # TreehopEmbeddings: its own embedder
        return self.embedding

    def _build_llm(self) -> Any:
        if self.llm is not None:
            if self.llm_model is not None:
                raise InvalidQueryError("give llm or llm_model, not both")
            return LangChainChatLLM(self.llm)
        if self.llm_model is None:
            return None
        from treehop.llm.openai_compatible import DEFAULT_BASE_URL, OpenAICompatibleLLM

        return OpenAICompatibleLLM(
            self.llm_model,
            base_url=self.llm_base_url or DEFAULT_BASE_URL,
            # An explicit SecretStr("") means "send no key", even if the env has one.
            api_key=self.llm_api_key if self.llm_api_key is not None else SecretStr(""),
        )

    @classmethod
    def from_path(cls, path: str | os.PathLike[str], **kwargs: Any) -> TreehopRetriever:
        """Open the index at ``path`` (see the ``path``-only fields) and retrieve from it.

        The path must hold a saved index (``NotFoundError`` otherwise, as ``FAISS.load_local``
        refuses a missing one): a retriever only reads, and a typo'd path answered ``[]`` to
        every query. Start an empty index with ``TreehopRetriever(client=Treehop(path))``.

        The retriever owns the client it opens: :meth:`close` (or ``with``, ``async with``)
        saves and closes its store; a LangChain retriever has no lifecycle of its own, and the
        store stayed open (its files, its background threads) until the process exited."""
        return cls(path=os.fspath(path), **kwargs)

    # ------------------------------------------------------------------ lifecycle
    def _opened_clients(self) -> list[AsyncTreehop]:
        """The clients this retriever opened from ``path``: its own and, for the retriever
        that opened first, those its configured runs opened (``_VARIANTS``). Never a client
        the caller passed (``path`` is then unset: both together are refused)."""
        client = self.client
        if self.path is None or not isinstance(client, AsyncTreehop):
            return []
        return [client, *(variant for _, variant in _VARIANTS.get(client, ()))]

    def close(self) -> None:
        """Save and close the client this retriever opened from ``path`` (its store's files
        and threads released); a later query raises
        :class:`~treehop.errors.ClientClosedError`. A client you passed is yours to close:
        it is left open. Calling it again does nothing."""
        for client in self._opened_clients():
            kit.run_sync(client.close())

    async def aclose(self) -> None:
        """:meth:`close`, awaited (the store's save runs in a worker thread)."""
        for client in self._opened_clients():
            await client.close()

    # ------------------------------------------------------------------ internals
    @property
    def treehop_client(self) -> RetrieverClient:
        """The client this retriever queries (opened from ``path`` if none was given)."""
        if self.client is None:  # pragma: no cover - the validator guarantees it
            raise InvalidQueryError("TreehopRetriever has no client")
        return self.client

    def _options(self, kwargs: Mapping[str, Any]) -> TreehopRetrievalOptions:
        """The constructor's options overridden by this call's keyword arguments."""
        overrides = {k: v for k, v in kwargs.items() if k not in _IGNORED_CALL_KWARGS}
        if "filter" in overrides:
            # LangChain's VectorStoreRetriever merges a call's ``filter`` into its search
            # kwargs; here it is the metadata filter, as in ``search_kwargs`` (``tags`` stays
            # refused: on ``invoke`` it is LangChain's callback tags).
            if "metadata_filter" in overrides:
                raise InvalidQueryError("give filter or metadata_filter, not both")
            overrides["metadata_filter"] = overrides.pop("filter")
        unknown = sorted(set(overrides) - set(_OPTION_FIELDS))
        if unknown:
            raise _unknown_call_arguments(unknown, overrides)
        current = {name: getattr(self, name) for name in _OPTION_FIELDS}
        try:
            opts = TreehopRetrievalOptions.model_validate({**current, **overrides})
        except ValidationError as exc:
            # (made in a function of its own: bound here, the pydantic errors, whose
            # ``ctx`` holds the validator's exception and so its frames, which name this
            # frame as their caller, made a reference cycle through ``self``: a retriever
            # whose call raised outlived its last reference; helper leftovers69c)
            raise _call_argument_error(exc) from exc
        _check_mmr_options(self.search_type, opts, self.client)
        return opts

    async def _awhole_limit(self, opts: TreehopRetrievalOptions) -> int:
        """A ``k`` above one search's limit as that limit, or an error naming why not."""
        return await kit.whole_limit(
            self.treehop_client,
            opts.k,
            "k",
            target_uri=opts.target_uri,
            context_types=opts.context_types,
            directories=opts.include_directories,
        )

    @staticmethod
    def _whole(opts: TreehopRetrievalOptions, limit: int) -> TreehopRetrievalOptions:
        """The options of an "everything" call: one search's limit and, unless the caller set
        a floor, none (the client's ``RetrievalConfig.score_threshold`` would leave out the
        passages that score below it: 4 of 6 came back), as ``VectorStoreRetriever`` and our
        vector stores return every document they hold."""
        floor = kit.NO_FLOOR if opts.score_threshold is None else opts.score_threshold
        return opts.model_copy(update={"k": limit, "score_threshold": floor})

    def _check_source_call(self, opts: TreehopRetrievalOptions) -> None:
        if is_knowledge_source(self.treehop_client):
            _check_source_options(self.treehop_client, opts)

    def _display(self) -> Callable[[str], str] | None:
        """How the client writes a URI for its user (``None`` for a knowledge source)."""
        client = self.treehop_client
        return None if is_knowledge_source(client) else kit.as_async(client).display

    def _to_documents(self, result: FindResult, opts: TreehopRetrievalOptions) -> list[Document]:
        # A LangChain score_threshold promises that no weaker document comes back (the core
        # prunes the descent with it but may keep global-search hits below it).
        hits = kit.top_hits(self.treehop_client, result, opts.k, opts.score_threshold)
        return self._hit_documents(hits, opts)

    @staticmethod
    def _hit_documents(hits: list[MatchedContext], opts: TreehopRetrievalOptions) -> list[Document]:
        if opts.chunk_group:
            hits = group_chunks(hits)  # top() merges context types best first: regroup
        return [context_to_document(m, opts.content_field) for m in hits]

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        opts = self._options(kwargs)
        self._check_source_call(opts)
        client = self.treehop_client
        if not is_knowledge_source(client):
            records.check_filter_fields(
                kit.as_async(client),
                opts.metadata_filter,
                tags=(opts.tag_filter, opts.tag_filter_all),
                shown=(SOURCE,),
            )
        if opts.k == 0:  # checked as any call, then answered without a search
            check_query(query)
            return []
        if opts.k > MAX_LIMIT:  # "everything": known where the scope can be counted
            opts = self._whole(opts, kit.run_on(client, self._awhole_limit(opts)))
        if self.search_type == "mmr" and not is_knowledge_source(client):  # (refused there)
            result, hits = kit.run_on(client, _ammr(kit.as_async(client), query, opts))
            _emit(run_manager, query, result, self._display())
            return self._hit_documents(hits, opts)
        batched = self._batched(query)
        if batched is not None:
            result = batched
        elif is_knowledge_source(client) or opts.mode == "find":
            result = kit.find(
                client, query, context_type=_context_type(opts), **_find_kw(opts, client)
            )
        else:
            result = kit.call(client, _search, query, opts)
        _emit(run_manager, query, result, self._display())
        return self._to_documents(result, opts)

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        opts = self._options(kwargs)
        self._check_source_call(opts)
        client = self.treehop_client
        if not is_knowledge_source(client):
            await kit.acheck_filter_fields(
                client,
                opts.metadata_filter,
                tags=(opts.tag_filter, opts.tag_filter_all),
                shown=(SOURCE,),
            )
        if opts.k == 0:
            check_query(query)
            return []
        if opts.k > MAX_LIMIT:
            opts = self._whole(opts, await self._awhole_limit(opts))
        if self.search_type == "mmr" and not is_knowledge_source(client):  # (refused there)
            result, hits = await _ammr(kit.as_async(client), query, opts)
            await _aemit(run_manager, query, result, self._display())
            return self._hit_documents(hits, opts)
        batched = self._batched(query)
        if batched is not None:
            result = batched
        elif is_knowledge_source(client) or opts.mode == "find":
            ctype = _context_type(opts)
            result = await kit.afind(client, query, context_type=ctype, **_find_kw(opts, client))
        else:
            result = await kit.acall(client, _search, query, opts)
        await _aemit(run_manager, query, result, self._display())
        return self._to_documents(result, opts)

    def batch(
        self,
        inputs: list[str],
        config: RunnableConfig | list[RunnableConfig] | None = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any | None,
    ) -> list[list[Document]]:
        """LangChain's ``batch`` (each input one ``invoke``: its own config, callbacks, run and
        events, as always), with the finds of the whole batch made first by one
        :meth:`~treehop.Treehop.find_many` (one embedder call, one graph search for every
        query; the same documents as one ``invoke`` each). Where that cannot stand for the
        invokes (``mode="search"``, a knowledge source, one input, or a batch the core
        refuses as a whole, e.g. one empty query) each invoke finds on its own, so an
        error belongs to the input that caused it."""
        found = self._find_many(inputs, kwargs)
        token = _BATCHED.set(found)
        try:
            return super().batch(inputs, config, return_exceptions=return_exceptions, **kwargs)
        finally:
            _BATCHED.reset(token)

    async def abatch(
        self,
        inputs: list[str],
        config: RunnableConfig | list[RunnableConfig] | None = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any | None,
    ) -> list[list[Document]]:
        """:meth:`batch`, awaited: one awaited ``find_many`` on the native async client,
        then LangChain's ``abatch`` of the invokes."""
        found = await self._afind_many(inputs, kwargs)
        token = _BATCHED.set(found)
        try:
            return await super().abatch(
                inputs, config, return_exceptions=return_exceptions, **kwargs
            )
        finally:
            _BATCHED.reset(token)

    def _batched(self, query: str) -> FindResult | None:
        """The answer to ``query`` that this retriever's running batch made, if any."""
        got = _BATCHED.get()
        if got is None or got[0] is not self:
            return None
        return got[1].get(query)

    def _batch_plan(
        self, inputs: object, kwargs: Mapping[str, Any]
    ) -> tuple[kit.TreehopClient, list[str], TreehopRetrievalOptions] | None:
        """The client, the distinct queries and the shared options of a batch that one
        ``find_many`` may answer, or ``None``."""
        client = self.client
        if client is None or is_knowledge_source(client) or not isinstance(inputs, list):
            return None
        if len(inputs) < 2 or not all(isinstance(q, str) for q in inputs):
            return None
        try:
            opts = self._options(kwargs)
        except TreehopError:
            return None  # each invoke raises it
        if opts.mode != "find" or not 0 < opts.k <= MAX_LIMIT or self.search_type == "mmr":
            return None  # (k=0: each invoke answers [] unsearched; above: each counts)
        return client, list(dict.fromkeys(inputs)), opts

    def _find_many(
        self, inputs: object, kwargs: Mapping[str, Any]
    ) -> tuple[object, Mapping[str, FindResult]] | None:
        plan = self._batch_plan(inputs, kwargs)
        if plan is None:
            return None
        client, queries, opts = plan
        try:
            got = kit.find_many(
                client,
                queries,
                context_type=_context_type(opts),
                **_find_kw(opts, client),
            )
        except TreehopError:
            return None  # each invoke finds alone: the error is its input's
        return self, dict(zip(queries, got, strict=True))

    async def _afind_many(
        self, inputs: object, kwargs: Mapping[str, Any]
    ) -> tuple[object, Mapping[str, FindResult]] | None:
        plan = self._batch_plan(inputs, kwargs)
        if plan is None:
            return None
        client, queries, opts = plan
        try:
            got = await kit.afind_many(
                client,
                queries,
                context_type=_context_type(opts),
                **_find_kw(opts, client),
            )
        except TreehopError:
            return None
        return self, dict(zip(queries, got, strict=True))

    def _get_ls_params(self, **kwargs: Any) -> LangSmithRetrieverParams:
        """Name the store and the embedder for LangSmith (never fails: it runs before a call)."""
        params = super()._get_ls_params(**kwargs)
        if self.client is None:
            return params
        if is_knowledge_source(self.client):
            # A knowledge base embeds on the service side: only the provider is known here.
            params["ls_vector_store_provider"] = str(
                getattr(self.client, "provider", None) or type(self.client).__name__
            )
            return params
        aclient = kit.as_async(self.client)
        store = aclient.store
        params["ls_vector_store_provider"] = str(
            getattr(store, "provider", None) or type(store).__name__
        )
        embedder = aclient.embedder
        inner = getattr(embedder, "embeddings", None)
        params["ls_embedding_provider"] = type(inner if inner is not None else embedder).__name__
        params["ls_embedding_model"] = str(getattr(embedder, "name", "") or "") or None
        return params


def _release_opened(root: AsyncTreehop) -> None:
    """A holder of ``root`` collected (:meth:`TreehopRetriever._hold_opened`); the last one's
    collection closes ``root`` and its variants, aside (:func:`~treehop.integration_kit.
    close_aside`). A client closed already (:meth:`TreehopRetriever.close`) closes again as
    a no-op."""
    with _HOLDERS_LOCK:
        left = _HOLDERS.get(root, 1) - 1
        if left > 0:
            _HOLDERS[root] = left
            return
        _HOLDERS.pop(root, None)
        clients = [root, *(variant for _, variant in _VARIANTS.get(root, ()))]
    kit.close_aside(functools.partial(_close_all, clients))


def _close_all(clients: list[AsyncTreehop]) -> None:
    """Close each client, each tried whatever the others did; the first failure raised."""
    failed: list[Exception] = []
    for client in clients:
        try:
            kit.run_sync(client.close())
        except Exception as exc:
            failed.append(exc)
    if failed:
        raise failed[0]


def _check_mmr_options(
    search_type: str, opts: TreehopRetrievalOptions, client: RetrieverClient | None
) -> None:
    """``fetch_k`` / ``lambda_mult`` only with ``search_type="mmr"`` (never silently unused),
    and MMR only where it has one query vector and stored vectors: ``mode="find"`` on a
    treehop client, without neighbouring chunks (context for a hit, not candidates)."""
    if search_type != "mmr":
        given = [n for n in ("fetch_k", "lambda_mult") if getattr(opts, n) is not None]
        if given:
            raise InvalidQueryError(
                f"{' and '.join(given)} only appl{'y' if len(given) > 1 else 'ies'} to "
                f"search_type='mmr' (this retriever's search_type is {search_type!r})"
            )
        return
    if opts.mode != "find":
        raise InvalidQueryError(
            "search_type='mmr' needs mode='find': search() fuses several planned queries, "
            "which have no one query vector to compare candidates with"
        )
    if opts.chunk_diffusion_count:
        raise InvalidQueryError(
            "search_type='mmr' picks among the hits; chunk_diffusion_count adds neighbours "
            "around them, which are not candidates: give one or the other"
        )
    if client is not None and is_knowledge_source(client):
        raise InvalidQueryError(kit.source_refusal(client, "search_type='mmr'"))


async def _ammr(
    client: AsyncTreehop, query: str, opts: TreehopRetrievalOptions
) -> tuple[FindResult, list[MatchedContext]]:
    """MMR over the tree search, as ``TreehopVectorStore.max_marginal_relevance_search``:
    the query embedded once (the search takes that vector: one embedder call), the best
    ``fetch_k`` hits (when not given: 20, at least ``k``; at most one search's limit and
    ``retrieve_count``),
    their stored vectors, and ``k`` of them picked by LangChain's
    ``maximal_marginal_relevance``. Returns the search's result (for the stage events) and
    the picked hits in MMR's order."""
    query = check_query(query)
    vector = [float(x) for x in await client.embedder.aembed_query(query)]
    cap = min(MAX_LIMIT, opts.retrieve_count or MAX_LIMIT)
    # (a fetch_k given below k is honoured, as the vector store's and LangChain's own MMR
    # honour it: at most fetch_k documents; the default is at least k; helper leftovers72b)
    fetch = min(max(MMR_FETCH_K, opts.k) if opts.fetch_k is None else opts.fetch_k, cap)
    kw = _find_kw(opts.model_copy(update={"k": fetch}), client)
    result = await client.find(query, context_type=_context_type(opts), query_vector=vector, **kw)
    hits = result.top(fetch, min_score=opts.score_threshold)
    if not hits:
        return result, []
    uris = [client.resolve(h.uri) for h in hits]
    rows = list(await client._io(client.store.get_vectors, uris))
    lam = MMR_LAMBDA_MULT if opts.lambda_mult is None else opts.lambda_mult
    picked = maximal_marginal_relevance(
        kit.mmr_query_vector(vector), rows, lambda_mult=lam, k=min(opts.k, len(hits))
    )
    return result, [hits[i] for i in picked]


def _check_search_type(data: Mapping[str, Any]) -> None:
    """``search_type`` as ``VectorStoreRetriever.validate_search_type`` checks it: one of
    :data:`SEARCH_TYPES`, and ``"similarity_score_threshold"`` only with a threshold (there
    a float in ``search_kwargs``; here also the ``score_threshold`` field itself)."""
    value = data["search_type"]
    if not isinstance(value, str) or value not in SEARCH_TYPES:
        raise InvalidQueryError(_search_type_hint(value))
    if value == "similarity_score_threshold":
        extra = data.get("search_kwargs")
        given = extra.get("score_threshold") if isinstance(extra, Mapping) else None
        if given is None and data.get("score_threshold") is None:
            raise InvalidQueryError(
                "search_type='similarity_score_threshold' needs a score_threshold (in "
                "search_kwargs, as VectorStoreRetriever's, or score_threshold=): the floor "
                "the returned documents' scores must reach"
            )


def _check_source_options(source: KnowledgeSource, opts: TreehopRetrievalOptions) -> None:
    """Refuse what a knowledge source cannot honour, before anything is sent.

    Its own option checks (ranges, rerank combinations) run per call in the source; these
    are the retriever's options that would otherwise mean something the source cannot do.
    """
    if opts.mode == "search":
        raise InvalidQueryError(kit.source_refusal(source, "mode='search'", tree=False))
    if opts.tag_filter or opts.tag_filter_all:
        raise InvalidQueryError(kit.source_refusal(source, "tag_filter / tag_filter_all"))
    if opts.target_uri is not None:
        kit.check_source_targets(source, check_target_uris(opts.target_uri))


def _core(opts: TreehopRetrievalOptions, tree: bool = True) -> SearchKwargs:
    """The retriever's option names mapped onto treehop's search options.

    Optional controls are passed only when set, so that defaults stay the core's (and a
    knowledge source's own ``defaults`` apply). On a treehop client (``tree``) a filter on
    ``source`` matches the ``source`` each Document shows (:data:`~.documents.SOURCE`), not
    only a stored one; a knowledge source's filter goes to its service as given.
    """
    kw = kit.shared_options(opts)
    kw["limit"] = opts.k
    kw["filter"] = show_fields(opts.metadata_filter, (SOURCE,)) if tree else opts.metadata_filter
    if opts.tag_filter or opts.tag_filter_all:
        kw["tags"], kw["tags_all"] = opts.tag_filter, opts.tag_filter_all
    if opts.retrieval_mode is not None:
        kw["mode"] = opts.retrieval_mode
    return kw


def _find_kw(opts: TreehopRetrievalOptions, client: RetrieverClient) -> SearchKwargs:
    """:func:`_core` for a find. On a treehop client ``score_threshold`` is a floor on the
    returned documents' scores (:meth:`TreehopRetriever._to_documents`); above the client's
    own default (``RetrievalConfig.score_threshold``) it is not passed to the core, which
    prunes its search with it on the scores before the tree context (a hit that ends above
    the floor was lost). A knowledge source gets it as it is."""
    kw = _core(opts, tree=not is_knowledge_source(client))
    floor = kw.get("score_threshold")
    if (
        floor is not None
        and not is_knowledge_source(client)
        and floor > kit.as_async(client).config.score_threshold
    ):
        kw.pop("score_threshold")
    return kw


def _context_type(opts: TreehopRetrievalOptions) -> str | None:
    return opts.context_types[0] if opts.context_types else None


async def _search(client: AsyncTreehop, query: str, opts: TreehopRetrievalOptions) -> FindResult:
    """``search()`` with the conversation: ``session_id``, or ``chat_history`` as a throw-away
    session that is deleted afterwards so chat histories do not pile up in the index."""
    temp: str | None = None
    # (read before the session is made: a refused role leaves nothing to delete)
    history = _history_messages(opts.chat_history) if opts.chat_history else []
    try:
        if opts.chat_history:
            temp = await client.create_session()
            for role, content in history:
                await client.add_message(temp, role, content)
        return await client.search(
            query,
            session_id=temp or opts.session_id,
            context_types=list(opts.context_types) if opts.context_types is not None else None,
            **_core(opts),
        )
    finally:
        if temp is not None:
            await client.delete_session(temp)


def _history_messages(history: Sequence[BaseMessage]) -> list[tuple[str, str]]:
    """LangChain messages as (role, text) for a treehop session; tool traffic is skipped.

    Tool calls and tool results are the agent's plumbing, not the conversation the planner
    should read; empty messages carry nothing. A ``ChatMessage`` is read by its ``role`` as
    LangChain reads one (``human``, ``ai``, ``developer``, ``function``: ``ROLE_ALIASES``); it
    was dropped whatever its role, and an unknown role is refused rather than dropped.
    """
    out: list[tuple[str, str]] = []
    for i, m in enumerate(history):
        if isinstance(m, HumanMessage):
            role = "user"
        elif isinstance(m, AIMessage):
            role = "assistant"
        elif isinstance(m, SystemMessage):
            role = "system"
        elif isinstance(m, ChatMessage):
            role = message_role(m.role, f"chat_history[{i}]")
            if role == "tool":
                continue
        else:
            continue
        text = m.text.strip()
        if text:
            out.append((role, text))
    return out


def _emit(
    run_manager: CallbackManagerForRetrieverRun,
    query: str,
    result: FindResult,
    display: Callable[[str], str] | None,
) -> None:
    """Dispatch the stage events, only when a handler listens (nothing is built otherwise)."""
    child = run_manager.get_child()
    for ev in stage_events(query, result, display) if child.handlers else []:
        dispatch_custom_event(ev.EVENT, ev.payload(), config={"callbacks": child})


async def _aemit(
    run_manager: AsyncCallbackManagerForRetrieverRun,
    query: str,
    result: FindResult,
    display: Callable[[str], str] | None,
) -> None:
    child = run_manager.get_child()
    for ev in stage_events(query, result, display) if child.handlers else []:
        await adispatch_custom_event(ev.EVENT, ev.payload(), config={"callbacks": child})
