"""The search options, declared once: a ``TypedDict`` for signatures, one validated model.

Why: the options of ``find()`` and ``search()`` used to be spelled out in each signature, in a
private options class, in a thirteen-argument positional call and again in every integration,
and they drifted (defaults differed, one source silently ignored two of them). Now
:class:`SearchKwargs` is what ``find(**options)``/``search(**options)`` accept (with
``Unpack``, so a type checker still rejects a misspelt keyword or a wrong type) and
:meth:`SearchOptions.build` is the one place each option is validated.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

from . import tags as tagmod
from .arguments import check_bool, check_mode
from .errors import InvalidQueryError
from .filters import MetadataFilter, TagFilter, and_time_window
from .models import RetrievalMode
from .postprocess import check_controls
from .redaction import listed
from .stores.base import build_frozen
from .timestamps import TimeLike
from .validation import check_dense_weight, check_limit, check_threshold, integral, shown_value


class SearchKwargs(TypedDict, total=False):
    """Keyword options shared by ``find()`` and ``search()`` (all optional).

    - ``target_uri``: one URI or a list; search only there (default: the context type roots).
    - ``limit``: how many hits, 1-1000 (default 10).
    - ``score_threshold``: drop hits scoring below it.
    - ``filter``: the metadata DSL (:mod:`treehop.filters`).
    - ``tags`` / ``tags_all``: keep nodes carrying any / all of the tags.
    - ``mode``: ``"quick"`` (``find`` default) or ``"thinking"`` (``search`` default; reranks
      when a reranker is configured).
    - ``dense_weight``: hybrid weight in [0.2, 1] (default: the config's).
    - ``include_directories``: ``None`` (default): a directory takes a result slot only when it
      holds content of its own (a skill, a folder with its own README/index page; not one
      whose overview is generated from its children) and beats every leaf collected below it
      (on the bench sets, directory slots otherwise cost up to 0.04 nDCG@10); ``True``: every
      matching directory may; ``False``: leaves only.
    - ``explain``: keep the descent's trace on the result.
    - ``retrieve_count`` / ``rerank_threshold`` / ``chunk_diffusion_count`` / ``chunk_group``:
      VikingDB's ``search_knowledge`` controls (:mod:`treehop.postprocess`).
    - ``collapse_chunks``: one slot per document (default: the config's, on); ``False`` returns
      every chunk as its own hit, as a vector store of chunks does.
    - ``since`` / ``until``: keep nodes whose ``timestamp`` lies in ``[since, until)``.
    - ``slot_chars``: how much text a slot over documents shows, in characters, 0-20,000
      (default: the config's ``question_context_chars`` for a question,
      ``document_context_chars`` otherwise). ``assemble_context`` sets it from its token
      budget when it runs :meth:`~treehop.Treehop.find` itself.
    """

    target_uri: str | Sequence[str] | None
    limit: int
    score_threshold: float | None
    filter: Mapping[str, Any] | MetadataFilter | None
    tags: str | Sequence[str] | None
    tags_all: str | Sequence[str] | None
    mode: RetrievalMode | str
    dense_weight: float | None
    include_directories: bool | None
    explain: bool
    retrieve_count: int | None
    rerank_threshold: float | None
    chunk_diffusion_count: int
    chunk_group: bool
    collapse_chunks: bool | None
    since: TimeLike | None
    until: TimeLike | None
    slot_chars: int | None


SEARCH_OPTIONS: frozenset[str] = frozenset(SearchKwargs.__annotations__)
"""Every option name :class:`SearchKwargs` declares."""


@dataclass(frozen=True)
class SearchOptions:
    """Validated search options (``target_uri`` is resolved by the client, not here)."""

    limit: int
    threshold: float | None
    metadata: MetadataFilter | None
    tags: TagFilter
    mode: RetrievalMode
    dense_weight: float | None
    include_directories: bool | None
    explain: bool
    retrieve_count: int | None
    rerank_threshold: float | None
    chunk_diffusion_count: int
    chunk_group: bool
    collapse_chunks: bool | None
    slot_chars: int | None = None
    context_tokens: int | None = None
    """Set by :meth:`~treehop.Treehop.assemble_context` (not an option): the token budget the
    result fills, which sizes a question's passage slots."""

    @classmethod
    def build(
        cls, options: SearchKwargs, *, default_mode: RetrievalMode, reranker_set: bool
    ) -> SearchOptions:
        """Validate every option once, before any work is done.

        Unknown names are refused here too: ``**kwargs`` built at run time (a framework's
        ``search_kwargs``) bypass the type checker.

        The answer for options of plain values (:func:`_plain_key`: the usual
        ``target_uri=..., limit=10``) is kept: a pure function of them, asked again with
        every find (~5 us of checks and objects, several times that on loaded cores). An
        invalid call raises every time (nothing is kept for it).
        """
        key = _plain_key(options, default_mode, reranker_set)
        if key is not None:
            kept = _BUILT.get(key)
            if kept is not None:
                return kept
        built = cls._build(options, default_mode=default_mode, reranker_set=reranker_set)
        if key is not None:
            if len(_BUILT) >= _BUILT_MAX:
                _BUILT.clear()
            _BUILT[key] = built
        return built

    @classmethod
    def _build(
        cls, options: SearchKwargs, *, default_mode: RetrievalMode, reranker_set: bool
    ) -> SearchOptions:
        """:meth:`build`, checked from scratch."""
        unknown = set(options) - SEARCH_OPTIONS
        if unknown:
            raise InvalidQueryError(
                f"unknown search option(s) {listed(unknown)}; "
                f"expected some of {', '.join(sorted(SEARCH_OPTIONS))}"
            )
        limit = check_limit(options.get("limit", 10))
        mode = check_mode(options.get("mode", default_mode))
        include_directories = options.get("include_directories")
        explain = options.get("explain", False)
        chunk_group = options.get("chunk_group", False)
        if include_directories is not None:
            check_bool(include_directories, "include_directories")
        check_bool(explain, "explain")
        check_bool(chunk_group, "chunk_group")
        collapse = options.get("collapse_chunks")
        if collapse is not None:
            check_bool(collapse, "collapse_chunks")
        diffusion = options.get("chunk_diffusion_count", 0)
        slot_chars = check_slot_chars(options.get("slot_chars"))
        rerank_active = mode is RetrievalMode.THINKING and reranker_set
        filter_spec = and_time_window(
            options.get("filter"), options.get("since"), options.get("until")
        )
        return build_frozen(
            cls,
            limit=limit,
            threshold=check_threshold(options.get("score_threshold")),
            metadata=MetadataFilter.parse(filter_spec),
            tags=TagFilter(
                tagmod.normalize_filter_labels(options.get("tags")),
                tagmod.normalize_filter_labels(options.get("tags_all")),
            ),
            mode=mode,
            dense_weight=check_dense_weight(options.get("dense_weight")),
            include_directories=include_directories,
            explain=explain,
            retrieve_count=check_controls(
                limit, options.get("retrieve_count"), rerank_active, diffusion
            ),
            rerank_threshold=check_threshold(options.get("rerank_threshold"), "rerank_threshold"),
            chunk_diffusion_count=diffusion,
            chunk_group=chunk_group,
            collapse_chunks=collapse,
            slot_chars=slot_chars,
        )


_PLAIN_TYPES: frozenset[type] = frozenset({str, int, bool, type(None), RetrievalMode})
"""Option value types whose :meth:`SearchOptions.build` answer may be kept: immutable, and
compared by value with their type (``True == 1``, ``"quick" == RetrievalMode.QUICK``: the
key holds each value's type, so neither answers for the other)."""

_PLAIN_MAX_CHARS = 512
"""A longer string value is checked every time instead of kept (bounds what the kept answers
hold)."""

_BUILT: dict[tuple[Any, ...], SearchOptions] = {}
_BUILT_MAX = 256
"""How many answers :meth:`SearchOptions.build` keeps (all dropped when full)."""


def _plain_key(
    options: Mapping[str, Any], default_mode: RetrievalMode, reranker_set: bool
) -> tuple[Any, ...] | None:
    """The key of a :meth:`SearchOptions.build` call whose answer may be kept, or ``None``:
    every value of a plain type (:data:`_PLAIN_TYPES`; a list, a filter dict, a float are
    checked every time) and no ``since`` / ``until`` (a relative time is read against the
    clock)."""
    if "since" in options or "until" in options:
        return None
    items = tuple(options.items())
    types = tuple(type(v) for _, v in items)
    for t, (_, v) in zip(types, items, strict=True):
        if t not in _PLAIN_TYPES or (t is str and len(v) > _PLAIN_MAX_CHARS):
            return None
    return (default_mode, reranker_set, items, types)


MAX_SLOT_CHARS = 20_000
"""The largest ``slot_chars`` (the config's ``question_context_chars`` bound)."""


def check_slot_chars(value: object) -> int | None:
    """``slot_chars``: ``None`` (the config's) or an integer in ``[0, MAX_SLOT_CHARS]``."""
    if value is None:
        return None
    n = integral(value)
    if n is None:
        raise InvalidQueryError(f"slot_chars must be an integer or None, got {shown_value(value)}")
    if not 0 <= n <= MAX_SLOT_CHARS:
        raise InvalidQueryError(
            f"slot_chars must be in [0, {MAX_SLOT_CHARS}], got {shown_value(value)}"
        )
    return n
