"""An existing VikingDB knowledge base as a read-only treehop source (``search_knowledge``).

A team that already keeps its documents in a VikingDB knowledge base (chunked, embedded and
indexed by the service) should not have to re-ingest them to use treehop's LangChain or
LlamaIndex retrievers. :class:`VikingDBKnowledgeSource` answers ``find(query, ...)`` with a
:class:`~treehop.models.FindResult`, the same type the treehop clients return, by calling the
service's ``search_knowledge`` API through the official SDK (``vikingdb.knowledge``).

Mapping of the request (every option of the API, validated before any request is sent, so a bad
value is an :class:`~treehop.errors.InvalidQueryError` naming the option, not a remote 400):

=======================================  ==================================================
treehop ``find()`` / option              ``search_knowledge``
=======================================  ==================================================
``query`` (1..8000 characters)           ``query``
``limit`` (1..1000, default 10)          ``limit``
``filter`` / ``doc_filter``              ``query_param.doc_filter`` (the filter DSL)
``target_uri`` (documents of this KB)    ``doc_filter`` must ``doc_id`` in [...]
``dense_weight`` (0.2..1)                ``dense_weight``
``mode="thinking"`` / ``rerank_switch``  ``post_processing.rerank_switch``
``retrieve_count`` (>= limit)            ``post_processing.retrieve_count`` (default 25)
``rerank_model``                         ``post_processing.rerank_model``
``rerank_threshold`` (0..1)              ``post_processing.rerank_threshold`` (seed model)
``rerank_instruction`` (<= 1024)         ``post_processing.rerank_instruction`` (seed model)
``rerank_only_chunk``                    ``post_processing.rerank_only_chunk``
``chunk_diffusion_count`` (0..5)         ``post_processing.chunk_diffusion_count``
``chunk_group``                          ``post_processing.chunk_group``
``get_attachment_link``                  ``post_processing.get_attachment_link``
``need_instruction``                     ``pre_processing.need_instruction``
``rewrite`` + ``messages``               ``pre_processing.rewrite`` / ``messages``
``return_token_usage``                   ``pre_processing.return_token_usage``
``image_query``                          ``image_query``
``score_threshold``                      applied here to the returned scores
=======================================  ==================================================

Options that only work with another one are refused rather than silently ignored (the service
would ignore them): ``retrieve_count``, ``rerank_model`` and ``rerank_only_chunk`` need rerank on;
``rerank_threshold`` and ``rerank_instruction`` need ``rerank_model="doubao-seed-rerank"``;
``messages`` needs ``rewrite``. With rerank on and no ``retrieve_count``, ``max(limit, 25)`` is
sent, because the service's default of 25 is an error for ``limit > 25``.

Mapping of the response (``result_list`` of ``PointInfo``): one
:class:`~treehop.models.MatchedContext` per point, a leaf resource with URI
``viking://resources/<collection>/<doc_id>#chunk-<chunk_id>`` (``parent_uri`` is the document's
URI, so :func:`treehop.postprocess.group_chunks` and the integrations' document grouping work),
``content`` the chunk text, ``abstract`` its title, ``score`` the rerank score when reranked else
the vector score, ``vector_score=score``, ``rerank_score``, ``chunk_index=chunk_id``, and every
other ``PointInfo`` field in ``metadata`` (``doc_info``, ``point_id``, ``chunk_title``,
``chunk_attachment``, ...; ``doc_meta`` parsed from its JSON string when it is JSON). A
``rewrite_query`` becomes the result's ``query_plan``.

The SDK is synchronous; :meth:`VikingDBKnowledgeSource.afind` (and ``source.aio.find``) run it in
a worker thread. The SDK's knowledge client defaults to ``http``; this source defaults to
``https``.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import json
import math
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal, Unpack

from pydantic import ConfigDict, Field, SecretStr, model_validator

from . import uri as urimod
from ._http import MAX_SECONDS, DeadlineExceeded, RetryPolicy, call_with_deadline, check_deadline
from .arguments import check_bool, check_context_type, check_mode, check_target_uris
from .config_model import ConfigModel
from .errors import (
    InvalidConfigError,
    InvalidFilterError,
    InvalidQueryError,
    InvalidURIError,
    StoreError,
)
from .filters import CLIENT_SIDE_OPS, MetadataFilter
from .models import (
    ContextType,
    FindResult,
    FoundBy,
    MatchedContext,
    QueryPlan,
    QueryResult,
    RetrievalMode,
    TypedQuery,
)
from .search_options import SearchKwargs
from .stores.base import check_number
from .stores.vikingdb import (
    VikingDBError,
    call_with_retries,
    cap_sdk_session,
    check_endpoint,
    load_sdk,
    make_error,
    resolve_keys,
)
from .validation import check_query, check_threshold

DEFAULT_KNOWLEDGE_HOST: Final = "api-knowledgebase.mlp.cn-beijing.volces.com"
DEFAULT_REGION: Final = "cn-beijing"
SEED_RERANK_MODEL: Final = "doubao-seed-rerank"
KNOWN_RERANK_MODELS: Final = frozenset(
    {SEED_RERANK_MODEL, "base-multilingual-rerank", "m3-v2-rerank"}
)
DEFAULT_RETRIEVE_COUNT: Final = 25
_POINT_MAPPED: Final = frozenset({"content", "score", "rerank_score", "chunk_id"})


class ChatTurn(ConfigModel):
    """One message of the conversation that ``rewrite`` rewrites the query from."""

    model_config = ConfigDict(extra="forbid")

    role: Literal["user", "assistant"]
    content: str = Field(min_length=1)


class KnowledgeSearchOptions(ConfigModel):
    """Every ``search_knowledge`` option, validated with the API's documented ranges."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    limit: int = Field(default=10, ge=1, le=1000)
    doc_filter: dict[str, Any] | None = None
    dense_weight: float | None = Field(default=None, ge=0.2, le=1.0)
    image_query: str | None = None
    need_instruction: bool = False
    rewrite: bool = False
    messages: list[ChatTurn] | None = None
    return_token_usage: bool = False
    rerank_switch: bool = False
    retrieve_count: int | None = Field(default=None, ge=1)
    rerank_model: str | None = None
    rerank_threshold: float | None = Field(default=None, ge=0.0, le=1.0)
    rerank_instruction: str | None = Field(default=None, max_length=1024)
    rerank_only_chunk: bool = False
    chunk_diffusion_count: int = Field(default=0, ge=0, le=5)
    chunk_group: bool = False
    get_attachment_link: bool = False

    @model_validator(mode="after")
    def _combinations(self) -> KnowledgeSearchOptions:
        if self.doc_filter is not None:
            parsed = MetadataFilter.parse(self.doc_filter)  # raises InvalidFilterError
            if parsed is not None and parsed.ops() & CLIENT_SIDE_OPS:
                # (the service's doc_filter has no substring match, and there is no local copy
                # of the documents to evaluate it on: refused here, not a 400 from the server)
                raise InvalidFilterError(
                    "a VikingDB knowledge base's doc_filter has no text_match, text_match_not, "
                    "empty or not_empty (the service filters with must, must_not, range, "
                    "range_out, and, or)"
                )
        if self.messages is not None and not self.rewrite:
            raise ValueError("messages are only used by rewrite=True; set rewrite or drop them")
        if self.rewrite and not self.messages:
            raise ValueError("rewrite=True needs messages (the conversation to rewrite from)")
        if not self.rerank_switch:
            for name in (
                "retrieve_count",
                "rerank_model",
                "rerank_threshold",
                "rerank_instruction",
            ):
                if getattr(self, name) is not None:
                    raise ValueError(f"{name} applies only when rerank is on (rerank_switch=True)")
            if self.rerank_only_chunk:
                raise ValueError("rerank_only_chunk applies only when rerank is on")
        if self.retrieve_count is not None and self.retrieve_count < self.limit:
            raise ValueError(
                f"retrieve_count ({self.retrieve_count}) must be >= limit ({self.limit})"
            )
        if self.rerank_model is not None and not self.rerank_model.strip():
            raise ValueError("rerank_model must be a non-empty string")
        seed = (self.rerank_model or "") == SEED_RERANK_MODEL
        for name in ("rerank_threshold", "rerank_instruction"):
            if getattr(self, name) is not None and not seed:
                raise ValueError(f"{name} works only with rerank_model={SEED_RERANK_MODEL!r}")
        return self

    def payload(self, query: str) -> dict[str, Any]:
        """The request body (the SDK adds the collection identity)."""
        body: dict[str, Any] = {"query": query, "limit": self.limit}
        if self.image_query is not None:
            body["image_query"] = self.image_query
        if self.dense_weight is not None:
            body["dense_weight"] = self.dense_weight
        if self.doc_filter is not None:
            body["query_param"] = {"doc_filter": self.doc_filter}
        pre: dict[str, Any] = {}
        if self.need_instruction:
            pre["need_instruction"] = True
        if self.return_token_usage:
            pre["return_token_usage"] = True
        if self.rewrite:
            pre["rewrite"] = True
            pre["messages"] = [m.model_dump() for m in self.messages or []]
        if pre:
            body["pre_processing"] = pre
        post: dict[str, Any] = {}
        if self.rerank_switch:
            post["rerank_switch"] = True
            post["retrieve_count"] = self.retrieve_count or max(self.limit, DEFAULT_RETRIEVE_COUNT)
            for name in ("rerank_model", "rerank_threshold", "rerank_instruction"):
                if getattr(self, name) is not None:
                    post[name] = getattr(self, name)
            if self.rerank_only_chunk:
                post["rerank_only_chunk"] = True
        if self.chunk_diffusion_count:
            post["chunk_diffusion_count"] = self.chunk_diffusion_count
        if self.chunk_group:
            post["chunk_group"] = True
        if self.get_attachment_link:
            post["get_attachment_link"] = True
        if post:
            body["post_processing"] = post
        return body


class KnowledgeFindKwargs(SearchKwargs, total=False):
    """:meth:`VikingDBKnowledgeSource.find` options: treehop's search options plus the
    ``search_knowledge`` ones they do not cover (see :class:`KnowledgeSearchOptions`)."""

    doc_filter: dict[str, Any] | None
    image_query: str | None
    need_instruction: bool
    rewrite: bool
    messages: list[ChatTurn] | list[dict[str, str]] | None
    return_token_usage: bool
    rerank_switch: bool
    rerank_model: str | None
    rerank_instruction: str | None
    rerank_only_chunk: bool
    get_attachment_link: bool


@dataclass
class KnowledgeSearchResponse:
    """Everything one ``search_knowledge`` call returned, mapped and raw."""

    contexts: list[MatchedContext]
    points: list[dict[str, Any]]
    count: int | None = None
    rewrite_query: str | None = None
    token_usage: dict[str, Any] = field(default_factory=dict)
    request_id: str | None = None
    elapsed_ms: float = 0.0


class _AsyncFacade:
    """``source.aio.find(...)``: the async twin, shaped like a treehop client's ``.aio``."""

    def __init__(self, source: VikingDBKnowledgeSource) -> None:
        self._source = source

    async def find(
        self,
        query: str,
        *,
        context_type: ContextType | str | None = None,
        **options: Unpack[KnowledgeFindKwargs],
    ) -> FindResult:
        return await self._source.afind(query, context_type=context_type, **options)

    async def search_knowledge(self, query: str, **kwargs: Any) -> KnowledgeSearchResponse:
        return await asyncio.to_thread(self._source.search_knowledge, query, **kwargs)


class VikingDBKnowledgeSource:
    """A VikingDB knowledge base, queried with ``search_knowledge``, answering ``find()``.

    Args:
        collection_name / project_name: The knowledge base (or give ``resource_id``).
        host / region / scheme: The knowledge-base endpoint (``https`` by default; the SDK's
            own default is ``http``). ``127.0.0.1:PORT`` with ``scheme="http"`` works for a
            local stand-in, as the host is not signed.
        ak / sk / session_token: Keys; ``None`` reads ``VOLC_ACCESSKEY`` / ``VOLC_SECRETKEY`` /
            ``VOLC_SESSIONTOKEN``. Kept as ``SecretStr``; never in a repr, log or error.
        defaults: Options applied to every call unless a call overrides them (for example
            ``{"rerank_model": "m3-v2-rerank"}``); validated like a call's options.
        uri_prefix: The root of the URIs results get (default
            ``viking://resources/<collection or resource_id>``).
        timeout_s / retry: Per-request timeout (whole seconds) and retries of connection
            failures, 429 and 5xx (4xx are never retried).
        client: A ready ``vikingdb.knowledge.VikingKnowledge`` client.
        deadline_s: Total time one search may take, retries included (``None``: unbounded).
            The SDK's ``timeout`` bounds each socket read only; past the deadline the call
            raises :class:`~treehop.errors.StoreError` (the SDK's thread ends on its own
            timeout).
    """

    def __init__(
        self,
        collection_name: str | None = None,
        *,
        project_name: str = "default",
        resource_id: str | None = None,
        host: str = DEFAULT_KNOWLEDGE_HOST,
        region: str = DEFAULT_REGION,
        scheme: str = "https",
        ak: str | SecretStr | None = None,
        sk: str | SecretStr | None = None,
        session_token: str | SecretStr | None = None,
        defaults: Mapping[str, Any] | None = None,
        uri_prefix: str | None = None,
        timeout_s: int = 30,
        retry: RetryPolicy | None = None,
        client: Any = None,
        deadline_s: float | None = 60.0,
    ) -> None:
        if not collection_name and not resource_id:
            raise StoreError("VikingDBKnowledgeSource needs collection_name= or resource_id=")
        # (typed and bounded: a list was a raw TypeError, inf a raw OverflowError in int())
        timeout_s = int(check_number("timeout_s", timeout_s, 1, MAX_SECONDS, whole=True))
        self.collection_name = collection_name
        self.project_name = project_name
        self.resource_id = resource_id
        self.host = host
        self.region = region
        self.scheme = scheme
        self.timeout_s = timeout_s
        # The SDK's timeout bounds each read; deadline_s bounds the whole call (retries too).
        self.deadline_s = check_deadline(deadline_s, StoreError)
        self.retry = retry if retry is not None else RetryPolicy()
        self._name = collection_name or resource_id or "?"
        self.defaults = dict(defaults or {})
        _options(self.defaults, {})  # validate the defaults once, up front ...
        if any(k in self.defaults for k in _RERANK_ONLY):
            _options(self.defaults, {"rerank_switch": True})  # ... and as a reranked call sees them
        prefix = uri_prefix or f"{urimod.RESOURCES_ROOT}/{_segment(self._name)}"
        self.uri_prefix = _check_prefix(prefix)
        # The longest id segment: a point's URI (prefix/doc/point) stays within MAX_URI_LENGTH.
        self._max_segment = (urimod.MAX_URI_LENGTH - len(self.uri_prefix) - 16) // 2
        sdk = load_sdk()
        if client is None:
            check_endpoint(host, scheme)
            a, s, token = resolve_keys(ak, sk, session_token)
            from vikingdb.knowledge import VikingKnowledge

            # One IAM object per client: the SDK binds it to one service and region.
            client = VikingKnowledge(
                host=host,
                region=region,
                auth=sdk.IAM(ak=a.get_secret_value(), sk=s.get_secret_value()),
                scheme=scheme,
                sts_token=token.get_secret_value() if token else "",
                timeout=self.timeout_s,
            )
        cap_sdk_session(client)  # (its answers read bounded: _CappedAdapter)
        self._client = client
        self._collection = client.collection(
            collection_name=collection_name,
            project_name=project_name if collection_name else None,
            resource_id=resource_id,
        )
        self.aio = _AsyncFacade(self)

    def __repr__(self) -> str:
        return (
            f"VikingDBKnowledgeSource(collection={self._name!r}, project={self.project_name!r}, "
            f"host={self.host!r}, region={self.region!r}, ak='**********', sk='**********')"
        )

    def close(self) -> None:
        session = getattr(self._client, "session", None)
        if session is not None:
            session.close()

    # ------------------------------------------------------------------ URIs
    def doc_uri(self, doc_id: str) -> str:
        """The URI of a document of this knowledge base (within ``MAX_URI_LENGTH``: an id too
        long for it gets a shortened segment, see :func:`_segment`)."""
        return f"{self.uri_prefix}/{_segment(doc_id, self._max_segment)}"

    def doc_id_of(self, uri: str) -> str:
        """The ``doc_id`` a document (or chunk) URI of this knowledge base names."""
        resolved = urimod.normalize(uri, "default").split("#", 1)[0]
        if not resolved.startswith(self.uri_prefix + "/"):
            raise InvalidURIError(f"{uri} is not a document of knowledge base {self._name!r}")
        seg = resolved[len(self.uri_prefix) + 1 :]
        if not seg or "/" in seg:
            raise InvalidURIError(f"{uri} does not name one document of {self._name!r}")
        return _unsegment(seg)

    # ------------------------------------------------------------------ search
    def search_knowledge(self, query: str, **options: Any) -> KnowledgeSearchResponse:
        """One ``search_knowledge`` call with raw options (see :class:`KnowledgeSearchOptions`)."""
        q = check_query(query)
        opts = _options(self.defaults, options)
        payload = opts.payload(q)
        t0 = time.perf_counter()
        what = f"search_knowledge in {self._name!r}"
        try:
            resp = call_with_deadline(
                lambda: call_with_retries(
                    lambda: self._collection.search_knowledge(payload, timeout=self.timeout_s),
                    retry=self.retry,
                    what=what,
                ),
                self.deadline_s,
            )
        except DeadlineExceeded as exc:
            raise StoreError(
                f"VikingDB {what} failed: no complete answer within the {exc.deadline_s:g}s "
                "deadline (deadline_s)"
            ) from None
        code = getattr(resp, "code", None)
        if code not in (None, 0):
            raise make_error(
                what,
                status=200,
                code=code,
                message=getattr(resp, "message", ""),
                request_id=getattr(resp, "request_id", None),
            )
        result = resp.result
        points = [p.model_dump(exclude_none=True) for p in (result.result_list if result else [])]
        contexts = [self._to_context(p, opts.rerank_switch) for p in points]
        return KnowledgeSearchResponse(
            contexts=contexts,
            points=points,
            count=getattr(result, "count", None),
            rewrite_query=getattr(result, "rewrite_query", None) or None,
            token_usage=dict(getattr(result, "token_usage", None) or {}),
            request_id=getattr(resp, "request_id", None),
            elapsed_ms=(time.perf_counter() - t0) * 1000,
        )

    def find(
        self,
        query: str,
        *,
        context_type: ContextType | str | None = None,
        **options: Unpack[KnowledgeFindKwargs],
    ) -> FindResult:
        """Search the knowledge base with treehop's ``find()`` options.

        ``mode="thinking"`` turns the service's rerank on (``quick``, the default, leaves it
        off unless ``rerank_switch=True`` is given). ``target_uri`` restricts to documents of
        this knowledge base; ``filter`` is its ``doc_filter``. What a knowledge base cannot
        honour is refused with :class:`~treehop.errors.InvalidQueryError`, never dropped:
        ``tags``/``tags_all`` (no treehop tags), ``explain=True`` (no descent to trace),
        ``since``/``until`` (no timestamps) and ``collapse_chunks=True`` (use ``chunk_group``).
        ``include_directories`` is honoured either way: a knowledge base has no directories.
        The other :class:`KnowledgeFindKwargs` are :class:`KnowledgeSearchOptions` fields.
        """
        opts: dict[str, Any] = {k: v for k, v in options.items() if v is not None}
        _refuse_tree_options(opts)
        threshold = check_threshold(opts.pop("score_threshold", None))
        ctype = check_context_type(context_type)
        rmode = check_mode(opts.pop("mode", RetrievalMode.QUICK))
        check_bool(opts.pop("include_directories", True), "include_directories")
        flt = opts.pop("filter", None)
        if "doc_filter" in opts and flt is not None:
            raise InvalidQueryError("give filter= or doc_filter=, not both")
        if flt is not None:
            opts["doc_filter"] = dict(flt.spec if isinstance(flt, MetadataFilter) else flt)
        targets = check_target_uris(opts.pop("target_uri", None))
        if targets:
            docs = list(dict.fromkeys(self.doc_id_of(t) for t in targets))
            scope = {"op": "must", "field": "doc_id", "conds": docs}
            user = opts.get("doc_filter", self.defaults.get("doc_filter"))
            opts["doc_filter"] = {"op": "and", "conds": [scope, user]} if user else scope
        if rmode is RetrievalMode.THINKING:
            opts.setdefault("rerank_switch", True)
        q = check_query(query)
        tq = TypedQuery(query=q, context_type=ContextType.RESOURCE)
        if ctype is not None and ctype is not ContextType.RESOURCE:
            # A knowledge base holds documents (resources) only: honestly nothing to return.
            _options(self.defaults, opts)
            return FindResult(query_results=[QueryResult(query=tq, stop_reason="no resources")])
        resp = self.search_knowledge(q, **opts)
        hits = resp.contexts
        if threshold is not None:
            hits = [m for m in hits if m.score >= threshold]
        qr = QueryResult(
            query=tq,
            matched_contexts=hits,
            nodes_scored=len(resp.points),
            rerank_calls=1 if any(m.rerank_score is not None for m in hits) else 0,
            stop_reason="search_knowledge",
            elapsed_ms=resp.elapsed_ms,
        )
        plan = None
        if resp.rewrite_query:
            plan = QueryPlan(
                queries=[TypedQuery(query=resp.rewrite_query, context_type=ContextType.RESOURCE)],
                reasoning="query rewritten by VikingDB search_knowledge from the conversation",
                planner="vikingdb:rewrite",
            )
        return FindResult(resources=hits, query_plan=plan, query_results=[qr], total=len(hits))

    async def afind(
        self,
        query: str,
        *,
        context_type: ContextType | str | None = None,
        **options: Unpack[KnowledgeFindKwargs],
    ) -> FindResult:
        """:meth:`find` in a worker thread (the SDK is synchronous)."""
        return await asyncio.to_thread(
            lambda: self.find(query, context_type=context_type, **options)
        )

    # ------------------------------------------------------------------ mapping
    def _to_context(self, point: Mapping[str, Any], reranked: bool) -> MatchedContext:
        doc = dict(point.get("doc_info") or {})
        doc_id = doc.get("doc_id")
        chunk_id = point.get("chunk_id")
        if isinstance(doc_id, str) and doc_id:
            parent: str | None = self.doc_uri(doc_id)
            uri = f"{parent}{urimod.CHUNK_MARK}{chunk_id}" if _chunk_ok(chunk_id) else str(parent)
            if not _chunk_ok(chunk_id) and point.get("point_id"):
                uri = f"{parent}/{_segment(str(point['point_id']), self._max_segment)}"
        else:
            parent = None
            point_id = str(point.get("point_id") or "point")
            uri = f"{self.uri_prefix}/{_segment(point_id, self._max_segment)}"
        score = _finite(point.get("score"))
        rerank = _finite(point.get("rerank_score"))
        metadata: dict[str, Any] = {k: v for k, v in point.items() if k not in _POINT_MAPPED}
        if doc:
            meta_raw = doc.get("doc_meta")
            if isinstance(meta_raw, str):
                with contextlib.suppress(ValueError, RecursionError):
                    doc["doc_meta"] = json.loads(meta_raw)
            metadata["doc_info"] = doc
        metadata["source"] = "vikingdb_knowledge"
        title = point.get("chunk_title") or doc.get("title") or doc.get("doc_name") or ""
        content = str(point.get("content") or point.get("md_content") or "")
        return MatchedContext(
            uri=uri,
            context_type=ContextType.RESOURCE,
            is_leaf=True,
            abstract=str(title) or content[:200],
            score=rerank if reranked and rerank is not None else (score or 0.0),
            level=2,
            parent_uri=parent,
            content=content,
            metadata=metadata,
            chunk_index=chunk_id if _chunk_ok(chunk_id) else None,
            vector_score=score,
            rerank_score=rerank,
            found_by=FoundBy.GLOBAL,
        )


_TREE_ONLY: Final = {
    "tags": "a VikingDB knowledge base has no treehop tags; filter on document meta fields "
    "with filter={'op': 'must', 'field': ..., 'conds': [...]}",
    "tags_all": "a VikingDB knowledge base has no treehop tags; filter on document meta fields",
    "since": "since/until filter treehop memories by time; a knowledge base has no timestamps: "
    "filter on a document meta field",
    "until": "since/until filter treehop memories by time; a knowledge base has no timestamps",
    "explain": "explain traces treehop's descent; a knowledge base search has none to trace",
    "collapse_chunks": "collapse_chunks folds a treehop document's chunks; for a knowledge base "
    "use chunk_group=True",
}


def _refuse_tree_options(opts: dict[str, Any]) -> None:
    """Options that need a treehop tree are refused (a typed error), never silently dropped.

    ``False``/empty values ask for nothing, pass, and are removed (``explain=False``,
    ``tags=[]``).
    """
    for name, why in _TREE_ONLY.items():
        if opts.pop(name, None):
            raise InvalidQueryError(why)


_RERANK_ONLY = (
    "retrieve_count",
    "rerank_model",
    "rerank_threshold",
    "rerank_instruction",
    "rerank_only_chunk",
)


def _loc(error: Mapping[str, object]) -> tuple[object, ...]:
    loc = error.get("loc")
    return tuple(loc) if isinstance(loc, tuple | list) else ()


def _options(defaults: Mapping[str, Any], overrides: Mapping[str, Any]) -> KnowledgeSearchOptions:
    """Defaults merged with a call's options, validated together.

    Rerank settings given as *defaults* (a rerank model, a threshold) apply when a call turns
    rerank on, and are left out of calls that do not; given on the call itself, they still
    need rerank on and are refused otherwise.
    """
    merged = {**defaults, **overrides}
    if not merged.get("rerank_switch"):
        for name in _RERANK_ONLY:
            if name in defaults and name not in overrides:
                merged.pop(name, None)
    try:
        return KnowledgeSearchOptions.model_validate(merged)
    except InvalidConfigError as exc:
        for e in exc.errors:
            ctx = e.get("ctx")
            cause = ctx.get("error") if isinstance(ctx, dict) else None
            if isinstance(cause, InvalidFilterError):
                raise cause from None
        details = "; ".join(
            f"{'.'.join(str(p) for p in _loc(e)) or 'options'}: {e.get('msg')}" for e in exc.errors
        )
        raise InvalidQueryError(f"invalid search_knowledge option(s): {details}") from None


_SAFE_ID = re.compile(r"^[A-Za-z0-9_~-][A-Za-z0-9_.~-]*\Z")
_B64: Final = "b64-"
_SHORTENED: Final = "~"
"""Marks a shortened segment (see :func:`_segment`); URL-safe base64 never holds it."""
_MAX_PREFIX: Final = urimod.MAX_URI_LENGTH // 2


def _segment(raw: str, max_len: int | None = None) -> str:
    """A URI path segment for a service id, reversible unless longer than ``max_len``.

    Ids made of ``[A-Za-z0-9_.~-]`` (what the service generates) are kept as they are; anything
    else -- a ``/``, spaces, non-ASCII -- is written as ``b64-`` + URL-safe base64, because the
    URI rules reject a segment that decodes to a ``/`` however it is percent-encoded.

    A segment past ``max_len`` (a 5,000-character ``doc_id`` gave a hit URI past
    ``MAX_URI_LENGTH``, which no URI argument accepts back) is shortened the way
    ``ingest.records.id_segment`` shortens long ids: ``b64-`` + the start of the encoding +
    ``~`` + a 128-bit BLAKE2b of the whole id. Still unique (the hash), never equal to a
    reversible segment (URL-safe base64 has no ``~``, and a plain id never starts ``b64-``),
    but not reversible: :meth:`VikingDBKnowledgeSource.doc_id_of` refuses it, and the hit's
    ``metadata["doc_info"]["doc_id"]`` keeps the whole id.
    """
    if _SAFE_ID.match(raw) and not raw.startswith(_B64) and raw not in {".", ".."}:
        seg = raw
    else:
        # (``surrogatepass``: an id the service answers with a lone surrogate, a JSON "\ud800"
        # escape, escaped a raw UnicodeEncodeError out of ``find``; the segment stays reversible)
        data = raw.encode("utf-8", "surrogatepass")
        seg = _B64 + base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")
    if max_len is None or len(seg) <= max_len:
        return seg
    data = raw.encode("utf-8", "surrogatepass")
    digest = hashlib.blake2b(data, digest_size=16).hexdigest()
    head = base64.urlsafe_b64encode(data).decode("ascii")[: max_len - len(_B64) - 1 - 32]
    return f"{_B64}{head}{_SHORTENED}{digest}"


def _unsegment(seg: str) -> str:
    if not seg.startswith(_B64):
        return seg
    body = seg[len(_B64) :]
    if _SHORTENED in body:
        raise InvalidURIError(
            f"{seg[:60]}... names a document id too long for a URI (shortened to a hash); "
            "filter by the whole id instead: "
            "doc_filter={'op': 'must', 'field': 'doc_id', 'conds': [doc_id]}"
        )
    try:
        raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
        return raw.decode("utf-8", "surrogatepass")
    except ValueError as exc:
        raise InvalidURIError(f"invalid encoded document id {seg!r}") from exc


def _check_prefix(prefix: str) -> str:
    resolved = urimod.normalize(prefix, "default")
    if not resolved.startswith(urimod.RESOURCES_ROOT + "/") or urimod.CHUNK_MARK in resolved:
        raise InvalidURIError(f"uri_prefix must be a directory under viking://resources: {prefix}")
    if len(resolved) > _MAX_PREFIX:  # the rest of MAX_URI_LENGTH is the document and point ids
        raise InvalidURIError(
            f"uri_prefix is {len(resolved)} characters; the limit is {_MAX_PREFIX}"
        )
    return resolved


def _chunk_ok(chunk_id: Any) -> bool:
    return isinstance(chunk_id, int) and not isinstance(chunk_id, bool) and 0 <= chunk_id < 10**6


def _finite(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    try:
        number = float(v)
    except OverflowError:  # an int past float range (JSON allows 10**400)
        return None
    return number if math.isfinite(number) else None


__all__ = [
    "ChatTurn",
    "KnowledgeSearchOptions",
    "KnowledgeSearchResponse",
    "VikingDBError",
    "VikingDBKnowledgeSource",
]
