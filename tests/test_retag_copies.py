"""A re-tag works on copies of the stored nodes (``TreeWriter.retag_sync``).

The embedded store hands out its cached nodes; a re-tag computes new tags on each node's copy
and writes them with ``update_tags``. A node a caller was handed earlier (a result of ``read``
or of the store's own reads) must not see its tags change underneath it. The copies are
shallow (``writer._own_tags``: only the tags list is the copy's own), so these tests hold that
nothing else of a node is changed in place either."""

from __future__ import annotations

from pathlib import Path

from treehop import Treehop
from treehop.ingest import writer

from treehop_test_doubles import BagOfWordsEmbedder


def _client(tmp_path: Path) -> Treehop:
    docs = tmp_path / "docs"
    (docs / "guides").mkdir(parents=True)
    (docs / "guides" / "a.md").write_text("# Tuning\n\nGuitar strings and violin bows.\n")
    (docs / "guides" / "b.md").write_text("# Baking\n\nSourdough recipe for the bakery.\n")
    c = Treehop(str(tmp_path / "idx"), embedder=BagOfWordsEmbedder(), tagger="auto")
    c.add_resource(str(docs), target_uri="viking://resources/docs")
    return c


def test_a_retag_leaves_nodes_handed_out_before_it_as_they_were(tmp_path: Path) -> None:
    c = _client(tmp_path)
    store = c._async.writer.store
    held = list(store.iter_nodes("viking://resources/docs"))
    tags_before = {n.uri: list(n.tags) for n in held}
    meta_before = {n.uri: dict(n.metadata) for n in held}
    c.set_tags("viking://resources/docs/guides", add="handbook")  # re-tags the subtree
    after = {n.uri: list(n.tags) for n in store.iter_nodes("viking://resources/docs")}
    # the stored tags changed (the children inherit the new label) ...
    changed = [u for u in after if after[u] != tags_before[u]]
    assert any(u.startswith("viking://resources/docs/guides/") for u in changed)
    # ... and the nodes handed out before kept theirs, and the rest of them
    assert {n.uri: list(n.tags) for n in held} == tags_before
    assert {n.uri: dict(n.metadata) for n in held} == meta_before


def test_the_copy_owns_its_tags_and_shares_nothing_it_changes(tmp_path: Path) -> None:
    c = _client(tmp_path)
    n = c._async.writer.store.get(["viking://resources/docs/guides/a.md"])[0]
    assert n is not None
    tags = list(n.tags)
    copy = writer._own_tags(n)
    assert copy is not n and copy.tags == n.tags and copy.tags is not n.tags
    copy.tags.append("auto:zzz")
    assert n.tags == tags
    assert copy.model_dump(exclude={"tags"}) == n.model_dump(exclude={"tags"})
