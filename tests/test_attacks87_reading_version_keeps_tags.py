"""The re-read an older index gets once (``READING_VERSION``, stop 73) keeps the user tags
``set_tags`` gave its nodes (helper attacks87).

Stop 73 (helper leftovers73b) put ``READING_VERSION`` in every folder manifest's fingerprint,
so the first ``add_resource`` / ``treehop index`` of a folder after an upgrade reads every
file once more, no file having changed. That re-read builds every node again and gives it
the call's tags: a tag a user had added with ``set_tags`` (``treehop tag --add``) to a file,
a chunk or a folder -- and a call's tag a user had removed from one -- was dropped for every
file of every folder indexed before the upgrade, silently, by a re-index that was meant to
change only titles. (A re-read asked for by the call itself -- other tags, other metadata,
another chunk size -- or a changed file still builds its nodes from the call: unchanged.)
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from treehop import Treehop
from treehop.ingest.writer import TreeWriter

from treehop_test_doubles import BagOfWordsEmbedder

DOC = "viking://resources/doc"


def _stop72_fingerprint(
    self: TreeWriter, target: str, user_tags: list[str], metadata: Mapping[str, Any]
) -> str:
    """``TreeWriter._fingerprint`` as of 01b50d4c (stop 72, before READING_VERSION)."""
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


def _folder(tmp_path: Path) -> Path:
    doc = tmp_path / "doc"
    (doc / "sub").mkdir(parents=True)
    long = "# Keys\n\nThe keys rotate every ninety days.\n\n## More\n\n" + "rotation words. " * 300
    (doc / "a.md").write_text(long, encoding="utf-8")
    (doc / "b.md").write_text("# Backups\n\nThe backups run nightly.\n", encoding="utf-8")
    (doc / "sub" / "c.md").write_text("# Certs\n\nThe certs renew monthly.\n", encoding="utf-8")
    return doc


def _user_tags(th: Treehop) -> dict[str, list[str]]:
    return {
        n.uri: sorted(t for t in n.tags if t.startswith("user:")) for n in th.store.iter_nodes(DOC)
    }


def _old_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    with monkeypatch.context() as m:  # the index stop 72's code wrote
        m.setattr(TreeWriter, "_fingerprint", _stop72_fingerprint)
        with Treehop(str(tmp_path / "idx"), embedder=BagOfWordsEmbedder()) as th:
            th.add_resource(str(_folder(tmp_path)), target_uri=DOC, tags=["proj"])
            th.set_tags(f"{DOC}/b.md", add=["pinned"])
            th.set_tags(f"{DOC}/a.md#chunk-0", add=["chunkpin"])
            th.set_tags(f"{DOC}/sub", add=["team-x"])
            th.set_tags(f"{DOC}/sub/c.md", remove=["proj"])
            return _user_tags(th)


def test_the_upgrade_reread_keeps_set_tags(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = _old_index(tmp_path, monkeypatch)
    assert before[f"{DOC}/b.md"] == ["user:pinned", "user:proj"]  # (the premise)
    assert before[f"{DOC}/sub/c.md"] == []
    with Treehop(str(tmp_path / "idx"), embedder=BagOfWordsEmbedder()) as th:
        again = th.add_resource(str(tmp_path / "doc"), target_uri=DOC, tags=["proj"])
        after = _user_tags(th)
        inherited = th.store.get([f"{DOC}/sub/c.md"])[0]
        third = th.add_resource(str(tmp_path / "doc"), target_uri=DOC, tags=["proj"])
        last = _user_tags(th)
    assert again.read == 3  # (every file read once more: the upgrade's re-read)
    assert after == before
    assert inherited is not None and "inherit:team-x" in inherited.tags
    assert third.read == 0 and last == before


def test_a_reread_the_call_asks_for_still_takes_the_calls_tags(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Control (passes on the base too, in its first form): other tags in the call re-read
    with those tags in the last list's place. Changed on purpose by helper leftovers75:
    ``set_tags``' edits stay (b.md's ``pinned``)."""
    _old_index(tmp_path, monkeypatch)
    with Treehop(str(tmp_path / "idx"), embedder=BagOfWordsEmbedder()) as th:
        th.add_resource(str(tmp_path / "doc"), target_uri=DOC, tags=["other"])
        after = _user_tags(th)
    assert after[f"{DOC}/b.md"] == ["user:other", "user:pinned"]
    assert after[f"{DOC}/sub/c.md"] == ["user:other"]
    assert after[f"{DOC}/sub"] == ["user:other", "user:team-x"]
