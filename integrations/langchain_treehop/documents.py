"""Treehop hits as LangChain ``Document``s, and LangChain ``Document``s into the tree.

Out: every hit becomes ``Document(id=uri, page_content=..., metadata=...)``. The metadata
carries the node's own metadata (what a loader or :func:`add_documents` stored, such as
``source``) overlaid with the provenance keys in :data:`PROVENANCE_KEYS`, so a program can
always tell *why* a document was returned (global search, child of a directory, sideways tag
hop), by which of the planned queries, and whether the rerank fell back to vector scores. The
provenance keys are always present (``None`` when they do not apply) so downstream code can
index them without ``.get``.

In: :func:`add_documents` places each ``Document`` in the tree by a URI or a path in its
metadata. An HTML page (raw, or flattened by a loader such as ``BSHTMLLoader``) is stored as
treehop stores an HTML file (:func:`treehop.integration_kit.page_text`). Everything is
validated before anything is written, so a bad document in the middle of a batch does not
leave half the batch ingested.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Unpack

from langchain_core.documents import Document

from treehop import MatchedContext
from treehop import integration_kit as kit
from treehop.errors import IngestError, InvalidQueryError
from treehop.filters import ShownField
from treehop.ingest.records import HIDDEN_FIELDS, ID_KEY, IngestRecord, PlacementKwargs
from treehop.integration_kit import TreehopClient
from treehop.models import PROVENANCE_KEYS as CORE_PROVENANCE_KEYS

from .filters import stored_time

ContentField = Literal["auto", "abstract", "overview", "content"]
CONTENT_FIELDS: tuple[str, ...] = ("auto", "abstract", "overview", "content")

PROVENANCE_KEYS = CORE_PROVENANCE_KEYS
"""Metadata keys every returned ``Document`` has; they override node metadata of that name."""
SOURCE = ShownField(
    "source", over=("source",), fallback="source_path", when="source_path", uri=True
)
"""``metadata["source"]`` as every retrieved Document shows it: the stored ``source``, else
the ``source_path`` the writer stored (the retriever's filters on ``source`` match it), else
the node's URI (a text added with no ``name=``, a memory: every retrieved Document has a
``source``; a filter on ``source`` reads the URI there: :attr:`~treehop.filters.ShownField.uri`)."""

STORE_SOURCE = ShownField(
    "source", over=("source", ID_KEY), fallback="source_path", when="source_path", uri=True
)
"""``metadata["source"]`` as :class:`~langchain_treehop.TreehopVectorStore` shows it: a
record the store added (it holds the passage-id key ``treehop_id``) exactly as added, with
no ``source`` where none was given (LangChain's standard tests compare the metadata whole,
as Chroma / FAISS return it); a node another writer stored (``treehop index``,
``add_resource``: no passage id) as the retriever shows it (:data:`SOURCE`). Why (helper
leftovers71d): a store opened on an index ``treehop index`` wrote showed ``name`` /
``source_path`` and no ``source``, and a ``format_docs`` reading ``d.metadata["source"]``
raised ``KeyError``. The store's filters read the same rule (:func:`~treehop.filters.show_fields`),
so ``{"source": "docs/a.md"}`` selects the node showing it."""

# The fallback order of each content_field: the chosen text first, then the next richer one,
# so page_content is never empty when the node has any text at all.
_TEXT_ORDER: dict[str, tuple[str, ...]] = {
    "auto": ("content", "overview", "abstract"),
    "content": ("content", "overview", "abstract"),
    "overview": ("overview", "abstract", "content"),
    "abstract": ("abstract", "overview", "content"),
}


def page_content_of(hit: MatchedContext, content_field: str = "auto") -> str:
    """The text of a hit for ``page_content``.

    ``auto`` (the default) gives a leaf's full content and a directory's overview: the most
    useful text for an LLM either way. A memory turn's content is its exchange: the turns
    its slot carries before and after it, one a line (:attr:`MatchedContext.slot_text`).
    ``abstract`` gives the one-line L0 summaries (cheap context for many hits); ``overview``
    the L1 summary.
    """
    order = _TEXT_ORDER.get(content_field)
    if order is None:
        raise InvalidQueryError(
            f"content_field must be one of {', '.join(CONTENT_FIELDS)}, got {content_field!r}"
        )
    for name in order:
        text: str = getattr(hit, name)
        if text:
            # a memory turn's slot also carries its neighbouring turns (memory_context_chars)
            return hit.slot_text if name == "content" else text
    return ""


def provenance_metadata(hit: MatchedContext) -> dict[str, Any]:
    """The provenance of one hit as JSON-friendly values (enums as their string values)."""
    return hit.provenance()


def context_to_document(hit: MatchedContext, content_field: str = "auto") -> Document:
    """One hit as a ``Document`` whose ``id`` is its (display) URI.

    treehop's own bookkeeping keys (a vector store's passage id and chunk order, implicit
    directories, where an overview came from: ``HIDDEN_FIELDS``, never listed as fields to
    filter on) are left out: ``treehop_order: [None, 700.0]`` was shown beside the metadata a
    loader stored, in every document of an index a vector store wrote."""
    own = {k: v for k, v in hit.metadata.items() if k not in HIDDEN_FIELDS}
    show_source(own, hit.uri, SOURCE)
    metadata = {**own, **provenance_metadata(hit)}
    return Document(id=hit.uri, page_content=page_content_of(hit, content_field), metadata=metadata)


def show_source(own: dict[str, Any], uri: str, field: ShownField) -> None:
    """Set ``own["source"]`` as ``field`` shows it (in place): the stored ``source``, else
    ``source_path``, else ``uri``; left as stored where one of ``field.over`` holds a value
    (:meth:`~treehop.filters.ShownField.shown`, the rule the filters read).

    One function for the retriever (:data:`SOURCE`) and the vector store
    (:data:`STORE_SOURCE`, whose ``over`` adds the passage-id key, so a record the store
    itself added keeps the metadata it was added with). Why shown: a file that
    add_resource / ``treehop index`` ingested stores ``source_path``, not a loader's
    ``source``, and a node naming no file (a text added with no ``name=``, a memory) stores
    neither; every LangChain loader sets ``source``, and a ``format_docs`` reading
    ``d.metadata["source"]`` failed with KeyError over such a tree (helpers leftovers71b,
    leftovers71d). A filter on ``source`` selects the value shown, the URI included
    (helper leftovers72b)."""
    computed, value = field.shown(own, uri)
    if computed:
        own[field.key] = value


# --------------------------------------------------------------------------- ingest


def _records(documents: Sequence[Document]) -> list[IngestRecord]:
    """The documents as framework-neutral records; the LangChain-specific checks live here."""
    out: list[IngestRecord] = []
    for i, doc in enumerate(kit.documents_of(documents, Document, "langchain Document")):
        if not isinstance(doc.page_content, str) or not doc.page_content.strip():
            raise IngestError(f"document {i}: page_content is empty")
        # An HTML page (raw, or flattened by its loader) as treehop stores an HTML file.
        text = kit.page_text(doc.page_content, doc.metadata)
        if not text.strip():
            raise IngestError(kit.no_page_text(i))
        # (a treehop retriever's Document: placed by its uri / chunk_index and tagged by its
        # tags, its scores and search path not stored; kit.without_result_keys). A numpy
        # number or array, a path (a ``source``) or a date as the JSON value it equals, a
        # datetime as epoch seconds, as the vector store keeps it: plain_metadata.
        own = kit.without_result_keys(doc.metadata, keep=kit.PLACEMENT_KEYS)
        meta = kit.plain_metadata(own, datetimes=stored_time)
        out.append(IngestRecord(text, meta, str(doc.id) if doc.id else None))
    return out


def add_documents(
    client: TreehopClient,
    documents: Sequence[Document],
    *,
    show_progress: bool | kit.ProgressCallback = False,
    **placement: Unpack[PlacementKwargs],
) -> list[str]:
    """Ingest LangChain ``Document``s into the tree; returns the URI of each, in order.

    Placement (``uri_key="uri"``, ``path_key="source"``, ``base_uri``, ``tags_key="tags"``,
    ``tags``, ``on_duplicate="chunks"``) follows :func:`treehop.ingest.records.add_records`:
    a full URI in ``metadata["uri"]``, else the ``source`` a LangChain loader writes placed
    under ``base_uri`` segment by segment, else ``Document.id``. Several documents sharing one
    source (a loader's pages, a splitter's chunks) become the ordered chunks of that file (by
    ``page`` then ``start_index``). The rest of the metadata is stored on the nodes, so
    ``metadata_filter`` selects on it and retrieved ``Document``s carry it back. The whole
    batch is validated before anything is written. ``show_progress=True`` reports the
    documents written on stderr (see :func:`treehop.integration_kit.progress_reporter`).
    """
    records = _records(documents)
    with kit.progress_reporter(show_progress, "treehop") as progress:
        return kit.add_records(client, records, placement, path_key="source", progress=progress)


async def aadd_documents(
    client: TreehopClient,
    documents: Sequence[Document],
    *,
    show_progress: bool | kit.ProgressCallback = False,
    **placement: Unpack[PlacementKwargs],
) -> list[str]:
    """The async twin of :func:`add_documents` (embedding is awaited, never blocking the loop)."""
    records = _records(documents)
    with kit.progress_reporter(show_progress, "treehop") as progress:
        return await kit.aadd_records(
            client, records, placement, path_key="source", progress=progress
        )
