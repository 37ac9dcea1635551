"""A large batch is analysed and counted in parts of consecutive documents
(``keywords._flat_parts``, ``KeywordTagger._fit_parts``): its numbering, counts, tags, saved
statistics and the cut offered to the BM25 upsert are those of the batch as one part.

Texts are hypothesis-generated from the pieces that make the numbering delicate: hyphenated
tokens (a bigram whose first part is hyphenated is spelled after every token), Chinese (the
per-text path, whose atoms come first), the tagger's marker characters, curly quotes, blank
lines, stopwords and numbers; part sizes of a few characters put a part boundary between
almost every pair of documents."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray

from treehop import text_tokenize
from treehop.tagging import keywords
from treehop.tagging.keywords import KeywordTagger

_PIECES = st.sampled_from(
    [
        "feature",
        "store",
        "Stores",
        "feature-store",
        "feature-store data",
        "a-b store",
        "a-b",
        "b-c",
        "data-lake",
        "k8s",
        "node.js",
        "c++",
        "GPUs",
        "don\u2019t",
        "the",
        "42",
        "中文分词",
        "机器学习",
        "café",
        ".",
        ",",
        " ",
        " ",
        " ",
        "\n",
        "\n\n",
        "\x01",
        "\x02",
    ]
)
_TEXT = st.lists(_PIECES, max_size=24).map("".join)
_SIZES = st.sampled_from([1, 5, 17, 60, 400])


def _rows(flat: keywords._Flat, offset: int) -> list[tuple[int, ...]]:
    """``flat``'s occurrences as sorted (document, term, part a, part b) rows."""
    cols = (flat.doc + offset, flat.term, flat.part_a, flat.part_b)
    return sorted(zip(*(c.tolist() for c in cols), strict=True))


@settings(max_examples=150, deadline=None)
@given(st.lists(_TEXT, max_size=12), _SIZES, st.booleans())
@example(
    ["data-lake feature. store", "a-b store, b-c", "中文分词 feature-store data", "a-b data"],
    1,
    True,
)
def test_parts_number_and_hold_the_occurrences_of_one_part(
    texts: list[str], size: int, bigrams: bool
) -> None:
    """Every part count gives the same keys and atoms (in order) as one part, and the parts'
    occurrences together are the one part's, row for row."""
    one = keywords._flat_parts(texts, bigrams, None)
    many = keywords._flat_parts(texts, bigrams, size)
    assert len(one) == 1
    assert np.array_equal(one.keys, many.keys)
    assert one.atoms.strs == many.atoms.strs
    (whole,) = list(one)
    got: list[tuple[int, ...]] = []
    for k, flat in enumerate(many):
        got += _rows(flat, many.bounds[k])
        assert flat.doc.size == 0 or 0 <= flat.doc.min() <= flat.doc.max() < (
            many.bounds[k + 1] - many.bounds[k]
        )
        if not flat.fixed_split:  # (a part's flag is its own: true only when it holds)
            continue
        bi = flat.part_a >= 0
        for t in np.unique(flat.term[bi]).tolist():
            rows = flat.term == t
            assert (
                len(set(zip(flat.part_a[rows].tolist(), flat.part_b[rows].tolist(), strict=True)))
                == 1
            )
    assert sorted(got) == _rows(whole, 0)
    assert many.bounds[0] == 0 and many.bounds[-1] == len(texts)


@contextmanager
def _part_size(size: int | None) -> Iterator[None]:
    """The tagger's batches cut in parts of ``size`` characters (None: one part)."""
    real = keywords._PART_CHARS
    keywords._PART_CHARS = size  # type: ignore[misc]
    try:
        yield
    finally:
        keywords._PART_CHARS = real  # type: ignore[misc]


def _tagger_run(texts: list[str], later: list[str]) -> tuple[object, ...]:
    """Everything a tagger shows of a batch: tags, scores, statistics, saved state, delta."""
    t = KeywordTagger(min_df=1, max_df_ratio=0.9)
    labels = t.partial_fit_extract(texts, texts)
    scored = t.extract_many_scored([*texts, *later]) if t.fitted else None
    state = t.to_bytes()
    saved = KeywordTagger.from_bytes(t.full_state())
    saved._base_id = "fixed"  # (a fresh random id per base)
    saved.partial_fit(later)
    delta = saved.state_delta()
    fitted = KeywordTagger(min_df=1)
    fitted.partial_fit(texts)
    return labels, scored, state, saved.to_bytes(), delta, fitted.to_bytes()


@settings(max_examples=120, deadline=None)
@given(st.lists(_TEXT, max_size=12), st.lists(_TEXT, max_size=4), _SIZES)
@example(
    ["data-lake feature. store", "a-b store, b-c", "中文分词 feature-store data", "a-b data"],
    ["lake-feature store"],
    1,
)
def test_tagger_in_parts_equals_one_part(texts: list[str], later: list[str], size: int) -> None:
    """Fit-and-extract, extraction, a later fit after a saved base, and a fit alone: the
    same tags, scores, statistics and bytes whether the batch is one part or many."""
    with _part_size(None):
        want = _tagger_run(texts, later)
    with _part_size(size):
        assert _tagger_run(texts, later) == want


@settings(max_examples=80, deadline=None)
@given(st.lists(_TEXT, max_size=10), _SIZES)
def test_offered_cut_in_parts_equals_one_part(texts: list[str], size: int) -> None:
    """The cut offered to an ingest scope's BM25 upsert: the same texts, chunks (numbered
    alike) and occurrences from parts as from one part; none when no text is Latin."""

    def offered(part: int | None) -> tuple[list[str], list[str], list[int]] | None:
        with _part_size(part), text_tokenize.sharing_cuts():
            KeywordTagger().partial_fit_extract(texts, texts)
            share = text_tokenize._SHARE.get()
            assert share is not None
            cut = share.cut
            return None if cut is None else (cut.texts, cut.chunks, cut.occ.tolist())

    assert offered(size) == offered(None)


def test_a_large_batch_is_cut_into_parts() -> None:
    """The ingest path takes the parts (a batch of more characters than one part holds has
    several) and tags as one part does."""
    rng = np.random.default_rng(3)
    vocab = [f"{a}{b}{c}" for a in "bdkmst" for b in ("al", "en", "or") for c in "nrsy"]
    texts = [
        ". ".join(" ".join(rng.choice(vocab, size=8).tolist()) for _ in range(12))
        for _ in range(5000)
    ]
    assert sum(map(len, texts)) > keywords._PART_CHARS
    parts = keywords._flat_parts(texts, True, keywords._PART_CHARS)
    assert len(parts) > 1
    got = KeywordTagger().partial_fit_extract(texts, texts)
    with _part_size(None):
        assert got == KeywordTagger().partial_fit_extract(texts, texts)
    assert any(got)


# ------------------------------------------------------------------------------------------
# The oracle: the one-pass analysis as it was before parts (keywords.py at a21e444), with the
# module's helpers it used.
# ------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _OldLatinTerms:
    """What the one pass found: unit and bigram rows over distinct tokens."""

    tok_key: NDArray[np.int64]
    unit_tok: NDArray[np.int64]
    unit_doc: NDArray[np.int64]
    gram_row: NDArray[np.int64]
    gram: NDArray[np.int64]
    fixed_split: bool


def _old_flat_terms(texts: Sequence[str], bigrams: bool) -> keywords._Flat:
    """``_flat_terms`` before parts: every Latin text in one pass."""
    for text in texts:
        if not isinstance(text, str):
            raise keywords.TaggerError(f"text must be a string, got {type(text).__name__}")
    atoms = keywords._Atoms()
    cols: tuple[list[NDArray[np.int64]], ...] = ([], [], [], [])
    latin: list[int] = []
    normed: list[str] = []
    for i, text in enumerate(texts):
        if text.isascii():  # (O(1)) NFKC-stable, no CJK, no curly quote: nothing to normalise
            if "\x01" not in text and "\x02" not in text:
                latin.append(i)
                normed.append(text)
                continue
            t = text
        else:
            t = unicodedata.normalize("NFKC", text).replace("\u2019", "'")
        if keywords._CJK_RE.search(t) is None and "\x01" not in t and "\x02" not in t:
            latin.append(i)
            normed.append(t)
            continue
        analysis = keywords._analyse_mixed(t)
        doc_terms, doc_parts = analysis.terms(bigrams)
        key = atoms.key
        pa = np.full(len(doc_terms), -1, dtype=np.int64)
        pb = pa.copy()
        # ``terms`` lists the units, then the bigrams; each bigram occurrence takes its key's
        # split as ``terms`` reports it (the last one in the text wins).
        grams = doc_terms[len(analysis.units) :]
        if grams:
            pa[len(analysis.units) :] = [key(doc_parts[g][0]) for g in grams]
            pb[len(analysis.units) :] = [key(doc_parts[g][1]) for g in grams]
        cols[0].append(np.full(len(doc_terms), i, dtype=np.int64))
        cols[1].append(np.fromiter(map(key, doc_terms), np.int64, len(doc_terms)))
        cols[2].append(pa)
        cols[3].append(pb)
    empty = np.zeros(0, dtype=np.int64)
    doc, term, part_a, part_b = (np.concatenate(c) if c else empty for c in cols)
    fixed = not bool((part_a >= 0).any())
    lat = _old_latin_batch(normed, np.asarray(latin, dtype=np.int64), bigrams, atoms)
    # One numbering of the batch's distinct keys. Latin unit keys come from the distinct
    # tokens (a few thousand) and bigram keys are made unique once, so no sort or search
    # runs over every occurrence; a bigram's parts are its two unit rows, gathered.
    g_keys, g_inv = np.unique(lat.gram, return_inverse=True)
    c_keys, c_inv = np.unique(term, return_inverse=True)
    tok_ok = lat.tok_key >= 0
    keys = keywords._distinct(np.concatenate((lat.tok_key[tok_ok], g_keys, c_keys)))
    tok_idx = np.searchsorted(keys, lat.tok_key)
    unit_idx = tok_idx[lat.unit_tok]
    gram_idx = np.searchsorted(keys, g_keys)[g_inv.reshape(-1)]
    bi = part_a >= 0
    part_a[bi] = np.searchsorted(keys, part_a[bi])  # a part is a unit of the same batch
    part_b[bi] = np.searchsorted(keys, part_b[bi])
    neg = np.full(lat.unit_tok.size, -1, dtype=np.int64)
    return keywords._Flat(
        np.concatenate((doc, lat.unit_doc, lat.unit_doc[lat.gram_row])),
        np.concatenate((np.searchsorted(keys, c_keys)[c_inv.reshape(-1)], unit_idx, gram_idx)),
        np.concatenate((part_a, neg, unit_idx[lat.gram_row - 1])),
        np.concatenate((part_b, neg, unit_idx[lat.gram_row])),
        keys,
        atoms,
        fixed and lat.fixed_split,
    )


def _old_latin_batch(
    texts: Sequence[str], ids: NDArray[np.int64], bigrams: bool, atoms: keywords._Atoms
) -> _OldLatinTerms:
    """``_latin_batch`` before parts: the units and bigrams of all Latin texts at once."""
    empty = np.zeros(0, dtype=np.int64)
    none = _OldLatinTerms(empty, empty, empty, empty, empty, True)
    if not texts:
        return none
    distinct, tok, info = keywords._latin_tokens(texts)
    if not tok.size:
        return none
    # Each distinct token is keyed once: tokens -> distinct-token index -> its key string's
    # atoms (-1: no term). Per distinct token: the term key, the atom of its whole string
    # (what a bigram's second part contributes), its length, and whether it is hyphenated.
    n_tok = len(distinct)
    tkey = np.full(n_tok, -1, dtype=np.int64)
    whole = np.full(n_tok, -1, dtype=np.int64)
    length = np.zeros(n_tok, dtype=np.int64)
    hyph = np.zeros(n_tok, dtype=bool)
    key_strs: list[str] = []
    atom, k_of = atoms.atom, atoms.key
    for i, k in enumerate(map(keywords._english_key, distinct)):
        key_strs.append(k or "")
        if k is None:
            continue
        tkey[i] = k_of(k)
        whole[i] = atom(k)
        length[i] = len(k)
        hyph[i] = "-" in k
    term = tkey[tok]
    none_tok = term < 0
    # A phrase breaks at punctuation or a sentence end before a token, and after a token
    # that is not a content word (a stopword, a number).
    code = info & 3
    phrase = np.cumsum(code > 0) + np.concatenate(([0], np.cumsum(none_tok[:-1])))
    doc = ids[np.cumsum(info >> 2) - 1]
    keep = ~none_tok
    units, udoc, uphrase, utok = term[keep], doc[keep], phrase[keep], tok[keep]
    out = _OldLatinTerms(tkey, utok, udoc, empty, empty, True)
    if not bigrams or units.size < 2:
        return out
    j = np.flatnonzero((uphrase[1:] == uphrase[:-1]) & (units[1:] != units[:-1])) + 1
    ta, tb = utok[j - 1], utok[j]
    fits = length[ta] + 1 + length[tb] <= keywords._MAX_TOKEN_CHARS
    j, ta, tb = j[fits], ta[fits], tb[fits]
    # The first part's head atom and the second part's whole atom; a hyphenated first part
    # (``a-b`` + ``c`` is ``a`` + ``b-c``) is spelled out, once per distinct token pair.
    gram = keywords._pack(tkey[ta] >> 32, whole[tb])
    odd = np.flatnonzero(hyph[ta])
    if odd.size:
        pair, inv = np.unique(ta[odd] * n_tok + tb[odd], return_inverse=True)
        spelled = [k_of(f"{key_strs[p // n_tok]}-{key_strs[p % n_tok]}") for p in pair.tolist()]
        gram[odd] = np.asarray(spelled, dtype=np.int64)[inv.reshape(-1)]
    out.gram_row, out.gram, out.fixed_split = j, gram, not odd.size
    return out


@settings(max_examples=200, deadline=None)
@given(st.lists(_TEXT, max_size=12), st.booleans())
@example(
    ["data-lake feature. store", "a-b store, b-c", "中文分词 feature-store data", "a-b data"], True
)
def test_one_part_is_the_old_single_pass(texts: list[str], bigrams: bool) -> None:
    """One part is the analysis as it was: the same atoms in the same order, the same keys
    and the same columns, row for row (so the statistics and saved state built from them,
    by the unchanged fit, are too)."""
    new, old = keywords._flat_terms(texts, bigrams), _old_flat_terms(texts, bigrams)
    assert new.atoms.strs == old.atoms.strs
    assert np.array_equal(new.keys, old.keys)
    for name in ("doc", "term", "part_a", "part_b"):
        assert np.array_equal(getattr(new, name), getattr(old, name)), name
    assert new.fixed_split == old.fixed_split
