"""Numbers of bench/README.md "Leftovers, stop 61 (helper leftovers61)": the shown-key
rewrite's size (objects, levels) and the most `source` / `file_name` leaves an `$or` may
hold before the DSL's bounds refuse it, and the cost of an in-memory rollback.

    python bench/leftovers61_numbers.py
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from treehop.errors import InvalidFilterError
from treehop.filters import MAX_FILTER_NODES, ShownField, show_fields
from treehop.models import ContextType, Node
from treehop.stores.embedded import EmbeddedStore

SOURCE = ShownField("source", over=("source",), fallback="source_path", when="source_path")
_FILE = ("file_name", "file_path")
LI = (
    ShownField("file_name", over=_FILE, fallback="name", when="source_path"),
    ShownField("file_path", over=_FILE, fallback="source_path", when="source_path"),
)


def size(spec: Any) -> tuple[int, int]:
    if spec.get("op") in {"and", "or"}:
        parts = [size(c) for c in spec["conds"]]
        return 1 + sum(p[0] for p in parts), 1 + max(p[1] for p in parts)
    return 1, 1


def ors(key: str, n: int) -> dict[str, Any]:
    return {
        "op": "or",
        "conds": [{"op": "must", "field": key, "conds": [f"x{i}"]} for i in range(n)],
    }


def per_leaf(spec: Any, shown: Any) -> Any:
    by_key = {s.key: s for s in shown}
    if spec.get("op") in {"and", "or"}:
        return {**spec, "conds": [per_leaf(c, shown) for c in spec["conds"]]}
    f = by_key.get(spec.get("field"))
    return spec if f is None else f.rewrite(spec)


def most_leaves(key: str, shown: Any, rewrite: Any) -> int:
    lo, hi = 1, MAX_FILTER_NODES - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        ok = size(rewrite(ors(key, mid), shown))[0] <= MAX_FILTER_NODES
        lo, hi = (mid, hi) if ok else (lo, mid - 1)
    return lo


def main() -> None:
    for key, shown in (("source", (SOURCE,)), ("file_name", LI)):
        for n in (1, 84, 300):
            old, new = size(per_leaf(ors(key, n), shown)), size(show_fields(ors(key, n), shown))
            print(
                f"{key:9} {n:3} leaves: per-leaf {old[0]:5} objects {old[1]} levels; "
                f"per-case {new[0]:4} objects {new[1]} levels"
            )
        before = most_leaves(key, shown, per_leaf)
        after = most_leaves(key, shown, lambda s, f: _safe(s, f))
        print(f"{key:9} most leaves in an $or: per-leaf {before}, per-case {after}")
    rows, dim = 100_000, 64
    rng = np.random.default_rng(0)
    store = EmbeddedStore(ann_min_rows=None)
    nodes = [
        Node(
            uri=f"viking://resources/d/n{i}.md",
            parent_uri="viking://resources/d",
            context_type=ContextType.RESOURCE,
            level=2,
            is_leaf=True,
            abstract=f"n{i}",
            content=f"note {i} about w{i % 97}",
        )
        for i in range(rows)
    ]
    vecs = rng.standard_normal((rows, dim)).astype(np.float32)
    store.upsert(nodes, vecs)
    store.save()
    for label, n in (("100 new rows + 100 deleted", 100), ("10,000 new rows", 10_000)):
        store.upsert([x.model_copy(update={"uri": x.uri + ".x"}) for x in nodes[:n]], vecs[:n])
        if n == 100:
            store.delete([x.uri for x in nodes[200:300]])
        t = time.perf_counter()
        store.discard_unsaved()
        ms = (time.perf_counter() - t) * 1000
        print(
            f"in-memory discard_unsaved at {rows:,} rows, {label}: {ms:.1f} ms (len {len(store):,})"
        )


def _safe(spec: Any, shown: Any) -> Any:
    try:
        return show_fields(spec, shown)
    except InvalidFilterError:
        return {"op": "or", "conds": [{"op": "empty", "field": "x"}] * (MAX_FILTER_NODES + 1)}


if __name__ == "__main__":
    main()
