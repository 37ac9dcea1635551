"""Stop-76 index-lifecycle leftovers (helper leftovers77; leftovers75's, leftovers76's and
review77's "Left alone"). In-process and cheap: two store objects of one index stand for
two processes (an ``flock`` is per open file, so the second sees the first's lock as
another holder's); no child Python.

1. A removed target's records leave nothing on Milvus / VikingDB (their ``drop_state``; the
   removal wrote ``b""`` there, a head row kept for good).
2. A tag the user sets by hand after a stopped index call survives the next call, even one
   only the stopped call gave.
3. A direct ``EmbeddedStore`` read while another writer creates the index raises
   ``IndexBeingCreatedError`` as a client's read does (it answered the empty index).
4. A dead creator's ingest records (its partial manifest) are removed by the next writer.
5. A client opening an empty path does not tell a concurrent reader "being created".
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import Treehop
from treehop.ingest.writer import _call_tags_key, _manifest_key

from fake_servers.vikingdb_server import FakeVikingDB
from treehop_test_doubles import BagOfWordsEmbedder, store_leaf, unit_vectors

DOC = "viking://resources/doc"


def _folder(tmp_path: Path, n: int = 3) -> Path:
    d = tmp_path / "doc"
    d.mkdir()
    for i in range(n):
        (d / f"f{i}.md").write_text(f"# File {i}\n\nThe text of file {i} about topic{i}.\n")
    return d


# ------------------------------------------------------------------------------ 1. remote
@pytest.fixture
def viking() -> Iterator[Any]:
    from test_vikingdb_store import AK, SK, make_store

    with FakeVikingDB(ak=AK, sk=SK) as server:
        yield server, make_store


@pytest.fixture
def milvus(tmp_path: Path) -> Iterator[Any]:
    from pymilvus import MilvusClient

    client = MilvusClient(str(tmp_path / "m.db"))
    yield client
    client.close()


def _remote_store(kind: str, viking: Any, milvus: Any, dim: int) -> tuple[Any, Any, Any]:
    """The store, a function listing every state row id it holds, and one naming the head
    row id of a key."""
    if kind == "vikingdb":
        from treehop.stores.vikingdb import uri_key

        server, make_store = viking
        store = make_store(server, dim=dim)

        def ids() -> list[str]:
            return sorted(k for c in server.collections.values() for k in c.rows if k[0] in "sp")

        return store, ids, lambda key: "s" + uri_key(key)
    from treehop.stores.milvus import MilvusStore

    store = MilvusStore(client=milvus, collection="lo77", dimension=dim)

    def ids() -> list[str]:
        rows = milvus.query(store.state_collection, filter='id != ""', output_fields=["id"])
        return sorted(r["id"] for r in rows)

    return store, ids, lambda key: "h:" + key


@pytest.mark.parametrize("kind", ["vikingdb", "milvus"])
def test_a_remote_store_drops_a_blob_whole(kind: str, viking: Any, milvus: Any) -> None:
    """A blob inline (one head row) and one in parts: nothing left after ``drop_state``."""
    store, ids, _ = _remote_store(kind, viking, milvus, 8)
    before = ids()
    store.put_state("ingest/small", b"x" * 10)
    store.put_state("ingest/big", bytes(range(256)) * 300)  # (76,800 bytes: in parts)
    assert len(ids()) > len(before) + 2  # (the premise: the big one is in parts)
    store.drop_state("ingest/small")
    store.drop_state("ingest/big")
    store.drop_state("ingest/never")  # (nothing there: nothing happens)
    assert store.get_state("ingest/small") is None and store.get_state("ingest/big") is None
    assert ids() == before


@pytest.mark.parametrize("kind", ["vikingdb", "milvus"])
def test_removing_a_target_on_a_remote_store_leaves_no_record(
    kind: str, viking: Any, milvus: Any, tmp_path: Path
) -> None:
    bow = BagOfWordsEmbedder()
    store, ids, head = _remote_store(kind, viking, milvus, bow.dimension)
    folder = _folder(tmp_path)
    keys = (_manifest_key(DOC), _call_tags_key(DOC))
    with Treehop(embedder=bow, store=store, tagger=None) as th:
        th.add_resource(str(folder), target_uri=DOC, tags=["a"])
        th.add_resource(str(folder), target_uri=DOC, tags=["b"])  # (a call-tags record)
        before = ids()
        assert {head(k) for k in keys} <= set(before)  # (the premise: both records written)
        assert th.remove(DOC) > 0
        for key in keys:
            assert th.store.get_state(key) is None
        # (the two head rows gone, every other state row -- the store's meta -- kept)
        assert ids() == sorted(set(before) - {head(k) for k in keys})
        # and the folder added again reads its files and takes the new list
        assert th.add_resource(str(folder), target_uri=DOC, tags=["c"]).files == 3
        got = json.loads(th.store.get_state(_call_tags_key(DOC)) or b"{}")
        assert got.get("user_tags") == ["user:c"]


# ------------------------------------------------------------------ 3. a direct store reads
def _creating(path: Path) -> Any:
    """A store holding the writer lock of a new index at ``path`` with two rows upserted,
    nothing committed (the creator)."""
    from treehop.stores.embedded import EmbeddedStore

    creator = EmbeddedStore(str(path))
    assert creator.begin_write()
    creator.upsert(
        [store_leaf("viking://resources/a.md"), store_leaf("viking://resources/b.md")],
        unit_vectors(2),
    )
    return creator


def test_a_direct_store_read_during_a_creation_is_told(tmp_path: Path) -> None:
    from treehop.errors import IndexBeingCreatedError
    from treehop.stores.base import Scope
    from treehop.stores.embedded import EmbeddedStore

    reader = EmbeddedStore(str(tmp_path / "idx"))  # (opened before the creator began)
    creator = _creating(tmp_path / "idx")
    late = EmbeddedStore(str(tmp_path / "idx"))  # (and one opened while it writes)
    try:
        for store in (reader, late):
            with pytest.raises(IndexBeingCreatedError, match="being created"):
                len(store)
            with pytest.raises(IndexBeingCreatedError):
                store.get(["viking://resources/a.md"])
            with pytest.raises(IndexBeingCreatedError):
                store.search(unit_vectors(1)[0], Scope(), 5)
        creator.save()  # (the first save commits and lets the lock go)
        for store in (reader, late):
            store.refresh()
            assert len(store) == 2
            assert store.get(["viking://resources/a.md"])[0] is not None
    finally:
        for store in (creator, reader, late):
            store.close()


def test_control_a_direct_store_reads_an_empty_index_no_one_creates(tmp_path: Path) -> None:
    """Nothing committed and no lock held (a path never written, or a creator that died,
    which lets its lock go): the empty index, no error; closing a reader during a creation
    raises nothing."""
    from treehop.stores.embedded import EmbeddedStore

    store = EmbeddedStore(str(tmp_path / "idx"))
    assert len(store) == 0 and store.get(["viking://resources/a.md"]) == [None]
    creator = _creating(tmp_path / "idx")
    creator.discard_unsaved()
    creator.save()  # (nothing to commit: the lock goes, nothing committed)
    assert len(store) == 0
    other = _creating(tmp_path / "idx")
    store.close()  # (no error out of a close while another writer creates)
    other.close()


# ------------------------------------------------------------ 4. a dead creator's records
class _Fails(BagOfWordsEmbedder):
    """Stops the ingest at its first embed (before its first commit), as a kill would."""

    def embed(self, texts: Any) -> Any:
        raise RuntimeError("the creator stopped")


def _stopped_creator(tmp_path: Path) -> Path:
    """An index path where the first ingest stopped before its first commit: its partial
    manifest on disk, nothing committed."""
    folder = _folder(tmp_path)
    idx = tmp_path / "idx"
    with Treehop(str(idx), embedder=_Fails()) as th, pytest.raises(Exception, match="stopped"):
        th.add_resource(str(folder), target_uri=DOC)
    assert (idx / "state" / _manifest_key(DOC)).is_file()  # (the premise)
    assert not (idx / "CURRENT").exists()
    return idx


def test_the_next_writer_removes_a_dead_creators_partial_manifest(tmp_path: Path) -> None:
    idx = _stopped_creator(tmp_path)
    with Treehop(str(idx), embedder=BagOfWordsEmbedder()) as th:
        th.add_resource("a note of the next writer", target_uri="viking://resources/note")
        assert not (idx / "state" / _manifest_key(DOC)).exists()
        assert th.store.get_state(_manifest_key(DOC)) is None
        assert len(th.ls("viking://resources")) == 1
        # and the folder added now is read whole and committed
        assert th.add_resource(str(tmp_path / "doc"), target_uri=DOC).files == 3
        assert (idx / "state" / _manifest_key(DOC)).is_file()


def test_a_direct_store_writer_removes_them_too(tmp_path: Path) -> None:
    from treehop.stores.embedded import EmbeddedStore

    idx = _stopped_creator(tmp_path)
    store = EmbeddedStore(str(idx))
    store.upsert([store_leaf("viking://resources/a.md")], unit_vectors(1, dim=8))
    store.save()
    store.close()
    assert not (idx / "state" / _manifest_key(DOC)).exists()


def test_control_a_live_clients_records_are_kept(tmp_path: Path) -> None:
    """Nothing lost: while another writer holds ``locks/writes`` (a client's ingest between
    its partial manifest and its first commit), a direct store's first write keeps them."""
    from treehop.stores.embedded import EmbeddedStore

    idx = _stopped_creator(tmp_path)
    live = EmbeddedStore(str(idx))
    held = live.writes_lock()
    assert held is not None and held.try_acquire()
    try:
        store = EmbeddedStore(str(idx))
        store.upsert([store_leaf("viking://resources/a.md")], unit_vectors(1, dim=8))
        store.save()
        store.close()
        assert (idx / "state" / _manifest_key(DOC)).is_file()
    finally:
        held.release()
        live.close()


# --------------------------------------------------- 2. a tag set by hand after a stop
class _StopsAt(BagOfWordsEmbedder):
    """Stops the ingest at embed call ``at`` (one file a call, one file a commit)."""

    def __init__(self, at: int) -> None:
        super().__init__()
        self.at = at

    def embed(self, texts: Any) -> Any:
        if self.calls + 1 == self.at:
            raise RuntimeError("the re-index stopped")
        return super().embed(texts)


def _user_tags(th: Treehop, uri: str) -> list[str]:
    return sorted(t for t in th.store.get([uri])[0].tags if t.startswith("user:"))


def _stopped_reindex(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``[a]`` committed, then a re-index with ``[b]`` stopped after it committed f0..f2."""
    import treehop.ingest.writer as writer

    folder = _folder(tmp_path, 6)
    idx = tmp_path / "idx"
    with Treehop(str(idx), embedder=BagOfWordsEmbedder()) as th:
        th.add_resource(str(folder), target_uri=DOC, tags=["a"])
    for f in folder.iterdir():
        f.write_text(f.read_text() + "\nA line added before the re-index.\n")
    monkeypatch.setattr(writer, "EMBED_BATCH", 1)
    with (
        Treehop(str(idx), embedder=_StopsAt(5), commit_files=1) as th,
        pytest.raises(Exception, match="stopped"),
    ):
        th.add_resource(str(folder), target_uri=DOC, tags=["b"])
    monkeypatch.undo()
    return idx


def test_a_tag_set_again_by_hand_after_a_stop_survives_the_next_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    idx = _stopped_reindex(tmp_path, monkeypatch)
    with Treehop(str(idx), embedder=BagOfWordsEmbedder()) as th:
        # the premise: the stopped call wrote f0 with its tag and did not reach f5
        assert _user_tags(th, f"{DOC}/f0.md") == ["user:b"]
        assert _user_tags(th, f"{DOC}/f5.md") == ["user:a"]
        th.set_tags(f"{DOC}/f5.md", add=["b"])  # (only the stopped call gave it)
        th.set_tags(f"{DOC}/f0.md", add=["b"])  # (already there: the user's now)
        th.set_tags(f"{DOC}/f4.md", add=["b", "late"])
        th.set_tags(f"{DOC}/f4.md", remove=["b"])  # (taken back: not the user's)
        th.add_resource(str(tmp_path / "doc"), target_uri=DOC, tags=["c"])
        assert _user_tags(th, f"{DOC}/f5.md") == ["user:b", "user:c"]
        assert _user_tags(th, f"{DOC}/f0.md") == ["user:b", "user:c"]
        assert _user_tags(th, f"{DOC}/f4.md") == ["user:c", "user:late"]
        # control: a node the stopped call wrote, not touched by hand, drops its tag
        assert _user_tags(th, f"{DOC}/f1.md") == ["user:c"]


# ----------------------------------------- 5. a second open at an empty path, a reader
def test_a_client_opening_an_empty_path_does_not_tell_a_reader_it_is_being_created(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The open of a second client at a path with nothing committed took the writer lock to
    clean up; a client reading the path at that moment was told "an index is being created
    there" (review77's open item, reproduced: the open held at its clean-up)."""
    import threading

    from treehop.stores.embedded import EmbeddedStore

    idx = tmp_path / "idx"
    creator = _creating(idx)  # (a first write that committed nothing: LOCK there, no CURRENT)
    creator.discard_unsaved()
    creator.save()
    creator.close()
    reader = Treehop(str(idx), embedder=BagOfWordsEmbedder())
    assert reader.ls("viking://resources") == []
    entered, go = threading.Event(), threading.Event()
    original = EmbeddedStore._open_committed

    def held_at_its_clean_up(self: Any, path: Path, repair: bool) -> None:
        if repair:  # (called under the lock it took for the clean-up)
            entered.set()
            go.wait(5)
        original(self, path, repair)

    monkeypatch.setattr(EmbeddedStore, "_open_committed", held_at_its_clean_up)
    opened: list[Any] = []
    t = threading.Thread(target=lambda: opened.append(EmbeddedStore(str(idx))))
    t.start()
    try:
        # (on the base the open now holds the lock; here it opens without it and ends)
        while not entered.wait(0.01) and t.is_alive():
            pass
        assert reader.ls("viking://resources") == []
        reader.find("anything")  # (no IndexBeingCreatedError)
    finally:
        go.set()
        t.join(10)
        reader.close()
        for s in opened:
            s.close()


TAGS = st.lists(st.sampled_from([f"user:t{i}" for i in range(6)]), max_size=4, unique=True)


@settings(max_examples=300, deadline=None)
@given(
    committed=TAGS,
    node=TAGS,
    stored=TAGS,
    stopped=st.lists(TAGS, min_size=1, max_size=3),
    hand=TAGS,
)
def test_committed_keeps_what_was_set_by_hand_and_nothing_else_changes(
    committed: list[str],
    node: list[str],
    stored: list[str],
    stopped: list[list[str]],
    hand: list[str],
) -> None:
    """The rule: a tag set by hand after the stop and still stored is in the committed
    tags; apart from those, the reading is leftovers76's (the record without them)."""
    from treehop.ingest.writer import _CallTags

    edited = {} if set(node) == set(committed) else {"n": node}
    plain = _CallTags(committed, stopped, edited).committed("n", list(stored))
    got = _CallTags(committed, stopped, edited, by_hand={"n": hand}).committed("n", list(stored))
    assert set(got) == set(plain) | (set(hand) & set(stored))
    assert len(got) == len(set(got))
    # another node's hand tags change nothing here
    other = _CallTags(committed, stopped, edited, by_hand={"m": hand}).committed("n", list(stored))
    assert other == plain
