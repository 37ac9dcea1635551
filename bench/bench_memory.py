"""LoCoMo: evidence recall of find() over conversation memories written by the memory write path.

Run from the repository root::

    TREEHOP_BENCH_CACHE=/work/bench-cache python bench/bench_memory.py

Data: ``../shared/data/locomo/locomo5_dev.json`` (or ``TREEHOP_LOCOMO=<file>``), read in place
(CC BY-NC 4.0: never copied into the repository). Each conversation is indexed in its own
in-memory client and its questions are searched there (the usual protocol); category 5
(adversarial, no evidence) is left out. The measure is evidence recall@k: the share of a
question's evidence turns (``dia_id``) among the top k leaves.

Arms, side by side on the same turn texts (``"<speaker>: <text>"``), the same embedder
(MiniLM, cached) and the same ``find()`` settings (QUICK mode, leaves only):

- ``flat exact``: cosine top-k over the turn vectors (numpy), the reference of the data README;
- ``turns as files``: every turn a file ``D<s>_<t>.txt`` in one directory, ``add_resource``;
- ``memory``: ``add_messages`` per session (conversation → session → turn, session dates as
  timestamps), ``find()`` without a time filter. A slot counts every turn it holds: its hit and
  the neighbouring turns it carries (``memory_context_chars``, at most 1,000 characters a
  slot, as a LangChain 1,000-character chunk of the transcript holds about ten turns);
- ``memory, hits only``: the same lists, counting only each slot's ranked hits (the hit and
  the hits merged into its slot), not the turns carried as context;
- ``memory, turns alone``: ``memory_context_chars=0`` (one turn a slot, the last stop's find);
- ``memory + since/until``: ``memory``, with a time window for questions that name a time.

The memory arms store each turn as ``(8 May 2023) Speaker: text`` (``add_messages``'s default
``dated_text=True``); ``--plain-text`` stores ``Speaker: text``, the text of the flat arms.

``--context-table`` prints only the memory-in-a-budget table (issue 33, item 7): evidence
turns wholly inside a 250 / 500 / 1,000-token block (the MiniLM tokenizer for every row):
``assemble_context`` over ``find()``'s defaults on the ``add_messages`` memory, against the
same stored turn texts ranked by flat dense, flat hybrid (``find()``'s ``dense_weight``) and
flat BM25 and packed best first (:func:`pack_best_first`), and a framework user's 1,000/200
character split of each session's transcript with flat dense; plus one row per memory-block
switch of ``treehop.context_assembly``. Conversations are split by a fixed rule
(:func:`is_held_out`): choices are made on dev, held-out is reported. The same run times
``find()`` and ``assemble_context`` interleaved on every question (BLAS on one thread)::

    TREEHOP_BENCH_CACHE=/work/benchcache python bench/bench_memory.py --context-table

Time windows (``question_window``): a question names a time when it contains a date
(``7 May 2023``, ``May 7, 2023``, ``7 May, 2023``), a month and year (``June 2023``), a month
alone (``in June``) or a year (``in 2022``). The named period ``[start, end)`` (a day, a month,
a year; a month without a year is tried in every year the conversation's sessions span, and the
union of the windows that contain a session is used) becomes the window
``since = start``, ``until`` = just after the first session that starts at or after ``end`` —
people report an event in the session in which it happened or in the next one, never before
the period starts. Relative phrases (``last year``, ``last weekend``) get no window: the
question carries no date to anchor them. The rule is fixed by that reasoning, not tuned on
these questions.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import re
import sys
import tempfile
import time
from calendar import monthrange
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # BLAS on one thread, before numpy loads (timed ratios)

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from datasets import REPO_ROOT, default_embedder, ensure_treehop_importable  # noqa: E402

ensure_treehop_importable()

from treehop import AsyncTreehop, assemble_context  # noqa: E402
from treehop.context_assembly import default_token_counter  # noqa: E402

_REL = Path("shared") / "data" / "locomo" / "locomo5_dev.json"
LOCOMO = Path(
    os.environ.get("TREEHOP_LOCOMO")
    or next((p / _REL for p in REPO_ROOT.parents if (p / _REL).is_file()), REPO_ROOT.parent / _REL)
)
"""The first ``shared/data/locomo`` beside the checkout or above it (worktrees live deeper)."""
MONTHS = [
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december",
]  # fmt: skip
_M = "|".join(MONTHS)
_DAY_FIRST = re.compile(rf"\b(\d{{1,2}})\s+({_M}),?\s+(\d{{4}})\b", re.I)
_MONTH_FIRST = re.compile(rf"\b({_M})\s+(\d{{1,2}}),?\s+(\d{{4}})\b", re.I)
_MONTH_YEAR = re.compile(rf"\b({_M}),?\s+(\d{{4}})\b", re.I)
_MONTH = re.compile(rf"\b(?:in|during|of)\s+({_M})\b", re.I)
_YEAR = re.compile(r"\b(?:in|during|of)\s+((?:19|20)\d\d)\b", re.I)
DAY = 86400.0


def session_time(text: str) -> float:
    """LoCoMo's ``1:56 pm on 8 May, 2023`` as epoch seconds (UTC)."""
    dt = datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
    return dt.timestamp()


def _ts(y: int, m: int, d: int = 1) -> float:
    return datetime(y, m, d, tzinfo=UTC).timestamp()


def _month_period(y: int, m: int) -> tuple[float, float]:
    return _ts(y, m), _ts(y, m) + monthrange(y, m)[1] * DAY


def named_periods(question: str, years: list[int]) -> list[tuple[float, float]]:
    """The periods a question names (see the module docstring); empty when it names none."""
    q = question
    for rx, order in ((_DAY_FIRST, "dmy"), (_MONTH_FIRST, "mdy")):
        m = rx.search(q)
        if m:
            if order == "dmy":
                d, mo, y = int(m.group(1)), MONTHS.index(m.group(2).lower()) + 1, int(m.group(3))
            else:
                mo, d, y = MONTHS.index(m.group(1).lower()) + 1, int(m.group(2)), int(m.group(3))
            try:
                start = _ts(y, mo, d)
            except ValueError:
                return []
            return [(start, start + DAY)]
    m = _MONTH_YEAR.search(q)
    if m:
        return [_month_period(int(m.group(2)), MONTHS.index(m.group(1).lower()) + 1)]
    m = _MONTH.search(q)
    if m:
        mo = MONTHS.index(m.group(1).lower()) + 1
        return [_month_period(y, mo) for y in years]
    m = _YEAR.search(q)
    if m:
        y = int(m.group(1))
        return [(_ts(y, 1), _ts(y + 1, 1))]
    return []


def question_window(question: str, sessions: list[float]) -> tuple[float, float | None] | None:
    """``(since, until)`` for a question that names a time, else ``None``."""
    ordered = sorted(sessions)
    years = sorted({datetime.fromtimestamp(t, tz=UTC).year for t in ordered})
    windows: list[tuple[float, float | None]] = []
    for start, end in named_periods(question, years):
        after = [t for t in ordered if t >= end]
        until = after[0] + 1.0 if after else None
        if any(t >= start and (until is None or t < until) for t in ordered):
            windows.append((start, until))
    if not windows:
        return None
    since = min(w[0] for w in windows)
    untils = [w[1] for w in windows]
    return since, (None if any(u is None for u in untils) else max(u for u in untils if u))


def evidence_ids(raw: list[str]) -> set[str]:
    out: set[str] = set()
    for e in raw:
        for part in re.split(r"[;,\s]+", str(e)):
            m = re.fullmatch(r"D(\d+):(\d+)", part.strip())
            if m:
                out.add(f"D{int(m.group(1))}:{int(m.group(2))}")
    return out


def load_conversations(limit: int | None) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads(LOCOMO.read_text())
    return data[:limit] if limit else data


async def add_conversation(
    mem: Any,
    cid: str,
    sessions: list[tuple[int, float, list[dict[str, Any]]]],
    dated: bool = True,
) -> None:
    """Write a LoCoMo conversation's sessions (:func:`sessions_of`) through ``add_messages``,
    each turn with its ``dia_id`` as the message id, as every memory arm stores them."""
    for n, st, ts in sessions:
        await mem.add_messages(
            [{"speaker": t["speaker"], "content": t["text"], "id": t["dia_id"]} for t in ts],
            conversation_id=cid,
            session_id=f"session-{n:02d}",
            session_time=st,
            dated_text=dated,
        )


def sessions_of(conv: dict[str, Any]) -> list[tuple[int, float, list[dict[str, Any]]]]:
    c = conv["conversation"]
    out = []
    for key, turns in c.items():
        m = re.fullmatch(r"session_(\d+)", key)
        if m and isinstance(turns, list) and turns:
            n = int(m.group(1))
            out.append((n, session_time(c[f"session_{n}_date_time"]), turns))
    return sorted(out)


def turn_text(t: dict[str, Any]) -> str:
    return f"{t['speaker']}: {t['text']}"


def recall(ranked: list[str] | list[set[str]], gold: set[str], k: int) -> float:
    """Evidence recall@k; a slot is one turn id, or the set of turn ids it holds."""
    found: set[str] = set()
    for slot in ranked[:k]:
        found |= {slot} if isinstance(slot, str) else slot
    return len(found & gold) / len(gold)


def slot_ids(m: Any, ids: dict[str, str], carried: bool = True) -> set[str]:
    """The turn ids one ``find()`` slot holds: its hit and the turns in its slot
    (``memory_context_chars``); ``carried=False`` leaves out the turns held only as context."""
    out = {ids.get(m.uri, "")}
    out |= {ids.get(c.uri, "") for c in m.collapsed if carried or not c.carried}
    return out - {""}


async def run_conversation(
    conv: dict[str, Any], embedder: Any, tagger: Any, k: int, budget: int = 0, dated: bool = True
) -> dict[str, list[tuple[float, float, bool]]]:
    """Per arm: one ``(recall@5, recall@k, has_window)`` per question."""
    sessions = sessions_of(conv)
    cid = conv["sample_id"]
    turns = [(t, n) for n, _, ts in sessions for t in ts]
    questions = [
        q for q in conv["qa"] if q.get("category") != 5 and evidence_ids(q.get("evidence", []))
    ]
    session_times = [st for _, st, _ in sessions]
    windows = [question_window(q["question"], session_times) for q in questions]
    out: dict[str, list[tuple[float, float, bool]]] = {}

    # flat exact reference
    texts = [turn_text(t) for t, _ in turns]
    ids = [t["dia_id"] for t, _ in turns]
    vecs = np.asarray(embedder.embed(texts), dtype=np.float32)
    qv = np.asarray(embedder.embed([q["question"] for q in questions]), dtype=np.float32)
    order = np.argsort(-(qv @ vecs.T), axis=1)[:, :k]
    out["flat exact"] = [
        (
            recall([ids[j] for j in row], evidence_ids(q["evidence"]), 5),
            recall([ids[j] for j in row], evidence_ids(q["evidence"]), k),
            w is not None,
        )
        for q, row, w in zip(questions, order, windows, strict=True)
    ]

    # turns as files
    flat = AsyncTreehop(None, embedder=embedder, tagger=tagger)
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp) / cid
        d.mkdir()
        for t, _ in turns:
            (d / f"{t['dia_id'].replace(':', '_')}.txt").write_text(turn_text(t))
        await flat.add_resource(d, target_uri=f"viking://resources/{cid}")
    rows = []
    for q, w in zip(questions, windows, strict=True):
        res = await flat.find(
            q["question"], target_uri=f"viking://resources/{cid}", limit=k,
            include_directories=False,
        )  # fmt: skip
        ranked = [m.uri.rsplit("/", 1)[-1].removesuffix(".txt").replace("_", ":") for m in
                  res.contexts()]  # fmt: skip
        gold = evidence_ids(q["evidence"])
        rows.append((recall(ranked, gold, 5), recall(ranked, gold, k), w is not None))
    out["turns as files"] = rows
    await flat.close()

    # the memory write path
    mem = AsyncTreehop(None, embedder=embedder, tagger=tagger)
    await add_conversation(mem, cid, sessions, dated)
    target = f"viking://~/memories/conversations/{cid}"
    msg = {
        mem.display(n.uri): str(n.metadata["message_id"])
        for n in mem.store.iter_nodes(mem.resolve(target))
        if n.is_leaf and "message_id" in n.metadata
    }
    plain, timed, hits_only, alone = [], [], [], []
    budget_chars = mem.config.memory_context_chars
    by_id = {t["dia_id"]: _norm(turn_text(t)) for t, _ in turns}
    budget_rows: dict[str, list[tuple[float, float, bool]]] = {
        "top hits, last one cut": [],
        "assembled, leaves only": [],
        "assembled, with sessions": [],
    }
    for q, w in zip(questions, windows, strict=True):
        gold = evidence_ids(q["evidence"])
        res = await mem.find(q["question"], target_uri=target, limit=k, include_directories=False)
        slots = [slot_ids(m, msg) for m in res.contexts()]
        plain.append((recall(slots, gold, 5), recall(slots, gold, k), w is not None))
        hits = [slot_ids(m, msg, carried=False) for m in res.contexts()]
        hits_only.append((recall(hits, gold, 5), recall(hits, gold, k), w is not None))
        mem.config.memory_context_chars = 0
        try:
            one = await mem.find(
                q["question"], target_uri=target, limit=k, include_directories=False
            )
        finally:
            mem.config.memory_context_chars = budget_chars
        single = [slot_ids(m, msg) for m in one.contexts()]
        alone.append((recall(single, gold, 5), recall(single, gold, k), w is not None))
        if budget:
            leaves = await mem.find(
                q["question"], target_uri=target, limit=20, include_directories=False
            )
            both = await mem.find(q["question"], target_uri=target, limit=20)
            blocks = {
                "top hits, last one cut": naive_block(leaves, budget),
                "assembled, leaves only": assemble_context(leaves, max_tokens=budget).text,
                "assembled, with sessions": assemble_context(both, max_tokens=budget).text,
            }
            for arm, text in blocks.items():
                inside = _norm(text)
                frac = sum(1 for g in gold if g in by_id and by_id[g] in inside) / len(gold)
                budget_rows[arm].append((frac, frac, w is not None))
        if w is not None:
            res = await mem.find(
                q["question"], target_uri=target, limit=k, include_directories=False,
                since=w[0], until=w[1],
            )  # fmt: skip
            slots = [slot_ids(m, msg) for m in res.contexts()]
        timed.append((recall(slots, gold, 5), recall(slots, gold, k), w is not None))
    out["memory"] = plain
    out["memory, hits only"] = hits_only
    out["memory, turns alone"] = alone
    out["memory + since/until"] = timed
    if budget:
        for arm, rows in budget_rows.items():
            out[f"ctx{budget}: {arm}"] = rows
    await mem.close()
    return out


def _norm(text: str) -> str:
    return " ".join(text.split())


def naive_block(res: Any, budget: int) -> str:
    """The simplest alternative to context assembly: the top hits' texts (a slot's whole text,
    a turn with the turns it carries, as a LangChain ``Document`` shows it), each headed by its
    URI, joined until the budget runs out, the last one cut at the budget."""
    counter = default_token_counter()
    parts: list[str] = []
    used = 0
    for m in res.contexts():
        section = f"[{m.uri}]\n{m.slot_text}"
        n = counter.count(section) + (counter.count("\n\n") if parts else 0)
        if used + n <= budget:
            parts.append(section)
            used += n
            continue
        words = section.split(" ")
        while words and used + counter.count(" ".join(words)) + 1 > budget:
            words = words[: max(0, len(words) - max(1, len(words) // 4))]
        if words:
            parts.append(" ".join(words))
        break
    return "\n\n".join(parts)


# --------------------------------------------------------------------------------------------
# Evidence inside a token budget: assemble_context against flat turns packed into the budget
# --------------------------------------------------------------------------------------------

BUDGETS = (250, 500, 1000)
CONTEXT_ARMS = ("treehop assemble_context", "flat dense", "flat hybrid", "flat BM25",
                "framework: 1000c split + flat")  # fmt: skip
ABLATIONS = {
    "- compact turn lines": {"COMPACT_TURNS": False},
    "- compact session headers": {"COMPACT_HEADERS": False},
    "- both (the block before)": {"COMPACT_TURNS": False, "COMPACT_HEADERS": False},
    "slot's neighbours nearest first": {"NEIGHBOUR_ORDER": "slot-near"},
    "ranked turns first, then neighbours": {"NEIGHBOUR_ORDER": "heads"},
    "neighbours by own score": {"NEIGHBOUR_ORDER": "score"},
}
"""treehop rows with one memory-block feature switched off (``treehop.context_assembly``'s
switches), or ordered another way, on the same find() results."""
ALL_ARMS = (*CONTEXT_ARMS, *(f"treehop {k}" for k in ABLATIONS))


def is_held_out(sample_id: str) -> bool:
    """The fixed rule that splits the conversations: held out when sha256(sample_id) is odd.
    Every choice (defaults, orderings) is made on the other (dev) conversations; of the five
    LoCoMo development conversations, conv-26 and conv-42 are dev (351 questions), conv-30,
    conv-41 and conv-43 held out (411)."""
    return int(hashlib.sha256(sample_id.encode()).hexdigest(), 16) % 2 == 1


def pack_best_first(texts: list[str], budget: int, counter: Any) -> str:
    """A flat baseline's block: its units best first, one a line, each taken when it still fits
    (a unit that does not fit is skipped and the next tried: the fairest greedy fill), the
    whole block checked with the same counter as ``assemble_context``."""
    nl = counter.count("\n")
    parts: list[str] = []
    used = 0
    for t in texts:
        n = counter.count(t) + (nl if parts else 0)
        if used + n <= budget:
            parts.append(t)
            used += n
    while parts and counter.count("\n".join(parts)) > budget:
        parts.pop()
    return "\n".join(parts)


def evidence_inside(block: str, gold: set[str], by_id: dict[str, str]) -> float:
    """The share of a question's evidence turns whose whole text (``Speaker: text``) is in the
    block (whitespace normalised)."""
    inside = _norm(block)
    return sum(1 for g in gold if g in by_id and by_id[g] in inside) / len(gold)


async def context_conversation(
    conv: dict[str, Any], embedder: Any, budgets: tuple[int, ...], time_budget: int
) -> tuple[dict[str, dict[int, list[float]]], list[tuple[float, float]]]:
    """Per arm and budget: one evidence-inside fraction per question; and one
    ``(find s, assemble_context s)`` pair per question, timed interleaved on the same query."""
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    import treehop.context_assembly as ca
    from treehop.config import RetrievalConfig
    from treehop.lexical import LexicalIndex
    from treehop.stores.base import Scope

    counter = default_token_counter()
    sessions = sessions_of(conv)
    cid = conv["sample_id"]
    questions = [
        q for q in conv["qa"] if q.get("category") != 5 and evidence_ids(q.get("evidence", []))
    ]
    mem = AsyncTreehop(None, embedder=embedder, tagger="auto")
    await add_conversation(mem, cid, sessions)
    target = f"viking://~/memories/conversations/{cid}"
    by_id = {t["dia_id"]: _norm(turn_text(t)) for _, _, ts in sessions for t in ts}
    # the flat arms rank the very leaves the memory path stored (dated turn texts)
    leaves = sorted(
        (n for n in mem.store.iter_nodes(mem.resolve(target)) if n.is_leaf),
        key=lambda n: n.uri,
    )
    texts = [n.content or n.abstract for n in leaves]
    vecs = np.asarray(embedder.embed(texts), dtype=np.float32)
    lex = LexicalIndex()
    lex.upsert(np.arange(len(texts)), texts)
    splitter = RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=200)
    chunks: list[str] = []
    for session in sorted({n.parent_uri for n in leaves}):
        chunks += splitter.split_text("\n".join(t for n, t in zip(leaves, texts, strict=True)
                                                if n.parent_uri == session))  # fmt: skip
    cvecs = np.asarray(embedder.embed(chunks), dtype=np.float32)
    qvecs = np.asarray(embedder.embed([q["question"] for q in questions]), dtype=np.float32)
    scope = Scope(subtrees=(mem.resolve(target),), leaves_only=True)
    w = RetrievalConfig().dense_weight
    out: dict[str, dict[int, list[float]]] = {a: {b: [] for b in budgets} for a in ALL_ARMS}
    times: list[tuple[float, float]] = []
    for q, qv in zip(questions, qvecs, strict=True):
        gold = evidence_ids(q["evidence"])
        res = await mem.find(q["question"], target_uri=target)
        dense = [texts[i] for i in np.argsort(-(vecs @ qv), kind="stable")[:100]]
        hyb = mem.store.search(qv, scope, 100, query_text=q["question"], dense_weight=w)
        rows, _ = lex.top(q["question"], 100)
        framework = [chunks[i] for i in np.argsort(-(cvecs @ qv), kind="stable")[:30]]
        ranked = {
            "flat dense": dense,
            "flat hybrid": [h.node.content or h.node.abstract for h in hyb],
            "flat BM25": [texts[int(r)] for r in rows],
            "framework: 1000c split + flat": framework,
        }
        for b in budgets:
            block = assemble_context(res, max_tokens=b).text
            out["treehop assemble_context"][b].append(evidence_inside(block, gold, by_id))
            for arm, units in ranked.items():
                out[arm][b].append(evidence_inside(pack_best_first(units, b, counter), gold, by_id))
            for name, switches in ABLATIONS.items():
                saved = {k: getattr(ca, k) for k in switches}
                try:
                    for k, v in switches.items():
                        setattr(ca, k, v)
                    block = assemble_context(res, max_tokens=b).text
                finally:
                    for k, v in saved.items():
                        setattr(ca, k, v)
                out[f"treehop {name}"][b].append(evidence_inside(block, gold, by_id))
        # speed: the two calls a user makes, interleaved on the same query
        t0 = time.perf_counter()
        await mem.find(q["question"], target_uri=target)
        t1 = time.perf_counter()
        await mem.assemble_context(q["question"], max_tokens=time_budget, target_uri=target)
        t2 = time.perf_counter()
        times.append((t1 - t0, t2 - t1))
    await mem.close()
    return out, times


def context_table(convs: list[dict[str, Any]], embedder: Any, budgets: tuple[int, ...]) -> None:
    """Print evidence-inside-the-budget for every arm, dev and held-out conversations apart,
    and the p50/p95 of ``assemble_context`` against ``find()``."""
    halves: dict[str, dict[str, dict[int, list[float]]]] = {}
    times: list[tuple[float, float]] = []
    names: dict[str, list[str]] = {}
    time_budget = 500 if 500 in budgets else budgets[0]
    for conv in convs:
        half = "held-out" if is_held_out(conv["sample_id"]) else "dev"
        names.setdefault(half, []).append(conv["sample_id"])
        res, t = asyncio.run(context_conversation(conv, embedder, budgets, time_budget))
        times += t
        dst = halves.setdefault(half, {a: {b: [] for b in budgets} for a in ALL_ARMS})
        for arm, per in res.items():
            for b, vals in per.items():
                dst[arm][b] += vals
    counter = default_token_counter()
    print(f"Evidence turns wholly inside the context block ({counter.name} tokens); "
          "find() defaults under assemble_context, flat units packed best first\n")  # fmt: skip
    head = f"{'half':9} {'arm':48} {'n':>4} " + " ".join(f"{b:>6}" for b in budgets)
    print(head)
    for half in ("dev", "held-out"):
        if half not in halves:
            continue
        for arm in ALL_ARMS:
            per = halves[half][arm]
            n = len(per[budgets[0]])
            cells = " ".join(f"{np.mean(per[b]):6.3f}" for b in budgets)
            print(f"{half:9} {arm:48} {n:4d} {cells}")
    for half, ids in names.items():
        print(f"  {half}: {', '.join(ids)}")
    f = np.array([t[0] for t in times]) * 1e3
    a = np.array([t[1] for t in times]) * 1e3
    print(
        f"\nSpeed, {len(times)} queries interleaved (BLAS threads "
        f"{os.environ.get('OPENBLAS_NUM_THREADS')}): find() p50 {np.median(f):.2f} ms, p95 "
        f"{np.percentile(f, 95):.2f}; assemble_context(max_tokens={time_budget}, find included) "
        f"p50 {np.median(a):.2f} ms, p95 {np.percentile(a, 95):.2f}; ratio of p50s "
        f"{np.median(a) / np.median(f):.2f}, median per-query ratio {np.median(a / f):.2f}"
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--conversations", type=int, default=None, help="only the first N")
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--tagger", choices=["auto", "none"], default="auto")
    p.add_argument("--no-cache", action="store_true")
    p.add_argument(
        "--plain-text",
        action="store_true",
        help="add_messages(dated_text=False): turn texts without their day",
    )
    p.add_argument(
        "--budget", type=int, default=512, help="context-block token budget (0: skip that table)"
    )
    p.add_argument(
        "--context-table",
        action="store_true",
        help="only the evidence-inside-a-budget table (250/500/1000 tokens) and the speed of "
        "assemble_context against find(), dev and held-out conversations apart",
    )
    p.add_argument("--budgets", default=",".join(map(str, BUDGETS)), help="for --context-table")
    a = p.parse_args(argv)
    if not LOCOMO.is_file():
        print(f"LoCoMo not found at {LOCOMO} (set TREEHOP_LOCOMO)", file=sys.stderr)
        return 2
    embedder = default_embedder(cache=not a.no_cache)
    if a.context_table:
        t0 = time.perf_counter()
        budgets = tuple(int(b) for b in a.budgets.split(","))
        context_table(load_conversations(a.conversations), embedder, budgets)
        print(f"\n({time.perf_counter() - t0:.0f} s)")
        return 0
    tagger: Any = "auto" if a.tagger == "auto" else None
    t0 = time.perf_counter()
    per_arm: dict[str, list[tuple[float, float, bool]]] = {}
    convs = load_conversations(a.conversations)
    for conv in convs:
        res = asyncio.run(run_conversation(conv, embedder, tagger, a.k, a.budget, not a.plain_text))
        for arm, rows in res.items():
            per_arm.setdefault(arm, []).extend(rows)
    n = len(next(iter(per_arm.values())))
    nw = sum(1 for r in next(iter(per_arm.values())) if r[2])
    print(
        f"LoCoMo dev ({len(convs)} conversations, {n} questions with evidence, "
        f"{nw} name a time); find() QUICK, leaves only, tagger={a.tagger}\n"
    )
    print(
        f"{'arm':24} {'R@5':>6} {'R@' + str(a.k):>6}   {'timed R@5':>9} {'timed R@' + str(a.k):>10}"
    )
    for arm, rows in per_arm.items():
        if arm.startswith("ctx"):
            continue
        r5 = np.mean([r[0] for r in rows])
        rk = np.mean([r[1] for r in rows])
        tw = [r for r in rows if r[2]]
        t5 = np.mean([r[0] for r in tw]) if tw else float("nan")
        tk = np.mean([r[1] for r in tw]) if tw else float("nan")
        print(f"{arm:24} {r5:6.3f} {rk:6.3f}   {t5:9.3f} {tk:10.3f}")
    if a.budget:
        print(
            f"\nEvidence turns wholly inside a {a.budget}-token context block built from the "
            f"top 20 hits of find() ({default_token_counter().name} tokens):"
        )
        for arm, rows in per_arm.items():
            if arm.startswith("ctx"):
                label = arm.split(": ", 1)[1]
                print(f"  {label:28} {np.mean([r[0] for r in rows]):6.3f}")
    print(f"\n({time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
