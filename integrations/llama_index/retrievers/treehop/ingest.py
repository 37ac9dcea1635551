"""Ingest LlamaIndex ``Document``s (or nodes) into the treehop tree.

A whole document becomes one file node of the tree (treehop summarises it and splits a long
text into chunks itself); documents or split nodes sharing one ``file_path`` become the ordered
chunks of one file (by ``page_label``, then ``start_char_idx``). Its place comes from its
metadata or its id; its metadata is stored on the nodes so that ``MetadataFilters`` select on it
and retrieved nodes carry it back; its LlamaIndex id is kept as ``ref_doc_id``, so retrieved
nodes point back to their source document (``node.ref_doc_id``) as in any LlamaIndex index.

An HTML page (``SimpleDirectoryReader`` reads ``.html`` files as their markup) is stored as
treehop stores an HTML file: converted to text with its headings, navigation dropped
(:func:`treehop.integration_kit.page_text`).

Everything is validated before anything is written: a bad document in the middle of a batch
does not leave half the batch ingested.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Unpack

from llama_index.core.schema import BaseNode, MetadataMode

from treehop import integration_kit as kit
from treehop.errors import IngestError
from treehop.ingest.records import IngestRecord, PlacementKwargs
from treehop.integration_kit import TreehopClient

from .nodes import (
    EXCLUDED_EMBED_STORE,
    EXCLUDED_LLM_STORE,
    PROVENANCE,
    REF_DOC_ID_KEY,
    stored_datetime,
)


def _records(documents: Sequence[BaseNode]) -> list[IngestRecord]:
    """The documents as framework-neutral records; the LlamaIndex-specific parts live here.

    The text is the node's own content (``MetadataMode.NONE``: LlamaIndex would otherwise
    prepend the metadata, which treehop stores and filters on separately). The LlamaIndex id
    is kept under ``ref_doc_id`` and is the place of last resort.
    """
    out: list[IngestRecord] = []
    # BaseNode is abstract; the check is an isinstance one, which is what is wanted.
    kinds = kit.documents_of(documents, BaseNode, "llama_index Document or node")  # type: ignore[type-abstract]
    for doc in kinds:
        # (a treehop retriever's node: placed by its uri / chunk_index and tagged by its tags,
        # its scores and search path not stored; kit.without_result_keys). A numpy number,
        # a path or a date as the JSON value it equals, a datetime as the vector store's
        # ISO text: kit.plain_metadata.
        own = kit.without_result_keys(doc.metadata, PROVENANCE, keep=kit.PLACEMENT_KEYS)
        own = kit.plain_metadata(own, datetimes=stored_datetime)
        meta = {**own, REF_DOC_ID_KEY: doc.ref_doc_id or doc.node_id}
        # The reader's exclusions (SimpleDirectoryReader: file_size, creation_date, ...) are
        # kept, so retrieved nodes hide the same keys from the LLM and embedder.
        if doc.excluded_llm_metadata_keys:
            meta[EXCLUDED_LLM_STORE] = list(doc.excluded_llm_metadata_keys)
        if doc.excluded_embed_metadata_keys:
            meta[EXCLUDED_EMBED_STORE] = list(doc.excluded_embed_metadata_keys)
        # An HTML page (SimpleDirectoryReader reads .html as its markup) as treehop stores
        # an HTML file: converted, navigation dropped.
        raw = doc.get_content(metadata_mode=MetadataMode.NONE)
        text = kit.page_text(raw, doc.metadata)
        if raw.strip() and not text.strip():
            raise IngestError(kit.no_page_text(len(out)))
        offset = getattr(doc, "start_char_idx", None)
        out.append(
            IngestRecord(
                text, meta, doc.node_id, float(offset) if isinstance(offset, int) else None
            )
        )
    return out


def add_documents(
    client: TreehopClient,
    documents: Sequence[BaseNode],
    *,
    show_progress: bool | kit.ProgressCallback = False,
    **placement: Unpack[PlacementKwargs],
) -> list[str]:
    """Ingest LlamaIndex ``Document``s (or nodes); return the URI of each, in order.

    Placement (``uri_key="uri"``, ``path_key="file_path"``, ``base_uri``, ``tags_key="tags"``,
    ``tags``, ``on_duplicate="chunks"``) follows :func:`treehop.ingest.records.add_records`;
    ``file_path`` is what ``SimpleDirectoryReader`` writes, and absolute paths are made
    relative to the directory the batch's files share, so no machine path reaches a URI.
    ``show_progress=True`` (LlamaIndex's name) reports the documents written on stderr (see
    :func:`treehop.integration_kit.progress_reporter`).
    """
    records = _records(documents)
    with kit.progress_reporter(show_progress, "treehop") as progress:
        return kit.add_records(client, records, placement, path_key="file_path", progress=progress)


async def aadd_documents(
    client: TreehopClient,
    documents: Sequence[BaseNode],
    *,
    show_progress: bool | kit.ProgressCallback = False,
    **placement: Unpack[PlacementKwargs],
) -> list[str]:
    """The async twin of :func:`add_documents` (embedding is awaited, never blocking the loop)."""
    records = _records(documents)
    with kit.progress_reporter(show_progress, "treehop") as progress:
        return await kit.aadd_records(
            client, records, placement, path_key="file_path", progress=progress
        )
