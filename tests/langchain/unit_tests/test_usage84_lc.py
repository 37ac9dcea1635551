"""Helper usage84: a filter on a misspelt field names the keys the results show.

A retriever over a folder ``add_resource`` / ``treehop index`` wrote shows ``source`` on every
Document (``metadata_filter={"source": ...}`` works), but the ``InvalidFilterError`` for a
misspelt field listed only the stored keys (``name``, ``source_path``, ...): the key a
newcomer reads on every result, and should filter on, was not offered. LlamaIndex's
retriever likewise shows ``file_name`` / ``file_path``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from langchain_treehop import TreehopRetriever
from llama_index.retrievers.treehop import TreehopRetriever as LiRetriever
from treehop import Treehop
from treehop.errors import InvalidFilterError

from treehop_test_doubles import BagOfWordsEmbedder


def _client(tmp_path: Path) -> Treehop:
    site = tmp_path / "site"
    site.mkdir()
    (site / "auth.md").write_text("# Auth\n\nCreate a password file with htpasswd.\n")
    (site / "ssi.md").write_text("# SSI\n\nServer side includes need mod_include.\n")
    client = Treehop(embedder=BagOfWordsEmbedder(), tagger=None)
    client.add_resource(site, target_uri="viking://resources/site")
    return client


def _listed(message: str) -> list[str]:
    return message.split("stored fields: ", 1)[1].split(", ")


def test_langchain_message_offers_source(tmp_path: Path) -> None:
    with _client(tmp_path) as client:
        retriever = TreehopRetriever(client=client, k=2)
        [doc] = retriever.invoke("password htpasswd", metadata_filter={"source": "auth.md"})
        assert doc.metadata["source"] == "auth.md"  # (premise: the shown key filters)
        with pytest.raises(InvalidFilterError) as err:
            retriever.invoke("password", metadata_filter={"file": "auth.md"})
        listed = _listed(str(err.value))
        assert "source" in listed and "source_path" in listed
        assert listed == sorted(listed)


def test_llamaindex_message_offers_file_name(tmp_path: Path) -> None:
    from llama_index.core.vector_stores import MetadataFilter, MetadataFilters

    with _client(tmp_path) as client:
        bad = MetadataFilters(filters=[MetadataFilter(key="filename", value="auth.md")])
        with pytest.raises(InvalidFilterError) as err:
            LiRetriever(client, similarity_top_k=2, filters=bad).retrieve("password")
        listed = _listed(str(err.value))
        assert {"file_name", "file_path", "name", "source_path"} <= set(listed)


def test_core_find_message_is_unchanged_without_shown_keys(tmp_path: Path) -> None:
    from treehop.ingest.records import check_filter_fields

    with _client(tmp_path) as client:
        with pytest.raises(InvalidFilterError) as err:
            check_filter_fields(client, {"op": "must", "field": "file", "conds": ["x"]})
        assert "source" not in _listed(str(err.value))  # nothing shows it there
        assert "source_path" in _listed(str(err.value))
