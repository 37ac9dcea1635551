"""Plain-text rendering for the command line: tables, result provenance, search traces, trees.

Why no ``rich``: the core depends only on pydantic/httpx/numpy, and everything shown here is a
few aligned columns. The one thing a terminal library usually brings -- width handling for
CJK text -- is done below with :func:`unicodedata.east_asian_width`, so that a table holding
``单点登录`` stays aligned.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, TextIO

from .. import uri as urimod
from ..models import SCORE_KIND_FUSED as _SCORE_KIND_FUSED
from ..models import FindResult, FoundBy, MatchedContext, QueryPlan, QueryResult, TypedQuery

Display = Callable[[str], str]
"""Turns a resolved URI into the form the user typed (``viking://~/...``)."""

MIN_FLEX = 30
"""Below this many columns a table's free-text column moves to its own line under each row."""
GAP = "  "
_WS = re.compile(r"\s+")


# ---------------------------------------------------------------------------------- text width
def cell_width(text: str) -> int:
    """Terminal columns ``text`` takes: wide (CJK) characters count 2, combining marks 0."""
    w = 0
    for ch in text:
        if unicodedata.combining(ch):
            continue
        w += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return w


def truncate(text: str, width: int) -> str:
    """Cut ``text`` to at most ``width`` columns, marking the cut with an ellipsis."""
    if width <= 0:
        return ""
    if cell_width(text) <= width:
        return text
    out: list[str] = []
    used = 0
    for ch in text:
        cw = 0 if unicodedata.combining(ch) else cell_width(ch)
        if used + cw > width - 1:
            break
        out.append(ch)
        used += cw
    return "".join(out) + "…"


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """``text`` with C0/C1 control characters (but newline and tab) shown as U+FFFD: a
    document's ESC sequences (window title, clear screen, hidden text) and BEL must not act
    on the user's terminal. So are the bidirectional embeddings, overrides and isolates
    (U+202A-202E, U+2066-2069): a terminal that reorders by them showed a message or an
    abstract spelled backwards across the row's other columns (helper attacks71; a URI and
    a speaker refuse them already). The marks (U+200E, U+200F), which right-to-left text
    uses and which reorder nothing past their neighbours, are kept."""
    return _CONTROL.sub("\ufffd", text)


def one_line(text: str) -> str:
    """Collapse newlines and runs of whitespace, so that a cell never breaks a row; control
    characters are shown, not sent (:func:`printable`)."""
    return printable(_WS.sub(" ", text).strip())


def pad(text: str, width: int, align: str = "<") -> str:
    fill = " " * max(0, width - cell_width(text))
    return fill + text if align == ">" else text + fill


# ---------------------------------------------------------------------------------- tables
@dataclass(frozen=True)
class Column:
    """One table column. A ``flex`` column gets the width left over and is truncated to it."""

    header: str
    align: str = "<"
    flex: bool = False


def table(columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int) -> list[str]:
    """Aligned rows under a header, fitted to ``width`` terminal columns.

    Fixed columns are never truncated (a URI must stay copyable); the single flex column (the
    abstract) takes what is left. When less than :data:`MIN_FLEX` is left, the flex text goes
    on an indented line below its row instead of being cut to nothing.
    """
    cells = [[one_line(c) for c in r] for r in rows]
    flex = next((i for i, c in enumerate(columns) if c.flex), None)
    widths = [cell_width(c.header) for c in columns]
    for r in cells:
        for i, c in enumerate(r):
            widths[i] = max(widths[i], cell_width(c))
    fixed = [i for i in range(len(columns)) if i != flex]
    used = sum(widths[i] for i in fixed) + len(GAP) * (len(columns) - 1)
    below = False
    if flex is not None:
        room = width - used
        if room < MIN_FLEX:
            below = True
        else:
            widths[flex] = min(widths[flex], room)
    shown = [i for i in range(len(columns)) if not (below and i == flex)]

    def line(values: Sequence[str]) -> str:
        parts = []
        for i in shown:
            v = truncate(values[i], widths[i]) if i == flex else values[i]
            last = i == shown[-1]
            parts.append(
                v if last and columns[i].align == "<" else pad(v, widths[i], columns[i].align)
            )
        return GAP.join(parts).rstrip()

    out = [line([c.header for c in columns])]
    indent = widths[0] + len(GAP) if shown else 0
    for r in cells:
        out.append(line(r))
        if below and flex is not None and r[flex]:
            out.append(" " * indent + truncate(r[flex], max(MIN_FLEX, width - indent)))
    return out


def _n(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def score(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


# ---------------------------------------------------------------------------------- provenance
def _short_via(via: str, hit_uri: str) -> str:
    """An ancestor of the hit by its last segment (the hit's URI already shows the path)."""
    if urimod.is_within(hit_uri, via) and via != hit_uri:
        return "…/" + via.rsplit("/", 1)[-1].split("#", 1)[0] + "/"
    return via


def how_found(m: MatchedContext, display: Display) -> str:
    """One phrase for how a hit entered the results: global, child of …, tag hop via … from …."""
    via = display(m.found_via) if m.found_via else None
    if m.found_by is FoundBy.TAG_HOP:
        src = display(m.hop_source) if m.hop_source else "?"
        tag = m.hop_tag or "?"
        return f"tag hop via '{tag}' from {src}"
    if m.found_by is FoundBy.CHILD:
        return f"child of {_short_via(via, m.uri)}" if via else "child"
    if m.found_by is FoundBy.NEIGHBOUR:
        return f"neighbour of {via}" if via else "neighbour chunk"
    return "global"


def _query_key(q: TypedQuery) -> tuple[str, str | None]:
    return (q.query, q.context_type.value if q.context_type else None)


FUSED_NOTE = (
    "fused: reciprocal-rank fusion of the typed queries' rankings (1.000 = first in every "
    "query), not a similarity; vector: the hit's own cosine"
)
"""The line under ``search``'s table. Why: its scores fall 1.000, 0.984, 0.968, ... down the
list whatever the hits' similarities (a file at cosine 0.024 showed 0.924), and a column
headed ``score``, as ``find``'s similarities are, read as a near-certain match (usage82)."""

SCORE_KIND_FUSED = _SCORE_KIND_FUSED
"""``search --json``'s ``score_kind``: each hit's ``score`` is a normalised fused rank
(:data:`treehop.models.SCORE_KIND_FUSED`, which the MCP ``search`` tool names too)."""


def result_rows(
    hits: Sequence[MatchedContext],
    display: Display,
    plan: QueryPlan | None = None,
    *,
    fused: bool = False,
) -> tuple[list[Column], list[list[str]]]:
    """Columns and rows of the results table; with a plan, which typed queries found each hit.

    ``vector`` is shown only when some score is not the plain vector score (reranked or fused
    hits), ``rerank`` only when a reranker ran: columns that repeat ``score`` cost width that the
    abstract needs. ``fused``: the scores are ``search``'s fused ranks, headed ``fused``.
    """
    show_vector = any(m.vector_score is None or m.vector_score != m.score for m in hits)
    show_rerank = any(m.rerank_score is not None or m.rerank_fallback for m in hits)
    cols = [Column("#", ">"), Column("fused" if fused else "score", ">")]
    if show_vector:
        cols.append(Column("vector", ">"))
    if show_rerank:
        cols.append(Column("rerank", ">"))
    cols += [Column("uri"), Column("found")]
    index: dict[tuple[str, str | None], int] = {}
    if plan is not None:
        cols.append(Column("queries"))
        index = {_query_key(q): i for i, q in enumerate(plan.queries, 1)}
    cols.append(Column("abstract", flex=True))
    rows = []
    for rank, m in enumerate(hits, 1):
        row = [str(rank), score(m.score)]
        if show_vector:
            row.append(score(m.vector_score))
        if show_rerank:
            row.append("fallback" if m.rerank_fallback else score(m.rerank_score))
        row += [m.uri, how_found(m, display)]
        if plan is not None:
            ids = [index.get(_query_key(q)) for q in m.matched_queries]
            row.append(",".join(f"q{i}" for i in ids if i is not None) or "-")
        row.append(m.abstract)
        rows.append(row)
    return cols, rows


def render_results(
    out: TextIO,
    query: str,
    res: FindResult,
    display: Display,
    width: int,
    *,
    limit: int | None = None,
    text_chars: int = 0,
    fused: bool = False,
) -> None:
    """The results table of ``find``/``search`` plus one summary line per typed query;
    ``text_chars``: each hit's passage (:attr:`MatchedContext.slot_text`) after the table,
    up to that many characters (0: none); ``fused``: ``search``'s fused ranks, the column
    headed so and :data:`FUSED_NOTE` under the table."""
    hits = res.contexts()
    if limit is not None:
        hits = hits[:limit]
    if not hits:
        print(f"no results for {query!r}", file=out)
    else:
        noun = "hit" if len(hits) == 1 else "hits"
        print(f"{len(hits)} {noun} for {query!r}", file=out)
        cols, rows = result_rows(hits, display, res.query_plan, fused=fused)
        for line in table(cols, rows, width):
            print(line, file=out)
        if fused:
            print(FUSED_NOTE, file=out)
        if text_chars:
            render_passages(out, hits, display, text_chars)
    for i, qr in enumerate(res.query_results or [], 1):
        label = f"q{i} " if res.query_plan is not None else ""
        hops = qr.tag_hops
        hop = f"{len(hops.subtrees_added)} subtrees added" if hops.triggered else "not triggered"
        print(
            f"{label}search: {_n(len(qr.starting_points), 'starting point')}, "
            f"{_n(qr.rounds, 'round')}, {_n(qr.nodes_scored, 'node')} scored, "
            f"{qr.elapsed_ms:.0f} ms; stopped: "
            f"{qr.stop_reason or '-'}; tag hops: {hop}",
            file=out,
        )
        if qr.rerank_fallback:
            reason = printable(str(qr.rerank_fallback_reason))
            print(f"  rerank fell back to vector scores: {reason}", file=out)


def render_passages(
    out: TextIO, hits: Sequence[MatchedContext], display: Display, chars: int
) -> None:
    """Each hit's passage under a ``--- #. URI`` line, cut at ``chars`` (marked ``[...]``),
    control characters shown, not sent (:func:`printable`)."""
    for i, m in enumerate(hits, 1):
        text = m.slot_text
        cut = len(text) > chars
        print(f"\n--- {i}. {printable(display(m.uri))}", file=out)
        print(printable(text[:chars].rstrip()) + (" [...]" if cut else ""), file=out)


def render_plan(out: TextIO, plan: QueryPlan) -> None:
    """What intent analysis decided: the typed queries, or why it fell back / found nothing."""
    who = plan.planner or "no planner"
    if plan.fallback:
        reason = printable(str(plan.fallback_reason))
        print(f"plan: fallback ({reason}); searching the raw query", file=out)
    else:
        print(f"plan by {who}: {len(plan.queries)} typed queries", file=out)
    if not plan.queries:
        print("  no retrieval needed (the planner found no information need)", file=out)
    for i, q in enumerate(plan.queries, 1):
        ctype = q.context_type.value if q.context_type else "any"
        # (a model's words: an intent of "\x1b]0;...\x07" reached the terminal as it was)
        intent = f"  -- {one_line(q.intent)}" if q.intent else ""
        print(f"  q{i}  {ctype:<8}  priority {q.priority}  {q.query!r}{intent}", file=out)
    if plan.reasoning and not plan.fallback:
        print(f"  reasoning: {one_line(plan.reasoning)}", file=out)


def render_explain(out: TextIO, qr: QueryResult, display: Display, label: str = "") -> None:
    """The heap search path: starting points, each round's popped directory and its best
    children, why the search stopped, and what the tag-hop stage did."""
    q = qr.query
    ctype = f" [{q.context_type.value}]" if q.context_type else ""
    print(f"\nsearch path{label} for {q.query!r}{ctype}", file=out)
    print(f"  starting points ({len(qr.starting_points)}):", file=out)
    for uri, s in sorted(qr.starting_points, key=lambda x: -x[1]):
        print(f"    {s:7.3f}  {display(uri)}", file=out)
    print(f"  rounds ({qr.rounds}):", file=out)
    if qr.rounds and not qr.trace:
        print("    (no trace recorded: run with --explain)", file=out)
    for t in qr.trace:
        print(
            f"    {t.round:>3}. popped {display(t.popped)} ({t.popped_score:.3f}), "
            f"{t.children_scored} {'child' if t.children_scored == 1 else 'children'} scored",
            file=out,
        )
        for child, s in t.best_children:
            print(f"           -> {s:.3f}  {display(child)}", file=out)
        if t.rerank_fallback_reason:
            print(
                f"           (rerank fell back: {printable(str(t.rerank_fallback_reason))})",
                file=out,
            )
    print(f"  stopped: {qr.stop_reason or '-'}", file=out)
    render_tree_effect(out, qr, display)
    h = qr.tag_hops
    if not h.triggered:
        reason = f" ({h.trigger_reason})" if h.trigger_reason else ""
        print(f"  tag hops: not triggered{reason}", file=out)
    else:
        print(f"  tag hops: triggered ({h.trigger_reason})", file=out)
        if h.tags_used:
            print(f"    tags used: {printable(', '.join(h.tags_used))}", file=out)
        for subtree in h.subtrees_added:
            print(f"    subtree added: {display(subtree)}", file=out)
        print(f"    hits produced: {h.hits_produced}, in top-k: {h.hits_in_topk}", file=out)


def tree_effect_lines(qr: QueryResult, display: Display) -> list[str]:
    """What the tree changed for this query, hit by hit: hits the global step did not return
    (found by opening a directory, or by a tag hop), hits whose rank moved because their tree
    context (neighbouring chunks or turns, best sibling, parent directory; propagation at
    alpha < 1) was blended into their score, and chunks folded into their document's slot."""
    hits = qr.matched_contexts
    own = [m.score if m.own_score is None else m.own_score for m in hits]
    own_order = sorted(range(len(hits)), key=lambda i: -own[i])
    own_rank = {i: r for r, i in enumerate(own_order, 1)}
    lines = []
    for rank, m in enumerate(hits, 1):
        why = []
        if m.found_by is not FoundBy.GLOBAL:
            why.append(f"below the global step: {how_found(m, display)}")
        if m.own_score is not None and abs(m.score - m.own_score) > 1e-6:
            moved = own_rank[rank - 1]
            shift = f", #{moved} on its own score" if moved != rank else ""
            why.append(f"own {m.own_score:.3f} -> {m.score:.3f} with its tree context{shift}")
        turns = [c for c in m.collapsed if c.position is not None]
        if turns:
            merged = sum(1 for c in turns if not c.carried)
            why.append(
                f"carries {_n(len(turns), 'neighbouring turn')}"
                + (f" ({merged} of them hits merged into this slot)" if merged else "")
            )
        elif m.collapsed:
            why.append(f"{_n(len(m.collapsed), 'more chunk')} of this document folded in")
        if why:
            lines.append(f"    #{rank} {display(m.uri)}: {'; '.join(why)}")
    return lines


def render_tree_effect(out: TextIO, qr: QueryResult, display: Display) -> None:
    lines = tree_effect_lines(qr, display)
    found_below = sum(1 for m in qr.matched_contexts if m.found_by is not FoundBy.GLOBAL)
    print(
        f"  tree effect: {found_below} of {len(qr.matched_contexts)} hits found below the "
        "global step" + (":" if lines else ""),
        file=out,
    )
    for line in lines:
        print(line, file=out)


# ---------------------------------------------------------------------------------- browse
def kind_of(uri: str, is_leaf: bool, kind: str = "") -> str:
    """The ``kind`` column of ``ls``: ``dir``, ``file``, ``chunk`` or ``text``."""
    if urimod.CHUNK_MARK in uri:
        return "chunk"
    if kind:
        return "dir" if kind == "directory" else kind
    return "file" if is_leaf else "dir"


def render_tree(out: TextIO, node: dict[str, Any], width: int, show_abstract: bool = True) -> None:
    """The subtree as box-drawing lines, directories first, each with its abstract."""

    def label(n: dict[str, Any], full: bool) -> str:
        uri = str(n["uri"])
        name = uri if full else uri.rsplit("/", 1)[-1]
        if urimod.CHUNK_MARK in name and not full:
            name = "#" + name.split("#", 1)[1]
        if n.get("kind") == "file" and not n.get("is_leaf"):
            count = n.get("chunks") or len(n.get("children") or [])
            # (a file, not a folder to open; "1 chunks" was a vector store's one-node file)
            return f"{name} ({count} chunk{'' if count == 1 else 's'})"
        return name if n.get("is_leaf") else name + "/"

    def emit(prefix: str, text: str, abstract: str) -> None:
        line = prefix + text
        if show_abstract and abstract:
            room = width - cell_width(line) - len(GAP)
            if room >= 10:
                line += GAP + truncate(one_line(abstract), room)
        print(line, file=out)

    def walk(n: dict[str, Any], prefix: str) -> None:
        kids = n.get("children") or []
        for i, k in enumerate(kids):
            last = i == len(kids) - 1
            emit(prefix + ("└── " if last else "├── "), label(k, False), str(k.get("abstract", "")))
            walk(k, prefix + ("    " if last else "│   "))

    emit("", label(node, True), str(node.get("abstract", "")))
    walk(node, "")


def is_document(node: dict[str, Any]) -> bool:
    """A leaf, or a chunked file: an inner node over its chunks, but one document to a reader
    (``treehop read`` prints it whole; :func:`render_tree` shows it as ``name (N chunks)``)."""
    return bool(node.get("is_leaf")) or node.get("kind") == "file"


def count_tree(node: dict[str, Any]) -> tuple[int, int]:
    """(directories, leaves) shown in a rendered tree, the root excluded. A chunked file is
    one leaf and its chunks none (they are parts of it): counted as a directory over its
    chunks, ``docs/`` with one 7-chunk file read "2 directories, 7 leaves"."""
    dirs = leaves = 0
    for k in node.get("children") or []:
        if is_document(k):
            leaves += 1
            continue
        dirs += 1
        d, f = count_tree(k)
        dirs += d
        leaves += f
    return dirs, leaves


# ---------------------------------------------------------------------------------- progress
PROGRESS_MODES = ("auto", "bar", "plain", "none")


def _duration(seconds: float) -> str:
    """``45s``, ``4m10s``, ``2h05m``: an ETA short enough for a log line."""
    s = max(0, round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


class Progress:
    """The ``progress(stage, done, total)`` callback of ``add_resource`` for the CLI.

    Modes (``--progress``): ``bar`` redraws one line with ``\r`` (a terminal); ``plain``
    prints a whole line at most every :attr:`interval_s` seconds, and at the end, that a log
    file keeps (files, nodes, nodes/s, ETA); ``none`` prints nothing; ``auto`` (the
    default) is ``bar`` on a terminal and ``plain`` otherwise, so that ``treehop index ...
    > log 2>&1`` shows how far a long ingest got.

    The core calls it from its event-loop thread, one call at a time, so no lock is needed.
    """

    BAR = 24
    LABELS: ClassVar[dict[str, str]] = {
        "embed": "embedding",
        "summarize": "summarising",
        "read": "reading",
    }

    def __init__(
        self,
        stream: TextIO,
        enabled: bool | None = None,
        *,
        mode: str = "auto",
        interval_s: float = 10.0,
        clock: Callable[[], float] | None = None,
    ) -> None:
        import time

        if mode not in PROGRESS_MODES:
            raise ValueError(f"progress mode must be one of {PROGRESS_MODES}, got {mode!r}")
        self.stream = stream
        if enabled is not None:  # (the older switch: on = a bar, off = nothing)
            mode = "bar" if enabled else "none"
        if mode == "auto":
            mode = "bar" if _isatty(stream) else "plain"
        self.mode = mode
        self.enabled = mode != "none"
        self.interval_s = interval_s
        self._clock = clock or time.monotonic
        self._open = False
        self._files = (0, 0)
        self._nodes = (0, 0)
        self._t0: float | None = None
        self._n0 = 0
        self._last_line = -1e18
        self._pending = False

    def __call__(self, stage: str, done: int, total: int) -> None:
        if self.mode == "none":
            return
        if stage == "files":
            self._files = (done, total)
            return
        if self.mode == "bar":
            self._bar(stage, done, total)
            return
        now = self._clock()
        if stage == "embed":
            if self._t0 is None:
                self._t0, self._n0 = now, done  # (the rate counts what came after)
            self._nodes = (done, total)
        self._pending = True
        if done >= total or now - self._last_line >= self.interval_s:
            self._line(stage, done, total, now)

    def _line(self, stage: str, done: int, total: int, now: float) -> None:
        parts = []
        if stage != "embed":
            parts.append(f"{self.LABELS.get(stage, stage)} {done}/{total}")
        if self._files[1]:
            parts.append(f"{self._files[0]}/{self._files[1]} files")
        n_done, n_total = self._nodes
        if n_total:
            parts.append(f"{n_done}/{n_total} nodes")
            elapsed = now - (self._t0 if self._t0 is not None else now)
            if elapsed > 0 and n_done > self._n0:
                rate = (n_done - self._n0) / elapsed
                parts.append(f"{rate:.1f} nodes/s")
                if n_done < n_total:
                    parts.append(f"ETA {_duration((n_total - n_done) / rate)}")
        if parts:
            self.stream.write("progress: " + ", ".join(parts) + "\n")
            self.stream.flush()
        self._last_line = now
        self._pending = False

    def _bar(self, stage: str, done: int, total: int) -> None:
        total = max(total, 1)
        done = min(max(done, 0), total)
        filled = round(self.BAR * done / total)
        bar = "█" * filled + "░" * (self.BAR - filled)
        label = self.LABELS.get(stage, stage)
        self.stream.write(f"\r{label:<11} {bar} {done}/{total}")
        self._open = True
        if done >= total:
            self.stream.write("\n")
            self._open = False
        self.stream.flush()

    def note(self, message: str) -> None:
        """A status line (for steps that report no counts, like reading and summarising)."""
        if self.enabled:
            self.finish()
            self.stream.write(message + "\n")
            self.stream.flush()

    def finish(self) -> None:
        if self._open:
            self.stream.write("\n")
            self.stream.flush()
            self._open = False


def _isatty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # a closed or odd stream: not a terminal
        return False
