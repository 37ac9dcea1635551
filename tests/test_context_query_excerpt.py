"""A chunk that does not fit whole is cut to the sentences that match the query
(``EXCERPT_AT="query"``), not to its start: FAQ chunks hold several answers and the one that
earned the hit is often the last. Linear in the chunk, bounded for hostile queries, and the
budget stays a hard bound."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import treehop.context_assembly as ca
from treehop import Treehop
from treehop.context_assembly import (
    _query_window,
    _sentence_bounds,
    assemble_context,
    default_token_counter,
    query_terms,
)
from treehop.errors import InvalidQueryError
from treehop.models import ContextType, MatchedContext

from treehop_test_doubles import BagOfWordsEmbedder

ROOT = "viking://resources/docs"
FIRST = " ".join(
    f"To build the library statically, pass option {n} to configure and rerun make."
    for n in range(8)
)
SECOND = " ".join(
    f"Mailing list posts need a full command line and its complete output, item {n}."
    for n in range(8)
)
ANSWER = (
    "The linker complains about missing symbols because the headers were included without "
    'extern "C" around them in your C++ application.'
)
CHUNK = f"Usage › Questions\n\n{FIRST}\n\n{SECOND}\n\n{ANSWER}"
QUERY = "Why does the linker complain about missing symbols in my C++ application?"


def _chunk(content: str, score: float = 0.9, i: int = 4) -> MatchedContext:
    return MatchedContext(
        uri=f"{ROOT}/faq.md#chunk-{i}",
        context_type=ContextType.RESOURCE,
        is_leaf=True,
        abstract="Usage › Questions",
        content=content,
        score=score,
        chunk_index=i,
    )


def test_excerpt_keeps_the_sentences_that_match_the_query() -> None:
    counter = default_token_counter()
    assert counter.count(CHUNK) > 250
    hit = _chunk(CHUNK)
    out = assemble_context([hit], max_tokens=120, query=QUERY)
    assert out.tokens <= 120 and counter.count(out.text) <= 120
    [section] = out.sections
    assert section.excerpt and section.tier == "content"
    assert ANSWER in out.text
    assert "- … " in out.text  # marked as cut before it
    # without the query (or with EXCERPT_AT="edge") the chunk's start, as before: no answer
    plain = assemble_context([hit], max_tokens=120)
    assert ANSWER not in plain.text and "option 0" in plain.text


def test_edge_mode_and_unmatched_query_keep_the_start(monkeypatch: pytest.MonkeyPatch) -> None:
    hit = _chunk(CHUNK)
    plain = assemble_context([hit], max_tokens=120)
    # no word of the query in the chunk: the start, exactly as without a query
    assert assemble_context([hit], max_tokens=120, query="zebra quokka").text == plain.text
    # a query that matches the start best keeps the start
    assert assemble_context([hit], max_tokens=120, query="configure option").text == plain.text
    monkeypatch.setattr(ca, "EXCERPT_AT", "edge")
    assert assemble_context([hit], max_tokens=120, query=QUERY).text == plain.text


def test_ties_keep_the_window_that_starts_at_the_match(monkeypatch: pytest.MonkeyPatch) -> None:
    # the default keeps the earliest of equal windows: it opens inside the answer before
    first = assemble_context([_chunk(CHUNK)], max_tokens=120, query=QUERY)
    assert ANSWER in first.text and "- … " + ANSWER not in first.text
    # with ``excerpt_paragraphs`` (off by default) it starts at the answer's own paragraph
    para = assemble_context([_chunk(CHUNK)], max_tokens=120, query=QUERY, excerpt_paragraphs=True)
    assert "- … " + ANSWER in para.text
    monkeypatch.setattr(ca, "EXCERPT_TIES", "last")
    last = assemble_context([_chunk(CHUNK)], max_tokens=120, query=QUERY)
    assert "- … " + ANSWER in last.text


def test_rarer_query_words_decide() -> None:
    # "application" is in every sentence; "linker" only in the last one
    sents = [f"Sentence {n} mentions the application only." for n in range(30)]
    sents.append("The linker flag fixes the application.")
    text = " ".join(sents)
    bounds = _sentence_bounds(text)
    span = _query_window(
        text, bounds, query_terms("linker application"), lambda a, b: b - a, 200, False
    )
    assert span is not None and "linker" in text[span[0] : span[1]]
    assert span[1] == len(text) and span[1] - span[0] <= 200


def test_window_search_is_linear_in_the_sentences() -> None:
    n = 50_000
    text = " ".join(f"Filler sentence {i % 7} here." for i in range(n)) + " The needle is here."
    bounds = _sentence_bounds(text)
    calls = 0

    def between(a: int, b: int) -> int:
        nonlocal calls
        calls += 1
        return b - a

    span = _query_window(text, bounds, query_terms("needle"), between, 300, False)
    assert span is not None and "needle" in text[span[0] : span[1]]
    # a two-pointer sweep: each sentence enters and leaves the window once
    assert calls <= 3 * len(bounds)


def test_hostile_queries_are_bounded_and_checked() -> None:
    hit = _chunk(CHUNK)
    # a 5 MB query: only its first 4,096 characters are read for words
    huge = "linker " * 700_000
    assert query_terms(huge) == frozenset({"linker"})
    out = assemble_context([hit], max_tokens=120, query=huge)
    assert out.tokens <= 120 and "linker" in out.text
    with pytest.raises(InvalidQueryError):
        assemble_context([hit], max_tokens=120, query=b"linker")  # type: ignore[arg-type]
    # a chunk with no sentence breaks: nothing to choose between, the usual excerpt rules
    one = _chunk("word " * 2000)
    assert assemble_context([one], max_tokens=100, query="word").tokens <= 100


class _PlainCounter:
    """The default tokenizer without ``additive_lines`` / ``spans`` (the generic path)."""

    name = "plain"

    def __init__(self) -> None:
        self.inner = default_token_counter()

    def count(self, text: str) -> int:
        return self.inner.count(text)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    parts=st.lists(st.text(max_size=200), min_size=1, max_size=8),
    query=st.text(max_size=60),
    max_tokens=st.integers(1, 300),
    plain=st.booleans(),
)
def test_budget_is_a_hard_bound_with_a_query(
    parts: list[str], query: str, max_tokens: int, plain: bool
) -> None:
    counter = _PlainCounter() if plain else default_token_counter()
    hits = [_chunk(p + " " + CHUNK[: 90 * (i + 1)], 1.0 - i / 10, i) for i, p in enumerate(parts)]
    out = assemble_context(hits, max_tokens=max_tokens, query=query, token_counter=counter)
    assert default_token_counter().count(out.text) <= max_tokens
    assert out.tokens == (default_token_counter().count(out.text) if out.text else 0)


def test_client_passes_its_query(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "faq.md").write_text(f"# Usage\n\n{FIRST}\n\n{SECOND}\n\n{ANSWER}\n")
    c = Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None)
    c.add_resource(str(docs), target_uri="viking://resources/faq")
    out = c.assemble_context(QUERY, max_tokens=110, target_uri="viking://resources/faq")
    assert out.tokens <= 110 and any(s.excerpt for s in out.sections)
    assert "missing symbols" in out.text


def test_query_words_are_the_lexical_index_terms() -> None:
    # the excerpt reads words as BM25 does (text_tokenize.tokenize): stemmed, stop words out
    assert query_terms("Why do my connections hit timeouts?") == frozenset(
        {"connect", "hit", "timeout"}
    )
    answer = "A slow server makes the client give up once its timeout expires."
    chunk = f"Usage › Questions\n\n{FIRST}\n\n{SECOND}\n\n{answer}"
    out = assemble_context([_chunk(chunk)], max_tokens=120, query="Why do I get timeouts?")
    # ``timeouts`` finds ``timeout``: the matching sentence, not the chunk's start
    assert answer in out.text and "option 0" not in out.text
    # a Chinese query is segmented as the index segments it, not read as one run
    assert len(query_terms("如何配置超时时间")) > 1


def test_a_query_cut_inside_a_word_leaves_the_piece_out() -> None:
    head = "timeout " * (ca.QUERY_CHARS // 8)
    assert query_terms(head + "x" * 10_000) == frozenset({"timeout"})
    assert query_terms("y" * 10_000) == frozenset()  # one cut word: no words at all
