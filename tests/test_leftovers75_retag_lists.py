"""Indexing a tree again with another tag list puts the new list where the last call's was
and keeps what the user changed with ``set_tags`` since; a file added alone follows the same
rule (helper leftovers75; attacks87's and review74's open items).

Before: another list (or a changed file added alone, whatever its list) rebuilt every node
with the call's tags, so ``treehop tag --add`` edits were lost, and a list tag removed with
``--remove`` came back. The seed's design keeps a tag's source in the tag (``user:`` /
``auto:``), and both the call's tags and ``set_tags``' are ``user:``: the index now records
each target's last call list (a state blob), which tells them apart
(``writer._tags_after_call``).
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from test_attacks87_reading_version_keeps_tags import DOC, _folder, _user_tags
from treehop import Treehop

from treehop_test_doubles import BagOfWordsEmbedder


def _tagged(tmp_path: Path) -> Treehop:
    th = Treehop(str(tmp_path / "idx"), embedder=BagOfWordsEmbedder())
    th.add_resource(str(_folder(tmp_path)), target_uri=DOC, tags=["proj", "old"])
    th.set_tags(DOC, add=["handbook"])
    th.set_tags(f"{DOC}/sub", add=["team-x"])
    th.set_tags(f"{DOC}/sub/c.md", add=["cpin"])
    th.set_tags(f"{DOC}/b.md", remove=["proj"])
    return th


def test_another_list_replaces_the_last_list_and_keeps_the_edits(tmp_path: Path) -> None:
    th = _tagged(tmp_path)
    with th:
        th.add_resource(str(tmp_path / "doc"), target_uri=DOC, tags=["proj", "new"])
        after = _user_tags(th)
    assert after[DOC] == ["user:handbook", "user:new", "user:proj"]
    assert after[f"{DOC}/sub"] == ["user:new", "user:proj", "user:team-x"]
    assert after[f"{DOC}/sub/c.md"] == ["user:cpin", "user:new", "user:proj"]
    assert after[f"{DOC}/b.md"] == ["user:new"]  # (proj removed by the user: stays removed)
    assert after[f"{DOC}/a.md"] == ["user:new", "user:proj"]
    chunks = [u for u in after if "#chunk-" in u]
    assert chunks and all(after[u] == ["user:new", "user:proj"] for u in chunks)


def test_no_list_after_a_list_keeps_only_the_edits(tmp_path: Path) -> None:
    th = _tagged(tmp_path)
    with th:
        th.add_resource(str(tmp_path / "doc"), target_uri=DOC)
        after = _user_tags(th)
    assert after[DOC] == ["user:handbook"]
    assert after[f"{DOC}/sub"] == ["user:team-x"]
    assert after[f"{DOC}/sub/c.md"] == ["user:cpin"]
    assert after[f"{DOC}/a.md"] == [] and after[f"{DOC}/b.md"] == []


def test_a_file_added_alone_again_keeps_its_edits(tmp_path: Path) -> None:
    note = tmp_path / "note.md"
    note.write_text("# Note\n\nThe first text.\n", encoding="utf-8")
    uri = "viking://resources/note.md"
    with Treehop(str(tmp_path / "idx"), embedder=BagOfWordsEmbedder()) as th:
        th.add_resource(str(note), target_uri=uri, tags=["a", "b"])
        th.set_tags(uri, add=["pinned"], remove=["b"])
        note.write_text("# Note\n\nThe second text, changed.\n", encoding="utf-8")
        th.add_resource(str(note), target_uri=uri, tags=["a", "b"])
        same = sorted(t for t in th.store.get([uri])[0].tags if t.startswith("user:"))
        th.add_resource(str(note), target_uri=uri, tags=["c"])
        other = sorted(t for t in th.store.get([uri])[0].tags if t.startswith("user:"))
    assert same == ["user:a", "user:pinned"]
    assert other == ["user:c", "user:pinned"]


def test_control_a_first_add_and_a_new_file_get_the_calls_list(tmp_path: Path) -> None:
    """Control (passes on the base too)."""
    th = _tagged(tmp_path)
    with th:
        (tmp_path / "doc" / "sub" / "d.md").write_text("# Dns\n\nThe zone.\n", encoding="utf-8")
        th.add_resource(str(tmp_path / "doc"), target_uri=DOC, tags=["proj", "old"])
        after = _user_tags(th)
    assert after[f"{DOC}/sub/d.md"] == ["user:old", "user:proj"]
    assert after[f"{DOC}/sub"] == ["user:old", "user:proj", "user:team-x"]
    assert after[f"{DOC}/b.md"] == ["user:old"]


TAG = st.sampled_from([f"user:t{i}" for i in range(6)])
TAGS = st.lists(TAG, unique=True, max_size=6)


@settings(max_examples=300, deadline=None)
@given(before=TAGS, call=TAGS, adds=TAGS, drops=TAGS)
def test_rule_property(
    before: list[str], call: list[str], adds: list[str], drops: list[str]
) -> None:
    """A node stored as ``before`` then edited (``adds`` added, ``drops`` removed), indexed
    again with ``call``: the edits hold, every other tag is the call's."""
    from treehop.ingest.writer import _tags_after_call  # (here: the base has none)

    stored = [t for t in [*before, *adds] if t not in drops or t in adds]
    stored = list(dict.fromkeys(stored))
    got = _tags_after_call(stored, before, call)
    assert len(got) == len(set(got))
    if set(before) == set(call):
        assert got == stored
        return
    added = set(stored) - set(before)
    dropped = set(before) - set(stored)
    assert set(got) == (set(call) - dropped) | added


def _section(name: str, word: str) -> str:
    return f"## {name}\n\n" + " ".join(f"{word}{i}" for i in range(400)) + "\n\n"


def test_a_chunks_tag_follows_its_text_when_a_chunk_is_put_before_it(tmp_path: Path) -> None:
    """``set_tags`` on a chunk, then a section put at the file's start (every chunk after it
    gets another number): the tag is on the chunk that holds the tagged text, not on the
    chunk that now has the tagged number (before: the number kept it)."""
    doc = tmp_path / "doc"
    doc.mkdir()
    body = _section("One", "alpha") + _section("Two", "beta")
    (doc / "a.md").write_text("# A\n\n" + body, encoding="utf-8")
    uri = "viking://resources/doc"
    with Treehop(str(tmp_path / "idx"), embedder=BagOfWordsEmbedder()) as th:
        th.add_resource(str(doc), target_uri=uri, tags=["p"])
        tagged = th.store.get([f"{uri}/a.md#chunk-1"])[0]
        assert tagged is not None
        th.set_tags(tagged.uri, add=["pin"])
        (doc / "a.md").write_text("# A\n\n" + _section("Zero", "delta") + body, encoding="utf-8")
        th.add_resource(str(doc), target_uri=uri, tags=["p"])
        pinned = [n for n in th.store.iter_nodes(uri) if "user:pin" in n.tags]
    assert [n.content for n in pinned] == [tagged.content]
    assert pinned[0].uri != tagged.uri  # (the premise: the text moved to another number)
