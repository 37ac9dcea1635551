"""The natural order of sibling names (``turn-00009`` before ``turn-00010``, ``d1-9.txt``
before ``d1-10.txt``): the order memory turns and numbered files are written in.

Why a module of its own: the tree context orders a family's leaves by it
(:mod:`treehop.tree_scoring`), and the embedded store orders a session's turns by it to read
a turn hit's neighbours without reading the session (:meth:`~treehop.stores.embedded.
search_paths._SearchPaths.sibling_window`); both must order names the same way, and a store
may not import the retriever's scoring modules.
"""

from __future__ import annotations

import functools
import itertools
import re

import numpy as np

DIGITS = re.compile(r"(\d+)")


@functools.lru_cache(maxsize=1 << 16)
def name_key(uri: str) -> tuple[int, tuple[int | str, ...]]:
    """A leaf name's natural-order key, kept: every find orders the same families again (the
    tree context's siblings, the memory context's sessions), and the regex split per leaf was
    the largest Python cost of context scoring (a bounded cache of small tuples)."""
    parts: list[int | str] = list(DIGITS.split(uri.rsplit("/", 1)[-1]))
    # the split alternates text and digit runs: every odd part is a run of digits
    parts[1::2] = map(int, parts[1::2])
    return (-1, tuple(parts))


DIGITS_TO_ZERO = bytes.maketrans(b"0123456789", b"0" * 10)
"""A name's shape: its UTF-8 bytes with every ASCII digit as ``0`` (no byte of a multi-byte
character is an ASCII digit; ``bytes.translate`` is several times faster than ``str``'s)."""


def one_shape(names: list[str]) -> bool:
    """Whether every name has the same shape (:data:`DIGITS_TO_ZERO`). The names are
    joined, translated and split once (no name holds a ``/``): one call each instead of one
    per name, over a family of hundreds of names.

    Names of one shape order as plain strings exactly as :func:`name_key` orders them: two
    of them first differ inside a text run of equal length or a digit run of equal length,
    where the natural order compares the same characters."""
    shapes = "/".join(names).encode().translate(DIGITS_TO_ZERO).split(b"/")
    return shapes.count(shapes[0]) == len(shapes)


MAX_SHAPES = 16
"""Past this many shapes among one family's names, :func:`natural_positions` keys every name."""


def natural_positions(names: list[str]) -> list[int] | None:
    """The positions of ``names`` (distinct, in string order: a family's leaves sorted by URI)
    in natural order (:func:`name_key`), or ``None`` where two names share a key (``turn-5``
    and ``turn-05``: a caller's sort would break that tie by something else).

    Why not a key per name: a session of 100,000+ turns (``turn-00000`` ... ``turn-100000``)
    keyed name by name took ~170 ms. Names of one shape are in natural order already
    (:func:`one_shape`); a family of a few shapes is split by shape (each part stays in
    string order, so in natural order) and its parts are laid end to end where their key
    ranges do not overlap (a counter that gained a digit: every 5-digit name before every
    6-digit one), comparing two keys a part. Otherwise, every name keyed."""
    n = len(names)
    if n < 2:
        return list(range(n))
    shapes = "/".join(names).encode().translate(DIGITS_TO_ZERO).split(b"/")
    first = shapes[0]
    if shapes.count(first) == n:
        return list(range(n))
    kinds, of = np.unique(np.array(shapes), return_inverse=True)
    if kinds.size <= MAX_SHAPES:
        # each shape's members in string order (a stable sort on the shape alone)
        grouped = np.argsort(of.reshape(-1), kind="stable")
        parts = np.split(grouped, np.cumsum(np.bincount(of.reshape(-1)))[:-1].tolist())
        ranges = sorted(
            (name_key(names[int(p[0])]), name_key(names[int(p[-1])]), k)
            for k, p in enumerate(parts)
        )
        if all(a[1] < b[0] for a, b in itertools.pairwise(ranges)):
            out: list[int] = np.concatenate([parts[k] for _, _, k in ranges]).tolist()
            return out
    keys = [name_key.__wrapped__(u) for u in names]  # (not the find's bounded cache)
    at = sorted(range(n), key=keys.__getitem__)
    if any(keys[a] == keys[b] for a, b in itertools.pairwise(at)):
        return None
    return at
