"""Whether two source trees return the very same ``find()`` results on the quality sets:
same hits in the same order, same provenance, same collapsed hits, scores equal, the same
delivered text (each hit's ``slot_text``).

A speed change to the retriever or the store must not move a result. ``bench_tree.py``
compares aggregate metrics; this compares every result of every query.

    python bench/find_results_diff.py dump OUT.json --sets pytest,locomo   # with PYTHONPATH=tree A
    python bench/find_results_diff.py dump OUT2.json --sets pytest,locomo  # with PYTHONPATH=tree B
    python bench/find_results_diff.py diff OUT.json OUT2.json
    python bench/find_results_diff.py dump MANY.json --sets pytest,flask --many  # find_many
    python bench/find_results_diff.py diff OUT.json MANY.json    # find_many == find()

``dump`` indexes each set once under ``--index-root`` (reused by later dumps, so both trees
search the same index) and runs the dev and test samples (``--max-queries`` each) at limits
5 and 10 with the default config and four variants (leaves only, directories always, dense
only, no chunk collapsing). Needs ``TREEHOP_BENCH_CACHE`` as ``bench_tree.py`` does.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

VARIANTS: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("default", {}, {}),
    ("leaves", {"include_directories": False}, {}),
    ("dirs", {"include_directories": True}, {}),
    ("dense", {}, {"dense_weight": 1.0}),
    ("nocollapse", {"collapse_chunks": False}, {}),
]


def _row(res: Any) -> list[list[Any]]:
    """One result's hits as the dump holds them."""
    hits = [*res.resources, *res.memories, *res.skills]
    return [
        [
            m.uri,
            m.score,
            m.own_score,
            m.vector_score,
            str(m.found_by),
            m.found_via,
            [[c.uri, c.score] for c in m.collapsed],
            m.slot_text,  # (the text the hit delivers: its slot's passage or excerpt)
        ]
        for m in hits
    ]


def dump(
    out: Path, sets: list[str], index_root: Path, max_queries: int, many: bool = False
) -> None:
    import bench_tree as bt
    import datasets as ds
    from treehop import RetrievalConfig

    cached = ds.default_embedder()
    results: dict[str, Any] = {}
    for name in sets:
        bench = bt.load_set(name, cached)
        if bench is None:
            raise SystemExit(f"set {name} is not available here")
        emb = bt.MemoEmbedder(cached)
        path = index_root / name
        fresh = not path.exists()
        th = bt.Treehop(str(path), embedder=emb, config=RetrievalConfig())
        try:
            if fresh:
                bench.ingest(th)
                th.store.save()
            dev, test = bt.sampled_halves(bench.queries, max_queries)
            queries = dev + test
            emb.prepare([q.text for q in queries])
            for variant, kwargs, overrides in VARIANTS:
                saved = {k: getattr(th.config, k) for k in overrides}
                for k, v in overrides.items():
                    setattr(th.config, k, v)
                try:
                    if many:
                        _dump_many(th, name, variant, queries, kwargs, results)
                        continue
                    for q in queries:
                        for limit in (5, 10):
                            res = th.find(q.text, target_uri=q.scope, limit=limit, **kwargs)
                            results[f"{name}|{variant}|{q.qid}|{limit}"] = _row(res)
                finally:
                    for k, v in saved.items():
                        setattr(th.config, k, v)
        finally:
            th.close()
    out.write_text(json.dumps(results))
    print(f"{len(results)} results -> {out}")


def _dump_many(
    th: Any,
    name: str,
    variant: str,
    queries: list[Any],
    kwargs: dict[str, Any],
    results: dict[str, Any],
) -> None:
    """The same queries through ``find_many``: batches of up to 32 queries that share a
    scope, in their order (a dump to ``diff`` against a ``find()`` dump of the same tree)."""
    # the clients' default splits a batch over reader processes once they run (restarted
    # by each variant's config): waited for, so that the split is what is compared
    waited = th._wait_readers(120) if th._pool.processes else False
    served = sum(th._readers[1].served.values()) if waited and th._readers else 0
    for limit in (5, 10):
        by_scope: dict[Any, list[Any]] = {}
        for q in queries:
            by_scope.setdefault(q.scope, []).append(q)
        for group in by_scope.values():
            for lo in range(0, len(group), 32):
                part = group[lo : lo + 32]
                got = th.find_many(
                    [q.text for q in part], target_uri=part[0].scope, limit=limit, **kwargs
                )
                for q, res in zip(part, got, strict=True):
                    results[f"{name}|{variant}|{q.qid}|{limit}"] = _row(res)
    if waited and th._readers:
        done = sum(th._readers[1].served.values()) - served
        print(f"  {name} {variant}: {done} batch parts answered by reader processes")


def diff(a_path: Path, b_path: Path) -> int:
    a, b = json.loads(a_path.read_text()), json.loads(b_path.read_text())
    if a.keys() != b.keys():
        print("the dumps hold different queries")
        return 1
    differ, worst, texts, exact = 0, 0.0, 0, 0
    for key in a:
        x, y = a[key], b[key]
        exact += x == y  # (every field, scores to the float, delivered text)
        # (dumps made before the delivered text was dumped hold 7 fields a hit)
        texts += [r[7:] for r in x] != [r[7:] for r in y] and len(x) == len(y)
        same = [(r[0], r[4], r[5], [c[0] for c in r[6]]) for r in x] == [
            (r[0], r[4], r[5], [c[0] for c in r[6]]) for r in y
        ]
        if not same:
            differ += 1
            if differ <= 3:
                print(f"differs: {key}\n  {x[:3]}\n  {y[:3]}")
            continue
        for r, s in zip(x, y, strict=True):
            pairs = [(r[i], s[i]) for i in (1, 2, 3) if r[i] is not None or s[i] is not None]
            pairs += [(c[1], d[1]) for c, d in zip(r[6], s[6], strict=True)]
            for u, v in pairs:
                worst = max(worst, abs(u - v))
    print(f"{len(a)} results; {differ} differ in hits, order or provenance; ", end="")
    print(f"max |score diff| {worst}; {texts} differ in delivered text; {exact} identical")
    return 1 if differ or texts or worst > 1e-9 else 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump")
    d.add_argument("out", type=Path)
    d.add_argument("--sets", default="pytest,locomo")
    d.add_argument("--index-root", type=Path, default=Path("/tmp/find-results-diff"))
    d.add_argument("--max-queries", type=int, default=100)
    d.add_argument(
        "--many",
        action="store_true",
        help="answer through find_many (batches of up to 32 queries sharing a scope) "
        "instead of one find() each: diff the two dumps for find_many's identity",
    )
    c = sub.add_parser("diff")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    args = ap.parse_args()
    if args.cmd == "dump":
        dump(args.out, args.sets.split(","), args.index_root, args.max_queries, args.many)
    else:
        raise SystemExit(diff(args.a, args.b))


if __name__ == "__main__":
    main()
