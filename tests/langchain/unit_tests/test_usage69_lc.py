"""A user's first hour, continued (LangChain): ``source_path`` of added documents, and a
constructor keyword brought from another API.

- ``add_documents`` of a loader's documents (absolute ``source`` paths, as
  ``DirectoryLoader`` gives them) stored ``source_path`` as the bare file name, where
  ``add_resource`` of the same folder stores the path under it.
- ``TreehopRetriever(client, top_k=5)`` (LlamaIndex's and many vector databases' name) was
  pydantic's bare "Extra inputs are not permitted"; ``TreehopVectorStore(client, k=5)``
  (a search's keyword, given to the constructor) "store: unknown argument(s) ['k']".
  LangChain's own ``VectorStoreRetriever`` silently ignores both (``extra="ignore"``), and
  ``InMemoryVectorStore(emb, k=5)`` is Python's ``TypeError``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.documents import Document
from pydantic import ValidationError

from langchain_treehop import TreehopRetriever, TreehopVectorStore, add_documents
from treehop import Treehop
from treehop.errors import InvalidQueryError, UnknownArgumentError

from treehop_test_doubles import BagOfWordsEmbedder

_DEPLOY = "Run the deploy script with the blue-green flag to roll out a release."
_BACKUP = "Nightly backups rotate every seven days and are copied off site."


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Treehop]:
    with Treehop(path=tmp_path / "ix", embedder=BagOfWordsEmbedder(), tagger=None) as c:
        yield c


# ---------------------------------------------------------------------------- source_path
def test_loaded_documents_show_their_path_under_the_folder(client: Treehop) -> None:
    docs = [
        Document(_DEPLOY, metadata={"source": "/home/u/docs/guide/deploy.md"}),
        Document(_BACKUP, metadata={"source": "/home/u/docs/backups.md"}),
    ]
    assert add_documents(client, docs) == [
        "viking://resources/guide/deploy.md",
        "viking://resources/backups.md",
    ]
    [hit] = TreehopRetriever(client, k=1).invoke("deploy script blue-green")
    assert hit.metadata["source"] == "/home/u/docs/guide/deploy.md"  # the loader's, as given
    assert hit.metadata["source_path"] == "guide/deploy.md"  # was "deploy.md"
    assert hit.metadata["name"] == "deploy.md"
    # a filter on the path, as over a folder add_resource ingested
    found = TreehopRetriever(client, k=5, metadata_filter={"source_path": "guide/deploy.md"})
    assert [d.id for d in found.invoke("release")] == ["viking://resources/guide/deploy.md"]


# ---------------------------------------------------------------------------- retriever
@pytest.mark.parametrize(
    ("given", "meant"),
    [
        ("top_k", "k"),
        ("similarity_top_k", "k"),
        ("limit", "k"),
        ("search_kwarg", "search_kwargs"),
        ("vectorstore", "client"),
        ("filter", "metadata_filter"),
        ("tag_filters", "tag_filter"),
    ],
)
def test_an_unknown_retriever_field_names_the_one_meant(
    client: Treehop, given: str, meant: str
) -> None:
    with pytest.raises(ValidationError) as err:
        TreehopRetriever(client, **{given: 5})
    msg = str(err.value)
    assert "Extra inputs are not permitted" in msg  # pydantic's own words stay
    assert f"did you mean '{meant}'?" in msg
    [e] = err.value.errors()
    assert (e["type"], e["loc"], e["input"]) == ("extra_forbidden", (given,), 5)


def test_every_error_of_the_call_is_kept(client: Treehop) -> None:
    with pytest.raises(ValidationError) as err:
        TreehopRetriever(client=client, k=-1, top_k=3)
    errors = {e["loc"]: e["type"] for e in err.value.errors()}
    assert errors == {("k",): "greater_than_equal", ("top_k",): "extra_forbidden"}
    assert "did you mean 'k'?" in str(err.value)


def test_a_name_close_to_nothing_keeps_pydantic_s_message(client: Treehop) -> None:
    with pytest.raises(ValidationError) as err:
        TreehopRetriever(client=client, zzyzx=1)
    assert "Extra inputs are not permitted" in str(err.value)
    assert "did you mean" not in str(err.value)


def test_a_key_given_under_another_name_is_not_echoed(client: Treehop) -> None:
    """``api_key=`` (``ChatOpenAI``'s name) where the retriever takes ``llm_api_key``:
    pydantic echoed the key in its message (``input_value='sk-...'``)."""
    secret = "sk-live-0123456789abcdef"
    with pytest.raises(ValidationError) as err:
        TreehopRetriever(client=client, api_key=secret)
    assert "did you mean 'llm_api_key'?" in str(err.value)
    assert secret not in str(err.value) and secret not in repr(err.value.errors())


def test_a_key_in_the_constructor_dict_is_not_echoed(client: Treehop) -> None:
    """A model-level check's error showed the whole constructor dict as its input:
    ``input_value={'llm_api_key': 'sk-live-...'...}`` (the key's first characters)."""
    secret = "sk-live-0123456789abcdef"
    with pytest.raises(ValidationError) as err:
        TreehopRetriever(llm_api_key=secret, search_type="bogus", client=client)
    assert "search_type of 'bogus' not allowed" in str(err.value)
    assert "sk-live" not in str(err.value)


# ---------------------------------------------------------------------------- vector store
def test_a_search_keyword_given_to_the_store_says_where_it_goes(client: Treehop) -> None:
    for given in ("k", "top_k", "search_kwargs"):
        with pytest.raises(UnknownArgumentError) as err:
            TreehopVectorStore(client, **{given: 5})
        msg = str(err.value)
        assert f"'{given}'" in msg and "TreehopVectorStore" in msg
        assert "similarity_search(query, k=" in msg and "as_retriever(search_kwargs=" in msg
        # a treehop error, and Python's TypeError for an unexpected keyword
        assert isinstance(err.value, InvalidQueryError) and isinstance(err.value, TypeError)


@pytest.mark.parametrize(
    ("given", "meant"), [("base_ur", "base_uri"), ("embeddings", "embedding"), ("pth", "path")]
)
def test_a_misspelt_store_keyword_names_the_one_meant(
    client: Treehop, given: str, meant: str
) -> None:
    with pytest.raises(UnknownArgumentError, match=f"did you mean '{meant}'"):
        TreehopVectorStore(client=client, **{given: "x"})
