"""A re-index with another tag list, killed mid-way, then a third list: the third list takes
the place of the last *committed* list and ``set_tags``' edits stay (helper leftovers76;
review75's open item 3).

Helper leftovers75 records each add's user tag list (``ingest/call-tags-*``) to tell
``set_tags``' edits apart from the next add's list; review75 marks a call with another list as
under way before its first write, so a re-add after a stop does not keep the stopped call's
tags. But any call other than the one resuming it then read "no list" and fell back to the
manifest's rule: every node got the third call's tags alone, every ``set_tags`` edit dropped
(an added tag lost, a removed list tag back). Now the mark keeps the committed list and the
user tags of each node that differ from it; the call after a stop reads each node back to
what was committed (a node the stopped call rewrote holds what that call made of it) and
applies its list to that.

Real processes: the stopped call is a child Python re-indexing the folder (its files edited
since, so that their nodes are embedded again) with one file per commit, SIGKILLed while it
embeds the fourth file (three files committed with the stopped call's tags, three not
reached).
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from index_creator_process import start_creator
from treehop import Treehop

from treehop_test_doubles import BagOfWordsEmbedder

DOC = "viking://resources/doc"
FILES = [f"f{i}.md" for i in range(6)]

# argv: the index path, the embed call to stop at. Re-indexes ``<index>/../doc`` with the tag
# ``b``, one file per commit, and stops (waits to be killed) at that embed call.
STOPPED_REINDEX = r"""
import sys
from pathlib import Path
import treehop.ingest.writer as writer
from treehop import Treehop
from treehop_test_doubles import BagOfWordsEmbedder
writer.EMBED_BATCH = 1
stop_at = int(sys.argv[2])
class Stalls(BagOfWordsEmbedder):
    def embed(self, texts):
        if self.calls + 1 == stop_at:
            print("writing", flush=True)
            sys.stdin.readline()
        return super().embed(texts)
idx = Path(sys.argv[1])
th = Treehop(str(idx), embedder=Stalls(), commit_files=1)
th.add_resource(str(idx.parent / "doc"), target_uri="viking://resources/doc", tags=["b"])
print("not stopped", flush=True)
"""


def _folder(tmp_path: Path) -> Path:
    d = tmp_path / "doc"
    d.mkdir()
    for i, name in enumerate(FILES):
        (d / name).write_text(f"# File {i}\n\nThe text of file {i} about topic{i} words{i}.\n")
    return d


def _user_tags(th: Treehop) -> dict[str, list[str]]:
    return {
        n.uri: sorted(t for t in n.tags if t.startswith("user:"))
        for n in th.store.iter_nodes(DOC)
        if "#" not in n.uri
    }


def _stopped_reindex(tmp_path: Path) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """Index the folder with ``[a]``; edit tags of the first file (which the stopped call
    rewrites) and of the last two (which it does not reach); re-index with ``[b]`` in a
    child killed mid-way. Returns the tags after the edits and after the kill."""
    folder = _folder(tmp_path)
    idx = tmp_path / "idx"
    with Treehop(str(idx), embedder=BagOfWordsEmbedder()) as th:
        th.add_resource(str(folder), target_uri=DOC, tags=["a"])
        th.set_tags(f"{DOC}/f0.md", add=["pinned"])
        th.set_tags(f"{DOC}/f4.md", add=["pinned"])
        th.set_tags(f"{DOC}/f5.md", remove=["a"])
        edited = _user_tags(th)
    for name in FILES:  # (edited texts: the re-index embeds them in batches, one file each)
        with (folder / name).open("a") as f:
            f.write("\nA line added before the re-index.\n")
    # the directory, then f0.. one file a commit: stopped while embedding the fourth file
    proc = start_creator(STOPPED_REINDEX, idx, 5)
    proc.send_signal(signal.SIGKILL)
    assert proc.wait(60) == -signal.SIGKILL
    with Treehop(str(idx), embedder=BagOfWordsEmbedder()) as th:
        stopped = _user_tags(th)
    return edited, stopped


@pytest.mark.parametrize("again", [["a", "c"], ["a"], ["b"]], ids=["third", "committed", "resumed"])
def test_after_a_killed_reindex_a_list_keeps_set_tags_edits(
    tmp_path: Path, again: list[str]
) -> None:
    edited, stopped = _stopped_reindex(tmp_path)
    assert edited[f"{DOC}/f0.md"] == ["user:a", "user:pinned"]
    assert edited[f"{DOC}/f5.md"] == []
    # the premise: the killed call committed some files with its tag, and not the others
    assert stopped[f"{DOC}/f0.md"] == ["user:b", "user:pinned"]
    assert stopped[f"{DOC}/f4.md"] == ["user:a", "user:pinned"]
    assert stopped[f"{DOC}/f5.md"] == []
    with Treehop(str(tmp_path / "idx"), embedder=BagOfWordsEmbedder()) as th:
        th.add_resource(str(tmp_path / "doc"), target_uri=DOC, tags=again)
        after = _user_tags(th)
    listed = sorted(f"user:{t}" for t in again)
    pinned = sorted([*listed, "user:pinned"])
    dropped = [t for t in listed if t != "user:a"]  # (f5.md's removed list tag stays removed)
    want = {u: listed for u in edited}
    want |= {f"{DOC}/f0.md": pinned, f"{DOC}/f4.md": pinned, f"{DOC}/f5.md": dropped}
    assert after == want


def test_a_second_stop_then_a_list_still_reads_the_committed_tags(tmp_path: Path) -> None:
    """Two killed re-indexes in a row (``[b]``, then ``[b]`` again stopped earlier), then
    ``[c]``: the record keeps the tags committed before the first."""
    edited, _ = _stopped_reindex(tmp_path)
    idx = tmp_path / "idx"
    for name in FILES:
        with (tmp_path / "doc" / name).open("a") as f:
            f.write("\nAnother line.\n")
    proc = start_creator(STOPPED_REINDEX.replace('tags=["b"]', 'tags=["d"]'), idx, 3)
    proc.send_signal(signal.SIGKILL)
    assert proc.wait(60) == -signal.SIGKILL
    with Treehop(str(idx), embedder=BagOfWordsEmbedder()) as th:
        assert _user_tags(th)[f"{DOC}/f0.md"] == ["user:d", "user:pinned"]  # (the premise)
        th.add_resource(str(tmp_path / "doc"), target_uri=DOC, tags=["c"])
        after = _user_tags(th)
    assert after[f"{DOC}/f0.md"] == ["user:c", "user:pinned"]
    assert after[f"{DOC}/f4.md"] == ["user:c", "user:pinned"]
    assert after[f"{DOC}/f5.md"] == ["user:c"]
    assert after[f"{DOC}/f1.md"] == ["user:c"]
    assert set(after) == set(edited)


def test_an_edit_after_the_stop_is_kept(tmp_path: Path) -> None:
    """The rule for a node edited after the stop (neither what was committed nor
    what the stopped call wrote): its own edit stays, the stopped call's tag goes."""
    _stopped_reindex(tmp_path)
    with Treehop(str(tmp_path / "idx"), embedder=BagOfWordsEmbedder()) as th:
        th.set_tags(f"{DOC}/f1.md", add=["late"])
        th.add_resource(str(tmp_path / "doc"), target_uri=DOC, tags=["c"])
        after = _user_tags(th)
    assert after[f"{DOC}/f1.md"] == ["user:c", "user:late"]


TAGS = st.lists(st.sampled_from([f"user:t{i}" for i in range(6)]), max_size=4, unique=True)


@settings(max_examples=300, deadline=None)
@given(
    committed=TAGS,
    node=TAGS,
    stopped=st.lists(TAGS, min_size=1, max_size=3),
    which=st.integers(min_value=-1, max_value=2),
)
def test_committed_reads_back_what_a_stopped_call_wrote(
    committed: list[str], node: list[str], stopped: list[list[str]], which: int
) -> None:
    """Whatever a stopped call wrote (``which``: none of them, or the stopped call
    ``stopped[which]``), a node reads back to the tags it had when the first began."""
    from treehop.ingest.writer import _CallTags, _tags_after_call  # (new: not on the base)

    edited = {} if set(node) == set(committed) else {"n": node}
    rec = _CallTags(committed, stopped, edited)
    stored = node if which < 0 else _tags_after_call(node, committed, stopped[which % len(stopped)])
    assert set(rec.committed("n", list(stored))) == set(node)
    # and a record with no call under way reads the stored tags as they are
    assert _CallTags(committed).committed("n", list(stored)) == list(stored)
