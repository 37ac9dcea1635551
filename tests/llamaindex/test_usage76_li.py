"""A LlamaIndex date range (helper usage76).

``SimpleDirectoryReader`` gives every document ``creation_date`` / ``last_modified_date`` as
``"YYYY-MM-DD"`` text, and ``SimpleVectorStore`` compares ``GTE "2026-01-01"`` as strings.
treehop's ranges are numeric: the refusal now says how to store a date so a range works, and
this test follows that advice through a real ``SimpleDirectoryReader`` and ``VectorStoreIndex``.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pytest
from llama_index.core import SimpleDirectoryReader, StorageContext, VectorStoreIndex
from llama_index.core.readers.file.base import default_file_metadata_func
from llama_index.core.vector_stores import FilterOperator, MetadataFilter, MetadataFilters

from llama_index.vector_stores.treehop import TreehopVectorStore
from treehop import Treehop
from treehop.errors import InvalidFilterError

from treehop_test_doubles import BagOfWordsEmbedder

NEW = dt.datetime(2026, 5, 1, tzinfo=dt.UTC).timestamp()
OLD = dt.datetime(2023, 5, 1, tzinfo=dt.UTC).timestamp()


def _folder(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "new.md").write_text("# Release notes\n\nThe spindle now turns faster.\n")
    (root / "old.md").write_text("# Old release notes\n\nThe spindle turned slowly.\n")
    os.utime(root / "new.md", (NEW, NEW))
    os.utime(root / "old.md", (OLD, OLD))
    return root


def _mtime(path: str) -> dict[str, object]:
    """The advice (docs/llamaindex.md): the file's time as a number beside the reader's keys."""
    return {**default_file_metadata_func(path), "modified": os.stat(path).st_mtime}


def test_the_premise_the_reader_stores_dates_as_text(tmp_path: Path) -> None:
    docs = SimpleDirectoryReader(str(_folder(tmp_path))).load_data()
    assert {d.metadata["last_modified_date"] for d in docs} == {"2026-05-01", "2023-05-01"}


def test_a_text_date_range_names_the_number_way_and_that_way_works(tmp_path: Path) -> None:
    root = _folder(tmp_path)
    with Treehop(None, embedder=BagOfWordsEmbedder()) as client:
        store = TreehopVectorStore(client)
        docs = SimpleDirectoryReader(str(root), file_metadata=_mtime).load_data()
        index = VectorStoreIndex.from_documents(
            docs,
            storage_context=StorageContext.from_defaults(vector_store=store),
            embed_model=store.embed_model,
        )
        text_date = MetadataFilters(
            filters=[
                MetadataFilter(key="modified", value="2026-01-01", operator=FilterOperator.GTE)
            ]
        )
        with pytest.raises(InvalidFilterError, match=r"as a number \(epoch seconds"):
            index.as_retriever(filters=text_date).retrieve("release notes spindle")
        since = dt.datetime(2026, 1, 1, tzinfo=dt.UTC).timestamp()
        by_number = MetadataFilters(
            filters=[MetadataFilter(key="modified", value=since, operator=FilterOperator.GTE)]
        )
        hits = index.as_retriever(filters=by_number, similarity_top_k=5).retrieve(
            "release notes spindle"
        )
        assert [h.node.metadata["file_name"] for h in hits] == ["new.md"]
