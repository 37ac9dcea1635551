"""A user's first hour, continued (LlamaIndex): ``source_path`` of added documents, and a
constructor keyword brought from another API.

- ``add_documents`` of ``SimpleDirectoryReader`` documents (absolute ``file_path``) stored
  ``source_path`` as the bare file name, and the LLM's text showed ``source_path: deploy.md``
  where ``add_resource`` of the same folder shows ``guide/deploy.md``.
- ``TreehopRetriever(client, top_k=5)`` was Python's bare ``TypeError: ... got an unexpected
  keyword argument 'top_k'``; ``TreehopVectorStore(client, similarity_top_k=5)`` "store:
  unknown argument(s) ['similarity_top_k']". (LlamaIndex's own ``VectorIndexRetriever(index,
  top_k=5)`` silently ignores it and returns its default 2.)
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from llama_index.core.schema import Document, MetadataMode

from llama_index.retrievers.treehop import TreehopRetriever, add_documents
from llama_index.vector_stores.treehop import TreehopVectorStore
from treehop import Treehop
from treehop.errors import InvalidQueryError, UnknownArgumentError

from treehop_test_doubles import BagOfWordsEmbedder

_DEPLOY = "Run the deploy script with the blue-green flag to roll out a release."
_BACKUP = "Nightly backups rotate every seven days and are copied off site."


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Treehop]:
    with Treehop(path=tmp_path / "ix", embedder=BagOfWordsEmbedder(), tagger=None) as c:
        yield c


def test_reader_documents_show_their_path_under_the_folder(client: Treehop) -> None:
    docs = [
        Document(
            text=_DEPLOY,
            metadata={"file_path": "/home/u/docs/guide/deploy.md", "file_name": "deploy.md"},
        ),
        Document(
            text=_BACKUP,
            metadata={"file_path": "/home/u/docs/backups.md", "file_name": "backups.md"},
        ),
    ]
    add_documents(client, docs)
    [hit] = TreehopRetriever(client, similarity_top_k=1).retrieve("deploy script blue-green")
    meta = hit.node.metadata
    assert meta["file_path"] == "/home/u/docs/guide/deploy.md"  # the reader's, as given
    assert meta["source_path"] == "guide/deploy.md"  # was "deploy.md"
    assert "source_path: guide/deploy.md" in hit.node.get_content(metadata_mode=MetadataMode.LLM)


@pytest.mark.parametrize(
    ("given", "meant"),
    [
        ("top_k", "similarity_top_k"),
        ("k", "similarity_top_k"),
        ("similarity_topk", "similarity_top_k"),
        ("filter", "filters"),
        ("metadata_filter", "filters"),
        ("include_directory", "include_directories"),
    ],
)
def test_an_unknown_retriever_keyword_names_the_one_meant(
    client: Treehop, given: str, meant: str
) -> None:
    with pytest.raises(UnknownArgumentError) as err:
        TreehopRetriever(client, **{given: 3})
    msg = str(err.value)
    assert f"'{given}'" in msg and f"did you mean '{meant}'?" in msg
    # still Python's TypeError for an unexpected keyword, and a treehop error
    assert isinstance(err.value, TypeError) and isinstance(err.value, InvalidQueryError)


def test_a_keyword_close_to_nothing_lists_what_the_retriever_takes(client: Treehop) -> None:
    with pytest.raises(UnknownArgumentError) as err:
        TreehopRetriever(client, zzyzx=3)
    msg = str(err.value)
    assert "did you mean" not in msg and "similarity_top_k" in msg and "filters" in msg


def test_a_query_keyword_given_to_the_store_says_where_it_goes(client: Treehop) -> None:
    for given in ("similarity_top_k", "top_k"):
        with pytest.raises(UnknownArgumentError) as err:
            TreehopVectorStore(client, **{given: 5})
        msg = str(err.value)
        assert f"'{given}'" in msg and "TreehopVectorStore" in msg
        assert "as_retriever(similarity_top_k=" in msg


@pytest.mark.parametrize(
    ("given", "meant"), [("base_ur", "base_uri"), ("embedding", "embed_model"), ("pth", "path")]
)
def test_a_misspelt_store_keyword_names_the_one_meant(
    client: Treehop, given: str, meant: str
) -> None:
    with pytest.raises(UnknownArgumentError, match=f"did you mean '{meant}'"):
        TreehopVectorStore(client, **{given: "x"})
