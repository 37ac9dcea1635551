"""Natural questions, judged on the text each result delivers: does ``find()`` beat flat search?

    python bench/bench_natural.py                          # every set, both halves
    python bench/bench_natural.py --test --sets django-faq,gitfaq --json out.json
    python bench/bench_natural.py --test --sets django-faq,gitfaq --json out.json --resume
    python bench/bench_natural.py --rows flat-dense,find,find-no-collapse --dev
    python bench/bench_natural.py --list-rows

Sets (``natural_sets.py``): FAQs whose questions people wrote, with every question's text
deleted from the corpus (Django's FAQ + the pages it links to, git's gitfaq + the pages it links
to, lsof's numbered FAQ split into section files, Perl's perlfaq1-9 + the POD pages they link
to) and Cranfield's 225 queries over its topic tree. Each set is indexed once with
``Treehop.add_resource`` (default config, the offline MiniLM embedder behind the on-disk
cache ``TREEHOP_BENCH_CACHE``); every row searches the whole set.

**The qrel is the answer's text.** A returned text *is* the answer when their word 5-gram
shingles overlap by at least half of the smaller shingle set (texts under 5 words: word sets),
:func:`judge`. So re-chunking cannot change what counts as relevant, and a slot is judged on the
text it *delivers*: ``MatchedContext.slot_text`` for ``find()`` (what the LangChain mapping puts
in ``page_content`` and the LlamaIndex mapping in the node text: the face chunk, not the chunks
collapsed behind it), a leaf's content for the flat rows, ``Document.page_content`` for
LangChain, the node text for LlamaIndex. An answer counts once, at its first rank; a second slot
with the same answer takes its place and earns nothing.

Metrics: nDCG@10 (graded gains on Cranfield), R@10, R@100, MRR@10, ``chars@10`` (the characters
the first 10 results deliver together: what the nDCG@10 was earned with), and
**answer-in-context**
at 500 / 1,000 / 2,000 tokens (``ctx@B``): the share of a question's answers present (same
judge) in the block the user would put in a prompt: for treehop rows
``Treehop.assemble_context(query, max_tokens=B)`` (its ``find()`` without a ``limit`` asks for
``context_limit(B)`` slots); for every other row its top-100 results packed best-first (a result
that does not fit is skipped, the next tried) into the same budget, counted by treehop's own
token counter (``default_token_counter``, MiniLM's WordPiece).

Rows interleave per query (A, B, B, A ...) with BLAS pinned to one thread; p50 is the limit-10
call (query vectors computed up front, so no row pays for the model). Halves: each query's half
is fixed by sha256 of its id (``bench_tree.split_halves``, seed 0).
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence  # noqa: E402
from contextlib import contextmanager  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
import numpy.typing as npt  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_tree as bt  # noqa: E402
import datasets as ds  # noqa: E402
import natural_sets as ns  # noqa: E402

ds.ensure_treehop_importable()

from treehop import (  # noqa: E402
    RetrievalConfig,
    Treehop,
    context_assembly,
)
from treehop.context_assembly import TokenCounter, default_token_counter  # noqa: E402
from treehop.ingest import summaries  # noqa: E402
from treehop.lexical import LexicalIndex  # noqa: E402
from treehop.models import MatchedContext  # noqa: E402
from treehop.stores.base import Scope  # noqa: E402

SHINGLE = 5
BUDGETS = (500, 1000, 2000)
PACK_POOL = 100
"""How many of a baseline's results are offered to the packer (its limit-100 list)."""

# --------------------------------------------------------------------------------------
# The judge: text overlap
# --------------------------------------------------------------------------------------

_WORD = re.compile(r"\w+")


def words(text: str) -> list[str]:
    """Lower-cased word tokens (markdown marks, punctuation and layout are not words)."""
    return _WORD.findall(text.lower())


def shingles(tokens: Sequence[str], n: int = SHINGLE) -> frozenset[tuple[str, ...]]:
    """The set of word ``n``-grams (empty when there are fewer than ``n`` words)."""
    return frozenset(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


@dataclass(frozen=True)
class TextKey:
    """A text's 5-gram shingles and its word set (the latter for texts under 5 words)."""

    grams: frozenset[tuple[str, ...]]
    vocab: frozenset[str]
    n_words: int

    @classmethod
    def of(cls, text: str) -> TextKey:
        toks = words(text)
        return cls(shingles(toks), frozenset(toks), len(toks))


def overlaps(a: TextKey, b: TextKey) -> bool:
    """True when the two texts share at least half of the smaller one's shingles (word
    5-grams; word sets when either has under 5 words). Empty texts match nothing."""
    if a.n_words == 0 or b.n_words == 0:
        return False
    if a.n_words < SHINGLE or b.n_words < SHINGLE:
        return _half_of_smaller(a.vocab, b.vocab)
    return _half_of_smaller(a.grams, b.grams)


def _half_of_smaller(x: frozenset[Any], y: frozenset[Any]) -> bool:
    small, big = (x, y) if len(x) <= len(y) else (y, x)
    hit = sum(1 for g in small if g in big)
    return hit * 2 >= len(small)


def judge(result: str, answer: str) -> bool:
    """Is ``result`` the answer ``answer``? (:func:`overlaps` on their texts)."""
    return overlaps(TextKey.of(result), TextKey.of(answer))


class Judge:
    """Matches result texts against one set's answers; keys are cached per distinct text
    (the same chunk comes back for many queries and rows)."""

    def __init__(self) -> None:
        self._keys: dict[str, TextKey] = {}

    def key(self, text: str) -> TextKey:
        k = self._keys.get(text)
        if k is None:
            k = self._keys[text] = TextKey.of(text)
        return k

    def units(self, text: str, answers: Sequence[str]) -> frozenset[str]:
        """The ids (``"a0"``, ``"a1"`` ...) of the answers ``text`` delivers."""
        key = self.key(text)
        return frozenset(f"a{i}" for i, a in enumerate(answers) if overlaps(key, self.key(a)))


def answer_in_context(
    block: str,
    answers: Sequence[str],
    judge_: Judge,
    pieces: Sequence[str] = (),
    by_piece: bool = False,
) -> float:
    """Share of the answers present in a context block: the block as a whole judged against
    each answer (:func:`overlaps`: half of the answer's text is in it). With ``by_piece``
    (answers that are whole pages, ``NaturalSet.answers_are_pages``): an answer is present
    when any piece of the block (a packed result, an assembled hit) is of it, since a
    1,000-token block is never half of a long page, nor half from one page."""
    if not answers:
        return 0.0
    if by_piece:
        found: set[str] = set()
        for p in pieces:
            found |= judge_.units(p, answers)
        return len(found) / len(answers)
    return len(judge_.units(block, answers)) / len(answers)


def block_pieces(slots: Iterable[Any], ctx: Any) -> list[str]:
    """The pieces of an assembled block :func:`answer_in_context` judges one by one (answers
    that are pages): each slot the block placed, at the tier it went in with. Every script
    that judges a block must take the same pieces, or the same block scores differently:
    judged line by line, a block scored 1.000 on pytest-derived's pages where this scores
    0.971 (a short line, a header's path among them, is "of" any page that holds its words)."""
    by_uri = {m.uri: m for m in slots}
    return [str(getattr(by_uri[s.uri], s.tier)) for s in ctx.sections if s.uri in by_uri]


def pack(texts: Sequence[str], budget: int, counter: TokenCounter, sep: str = "\n\n") -> str:
    """:func:`pack_pieces`, joined by ``sep``."""
    return sep.join(pack_pieces(texts, budget, counter, sep))


def pack_pieces(
    texts: Sequence[str], budget: int, counter: TokenCounter, sep: str = "\n\n"
) -> list[str]:
    """Texts best first into ``budget`` tokens: a text that does not fit is skipped and the
    next one tried (as ``assemble_context`` does), duplicates are dropped, and the joined
    block is counted again at the end (a tokenizer need not be additive), dropping the last
    texts until it fits."""
    out: list[str] = []
    seen: set[str] = set()
    used = 0
    sep_cost = counter.count(sep)
    for t in texts:
        t = t.strip()
        if not t or t in seen:
            continue
        n = counter.count(t) + (sep_cost if out else 0)
        if used + n > budget:
            continue
        out.append(t)
        seen.add(t)
        used += n
    while out and counter.count(sep.join(out)) > budget:
        out.pop()
    return out


class CachedCounter:
    """A token counter with a per-text cache (a baseline's chunks are counted per budget)."""

    def __init__(self, inner: TokenCounter) -> None:
        self.inner = inner
        self._n: dict[str, int] = {}

    @property
    def name(self) -> str:
        return self.inner.name

    def count(self, text: str) -> int:
        n = self._n.get(text)
        if n is None:
            n = self._n[text] = self.inner.count(text)
        return n


# --------------------------------------------------------------------------------------
# Rows
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    """``method``: flat-dense | flat-hybrid | flat-bm25 | langchain | llamaindex | find.
    ``config``: ``RetrievalConfig`` overrides (flat-hybrid reads ``dense_weight``);
    ``find``: ``find()`` keyword arguments. One feature switched off per ablation row."""

    key: str
    name: str
    method: str
    config: Mapping[str, Any] = field(default_factory=dict)
    find: Mapping[str, Any] = field(default_factory=dict)
    assembly: Mapping[str, Any] = field(default_factory=dict)
    """``treehop.context_assembly`` module defaults set for the row's calls (an option the
    client's config does not carry, e.g. ``WINDOW_SHARE``)."""


ROWS: tuple[Row, ...] = (
    Row("flat-dense", "flat dense (same leaves)", "flat-dense"),
    Row("flat-hybrid", "flat hybrid (default w)", "flat-hybrid"),
    Row("flat-bm25", "flat BM25", "flat-bm25"),
    Row("langchain", "LangChain 1000/200 + InMemory", "langchain"),
    Row("llamaindex", "LlamaIndex SentenceSplitter+VSI", "llamaindex"),
    Row("find", "find() defaults", "find"),
    Row("find-no-collapse", "find collapse_chunks=False", "find", find={"collapse_chunks": False}),
    Row("find-pool20", "find find_pool=20 (limit-free top k)", "find", config={"find_pool": 20}),
    Row(
        "find-few-docs-off",
        "find few_document_passages=False",
        "find",
        config={"few_document_passages": False},
    ),
    Row("find-no-context", "find - tree context", "find", config=bt.NO_CONTEXT),
    Row(
        "find-wmax",
        "find question_weight_max=True (max of the two fusions)",
        "find",
        config={"question_weight_max": True},
    ),
    Row(
        "find-earned",
        "find question_window_earned=True (window lift capped at its chunks' own)",
        "find",
        config={"question_window_earned": True},
    ),
    Row(
        "find-share50",
        "find, top slot's window at most half the block (context_assembly.WINDOW_SHARE=0.5)",
        "find",
        assembly={"WINDOW_SHARE": 0.5},
    ),
    Row(
        "find-share100",
        "find, top slot's window trimmed to its best chunks where it overfills the block "
        "(context_assembly.WINDOW_SHARE=1.0)",
        "find",
        assembly={"WINDOW_SHARE": 1.0},
    ),
    Row(
        "find-no-sentence-slots",
        "find - sentence passages",
        "find",
        config={"sentence_passages": False},
    ),
    Row(
        "find-no-join-adjacent",
        "find - adjacent hits joined",
        "find",
        config={"join_adjacent_hits": False},
    ),
    Row("find-no-heading", "find - heading weight", "find", config={"context_heading_weight": 0.0}),
    Row("find-dense", "find dense only (w=1)", "find", config={"dense_weight": 1.0}),
    Row("find-hops-off", "find - tag hops", "find", config={"tag_hop_trigger": "off"}),
    Row("find-leaves", "find - directory slots", "find", find={"include_directories": False}),
    Row(
        "find-no-neighbours",
        "find - neighbour evidence",
        "find",
        config={"context_neighbour_weight": 0.0},
    ),
    Row("find-no-parent", "find - parent evidence", "find", config={"context_parent_weight": 0.0}),
    Row(
        "find-no-sibling", "find - sibling evidence", "find", config={"context_sibling_weight": 0.0}
    ),
    # issue 33 items 3-5: slots, fusion and tree terms for question-shaped queries
    Row(
        "find-face-only", "find slot shows face only", "find", config={"document_context_chars": 0}
    ),
    Row(
        "find-doc1000",
        "find slot text <= 1000 chars",
        "find",
        config={"document_context_chars": 1000},
    ),
    Row("find-qw0.5", "find questions w=0.5", "find", config={"question_dense_weight": 0.5}),
    Row("find-qw0.7", "find questions w=0.7", "find", config={"question_dense_weight": 0.7}),
    Row("find-qw0.8", "find questions w=0.8", "find", config={"question_dense_weight": 0.8}),
    Row("find-qw0.85", "find questions w=0.85", "find", config={"question_dense_weight": 0.85}),
    Row("find-qw0.9", "find questions w=0.9", "find", config={"question_dense_weight": 0.9}),
    Row("find-qw1", "find questions w=1", "find", config={"question_dense_weight": 1.0}),
    Row("find-qh0", "find questions - heading", "find", config={"question_heading_weight": 0.0}),
    Row(
        "find-qh.15", "find questions heading .15", "find", config={"question_heading_weight": 0.15}
    ),
    Row("find-qc0", "find questions - context", "find", config={"question_context_scale": 0.0}),
    Row("find-qc.5", "find questions context x.5", "find", config={"question_context_scale": 0.5}),
    Row("find-qc1", "find questions context x1", "find", config={"question_context_scale": 1.0}),
    # round 9 (ranking): a chunk's window evidence and slots spread over documents, for
    # questions (``question_chunk_window``, ``question_document_penalty``)
    Row(
        "find-round8",
        "find - window - spread (round 8)",
        "find",
        config={"question_chunk_window": False, "question_document_penalty": 0.0},
    ),
    Row("find-no-window", "find - chunk window", "find", config={"question_chunk_window": False}),
    Row("find-no-spread", "find - spread", "find", config={"question_document_penalty": 0.0}),
    Row(
        "find-no-headless-entries",
        "find - headless entry slots",
        "find",
        config={"headless_entry_slots": False},
    ),
    Row(
        "find-grow-nearer",
        "find slot grows nearer side first",
        "find",
        config={"grow_to_better_side": False},
    ),
    # round 11 (fusion11): does the constant's optimum move without round 9's two steps?
    *(
        Row(
            f"find-round8-qw{w}",
            f"find - window - spread, w={w}",
            "find",
            config={
                "question_chunk_window": False,
                "question_document_penalty": 0.0,
                "question_dense_weight": w,
            },
        )
        for w in (0.5, 0.7, 0.8)
    ),
    # round 10 (query kinds): error reports read as questions, problem reports take passages
    Row(
        "find-no-error-reports",
        "find - error reports as questions",
        "find",
        config={"question_error_reports": False},
    ),
    Row(
        "find-pr-question",
        "find problem reports as questions",
        "find",
        config={"question_problem_reports": True},
    ),
    Row(
        "find-no-problem-reports",
        "find - problem report passages",
        "find",
        config={"problem_report_passages": False},
    ),
    # helper quality74: the non-question shapes read as questions (one rule per shape)
    Row(
        "find-sentence-question",
        "find sentences as questions",
        "find",
        config={"question_sentences": True},
    ),
    Row(
        "find-title-question",
        "find titles as questions",
        "find",
        config={"question_titles": True},
    ),
    # round 10: a question's slot grows to its own-best neighbour first (``question_grow_own``)
    Row(
        "find-no-grow-own",
        "find - slot grows own-best",
        "find",
        config={"question_grow_own": False},
    ),
    *(
        Row(
            f"find-spread{x}",
            f"find document penalty {x}",
            "find",
            config={"question_document_penalty": x},
        )
        for x in (0.01, 0.05)
    ),
    # round 9 (ranking): the parent term alone for questions (the file's abstract vector; no
    # neighbour, sibling or heading term), the big-unit evidence of issue 33's hypothesis 1
    Row(
        "find-qparent",
        "find questions parent term only",
        "find",
        config={
            "question_context_scale": 1.0,
            "question_heading_weight": 0.0,
            "context_neighbour_weight": 0.0,
            "context_sibling_weight": 0.0,
        },
    ),
    # round 3 (ranking): how far a passage slot reaches
    *(
        Row(
            f"find-doc{n}",
            f"find slot text <= {n} chars",
            "find",
            config={"document_context_chars": n},
        )
        for n in (1500, 3000, 4000)
    ),
    # round 4 (ranking): hubness among a question's candidates (question_hub_weight)
    *(
        Row(
            f"find-hub{w}",
            f"find question hub weight {w}",
            "find",
            config={"question_hub_weight": w},
        )
        for w in (0, 0.125, 0.25, 0.5)
    ),
    *(
        Row(
            f"find-qd{n}",
            f"find question slot <= {n} chars",
            "find",
            config={"question_context_chars": n},
        )
        for n in (1000, 2000, 3000, 4000, 6000)
    ),
)
PHASE1_ROWS = ("flat-dense", "flat-hybrid", "flat-bm25", "find", "find-no-collapse")


class Flat:
    """The flat rows' index: the client's own leaves and vectors (so flat and ``find()``
    score the very same vectors and texts) and treehop's BM25 over the same leaf texts."""

    def __init__(self, th: Treehop) -> None:
        self.th = th
        leaves = [n for n in th.store.iter_nodes(None) if n.is_leaf]
        self.uris = [n.uri for n in leaves]
        self.texts = [n.content or n.abstract for n in leaves]
        self.text_of = dict(zip(self.uris, self.texts, strict=True))
        self.matrix = np.ascontiguousarray(th.store.get_vectors(self.uris), dtype=np.float32)
        self.lexical = LexicalIndex()
        self.lexical.upsert(np.arange(len(leaves)), [n.lexical_text() for n in leaves])

    def dense(self, vec: npt.NDArray[np.float32], limit: int) -> list[str]:
        return self.ranked(self.matrix @ vec, limit)

    def ranked(self, scores: npt.NDArray[np.float32], limit: int) -> list[str]:
        """The texts of the ``limit`` leaves best by ``scores`` (one per leaf), best first
        (a screen's own scoring of the same leaves ranks through here too)."""
        k = min(limit, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [self.texts[int(i)] for i in top]

    def bm25(self, text: str, limit: int) -> list[str]:
        rows, _ = self.lexical.top(text, limit)
        return [self.texts[int(r)] for r in rows]

    def hybrid(
        self, vec: npt.NDArray[np.float32], text: str, limit: int, w: float, scope: str
    ) -> list[str]:
        sc = Scope(subtrees=(self.th.aio.resolve(scope),), leaves_only=True)
        hits = self.th.store.search(vec, sc, limit, query_text=text, dense_weight=w)
        return [h.node.content or h.node.abstract for h in hits]


@dataclass
class IndexedSet:
    """A natural set ingested by a fresh in-memory treehop client (the bench's embedding
    cache, default config) under ``scope``, with the flat rows over the same leaves."""

    th: Treehop
    flat: Flat
    embedder: bt.MemoEmbedder
    scope: str
    files: int
    chunks: int


@contextmanager
def indexed_set(
    nset: ns.NaturalSet,
    cached: Any,
    chunk_chars: int | None = None,
    config: Mapping[str, Any] | None = None,
) -> Iterator[IndexedSet]:
    """:class:`IndexedSet` of ``nset``, its client closed after (what every natural-question
    script measures on: this bench, ``bench_context_flags.py``, ``bench_context_diag.py``).

    ``chunk_chars``: the size its files are cut into (``None``: the client's default), so the
    ``find()`` rows and the flat rows (which read the same leaves) all see the same chunks.
    Nothing else needs to know it: the index is built afresh in memory on every run, and the
    embedding cache is keyed by each text's sha256, so a chunk of another size is another
    text, embedded once, and never a stale vector. ``config``: ``RetrievalConfig`` settings
    of the client (every row starts from them; a row's own settings still apply on top)."""
    embedder = bt.MemoEmbedder(cached)
    extra: dict[str, Any] = {} if chunk_chars is None else {"chunk_chars": chunk_chars}
    th = Treehop(None, embedder=embedder, config=RetrievalConfig(**dict(config or {})), **extra)
    scope = f"viking://resources/{nset.name}"
    try:
        res = th.add_resource(str(nset.root), target_uri=scope)
        yield IndexedSet(th, Flat(th), embedder, scope, res.files, res.chunks)
    finally:
        th.close()


class LangChainRow:
    """What a LangChain user builds: ``RecursiveCharacterTextSplitter(1000, 200)`` over the
    same files and ``InMemoryVectorStore`` (exact cosine) with treehop's embedder wrapped as
    LangChain ``Embeddings``; the result is each ``Document.page_content``."""

    def __init__(self, files: Mapping[str, str], embedder: Any) -> None:
        from langchain_core.embeddings import Embeddings
        from langchain_core.vectorstores import InMemoryVectorStore
        from langchain_text_splitters import RecursiveCharacterTextSplitter

        class TreehopLCEmbeddings(Embeddings):
            def embed_documents(self, texts: list[str]) -> list[list[float]]:
                return [list(map(float, v)) for v in embedder.embed(texts)]

            def embed_query(self, text: str) -> list[float]:
                return list(map(float, embedder.embed_query(text)))

        splitter = RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=200)
        docs = splitter.create_documents(
            [files[r] for r in sorted(files)], [{"source": r} for r in sorted(files)]
        )
        self.store = InMemoryVectorStore(embedding=TreehopLCEmbeddings())
        self.store.add_documents(docs)
        self.n_chunks = len(docs)

    def run(self, vec: npt.NDArray[np.float32], limit: int) -> list[str]:
        hits = self.store.similarity_search_by_vector([float(x) for x in vec], k=limit)
        return [h.page_content for h in hits]


class LlamaIndexRow:
    """What a LlamaIndex user builds: ``SentenceSplitter()`` defaults (1,024 tokens, 200
    overlap) and ``VectorStoreIndex`` (its in-memory store, exact cosine) with treehop's
    embedder as ``TreehopEmbedding``; one ``Document(text=...)`` per file, without metadata
    (``SimpleDirectoryReader`` would add ``file_path``/``file_name``, which LlamaIndex embeds
    with the text; left out so that the node text is exactly what is embedded and the
    embedding cache is shared with the other rows). The result is each node's text."""

    def __init__(self, files: Mapping[str, str], embedder: Any) -> None:
        from llama_index.core import Document, VectorStoreIndex
        from llama_index.core.node_parser import SentenceSplitter

        from llama_index.vector_stores.treehop import TreehopEmbedding

        docs = [Document(text=files[r]) for r in sorted(files)]
        self.embed = TreehopEmbedding(embedder)
        self.index = VectorStoreIndex.from_documents(
            docs, embed_model=self.embed, transformations=[SentenceSplitter()]
        )
        self.n_chunks = len(self.index.docstore.docs)

    def run(self, text: str, limit: int) -> list[str]:
        nodes = self.index.as_retriever(similarity_top_k=limit).retrieve(text)
        return [n.node.get_content() for n in nodes]


def delivered(m: MatchedContext) -> str:
    """What a ``find()`` slot gives its reader: ``slot_text`` (a leaf's content, else the
    overview or abstract; a memory turn with the turns it carries), exactly the text the
    LangChain mapping puts in ``page_content`` (``content_field="auto"``) and the LlamaIndex
    mapping in the node. A document's chunks collapsed behind the face are not shown."""
    return m.slot_text


# --------------------------------------------------------------------------------------
# Running a set
# --------------------------------------------------------------------------------------


@dataclass
class RowRun:
    row: Row
    texts: dict[int, dict[str, list[str]]]  # limit -> qid -> delivered texts
    blocks: dict[int, dict[str, tuple[str, list[str]]]]  # budget -> qid -> (block, its pieces)
    latency_ms: list[float]


@dataclass
class Runner:
    th: Treehop
    embedder: bt.MemoEmbedder
    flat: Flat
    scope: str
    langchain: LangChainRow | None = None
    llamaindex: LlamaIndexRow | None = None

    def _with_config(self, row: Row, fn: Callable[[], Any]) -> Any:
        cfg = self.th.config
        saved = {k: getattr(cfg, k) for k in row.config}
        saved_mod = {k: getattr(context_assembly, k) for k in row.assembly}
        try:
            for k, v in row.config.items():
                setattr(cfg, k, v)
            for k, v in row.assembly.items():
                setattr(context_assembly, k, v)
            return fn()
        finally:
            for k, v in saved.items():
                setattr(cfg, k, v)
            for k, v in saved_mod.items():
                setattr(context_assembly, k, v)

    def results(self, row: Row, q: ns.NaturalQuestion, limit: int) -> tuple[list[str], Any]:
        """(the delivered texts, the ``FindResult`` for treehop rows else ``None``)."""
        vec = self.embedder.queries[q.text]
        if row.method == "flat-dense":
            return self.flat.dense(vec, limit), None
        if row.method == "flat-bm25":
            return self.flat.bm25(q.text, limit), None
        if row.method == "flat-hybrid":
            w = float(row.config.get("dense_weight", bt.DEFAULT_DENSE_WEIGHT))
            return self.flat.hybrid(vec, q.text, limit, w, self.scope), None
        if row.method == "langchain" and self.langchain is not None:
            return self.langchain.run(vec, limit), None
        if row.method == "llamaindex" and self.llamaindex is not None:
            return self.llamaindex.run(q.text, limit), None
        if row.method == "find":

            def call() -> Any:
                return self.th.find(q.text, target_uri=self.scope, limit=limit, **row.find)

            res = self._with_config(row, call)
            return [delivered(m) for m in res.contexts()], res
        raise ValueError(f"row {row.key}: method {row.method!r} not available")

    def block(
        self,
        found: Any,
        budget: int,
        pool: Sequence[str],
        counter: Any,
        row: Row | None = None,
        q: ns.NaturalQuestion | None = None,
    ) -> tuple[str, list[str]]:
        """The context a user puts in the prompt at ``budget`` tokens: for a treehop row
        ``Treehop.assemble_context(query, max_tokens=budget)`` (its own ``find()``, which
        without a ``limit`` asks for enough slots to fill the budget); for the others their
        results packed best first. Also the block's pieces: each assembled hit's text at the
        tier it went in with, or each packed result."""
        if found is not None:
            if row is not None and q is not None:
                r, question = row, q

                def call() -> Any:
                    return self.th.assemble_context(
                        question.text,
                        max_tokens=budget,
                        token_counter=counter,
                        target_uri=self.scope,
                        **r.find,
                    )

                ctx = self._with_config(row, call)
            else:
                ctx = self.th.assemble_context(found, max_tokens=budget, token_counter=counter)
            return str(ctx.text), block_pieces(found.contexts(), ctx)
        pieces = pack_pieces(pool, budget, counter)
        return "\n\n".join(pieces), pieces


def run_rows(
    runner: Runner,
    rows: Sequence[Row],
    queries: Sequence[ns.NaturalQuestion],
    budgets: Sequence[int],
    counter: Any,
) -> list[RowRun]:
    out = [RowRun(r, {10: {}, 100: {}}, {b: {} for b in budgets}, []) for r in rows]
    for qi, q in enumerate(queries):
        order = list(range(len(rows)))
        order = order[qi % len(rows) :] + order[: qi % len(rows)]
        if qi % 2:
            order.reverse()
        for ri in order:
            rr = out[ri]
            t0 = time.perf_counter()
            rr.texts[10][q.qid], found = runner.results(rr.row, q, 10)
            rr.latency_ms.append((time.perf_counter() - t0) * 1000)
            rr.texts[100][q.qid], _ = runner.results(rr.row, q, 100)
            for b in budgets:
                pool = rr.texts[100][q.qid][:PACK_POOL]
                rr.blocks[b][q.qid] = runner.block(found, b, pool, counter, rr.row, q)
    return out


@dataclass
class Scores:
    n: int
    ndcg10: float
    r10: float
    r100: float
    mrr10: float
    ctx: dict[int, float]
    # metric ("ndcg@10", "ctx@1000", ...) -> qid -> that question's value: what a paired
    # bootstrap of two rows needs (runs written before it existed have none)
    per_question: dict[str, dict[str, float]] = field(default_factory=dict)
    # the mean number of characters the first 10 results deliver together: how much text
    # an nDCG@10 was earned with (a row whose pieces hold several answers each ranks them
    # early and hands the prompt that much more to read); NaN in runs written before it
    chars10: float = float("nan")


def score(
    rr: RowRun,
    queries: Sequence[ns.NaturalQuestion],
    judge_: Judge,
    budgets: Sequence[int],
    by_piece: bool = False,
) -> Scores:
    nd, r10, r100, mrr, chars = [], [], [], [], []
    ctx: dict[int, list[float]] = {b: [] for b in budgets}
    per_q: dict[str, dict[str, float]] = {"ndcg@10": {}, **{f"ctx@{b}": {} for b in budgets}}
    for q in queries:
        answers = [a for a, _ in q.answers]
        rel = {f"a{i}": g for i, (_, g) in enumerate(q.answers)}
        ranked10 = [judge_.units(t, answers) for t in rr.texts[10][q.qid]]
        chars.append(float(sum(len(t) for t in rr.texts[10][q.qid])))
        ranked100 = [judge_.units(t, answers) for t in rr.texts[100][q.qid]]
        nd.append(bt.ndcg_at(ranked10, rel, 10))
        per_q["ndcg@10"][q.qid] = nd[-1]
        r10.append(bt.recall_at(ranked10, rel, 10))
        r100.append(bt.recall_at(ranked100, rel, 100))
        mrr.append(bt.reciprocal_rank(ranked10, rel, 10))
        for b in budgets:
            block, pieces = rr.blocks[b][q.qid]
            ctx[b].append(answer_in_context(block, answers, judge_, pieces, by_piece))
            per_q[f"ctx@{b}"][q.qid] = ctx[b][-1]

    def mean(xs: list[float]) -> float:
        return float(np.mean(xs)) if xs else 0.0

    return Scores(
        len(queries),
        mean(nd),
        mean(r10),
        mean(r100),
        mean(mrr),
        {b: mean(v) for b, v in ctx.items()},
        per_q,
        mean(chars),
    )


@dataclass
class TableRow:
    dataset: str
    half: str
    key: str
    name: str
    scores: Scores
    p50: float

    def as_json(self) -> dict[str, Any]:
        s = self.scores
        return {
            "dataset": self.dataset,
            "half": self.half,
            "row": self.key,
            "name": self.name,
            "n": s.n,
            "ndcg@10": s.ndcg10,
            "R@10": s.r10,
            "R@100": s.r100,
            "MRR@10": s.mrr10,
            **{f"ctx@{b}": v for b, v in s.ctx.items()},
            "p50_ms": self.p50,
            "chars@10": s.chars10,
            "per_question": s.per_question,
        }


def _log(msg: str) -> None:
    print(f"[bench_natural {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def problem_report_only(text: str) -> bool:
    """A query ``find()`` reads as a problem report and as nothing it routes first (a question
    or an error report): the queries ``question_problem_reports`` changes."""
    return query_shape_of(text) == "problem-report"


SHAPES = ("question", "error-report", "problem-report", "sentence", "title")
"""The shapes ``find()`` reads a query as, in the order its resolver routes them."""


def query_shape_of(text: str) -> str:
    """The first of :data:`SHAPES` that ``text`` takes (the resolver's order: a question,
    then an error report, a problem report, a sentence; a title is none of them)."""
    from treehop import query_shape

    if query_shape.is_question(text):
        return "question"
    if query_shape.is_error_report(text):
        return "error-report"
    if query_shape.is_problem_report(text):
        return "problem-report"
    return "sentence" if query_shape.is_sentence(text) else "title"


def shape_only(text: str, shapes: Iterable[str]) -> bool:
    """Whether ``text``'s shape (:func:`query_shape_of`) is one of ``shapes``: with one
    shape, exactly the queries a routing option for that shape can change
    (``question_sentences``: "sentence"; ``question_titles``: "title")."""
    return query_shape_of(text) in set(shapes)


def evaluate_set(
    nset: ns.NaturalSet,
    rows: Sequence[Row],
    halves: Sequence[str],
    cached: Any,
    budgets: Sequence[int],
    max_queries: int,
    notes: list[str],
    ranks: list[dict[str, Any]] | None = None,
    chunk_chars: int | None = None,
    config: Mapping[str, Any] | None = None,
    only_problem_reports: bool = False,
    only_shapes: Sequence[str] = (),
) -> list[TableRow]:
    t0 = time.perf_counter()
    with indexed_set(nset, cached, chunk_chars, config) as ix:
        th, flat, embedder, scope = ix.th, ix.flat, ix.embedder, ix.scope
        _log(
            f"{nset.name}: {ix.files} files, {ix.chunks} chunks, {len(flat.uris)} leaves "
            f"indexed in {time.perf_counter() - t0:.0f}s"
        )
        runner = Runner(th, embedder, flat, scope)
        methods = {r.method for r in rows}
        if "langchain" in methods:
            t0 = time.perf_counter()
            runner.langchain = LangChainRow(nset.files, cached)
            _log(
                f"{nset.name}: LangChain {runner.langchain.n_chunks} chunks in "
                f"{time.perf_counter() - t0:.0f}s"
            )
            notes.append(f"{nset.name}: LangChain row {runner.langchain.n_chunks} chunks")
        if "llamaindex" in methods:
            t0 = time.perf_counter()
            runner.llamaindex = LlamaIndexRow(nset.files, embedder)
            _log(
                f"{nset.name}: LlamaIndex {runner.llamaindex.n_chunks} nodes in "
                f"{time.perf_counter() - t0:.0f}s"
            )
            notes.append(f"{nset.name}: LlamaIndex row {runner.llamaindex.n_chunks} nodes")
        notes.append(
            f"{nset.name}: {len(nset.questions)} questions; {ix.chunks} treehop chunks, "
            f"{len(flat.uris)} leaves; {nset.note}"
        )
        dev_qs, test_qs = bt.sampled_halves(nset.questions, max_queries)
        if only_problem_reports:
            dev_qs, test_qs = (
                [q for q in h if problem_report_only(q.text)] for h in (dev_qs, test_qs)
            )
        if only_shapes:
            for h, hq in (("dev", dev_qs), ("test", test_qs)):
                if h in halves:
                    counts = {k: 0 for k in SHAPES}
                    for q in hq:
                        counts[query_shape_of(q.text)] += 1
                    notes.append(f"{nset.name}/{h} shapes: {json.dumps(counts)}")
            dev_qs, test_qs = (
                [q for q in h if shape_only(q.text, only_shapes)] for h in (dev_qs, test_qs)
            )
        picked = {"dev": dev_qs, "test": test_qs}
        embedder.prepare([q.text for h in halves for q in picked[h]])
        counter = CachedCounter(default_token_counter())
        judge_ = Judge()
        out: list[TableRow] = []
        kinds = sorted({q.kind for q in nset.questions})
        for half in halves:
            qs = picked[half]
            if not qs:  # (--only-problem-reports: a half without one)
                continue
            t0 = time.perf_counter()
            runs = run_rows(runner, rows, qs, budgets, counter)
            _log(
                f"{nset.name}/{half}: {len(qs)} queries x {len(rows)} rows in "
                f"{time.perf_counter() - t0:.0f}s"
            )
            if ranks is not None:
                ranks.extend(first_ranks(runs, qs, judge_, nset.name, half))
            groups = [(nset.name, qs)]
            if len(kinds) > 1:
                groups += [(f"{nset.name}/{k}", [q for q in qs if q.kind == k]) for k in kinds]
            # (a kind this half has no question of writes no row: its n = 0 row of 0.0 means,
            # ``score``'s empty mean, would count as zeros in a pooler averaging rows; seen
            # with --only-problem-reports, and whenever a kind falls in one half; attacks83)
            for label, group in groups:
                if not group:
                    continue
                out += table_rows(runs, label, half, group, judge_, budgets, nset.answers_are_pages)
        return out


def table_rows(
    runs: Sequence[RowRun],
    label: str,
    half: str,
    queries: Sequence[ns.NaturalQuestion],
    judge_: Judge,
    budgets: Sequence[int],
    by_piece: bool,
) -> list[TableRow]:
    """One table row per run, scored on ``queries`` (a set's half, or its questions of one
    kind), with the p50 of the run's limit-10 calls."""
    return [
        TableRow(
            label,
            half,
            rr.row.key,
            rr.row.name,
            score(rr, queries, judge_, budgets, by_piece),
            float(np.percentile(rr.latency_ms, 50)) if rr.latency_ms else float("nan"),
        )
        for rr in runs
    ]


def first_ranks(
    runs: Sequence[RowRun],
    queries: Sequence[ns.NaturalQuestion],
    judge_: Judge,
    dataset: str,
    half: str,
) -> list[dict[str, Any]]:
    """Per question and row: the rank (1-100) of the first result that delivers an answer,
    ``None`` when none of the 100 does, and the first result's opening words (``--ranks``:
    the per-question view that explains a row's loss)."""
    out: list[dict[str, Any]] = []
    for q in queries:
        answers = [a for a, _ in q.answers]
        for rr in runs:
            texts = rr.texts[100][q.qid]
            rank = next((i + 1 for i, t in enumerate(texts) if judge_.units(t, answers)), None)
            out.append(
                {
                    "dataset": dataset,
                    "half": half,
                    "row": rr.row.key,
                    "qid": q.qid,
                    "question": q.text,
                    "rank": rank,
                    "top": " ".join(texts[0].split()[:20]) if texts else "",
                }
            )
    return out


def print_table(table: Sequence[TableRow], budgets: Sequence[int]) -> None:
    ctx_head = " | ".join(f"ctx@{b:<4}" for b in budgets)
    head = (
        f"| {'set':<14} | {'half':<4} | {'row':<31} | {'n':>3} | nDCG@10 | R@10  | R@100 | "
        f"MRR@10 | {ctx_head} | chars@10 | p50 ms |"
    )
    print(head)
    print("|" + "|".join("-" * len(c) for c in head.split("|")[1:-1]) + "|")
    for r in table:
        s = r.scores
        ctx = " | ".join(f"{s.ctx[b]:>8.3f}" for b in budgets)
        print(
            f"| {r.dataset:<14} | {r.half:<4} | {r.name:<31} | {s.n:>3} | {s.ndcg10:>7.3f} | "
            f"{s.r10:>5.3f} | {s.r100:>5.3f} | {s.mrr10:>6.3f} | {ctx} | {s.chars10:>8.0f} | "
            f"{r.p50:>6.2f} |"
        )


def print_variant_table(
    half: str,
    names: Sequence[str],
    variants: Sequence[str],
    score: Callable[[str, str], tuple[float, int]],
) -> None:
    """A screening script's markdown table: each variant's nDCG@10 per set (``score(variant,
    set)`` gives its mean and question count), then pooled over the FAQ sets and over every
    set, weighted by questions (the mean over all their questions)."""
    faq = [n for n in names if n != "cranfield"]

    def pooled(key: str, among: Sequence[str]) -> float:
        got = [score(key, n) for n in among]
        return sum(m * k for m, k in got if k) / max(1, sum(k for _, k in got))

    counts = " | ".join(f"{n} ({score(variants[0], n)[1]})" for n in names)
    print(f"| nDCG@10, {half} | {counts} | pooled FAQ | pooled all |")
    print("|---" * (len(names) + 3) + "|")
    for key in variants:
        cells = " | ".join(f"{score(key, n)[0]:.3f}" for n in names)
        print(f"| {key} | {cells} | {pooled(key, faq):.3f} | {pooled(key, names):.3f} |")


def print_pivot(table: Sequence[TableRow], metric: str) -> None:
    """One metric, rows x (set, half): the compact form ``bench/README.md`` shows."""
    cols = list(dict.fromkeys((r.dataset, r.half) for r in table))
    names = list(dict.fromkeys((r.key, r.name) for r in table))
    cell = {(r.key, r.dataset, r.half): r for r in table}
    head = f"| {metric:<31} | " + " | ".join(f"{d}/{h}" for d, h in cols) + " |"
    print(head)
    print("|" + "|".join("-" * len(c) for c in head.split("|")[1:-1]) + "|")
    for key, name in names:
        vals = []
        for d, h in cols:
            r = cell.get((key, d, h))
            v = None if r is None else r.as_json().get(metric)
            fmt = ".0f" if metric == "chars@10" else ".3f"
            vals.append(f"{v:{fmt}}".rjust(len(f"{d}/{h}")) if v is not None else "-")
        print(f"| {name:<31} | " + " | ".join(vals) + " |")
    print(
        "| n (questions)                   | "
        + " | ".join(
            str(next(r.scores.n for r in table if (r.dataset, r.half) == c)).rjust(
                len(f"{c[0]}/{c[1]}")
            )
            for c in cols
        )
        + " |"
    )


def table_row_from_json(d: Mapping[str, Any]) -> TableRow:
    ctx = {int(k.split("@")[1]): float(v) for k, v in d.items() if k.startswith("ctx@")}
    scores = Scores(
        int(d["n"]),
        float(d["ndcg@10"]),
        float(d["R@10"]),
        float(d["R@100"]),
        float(d["MRR@10"]),
        ctx,
        {
            str(m): {str(q): float(v) for q, v in vals.items()}
            for m, vals in d.get("per_question", {}).items()
        },
        float(d.get("chars@10", float("nan"))),
    )
    return TableRow(
        str(d["dataset"]), str(d["half"]), str(d["row"]), str(d["name"]), scores, float(d["p50_ms"])
    )


BOOTSTRAP_RESAMPLES = 10_000


def paired_interval(
    a: Mapping[str, float],
    b: Mapping[str, float],
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = 0,
) -> tuple[float, float, float] | None:
    """The mean of ``a - b`` over the questions both hold, and its 95 % percentile interval
    by a paired bootstrap over those questions (``None`` without shared questions).

    Why: a test half of 9-31 questions moves by 0.03-0.11 per question, so a goal line of
    +0.02 / +0.03 read off one half is often inside the noise; the interval says which
    misses (and which passes) the questions can tell apart."""
    keys = sorted(set(a) & set(b))
    if not keys:
        return None
    d = np.fromiter((a[k] - b[k] for k in keys), dtype=np.float64, count=len(keys))
    return mean_interval(d, resamples, seed)


ACTIVE_ROW: list[str] = [""]
"""The key of the row a screening script's patch is running (``""`` outside a row): set by
:func:`add_screen_rows`' wrapper of ``Runner._with_config``, read by the patched methods."""


def add_screen_rows(*rows: Row) -> None:
    """Add a screening script's rows (a method a patch switches on) and make
    :data:`ACTIVE_ROW` name the row being run, so the script's patch of a library method can
    tell its own rows from the others. Idempotent for the wrapper: install it once."""
    global ROWS
    ROWS = (*ROWS, *(r for r in rows if r.key not in {have.key for have in ROWS}))
    if getattr(Runner._with_config, "_marks_active_row", False):
        return
    with_config = Runner._with_config

    def marked(self: Runner, row: Row, fn: Callable[[], Any]) -> Any:
        ACTIVE_ROW[0] = row.key
        try:
            return with_config(self, row, fn)
        finally:
            ACTIVE_ROW[0] = ""

    marked._marks_active_row = True  # type: ignore[attr-defined]
    Runner._with_config = marked  # type: ignore[method-assign]


def mean_interval(
    d: npt.NDArray[np.float64], resamples: int = BOOTSTRAP_RESAMPLES, seed: int = 0
) -> tuple[float, float, float]:
    """The mean of the per-question values ``d`` (differences already) and its 95 %
    percentile bootstrap interval over the questions (:func:`paired_interval`'s core; the
    pooled line of :func:`print_checks` resamples differences taken per set)."""
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    step = max(1, 2_000_000 // len(d))  # resamples per block: bounded memory on big pools
    for i in range(0, resamples, step):
        idx = rng.integers(0, len(d), size=(min(step, resamples - i), len(d)))
        means[i : i + len(idx)] = d[idx].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(d.mean()), float(lo), float(hi)


def _interval_text(got: tuple[float, float, float] | None) -> str:
    return "" if got is None else f", 95% CI {got[1]:+.3f}..{got[2]:+.3f}"


def print_checks(table: Sequence[TableRow]) -> None:
    """The issue's "done when" per set and half: find() defaults against the best flat row,
    with a paired bootstrap interval of the difference where the rows carry per-question
    scores; then, per half, the per-question differences pooled over every set (each set
    against its own best flat row, picked after the fact, which favours the baselines)."""
    flat = ("flat-dense", "flat-hybrid", "flat-bm25", "langchain", "llamaindex")
    keys = sorted({(r.dataset, r.half) for r in table if "/" not in r.dataset})
    lines = []
    pooled: dict[str, dict[str, dict[str, float]]] = {}  # half -> metric -> "set/qid" -> d
    for d, h in keys:
        rows = {r.key: r for r in table if r.dataset == d and r.half == h}
        f = rows.get("find")
        base = [rows[k] for k in flat if k in rows]
        if f is None or not base:
            continue
        best = max(base, key=lambda r: r.scores.ndcg10)
        got = paired_interval(
            f.scores.per_question.get("ndcg@10", {}), best.scores.per_question.get("ndcg@10", {})
        )
        line = (
            f"- {d}/{h}: find() nDCG@10 {f.scores.ndcg10:.3f} vs best flat {best.name} "
            f"{best.scores.ndcg10:.3f} ({f.scores.ndcg10 - best.scores.ndcg10:+.3f}"
            f"{_interval_text(got)}; goal +0.02)"
        )
        picked = {"ndcg@10": best}
        if 1000 in f.scores.ctx:
            bestc = max(base, key=lambda r: r.scores.ctx[1000])
            picked["ctx@1000"] = bestc
            gotc = paired_interval(
                f.scores.per_question.get("ctx@1000", {}),
                bestc.scores.per_question.get("ctx@1000", {}),
            )
            line += (
                f"; ctx@1000 {f.scores.ctx[1000]:.3f} vs {bestc.name} {bestc.scores.ctx[1000]:.3f}"
                f" ({f.scores.ctx[1000] - bestc.scores.ctx[1000]:+.3f}{_interval_text(gotc)};"
                " goal +0.03)"
            )
        lines.append(line)
        for metric, other in picked.items():
            mine = f.scores.per_question.get(metric, {})
            theirs = other.scores.per_question.get(metric, {})
            into = pooled.setdefault(h, {}).setdefault(metric, {})
            for q in set(mine) & set(theirs):
                into[f"{d}/{q}"] = mine[q] - theirs[q]
    if lines:
        print("Done-when checks (find() defaults vs the best flat row of the same set and half):")
        print("\n".join(lines))
    for h, metrics in pooled.items():
        parts = []
        for metric, diffs in metrics.items():
            if diffs:  # (in the order paired_interval takes questions: the same draws)
                got = mean_interval(np.array([diffs[k] for k in sorted(diffs)]))
                parts.append(
                    f"{metric} {got[0]:+.3f}{_interval_text(got)} ({len(diffs)} questions)"
                )
        if parts:
            print(f"- pooled {h}, find() minus each set's best flat row: " + "; ".join(parts))


def print_report(table: Sequence[TableRow], budgets: Sequence[int]) -> None:
    print()
    print_table(table, budgets)
    print()
    chars = ["chars@10"] if any(not math.isnan(r.scores.chars10) for r in table) else []
    for metric in ["ndcg@10", *(f"ctx@{b}" for b in budgets), *chars, "p50_ms"]:
        print_pivot([r for r in table if "/" not in r.dataset], metric)
        print()
    print_checks(table)
    print()


POOLED_METRICS = ("ndcg@10", "R@10", "MRR@10", "ctx@500", "ctx@1000", "ctx@2000", "chars@10")


def pooled_rows(rows: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str], dict[str, float]]:
    """Per (row key, half): each metric's mean over all questions of the sets in ``rows``
    (each set weighted by its question count; per-kind rows ``set/kind`` left out, they
    repeat their set's questions), and ``n``, the questions pooled."""
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for r in rows:
        if "/" not in str(r["dataset"]):
            groups.setdefault((str(r["row"]), str(r["half"])), []).append(r)
    out: dict[tuple[str, str], dict[str, float]] = {}
    for key, rs in groups.items():
        n = sum(int(r["n"]) for r in rs)
        got = {"n": float(n)}
        for m in POOLED_METRICS:
            if all(m in r for r in rs) and n:
                got[m] = sum(float(r[m]) * int(r["n"]) for r in rs) / n
        out[key] = got
    return out


def print_pooled(files: Mapping[str, Sequence[Mapping[str, Any]]]) -> None:
    """``--merge --pooled``: :func:`pooled_rows` of each file, one markdown line per row."""
    print(f"| file | half | row | n | {' | '.join(POOLED_METRICS)} |")
    print("|---" * (4 + len(POOLED_METRICS)) + "|")
    for name, rows in files.items():
        for (key, half), got in sorted(pooled_rows(rows).items(), key=lambda kv: kv[0][::-1]):
            cells = " | ".join(
                (f"{got[m]:.0f}" if m == "chars@10" else f"{got[m]:.3f}") if m in got else "-"
                for m in POOLED_METRICS
            )
            print(f"| {name} | {half} | {key} | {int(got['n'])} | {cells} |")


def parse_rows(spec: str) -> list[Row]:
    known = {r.key: r for r in ROWS}
    if spec in ("", "all"):
        return list(ROWS)
    keys = [k.strip() for k in spec.split(",") if k.strip()]
    bad = [k for k in keys if k not in known]
    if bad:
        raise SystemExit(f"unknown row(s) {bad}; known: {', '.join(known)}")
    return [known[k] for k in keys]


def parse_config(spec: str) -> dict[str, Any]:
    """``--config``: ``key=value`` pairs, comma-separated, as ``RetrievalConfig`` settings
    (values parsed as JSON where they parse: numbers, ``true``, ``null``; else strings),
    checked by building a config from them."""
    out: dict[str, Any] = {}
    for part in spec.split(","):
        if not part.strip():
            continue
        key, sep, value = part.partition("=")
        if not sep:
            raise SystemExit(f"--config: expected key=value, got {part!r}")
        try:
            out[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            out[key.strip()] = value.strip()
    unknown = [k for k in out if k not in RetrievalConfig.model_fields]
    if unknown:
        raise SystemExit(f"--config: unknown setting(s) {unknown}")
    RetrievalConfig(**out)
    return out


def bench_embedder(spec: str) -> Any:
    """The cached MiniLM embedder every row uses: ``spec`` is ``MiniLMEmbedder`` keyword
    arguments as ``key=value`` pairs, comma-separated ('' = the default embedder). Its
    ``cache_key`` (which names every setting that changes a vector) names its on-disk cache,
    so no mode reads another's vectors (texts that fit the window come from the truncating
    mode's cache: ``datasets.CachedEmbedder``)."""
    if not spec.strip():
        return ds.default_embedder()
    from treehop.embedders.local_minilm import MiniLMEmbedder

    kwargs: dict[str, Any] = {}
    for part in spec.split(","):
        key, _, value = part.partition("=")
        key = key.strip()
        if key in ("long_text",):
            kwargs[key] = value.strip()
        elif key in ("max_tokens", "window_overlap"):
            kwargs[key] = int(value)
        else:
            raise SystemExit(f"--embedder: unknown setting {key!r}")
    return ds.CachedEmbedder(MiniLMEmbedder(**kwargs))


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument(
        "--sets",
        default="all",
        help=f"comma-separated: {','.join(ns.NATURAL_SETS)} (= all); the second query kind, "
        f"by name only: {','.join(ns.DERIVED_SETS)}; the untuned held-out check, by name only: "
        f"{','.join(ns.HELD_OUT_SETS)}",
    )
    ap.add_argument("--rows", default="all", help="comma-separated row keys (--list-rows)")
    ap.add_argument("--list-rows", action="store_true")
    half = ap.add_mutually_exclusive_group()
    half.add_argument("--dev", action="store_true", help="only the dev half")
    half.add_argument("--test", action="store_true", help="only the test half")
    ap.add_argument(
        "--budgets",
        default=",".join(map(str, BUDGETS)),
        help="answer-in-context token budgets, comma-separated ('' = none)",
    )
    ap.add_argument("--max-queries", type=int, default=0, help="N per half (0 = all)")
    ap.add_argument(
        "--only-problem-reports",
        action="store_true",
        help="keep only the queries find() reads as problem reports (not questions, not error "
        "reports): the only ones a problem-report routing row can change; every other query "
        "is identical by construction, so a pooled difference counts it as 0",
    )
    ap.add_argument(
        "--only-shapes",
        default="",
        help=f"keep only the queries whose shape is one of these, comma-separated "
        f"({','.join(SHAPES)}); each set's shape counts go to the notes. A routing row for "
        f"one shape changes no other query, so a pooled difference counts the others as 0",
    )
    ap.add_argument(
        "--embedder",
        default="",
        help="MiniLMEmbedder settings for every row, e.g. 'long_text=windows,window_overlap=32' "
        "or 'max_tokens=512' ('' = the default embedder); see bench_embedder",
    )
    ap.add_argument(
        "--chunk-chars",
        type=int,
        default=None,
        help="cut every file into chunks of at most N characters (Treehop chunk_chars) for "
        "the find() and flat rows (same leaves); LangChain / LlamaIndex keep their splitters "
        "(default: the client's default)",
    )
    ap.add_argument(
        "--config",
        default="",
        help="RetrievalConfig settings for every treehop row, 'key=value' comma-separated "
        "(e.g. 'question_context_chars=2400,document_context_chars=1600')",
    )
    ap.add_argument(
        "--abstracts-as-read",
        action="store_true",
        help="file and directory abstracts keep their first sentence as written "
        "(treehop.ingest.summaries.ABSTRACTS_AS_READ, off by default) for every treehop row",
    )
    ap.add_argument("--json", type=Path, help="write every row to this JSON file (after every set)")
    ap.add_argument(
        "--resume",
        action="store_true",
        help="with --json: keep the sets that file already holds for these rows and halves "
        "and run only the others (a run stopped midway, run again; its settings must match)",
    )
    ap.add_argument(
        "--ranks",
        type=Path,
        help="write each question's first-answer rank per row (1-100, null: none) to this JSON",
    )
    ap.add_argument(
        "--merge",
        type=Path,
        nargs="+",
        help="print the tables from the --json files of earlier runs (runs nothing)",
    )
    ap.add_argument(
        "--pooled",
        action="store_true",
        help="with --merge: one line per file, row and half, each metric pooled over the "
        "file's sets (the mean over all their questions), for comparing runs of one command "
        "at different settings",
    )
    args = ap.parse_args(argv)
    if args.list_rows:
        for r in ROWS:
            print(f"{r.key:<20} {r.name:<34} {r.method:<11} {dict(r.config) | dict(r.find)}")
        return
    names = list(ns.NATURAL_SETS) if args.sets == "all" else args.sets.split(",")
    known = ns.NATURAL_SETS + ns.HELD_OUT_SETS + ns.DERIVED_SETS
    bad = [n for n in names if n not in known]
    if bad:
        raise SystemExit(f"unknown set(s) {bad}; known: {', '.join(known)}")
    rows = parse_rows(args.rows)
    halves = ["dev"] if args.dev else ["test"] if args.test else ["dev", "test"]
    budgets = [int(b) for b in args.budgets.split(",") if b.strip()]
    if args.merge and args.pooled:
        print_pooled({f.name: json.loads(f.read_text())["rows"] for f in args.merge})
        return
    if args.merge:
        merged: list[TableRow] = []
        for f in args.merge:
            data = json.loads(f.read_text())
            merged += [table_row_from_json(d) for d in data["rows"]]
            print(f"- {f.name}: bench_natural.py {' '.join(data['argv'])}")
            for n in data["notes"]:
                print(f"- {n}")
        budgets = sorted({b for r in merged for b in r.scores.ctx})
        print_report(merged, budgets)
        return
    if args.resume and (args.json is None or args.ranks):
        raise SystemExit(
            "--resume needs --json FILE (the run to resume) and no --ranks (the ranks of "
            "the sets it keeps are not in that file)"
        )
    config = parse_config(args.config)
    only_shapes = [x for x in args.only_shapes.split(",") if x]
    if set(only_shapes) - set(SHAPES):
        raise SystemExit(f"unknown shape(s) in --only-shapes; known: {', '.join(SHAPES)}")
    cached = bench_embedder(args.embedder)
    if args.abstracts_as_read:
        summaries.ABSTRACTS_AS_READ = True
    settings = {
        "embedder": cached.key,
        "chunk_chars": args.chunk_chars,
        "config": config,
        "max_queries": args.max_queries,
        "only_problem_reports": args.only_problem_reports,
        "only_shapes": only_shapes,
        "budgets": budgets,
    }
    if summaries.ABSTRACTS_AS_READ:  # only when on: a file written before it still resumes
        settings["abstracts_as_read"] = True
    table: list[TableRow] = []
    notes: list[str] = []
    done: set[str] = set()
    if args.resume and args.json.exists():
        table, notes, done = resumed(args.json, names, rows, halves, settings)
        _log(f"--resume: {len(done)} set(s) kept from {args.json}: {', '.join(sorted(done))}")
    if args.chunk_chars is not None:
        notes.append(f"treehop chunk_chars {args.chunk_chars} (find() and flat rows)")
    if config:
        notes.append(f"RetrievalConfig for every treehop row: {config}")
    if summaries.ABSTRACTS_AS_READ:
        notes.append("file and directory abstracts as read (ABSTRACTS_AS_READ)")
    ranks: list[dict[str, Any]] | None = [] if args.ranks else None
    t0 = time.perf_counter()
    for name in names:
        if name in done:
            continue
        nset = ns.load_natural_set(name, cached)
        table += evaluate_set(
            nset,
            rows,
            halves,
            cached,
            budgets,
            args.max_queries,
            notes,
            ranks,
            chunk_chars=args.chunk_chars,
            config=config,
            only_problem_reports=args.only_problem_reports,
            only_shapes=only_shapes,
        )
        if args.json:  # after every set: a run stopped midway keeps the sets it finished
            _write_json(args.json, table, notes, settings)
    print_report(table, budgets)
    for n in notes:
        print(f"- {n}")
    print(
        f"- embedder {cached.key}; token counter "
        f"{default_token_counter().name}; judge: word "
        f"{SHINGLE}-gram shingles overlapping >= half the smaller set; split seed "
        f"{bt.SPLIT_SEED}; BLAS threads {os.environ.get('OPENBLAS_NUM_THREADS')}; p50 = the "
        f"limit-10 call, rows interleaved; total {time.perf_counter() - t0:.0f}s"
    )
    if args.ranks and ranks is not None:
        args.ranks.write_text(json.dumps(ranks, indent=0) + "\n")
    if args.json:
        _write_json(args.json, table, notes, settings)


def _write_json(
    path: Path,
    table: Sequence[TableRow],
    notes: Sequence[str],
    settings: Mapping[str, Any] | None = None,
) -> None:
    """Every row so far, the notes, the command line and the settings ``--resume`` checks,
    as ``--merge`` reads them; written to a temporary file first, so an interrupted write
    never leaves half a file."""
    tmp = path.with_name(path.name + ".tmp")
    data = {"rows": [r.as_json() for r in table], "notes": list(notes), "argv": sys.argv[1:]}
    if settings is not None:
        data["settings"] = dict(settings)
    tmp.write_text(json.dumps(data, indent=1) + "\n")
    tmp.replace(path)


def resumed(
    path: Path,
    names: Sequence[str],
    rows: Sequence[Row],
    halves: Sequence[str],
    settings: Mapping[str, Any],
) -> tuple[list[TableRow], list[str], set[str]]:
    """``--resume``: the rows and notes of ``path`` to keep, and the sets not to run again.

    A set is done when the file holds every asked row on every asked half for it (its
    per-kind rows, ``set/kind``, come with it); a set of ``names`` that is not done is
    dropped from the file and run whole, so no set mixes two runs. Sets the run does not
    name are kept as they are. A file written with other settings (embedder, chunking,
    config, query cap, budgets) is refused: its numbers would not compare."""
    try:
        data = json.loads(path.read_text())
        written = data.get("settings")
        table = [table_row_from_json(d) for d in data["rows"]]
        notes = list(data["notes"])
        if not all(isinstance(n, str) for n in notes):
            raise TypeError("notes")
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        # (a hand-edited or truncated file was a traceback of whichever read failed first;
        # UnicodeDecodeError and JSONDecodeError are ValueErrors)
        raise SystemExit(
            f"--resume: {path} is not a bench_natural --json file ({type(exc).__name__}); "
            "give another --json file"
        ) from None
    if written != json.loads(json.dumps(dict(settings))):
        raise SystemExit(
            f"--resume: {path} was written with settings {written}, this run "
            f"has {dict(settings)}; give another --json file"
        )
    want = {(r.key, h) for r in rows for h in halves}
    held: dict[str, set[tuple[str, str]]] = {}
    for t in table:
        # (a set is done by its own rows: its per-kind rows, ``set/kind``, alone counted it
        # done and its own rows were never run)
        if "/" not in t.dataset:
            held.setdefault(t.dataset, set()).add((t.key, t.half))
    done = {n for n in names if want <= held.get(n, set())}
    rerun = set(names) - done
    kept = [t for t in table if t.dataset.split("/", 1)[0] not in rerun]
    # (a set's notes start with its name; the run-wide ones are written again by main)
    notes = [n for n in notes if n.split(":", 1)[0] in held.keys() - rerun]
    return kept, notes, done


if __name__ == "__main__":
    main()
