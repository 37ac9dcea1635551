"""Items left open by stop 61, on the LlamaIndex side (bench/README.md, "Leftovers, stop 62
continued (helper leftovers62b)"). Each test fails on 9c20d29."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from llama_index.core.schema import MetadataMode, TextNode
from llama_index.core.vector_stores.types import VectorStoreQuery

from llama_index.retrievers.treehop import TreehopRetriever, add_documents
from llama_index.vector_stores.treehop import TreehopVectorStore
from treehop import Treehop
from treehop.errors import UnknownArgumentError
from treehop.integration_kit import reject_extra

from treehop_test_doubles import BagOfWordsEmbedder

_PART1 = "Run the deploy script first; it checks the release notes."
_PART2 = "Then pass the blue-green flag to roll the release out without downtime."
_BACKUP = "Nightly backups rotate every seven days and are copied off site."


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Treehop]:
    with Treehop(path=tmp_path / "ix", embedder=BagOfWordsEmbedder(), tagger=None) as c:
        yield c


# ----------------------------------------------- source_path of a reader's split nodes
def test_the_nodes_of_one_file_show_its_path_under_the_folder(client: Treehop) -> None:
    # 9c20d29: two nodes a splitter made of deploy.md (one file_path, added together: the
    # chunks of one file) showed no source_path, in their metadata nor in the LLM's text,
    # where the whole backups.md showed "source_path: backups.md"
    deploy = {"file_path": "/home/u/docs/guide/deploy.md", "file_name": "deploy.md"}
    nodes = [
        TextNode(text=_PART1, metadata=dict(deploy), start_char_idx=0),
        TextNode(text=_PART2, metadata=dict(deploy), start_char_idx=len(_PART1) + 1),
        TextNode(
            text=_BACKUP,
            metadata={"file_path": "/home/u/docs/backups.md", "file_name": "backups.md"},
        ),
    ]
    uris = add_documents(client, nodes)
    assert uris[:2] == [
        "viking://resources/guide/deploy.md#chunk-0",
        "viking://resources/guide/deploy.md#chunk-1",
    ]
    [hit] = TreehopRetriever(client, similarity_top_k=1).retrieve("blue-green flag downtime")
    meta = hit.node.metadata
    assert meta["file_path"] == deploy["file_path"]  # the reader's, as given
    assert meta["source_path"] == "guide/deploy.md"
    assert "source_path: guide/deploy.md" in hit.node.get_content(metadata_mode=MetadataMode.LLM)


# ------------------------------------------- model_validate as the constructor
SECRET = "sk-live-0123456789abcdef"


@pytest.mark.parametrize(
    "extra",
    [{"k": 5}, {"similarity_top_k": 3}, {"base_ur": "viking://resources/x"}, {"api_key": SECRET}],
)
def test_the_vector_stores_model_validate_fails_as_its_constructor(
    client: Treehop, extra: dict[str, Any]
) -> None:
    # 9c20d29: model_validate({...}) (which runs __init__) wrapped the constructor's
    # UnknownArgumentError in a ValidationError (value_error) whose errors() held the
    # whole dict, an api_key given by mistake included
    with pytest.raises(UnknownArgumentError) as built:
        TreehopVectorStore(client, **extra)
    with pytest.raises(UnknownArgumentError) as validated:
        TreehopVectorStore.model_validate({"client": client, **extra})
    assert str(validated.value) == str(built.value)
    assert SECRET not in str(validated.value) and SECRET not in repr(validated.value.args)


def test_the_vector_stores_model_validate_builds_the_same_store(client: Treehop) -> None:
    # control: a valid dict builds the store the constructor builds
    built = TreehopVectorStore(client, base_uri="viking://resources/kb")
    validated = TreehopVectorStore.model_validate(
        {"client": client, "base_uri": "viking://resources/kb"}
    )
    assert repr(validated) == repr(built)


# ------------------------------------------------ per-call keywords of the vector store
def test_the_vector_stores_unknown_call_keywords_are_unknown_argument_errors(
    client: Treehop,
) -> None:
    # 9c20d29: a plain InvalidQueryError; now the constructor's UnknownArgumentError (a
    # TypeError too: no LlamaIndex caller of add / delete / query catches one)
    store = TreehopVectorStore(client)
    query = VectorStoreQuery(query_str="backups", similarity_top_k=2)
    for call in (
        lambda: store.query(query, similarity_top_k=3),
        lambda: store.delete("doc-1", missing_ok=True),
        lambda: store.add([], batch=3),
    ):
        with pytest.raises(UnknownArgumentError, match="unknown argument"):
            call()


def test_reject_extra_names_the_keyword_meant() -> None:
    with pytest.raises(UnknownArgumentError) as err:
        reject_extra({"similarity_topk": 3, "zzyzx": 1}, "query", ("similarity_top_k",))
    msg = str(err.value)
    assert "'similarity_topk': did you mean 'similarity_top_k'?" in msg
    assert "'zzyzx': did you mean" not in msg
