"""One read loop over an open descriptor, shared by the directory ingest's file reads
(``ingest.loaders._read_bytes``) and the embedded store's small-file reads (``CURRENT`` and
the manifests, ``stores.embedded.manifest._read_regular``).

Why a module of its own (helper leftovers62): the two loops were written twice, the same
but for their chunk size and how a limit is told; the store must not import the ingest
package for it, nor the ingest the store."""

from __future__ import annotations

import os


def read_to_end(fd: int, limit: int | None, chunk: int) -> bytes:
    """The bytes of ``fd`` from its position to the end of the file, at most ``limit`` of
    them (``None``: no bound), by plain ``os.read`` calls of at most ``chunk`` bytes.

    Why plain reads: ``open(path, "rb").read()`` builds two file objects and asks
    ``fstat`` / ``lseek`` first, which cost more than reading a small file. Why a bound: a
    file grown or swapped (for a larger one, a link to ``/dev/zero``) after its size was
    checked was read to its end, without bound; a caller that must tell "larger than
    ``n``" asks for ``n + 1`` bytes. One part is returned as read (no copy)."""
    parts: list[bytes] = []
    left = limit
    while left is None or left > 0:
        got = os.read(fd, chunk if left is None else min(chunk, left))
        if not got:
            break
        parts.append(got)
        if left is not None:
            left -= len(got)
    return parts[0] if len(parts) == 1 else b"".join(parts)
