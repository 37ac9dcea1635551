"""``TreehopVectorStore``: a LangChain ``VectorStore`` whose searches run treehop's tree search.

What a user of ``langchain-chroma`` or ``langchain-qdrant`` expects is all here:
``from_texts`` / ``from_documents``, ``add_documents(ids=...)`` as an upsert, ``delete(ids)``,
``get_by_ids``, ``similarity_search(_with_score)``, ``similarity_search_by_vector``,
``max_marginal_relevance_search`` and ``as_retriever(search_type=..., search_kwargs=...)``,
each with a native async twin (awaiting :class:`treehop.AsyncTreehop`, never a thread pool
running the sync path).

How documents become a tree (see :class:`treehop.ingest.records.PassageStore`): documents that
share a ``source`` (a PDF's pages, a splitter's chunks) become the ordered chunks of one file
node under ``base_uri`` (ordered by ``page`` then ``start_index``), so the descent can pick the
document before the passage; a document without a source is a leaf ``<base_uri>/<id>``; a
document without an id gets a stable one derived from its text and metadata. Absolute source
paths are made relative (no machine paths in URIs).

Searching: every search is a treehop ``find()`` scoped to ``base_uri``: the global vector
step, the best-first descent with score propagation, tag hops. It returns passages (leaves)
only by default, like any vector store; ``include_directories=True`` adds directory and file
overviews. ``search_kwargs`` / keyword arguments: ``filter`` (a Chroma-style dict such as
``{"source": "a.pdf", "page": {"$gte": 2}}`` or treehop's DSL), ``target_uri`` (a subtree:
a ``viking://`` URI or a path under ``base_uri``), ``tags`` / ``tags_all``,
``score_threshold``, ``dense_weight``, ``retrieval_mode``, ``include_directories``.
A filter on a metadata field no stored node has is an
:class:`~treehop.errors.InvalidFilterError`, not a silent ``[]``.

An HTML page is stored as its text (treehop's HTML conversion, navigation dropped), so its
markup never reaches the embedding, the abstracts or what a search returns; any other text is
stored as given. A piece of a raw page holding navigation alone (a local table of contents
or a footer cut off by a text splitter) is stored and returned as its visible link text but
embedded as its markup (its words are other sections' titles: it ranks where it did), and
markup with no visible character (``<!DOCTYPE html>``, opening tags alone) is stored as given,
so its id still exists; the LlamaIndex store does the same.
Returned ``Document``s carry exactly the metadata that was added (plus nothing), and ``id`` =
the id given (or generated) at add time, as LangChain's standard tests require. A node another
writer stored (``treehop index``, ``add_resource``) shows ``source`` as the retriever shows it
(``documents.STORE_SOURCE``), and a filter on ``source`` reads that value.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar, Unpack, cast

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import VectorStore, VectorStoreRetriever
from langchain_core.vectorstores.utils import maximal_marginal_relevance

from treehop import AsyncTreehop, MatchedContext, Treehop
from treehop import integration_kit as kit
from treehop.arguments import check_bool
from treehop.errors import InvalidQueryError, UnknownArgumentError
from treehop.ingest.records import INTERNAL_KEYS, Passage
from treehop.integration_kit import TreehopClient, reject_extra
from treehop.redaction import first_few, listed
from treehop.search_options import SearchKwargs
from treehop.validation import MAX_LIMIT, check_query, shown_value

from .documents import STORE_SOURCE, show_source
from .embeddings import TreehopEmbeddings, as_treehop_embedder
from .filters import stored_time, to_treehop_filter

T = TypeVar("T")
DEFAULT_BASE_URI = "viking://resources"
_EMBEDDING = kit.EmbeddingSlot(as_treehop_embedder, "embeddings", "embedding")
_SEARCH_SYNONYMS = {
    "top_k": "k",
    "similarity_top_k": "k",
    "limit": "k",
    "n_results": "k",
    "metadata_filter": "filter",
    "filters": "filter",
    "where": "filter",
}
"""Other APIs' names for a search's keywords (LlamaIndex's ``similarity_top_k``, Chroma's
``n_results`` and ``where``, the retriever's ``metadata_filter``)."""
_SEARCH_KWARGS = frozenset(
    {
        "filter",
        "target_uri",
        "tags",
        "tags_all",
        "score_threshold",
        "dense_weight",
        "retrieval_mode",
        "include_directories",
    }
)
_MMR_ARGS = frozenset({"fetch_k", "lambda_mult"})
_MMR_ONLY = (
    "MMR's, taken by max_marginal_relevance_search(query, k=4, "
    "fetch_k=20, lambda_mult=0.5) and as_retriever(search_type='mmr', search_kwargs=...); "
    "a similarity search takes neither: leave it out (refused, not ignored, so a search "
    "meant as MMR never runs as a plain one in silence)."
)
"""The hint for ``fetch_k`` / ``lambda_mult`` given to a similarity search."""

_SEARCH_MEANT = sorted(_SEARCH_KWARGS | {"k", "fetch_k", "lambda_mult"})
"""What an unknown search keyword may have meant: the search arguments and the methods'
own (``k``; ``fetch_k``, ``lambda_mult`` of an MMR search)."""

_PER_SEARCH = (
    "a search's argument, given per call: similarity_search(query, k=4, filter={...}), or "
    "as_retriever(search_kwargs={'k': 4}) for a retriever"
)
_SEARCH_NAMES = {
    *_SEARCH_KWARGS,
    *("k", "top_k", "similarity_top_k", "limit", "search_kwargs", "search_type"),
    *("fetch_k", "lambda_mult"),
}
_ELSEWHERE = dict.fromkeys(_SEARCH_NAMES, _PER_SEARCH)
_AS_SEARCH_KWARG = {"top_k": "k", "similarity_top_k": "k", "limit": "k"}
"""Other APIs' names for a search's ``k``, as ``search_kwargs`` spells it."""
"""Where a search's keyword given to the constructor goes (``TreehopVectorStore(c, k=5)``:
"store: unknown argument(s) ['k']" named no way to ask for five)."""


def _relevance_threshold(value: object) -> None:
    """A relevance ``score_threshold`` (``similarity_search_with_relevance_scores``, the
    ``similarity_score_threshold`` retriever) must be a number in [0, 1], as LangChain
    documents it. Why (helper leftovers63b): LangChain's base class applies it itself after
    the search, unchecked: ``True`` was a floor of 1, NaN, ``inf`` and ``3.0`` answered
    nothing (with a logged warning), ``"0.3"`` raised a raw ``TypeError``, and
    ``10**5000`` a ``ValueError`` from the warning's own formatting."""
    if value is None:
        return
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not 0.0 <= value <= 1.0  # (False for NaN)
    ):
        raise InvalidQueryError(
            f"score_threshold must be a number in [0, 1] (a relevance score), "
            f"got {shown_value(value)}"
        )


class TreehopVectorStore(kit.IndexedStore, VectorStore):
    """LangChain vector store over a treehop tree.

    Setup:
        .. code-block:: bash

            pip install -e ".[langchain,local]"   # from a clone of the treehop repository

    Instantiate:
        .. code-block:: python

            from langchain_treehop import TreehopVectorStore

            store = TreehopVectorStore(embedding=embeddings, path="./index")
            # or over an open client: TreehopVectorStore(client=Treehop("./index"))

    Add, search, delete:
        .. code-block:: python

            ids = store.add_documents(splitter.split_documents(pages))
            docs = store.similarity_search("how are tokens validated?", k=4)
            docs = store.max_marginal_relevance_search("tokens", k=4, fetch_k=20)
            store.delete(ids[:2])
            retriever = store.as_retriever(search_type="mmr", search_kwargs={"k": 3})

    Args:
        embedding: a LangChain ``Embeddings``; used to open a client when ``client`` is not
            given (``None`` with no client: treehop's offline default, MiniLM).
        client: an open :class:`treehop.Treehop` or :class:`treehop.AsyncTreehop`.
        path: an index directory to open when no client is given (``None``: in memory).
        base_uri: the subtree this store writes to and searches in.
        path_key: the metadata key naming a document's source file.
        source_root: absolute source paths are made relative to it (default: to the
            directory all sources of a batch share).
        tagger: passed to the client opened here (``"auto"``: keyword tags, ``None``: none).
    """

    def __init__(
        self,
        embedding: Embeddings | TreehopClient | None = None,
        *,
        client: TreehopClient | None = None,
        path: str | os.PathLike[str] | None = None,
        **options: Unpack[kit.PassageIndexKwargs],
    ) -> None:
        if client is None and isinstance(embedding, Treehop | AsyncTreehop):
            # ``TreehopVectorStore(Treehop(path))``, as LlamaIndex's TreehopVectorStore takes
            # its client first. Why: here it was "embeddings must be a langchain_core
            # Embeddings, got Treehop"; a client is never an embedding model.
            client, embedding = embedding, None
        given: Embeddings | None = cast("Embeddings | None", embedding)
        model = given
        if (
            isinstance(embedding, TreehopEmbeddings)
            and client is not None
            and kit.as_async(kit.check_client(client)).embedder.name == embedding.embedder.name
        ):
            model = None  # the client already embeds with this very treehop embedder
        self._index = kit.PassageIndex.open(
            client,
            path,
            model,
            _EMBEDDING,
            options,
            path_key="source",
            owner="TreehopVectorStore",
            takes=("embedding", "client", "path"),
            elsewhere=_ELSEWHERE,
        )
        self._passages = self._index.passages
        self._embedding = given

    # ------------------------------------------------------------------ plumbing
    @property
    def base_uri(self) -> str:
        return self._passages.base_display

    @property
    def embeddings(self) -> Embeddings:
        """The LangChain model this store embeds with: the one given, the one the client's
        embedder wraps, or the client's treehop embedder (the offline MiniLM by default) as
        :class:`~langchain_treehop.TreehopEmbeddings`."""
        if self._embedding is not None:
            return self._embedding
        inner = getattr(self.aclient.embedder, "embeddings", None)
        if isinstance(inner, Embeddings):
            return inner
        self._embedding = TreehopEmbeddings(self.aclient.embedder)
        return self._embedding

    # ------------------------------------------------------------------ writes
    def _passages_of(
        self,
        texts: Iterable[str],
        metadatas: Sequence[dict[str, Any]] | None,
        ids: Sequence[str | None] | None,
    ) -> list[Passage]:
        # LangChain's add_documents passes one id per document, None where a document has
        # none (those get a stable generated id).
        if isinstance(texts, (str, bytes)) or not isinstance(texts, Iterable):
            raise InvalidQueryError("texts must be a list of strings, not one string")
        texts = list(texts)
        for what, seq in (("metadatas", metadatas), ("ids", ids)):
            if seq is not None and (isinstance(seq, (str, bytes)) or not isinstance(seq, Sequence)):
                raise InvalidQueryError(f"{what} must be a list (or None)")
        if metadatas is not None and not all(
            m is None or isinstance(m, Mapping) for m in metadatas
        ):
            raise InvalidQueryError("metadatas must be dicts")
        if metadatas is not None and len(metadatas) != len(texts):
            raise InvalidQueryError(f"{len(metadatas)} metadatas for {len(texts)} texts")
        if ids is not None and len(ids) != len(texts):
            raise InvalidQueryError(f"{len(ids)} ids for {len(texts)} texts")
        out: list[Passage] = []
        for i, text in enumerate(texts):
            given = metadatas[i] if metadatas is not None and metadatas[i] else {}
            # (a treehop retriever's Document copied here: its scores and place in the other
            # search are not stored as the copy's metadata; kit.without_result_keys). A numpy
            # number or array, a path or a date as the JSON value it equals, a datetime (at
            # any depth) as epoch seconds: kit.plain_metadata, stored_time.
            # (a dict of its own: a read-only Mapping is taken, and the caller's is kept)
            meta = dict(kit.plain_metadata(kit.without_result_keys(given), datetimes=stored_time))
            pid = ids[i] if ids is not None else None
            # An HTML page (a TextLoader or RecursiveUrlLoader page) is stored as its text;
            # a piece holding navigation alone (a raw page's contents or footer, cut off by
            # a text splitter) shown as its link text but embedded as the markup it came as;
            # markup with no visible character as given (kit.stored_page_text): a batch of
            # split raw pages was refused, "the text is empty", about visible markup (usage71),
            # then stored 171 contents chunks of Jinja's manual as raw tags (usage74/75).
            page, shown_only = (
                kit.stored_page_text(text, meta) if isinstance(text, str) else (text, False)
            )
            pid_text = str(pid) if pid is not None else None
            out.append(Passage(page, meta, pid_text, text if shown_only else None))
        return out

    def add_texts(
        self, texts: Iterable[str], metadatas: list[dict[Any, Any]] | None = None, **kwargs: Any
    ) -> list[str]:
        """Insert or replace texts by id (``ids=``, ``tags=``); returns the ids (generated ones
        are stable). ``batch_size`` (LangChain's indexing API passes it) is accepted and each
        call is one upsert, so ``langchain_core.indexing.index`` with a record manager works;
        a file whose chunks arrive over several calls keeps them all. ``show_progress=True``
        reports the embedding on stderr (a tqdm bar on a terminal or in a notebook, else plain
        lines); a callable gets the core's ``(stage, done, total)`` calls instead."""
        return self._run(self.aadd_texts(texts, metadatas, **kwargs))

    async def aadd_texts(
        self,
        texts: Iterable[str],
        metadatas: list[dict[Any, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        tags: str | Sequence[str] | None = None,
        show_progress: bool | kit.ProgressCallback = False,
        batch_size: int | None = None,
        **kwargs: Any,
    ) -> list[str]:
        reject_extra(kwargs, "aadd_texts")
        # LangChain's indexing API (``index`` / ``aindex``) passes ``batch_size`` and has
        # already cut the documents into batches of that size; each call is one upsert here
        # (the embedder batches its own calls), so the value is checked and not used.
        if batch_size is not None and (
            isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1
        ):
            raise InvalidQueryError(
                f"batch_size must be a positive integer, got {shown_value(batch_size)}"
            )
        passages = self._passages_of(texts, metadatas, ids)
        with kit.progress_reporter(show_progress, "treehop") as progress:
            return await self._passages.aupsert(passages, tags=tags, progress=progress)

    def add_documents(self, documents: list[Document], **kwargs: Any) -> list[str]:
        """As :meth:`aadd_documents` (LangChain's own reads ``doc.id`` before any check)."""
        return self._run(self.aadd_documents(documents, **kwargs))

    async def aadd_documents(
        self,
        documents: list[Document],
        *,
        current_time: dt.datetime | None = None,
        **kwargs: Any,
    ) -> list[str]:
        """``current_time``: what LangChain's ``TimeWeightedVectorStoreRetriever`` passes on
        from its own ``add_documents(docs, current_time=...)``, after it stamped the
        documents' ``created_at`` / ``last_accessed_at`` with it; checked, then not used
        (the stamps arrive in the metadata, stored as epoch seconds)."""
        if current_time is not None and not isinstance(current_time, dt.datetime):
            raise InvalidQueryError(
                f"current_time must be a datetime, got {type(current_time).__name__}"
            )
        if isinstance(documents, str | bytes) or not isinstance(documents, Sequence):
            raise InvalidQueryError("documents must be a list of langchain Document objects")
        bad = next((i for i, d in enumerate(documents) if not isinstance(d, Document)), None)
        if bad is not None:
            raise InvalidQueryError(
                f"documents must be Document objects, got {type(documents[bad]).__name__}"
            )
        if "ids" not in kwargs:
            ids = [doc.id for doc in documents]
            if any(ids):
                kwargs["ids"] = ids
        return await self.aadd_texts(
            [d.page_content for d in documents], [d.metadata for d in documents], **kwargs
        )

    def delete(self, ids: list[str] | None = None, **kwargs: Any) -> bool | None:
        """Delete by id (unknown ids are ignored; ``[]`` deletes nothing). Returns ``True``.

        ``ids=None`` is an :class:`InvalidQueryError`: :meth:`clear` empties the store. Why:
        LangChain's base class documents ``None`` as "delete all", but its own
        ``InMemoryVectorStore.delete()`` deletes nothing and FAISS, Weaviate and Astra DB
        refuse it ("No ids provided to delete."); this store emptied the whole index, so a
        ``store.delete()`` carried over from any of them lost every document.

        An id naming a node this store did not write (a file ``treehop index`` or
        ``add_resource`` stored under ``base_uri``, one of its chunks, a directory: the ids
        its searches give such nodes) is an :class:`InvalidURIError`, and nothing is deleted.
        Why: ``delete([<file URI>])`` returned ``True`` and left the file, which searches and
        ``get_by_ids`` kept returning (helpers attacks86, leftovers73b; LlamaIndex's
        ``delete_nodes`` refuses the same ids). ``Treehop.remove`` removes a file."""
        return self._run(self.adelete(ids, **kwargs))

    async def adelete(self, ids: list[str] | None = None, **kwargs: Any) -> bool | None:
        reject_extra(kwargs, "adelete")
        if ids is None:
            raise InvalidQueryError(
                "delete() needs the ids to delete (delete(None) would empty the store: "
                "InMemoryVectorStore deletes nothing there and FAISS refuses it); "
                "store.clear() deletes every document under base_uri"
            )
        await self._passages.adelete(ids)
        return True

    def clear(self) -> None:
        """Delete every document under ``base_uri`` (what ``delete(None)`` did; LlamaIndex's
        ``TreehopVectorStore.clear`` is the same call)."""
        self._run(self.aclear())

    async def aclear(self) -> None:
        """:meth:`clear`, awaiting the native async client."""
        await self._passages.aclear()

    def get_by_ids(self, ids: Sequence[str], /) -> list[Document]:
        """The documents of ``ids`` that exist, in the order asked: the store's own ids, and
        the URI (a Document's ``id``) of a node another writer stored under ``base_uri``
        (``treehop index``), shown as the store's searches show it."""
        nodes = self._run(self._index.get(ids))
        return [self._node_document(n) for n in nodes]

    async def aget_by_ids(self, ids: Sequence[str], /) -> list[Document]:
        nodes = await self._index.get(ids)
        return [self._node_document(n) for n in nodes]

    def _node_document(self, node: Any) -> Document:
        uri = self.aclient.display(node.uri)
        return Document(
            id=self._passages.passage_id(node, uri),
            page_content=node.content,
            metadata=_shown_metadata(node.metadata, uri),
        )

    # ------------------------------------------------------------------ search
    def _options(self, kwargs: dict[str, Any]) -> SearchKwargs:
        """LangChain's search keywords as treehop's options (unknown keywords are errors)."""
        unknown = sorted(set(kwargs) - _SEARCH_KWARGS)
        if unknown:
            # (the methods' own parameters named too: a user who typed `fetchk` in an MMR
            # search was shown a list without `fetch_k`; each unknown name with the one
            # meant, an UnknownArgumentError as the constructor's: helper leftovers62b)
            # (each name as an error shows it, the first few of them (listed): the list
            # printed names as given, a registered key and a megabyte name whole; attacks73)
            # (an MMR argument in a similarity search is no typo: it said "'fetch_k': did
            # you mean 'fetch_k'?", where as_retriever(search_kwargs={"k": 4, "fetch_k":
            # 20}) is a tutorial's line kept when search_type went back to "similarity")
            head = first_few(unknown)[0]
            mmr = [u for u in head if u in _MMR_ARGS]
            hints = f" {', '.join(mmr)}: {_MMR_ONLY}" if mmr else ""
            hints += "".join(
                f" {kit.shown_name(u)}: did you mean {meant!r}?"
                for u in head
                if u not in _MMR_ARGS
                and (meant := kit.did_you_mean(u, _SEARCH_MEANT, _SEARCH_SYNONYMS)) is not None
            )
            raise UnknownArgumentError(
                f"unknown search argument(s) [{listed(unknown, kit.shown_name)}];{hints} "
                "the search arguments are "
                f"{', '.join(sorted(_SEARCH_KWARGS))}, beside the methods' own k (and "
                "fetch_k, lambda_mult in the max_marginal_relevance_search methods and "
                "search_type='mmr')"
            )
        dirs = kwargs.get("include_directories")  # (not bool(): "false" turned them on)
        opts: SearchKwargs = {
            "filter": to_treehop_filter(kwargs.get("filter")),
            "tags": kwargs.get("tags"),
            "tags_all": kwargs.get("tags_all"),
            "dense_weight": kwargs.get("dense_weight"),
            "include_directories": dirs is not None and check_bool(dirs, "include_directories"),
            "target_uri": self._targets(kwargs.get("target_uri")),
        }
        if kwargs.get("score_threshold") is not None:
            opts["score_threshold"] = kwargs["score_threshold"]
        if kwargs.get("retrieval_mode") is not None:
            opts["mode"] = kwargs["retrieval_mode"]
        return opts

    async def _afind(
        self, query: str, k: int, kwargs: dict[str, Any], vector: Sequence[float] | None = None
    ) -> list[MatchedContext]:
        # (``source`` filtered as each Document shows it: STORE_SOURCE)
        return await self._index.search(
            query, k, self._options(kwargs), vector, shown=(STORE_SOURCE,)
        )

    def _to_document(self, hit: MatchedContext) -> Document:
        return Document(
            id=self._passages.passage_id(hit.metadata, hit.uri),
            page_content=hit.content or hit.overview or hit.abstract,
            metadata=_shown_metadata(hit.metadata, hit.uri),
        )

    async def asimilarity_search_with_score(
        self, query: str, k: int = 4, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        """Documents and their treehop scores (cosine with score propagation; higher is
        closer)."""
        hits = await self._afind(query, k, kwargs)
        return [(self._to_document(h), float(h.score)) for h in hits]

    def similarity_search_with_score(
        self, query: str, k: int = 4, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        return self._run(self.asimilarity_search_with_score(query, k, **kwargs))

    def similarity_search(self, query: str, k: int = 4, **kwargs: Any) -> list[Document]:
        return [d for d, _ in self.similarity_search_with_score(query, k, **kwargs)]

    async def asimilarity_search(self, query: str, k: int = 4, **kwargs: Any) -> list[Document]:
        return [d for d, _ in await self.asimilarity_search_with_score(query, k, **kwargs)]

    async def asimilarity_search_by_vector_with_score(
        self, embedding: list[float], k: int = 4, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        """Search with an embedding you already have (no lexical scoring: there is no text)."""
        hits = await self._afind("", k, kwargs, vector=embedding)
        return [(self._to_document(h), float(h.score)) for h in hits]

    async def asimilarity_search_with_score_by_vector(
        self, embedding: list[float], k: int = 4, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        """The name ``InMemoryVectorStore``, FAISS, PGVector and Qdrant give this search (a
        script moved from one of them called it and met an ``AttributeError``)."""
        return await self.asimilarity_search_by_vector_with_score(embedding, k, **kwargs)

    def similarity_search_with_score_by_vector(
        self, embedding: list[float], k: int = 4, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        """Documents and scores for an embedding you already have (as
        :meth:`similarity_search_with_score`, with no lexical scoring: there is no text)."""
        return self._run(self.asimilarity_search_by_vector_with_score(embedding, k, **kwargs))

    def similarity_search_by_vector(
        self, embedding: list[float], k: int = 4, **kwargs: Any
    ) -> list[Document]:
        pairs = self._run(self.asimilarity_search_by_vector_with_score(embedding, k, **kwargs))
        return [d for d, _ in pairs]

    async def asimilarity_search_by_vector(
        self, embedding: list[float], k: int = 4, **kwargs: Any
    ) -> list[Document]:
        pairs = await self.asimilarity_search_by_vector_with_score(embedding, k, **kwargs)
        return [d for d, _ in pairs]

    def similarity_search_with_relevance_scores(
        self, query: str, k: int = 4, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        """LangChain's, its ``score_threshold`` checked first (:func:`_relevance_threshold`)."""
        _relevance_threshold(kwargs.get("score_threshold"))
        return super().similarity_search_with_relevance_scores(query, k, **kwargs)

    async def asimilarity_search_with_relevance_scores(
        self, query: str, k: int = 4, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        _relevance_threshold(kwargs.get("score_threshold"))
        return await super().asimilarity_search_with_relevance_scores(query, k, **kwargs)

    def _select_relevance_score_fn(self) -> Any:
        # treehop scores are cosine similarities (propagated through the tree): already
        # "higher is more relevant"; clipped into [0, 1] as LangChain's relevance API wants.
        return lambda score: float(min(1.0, max(0.0, score)))

    # ------------------------------------------------------------------ MMR
    async def _ammr(
        self,
        query: str,
        vector: Sequence[float] | None,
        k: int,
        fetch_k: int,
        lambda_mult: float,
        kwargs: dict[str, Any],
    ) -> list[Document]:
        # the whole call is checked before the query is embedded (a non-string query reached
        # the embedder; a non-number lambda_mult raised TypeError in the comparison)
        if isinstance(lambda_mult, bool) or not isinstance(lambda_mult, int | float):
            raise InvalidQueryError(
                f"lambda_mult must be a number in [0, 1], got {shown_value(lambda_mult)}"
            )
        if not 0.0 <= lambda_mult <= 1.0:
            raise InvalidQueryError(
                f"lambda_mult must be in [0, 1], got {shown_value(lambda_mult)}"
            )
        if isinstance(fetch_k, bool) or not isinstance(fetch_k, int) or fetch_k < 1:
            raise InvalidQueryError(
                f"fetch_k must be a positive integer, got {shown_value(fetch_k)}"
            )
        if k == 0 and type(k) is int:  # (as the search: checked, then [] unsearched)
            return [self._to_document(h) for h in await self._afind(query, 0, kwargs, vector)]
        k = await self._index.checked_k(k, "k", bool(kwargs.get("include_directories")))
        if vector is None:
            query = check_query(query)
            vector = [float(x) for x in await self.aclient.embedder.aembed_query(query)]
        # (a candidate pool: a fetch_k past one search's limit fetches what one search
        # returns). A fetch_k below k fetches fetch_k and so returns at most fetch_k, as
        # LangChain's InMemoryVectorStore (and Chroma, FAISS) do. Why (helper leftovers72b):
        # it fetched k, so the same call returned k documents here and fetch_k there.
        hits = await self._afind(query, min(fetch_k, MAX_LIMIT), kwargs, vector=vector)
        if not hits:
            return []
        vecs = await self._index.vectors(hits)
        q = kit.mmr_query_vector(vector)  # (the direction the search took)
        rows = cast(list[list[float]], vecs)  # float32 rows: what the function computes with
        picked = maximal_marginal_relevance(q, rows, lambda_mult=lambda_mult, k=k)
        return [self._to_document(hits[i]) for i in picked]

    def max_marginal_relevance_search(
        self, query: str, k: int = 4, fetch_k: int = 20, lambda_mult: float = 0.5, **kwargs: Any
    ) -> list[Document]:
        """``fetch_k`` candidates from the tree search, then ``k`` picked for relevance and
        diversity (LangChain's MMR on the stored vectors)."""
        return self._run(self._ammr(query, None, k, fetch_k, lambda_mult, kwargs))

    async def amax_marginal_relevance_search(
        self, query: str, k: int = 4, fetch_k: int = 20, lambda_mult: float = 0.5, **kwargs: Any
    ) -> list[Document]:
        return await self._ammr(query, None, k, fetch_k, lambda_mult, kwargs)

    def max_marginal_relevance_search_by_vector(
        self,
        embedding: list[float],
        k: int = 4,
        fetch_k: int = 20,
        lambda_mult: float = 0.5,
        **kwargs: Any,
    ) -> list[Document]:
        # (was ``*args, **kwargs``: ``help()`` and IDEs showed no k, fetch_k, lambda_mult,
        # which the async twin and LangChain's base signature name; helper usage88)
        coro = self.amax_marginal_relevance_search_by_vector(
            embedding, k, fetch_k, lambda_mult, **kwargs
        )
        return self._run(coro)

    async def amax_marginal_relevance_search_by_vector(
        self,
        embedding: list[float],
        k: int = 4,
        fetch_k: int = 20,
        lambda_mult: float = 0.5,
        **kwargs: Any,
    ) -> list[Document]:
        return await self._ammr("", embedding, k, fetch_k, lambda_mult, kwargs)

    # ------------------------------------------------------------------ retriever
    def as_retriever(self, **kwargs: Any) -> VectorStoreRetriever:
        """LangChain's ``VectorStoreRetriever`` over this store, as every vector store's
        (``search_type``, ``search_kwargs``, ``tags``, ``metadata``, ``name``).

        A keyword it does not take is an :class:`~treehop.errors.UnknownArgumentError`
        saying where it goes. Why: the retriever ignores extra keywords, so
        ``as_retriever(k=1)`` (for ``search_kwargs={"k": 1}``), ``as_retriever(filter=...)``
        or ``as_retriever(search_kwarg=...)`` returned a retriever answering 4 unfiltered
        documents in silence (helper usage70; ``InMemoryVectorStore`` does the same)."""
        takes = [f for f in VectorStoreRetriever.model_fields if f != "vectorstore"]
        unknown = [k for k in kwargs if k not in takes]
        if unknown:
            raise kit.unknown_arguments(
                "as_retriever",
                unknown,
                takes,
                elsewhere={
                    name: "a search's argument goes in search_kwargs: "
                    f"as_retriever(search_kwargs={{{_AS_SEARCH_KWARG.get(name, name)!r}: ...}})"
                    for name in unknown
                    if name in _SEARCH_NAMES and name not in ("search_kwargs", "search_type")
                },
            )
        return super().as_retriever(**kwargs)

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_documents(
        cls, documents: list[Document], embedding: Embeddings | None = None, **kwargs: Any
    ) -> TreehopVectorStore:
        """A store holding ``documents``: ``from_documents(docs, path="./index")`` embeds with
        treehop's offline MiniLM; ``from_documents(docs, embeddings, ...)`` (LangChain's
        positional form) or ``embedding=`` with any LangChain model. Documents' ids are kept
        (as LangChain's base class does); the other keywords are the constructor's, plus
        ``ids`` and ``show_progress``."""
        texts, metadatas = cls._document_parts(documents, kwargs)
        return cls.from_texts(texts, embedding, metadatas=metadatas, **kwargs)

    @classmethod
    async def afrom_documents(
        cls, documents: list[Document], embedding: Embeddings | None = None, **kwargs: Any
    ) -> TreehopVectorStore:
        texts, metadatas = cls._document_parts(documents, kwargs)
        return await cls.afrom_texts(texts, embedding, metadatas=metadatas, **kwargs)

    @staticmethod
    def _document_parts(
        documents: list[Document], kwargs: dict[str, Any]
    ) -> tuple[list[str], list[dict[Any, Any]]]:
        docs = kit.documents_of(documents, Document, "langchain Document")
        if "ids" not in kwargs and any(d.id for d in docs):
            kwargs["ids"] = [d.id for d in docs]
        return [d.page_content for d in docs], [d.metadata for d in docs]

    @classmethod
    def from_texts(cls, texts: list[str], *args: Any, **kwargs: Any) -> TreehopVectorStore:
        """A store holding ``texts``: ``from_texts(texts, embedding=None, metadatas=None, *,
        ids=None, tags=None, show_progress=False, **constructor_kwargs)``, as every LangChain
        vector store (``embedding=None``: treehop's offline MiniLM)."""
        store, metadatas, add = cls._for_texts(*args, **kwargs)
        store.add_texts(texts, metadatas, **add)
        return store

    @classmethod
    async def afrom_texts(cls, texts: list[str], *args: Any, **kwargs: Any) -> TreehopVectorStore:
        store, metadatas, add = cls._for_texts(*args, **kwargs)
        await store.aadd_texts(texts, metadatas, **add)
        return store

    @classmethod
    def _for_texts(
        cls,
        embedding: Embeddings | None = None,
        metadatas: list[dict[Any, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        tags: str | Sequence[str] | None = None,
        show_progress: bool | kit.ProgressCallback = False,
        **kwargs: Any,
    ) -> tuple[TreehopVectorStore, list[dict[Any, Any]] | None, dict[str, Any]]:
        """The store the constructor keywords open, and the keywords of its first add."""
        add = {"ids": ids, "tags": tags, "show_progress": show_progress}
        return cls(embedding, **kwargs), metadatas, add

    def __repr__(self) -> str:
        return f"TreehopVectorStore(base_uri={self.base_uri!r}, client={self.client!r})"


__all__ = ["DEFAULT_BASE_URI", "TreehopVectorStore"]


def _shown_metadata(stored: Mapping[str, Any], uri: str) -> dict[str, Any]:
    """A stored node's metadata as its Document shows it: ``source`` for a node another
    writer stored (:data:`~.documents.STORE_SOURCE`; read before the passage-id key that
    tells the store's own records apart is stripped), the store's bookkeeping keys left out."""
    own = dict(stored)
    show_source(own, uri, STORE_SOURCE)
    return {k: v for k, v in own.items() if k not in INTERNAL_KEYS}
