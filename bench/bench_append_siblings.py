"""A write next to many siblings: how long one ``add_messages`` / ``add_resource`` takes when
the target's ancestors have many children, and where the time goes (helper ancestors).

Every write re-describes the directories above its target (``TreeWriter.refresh_ancestors``).
Before this helper each one was read with all its children: an append to a conversation of
3,000 sessions read 3,000 session nodes, one to one of 3,000 conversations read 3,000
conversation nodes (``viking://~/memories/conversations``), a file added to a folder of
10,000 files read 10,000 nodes. Three cases, each at several sizes:

- ``sessions``: one conversation of N sessions (2 turns each); the timed call appends one
  message to its last session.
- ``conversations``: N conversations of one session each; the timed call appends one message
  to the last conversation's session.
- ``files``: a folder of N small Markdown files (one ``add_resource`` of the directory); the
  timed call adds one more small file into the folder (``add_resource(path,
  target_uri=folder/new-i.md)``).

    OPENBLAS_NUM_THREADS=1 python bench/bench_append_siblings.py [--cases sessions,...]
        [--sizes 1,300,3000] [--files 1,1000,10000] [--repeat 15] [--tagger] [--keep DIR]
        [--phases] [--directory-vectors centroid]

``--keep DIR``: each built index is kept in ``DIR`` and the next run times the calls on a copy
of it (the build of 3,000 sessions by 3,000 appends took 382 s before this helper): two
checkouts are then timed on the same index. ``--phases``: the median time per timed call in
each store method (the writer runs them in worker threads, which cProfile of the caller does
not see) and in the embedder.

Prints per case and size: the build time, the timed call's p50 / p95 (ms), the median number
of nodes the store handed out per call (``get`` / ``children`` / ``children_head`` /
``children_fields`` / ``iter_nodes``, counted on the store object) and the median time spent in
``refresh_ancestors`` (the re-description of the ancestors) and ``route_directories``. BagOfWords
embedder (no model download); ``tagger=None`` unless ``--tagger`` (the default keyword tagger
reads the children's tags on its own: ``tagging.ingest._stored_auto_labels``).

Last, a hash of every directory node above the timed writes as stored after the last one (URI,
abstract, overview, content hash, metadata): the same on two checkouts means the same nodes
were written. Run with ``PYTHONPATH=/that/checkout/retrieval`` for the other one.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from bench_memory_append import counting
from treehop import Treehop

from treehop_test_doubles import BagOfWordsEmbedder

WORDS = [
    *("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india"),
    *("juliet", "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo"),
    *("sierra", "tango", "uniform", "victor", "whiskey", "xray", "yankee", "zulu"),
]


def _line(i: int) -> str:
    """A short synthetic sentence, different per ``i``."""
    w = [WORDS[(i * k + k) % len(WORDS)] for k in (1, 3, 7, 11, 13)]
    return f"Message {i} about {' '.join(w)}."


def _msgs(i: int, n: int = 1) -> list[dict[str, str]]:
    return [
        {"role": "user" if j % 2 == 0 else "assistant", "content": _line(i * 7 + j)}
        for j in range(n)
    ]


def timed_wrapper(obj: Any, name: str, acc: list[float]) -> None:
    """Add the wall time of every call of the coroutine method ``obj.name`` to ``acc[0]``."""
    orig: Callable[..., Awaitable[Any]] = getattr(obj, name)

    async def call(*a: Any, **k: Any) -> Any:
        t = time.perf_counter()
        try:
            return await orig(*a, **k)
        finally:
            acc[0] += time.perf_counter() - t

    setattr(obj, name, call)


STORE_METHODS = (
    "upsert",
    "delete",
    "get",
    "children",
    "children_head",
    "children_fields",
    "family_state",
    "family_since",
    "update_tags",
    "update_nodes",
    "get_vectors",
    "save",
    "refresh",
)


def timed_sync(obj: Any, name: str, acc: list[float]) -> None:
    """Add the wall time of every call of ``obj.name`` to ``acc[0]`` (any thread)."""
    orig: Callable[..., Any] = getattr(obj, name)

    def call(*a: Any, **k: Any) -> Any:
        t = time.perf_counter()
        try:
            return orig(*a, **k)
        finally:
            acc[0] += time.perf_counter() - t

    setattr(obj, name, call)


def dirs_hash(c: Treehop, uris: list[str]) -> str:
    """The stored directory nodes ``uris`` (text, hash, metadata), hashed."""
    h = hashlib.sha256()
    for u, n in zip(uris, c.store.get(uris), strict=True):
        if n is None:
            h.update(f"{u}|missing".encode())
            continue
        h.update(f"{n.uri}|{n.abstract}|{n.overview}|{n.content_hash}|".encode())
        h.update(json.dumps(n.metadata, sort_keys=True, default=str).encode())
    return h.hexdigest()[:16]


VECTORS = ["summary"]
"""``--directory-vectors``: the client's ``directory_vectors`` (``centroid`` / ``mixed``: every
write also gives the directories above it the centroid of their children's vectors)."""


def client(idx: Path, tagger: bool) -> Treehop:
    return Treehop(
        idx,
        embedder=BagOfWordsEmbedder(),
        tagger="auto" if tagger else None,
        directory_vectors=VECTORS[0],
    )


def build(case: str, n: int, idx: Path, work: Path, tagger: bool) -> float:
    """Write the case's index of size ``n`` at ``idx``; returns the seconds it took."""
    t0 = time.perf_counter()
    c = client(idx, tagger)
    try:
        if case == "sessions":
            for i in range(n):
                c.add_messages(_msgs(i, 2), conversation_id="c1", session_id=f"s{i:05d}")
        elif case == "conversations":
            for i in range(n):
                c.add_messages(_msgs(i, 2), conversation_id=f"c{i:05d}", session_id="s1")
        elif case == "files":
            src = work / "folder"
            src.mkdir()
            for i in range(n):
                (src / f"file-{i:05d}.md").write_text(
                    f"# File {i}\n\n{_line(i)} {_line(i + 1)}\n", encoding="utf-8"
                )
            c.add_resource(src, target_uri="viking://resources/folder")
        else:
            raise SystemExit(f"unknown case {case}")
    finally:
        c.close()
    return time.perf_counter() - t0


def run(
    case: str, n: int, repeat: int, tagger: bool, keep: Path | None, phases: bool
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as d:
        work = Path(d)
        build_s = 0.0
        tail = ("-tagger" if tagger else "") + ("" if VECTORS[0] == "summary" else f"-{VECTORS[0]}")
        kept = keep / f"{case}-{n}{tail}" if keep is not None else None
        if kept is not None and kept.exists():
            shutil.copytree(kept, work / "idx")
        else:
            build_s = build(case, n, work / "idx", work, tagger)
            if kept is not None:
                shutil.copytree(work / "idx", kept)
        c = client(work / "idx", tagger)
        try:
            if case == "sessions":
                last = f"s{n - 1:05d}"

                def call(i: int) -> Any:
                    return c.add_messages(_msgs(n + i), conversation_id="c1", session_id=last)

                above = [
                    "viking://~/memories/conversations/c1",
                    "viking://~/memories/conversations",
                ]
            elif case == "conversations":
                conv = f"c{n - 1:05d}"

                def call(i: int) -> Any:
                    return c.add_messages(_msgs(n + i), conversation_id=conv, session_id="s1")

                above = [
                    f"viking://~/memories/conversations/{conv}",
                    "viking://~/memories/conversations",
                ]
            else:
                new = work / "new"
                new.mkdir()

                def call(i: int) -> Any:
                    p = new / f"new-{i:03d}.md"
                    p.write_text(f"# New {i}\n\n{_line(10**6 + i)}\n", encoding="utf-8")
                    return c.add_resource(p, target_uri=f"viking://resources/folder/new-{i:03d}.md")

                above = ["viking://resources/folder", "viking://resources"]
            refresh, route = [0.0], [0.0]
            timed_wrapper(c.aio.writer, "refresh_ancestors", refresh)
            timed_wrapper(c.aio.writer, "route_directories", route)
            read = counting(c.store)
            head = getattr(c.store, "children_head", None)
            if head is not None:  # (this helper's bounded read; counted as ``children``)
                heads = [0]

                def counted_head(uri: str, k: int) -> Any:
                    out = head(uri, k)
                    heads[0] += len(out)
                    return out

                c.store.children_head = counted_head  # type: ignore[attr-defined]
                read_others = read

                def read() -> int:
                    return int(read_others()) + heads[0]

            times: list[float] = []
            nodes: list[int] = []
            t_refresh: list[float] = []
            t_route: list[float] = []
            spent: dict[str, list[float]] = {}
            if phases:
                for name in STORE_METHODS:
                    if getattr(c.store, name, None) is not None:
                        spent[name] = [0.0]
                        timed_sync(c.store, name, spent[name])
                spent["embed"] = [0.0]
                timed_wrapper(c.aio.writer.embedder, "aembed", spent["embed"])
                # the tagger's read of a directory's stored children's tags (module function)
                from treehop.tagging import ingest as tag_ingest

                spent["_stored_auto_labels"] = [0.0]
                timed_sync(tag_ingest, "_stored_auto_labels", spent["_stored_auto_labels"])
            per_call: dict[str, list[float]] = {k: [] for k in spent}
            for i in range(repeat + 1):
                before, r0, q0 = read(), refresh[0], route[0]
                marks = {k: v[0] for k, v in spent.items()}
                t1 = time.perf_counter()
                call(i)
                dt = time.perf_counter() - t1
                if i:  # the first is a warm-up
                    times.append(dt)
                    nodes.append(read() - before)
                    t_refresh.append(refresh[0] - r0)
                    t_route.append(route[0] - q0)
                    for k, v in spent.items():
                        per_call[k].append(v[0] - marks[k])
            if per_call:
                med = {k: 1000 * statistics.median(v) for k, v in per_call.items()}
                shown = [f"{k} {v:.1f}" for k, v in sorted(med.items(), key=lambda kv: -kv[1])]
                print(f"  {case} {n}: ms per call (median) in " + ", ".join(shown[:8]))
            ts = sorted(times)
            return {
                "case": case,
                "n": n,
                "build_s": build_s,
                "p50": 1000 * statistics.median(ts),
                "p95": 1000 * ts[min(len(ts) - 1, int(0.95 * len(ts)))],
                "nodes": statistics.median(nodes),
                "refresh": 1000 * statistics.median(t_refresh),
                "route": 1000 * statistics.median(t_route),
                "hash": dirs_hash(c, [c.aio.resolve(u) for u in above]),
            }
        finally:
            c.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default="sessions,conversations,files")
    ap.add_argument("--sizes", default="1,300,3000", help="sessions / conversations")
    ap.add_argument("--files", default="1,1000,10000", help="files in the folder")
    ap.add_argument("--repeat", type=int, default=15, help="timed calls per size")
    ap.add_argument("--tagger", action="store_true", help="the default keyword tagger")
    ap.add_argument(
        "--keep",
        type=Path,
        help="keep each built index in this folder and reuse it (copied) on the next run",
    )
    ap.add_argument("--directory-vectors", default="summary", help="summary, centroid, mixed")
    ap.add_argument("--phases", action="store_true", help="time per store method")
    args = ap.parse_args()
    VECTORS[0] = args.directory_vectors
    for case in args.cases.split(","):
        sizes = args.files if case == "files" else args.sizes
        for n in (int(x) for x in sizes.split(",")):
            r = run(case, n, args.repeat, args.tagger, args.keep, args.phases)
            print(
                f"{r['case']:<13} {r['n']:>6,}  build {r['build_s']:6.1f} s  "
                f"p50 {r['p50']:7.1f} ms p95 {r['p95']:7.1f} ms  nodes read {r['nodes']:>6,.0f}  "
                f"refresh_ancestors {r['refresh']:6.1f} ms  route {r['route']:5.1f} ms  "
                f"dirs {r['hash']}",
                flush=True,
            )


if __name__ == "__main__":
    main()
