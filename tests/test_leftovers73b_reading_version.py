"""An index built by an older reading of files gets the new titles at its next re-index,
without a file changing (helper leftovers73b; usage83's open item, bench/README.md
"(helper leftovers73b)").

usage83 dropped a Markdown heading's inline HTML (``<a name="sar"></a>``) from chunk titles,
heading paths and abstracts. A folder indexed before kept the old titles for every file that
did not change: a re-index (``treehop index`` / ``add_resource`` of the folder) skipped the
unchanged files unread, by the folder manifest, so the anchor stayed in the titles until the
user removed the index. Now the manifest's fingerprint holds ``READING_VERSION``: a manifest
written by an older reading is not reused, every file is read once more, and only the
chunks whose embedded text changed are embedded again.

The older index is made here as stop 72's code made it: the heading read with its tags
(``drop_inline_tags`` as it was before usage83: not called) and the manifest fingerprinted
by stop 72's formula, copied verbatim (on the base commit it is the formula in use).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from treehop import Treehop
from treehop.ingest import markup, summaries
from treehop.ingest.writer import TreeWriter

from treehop_test_doubles import BagOfWordsEmbedder

FAQ = """## Welcome to the sysstat FAQ

### 2. Questions related to sar<a name="sar"></a>

2.18. How can I keep sar data for more than one month?

A: Set HISTORY in the sysstat configuration file to keep more days.
"""
LONG_FAQ = FAQ + "\n".join(f"More about sar option number {i} and its files." for i in range(300))
PLAIN = "# Plain notes\n\nThe backups run nightly to tape and are kept for a year.\n"
TITLE = "Welcome to the sysstat FAQ › 2. Questions related to sar"


def _stop72_fingerprint(
    self: TreeWriter, target: str, user_tags: list[str], metadata: Mapping[str, Any]
) -> str:
    """``TreeWriter._fingerprint`` as of 01b50d4c (stop 72), verbatim."""
    b = self.builder
    how = {
        "target": target,
        "chunk_chars": b.chunk_chars,
        "leaf_chars": b.leaf_chars,
        "max_file_bytes": b.max_file_bytes,
        "summarizer": f"{type(self.summarizer).__qualname__}:"
        f"{getattr(self.summarizer, 'name', '')}",
        "tagger": type(self.tagger).__qualname__ if self.tagger is not None else None,
        "user_tags": sorted(user_tags),
        "metadata": json.dumps(dict(metadata), sort_keys=True, default=repr),
    }
    return hashlib.sha1(json.dumps(how, sort_keys=True).encode()).hexdigest()


def _chunks(th: Treehop) -> list[Any]:
    f = th.store.get(["viking://resources/doc/FAQ.md"])[0]
    assert f is not None and f.metadata["chunks"] > 1
    uris = [f"viking://resources/doc/FAQ.md#chunk-{i}" for i in range(f.metadata["chunks"])]
    return [n for n in th.store.get(uris) if n is not None]


def test_a_reindex_retitles_an_index_an_older_reading_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = tmp_path / "doc"
    doc.mkdir()
    (doc / "FAQ.md").write_text(LONG_FAQ, encoding="utf-8")
    (doc / "notes.md").write_text(PLAIN, encoding="utf-8")
    with monkeypatch.context() as m:  # the index stop 72's code (before usage83) wrote
        m.setattr(markup, "drop_inline_tags", lambda text: text)
        m.setattr(summaries, "drop_inline_tags", lambda text: text)
        m.setattr(TreeWriter, "_fingerprint", _stop72_fingerprint)
        with Treehop(str(tmp_path / "idx"), embedder=BagOfWordsEmbedder()) as th:
            first = th.add_resource(str(doc), target_uri="viking://resources/doc")
            old = _chunks(th)
            plain = th.store.get(["viking://resources/doc/notes.md"])[0]
    assert first.read == 2
    assert all('<a name="sar"></a>' in n.metadata["chunk_title"] for n in old)  # the premise
    assert plain is not None and "<a" not in plain.content
    with Treehop(str(tmp_path / "idx"), embedder=BagOfWordsEmbedder()) as th:
        again = th.add_resource(str(doc), target_uri="viking://resources/doc")  # no file changed
        new = _chunks(th)
        kept = th.store.get(["viking://resources/doc/notes.md"])[0]
        hits = th.find("keep sar data for more than one month", limit=3).contexts()
        third = th.add_resource(str(doc), target_uri="viking://resources/doc")
    assert again.read == 2  # every file read once more
    assert new and all(n.metadata["chunk_title"] == TITLE for n in new)
    assert all(n.content.startswith(TITLE + "\n") for n in new)  # what is embedded
    assert all(n.abstract.startswith(TITLE + ": ") for n in new)
    assert hits and all("<a name" not in h.abstract for h in hits)
    # only what changed is embedded again: the FAQ's chunks (and the folder nodes above
    # them), never the unchanged plain file
    assert kept is not None and kept.content_hash == plain.content_hash
    assert len(new) <= again.embedded < len(new) + 1 + 4
    assert third.read == 0 and third.embedded == 0  # then incremental as before
