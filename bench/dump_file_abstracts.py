"""Every cached corpus file's abstract as the checkout's summariser writes it (the lead, stop 75).

Run it once per checkout (``PYTHONPATH`` naming that checkout's ``retrieval``) and compare the
two JSON files: which files' abstracts a summariser change moves, before any benchmark.

    PYTHONPATH=/tmp/base/retrieval python bench/dump_file_abstracts.py CACHE/natural base.json
    PYTHONPATH=retrieval python bench/dump_file_abstracts.py CACHE/natural head.json
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

from treehop.ingest import summaries
from treehop.ingest.loaders import kind_of
from treehop.ingest.markup import looks_like_rst


def corpus_files(root: Path) -> Iterator[tuple[Path, str, str]]:
    """``(path, text, kind)`` for every file under ``root`` ingest reads, in path order.

    (``.txt`` reads as reST where it looks like reST, as ingest reads it.)
    """
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        kind = kind_of(path) or ("text" if not path.suffix else None)
        if kind is None:
            continue
        text = path.read_text("utf-8", errors="replace")
        if kind == "text" and path.suffix.lower() in {".txt", ".text"} and looks_like_rst(text):
            kind = "rst"
        yield path, text, kind


def dump(root: Path) -> dict[str, str]:
    """``{path under root: file abstract}``, read as ingest reads them."""
    s = summaries.ExtractiveSummarizer()
    return {
        str(path.relative_to(root)): s.summarize_file(path.name, text, kind)[0]
        for path, text, kind in corpus_files(root)
    }


if __name__ == "__main__":
    found = dump(Path(sys.argv[1]))
    Path(sys.argv[2]).write_text(json.dumps(found, indent=0))
    print(len(found), "files")
