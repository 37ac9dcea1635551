"""One suite, every store: fixtures that hand each test a fresh store of every engine.

``store_factory`` is parametrised over the engines (``embedded``, ``milvus``); calling it returns
a new empty store, and calling it again with the same ``name`` reopens the same index. Milvus
runs as
milvus-lite: the real ``pymilvus`` client talking gRPC to an in-process server on 127.0.0.1.
One lite server (one ``.db`` file) is shared by a test module, because starting one is slow;
every test gets its own collections.

``milvus_factory`` is the Milvus factory alone, for the tests that compare Milvus against the
embedded store on the same vectors and for Milvus-specific behaviour.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from store_conf_helpers import (
    DIM,
    STORES,
    VIKINGDB_AK,
    VIKINGDB_SK,
    StoreFactory,
    make_nodes,
    make_vectors,
)

from treehop.models import Node
from treehop.stores.base import VectorStore

from treehop_test_doubles import BagOfWordsEmbedder


@pytest.fixture(scope="module")
def milvus_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from pymilvus import MilvusClient

    client = MilvusClient(str(tmp_path_factory.mktemp("milvus") / "conformance.db"))
    yield client
    client.close()


@pytest.fixture(scope="module")
def vikingdb_server() -> Iterator[Any]:
    from fake_servers.vikingdb_server import FakeVikingDB

    with FakeVikingDB(ak=VIKINGDB_AK, sk=VIKINGDB_SK) as server:
        yield server


@pytest.fixture(params=STORES)
def store_factory(request: pytest.FixtureRequest, tmp_path: Path) -> StoreFactory:
    client = request.getfixturevalue("milvus_client") if request.param == "milvus" else None
    viking = request.getfixturevalue("vikingdb_server") if request.param == "vikingdb" else None
    # A VikingDB collection has a fixed dimension: the client tests embed with the 64-d
    # bag-of-words embedder, the contract tests use the suite's 16-d vectors.
    dim = BagOfWordsEmbedder.dimension if "client" in request.module.__name__ else DIM
    return StoreFactory(request.param, tmp_path, client, viking, dim)


@pytest.fixture
def milvus_factory(milvus_client: Any, tmp_path: Path) -> StoreFactory:
    return StoreFactory("milvus", tmp_path, milvus_client)


@pytest.fixture
def embedded_factory(tmp_path: Path) -> StoreFactory:
    return StoreFactory("embedded", tmp_path / "embedded")


@pytest.fixture
def tree_data() -> tuple[list[Node], np.ndarray]:
    nodes = make_nodes()
    return nodes, make_vectors(len(nodes))


@pytest.fixture
def filled(store_factory: StoreFactory, tree_data: tuple[list[Node], np.ndarray]) -> VectorStore:
    """A store of the parametrised engine holding ``TREE`` (inserted in shuffled order)."""
    nodes, vecs = tree_data
    order = np.random.default_rng(3).permutation(len(nodes))
    store = store_factory()
    store.upsert([nodes[i] for i in order], vecs[order])
    return store
