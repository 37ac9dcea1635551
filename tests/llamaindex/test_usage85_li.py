"""Helper usage85: a file's name said twice above every passage of a query engine's prompt.

lighttpd's doc folder through ``treehop index``: every file sits at the top of the folder, so
its stored ``name`` and ``source_path`` are the same (``ssl.txt``), and each node's LLM text
began ``name: ssl.txt`` / ``source_path: ssl.txt``. ``name`` stays in ``metadata`` and is
left out of the LLM's and the embedder's text only there; a file in a subfolder still shows
both (``name: drupal`` / ``source_path: examples/drupal``).
"""

from __future__ import annotations

from pathlib import Path

from li_helpers import WordHashEmbedding
from llama_index.core import VectorStoreIndex
from llama_index.core.schema import MetadataMode

from llama_index.retrievers.treehop import LlamaIndexEmbedder, TreehopRetriever
from llama_index.retrievers.treehop.nodes import echoed_keys
from llama_index.vector_stores.treehop import TreehopVectorStore
from treehop import Treehop

_SSL = "To enable SSL for the whole server provide a certificate and enable the SSL engine.\n"
_DRUPAL = "# If a PHP file is served, this block will handle the request via php-fpm.\n"


def _client(tmp_path: Path) -> Treehop:
    site = tmp_path / "site"
    (site / "examples").mkdir(parents=True)
    (site / "ssl.txt").write_text(_SSL * 3, encoding="utf-8")
    (site / "examples" / "drupal").write_text(_DRUPAL * 3, encoding="utf-8")
    client = Treehop(embedder=LlamaIndexEmbedder(WordHashEmbedding()), tagger=None)
    client.add_resource(tmp_path / "site", target_uri="viking://resources/site")
    return client


def _texts(node) -> tuple[str, str]:
    return node.get_content(MetadataMode.LLM), node.get_content(MetadataMode.EMBED)


def _check(nodes_by_file: dict) -> None:
    top, nested = nodes_by_file["ssl.txt"], nodes_by_file["drupal"]
    assert top.metadata["name"] == top.metadata["source_path"] == "ssl.txt"  # kept
    for text in _texts(top):
        assert "source_path: ssl.txt" in text
        assert "name: ssl.txt" not in text
    assert nested.metadata["source_path"] == "examples/drupal"
    for text in _texts(nested):  # the path says more: both shown
        assert "name: drupal" in text and "source_path: examples/drupal" in text


def test_retriever_nodes_say_a_top_level_files_name_once(tmp_path: Path) -> None:
    with _client(tmp_path) as client:
        hits = TreehopRetriever(client, similarity_top_k=5).retrieve("SSL engine php-fpm request")
        by_file = {h.node.metadata["name"]: h.node for h in hits}
    assert {"ssl.txt", "drupal"} <= set(by_file), list(by_file)
    _check(by_file)


def test_vector_store_nodes_say_a_top_level_files_name_once(tmp_path: Path) -> None:
    with _client(tmp_path) as client:
        store = TreehopVectorStore(client)
        index = VectorStoreIndex.from_vector_store(store, embed_model=store.embed_model)
        hits = index.as_retriever(similarity_top_k=5).retrieve("SSL engine php-fpm request")
        by_file = {h.node.metadata["name"]: h.node for h in hits}
    assert {"ssl.txt", "drupal"} <= set(by_file), list(by_file)
    _check(by_file)


def test_only_an_equal_string_name_is_left_out() -> None:
    assert echoed_keys({"name": "a.md", "source_path": "a.md"}, "text") == ["name"]
    assert echoed_keys({"name": "a.md", "source_path": "d/a.md"}, "text") == []
    assert echoed_keys({"name": "", "source_path": ""}, "text") == []
    assert echoed_keys({"name": "a.md"}, "text") == []
