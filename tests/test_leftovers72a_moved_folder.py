"""An index folder moved away from under an open client (helper leftovers72a; attacks83's
and leftovers71d's open item, bench/README.md "(helper leftovers72a)").

Before: with no write holding the folder, the store followed its path (leftovers62c) and
answered every read of the folder that left it as an empty index: ``ls`` ``[]``, ``find``
no hits, ``len(store)`` 0, no error, as if nothing had ever been stored. Now a read raises a
:class:`StoreError` naming the path and saying the folder moved, until a write through the
client makes a new index there (as before) or an index appears at the path again (read as
it is). The moved folder opens wherever it now is: by its new name, a symlink or a
relative path (nothing in an index names its own location; checked here, and by grep in
the section).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from treehop import Treehop
from treehop.errors import StoreError, TreehopError
from treehop.stores.embedded import EmbeddedStore

from treehop_test_doubles import BagOfWordsEmbedder, resource_leaf

TEXT = "the keys rotate every ninety days through the vault"


def _client(path: Path | str) -> Treehop:
    return Treehop(path=str(path), embedder=BagOfWordsEmbedder())


def _found(c: Treehop) -> list[str]:
    return [m.uri for m in c.find("keys rotate vault").resources]


def _reads(c: Treehop) -> list[object]:
    """Every read a user makes, each as its answer or its error's type."""
    out: list[object] = []
    for call in (
        lambda: [e.uri for e in c.ls("viking://resources")],
        lambda: _found(c),
        lambda: [m.uri for m in c.search("keys rotate vault").resources],
        lambda: c.read("viking://resources/keys.md"),
    ):
        try:
            out.append(call())
        except TreehopError as exc:
            out.append(type(exc))
    return out


@pytest.mark.parametrize("how", ["rename", "rmtree"])
def test_reads_of_a_client_whose_folder_left_its_path_raise_and_never_answer_empty(
    tmp_path: Path, how: str
) -> None:
    idx, moved = tmp_path / "idx", tmp_path / "moved"
    c = _client(idx)
    c.add_resource(TEXT, name="keys.md")
    assert _found(c) == ["viking://resources/keys.md"]
    if how == "rename":
        os.rename(idx, moved)
    else:
        import shutil

        shutil.rmtree(idx)
    assert _reads(c) == [StoreError] * 4
    with pytest.raises(StoreError, match="renamed, moved or removed") as got:
        c.ls("viking://resources")
    assert str(idx) in str(got.value)
    assert not idx.exists()  # (the reads wrote nothing there)
    c.close()
    if how == "rename":
        again = _client(moved)  # (the folder opens where it now is)
        assert _found(again) == ["viking://resources/keys.md"]
        assert again.read("viking://resources/keys.md") == TEXT
        again.close()


def test_a_write_after_the_move_still_makes_a_new_index_at_the_path(tmp_path: Path) -> None:
    """leftovers62c's rule kept: the same client's next write makes a whole index at the
    path (only what it wrote), reads then answer from it; the moved folder is untouched."""
    idx, moved = tmp_path / "idx", tmp_path / "moved"
    c = _client(idx)
    c.add_resource(TEXT, name="keys.md")
    os.rename(idx, moved)
    with pytest.raises(StoreError):
        c.ls("viking://resources")
    c.add_resource("the backups run nightly to tape", name="backups.md")
    assert [e.uri for e in c.ls("viking://resources")] == ["viking://resources/backups.md"]
    c.close()
    fresh = _client(idx)
    assert [e.uri for e in fresh.ls("viking://resources")] == ["viking://resources/backups.md"]
    fresh.close()
    old = _client(moved)
    assert [e.uri for e in old.ls("viking://resources")] == ["viking://resources/keys.md"]
    old.close()


def test_a_folder_moved_back_is_read_again(tmp_path: Path) -> None:
    idx, moved = tmp_path / "idx", tmp_path / "moved"
    c = _client(idx)
    c.add_resource(TEXT, name="keys.md")
    os.rename(idx, moved)
    with pytest.raises(StoreError):
        _found(c)
    os.rename(moved, idx)
    assert _found(c) == ["viking://resources/keys.md"]
    c.close()


def test_the_folder_opens_by_a_new_name_a_symlink_or_a_relative_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A control (these pass before the change too): the index names no path of its own."""
    idx = tmp_path / "idx"
    c = _client(idx)
    c.add_resource(TEXT, name="keys.md")
    c.close()
    assert not any(str(tmp_path).encode() in f.read_bytes() for f in idx.rglob("*") if f.is_file())
    os.rename(idx, tmp_path / "renamed")
    (tmp_path / "link").symlink_to(tmp_path / "renamed")
    monkeypatch.chdir(tmp_path)
    for where in (tmp_path / "renamed", tmp_path / "link", "renamed", "./link/"):
        d = _client(where)
        assert _found(d) == ["viking://resources/keys.md"], where
        d.close()


def test_a_direct_store_says_its_folder_moved_and_a_write_makes_a_new_index(
    tmp_path: Path,
) -> None:
    """The store's own check (what every client read makes after ``refresh``); a direct
    store's reads follow the path as before (an empty index), its next write makes a whole
    index there."""
    idx, moved = tmp_path / "idx", tmp_path / "moved"
    rng = np.random.default_rng(0)
    vecs = rng.standard_normal((30, 16)).astype(np.float32)
    s = EmbeddedStore(idx)
    s.upsert([resource_leaf(f"viking://resources/a{i}.md", "a") for i in range(30)], vecs)
    s.save()
    s.check_in_place()
    os.rename(idx, moved)
    s.refresh()
    with pytest.raises(StoreError, match="renamed, moved or removed"):
        s.check_in_place()
    s.upsert([resource_leaf("viking://resources/b.md", "b")], vecs[:1])
    s.check_in_place()  # (a write holds it: its reads see the new index)
    s.save()
    s.check_in_place()
    assert len(s) == 1
    s.close()
    back = EmbeddedStore(moved)
    assert len(back) == 30
    back.close()
