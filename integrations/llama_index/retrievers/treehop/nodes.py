"""Turn treehop hits into LlamaIndex ``NodeWithScore`` objects.

Each hit becomes a :class:`TextNode` whose ``id_`` is its ``viking://`` URI (stable across
queries, so LlamaIndex can deduplicate and cite it), whose relationships mirror the tree, and whose
metadata carries the provenance of the hit. Provenance is for programs (debugging, evaluation,
routing), not for the model: the keys are excluded from the text an LLM or an embedding model sees,
which would otherwise be padded with scores and flags.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from hashlib import sha256
from typing import Any

from llama_index.core.schema import (
    NodeRelationship,
    NodeWithScore,
    ObjectType,
    RelatedNodeInfo,
    TextNode,
)
from pydantic_core import to_jsonable_python

from treehop import uri as urimod
from treehop.filters import ShownField
from treehop.ingest.records import HIDDEN_FIELDS
from treehop.models import PROVENANCE_KEYS, MatchedContext

#: Provenance the LLM does not see (scores, flags, how the hit was found).
INTERNAL_PROVENANCE = (
    "level",
    "is_leaf",
    "parent_uri",
    "abstract",
    "score",
    "vector_score",
    "rerank_score",
    "retrieval_score",
    "rerank_fallback",
    "rerank_fallback_reason",
    "found_by",
    "found_via",
    "hop_tag",
    "hop_source",
    "query",
    "matched_queries",
    "chunk_index",
)
#: Where ``add_documents`` keeps a document's own ``excluded_*_metadata_keys`` (a
#: ``SimpleDirectoryReader`` excludes ``file_size``, ``creation_date``, ... from LLM text).
EXCLUDED_LLM_STORE = "treehop_excluded_llm"
EXCLUDED_EMBED_STORE = "treehop_excluded_embed"
#: Bookkeeping keys written by treehop's ingest that carry no meaning for a model.
INTERNAL_STORED = (
    "implicit",
    "chunks",
    "kind",
    "ref_doc_id",
    "treehop_id",
    "treehop_order",
    EXCLUDED_LLM_STORE,
    EXCLUDED_EMBED_STORE,
)
#: What LlamaIndex's ``node_to_metadata_dict`` adds when the vector store keeps a whole
#: node; storage plumbing, dropped from a retrieved node's metadata.
NODE_STORAGE_KEYS = ("_node_content", "_node_type", "document_id", "doc_id")


def stored_datetime(value: datetime) -> Any:
    """A ``datetime`` in metadata as every LlamaIndex store built on ``node_to_metadata_dict``
    keeps it: its ISO text as pydantic writes it (``"2024-01-31T12:00:00"``; ``Z`` for UTC),
    what the vector store stored for a datetime before any conversion here. Why a function
    (helper leftovers66b): ``add_documents`` (no pydantic dump on that path) refused a
    datetime, and a numpy ``datetime64`` (a pandas column) was refused on both paths; both
    now store the text the vector store does."""
    return to_jsonable_python(value)


EXCLUDED_LLM_KEYS = [*INTERNAL_PROVENANCE, *INTERNAL_STORED]
EXCLUDED_EMBED_KEYS = [*INTERNAL_PROVENANCE, *INTERNAL_STORED, "uri", "context_type"]
#: Every provenance key: the core's ``PROVENANCE_KEYS`` plus ``retrieval_score``.
PROVENANCE = (*PROVENANCE_KEYS, "retrieval_score")
_FILE_KEYS = ("file_name", "file_path")
FILE_NAME = ShownField(
    "file_name", over=_FILE_KEYS, fallback="name", when="source_path", uri=True, uri_part="name"
)
"""``metadata["file_name"]`` as every node shows it: a reader's own, else (neither file key
stored) the ``name`` of a file or text the writer stored with a ``source_path``. (A node with
a path and no name shows the path's last part; the writer names every node it stores.)"""
FILE_PATH = ShownField(
    "file_path", over=_FILE_KEYS, fallback="source_path", when="source_path", uri=True
)
"""``metadata["file_path"]`` as every node shows it: a reader's own, else ``source_path``."""
# (Where nothing names a file, both show the node's URI, ``file_name`` its last segment:
# every retrieved node has them, and a filter reads the value shown: ShownField.uri.)
SHOWN_FIELDS = (FILE_NAME, FILE_PATH)
"""The keys a filter reads as shown (:func:`treehop.filters.show_fields`)."""
_PROVENANCE_SET = frozenset(PROVENANCE)


def _sized(value: object) -> bool:
    """Whether ``value`` is a text or a container (whose emptiness says "nothing")."""
    return isinstance(value, str | list | tuple | dict)


#: Metadata key under which ``add_documents`` stores the LlamaIndex document id.
REF_DOC_ID_KEY = "ref_doc_id"


@dataclass(frozen=True)
class TreeLinks:
    """What the tree says around one hit (display URIs), fetched in one pass per retrieval.

    ``chunk_ids`` and ``ref_doc`` serve sources without a tree (a VikingDB knowledge base):
    when ``chunk_ids`` is given, PREVIOUS/NEXT link only to those chunk ids of the hit's file
    (the ones known to exist) instead of counting from 0; ``ref_doc`` is the SOURCE document
    when the hit's metadata names none.
    """

    children: Sequence[tuple[str, bool]] = ()
    chunk_count: int | None = None
    chunk_ids: frozenset[int] | None = None
    ref_doc: str | None = None


def provenance(m: MatchedContext) -> dict[str, Any]:
    """The provenance of one hit: the core's keys (shared with the LangChain integration), plus
    ``retrieval_score`` (the vector score before any rerank), in JSON-friendly types."""
    return {
        **m.provenance(),
        "retrieval_score": None if m.vector_score is None else float(m.vector_score),
    }


def _related(uri: str, **metadata: Any) -> RelatedNodeInfo:
    return RelatedNodeInfo(node_id=uri, node_type=ObjectType.TEXT, metadata=metadata)


def relationships(
    m: MatchedContext, links: TreeLinks | None
) -> dict[NodeRelationship, RelatedNodeInfo | list[RelatedNodeInfo]]:
    """PARENT/CHILD from the tree; SOURCE/PREVIOUS/NEXT where they are defined.

    SOURCE names the LlamaIndex document a node was ingested from (``add_documents``), so that
    ``ref_doc_id`` works as in any LlamaIndex index. PREVIOUS/NEXT link the chunks of one file.
    """
    rels: dict[NodeRelationship, RelatedNodeInfo | list[RelatedNodeInfo]] = {}
    if m.parent_uri:
        rels[NodeRelationship.PARENT] = _related(m.parent_uri)
    if links is not None and links.children:
        rels[NodeRelationship.CHILD] = [
            _related(uri, is_leaf=is_leaf) for uri, is_leaf in links.children
        ]
    ref = m.metadata.get(REF_DOC_ID_KEY)
    if not (isinstance(ref, str) and ref) and links is not None:
        ref = links.ref_doc
    if isinstance(ref, str) and ref:
        rels[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id=ref, node_type=ObjectType.DOCUMENT)
    if m.chunk_index is not None and urimod.CHUNK_MARK in m.uri:
        file_uri = m.uri.split("#", 1)[0]
        known = links.chunk_ids if links is not None else None
        if known is None:  # a treehop tree: chunks are numbered 0..count-1
            count = links.chunk_count if links is not None else None
            has_previous = m.chunk_index > 0
            has_next = count is not None and m.chunk_index + 1 < count
        else:
            has_previous = m.chunk_index - 1 in known
            has_next = m.chunk_index + 1 in known
        if has_previous:
            rels[NodeRelationship.PREVIOUS] = _related(
                f"{file_uri}{urimod.CHUNK_MARK}{m.chunk_index - 1}"
            )
        if has_next:
            rels[NodeRelationship.NEXT] = _related(
                f"{file_uri}{urimod.CHUNK_MARK}{m.chunk_index + 1}"
            )
    return rels


def _own_exclusions(stored: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """The exclusions the ingested document or node carried (its reader's choice)."""
    llm: list[str] = []
    embed: list[str] = []
    for key, out in ((EXCLUDED_LLM_STORE, llm), (EXCLUDED_EMBED_STORE, embed)):
        value = stored.get(key)
        if isinstance(value, list):
            out.extend(str(v) for v in value)
    blob = stored.get("_node_content")
    if isinstance(blob, str):
        # Any document's metadata may carry ``_node_content`` (a caller's ``add_resource``, a
        # record loaded from another store): nested past the recursion limit it raised
        # RecursionError, and a key list that is a number TypeError, out of every retrieve
        # that hit it; a string was read as its characters.
        try:
            data = json.loads(blob)
        except (ValueError, RecursionError):
            data = {}
        if isinstance(data, dict):
            for key, out in (
                ("excluded_llm_metadata_keys", llm),
                ("excluded_embed_metadata_keys", embed),
            ):
                keys = data.get(key)
                if isinstance(keys, list):
                    out.extend(str(v) for v in keys)
    return llm, embed


class HitNode(TextNode):
    """A hit's :class:`TextNode`, whose ``hash`` leaves out the provenance of the hit.

    LlamaIndex identifies a node's content by ``hash`` (its text and metadata): the
    ``QueryFusionRetriever`` sums a passage's reciprocal-rank (or relative) scores over its
    queries and retrievers by it. A hit's metadata carries the score and the query that found
    it, so the same passage found twice hashed twice: its scores were never summed, and a
    passage two queries agree on ranked below one a single query liked (over LlamaIndex's own
    stores, whose nodes carry their metadata as stored, it ranks first). Serialised, it is a
    plain ``TextNode``."""

    @classmethod
    def class_name(cls) -> str:
        return "TextNode"

    @property
    def hash(self) -> str:
        own = {k: v for k, v in self.metadata.items() if k not in _PROVENANCE_SET}
        identity = str(self.text) + str(own)
        return sha256(identity.encode("utf-8", "surrogatepass")).hexdigest()


def show_file_keys(kept: dict[str, Any], uri: str) -> list[str]:
    """Set ``file_name`` / ``file_path`` in ``kept`` (in place) as every retrieved node shows
    them (:data:`FILE_NAME`, :data:`FILE_PATH`: :meth:`~treehop.filters.ShownField.shown`,
    the rule the filters read); the keys set (shown twice: left out of the LLM's and the
    embedder's text), none where the node's own keys stand.

    Why: a file that add_resource / ``treehop index`` ingested stores ``name`` and
    ``source_path``, a ``SimpleDirectoryReader`` node ``file_name`` / ``file_path``, and
    ``node.metadata["file_name"]`` is how LlamaIndex code names a hit's file (KeyError over
    such a tree). ``file_name`` is the stored ``name``, never derived from the path (a node
    storing ``source_path`` without a ``name`` showed the path's last part, which the filter
    on ``file_name`` could not match: ``None`` there, as the filter sees it); a
    ``source_path`` that is not a string is shown as it is (helper attacks68). Where nothing
    names a file (a text added with no ``name=``, a memory), ``file_path`` is the node's URI
    and ``file_name`` its last segment (helper leftovers71b), and a filter on either selects
    the value shown (helper leftovers72b)."""
    # (each read before any is set: both are ``over`` both keys)
    shown = [
        (f.key, value) for f in SHOWN_FIELDS for computed, value in [f.shown(kept, uri)] if computed
    ]
    kept.update(shown)
    return [key for key, _ in shown]


#: Chunk metadata treehop's ingest writes (:mod:`treehop.ingest.tree_builder`): the chunk's
#: heading path as text and as a list, and the index of its passage's first chunk.
CHUNK_TITLE, HEADING_PATH, PASSAGE_START = "chunk_title", "heading_path", "passage_start"
#: A file's name and its path relative to the folder read (every file node treehop's ingest
#: writes stores both).
NAME, SOURCE_PATH = "name", "source_path"


def echoed_keys(metadata: Mapping[str, Any], text: str) -> list[str]:
    """The chunk keys the node's text already says or that mean nothing to a model, to leave
    out of the LLM's and the embedder's text (kept in ``metadata`` for programs).

    Why (helper usage84): a chunk that ``treehop index`` / ``add_resource`` stored leads its
    text with its heading path (``Authentication › Getting it working``), and every retrieved
    node wrote it into the prompt twice more, as ``chunk_title:`` and as the list
    ``heading_path: [...]``, with ``passage_start: 6`` (a chunk number, bookkeeping) below:
    about 50 tokens above every passage of a query engine's prompt. A ``chunk_title`` the
    text does not hold as a line of its own (a VikingDB knowledge base's point) stays visible.

    "Says" is the title as a whole line of the text: its first line, as a stored chunk
    leads, or a later one, where a slot joins the chunks before the hit's (helper
    leftovers74; review73's open item: the test was ``title in text``, so a short title
    that the text only mentions -- ``Pricing`` in "see Pricing below" -- was hidden from
    the LLM as if the text had said it).

    A file at the top of the folder ``treehop index`` read stores ``name`` and
    ``source_path`` alike (``name: ssl.txt`` over ``source_path: ssl.txt`` above every
    passage of lighttpd's doc folder: helper usage85): ``name`` is left out of the text
    there, and shown where the path says more (``examples/drupal``)."""
    keys = [PASSAGE_START] if PASSAGE_START in metadata else []
    title = metadata.get(CHUNK_TITLE)
    if isinstance(title, str) and title and "\n" not in title and _says_line(text, title):
        keys += [k for k in (CHUNK_TITLE, HEADING_PATH) if k in metadata]
    name = metadata.get(NAME)
    if isinstance(name, str) and name and name == metadata.get(SOURCE_PATH):
        keys.append(NAME)
    return keys


def _says_line(text: str, line: str) -> bool:
    """Whether ``line`` is a whole line of ``text`` (``\\n``-separated; linear)."""
    return (
        text == line
        or text.startswith(line + "\n")
        or text.endswith("\n" + line)
        or (f"\n{line}\n" in text)
    )


def to_node_with_score(m: MatchedContext, links: TreeLinks | None = None) -> NodeWithScore:
    """One hit as a ``NodeWithScore``; the score is treehop's final (reranked if any) score.

    The document's own ``excluded_llm_metadata_keys`` / ``excluded_embed_metadata_keys``
    (kept at ingest) are honoured on top of the provenance exclusions, so ``file_size`` or
    ``last_modified_date`` from a reader never reaches the LLM.
    """
    stored: Mapping[str, Any] = m.metadata
    own_llm, own_embed = _own_exclusions(stored)
    # (treehop's bookkeeping, never listed as fields to filter on, is left out as well)
    dropped = HIDDEN_FIELDS.union(NODE_STORAGE_KEYS)
    kept = {k: v for k, v in stored.items() if k not in dropped}
    shown_twice = show_file_keys(kept, m.uri)
    metadata = {**kept, **provenance(m)}
    # Empty values (a text added without a file: ``name: ``, ``source_path: ``, ``tags: []``)
    # stay in the metadata for programs but are not written into the LLM's or the embedder's
    # text: three blank lines above every passage of a prompt said nothing.
    empty = [k for k, v in metadata.items() if v is None or (_sized(v) and not v)]
    empty += echoed_keys(kept, m.slot_text)
    node = HitNode(
        id_=m.uri,
        text=m.slot_text,  # a memory turn with the turns its slot carries
        # (``metadata`` by its alias: the keyword a TextNode subclass's typed __init__ takes)
        extra_info=metadata,
        relationships=relationships(m, links),
        excluded_llm_metadata_keys=list(
            dict.fromkeys([*EXCLUDED_LLM_KEYS, *own_llm, *empty, *shown_twice])
        ),
        excluded_embed_metadata_keys=list(
            dict.fromkeys([*EXCLUDED_EMBED_KEYS, *own_embed, *empty, *shown_twice])
        ),
    )
    return NodeWithScore(node=node, score=m.score)
