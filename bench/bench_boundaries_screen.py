"""Screen (helper boundaries, stop 54; issue 33 item 6): what if a question's chunk slot
delivered a window of whole paragraphs around the face's best-matching paragraph instead of
whole chunks? A diagnosis run, not an implementation: ``bench_natural.Runner.results`` is
wrapped so that each find() slot of a question-, sentence-, error- or problem-shaped query
whose face is a chunk delivers the paragraphs (blank-line separated) of its passage
(chunks of the face's passage mark, up to four either side) around the face paragraph that
shares the most query words (stop words out), grown by whole paragraphs up to ``BUDGET``
characters: ``centred`` alternates the two sides, ``forward`` takes the text after the
match first; ``coherent``: whole chunks, the face's passage grown to the neighbour whose
words are nearer the face's (:func:`coherent`). Only nDCG@10 (and the ranks) move:
``assemble_context`` (ctx@*) is untouched. The window may repeat text another slot shows
(optimistic), and it never crosses a passage mark (``join_adjacent_hits`` is not
reproduced: zsh-faq 3.6 and 3.8 lose by that alone).

    python bench/bench_boundaries_screen.py 3000 centred --dev --rows find --json OUT.json
"""

from __future__ import annotations

import os
import re
import sys
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_natural as bn
from treehop.descent import _passage_mark
from treehop.query_shape import (
    is_error_report,
    is_problem_report,
    is_question,
    is_sentence,
)

WORD = re.compile(r"\w+")
STOP = frozenset(
    WORD.findall(
        "the a an of to in is it and or for on with how do does i my can what why when which be "
        "are this that not you your from as at by there"
    )
)
CHUNK = "#chunk-"


def window(runner: bn.Runner, m: Any, qwords: set[str], budget: int, mode: str) -> str:
    """The paragraph window of slot ``m`` (its ``slot_text`` where the face is no chunk)."""
    if m.chunk_index is None or CHUNK not in m.uri:
        return str(m.slot_text)
    doc = m.uri.rsplit(CHUNK, 1)[0]
    face = runner.th.store.get([m.uri])[0]
    if face is None:
        return str(m.slot_text)
    mark = _passage_mark(face)
    paras: list[tuple[int, str]] = []  # (chunk offset from the face, paragraph)
    for d in range(-4, 5):
        u = f"{doc}{CHUNK}{m.chunk_index + d}"
        if u not in runner.flat.text_of:
            continue
        n = runner.th.store.get([u])[0]
        if n is None or _passage_mark(n) != mark:
            continue
        paras += [(d, p) for p in re.split(r"\n\s*\n", runner.flat.text_of[u]) if p.strip()]
    if mode == "coherent":
        return coherent(paras, budget)
    face_ps = [i for i, (d, _) in enumerate(paras) if d == 0]
    if not face_ps:
        return str(m.slot_text)
    c = max(face_ps, key=lambda i: (len(set(WORD.findall(paras[i][1].lower())) & qwords), -i))
    lo = hi = c
    size = len(paras[c][1])
    turn = 0
    while True:
        order = (hi + 1, lo - 1) if mode == "forward" or turn else (lo - 1, hi + 1)
        fits = [j for j in order if 0 <= j < len(paras) and size + 2 + len(paras[j][1]) <= budget]
        if not fits:
            break
        j = fits[0]
        size += 2 + len(paras[j][1])
        lo, hi = min(lo, j), max(hi, j)
        turn ^= 1
    return "\n\n".join(p for _, p in paras[lo : hi + 1])


def coherent(paras: list[tuple[int, str]], budget: int) -> str:
    """``coherent``: whole chunks of the face's passage, the face first, each step taking
    the neighbouring chunk whose word set is nearer (Jaccard) the face's: the side that
    continues the face's answer, if an answer's chunks share its words."""
    chunks: dict[int, list[str]] = {}
    for d, p in paras:
        chunks.setdefault(d, []).append(p)
    text = {d: "\n\n".join(ps) for d, ps in chunks.items()}
    vocab = {d: set(WORD.findall(t.lower())) for d, t in text.items()}
    face = vocab[0]
    lo = hi = 0
    size = len(text[0])
    while True:
        fits = [j for j in (lo - 1, hi + 1) if j in text and size + 2 + len(text[j]) <= budget]
        if not fits:
            break
        j = max(fits, key=lambda j: len(vocab[j] & face) / max(1, len(vocab[j] | face)))
        size += 2 + len(text[j])
        lo, hi = min(lo, j), max(hi, j)
    return "\n\n".join(text[d] for d in range(lo, hi + 1))


def main() -> None:
    budget, mode = int(sys.argv[1]), sys.argv[2]
    original = bn.Runner.results

    def results(self: bn.Runner, row: bn.Row, q: Any, limit: int) -> tuple[list[str], Any]:
        texts, res = original(self, row, q, limit)
        shaped = is_question(q.text) or is_error_report(q.text)
        if res is None or not (shaped or is_sentence(q.text) or is_problem_report(q.text)):
            return texts, res
        qwords = set(WORD.findall(q.text.lower())) - STOP
        return [window(self, m, qwords, budget, mode) for m in res.contexts()], res

    bn.Runner.results = results
    bn.main(sys.argv[3:])


if __name__ == "__main__":
    main()
