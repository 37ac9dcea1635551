"""Adversarial pass over stop 59's new surface (helper attacks65).

1. ``add_memory`` hands its place check to its own ``add_resource`` through the context
   variable ``client._MEMORY_TARGET_CHECK`` (helper leftovers59). The variable stayed set for
   the whole call, and every thread or task started inside it copies the context: an
   embedder that writes to a second index (a cache, a log) saw it, so that index's
   ``add_resource`` ran the first client's memory check in place of its own "lies inside
   the document" check, and turned a document there into a folder (its text gone).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from treehop import Treehop
from treehop.errors import EmbeddingError, InvalidQueryError, InvalidURIError

from treehop_test_doubles import BagOfWordsEmbedder


def _client(embedder: BagOfWordsEmbedder | None = None) -> Treehop:
    return Treehop(None, embedder=embedder or BagOfWordsEmbedder(), tagger=None)


class _WritesElsewhere(BagOfWordsEmbedder):
    """An embedder that, on its first call, adds a text to ``other`` below its document
    ``doc`` (the write a second index's own check refuses) and records the answer."""

    def __init__(self, other: Treehop) -> None:
        super().__init__()
        self.other = other
        self.answers: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not self.answers:
            try:
                self.other.add_resource("inner words", target_uri="viking://resources/doc/in")
                self.answers.append("written")
            except InvalidURIError as exc:
                self.answers.append(str(exc))
        return super().embed(texts)


@pytest.mark.parametrize("call", ["add_memory", "add_resource"])
def test_a_second_index_written_inside_add_memory_keeps_its_own_check(call: str) -> None:
    """The nested add is refused during ``add_memory`` as during an ``add_resource`` (the
    control): the second index's document stays a document. Failed before: ``written``
    under ``add_memory``, and ``doc`` became a folder."""
    with _client() as other:
        other.add_resource("alpha beta gamma document text", target_uri="viking://resources/doc")
        emb = _WritesElsewhere(other)
        with _client(emb) as th:
            if call == "add_memory":
                th.add_memory("the user likes green tea", name="tea")
            else:
                th.add_resource("the user likes green tea", name="tea")
        assert len(emb.answers) == 1
        assert "lies inside the document" in emb.answers[0]
        assert other.stat("viking://resources/doc").is_leaf
        assert "alpha beta gamma" in other.read("viking://resources/doc")


# -- 2. the sync client's find / find_many: arguments that do not bind ------------------------


@pytest.mark.parametrize(
    ("method", "args", "kwargs", "said"),
    [
        ("find", ("q", 5), {}, "takes 2 positional arguments but 3 were given"),
        ("find", ("q", "resource"), {}, "takes 2 positional arguments"),
        ("find", ("q",), {"query": "r"}, "multiple values for argument 'query'"),
        ("find_many", (["q"], 5), {}, "takes 2 positional arguments"),
        ("find_many", (["q"], 5), {"limit": 2}, "takes 2 positional arguments"),
    ],
)
def test_sync_find_arguments_that_do_not_bind_are_invalid_query_errors(
    method: str, args: tuple[object, ...], kwargs: dict[str, object], said: str
) -> None:
    """``th.find("q", 5)`` (a limit given by position, as ``similarity_search(q, k)``
    takes it): usage65 made every other sync method's binding error an
    ``InvalidQueryError`` naming ``Treehop.<method>()``, but find / find_many have their own
    wrappers; before, Python's raw ``TypeError`` naming ``AsyncTreehop.find()``."""
    with _client() as th:
        th.add_resource("alpha beta gamma", name="doc")
        with pytest.raises(InvalidQueryError) as info:
            getattr(th, method)(*args, **kwargs)
        message = str(info.value)
        assert message.startswith(f"Treehop.{method}() ")
        assert said in message
        assert "AsyncTreehop" not in message
        assert "it takes query" in message or "it takes queries" in message


def test_sync_find_many_takes_query_vectors_none() -> None:
    """``query_vectors=None`` is the parameter's default; the async client takes it, the
    sync one refused it as "unknown search option(s) 'query_vectors'"."""
    with _client() as th:
        th.add_resource("alpha beta gamma", name="doc")
        expected = [r.resources for r in th.find_many(["alpha"], limit=2)]
        got = [r.resources for r in th.find_many(["alpha"], query_vectors=None, limit=2)]
        assert [[h.uri for h in hs] for hs in got] == [[h.uri for h in hs] for hs in expected]
        assert got[0]


def test_a_method_without_parameters_says_so() -> None:
    """``th.save(1)``: the message ended "it takes " (an empty list)."""
    with _client() as th:
        with pytest.raises(InvalidQueryError, match=r"it takes no arguments$"):
            th.save(1)  # type: ignore[call-arg]
        with pytest.raises(InvalidQueryError, match=r"it takes no arguments$"):
            th.list_sessions(user="x")  # type: ignore[call-arg]


# -- 3. given_or_default: what the embedding wrappers take ------------------------------------


class _RaisingAttributes:
    """An object whose every attribute read raises (a proxy to a dead connection), its text
    holding a key."""

    def __getattr__(self, name: str) -> object:
        raise RuntimeError("proxy down: api_key=sk-attacks65secret")


def _wrappers() -> list[type]:
    from langchain_treehop import TreehopEmbeddings
    from llama_index.retrievers.treehop import TreehopEmbedding

    return [TreehopEmbeddings, TreehopEmbedding]


@pytest.mark.parametrize("index", [0, 1])
def test_an_embedder_class_given_for_an_instance_is_refused(index: int) -> None:
    """``TreehopEmbeddings(BagOfWordsEmbedder)`` (the parentheses forgotten): the class has
    callable ``embed`` / ``aembed_query`` (unbound functions), so it was taken, and the first
    ``embed_query`` raised Python's ``TypeError: ... missing 1 required positional
    argument``."""
    wrapper = _wrappers()[index]
    with pytest.raises(
        EmbeddingError, match=r"the class BagOfWordsEmbedder.*BagOfWordsEmbedder\(\)"
    ):
        wrapper(BagOfWordsEmbedder)


@pytest.mark.parametrize("index", [0, 1])
def test_an_embedder_whose_attributes_raise_is_an_embedding_error(index: int) -> None:
    """Before: the object's own ``RuntimeError`` escaped the core's check raw, its text (a
    key) included."""
    wrapper = _wrappers()[index]
    with pytest.raises(EmbeddingError) as info:
        wrapper(_RaisingAttributes())
    assert "_RaisingAttributes" in str(info.value)
    assert "sk-attacks65secret" not in str(info.value)
    assert info.value.__cause__ is None


class _NameRaises(BagOfWordsEmbedder):
    """A working embedder whose ``name`` property raises (a name read from a remote config)."""

    @property  # type: ignore[override]
    def name(self) -> str:
        raise RuntimeError("config down: api_key=sk-attacks65name")


class _NameNotText(BagOfWordsEmbedder):
    name = 42  # type: ignore[assignment]


@pytest.mark.parametrize("index", [0, 1])
@pytest.mark.parametrize("embedder", [_NameRaises, _NameNotText])
def test_an_embedder_whose_name_is_unreadable_is_an_embedding_error(
    index: int, embedder: type
) -> None:
    """The index stores the embedder's ``name`` (one vector space per index), and
    LlamaIndex's ``TreehopEmbedding`` reads it at construction: a ``name`` that raised let the
    caller's ``RuntimeError`` (a key in its text) escape raw there (attacks65's open item),
    and a name that is not text was taken. Both wrappers now refuse either as an
    ``EmbeddingError`` at construction, the caller's text unshown and unchained."""
    wrapper = _wrappers()[index]
    with pytest.raises(EmbeddingError, match="name") as info:
        wrapper(embedder())
    assert "sk-attacks65name" not in str(info.value)
    assert info.value.__cause__ is None


def test_llamaindex_embedding_model_name_keyword_is_an_embedding_error() -> None:
    """``TreehopEmbedding(model_name="all-MiniLM-L6-v2")``, as LlamaIndex's other embedding
    classes are built: pydantic's raw ``TypeError: ... got multiple values for keyword
    argument 'model_name'``. Now an ``EmbeddingError`` that says where the name comes from."""
    from llama_index.retrievers.treehop import TreehopEmbedding

    with pytest.raises(EmbeddingError, match="model_name"):
        TreehopEmbedding(model_name="all-MiniLM-L6-v2")
    own = TreehopEmbedding(BagOfWordsEmbedder())
    assert own.model_name == BagOfWordsEmbedder.name
    # its own name is taken (a to_dict round trip carries it)
    again = TreehopEmbedding(BagOfWordsEmbedder(), **own.to_dict())
    assert again.model_name == own.model_name


# -- 4. the same arguments on the reader-process paths ----------------------------------------


def test_reader_process_paths_bind_their_arguments(tmp_path: Path) -> None:
    """With ``reader_processes=``, a second concurrent ``find`` goes to the pool
    (``ReaderPool.find``: Python's raw ``TypeError`` naming ``ReaderPool.find()``), and a
    ``find_many`` of 8 or more queries splits over it, where an extra positional argument
    was dropped, silently (``find_many(qs, 5)`` answered as ``find_many(qs)``). The local
    slot is held here as a concurrent call holds it."""
    path = tmp_path / "idx"
    with Treehop(path, embedder=BagOfWordsEmbedder(), tagger=None) as th:
        th.add_resource("alpha beta gamma", name="doc")
        th.save()
    with Treehop(path, embedder=BagOfWordsEmbedder(), tagger=None, reader_processes=1) as th:
        assert th._wait_readers()  # (the pool started: a start never delays a call)
        # (the local slot held, as another thread's find holds it: this one goes to the pool)
        bad = pytest.raises(InvalidQueryError, match=r"^Treehop\.find\(\) takes 2 positional")
        with th._local_slot, bad:
            th.find("alpha", 5)  # type: ignore[misc]
        queries = ["alpha"] * 8
        with pytest.raises(InvalidQueryError, match=r"^Treehop\.find_many\(\) takes 2 positional"):
            th.find_many(queries, 5)  # type: ignore[misc]
        assert [r.resources[0].uri for r in th.find_many(queries)] == ["viking://resources/doc"] * 8
