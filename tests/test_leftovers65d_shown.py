"""A refused value is shown only as far as the message shows it, in every module (helper
leftovers65d, bench/README.md "(helper leftovers65d)"). leftovers65b bounded
``validation.shown_value``; the lexical index, the client's constructor, the reader
processes, the integration kit and ``arguments._short`` still wrote ``{value!r}`` whole:
refusing a 10**6-item list built its whole repr (the message was megabytes), and a list
nested 10**5 deep raised RecursionError (not a ``TreehopError``) from the f-string.

Each case checks the message's size and that it is the same for a 10**4- and a 10**6-item
value (it does not grow with the input), not the wall time. Each test fails on b41afd8a
unless it says it is a control.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import InvalidQueryError, TreehopError
from treehop.redaction import redact
from treehop.validation import shown_value

from treehop_test_doubles import BagOfWordsEmbedder


def _deep(n: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(n):
        value = [value]
    return value


# (the three shapes a hostile value takes: long, wide, deep)
SHAPES: dict[str, Callable[[int], object]] = {
    "list": lambda n: list(range(n)),
    "dict": lambda n: {i: i for i in range(n)},
    "deep": lambda n: _deep(n),
}


def _message(call: Callable[[object], object], value: object) -> str:
    with pytest.raises(TreehopError) as caught:
        call(value)
    return str(caught.value)


def _check_bounded(call: Callable[[object], object], name: str) -> None:
    for shape, build in SHAPES.items():
        small = _message(call, build(10**4))
        large = _message(call, build(10**6 if shape != "deep" else 10**5))
        assert len(large) < 400, (name, shape, len(large))
        assert large == small, (name, shape)  # (the message does not grow with the value)
        assert "..." in large, (name, shape, large)  # (cut, not dropped)


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from treehop import Treehop

    path = tmp_path_factory.mktemp("l65d") / "idx"
    with Treehop(path, embedder=BagOfWordsEmbedder()) as c:
        c.add_resource(
            "deploy with a rolling update", target_uri="viking://resources/a", is_text=True
        )
    return path


def test_the_lexical_index_shows_k1_b_k_size_and_dense_weight_bounded() -> None:
    from treehop.lexical import LexicalIndex, validate_dense_weight

    lex = LexicalIndex()
    _check_bounded(lambda v: LexicalIndex(k1=v), "k1")  # type: ignore[arg-type]
    _check_bounded(lambda v: LexicalIndex(b=v), "b")  # type: ignore[arg-type]
    _check_bounded(lambda v: lex.top("deploy", k=v), "k")  # type: ignore[arg-type]
    _check_bounded(lambda v: lex.max_score("deploy", v), "size")  # type: ignore[arg-type]
    _check_bounded(validate_dense_weight, "dense_weight")  # type: ignore[arg-type]


def test_the_client_constructor_shows_strict_directory_vectors_and_readers_bounded(
    index: Path,
) -> None:
    from treehop import Treehop

    emb = BagOfWordsEmbedder()
    _check_bounded(lambda v: Treehop(strict=v, embedder=emb), "strict")  # type: ignore[arg-type]
    _check_bounded(
        lambda v: Treehop(directory_vectors=v, embedder=emb),  # type: ignore[arg-type]
        "directory_vectors",
    )
    _check_bounded(
        lambda v: Treehop(index, reader_processes=v, embedder=emb),  # type: ignore[arg-type]
        "reader_processes",
    )


def test_a_reader_pool_shows_its_counts_bounded(index: Path) -> None:
    from treehop.reader_processes import ReaderPool

    _check_bounded(lambda v: ReaderPool(index, processes=v), "processes")  # type: ignore[arg-type]
    _check_bounded(lambda v: ReaderPool(index, timeout_s=v), "timeout_s")  # type: ignore[arg-type]


def test_a_choice_refused_by_find_is_shown_bounded(index: Path) -> None:
    # (arguments._short: mode, context_type, depth and the flags; 60 characters)
    from treehop import Treehop

    with Treehop(index, embedder=BagOfWordsEmbedder()) as c:
        _check_bounded(lambda v: c.find("deploy", mode=v), "mode")  # type: ignore[arg-type]
        message = _message(lambda v: c.find("deploy", mode=v), list(range(10**6)))  # type: ignore[arg-type]
        assert "got" not in message and "[0, 1, 2, 3" in message
        shown = message.split("unknown mode ", 1)[1].split(";", 1)[0]
        assert len(shown) == 60 and shown.endswith("...")
        # a 5,000-digit integer: repr raises ValueError (Python's digit limit) in the message
        too_long = _message(lambda v: c.find("deploy", mode=v), 10**5000)  # type: ignore[arg-type]
        assert "an integer of 16610 bits" in too_long


def test_the_integrations_show_a_path_and_a_target_bounded(index: Path) -> None:
    from langchain_treehop import TreehopVectorStore
    from llama_index.retrievers.treehop import TreehopRetriever as LITreehopRetriever
    from treehop import Treehop
    from treehop import integration_kit as kit

    _check_bounded(lambda v: kit.check_index_exists(v, "TreehopRetriever"), "path")  # type: ignore[arg-type]
    _check_bounded(
        lambda v: LITreehopRetriever.from_defaults(path=v, embed_model=BagOfWordsEmbedder()),  # type: ignore[arg-type]
        "from_defaults(path)",
    )
    with Treehop(index, embedder=BagOfWordsEmbedder()) as client:
        store = TreehopVectorStore(client)
        _check_bounded(
            lambda v: store.similarity_search("deploy", k=1, target_uri=[v]), "target_uri"
        )


def test_messages_that_fit_are_unchanged(index: Path) -> None:
    # control: a short refused value is shown exactly as repr writes it (also on b41afd8a)
    from treehop import Treehop
    from treehop.lexical import LexicalIndex, validate_dense_weight

    with pytest.raises(InvalidQueryError, match=r"^k must be a non-negative integer, got -1$"):
        LexicalIndex().top("x", k=-1)
    with pytest.raises(InvalidQueryError, match=r"^dense_weight must be a number, got 'x'$"):
        validate_dense_weight("x")  # type: ignore[arg-type]
    with pytest.raises(InvalidQueryError, match=r"^strict must be True or False, got 'yes'$"):
        Treehop(strict="yes", embedder=BagOfWordsEmbedder())  # type: ignore[arg-type]
    with (
        Treehop(index, embedder=BagOfWordsEmbedder()) as c,
        pytest.raises(InvalidQueryError, match=r"^unknown mode 'fastest'; expected one of"),
    ):
        c.find("deploy", mode="fastest")  # type: ignore[arg-type]


def test_a_non_number_k1_is_a_typed_error() -> None:
    # (b41afd8a: math.isfinite on a string raised TypeError past the TreehopError contract)
    from treehop.lexical import LexicalIndex

    with pytest.raises(InvalidQueryError, match=r"^k1 must be a finite number >= 0, got 'x'$"):
        LexicalIndex(k1="x")  # type: ignore[arg-type]


_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=30) | st.floats(),
    lambda inner: (
        st.lists(inner, max_size=6)
        | st.dictionaries(st.integers(), inner, max_size=6)
        | st.tuples(inner, inner)
    ),
    max_leaves=40,
)


@settings(max_examples=200, deadline=None)
@given(value=_VALUES, chars=st.integers(min_value=4, max_value=120))
def test_shown_value_is_repr_when_it_fits_and_its_cut_prefix_otherwise(
    value: object, chars: int
) -> None:
    full = repr(value)
    shown = shown_value(value, chars)
    if len(full) <= chars:
        assert shown == redact(full)
    else:
        assert shown == redact(full[: chars - 3] + "...")


def test_the_store_the_sessions_and_a_remote_timeout_show_values_bounded(index: Path) -> None:
    # (``{value!r:.100}`` cut the text only after the whole repr was built)
    from treehop import Treehop
    from treehop.embedders.openai_compatible import OpenAICompatibleEmbedder
    from treehop.stores.embedded import EmbeddedStore

    _check_bounded(lambda v: EmbeddedStore(verify=v), "verify")  # type: ignore[arg-type]
    _check_bounded(lambda v: EmbeddedStore(vector_reads=v), "vector_reads")  # type: ignore[arg-type]
    _check_bounded(
        lambda v: OpenAICompatibleEmbedder(
            "m",
            base_url="http://127.0.0.1:9/v1",
            timeout_s=v,  # type: ignore[arg-type]
        ),
        "timeout_s",
    )
    with Treehop(index, embedder=BagOfWordsEmbedder()) as c:
        sid = c.create_session()
        _check_bounded(lambda v: c.add_message(sid, v, "hello"), "role")  # type: ignore[arg-type]


def test_the_taggers_and_rerankers_show_values_bounded() -> None:
    from treehop.rerankers.http_rerank import HTTPReranker
    from treehop.tagging.keywords import KeywordTagger
    from treehop.tagging.llm_tagger import LLMTagger

    _check_bounded(lambda v: KeywordTagger(window=v), "window")  # type: ignore[arg-type]
    _check_bounded(lambda v: KeywordTagger(method=v), "method")  # type: ignore[arg-type]
    _check_bounded(lambda v: KeywordTagger(max_df_ratio=v), "max_df_ratio")  # type: ignore[arg-type]
    _check_bounded(lambda v: KeywordTagger(min_score=v), "min_score")  # type: ignore[arg-type]
    url = "http://127.0.0.1:9"
    _check_bounded(lambda v: HTTPReranker(url, flavor=v), "flavor")  # type: ignore[arg-type]
    _check_bounded(lambda v: HTTPReranker(url, max_chars=v), "max_chars")  # type: ignore[arg-type]
    _check_bounded(lambda v: LLMTagger(object(), max_tags=v), "max_tags")  # type: ignore[arg-type]
    _check_bounded(lambda v: LLMTagger(object(), deadline_s=v), "deadline_s")  # type: ignore[arg-type]


def test_a_milvus_store_and_a_context_quota_show_values_bounded(index: Path) -> None:
    from treehop import Treehop
    from treehop.stores.milvus import MilvusStore

    _check_bounded(lambda v: MilvusStore(hybrid_fusion=v), "hybrid_fusion")  # type: ignore[arg-type]
    _check_bounded(lambda v: MilvusStore(dimension=v), "dimension")  # type: ignore[arg-type]
    _check_bounded(lambda v: MilvusStore(timeout=v), "timeout")  # type: ignore[arg-type]
    with Treehop(index, embedder=BagOfWordsEmbedder()) as c:
        # (a quota's key is hashable: a tuple, of any size)
        for n in (10**4, 10**6):
            message = _message(
                lambda v: c.assemble_context("deploy", quotas={v: 10}),  # type: ignore[dict-item]
                tuple(range(n)),
            )
            assert len(message) < 400, len(message)
