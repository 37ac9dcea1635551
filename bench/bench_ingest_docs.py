"""Ingest throughput on a real documentation site, by stage, with the default embedder.

Takes a directory (e.g. Debian's PostgreSQL 15 HTML documentation, 1,169 pages)::

    cd /tmp && apt-get download postgresql-doc-15 && dpkg -x postgresql-doc-15_*.deb pgdoc
    python bench/bench_ingest_docs.py /tmp/pgdoc/usr/share/doc/postgresql-doc-15/html \\
        --files 150

``--files N`` ingests an evenly spaced sample of N files (every k-th file in name order,
copied to a temporary folder), so a loaded machine can measure a part and extrapolate: the
table gives each stage's wall and process-CPU seconds, per node and scaled to the whole
directory by its node count (estimated from the sample's nodes per byte). Stages (each timed
where the writer calls it; they run one after another):

* ``read+parse``: scanning, reading, decoding, HTML to Markdown (``TreeWriter._plan``);
* ``chunk``: splitting files into section-aware chunks (``split_text``);
* ``summarise``: the rest of building the tree (abstracts, overviews, nodes);
* ``tag``: automatic keywords (``TreeWriter.apply_tags``; part of it may run in a second
  process, whose CPU is not counted here, only its wall time);
* ``embed``: the embedder's ``embed`` calls (onnxruntime's threads are this process's CPU);
* ``write``: everything else (store upserts and saves, manifest, directory summaries).

Then the same directory is added again unchanged (``re-index``: change detection only).

``--compare`` also embeds the sample's chunk texts with the embedder's other settings side by
side, interleaved (A/B/A/B), and says whether another runtime of the same model is installed:
``fastembed`` (onnxruntime, its own tokenizer pipeline) or ``sentence-transformers`` (torch).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "retrieval"))

from treehop import Treehop
from treehop.embedders.local_minilm import MiniLMEmbedder
from treehop.ingest import tree_builder, writer

STAGES = ("read+parse", "chunk", "summarise", "tag", "embed", "write")


class Meter:
    """Wall and process-CPU seconds per stage; nested stages are subtracted from their
    enclosing one (chunking runs inside the tree build)."""

    def __init__(self) -> None:
        self.wall: dict[str, float] = dict.fromkeys(STAGES, 0.0)
        self.cpu: dict[str, float] = dict.fromkeys(STAGES, 0.0)
        self.calls: dict[str, int] = dict.fromkeys(STAGES, 0)
        self._stack: list[list[float]] = []

    @contextlib.contextmanager
    def stage(self, name: str) -> Iterator[None]:
        w0, c0 = time.perf_counter(), time.process_time()
        inner = [0.0, 0.0]
        self._stack.append(inner)
        try:
            yield
        finally:
            self._stack.pop()
            dw, dc = time.perf_counter() - w0, time.process_time() - c0
            self.wall[name] += dw - inner[0]
            self.cpu[name] += dc - inner[1]
            self.calls[name] += 1
            if self._stack:
                self._stack[-1][0] += dw
                self._stack[-1][1] += dc

    def wrap(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            with self.stage(name):
                return fn(*args, **kwargs)

        return timed


@contextlib.contextmanager
def instrumented(meter: Meter, emb: Any) -> Iterator[None]:
    """Time the writer's stages by wrapping the functions it calls (restored after)."""
    saved = [
        (writer.TreeWriter, "_plan", writer.TreeWriter._plan),
        (writer.TreeWriter, "apply_tags", writer.TreeWriter.apply_tags),
        (tree_builder.TreeBuilder, "build_tree", tree_builder.TreeBuilder.build_tree),
        (tree_builder, "split_text", tree_builder.split_text),
    ]
    writer.TreeWriter._plan = meter.wrap("read+parse", writer.TreeWriter._plan)  # type: ignore[method-assign]
    writer.TreeWriter.apply_tags = meter.wrap("tag", writer.TreeWriter.apply_tags)  # type: ignore[method-assign]
    tree_builder.TreeBuilder.build_tree = meter.wrap(  # type: ignore[method-assign]
        "summarise", tree_builder.TreeBuilder.build_tree
    )
    tree_builder.split_text = meter.wrap("chunk", tree_builder.split_text)
    emb_embed = emb.embed
    emb.embed = meter.wrap("embed", emb_embed)  # type: ignore[method-assign]
    try:
        yield
    finally:
        for owner, name, fn in saved:
            setattr(owner, name, fn)
        emb.embed = emb_embed  # type: ignore[method-assign]


def sample(src: Path, n: int | None, dest: Path) -> tuple[Path, int, int]:
    """Every k-th file of ``src`` (top level, name order) copied to ``dest``; the whole
    directory's file count and bytes are returned for the extrapolation."""
    files = sorted(p for p in src.iterdir() if p.is_file())
    total_bytes = sum(p.stat().st_size for p in files)
    if n is None or n >= len(files):
        return src, len(files), total_bytes
    step = len(files) / n
    dest.mkdir(parents=True)
    for i in range(n):
        f = files[int(i * step)]
        shutil.copy2(f, dest / f.name)
    return dest, len(files), total_bytes


def run_ingest(folder: Path, index: Path, emb: Any) -> tuple[Meter, Any, float]:
    meter = Meter()
    with instrumented(meter, emb), Treehop(index, embedder=emb) as client:
        t0 = time.perf_counter()
        c0 = time.process_time()
        res = client.add_resource(folder, target_uri="viking://resources/docs")
        wall = time.perf_counter() - t0
        cpu = time.process_time() - c0
    named_wall = sum(meter.wall[s] for s in STAGES if s != "write")
    named_cpu = sum(meter.cpu[s] for s in STAGES if s != "write")
    meter.wall["write"] = max(0.0, wall - named_wall)
    meter.cpu["write"] = max(0.0, cpu - named_cpu)
    return meter, res, wall


class _Unsorted(MiniLMEmbedder):
    """Batches of 32 in the order given, each padded to its longest member: what the
    embedder did before it sorted by length (the padding waste it avoids)."""

    def embed(self, texts: Sequence[str]) -> Any:
        return self._unsorted(list(texts)) if texts else np.zeros((0, 384), np.float32)

    def _unsorted(self, texts: list[str]) -> Any:
        self._ensure_loaded()
        ids = self._encode(texts)
        out = []
        for i in range(0, len(texts), 32):
            part = ids[i : i + 32]
            lengths = np.asarray([len(x) for x in part], np.int64)
            out.append(self._run_batch(part, lengths))
        return np.vstack(out)


def compare(texts: list[str], rounds: int) -> None:
    """The embedder's settings side by side on the same texts (interleaved)."""
    cpus = len(os.sched_getaffinity(0))
    variants: dict[str, MiniLMEmbedder] = {
        "default": MiniLMEmbedder(),
        "unsorted batches of 32 (file order)": _Unsorted(),
        f"intra_op_threads=1 (of {cpus})": MiniLMEmbedder(intra_op_threads=1),
        f"intra_op_threads={2 * cpus}": MiniLMEmbedder(intra_op_threads=2 * cpus),
    }
    for e in variants.values():
        e.embed(texts[:4])  # load
    times: dict[str, list[float]] = {k: [] for k in variants}
    for _ in range(rounds):
        for k, e in variants.items():
            t0 = time.perf_counter()
            e.embed(texts)
            times[k].append(time.perf_counter() - t0)
    base = statistics.median(times["default"])
    print(f"\nembedder settings, {len(texts)} chunk texts, median of {rounds} interleaved runs:")
    for k, ts in times.items():
        m = statistics.median(ts)
        print(f"  {k:<46} {m:7.2f} s  {len(texts) / m:7.1f} texts/s  x{m / base:.2f}")
    others = [m for m in ("fastembed", "sentence_transformers") if importlib.util.find_spec(m)]
    if others:
        print(f"  other runtimes installed: {', '.join(others)} (not compared by this script)")
    else:
        print(
            "  other runtimes of the same model: none installed (fastembed, "
            "sentence-transformers); not compared"
        )


def _hashing() -> Any:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_ingest import HashingEmbedder

    return HashingEmbedder()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("dir", type=Path, help="a documentation directory (HTML, Markdown, ...)")
    ap.add_argument("--files", type=int, help="ingest an evenly spaced sample of N files")
    ap.add_argument("--compare", action="store_true", help="embedder settings side by side")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of --compare (default 3)")
    ap.add_argument(
        "--compare-texts", type=int, default=200, help="chunk texts --compare embeds (200)"
    )
    ap.add_argument("--keep", type=Path, help="keep the index here (default: a temp folder)")
    ap.add_argument(
        "--embedder",
        choices=["minilm", "hash"],
        default="minilm",
        help="hash: bench_ingest.py's hashing embedder instead of the model, to time every "
        "other stage and the unchanged re-index of a whole site quickly",
    )
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder, n_all, bytes_all = sample(a.dir, a.files, Path(tmp) / "sample")
        n_files = sum(1 for p in folder.iterdir() if p.is_file())
        n_bytes = sum(p.stat().st_size for p in folder.iterdir() if p.is_file())
        index = a.keep or Path(tmp) / "index"
        make = MiniLMEmbedder if a.embedder == "minilm" else _hashing
        emb = make()
        meter, res, wall = run_ingest(folder, index, emb)
        nodes = res.embedded
        scale = bytes_all / max(n_bytes, 1)
        print(
            f"ingest of {n_files} of {n_all} files ({n_bytes / 1e6:.1f} of "
            f"{bytes_all / 1e6:.1f} MB) from {a.dir}: {res.files} files, {res.chunks} chunks, "
            f"{nodes} nodes embedded, {wall:.1f} s wall, {nodes / wall:.1f} nodes/s "
            f"(load average {os.getloadavg()[0]:.1f}, {len(os.sched_getaffinity(0))} CPUs, "
            f"embedder {a.embedder})"
        )
        print(f"\n{'stage':<11} {'wall s':>8} {'CPU s':>8} {'CPU ms/node':>12} {'x whole dir':>12}")
        for s in STAGES:
            per = 1000 * meter.cpu[s] / max(nodes, 1)
            print(
                f"{s:<11} {meter.wall[s]:8.1f} {meter.cpu[s]:8.1f} {per:12.2f} "
                f"{meter.cpu[s] * scale:10.0f} s"
            )
        tot_cpu = sum(meter.cpu.values())
        print(
            f"{'total':<11} {wall:8.1f} {tot_cpu:8.1f} {1000 * tot_cpu / max(nodes, 1):12.2f} "
            f"{tot_cpu * scale:10.0f} s"
        )
        print(
            f"\nwhole directory (x{scale:.1f} by bytes): ~{nodes * scale:,.0f} nodes, "
            f"~{tot_cpu * scale:,.0f} CPU-s; on 2 idle cores at most that wall time, at least "
            f"half of it (embedding uses both cores, the rest mostly one)"
        )
        emb2 = make()
        with Treehop(index, embedder=emb2) as client:
            t0 = time.perf_counter()
            again = client.add_resource(folder, target_uri="viking://resources/docs")
            w2 = time.perf_counter() - t0
        print(
            f"re-index unchanged: {w2:.2f} s ({again.read} files read, {again.embedded} "
            f"embedded, {again.unchanged} unchanged)"
        )
        if a.compare and a.embedder == "minilm":
            with Treehop(index, embedder=emb2) as client:
                texts = [n.embedding_text() for n in client.store.iter_nodes() if n.is_leaf]
            compare(texts[: a.compare_texts], a.rounds)


if __name__ == "__main__":
    main()
