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


# ------------------------------------------------------------------------------ summaries

from treehop.ingest import summaries  # noqa: E402
from treehop.ingest.markup import adornment_char, parse  # noqa: E402


def _old_clip(text: str, n: int) -> str:
    text = " ".join(text[: n * 4 + 64].split())
    if len(text) <= n:
        return text
    cut = text[:n]
    sp = cut.rfind(" ")
    return (cut[:sp] if sp > n * 0.6 else cut).rstrip(" ,;:") + "…"


def _old_first_sentence(text: str, kind: str) -> str:
    body = " ".join(summaries._prose_lines(text, kind))[: summaries.SENTENCE_PROBE_CHARS]
    body = summaries._MARKUP_CHARS.sub("", body)
    m = summaries._SENT_END.search(body)
    return (body[: m.end()] if m else body).strip()


def _old_title_of(text: str, kind: str) -> str:
    if kind in {"markdown", "html", "rst"}:
        title = parse(text, kind).title
        if title:
            return title
    lines = text.split("\n", 400)[:400]
    if kind == "code":
        for pattern in (summaries._DOCSTRING, summaries._LINE_COMMENT):
            for ln in lines:
                m = pattern.match(ln)
                if m:
                    return _old_clip(m.group(1).strip().strip("\"'"), 120)
    for ln in lines:
        s = ln.strip()  # no overline or rule, no comment marker alone (usage87)
        if s and adornment_char(s) is None and summaries._WORDLESS.fullmatch(s) is None:
            return _old_clip(s, 120)
    return ""


def _old_summarize_file(name: str, text: str, kind: str) -> tuple[str, str]:
    outline: list[str] = []
    commented = False
    if kind in {"markdown", "html", "rst"}:
        doc = parse(text, kind)
        title = doc.title or _old_title_of(text, "text")
        outline = doc.headings
    elif (
        kind == "text"
        and text.lstrip().startswith("#")
        and (comments := summaries._opening_comments(text)) is not None
    ):
        # a plain text opening with # comment lines: read without the marks, under the
        # file's name (helper ingest76, ``summaries.COMMENT_BLOCKS_READ``)
        title, text, commented = "", comments, True
    else:
        title = _old_title_of(text, kind)
        if kind == "code":
            for ln in text.split("\n"):
                m = summaries._CODE_DEF.match(ln)
                if m:
                    outline.append(m.group(1))
    sent = _old_first_sentence(text, kind)
    head = title or summaries.humanize(name)
    opens = sent.startswith(head) and not commented
    abstract = head if opens else f"{head}: {sent}" if sent else head
    overview = abstract
    if outline:
        overview += "\nContents: " + "; ".join(dict.fromkeys(outline[:400]))
    return _old_clip(abstract, summaries.ABSTRACT_CHARS), _old_clip(
        overview, summaries.OVERVIEW_CHARS
    )


_PROSE = st.sampled_from(
    [
        "word",
        "Title",
        "x" * 130,
        " ",
        "  ",
        "\t",
        "\n",
        "\n\n",
        "\x0c",
        "\u2028",
        ".",
        "!",
        "?",
        "。",
        "*",
        "**",
        "_",
        "`",
        ">",
        "# Head\n",
        "Head\n====\n",
        "    code\n",
        "```\n",
        "def f():\n",
        '"""Doc string."""\n',
        "# comment\n",
        "…",
    ]
)
_PROSE_TEXT = st.tuples(st.lists(_PROSE, max_size=60), st.integers(0, 3)).map(
    lambda p: "".join(p[0]) * (1 + p[1] * 40)  # repeated: texts past the probes' cuts
)


@settings(max_examples=300, deadline=None)
@given(_PROSE_TEXT, st.sampled_from(["markdown", "rst", "html", "code", "text"]))
def test_summaries_equal_the_unbounded_versions(text: str, kind: str) -> None:
    """The first sentence (prefix-wise markup removal), the title (no line split) and the
    file summary (one whitespace collapse for abstract and overview) are what they were."""
    assert summaries.first_sentence(text, kind) == _old_first_sentence(text, kind)
    assert summaries.title_of(text, kind) == _old_title_of(text, kind)
    got = summaries.ExtractiveSummarizer().summarize_file("a-b_c.md", text, kind)
    assert got == _old_summarize_file("a-b_c.md", text, kind)


def test_first_sentence_end_at_the_probe_cut_reads_on() -> None:
    """A full stop exactly at the first probe's end is only a sentence end if a space
    follows: the probe must read on to see it."""
    n = summaries._FIRST_PROBE
    text = "a" * (n - 1) + ".b" + " rest. more"
    assert summaries.first_sentence(text, "text") == "a" * (n - 1) + ".b rest."


def test_title_is_the_first_non_blank_of_400_lines() -> None:
    for blank in (0, 1, 399, 400, 401):
        text = " \n" * blank + "  The title  \nbody"
        want = "The title" if blank < 400 else ""
        assert summaries.title_of(text, "text") == want == _old_title_of(text, "text")


# ---------------------------------------------------------------------- lexical tokenising

from treehop import text_tokenize  # noqa: E402
from treehop.lexical import LexicalIndex  # noqa: E402

_LEX_PIECES = st.sampled_from(
    [
        "Running",
        "runs",
        "the",
        "and",
        "Mach",
        "42",
        "x2",
        "node.js",
        "c++",
        "don't",
        "a_b",
        "é",
        "中文",
        " ",
        "\t",
        "\n",
        ".",
        ",",
        "-",
        "\x00",
        "\x1f",
        "…",
        "ﬁle",
        "Straße",
        "Ｋ8",
        "café",
    ]
)
_LEX_TEXT = st.lists(_LEX_PIECES, max_size=30).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.lists(_LEX_TEXT, max_size=8))
def test_batch_words_give_each_texts_tokens(texts: list[str]) -> None:
    """The one-cut batch gives each ASCII text exactly :func:`tokenize`'s tokens; a batch
    with a non-ASCII or NUL text is refused (it is tokenised text by text)."""
    got = text_tokenize.ascii_words(texts)
    if any(not t.isascii() or "\x00" in t for t in texts):
        assert got is None
    forms = [text_tokenize.ascii_form(t) for t in texts]
    for t, form in zip(texts, forms, strict=True):
        if t.isascii() and "\x00" not in t:
            assert form == t
    texts = [t for t, form in zip(texts, forms, strict=True) if form is not None]
    got = text_tokenize.ascii_words([f for f in forms if f is not None])
    assert got is not None
    words, occ, doc = got
    terms = text_tokenize.index_terms(words)
    per_text: list[list[str]] = [[] for _ in texts]
    for w, d in zip(occ.tolist(), doc.tolist(), strict=True):
        if terms[w]:
            per_text[d].append(terms[w])
    assert per_text == [text_tokenize.tokenize(t) for t in texts]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(_LEX_TEXT, min_size=1, max_size=6), min_size=1, max_size=3))
def test_lexical_upsert_batch_equals_token_lists(batches: list[list[str]]) -> None:
    """An index fed texts (the batch path where it applies) and one fed the same texts'
    token lists hold the same vocabulary (same term ids), postings and scores."""
    a, b = LexicalIndex(), LexicalIndex()
    a.upsert_tokens([999], [[""]])  # an empty token given by hand is a term...
    b.upsert_tokens([999], [[""]])  # ...but never one that a stopword maps to
    row = 0
    for texts in batches:
        rows = list(range(row, row + len(texts)))
        row += len(texts) // 2  # later batches replace some earlier rows
        a.upsert(rows, texts)
        b.upsert_tokens(rows, [text_tokenize.tokenize(t) for t in texts])
    assert a._terms == b._terms
    assert len(a) == len(b) and a.avgdl == b.avgdl
    for term in a._terms:
        assert a.document_frequency(term) == b.document_frequency(term)
    for query in ("running mach", "42 node", "x2 a b"):
        assert np.array_equal(a.score(query, size=1008), b.score(query, size=1008))
