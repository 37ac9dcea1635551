"""The entry point of a reader process (see :mod:`treehop.reader_processes`).

A worker opens a read-only :class:`~treehop.Treehop` over the saved index, so this module sits
above :mod:`treehop.client`; the pool, which the client imports, starts it by module name
(``treehop.reader_processes._WORKER_MODULE``) and never imports it itself.
"""

from __future__ import annotations

import contextlib
import os
import pickle
from collections.abc import Sequence
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

from . import errors
from .client import Treehop
from .config import RetrievalConfig
from .embedders.base import BaseEmbedder
from .errors import TreehopError


class _GivenVectors(BaseEmbedder):
    """A worker's embedder: it has the index's embedder name and dimension (the client checks
    them against the index) and answers with the vector the caller's embedder gave for the
    query of the call in progress (a worker answers one call at a time). Through it, a
    worker's ``find()`` takes the embedder's answer exactly as the caller's client would
    (an all-zero embedding included, which a caller-given ``query_vector`` may not be)."""

    def __init__(self, name: str, dimension: int) -> None:
        self.name = name
        self.dimension = dimension
        self.vector: np.ndarray[Any, np.dtype[np.float32]] | None = None

    def embed(self, texts: Sequence[str]) -> np.ndarray[Any, np.dtype[np.float32]]:
        if self.vector is None:
            raise errors.EmbeddingError("a reader process embeds nothing but the call's query")
        return np.tile(self.vector, (len(texts), 1))


def _error_reply(exc: BaseException) -> tuple[str, str, str]:
    if isinstance(exc, TreehopError):
        return ("error", type(exc).__name__, str(exc))
    return ("error", "StoreError", f"reader process failed: {type(exc).__name__}")


def serve(conn: Connection, path: str, user: str, config_json: str, name: str, dim: int) -> None:
    """A worker's loop: open a read-only client, then answer ``("find", query, embedded,
    vector, context_type, options)`` messages with ``("ok", FindResult, pid)`` and
    ``("find_many", queries, vectors, context_type, options, embedded)`` ones with ``("ok",
    list[FindResult], pid)``, or an error reply, until an empty message."""
    given = _GivenVectors(name, dim)
    try:
        client = Treehop(
            path,
            user=user,
            embedder=given,
            config=RetrievalConfig.model_validate_json(config_json),
            tagger=None,
            reader_processes=0,  # (a worker never starts workers of its own)
        )
    except BaseException as exc:  # reported to the pool, which raises it in the caller
        with contextlib.suppress(OSError, ValueError):
            conn.send(_error_reply(exc))
        return
    try:
        conn.send(("ready",))
    except (OSError, ValueError):  # the pool is gone (its process exited while this started)
        client.close()
        return
    with client:
        while True:
            try:
                data = conn.recv_bytes()
            except (EOFError, OSError):
                return  # the pool is gone
            if not data:
                return  # the pool's stop message
            try:
                call = pickle.loads(data)
                refresh = getattr(client.store, "refresh", None)
                if refresh is not None:
                    refresh()
                result: Any
                if call[0] == "find_many":
                    # a part of a batch: its global step shared across the part, as the
                    # caller's in-process find_many shares it across its own part
                    _, queries, vectors, context_type, options, embedded = call
                    if embedded:  # an awaited batch's part: the embedder's rows as they are
                        result = client.run(
                            client.aio._find_many(
                                queries, context_type=context_type, _embedded=vectors, **options
                            )
                        )
                    else:
                        result = client.find_many(
                            queries, query_vectors=vectors, context_type=context_type, **options
                        )
                else:
                    _, query, embedded, vector, context_type, options = call
                    given.vector = embedded
                    result = client.find(
                        query, query_vector=vector, context_type=context_type, **options
                    )
                reply = pickle.dumps(("ok", result, os.getpid()), protocol=pickle.HIGHEST_PROTOCOL)
            except BaseException as exc:
                reply = pickle.dumps(_error_reply(exc))
            finally:
                given.vector = None
            try:
                conn.send_bytes(reply)
            except (OSError, ValueError):
                return
