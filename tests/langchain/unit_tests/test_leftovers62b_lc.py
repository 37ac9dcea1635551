"""Items left open by stop 61, on the LangChain side (bench/README.md, "Leftovers, stop 62
continued (helper leftovers62b)"). Each test fails on 9c20d29."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.documents import Document
from pydantic import ValidationError

from langchain_treehop import TreehopRetriever, TreehopVectorStore, add_documents
from treehop import Treehop
from treehop.errors import InvalidQueryError, UnknownArgumentError

from treehop_test_doubles import BagOfWordsEmbedder

_PART1 = "Run the deploy script first; it checks the release notes."
_PART2 = "Then pass the blue-green flag to roll the release out without downtime."
_BACKUP = "Nightly backups rotate every seven days and are copied off site."


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Treehop]:
    with Treehop(path=tmp_path / "ix", embedder=BagOfWordsEmbedder(), tagger=None) as c:
        yield c


# --------------------------------------------------- source_path of a loader's pages
def test_a_loaders_pages_of_one_file_show_its_path_under_the_folder(client: Treehop) -> None:
    # 9c20d29: the pages of deploy.md (one source, added together: the chunks of one file)
    # came back without source_path, and a filter on it found nothing of them
    deploy = "/home/u/docs/guide/deploy.md"
    docs = [
        Document(_PART1, metadata={"source": deploy, "page": 0}),
        Document(_PART2, metadata={"source": deploy, "page": 1}),
        Document(_BACKUP, metadata={"source": "/home/u/docs/backups.md"}),
    ]
    uris = add_documents(client, docs)
    assert uris[:2] == [
        "viking://resources/guide/deploy.md#chunk-0",
        "viking://resources/guide/deploy.md#chunk-1",
    ]
    [hit] = TreehopRetriever(client, k=1).invoke("blue-green flag downtime")
    assert hit.id == uris[1]
    assert hit.metadata["source"] == deploy  # the loader's, as given
    assert hit.metadata["source_path"] == "guide/deploy.md"
    assert hit.metadata["page"] == 1
    # a filter on the path, as over a folder add_resource ingested: the file's pages only
    found = TreehopRetriever(client, k=5, metadata_filter={"source_path": "guide/deploy.md"})
    for query in ("blue-green flag downtime", "nightly backups off site"):
        got = found.invoke(query)
        assert got and {d.id for d in got} <= set(uris[:2])
        assert all(d.metadata["source_path"] == "guide/deploy.md" for d in got)


# ------------------------------------------- model_validate as the constructor
SECRET = "sk-live-0123456789abcdef"
URL = "https://admin:hunter2-pass@llm.example.com/v1"


def _cases(client: Treehop, index: str) -> list[dict[str, Any]]:
    return [
        {"client": client, "top_k": 5},  # another API's name: did you mean 'k'?
        {"client": client, "similarity_top_k": 3, "k": 2},
        {"client": client, "api_key": SECRET},  # a secret under an unknown name
        {"client": client, "llm_api_key": SECRET, "search_type": "bogus"},  # a model check
        {"path": index, "llm_api_key": SECRET, "llm_base_url": URL, "k": "many"},
        {"path": index, "llm_api_key": SECRET, "llm_base_url": URL, "search_type": "mmr2"},
        {"llm_api_key": 12345678901234, "client": client},  # a secret's own wrong type
    ]


def _failure(make: Callable[[], object]) -> ValidationError:
    with pytest.raises(ValidationError) as err:
        make()
    return err.value


def _plain(err: ValidationError) -> list[dict[str, Any]]:
    """The errors, each context value as its text (an exception compares by identity)."""
    out = []
    for e in err.errors(include_url=False):
        d = dict(e)
        if "ctx" in d:
            d["ctx"] = {k: str(v) for k, v in d["ctx"].items()}
        out.append(d)
    return out


def _shown(err: ValidationError) -> list[str]:
    """Everything an error shows or hands on: its message, its errors, its JSON."""
    return [str(err), repr(err), repr(err.errors()), err.json()]


def test_model_validate_fails_as_the_constructor_does(client: Treehop, tmp_path: Path) -> None:
    # 9c20d29: model_validate({...}) (which runs __init__, whose error pydantic re-raises)
    # lost the constructor's hiding: "input_value={'llm_api_key': 'sk-live-..." (the key's
    # first characters) in its message; now the same error, message and errors
    for data in _cases(client, str(tmp_path / "ix")):
        built = _failure(lambda data=data: TreehopRetriever(**data))
        validated = _failure(lambda data=data: TreehopRetriever.model_validate(dict(data)))
        assert str(validated) == str(built)
        assert _plain(validated) == _plain(built)
        if "client" not in data:  # (a client is no JSON)
            raw = json.dumps(data)
            from_json = _failure(lambda raw=raw: TreehopRetriever.model_validate_json(raw))
            assert str(from_json) == str(built)
    hinted = _failure(lambda: TreehopRetriever.model_validate({"client": client, "top_k": 5}))
    assert "did you mean 'k'?" in str(hinted)


def test_no_secret_in_any_error_of_the_constructor_or_model_validate(
    client: Treehop, tmp_path: Path
) -> None:
    # 9c20d29: hide_input hid the constructor dict from the message only: errors() and
    # json() held the whole llm_api_key (and a base URL's password), for the constructor
    # too; model_validate showed the key's first characters in its message
    for data in _cases(client, str(tmp_path / "ix")):
        for make in (
            lambda data=data: TreehopRetriever(**data),
            lambda data=data: TreehopRetriever.model_validate(dict(data)),
        ):
            for text in _shown(_failure(make)):
                assert "sk-live" not in text and "0123456789abcdef" not in text
                assert "hunter2" not in text and "12345678901234" not in text


def test_a_retriever_from_model_validate_hides_its_key_as_one_built(client: Treehop) -> None:
    # control: a valid dict builds the same retriever; its key is a SecretStr either way
    built = TreehopRetriever(client=client, k=3, llm_api_key=SECRET)
    validated = TreehopRetriever.model_validate({"client": client, "k": 3, "llm_api_key": SECRET})
    assert repr(validated) == repr(built) and SECRET not in repr(validated)
    assert validated.k == 3 and validated.llm_api_key is not None
    assert validated.llm_api_key.get_secret_value() == SECRET


# ------------------------------------------------ per-call keywords named as meant
@pytest.mark.parametrize(
    ("given", "meant"),
    [
        ("similarity_top_k", "'k'"),  # LlamaIndex's name
        ("n_results", "'k'"),
        ("metadata_filtr", "'metadata_filter'"),  # a typo
        ("dense_weigth", "'dense_weight'"),
        ("limit", "Use k instead of limit."),  # (the table's sentence, as before)
    ],
)
def test_a_calls_unknown_keyword_names_the_option_meant(
    client: Treehop, given: str, meant: str
) -> None:
    # 9c20d29: an InvalidQueryError naming the option only for the six names of its table
    # ("unknown retriever argument(s) ['similarity_top_k']. Per-call arguments are: ...")
    retriever = TreehopRetriever(client, k=2)
    for call in (
        lambda: retriever.invoke("backups", **{given: 3}),
        lambda: asyncio.run(retriever.ainvoke("backups", **{given: 3})),
        lambda: retriever.batch(["backups", "deploy"], **{given: 3}),
    ):
        with pytest.raises(UnknownArgumentError) as err:
            call()
        msg = str(err.value)
        assert f"['{given}']" in msg and meant in msg and "Per-call arguments are" in msg
        # still the InvalidQueryError it was, and Python's TypeError as the constructor's
        assert isinstance(err.value, InvalidQueryError) and isinstance(err.value, TypeError)


def test_a_search_keyword_names_the_one_meant(client: Treehop) -> None:
    store = TreehopVectorStore(client)
    for given, meant in (("top_k", "k"), ("fetchk", "fetch_k"), ("metadata_filter", "filter")):
        with pytest.raises(UnknownArgumentError, match=f"did you mean '{meant}'"):
            store.similarity_search("backups", **{given: 3})
    with pytest.raises(UnknownArgumentError) as err:  # control: close to nothing
        store.similarity_search("backups", zzyzx=3)
    assert "did you mean" not in str(err.value) and "the search arguments are" in str(err.value)
