"""One ``shown_name`` (helper leftovers64, bench/README.md "(helper leftovers64)"): a name of
the caller's input reads the same in the core's errors and in the framework adapters' (the
adapters had their own copy, the repr cut to 100 characters, where the core cut the name to
60), and a lone surrogate is shown as Python writes it. Each test fails on fbccbd78 unless it
says it is a control."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from langchain_treehop import TreehopRetriever, TreehopVectorStore
from treehop import Treehop
from treehop import integration_kit as kit
from treehop.errors import InvalidQueryError
from treehop.redaction import NAME_CHARS, redact, register_secret, shown_name

from treehop_test_doubles import BagOfWordsEmbedder

SECRET = "plainkey64qqzzxxyy"
register_secret(SECRET)
NAMES = {
    "80 characters": "n" * 80,
    "61 characters": "m" * 61,
    "a lone surrogate": "top\ud800k",
    "a newline": "top_k\n[ERROR] forged",
    "a registered key": SECRET,
    "a megabyte": "x" * 1_000_000,
}


@pytest.fixture(scope="module")
def client() -> Iterator[Treehop]:
    with Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None) as th:
        th.add_resource("alpha beta gamma", target_uri="viking://resources/a.md")
        yield th


def _shown_by(where: str, client: Treehop, name: str) -> str:
    """The error text ``where`` raises for one unknown keyword ``name``."""
    calls: dict[str, Any] = {
        "find": lambda: client.find("alpha", **{name: 1}),
        "kit.reject_extra": lambda: kit.reject_extra({name: 1}, "where"),
        "kit.unknown_arguments": lambda: (_ for _ in ()).throw(
            kit.unknown_arguments("Owner", [name], ["k"])
        ),
        "langchain retriever": lambda: TreehopRetriever(client=client).invoke("alpha", **{name: 1}),
        "langchain vector store": lambda: TreehopVectorStore(client=client).similarity_search(
            "alpha", **{name: 1}
        ),
    }
    with pytest.raises(InvalidQueryError) as ei:  # (UnknownArgumentError is one)
        calls[where]()
    return str(ei.value)


@pytest.mark.parametrize("case", sorted(NAMES))
@pytest.mark.parametrize(
    "where",
    [
        "find",
        "kit.reject_extra",
        "kit.unknown_arguments",
        "langchain retriever",
        "langchain vector store",
    ],
)
def test_the_core_and_the_adapters_show_a_name_the_same_way(
    client: Treehop, where: str, case: str
) -> None:
    name = NAMES[case]
    text = _shown_by(where, client, name)
    assert shown_name(name) in text, text[:300]
    assert SECRET not in text and "\n" not in text and len(text) < 3_000


def test_the_adapters_use_the_cores_function() -> None:
    # (the one definition: integration_kit re-exports redaction's)
    assert kit.shown_name is shown_name


def test_a_lone_surrogate_is_shown_as_python_writes_it() -> None:
    # fbccbd78's core form escaped it twice ('top\\\\ud800k': a backslash the name never had)
    assert shown_name("top\ud800k") == "'top\\ud800k'"


def test_a_cut_name_keeps_its_closing_quote() -> None:
    # (control: the core's form, kept)
    assert shown_name("n" * 80) == "'" + "n" * NAME_CHARS + "...'"


# (lone surrogates, control and format characters among letters, digits, spaces, symbols)
MIXED = st.characters(categories=["Cs", "Cc", "Cf", "Ll", "Lu", "Nd", "Zs", "So", "Po"])


@settings(max_examples=200, deadline=None)
@given(name=st.text(MIXED, max_size=150))
def test_a_shown_name_reads_back_as_the_cut_name(name: str) -> None:
    cut = name[:NAME_CHARS] + ("..." if len(name) > NAME_CHARS else "")
    assume(redact(repr(cut)) == repr(cut))  # (no secret-shaped text in it)
    shown = shown_name(name)
    assert ast.literal_eval(shown) == cut
    assert shown.isprintable() and len(shown) <= 10 * (NAME_CHARS + 3) + 2
