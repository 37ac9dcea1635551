"""Ingest benchmark: how well raw documentation ingests, and that ingest time is linear.

Two parts, each runnable alone (``--part rest`` / ``--part linear``; default both):

**rest** — raw reStructuredText vs one section per file. The Django 3.2 documentation sources
(reST ``.txt`` files, shipped in the sdist) are ingested twice with the same client defaults
and the same embedder (MiniLM through the shared cache, ``bench/datasets.py``):

* ``raw``: the docs tree as it is (``add_resource(docs_dir)``): section-aware chunking has to
  find the titles itself;
* ``sections``: every page pre-split into one file per section (``page/NN-slug.txt``, holding
  the section's title and text), i.e. what a user would get by splitting the pages by hand.

Queries: ``bench/data/django_doc_queries.json`` (section headings of the same docs, labelled
with their page; page paths map ``x.md`` -> ``x.txt``). A seeded half of them is held out
(``--seed``; nothing in ingest is tuned on it) and reported. A hit counts for its page, once,
at the page's first rank in what ``find()`` returns (chunks of one page and sections of one
page collapse), so nDCG@10 with one relevant page is ``1/log2(1 + rank)``. Also printed: the
share of query headings that the reST parser finds as a title on their page (a parser check
against Sphinx's own build, which the queries come from).

Sources: ``--django-src DIR`` or ``TREEHOP_DJANGO_SRC``, default ``/tmp/dj/Django-3.2.25/docs``::

    pip download django==3.2.25 --no-deps --no-binary :all: -d /tmp/dj
    tar xzf /tmp/dj/Django-3.2.25.tar.gz -C /tmp/dj

**linear** — 1, 5 and 20 MB of generated (seeded) punctuation-free text, CSV and minified JSON
through ``add_resource`` with a cheap deterministic hashing embedder, whose time is measured
and subtracted, so the numbers are ingest itself: parsing, chunking, summaries, tagging,
tokenising, storing. 1 and 5 MB are single files (5 MB is the file cap,
``treehop.ingest.loaders.MAX_FILE_BYTES``); 20 MB is a folder of four 5 MB files, and, with
``--lift-cap``, also one 20 MB file (cap raised for the run) to show a single document's cost
stays linear past the cap. Prints seconds and seconds/MB per size; linear growth means a flat
seconds/MB column.

**nodes** — ``add_resource`` of a tree of ``--nodes`` short generated files (folders of
``--per-dir``), then a re-add after ``--changed`` files were edited: nodes/s excluding
embedding (wall and process CPU), the embedded store's HNSW upkeep timed apart (it builds its
ANN index inside the ingest once the index holds 50k rows; ``--hnsw off`` turns it off), and
the re-add's seconds (wall and CPU, embedding excluded) and how many nodes it re-embedded.
``--readds N`` re-adds N times (each after editing ``--changed`` other files) and shows the
medians, with every run listed below the row: one first ingest, several re-add samples.
``--stages`` adds, below each row, the first ingest's stages (plan, tree build, tagging, store
write and its BM25 thread): wall, user and kernel CPU, and minor page faults, which on a VM
are where kernel time goes (see :class:`_StageMeter`). The tree is flushed to disk
(``os.sync``) before the timed ingest, so the kernel's writeback of the files just written
does not compete with it.

Run from the repository root::

    TREEHOP_BENCH_CACHE=/work/bench-cache python bench/bench_ingest.py --part rest
    python bench/bench_ingest.py --part linear --sizes 1,5,20
    python bench/bench_ingest.py --part nodes --nodes 10000 --changed 100 --tags on
    python bench/bench_ingest.py --part nodes --nodes 100000 --tags on,off --hnsw off --readds 5
    python bench/bench_ingest.py --part nodes --nodes 100000 --tags on --hnsw off --stages
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import math
import os
import random
import re
import resource
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parent))

from datasets import (
    DJANGO_QUERIES_FILE,
    default_embedder,
    ensure_treehop_importable,
    load_django_queries,
)

ensure_treehop_importable()

from treehop import Treehop  # noqa: E402
from treehop.embedders.base import BaseEmbedder, normalize_rows  # noqa: E402
from treehop.ingest import loaders  # noqa: E402
from treehop.ingest.markup import parse  # noqa: E402
from treehop.stores.embedded import EmbeddedStore  # noqa: E402
from treehop.uri import CHUNK_MARK  # noqa: E402

DJANGO_SRC = Path(os.environ.get("TREEHOP_DJANGO_SRC", "/tmp/dj/Django-3.2.25/docs"))
SKIP_TOP = {"releases", "_ext", "_theme", "man"}
MB = 1_000_000


# ------------------------------------------------------------------------------ part: rest


def _pages(src: Path) -> dict[str, str]:
    """relpath -> reST text of every documentation page (release notes left out, as in the
    HTML set the queries were derived from)."""
    out: dict[str, str] = {}
    for p in sorted(src.rglob("*.txt")):
        rel = p.relative_to(src).as_posix()
        if rel.split("/", 1)[0] in SKIP_TOP or ("/" not in rel and rel == "requirements.txt"):
            continue
        out[rel] = p.read_text(encoding="utf-8")
    return out


def _slug(text: str) -> str:
    s = re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()
    return s[:60] or "section"


def _write_raw(pages: dict[str, str], root: Path) -> None:
    for rel, text in pages.items():
        f = root / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text, encoding="utf-8")


def _write_sections(pages: dict[str, str], root: Path) -> int:
    """One file per section: ``<page>/NN-slug.txt`` holding the section's title and text."""
    n = 0
    for rel, text in pages.items():
        page_dir = root / rel.removesuffix(".txt")
        page_dir.mkdir(parents=True, exist_ok=True)
        for i, sec in enumerate(s for s in parse(text, "rst").sections if s.body.strip()):
            head = sec.heading or rel.rsplit("/", 1)[-1].removesuffix(".txt")
            body = f"{head}\n{'=' * len(head)}\n\n{sec.body.strip()}\n"
            (page_dir / f"{i:02d}-{_slug(head)}.txt").write_text(body, encoding="utf-8")
            n += 1
    return n


def _page_of_raw(uri: str, root_uri: str) -> str:
    rel = uri.split(CHUNK_MARK, 1)[0].removeprefix(root_uri + "/")
    return rel


def _page_of_sections(uri: str, root_uri: str) -> str:
    rel = uri.split(CHUNK_MARK, 1)[0].removeprefix(root_uri + "/")
    parts = rel.split("/")
    if len(parts) >= 2 and re.match(r"\d\d-", parts[-1]):
        return "/".join(parts[:-1]) + ".txt"
    return rel + ".txt" if not rel.endswith(".txt") else rel


def _score(ranked_pages: Sequence[str], relevant: str, k: int = 10) -> tuple[float, float]:
    seen: list[str] = []
    for p in ranked_pages:
        if p not in seen:
            seen.append(p)
        if len(seen) == k:
            break
    if relevant in seen:
        r = seen.index(relevant) + 1
        return 1.0 / math.log2(1 + r), 1.0
    return 0.0, 0.0


_QUOTES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"'})


def _norm(heading: str) -> str:
    """Sphinx's smart quotes undone, spaces collapsed, case folded."""
    return " ".join(heading.translate(_QUOTES).split()).casefold()


def _heading_recall(pages: dict[str, str], queries: Sequence[dict[str, Any]]) -> float:
    found = 0
    for q in queries:
        heads = {_norm(h) for h in parse(pages[q["relevant"]], "rst").headings}
        found += _norm(q["query"]) in heads
    return found / max(1, len(queries))


def part_rest(args: argparse.Namespace) -> None:
    src = Path(args.django_src)
    if not (src / "index.txt").is_file():
        sys.exit(
            f"Django reST sources not found at {src}. Get them with:\n"
            "  pip download django==3.2.25 --no-deps --no-binary :all: -d /tmp/dj\n"
            "  tar xzf /tmp/dj/Django-3.2.25.tar.gz -C /tmp/dj\n"
            "or pass --django-src DIR (the sdist's docs/ folder)."
        )
    pages = _pages(src)
    queries = []
    for q in load_django_queries(DJANGO_QUERIES_FILE):
        rel = q["relevant"].removesuffix(".md") + ".txt"
        if rel in pages:
            queries.append({**q, "relevant": rel})
    rng = random.Random(args.seed)
    order = list(range(len(queries)))
    rng.shuffle(order)
    held = [queries[i] for i in sorted(order[len(order) // 2 :])]
    if args.max_pages:
        # A smaller corpus (CPU-bound runs): the pages of held-out queries, in held-out order,
        # for three quarters of the budget, then seeded distractor pages.
        keep: list[str] = []
        for q in (queries[i] for i in order[len(order) // 2 :]):
            if q["relevant"] not in keep and len(keep) < args.max_pages * 3 // 4:
                keep.append(q["relevant"])
        others = sorted(set(pages) - set(keep))
        keep += rng.sample(others, min(len(others), args.max_pages - len(keep)))
        pages = {rel: pages[rel] for rel in sorted(keep)}
        held = [q for q in held if q["relevant"] in pages]
    if args.max_queries:
        held = held[: args.max_queries]
    print(
        f"Django 3.2 reST: {len(pages)} pages, {sum(map(len, pages.values())) / MB:.2f} MB; "
        f"{len(held)} held-out labelled queries on them (seed {args.seed}, "
        f"half of {len(queries)})"
    )
    print(f"query headings found as titles by the reST parser: {_heading_recall(pages, held):.3f}")
    embedder = default_embedder(cache=not args.no_cache)
    rows: list[tuple[str, int, float, float, float]] = []
    with tempfile.TemporaryDirectory(prefix="treehop-bench-ingest-") as tmp:
        for cond in ("raw", "sections"):
            root = Path(tmp) / cond / "django-docs"
            root.mkdir(parents=True)
            if cond == "raw":
                _write_raw(pages, root)
            else:
                _write_sections(pages, root)
            t0 = time.perf_counter()
            with Treehop(embedder=embedder) as th:
                res = th.add_resource(root, target_uri="viking://resources")
                t_ingest = time.perf_counter() - t0
                page_of = _page_of_raw if cond == "raw" else _page_of_sections
                nd, rc = [], []
                for q in held:
                    hits = th.find(q["query"], limit=args.limit).resources
                    ranked = [page_of(h.uri, res.root_uri) for h in hits]
                    a, b = _score(ranked, q["relevant"])
                    nd.append(a)
                    rc.append(b)
                leaves = res.chunks + res.files
            rows.append((cond, leaves, float(np.mean(nd)), float(np.mean(rc)), t_ingest))
            if len(rows) == 1:
                print(f"\n{'ingest':<10}{'leaves':>8}{'nDCG@10':>10}{'R@10':>8}{'ingest s':>10}")
            cond, leaves, nd_, rc_, t = rows[-1]
            print(f"{cond:<10}{leaves:>8}{nd_:>10.3f}{rc_:>8.3f}{t:>10.1f}", flush=True)
    gap = rows[1][2] - rows[0][2]
    print(f"\nraw - sections nDCG@10: {-gap:+.3f} (goal: raw within 0.05 of sections)")


# ---------------------------------------------------------------------------- part: linear


class HashingEmbedder(BaseEmbedder):
    """A deterministic, cheap embedder (hashed word counts); records the time it spends, so
    that the benchmark can report ingest time without embedding."""

    name = "bench-hashing-256"
    dimension = 256

    def __init__(self) -> None:
        self.seconds = 0.0
        self.cpu_seconds = 0.0
        """CPU time of the embedding calls (each runs in one thread)."""
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        t0, c0 = time.perf_counter(), time.thread_time()
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for i, t in enumerate(texts):
            words = t.lower().split()[:512]
            idx = [int(hashlib.blake2b(w.encode(), digest_size=4).hexdigest(), 16) for w in words]
            np.add.at(out[i], np.asarray(idx, dtype=np.int64) % self.dimension, 1.0)
        vecs = normalize_rows(out, len(texts), self.dimension)
        with self._lock:
            self.seconds += time.perf_counter() - t0
            self.cpu_seconds += time.thread_time() - c0
        return vecs


_WORDS = [
    "river",
    "stone",
    "cloud",
    "engine",
    "vector",
    "index",
    "garden",
    "signal",
    "harbor",
    "lantern",
    "meadow",
    "orbit",
    "pepper",
    "quartz",
    "ribbon",
    "saddle",
    "timber",
    "velvet",
    "walnut",
    "yonder",
    "anchor",
    "basket",
    "candle",
    "dragon",
]


def gen_text(n: int, rng: random.Random) -> str:
    """Words and numbers separated by spaces and newlines only: no sentence end anywhere."""
    parts: list[str] = []
    size = 0
    i = 0
    while size < n:
        w = f"{rng.choice(_WORDS)}{rng.randrange(5000)}"
        i += 1
        sep = "\n" if i % 14 == 0 else " "
        parts.append(w + sep)
        size += len(w) + 1
    return "".join(parts)[:n]


def gen_csv(n: int, rng: random.Random) -> str:
    rows = ["id,name,city,amount,flag"]
    size = len(rows[0])
    i = 0
    while size < n:
        name, city = f"{rng.choice(_WORDS)}{i % 997}", rng.choice(_WORDS)
        r = f"{i},{name},{city},{rng.random() * 1e4:.2f},{i % 2}"
        rows.append(r)
        size += len(r) + 1
        i += 1
    return "\n".join(rows)[:n]


def gen_json(n: int, rng: random.Random) -> str:
    items: list[str] = []
    size = 2
    i = 0
    while size < n:
        item = {
            "id": i,
            "name": f"{rng.choice(_WORDS)}{i % 997}",
            "tags": [rng.choice(_WORDS) for _ in range(3)],
            "score": round(rng.random(), 4),
        }
        s = json.dumps(item, separators=(",", ":"))
        items.append(s)
        size += len(s) + 1
        i += 1
    return ("[" + ",".join(items) + "]")[:n]


GENERATORS = {"text": (gen_text, ".txt"), "csv": (gen_csv, ".csv"), "json": (gen_json, ".json")}


def _ingest(path: Path, lift_cap: bool) -> tuple[float, float]:
    emb = HashingEmbedder()
    with Treehop(embedder=emb) as th:
        if lift_cap:
            th._async.writer.builder.max_file_bytes = 10**9
        t0 = time.perf_counter()
        th.add_resource(path, target_uri="viking://resources")
        total = time.perf_counter() - t0
    return total - emb.seconds, emb.seconds


def part_linear(args: argparse.Namespace) -> None:
    sizes = [float(s) for s in args.sizes.split(",")]
    formats = args.formats.split(",")
    cap = loaders.MAX_FILE_BYTES
    print(f"file cap {cap:,} bytes; times exclude embedding (hashing embedder, timed apart)")
    print(f"{'format':<7}{'MB':>5}  {'layout':<14}{'ingest s':>10}{'s/MB':>8}{'embed s':>9}")
    with tempfile.TemporaryDirectory(prefix="treehop-bench-linear-") as tmp:
        for fmt in formats:
            gen, ext = GENERATORS[fmt]
            for mb in sizes:
                rng = random.Random(f"{args.seed}-{fmt}-{mb}")
                nbytes = int(mb * MB)
                layouts: list[tuple[str, Path, bool]] = []
                if nbytes <= cap:
                    f = Path(tmp) / f"{fmt}-{mb:g}MB{ext}"
                    f.write_text(gen(nbytes, rng), encoding="utf-8")
                    layouts.append(("one file", f, False))
                else:
                    d = Path(tmp) / f"{fmt}-{mb:g}MB"
                    d.mkdir()
                    k = math.ceil(nbytes / cap)
                    for j in range(k):
                        part = gen(nbytes // k, rng)
                        (d / f"part-{j:02d}{ext}").write_text(part, encoding="utf-8")
                    layouts.append((f"{k} files", d, False))
                    if args.lift_cap:
                        f = Path(tmp) / f"{fmt}-{mb:g}MB{ext}"
                        f.write_text(gen(nbytes, rng), encoding="utf-8")
                        layouts.append(("one file*", f, True))
                for label, path, lift in layouts:
                    t, e = _ingest(path, lift)
                    print(f"{fmt:<7}{mb:>5g}  {label:<14}{t:>10.2f}{t / mb:>8.2f}{e:>9.2f}")
                    sys.stdout.flush()
                    if path.is_dir():
                        shutil.rmtree(path)
                    else:
                        path.unlink()
    if args.lift_cap:
        print("* cap raised for this run only, to time one document past the 5 MB limit")


# ----------------------------------------------------------------------------- part: nodes


def _topic_vocab(rng: random.Random, size: int) -> list[str]:
    """Pronounceable made-up words: a vocabulary with no stopwords and no numbers."""
    cons, vows = "bcdfghklmnprstvz", "aeiou"
    out: set[str] = set()
    while len(out) < size:
        k = rng.randrange(2, 5)
        out.add("".join(rng.choice(cons) + rng.choice(vows) for _ in range(k)))
    return sorted(out)


def write_tree(root: Path, n_files: int, per_dir: int, seed: int) -> int:
    """``n_files`` short files (one leaf each) in folders of ``per_dir``, grouped under ten
    top folders. Each folder has a topic: its files draw half their words from the topic's
    40 words and half from a Zipf-distributed shared vocabulary, so the keyword tagger finds
    real bridges (topic words shared by a few files) and real noise (common words)."""
    rng = random.Random(seed)
    common = _topic_vocab(rng, 5000)
    weights = [1.0 / (i + 1) for i in range(len(common))]
    n_dirs = max(1, math.ceil(n_files / per_dir))
    written = 0
    for d in range(n_dirs):
        topic = rng.sample(common[500:], 40)
        folder = root / f"area-{d % 10:02d}" / f"topic-{d:05d}"
        folder.mkdir(parents=True, exist_ok=True)
        for j in range(min(per_dir, n_files - written)):
            words = rng.choices(common, weights=weights, k=30) + rng.choices(topic, k=30)
            rng.shuffle(words)
            body = ". ".join(" ".join(words[i : i + 10]) for i in range(0, 60, 10)) + "."
            (folder / f"note-{j:04d}.md").write_text(body, encoding="utf-8")
            written += 1
    return written


def change_files(root: Path, count: int, seed: int) -> list[Path]:
    """Rewrite ``count`` seeded files with new text (size and content both change)."""
    files = sorted(root.rglob("*.md"))
    rng = random.Random(seed)
    picked = rng.sample(files, min(count, len(files)))
    for f in picked:
        f.write_text(f.read_text(encoding="utf-8") + " changed revision text.", encoding="utf-8")
    return picked


def _minor_faults() -> int:
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_minflt)


def _cpu_s() -> float:
    """CPU seconds of this process and of the child processes it waited for (the tagger's
    second process, ``tagging/second_process.py``): what the ingest cost in CPU."""
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + kids.ru_utime + kids.ru_stime


class _Timed:
    """Seconds spent in one method of one object (the store's HNSW upkeep), so the table can
    show ingest with and without it."""

    def __init__(self, obj: Any, name: str) -> None:
        self.seconds = 0.0
        inner = getattr(obj, name)

        def timed(*a: Any, **k: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return inner(*a, **k)
            finally:
                self.seconds += time.perf_counter() - t0

        setattr(obj, name, timed)


_STAGES = (
    ("plan (stat, read changed)", "treehop.ingest.writer", "TreeWriter", "_plan", False),
    ("tree build", "treehop.ingest.tree_builder", "TreeBuilder", "build_tree", False),
    ("tagging", "treehop.ingest.writer", "TreeWriter", "apply_tags", False),
    ("store write", "treehop.stores.embedded.writes", "_Writes", "upsert", False),
    ("  BM25 postings (own thread)", "treehop.lexical", "LexicalIndex", "upsert", True),
)
"""``--stages``: (row, module, class, method, in a thread of its own). The first four run one
after another; the BM25 postings run inside the store write, in a thread beside it."""


class _StageMeter:
    """Wall, CPU (user / kernel) and minor page faults of each ingest stage (``--stages``).

    Why faults: on a VM a page touched for the first time costs the kernel several
    microseconds (``clear_page`` and the host's own fault), so a stage that allocates fresh
    memory pays in kernel time what its profile in Python does not show. Sequential stages
    are measured on the process (the store write's CPU and faults include its BM25 thread's;
    the tagging's CPU includes its second process's, ``RUSAGE_CHILDREN``, faults do not);
    the BM25 thread on its own (``RUSAGE_THREAD``)."""

    def __init__(self) -> None:
        self.rows: dict[str, list[float]] = {}
        self._undo: list[tuple[Any, str, Any]] = []
        for label, mod, cls_name, meth, own_thread in _STAGES:
            cls = getattr(importlib.import_module(mod), cls_name)
            self._undo.append((cls, meth, cls.__dict__[meth]))
            setattr(cls, meth, self._wrap(label, cls.__dict__[meth], own_thread))

    def _wrap(self, label: str, inner: Any, own_thread: bool) -> Any:
        who = resource.RUSAGE_THREAD if own_thread else resource.RUSAGE_SELF
        row = self.rows.setdefault(label, [0.0, 0.0, 0.0, 0.0])

        def timed(*a: Any, **k: Any) -> Any:
            r0, t0 = resource.getrusage(who), time.perf_counter()
            k0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            try:
                return inner(*a, **k)
            finally:
                r1 = resource.getrusage(who)
                k1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                kids = not own_thread  # (a child process is waited for by a sequential stage)
                row[0] += time.perf_counter() - t0
                row[1] += r1.ru_utime - r0.ru_utime + kids * (k1.ru_utime - k0.ru_utime)
                row[2] += r1.ru_stime - r0.ru_stime + kids * (k1.ru_stime - k0.ru_stime)
                row[3] += r1.ru_minflt - r0.ru_minflt

        return timed

    def close(self) -> None:
        for cls, meth, fn in self._undo:
            setattr(cls, meth, fn)

    def report(self, ingest_s: float, faults: int) -> None:
        print(
            f"      {'stage':<30}{'wall s':>8}{'user s':>8}{'sys s':>8}{'faults':>10}{'share':>7}"
        )
        seq = 0.0
        for label, *_, own_thread in _STAGES:
            wall, user, sys_s, flt = self.rows[label]
            if not own_thread:  # (a stage in a thread of its own runs inside another one)
                seq += wall
            print(
                f"      {label:<30}{wall:>8.2f}{user:>8.2f}{sys_s:>8.2f}{flt:>10.0f}"
                f"{wall / max(ingest_s, 1e-9):>7.0%}"
            )
        rest = max(ingest_s - seq, 0.0)
        print(
            f"      {'rest (embedding excluded)':<30}{rest:>8.2f}{'':>16}{'':>10}"
            f"{rest / max(ingest_s, 1e-9):>7.0%}"
        )
        print(f"      minor page faults in the whole ingest: {faults}", flush=True)


def part_nodes(args: argparse.Namespace) -> None:
    """Nodes/s of ``add_resource`` on a tree of many small files (embedding timed apart and
    subtracted), then a re-add after ``--changed`` files were edited: what incremental ingest
    costs when almost nothing changed.

    ``hnsw s``: the embedded store's HNSW upkeep inside the ingest (it builds its ANN index
    once the index holds ``ann_min_rows`` rows, 50k by default; ``--hnsw off`` turns it off);
    ``nodes/s -hnsw`` leaves it out too. ``cpu nodes/s``: nodes per second of the CPU time of
    this process and its tagger's second process, less the embedder's, which other jobs on a
    shared machine do not inflate as they do wall time (shown with the HNSW upkeep off only:
    its threads' CPU is not separable)."""
    print(
        f"{'tags':<6}{'nodes':>8}{'ingest s':>10}{'nodes/s':>10}{'hnsw s':>8}{'nodes/s -hnsw':>15}"
        f"{'cpu nodes/s':>13}{'embed s':>9}{'re-add s':>10}{'re-add cpu':>11}{'re-embed s':>11}"
        f"{'embedded':>9}"
    )
    for tags in args.tags.split(","):
        with tempfile.TemporaryDirectory(prefix="treehop-bench-nodes-") as tmp:
            root = Path(tmp) / "tree"
            write_tree(root, args.nodes, args.per_dir, args.seed)
            # The tree's files were just written: flush them now, or the kernel writes them
            # back to disk during the timed ingest, on one of the cores the ingest uses (a
            # user ingests files at rest; the writeback is this bench's setup, not ingest).
            os.sync()
            emb = HashingEmbedder()
            tagger: Any = "auto" if tags == "on" else None
            store = EmbeddedStore(None, ann_min_rows=None) if args.hnsw == "off" else None
            with Treehop(embedder=emb, tagger=tagger, store=store) as th:
                # the graph upkeep a write waits for (since the background worker of
                # stores/_ann.py: only starting that worker)
                ann = _Timed(th.store, "_ann_kick")
                meter = _StageMeter() if args.stages else None
                f0 = _minor_faults()
                c0, t0 = _cpu_s(), time.perf_counter()
                try:
                    res = th.add_resource(root, target_uri="viking://resources")
                finally:
                    if meter is not None:
                        meter.close()
                first, cpu = time.perf_counter() - t0, _cpu_s() - c0
                faults = _minor_faults() - f0
                first_embed, embed_cpu = emb.seconds, emb.cpu_seconds
                hnsw = ann.seconds
                n = len(th.store)
                walls, cpus, embeds = [], [], []
                for r in range(args.readds):
                    change_files(root, args.changed, args.seed + 1 + r)
                    emb.seconds = emb.cpu_seconds = 0.0
                    c0, t0 = _cpu_s(), time.perf_counter()
                    again = th.add_resource(root, target_uri="viking://resources")
                    walls.append(time.perf_counter() - t0 - emb.seconds)
                    cpus.append(_cpu_s() - c0 - emb.cpu_seconds)
                    embeds.append(emb.seconds)
            ingest = first - first_embed
            cpu_rate = (
                f"{res.embedded / max(cpu - embed_cpu, 1e-9):.0f}" if args.hnsw == "off" else "-"
            )
            print(
                f"{tags:<6}{n:>8}{ingest:>10.2f}{res.embedded / ingest:>10.0f}{hnsw:>8.2f}"
                f"{res.embedded / max(ingest - hnsw, 1e-9):>15.0f}{cpu_rate:>13}"
                f"{first_embed:>9.2f}{statistics.median(walls):>10.2f}"
                f"{statistics.median(cpus):>11.2f}{statistics.median(embeds):>11.2f}"
                f"{again.embedded:>9}",
                flush=True,
            )
            if meter is not None:
                meter.report(ingest, faults)
            if args.readds > 1:
                print(
                    "      re-adds (s, wall / CPU, embedding excluded): "
                    + ", ".join(f"{w:.2f}/{c:.2f}" for w, c in zip(walls, cpus, strict=True)),
                    flush=True,
                )
    print(
        f"re-add: {args.changed} of {args.nodes} files edited; goal >= 5,000 nodes/s and "
        "re-add <= 2 s plus embedding the edited files"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--part", choices=["rest", "linear", "nodes", "all"], default="all")
    ap.add_argument("--django-src", default=str(DJANGO_SRC))
    ap.add_argument("--max-queries", type=int, default=0, help="cap on held-out queries (0: all)")
    ap.add_argument(
        "--max-pages", type=int, default=0, help="smaller corpus: held-out pages + distractors"
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--limit", type=int, default=30, help="find() limit before page dedup")
    ap.add_argument("--no-cache", action="store_true", help="bypass the embedding cache")
    ap.add_argument("--sizes", default="1,5,20", help="MB per format (linear part)")
    ap.add_argument("--formats", default="text,csv,json")
    ap.add_argument("--lift-cap", action="store_true", help="also time one file over the cap")
    ap.add_argument("--nodes", type=int, default=100_000, help="files in the tree (nodes part)")
    ap.add_argument("--per-dir", type=int, default=100, help="files per folder (nodes part)")
    ap.add_argument("--changed", type=int, default=100, help="files edited before the re-add")
    ap.add_argument(
        "--readds",
        type=int,
        default=1,
        help="nodes part: re-adds after the first ingest, each after editing --changed other "
        "files; the table shows their medians (a shared machine's noise)",
    )
    ap.add_argument("--tags", default="on,off", help="automatic tags: on, off or on,off")
    ap.add_argument(
        "--stages",
        action="store_true",
        help="nodes part: wall, CPU and page faults of each stage of the first ingest",
    )
    ap.add_argument(
        "--hnsw",
        choices=["default", "off"],
        default="default",
        help="nodes part: the store's HNSW index as configured by default, or off",
    )
    args = ap.parse_args()
    if args.part in {"nodes", "all"}:
        part_nodes(args)
    if args.part in {"linear", "all"}:
        part_linear(args)
    if args.part in {"rest", "all"}:
        part_rest(args)


if __name__ == "__main__":
    main()
