"""What one LangGraph ``TreehopStore.put`` costs, by namespace size (helper storeput).

An agent that writes a memory each turn calls ``store.put(namespace, key, value)`` once per
memory. ``InMemoryStore`` answers in microseconds; a put into treehop embeds the item and
re-describes the namespace's directory (its abstract and overview, built from its first
children in URI order, and that text's vector when it changed). This prints, for each client
(``memory``: ``Treehop()``, the embedded store in memory; ``disk``: ``Treehop(tmpdir)``), each
size N of the namespace before the timed puts (filled by one ``batch`` of N ``PutOp``), each
``index`` (``on``: the default fields, ``off``: ``index=False``) and each order of the new
keys against the stored ones, the p50 / p90 (ms) of ``--repeat`` single puts, and how many
texts the embedder was asked for per put (the item's, the directory's).

Key orders: ``first`` (the new key sorts before every stored one, so its line lands at the
head of the directory's overview: the worst case, which usage56 measured), ``last`` (after
every stored one: a new line past the overview's 1,800-character cut, when the namespace is
past ~50 items, leaves the directory's text unchanged), ``uuid`` (random ``uuid4`` keys, what
LangGraph's memory tools use).

    OPENBLAS_NUM_THREADS=1 python bench/bench_store_put.py [--stores memory,disk]
        [--sizes 0,200,1000] [--index on,off] [--orders first,uuid,last] [--repeat 10]
        [--profile] [--deep-retag-copy]

Each line also gives the median number of texts the embedder was asked for per put and the
median time per put in each stage of the write (``TreeWriter`` methods: ``apply_tags`` (the
keyword tagger), ``embed_nodes`` (the item's vector), ``refresh_ancestors`` (the re-description
of the directories above, with their embedding when their text changed), ``finish`` (with
``retag_sync``: the whole-index re-tag below ``retag_all_below`` nodes, and the save)).
``--profile``: after each line, a cProfile of the
``--repeat`` puts run on an ``AsyncTreehop`` in this thread (the sync client runs its work on a
loop thread that cProfile of the caller does not see), with the store's worker-thread calls
run inline so they appear in it.

``--count-texts P``: no timing; for each size, ``P`` puts with random uuid4 keys after the
fill, with the tests' bag-of-words embedder and no tagger (fast), and how many puts embedded
1, 2, 3 texts (the item; its namespace directory; the directory above it), plus the lines in
the namespace's overview (helper store57).

``--deep-retag-copy``: the whole-index re-tag copies each stored node with
``model_copy(deep=True)``, as before c140b3f (run both in turn for an A/B).

Default offline embedder (MiniLM); ``TREEHOP_BENCH_CACHE`` is not used (a cache would hide
the embedding cost being measured).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import pstats
import random
import statistics
import tempfile
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from langgraph.store.base import PutOp

from langchain_treehop import TreehopStore
from treehop import AsyncTreehop, Treehop
from treehop.ingest import writer as writer_mod
from treehop.ingest.writer import TreeWriter

NAMESPACE = ("users", "u1", "memories")


def _value(i: int) -> dict[str, Any]:
    return {"text": f"the user mentioned fact number {i}: likes topic {i % 17} on day {i % 7}"}


def _uuid4(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _keys(order: str, repeat: int, rng: random.Random) -> list[str]:
    """New keys for the timed puts (the stored ones: :func:`_fill`)."""
    if order == "first":
        return [f"a{i:06d}" for i in range(repeat)]
    if order == "last":
        return [f"z{i:06d}" for i in range(repeat)]
    return [_uuid4(rng) for _ in range(repeat)]


def _fill(n: int, order: str, rng: random.Random) -> list[PutOp]:
    """``n`` stored items: keys ``m000000``... (between ``first``'s and ``last``'s), or
    random uuid4 keys for ``uuid`` (seeded: the same keys on every run)."""
    keys = [_uuid4(rng) if order == "uuid" else f"m{i:06d}" for i in range(n)]
    return [PutOp(NAMESPACE, k, _value(i)) for i, k in enumerate(keys)]


class _Stages:
    """Wall time per stage of the writer's puts, by wrapping the writer's methods on the
    instance (the sync client runs them on its loop thread: a caller's cProfile misses them)."""

    def __init__(self) -> None:
        self.ms: dict[str, list[float]] = defaultdict(list)
        self.texts: list[int] = []
        self._now: dict[str, float] = defaultdict(float)

    def wrap(self, writer: TreeWriter) -> None:
        def timed(name: str, fn: Callable[..., Any], is_async: bool) -> Callable[..., Any]:
            if is_async:

                async def aw(*a: Any, **k: Any) -> Any:
                    t = time.perf_counter()
                    try:
                        return await fn(*a, **k)
                    finally:
                        self._now[name] += (time.perf_counter() - t) * 1000

                return aw

            def w(*a: Any, **k: Any) -> Any:
                t = time.perf_counter()
                try:
                    return fn(*a, **k)
                finally:
                    self._now[name] += (time.perf_counter() - t) * 1000

            return w

        for name, is_async in (
            ("apply_tags", False),
            ("embed_nodes", True),
            ("refresh_ancestors", True),
            ("finish", True),
            ("retag_sync", False),
        ):
            setattr(writer, name, timed(name, getattr(writer, name), is_async))
        emb = writer.embedder
        inner = emb.aembed

        async def counted(texts: Any) -> Any:
            self._now["#texts"] += len(texts)
            return await inner(texts)

        emb.aembed = counted  # type: ignore[method-assign]

    @contextmanager
    def put(self) -> Iterator[None]:
        self._now.clear()
        yield
        for k in ("apply_tags", "embed_nodes", "refresh_ancestors", "finish", "retag_sync"):
            self.ms[k].append(self._now.get(k, 0.0))
        self.texts.append(int(self._now.get("#texts", 0)))


def _client(kind: str) -> Treehop:
    return Treehop(tempfile.mkdtemp(prefix="storeput-") if kind == "disk" else None)


def run_one(kind: str, n: int, index: str, order: str, repeat: int, stages: bool) -> dict[str, Any]:
    rng = random.Random(f"{n}-{order}")
    th = _client(kind)
    try:
        store = TreehopStore(th)
        store.put(("warm",), "warm", {"text": "warm up the embedder"})
        if n:
            store.batch(_fill(n, order, rng))
        st = _Stages()
        if stages:
            st.wrap(th._async.writer)
        idx: Any = False if index == "off" else None
        ts: list[float] = []
        for i, key in enumerate(_keys(order, repeat, rng)):
            with st.put():
                t = time.perf_counter()
                store.put(NAMESPACE, key, _value(10**6 + i), index=idx)
                ts.append((time.perf_counter() - t) * 1000)
        qs = statistics.quantiles(ts, n=10) if len(ts) > 1 else [ts[0]] * 9
        out: dict[str, Any] = {
            "p50": statistics.median(ts),
            "p90": qs[8],
        }
        if stages:
            out["stages"] = {k: statistics.median(v) for k, v in st.ms.items()}
            out["texts"] = statistics.median(st.texts)
        return out
    finally:
        th.close()


def profile_one(kind: str, n: int, index: str, order: str, repeat: int) -> str:
    """cProfile of ``repeat`` puts on an :class:`AsyncTreehop` in this thread."""

    rng = random.Random(f"{n}-{order}")

    async def inline(fn: Callable[..., Any], /, *a: Any, **k: Any) -> Any:
        return fn(*a, **k)

    real = asyncio.to_thread
    asyncio.to_thread = inline
    try:

        async def go() -> str:
            th = AsyncTreehop(tempfile.mkdtemp(prefix="storeput-") if kind == "disk" else None)
            try:
                store = TreehopStore(th)
                await store.aput(("warm",), "warm", {"text": "warm up the embedder"})
                if n:
                    await store.abatch(_fill(n, order, rng))
                idx: Any = False if index == "off" else None
                pr = cProfile.Profile()
                pr.enable()
                for i, key in enumerate(_keys(order, repeat, rng)):
                    await store.aput(NAMESPACE, key, _value(10**6 + i), index=idx)
                pr.disable()
                buf = io.StringIO()
                pstats.Stats(pr, stream=buf).sort_stats("cumulative").print_stats(30)
                return buf.getvalue()
            finally:
                await th.close()

        return asyncio.run(go())
    finally:
        asyncio.to_thread = real


def count_texts(sizes: list[int], puts: int) -> None:
    """``--count-texts``: texts embedded per uuid4 put, counted (see the module docstring)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from treehop_test_doubles import BagOfWordsEmbedder

    rng = random.Random(5)
    for n in sizes:
        emb = BagOfWordsEmbedder()
        th = Treehop(None, embedder=emb, tagger=None)
        try:
            store = TreehopStore(th)
            store.batch([PutOp(NAMESPACE, _uuid4(rng), _value(i)) for i in range(n)])
            hist: dict[int, int] = defaultdict(int)
            for j in range(puts):
                before = emb.texts_embedded
                store.put(NAMESPACE, _uuid4(rng), _value(10**6 + j))
                hist[int(emb.texts_embedded - before)] += 1
            d = th.store.get([store.namespace_uri(NAMESPACE)])[0]
            lines = d.overview.count("\n- ") if d is not None else 0
            print(f"N={n:5d} puts by texts embedded {dict(sorted(hist.items()))}  lines {lines}")
        finally:
            th.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--stores", default="memory,disk")
    ap.add_argument("--sizes", default="0,200,1000")
    ap.add_argument("--index", default="on,off")
    ap.add_argument("--orders", default="first,uuid,last")
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument(
        "--deep-retag-copy",
        action="store_true",
        help="re-tag deep copies of the stored nodes, as before the lead's c140b3f (an A/B)",
    )
    ap.add_argument("--count-texts", type=int, default=0, metavar="P")
    args = ap.parse_args()
    if args.count_texts:
        count_texts([int(x) for x in args.sizes.split(",")], args.count_texts)
        return
    if args.deep_retag_copy:
        writer_mod._own_tags = lambda node: node.model_copy(deep=True)
    print(
        f"{'store':7s} {'N':>5s} {'index':5s} {'order':6s} {'p50 ms':>8s} {'p90 ms':>8s}"
        + "  texts  stages (median ms per put)"
    )
    for kind in args.stores.split(","):
        for n in (int(x) for x in args.sizes.split(",")):
            for index in args.index.split(","):
                for order in args.orders.split(","):
                    r = run_one(kind, n, index, order, args.repeat, True)
                    line = f"{kind:7s} {n:5d} {index:5s} {order:6s} {r['p50']:8.1f} {r['p90']:8.1f}"
                    stg = " ".join(f"{k}={v:.1f}" for k, v in r["stages"].items())
                    line += f"  {r['texts']:5.1f}  {stg}"
                    print(line, flush=True)
                    if args.profile:
                        print(profile_one(kind, n, index, order, args.repeat), flush=True)


if __name__ == "__main__":
    main()
