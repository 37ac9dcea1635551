"""``TreehopVectorStore`` versus each framework's own in-memory store, on Cranfield.

    python bench/bench_vectorstores.py                          # LangChain, all 225 queries
    python bench/bench_vectorstores.py --framework llamaindex   # LlamaIndex
    python bench/bench_vectorstores.py --max-queries 50 --chunk-size 400

The comparison a LangChain user would make: the same documents, the same splitter, the same
embedding model, the same ``similarity_search(query, k)`` call; only the vector store differs.

* Documents: the Cranfield abstracts, each with ``metadata["source"]`` = its path in the
  Cranfield-as-a-tree layout (``datasets.build_cranfield_tree``: topic / sub-topic / file), as a
  directory loader would write it; split by ``RecursiveCharacterTextSplitter(chunk_size,
  add_start_index=True)``.
* ``inmemory``: ``langchain_core.vectorstores.InMemoryVectorStore`` (exact flat cosine), or
  with ``--framework llamaindex`` LlamaIndex's default ``SimpleVectorStore`` behind
  ``VectorStoreIndex`` (the same chunks as ``TextNode``\\ s with ``file_path`` and
  ``start_char_idx``, queried through ``index.as_retriever(similarity_top_k=k)``);
* ``treehop``: ``TreehopVectorStore`` with its defaults (tree search, hybrid BM25);
* ``treehop-dense``: the same with ``dense_weight=1.0`` (tree search, dense only), which isolates
  the tree search from the lexical side.

Every method retrieves ``k=30`` chunks; chunks are mapped to their document (first position
wins) and the top 10 documents are scored with ir_measures (nDCG@10, R@10). The embedder is
treehop's MiniLM behind the shared on-disk cache (``TREEHOP_BENCH_CACHE``). The queries are the
225 Cranfield queries, none of which was used to tune anything in the vector stores.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import datasets as ds

ds.ensure_treehop_importable()
sys.path.insert(0, str(ds.REPO_ROOT / "integrations"))

import ir_measures  # noqa: E402
import numpy as np  # noqa: E402
from ir_measures import R, nDCG  # noqa: E402
from langchain_core.documents import Document  # noqa: E402
from langchain_core.embeddings import Embeddings  # noqa: E402
from langchain_core.vectorstores import InMemoryVectorStore  # noqa: E402
from langchain_text_splitters import RecursiveCharacterTextSplitter  # noqa: E402

from langchain_treehop import TreehopVectorStore  # noqa: E402


class CachedLCEmbeddings(Embeddings):
    """The cached MiniLM embedder as a LangChain ``Embeddings`` (one model for every store)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return np.asarray(self.inner.embed(texts), dtype=np.float32).tolist()  # type: ignore[no-any-return]

    def embed_query(self, text: str) -> list[float]:
        return np.asarray(self.inner.embed_query(text), dtype=np.float32).ravel().tolist()  # type: ignore[no-any-return]


def _ranked(docs: Sequence[str], cut: int = 10) -> dict[str, float]:
    out: dict[str, float] = {}
    for d in docs:
        if d not in out:
            out[d] = float(1000 - len(out))
        if len(out) == cut:
            break
    return out


def run(
    name: str,
    search: Callable[[str], list[Document]],
    queries: dict[str, str],
    qrels: dict[str, dict[str, int]],
    doc_of: Callable[[Document], str],
) -> tuple[str, float, float, float]:
    run_: dict[str, dict[str, float]] = {}
    lat: list[float] = []
    for qid, text in queries.items():
        t0 = time.perf_counter()
        hits = search(text)
        lat.append((time.perf_counter() - t0) * 1000)
        run_[qid] = _ranked([doc_of(d) for d in hits])
    judged = {q: r for q, r in qrels.items() if q in queries}
    agg = ir_measures.calc_aggregate([nDCG @ 10, R @ 10], judged, run_)
    return name, float(agg[nDCG @ 10]), float(agg[R @ 10]), statistics.median(lat)


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--max-queries", type=int, default=0, help="0 = all 225")
    ap.add_argument("--chunk-size", type=int, default=400)
    ap.add_argument("--k", type=int, default=30, help="chunks retrieved per query")
    ap.add_argument("--framework", choices=["langchain", "llamaindex"], default="langchain")
    args = ap.parse_args(argv)

    cran = ds.load_cranfield()
    embedder = ds.default_embedder()
    layout = ds.build_cranfield_tree(cran, embedder)
    docs = [
        Document(cran.docs[d].file_text().strip(), metadata={"source": path, "doc": d})
        for d, path in sorted(layout.paths.items(), key=lambda x: int(x[0]))
        if cran.docs[d].file_text().strip()
    ]
    splitter = RecursiveCharacterTextSplitter(
        chunk_size=args.chunk_size, chunk_overlap=0, add_start_index=True
    )
    chunks = splitter.split_documents(docs)
    queries = dict(list(cran.queries.items())[: args.max_queries or None])
    lc_emb = CachedLCEmbeddings(embedder)
    print(f"{len(docs)} documents -> {len(chunks)} chunks; {len(queries)} queries", flush=True)
    if args.framework == "llamaindex":
        print_rows(llamaindex_rows(chunks, embedder, queries, cran.qrels, args.k))
        return

    t0 = time.perf_counter()
    flat = InMemoryVectorStore(lc_emb)
    flat.add_documents(chunks)
    t_flat = time.perf_counter() - t0
    t0 = time.perf_counter()
    tree = TreehopVectorStore(lc_emb, base_uri="viking://resources/cranfield")
    tree.add_documents(chunks)
    t_tree = time.perf_counter() - t0
    print(f"ingest: inmemory {t_flat:.1f}s, treehop {t_tree:.1f}s", flush=True)

    def doc_of(d: Document) -> str:
        return str(d.metadata["doc"])

    rows = [
        run("inmemory", lambda q: flat.similarity_search(q, k=args.k), queries, cran.qrels, doc_of),
        run("treehop", lambda q: tree.similarity_search(q, k=args.k), queries, cran.qrels, doc_of),
        run(
            "treehop-dense",
            lambda q: tree.similarity_search(q, k=args.k, dense_weight=1.0),
            queries,
            cran.qrels,
            doc_of,
        ),
    ]
    print_rows(rows)
    tree.close()


def print_rows(rows: Sequence[tuple[str, float, float, float]]) -> None:
    print(f"{'method':<14} {'nDCG@10':>8} {'R@10':>7} {'p50 ms':>8}")
    for name, ndcg, r10, p50 in rows:
        print(f"{name:<14} {ndcg:>8.3f} {r10:>7.3f} {p50:>8.1f}")


def llamaindex_rows(
    chunks: Sequence[Document],
    embedder: Any,
    queries: dict[str, str],
    qrels: dict[str, dict[str, int]],
    k: int,
) -> list[tuple[str, float, float, float]]:
    """The same chunks through LlamaIndex: SimpleVectorStore vs TreehopVectorStore."""
    from llama_index.core import Settings, StorageContext, VectorStoreIndex
    from llama_index.core.llms import MockLLM
    from llama_index.core.schema import TextNode

    from llama_index.vector_stores.treehop import TreehopEmbedding, TreehopVectorStore
    from treehop import Treehop

    Settings.llm = MockLLM()
    embed_model = TreehopEmbedding(embedder)  # the same cached MiniLM vectors for both
    nodes = [
        TextNode(
            text=c.page_content,
            id_=f"chunk-{i}",
            metadata={"file_path": c.metadata["source"], "doc": c.metadata["doc"]},
            start_char_idx=c.metadata["start_index"],
        )
        for i, c in enumerate(chunks)
    ]
    t0 = time.perf_counter()
    flat = VectorStoreIndex([n.model_copy() for n in nodes], embed_model=embed_model)
    t_flat = time.perf_counter() - t0
    t0 = time.perf_counter()
    store = TreehopVectorStore(Treehop(embedder=embedder), base_uri="viking://resources/cran")
    tree = VectorStoreIndex(
        [n.model_copy() for n in nodes],
        storage_context=StorageContext.from_defaults(vector_store=store),
        embed_model=embed_model,
    )
    t_tree = time.perf_counter() - t0
    print(f"ingest: SimpleVectorStore {t_flat:.1f}s, treehop {t_tree:.1f}s", flush=True)

    def search(index: Any) -> Callable[[str], list[Document]]:
        retriever = index.as_retriever(similarity_top_k=k)

        def go(q: str) -> list[Document]:
            hits = retriever.retrieve(q)
            return [Document(h.node.get_content(), metadata=dict(h.node.metadata)) for h in hits]

        return go

    def doc_of(d: Document) -> str:
        return str(d.metadata["doc"])

    rows = [
        run("simple", search(flat), queries, qrels, doc_of),
        run("treehop", search(tree), queries, qrels, doc_of),
    ]
    store.close()
    client = store.client
    if isinstance(client, Treehop):
        client.close()
    return rows


if __name__ == "__main__":
    main()
