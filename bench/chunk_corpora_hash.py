#!/usr/bin/env python
"""chunk_corpora_hash.py DIR... : one line per corpus folder: its chunk count and a hash of
every chunk's (file, title, text, passage) as ``split_text`` cuts it at 1,000 characters.

Why: a chunking change that should move nothing (or only some corpora) is checked by running
this on two checkouts (``PYTHONPATH=<tree>/retrieval``) over the cached natural-question
corpora (``$TREEHOP_BENCH_CACHE/natural/*``) and diffing the two outputs, in about a minute,
before any benchmark is run (stop 77, the lead)."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

from treehop.ingest import loaders
from treehop.ingest.chunking import split_text


def main(dirs: list[str]) -> None:
    for d in dirs:
        h = hashlib.sha256()
        n = 0
        for f in loaders.walk(Path(d)).files:
            for c in split_text(f.text, f.kind, 1000):
                h.update(repr((f.relpath, c.title, c.text, c.passage)).encode())
                n += 1
        print(Path(d).name, n, h.hexdigest()[:16], flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
