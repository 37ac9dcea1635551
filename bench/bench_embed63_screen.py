"""Embedder screen (issue 33, helper embed63): bench_natural.py with another embedder behind
every row.

    python bench/bench_embed63_screen.py --candidate e5small --dev --sets gitfaq \\
        --rows flat-dense,flat-hybrid,find,langchain --json /tmp/embed63/e5_gitfaq.json

Every other argument is bench_natural.py's, whose defaults this leaves alone (without
``--candidate`` the run is bench_natural.py's own, MiniLM). With ``--candidate KEY``
(``embed63_embedders.CANDIDATES``: ``e5small``, or ``e5small-centered``, the same vectors
minus a fixed centre) every row (find(), the flat rows over the same leaves,
LangChain, LlamaIndex) uses that model, its vectors cached under
``$TREEHOP_BENCH_CACHE/embed63/embeddings`` (a namespaced folder; the shared cache is only
read). Questions go through the model's query side (e5's ``query:``): the harness embeds
them as documents, which is right only for a symmetric model, so ``MemoEmbedder.prepare``
is routed through ``embed_queries`` when the embedder has one.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_natural as bn  # noqa: E402
import bench_tree as bt  # noqa: E402
import datasets as ds  # noqa: E402
import embed63_embedders as ee  # noqa: E402


def _prepare(self: Any, texts: Any) -> None:
    todo = [t for t in dict.fromkeys(texts) if t not in self.queries]
    if not todo:
        return
    side = getattr(self.inner, "embed_queries", None)
    vecs = side(todo) if side is not None else self.inner.embed(todo)
    for t, v in zip(todo, vecs, strict=True):
        self.queries[t] = bn.np.asarray(v, dtype=bn.np.float32)


def main(argv: list[str]) -> None:
    candidate = ""
    if "--candidate" in argv:
        i = argv.index("--candidate")
        candidate = argv[i + 1]
        del argv[i : i + 2]
    if candidate:
        if candidate not in ee.CANDIDATES:
            raise SystemExit(f"--candidate: one of {sorted(ee.CANDIDATES)}")
        cache_dir = ds.CACHE_DIR / "embed63" / "embeddings"
        made = ee.cached_candidate(candidate, cache_dir)
        bn.bench_embedder = lambda spec: made  # type: ignore[assignment]
        bt.MemoEmbedder.prepare = _prepare  # type: ignore[method-assign]
    try:
        bn.main(argv)
    finally:
        got = bn.bench_embedder("") if candidate else None
        if got is not None:
            print(
                f"- embed63: {got.key} embedded {got.docs.misses} document texts in "
                f"{got.embed_seconds:.0f}s (cache misses only)",
                file=sys.stderr,
            )


if __name__ == "__main__":
    main(sys.argv[1:])
