"""Benchmark data: Cranfield arranged as a tree, Django's documentation tree, and a cached embedder.

Everything derived here is deterministic (seeded) and written under ``bench/.cache/`` (rebuilt
when missing), except the Django query set, which is small, checked in under ``bench/data/`` so
that every run scores the same queries, and rebuilt only on request
(``python bench/datasets.py --rebuild-django-queries``).

Why a cache of embeddings: embedding Cranfield's 1,400 abstracts or Django's ~2,500 doc chunks
with MiniLM on 2 cores takes a minute or more; keyed by (embedder name, text hash), a rerun of a
benchmark (another alpha, another limit) costs only the retrieval itself.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import posixpath
import re
import shutil
import sqlite3
import sys
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
CACHE_DIR = Path(os.environ.get("TREEHOP_BENCH_CACHE", BENCH_DIR / ".cache"))
DATA_DIR = BENCH_DIR / "data"


def _shared_data(name: str) -> Path:
    """``shared/data/<name>`` beside the checkout (``/work/main``) or beside the folder of
    worktrees (``/work/wt/<name>``): the first that exists, else the first candidate."""
    cands = [REPO_ROOT.parent / "shared" / "data" / name]
    cands.append(REPO_ROOT.parent.parent / "shared" / "data" / name)
    return next((c for c in cands if c.exists()), cands[0])


CRANFIELD_DIR = Path(os.environ.get("TREEHOP_CRANFIELD", _shared_data("cranfield")))
LOCOMO_FILE = Path(os.environ.get("TREEHOP_LOCOMO", _shared_data("locomo") / "locomo5_dev.json"))
DJANGO_PACKAGE = "python-django-doc"
DJANGO_HTML_DIR = Path(
    os.environ.get("TREEHOP_DJANGO_DOCS", "/usr/share/doc/python-django-doc/html")
)
DJANGO_QUERIES_FILE = DATA_DIR / "django_doc_queries.json"
DJANGO_ANCHOR_QUERIES_FILE = DATA_DIR / "django_anchor_queries.json"

Vectors = npt.NDArray[np.float32]


def ensure_cache_dir(path: Path = CACHE_DIR) -> Path:
    """Create the cache folder with a ``.gitignore`` of ``*`` so that git never picks it up."""
    path.mkdir(parents=True, exist_ok=True)
    marker = CACHE_DIR / ".gitignore"
    if CACHE_DIR.is_dir() and not marker.exists():
        marker.write_text("# benchmark cache, rebuilt on demand\n*\n")
    return path


def ensure_treehop_importable() -> None:
    """Make ``import treehop`` work from a plain checkout (no ``pip install -e``)."""
    try:
        import treehop  # noqa: F401
    except ImportError:
        sys.path.insert(0, str(REPO_ROOT / "retrieval"))


# --------------------------------------------------------------------------------------
# Embedding cache
# --------------------------------------------------------------------------------------


class CachedEmbedder:
    """Wraps an embedder; vectors are cached on disk in SQLite keyed by (name, sha256(text)).

    Implements the ``treehop.embedders.Embedder`` protocol, so a client can be built on it.
    The stored vectors are the wrapped embedder's own (already normalised) float32 rows, so a
    cached run is bit-identical to an uncached one.
    """

    def __init__(self, inner: Any, cache_dir: Path = CACHE_DIR / "embeddings") -> None:
        self.inner = inner
        ensure_cache_dir(cache_dir)
        # An embedder's cache_key (when it has one) names every setting that changes a vector;
        # its name only the space, which two settings may share (MiniLM's long_text modes).
        self.key = str(getattr(inner, "cache_key", inner.name))
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", self.key)
        self._path = cache_dir / f"{safe}.sqlite"
        self._db = sqlite3.connect(self._path, check_same_thread=False)
        self._db.execute("CREATE TABLE IF NOT EXISTS emb (k TEXT PRIMARY KEY, v BLOB NOT NULL)")
        # The twin: the cache of the embedder's name alone (for MiniLM, the truncating mode
        # of the same model and window). A text that ``inner.fits`` gets the same vector from
        # both, so a miss here for such a text is answered from the twin, not the model: a
        # mode that differs only on long texts costs what its long texts cost.
        self._twin: sqlite3.Connection | None = None
        twin = cache_dir / f"{re.sub(r'[^A-Za-z0-9_.-]+', '_', str(inner.name))}.sqlite"
        if self.key != str(inner.name) and hasattr(inner, "fits") and twin.is_file():
            self._twin = sqlite3.connect(twin, check_same_thread=False)
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        self.embed_seconds = 0.0

    @property
    def name(self) -> str:
        return str(self.inner.name)

    @property
    def dimension(self) -> int:
        return int(self.inner.dimension)

    @staticmethod
    def _key(text: str) -> str:
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def count_missing(self, texts: Sequence[str]) -> int:
        """How many distinct texts are not cached yet (what embedding them would cost)."""
        keys = list(dict.fromkeys(self._key(t) for t in texts))
        have = 0
        with self._lock:
            for i in range(0, len(keys), 500):
                part = keys[i : i + 500]
                marks = ",".join("?" * len(part))
                row = self._db.execute(f"SELECT COUNT(*) FROM emb WHERE k IN ({marks})", part)
                have += int(row.fetchone()[0])
        return len(keys) - have

    def embed(self, texts: Sequence[str]) -> Vectors:
        texts = list(texts)
        dim = self.dimension
        out = np.zeros((len(texts), dim), dtype=np.float32)
        keys = [self._key(t) for t in texts]
        found: dict[str, bytes] = {}
        with self._lock:
            uniq = list(dict.fromkeys(keys))
            for i in range(0, len(uniq), 500):
                part = uniq[i : i + 500]
                marks = ",".join("?" * len(part))
                rows = self._db.execute(f"SELECT k, v FROM emb WHERE k IN ({marks})", part)
                found.update(dict(rows.fetchall()))
        missing = [i for i, k in enumerate(keys) if k not in found]
        self.hits += len(texts) - len(missing)
        self.misses += len(missing)
        if missing:
            todo = list(dict.fromkeys(texts[i] for i in missing))
            fresh = self._from_twin(todo)
            todo = [t for t in todo if self._key(t) not in fresh]
            if todo:
                t0 = time.perf_counter()
                vecs = np.asarray(self.inner.embed(todo), dtype=np.float32)
                self.embed_seconds += time.perf_counter() - t0
                fresh.update((self._key(t), v) for t, v in zip(todo, vecs, strict=True))
            with self._lock:
                self._db.executemany(
                    "INSERT OR REPLACE INTO emb (k, v) VALUES (?, ?)",
                    [(k, v.tobytes()) for k, v in fresh.items()],
                )
                self._db.commit()
            for k, v in fresh.items():
                found[k] = v.tobytes()
        for i, k in enumerate(keys):
            out[i] = np.frombuffer(found[k], dtype=np.float32)
        return out

    def _from_twin(self, texts: list[str]) -> dict[str, Vectors]:
        """The twin cache's vectors of those ``texts`` that fit the window (see __init__)."""
        if self._twin is None or not texts:
            return {}
        fit = [self._key(t) for t, ok in zip(texts, self.inner.fits(texts), strict=True) if ok]
        out: dict[str, Vectors] = {}
        with self._lock:
            for i in range(0, len(fit), 500):
                part = fit[i : i + 500]
                marks = ",".join("?" * len(part))
                rows = self._twin.execute(f"SELECT k, v FROM emb WHERE k IN ({marks})", part)
                out.update((k, np.frombuffer(v, dtype=np.float32)) for k, v in rows.fetchall())
        return out

    async def aembed(self, texts: Sequence[str]) -> Vectors:
        return self.embed(texts)

    def embed_query(self, text: str) -> Vectors:
        row: Vectors = self.embed([text])[0]
        return row

    async def aembed_query(self, text: str) -> Vectors:
        return self.embed_query(text)


def default_embedder_name() -> str:
    """The default embedder's identifier, without loading the model."""
    ensure_treehop_importable()
    from treehop.embedders.local_minilm import MODEL_NAME

    return MODEL_NAME


def default_embedder(cache: bool = True) -> Any:
    """treehop's offline MiniLM embedder, wrapped in the on-disk cache."""
    ensure_treehop_importable()
    from treehop.embedders.local_minilm import MiniLMEmbedder

    inner = MiniLMEmbedder()
    return CachedEmbedder(inner) if cache else inner


# --------------------------------------------------------------------------------------
# Cranfield
# --------------------------------------------------------------------------------------

CRANFIELD_GAINS: dict[int, int] = {1: 4, 2: 3, 3: 2, 4: 1, -1: 1}
"""cranqrel code -> graded gain. Codes 1..4 are Cleverdon's scale (1 = complete answer ..
4 = minimum interest), mapped to gains 4..1.

Code -1 appears exactly once per query and cranqrel.readme does not define it
(shared/data/README.md calls it "marginal"). Reading the pairs shows otherwise: query 1 "what
similarity laws must be obeyed when constructing aeroelastic models of heated high speed
aircraft" has -1 for doc 486 "similarity laws for aerothermoelastic testing"; these are the
documents the queries were written from, and QRelsCorrectedforTRECeval gives them the top grade
(5). We count them as relevant with gain 1 by default, because that reproduces the reference
points measured for this project (MiniLM flat 0.430 / 0.791 here vs 0.435 / 0.788 quoted;
gain 0 would give 0.377 / 0.776). ``--cranfield-marginal-gain 5`` reproduces the TREC file
(recall does not change with the gain as long as it is > 0; nDCG@10 does).
"""


@dataclass
class CranDoc:
    doc_id: str
    title: str
    authors: str
    source: str
    text: str

    def file_text(self) -> str:
        """What the benchmark indexes for one document: the title, a blank line, the abstract.

        The abstract (``.W``) of most records starts by repeating the title; that copy is
        dropped so that the title is not counted twice.
        """
        title = " ".join(self.title.split())
        body = " ".join(self.text.split())
        if title and body.startswith(title):
            body = body[len(title) :].strip()
        return f"{title}\n\n{body}".strip() + "\n"


@dataclass
class Cranfield:
    docs: dict[str, CranDoc]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]


def _parse_records(path: Path) -> list[tuple[str, dict[str, str]]]:
    """Split a SMART-format file into records of ``.X`` fields."""
    records: list[tuple[str, dict[str, str]]] = []
    fields: dict[str, list[str]] = {}
    current: str | None = None
    rec_id: str | None = None
    for line in path.read_text(encoding="latin-1").splitlines():
        if line.startswith(".I"):
            if rec_id is not None:
                records.append((rec_id, {k: "\n".join(v).strip() for k, v in fields.items()}))
            rec_id = line[2:].strip()
            fields, current = {}, None
        elif len(line) == 2 and line[0] == "." and line[1] in "TABW":
            current = line[1]
            fields.setdefault(current, [])
        elif current is not None:
            fields[current].append(line)
    if rec_id is not None:
        records.append((rec_id, {k: "\n".join(v).strip() for k, v in fields.items()}))
    return records


def load_cranfield(
    directory: Path = CRANFIELD_DIR, marginal_gain: int = CRANFIELD_GAINS[-1]
) -> Cranfield:
    """Docs, the 225 queries (ids "1".."225" in file order, as the qrels use) and graded qrels."""
    if not (directory / "cran.all.1400").is_file():
        raise FileNotFoundError(
            f"Cranfield not found in {directory} (set TREEHOP_CRANFIELD to its folder)"
        )
    docs = {
        str(int(i)): CranDoc(
            doc_id=str(int(i)),
            title=f.get("T", ""),
            authors=f.get("A", ""),
            source=f.get("B", ""),
            text=f.get("W", ""),
        )
        for i, f in _parse_records(directory / "cran.all.1400")
    }
    queries = {
        str(n): " ".join(f.get("W", "").split())
        for n, (_, f) in enumerate(_parse_records(directory / "cran.qry"), start=1)
    }
    gains = {**CRANFIELD_GAINS, -1: marginal_gain}
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    for line in (directory / "cranqrel").read_text().splitlines():
        parts = line.split()
        if len(parts) < 3:
            continue
        q, d, code = parts[0], str(int(parts[1])), int(parts[2])
        qrels[q][d] = gains[code]
    if len(docs) != 1400 or len(queries) != 225:
        raise ValueError(f"unexpected Cranfield size: {len(docs)} docs, {len(queries)} queries")
    return Cranfield(docs=docs, queries=queries, qrels=dict(qrels))


# --------------------------------------------------------------------------------------
# Spherical k-means and cluster naming
# --------------------------------------------------------------------------------------


def spherical_kmeans(
    x: Vectors, k: int, seed: int = 0, iters: int = 50
) -> tuple[npt.NDArray[np.int64], Vectors]:
    """Cluster unit rows by cosine: k-means++ seeding, then Lloyd steps with unit centroids.

    Empty clusters are re-seeded with the point worst served by its centroid, so exactly
    ``min(k, n)`` non-empty clusters come back.
    """
    n = x.shape[0]
    k = max(1, min(k, n))
    rng = np.random.default_rng(seed)
    centres = np.empty((k, x.shape[1]), dtype=np.float32)
    centres[0] = x[rng.integers(n)]
    dist = 1.0 - x @ centres[0]
    for j in range(1, k):
        p = np.clip(dist, 0, None) ** 2
        total = float(p.sum())
        idx = int(rng.choice(n, p=p / total)) if total > 0 else int(rng.integers(n))
        centres[j] = x[idx]
        dist = np.minimum(dist, 1.0 - x @ centres[j])
    labels = np.full(n, -1, dtype=np.int64)
    for _ in range(iters):
        sims = x @ centres.T
        new = np.argmax(sims, axis=1)
        counts = np.bincount(new, minlength=k)
        for j in np.flatnonzero(counts == 0).tolist():
            worst = int(np.argmin(sims[np.arange(n), new]))
            new[worst] = j
            sims[worst, j] = 1.0
            counts = np.bincount(new, minlength=k)
        if np.array_equal(new, labels):
            break
        labels = new
        sums = np.zeros_like(centres)
        np.add.at(sums, labels, x)
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        centres = (sums / np.maximum(norms, 1e-12)).astype(np.float32)
    return labels, centres


def merge_small_clusters(
    x: Vectors, labels: npt.NDArray[np.int64], min_size: int
) -> npt.NDArray[np.int64]:
    """Move the members of clusters smaller than ``min_size`` to the nearest larger centroid.

    k-means on embeddings leaves a few outlier clusters of one or two documents; as
    directories they would be noise (a folder per stray document), so they are folded into
    their nearest real topic. Labels are renumbered 0..k'-1.
    """
    labels = labels.copy()
    counts = np.bincount(labels)
    big = np.flatnonzero(counts >= min_size)
    if big.size == 0 or big.size == counts.size:
        return np.unique(labels, return_inverse=True)[1].astype(np.int64)
    cents = np.stack([x[labels == c].sum(axis=0) for c in big])
    cents /= np.maximum(np.linalg.norm(cents, axis=1, keepdims=True), 1e-12)
    small = ~np.isin(labels, big)
    labels[small] = big[np.argmax(x[small] @ cents.T, axis=1)]
    return np.unique(labels, return_inverse=True)[1].astype(np.int64)


_STOP_WORDS = """
a about above after again against all also an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further
had has have having he her here hers him his how i if in into is it its itself just me more
most my no nor not now of off on once only or other our out over own same she should so some
such than that the their them then there these they this those through to too under until up
very was we were what when where which while who whom why will with would you your using use
used new some certain general problem problems results method methods study studies analysis
theory theoretical experimental investigation effect effects note notes case cases
approximate solution solutions determination
"""
_STOP = frozenset(_STOP_WORDS.split())


def _words(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z][a-z-]{2,}", text.lower()) if w not in _STOP]


def distinctive_terms(
    member_texts: Sequence[str], background_df: Counter[str], n_background: int, top: int = 3
) -> list[str]:
    """Terms frequent in a cluster's titles and rare elsewhere (a class-based tf-idf)."""
    tf: Counter[str] = Counter()
    for t in member_texts:
        tf.update(set(_words(t)))
    min_count = 2 if len(member_texts) >= 4 else 1
    scored = {
        w: c * np.log(1 + n_background / (1 + background_df[w]))
        for w, c in tf.items()
        if c >= min_count
    }
    best = sorted(scored, key=lambda w: (-scored[w], w))[:top]
    return best or ["misc"]


# --------------------------------------------------------------------------------------
# Cranfield as a tree on disk
# --------------------------------------------------------------------------------------


@dataclass
class TreeLayout:
    """Where each document lives: ``paths[doc_id]`` is a path relative to ``root``."""

    root: Path
    paths: dict[str, str]
    params: dict[str, Any] = field(default_factory=dict)

    def doc_of_relpath(self) -> dict[str, str]:
        return {p: d for d, p in self.paths.items()}


def cranfield_doc_filename(doc_id: str) -> str:
    return f"doc-{int(doc_id):04d}.txt"


def doc_id_from_uri(uri: str) -> str:
    """``.../doc-0042.txt#chunk-1`` (or without extension) -> ``"42"``."""
    base = uri.split("#", 1)[0].rsplit("/", 1)[-1]
    m = re.match(r"doc-(\d+)", base)
    if not m:
        raise ValueError(f"not a Cranfield document URI: {uri}")
    return str(int(m.group(1)))


def build_cranfield_tree(
    cran: Cranfield,
    embedder: Any,
    *,
    top_k: int = 20,
    sub_k: int = 5,
    min_split: int = 15,
    min_top: int = 8,
    min_sub: int = 4,
    seed: int = 0,
    out_dir: Path | None = None,
) -> TreeLayout:
    """Arrange Cranfield as a two-level topic tree and write it as text files.

    Documents are embedded (title + abstract, exactly the text written to the file), clustered
    by spherical k-means into ``top_k`` topic directories, and each topic with at least
    ``min_split`` documents is split again into ``sub_k`` sub-topic directories (smaller ones
    keep their files directly). Clusters smaller than ``min_top`` / ``min_sub`` documents are
    folded into the nearest larger one. Directory names are the cluster's most distinctive
    title terms, prefixed by its rank by size.
    """
    params: dict[str, Any] = {
        "top_k": top_k,
        "sub_k": sub_k,
        "min_split": min_split,
        "min_top": min_top,
        "min_sub": min_sub,
        "seed": seed,
        "version": 2,
    }
    params["embedder"] = str(embedder.name)
    out_dir = out_dir or CACHE_DIR / f"cranfield-tree-{top_k}x{sub_k}-s{seed}"
    manifest = out_dir.parent / (out_dir.name + ".manifest.json")
    if manifest.is_file() and out_dir.is_dir():
        data = json.loads(manifest.read_text())
        if data.get("params") == params:
            return TreeLayout(root=out_dir, paths=data["paths"], params=params)

    ids = sorted(cran.docs, key=int)
    # Stripped, as the client stores a short file's content: the cache then serves both.
    texts = [cran.docs[d].file_text().strip() for d in ids]
    vecs = np.asarray(embedder.embed(texts), dtype=np.float32)
    titles = [cran.docs[d].title for d in ids]
    bg: Counter[str] = Counter()
    for t in titles:
        bg.update(set(_words(t)))

    labels, _ = spherical_kmeans(vecs, top_k, seed=seed)
    labels = merge_small_clusters(vecs, labels, min_top)
    paths: dict[str, str] = {}
    # Order topics by size so that directory numbers are stable and meaningful.
    order = sorted(range(labels.max() + 1), key=lambda c: (-int((labels == c).sum()), c))
    for rank, c in enumerate(order):
        members = np.flatnonzero(labels == c)
        terms = distinctive_terms([titles[i] for i in members], bg, len(ids))
        top_name = f"{rank:02d}-" + "-".join(terms)
        if len(members) < min_split:
            for i in members:
                paths[ids[i]] = f"{top_name}/{cranfield_doc_filename(ids[i])}"
            continue
        sub_labels, _ = spherical_kmeans(vecs[members], sub_k, seed=seed + 1 + c)
        sub_labels = merge_small_clusters(vecs[members], sub_labels, min_sub)
        sub_order = sorted(
            range(sub_labels.max() + 1), key=lambda s: (-int((sub_labels == s).sum()), s)
        )
        for srank, s in enumerate(sub_order):
            sub_members = members[sub_labels == s]
            sub_terms = distinctive_terms([titles[i] for i in sub_members], bg, len(ids), top=3)
            sub_name = f"{srank}-" + "-".join(sub_terms)
            for i in sub_members:
                paths[ids[i]] = f"{top_name}/{sub_name}/{cranfield_doc_filename(ids[i])}"

    if out_dir.exists():
        shutil.rmtree(out_dir)
    ensure_cache_dir(out_dir)
    for d, rel in paths.items():
        p = out_dir / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(cran.docs[d].file_text(), encoding="utf-8")
    manifest.write_text(json.dumps({"params": params, "paths": paths}, indent=0))
    return TreeLayout(root=out_dir, paths=paths, params=params)


# --------------------------------------------------------------------------------------
# Django documentation (Debian package python-django-doc) as a tree of markdown files
# --------------------------------------------------------------------------------------

DJANGO_SKIP_DIRS = {"_modules", "_static", "_images", "_sources", "releases"}
DJANGO_SKIP_FILES = {"genindex.html", "search.html", "py-modindex.html"}
_BLOCKS = {"p", "div", "li", "dt", "dd", "tr", "table", "ul", "ol", "dl", "blockquote", "br"}


class _SphinxToMarkdown(HTMLParser):
    """Extract a Sphinx page's body as markdown-ish text, remembering its section headings.

    Only the main column (``<div class="yui-g">`` in Django's theme, ``role="main"``
    elsewhere) is kept: navigation, sidebars and footers would put the same words in every
    page. Headings become ``#`` lines (so a markdown chunker can split on them), code blocks
    are fenced, the pilcrow permalinks are dropped.
    """

    def __init__(self, main_classes: frozenset[str] = frozenset({"yui-g"})) -> None:
        super().__init__(convert_charrefs=True)
        self.main_classes = main_classes  # a div with one of these classes is the main column
        self.depth = 0  # div depth inside the main column; 0 = outside
        self.skip = 0
        self.out: list[str] = []
        self.heading: int | None = None
        self.heading_buf: list[str] = []
        self.section_ids: list[str] = []
        self.pending_id: str | None = None
        self.headings: list[dict[str, Any]] = []
        self.pre = 0
        # Internal links of the body: (href, text, whether the text is code), for queries
        # derived from anchor text (``derive_anchor_queries``). Never changes ``text()``.
        self.links: list[dict[str, Any]] = []
        self.link: dict[str, Any] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        classes = a.get("class", "").split()
        if self.depth == 0:
            if tag == "div" and (self.main_classes & set(classes) or a.get("role") == "main"):
                self.depth = 1
            return
        if tag == "div":
            self.depth += 1
            if "section" in classes and a.get("id"):
                self.pending_id = a["id"].removeprefix("s-")
        if tag == "section" and a.get("id"):
            self.pending_id = a["id"]
        if self.skip or tag in {"script", "style"} or (tag == "a" and "headerlink" in classes):
            self.skip += 1
            return
        if tag == "a" and self.heading is None:
            self.link = {"href": a.get("href", ""), "classes": classes, "text": [], "code": False}
        elif tag == "code" and self.link is not None:
            self.link["code"] = True
        if re.fullmatch(r"h[1-6]", tag):
            self.heading = int(tag[1])
            self.heading_buf = []
            self.out.append("\n\n")
        elif tag == "pre":
            self.pre += 1
            self.out.append("\n\n```\n")
        elif tag in _BLOCKS:
            if not (self.out and self.out[-1] == "- "):  # keep "- " and an item's <p> together
                self.out.append("\n")
            if tag == "li":
                self.out.append("- ")
        elif tag in {"td", "th"}:
            self.out.append(" | ")

    def handle_endtag(self, tag: str) -> None:
        if self.depth == 0:
            return
        if self.skip:
            if tag in {"script", "style", "a"}:
                self.skip -= 1
            return
        if tag == "div":
            self.depth -= 1
            if self.depth == 0:
                return
        if tag == "a" and self.link is not None:
            text = " ".join("".join(self.link["text"]).split())
            self.links.append(
                {
                    "href": self.link["href"],
                    "classes": self.link["classes"],
                    "text": text,
                    "code": self.link["code"],
                }
            )
            self.link = None
        if self.heading is not None and tag == f"h{self.heading}":
            text = " ".join("".join(self.heading_buf).split())
            self.out.append("#" * self.heading + " " + text + "\n\n")
            self.headings.append(
                {
                    "level": self.heading,
                    "text": text,
                    "anchor": self.pending_id or "",
                    "offset": sum(len(s) for s in self.out),
                }
            )
            self.heading = None
        elif tag == "pre":
            self.pre = max(0, self.pre - 1)
            self.out.append("\n```\n\n")
        elif tag in _BLOCKS:
            self.out.append("\n")

    def handle_data(self, data: str) -> None:
        if self.depth == 0 or self.skip:
            return
        if self.link is not None:
            self.link["text"].append(data)
        if self.heading is not None:
            self.heading_buf.append(data)
        elif self.pre:
            self.out.append(data)
        else:
            self.out.append(re.sub(r"\s+", " ", data))

    def text(self) -> str:
        raw = "".join(self.out)
        raw = re.sub(r"[ \t]+\n", "\n", raw)
        raw = re.sub(r"\n{3,}", "\n\n", raw)
        return raw.strip() + "\n"


@dataclass
class DocPage:
    relpath: str  # e.g. "topics/db/queries.md"
    title: str
    text: str
    headings: list[dict[str, Any]]
    links: list[dict[str, Any]] = field(default_factory=list)


def django_docs_available(html_dir: Path = DJANGO_HTML_DIR) -> bool:
    return (html_dir / "index.html").is_file() and (html_dir / "topics").is_dir()


def django_install_hint() -> str:
    return (
        f"the Django documentation tree is not installed ({DJANGO_HTML_DIR} missing). On Debian/"
        f"Ubuntu: sudo apt-get update && sudo apt-get install -y {DJANGO_PACKAGE} "
        "(or set TREEHOP_DJANGO_DOCS to a Sphinx HTML build of the Django 3.2 docs)"
    )


def convert_django_docs(html_dir: Path = DJANGO_HTML_DIR) -> list[DocPage]:
    """Every content page of the Django docs as markdown text (release notes excluded)."""
    return convert_sphinx_docs(html_dir, DJANGO_SKIP_DIRS, DJANGO_SKIP_FILES)


def convert_sphinx_docs(
    html_dir: Path,
    skip_dirs: set[str],
    skip_files: set[str],
    main_classes: frozenset[str] = frozenset({"yui-g"}),
) -> list[DocPage]:
    """Every content page of a Sphinx HTML build as markdown text, in file-name order.

    Pages under ``skip_dirs`` (first path component) or named in ``skip_files`` are left
    out, as are pages with under 200 characters of body or no heading (redirect stubs).
    ``main_classes``: the class of the theme's main-column div where it has no
    ``role="main"`` (Django's ``yui-g``; Borg's theme: ``body``)."""
    pages: list[DocPage] = []
    for path in sorted(html_dir.rglob("*.html")):
        rel = path.relative_to(html_dir)
        if rel.parts[0] in skip_dirs or str(rel) in skip_files:
            continue
        parser = _SphinxToMarkdown(main_classes)
        parser.feed(path.read_text(encoding="utf-8", errors="replace"))
        parser.close()
        text = parser.text()
        if len(text) < 200 or not parser.headings:
            continue
        title = parser.headings[0]["text"]
        pages.append(
            DocPage(
                relpath=str(rel.with_suffix(".md")),
                title=title,
                text=text,
                headings=parser.headings,
                links=parser.links,
            )
        )
    return pages


def materialise_django_docs(
    html_dir: Path = DJANGO_HTML_DIR, out_dir: Path | None = None
) -> tuple[Path, list[DocPage]]:
    """Write the converted pages under ``out_dir`` keeping the docs' own directory layout."""
    if not django_docs_available(html_dir):
        raise FileNotFoundError(django_install_hint())
    out_dir = out_dir or CACHE_DIR / "django-docs"
    pages = convert_django_docs(html_dir)
    stamp = hashlib.sha256("".join(p.relpath + p.text for p in pages).encode("utf-8")).hexdigest()
    marker = out_dir / ".bench-stamp"
    if not (marker.is_file() and marker.read_text() == stamp):
        if out_dir.exists():
            shutil.rmtree(out_dir)
        ensure_cache_dir(out_dir)
        for p in pages:
            f = out_dir / p.relpath
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text(p.text, encoding="utf-8")
        # A dotfile: an ingester that skips hidden files will not index it.
        marker.write_text(stamp)
    return out_dir, pages


_GENERIC_HEADING = re.compile(
    r"^(examples?|usage|overview|introduction|attributes|methods|arguments|parameters|"
    r"settings|notes?|see also|what.s next\??|where to get help|api reference|"
    r"available (settings|attributes|methods)|limitations|reference|"
    r"indices, glossary and tables)$",
    re.IGNORECASE,
)


def derive_django_queries(
    pages: Sequence[DocPage], n: int = 300, per_page: int = 2, seed: int = 0
) -> list[dict[str, Any]]:
    """Known-item queries from section headings: the heading's text, labelled with its page.

    Kept: headings of level 2-4 with 3 to 12 words, not generic ("Examples", "Usage", ...),
    not equal to any page title, used once in the whole corpus (case-insensitively), and
    whose section holds at least 300 characters of text. Then at most ``per_page`` per page
    and ``n`` in all, drawn with a fixed seed so that the sample is reproducible.
    """
    titles = {p.title.lower() for p in pages}
    counts: Counter[str] = Counter(h["text"].lower() for p in pages for h in p.headings[1:])
    by_page: dict[str, list[dict[str, Any]]] = {}
    for p in pages:
        offs = [h["offset"] for h in p.headings] + [len(p.text) + 10**6]
        for j, h in enumerate(p.headings):
            if j == 0 or not 2 <= h["level"] <= 4:
                continue
            text = h["text"]
            words = re.findall(r"\w+", text)
            low = text.lower()
            if not 3 <= len(words) <= 12 or _GENERIC_HEADING.match(low):
                continue
            if counts[low] > 1 or low in titles:
                continue
            if offs[j + 1] - offs[j] < 300:
                continue
            by_page.setdefault(p.relpath, []).append(
                {
                    "query": text,
                    "relevant": p.relpath,
                    "page_title": p.title,
                    "anchor": h["anchor"],
                    "heading_level": h["level"],
                }
            )
    rng = np.random.default_rng(seed)
    chosen: list[dict[str, Any]] = []
    for rel in sorted(by_page):
        cands = by_page[rel]
        pick = rng.permutation(len(cands))[:per_page]
        chosen.extend(cands[i] for i in sorted(pick))
    order = rng.permutation(len(chosen))[:n]
    out = [chosen[i] for i in sorted(order)]
    for i, q in enumerate(out, start=1):
        q["qid"] = str(i)
    return out


def load_django_queries(path: Path = DJANGO_QUERIES_FILE) -> list[dict[str, Any]]:
    data = json.loads(path.read_text())
    queries: list[dict[str, Any]] = data["queries"]
    return queries


def save_django_queries(queries: list[dict[str, Any]], path: Path = DJANGO_QUERIES_FILE) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {
        "source": f"Debian package {DJANGO_PACKAGE} (Django 3.2 documentation, Sphinx HTML)",
        "method": (
            "known-item search: the text of a section heading (levels 2-4, 3-12 words, unique "
            "in the corpus, not generic, not a page title, section >= 300 chars), labelled "
            "with the page that holds the section (gain 1); at most 2 per page, seeded sample"
        ),
        "derived_by": "python bench/datasets.py --rebuild-django-queries",
        "queries": queries,
    }
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")


# --------------------------------------------------------------------------------------
# pytest's documentation (Debian package python-pytest-doc), fetched with apt-get download
# --------------------------------------------------------------------------------------

PYTEST_PACKAGE = "python-pytest-doc"
PYTEST_QUERIES_FILE = DATA_DIR / "pytest_doc_queries.json"
PYTEST_SKIP_DIRS = {"_modules", "_static", "_images", "_sources", "announce"}
"""``announce/``: ~150 near-identical release announcements (like Django's release notes)."""
PYTEST_SKIP_FILES = {"genindex.html", "search.html", "py-modindex.html", "404.html"}
PYTEST_SKIP_FILES |= {"contents.html"}  # the full table of contents: navigation, not content


def debian_package_root(package: str) -> Path:
    return CACHE_DIR / "debian" / package


def fetch_debian_package(package: str) -> Path:
    """Download ``package`` with ``apt-get download`` and unpack it with ``dpkg-deb -x``.

    Both are the ordinary Debian tools (no root needed, nothing is installed); the unpacked
    tree lands in the benchmark cache and is reused. Raises ``FileNotFoundError`` with a hint
    when the tools or the package index are not available.
    """
    import subprocess

    root = debian_package_root(package)
    marker = root / ".bench-unpacked"
    if marker.is_file():
        return root
    work = ensure_cache_dir(CACHE_DIR / "debian" / "downloads")
    hint = (
        f"could not fetch the Debian package {package}: run `apt-get update`, or download it "
        f"yourself (apt-get download {package}) and unpack it with "
        f"`dpkg-deb -x <file>.deb {root}`"
    )
    if shutil.which("apt-get") is None or shutil.which("dpkg-deb") is None:
        raise FileNotFoundError(hint + " (apt-get/dpkg-deb not found)")
    try:
        subprocess.run(
            ["apt-get", "download", package],
            cwd=work,
            check=True,
            capture_output=True,
            timeout=600,
        )
    except (subprocess.SubprocessError, OSError) as exc:
        raise FileNotFoundError(f"{hint} ({exc})") from exc
    debs = sorted(work.glob(f"{package}_*.deb"))
    if not debs:
        raise FileNotFoundError(hint + " (no .deb was written)")
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    subprocess.run(["dpkg-deb", "-x", str(debs[-1]), str(root)], check=True, timeout=600)
    version = subprocess.run(
        ["dpkg-deb", "-f", str(debs[-1]), "Version"],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout.strip()
    marker.write_text(version + "\n")
    return root


def debian_html_dir(package: str, env_var: str) -> Path:
    """A Debian doc package's Sphinx HTML: ``$env_var``, the installed package, else fetched."""
    env = os.environ.get(env_var)
    if env:
        return Path(env)
    installed = Path("/usr/share/doc") / package / "html"
    if (installed / "index.html").is_file():
        return installed
    return fetch_debian_package(package) / "usr/share/doc" / package / "html"


def pytest_html_dir() -> Path:
    """The pytest Sphinx HTML (``TREEHOP_PYTEST_DOCS`` overrides)."""
    return debian_html_dir(PYTEST_PACKAGE, "TREEHOP_PYTEST_DOCS")


def materialise_sphinx_docs(
    html_dir: Path, out_dir: Path, skip_dirs: set[str], skip_files: set[str]
) -> tuple[Path, list[DocPage]]:
    """Write the converted pages under ``out_dir``, keeping the docs' own directory layout."""
    if not (html_dir / "index.html").is_file():
        raise FileNotFoundError(f"no Sphinx HTML build at {html_dir}")
    return _write_pages(convert_sphinx_docs(html_dir, skip_dirs, skip_files), out_dir)


def _write_pages(pages: list[DocPage], out_dir: Path) -> tuple[Path, list[DocPage]]:
    """Write converted pages under ``out_dir`` at their relpaths; rewritten only when the
    pages changed (a stamp of paths and texts), so a rerun reuses the tree."""
    stamp = hashlib.sha256("".join(p.relpath + p.text for p in pages).encode("utf-8")).hexdigest()
    marker = out_dir / ".bench-stamp"
    if not (marker.is_file() and marker.read_text() == stamp):
        if out_dir.exists():
            shutil.rmtree(out_dir)
        ensure_cache_dir(out_dir)
        for p in pages:
            f = out_dir / p.relpath
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text(p.text, encoding="utf-8")
        marker.write_text(stamp)
    return out_dir, pages


def materialise_pytest_docs() -> tuple[Path, list[DocPage]]:
    return materialise_sphinx_docs(
        pytest_html_dir(), CACHE_DIR / "pytest-docs", PYTEST_SKIP_DIRS, PYTEST_SKIP_FILES
    )


_GENERIC_ANCHOR = re.compile(
    r"^(here|this|this (page|section|document|chapter)|see (here|below|above)|below|above|"
    r"the (docs|documentation)|more|read more|details|click here)$",
    re.IGNORECASE,
)


FLASK_PACKAGE = "python-flask-doc"
FLASK_QUERIES_FILE = DATA_DIR / "flask_doc_queries.json"
FLASK_SKIP_DIRS = {"_modules", "_static", "_images", "_sources"}
FLASK_SKIP_FILES = {"genindex.html", "search.html", "py-modindex.html", "404.html"}
FLASK_SKIP_FILES |= {"changes.html"}  # the changelog: release entries, like Django's notes


def flask_html_dir() -> Path:
    """The Flask Sphinx HTML (``TREEHOP_FLASK_DOCS`` overrides)."""
    return debian_html_dir(FLASK_PACKAGE, "TREEHOP_FLASK_DOCS")


def materialise_flask_docs() -> tuple[Path, list[DocPage]]:
    return materialise_sphinx_docs(
        flask_html_dir(), CACHE_DIR / "flask-docs", FLASK_SKIP_DIRS, FLASK_SKIP_FILES
    )


def _resolve_link(source: str, href: str) -> str | None:
    """The ``.md`` relpath an internal ``href`` of page ``source`` points to (None: external)."""
    if not href or re.match(r"^[a-z][a-z0-9+.-]*:", href) or href.startswith("#"):
        return None
    path = href.split("#", 1)[0]
    if not path.endswith(".html"):
        return None
    parts: list[str] = source.split("/")[:-1]
    for seg in path.split("/"):
        if seg == "..":
            if not parts:
                return None
            parts.pop()
        elif seg and seg != ".":
            parts.append(seg)
    return "/".join(parts)[: -len(".html")] + ".md"


def derive_anchor_queries(
    pages: Sequence[DocPage], n: int = 200, per_target: int = 3, seed: int = 0
) -> list[dict[str, Any]]:
    """Queries from the text of internal links, labelled with the page the link points to.

    A link's text is what the author of *another* page wrote to describe the target, so it is
    not a copy of the target's heading: links whose text equals any heading or page title of
    the corpus (case-insensitively) are dropped, as are links to the page itself, links whose
    text is code (API cross-references), texts of fewer than 2 or more than 12 words, generic
    texts ("here", "this section"), and texts that point to two different pages. Then at most
    ``per_target`` per target page and ``n`` in all, drawn with a fixed seed.
    """
    known = {p.relpath for p in pages}
    heads = {h["text"].lower() for p in pages for h in p.headings}
    targets: dict[str, set[str]] = defaultdict(set)
    first: dict[str, dict[str, Any]] = {}
    for p in pages:
        for link in p.links:
            text = " ".join(str(link["text"]).split()).strip(" .:,;")
            low = text.lower()
            # A converter that re-lays pages out (git-doc) resolves its links itself.
            target = (
                link["target"] if "target" in link else _resolve_link(p.relpath, str(link["href"]))
            )
            if target is None or target not in known or target == p.relpath or link["code"]:
                continue
            words = re.findall(r"[A-Za-z]\w*", text)
            if not 2 <= len(words) <= 12 or _GENERIC_ANCHOR.match(low) or low in heads:
                continue
            targets[low].add(target)
            first.setdefault(low, {"query": text, "relevant": target, "source_page": p.relpath})
    by_target: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for low, item in sorted(first.items()):
        if len(targets[low]) == 1:
            by_target[item["relevant"]].append(item)
    rng = np.random.default_rng(seed)
    chosen: list[dict[str, Any]] = []
    for rel in sorted(by_target):
        cands = by_target[rel]
        pick = rng.permutation(len(cands))[:per_target]
        chosen.extend(cands[i] for i in sorted(pick))
    order = rng.permutation(len(chosen))[:n]
    return [chosen[i] for i in sorted(order)]


def _first_sentence(body: str) -> str | None:
    """The first prose sentence of a section body (code, lists, tables and notes skipped)."""
    in_code = False
    for para in re.split(r"\n\s*\n", body):
        stripped = para.strip()
        if stripped.startswith("```"):
            in_code = stripped.count("```") % 2 == 1
            continue
        if in_code:
            in_code = stripped.count("```") % 2 == 0
            continue
        if not stripped or stripped[0] in "-|>#*0123456789" or not stripped[0].isalpha():
            continue
        line = " ".join(stripped.split())
        sent = re.split(r"(?<=[.!?])\s+(?=[A-Z])", line, maxsplit=1)[0]
        if re.match(r"^(note|warning|deprecated|changed in|new in)\b", sent, re.IGNORECASE):
            continue
        return sent
    return None


def _heading_offsets(page: DocPage) -> list[int]:
    """Where each heading's section starts in the final page text (after its ``#`` line).

    The parser's ``offset`` counts characters before whitespace is normalised, so it drifts;
    this finds each heading line in order instead."""
    out: list[int] = []
    pos = 0
    for h in page.headings:
        line = "#" * int(h["level"]) + " " + str(h["text"]) + "\n"
        at = page.text.find(line, pos)
        if at < 0:
            out.append(pos)
            continue
        pos = at + len(line)
        out.append(pos)
    return out


def derive_first_sentence_queries(
    pages: Sequence[DocPage], n: int = 150, per_page: int = 4, seed: int = 0
) -> list[dict[str, Any]]:
    """Queries made of the first prose sentence of a section, labelled with its page.

    Not a heading: the query is a full sentence of 8-40 words, mostly words (code-heavy
    sentences dropped), that occurs once in the corpus. Still a verbatim passage of the page.
    At most ``per_page`` per page (sections of level 2-4) and ``n`` in all, seeded sample.
    """
    counts: Counter[str] = Counter()
    cands: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for p in pages:
        offs = [*_heading_offsets(p), len(p.text)]
        for j, h in enumerate(p.headings):
            sent = _first_sentence(p.text[offs[j] : offs[j + 1]])
            if sent is None:
                continue
            counts[sent.lower()] += 1
            words = re.findall(r"[A-Za-z][A-Za-z'-]*", sent)
            if j == 0 or not 2 <= h["level"] <= 4 or not 8 <= len(words) <= 40:
                continue
            if sum(len(w) for w in words) < 0.7 * len(sent.replace(" ", "")):
                continue
            cands[p.relpath].append(
                {"query": sent, "relevant": p.relpath, "page_title": p.title, "heading": h["text"]}
            )
    rng = np.random.default_rng(seed)
    chosen: list[dict[str, Any]] = []
    for rel in sorted(cands):
        items = [c for c in cands[rel] if counts[c["query"].lower()] == 1]
        pick = rng.permutation(len(items))[:per_page]
        chosen.extend(items[i] for i in sorted(pick))
    order = rng.permutation(len(chosen))[:n]
    return [chosen[i] for i in sorted(order)]


def derive_pytest_queries(pages: Sequence[DocPage]) -> list[dict[str, Any]]:
    """Three labelled sets over one tree: headings, first sentences and anchor texts."""
    out: list[dict[str, Any]] = []
    for q in derive_django_queries(pages, n=150, per_page=4, seed=0):
        out.append({**q, "qid": f"h{q['qid']}", "kind": "heading"})
    for i, q in enumerate(derive_first_sentence_queries(pages, seed=0), start=1):
        out.append({**q, "qid": f"s{i}", "kind": "first_sentence"})
    for i, q in enumerate(derive_anchor_queries(pages, n=150, seed=0), start=1):
        out.append({**q, "qid": f"a{i}", "kind": "anchor"})
    return out


def save_pytest_queries(
    queries: list[dict[str, Any]],
    version: str,
    path: Path = PYTEST_QUERIES_FILE,
    package: str = PYTEST_PACKAGE,
    docs: str = "pytest docs",
    derived_by: str = "python bench/datasets.py --rebuild-pytest-queries",
    markup: str = "Sphinx HTML",
) -> None:
    """Write a doc package's derived query set (pytest's, or another package's: ``package``,
    ``docs`` and ``derived_by`` name it) with the method that derived it."""
    doc = {
        "source": f"Debian package {package} {version} ({docs}, {markup})",
        "method": {
            "heading": (
                "known-item search: the text of a section heading (levels 2-4, 3-12 words, "
                "unique in the corpus, not generic, not a page title, section >= 300 chars), "
                "labelled with the page that holds it; at most 2 per page, seeded sample"
            ),
            "first_sentence": (
                "the first prose sentence (8-40 words, unique in the corpus) of a section of "
                "level 2-4, labelled with the page that holds it; <= 4 per page, seeded sample"
            ),
            "anchor": (
                "the text (2-12 words) of an internal link written on another page, labelled "
                "with the page "
                "it points to; texts equal to any heading or page title, code, self-links, "
                "ambiguous and generic texts dropped; <= 3 per target page, seeded sample"
            ),
        },
        "derived_by": derived_by,
        "queries": queries,
    }
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")


def load_query_file(path: Path) -> list[dict[str, Any]]:
    data = json.loads(path.read_text())
    queries: list[dict[str, Any]] = data["queries"]
    return queries


# --------------------------------------------------------------------------------------
# git's documentation (Debian package git-doc): asciidoc + DocBook HTML, a HELD-OUT set
# --------------------------------------------------------------------------------------

GITDOC_PACKAGE = "git-doc"
GITDOC_QUERIES_FILE = DATA_DIR / "gitdoc_queries.json"
GITDOC_SKIP_FILES = {"index.html", "howto-index.html", "technical/api-index.html", "everyday.html"}
"""``index.html`` is a second copy of ``git.html``; the two index pages list other pages
(navigation, like Sphinx's ``contents.html``)."""
GITDOC_CATEGORIES: dict[str, str] = {
    "mainporcelain": "commands/porcelain/main",
    "ancillarymanipulators": "commands/porcelain/ancillary-manipulators",
    "ancillaryinterrogators": "commands/porcelain/ancillary-interrogators",
    "foreignscminterface": "commands/porcelain/interacting-with-others",
    "plumbingmanipulators": "commands/plumbing/manipulation",
    "plumbinginterrogators": "commands/plumbing/interrogation",
    "synchingrepositories": "commands/plumbing/syncing",
    "synchelpers": "commands/plumbing/syncing",
    "purehelpers": "commands/plumbing/internal-helpers",
    "guide": "guides",
    "userinterfaces": "interfaces",
    "developerinterfaces": "developer-interfaces",
}
"""git(1)'s own grouping of its pages (its "GIT COMMANDS" / "GUIDES" / "... INTERFACES"
sections are generated from the ``cmds-<category>.txt`` lists shipped in the package), as
directories: the tree a user of the package sees in git(1), not one we made up. A ``git-*``
page in no list goes directly under ``commands/``; any other page stays where the package
puts it (top level, ``howto/``, ``technical/``)."""
_GITDOC_DOCBOOK_PARTS = re.compile(r'<div class="(?:preface|chapter|appendix)"')
_MANPAGE_REF = re.compile(r"[\w.-]+\(\d\)")
_XREF = re.compile(r"^the section called [“\"](.*)[”\"]$")


class _AsciidocToMarkdown(_SphinxToMarkdown):
    """An asciidoc (or DocBook XSL) page's body as markdown-ish text, with its headings.

    The same output as the Sphinx converter (``#`` headings, fenced code, blocks on their own
    lines, internal links recorded); only what counts as the page body differs. asciidoc puts
    the title (and a man page's NAME line) in ``div#header`` and the body in ``div#content``;
    the DocBook user manual is fed one chapter at a time (its ``div.chapter``). Left out, as
    navigation: tables of contents (``div#toc``, DocBook ``div.toc``), the footer (the "Last
    updated" stamp) and the empty footnote block.
    """

    _MAIN_IDS = frozenset({"header", "content"})
    _MAIN_CLASSES = frozenset({"chapter", "preface", "appendix"})
    _NAV_IDS = frozenset({"toc", "footer", "footnotes", "footer-text"})

    def __init__(self) -> None:
        super().__init__()
        self.nav_depth = 0  # div depth at which a skipped navigation block opened; 0 = none

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        classes = set(a.get("class", "").split())
        if self.depth == 0:
            if tag == "div" and (a.get("id") in self._MAIN_IDS or classes & self._MAIN_CLASSES):
                self.depth = 1
            return
        if self.nav_depth:
            if tag == "div":
                self.depth += 1
            return
        if tag == "div" and (a.get("id") in self._NAV_IDS or "toc" in classes):
            self.depth += 1
            self.nav_depth = self.depth
            return
        if re.fullmatch(r"h[1-6]", tag) and a.get("id"):
            self.pending_id = a["id"]
        super().handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if self.nav_depth:
            if tag == "div":
                self.depth -= 1
                if self.depth < self.nav_depth:
                    self.nav_depth = 0
            return
        super().handle_endtag(tag)

    def handle_data(self, data: str) -> None:
        if not self.nav_depth:
            super().handle_data(data)


def _fold_name_section(text: str, headings: list[dict[str, Any]]) -> str:
    """A man page's ``NAME`` line (``git-add - Add file contents to the index``) joins the
    title's section instead of being a section of its own: asciidoc puts it in the page
    header with the title, and it is the page's one-line summary, as a Sphinx page's intro
    under its title is (so the query derivations treat it like one)."""
    if len(headings) > 1 and headings[1]["text"] == "NAME" and headings[1]["level"] == 2:
        line = "\n## NAME\n\n"
        at = text.find(line)
        if at >= 0:
            text = text[:at] + "\n" + text[at + len(line) :]
            del headings[1]
            for h in headings[1:]:
                h["offset"] = int(h["offset"]) - len(line) + 1
    return text


def _drop_git_footer(text: str, headings: list[dict[str, Any]]) -> str:
    """Cut a man page's last section ``GIT`` ("Part of the git(1) suite"): the same line on
    every page, a footer in all but markup."""
    if len(headings) > 1 and headings[-1]["text"] == "GIT":
        at = text.rfind("\n## GIT\n")
        if at >= 0 and "Part of the" in text[at:]:
            headings.pop()
            return text[:at].rstrip() + "\n"
    return text


def _is_manpage(path: Path) -> bool:
    """An asciidoc man page (``<body class="manpage">``), not an article such as
    ``git-bisect-lk2009.html`` or ``git-tools.html`` that only shares the name prefix."""
    return '<body class="manpage">' in path.read_text(encoding="utf-8", errors="replace")


def gitdoc_layout(html_dir: Path) -> dict[str, str]:
    """Where each HTML page of git-doc goes in the tree: ``{html relpath: md relpath}``.

    Directories follow git(1)'s grouping (:data:`GITDOC_CATEGORIES`, read from the
    ``cmds-*.txt`` lists in the package); the user manual is laid out by the converter
    (one page per chapter, :func:`convert_gitdoc`)."""
    category: dict[str, str] = {}
    for lst in sorted(html_dir.glob("cmds-*.txt")):
        folder = GITDOC_CATEGORIES.get(lst.stem.removeprefix("cmds-"))
        if folder is None:
            continue
        for name in re.findall(r"^linkgit:([^\[]+)\[", lst.read_text(), re.MULTILINE):
            category.setdefault(name, folder)
    out: dict[str, str] = {}
    for path in sorted(html_dir.rglob("*.html")):
        rel = path.relative_to(html_dir).as_posix()
        if rel in GITDOC_SKIP_FILES:
            continue
        stem = path.stem
        if "/" not in rel and stem in category:
            out[rel] = f"{category[stem]}/{stem}.md"
        elif "/" not in rel and stem.startswith("git-") and _is_manpage(path):
            out[rel] = f"commands/{stem}.md"
        else:
            out[rel] = rel.removesuffix(".html") + ".md"
    return out


def _gitdoc_page(
    parser: _AsciidocToMarkdown, relpath: str, html: str
) -> tuple[DocPage | None, list[str]]:
    """Feed one page (or one user-manual chapter) and return it with the ids it defines."""
    parser.feed(html)
    parser.close()
    text = _drop_git_footer(_fold_name_section(parser.text(), parser.headings), parser.headings)
    ids = re.findall(r'\b(?:id|name)="([^"]+)"', html)
    if len(text) < 200 or not parser.headings:
        return None, ids
    for link in parser.links:
        m = _XREF.match(str(link["text"]))
        if m:  # DocBook's cross-reference text is the target heading in a wrapper
            link["text"] = m.group(1)
        if _MANPAGE_REF.fullmatch(str(link["text"])):
            link["code"] = True  # "git-status(1)": the target's name, like an API xref
    page = DocPage(
        relpath=relpath,
        title=parser.headings[0]["text"],
        text=text,
        headings=parser.headings,
        links=parser.links,
    )
    return page, ids


def convert_gitdoc(html_dir: Path) -> list[DocPage]:
    """Every content page of git-doc as markdown, laid out as git(1) groups them.

    The asciidoc pages (man pages, guides, howtos, technical notes) convert one to one; the
    DocBook user manual (one 270 kB page) is split into its chapters, preface and appendices,
    ``user-manual/NN-<chapter id>.md``, as DocBook's own chunked output would be. Pages with
    under 200 characters of body or no heading (stubs that moved) are left out. Each link
    gets ``target``: the ``.md`` page it points to in this layout (None: outside the set),
    resolving ``#fragment`` links into the user manual to the chapter that defines them."""
    layout = gitdoc_layout(html_dir)
    pages: list[DocPage] = []
    where: dict[tuple[str, str], str] = {}  # (html relpath, fragment id) -> md relpath
    sources: list[str] = []  # html relpath each page came from
    for html_rel, md_rel in layout.items():
        html = (html_dir / html_rel).read_text(encoding="utf-8", errors="replace")
        if html_rel == "user-manual.html":
            starts = [m.start() for m in _GITDOC_DOCBOOK_PARTS.finditer(html)]
            parts = [html[a:b] for a, b in zip(starts, [*starts[1:], len(html)], strict=True)]
            for n, part in enumerate(parts):
                first = re.search(r'<a name="([^"]+)"', part)
                slug = (first.group(1) if first else f"part-{n}").strip("_").lower()
                page, ids = _gitdoc_page(
                    _AsciidocToMarkdown(), f"user-manual/{n:02d}-{slug}.md", part
                )
                if page is not None:
                    pages.append(page)
                    sources.append(html_rel)
                    for i in ids:
                        where[(html_rel, i)] = page.relpath
            continue
        page, _ = _gitdoc_page(_AsciidocToMarkdown(), md_rel, html)
        if page is not None:
            pages.append(page)
            sources.append(html_rel)
    kept = {p.relpath for p in pages}
    for page, html_rel in zip(pages, sources, strict=True):
        for link in page.links:
            href = str(link["href"])
            path, _, frag = href.partition("#")
            target: str | None = None
            if not re.match(r"^[a-z][a-z0-9+.-]*:", href):
                to = (
                    posixpath.normpath(posixpath.join(posixpath.dirname(html_rel), path))
                    if path
                    else html_rel
                )
                target = where.get((to, frag)) or layout.get(to)
            link["target"] = target if target in kept else None
    return pages


def gitdoc_html_dir() -> Path:
    """git-doc's HTML (``TREEHOP_GITDOC_DOCS`` overrides; else installed, else fetched)."""
    env = os.environ.get("TREEHOP_GITDOC_DOCS")
    if env:
        return Path(env)
    installed = Path("/usr/share/doc/git-doc")
    if (installed / "git.html").is_file():
        return installed
    return fetch_debian_package(GITDOC_PACKAGE) / "usr/share/doc/git-doc"


def materialise_gitdoc(
    html_dir: Path | None = None, out_dir: Path | None = None
) -> tuple[Path, list[DocPage]]:
    """Write git-doc's converted pages under ``out_dir`` in :func:`gitdoc_layout`'s tree."""
    html_dir = html_dir or gitdoc_html_dir()
    if not (html_dir / "git.html").is_file():
        raise FileNotFoundError(f"no git-doc HTML at {html_dir}")
    return _write_pages(convert_gitdoc(html_dir), out_dir or CACHE_DIR / "gitdoc")


# --------------------------------------------------------------------------------------
# LoCoMo conversations (read from shared/data, never copied into the repository)
# --------------------------------------------------------------------------------------


@dataclass
class Turn:
    dia_id: str  # "D3:7"
    speaker: str
    text: str

    def line(self) -> str:
        """The text the LoCoMo reference embeds for a turn: ``Speaker: text``."""
        return f"{self.speaker}: {' '.join(self.text.split())}"


@dataclass
class Session:
    index: int
    date: str
    turns: list[Turn]


@dataclass
class Conversation:
    sample_id: str
    speakers: tuple[str, str]
    sessions: list[Session]
    questions: list[dict[str, Any]]  # question, evidence (dia ids that exist), category


_DIA = re.compile(r"D(\d+):(\d+)")


def parse_evidence(items: Sequence[str]) -> list[str]:
    """LoCoMo evidence ids, normalised: a few entries hold two ids ("D8:6; D9:17")."""
    out: list[str] = []
    for item in items:
        for s, t in _DIA.findall(str(item)):
            did = f"D{int(s)}:{int(t)}"
            if did not in out:
                out.append(did)
    return out


def load_locomo(path: Path = LOCOMO_FILE) -> tuple[list[Conversation], dict[str, int]]:
    """The conversations and their answerable questions (category 5, adversarial, left out).

    Returns the conversations and counts of what was dropped: evidence ids naming no turn of
    the conversation, and questions left without any evidence.
    """
    if not path.is_file():
        raise FileNotFoundError(f"LoCoMo not found at {path} (set TREEHOP_LOCOMO)")
    raw = json.loads(path.read_text())
    convs: list[Conversation] = []
    dropped = {"category5": 0, "unknown_evidence_ids": 0, "no_evidence": 0}
    for c in raw:
        conv = c["conversation"]
        keys = sorted(
            (k for k in conv if re.fullmatch(r"session_\d+", k)), key=lambda k: int(k[8:])
        )
        sessions = [
            Session(
                index=int(k[8:]),
                date=str(conv.get(f"{k}_date_time", "")),
                turns=[Turn(t["dia_id"], t["speaker"], t["text"]) for t in conv[k]],
            )
            for k in keys
        ]
        ids = {t.dia_id for s in sessions for t in s.turns}
        qs: list[dict[str, Any]] = []
        for i, qa in enumerate(c["qa"]):
            if qa.get("category") == 5:
                dropped["category5"] += 1
                continue
            ev = parse_evidence(qa.get("evidence", []))
            good = [e for e in ev if e in ids]
            dropped["unknown_evidence_ids"] += len(ev) - len(good)
            if not good:
                dropped["no_evidence"] += 1
                continue
            qs.append(
                {
                    "qid": f"{c['sample_id']}#{i}",
                    "question": str(qa["question"]),
                    "evidence": good,
                    "category": qa.get("category"),
                }
            )
        convs.append(
            Conversation(
                sample_id=str(c["sample_id"]),
                speakers=(str(conv["speaker_a"]), str(conv["speaker_b"])),
                sessions=sessions,
                questions=qs,
            )
        )
    return convs, dropped


def locomo_turn_filename(dia_id: str) -> str:
    s, t = _DIA.fullmatch(dia_id).groups()  # type: ignore[union-attr]
    return f"d{int(s):02d}-{int(t):03d}.txt"


def dia_id_from_filename(name: str) -> str | None:
    m = re.search(r"d(\d+)-(\d+)\.txt$", name)
    return f"D{int(m.group(1))}:{int(m.group(2))}" if m else None


def locomo_day(date: str) -> str:
    """LoCoMo's ``1:56 pm on 8 May, 2023`` as ``8 May 2023`` (the day a turn was said)."""
    return " ".join(date.split(" on ", 1)[-1].replace(",", "").split())


def materialise_locomo(
    convs: Sequence[Conversation], out_dir: Path | None = None, dated: bool = False
) -> Path:
    """One file per turn (``Speaker: text``), one folder per session, one per conversation.

    Written to the benchmark cache (outside the repository: LoCoMo's licence is for
    benchmarking only). The session dates go in as metadata at ingest, not into the files,
    so that the turn text is the reference's ``Speaker: text``; ``dated`` writes
    ``(8 May 2023) Speaker: text`` instead (leaf text that carries its place in time).
    """
    out_dir = out_dir or CACHE_DIR / ("locomo-tree-dated" if dated else "locomo-tree")
    payload = {
        f"{c.sample_id}/session-{s.index:02d}/{locomo_turn_filename(t.dia_id)}": (
            f"({locomo_day(s.date)}) " if dated else ""
        )
        + t.line()
        + "\n"
        for c in convs
        for s in c.sessions
        for t in s.turns
    }
    stamp = hashlib.sha256(json.dumps(payload, sort_keys=True).encode("utf-8")).hexdigest()
    marker = out_dir / ".bench-stamp"
    if not (marker.is_file() and marker.read_text() == stamp):
        if out_dir.exists():
            shutil.rmtree(out_dir)
        ensure_cache_dir(out_dir)
        for rel, text in payload.items():
            f = out_dir / rel
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text(text, encoding="utf-8")
        marker.write_text(stamp)
    return out_dir


def _main() -> None:
    ap = argparse.ArgumentParser(description="Prepare and inspect the benchmark datasets.")
    ap.add_argument("--rebuild-django-queries", action="store_true")
    ap.add_argument("--rebuild-pytest-queries", action="store_true")
    ap.add_argument("--rebuild-django-anchor-queries", action="store_true")
    ap.add_argument("--rebuild-flask-queries", action="store_true")
    ap.add_argument("--rebuild-gitdoc-queries", action="store_true")
    ap.add_argument("--cranfield-tree", action="store_true", help="build the Cranfield tree")
    args = ap.parse_args()
    if args.rebuild_django_anchor_queries:
        if not django_docs_available():
            sys.exit(django_install_hint())
        _, pages = materialise_django_docs()
        anchors = derive_anchor_queries(pages, n=200, per_target=3, seed=0)
        for i, q in enumerate(anchors, start=1):
            q.update(qid=f"a{i}", kind="anchor")
        DJANGO_ANCHOR_QUERIES_FILE.write_text(
            json.dumps(
                {
                    "source": f"Debian package {DJANGO_PACKAGE} (Django 3.2 documentation)",
                    "method": (
                        "the text (2-12 words) of an internal link written on another page, "
                        "labelled with the page it points to; texts equal to any heading or page "
                        "title, code, self-links, ambiguous and generic texts dropped; <= 3 per "
                        "target page, 200 in all, seeded sample"
                    ),
                    "derived_by": "python bench/datasets.py --rebuild-django-anchor-queries",
                    "queries": anchors,
                },
                indent=1,
                ensure_ascii=False,
            )
            + "\n"
        )
        print(f"wrote {len(anchors)} anchor queries to {DJANGO_ANCHOR_QUERIES_FILE}")
    # (flag, materialise, package, query file, what the docs are, their markup)
    doc_sets = (
        (args.rebuild_pytest_queries, materialise_pytest_docs, PYTEST_PACKAGE,
         PYTEST_QUERIES_FILE, "pytest docs", "Sphinx HTML", "pytest"),
        (args.rebuild_flask_queries, materialise_flask_docs, FLASK_PACKAGE,
         FLASK_QUERIES_FILE, "Flask docs", "Sphinx HTML", "flask"),
        (args.rebuild_gitdoc_queries, materialise_gitdoc, GITDOC_PACKAGE,
         GITDOC_QUERIES_FILE, "git docs, held out", "asciidoc + DocBook HTML", "gitdoc"),
    )  # fmt: skip
    for wanted, materialise, package, path, docs, markup, flag in doc_sets:
        if not wanted:
            continue
        root, pages = materialise()
        marker = debian_package_root(package) / ".bench-unpacked"
        version = marker.read_text().strip() if marker.is_file() else "installed"
        qs = derive_pytest_queries(pages)
        derived_by = f"python bench/datasets.py --rebuild-{flag}-queries"
        save_pytest_queries(qs, version, path, package, docs, derived_by, markup)
        kinds = Counter(q["kind"] for q in qs)
        print(f"{len(pages)} pages, {sum(len(p.text) for p in pages)} chars under {root}")
        print(f"wrote {dict(kinds)} queries to {path}")
    if args.rebuild_django_queries:
        if not django_docs_available():
            sys.exit(django_install_hint())
        _, pages = materialise_django_docs()
        qs = derive_django_queries(pages)
        save_django_queries(qs)
        print(f"{len(pages)} pages, {sum(len(p.text) for p in pages)} chars")
        print(f"wrote {len(qs)} queries to {DJANGO_QUERIES_FILE}")
    if args.cranfield_tree:
        cran = load_cranfield()
        layout = build_cranfield_tree(cran, default_embedder())
        dirs = Counter(str(Path(p).parent) for p in layout.paths.values())
        print(f"Cranfield tree at {layout.root}: {len(dirs)} leaf directories")
        for d, c in sorted(dirs.items()):
            print(f"  {c:4d}  {d}")


if __name__ == "__main__":
    _main()
