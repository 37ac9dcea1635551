"""Indexing a folder again with the same tags keeps what ``treehop tag --add`` gave its
nodes, after a file in it changed too (helper review74).

docs/cli.md: "indexing it again with another ``--tag`` list ... replaces them, tags added
with ``treehop tag --add`` included (with the same list they are kept)". They were kept only
while no file changed: a changed file's nodes and every folder above it are built again,
and each was given the call's tags, so one edited file dropped the tags a user had added to
its folder (``treehop tag --add team-x docs/sub``) and to the file itself.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from test_attacks87_reading_version_keeps_tags import DOC, _folder, _user_tags
from treehop import Treehop

from treehop_test_doubles import BagOfWordsEmbedder


def _tagged(tmp_path: Path) -> tuple[Treehop, dict[str, list[str]]]:
    th = Treehop(str(tmp_path / "idx"), embedder=BagOfWordsEmbedder())
    th.add_resource(str(_folder(tmp_path)), target_uri=DOC, tags=["proj"])
    th.set_tags(DOC, add=["handbook"])
    th.set_tags(f"{DOC}/sub", add=["team-x"])
    th.set_tags(f"{DOC}/sub/c.md", add=["cpin"])
    th.set_tags(f"{DOC}/b.md", remove=["proj"])
    return th, _user_tags(th)


def _edit(tmp_path: Path) -> None:
    (tmp_path / "doc" / "sub" / "c.md").write_text(
        "# Certs\n\nThe certs renew weekly now.\n", encoding="utf-8"
    )


def test_an_edited_file_keeps_its_and_its_folders_added_tags(tmp_path: Path) -> None:
    th, before = _tagged(tmp_path)
    with th:
        _edit(tmp_path)
        again = th.add_resource(str(tmp_path / "doc"), target_uri=DOC, tags=["proj"])
        after = _user_tags(th)
        sub = th.store.get([f"{DOC}/sub/c.md"])[0]
    assert again.read == 1  # (the premise: one file re-read, its folders rebuilt)
    assert sub is not None and "weekly" in sub.content
    assert after[f"{DOC}/sub"] == ["user:proj", "user:team-x"]
    assert after[f"{DOC}/sub/c.md"] == ["user:cpin", "user:proj"]
    assert after[DOC] == ["user:handbook", "user:proj"]
    assert after == before


def test_a_new_file_gets_the_calls_tags(tmp_path: Path) -> None:
    th, _ = _tagged(tmp_path)
    with th:
        (tmp_path / "doc" / "sub" / "d.md").write_text("# Dns\n\nThe zone.\n", encoding="utf-8")
        th.add_resource(str(tmp_path / "doc"), target_uri=DOC, tags=["proj"])
        after = _user_tags(th)
    assert after[f"{DOC}/sub/d.md"] == ["user:proj"]
    assert after[f"{DOC}/sub"] == ["user:proj", "user:team-x"]


@pytest.mark.parametrize("tags", [["other"], []])
def test_another_list_replaces_them(tmp_path: Path, tags: list[str]) -> None:
    """Control (passes on the base too, in its first form): another list re-reads the folder
    with that list. Changed on purpose by helper leftovers75: the new list takes the last
    list's place and ``set_tags``' edits stay (before: every node got the list alone)."""
    th, _ = _tagged(tmp_path)
    with th:
        _edit(tmp_path)
        th.add_resource(str(tmp_path / "doc"), target_uri=DOC, tags=tags)
        after = _user_tags(th)
    want = [f"user:{t}" for t in tags]
    edits = {
        DOC: ["user:handbook"],
        f"{DOC}/sub": ["user:team-x"],
        f"{DOC}/sub/c.md": ["user:cpin"],
    }
    assert all(v == sorted(want + edits.get(u, [])) for u, v in after.items()), after
