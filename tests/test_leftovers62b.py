"""Items left open by stop 61 (bench/README.md, "Leftovers, stop 62 continued (helper
leftovers62b)"). Each test fails on 9c20d29 (main before this round)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from treehop import InvalidQueryError, Treehop
from treehop.errors import EmbeddingError, TreehopError
from treehop.ingest import writer as writer_module
from treehop.ingest.records import add_records
from treehop.models import Node
from treehop.stores.base import VectorStore
from treehop.tagging.base import NodeTags
from treehop.tagging.ingest import IngestTagger

from treehop_test_doubles import BagOfWordsEmbedder, FlakyEmbedder, stored_keyword_statistics

# ----------------------------------------- 1. a failed write's keyword counts taken back


class WrappingTagger:
    """A custom tagger over the keyword tagger, as a user writes one: the keyword tagger
    counts the new texts first, then this one raises on its ``fail_at``-th call (a model
    behind it failing). The keyword tagger sits under ``attr`` (``base``, as
    :class:`~treehop.tagging.llm_tagger.LLMTagger` keeps it, or any other name)."""

    def __init__(self, attr: str) -> None:
        self.attr = attr
        setattr(self, attr, IngestTagger())
        self.fail_at: int | None = None
        self.armed = 0

    @property
    def keywords(self) -> IngestTagger:
        inner: IngestTagger = getattr(self, self.attr)
        return inner

    def arm(self, fail_at: int | None) -> None:
        self.fail_at, self.armed = fail_at, 0

    def tag_nodes(
        self, nodes: Sequence[Node], store: VectorStore, new_texts: Sequence[str] | None = None
    ) -> dict[str, NodeTags]:
        out = self.keywords.tag_nodes(nodes, store, new_texts)
        if self.fail_at is not None:
            self.armed += 1
            if self.armed == self.fail_at:
                raise InvalidQueryError("tagger failed")
        return out

    def refit(self, store: VectorStore) -> None:
        self.keywords.refit(store)


T0 = 1_700_000_000.0  # (fixed times: a memory's and a turn's timestamp are in its node)


def _tree(root: Path) -> Path:
    for i in range(6):
        f = root / f"s{i % 2}" / f"f{i}.md"
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(f"# File {i}\n\n" + f"apples pears notes {i} " * 40, encoding="utf-8")
    return root


WRITES: dict[str, Callable[[Treehop, Path], Any]] = {
    "directory": lambda th, src: th.add_resource(src / "s1", target_uri="viking://resources/s1"),
    "remove": lambda th, src: th.remove("viking://resources/s0/f0.md"),
    "text": lambda th, src: th.add_resource(
        "kiwis and plums", target_uri="viking://resources/s0/new.md", is_text=True
    ),
    "memory": lambda th, src: th.remember("The user likes kiwis.", name="kiwi", timestamp=T0),
    "records": lambda th, src: add_records(
        th, [(f"record {i} kiwis plums", {"source": f"r/{i}.txt"}) for i in range(30)]
    ),
    "append": lambda th, src: th.add_messages(
        [
            {"role": "user", "content": "kiwis plums apples today"},
            {"role": "assistant", "content": "noted: kiwis"},
        ],
        conversation_id="c1",
        session_id="s1",
        session_time=T0 + 5,
    ),
    "new-session": lambda th, src: th.add_messages(
        [{"role": "user", "content": "kiwis plums apples today"}],
        conversation_id="c1",
        session_time=T0 + 6,
    ),
}


def _setup(th: Treehop, src: Path) -> None:
    th.add_resource("seed text about plums", target_uri="viking://resources/seed.md")
    th.add_resource(src / "s0", target_uri="viking://resources/s0")
    th.add_messages(
        [{"role": "user", "content": "hello plums"}],
        conversation_id="c1",
        session_id="s1",
        session_time=T0,
    )


def _next(th: Treehop) -> None:
    """A later write (an append to the session): its tags follow the statistics too."""
    th.add_messages(
        [{"role": "user", "content": "more apples and kiwis"}],
        conversation_id="c1",
        session_id="s1",
        session_time=T0 + 9,
    )


def _everything(th: Treehop) -> tuple[dict[str, str], Any]:
    """Every node's JSON (text, tags, metadata: a session's turns and speakers) by URI,
    and the statistics."""
    nodes = th.store.iter_nodes(None)
    return {n.uri: n.model_dump_json() for n in nodes}, stored_keyword_statistics(th.store)


@pytest.mark.parametrize("where", ["memory", "disk"])
@pytest.mark.parametrize("write", sorted(WRITES))
@pytest.mark.parametrize("fail", ["embedder-1", "embedder-2", "tagger-1", "tagger-2"])
def test_a_failed_write_leaves_the_keyword_statistics_and_sessions_as_they_were(
    tmp_path: Path, where: str, write: str, fail: str
) -> None:
    # 9c20d29: the store's rows were rolled back, the keyword statistics (state blobs,
    # saved at once) were not: after the same write repeated, a text's, a memory's and an
    # append's tags (and the session's, and the next append's) differed from a client's
    # that never failed, and the statistics held the texts twice (48 of 70 cases)
    src = _tree(tmp_path / "src")
    emb, tagger = FlakyEmbedder(), WrappingTagger("base")
    path = tmp_path / "idx" if where == "disk" else None
    with Treehop(path, embedder=emb, tagger=tagger, reader_processes=0) as th:
        _setup(th, src)
        before = _everything(th)
        who, n = fail.split("-")
        (emb if who == "embedder" else tagger).arm(int(n))
        try:
            WRITES[write](th, src)
        except TreehopError:
            failed = True
        else:
            failed = False
        emb.arm(None)
        tagger.arm(None)
        if failed:
            assert _everything(th) == before
            WRITES[write](th, src)
        _next(th)
        after = _everything(th)
        assert not tagger.keywords._journals  # (no batch left open)
    with Treehop(None, embedder=FlakyEmbedder(), tagger=WrappingTagger("base")) as control:
        _setup(control, src)
        WRITES[write](control, src)
        _next(control)
        expected = _everything(control)
    assert after == expected


@pytest.mark.parametrize("attr", ["base", "inner"])
def test_a_keyword_tagger_wrapped_under_any_name_is_taken_back(tmp_path: Path, attr: str) -> None:
    # the keyword taggers that counted during the write take their counts back, found by
    # their count, not by the tagger chain's ``base`` (which add_records walks)
    emb, tagger = FlakyEmbedder(), WrappingTagger(attr)
    with Treehop(tmp_path / "idx", embedder=emb, tagger=tagger) as th:
        th.add_resource("seed text about plums", target_uri="viking://resources/seed.md")
        before = stored_keyword_statistics(th.store)
        tagger.arm(1)
        with pytest.raises(InvalidQueryError, match="tagger failed"):
            th.add_resource("kiwis and plums", target_uri="viking://resources/k.md", is_text=True)
        assert stored_keyword_statistics(th.store) == before
    with Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=IngestTagger()) as th:
        assert (
            stored_keyword_statistics(th.store) == before
        )  # (what is stored, read by a new client)


def test_a_directory_ingest_that_committed_a_batch_keeps_its_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # control: a directory ingest failing after one of its commit batches keeps those
    # rows and their counts (the partial manifest recounts on resume), as before; the
    # statistics then equal an ingest that never failed once the directory is added again
    src = _tree(tmp_path / "src")
    emb, tagger = FlakyEmbedder(), WrappingTagger("base")
    with Treehop(tmp_path / "idx", embedder=emb, tagger=tagger, reader_processes=0) as th:
        th._async.writer.commit_files = 1
        monkeypatch.setattr(writer_module, "EMBED_BATCH", 1)  # (a commit after each file)
        th.add_resource("seed text about plums", target_uri="viking://resources/seed.md")
        before = stored_keyword_statistics(th.store)
        emb.arm(4)  # (the folder, its first file (committed), its second, its third)
        with pytest.raises(EmbeddingError):
            th.add_resource(src / "s0", target_uri="viking://resources/s0")
        assert "viking://resources/s0/f0.md" in set(th.store.iter_uris())
        assert stored_keyword_statistics(th.store) != before
        emb.arm(None)
        th.add_resource(src / "s0", target_uri="viking://resources/s0")
        after = stored_keyword_statistics(th.store)
    with Treehop(None, embedder=BagOfWordsEmbedder(), tagger=WrappingTagger("base")) as control:
        control.add_resource("seed text about plums", target_uri="viking://resources/seed.md")
        control.add_resource(src / "s0", target_uri="viking://resources/s0")
        assert after == stored_keyword_statistics(control.store)


def test_batches_nest_and_close() -> None:
    # a client's write opens a batch and add_records another inside it: the counts stay
    # recorded until the outer one closes, and one take_back ends both
    t = IngestTagger()
    t.start_batch()
    t.start_batch()
    t.end_batch()
    assert t._journals
    t.end_batch()
    assert not t._journals


# ------------------------------------ 2. a file of several documents stores its source path

_PART1 = "# Deploy\n\nRun the deploy script first; it checks the release notes."
_PART2 = "Then pass the blue-green flag to roll the release out without downtime."
_BACKUP = "# Backups\n\nNightly backups rotate every seven days and are copied off site."


def _meta(client: Treehop, uri: str) -> dict[str, Any]:
    node = client.store.get([client.aio.resolve(uri)])[0]
    assert node is not None, uri
    return dict(node.metadata)


def _pages(docs: Path) -> list[tuple[str, dict[str, Any]]]:
    """A loader's pages of one file (one ``source``, two pages) and a whole other file."""
    deploy = str(docs / "guide" / "deploy.md")
    return [
        (_PART1, {"source": deploy, "page": 1}),
        (_PART2, {"source": deploy, "page": 2}),
        (_BACKUP, {"source": str(docs / "backups.md")}),
    ]


def test_the_chunks_of_one_source_store_its_path_as_a_whole_document_does(tmp_path: Path) -> None:
    # 9c20d29: the two pages of guide/deploy.md (the chunks of one file) stored no
    # source_path, where backups.md (a whole document) stored "backups.md" and add_resource
    # of the folder stores "guide/deploy.md": a filter on source_path missed the chunks
    docs = tmp_path / "docs"
    with Treehop(tmp_path / "ix", embedder=BagOfWordsEmbedder(), tagger=None) as c:
        uris = add_records(c, _pages(docs))
        assert uris == [
            "viking://resources/guide/deploy.md#chunk-0",
            "viking://resources/guide/deploy.md#chunk-1",
            "viking://resources/backups.md",
        ]
        paths = [_meta(c, u).get("source_path") for u in uris]
        assert paths == ["guide/deploy.md", "guide/deploy.md", "backups.md"]
        # the file's node shows it too (the keys its chunks share)
        assert _meta(c, "viking://resources/guide/deploy.md")["source_path"] == "guide/deploy.md"
        # the loader's own keys are kept as given
        assert _meta(c, uris[1])["source"] == str(docs / "guide" / "deploy.md")
        assert _meta(c, uris[1])["page"] == 2
        hits = c.find(
            "blue-green flag release",
            filter={"op": "must", "field": "source_path", "conds": ["guide/deploy.md"]},
        )
        found = {m.uri for m in hits.contexts()}
        assert c.aio.resolve(uris[1]) in found
        assert found <= {c.aio.resolve(u) for u in uris[:2]} | {
            c.aio.resolve("viking://resources/guide/deploy.md")
        }


def test_a_chunks_own_source_path_wins_and_a_uri_placed_file_has_none(tmp_path: Path) -> None:
    # controls: a record's own source_path is stored as given; chunks placed by a URI
    # (not by a path) get none, as a whole document placed by a URI stores only its name
    with Treehop(tmp_path / "ix", embedder=BagOfWordsEmbedder(), tagger=None) as c:
        uris = add_records(
            c,
            [
                (_PART1, {"source": "guide/deploy.md", "source_path": "mine"}),
                (_PART2, {"source": "guide/deploy.md"}),
                (_PART1, {"uri": "viking://resources/ops/run.md"}),
                (_PART2, {"uri": "viking://resources/ops/run.md"}),
            ],
        )
        assert [_meta(c, u).get("source_path") for u in uris] == [
            "mine",
            "guide/deploy.md",
            None,
            None,
        ]


def test_chunks_written_before_get_the_path_on_re_add_with_the_same_ids_and_no_embedding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # an index written before (the chunks without source_path: the writer of 9c20d29, the
    # new step taken out) gets the path when the same documents are added again, with the
    # same passage ids (made from the metadata given) and nothing embedded
    from treehop.ingest import records as records_module

    docs = tmp_path / "docs"
    emb = BagOfWordsEmbedder()
    with Treehop(tmp_path / "ix", embedder=emb, tagger=None) as c:
        with monkeypatch.context() as m:
            m.setattr(records_module, "_with_source_paths", lambda planned, order, group: planned)
            uris = add_records(c, _pages(docs))
        assert "source_path" not in _meta(c, uris[0])
        ids = [_meta(c, u)["treehop_id"] for u in uris[:2]]
        before = emb.texts_embedded
        assert add_records(c, _pages(docs)) == uris
        assert emb.texts_embedded == before
        assert [_meta(c, u)["treehop_id"] for u in uris[:2]] == ids
        assert [_meta(c, u)["source_path"] for u in uris[:2]] == ["guide/deploy.md"] * 2
