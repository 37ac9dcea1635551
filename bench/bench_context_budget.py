"""Where a context block's tokens go, ``assemble_context`` against flat rows packed (issue 33).

    python bench/bench_context_budget.py --dev                       # every natural set, 1,000
    python bench/bench_context_budget.py --dev --sets cranfield --budgets 500,1000,2000
    python bench/bench_context_budget.py --dev --langchain --json F   # + LangChain's block

For every question of a set's half and every budget B it builds the block
``Treehop.assemble_context(question, max_tokens=B)`` builds (the same ``find()`` call, caught
on its way in: ``bench_context_diag.found_for``) and the flat rows' blocks (their top-100
results packed best first into B, ``bench_natural.pack_pieces``), and says, averaged per
question:

- ``found``: answer-in-context (``bench_natural``'s judge, as its ``ctx@B``);
- ``docs`` / ``pieces``: distinct documents in find's block (a chunked file counts once) and
  its sections; a flat block's packed results;
- ``tok/piece``: the mean tokens of a section (its line with its share of the header that
  opened its group) or of a packed result;
- ``answer``: tokens of the pieces that are an answer of the question judged alone (for
  find: a document's placed sections together, since a file's chunks are one answer there),
  ``excerpt``: tokens of find's sections cut to the room left, ``title``: tokens of whole-file
  leaves shown at a smaller tier (their title line), ``other``: the rest of the text,
  ``layout``: group headers and each line's ``- `` (``bench_context_diag.layout_overhead``;
  a flat block's separators), ``unused``: the budget left;
- ``lost``: the answers in find's *slots* (``slot_text``, what the ranking delivered) that the
  block does not hold, by why: ``partial`` (the slot is in the block, but not enough of the
  answer: its hit without the extensions that carry the rest), ``excerpt`` (the slot cut to
  the room), ``not-reached`` (the budget was spent above it); ``hybrid-only``: answers flat
  hybrid's block holds and find's slots do not;
- ``pack-slots`` / ``pack-faces``: answer-in-context of find's own slot texts (or slot faces,
  the hit's chunk alone) packed as the flat rows are: what ``assemble_context`` adds over
  plain packing of the same ranking.

Round 14 (helper ctxpack) wrote it to find out whether ``assemble_context`` spends the budget
worse than packing flat chunks does (bench/README.md, "Natural questions, round 14").
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
from collections import defaultdict  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_context_diag as cd  # noqa: E402
import bench_natural as bn  # noqa: E402
import bench_tree as bt  # noqa: E402
import datasets as ds  # noqa: E402
import natural_sets as ns  # noqa: E402
import treehop.context_assembly as ca  # noqa: E402
from treehop.context_assembly import default_token_counter  # noqa: E402

FLAT_ROWS = ("flat-hybrid", "flat-dense")


def find_block_account(
    found: Any, ctx: Any, answers: Sequence[str], judge: bn.Judge, counter: Any, budget: int
) -> dict[str, float]:
    """The token accounting of one ``assemble_context`` block (see the module docstring)."""
    acc: dict[str, float] = defaultdict(float)
    text_of: dict[str, Any] = {}
    for m in found.contexts():
        text_of[m.uri] = m
        for c in m.collapsed:
            text_of.setdefault(c.uri, c)
    held = judge.units(ctx.text, answers)
    acc["found"] = len(held) / len(answers)
    acc["layout"] = cd.layout_overhead(ctx.text, ctx.tokens, counter)
    acc["unused"] = budget - ctx.tokens
    docs: dict[str, list[Any]] = defaultdict(list)
    for s in ctx.sections:
        docs[s.uri.split("#", 1)[0]].append(s)
    acc["docs"] = len(docs)
    acc["pieces"] = len(ctx.sections)
    acc["tok/piece"] = ctx.tokens / len(ctx.sections) if ctx.sections else 0.0
    for ss in docs.values():
        tokens = sum(s.tokens for s in ss)
        body = "\n".join(
            str(getattr(text_of[s.uri], s.tier, "") or text_of[s.uri].content)
            for s in ss
            if s.uri in text_of
        )
        if any(s.tier != "content" for s in ss):
            kind = "title"
        elif any(s.excerpt for s in ss):
            kind = "excerpt"
        elif judge.units(body, answers) & held:
            kind = "answer"
        else:
            kind = "other"
        acc[kind] += tokens
    # the text tokens above are each section's line plus its group's header: take the
    # layout out of "other" and "answer" in proportion, so that the parts add up to the block
    text = acc["answer"] + acc["other"]
    if text > 0:
        for k in ("answer", "other"):
            acc[k] -= acc["layout"] * acc[k] / text
    placed = {s.uri: s for s in ctx.sections}
    seen: set[str] = set()
    for m in found.contexts():
        units = judge.units(m.slot_text, answers) - seen
        seen |= units
        uris = [m.uri, *(c.uri for c in m.collapsed if c.position)]
        for _ in units - held:
            if not any(x in placed for x in uris):
                acc["lost:not-reached"] += 1
            elif any(placed[x].excerpt for x in uris if x in placed):
                acc["lost:excerpt"] += 1
            else:
                acc["lost:partial"] += 1
    acc["in-slots"] = len(seen) / len(answers)
    return acc


def flat_block_account(
    pieces: Sequence[str], answers: Sequence[str], judge: bn.Judge, counter: Any, budget: int
) -> dict[str, float]:
    """The same accounting for a flat row's packed block."""
    acc: dict[str, float] = defaultdict(float)
    block = "\n\n".join(pieces)
    tokens = counter.count(block) if block else 0
    acc["found"] = len(judge.units(block, answers)) / len(answers)
    acc["unused"] = budget - tokens
    acc["pieces"] = len(pieces)
    counts = [counter.count(p) for p in pieces]
    acc["layout"] = tokens - sum(counts)
    acc["tok/piece"] = tokens / len(pieces) if pieces else 0.0
    for p, n in zip(pieces, counts, strict=True):
        acc["answer" if judge.units(p, answers) else "other"] += n
    return acc


def run_set(
    name: str, half: str, budgets: Sequence[int], langchain: bool, cached: Any
) -> dict[str, Any]:
    nset = ns.load_natural_set(name, cached)
    out: dict[str, Any] = {"set": name, "half": half}
    with bn.indexed_set(nset, cached) as ix:
        runner = bn.Runner(ix.th, ix.embedder, ix.flat, ix.scope)
        flat_rows = list(FLAT_ROWS)
        if langchain:
            runner.langchain = bn.LangChainRow(nset.files, cached)
            flat_rows.append("langchain")
        dev, test = bt.sampled_halves(nset.questions, 0)
        qs = dev if half == "dev" else test
        out["n"] = len(qs)
        ix.embedder.prepare([q.text for q in qs])
        counter = bn.CachedCounter(default_token_counter())
        judge = bn.Judge()
        rows = {r.key: r for r in bn.ROWS}
        sums: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        for q in qs:
            answers = [a for a, _ in q.answers]
            pools = {k: runner.results(rows[k], q, bn.PACK_POOL)[0] for k in flat_rows}
            hyb_by_budget: dict[int, frozenset[str]] = {}
            for b in budgets:
                found = cd.found_for(ix.th, q.text, b, ix.scope, counter)
                ctx = ca.assemble_context(found, max_tokens=b, token_counter=counter, query=q.text)
                for k, v in find_block_account(found, ctx, answers, judge, counter, b).items():
                    sums[f"find@{b}"][k] += v
                for k in flat_rows:
                    pieces = bn.pack_pieces(pools[k], b, counter)
                    for kk, v in flat_block_account(pieces, answers, judge, counter, b).items():
                        sums[f"{k}@{b}"][kk] += v
                    if k == "flat-hybrid":
                        hyb_by_budget[b] = judge.units("\n\n".join(pieces), answers)
                slots = found.contexts()
                in_slots = frozenset().union(*(judge.units(m.slot_text, answers) for m in slots))
                sums[f"find@{b}"]["hybrid-only"] += len(hyb_by_budget[b] - in_slots)
                for label, texts in (
                    ("pack-slots", [m.slot_text for m in slots]),
                    ("pack-faces", [m.content for m in slots]),
                ):
                    block = "\n\n".join(bn.pack_pieces(texts, b, counter))
                    sums[f"find@{b}"][label] += len(judge.units(block, answers)) / len(answers)
        n = max(1, len(qs))
        out["rows"] = {row: {k: v / n for k, v in acc.items()} for row, acc in sums.items()}
    return out


COLUMNS = (
    "found",
    "docs",
    "pieces",
    "tok/piece",
    "answer",
    "other",
    "excerpt",
    "title",
    "layout",
    "unused",
    "lost:partial",
    "lost:excerpt",
    "lost:not-reached",
    "hybrid-only",
    "pack-slots",
    "pack-faces",
)


def print_table(results: Sequence[dict[str, Any]], budgets: Sequence[int]) -> None:
    print("| set | B | row | " + " | ".join(COLUMNS) + " |")
    print("|---|---|---|" + "---|" * len(COLUMNS))
    for r in results:
        for b in budgets:
            for row, acc in r["rows"].items():
                if not row.endswith(f"@{b}"):
                    continue
                cells = []
                for c in COLUMNS:
                    if c not in acc:
                        cells.append("")
                    elif c in ("found", "pack-slots", "pack-faces"):
                        cells.append(f"{acc[c]:.3f}")
                    elif c.startswith(("lost", "hybrid", "docs", "pieces")):
                        cells.append(f"{acc[c]:.2f}")
                    else:
                        cells.append(f"{acc[c]:.0f}")
                name = row.rsplit("@", 1)[0]
                print(f"| {r['set']} ({r['n']}) | {b} | {name} | " + " | ".join(cells) + " |")


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--sets", default=",".join(ns.NATURAL_SETS))
    half = ap.add_mutually_exclusive_group()
    half.add_argument("--dev", action="store_true")
    half.add_argument("--test", action="store_true")
    ap.add_argument("--budgets", default="1000")
    ap.add_argument("--langchain", action="store_true", help="also LangChain's packed block")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    which = "test" if args.test else "dev"
    budgets = [int(b) for b in args.budgets.split(",") if b.strip()]
    cached = ds.default_embedder()
    results = []
    for name in args.sets.split(","):
        results.append(run_set(name, which, budgets, args.langchain, cached))
        print_table(results[-1:], budgets)
        if args.json:
            args.json.write_text(json.dumps({"argv": sys.argv[1:], "sets": results}, indent=1))
    print()
    print_table(results, budgets)


if __name__ == "__main__":
    main()
