"""What an embedder's failure says about a caller's store, by what its rollback did.

Two stop-65 changes meet here: a write failing outside the store (its embedder) now says what
a caller's store kept (helper leftovers65a), and a rollback through ``discard_unsaved`` that
fails or drops nothing is no longer reported as "dropped" (helper attacks76). The note and
``discarded`` must follow what the rollback actually did."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from treehop import Treehop
from treehop.errors import EmbeddingError

from treehop_test_doubles import BagOfWordsEmbedder

HERE = Path(__file__).parent


def _store_class() -> type[Any]:
    sys.path.insert(0, str(HERE / "store_conformance"))
    from store_conf_helpers import recipe_store_class

    return recipe_store_class()


class _Embedder(BagOfWordsEmbedder):
    """Raises from its ``fail_after + 1``-th call on, once armed."""

    fail_after: int | None = None
    calls = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self.fail_after is not None:
            self.calls += 1
            if self.calls > self.fail_after:
                raise RuntimeError("embedder down")
        return super().embed(texts)


def _with_discard(answer: str) -> type[Any]:
    """The docs' ``FolderStore`` with a ``discard_unsaved`` that drops what this write upserted
    (``"drops"``), raises (``"raises"``) or answers that it dropped nothing (``"nothing"``)."""
    base = _store_class()

    class Store(base):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            super().__init__()
            self.committed: set[str] = set()

        def save(self) -> None:
            self.committed = set(self._nodes)

        def discard_unsaved(self) -> bool:
            if answer == "raises":
                raise RuntimeError("cannot roll back")
            if answer == "nothing":
                return False
            for uri in set(self._nodes) - self.committed:
                del self._nodes[uri]
            return True

    return Store


def _fail_a_folder_write(tmp_path: Path, answer: str) -> tuple[Any, Any, set[str]]:
    store = _with_discard(answer)()
    emb = _Embedder()
    th = Treehop(embedder=emb, store=store)
    th.add_resource("seed about rotation", target_uri="viking://resources/seed.md")
    before = set(store._nodes)
    src = tmp_path / "d"
    src.mkdir()
    for i in range(5):
        (src / f"f{i}.md").write_text(f"file {i} about rotation " * 20)
    emb.fail_after = 3  # (the folder's leaves and node embedded and written; then its parent)
    with pytest.raises(EmbeddingError) as ei:
        th.add_resource(src, target_uri="viking://resources/d")
    return ei.value, store, before


def test_a_rollback_that_drops_the_write_leaves_nothing_to_say(tmp_path: Path) -> None:
    """Control: ``discard_unsaved`` dropped the six nodes (and the writer's save after it
    ends the write's journal): the store holds nothing of the write, the error says nothing."""
    err, store, before = _fail_a_folder_write(tmp_path, "drops")
    assert set(store._nodes) == before
    assert not hasattr(err, "written") and not getattr(err, "__notes__", None)


@pytest.mark.parametrize("answer", ["raises", "nothing"])
def test_a_rollback_that_fails_or_drops_nothing_says_kept(tmp_path: Path, answer: str) -> None:
    err, store, before = _fail_a_folder_write(tmp_path, answer)
    kept = set(store._nodes) - before
    assert len(kept) == 6 and set(err.written) == kept
    assert err.discarded is False
    (note,) = err.__notes__
    assert "dropped through" not in note
    assert note.endswith(
        "kept by the store (its discard_unsaved failed or dropped nothing): "
        "check or remove them, or add the same input again"
    )
    assert len(note) <= 500
