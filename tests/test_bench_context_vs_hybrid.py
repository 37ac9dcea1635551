"""``bench/bench_context_vs_hybrid.py``: where a block's tokens went when flat hybrid's block
holds an answer it does not (issue 33, stop 57). The README's table of causes rests on
:func:`account` and :func:`cause_of`, so both are checked on real blocks
(:func:`treehop.context_assembly.assemble_context` over a two-slot result, counted by the
heuristic counter) whose answer position is known: the top slot's passage filling a small
block, the same answer reached in a larger one, and an answer in no slot.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import bench_context_diag as diag
import bench_context_vs_hybrid as vs
import bench_natural as bn
from treehop.context_assembly import HeuristicCounter, assemble_context
from treehop.models import ChunkContext, ContextType, FindResult, MatchedContext

WORDS = ("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa")


def _text(seed: int, n: int) -> str:
    return " ".join(f"{WORDS[(seed + i) % len(WORDS)]}{seed}x{i}" for i in range(n)) + "."


def _result() -> tuple[FindResult, str]:
    top_hit, top_ext = _text(1, 60), _text(2, 60)
    answer = "Rotate the log with logrotate and send the daemon a HUP signal afterwards."
    top = MatchedContext(
        uri="viking://resources/r/faq.md#chunk-2",
        context_type=ContextType.RESOURCE,
        is_leaf=True,
        abstract="",
        score=0.9,
        content=top_hit,
        chunk_index=2,
        collapsed=[
            ChunkContext(
                uri="viking://resources/r/faq.md#chunk-3", score=0.5, content=top_ext, position=1
            )
        ],
    )
    nxt = MatchedContext(
        uri="viking://resources/r/other.md#chunk-0",
        context_type=ContextType.RESOURCE,
        is_leaf=True,
        abstract="",
        score=0.8,
        content=answer,
        chunk_index=0,
    )
    return FindResult(resources=[top, nxt], total=2), answer


def _diagnosed(budget: int) -> tuple[dict[str, object], dict[str, object], float]:
    found, answer = _result()
    counter = HeuristicCounter()
    judge = bn.Judge()
    ctx = assemble_context(found, max_tokens=budget, token_counter=counter, query="log")
    acc = vs.account(found, ctx, counter)
    d = diag.diagnose(found, ctx, [answer], judge, counter, budget)
    return acc, d, bn.answer_in_context(ctx.text, [answer], judge)


def test_the_top_passage_filling_a_small_block_is_its_cause() -> None:
    counter = HeuristicCounter()
    found, _ = _result()
    top_tokens = counter.count(found.contexts()[0].slot_text)
    # room for the top slot whole (hit and extension) and not for the next hit
    acc, d, score = _diagnosed(top_tokens + 12)
    assert score == 0.0
    assert acc["n_faces"] == 1
    face = acc["faces"][0]
    assert face["slot"] == 0 and face["n_ext"] == 1 and face["ext"] > 0
    assert face["tokens"] == face["hit"] + face["ext"]
    assert d["cause"] == "slot-not-reached" and d["slot"] == 1
    assert vs.cause_of(d, acc, top_tokens + 12) == "not-reached/top-passage"
    # the same block judged against a budget the top slot took under 60 % of is the slot's rank
    assert vs.cause_of(d, acc, 4 * top_tokens) == "not-reached/slot-1-3"


def test_a_larger_block_reaches_the_answer() -> None:
    acc, _, score = _diagnosed(1000)
    assert score == 1.0
    assert acc["n_faces"] == 2
    assert [f["slot"] for f in acc["faces"]] == [0, 1]
    assert acc["unused"] == 1000 - sum(f["tokens"] for f in acc["faces"])


def test_an_answer_in_no_slot_is_the_ranking() -> None:
    found, _ = _result()
    counter = HeuristicCounter()
    judge = bn.Judge()
    ctx = assemble_context(found, max_tokens=1000, token_counter=counter)
    missing = ["An answer about quotas and mailboxes that no slot of this result shows at all."]
    d = diag.diagnose(found, ctx, missing, judge, counter, 1000)
    cause = vs.cause_of(d, vs.account(found, ctx, counter), 1000)
    assert cause == "not-in-slots"
    assert vs.GROUPS[cause] == "ranking"


def test_hybrid_rank_is_the_first_piece_holding_a_missing_answer() -> None:
    answer = "Rotate the log with logrotate and send the daemon a HUP signal afterwards."
    pieces = [_text(5, 20), answer, answer]
    assert vs.hybrid_rank(pieces, [answer], bn.Judge()) == 2
    assert vs.hybrid_rank(pieces[:1], [answer], bn.Judge()) is None


def test_langchain_block_beating_find_gets_a_cause_and_its_piece() -> None:
    """``--langchain`` (helper ctx58): a LangChain-style ranked list whose second chunk holds
    the answer the top passage pushed out of find's block is scored, diagnosed like hybrid's,
    and its answering piece's rank and length recorded; a list without the answer is not."""
    found, answer = _result()
    counter = HeuristicCounter()
    judge = bn.Judge()
    budget = counter.count(found.contexts()[0].slot_text) + 12
    ctx = assemble_context(found, max_tokens=budget, token_counter=counter, query="log")
    acc = vs.account(found, ctx, counter)
    row: dict[str, object] = {"find": bn.answer_in_context(ctx.text, [answer], judge), **acc}
    ranked = [_text(7, 10), answer, _text(8, 10)]
    vs.lc_row(row, ranked, budget, counter, judge, [answer], False, found, ctx)
    assert row["langchain"] == 1.0 and row["find"] == 0.0
    assert row["lc_cause"] == "not-reached/top-passage"
    assert row["lc_answer_slot"] == 1 and row["lc_rank"] == 2
    assert row["lc_piece_chars"] == len(answer)
    assert row["lc_pieces"] == 3
    other: dict[str, object] = {"find": row["find"], **acc}
    vs.lc_row(other, [_text(7, 10)], budget, counter, judge, [answer], False, found, ctx)
    assert other["langchain"] == 0.0 and "lc_cause" not in other
