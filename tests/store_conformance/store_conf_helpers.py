"""Shared data and helpers of the store conformance suite (a uniquely named module, so that
test files never import a ``conftest`` that another test directory may shadow).

``StoreFactory`` makes stores of one engine; calling it twice with the same ``name`` reopens the
same index (a new store object over the same data), which is how persistence is tested.
``TREE`` is a small tree with a sibling-prefix pair (``a`` / ``ab``), a chunked file, a URI with
quotes and a backslash, list-valued and mistyped metadata, and tags of every source; its vectors
are seeded random unit vectors, so exact cosine has no ties and :func:`oracle` is the answer.
"""

from __future__ import annotations

import functools
import re
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from treehop.models import ContextType, Node
from treehop.stores.base import ScoredNode, VectorStore
from treehop.stores.embedded import EmbeddedStore
from treehop.uri import ancestors_of, parent_of

STORES = ["embedded", "milvus", "vikingdb", "recipe"]
"""``recipe`` is the example store of ``docs/extending.md`` ("A store"), loaded from the page:
the recipe a newcomer copies is held to the same contract as the shipped engines."""
DOCS_EXTENDING = Path(__file__).resolve().parents[2] / "docs" / "extending.md"
R = "viking://resources"
VIKINGDB_AK = "AKLTconformance"
VIKINGDB_SK = "conformance-secret"


class StoreFactory:
    """Makes stores of one engine; ``factory(name)`` twice opens the same index twice."""

    def __init__(
        self, kind: str, tmp: Path, milvus_client: Any = None, vikingdb: Any = None, dim: int = 16
    ) -> None:
        self.kind = kind
        self._tmp = tmp
        self._client = milvus_client
        self._vikingdb = vikingdb
        self._dim = dim
        self._prefix = "t" + uuid.uuid4().hex[:12]
        self._count = 0

    def __call__(
        self, name: str | None = None, *, dim: int | None = None, **kwargs: Any
    ) -> VectorStore:
        """A store named ``name`` (a new one when omitted); ``dim`` matters only to engines
        whose collections have a fixed dimension (VikingDB)."""
        if name is None:
            self._count += 1
            name = f"s{self._count}"
        if self.kind == "embedded":
            return EmbeddedStore(self._tmp / name, **kwargs)
        if self.kind == "recipe":
            return recipe_store_class()(self._tmp / name, **kwargs)
        if self.kind == "vikingdb":
            return self._vikingdb_store(f"{self._prefix}_{name}", dim or self._dim, **kwargs)
        from treehop.stores.milvus import MilvusStore

        return MilvusStore(client=self._client, collection=f"{self._prefix}_{name}", **kwargs)

    def _vikingdb_store(self, collection: str, dim: int, **kwargs: Any) -> VectorStore:
        """A VikingDBStore on the fake service (signed requests over real HTTP, hybrid on)."""
        from treehop._http import RetryPolicy
        from treehop.stores.vikingdb import VikingDBStore, collection_schema

        srv = self._vikingdb
        if collection not in srv.collections:
            srv.create_collection(collection, collection_schema(dim, hybrid=True))
        kwargs.setdefault("consistency_window_s", 0.0)
        kwargs.setdefault("retry", RetryPolicy(max_retries=2, backoff_s=0.001, max_backoff_s=0.005))
        return VikingDBStore(
            collection,
            dimension=dim,
            host=srv.host,
            scheme="http",
            ak=VIKINGDB_AK,
            sk=VIKINGDB_SK,
            hybrid=True,
            **kwargs,
        )


@functools.cache
def recipe_store_class() -> type[Any]:
    """The ``FolderStore`` class that ``docs/extending.md`` defines (its "A store" block)."""
    blocks = re.findall(r"^```python\n(.*?)^```", DOCS_EXTENDING.read_text(), re.S | re.M)
    code = next(b for b in blocks if "class FolderStore" in b)
    namespace: dict[str, Any] = {"__name__": "extending_store_recipe"}
    exec(compile(code, f"{DOCS_EXTENDING.name}[FolderStore]", "exec"), namespace)
    return namespace["FolderStore"]  # type: ignore[no-any-return]


# ------------------------------------------------------------------------------------------
# A small tree with hand-checkable structure and seeded random vectors (no score ties).
# ------------------------------------------------------------------------------------------
QUOTED = f'{R}/it\'s "quoted" \\dir'

TREE: dict[str, dict[str, Any]] = {
    R: {"tags": []},
    f"{R}/a": {"tags": ["user:ml"], "md": {"team": "core", "year": 2021}},
    f"{R}/a/x.md": {"tags": ["auto:ml"], "md": {"year": 2020, "lang": "en", "team": "core"}},
    f"{R}/a/y.md": {"tags": ["user:ops"], "md": {"year": 2023, "lang": ["de", "en"]}},
    f"{R}/a/deep": {"tags": []},
    f"{R}/a/deep/w.md": {"tags": ["auto:ml", "user:ops"], "md": {"year": 2019, "lang": "fr"}},
    f"{R}/a/long.md": {"tags": ["inherit:ml"], "md": {"year": "unknown"}},
    f"{R}/a/long.md#chunk-0": {"chunk": 0, "tags": ["inherit:ml"], "md": {"year": 2022}},
    f"{R}/a/long.md#chunk-2": {"chunk": 2, "tags": ["inherit:ml"], "md": {"year": 2024}},
    f"{R}/a/long.md#chunk-10": {"chunk": 10, "tags": [], "md": {"flag": True}},
    f"{R}/ab": {"tags": ["user:ops"], "md": {"team": "infra"}},
    f"{R}/ab/z.md": {"tags": ["auto:ml", "user:ops"], "md": {"year": 2024, "lang": "en"}},
    f"{R}/ab/v.md": {"tags": ["llm:security"], "md": {"year": None, "team": "infra"}},
    QUOTED: {"tags": ["user:odd"]},
    QUOTED + "/q.md": {"tags": ["user:odd"], "md": {"note": 'say "hi"\nback\\slash'}},
    "viking://user/alice/memories": {"tags": [], "ctype": ContextType.MEMORY},
    "viking://user/alice/memories/pref.md": {
        "tags": ["user:ml"],
        "ctype": ContextType.MEMORY,
        "md": {"year": 2021},
    },
}
LEAVES = {u for u in TREE if u.endswith(".md") and "#" not in u and u != f"{R}/a/long.md"}
LEAVES |= {u for u in TREE if "#chunk-" in u}
DIM = 16


def make_nodes() -> list[Node]:
    nodes = []
    for uri, spec in TREE.items():
        leaf = uri in LEAVES
        parent = parent_of(uri)
        nodes.append(
            Node(
                uri=uri,
                parent_uri=parent,
                context_type=spec.get("ctype", ContextType.RESOURCE),
                level=2 if leaf else (0 if parent is None else 1),
                is_leaf=leaf,
                abstract=f"abstract of {uri.rsplit('/', 1)[-1]}",
                overview="" if leaf else f"overview of {uri}",
                content=f"content of {uri}" if leaf else "",
                tags=list(spec["tags"]),
                metadata=dict(spec.get("md", {})),
                chunk_index=spec.get("chunk"),
                content_hash=f"h-{abs(hash(uri)) % 10**8}",
                ancestors=ancestors_of(uri),
            )
        )
    return nodes


def make_vectors(n: int, seed: int = 7) -> np.ndarray:
    rng = np.random.default_rng(seed)
    v = rng.standard_normal((n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def query_vector(seed: int = 11) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


def oracle(
    nodes: list[Node],
    vecs: np.ndarray,
    q: np.ndarray,
    keep: Callable[[Node], bool],
    limit: int = 100,
) -> list[tuple[str, float]]:
    """The reference answer: exact cosine over the nodes ``keep`` admits, best first."""
    scored = [(n.uri, float(vecs[i] @ q)) for i, n in enumerate(nodes) if keep(n)]
    scored.sort(key=lambda x: -x[1])
    return scored[:limit]


def ranked(hits: list[ScoredNode]) -> list[tuple[str, float]]:
    return [(h.node.uri, h.score) for h in hits]


def assert_same_ranking(
    got: list[tuple[str, float]], want: list[tuple[str, float]], tol: float = 1e-5
) -> None:
    """Equal URIs in equal order with equal scores; among tied scores any order, and a tied
    group at the very end may have been cut at a different member."""
    assert len(got) == len(want), f"{len(got)} hits, expected {len(want)}:\n{got}\n{want}"
    for (gu, gs), (_, ws) in zip(got, want, strict=True):
        assert abs(gs - ws) <= tol, f"score of {gu}: {gs} != {ws}\n{got}\n{want}"
    i = 0
    while i < len(want):
        j = i
        while j + 1 < len(want) and abs(want[j + 1][1] - want[i][1]) <= tol:
            j += 1
        g = {u for u, _ in got[i : j + 1]}
        w = {u for u, _ in want[i : j + 1]}
        if j + 1 < len(want) or j == i:
            assert g == w, f"positions {i}..{j} differ: {got[i : j + 1]} vs {want[i : j + 1]}"
        i = j + 1
