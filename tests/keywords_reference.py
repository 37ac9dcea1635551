"""The keyword tagger as it was before the integer-pair vocabulary (frozen reference).

``tests/test_tagging.py`` checks that the current :mod:`treehop.tagging.keywords` gives the same
tags, scores and document frequencies as this one on random corpora. Not imported by the library.

Automatic keyword tags: corpus-aware keyword extraction for English and Chinese text.

Tags exist to connect subtrees sideways (the tag hop of the seed design), so a keyword is only
worth emitting when it can act as a *bridge*: shared by a few nodes, but not by everything.
That is why the tagger is corpus-aware and conservative by default:

* a term found in fewer than ``min_df`` documents of the fitted corpus is never a tag (a tag that
  only one node carries can never lead from one node to another);
* a term found in more than ``max_df_ratio`` of the documents is never a tag (it would connect
  everything to everything, i.e. nothing);
* a node gets at most ``max_tags`` tags, and only those scoring at least ``min_score`` times the
  node's best tag, because a wrong tag costs more (a hop into a wrong subtree) than a missing one.

Two scorers are implemented: TF-IDF (document frequencies from the fitted corpus) and TextRank
(PageRank on a word co-occurrence graph, optionally personalised by IDF). Measured on Cranfield
(``bench/bench_tag_extraction.py``), TextRank ranks title words a little better (P@1 0.32 vs
0.28), but what a hop needs is that two nodes sharing a tag are relevant to the same need, and
there TF-IDF is about twice as precise at the same recall (0.117 vs 0.056 of tag-sharing pairs
co-relevant, base rate 0.007) and ~2.5x faster. So TF-IDF is the default.

English text is split by a regular expression that keeps technical tokens (``k8s``, ``c++``,
``node.js``, hyphenated terms), folds simple plurals and drops stopwords; adjacent content words
inside one phrase also form bigram candidates (``feature store`` -> ``feature-store``). Chinese
text is segmented by jieba (loaded lazily, once, with its start-up logging silenced); only nouns
and verbal nouns are kept, and adjacent kept words form compound candidates (``特征`` + ``工程``
-> ``特征工程``).

Typical use at ingest::

    tagger = KeywordTagger()
    tagger.fit(texts_of_every_node)
    labels = tagger.extract_many(texts_of_every_node)
    node.tags = tags.merge(user_tags, auto_tags(labels[i]))

``extract`` assumes the text was part of the fitted corpus (its own occurrence counts in the
document frequency); a text added later should first go through :meth:`KeywordTagger.partial_fit`.
"""

from __future__ import annotations

import heapq
import json
import logging
import math
import re
import threading
import unicodedata
import uuid
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from types import ModuleType
from typing import Any, Final, Literal, cast

import numpy as np
from numpy.typing import NDArray

from treehop import tags as _tags
from treehop.errors import IndexCorruptError, InvalidTagError, TreehopError

__all__ = [
    "EN_STOPWORDS",
    "METHODS",
    "ZH_STOPWORDS",
    "KeywordTagger",
    "TaggerError",
    "TaggerNotFittedError",
    "auto_tags",
    "propagate",
    "tokenize",
]

Method = Literal["tfidf", "textrank"]
METHODS: Final[tuple[str, ...]] = ("tfidf", "textrank")
_STATE_VERSION: Final = 1


class TaggerError(TreehopError, ValueError):
    """A tagger parameter or input is invalid."""


class TaggerNotFittedError(TreehopError, RuntimeError):
    """``extract`` was called before ``fit``: without corpus statistics no tag can be judged."""


# --------------------------------------------------------------------------------------------
# Stopwords. Kept compact on purpose: corpus statistics (max_df) remove the generic words of a
# real corpus; these lists cover function words and the generic words a small corpus cannot.
# --------------------------------------------------------------------------------------------


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


EN_STOPWORDS: Final[frozenset[str]] = _words(
    """
    a about above across after again against all almost along already also although always am
    among an and another any anyone anything are around as at away back be became because become
    becomes been before being below besides between beyond both but by can cannot could did do
    does doing done down due during each either else enough etc even ever every everything few
    for from further get gets getting given gives go goes going got had has have having he her
    here hers herself him himself his how however i if in into is it its itself just least less
    let like made make makes making many may me might more most much must my myself neither never
    nevertheless no nor not nothing now of off often on once one only onto or other others
    otherwise our ours ourselves out over own per perhaps please quite rather really same several
    shall she should since so some something sometimes still such than that the their theirs them
    themselves then there thereby therefore these they this those though through throughout thus
    to together too toward towards under unless until up upon us use used uses using very via
    was we well were what whatever when whenever where whereas whether which while who whom whose
    why will with within without would yet you your yours yourself yourselves
    e.g i.e vs etc eg ie cf
    two three four five six seven eight nine ten first second third
    new way ways thing things lot lots kind example examples
    able across actually based basically certain certainly consider considered different
    especially fully generally greatly hence instead largely likely mainly mostly namely nearly
    particularly possible possibly previously probably rather recently relatively respectively
    significantly simply slightly specifically strongly typically usually whose
    run need show provide allow include require help want see seen say said know known find
    found take taken keep put become come came look try tried tell
    dont doesnt didnt isnt arent wasnt werent cant wont couldnt shouldnt wouldnt hasnt havent
    thats theres whats im ive id youre youve theyre weve lets
    """
)

ZH_STOPWORDS: Final[frozenset[str]] = _words(
    """
    的 了 和 与 及 或 是 在 对 为 等 这 那 其 之 以 于 并 而 就 也 都 很 更 最 会 能 要 把 被 让 给
    从 到 向 由 此 该 各 每 某 我 你 他 她 它 我们 你们 他们 她们 它们 自己 这个 那个 这些 那些
    这样 那样 这种 那种 一个 一些 一种 一样 一下 可以 可能 进行 使用 通过 以及 没有 如果 因为
    所以 但是 然后 而且 或者 还是 已经 非常 比较 因此 于是 其中 其他 其它 之后 之前 之间 以上
    以下 当前 目前 如何 什么 怎么 为什么 哪些 时候 时间 东西 情况 方面 方式 方法 问题 内容
    部分 地方 事情 过程 结果 作用 用于 需要 包括 提供 支持 实现 相关 不同 主要 一般 基本
    """
)

# Words ending in "s" that are not plurals (or whose singular would be a different term).
_NO_FOLD: Final[frozenset[str]] = _words(
    """
    kubernetes pandas series species news postgres jenkins express atlas canvas alias bias
    lens gas ios macos chaos status always perhaps https wpf sales thanks
    """
)

# Latin tokens: letters/digits with inner -_.' and trailing + or # (c++, c#, node.js, k8s).
_TOKEN_RE: Final = re.compile(
    r"(?P<cjk>[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+)"
    r"|(?P<tok>[^\W_\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"
    r"(?:[^\W_\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]|[-_.']"
    r"(?=[^\W_\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]))*[+#]*)"
)
_SENTENCE_GAP: Final = re.compile(r"[.!?;:。！？；：]|\n\s*\n")
_HAS_LETTER: Final = re.compile(r"[^\W\d_]")
# jieba part-of-speech flags kept as content words: nouns (n, nr, ns, nt, nz, ng, ...),
# verbal and adjectival nouns, and abbreviations ("存储" is tagged j).
_ZH_KEEP_FLAGS: Final[tuple[str, ...]] = ("n", "vn", "an", "j")
_MAX_TOKEN_CHARS: Final = 40


def _fold_plural(word: str) -> str:
    """Fold a simple English plural (``pipelines`` -> ``pipeline``) so counts are shared.

    Deliberately crude and deterministic: a tag must be the same string in every document, so a
    rule that is sometimes ugly (``approaches`` -> ``approache``) but always the same is better
    than a clever one that depends on context.
    """
    if len(word) <= 3 or word in _NO_FOLD or not word.isalpha():
        return word
    if word.endswith(("ss", "us", "is", "ics", "ops", "ous")):
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "zzes", "shes", "tches", "nches", "rches")):
        return word[:-2]
    if word.endswith("s"):
        return word[:-1]
    return word


_KEY_CACHE: dict[str, str | None] = {}
_KEY_CACHE_MAX = 1 << 18


def _english_key(token: str) -> str | None:
    """The term key of one Latin token (memoised: a corpus repeats its words, and ingest
    analyses each leaf for fitting and again for extraction)."""
    try:
        return _KEY_CACHE[token]
    except KeyError:
        pass
    if len(_KEY_CACHE) >= _KEY_CACHE_MAX:
        _KEY_CACHE.clear()  # unbounded vocabularies (ids, hashes) must not grow memory
    key = _KEY_CACHE[token] = _english_key_uncached(token)
    return key


def _english_key_uncached(token: str) -> str | None:
    """The term key of one Latin token, or None when it is a stopword, a number or noise."""
    if len(token) > _MAX_TOKEN_CHARS:
        return None
    low = token.casefold()
    if low.endswith("'s"):
        low = low[:-2]
    low = low.replace("'", "")
    if len(low) < 2 or low in EN_STOPWORDS or not _HAS_LETTER.search(low):
        return None
    if token.isupper():  # an acronym such as AWS or ETL is not a plural
        return low
    if len(token) > 2 and token.endswith("s") and token[:-1].isupper():  # APIs, GPUs, LLMs
        return low[:-1]
    head, sep, last = low.rpartition("-")
    key = f"{head}{sep}{_fold_plural(last)}" if sep else _fold_plural(low)
    return None if key in EN_STOPWORDS else key


# --------------------------------------------------------------------------------------------
# jieba, loaded lazily and once: importing it costs ~1 s and prints to stderr by default.
# --------------------------------------------------------------------------------------------

_JIEBA_LOCK = threading.Lock()
_POSSEG: ModuleType | None = None


def _posseg() -> ModuleType:
    global _POSSEG
    if _POSSEG is None:
        with _JIEBA_LOCK:
            if _POSSEG is None:
                import jieba
                import jieba.posseg as posseg

                jieba.setLogLevel(logging.WARNING)
                jieba.initialize()
                _POSSEG = posseg
    return _POSSEG


# --------------------------------------------------------------------------------------------
# Analysis of one text: content units, their sentence/phrase ids, and the candidate terms.
# --------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Analysis:
    units: list[str] = field(default_factory=list)
    """Content-word keys in text order (stopwords and punctuation removed)."""
    sentence: list[int] = field(default_factory=list)
    """Sentence id of each unit: co-occurrence windows do not cross sentences."""
    phrase: list[int] = field(default_factory=list)
    """Phrase id of each unit: a bigram only joins two adjacent units of one phrase."""
    joiner: list[str] = field(default_factory=list)
    """How a unit joins the previous one in a bigram ("-" for English, "" for Chinese)."""

    def terms(self, bigrams: bool) -> tuple[list[str], dict[str, tuple[str, str]]]:
        """Candidate term occurrences (unigrams, then bigrams) and each bigram's two parts."""
        out = list(self.units)
        parts: dict[str, tuple[str, str]] = {}
        if bigrams:
            u, ph, jn = self.units, self.phrase, self.joiner
            for i in range(1, len(u)):
                if ph[i] == ph[i - 1]:
                    a, b = u[i - 1], u[i]
                    if a != b:
                        key = a + jn[i] + b
                        if len(key) <= _MAX_TOKEN_CHARS:
                            out.append(key)
                            parts[key] = (a, b)
        return out, parts


def _analyse(text: str) -> _Analysis:
    if not isinstance(text, str):
        raise TaggerError(f"text must be a string, got {type(text).__name__}")
    return _analyse_mixed(unicodedata.normalize("NFKC", text).replace("\u2019", "'"))


_CJK_RE: Final = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
# The Latin token of _TOKEN_RE, captured so that ``split`` returns gap, token, gap, ...: the
# same tokens as _TOKEN_RE.finditer on a text without CJK (the scan is the same leftmost one).
_TOKEN_SPLIT_RE: Final = re.compile(
    r"([^\W_\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+"
    r"(?:[-_.'][^\W_\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+)*[+#]*)"
)
_GAP_CACHE: dict[str, int] = {}


def _gap_code(gap: str) -> int:
    """2: the gap ends a sentence; 1: it breaks a phrase (punctuation); 0: whitespace only.

    Memoised: a corpus's gaps are a handful of distinct strings (``" "``, ``". "``, ``", "``).
    """
    code = _GAP_CACHE.get(gap)
    if code is None:
        code = 2 if _SENTENCE_GAP.search(gap) else (1 if gap.strip() else 0)
        if len(_GAP_CACHE) < _KEY_CACHE_MAX:
            _GAP_CACHE[gap] = code
    return code


def _analyse_mixed(text: str) -> _Analysis:
    """The general analysis: Latin tokens and jieba-segmented CJK runs, in text order."""
    res = _Analysis()
    sentence = phrase = 0
    prev_end = 0
    prev_script = ""
    for m in _TOKEN_RE.finditer(text):
        gap = text[prev_end : m.start()]
        prev_end = m.end()
        if _SENTENCE_GAP.search(gap):
            sentence += 1
            phrase += 1
        elif gap.strip():
            phrase += 1
        tok = m.group("tok")
        if tok is not None:
            if prev_script == "zh":
                phrase += 1
            prev_script = "en"
            key = _english_key(tok)
            if key is None:
                phrase += 1
                continue
            res.units.append(key)
            res.sentence.append(sentence)
            res.phrase.append(phrase)
            res.joiner.append("-")
            continue
        if prev_script == "en":
            phrase += 1
        prev_script = "zh"
        for word, flag in _posseg().lcut(m.group("cjk")):
            if (
                len(word) < 2
                or not flag.startswith(_ZH_KEEP_FLAGS)
                or word in ZH_STOPWORDS
                or len(word) > _MAX_TOKEN_CHARS
            ):
                phrase += 1
                continue
            res.units.append(word)
            res.sentence.append(sentence)
            res.phrase.append(phrase)
            res.joiner.append("")
    return res


@dataclass(slots=True)
class _Flat:
    """Term occurrences of many documents as integer columns (what TF-IDF counts).

    Terms are numbered within the batch (``names``): the per-occurrence work is integer
    array work, and each distinct term string is looked up in the vocabulary once per batch,
    not once per occurrence.
    """

    doc: NDArray[np.int64]
    """The document of each occurrence."""
    term: NDArray[np.int64]
    """The batch term (index into ``names``) of each occurrence."""
    part_a: NDArray[np.int64]
    """For a bigram occurrence, the batch term of its first unigram; -1 for a unigram..."""
    part_b: NDArray[np.int64]
    """...and of its second (a key such as ``a-b-c`` can split two ways)."""
    names: list[str]
    """The batch's distinct term strings (unigram and bigram keys share one numbering: a
    hyphenated token and a bigram with the same key are one term)."""

    @property
    def terms(self) -> list[str]:
        """The term string of each occurrence (tests and debugging)."""
        names = self.names
        return [names[i] for i in self.term.tolist()]

    def parts(self, wanted: NDArray[np.bool_]) -> dict[tuple[int, str], tuple[str, str]]:
        """(document, bigram) -> its two unigrams, for the bigram occurrences ``wanted``
        keeps; the last occurrence in a document wins (tests and debugging)."""
        names = self.names
        rows = np.flatnonzero(wanted & (self.part_a >= 0))
        return {
            (d, names[t]): (names[a], names[b])
            for d, t, a, b in zip(
                self.doc[rows].tolist(),
                self.term[rows].tolist(),
                self.part_a[rows].tolist(),
                self.part_b[rows].tolist(),
                strict=True,
            )
        }


class _Names:
    """Interns term strings into batch term ids (first seen first)."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.names: list[str] = []

    def many(self, keys: Sequence[str]) -> NDArray[np.int64]:
        """Batch ids of ``keys`` (distinct or not), adding the unseen ones."""
        ids = self.ids
        fresh = [k for k in dict.fromkeys(keys) if k not in ids]
        base = len(self.names)
        ids.update(zip(fresh, range(base, base + len(fresh)), strict=True))
        self.names += fresh
        return np.fromiter(map(ids.__getitem__, keys), np.int64, len(keys))

    def fresh(self, keys: Sequence[str]) -> NDArray[np.int64]:
        """Batch ids of ``keys`` known to be distinct and unseen (one insertion pass)."""
        base = len(self.names)
        self.ids.update(zip(keys, range(base, base + len(keys)), strict=True))
        self.names += keys
        return np.arange(base, base + len(keys), dtype=np.int64)


_DOC_SEP: Final = "\n\n\x01\n\n"
"""Between documents of a batch: a sentence gap (no bigram crosses it) marked by a control
character no token contains, so each gap tells whether a new document starts there."""
_GAP_INFO: dict[str, int] = {}


def _gap_info(gap: str) -> int:
    """A gap's :func:`_gap_code` plus 4 x how many documents start in it (memoised)."""
    info = _GAP_INFO.get(gap)
    if info is None:
        info = (_gap_code(gap) if gap else 0) + 4 * gap.count("\x01")
        if len(_GAP_INFO) < _KEY_CACHE_MAX:
            _GAP_INFO[gap] = info
    return info


def _flat_terms(texts: Sequence[str], bigrams: bool) -> _Flat:
    """The term occurrences of ``texts``, Latin texts analysed together in one regex pass.

    Why batched and numbered: per text and per token, the analysis was a Python loop of a
    few operations per token and dominated ingest. Here all Latin texts are joined
    (``_DOC_SEP`` between them) and cut by one ``split``; gaps and tokens go through C-level
    dictionary lookups (``map``), each distinct token is keyed once, and sentence, phrase,
    document and bigram columns are integer array operations. Texts with CJK (jieba) or the
    separator's control character take the per-text path. ``test_tagging`` checks both agree.
    """
    names = _Names()
    docs: list[NDArray[np.int64]] = []
    terms: list[NDArray[np.int64]] = []
    part_a: list[NDArray[np.int64]] = []
    part_b: list[NDArray[np.int64]] = []
    latin: list[int] = []
    normed: list[str] = []
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise TaggerError(f"text must be a string, got {type(text).__name__}")
        t = unicodedata.normalize("NFKC", text).replace("\u2019", "'")
        if _CJK_RE.search(t) is None and "\x01" not in t:
            latin.append(i)
            normed.append(t)
            continue
        analysis = _analyse_mixed(t)
        doc_terms, doc_parts = analysis.terms(bigrams)
        tid = names.many(doc_terms)
        pa = np.full(len(doc_terms), -1, dtype=np.int64)
        pb = pa.copy()
        # ``terms`` lists the units, then the bigrams; each bigram occurrence takes its key's
        # split as ``terms`` reports it (the last one in the text wins).
        grams = doc_terms[len(analysis.units) :]
        if grams:
            pa[len(analysis.units) :] = names.many([doc_parts[g][0] for g in grams])
            pb[len(analysis.units) :] = names.many([doc_parts[g][1] for g in grams])
        docs.append(np.full(len(doc_terms), i, dtype=np.int64))
        terms.append(tid)
        part_a.append(pa)
        part_b.append(pb)
    if latin:
        cols = _latin_batch(normed, np.asarray(latin, dtype=np.int64), bigrams, names)
        for col, out in zip(cols, (docs, terms, part_a, part_b), strict=True):
            out += col
    empty = np.zeros(0, dtype=np.int64)

    def cat(cols: list[NDArray[np.int64]]) -> NDArray[np.int64]:
        return np.concatenate(cols) if cols else empty

    return _Flat(cat(docs), cat(terms), cat(part_a), cat(part_b), names.names)


def _latin_batch(
    texts: Sequence[str], ids: NDArray[np.int64], bigrams: bool, names: _Names
) -> tuple[list[NDArray[np.int64]], ...]:
    """Doc, term, part_a and part_b columns (units, then bigrams) of Latin ``texts``
    (documents ``ids``); terms are numbered in ``names``."""
    none: tuple[list[NDArray[np.int64]], ...] = ([], [], [], [])
    pieces = _TOKEN_SPLIT_RE.split(_DOC_SEP + _DOC_SEP.join(texts))
    gaps, toks = pieces[0:-1:2], pieces[1::2]
    if not toks:
        return none
    info = np.fromiter(map(_GAP_INFO.get, gaps, repeat(-1)), np.int64, len(gaps))
    if info.size and int(info.min()) < 0:
        # Some gaps are not cached: each distinct one worked out once (a corpus has few:
        # " ", ". ", "\n"...), then one C-level lookup pass again (gathering the misses one
        # by one cost 2.5x more on a first batch, where nearly every gap misses).
        local = dict.fromkeys(gaps)
        for g in local:
            local[g] = _gap_info(g)
        info = np.fromiter(map(local.__getitem__, gaps), np.int64, len(gaps))
    # Each distinct token is keyed once: tokens -> distinct-token index -> term (-1: none).
    distinct = dict.fromkeys(toks)
    tok_ids = dict(zip(distinct, range(len(distinct)), strict=True))
    tok = np.fromiter(map(tok_ids.__getitem__, toks), np.int64, len(toks))
    keys = [_english_key(t) for t in distinct]
    content = [k for k in keys if k is not None]
    key_term = np.full(len(keys), -1, dtype=np.int64)
    is_key = np.fromiter((k is not None for k in keys), bool, len(keys))
    key_term[is_key] = names.many(content)
    term = key_term[tok]
    none_tok = term < 0
    # A phrase breaks at punctuation or a sentence end before a token, and after a token
    # that is not a content word (a stopword, a number).
    code = info & 3
    phrase = np.cumsum(code > 0) + np.concatenate(([0], np.cumsum(none_tok[:-1])))
    doc = ids[np.cumsum(info >> 2) - 1]
    keep = ~none_tok
    units, udoc, uphrase = term[keep], doc[keep], phrase[keep]
    neg = np.full(units.size, -1, dtype=np.int64)
    out: tuple[list[NDArray[np.int64]], ...] = ([udoc], [units], [neg], [neg])
    if not bigrams or units.size < 2:
        return out
    j = np.flatnonzero((uphrase[1:] == uphrase[:-1]) & (units[1:] != units[:-1])) + 1
    if not j.size:
        return out
    a, b = units[j - 1], units[j]
    # Each distinct pair's key string is built once.
    nm = names.names
    size = len(nm)
    pair, inv = np.unique(a * size + b, return_inverse=True)
    pa, pb = pair // size, pair % size
    # Only pairs whose key fits are spelled out (lengths are known per term).
    length = np.fromiter(map(len, nm), np.int64, size)
    fits = length[pa] + 1 + length[pb] <= _MAX_TOKEN_CHARS
    pa_ok, pb_ok = pa[fits].tolist(), pb[fits].tolist()
    at = nm.__getitem__
    grams = list(map("-".join, zip(map(at, pa_ok), map(at, pb_ok), strict=True)))
    gram_term = np.full(pair.size, -1, dtype=np.int64)
    if any("-" in k for k in nm):
        # A hyphenated key can spell a bigram two ways (a-b + c, a + b-c) or equal one.
        gram_term[fits] = names.many(grams)
    else:
        # Hyphen-free parts: each distinct pair spells a distinct key that no unigram has.
        gram_term[fits] = names.fresh(grams)
    inv = inv.reshape(-1)
    occ = fits[inv]
    out[0].append(udoc[j][occ])
    out[1].append(gram_term[inv][occ])
    out[2].append(a[occ])
    out[3].append(b[occ])
    return out


_NO_PART: Final = -2
"""In part columns: the candidate is a unigram (-1 is a part outside the vocabulary)."""


@dataclass(slots=True)
class _Counted:
    """Distinct (document, term) pairs of a batch with their counts, and the bigram split of
    each pair (its last occurrence in the document)."""

    doc: NDArray[np.int64]
    term: NDArray[np.int64]
    """Vocabulary term id (-1 outside the vocabulary)."""
    tf: NDArray[np.int64]
    part_a: NDArray[np.int64]
    part_b: NDArray[np.int64]

    def parts(self, wanted: NDArray[np.bool_]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        return self.part_a[wanted], self.part_b[wanted]


def _count(flat: _Flat, gid: NDArray[np.int64]) -> _Counted:
    """Count ``flat``'s (document, term) pairs; ``gid``: the vocabulary id of each batch term
    (-1: none). Distinct batch terms have distinct ids, so batch pairs are vocabulary pairs."""
    size = max(len(flat.names), 1)
    key = flat.doc * size + flat.term
    pair, tf = _unique_counts(key)
    local = pair % size
    pa = np.full(pair.size, _NO_PART, dtype=np.int64)
    pb = pa.copy()
    bi = np.flatnonzero(flat.part_a >= 0)
    if bi.size:
        # The last occurrence of each (document, bigram) gives its split.
        rev = bi[::-1]
        bkey, first = np.unique(key[rev], return_index=True)
        last = rev[first]
        at = np.searchsorted(pair, bkey)  # every bigram pair is among the pairs
        pa[at] = gid[flat.part_a[last]]
        pb[at] = gid[flat.part_b[last]]
    return _Counted(pair // size, gid[local], tf, pa, pb)


def tokenize(text: str) -> list[str]:
    """The content-word keys of ``text`` in order: what the tagger counts (for tests, debugging).

    English words are case-folded and plural-folded, stopwords and numbers dropped; Chinese is
    segmented by jieba and reduced to nouns.
    """
    return list(_analyse(text).units)


_LABEL_CACHE: dict[str, str | None] = {}


def _label(key: str) -> str | None:
    """The tag label of a term key (memoised like the keys: a corpus repeats its terms)."""
    try:
        return _LABEL_CACHE[key]
    except KeyError:
        pass
    try:
        lab: str | None = _tags.normalize_label(key)
    except InvalidTagError:
        lab = None
    if len(_LABEL_CACHE) >= _KEY_CACHE_MAX:
        _LABEL_CACHE.clear()
    _LABEL_CACHE[key] = lab
    return lab


# --------------------------------------------------------------------------------------------
# PageRank for TextRank.
# --------------------------------------------------------------------------------------------


def _pagerank(
    weights: NDArray[np.float64],
    teleport: NDArray[np.float64],
    damping: float = 0.85,
    tol: float = 1e-8,
    max_iter: int = 100,
) -> NDArray[np.float64]:
    """Weighted PageRank of a dense weight matrix (see :func:`_pagerank_edges`)."""
    rows, cols = np.nonzero(weights)
    return _pagerank_edges(
        weights.shape[0], rows, cols, weights[rows, cols], teleport, damping, tol, max_iter
    )


def _pagerank_edges(
    n: int,
    rows: NDArray[np.int64],
    cols: NDArray[np.int64],
    weight: NDArray[np.float64],
    teleport: NDArray[np.float64],
    damping: float = 0.85,
    tol: float = 1e-8,
    max_iter: int = 100,
) -> NDArray[np.float64]:
    """Weighted PageRank by power iteration over an edge list (``W[rows, cols] += weight``);
    an isolated node's mass goes to ``teleport``.

    Why an edge list: a text with ``n`` distinct words has O(length) co-occurrence edges but an
    ``n`` x ``n`` matrix would cost O(n²) memory and time per iteration; here one iteration is
    two ``bincount`` passes over the edges, linear in the text.
    """
    colsum = np.bincount(cols, weights=weight, minlength=n).astype(np.float64)
    dangling = colsum == 0
    share = weight / np.where(dangling, 1.0, colsum)[cols]
    rank: NDArray[np.float64] = teleport.copy()
    for _ in range(max_iter):
        spread = np.bincount(rows, weights=share * rank[cols], minlength=n)
        new: NDArray[np.float64] = (
            damping * (spread + rank[dangling].sum() * teleport) + (1 - damping) * teleport
        )
        if float(np.abs(new - rank).sum()) < tol:
            return new
        rank = new
    return rank


# --------------------------------------------------------------------------------------------
# The tagger.
# --------------------------------------------------------------------------------------------


class KeywordTagger:
    """Corpus-aware keyword extraction; see the module docstring for the why.

    Parameters:
        method: ``"tfidf"`` (default, measured better) or ``"textrank"``.
        max_tags: most tags for one node (leaves; :meth:`aggregate` has its own for directories).
        min_df: a term must occur in at least this many fitted documents to be a tag.
        max_df_ratio: a term in more than this share of the documents is too generic.
        max_df_floor: on small corpora the ratio would forbid everything (20% of 10 documents is 2),
            so a term shared by up to ``min(max_df_floor, n_docs - 1)`` documents is never treated
            as generic; a term found in *every* document always is.
        min_score: keep only tags scoring at least this share of the node's best tag.
        bigrams: also consider two-word terms (``feature-store``, ``特征工程``).
        window: TextRank co-occurrence window (in content words).
        idf_teleport: TextRank jumps to rare words more often (a corpus-aware TextRank).
        max_dir_tags: most tags :meth:`aggregate` gives a directory.
    """

    def __init__(
        self,
        method: Method = "tfidf",
        max_tags: int = 5,
        min_df: int = 2,
        max_df_ratio: float = 0.2,
        *,
        max_df_floor: int = 5,
        min_score: float = 0.5,
        bigrams: bool = True,
        window: int = 3,
        idf_teleport: bool = True,
        max_dir_tags: int = 8,
    ) -> None:
        checked_method = _as_method(method)
        _check_int("max_tags", max_tags, 0)
        _check_int("min_df", min_df, 1)
        _check_int("max_df_floor", max_df_floor, 0)
        _check_int("window", window, 2)
        _check_int("max_dir_tags", max_dir_tags, 0)
        if not isinstance(max_df_ratio, int | float) or not 0.0 < max_df_ratio <= 1.0:
            raise TaggerError(f"max_df_ratio must be in (0, 1], got {max_df_ratio!r}")
        if not isinstance(min_score, int | float) or not 0.0 <= min_score <= 1.0:
            raise TaggerError(f"min_score must be in [0, 1], got {min_score!r}")
        self.method: Method = checked_method
        self.max_tags = max_tags
        self.min_df = min_df
        self.max_df_ratio = float(max_df_ratio)
        self.max_df_floor = max_df_floor
        self.min_score = float(min_score)
        self.bigrams = bool(bigrams)
        self.window = window
        self.idf_teleport = bool(idf_teleport)
        self.max_dir_tags = max_dir_tags
        self._n_docs = 0
        self._fitted = False
        self._vocab: dict[str, int] = {}
        self._terms: list[str] = []
        self._df: NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self._cache: NDArray[np.float64] | None = None
        # Incremental persistence (see :meth:`state_delta`): the saved base's id and size,
        # and the term ids counted since it was written.
        self._base_id = ""
        self._base_terms = 0
        self._touched: list[NDArray[np.int64]] = []

    # ---------------------------------------------------------------- fitting

    @property
    def fitted(self) -> bool:
        return self._fitted

    @property
    def n_docs(self) -> int:
        """How many documents the document frequencies were counted over."""
        return self._n_docs

    @property
    def vocabulary_size(self) -> int:
        return len(self._terms)

    def params(self) -> dict[str, Any]:
        """The constructor arguments, as a JSON-friendly dict."""
        return {
            "method": self.method,
            "max_tags": self.max_tags,
            "min_df": self.min_df,
            "max_df_ratio": self.max_df_ratio,
            "max_df_floor": self.max_df_floor,
            "min_score": self.min_score,
            "bigrams": self.bigrams,
            "window": self.window,
            "idf_teleport": self.idf_teleport,
            "max_dir_tags": self.max_dir_tags,
        }

    def fit(self, corpus_texts: Sequence[str]) -> None:
        """Count document frequencies over ``corpus_texts``, replacing any earlier fit."""
        fresh = KeywordTagger(**self.params())
        fresh.partial_fit(corpus_texts)  # raises before anything here is touched
        self._n_docs = fresh._n_docs
        self._vocab = fresh._vocab
        self._terms = fresh._terms
        self._df = fresh._df
        self._fitted = True
        self._cache = None
        self._base_id = ""  # everything changed: the next save writes a new base
        self._touched = []

    def partial_fit(self, texts: Sequence[str]) -> None:
        """Add documents to the statistics (incremental ingest).

        Tags of nodes extracted earlier may go stale as frequencies move; a backfill re-extracts.
        A bad text raises :class:`TaggerError` and leaves the statistics as they were.
        """
        if isinstance(texts, str):
            raise TaggerError("texts must be a sequence of strings, not one string")
        self._fit_flat(_flat_terms(texts, self.bigrams), len(texts))

    def partial_fit_extract(
        self, fit_texts: Sequence[str], texts: Sequence[str]
    ) -> list[list[str]]:
        """:meth:`partial_fit` on ``fit_texts``, then :meth:`extract_many` on ``texts``.

        Why one call: at ingest the new leaves are both counted and tagged; analysing them
        once (instead of once per step) halves the tagger's share of ingest. ``fit_texts``
        that are also in ``texts`` are not analysed again.
        """
        if isinstance(fit_texts, str) or isinstance(texts, str):
            raise TaggerError("texts must be a sequence of strings, not one string")
        if self.method != "tfidf" or list(fit_texts) != list(texts):
            self.partial_fit(fit_texts)
            return self.extract_many(texts)
        flat = _flat_terms(texts, self.bigrams)
        fitted = self._fit_flat(flat, len(texts))
        return [[lab for lab, _ in d] for d in self._tfidf_flat(flat, len(texts), fitted)]

    def _fit_flat(self, flat: _Flat, n_docs: int) -> _Counted:
        """Count each document's distinct terms into the document frequencies; returns the
        batch's counts (what :meth:`_tfidf_flat` scores, so a fit-and-extract counts once)."""
        vocab, all_terms, names = self._vocab, self._terms, flat.names
        # One lookup pass and one insertion pass over the (large) vocabulary: batch names
        # are distinct, so the unseen ones are numbered in order without a second lookup.
        gid = np.fromiter(map(vocab.get, names, repeat(-1)), np.int64, len(names))
        unseen = np.flatnonzero(gid < 0)
        base = len(all_terms)
        fresh = [names[i] for i in unseen.tolist()]
        vocab.update(zip(fresh, range(base, base + len(fresh)), strict=True))
        all_terms += fresh
        gid[unseen] = np.arange(base, base + len(fresh), dtype=np.int64)
        counted = _count(flat, gid)
        counts = np.bincount(counted.term, minlength=len(all_terms))
        if self._base_id:
            self._touched.append(np.unique(counted.term))
        df = np.zeros(len(all_terms), dtype=np.int64)
        df[: self._df.size] = self._df
        self._df = df + counts
        self._n_docs += n_docs
        self._fitted = True
        self._cache = None
        return counted

    def _stats(self) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
        """IDF per term and the candidate mask (the df window).

        IDF depends only on the fit and is cached; the mask is recomputed each call (one
        comparison per term) so that changing ``min_df`` or ``max_df_ratio`` on a fitted
        tagger takes effect.
        """
        if self._cache is None:
            self._cache = np.log((1.0 + self._n_docs) / (1.0 + self._df)) + 1.0
        ok = (self._df >= self.min_df) & (self._df <= self.max_df())
        return self._cache, ok

    def _require_fitted(self) -> None:
        if not self._fitted:
            raise TaggerNotFittedError("KeywordTagger.fit() must be called before extracting tags")

    def max_df(self) -> float:
        """The document-frequency ceiling in force for the fitted corpus."""
        n = self._n_docs
        return max(self.max_df_ratio * n, min(self.max_df_floor, n - 1))

    def document_frequency(self, term: str) -> int:
        """How many fitted documents contain ``term`` (a key as :func:`tokenize` returns it)."""
        tid = self._vocab.get(term)
        return 0 if tid is None else int(self._df[tid])

    # ---------------------------------------------------------------- extraction

    def extract(self, text: str) -> list[str]:
        """Normalised tag labels for one text, best first (possibly empty)."""
        return [lab for lab, _ in self.extract_scored(text)]

    def extract_scored(self, text: str) -> list[tuple[str, float]]:
        """Like :meth:`extract`, with each label's score relative to the best one (in (0, 1])."""
        return self.extract_many_scored([text])[0]

    def extract_many(self, texts: Sequence[str]) -> list[list[str]]:
        """:meth:`extract` for many texts at once (TF-IDF scores all of them in one pass)."""
        return [[lab for lab, _ in doc] for doc in self.extract_many_scored(texts)]

    def extract_many_scored(self, texts: Sequence[str]) -> list[list[tuple[str, float]]]:
        """Scored labels for many texts."""
        self._require_fitted()
        if isinstance(texts, str):
            raise TaggerError("texts must be a sequence of strings, not one string")
        if self.method == "tfidf":
            return self._tfidf_flat(_flat_terms(texts, self.bigrams), len(texts))
        return [self._textrank(_analyse(t)) for t in texts]

    def _tfidf_flat(
        self, flat: _Flat, n_docs: int, counted: _Counted | None = None
    ) -> list[list[tuple[str, float]]]:
        """TF-IDF tags of the documents of ``flat`` (``counted``: its counts when known)."""
        idf, ok = self._stats()
        out: list[list[tuple[str, float]]] = [[] for _ in range(n_docs)]
        if counted is None:
            # -1 for a term outside the vocabulary (an unseen text's words), dropped below.
            gid = np.fromiter(map(self._vocab.get, flat.names, repeat(-1)), np.int64)
            counted = _count(flat, gid)
        t = counted.term
        wanted = (t >= 0) & ok[np.maximum(t, 0)] if t.size else np.zeros(0, dtype=bool)
        if not wanted.any():
            return out
        d, t, tf = counted.doc[wanted], t[wanted], counted.tf[wanted]
        pa, pb = counted.parts(wanted)
        score = (1.0 + np.log(tf)) * idf[t]
        self._select(out, d, t, score, pa, pb)
        return out

    def _textrank(self, a: _Analysis) -> list[tuple[str, float]]:
        idf, ok = self._stats()
        if not a.units:
            return []
        nodes, inv = np.unique(np.asarray(a.units, dtype=object), return_inverse=True)
        n = nodes.size
        inv = inv.astype(np.int64)
        sent = np.asarray(a.sentence, dtype=np.int64)
        ends: list[NDArray[np.int64]] = []
        starts: list[NDArray[np.int64]] = []
        for off in range(1, self.window):
            if off >= inv.size:
                break
            src, dst = inv[:-off], inv[off:]
            m = (sent[:-off] == sent[off:]) & (src != dst)
            starts += [src[m], dst[m]]
            ends += [dst[m], src[m]]
        rows = np.concatenate(starts) if starts else np.zeros(0, dtype=np.int64)
        cols = np.concatenate(ends) if ends else np.zeros(0, dtype=np.int64)
        node_tid = np.asarray([self._vocab.get(str(k), -1) for k in nodes], dtype=np.int64)
        if self.idf_teleport:
            top_idf = math.log(1.0 + self._n_docs) + 1.0  # unseen word: as rare as can be
            tele = np.where(node_tid >= 0, idf[np.maximum(node_tid, 0)], top_idf)
        else:
            tele = np.ones(n, dtype=np.float64)
        pr = _pagerank_edges(n, rows, cols, np.ones(rows.size), tele / tele.sum())
        node_score = {str(k): float(s) for k, s in zip(nodes, pr, strict=True)}
        terms, parts = a.terms(self.bigrams)
        t_list: list[int] = []
        s_list: list[float] = []
        for term in dict.fromkeys(terms):
            tid = self._vocab.get(term)
            if tid is None or not ok[tid]:
                continue
            pp = parts.get(term)
            s = (node_score[pp[0]] + node_score[pp[1]]) / 2 if pp else node_score[term]
            t_list.append(tid)
            s_list.append(s)
        out: list[list[tuple[str, float]]] = [[]]
        if t_list:
            t = np.asarray(t_list, dtype=np.int64)
            get = self._vocab.get
            split = [parts.get(self._terms[i]) for i in t_list]
            pa = np.asarray([_NO_PART if p is None else get(p[0], -1) for p in split], np.int64)
            pb = np.asarray([_NO_PART if p is None else get(p[1], -1) for p in split], np.int64)
            self._select(out, np.zeros(t.size, dtype=np.int64), t, np.asarray(s_list), pa, pb)
        return out[0]

    def _select(
        self,
        out: list[list[tuple[str, float]]],
        d: NDArray[np.int64],
        t: NDArray[np.int64],
        score: NDArray[np.float64],
        part_a: NDArray[np.int64],
        part_b: NDArray[np.int64],
    ) -> None:
        """Pick each document's tags from flat (doc, term, score, bigram parts) arrays.

        Scores are made relative to the document's best candidate, rounded so that floating noise
        cannot reorder ties, and ties are broken alphabetically: the output is deterministic and
        does not depend on the order documents were fitted in. A unigram that is part of a chosen
        bigram is dropped (``feature-store`` says more than ``store``). ``part_a``/``part_b``:
        a bigram candidate's two unigrams (term ids; -1 outside the vocabulary), ``_NO_PART``
        for a unigram.
        """
        best = np.zeros(len(out), dtype=np.float64)
        np.maximum.at(best, d, score)
        rel = np.round(score / best[d], 9)
        keep = rel >= self.min_score
        d, t, rel, part_a, part_b = d[keep], t[keep], rel[keep], part_a[keep], part_b[keep]
        # Alphabetical rank among the candidates only: the same order as a rank over the
        # whole vocabulary, without sorting every term of the corpus on every call.
        cand, inv = np.unique(t, return_inverse=True)
        terms = self._terms
        names = [terms[i] for i in cand.tolist()]
        rank = np.empty(cand.size, dtype=np.int64)
        rank[sorted(range(cand.size), key=names.__getitem__)] = np.arange(cand.size)
        order = np.lexsort((rank[inv.reshape(-1)], -rel, d))
        bounds = np.searchsorted(d[order], np.arange(len(out) + 1)).tolist()
        if self.max_tags == 0:
            return
        tl, rl = t[order].tolist(), rel[order].tolist()
        al, bl = part_a[order].tolist(), part_b[order].tolist()
        for i in range(len(out)):
            lo, hi = bounds[i], bounds[i + 1]
            if lo == hi:
                continue
            chosen: list[int] = []  # term ids, with their labels and scores
            labels: list[str] = []
            scores: list[float] = []
            covered: set[int] = set()
            for j in range(lo, hi):
                tid = tl[j]
                if tid in covered:
                    continue
                lab = _label(terms[tid])
                if lab is None or lab in labels:
                    continue
                a = al[j]
                if a != _NO_PART:
                    b = bl[j]
                    covered.add(a)
                    covered.add(b)
                    if a in chosen or b in chosen:
                        drop = [k for k, c in enumerate(chosen) if c in (a, b)]
                        for k in reversed(drop):
                            del chosen[k], labels[k], scores[k]
                chosen.append(tid)
                labels.append(lab)
                scores.append(rl[j])
                if len(chosen) >= self.max_tags:
                    break
            out[i] = list(zip(labels, scores, strict=True))

    # ---------------------------------------------------------------- directories

    def aggregate(
        self,
        child_tags: Sequence[Iterable[str]],
        own_labels: Iterable[str] = (),
        max_tags: int | None = None,
    ) -> list[str]:
        """Labels for a directory: its own extracted labels first, then its children's.

        Hops look up directories (L0/L1 nodes), so a topic that lives only in a directory's
        content must bubble up for a hop to ever reach that subtree. Children's labels are ranked
        by how many children carry them, then by rarity in the corpus (rarer is more specific),
        then alphabetically. Children's ``inherit:`` tags are skipped: they came from above and
        say nothing about this subtree. Accepts bare labels or ``source:label`` tags.
        """
        limit = self.max_dir_tags if max_tags is None else max_tags
        _check_int("max_tags", limit, 0)
        out = _tags.dedupe(_tags.normalize_label(x) for x in own_labels)
        counts: Counter[str] = Counter()
        for tags_of_child in child_tags:
            # A parsed tag is ``source:label``: its label is what follows the first colon.
            counts.update(
                {
                    p.partition(":")[2]
                    for p in map(_parsed_tag, tags_of_child)
                    if not p.startswith("inherit:")
                }
            )
        own = set(out)
        labs = [lab for lab in counts if lab not in own]
        # Ranked by (-count, df, label): the df of every label in one array lookup, and only
        # the few that fit kept (a directory of many children has hundreds of labels).
        tid = np.fromiter(map(self._vocab.get, labs, repeat(-1)), np.int64, len(labs))
        df = np.zeros(len(labs), np.int64)
        known = tid >= 0  # an unfitted tagger knows no label
        df[known] = self._df[tid[known]]
        neg = [-c for c in map(counts.__getitem__, labs)]
        keys = zip(neg, df.tolist(), labs, strict=True)
        ranked = heapq.nsmallest(max(limit - len(out), 0), keys)
        return (out + [lab for _, _, lab in ranked])[:limit]

    # ---------------------------------------------------------------- persistence

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable state: parameters and the fitted document frequencies."""
        return {
            "version": _STATE_VERSION,
            "params": self.params(),
            "fitted": self._fitted,
            "n_docs": self._n_docs,
            "terms": list(self._terms),
            "df": [int(x) for x in self._df],
        }

    def to_bytes(self) -> bytes:
        """The state of :meth:`to_dict` in a compact form: a JSON header line, the terms
        joined by NUL (no term holds one), then the document frequencies as int64.

        Why not JSON: the statistics are saved after every ingest, and for a 100k-node index
        (a few hundred thousand terms) JSON took most of a small re-add's time.
        """
        head = {
            "version": _STATE_VERSION,
            "params": self.params(),
            "fitted": self._fitted,
            "n_docs": self._n_docs,
        }
        if self._base_id:
            head["base"] = self._base_id
        return b"".join(
            [
                json.dumps(head).encode() + b"\n",
                "\x00".join(self._terms).encode("utf-8") + b"\n",
                np.asarray(self._df, dtype="<i8").tobytes(),
            ]
        )

    @classmethod
    def from_bytes(cls, raw: bytes) -> KeywordTagger:
        """Rebuild a tagger saved by :meth:`to_bytes` (or by :meth:`to_dict` as JSON)."""
        if b"\n" not in raw:  # the JSON form of to_dict (JSON escapes its newlines)
            try:
                return cls.from_dict(json.loads(raw))
            except (ValueError, UnicodeDecodeError) as exc:
                raise IndexCorruptError(f"tagger state is damaged: {exc}") from exc
        try:
            head_end = raw.index(b"\n")
            terms_end = raw.index(b"\n", head_end + 1)
            head = json.loads(raw[:head_end])
            text = raw[head_end + 1 : terms_end].decode("utf-8")
            body = raw[terms_end + 1 :]
            if len(body) % 8:
                raise ValueError("frequency block is not whole int64 values")
            df = np.frombuffer(body, dtype="<i8").astype(np.int64)
        except (ValueError, UnicodeDecodeError) as exc:
            raise IndexCorruptError(f"tagger state is damaged: {exc}") from exc
        if not isinstance(head, dict):
            raise IndexCorruptError("tagger state is damaged: the header is not an object")
        head["terms"] = text.split("\x00") if text else []
        head["df"] = df
        tagger = cls.from_dict(head)
        base = head.get("base", "")
        if isinstance(base, str) and base:
            tagger._base_id = base
            tagger._base_terms = len(tagger._terms)
        return tagger

    def full_state(self) -> bytes:
        """The whole state as a new base for :meth:`state_delta` (:meth:`to_bytes` with a
        fresh base id); what is counted from now on goes into the deltas of this base."""
        self._base_id = uuid.uuid4().hex
        self._base_terms = len(self._terms)
        self._touched = []
        return self.to_bytes()

    def state_delta(self, max_share: float = 0.125) -> bytes | None:
        """What changed since the last :meth:`full_state`, or None when a new base is due
        (none written yet, a refit, or a delta above ``max_share`` of the terms).

        Why: the statistics are saved after every write, and a large index has millions of
        terms (most bigrams seen once); rewriting all of them for a re-add of 100 files was
        a large share of the re-add. A delta holds the terms added since the base and the
        current document frequency of every term counted since; it is cumulative, so the
        newest one alone, applied to its base, gives the state (:meth:`apply_delta`).
        """
        if not self._base_id:
            return None
        ids = np.unique(np.concatenate(self._touched)) if self._touched else np.zeros(0, np.int64)
        self._touched = [ids]
        if ids.size > max_share * max(len(self._terms), 1):
            return None
        head = {
            "version": _STATE_VERSION,
            "base": self._base_id,
            "n_docs": self._n_docs,
            "first": self._base_terms,
            "terms": len(self._terms),
        }
        return b"".join(
            [
                json.dumps(head).encode() + b"\n",
                "\x00".join(self._terms[self._base_terms :]).encode("utf-8") + b"\n",
                ids.astype("<i8").tobytes(),
                self._df[ids].astype("<i8").tobytes(),
            ]
        )

    def apply_delta(self, raw: bytes) -> bool:
        """Apply a :meth:`state_delta` to this state loaded from its base. A delta of another
        base (left behind when a save wrote a new base and stopped before clearing it) is
        ignored: returns False. A damaged delta raises :class:`IndexCorruptError`."""
        try:
            head_end = raw.index(b"\n")
            terms_end = raw.index(b"\n", head_end + 1)
            head = json.loads(raw[:head_end])
            if not isinstance(head, dict) or head.get("version") != _STATE_VERSION:
                raise ValueError("unknown delta header")
            if head.get("base") != self._base_id or not self._base_id:
                return False
            text = raw[head_end + 1 : terms_end].decode("utf-8")
            new_terms = text.split("\x00") if text else []
            body = raw[terms_end + 1 :]
            if len(body) % 16:
                raise ValueError("id/frequency block is not whole int64 pairs")
            k = len(body) // 16
            ids = np.frombuffer(body[: 8 * k], dtype="<i8").astype(np.int64)
            df = np.frombuffer(body[8 * k :], dtype="<i8").astype(np.int64)
            n_docs, first, total = int(head["n_docs"]), int(head["first"]), int(head["terms"])
        except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
            raise IndexCorruptError(f"tagger state delta is damaged: {exc}") from exc
        if first != self._base_terms or first + len(new_terms) != total or n_docs < self._n_docs:
            raise IndexCorruptError("tagger state delta is damaged: sizes do not match its base")
        if ids.size and (ids.min() < 0 or ids.max() >= total or df.min() < 1 or df.max() > n_docs):
            raise IndexCorruptError(
                "tagger state delta is damaged: ids or frequencies out of range"
            )
        vocab = self._vocab
        for i, term in enumerate(new_terms):
            if vocab.setdefault(term, first + i) != first + i:
                for t in new_terms[:i]:
                    del vocab[t]
                raise IndexCorruptError("tagger state delta is damaged: a term repeats")
        self._terms += new_terms
        grown = np.zeros(total, dtype=np.int64)
        grown[: self._df.size] = self._df
        grown[ids] = df
        self._df = grown
        self._n_docs = n_docs
        self._cache = None
        self._touched = [ids]
        return True

    @classmethod
    def from_dict(cls, state: Mapping[str, Any]) -> KeywordTagger:
        """Rebuild a tagger saved by :meth:`to_dict`; a damaged state raises IndexCorruptError."""
        try:
            if state["version"] != _STATE_VERSION:
                raise IndexCorruptError(f"unsupported tagger state version {state['version']!r}")
            tagger = cls(**dict(state["params"]))
            terms = [str(x) for x in state["terms"]]
            df = np.asarray(state["df"], dtype=np.int64)
            n_docs = int(state["n_docs"])
            fitted = bool(state["fitted"])
        except IndexCorruptError:
            raise
        except (KeyError, TypeError, ValueError) as exc:
            raise IndexCorruptError(f"tagger state is damaged: {exc}") from exc
        if df.ndim != 1 or df.size != len(terms) or len(set(terms)) != len(terms):
            raise IndexCorruptError("tagger state is damaged: terms and df do not match")
        if df.size and (df.min() < 1 or df.max() > n_docs):
            raise IndexCorruptError("tagger state is damaged: df outside [1, n_docs]")
        tagger._terms = terms
        tagger._vocab = {term: i for i, term in enumerate(terms)}
        tagger._df = df
        tagger._n_docs = n_docs
        tagger._fitted = fitted
        return tagger


def _unique_counts(keys: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Sorted distinct keys and their counts (a sort: faster than hashing for int columns)."""
    if keys.size == 0:
        return keys, keys
    srt = np.sort(keys)
    first = np.flatnonzero(np.concatenate(([True], srt[1:] != srt[:-1])))
    counts = np.diff(np.append(first, srt.size))
    return srt[first], counts


_PARSED: dict[str, str] = {}


_NORMAL_TAG: Final = re.compile(
    rf"(?:{'|'.join(_tags.SOURCES)}):[a-z0-9_.+#](?:[a-z0-9_.+#-]{{0,{_tags.MAX_LABEL_LENGTH - 2}}}"
    r"[a-z0-9_.+#])?"
)
"""A ``source:label`` tag already in normal form (ASCII, lower case, no space or forbidden
character, no edge hyphen, within the length limit): ``parse_tag`` returns it unchanged."""


def _parsed_tag(tag: str) -> str:
    """``parse_tag(tag, "auto")``, memoised: directories see their children's tags, and a
    corpus repeats its tags (bounded like the key cache). A tag the tree stored is normal
    already and is recognised by one regex match: a large index has more distinct tags than
    the cache holds, and the full parse was most of a re-add's directory tagging."""
    if _NORMAL_TAG.fullmatch(tag) is not None:
        return tag
    got = _PARSED.get(tag)
    if got is None:
        got = _tags.parse_tag(tag, default_source="auto")
        if len(_PARSED) >= _KEY_CACHE_MAX:
            _PARSED.clear()
        _PARSED[tag] = got
    return got


def _check_int(name: str, value: object, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise TaggerError(f"{name} must be an integer >= {minimum}, got {value!r}")


# --------------------------------------------------------------------------------------------
# Tag helpers for ingestion.
# --------------------------------------------------------------------------------------------


def auto_tags(labels: Iterable[str]) -> list[str]:
    """``auto:label`` tags for extracted labels (normalised, de-duplicated, order kept)."""
    return _tags.dedupe(_tags.make_tag("auto", lab) for lab in labels)


def propagate(directory_tags: Iterable[str], child_tags: Iterable[str]) -> list[str]:
    """The child's tags plus its directory's, the latter marked ``inherit:label``.

    The child's own tags come first and win on a shared label (``tags.merge`` ranks user > llm >
    auto > inherit), so an inherited tag never overrides what a user or the extractor said about
    the child itself. Applied top-down, a directory's inherited tags reach every descendant.
    """
    inherited = [
        _tags.make_tag("inherit", _tags.label_of(_tags.parse_tag(t))) for t in directory_tags
    ]
    own = [_tags.parse_tag(t) for t in child_tags]
    return _tags.merge(own, inherited)


def _as_method(value: object) -> Method:
    if not isinstance(value, str) or value not in METHODS:
        raise TaggerError(f"unknown method {value!r}; expected one of {METHODS}")
    return cast(Method, value)
