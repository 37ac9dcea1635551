"""The data model: nodes of the tree, typed queries, and retrieval results.

Field names follow the seed design (``TypedQuery``, ``MatchedContext``, ``QueryResult``,
``FindResult``); provenance fields are our addition so that every hit says why it was found.
"""

from __future__ import annotations

from enum import IntEnum, StrEnum
from typing import Any, NoReturn, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .config_model import CheckedModel
from .errors import UnsupportedUseError


class ContextType(StrEnum):
    """What kind of context a node holds; each kind has its own root directory."""

    MEMORY = "memory"
    RESOURCE = "resource"
    SKILL = "skill"


class RetrievalMode(StrEnum):
    """QUICK never reranks; THINKING reranks when a reranker is configured (seed: search())."""

    QUICK = "quick"
    THINKING = "thinking"


class FoundBy(StrEnum):
    """How a hit entered the candidate set."""

    GLOBAL = "global"  # the global vector search that picks starting points
    CHILD = "child"  # a child search of a directory popped from the heap
    TAG_HOP = "tag_hop"  # a subtree reached sideways through a shared tag
    NEIGHBOUR = "neighbour"  # a neighbouring chunk added by chunk diffusion


class Level(IntEnum):
    """Node levels, as in the seed: L0 abstract, L1 overview (directories), L2 content."""

    ABSTRACT = 0
    OVERVIEW = 1
    CONTENT = 2


class Node(CheckedModel):
    """One node of the tree.

    Directories (``is_leaf=False``) are described by an L0 ``abstract`` and an L1 ``overview``
    and are stored at level 1 (context-type roots, which have only an abstract, at level 0).
    Leaves hold L2 ``content`` and are stored at level 2. A long file becomes a non-leaf node whose
    ordered chunks are leaves with ``chunk_index`` set.
    """

    model_config = ConfigDict(extra="forbid")

    uri: str
    parent_uri: str | None
    context_type: ContextType
    level: int = Field(ge=0, le=2)
    is_leaf: bool
    abstract: str = ""
    overview: str = ""
    content: str = ""
    tags: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    chunk_index: int | None = None
    content_hash: str = ""
    ancestors: list[str] = Field(default_factory=list)

    def embedding_text(self) -> str:
        """The text whose vector represents this node in the index."""
        if self.is_leaf:
            return self.content or self.abstract
        return "\n".join(p for p in (self.abstract, self.overview) if p)

    def lexical_text(self) -> str:
        """The text the BM25 index holds for this node.

        A directory's overview repeats its children's abstracts; indexing it would count
        their words twice and let a directory outscore the very file that answers the query,
        so directories are indexed by their L0 abstract only.
        """
        return self.content or self.abstract if self.is_leaf else self.abstract


class TypedQuery(CheckedModel):
    """One query of a plan: the rewritten text, its context type, its purpose and priority."""

    query: str
    context_type: ContextType | None = None
    intent: str = ""
    priority: int = Field(default=3, ge=1, le=5)


class QueryPlan(CheckedModel):
    """What intent analysis decided to look for (``search()`` only)."""

    queries: list[TypedQuery] = Field(default_factory=list)
    reasoning: str = ""
    fallback: bool = False
    fallback_reason: str | None = None
    planner: str | None = None


PROVENANCE_KEYS: tuple[str, ...] = (
    "uri",
    "parent_uri",
    "context_type",
    "level",
    "is_leaf",
    "chunk_index",
    "score",
    "vector_score",
    "rerank_score",
    "rerank_fallback",
    "rerank_fallback_reason",
    "found_by",
    "found_via",
    "hop_source",
    "hop_tag",
    "query",
    "matched_queries",
    "tags",
    "abstract",
)
"""The keys of :meth:`MatchedContext.provenance`, shared by every framework integration."""


SLOT_HEADING_ONCE = True
"""Whether a slot's text (:attr:`MatchedContext.slot_text`) says its chunks' shared heading
line once, at the top; off, every chunk of the passage repeated it (helper ingest74)."""


def _heading_once(parts: list[str], metadata: dict[str, Any]) -> list[str]:
    """``parts`` (a passage's chunks in document order) with the heading line each chunk's
    text leads with (``metadata["chunk_title"]``, then a blank line) kept on the first only:
    the chunks of one passage are one section's, so their heading is the same line."""
    title = metadata.get("chunk_title")
    if not SLOT_HEADING_ONCE or not isinstance(title, str) or not title or len(parts) < 2:
        return parts
    lead = title + "\n\n"
    out = parts[:1]
    for part in parts[1:]:
        out.append(part[len(lead) :].lstrip("\n") if part.startswith(lead) else part)
    return out


class ChunkContext(CheckedModel):
    """Another node held in a hit's result slot: a collected chunk of the hit's document, or a
    conversation turn next to a memory hit (:mod:`treehop.memory_context`)."""

    uri: str
    chunk_index: int | None = None
    score: float
    abstract: str = ""
    content: str = ""
    position: int | None = None
    """Where the slot shows this node relative to its hit: a turn's place in its session (-1:
    the turn before, +1: after), a chunk of the hit's passage by its chunk offset
    (``document_context_chars``); ``None``: held in the slot, not shown in its text."""
    carried: bool = False
    """True: in the slot only as context (a neighbouring turn); False: a ranked hit itself."""
    own_score: float | None = None
    """A collected chunk's own score (before propagation, the tree context and the chunk
    window: :attr:`MatchedContext.own_score`); ``None`` where not recorded (a turn)."""


class MatchedContext(CheckedModel):
    """One retrieved node with its score and full provenance."""

    uri: str
    context_type: ContextType
    is_leaf: bool
    abstract: str
    score: float
    level: int = 2
    parent_uri: str | None = None
    overview: str = ""
    content: str = ""
    tags: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    chunk_index: int | None = None
    vector_score: float | None = None
    own_score: float | None = None
    """The node's own score before propagation (``score`` blends in its ancestors')."""
    rerank_score: float | None = None
    rerank_fallback: bool = False
    rerank_fallback_reason: str | None = None
    found_by: FoundBy = FoundBy.GLOBAL
    found_via: str | None = None
    hop_tag: str | None = None
    hop_source: str | None = None
    matched_queries: list[TypedQuery] = Field(default_factory=list)
    collapsed: list[ChunkContext] = Field(default_factory=list)
    """The document's other collected chunks, best first (one slot per document); for a
    memory turn, the turns around it in conversation order (``memory_context_chars``)."""

    @property
    def text(self) -> str:
        """The most detailed text this hit carries (content, else overview, else abstract)."""
        return self.content or self.overview or self.abstract

    @property
    def slot_text(self) -> str:
        """What a reader of this slot should see: :attr:`text`, and for a memory turn that
        carries its neighbouring turns, the whole exchange in conversation order (the turns
        before it, the hit, the turns after it, one a line); for a document's chunk, the
        other chunks of its passage the slot shows, in document order (a paragraph apart)."""
        turns = sorted(
            ((c.position, c.content or c.abstract) for c in self.collapsed if c.position),
            key=lambda t: t[0],
        )
        if not turns:
            return self.text
        before = [text for pos, text in turns if pos < 0]
        after = [text for pos, text in turns if pos > 0]
        if self.chunk_index is None:
            return "\n".join([*before, self.text, *after])
        return "\n\n".join(_heading_once([*before, self.text, *after], self.metadata))

    def provenance(self) -> dict[str, Any]:
        """Why this hit was found, as JSON-friendly values (enums as their string values).

        One definition for every integration, so that a LangChain ``Document`` and a
        LlamaIndex ``TextNode`` carry the same keys (:data:`PROVENANCE_KEYS`).
        """
        return {
            "uri": self.uri,
            "parent_uri": self.parent_uri,
            "context_type": self.context_type.value,
            "level": int(self.level),
            "is_leaf": self.is_leaf,
            "chunk_index": self.chunk_index,
            "score": float(self.score),
            "vector_score": None if self.vector_score is None else float(self.vector_score),
            "rerank_score": None if self.rerank_score is None else float(self.rerank_score),
            "rerank_fallback": self.rerank_fallback,
            "rerank_fallback_reason": self.rerank_fallback_reason,
            "found_by": self.found_by.value,
            "found_via": self.found_via,
            "hop_source": self.hop_source,
            "hop_tag": self.hop_tag,
            "query": self.matched_queries[0].query if self.matched_queries else None,
            "matched_queries": [q.model_dump(mode="json") for q in self.matched_queries],
            "tags": list(self.tags),
            "abstract": self.abstract,
        }


class RoundTrace(CheckedModel):
    """One round of the heap descent, for ``--explain`` and debugging."""

    round: int
    popped: str
    popped_score: float
    children_scored: int
    best_children: list[tuple[str, float]] = Field(default_factory=list)
    rerank_fallback_reason: str | None = None


class TagHopMetrics(CheckedModel):
    """What the tag-hop stage did for one query."""

    triggered: bool = False
    trigger_reason: str = ""
    tags_used: list[str] = Field(default_factory=list)
    hops_tried: int = 0
    subtrees_added: list[str] = Field(default_factory=list)
    hits_produced: int = 0
    hits_in_topk: int = 0


class QueryResult(CheckedModel):
    """What one typed query retrieved and how the search went."""

    query: TypedQuery
    matched_contexts: list[MatchedContext] = Field(default_factory=list)
    searched_directories: list[str] = Field(default_factory=list)
    starting_points: list[tuple[str, float]] = Field(default_factory=list)
    rounds: int = 0
    stop_reason: str = ""
    nodes_scored: int = 0
    rerank_fallback: bool = False
    rerank_fallback_reason: str | None = None
    rerank_calls: int = 0
    tag_hops: TagHopMetrics = Field(default_factory=TagHopMetrics)
    trace: list[RoundTrace] = Field(default_factory=list)
    elapsed_ms: float = 0.0


SCORE_KIND_FUSED = "fused_rank"
"""The ``score_kind`` that ``treehop search --json`` and the MCP ``search`` tool put beside
their hits: each hit's ``score`` is a normalised reciprocal-rank fusion of the typed
queries' rankings (1.0 = first in every query), not a similarity (usage82). Here, not in
the CLI, so the MCP server names the same value without importing the CLI."""


class FindResult(CheckedModel):
    """The seed's result type: hits per context type, the plan, and per-query results."""

    memories: list[MatchedContext] = Field(default_factory=list)
    resources: list[MatchedContext] = Field(default_factory=list)
    skills: list[MatchedContext] = Field(default_factory=list)
    query_plan: QueryPlan | None = None
    query_results: list[QueryResult] | None = None
    total: int = 0

    @field_validator("total")
    @classmethod
    def _non_negative(cls, v: int) -> int:
        if v < 0:
            raise ValueError("total must be >= 0")
        return v

    def __iter__(self) -> NoReturn:
        """Refused with where the hits are. Why: a retriever returns a list, so a framework
        user's first loop is ``for m in th.find(q)``; pydantic's own iteration gave the
        ``(field, value)`` pairs and the loop failed later on ``'tuple' object has no
        attribute 'uri'``."""
        raise UnsupportedUseError(
            "a FindResult is not a list of hits: iterate res.contexts() (every hit, best "
            "first), res.top(k), or res.resources / res.memories / res.skills "
            "(res.model_dump() for its fields)"
        )

    def __len__(self) -> int:
        """The number of hits, ``len(res.contexts())``; so an empty result is falsy. Why: a
        framework user's retriever answers a list, and ``if not res:`` / ``len(res)`` were
        always true / a ``TypeError`` (pydantic's ``bool``). A length is not a sequence:
        iterating still refuses (:meth:`__iter__`), the hits are in :meth:`contexts`."""
        return len(self.resources) + len(self.memories) + len(self.skills)

    def contexts(self) -> list[MatchedContext]:
        """All hits of every context type, best first."""
        allc = [*self.resources, *self.memories, *self.skills]
        return sorted(allc, key=lambda m: m.score, reverse=True)

    def top(self, k: int, *, min_score: float | None = None) -> list[MatchedContext]:
        """The best ``k`` hits over every context type, each followed by its tree neighbours.

        Why here: ``search()`` fuses up to ``limit`` hits *per context type*, so a framework
        that promises ``k`` results must cut the merged list, and chunk diffusion adds
        neighbouring chunks (``found_by=NEIGHBOUR``) that come on top of the hits they belong
        to. Only hits that are not neighbours count against ``k``; the stable sort of
        :meth:`contexts` keeps each neighbour (it shares its hit's score) right after its hit.
        ``min_score`` drops weaker hits first (the descent is pruned by the threshold, but a
        global-search hit below it may still be in the result).
        """
        out: list[MatchedContext] = []
        primary = 0
        for m in self.contexts():
            if min_score is not None and m.score < min_score:
                continue
            if m.found_by is not FoundBy.NEIGHBOUR:
                primary += 1
                if primary > k:
                    break
            out.append(m)
        return out

    @property
    def rerank_fallback(self) -> bool:
        """True when any query of this result fell back from rerank to vector scores."""
        return any(q.rerank_fallback for q in self.query_results or [])


_M = TypeVar("_M", bound=BaseModel)
_new_model = object.__new__


def _slot_setters(base: type = BaseModel) -> tuple[Any, ...] | None:
    """The ``__set__`` of ``BaseModel``'s four slots (pydantic 2's layout), or ``None`` where
    a pydantic release lays its models out otherwise: then :data:`BUILT_MODELS` starts off
    and every model is validated, instead of ``import treehop`` failing."""
    slots = ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__")
    try:
        return tuple(base.__dict__[name].__set__ for name in slots)
    except (KeyError, AttributeError):
        return None


_SETTERS = _slot_setters()
_set_dict, _set_fields_set, _set_extra, _set_private = _SETTERS or (
    _new_model,
    _new_model,
    _new_model,
    _new_model,
)  # (never called while BUILT_MODELS is off)


def built_model(cls: type[_M], values: dict[str, Any], given: set[str]) -> _M:
    """The model ``cls(**{k: values[k] for k in given})`` where ``values`` holds every
    field of ``cls`` in declaration order, each of its declared type and the defaults as
    validation makes them (a new list per list default, a model default built), and no
    field has a validator that changes a value: the same object (fields, values, fields
    set), without the validation.

    Why: a find built four models of a few fields each through pydantic's validation (the
    query, the result, its tag-hop metrics, the find's result), ~5 us together warm and
    ~28 us of a find at 100k leaves, where every call runs cold after the graph search
    (bench/README.md, "Issue 35 round 18"); every value here comes from checked arguments
    or from other models. ``tests/test_lean_find.py`` compares each use with the validated
    model."""
    m = _new_model(cls)
    _set_dict(m, values)
    _set_fields_set(m, given)
    _set_extra(m, None)
    _set_private(m, None)
    return m


BUILT_MODELS = _SETTERS is not None
"""The four models a find builds of checked values are built directly (:func:`built_model`;
``False``: validated, as before; the tests and ``bench/bench_find_toggle.py --flag``
compare the two; off by itself where pydantic's layout is not the one
:func:`built_model` sets)."""


def assign(model: BaseModel, **values: Any) -> None:
    """``model.name = value`` for each of ``values`` (fields of the model, of their declared
    types, on a model that validates no assignment), as pydantic's handler for a field sets
    it: the value, and the field marked set; without its two calls per assignment (a find
    assigns ~9 fields of its result and tag-hop metrics). ``BUILT_MODELS`` off: assigned
    through pydantic, as before."""
    if not BUILT_MODELS:
        for name, value in values.items():
            setattr(model, name, value)
        return
    model.__dict__.update(values)
    model.__pydantic_fields_set__.update(values)


def tag_hop_metrics() -> TagHopMetrics:
    """``TagHopMetrics()`` (:func:`built_model`: every field its default)."""
    if not BUILT_MODELS:
        return TagHopMetrics()
    return built_model(
        TagHopMetrics,
        {
            "triggered": False,
            "trigger_reason": "",
            "tags_used": [],
            "hops_tried": 0,
            "subtrees_added": [],
            "hits_produced": 0,
            "hits_in_topk": 0,
        },
        set(),
    )


def query_result(query: TypedQuery) -> QueryResult:
    """``QueryResult(query=query)`` (:func:`built_model`) of a :class:`TypedQuery`."""
    if not BUILT_MODELS or type(query) is not TypedQuery:
        return QueryResult(query=query)
    return built_model(
        QueryResult,
        {
            "query": query,
            "matched_contexts": [],
            "searched_directories": [],
            "starting_points": [],
            "rounds": 0,
            "stop_reason": "",
            "nodes_scored": 0,
            "rerank_fallback": False,
            "rerank_fallback_reason": None,
            "rerank_calls": 0,
            "tag_hops": tag_hop_metrics(),
            "trace": [],
            "elapsed_ms": 0.0,
        },
        {"query"},
    )


def typed_query(query: str, context_type: ContextType | None) -> TypedQuery:
    """``TypedQuery(query=query, context_type=context_type)`` of a checked query string and
    context type (:func:`built_model`)."""
    if not BUILT_MODELS:
        return TypedQuery(query=query, context_type=context_type)
    return built_model(
        TypedQuery,
        {"query": query, "context_type": context_type, "intent": "", "priority": 3},
        {"query", "context_type"},
    )


def find_result(
    plan: QueryPlan | None,
    query_results: list[QueryResult],
    memories: list[MatchedContext],
    resources: list[MatchedContext],
    skills: list[MatchedContext],
) -> FindResult:
    """``FindResult(query_plan=plan, query_results=query_results)`` with the three lists
    then extended and ``total`` assigned, as the client built it (:func:`built_model`:
    ``query_results`` copied, as validation copies a list)."""
    if not BUILT_MODELS:
        out = FindResult(query_plan=plan, query_results=query_results)
        out.memories.extend(memories)
        out.resources.extend(resources)
        out.skills.extend(skills)
        out.total = len(memories) + len(resources) + len(skills)
        return out
    return built_model(
        FindResult,
        {
            "memories": memories,
            "resources": resources,
            "skills": skills,
            "query_plan": plan,
            "query_results": list(query_results),
            "total": len(memories) + len(resources) + len(skills),
        },
        {"query_plan", "query_results", "total"},
    )
