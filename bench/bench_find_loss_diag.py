"""Why ``find()`` ranks an answer below flat dense or flat hybrid, question by question.

Issue 33, the held-out check (round 14). For every question of a set (both halves: a
held-out set is read, never tuned on) where ``find()`` puts its first answer lower than the
better of flat dense and flat hybrid (first-answer ranks over the 100 delivered texts, judged
as ``bench_natural.py`` judges them), it records what ``find()`` shows instead and gives the
question one cause, read in this order:

* ``answer is a face, slot not judged``: a leaf that holds the answer is the face of a slot
  above the first judged one, and that slot's text (the face grown over its passage,
  ``question_context_chars``) is not judged to hold it: the slot's run crosses the answer's
  boundary, or the answer is longer than the run;
* ``answer in a slot's run, slot not judged``: an answer leaf is shown in the run of a slot
  above (its face another answer's chunk), and the slot's text is judged to be the other
  answer: the run crosses the boundary between two answers;
* ``answer collapsed behind a face``: an answer leaf is held in a slot above (``collapsed``,
  not shown in the slot's text);
* ``BM25 fusion``: ``find()`` with its fusion dense only (``dense_weight`` and
  ``question_dense_weight`` 1) puts the answer at or above the flat row's rank;
* ``question fusion weight``: the same with the question fusion at flat hybrid's weight
  (``question_dense_weight`` = ``dense_weight``: as much BM25 as the flat hybrid row);
* ``chunk window``: the same with ``question_chunk_window`` off;
* ``document penalty``: the same with ``question_document_penalty`` 0;
* ``tree terms``: the same with the tree context off (``bench_tree.NO_CONTEXT``; a question
  has it off already);
* ``document slot``: the same with one slot per chunk (``collapse_chunks=False``);
* ``slot extent``: the same with a question's slot showing its face alone
  (``question_context_chars`` 0: the run around the face takes the place of the text a
  flat row ranks);
* ``other``: no single switch brings it back.

Each switch is a diagnosis, not a candidate: nothing here changes a default. Printed: one
block per such question (ranks per row, the query's shape, the slots above the answer with
the question whose answer each delivers, where the answer leaf sits, what each switch
gives), then per cause the count. ``--source html``: the set's blanked-HTML variant
(``bench_html_blanked.html_variant``).

    python bench/bench_find_loss_diag.py --sets sqlalchemy-faq --json OUT.json
    python bench/bench_find_loss_diag.py --sets sqlalchemy-faq --source html --json OUT.json
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
from collections import Counter  # noqa: E402
from collections.abc import Mapping, Sequence  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_html_blanked as bh  # noqa: E402
import bench_natural as bn  # noqa: E402
import bench_tree as bt  # noqa: E402
import natural_sets as ns  # noqa: E402
from treehop.query_shape import (  # noqa: E402
    is_error_report,
    is_problem_report,
    is_question,
    is_sentence,
)

ROWS = {r.key: r for r in bn.ROWS}
SWITCHES: tuple[tuple[str, bn.Row], ...] = (
    (
        "BM25 fusion",
        bn.Row(
            "dense", "dense", "find", config={"dense_weight": 1.0, "question_dense_weight": 1.0}
        ),
    ),
    (
        "question fusion weight",
        bn.Row("w", "w", "find", config={"question_dense_weight": bt.DEFAULT_DENSE_WEIGHT}),
    ),
    (
        "chunk window",
        bn.Row("window", "window", "find", config={"question_chunk_window": False}),
    ),
    (
        "document penalty",
        bn.Row("penalty", "penalty", "find", config={"question_document_penalty": 0.0}),
    ),
    ("tree terms", bn.Row("tree", "tree", "find", config=bt.NO_CONTEXT)),
    ("document slot", bn.Row("slots", "slots", "find", find={"collapse_chunks": False})),
    (
        "slot extent",
        bn.Row("face", "face", "find", config={"question_context_chars": 0}),
    ),
)


def shape(query: str) -> str:
    """How ``find()`` reads the query (``hierarchical_retriever._resolve``): a question (or
    error report) takes passage slots and the question fusion; a sentence or problem report
    passage slots with the default fusion and tree terms; anything else document slots."""
    if is_question(query) or is_error_report(query):
        return "question"
    if is_sentence(query) or is_problem_report(query):
        return "passage"
    return "document"


def first(texts: Sequence[str], answers: Sequence[str], judge: bn.Judge) -> int | None:
    """1-based rank of the first text judged to hold an answer (``None``: none)."""
    return next((i + 1 for i, t in enumerate(texts) if judge.units(t, answers)), None)


def worse(a: int | None, b: int | None) -> bool:
    """Is rank ``a`` worse than rank ``b`` (``None``: not in the 100)?"""
    return (a or 101) > (b or 101)


def whose(text: str, questions: Sequence[ns.NaturalQuestion], judge: bn.Judge) -> str:
    """The set's question whose answer ``text`` delivers (the first such; '' when none)."""
    for q in questions:
        if judge.units(text, [a for a, _ in q.answers]):
            return q.text
    return ""


def shared_leaves(
    leaves: Sequence[str],
    q: ns.NaturalQuestion,
    questions: Sequence[ns.NaturalQuestion],
    judge: bn.Judge,
) -> list[str]:
    """The other questions whose answers hold a quarter or more of an answer leaf's word
    5-grams: the chunker cut that leaf across an answer boundary (deleted questions leave no
    heading between two answers of one page)."""
    out: list[str] = []
    for text in leaves:
        grams = judge.key(text).grams
        if not grams:
            continue
        for other in questions:
            if other.qid == q.qid or other.text in out:
                continue
            for a, _ in other.answers:
                if len(grams & judge.key(a).grams) * 4 >= len(grams):
                    out.append(other.text)
                    break
    return out


def diagnose(
    runner: bn.Runner,
    q: ns.NaturalQuestion,
    questions: Sequence[ns.NaturalQuestion],
    judge: bn.Judge,
    against: Sequence[str] = ("flat-dense", "flat-hybrid"),
) -> dict[str, Any] | None:
    """The record of one question that ``find()`` loses (``None`` when it does not) against
    the best of the ``against`` rows (``--against``: flat dense and flat hybrid, or one)."""
    answers = [a for a, _ in q.answers]
    ranks: dict[str, int | None] = {}
    found: Any = None
    for key in ("flat-dense", "flat-hybrid", "find"):
        texts, res = runner.results(ROWS[key], q, 100)
        ranks[key] = first(texts, answers, judge)
        if key == "find":
            found = res
    ref = min(ranks[k] or 101 for k in against)
    if not worse(ranks["find"], ref):
        return None
    flat = runner.flat
    answer_uris = {u for u, t in zip(flat.uris, flat.texts, strict=True) if judge.units(t, answers)}
    crosses = shared_leaves([flat.text_of[u] for u in answer_uris], q, questions, judge)
    slots = found.contexts()
    above = slots[: (ranks["find"] or len(slots) + 1) - 1]
    face_at = next((k + 1 for k, m in enumerate(slots) if m.uri in answer_uris), None)
    held_at = next(
        (
            k + 1
            for k, m in enumerate(slots)
            if any(c.uri in answer_uris and c.position is None for c in m.collapsed)
        ),
        None,
    )
    shown_at = next(
        (
            k + 1
            for k, m in enumerate(slots)
            if any(c.uri in answer_uris and c.position is not None for c in m.collapsed)
        ),
        None,
    )
    switches: dict[str, int | None] = {}
    for name, row in SWITCHES:
        texts, _ = runner.results(row, q, 100)
        switches[name] = first(texts, answers, judge)
    limit = ranks["find"] or 101
    if face_at is not None and face_at < limit:
        cause = "answer is a face, slot not judged"
    elif shown_at is not None and shown_at < limit:
        cause = "answer in a slot's run, slot not judged"
    elif held_at is not None and held_at < limit:
        cause = "answer collapsed behind a face"
    else:
        cause = next((n for n, r in switches.items() if not worse(r, ref)), "other")
    face_slot = slots[face_at - 1] if face_at else None
    return {
        "qid": q.qid,
        "question": q.text,
        "shape": shape(q.text),
        "ranks": ranks,
        "answer_chars": [len(a) for a in answers],
        "answer_leaves": len(answer_uris),
        "leaves_cross_into": [t[:70] for t in crosses],
        "face_at": face_at,
        "face_slot_chars": len(face_slot.slot_text) if face_slot else None,
        "collapsed_at": held_at,
        "in_run_at": shown_at,
        "switches": switches,
        "cause": cause,
        "recovered_by": [n for n, r in switches.items() if not worse(r, ref)],
        "above": [
            {
                "uri": m.uri.removeprefix(runner.scope + "/"),
                "chars": len(m.slot_text),
                "answers": whose(m.slot_text, questions, judge)[:70],
                "opens": " ".join(m.slot_text.split()[:14]),
                "score": round(m.score, 4),
                "vector_score": None if m.vector_score is None else round(m.vector_score, 4),
            }
            for m in above[:8]
        ],
        "answer_slot": None
        if ranks["find"] is None
        else {
            "uri": slots[ranks["find"] - 1].uri.removeprefix(runner.scope + "/"),
            "score": round(slots[ranks["find"] - 1].score, 4),
            "vector_score": slots[ranks["find"] - 1].vector_score,
        },
    }


def report(rec: Mapping[str, Any]) -> str:
    r, s = rec["ranks"], rec["switches"]
    lines = [
        f"[{rec['cause']}] {rec['qid']} ({rec['shape']}): {rec['question'][:90]}",
        f"  find={r['find']} dense={r['flat-dense']} hybrid={r['flat-hybrid']} | answer "
        f"{rec['answer_chars']} chars in {rec['answer_leaves']} leaves; face at "
        f"{rec['face_at']} (slot {rec['face_slot_chars']} chars), collapsed at "
        f"{rec['collapsed_at']}, in a slot's run at {rec['in_run_at']}",
        "  answer leaves also hold the answer of: "
        + (" | ".join(rec["leaves_cross_into"]) or "none"),
        "  switches: " + ", ".join(f"{k}={v}" for k, v in s.items()),
        "  back at or above the flat row with: " + (", ".join(rec["recovered_by"]) or "none"),
    ]
    for k, a in enumerate(rec["above"][:3]):
        who = f"answers {a['answers']!r}" if a["answers"] else "no FAQ answer"
        lines.append(
            f"  #{k + 1} {a['uri']} ({a['chars']} chars, score {a['score']}, {who}): {a['opens']}"
        )
    if rec["answer_slot"]:
        a = rec["answer_slot"]
        lines.append(f"  answer slot {a['uri']} score {a['score']}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--sets", default="sqlalchemy-faq")
    ap.add_argument("--source", choices=("md", "html"), default="md")
    ap.add_argument("--halves", default="dev,test")
    ap.add_argument("--json", type=Path)
    ap.add_argument(
        "--against",
        default="flat-dense,flat-hybrid",
        help="the flat rows find() is compared with (the best of them), comma-separated",
    )
    args = ap.parse_args(argv)
    against = tuple(args.against.split(","))
    cached = bn.bench_embedder("")
    judge = bn.Judge()
    records: list[dict[str, Any]] = []
    for name in args.sets.split(","):
        nset = ns.load_natural_set(name, cached)
        if args.source == "html":
            nset = bh.html_variant(nset)
        dev, test = bt.sampled_halves(nset.questions, None)
        halves = {"dev": dev, "test": test}
        picked = [(h, q) for h in args.halves.split(",") for q in halves[h]]
        with bn.indexed_set(nset, cached) as ix:
            runner = bn.Runner(ix.th, ix.embedder, ix.flat, ix.scope)
            ix.embedder.prepare([q.text for _, q in picked])
            for half, q in picked:
                rec = diagnose(runner, q, nset.questions, judge, against)
                if rec is None:
                    continue
                rec.update(set=nset.name, half=half)
                records.append(rec)
                print(report(rec), flush=True)
        print(f"{nset.name}: {len(picked)} questions, find() behind {args.against} on ", end="")
        print(sum(1 for r in records if r["set"] == nset.name))
    counts = Counter(r["cause"] for r in records)
    print("\n| cause | questions |\n|---|---|")
    for cause, n in counts.most_common():
        print(f"| {cause} | {n} |")
    if args.json:
        args.json.write_text(json.dumps(records, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
