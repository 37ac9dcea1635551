"""Word tokens for lexical (BM25) search over English and Chinese text.

Why a tokenizer of our own rather than ``bm25s``'s: its default keeps a run of Chinese characters
as one token, so a Chinese query matches a Chinese document only when the two runs are
identical. Here Han runs go through jieba's search-mode segmentation (words *and* their
sub-words, so that 中华人民共和国 also matches 人民 or 共和国), and everything else is split on
non-word characters.

English tokens are NFKC-normalised, case-folded, stripped of a compact stopword list and stemmed
with the Porter algorithm (implemented below, about a hundred lines, so that the core needs
neither ``nltk`` nor a C extension; stems are cached because vocabularies repeat). On Cranfield
stemming is worth +0.011 nDCG@10 and +0.022 recall@100 over the same tokens unstemmed.

jieba is optional: it loads its dictionary (about a second) on the first Chinese text only, with
its log lines silenced. Without jieba, Han runs fall back to overlapping character bigrams, which
match well but differently; :func:`tokenizer_id` names the variant so that an index built with
one is never silently queried with the other.
"""

from __future__ import annotations

import logging
import operator
import os
import re
import threading
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from itertools import count, repeat
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = [
    "CHINESE_STOPWORDS",
    "ENGLISH_STOPWORDS",
    "TOKENIZER_VERSION",
    "AsciiWords",
    "ChunkCut",
    "ascii_form",
    "ascii_words",
    "index_terms",
    "offer_cut",
    "porter_stem",
    "shared_words",
    "sharing_cuts",
    "tokenize",
    "tokenizer_id",
    "wants_cut",
]

TOKENIZER_VERSION = "1"
"""Bumped whenever :func:`tokenize` changes its output; stored with every lexical index."""

# Han ideographs (CJK Unified + Extension A + compatibility). Kana and Hangul are word
# characters handled by the generic branch: Korean separates words by spaces, and Japanese is
# out of scope for this tokenizer.
_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN_RE = re.compile(rf"(?P<han>[{_HAN}]+)|(?P<word>[^\W_{_HAN}]+)")

_ENGLISH_STOPWORDS_TEXT = """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its
    itself just me more most my myself no nor not of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    s t d ll m re ve
"""
ENGLISH_STOPWORDS: frozenset[str] = frozenset(_ENGLISH_STOPWORDS_TEXT.split())
"""English function words (the classic IR list, trimmed): they carry no topic and inflate
postings. Negations stay listed, as in every BM25 stopword list: BM25 cannot use them anyway."""

_CHINESE_STOPWORDS_TEXT = """
    的 了 是 在 和 与 及 或 也 就 都 而 并 但 之 其 这 那 这个 那个 这些 那些 一个 有 没有
    被 把 对 从 向 到 为 以 于 上 下 中 个 着 过 吗 呢 吧 啊 呀 么 什么 怎么 怎样 如何 哪
    哪些 哪个 我 你 他 她 它 我们 你们 他们 她们 它们 自己 所 等 则 即 将 已 已经 还 又 很
    非常 可以 能 会 要
"""
CHINESE_STOPWORDS: frozenset[str] = frozenset(_CHINESE_STOPWORDS_TEXT.split())
"""Chinese particles, pronouns and question words (the query side of 什么是…, 如何…)."""

_STOPWORDS = ENGLISH_STOPWORDS | CHINESE_STOPWORDS

# --------------------------------------------------------------------------------------------
# Porter stemmer (M. F. Porter, "An algorithm for suffix stripping", 1980), original rules,
# written from the published description. Only plain a-z words of length > 2 are stemmed.

_VOWELS = frozenset("aeiou")
_CV_TABLE = str.maketrans(
    {c: ("v" if c in _VOWELS else "y" if c == "y" else "c") for c in map(chr, range(128))}
)


def _cv(word: str) -> str:
    """The consonant/vowel pattern of ``word``: ``c`` or ``v`` per character, by Porter's
    definition (``y`` is a consonant at the start or after a vowel, else a vowel).

    Why a string: the conditions below are counts and slices of it (C-level), where testing
    each letter in Python was most of stemming a corpus's new words. A letter's class
    depends only on the letters before it, so a prefix's pattern is the pattern's prefix."""
    p = word.translate(_CV_TABLE)
    if "y" not in p:
        return p
    out = list(p)
    for i, ch in enumerate(out):
        if ch == "y":
            out[i] = "c" if i == 0 or out[i - 1] == "v" else "v"
    return "".join(out)


def _measure(stem: str) -> int:
    """m in [C](VC)^m[V]: the number of vowel-consonant sequences."""
    return _cv(stem).count("vc")


def _has_vowel(stem: str) -> bool:
    return "v" in _cv(stem)


def _double_consonant(word: str) -> bool:
    return len(word) >= 2 and word[-1] == word[-2] and _cv(word)[-1] == "c"


def _cvc(word: str) -> bool:
    """*o: ends consonant-vowel-consonant, the last not w, x or y (hop, not hoop or box)."""
    return len(word) >= 3 and word[-1] not in "wxy" and _cv(word)[-3:] == "cvc"


_STEP2 = (
    ("ational", "ate"),
    ("tional", "tion"),
    ("enci", "ence"),
    ("anci", "ance"),
    ("izer", "ize"),
    ("abli", "able"),
    ("alli", "al"),
    ("entli", "ent"),
    ("eli", "e"),
    ("ousli", "ous"),
    ("ization", "ize"),
    ("ation", "ate"),
    ("ator", "ate"),
    ("alism", "al"),
    ("iveness", "ive"),
    ("fulness", "ful"),
    ("ousness", "ous"),
    ("aliti", "al"),
    ("iviti", "ive"),
    ("biliti", "ble"),
)
_STEP3 = (
    ("icate", "ic"),
    ("ative", ""),
    ("alize", "al"),
    ("iciti", "ic"),
    ("ical", "ic"),
    ("ful", ""),
    ("ness", ""),
)
_STEP4_TEXT = "al ance ence er ic able ible ant ement ment ent ion ou ism ate iti ous ive ize"
_STEP4 = _STEP4_TEXT.split()


def _by_length(rules: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    # Porter applies only the rule with the longest matching suffix, even if its condition
    # then fails; trying suffixes longest first and stopping at the first match does that.
    return tuple(sorted(rules, key=lambda r: -len(r[0])))


_STEP2_SORTED = _by_length(_STEP2)
_STEP3_SORTED = _by_length(_STEP3)
_STEP4_SORTED = tuple(sorted(_STEP4, key=len, reverse=True))


_SUFFIXES: dict[tuple[tuple[str, str], ...], tuple[str, ...]] = {
    rules: tuple(r[0] for r in rules) for rules in (_STEP2_SORTED, _STEP3_SORTED)
}
"""Each rule table's suffixes, for one C-level ``endswith`` that passes over most words."""


def _replace_if_m(word: str, rules: tuple[tuple[str, str], ...], min_m: int) -> str:
    if not word.endswith(_SUFFIXES[rules]):
        return word
    for suffix, repl in rules:
        if word.endswith(suffix):
            stem = word[: -len(suffix)]
            return stem + repl if _measure(stem) > min_m else word
    return word


def _step1(word: str) -> str:
    if word.endswith("sses") or word.endswith("ies"):
        word = word[:-2]
    elif word.endswith("ss"):
        pass
    elif word.endswith("s"):
        word = word[:-1]

    if word.endswith("eed"):
        if _measure(word[:-3]) > 0:
            word = word[:-1]
    else:
        for suffix in ("ed", "ing"):
            if word.endswith(suffix) and _has_vowel(word[: -len(suffix)]):
                word = word[: -len(suffix)]
                if word.endswith(("at", "bl", "iz")):
                    word += "e"
                elif _double_consonant(word) and word[-1] not in "lsz":
                    word = word[:-1]
                elif _measure(word) == 1 and _cvc(word):
                    word += "e"
                break

    if word.endswith("y") and _has_vowel(word[:-1]):
        word = word[:-1] + "i"
    return word


def _step4(word: str) -> str:
    if not word.endswith(_STEP4_SORTED):
        return word
    for suffix in _STEP4_SORTED:
        if word.endswith(suffix):
            stem = word[: -len(suffix)]
            if _measure(stem) > 1 and (suffix != "ion" or stem.endswith(("s", "t"))):
                return stem
            return word
    return word


def _step5(word: str) -> str:
    if word.endswith("e"):
        stem = word[:-1]
        m = _measure(stem)
        if m > 1 or (m == 1 and not _cvc(stem)):
            word = stem
    if word.endswith("ll") and _measure(word) > 1:
        word = word[:-1]
    return word


@lru_cache(maxsize=262_144)
def porter_stem(word: str) -> str:
    """The Porter stem of a lower-case a-z word (other words are returned unchanged)."""
    if len(word) <= 2 or not word.isascii() or not word.isalpha():
        return word
    word = _step1(word)
    word = _replace_if_m(word, _STEP2_SORTED, 0)
    word = _replace_if_m(word, _STEP3_SORTED, 0)
    word = _step4(word)
    return _step5(word)


# --------------------------------------------------------------------------------------------
# Chinese segmentation

_jieba_lock = threading.Lock()
_jieba_state: dict[str, Any] = {}


def _new_jieba_lock_in_forked_child() -> None:
    """In a child made by ``os.fork``: a new :data:`_jieba_lock`. Why (helper attacks70):
    forked while another thread loaded jieba (about 1 s), the child inherited the lock held
    for good and its first Chinese text waited forever."""
    global _jieba_lock
    _jieba_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_jieba_lock_in_forked_child)


def _jieba() -> Any | None:
    """The jieba module, initialised once and quietly; None when it is not installed."""
    if "module" in _jieba_state:
        return _jieba_state["module"]
    with _jieba_lock:
        if "module" not in _jieba_state:
            try:
                import jieba
            except ImportError:
                _jieba_state["module"] = None
            else:
                # jieba prints "Building prefix dict ..." at DEBUG level through its own
                # handler; the library must not write to the user's stderr.
                jieba.setLogLevel(logging.WARNING)
                jieba.initialize()
                _jieba_state["module"] = jieba
    return _jieba_state["module"]


def _jieba_available() -> bool:
    if "module" in _jieba_state:
        return _jieba_state["module"] is not None
    import importlib.util

    return importlib.util.find_spec("jieba") is not None


HAN_PIECE = 500
"""The longest stretch of a Han run given to jieba at once; a longer run is cut into such
pieces. Why: jieba's HMM for characters outside its dictionary copies a path per character,
quadratic in the run (``tokenize("中" * 200_000)`` took 307 s, an 8,000-character query
2.5 s). A sentence of natural text is far shorter (punctuation ends a run), so its tokens
are unchanged; a cut inside a longer run can only split the word that straddles it."""


def _han_tokens(run: str) -> list[str]:
    jieba = _jieba() if len(run) > 1 else None
    if jieba is not None:
        # Search mode yields the words plus their in-dictionary sub-words: documents and
        # queries segmented differently ("人工智能" vs "人工 智能") still share tokens.
        if len(run) <= HAN_PIECE:
            return [w for w in jieba.lcut_for_search(run) if w.strip()]
        return [
            w
            for i in range(0, len(run), HAN_PIECE)
            for w in jieba.lcut_for_search(run[i : i + HAN_PIECE])
            if w.strip()
        ]
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def tokenizer_id() -> str:
    """Names the exact token stream :func:`tokenize` produces in this process."""
    return f"treehop-{TOKENIZER_VERSION}+{'jieba' if _jieba_available() else 'bigram'}"


_HAN_RE = re.compile(f"[{_HAN}]")
_WORD_RE = re.compile(rf"[^\W_{_HAN}]+")
_TERM_CACHE: dict[str, str] = {}
_TERM_CACHE_MAX = 1 << 18


def _term(word: str) -> str:
    """The index term of a non-Han word ('' for a stopword), memoised: corpora repeat words."""
    term = _TERM_CACHE.get(word)
    if term is None:
        if len(_TERM_CACHE) >= _TERM_CACHE_MAX:
            _TERM_CACHE.clear()  # unbounded vocabularies (ids, hashes) must not leak memory
        term = _TERM_CACHE[word] = "" if word in _STOPWORDS else porter_stem(word)
    return term


_ASCII_GAPS = bytes(c if chr(c).isascii() and chr(c).isalnum() else 32 for c in range(256))
"""Byte table: ASCII letters and digits kept, every other byte a space."""


def _terms_of(words: list[str]) -> list[str]:
    """Index terms of casefolded words: C-level lookups for the words seen before (nearly all
    of a corpus's), the Python stemmer only for new ones; stopwords dropped."""
    terms = list(map(_TERM_CACHE.get, words))
    if None in terms:
        terms = [_term(w) if t is None else t for w, t in zip(words, terms, strict=True)]
    return list(filter(None, terms))


def tokenize(text: str) -> list[str]:
    """Lexical tokens of ``text``: stemmed English words, jieba words for Chinese.

    Stopwords are dropped; digits are kept as tokens (part numbers, Mach numbers and years are
    often what a query is about).
    """
    if not text:
        return []
    if text.isascii():
        # ASCII (most texts): NFKC is the identity, casefold is lower(), and the words are
        # the runs of letters and digits: one C-level translate + split finds them ~2x faster
        # than the Unicode-class regex (tokenising is on the ingest path of every node).
        words = text.encode("ascii").lower().translate(_ASCII_GAPS).decode("ascii").split()
        return _terms_of(words)
    text = unicodedata.normalize("NFKC", text).casefold()
    if _HAN_RE.search(text) is None:
        return _terms_of(_WORD_RE.findall(text))
    out: list[str] = []
    for match in _TOKEN_RE.finditer(text):
        word = match.group("word")
        if word is not None:
            term = _term(word)
            if term:
                out.append(term)
        else:
            out.extend(w for w in _han_tokens(match.group("han")) if w not in _STOPWORDS)
    return out


_ASCII_GAPS_NUL = bytes(c if c == 0 or (chr(c).isalnum() and c < 128) else 32 for c in range(256))
""":data:`_ASCII_GAPS`, but NUL kept: the document mark of :func:`ascii_words`."""

AsciiWords = tuple[list[str], npt.NDArray[np.int64], npt.NDArray[np.int64]]


def ascii_words(texts: Sequence[str]) -> AsciiWords | None:
    """The words of many ASCII texts at once: the distinct casefolded words (first seen
    first), the distinct word of each word occurrence, and the text it is in; None when a
    text is not ASCII or holds a NUL (those go through :func:`tokenize` one by one).

    Why: tokenising texts one by one costs a handful of C calls and a list per text, and
    every word occurrence is then looked up as a term. Here the texts are joined (a NUL
    word between them), cut once with the same translate-and-split as :func:`tokenize`'s
    ASCII path, and each *distinct* word is made a term once (:func:`index_terms`): the
    same tokens, in the same order (``test_ingest_tokenise_fast`` compares them).
    """
    for text in texts:
        if not text.isascii() or "\x00" in text:
            return None
    big = " \x00 " + " \x00 ".join(texts)
    words = big.encode("ascii").lower().translate(_ASCII_GAPS_NUL).decode("ascii").split()
    # Each word's distinct index in one C-level pass: ``setdefault`` keeps the position of
    # a word's first occurrence, which ``dense`` turns into first-seen numbering.
    ids: dict[str, int] = {}
    first_at = np.fromiter(map(ids.setdefault, words, count()), np.int64, len(words))
    dense = np.empty(len(words), dtype=np.int64)
    dense[np.fromiter(ids.values(), np.int64, len(ids))] = np.arange(len(ids))
    occ = dense[first_at]
    mark = occ == 0  # the first word is the first text's mark
    doc = np.cumsum(mark) - 1
    keep = ~mark
    distinct = list(ids)
    # The mark's distinct slot stays (an empty word: no term); no occurrence refers to it.
    distinct[0] = ""
    return distinct, occ[keep], doc[keep]


def ascii_form(text: str) -> str | None:
    """An ASCII text whose words (:func:`ascii_words`) are :func:`tokenize`'s words of
    ``text``, or None (Han, other scripts, a NUL).

    A non-ASCII text is often ASCII once NFKC-normalised and casefolded (an ellipsis, a
    ligature, a full-width digit), and then :func:`tokenize`'s general path (``[^\\W_]+``
    runs) finds exactly the ASCII path's letter-and-digit runs."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text).casefold()
        if not text.isascii():
            return None
    return None if "\x00" in text else text


def index_terms(words: Sequence[str]) -> list[str]:
    """The index term of each casefolded ASCII word ('' for a stopword or an empty word)."""
    return [_term(w) if w else "" for w in words]


# --------------------------------------------------------------------------------------------
# Texts cut once, shared by the tagger and the BM25 index


class ChunkCut:
    """Texts cut at whitespace once: each distinct chunk numbered (first seen first) and the
    chunk of every occurrence, with a document mark (chunk 0, ``"\x01"``) before each text.

    Why: at ingest the keyword tagger and the BM25 index read the same leaf texts, and each
    cut them into words over the whole batch (~60 words a leaf; splitting and numbering them
    was ~40% of each one's analysis). A word never spans whitespace, so BM25's words of a
    text are the BM25 words of its whitespace chunks in order: :func:`shared_words` derives
    them from the tagger's cut, cutting only each *distinct* chunk (a corpus repeats its
    chunks: ~10k distinct among 1.2M at 20k leaves)."""

    __slots__ = ("_at", "_ids", "_marks", "_words", "chunks", "occ", "texts")

    def __init__(self, texts: list[str], chunks: list[str], occ: npt.NDArray[np.int64]):
        self.texts = texts
        """The texts cut (the very objects: a text is found again by identity)."""
        self.chunks = chunks
        """The distinct chunks, numbered in order (chunk 0 is the document mark)."""
        self.occ = occ
        """The chunk number of each occurrence; a text's chunks follow its mark (chunk 0).
        Other chunks without a word (a paragraph mark of the tagger) may occur in between."""
        self._at: dict[int, int] | None = None
        self._ids: dict[str, int] | None = None
        self._words: _ChunkWords | None = None
        self._marks: tuple[int, npt.NDArray[np.int64], npt.NDArray[np.int64]] | None = None

    def chunk_words(self) -> _ChunkWords:
        """The words of every distinct chunk (:func:`ascii_words` of the chunks, non-ASCII
        ones as wordless), computed once per cut and kept while no chunk is appended.

        Why kept: the BM25 upsert asks :func:`shared_words` once per run of ASCII texts
        between non-ASCII ones, and a documentation site has hundreds of such runs (a
        ``—`` or ``’`` in every few chunks); cutting all of the cut's chunks again for each
        run made an ingest quadratic (PostgreSQL's docs, 10k chunks: ~750 s writing with a
        free embedder, 2 s with this)."""
        w = self._words
        done = 0 if w is None else w.n_chunks
        if w is None or done != len(self.chunks):
            # Only the chunks not cut yet (``spans`` appends the chunks of texts it did not
            # cut: an upsert's directory texts) are cut now, their words numbered after
            # the known ones.
            chunks = [c if c.isascii() and "\x00" not in c else "" for c in self.chunks[done:]]
            cw = ascii_words(chunks)
            assert cw is not None  # ASCII and NUL-free by construction
            w = self._words = _ChunkWords.extend(w, len(chunks), *cw)
        return w

    def spans(self, texts: Sequence[str]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """Where each of ``texts`` lies in :attr:`occ` (start, count); a text not cut here
        (not the same object as one of :attr:`texts`) is cut now, its chunks appended."""
        if self._at is None:
            self._at = dict(zip(map(id, self.texts), count(), strict=False))
        # (kept while no text is appended: one upsert asks once per run of ASCII texts)
        if self._marks is None or self._marks[0] != self.occ.size:
            marks = np.flatnonzero(self.occ == 0)
            self._marks = (int(self.occ.size), marks, np.append(marks[1:], self.occ.size))
        _, marks, ends = self._marks
        found = np.fromiter(map(self._at.get, map(id, texts), repeat(-1)), np.int64, len(texts))
        hit = np.flatnonzero(found >= 0)
        # (an id is only a hint: the object must be the very one cut)
        mine = self.texts
        same = np.fromiter(
            map(
                operator.is_,
                map(mine.__getitem__, found[hit].tolist()),
                map(texts.__getitem__, hit.tolist()),
            ),
            bool,
            hit.size,
        )
        found[hit[~same]] = -1
        hit = hit[same]
        start = np.zeros(len(texts), dtype=np.int64)
        size = np.zeros(len(texts), dtype=np.int64)
        start[hit] = marks[found[hit]] + 1
        size[hit] = ends[found[hit]] - start[hit]
        extra: list[int] = []
        base = int(self.occ.size)
        missing = np.flatnonzero(found < 0).tolist()
        if missing and self._ids is None:
            self._ids = dict(zip(self.chunks, count(), strict=False))
            # a text's own "\x01" chunk must not read as a document mark: it gets a number
            # of its own (wordless all the same)
            self._ids.pop("\x01", None)
        ids, chunk_list = self._ids or {}, self.chunks
        for i in missing:
            start[i] = base + len(extra) + 1
            chunks = texts[i].split()
            size[i] = len(chunks)
            extra.append(0)
            for c in chunks:
                k = ids.get(c)
                if k is None:
                    k = ids[c] = len(chunk_list)
                    chunk_list.append(c)
                extra.append(k)
        if missing:
            self.occ = np.concatenate((self.occ, np.asarray(extra, dtype=np.int64)))
            self.texts += [texts[i] for i in missing]
            self._at = None
        return start, size


class _CutShare:
    __slots__ = ("cut",)

    def __init__(self) -> None:
        self.cut: ChunkCut | None = None


_SHARE: ContextVar[_CutShare | None] = ContextVar("treehop_cut_share", default=None)


@contextmanager
def sharing_cuts() -> Iterator[None]:
    """A scope (one ingest write) in which the tagger's cut of its texts (:func:`offer_cut`)
    is reused by the BM25 index (:func:`shared_words`). A context variable: the worker
    threads the write starts (``asyncio.to_thread`` copies the context) share it, and the
    cut is dropped with the scope (nothing outlives the write)."""
    token = _SHARE.set(_CutShare())
    try:
        yield
    finally:
        _SHARE.reset(token)


def wants_cut(n_texts: int) -> bool:
    """Whether :func:`offer_cut` of ``n_texts`` texts would keep the cut (a scope is open
    and holds no larger one): a caller that cuts its texts in parts gathers one cut of
    them all only then."""
    share = _SHARE.get()
    return share is not None and (share.cut is None or n_texts > len(share.cut.texts))


def offer_cut(texts: Sequence[str], chunks: Iterable[str], occ: npt.NDArray[np.int64]) -> None:
    """Keep a cut for the scope's BM25 upsert (the largest offered: the leaves' texts).
    ``chunks``: the distinct chunks in numbering order (the first is the document mark)."""
    share = _SHARE.get()
    if share is not None and wants_cut(len(texts)):
        share.cut = ChunkCut(list(texts), list(chunks), occ)


def shared_words(texts: Sequence[str]) -> AsciiWords | None:
    """:func:`ascii_words` of ``texts`` (ASCII, no NUL) from the scope's cut: equal to it,
    word for word and in the same first-seen numbering; None without a cut in scope.

    Each distinct chunk is cut into words once (one :func:`ascii_words` over the distinct
    chunks); the texts' chunk occurrences are gathered from the cut and expanded to their
    words; the words are renumbered in first-seen order (one ``minimum.at``, no sort)."""
    share = _SHARE.get()
    cut = share.cut if share is not None else None
    if cut is None:
        return None
    start, count = cut.spans(texts)
    # Chunks of texts outside the ASCII batch (never looked up here) count as wordless.
    cw = cut.chunk_words()
    c_words, c_occ = cw.words, cw.occ
    occ = cut.occ[_spans(start, count)]
    text_of = np.repeat(np.arange(len(texts), dtype=np.int64), count)
    if cw.word_of is not None:  # (most prose: a chunk is one word and its punctuation)
        words = cw.word_of[occ]
        has = words >= 0
        words, doc = words[has], text_of[has]
    else:
        assert cw.start is not None
        n = cw.count[occ]
        words = c_occ[_spans(cw.start[occ], n)]
        doc = np.repeat(text_of, n)
    # First-seen renumbering: slot 0 stays the document mark's empty word, as in ascii_words.
    # (Over the run's words only: a run is often a few texts of a large cut.)
    uniq, first, inv = np.unique(words, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty(uniq.size, dtype=np.int64)
    rank[order] = np.arange(1, uniq.size + 1, dtype=np.int64)
    return (
        ["", *map(c_words.__getitem__, uniq[order].tolist())],
        rank[inv.reshape(-1)] if words.size else np.zeros(0, dtype=np.int64),
        doc,
    )


class _ChunkWords:
    """:func:`ascii_words` of a cut's distinct chunks, with the lookups
    :func:`shared_words` derives from it (see :meth:`ChunkCut.chunk_words`)."""

    __slots__ = ("count", "ids", "n_chunks", "occ", "of", "start", "word_of", "words")

    def __init__(
        self,
        n_chunks: int,
        words: list[str],
        occ: npt.NDArray[np.int64],
        of: npt.NDArray[np.int64],
        ids: dict[str, int] | None = None,
    ) -> None:
        self.n_chunks = n_chunks
        self.words = words
        self.ids = ids if ids is not None else {w: i for i, w in enumerate(words)}
        self.occ = occ
        self.of = of
        self.count = np.bincount(of, minlength=n_chunks)
        self.word_of: npt.NDArray[np.int64] | None = None
        self.start: npt.NDArray[np.int64] | None = None
        if self.count.max(initial=0) <= 1:
            self.word_of = np.full(n_chunks, -1, dtype=np.int64)
            self.word_of[of] = occ
        else:
            self.start = np.searchsorted(of, np.arange(n_chunks, dtype=np.int64))

    @classmethod
    def extend(
        cls,
        known: _ChunkWords | None,
        n_new: int,
        words: list[str],
        occ: npt.NDArray[np.int64],
        of: npt.NDArray[np.int64],
    ) -> _ChunkWords:
        """``known`` with ``n_new`` more chunks, whose :func:`ascii_words` are given."""
        if known is None:
            return cls(n_new, words, occ, of)
        ids, vocab = dict(known.ids), list(known.words)
        remap = np.empty(len(words), dtype=np.int64)
        for i, word in enumerate(words):
            j = ids.get(word)
            if j is None:
                j = ids[word] = len(vocab)
                vocab.append(word)
            remap[i] = j
        return cls(
            known.n_chunks + n_new,
            vocab,
            np.concatenate([known.occ, remap[occ]]),
            np.concatenate([known.of, of + known.n_chunks]),
            ids,
        )


def _spans(starts: npt.NDArray[np.int64], counts: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Concatenation of ``arange(s, s + c)`` for each pair, without a Python loop."""
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    ends = np.cumsum(counts)
    return np.repeat(starts - (ends - counts), counts) + np.arange(total, dtype=np.int64)
