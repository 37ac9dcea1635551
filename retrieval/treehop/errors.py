"""Typed errors.

Every failure a caller can act on has its own class, so that integrations can map them
(for example to a LangChain ``ToolException``) without parsing messages.
"""

from __future__ import annotations

from typing import Any


class TreehopError(Exception):
    """Base class of every error treehop raises on purpose."""


class InvalidURIError(TreehopError, ValueError):
    """A URI is malformed, escapes its root, or reaches into another user's space."""


class InvalidQueryError(TreehopError, ValueError):
    """A query or a search parameter is out of its documented range."""


class InvalidFilterError(TreehopError, ValueError):
    """A metadata or tag filter does not follow the filter DSL."""


class DuplicateFilterKeyError(InvalidFilterError):
    """A filter written as JSON (``treehop --filter``, an MCP tool's ``filter``) gives one
    object the same key twice. JSON readers keep only the last value, so the filter run would
    not be the one written (``{"field": "team", "field": "x"}`` searched ``x``, and its error
    named ``x``): refused, naming the key (helper attacks90)."""


class InvalidFilterArgumentError(InvalidFilterError, InvalidQueryError):
    """A filter given as one call's argument among others (LangChain's
    ``TreehopRetriever.invoke(q, filter=...)``) does not follow the filter DSL. Both classes:
    an :class:`InvalidFilterError` as the same filter's refusal by a vector store's search
    is, and an :class:`InvalidQueryError` as the call's other refused arguments are (and as
    this refusal was before helper usage79), so code catching either still catches it."""


class InvalidTagError(TreehopError, ValueError):
    """A tag is empty, too long, or uses characters the tag format forbids."""


class NotFoundError(TreehopError, LookupError):
    """A URI names no node in the index."""


class SessionNotFoundError(NotFoundError):
    """A session id names no session of this user (a missing id and another user's read
    alike). A :class:`NotFoundError` whose remedy is not a URI: an agent told to list a
    directory cannot create the session it named."""


SEARCH_SESSION_HINT = (
    "search(session_id=...) reads a chat session, an id from create_session() (its messages "
    "added with add_message()); add_messages(session_id=...) names a stored conversation's "
    "session instead, whose turns search() and find() return as memories without a session_id"
)
"""What ``search()``'s missing-session error adds for a Python caller (the command line and
the MCP server replace it with their own ways to make a session)."""


class IndexCorruptError(TreehopError):
    """A saved index cannot be read back (missing or inconsistent files)."""


class EmbeddingError(TreehopError):
    """The embedder failed or returned vectors of the wrong shape."""


class RerankError(TreehopError):
    """A reranker failed; the retriever catches it and falls back to vector scores."""


class LLMError(TreehopError):
    """A chat model call failed or timed out."""


class StoreError(TreehopError):
    """A vector store rejected a request or could not be reached."""


class IngestError(TreehopError):
    """A path could not be ingested (missing, unreadable, or empty)."""


class IndexLockedError(StoreError):
    """Another writer (another process, or another store object on the same path) holds the
    index's writer lock and did not release it within the store's ``lock_timeout``."""


class IndexBeingCreatedError(StoreError):
    """The folder at an index's path holds no committed index yet while another writer holds
    its writer lock: an index is being made there (its first save has not committed). Read
    again once it has; a client that read the index that stood there before raises this
    instead of answering from the empty folder."""


class PartialWriteError(StoreError):
    """A caller's store failed in the middle of a write, after some of the write's
    ``upsert`` / ``delete`` calls had succeeded. ``written`` / ``deleted``: every URI those
    calls wrote or deleted during this write (the message shows the first few);
    ``discarded``: whether the store's ``discard_unsaved`` rolled them back (False: the store
    keeps them, having none, or its ``discard_unsaved`` failed or dropped nothing)."""

    def __init__(
        self,
        message: str,
        written: tuple[str, ...] = (),
        deleted: tuple[str, ...] = (),
        discarded: bool = False,
    ) -> None:
        super().__init__(message)
        self.written = written
        self.deleted = deleted
        self.discarded = discarded

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickle and copy rebuild an exception from ``args`` (the message alone): without
        # this, ``pickle.loads`` / ``copy.copy`` of one raised a raw TypeError (three missing
        # arguments), so a worker process's PartialWriteError could not reach its parent
        # (helper attacks76).
        message = self.args[0] if self.args else ""
        return (type(self), (message, self.written, self.deleted, self.discarded), self.__dict__)


class InputTooLargeError(IngestError, ValueError):
    """A file or text is over the ingest size limit (``treehop.ingest.loaders.MAX_FILE_BYTES``)."""


class ClientClosedError(TreehopError, RuntimeError):
    """The client was used after ``close()``, or the sync client was called from its own loop."""


class UnknownArgumentError(InvalidQueryError, TypeError):
    """A constructor was given a keyword it does not take, most often another API's name for
    one it does (``top_k`` for ``k``); the message names the nearest one it takes. A
    ``TypeError`` too, as Python's own "unexpected keyword argument" is, so code catching
    that still catches it; an ``InvalidQueryError`` as treehop's other refusals of an
    argument are."""


class UnsupportedUseError(TreehopError, TypeError):
    """An object used in a way it does not support (looping over a ``FindResult``). A
    ``TypeError`` too, as Python's own "not iterable" is, so ``except TypeError`` still
    catches it; a ``TreehopError`` so that only treehop's errors escape the library."""


class IndexRecoveryError(IndexCorruptError):
    """A ``strict=True`` open found damage that a lenient open would survive only by losing
    data: the current generation of the index is unreadable (the index would open at an older
    one) or the sessions index is damaged or missing. The :class:`RecoveryRecord` is on
    ``.record``."""

    def __init__(self, message: str, record: object = None) -> None:
        super().__init__(message)
        self.record = record


class TreehopWarning(UserWarning):
    """Base class of the warnings treehop emits (filter them with this category)."""


class RecoveryWarning(TreehopWarning):
    """An index or its sessions were opened in a recovered state: an older generation than
    the one last committed, or a sessions index rebuilt from the session files. The details
    are on the client's ``recovery`` list (see :class:`treehop.stores.base.RecoveryRecord`)."""


class InvalidConfigError(TreehopError, ValueError):
    """A configuration object (:class:`~treehop.config.RetrievalConfig`,
    :class:`~treehop.llm.openai_compatible.LLMConfig`, ...) was built, validated or assigned
    with a value out of its documented range, of the wrong type, or under an unknown name.

    ``errors`` holds pydantic's structured detail (``ValidationError.errors()`` without the
    offending input values, which may be secrets); the ``ValidationError`` itself is the
    ``__cause__``, rendered without input values too, while it holds at most ten problems
    (the ones the message names: past them a printed cause only adds length)."""

    def __init__(self, message: str, errors: list[dict[str, object]] | None = None) -> None:
        super().__init__(message)
        self.errors: list[dict[str, object]] = errors or []
