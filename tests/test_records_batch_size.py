"""``add_records(batch_size=n)``: the batch written in parts of at most n records, each part
all or nothing (helper store57).

Without it the whole batch is one all-or-nothing write (``tests/test_records_atomic.py``), so
an embedder failing at record 90,000 keeps nothing and a retry embeds everything again. With
it, the parts before the failure stay written; a re-add embeds only the rest. The stored
result equals the one-batch write, and a file's chunks are never split across parts.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from test_records_atomic import snapshot
from treehop import Treehop
from treehop.errors import EmbeddingError, InvalidQueryError, TreehopError
from treehop.ingest.records import IngestRecord, add_records, batch_parts, plan_records

from treehop_test_doubles import BagOfWordsEmbedder


class FailsOn(BagOfWordsEmbedder):
    """Fails on a text holding ``word`` (while set): a model that breaks on one record."""

    def __init__(self) -> None:
        super().__init__()
        self.word: str | None = None

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self.word is not None and any(self.word in t.split() for t in texts):
            raise EmbeddingError("boom")
        return super().embed(texts)


def mixed(n: int) -> list[Any]:
    """Whole documents under three directories, with the pages of two PDFs spread among
    them (records sharing a source are the ordered chunks of one file)."""
    out: list[Any] = []
    for i in range(n):
        if i % 4 == 1:
            out.append(
                IngestRecord(f"page {i} of the manual about pumps {i}", {"source": "m/a.pdf"})
            )
        elif i % 7 == 3:
            out.append(IngestRecord(f"page {i} of the guide to valves", {"source": "m/b.pdf"}))
        else:
            words = " ".join(f"w{(i * 5 + k) % 41}" for k in range(20))
            out.append((f"record {i} {words}", {"source": f"d{i % 3}/r{i}.txt"}))
    return out


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(n=st.integers(1, 30), size=st.integers(1, 12), tagger=st.sampled_from([None, "auto"]))
def test_parts_store_what_one_batch_stored(
    tmp_path_factory: pytest.TempPathFactory, n: int, size: int, tagger: Any
) -> None:
    """Every node's JSON and vector equal, and the same URIs returned in the same order."""
    batch = mixed(n)
    got = []
    for bs in (None, size):
        d = tmp_path_factory.mktemp("parts")
        with Treehop(d / "idx", embedder=BagOfWordsEmbedder(), tagger=tagger) as c:
            add_records(c, [("an older record", {"source": "d0/old.txt"})])
            uris = add_records(c, batch, batch_size=bs)
            got.append((uris, snapshot(c)))
    assert got[0] == got[1]


def test_a_files_chunks_are_never_split(tmp_path: Path) -> None:
    """A file's pages spread over the batch go into the part of its first page: with
    ``batch_size=2`` the manual keeps its 5 pages (a part holding 2 of them replaced the
    file by those 2)."""
    batch = mixed(20)
    with Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None) as c:
        plan = plan_records(c, batch)
        parts = batch_parts(plan, 2)
        pages = [p.index for p in plan if p.target_uri.endswith("/m/a.pdf")]
        assert len(pages) == 5
        assert sum(1 for part in parts if any(p.index in pages for p in part)) == 1
        assert sorted(p.index for part in parts for p in part) == list(range(20))
        assert all(len(part) <= 2 for part in parts if not any(p.chunk_of for p in part))
        add_records(c, batch, batch_size=2)
        manual = c.aio.resolve("viking://resources/m/a.pdf")
        chunks = [k for k in c.store.children(manual) if k.chunk_index is not None]
        assert len(chunks) == 5


def test_a_failure_keeps_the_parts_before_it_and_a_re_add_completes(tmp_path: Path) -> None:
    """The embedder fails on the third part: the first two are stored, nothing of the third
    or later; re-adding the whole batch embeds only what is missing and stores what one
    batch stores."""
    emb = FailsOn()
    batch = [
        (f"note n{i} " + " ".join(f"t{(i + k) % 23}" for k in range(15)), {"source": f"n/{i}.txt"})
        for i in range(9)
    ]
    with Treehop(tmp_path / "idx", embedder=emb, tagger=None) as c:
        emb.word = "n7"  # the second record of the third part
        with pytest.raises(TreehopError):
            add_records(c, batch, batch_size=3)
        emb.word = None
        stored = {n.uri.rsplit("/", 1)[-1] for n in c.store.iter_nodes(None) if n.is_leaf}
        assert stored == {f"{i}.txt" for i in range(6)}
        before = emb.texts_embedded
        add_records(c, batch, batch_size=3)
        leaves_embedded = emb.texts_embedded - before
        state = snapshot(c)
    with Treehop(tmp_path / "one", embedder=BagOfWordsEmbedder(), tagger=None) as one:
        add_records(one, batch)
        assert snapshot(one) == state
    # the 3 missing records (and the directory above them) were embedded, not all 9
    assert 3 <= leaves_embedded < 9


def test_without_batch_size_the_same_failure_keeps_nothing(tmp_path: Path) -> None:
    emb = FailsOn()
    batch = [(f"note n{i} alpha", {"source": f"n/{i}.txt"}) for i in range(9)]
    with Treehop(tmp_path / "idx", embedder=emb, tagger=None) as c:
        emb.word = "n7"
        with pytest.raises(TreehopError):
            add_records(c, batch)
        assert not [n for n in c.store.iter_nodes(None) if n.is_leaf]


@pytest.mark.parametrize("bad", [0, -1, True, 2.0, "3"])
def test_a_bad_batch_size_is_refused_before_any_write(tmp_path: Path, bad: Any) -> None:
    with Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None) as c:
        with pytest.raises(InvalidQueryError, match="batch_size"):
            add_records(c, [("a text", {"source": "x.txt"})], batch_size=bad)
        assert len(c.store) == 0


def test_the_whole_batch_is_validated_before_the_first_part(tmp_path: Path) -> None:
    """An empty record at the end refuses the call: no part is written."""
    with Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None) as c:
        batch: list[Any] = [(f"text {i}", {"source": f"v/{i}.txt"}) for i in range(6)]
        with pytest.raises(TreehopError):
            add_records(c, [*batch, ("   ", {"source": "v/blank.txt"})], batch_size=1)
        assert len(c.store) == 0


def test_progress_counts_the_whole_batch(tmp_path: Path) -> None:
    calls: list[tuple[str, int, int]] = []
    with Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None) as c:
        add_records(
            c,
            [(f"text {i}", {"source": f"v/{i}.txt"}) for i in range(7)],
            batch_size=3,
            progress=lambda s, d, t: calls.append((s, d, t)),
        )
    docs = [(d, t) for s, d, t in calls if s == "documents"]
    assert docs == [(i, 7) for i in range(1, 8)]


def test_the_framework_helpers_pass_it_on(tmp_path: Path) -> None:
    """LangChain's ``add_documents(client, docs, batch_size=...)`` reaches add_records."""
    from langchain_core.documents import Document

    from langchain_treehop.documents import add_documents

    emb = FailsOn()
    docs = [
        Document(page_content=f"doc d{i} text", metadata={"source": f"l/{i}.md"}) for i in range(4)
    ]
    with Treehop(tmp_path / "idx", embedder=emb, tagger=None) as c:
        emb.word = "d3"
        with pytest.raises(TreehopError):
            add_documents(c, docs, batch_size=2)
        assert len([n for n in c.store.iter_nodes(None) if n.is_leaf]) == 2
        with pytest.raises(InvalidQueryError):
            add_documents(c, docs, batch_size=0)
