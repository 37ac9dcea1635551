"""Which of ``find()``'s slots holds the query's words alone (issue 33, stop 72).

On natural questions find()'s 1,000-token block loses answers to flat hybrid mostly on
*lexical* questions: the question's key words stand nearly verbatim in the answer passage,
find() ranks that passage 4-10 among its slots (its fusion leans on the dense side and the
tree), and the slots above it fill the block (bench/README.md, "Where find's 1,000-token block
loses the answers flat dense delivers (helper quality72)": 70 of the 145 dev-half questions
flat hybrid's block wins are "slot not reached"). :func:`lexical_leader` names the slot whose
hit text holds more of the query's words, weighted by how few slots hold each, than every
other slot, so the block (:data:`treehop.context_assembly.LEXICAL_LEAD`) can place it right
after the top slot. It reads only the slots' own texts and the query: no label, no constant.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from collections.abc import Set as AbstractSet

from .text_tokenize import tokenize

HIT_CHARS = 8192
"""How much of a slot's hit text :func:`lexical_leader` reads (a chunk is ~2,000
characters; the bound keeps a hostile hit's cost linear and small)."""


def slot_term_scores(texts: Sequence[str | None], terms: AbstractSet[str]) -> list[float]:
    """Each slot's lexical weight: the sum over the distinct query ``terms`` its text holds of
    ``log(1 + n / df)`` (``n`` the slots with a text, ``df`` how many of them hold the term),
    the weighting :func:`treehop.context_assembly._query_window` uses within a chunk, here
    across the slots: a word every slot holds (the product's name) decides little. A ``None``
    text (a slot that may not move: a conversation turn, a memory) weighs 0. Summed in sorted
    term order, so two slots holding the same terms weigh exactly the same."""
    found: list[frozenset[str]] = []
    df: dict[str, int] = {}
    for t in texts:
        if t is None or not terms:
            found.append(frozenset())
            continue
        f = frozenset(w for w in tokenize(t[:HIT_CHARS]) if w in terms)
        found.append(f)
        for w in f:
            df[w] = df.get(w, 0) + 1
    n = sum(1 for t in texts if t is not None)
    weight = {w: math.log(1.0 + n / d) for w, d in df.items()}
    return [math.fsum(weight[w] for w in sorted(f)) for f in found]


def lexical_leader(texts: Sequence[str | None], terms: AbstractSet[str]) -> int | None:
    """The index of the slot to place second, or ``None``: the one slot whose weight
    (:func:`slot_term_scores`) is above every other slot's, when it is ranked third or lower.
    A tie at the top (two slots hold the same words) names none: the words then do not point
    at one passage, and the ranking's order stands. The top slot is never moved (find()'s
    first slot wins more 1,000-token answers than any other row's, bench/README.md "Stop 71
    (the lead)"), nor is the second (already there)."""
    if len(texts) < 3 or not terms:
        return None
    scores = slot_term_scores(texts, terms)
    best = max(scores)
    if best <= 0.0:
        return None
    leaders = [i for i, s in enumerate(scores) if s == best]
    if len(leaders) != 1 or leaders[0] < 2:
        return None
    return leaders[0]
