"""Automatic keyword tags: corpus-aware keyword extraction for English and Chinese text.

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
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import count, repeat
from types import ModuleType
from typing import Any, ClassVar, Final, Literal, cast

import numpy as np
from numpy.typing import NDArray

from .. import tags as _tags
from ..errors import IndexCorruptError, InvalidTagError, TreehopError
from ..text_tokenize import offer_cut, wants_cut
from ..validation import shown_value

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
"""Of :meth:`KeywordTagger.to_dict` (term strings) and of the compact form before atoms."""
_BYTES_VERSION: Final = 2
"""Of :meth:`KeywordTagger.to_bytes`: atoms and term keys."""


class TaggerError(TreehopError, ValueError):
    """A tagger parameter or input is invalid, or a caller's tagger raised (its ``tag_nodes``
    or ``refit``; the message names what it raised, see :mod:`treehop._plugins`)."""


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

_CJK_CHARS: Final = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_WORD_CHAR: Final = rf"[^\W_{_CJK_CHARS}]"
"""A letter or digit of any script but CJK (which is segmented apart): ``café``, ``straße``
and ``naïve`` are whole tokens (an ASCII-only class cut ``café`` to ``caf``)."""

# Latin tokens: letters/digits with inner -_.' and trailing + or # (c++, c#, node.js, k8s).
_TOKEN_RE: Final = re.compile(
    rf"(?P<cjk>[{_CJK_CHARS}]+)"
    rf"|(?P<tok>{_WORD_CHAR}(?:{_WORD_CHAR}|[-_.'](?={_WORD_CHAR}))*[+#]*)"
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


def _normalised(text: str) -> str:
    """The form of a text the analysis reads: NFKC, curly apostrophes straight."""
    return unicodedata.normalize("NFKC", text).replace("\u2019", "'")


def _analyse(text: str) -> _Analysis:
    if not isinstance(text, str):
        raise TaggerError(f"text must be a string, got {type(text).__name__}")
    return _analyse_mixed(_normalised(text))


_CJK_RE: Final = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
# The Latin token of _TOKEN_RE, captured so that ``split`` returns gap, token, gap, ...: the
# same tokens as _TOKEN_RE.finditer on a text without CJK (the scan is the same leftmost one).
_TOKEN_SPLIT_RE: Final = re.compile(rf"({_WORD_CHAR}+(?:[-_.']{_WORD_CHAR}+)*[+#]*)")
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


# --------------------------------------------------------------------------------------------
# Terms as integers. A term is a string (``pipeline``, ``feature-store``, ``特征工程``), but the
# tagger never handles it as one on the hot path: each term is a canonical pair of *atoms*
# (interned strings) packed into one int64 key. A string without a hyphen is the single atom
# ``(s, none)``; a string with one is ``(head, rest)``, split at its first hyphen. The split is
# a bijection, so two spellings of one string (the token ``feature-store``, the bigram
# ``feature`` + ``store``, the bigrams ``a-b`` + ``c`` and ``a`` + ``b-c``) get one key, as
# they got one string key before; and a bigram of a hyphen-free unit with any unit is
# ``(atom of the first, atom of the second)`` -- two array lookups, no string built.
# --------------------------------------------------------------------------------------------

_LOW: Final = (1 << 32) - 1


def _pack(a: NDArray[np.int64], b: NDArray[np.int64]) -> NDArray[np.int64]:
    """Keys of atom pairs (``b`` = -1: a single atom)."""
    return (a << 32) | (b + 1)


class _Atoms:
    """Interns strings into atom ids (first seen first) and spells keys of strings."""

    __slots__ = ("ids", "strs")

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.strs: list[str] = []

    def atom(self, s: str) -> int:
        got = self.ids.get(s)
        if got is None:
            got = self.ids[s] = len(self.strs)
            self.strs.append(s)
        return got

    def key(self, s: str) -> int:
        """The canonical key of string ``s`` (its atoms interned)."""
        head, sep, rest = s.partition("-")
        return (self.atom(head) << 32) | (self.atom(rest) + 1 if sep else 0)

    @classmethod
    def spelled(cls, strs: list[str]) -> _Atoms:
        """The atom table whose atom ``i`` is ``strs[i]`` (distinct), as another process
        numbered them."""
        atoms = cls()
        atoms.strs = strs
        atoms.ids = dict(zip(strs, count(), strict=False))
        return atoms

    def spell(self, key: int) -> str:
        b = (key & _LOW) - 1
        a = self.strs[key >> 32]
        return a if b < 0 else f"{a}-{self.strs[b]}"


@dataclass(slots=True)
class _Flat:
    """Term occurrences of many documents as integer columns (what TF-IDF counts).

    Terms are numbered within the batch: ``keys`` are the batch's distinct term keys (sorted;
    atoms are the batch's own, ``atoms``), and each column holds an index into ``keys``. The
    per-occurrence work is integer array work; each distinct atom string is looked up in the
    vocabulary once per batch.
    """

    doc: NDArray[np.int64]
    """The document of each occurrence."""
    term: NDArray[np.int64]
    """The batch term (index into ``keys``) of each occurrence."""
    part_a: NDArray[np.int64]
    """For a bigram occurrence, the batch term of its first unigram; -1 for a unigram..."""
    part_b: NDArray[np.int64]
    """...and of its second (a key such as ``a-b-c`` can split two ways)."""
    keys: NDArray[np.int64]
    """The batch's distinct term keys, over ``atoms``."""
    atoms: _Atoms
    fixed_split: bool = False
    """Every bigram occurrence of a term splits the same way (no bigram with a hyphenated
    first part, no per-text bigram): any occurrence gives a document's split."""

    @property
    def names(self) -> list[str]:
        """The batch's distinct term strings (tests and debugging)."""
        return [self.atoms.spell(k) for k in self.keys.tolist()]

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


_PART_CHARS: Final = 1 << 20
"""Characters of text per part of a large batch (see :func:`_flat_parts`): parts of ~1M
characters keep every per-occurrence column a few megabytes, which the allocator reuses
from part to part. Memory, not results: any part size tags alike. (Chosen on one half of
the 100k-leaf bench tree's texts, where 0.5M-2M were within noise and 4M-8M slower, and
confirmed on the other half; one part of all 100k leaves spent more time in the kernel,
mapping fresh memory, than in numpy.)"""


_Cut = tuple[NDArray[np.int64], list[str], NDArray[np.int64]]
"""A kept whitespace cut of a batch's Latin texts: their positions in the batch, the distinct
chunks (numbered in order) and the chunk of each occurrence (``text_tokenize.ChunkCut``)."""


def _flat_terms(texts: Sequence[str], bigrams: bool) -> _Flat:
    """The term occurrences of ``texts``, analysed as one part (see :func:`_flat_parts`): the
    form the tagger's tests compare the parts against (ingest always goes through the parts)."""
    return next(iter(_flat_parts(texts, bigrams, None)))


def _mixed_columns(
    texts: Sequence[str], bigrams: bool, atoms: _Atoms
) -> tuple[list[int], list[str], tuple[NDArray[np.int64], ...]]:
    """Sort ``texts`` into the Latin ones (positions and normalised texts, for the bulk
    analysis of :class:`_LatinStream`) and the rest (CJK, or a marker character of
    :func:`_latin_tokens`), analysed here one text at a time: their (document, term,
    bigram part a, part b) columns, keyed in ``atoms`` as they come."""
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
            t = _normalised(text)
        if _CJK_RE.search(t) is None and "\x01" not in t and "\x02" not in t:
            latin.append(i)
            normed.append(t)
            continue
        analysis = _analyse_mixed(t)
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
    return latin, normed, tuple(np.concatenate(c) if c else empty for c in cols)


def _part_bounds(texts: Sequence[str], part_chars: int | None) -> list[int]:
    """The first document of each part, then ``len(texts)``: runs of documents whose first
    character falls in one ``part_chars`` window (None: one part)."""
    n_docs = len(texts)
    if part_chars is None or n_docs < 2:
        return [0, n_docs]
    lens = np.fromiter(map(len, texts), np.int64, n_docs)
    window = (np.cumsum(lens) - lens) // max(part_chars, 1)
    return [0, *(np.flatnonzero(window[1:] != window[:-1]) + 1).tolist(), n_docs]


def _flat_parts(
    texts: Sequence[str], bigrams: bool, part_chars: int | None, keep_cut: bool = False
) -> _FlatParts:
    """The term occurrences of ``texts`` in parts of consecutive documents (at most about
    ``part_chars`` characters each; None: one part), numbered as one batch.

    Why batched and numbered: per text and per token, the analysis was a Python loop of a
    few operations per token and dominated ingest. Here Latin texts are joined and cut at
    whitespace (:func:`_latin_tokens`: each distinct chunk goes through the token regex
    once), each distinct token is keyed once, and phrase, document and bigram columns are
    integer array operations. Texts with CJK (jieba) or a marker character of
    :func:`_latin_tokens` take the per-text path. ``test_tagging`` checks both agree.

    Why parts: over a whole large batch (100k leaves, ~11M term occurrences) every column
    and temporary is tens of megabytes, which the allocator maps fresh and the kernel
    zeroes each time: half of the analysis and counting was kernel time. A part's columns
    are reused memory. The parts share one numbering, the one a single batch has: the same
    atoms in the same order (tokens in first-seen order across parts, the spelled bigrams
    of hyphenated first parts after all of them), the same sorted keys; so counts, tags
    and the saved statistics do not depend on the part size (``test_tagging_parts``).
    """
    for text in texts:
        if not isinstance(text, str):
            raise TaggerError(f"text must be a string, got {type(text).__name__}")
    atoms = _Atoms()
    latin, normed, (doc, term, part_a, part_b) = _mixed_columns(texts, bigrams, atoms)
    bounds = _part_bounds(texts, part_chars)
    ids = np.asarray(latin, dtype=np.int64)
    at = np.searchsorted(ids, bounds).tolist()
    stream = _LatinStream(atoms, bigrams, normed, keep_cut)
    lat = [
        stream.add(normed[at[k] : at[k + 1]], ids[at[k] : at[k + 1]])
        for k in range(len(bounds) - 1)
    ]
    stream.finish(lat)
    # One numbering of the batch's distinct keys. Latin unit keys come from the distinct
    # tokens (a few thousand) and bigram keys are made unique once per part, so no sort or
    # search runs over every occurrence; a bigram's parts are its two unit rows, gathered.
    c_keys = _distinct(term)
    tok_ok = stream.tkey >= 0
    keys = _distinct(np.concatenate((stream.tkey[tok_ok], *(p.g_keys for p in lat), c_keys)))
    c_at = np.searchsorted(doc, bounds).tolist()
    pieces = [
        (doc[c_at[k] : c_at[k + 1]], term[c_at[k] : c_at[k + 1]]) for k in range(len(bounds) - 1)
    ]
    pieces_ab = [
        (part_a[c_at[k] : c_at[k + 1]], part_b[c_at[k] : c_at[k + 1]])
        for k in range(len(bounds) - 1)
    ]
    parts = _FlatParts(
        keys, atoms, bounds, np.searchsorted(keys, stream.tkey), lat, pieces, pieces_ab
    )
    if stream.kept is not None:
        parts.cut = (ids, *stream.kept)
    return parts


class _FlatParts:
    """The parts of :func:`_flat_parts`: their shared numbering (``keys`` over ``atoms``)
    and, iterated once, each part's :class:`_Flat` (documents numbered within the part),
    built when it is reached and not kept."""

    __slots__ = ("_cjk", "_cjk_ab", "_lat", "_tok_idx", "atoms", "bounds", "cut", "keys")

    def __init__(
        self,
        keys: NDArray[np.int64],
        atoms: _Atoms,
        bounds: list[int],
        tok_idx: NDArray[np.int64],
        lat: list[_LatinPart],
        cjk: list[tuple[NDArray[np.int64], NDArray[np.int64]]],
        cjk_ab: list[tuple[NDArray[np.int64], NDArray[np.int64]]],
    ) -> None:
        self.keys = keys
        self.atoms = atoms
        self.bounds = bounds
        """Document boundaries: part ``k`` holds documents ``bounds[k]`` to ``bounds[k+1]``."""
        self._tok_idx = tok_idx
        self._lat = lat
        self._cjk = cjk
        self._cjk_ab = cjk_ab
        self.cut: _Cut | None = None
        """With ``keep_cut``: the whitespace cut of the Latin texts (see :class:`_Cut`)."""

    def __len__(self) -> int:
        return len(self.bounds) - 1

    def __iter__(self) -> Iterator[_Flat]:
        keys = self.keys
        for k in range(len(self)):
            lo = self.bounds[k]
            lat, (doc, term), (part_a, part_b) = self._lat[k], self._cjk[k], self._cjk_ab[k]
            # (released as the part is built: the parts before it are not kept either)
            self._lat[k] = _LatinPart.EMPTY
            c_keys, c_inv = np.unique(term, return_inverse=True)
            unit_idx = self._tok_idx[lat.unit_tok]
            gram_idx = np.searchsorted(keys, lat.g_keys)[lat.g_inv]
            bi = part_a >= 0
            part_a, part_b = part_a.copy(), part_b.copy()
            part_a[bi] = np.searchsorted(keys, part_a[bi])  # a part is a unit of the batch
            part_b[bi] = np.searchsorted(keys, part_b[bi])
            neg = np.full(lat.unit_tok.size, -1, dtype=np.int64)
            yield _Flat(
                np.concatenate((doc - lo, lat.unit_doc - lo, lat.unit_doc[lat.gram_row] - lo)),
                np.concatenate(
                    (np.searchsorted(keys, c_keys)[c_inv.reshape(-1)], unit_idx, gram_idx)
                ),
                np.concatenate((part_a, neg, unit_idx[lat.gram_row - 1])),
                np.concatenate((part_b, neg, unit_idx[lat.gram_row])),
                keys,
                self.atoms,
                not bool(bi.any()) and lat.fixed_split,
            )


@dataclass(slots=True)
class _LatinPart:
    """What :class:`_LatinStream` finds in one part: unit rows (content tokens in text
    order) and bigram rows, over the stream's distinct tokens and the batch's atoms."""

    unit_tok: NDArray[np.int64]
    """The distinct token of each unit (numbered across parts)."""
    unit_doc: NDArray[np.int64]
    """The document of each unit (numbered in the batch)."""
    gram_row: NDArray[np.int64]
    """Each bigram's second unit row (its first is the row before)."""
    gram: NDArray[np.int64]
    """Each bigram's term key (those of hyphenated first parts filled in at the end)."""
    odd: NDArray[np.int64]
    """The bigram rows whose first part is hyphenated (spelled out at the end)."""
    fixed_split: bool
    """No bigram has a hyphenated first part (see :attr:`_Flat.fixed_split`)."""
    g_keys: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    """The part's distinct bigram keys (sorted) and each bigram's index into them."""
    g_inv: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    EMPTY: ClassVar[_LatinPart]


_NONE: Final = np.zeros(0, dtype=np.int64)
_LatinPart.EMPTY = _LatinPart(_NONE, _NONE, _NONE, _NONE, _NONE, True)


class _LatinStream:
    """The units and bigrams of Latin texts, part after part, keyed over one batch's atoms.

    Distinct tokens are numbered across parts in first-seen order and keyed once, when first
    seen, so the atoms are interned in the order one pass over all the texts interns them;
    bigrams whose first part is hyphenated (``a-b`` + ``c`` is ``a`` + ``b-c``) are spelled
    once per distinct token pair after the last part (:meth:`finish`), as one pass spells
    them after all tokens. The whitespace cut of every part is gathered into one cut of all
    the texts, numbered as one cut of them is, when an ingest scope wants it
    (``text_tokenize.offer_cut``)."""

    def __init__(
        self, atoms: _Atoms, bigrams: bool, texts: list[str], keep_cut: bool = False
    ) -> None:
        self.atoms = atoms
        self.bigrams = bigrams
        self.texts = texts
        self.tok_ids: dict[str, int] = {}
        self.key_strs: list[str] = []
        self.tkey = np.zeros(0, dtype=np.int64)
        """Term key of each distinct token (-1: not a content word)."""
        self.whole = np.zeros(0, dtype=np.int64)
        """The atom of each distinct token's whole key string (a bigram's second part)."""
        self.length = np.zeros(0, dtype=np.int64)
        self.hyph = np.zeros(0, dtype=bool)
        self.odd_pairs: list[NDArray[np.int64]] = []
        self.keep_cut = keep_cut
        """Keep the cut in :attr:`kept` instead of offering it (a sub-batch of a split
        batch: the whole batch's cut is offered once, merged)."""
        self.cut: dict[str, int] | None = (
            {} if texts and (keep_cut or wants_cut(len(texts))) else None
        )
        self.occ: list[NDArray[np.int64]] = []
        self.kept: tuple[list[str], NDArray[np.int64]] | None = None
        """With ``keep_cut``: the distinct chunks (numbered in order) and the chunk of each
        occurrence."""

    def _number(self, distinct: list[str]) -> NDArray[np.int64]:
        """The stream's numbers of a part's distinct tokens; new ones keyed and appended."""
        ids = self.tok_ids
        base = len(ids)
        new = [t for t in distinct if t not in ids]
        ids.update(zip(new, range(base, base + len(new)), strict=True))
        n = len(new)
        tkey = np.full(n, -1, dtype=np.int64)
        whole = np.full(n, -1, dtype=np.int64)
        length = np.zeros(n, dtype=np.int64)
        hyph = np.zeros(n, dtype=bool)
        atom, k_of = self.atoms.atom, self.atoms.key
        key_strs = self.key_strs
        for i, k in enumerate(map(_english_key, new)):
            key_strs.append(k or "")
            if k is None:
                continue
            tkey[i] = k_of(k)
            whole[i] = atom(k)
            length[i] = len(k)
            hyph[i] = "-" in k
        if n:
            self.tkey = np.concatenate((self.tkey, tkey))
            self.whole = np.concatenate((self.whole, whole))
            self.length = np.concatenate((self.length, length))
            self.hyph = np.concatenate((self.hyph, hyph))
        return np.fromiter(map(ids.__getitem__, distinct), np.int64, len(distinct))

    def add(self, texts: Sequence[str], ids: NDArray[np.int64]) -> _LatinPart:
        """The units and bigrams of one part's ``texts`` (documents ``ids``)."""
        if not texts:
            return _LatinPart.EMPTY
        chunks, occ, distinct, tok, info = _latin_cut(texts)
        if self.cut is not None:
            cut = self.cut
            fresh = [c for c in chunks if c not in cut]
            cut.update(zip(fresh, range(len(cut), len(cut) + len(fresh)), strict=True))
            self.occ.append(np.fromiter(map(cut.__getitem__, chunks), np.int64, len(chunks))[occ])
        if not tok.size:
            return _LatinPart.EMPTY
        tok = self._number(distinct)[tok]
        tkey, length = self.tkey, self.length
        term = tkey[tok]
        none_tok = term < 0
        # A phrase breaks at punctuation or a sentence end before a token, and after a token
        # that is not a content word (a stopword, a number).
        code = info & 3
        phrase = np.cumsum(code > 0) + np.concatenate(([0], np.cumsum(none_tok[:-1])))
        doc = ids[np.cumsum(info >> 2) - 1]
        keep = ~none_tok
        units, udoc, uphrase, utok = term[keep], doc[keep], phrase[keep], tok[keep]
        if not self.bigrams or units.size < 2:
            return _LatinPart(utok, udoc, _NONE, _NONE, _NONE, True)
        j = np.flatnonzero((uphrase[1:] == uphrase[:-1]) & (units[1:] != units[:-1])) + 1
        ta, tb = utok[j - 1], utok[j]
        fits = length[ta] + 1 + length[tb] <= _MAX_TOKEN_CHARS
        j, ta, tb = j[fits], ta[fits], tb[fits]
        # The first part's head atom and the second part's whole atom; a hyphenated first
        # part is spelled out in :meth:`finish`.
        gram = _pack(tkey[ta] >> 32, self.whole[tb])
        odd = np.flatnonzero(self.hyph[ta])
        if odd.size:
            self.odd_pairs.append(np.stack((ta[odd], tb[odd])))
        return _LatinPart(utok, udoc, j, gram, odd, not odd.size)

    def finish(self, parts: list[_LatinPart]) -> None:
        """Spell the bigrams of hyphenated first parts (once per distinct token pair, in
        pair order), number each part's bigram keys, and offer the whole cut."""
        if self.odd_pairs:
            ta, tb = np.concatenate(self.odd_pairs, axis=1)
            n_tok = len(self.key_strs)
            pair, inv = np.unique(ta * n_tok + tb, return_inverse=True)
            strs, k_of = self.key_strs, self.atoms.key
            spelled = [k_of(f"{strs[p // n_tok]}-{strs[p % n_tok]}") for p in pair.tolist()]
            keys = np.asarray(spelled, dtype=np.int64)[inv.reshape(-1)]
            at = 0
            for p in parts:
                if p.odd.size:
                    p.gram[p.odd] = keys[at : at + p.odd.size]
                    at += p.odd.size
        for p in parts:
            if p.gram.size:
                g_keys, g_inv = np.unique(p.gram, return_inverse=True)
                p.g_keys, p.g_inv = g_keys, g_inv.reshape(-1)
        if self.cut is not None:
            # In an ingest write, the BM25 index cuts the same leaf texts: it reuses this
            # cut (``text_tokenize.shared_words``) instead of cutting them again.
            occ = np.concatenate(self.occ) if self.occ else _NONE
            if self.keep_cut:
                self.kept = (list(self.cut), occ)
            else:
                offer_cut(self.texts, self.cut, occ)


_PARAGRAPH: Final = re.compile(r"\n\s*\n")
"""A blank line: the one whitespace-only gap that ends a sentence (see :func:`_gap_code`)."""
_DOC_CHUNK: Final = "\x01"
_PARA_CHUNK: Final = "\x02"
"""Marker chunks of :func:`_latin_tokens`: a document start, a blank line. Texts holding
either character take the per-text path (:func:`_mixed_columns`)."""


def _latin_tokens(
    texts: Sequence[str],
) -> tuple[list[str], NDArray[np.int64], NDArray[np.int64]]:
    """:func:`_latin_cut`'s tokens of ``texts``; the cut is offered to an ingest scope's
    BM25 upsert (``text_tokenize.offer_cut``)."""
    chunks, occ, distinct, tok, info = _latin_cut(texts)
    offer_cut(texts, chunks, occ)
    return distinct, tok, info


def _latin_cut(
    texts: Sequence[str],
) -> tuple[list[str], NDArray[np.int64], list[str], NDArray[np.int64], NDArray[np.int64]]:
    """The whitespace cut of ``texts`` (the distinct chunks, first seen first, and the
    chunk of each occurrence, a document mark before each text), the distinct tokens (first
    seen first), the distinct token of each token occurrence, and each occurrence's gap
    info: the :func:`_gap_code` of the text between it and the token before, plus 4 x the
    documents that start in that text.

    Why whitespace chunks: a token never holds whitespace, so the tokens of a text are the
    tokens of its whitespace-separated chunks, and a corpus repeats its chunks (``word``,
    ``word.``, ``word,``). The text is cut by ``str.split`` (C, several times faster than the
    token regex over every character) and each *distinct* chunk is cut by the token regex
    once. A gap between tokens is the end of one chunk, whitespace, chunks without a token,
    and the start of the next; its code is the largest of its parts' codes, because
    whitespace alone only ends a sentence as a blank line (marked by a chunk of its own
    before the cut) and punctuation codes do not depend on what surrounds them. Equal to
    the one-regex-pass analysis (``test_tagging``'s hypothesis tests compare them).
    """
    big = " \x01 " + " \x01 ".join(texts)
    if "\n" in big:
        big = _PARAGRAPH.sub(" \x02 ", big)
    chunks = big.split()
    # Each chunk's distinct index in one C-level pass: ``setdefault`` keeps the position of
    # a chunk's first occurrence, which ``dense`` turns into first-seen numbering (was a
    # ``dict.fromkeys`` pass and a lookup pass over every chunk).
    chunk_ids: dict[str, int] = {}
    first_at = np.fromiter(map(chunk_ids.setdefault, chunks, count()), np.int64, len(chunks))
    dense = np.empty(len(chunks), dtype=np.int64)
    dense[np.fromiter(chunk_ids.values(), np.int64, len(chunk_ids))] = np.arange(len(chunk_ids))
    # Per distinct chunk: its tokens' slice of ``flat_tok``/``flat_code`` (each token's
    # distinct index and the code of the gap before it inside the chunk), the code of its
    # tail after the last token, and for a chunk without tokens its code and documents.
    tok_ids: dict[str, int] = {}
    flat_tok: list[int] = []
    flat_code: list[int] = []
    n_chunk = len(chunk_ids)
    start = np.zeros(n_chunk, dtype=np.int64)
    ntok = np.zeros(n_chunk, dtype=np.int64)
    tail = np.zeros(n_chunk, dtype=np.int64)
    docs = np.zeros(n_chunk, dtype=np.int64)
    split, code_of, tid = _TOKEN_SPLIT_RE.split, _gap_code, tok_ids.setdefault
    for c, chunk in enumerate(chunk_ids):
        start[c] = len(flat_tok)
        if chunk in (_DOC_CHUNK, _PARA_CHUNK):
            tail[c], docs[c] = 2, chunk == _DOC_CHUNK
            continue
        pieces = split(chunk)
        ntok[c] = len(pieces) // 2
        tail[c] = code_of(pieces[-1])
        for i in range(1, len(pieces), 2):
            flat_tok.append(tid(pieces[i], len(tok_ids)))
            flat_code.append(code_of(pieces[i - 1]))
    occ = dense[first_at]
    n = ntok[occ]
    has = n > 0
    tb = occ[has]  # the chunk occurrences holding tokens, in order
    # Gap k: before token-bearing occurrence k; it holds the tail of occurrence k - 1 and
    # every token-free occurrence in between (``seg``: how many token-bearing ones precede).
    seg: NDArray[np.int64] = np.cumsum(has) - has
    gap = np.zeros(tb.size + 1, dtype=np.int64)
    gap[1:] = tail[tb]
    free = ~has
    np.maximum.at(gap, seg[free], tail[occ[free]])
    starts = np.bincount(seg[free], weights=docs[occ[free]], minlength=tb.size + 1)
    lengths = n[has]
    total = int(lengths.sum())
    first = np.cumsum(lengths) - lengths  # each occurrence's first token, in the output
    # The output's row r is flat entry start[chunk] + (r - first[occurrence]).
    if total == tb.size:  # one token per chunk (most prose): no expansion
        base = start[tb]
    else:
        base = np.repeat(start[tb] - first, lengths) + np.arange(total, dtype=np.int64)
    tok = np.asarray(flat_tok, dtype=np.int64)[base]
    code = np.asarray(flat_code, dtype=np.int64)[base]
    code[first] = np.maximum(code[first], gap[:-1])
    code[first] += 4 * starts[:-1].astype(np.int64)
    return list(chunk_ids), occ, list(tok_ids), tok, code


class _Vocab:
    """The fitted vocabulary: term id <-> canonical key (see :class:`_Atoms`), over the
    tagger's own atoms.

    Keys are kept sorted (``keys``, with the term id of each in ``key_term``), so a batch's
    keys are looked up with one ``searchsorted`` and its new ones merged in with one
    ``insert``: no per-term Python work and no per-bigram string, where the string vocabulary
    held millions of them (most bigrams are seen once). Term ids are dense and stable:
    ``term_key[id]`` is the key, and the document frequencies are an array over ids.
    """

    __slots__ = ("atoms", "key_term", "keys", "term_key")

    def __init__(self) -> None:
        self.atoms = _Atoms()
        self.keys: NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self.key_term: NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self.term_key: NDArray[np.int64] = np.zeros(0, dtype=np.int64)

    def __len__(self) -> int:
        return int(self.term_key.size)

    def find(self, keys: NDArray[np.int64]) -> NDArray[np.int64]:
        """Term ids of ``keys`` (-1 where absent or where the key is -1)."""
        if not self.keys.size or not keys.size:
            return np.full(keys.size, -1, dtype=np.int64)
        pos = np.minimum(np.searchsorted(self.keys, keys), self.keys.size - 1)
        hit = self.keys[pos] == keys
        return np.where(hit & (keys >= 0), self.key_term[pos], -1)

    def add(self, keys: NDArray[np.int64]) -> NDArray[np.int64]:
        """Number ``keys`` (sorted, distinct, absent) as new terms; returns their ids."""
        base = len(self)
        ids = np.arange(base, base + keys.size, dtype=np.int64)
        at = np.searchsorted(self.keys, keys)
        self.keys = np.insert(self.keys, at, keys)
        self.key_term = np.insert(self.key_term, at, ids)
        self.term_key = np.concatenate((self.term_key, keys))
        return ids

    def translate(self, keys: NDArray[np.int64], atoms: _Atoms, add: bool) -> NDArray[np.int64]:
        """Keys over another atom table (a batch's) as keys over this one; -1 where an atom
        is unknown (``add``: unknown atoms are interned instead)."""
        mine = self.atoms
        strs = atoms.strs
        g = np.fromiter(map(mine.ids.get, strs, repeat(-1)), np.int64, len(strs))
        if add:
            miss = np.flatnonzero(g < 0)
            if miss.size:
                fresh = [strs[i] for i in miss.tolist()]  # distinct: batch atoms are
                base = len(mine.strs)
                mine.ids.update(zip(fresh, range(base, base + len(fresh)), strict=True))
                mine.strs += fresh
                g[miss] = np.arange(base, base + len(fresh), dtype=np.int64)
        a, b = g[keys >> 32], (keys & _LOW) - 1
        gb = np.where(b >= 0, g[np.maximum(b, 0)], -1)
        ok = (a >= 0) & ((b < 0) | (gb >= 0))
        return np.where(ok, _pack(a, gb), -1)

    def ids_of(self, strings: Sequence[str]) -> NDArray[np.int64]:
        """Term ids of strings (-1: not a term).

        A string without a hyphen is a single atom: one C-level dictionary pass keys them
        all; only hyphenated strings are split in Python."""
        get = self.atoms.ids.get
        a = np.fromiter(map(get, strings, repeat(-1)), np.int64, len(strings))
        keys = np.where(a >= 0, a << 32, -1)
        for i in [i for i, s in enumerate(strings) if "-" in s]:
            head, _, rest = strings[i].partition("-")
            h, r = get(head, -1), get(rest, -1)
            keys[i] = (h << 32) | (r + 1) if h >= 0 and r >= 0 else -1
        return self.find(keys)

    def strings(self, ids: Sequence[int]) -> list[str]:
        """The term strings of term ids (spelled with C-level passes: the head atoms of all,
        then the second atoms of the two-atom ones joined on)."""
        keys = self.term_key[np.asarray(ids, dtype=np.int64)]
        strs = self.atoms.strs
        heads = map(strs.__getitem__, (keys >> 32).tolist())
        # One comprehension: most candidate terms are bigrams, and patching them into the
        # list of heads afterwards cost twice as much.
        tails = ((keys & _LOW) - 1).tolist()
        return [h if b < 0 else f"{h}-{strs[b]}" for h, b in zip(heads, tails, strict=True)]

    @classmethod
    def of_keys(cls, atoms: _Atoms, keys: NDArray[np.int64]) -> _Vocab:
        """A vocabulary numbering sorted distinct ``keys`` over ``atoms`` in order (a
        sub-batch's own numbering, :class:`_BatchCounts`)."""
        v = cls()
        v.atoms = atoms
        v.keys = v.term_key = keys
        v.key_term = np.arange(keys.size, dtype=np.int64)
        return v

    @classmethod
    def of_strings(cls, terms: Sequence[str]) -> _Vocab:
        """A vocabulary numbering distinct ``terms`` in order (term ``i`` is ``terms[i]``)."""
        v = cls()
        v.term_key = np.fromiter(map(v.atoms.key, terms), np.int64, len(terms))
        v._index()
        return v

    def _index(self) -> None:
        order = np.argsort(self.term_key, kind="stable")
        self.keys = self.term_key[order]
        self.key_term = order.astype(np.int64)


_NO_PART: Final = -2
_SLACK: Final = 6
"""Candidates beyond ``max_tags`` that tag selection ranks first in every document (more are
ranked only for a document whose first ones were skipped: dropped parts, shared labels)."""
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

    EMPTY: ClassVar[_Counted]


_Counted.EMPTY = _Counted(_NONE, _NONE, _NONE, _NONE, _NONE)


def _count(flat: _Flat, gid: NDArray[np.int64]) -> _Counted:
    """Count ``flat``'s (document, term) pairs; ``gid``: the vocabulary id of each batch term
    (-1: none). Distinct batch terms have distinct ids, so batch pairs are vocabulary pairs."""
    size = max(flat.keys.size, 1)
    key = flat.doc * size + flat.term
    is_bi = flat.part_a >= 0
    # One sort of (pair, is-bigram): a pair's rows are adjacent, and its last row is a
    # bigram row exactly when the document has a bigram occurrence of the term.
    srt = np.sort((key << 1) | is_bi)
    if not srt.size:
        return _Counted(srt, srt, srt, srt, srt)
    last = np.flatnonzero(np.append(srt[1:] >> 1 != srt[:-1] >> 1, True))
    pair = srt[last] >> 1
    tf = np.diff(np.concatenate(([-1], last)))
    local = pair % size
    pa = np.full(pair.size, _NO_PART, dtype=np.int64)
    pb = pa.copy()
    bi = np.flatnonzero(is_bi)
    if bi.size:
        at = np.flatnonzero(srt[last] & 1)  # the pairs with a bigram occurrence
        if flat.fixed_split:
            # Every occurrence of a bigram splits alike: any one gives the split.
            split_a = np.full(size, -1, dtype=np.int64)
            split_b = split_a.copy()
            split_a[flat.term[bi]] = flat.part_a[bi]
            split_b[flat.term[bi]] = flat.part_b[bi]
            pa[at] = gid[split_a[local[at]]]
            pb[at] = gid[split_b[local[at]]]
        else:
            # The last occurrence of each (document, bigram) gives its split.
            rev = bi[::-1]
            bkey, first = np.unique(key[rev], return_index=True)
            row = rev[first]
            where = np.searchsorted(pair, bkey)  # every bigram pair is among the pairs
            pa[where] = gid[flat.part_a[row]]
            pb[where] = gid[flat.part_b[row]]
    return _Counted(pair // size, gid[local], tf, pa, pb)


@dataclass(slots=True)
class _BatchCounts:
    """A sub-batch of a split batch, analysed and counted on its own: its own atoms, its
    terms numbered locally (term ``i`` is ``keys[i]``), each part's counts over them.

    Why local: two processes each analyse one sub-batch without sharing anything; the merge
    (:meth:`KeywordTagger._number_batch`, :meth:`KeywordTagger._fit_batches`) maps each
    sub-batch's terms into the vocabulary by its atom strings and keys, and each sub-batch is
    then scored in its own numbering (:meth:`KeywordTagger._batch_scorer`) with the merged
    frequencies of its terms. Tags do not depend on term ids (ties break by name), so they
    equal a one-batch fit's."""

    n_docs: int
    atoms: _Atoms
    keys: NDArray[np.int64]
    """The sub-batch's distinct term keys over :attr:`atoms`, sorted."""
    df: NDArray[np.int64]
    """How many of the sub-batch's documents hold each of its terms."""
    bounds: list[int]
    """Its parts' document boundaries (see :class:`_FlatParts`), with :attr:`counted`."""
    counted: list[_Counted]
    """Each part's counts (local term ids); empty once scored, and in a copy that crossed
    to another process (the counts, and their bounds, stay where they are scored)."""
    cut: _Cut | None
    """The whitespace cut of its Latin texts, when asked for."""


def _count_batch(texts: Sequence[str], bigrams: bool, keep_cut: bool) -> _BatchCounts:
    """Analyse and count a sub-batch on its own (see :class:`_BatchCounts`)."""
    parts = _flat_parts(texts, bigrams, _PART_CHARS, keep_cut)
    local = np.arange(parts.keys.size, dtype=np.int64)
    counted = [_count(flat, local) for flat in parts]
    df = np.zeros(parts.keys.size, dtype=np.int64)
    for c in counted:
        terms, counts = _unique_counts(c.term)  # a term's pairs are its documents
        df[terms] += counts
    return _BatchCounts(len(texts), parts.atoms, parts.keys, df, parts.bounds, counted, parts.cut)


def tokenize(text: str) -> list[str]:
    """The content-word keys of ``text`` in order: what the tagger counts (for tests, debugging).

    English words are case-folded and plural-folded, stopwords and numbers dropped; Chinese is
    segmented by jieba and reduced to nouns.
    """
    return list(_analyse(text).units)


_LABEL_CACHE: dict[str, str | None] = {}


_NORMAL_LABEL: Final = re.compile(
    rf"[a-z0-9_.+#](?:[a-z0-9_.+#-]{{0,{_tags.MAX_LABEL_LENGTH - 2}}}[a-z0-9_.+#])?"
)
"""A term key that is a normal label already (ASCII, lower case, no forbidden character, no
edge hyphen, within the length limit): ``normalize_label`` returns it unchanged."""


_NORMAL_LABEL_LINES: Final = re.compile(
    rf"(?:{_NORMAL_LABEL.pattern})(?:\n(?:{_NORMAL_LABEL.pattern}))*"
)
"""Normal labels joined by newlines (no normal label holds one)."""


def _all_normal(keys: list[str]) -> bool:
    """Whether every key is a normal label already (what :func:`_labels` then returns
    unchanged): one regex pass over the keys joined by newlines, where one match per key was
    most of tag selection's label step. A key holding a newline makes the line count differ."""
    if not keys:
        return True
    joined = "\n".join(keys)
    return joined.count("\n") == len(keys) - 1 and bool(_NORMAL_LABEL_LINES.fullmatch(joined))


def _labels(keys: list[str]) -> list[str | None]:
    """:func:`_label` of many keys: the normal ones (most) found by one fullmatch each in a
    C-level ``map``, the rest through :func:`_label`."""
    if _all_normal(keys):
        return list(keys)
    normal = list(map(_NORMAL_LABEL.fullmatch, keys))
    if None not in normal:
        return list(keys)
    return [k if m is not None else _label(k) for k, m in zip(keys, normal, strict=True)]


def _label(key: str) -> str | None:
    """The tag label of a term key (memoised like the keys: a corpus repeats its terms).

    Most keys are normal labels already (one regex match); the rest are normalised once."""
    if _NORMAL_LABEL.fullmatch(key) is not None:
        return key
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
            raise TaggerError(f"max_df_ratio must be in (0, 1], got {shown_value(max_df_ratio)}")
        if not isinstance(min_score, int | float) or not 0.0 <= min_score <= 1.0:
            raise TaggerError(f"min_score must be in [0, 1], got {shown_value(min_score)}")
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
        self._vocab = _Vocab()
        self._df: NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self._cache: NDArray[np.float64] | None = None
        # Incremental persistence (see :meth:`state_delta`): the saved base's id and size,
        # and the term ids counted since it was written.
        self._base_id = ""
        self._base_terms = 0
        self._base_atoms = 0
        self._legacy = False
        """The base was read in the term-string format: the next save writes a new base."""
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
        return len(self._vocab)

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
        parts = _flat_parts(texts, self.bigrams, _PART_CHARS)
        if len(parts) == 1:
            self._fit_flat(next(iter(parts)), len(texts))
        else:
            self._fit_parts(parts, len(texts))

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
        parts = _flat_parts(texts, self.bigrams, _PART_CHARS)
        if len(parts) == 1:
            flat = next(iter(parts))
            fitted = self._fit_flat(flat, len(texts))
            return [[lab for lab, _ in d] for d in self._tfidf_flat(flat, len(texts), fitted)]
        # Every part is counted into the statistics before any is scored: a document's tags
        # depend on the frequencies of the whole batch.
        counted = self._fit_parts(parts, len(texts))
        out: list[list[str]] = []
        for k, c in enumerate(counted):
            counted[k] = _Counted.EMPTY  # (each part's counts released once scored)
            n = parts.bounds[k + 1] - parts.bounds[k]
            out += ([lab for lab, _ in d] for d in self._tfidf_counted(c, n))
        return out

    def _fit_flat(self, flat: _Flat, n_docs: int) -> _Counted:
        """Count each document's distinct terms into the document frequencies; returns the
        batch's counts (what :meth:`_tfidf_flat` scores, so a fit-and-extract counts once)."""
        counted = _count(flat, self._gid(flat.keys, flat.atoms, add=True))
        n_terms = len(self._vocab)
        old = self._df
        if counted.term.size * 8 < n_terms:
            # A small batch in a large vocabulary (a re-add): the batch's terms counted by a
            # sort and added in, the frequencies copied once, where zeroing, copying and
            # summing arrays over every term (millions at 100k leaves) was most of the fit.
            terms, counts = _unique_counts(counted.term)
            df = self._grown_df()
            df[terms] += counts
        else:
            terms = None
            df = np.zeros(n_terms, dtype=np.int64)
            df[: old.size] = old
            df += np.bincount(counted.term, minlength=n_terms)
        self._install(df, n_docs, lambda: terms if terms is not None else _distinct(counted.term))
        return counted

    def _grown_df(self) -> NDArray[np.int64]:
        """A copy of the frequencies, with a zero for each term the vocabulary gained."""
        old = self._df
        return np.concatenate((old, np.zeros(len(self._vocab) - old.size, dtype=np.int64)))

    def _install(
        self, df: NDArray[np.int64], n_docs: int, counted: Callable[[], NDArray[np.int64]]
    ) -> None:
        """Make ``df`` the frequencies after a fit of ``n_docs`` more documents. ``counted``
        gives the ids of the terms it counted: recorded for :meth:`state_delta`, and only
        computed when a saved base exists."""
        if self._base_id:
            self._touched.append(counted())
        self._df = df
        self._n_docs += n_docs
        self._fitted = True
        self._cache = None

    def _gid(self, batch_keys: NDArray[np.int64], atoms: _Atoms, add: bool) -> NDArray[np.int64]:
        """Vocabulary ids of a batch's distinct term keys (over its ``atoms``; -1: unknown);
        ``add``: unknown terms are numbered first, in key order.

        One lookup and one merge over the (large) vocabulary: the batch's distinct keys
        (distinct batch terms are distinct terms) are found by one binary search."""
        vocab = self._vocab
        keys = vocab.translate(batch_keys, atoms, add=add)
        gid = vocab.find(keys)
        unseen = np.flatnonzero(gid < 0)
        if add and unseen.size:
            order = unseen[np.argsort(keys[unseen])]
            gid[order] = vocab.add(keys[order])
        return gid

    def _fit_parts(self, parts: _FlatParts, n_docs: int) -> list[_Counted]:
        """:meth:`_fit_flat` of a batch in parts: one numbering, each part counted in turn
        and its counts added in; the same statistics (and saved state) as one part."""
        gid = self._gid(parts.keys, parts.atoms, add=True)
        counted = [_count(flat, gid) for flat in parts]
        df = self._grown_df()
        seen: list[NDArray[np.int64]] = []
        for c in counted:
            terms, counts = _unique_counts(c.term)
            df[terms] += counts
            seen.append(terms)
        self._install(df, n_docs, lambda: _distinct(np.concatenate(seen)) if seen else _NONE)
        return counted

    def _number_batch(self, batch: _BatchCounts) -> NDArray[np.int64]:
        """The vocabulary ids of a sub-batch's terms, its new terms numbered (in key order,
        as :meth:`_fit_parts` numbers a batch's); :meth:`_fit_batches` then counts them.
        (Apart, so that one sub-batch is numbered while the other is still being counted.)"""
        return self._gid(batch.keys, batch.atoms, add=True)

    def _fit_batches(
        self, batches: Sequence[_BatchCounts], gids: Sequence[NDArray[np.int64]]
    ) -> None:
        """Add numbered sub-batches' counts to the statistics (``gids``: each one's
        :meth:`_number_batch`)."""
        df = self._grown_df()
        for b, gid in zip(batches, gids, strict=True):
            df[gid] += b.df  # (a sub-batch's terms are distinct, so are their ids)
        n_docs = sum(b.n_docs for b in batches)
        self._install(df, n_docs, lambda: _distinct(np.concatenate(gids)) if gids else _NONE)

    def unfit(self, texts: Sequence[str]) -> None:
        """Take documents that :meth:`partial_fit` counted back out of the statistics: each
        text's distinct terms lose one document, ``n_docs`` loses one per text, and a term
        left in no document leaves the vocabulary (the next save then writes a new base).

        Why: a batch that fails after its texts were counted (``add_records``, all or
        nothing) must take back its own counts only; putting back the statistics saved
        before it also dropped what another writer counted meanwhile (helper leftovers56).
        The frequencies left are those a fit without these texts gives, term for term (ids
        may differ: tags do not depend on them). Terms unknown here (a refit elsewhere
        recounted without them) are skipped."""
        if isinstance(texts, str):
            raise TaggerError("texts must be a sequence of strings, not one string")
        if not texts:
            return
        batch = _count_batch(texts, self.bigrams, False)
        gid = self._gid(batch.keys, batch.atoms, add=False)
        known = gid >= 0
        terms = gid[known]
        df = self._df.copy()
        df[terms] = np.maximum(df[terms] - batch.df[known], 0)
        self._n_docs = max(self._n_docs - batch.n_docs, 0)
        self._cache = None
        empty = df[terms] == 0
        if not empty.any():
            self._df = df
            if self._base_id:
                self._touched.append(_distinct(terms))
            return
        keep = df > 0
        v = _Vocab()
        v.atoms = self._vocab.atoms
        v.term_key = self._vocab.term_key[keep]
        v._index()
        self._vocab = v
        self._df = df[keep]
        self._base_id = ""  # (ids moved: the next save writes a new base)
        self._touched = []

    @classmethod
    def _batch_scorer(
        cls, params: Mapping[str, Any], n_docs: int, batch: _BatchCounts, df: NDArray[np.int64]
    ) -> KeywordTagger:
        """A tagger that scores ``batch`` in its own numbering: the parameters and corpus
        size of the fitted tagger, the batch's vocabulary, ``df`` the corpus frequencies of
        its terms. (Built where the batch's counts are: in either process.)"""
        view = cls(**params)
        view._n_docs = n_docs
        view._fitted = True
        view._vocab = _Vocab.of_keys(batch.atoms, batch.keys)
        view._df = df
        return view

    def _batch_tags(self, batch: _BatchCounts) -> list[list[str]]:
        """Tags of a counted sub-batch (on a :meth:`_batch_scorer`), each part's counts
        released once scored."""
        out: list[list[str]] = []
        for k, c in enumerate(batch.counted):
            batch.counted[k] = _Counted.EMPTY
            n = batch.bounds[k + 1] - batch.bounds[k]
            out += ([lab for lab, _ in d] for d in self._tfidf_counted(c, n))
        return out

    def _stats(self) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
        """IDF per term and the candidate mask (the df window).

        IDF depends only on the fit and is cached; the mask is recomputed each call (one
        comparison per term) so that changing ``min_df`` or ``max_df_ratio`` on a fitted
        tagger takes effect.
        """
        if self._cache is None:
            self._cache = self._idf(self._df)
        return self._cache, self._in_df_window(self._df)

    def _idf(self, df: NDArray[np.int64]) -> NDArray[np.float64]:
        """IDF of terms with document frequencies ``df`` (every term's, or a batch's)."""
        out: NDArray[np.float64] = np.log((1.0 + self._n_docs) / (1.0 + df)) + 1.0
        return out

    def _in_df_window(self, df: NDArray[np.int64]) -> NDArray[np.bool_]:
        """Whether terms with document frequencies ``df`` may be tags (the df window)."""
        out: NDArray[np.bool_] = (df >= self.min_df) & (df <= self.max_df())
        return out

    def _require_fitted(self) -> None:
        if not self._fitted:
            raise TaggerNotFittedError("KeywordTagger.fit() must be called before extracting tags")

    def max_df(self) -> float:
        """The document-frequency ceiling in force for the fitted corpus."""
        n = self._n_docs
        return max(self.max_df_ratio * n, min(self.max_df_floor, n - 1))

    def document_frequency(self, term: str) -> int:
        """How many fitted documents contain ``term`` (a key as :func:`tokenize` returns it)."""
        tid = int(self._vocab.ids_of([term])[0])
        return 0 if tid < 0 else int(self._df[tid])

    def document_frequencies(self, terms: Sequence[str]) -> NDArray[np.int64]:
        """:meth:`document_frequency` of many terms in one vocabulary pass (0: not a term)."""
        tid = self._vocab.ids_of(terms)
        df = np.zeros(len(terms), np.int64)
        known = tid >= 0  # an unfitted tagger knows no term
        df[known] = self._df[tid[known]]
        return df

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
            parts = _flat_parts(texts, self.bigrams, _PART_CHARS)
            if len(parts) == 1:
                return self._tfidf_flat(next(iter(parts)), len(texts))
            gid = self._gid(parts.keys, parts.atoms, add=False)
            out: list[list[tuple[str, float]]] = []
            for k, flat in enumerate(parts):
                n = parts.bounds[k + 1] - parts.bounds[k]
                out += self._tfidf_counted(_count(flat, gid), n)
            return out
        return [self._textrank(_analyse(t)) for t in texts]

    def _tfidf_flat(
        self, flat: _Flat, n_docs: int, counted: _Counted | None = None
    ) -> list[list[tuple[str, float]]]:
        """TF-IDF tags of the documents of ``flat`` (``counted``: its counts when known)."""
        if counted is None:
            # -1 for a term outside the vocabulary (an unseen text's words), dropped below.
            counted = _count(flat, self._gid(flat.keys, flat.atoms, add=False))
        return self._tfidf_counted(counted, n_docs)

    def _tfidf_counted(self, counted: _Counted, n_docs: int) -> list[list[tuple[str, float]]]:
        """TF-IDF tags of ``n_docs`` documents from their counts."""
        out: list[list[tuple[str, float]]] = [[] for _ in range(n_docs)]
        t = counted.term
        # The df window and the IDF (:meth:`_stats`' formulas) of the batch's terms only:
        # a re-add tags a few documents in a vocabulary of millions of terms, and the
        # whole-vocabulary arrays cost more than the batch. (A fit without any term has an
        # empty df: nothing is wanted.)
        all_df = self._df
        if t.size and all_df.size:
            df = all_df[np.maximum(t, 0)]
            wanted = (t >= 0) & self._in_df_window(df)
        else:
            wanted = t < -1
        if not wanted.any():
            return out
        d, t, tf = counted.doc[wanted], t[wanted], counted.tf[wanted]
        pa, pb = counted.parts(wanted)
        score = (1.0 + np.log(tf)) * self._idf(df[wanted])
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
        node_tid = self._vocab.ids_of([str(k) for k in nodes])
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
        distinct = list(dict.fromkeys(terms))
        split: list[tuple[str, str] | None] = []
        for term, tid in zip(distinct, self._vocab.ids_of(distinct).tolist(), strict=True):
            if tid < 0 or not ok[tid]:
                continue
            pp = parts.get(term)
            s = (node_score[pp[0]] + node_score[pp[1]]) / 2 if pp else node_score[term]
            t_list.append(tid)
            s_list.append(s)
            split.append(pp)
        out: list[list[tuple[str, float]]] = [[]]
        if t_list:
            t = np.asarray(t_list, dtype=np.int64)
            ids = self._vocab.ids_of([x for p in split if p is not None for x in p]).tolist()
            pa = np.full(t.size, _NO_PART, dtype=np.int64)
            pb = pa.copy()
            bi = [i for i, p in enumerate(split) if p is not None]
            pa[bi], pb[bi] = ids[0::2], ids[1::2]
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
        if self.max_tags == 0 or not d.size:
            return
        n_docs = len(out)
        best = np.zeros(n_docs, dtype=np.float64)
        np.maximum.at(best, d, score)
        rel = np.round(score / best[d], 9)
        keep = rel >= self.min_score
        d, t, rel, part_a, part_b = d[keep], t[keep], rel[keep], part_a[keep], part_b[keep]
        # Only a prefix of each document's ranking can matter: the greedy pass stops at
        # max_tags tags. One integer sort by (document, -score) finds each document's
        # ``max_tags + _SLACK``-th best score; rows scoring at least that (ties included)
        # are a prefix of the full order, and the rest is looked at only for a document
        # whose prefix did not yield max_tags tags (:meth:`_select_whole`).
        q = np.rint(rel * 1e9).astype(np.int64)  # rel has 9 decimals: order and ties kept
        ranked = (d << 31) | ((1 << 30) - q)  # (document, -score) as one sortable key
        by_score = np.argsort(ranked)
        size = np.bincount(d, minlength=n_docs)
        starts = np.concatenate(([0], np.cumsum(size)[:-1]))
        cut_at = starts + np.minimum(size, self.max_tags + _SLACK) - 1
        floor = np.zeros(n_docs, dtype=np.int64)
        has = size > 0
        floor[has] = q[by_score[cut_at[has]]]
        pre = q >= floor[d]
        short = np.zeros(n_docs, dtype=bool)  # some rows were left out of the prefix
        short[d[~pre]] = True
        whole = (d, t, rel, part_a, part_b)
        d, t, rel, part_a, part_b = d[pre], t[pre], rel[pre], part_a[pre], part_b[pre]
        ranked = ranked[pre]
        # Alphabetical rank among the candidates only: the same order as a rank over the
        # whole vocabulary, without sorting every term of the corpus on every call.
        cand, inv = np.unique(t, return_inverse=True)
        inv = inv.reshape(-1)
        names = self._vocab.strings(cand.tolist())
        rank = np.empty(cand.size, dtype=np.int64)
        rank[sorted(range(cand.size), key=names.__getitem__)] = np.arange(cand.size)
        # (by document, then score, then name: the one (document, -score) key orders as
        # the two, and lexsort passes once per key)
        order = np.lexsort((rank[inv], ranked))
        bounds = np.searchsorted(d[order], np.arange(n_docs + 1))
        # Each candidate's label, numbered (equal labels share a number; None is -1).
        cand_label: list[str | None]
        if _all_normal(names):
            # Every name is its own label, and distinct terms have distinct names (a term
            # key is canonical: its spelling keys back to it), so the labels are numbered
            # by candidate, as the numbering below would come to.
            cand_label = list(names)
            lab_num = np.arange(cand.size, dtype=np.int64)
            n_lab = cand.size
        else:
            cand_label = _labels(names)
            # (Numbers in first-seen order; None is -1. Only equality of numbers is used.)
            lab_ids = dict.fromkeys(cand_label, -1)
            for k, x in enumerate(lab_ids):
                lab_ids[x] = k if x is not None else -1
            lab_num = np.fromiter(map(lab_ids.__getitem__, cand_label), np.int64, cand.size)
            n_lab = len(lab_ids)
        t, rel, ci = t[order], rel[order], inv[order]
        part_a, part_b, d = part_a[order], part_b[order], d[order]
        starts = bounds[:-1]
        size = np.diff(bounds)
        # The greedy pass reduces to "the first max_tags candidates" for a document when,
        # among those, every label is a label, no two labels are equal, and no candidate is
        # a part of a bigram candidate (then nothing is skipped or dropped). That is checked
        # for all documents at once; only the others run the loop.
        pos = np.arange(t.size, dtype=np.int64) - starts[d]
        rows = np.flatnonzero(pos < self.max_tags)
        bad = np.zeros(n_docs, dtype=bool)
        top_lab = lab_num[ci[rows]]
        bad[d[rows[top_lab < 0]]] = True
        n_lab = max(n_lab, 1)
        dl = np.sort(d[rows] * n_lab + top_lab)
        bad[dl[1:][dl[1:] == dl[:-1]] // n_lab] = True
        n_t = int(t.max()) + 2
        have = np.sort(d[rows] * n_t + t[rows])
        bi = rows[part_a[rows] != _NO_PART]
        for part in (part_a[bi], part_b[bi]):
            probe = d[bi] * n_t + part
            at = np.minimum(np.searchsorted(have, probe), have.size - 1)
            bad[d[bi[(have[at] == probe) & (part >= 0)]]] = True
        fast = np.flatnonzero(~bad & (size > 0))
        take = np.minimum(size[fast], self.max_tags)
        # Fast documents: their first ``take`` rows, as one flat list of (label, score).
        first = np.repeat(starts[fast], take) + (
            np.arange(int(take.sum()), dtype=np.int64) - np.repeat(np.cumsum(take) - take, take)
        )
        labs = [cand_label[k] for k in ci[first].tolist()]
        flat_pairs = cast(
            list[tuple[str, float]], list(zip(labs, rel[first].tolist(), strict=True))
        )
        cut = np.concatenate(([0], np.cumsum(take))).tolist()
        for k, i in enumerate(fast.tolist()):
            out[i] = flat_pairs[cut[k] : cut[k + 1]]
        bl_ = bounds.tolist()
        redo: list[int] = []
        for i in np.flatnonzero(bad).tolist():
            lo, hi = bl_[i], bl_[i + 1]
            got = self._greedy(
                t[lo:hi].tolist(),
                rel[lo:hi].tolist(),
                [cand_label[k] for k in ci[lo:hi].tolist()],
                part_a[lo:hi].tolist(),
                part_b[lo:hi].tolist(),
            )
            if len(got) < self.max_tags and short[i]:
                redo.append(i)
            out[i] = got
        if redo:
            self._select_whole(out, redo, *whole)

    def _select_whole(
        self,
        out: list[list[tuple[str, float]]],
        docs: list[int],
        d: NDArray[np.int64],
        t: NDArray[np.int64],
        rel: NDArray[np.float64],
        part_a: NDArray[np.int64],
        part_b: NDArray[np.int64],
    ) -> None:
        """The greedy pass over every candidate of ``docs`` (their prefix was not enough)."""
        rows = np.flatnonzero(np.isin(d, docs))
        rows = rows[np.argsort(d[rows], kind="stable")]
        bounds = np.searchsorted(d[rows], np.asarray([*docs, len(out)])).tolist()
        names = self._vocab.strings(t[rows].tolist())
        for k, i in enumerate(docs):
            r = rows[bounds[k] : bounds[k + 1]]
            ranked = sorted(
                zip((-rel[r]).tolist(), names[bounds[k] : bounds[k + 1]], r.tolist(), strict=True)
            )
            at = [x[2] for x in ranked]
            out[i] = self._greedy(
                t[at].tolist(),
                rel[at].tolist(),
                [_label(x[1]) for x in ranked],
                part_a[at].tolist(),
                part_b[at].tolist(),
            )

    def _greedy(
        self,
        tl: list[int],
        rl: list[float],
        labs: list[str | None],
        al: list[int],
        bl: list[int],
    ) -> list[tuple[str, float]]:
        """One document's tags from its ranked candidates (term ids, scores, labels, bigram
        parts): skip a candidate without a label, with a label already chosen, or that is a
        part of a chosen bigram; a chosen bigram drops its parts chosen before it."""
        chosen: list[int] = []  # term ids, with their labels and scores
        labels: list[str] = []
        scores: list[float] = []
        covered: set[int] = set()
        for j, tid in enumerate(tl):
            if tid in covered:
                continue
            lab = labs[j]
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
        return list(zip(labels, scores, strict=True))

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
        return self._aggregate_counts(counts, own_labels, max_tags)

    def aggregate_labels(
        self,
        child_labels: Iterable[Sequence[str]],
        own_labels: Iterable[str] = (),
        max_tags: int | None = None,
    ) -> list[str]:
        """:meth:`aggregate` for children's *labels* as this tagger returns them (normal, and
        distinct within a child): the same result without parsing every child's tags, which
        was most of a large ingest's directory tagging."""
        counts: Counter[str] = Counter()
        for labs in child_labels:
            counts.update(labs)
        return self._aggregate_counts(counts, own_labels, max_tags)

    def _aggregate_counts(
        self, counts: Counter[str], own_labels: Iterable[str], max_tags: int | None
    ) -> list[str]:
        limit = self.max_dir_tags if max_tags is None else max_tags
        _check_int("max_tags", limit, 0)
        out = _tags.dedupe(_tags.normalize_label(x) for x in own_labels)
        own = set(out)
        labs = [lab for lab in counts if lab not in own]
        # Ranked by (-count, df, label): the df of every label in one array lookup, and only
        # the few that fit kept (a directory of many children has hundreds of labels).
        tid = self._vocab.ids_of(labs)
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
            "terms": self._vocab.strings(range(len(self._vocab))),
            "df": [int(x) for x in self._df],
        }

    def to_bytes(self) -> bytes:
        """The state in a compact form: a JSON header line, the atoms joined by NUL (no atom
        holds one), then each term's key and document frequency as int64 columns.

        Why not JSON: the statistics are saved after every ingest, and for a 100k-node index
        (a few hundred thousand terms) JSON took most of a small re-add's time. Why keys, not
        term strings (the format before, still read): spelling millions of bigrams on every
        save cost as much as counting them.
        """
        v = self._vocab
        head = {
            "version": _BYTES_VERSION,
            "params": self.params(),
            "fitted": self._fitted,
            "n_docs": self._n_docs,
            "atoms": len(v.atoms.strs),
            "terms": len(v),
        }
        if self._base_id:
            head["base"] = self._base_id
        return b"".join(
            [
                json.dumps(head).encode() + b"\n",
                "\x00".join(v.atoms.strs).encode("utf-8") + b"\n",
                v.term_key.astype("<i8").tobytes(),
                np.asarray(self._df, dtype="<i8").tobytes(),
            ]
        )

    @classmethod
    def from_bytes(cls, raw: bytes) -> KeywordTagger:
        """Rebuild a tagger saved by :meth:`to_bytes` (this format or the term-string one
        before it), or by :meth:`to_dict` as JSON."""
        if b"\n" not in raw:  # the JSON form of to_dict (JSON escapes its newlines)
            try:
                return cls.from_dict(json.loads(raw))
            except (ValueError, UnicodeDecodeError, RecursionError) as exc:  # (too deep too)
                raise IndexCorruptError(f"tagger state is damaged: {exc}") from None
        try:
            head_end = raw.index(b"\n")
            strs_end = raw.index(b"\n", head_end + 1)
            head = json.loads(raw[:head_end])
            text = raw[head_end + 1 : strs_end].decode("utf-8")
            body = raw[strs_end + 1 :]
            if len(body) % 8:
                raise ValueError("frequency block is not whole int64 values")
            cols = np.frombuffer(body, dtype="<i8").astype(np.int64)
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            raise IndexCorruptError(f"tagger state is damaged: {exc}") from None
        if not isinstance(head, dict):
            raise IndexCorruptError("tagger state is damaged: the header is not an object")
        strs = text.split("\x00") if text else []
        base = head.get("base", "")
        if head.get("version") == _BYTES_VERSION:
            tagger = cls._from_keys(head, strs, cols)
        else:  # the term-string format: migrated, and the next save writes a new base
            head["terms"], head["df"] = strs, cols
            tagger = cls.from_dict(head)
            tagger._legacy = True
        if isinstance(base, str) and base:
            tagger._base_id = base
            tagger._base_terms = len(tagger._vocab)
            tagger._base_atoms = len(tagger._vocab.atoms.strs)
        return tagger

    @classmethod
    def _from_keys(
        cls, head: dict[str, Any], atoms: list[str], cols: NDArray[np.int64]
    ) -> KeywordTagger:
        try:
            tagger = cls(**dict(head["params"]))
            n_atoms, n_terms, n_docs = int(head["atoms"]), int(head["terms"]), int(head["n_docs"])
            fitted = bool(head["fitted"])
        except (KeyError, TypeError, ValueError) as exc:
            raise IndexCorruptError(f"tagger state is damaged: {exc}") from exc
        if len(atoms) != n_atoms or cols.size != 2 * n_terms:
            raise IndexCorruptError("tagger state is damaged: sizes do not match its header")
        v = tagger._vocab
        v.atoms.strs = atoms
        v.atoms.ids = {s: i for i, s in enumerate(atoms)}
        v.term_key, df = cols[:n_terms], cols[n_terms:]
        _check_keys(v, 0, n_docs, df)
        v._index()
        tagger._df = df
        tagger._n_docs = n_docs
        tagger._fitted = fitted
        return tagger

    def full_state(self) -> bytes:
        """The whole state as a new base for :meth:`state_delta` (:meth:`to_bytes` with a
        fresh base id); what is counted from now on goes into the deltas of this base."""
        self._base_id = uuid.uuid4().hex
        self._base_terms = len(self._vocab)
        self._base_atoms = len(self._vocab.atoms.strs)
        self._touched = []
        self._legacy = False
        return self.to_bytes()

    def state_delta(self, max_share: float = 0.125) -> bytes | None:
        """What changed since the last :meth:`full_state`, or None when a new base is due
        (none written yet, a refit, a base in the older format, or a delta above
        ``max_share`` of the terms).

        Why: the statistics are saved after every write, and a large index has millions of
        terms (most bigrams seen once); rewriting all of them for a re-add of 100 files was
        a large share of the re-add. A delta holds the atoms and terms added since the base
        and the current document frequency of every term counted since; it is cumulative, so
        the newest one alone, applied to its base, gives the state (:meth:`apply_delta`).
        """
        if not self._base_id or self._legacy:
            return None
        ids = _distinct(np.concatenate(self._touched)) if self._touched else np.zeros(0, np.int64)
        self._touched = [ids]
        v = self._vocab
        if ids.size > max_share * max(len(v), 1):
            return None
        head = {
            "version": _BYTES_VERSION,
            "base": self._base_id,
            "n_docs": self._n_docs,
            "first_atom": self._base_atoms,
            "atoms": len(v.atoms.strs),
            "first": self._base_terms,
            "terms": len(v),
        }
        return b"".join(
            [
                json.dumps(head).encode() + b"\n",
                "\x00".join(v.atoms.strs[self._base_atoms :]).encode("utf-8") + b"\n",
                v.term_key[self._base_terms :].astype("<i8").tobytes(),
                ids.astype("<i8").tobytes(),
                self._df[ids].astype("<i8").tobytes(),
            ]
        )

    def apply_delta(self, raw: bytes) -> bool:
        """Apply a :meth:`state_delta` to this state loaded from its base. A delta of another
        base (left behind when a save wrote a new base and stopped before clearing it) is
        ignored: returns False. A damaged delta raises :class:`IndexCorruptError`."""
        v = self._vocab
        try:
            head_end = raw.index(b"\n")
            strs_end = raw.index(b"\n", head_end + 1)
            head = json.loads(raw[:head_end])
            if not isinstance(head, dict) or head.get("version") not in (
                _STATE_VERSION,
                _BYTES_VERSION,
            ):
                raise ValueError("unknown delta header")
            if head.get("base") != self._base_id or not self._base_id:
                return False
            keyed = head["version"] == _BYTES_VERSION
            if keyed == self._legacy:
                raise ValueError("the delta's format is not its base's")
            text = raw[head_end + 1 : strs_end].decode("utf-8")
            strs = text.split("\x00") if text else []
            n_docs, first, total = int(head["n_docs"]), int(head["first"]), int(head["terms"])
            body = np.frombuffer(raw[strs_end + 1 :], dtype="<i8").astype(np.int64)
            if (len(raw) - strs_end - 1) % 8:
                raise ValueError("the id/frequency block is not whole int64 values")
            if keyed:
                first_atom, n_atoms = int(head["first_atom"]), int(head["atoms"])
                keys, body = body[: max(total - first, 0)], body[max(total - first, 0) :]
            if body.size % 2:
                raise ValueError("id/frequency block is not whole int64 pairs")
            ids, df = body[: body.size // 2], body[body.size // 2 :]
        except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
            raise IndexCorruptError(f"tagger state delta is damaged: {exc}") from exc
        if first != self._base_terms or total < first or n_docs < self._n_docs:
            raise IndexCorruptError("tagger state delta is damaged: sizes do not match its base")
        if ids.size and (ids.min() < 0 or ids.max() >= total or df.min() < 1 or df.max() > n_docs):
            raise IndexCorruptError(
                "tagger state delta is damaged: ids or frequencies out of range"
            )
        if keyed:
            if first_atom != self._base_atoms or first_atom + len(strs) != n_atoms:
                raise IndexCorruptError("tagger state delta is damaged: sizes do not match")
            new = _Vocab()
            new.atoms.strs = v.atoms.strs + strs
            new.atoms.ids = dict(v.atoms.ids)
            new.atoms.ids.update(zip(strs, range(first_atom, n_atoms), strict=True))
            new.term_key = np.concatenate((v.term_key, keys))
            _check_keys(new, first, n_docs, None)
        else:
            if first + len(strs) != total:
                raise IndexCorruptError("tagger state delta is damaged: sizes do not match")
            new = _Vocab.of_strings(v.strings(range(len(v))) + strs)
        new._index()
        if np.any(new.keys[1:] == new.keys[:-1]):
            raise IndexCorruptError("tagger state delta is damaged: a term repeats")
        self._vocab = new
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
        tagger._vocab = _Vocab.of_strings(terms)
        tagger._df = df
        tagger._n_docs = n_docs
        tagger._fitted = fitted
        return tagger


def _check_keys(v: _Vocab, first: int, n_docs: int, df: NDArray[np.int64] | None) -> None:
    """Raise :class:`IndexCorruptError` unless the keys of terms ``first..`` of ``v`` are
    canonical and in range (and ``df``, when given, in ``[1, n_docs]``): a key's first atom
    never holds a hyphen, so distinct keys spell distinct strings."""
    atoms = v.atoms.strs
    if len(v.atoms.ids) != len(atoms):
        raise IndexCorruptError("tagger state is damaged: an atom repeats")
    keys = v.term_key[first:]
    a, b = keys >> 32, (keys & _LOW) - 1
    if keys.size and (keys.min() < 0 or a.max() >= len(atoms) or b.max() >= len(atoms)):
        raise IndexCorruptError("tagger state is damaged: a term key is out of range")
    if any("-" in atoms[i] for i in _distinct(a).tolist()):
        raise IndexCorruptError("tagger state is damaged: a term key is not canonical")
    if df is not None and df.size and (df.min() < 1 or df.max() > n_docs):
        raise IndexCorruptError("tagger state is damaged: df outside [1, n_docs]")


def _distinct(keys: NDArray[np.int64]) -> NDArray[np.int64]:
    """Sorted distinct values of an int column (a sort: numpy's hashing ``unique`` of int64
    took several times longer here)."""
    srt = np.sort(keys)
    return srt[np.concatenate(([True], srt[1:] != srt[:-1]))] if srt.size else srt


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
        raise TaggerError(f"{name} must be an integer >= {minimum}, got {shown_value(value)}")


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
        raise TaggerError(f"unknown method {shown_value(value)}; expected one of {METHODS}")
    return cast(Method, value)
