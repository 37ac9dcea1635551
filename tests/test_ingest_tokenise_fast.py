"""The ingest fast paths give exactly what the paths they replaced gave.

Each test keeps the replaced code as its oracle (a few lines each) and compares on
hypothesis-generated text built from the pieces that matter: words, technical tokens,
punctuation, every kind of whitespace (blank lines, tabs, Unicode spaces), marker and
control characters, non-ASCII letters and Chinese.
"""

from __future__ import annotations

import re

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop.tagging import keywords

_PIECES = st.sampled_from(
    [
        "feature",
        "Store",
        "stores",
        "k8s",
        "c++",
        "c#",
        "node.js",
        "a-b",
        "re-use",
        "don't",
        "x_y",
        "GPUs",
        "the",
        "42",
        "é",
        "café",
        "中文",
        ".",
        "..",
        ",",
        ";",
        "!",
        "?",
        ":",
        "-",
        "—",
        "'",
        "_",
        "#",
        "+",
        "(",
        ")",
        " ",
        "  ",
        "\t",
        "\n",
        "\n\n",
        "\n \n",
        "\r\n\r\n",
        "\x0b",
        "\x1c",
        "\x85",
        "\xa0",
        "\u3000",
        "\u2028",
        "\x01",
        "\x02",
    ]
)
_TEXT = st.lists(_PIECES, max_size=40).map("".join)


def _old_latin_tokens(texts: list[str]) -> tuple[list[str], list[int], list[int]]:
    """The token regex over all texts joined (the analysis before whitespace chunks)."""
    sep = "\n\n\x01\n\n"
    pieces = keywords._TOKEN_SPLIT_RE.split(sep + sep.join(texts))
    gaps, toks = pieces[0:-1:2], pieces[1::2]
    info = [(keywords._gap_code(g) if g else 0) + 4 * g.count("\x01") for g in gaps]
    distinct = list(dict.fromkeys(toks))
    ids = {t: i for i, t in enumerate(distinct)}
    return distinct, [ids[t] for t in toks], info


@settings(max_examples=400, deadline=None)
@given(st.lists(_TEXT, max_size=6))
def test_whitespace_chunks_give_the_regex_tokens_and_gaps(texts: list[str]) -> None:
    """Tokens, their first-seen order, gap codes and document starts all equal the old
    one-regex pass (texts holding a marker character are not given to this path)."""
    texts = [t for t in texts if "\x01" not in t and "\x02" not in t]
    distinct, tok, info = keywords._latin_tokens(texts)
    want = _old_latin_tokens(texts)
    if not want[1]:
        assert tok.size == 0
        return
    assert (distinct, tok.tolist(), info.tolist()) == want


@settings(max_examples=200, deadline=None)
@given(st.lists(_TEXT, max_size=6), st.booleans())
def test_batched_terms_equal_per_text_terms_with_any_whitespace(
    texts: list[str], bigrams: bool
) -> None:
    """The whole batch analysis (marker characters, CJK and all) equals the per-text one."""
    flat = keywords._flat_terms(texts, bigrams)
    parts = flat.parts(np.ones(len(flat.terms), bool))
    for i, text in enumerate(texts):
        terms, want_parts = keywords._analyse(text).terms(bigrams)
        got = sorted(t for d, t in zip(flat.doc.tolist(), flat.terms, strict=True) if d == i)
        assert got == sorted(terms)
        assert {t: p for (d, t), p in parts.items() if d == i} == want_parts


def test_paragraph_marker_is_the_only_whitespace_sentence_gap() -> None:
    """Why a blank line is marked before the cut: it is the one whitespace-only gap that
    ends a sentence, so ``alpha beta`` are a bigram across a space or a newline, not across
    a blank line."""
    assert re.fullmatch(keywords._PARAGRAPH, "\n \t\n")
    one = keywords._flat_terms(["alpha beta", "alpha\nbeta", "alpha\n\nbeta"], True)
    grams = sorted({(d, t) for d, t in zip(one.doc.tolist(), one.terms, strict=True)})
    assert (0, "alpha-beta") in grams and (1, "alpha-beta") in grams
    assert (2, "alpha-beta") not in grams
