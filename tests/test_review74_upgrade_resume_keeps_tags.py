"""An upgrade's re-read that stops before its end keeps ``set_tags``' user tags on the
re-read that resumes it (helper review74).

attacks87 made the first re-index after a ``READING_VERSION`` change keep each stored
node's user tags (a tag ``set_tags`` added, a call's tag it removed): the manifest's
fingerprint is this call's under an older reading. But the ingest writes a partial manifest
under the *new* fingerprint before its first write (so that a stopped run resumes), and a
run stopped there -- Ctrl-C, a kill, a store or tagger error -- left a manifest that matches
the call: the run that resumed it read every file not yet committed as an ordinary re-read
and gave their nodes the call's tags, dropping every ``set_tags`` edit of the files the
upgrade had not reached. The partial manifest now says that its run kept user tags, and the
run that resumes it keeps them too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from test_attacks87_reading_version_keeps_tags import DOC, _old_index, _user_tags
from treehop import Treehop
from treehop.ingest.writer import TreeWriter, _Manifest

from treehop_test_doubles import BagOfWordsEmbedder


class Stop(Exception):
    """The run stopped (a Ctrl-C or a failed write) after its partial manifest."""


def _stopped_reread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tags: list[str]) -> None:
    """A re-index stopped after its partial manifest, before its first commit."""

    async def stop(*args: object, **kwargs: object) -> None:
        raise Stop

    with monkeypatch.context() as m:
        m.setattr(TreeWriter, "write", stop)
        th = Treehop(str(tmp_path / "idx"), embedder=BagOfWordsEmbedder())
        with th, pytest.raises(Stop):
            th.add_resource(str(tmp_path / "doc"), target_uri=DOC, tags=tags)


def test_a_resumed_upgrade_reread_keeps_set_tags(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _old_index(tmp_path, monkeypatch)
    _stopped_reread(tmp_path, monkeypatch, ["proj"])
    with Treehop(str(tmp_path / "idx"), embedder=BagOfWordsEmbedder()) as th:
        again = th.add_resource(str(tmp_path / "doc"), target_uri=DOC, tags=["proj"])
        after = _user_tags(th)
    assert again.read == 3  # (the premise: the stopped run committed no file)
    assert after[f"{DOC}/b.md"] == ["user:pinned", "user:proj"]
    assert after == before


def test_a_resumed_reread_the_call_asked_for_takes_the_calls_tags(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Control (passes on the base too, in its first form): a stopped re-read that the call's
    own tags asked for resumes with the call's tags in the last list's place. Changed on
    purpose by helper leftovers75: ``set_tags``' edits stay (b.md's ``pinned``; c.md's
    ``proj``, removed, is not the call's list any more)."""
    _old_index(tmp_path, monkeypatch)
    _stopped_reread(tmp_path, monkeypatch, ["other"])
    with Treehop(str(tmp_path / "idx"), embedder=BagOfWordsEmbedder()) as th:
        again = th.add_resource(str(tmp_path / "doc"), target_uri=DOC, tags=["other"])
        after = _user_tags(th)
    assert again.read == 3
    assert after[f"{DOC}/b.md"] == ["user:other", "user:pinned"]
    assert after[f"{DOC}/sub/c.md"] == ["user:other"]
    assert after[f"{DOC}/sub"] == ["user:other", "user:team-x"]


def test_the_flag_round_trips_and_an_old_manifest_reads_without_it() -> None:
    m = _Manifest("f" * 40, 1, [], partial=True, keeps_user_tags=True)
    back = _Manifest.decode(m.encode())
    assert back.partial and back.keeps_user_tags
    plain = _Manifest.decode(_Manifest("f" * 40, 1, [], partial=True).encode())
    assert plain.partial and not plain.keeps_user_tags
