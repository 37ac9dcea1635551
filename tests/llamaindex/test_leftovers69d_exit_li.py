"""What a LlamaIndex build writes through treehop survives a process that never closes it
(helper leftovers69d, bench/README.md "(helper leftovers69d)"; leftovers69c's open item:
"a LlamaIndex ``from_defaults(documents=...)`` that wrote could lose uncommitted writes").

Every write (``add`` / ``insert``, ``from_defaults(documents=...)``'s ingest) saves the
store's manifest before it returns (``TreeWriter.finish``), so a process that drops its
index, or keeps it to the interpreter's teardown, loses nothing: a new process reopens all
of it. This passes on 25be04fa too: evidence, not a regression (the retriever's close at
exit raced the thread pools' shutdown there without losing anything; that race is pinned by
tests/test_leftovers69d_exit.py).
"""

from __future__ import annotations

from pathlib import Path

from treehop_test_doubles import run_script

_WRITE = """\
import sys
sys.path[:0] = {paths!r}
import logging
logging.getLogger("treehop").addHandler(logging.StreamHandler(sys.stdout))
from llama_index.core import Document, StorageContext, VectorStoreIndex
from llama_index.core.node_parser import SentenceSplitter
from llama_index.retrievers.treehop import TreehopRetriever
from llama_index.vector_stores.treehop import TreehopVectorStore
from li_helpers import WordHashEmbedding

base = {index!r}
emb = WordHashEmbedding()
docs = [
    Document(text=f"Page {{i}} says the harbour tide turns at hour {{i}}. " * 12, id_=f"d{{i}}",
             metadata={{"file_path": f"/notes/p{{i}}.txt"}})
    for i in range(4)
]
split = [SentenceSplitter(chunk_size=64, chunk_overlap=0)]
for name in ("dropped", "kept"):
    store = TreehopVectorStore(path=f"{{base}}/{{name}}", embed_model=emb)
    ctx = StorageContext.from_defaults(vector_store=store)
    index = VectorStoreIndex.from_documents(docs, storage_context=ctx, embed_model=emb,
                                            transformations=split)
    index.insert(Document(text="A late note on the river.", id_="late",
                          metadata={{"file_path": "/notes/late.txt"}}))
    print(name, len(store.get_nodes()), flush=True)
    if name == "dropped":
        del index, ctx, store
retriever = TreehopRetriever.from_defaults(documents=docs, path=f"{{base}}/retriever",
                                           embed_model=emb)
print("retriever", len(retriever.retrieve("harbour tide")) > 0, flush=True)
del retriever  # (the program's last line: its client's close starts as the exit does)
"""

_COUNT = """\
import sys
sys.path[:0] = {paths!r}
from llama_index.retrievers.treehop import TreehopRetriever
from llama_index.vector_stores.treehop import TreehopVectorStore
from li_helpers import WordHashEmbedding
for name in ("dropped", "kept"):
    store = TreehopVectorStore(path={index!r} + "/" + name, embed_model=WordHashEmbedding())
    print(name, len(store.get_nodes()), len({{n.ref_doc_id for n in store.get_nodes()}}))
    store.close()
with TreehopRetriever.from_defaults(path={index!r} + "/retriever",
                                    embed_model=WordHashEmbedding()) as r:
    print("retriever", sorted({{n.node.metadata.get("file_path") for n in r.retrieve("harbour")}}))
"""


def test_an_index_built_and_never_closed_is_all_there_in_a_new_process(tmp_path: Path) -> None:
    written = run_script(_WRITE, tmp_path, tmp_path)
    assert len(written) == 3, written  # (no logged failure of a close at exit)
    dropped, kept = (int(line.split()[1]) for line in written[:2])
    assert written[2] == "retriever True"
    assert dropped == kept > 5  # (four pages of several chunks, and the late note)
    read = run_script(_COUNT, tmp_path, tmp_path)
    assert read[:2] == [f"dropped {dropped} 5", f"kept {kept} 5"]
    assert read[2].startswith("retriever [") and "p0.txt" in read[2]
