"""The directories above a write are re-described from only the children their summary reads
(helper ancestors): the texts must be the very ones a read of every child gives.

``TreeWriter.refresh_ancestors`` read all children of each ancestor; the default summariser
reads the first 4 abstracts and the lines that fit in 1,800 characters. The writer now reads a
prefix of the stored order (the embedded store's ``children_head``) a page at a time until
``ExtractiveSummarizer.directory_children_enough`` says the rest cannot change the texts.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import AsyncTreehop
from treehop.ingest.summaries import (
    OVERVIEW_CHARS,
    ChildSummary,
    ExtractiveSummarizer,
    _directory_abstract,
    humanize,
)
from treehop.models import ContextType, Level, Node
from treehop.stores.embedded import EmbeddedStore

from treehop_test_doubles import BagOfWordsEmbedder

ROOT = "viking://resources/t"


def _is_id(name: str) -> bool:
    """A UUID (``@`` first or not) or 16+ hex digits: the names an overview line leaves out."""
    stem = name.removeprefix("@")
    try:
        if str(uuid.UUID(stem)) == stem:
            return True
    except ValueError:
        pass
    # (not ``else``: ``uuid.UUID`` takes 32 bare hex digits too, and a hyphen-less hex run
    # is an id to the library: helper quality68 saw a drawn 32-digit name judged not one)
    return len(stem) >= 16 and all(ch in "0123456789abcdefABCDEF" for ch in stem)


_NAMES = st.from_regex(r"[a-z0-9][a-z0-9_.-]{0,9}", fullmatch=True)
_TEXT = st.text(alphabet="ab :;.é-\n\t", max_size=40)
_ABSTRACTS = st.one_of(
    st.just(""),
    _TEXT,
    st.text(alphabet="ab :é\n", min_size=300, max_size=2500),
)
# (ids too: an id's overview line is its abstract alone, so a line's length depends on the name)
_CHILD_NAMES = st.one_of(
    _NAMES,
    st.uuids().map(str),
    st.uuids().map(lambda u: f"@{u}"),
    st.from_regex(r"[0-9a-f]{16,40}", fullmatch=True),
)
_CHILDREN = st.lists(st.builds(ChildSummary, _CHILD_NAMES, _ABSTRACTS, st.booleans()), max_size=60)
_README = st.one_of(st.none(), st.just(""), st.just("# Title\n\nA readme sentence. More."))


class _ReadsAll:
    """The default summariser's texts, without its declaration: the writer reads every child
    (what a caller's or an LLM summariser gets)."""

    def __init__(self) -> None:
        self._inner = ExtractiveSummarizer()

    def summarize_file(self, name: str, text: str, kind: str) -> tuple[str, str]:
        return self._inner.summarize_file(name, text, kind)

    def summarize_directory(
        self, name: str, children: Sequence[ChildSummary], readme: str | None
    ) -> tuple[str, str]:
        return self._inner.summarize_directory(name, children, readme)


class _Inherits(ExtractiveSummarizer):
    """A subclass that keeps the default directory texts (and so their declaration)."""


@settings(max_examples=200, deadline=None)
@given(_NAMES, _CHILDREN, _README)
def test_enough_means_the_rest_changes_nothing(
    name: str, kids: list[ChildSummary], readme: str | None
) -> None:
    s = ExtractiveSummarizer()
    full = s.summarize_directory(name, kids, readme)
    for k in range(len(kids) + 1):
        if s.directory_children_enough(name, kids[:k], readme):
            assert s.summarize_directory(name, kids[:k], readme) == full
            break


@settings(max_examples=200, deadline=None)
@given(_NAMES, _CHILDREN)
def test_enough_exactly_when_the_lines_reach_the_cut(name: str, kids: list[ChildSummary]) -> None:
    """The bound is not vacuous: with 4 children read and their lines at the overview's cut
    (the unclipped overview at least :data:`OVERVIEW_CHARS` long), no more are asked for;
    short of it, more are."""
    s = ExtractiveSummarizer()
    for k in range(len(kids) + 1):
        head = kids[:k]
        lines = "".join(
            f"\n- {c.abstract}"
            if _is_id(c.name) and c.abstract
            else f"\n- {humanize(c.name)}: {c.abstract}"
            for c in head
        )
        filled = len(_directory_abstract(name, head, None) + lines) >= OVERVIEW_CHARS
        assert s.directory_children_enough(name, head, None) == (k >= 4 and filled)


def test_a_subclass_with_its_own_directories_reads_every_child() -> None:
    class Own(ExtractiveSummarizer):
        def summarize_directory(
            self, name: str, children: Sequence[ChildSummary], readme: str | None
        ) -> tuple[str, str]:
            return name, str(len(children))

    kids = [ChildSummary(f"c{i}", "x" * 500, True) for i in range(20)]
    assert ExtractiveSummarizer().directory_children_enough("d", kids, None)
    assert not Own().directory_children_enough("d", kids, None)
    assert _Inherits().directory_children_enough("d", kids, None)  # same texts: trusted


def _leaf(uri: str, abstract: str, chunk: int | None = None) -> Node:
    parent = uri.rsplit("#", 1)[0] if chunk is not None else uri.rsplit("/", 1)[0]
    return Node(
        uri=uri,
        parent_uri=parent,
        context_type=ContextType.RESOURCE,
        level=Level.CONTENT,
        is_leaf=True,
        abstract=abstract,
        content=abstract or "empty",
        chunk_index=chunk,
    )


def _texts(store: Any) -> dict[str, tuple[str, str, str | None, str]]:
    return {
        n.uri: (n.abstract, n.overview or "", n.content, n.content_hash)
        for n in store.iter_nodes(ROOT)
    }


async def _both(batches: list[list[Node]]) -> tuple[dict[str, Any], dict[str, Any], int]:
    """Write ``batches`` with the bounded refresh and with a read of every child; the texts
    of every node after each batch, and how many children the bounded one read at most."""
    bounded = AsyncTreehop(None, embedder=BagOfWordsEmbedder(), tagger=None)
    full = AsyncTreehop(None, embedder=BagOfWordsEmbedder(), tagger=None, summarizer=_ReadsAll())
    most = [0]
    head = bounded.store.children_head

    def counted(uri: str, n: int) -> list[Node]:
        out = head(uri, n)
        most[0] = max(most[0], len(out))
        return out

    bounded.store.children_head = counted  # type: ignore[method-assign]
    try:
        a: dict[str, Any] = {}
        b: dict[str, Any] = {}
        for i, batch in enumerate(batches):
            await bounded.writer.write_nodes(batch)
            await full.writer.write_nodes(batch)
            a[str(i)] = _texts(bounded.store)
            b[str(i)] = _texts(full.store)
        return a, b, most[0]
    finally:
        await bounded.close()
        await full.close()


_TREE = st.lists(
    st.tuples(st.lists(_NAMES, min_size=0, max_size=2), _NAMES, _ABSTRACTS),
    min_size=1,
    max_size=25,
)


@settings(max_examples=15, deadline=None)
@given(
    _TREE,
    st.integers(0, 300),
    st.lists(st.sampled_from(["", "a", "k: v", "é" * 90, "z" * 700]), min_size=1, max_size=8),
    st.integers(0, 14),
    _TREE,
)
def test_bounded_refresh_writes_what_the_full_read_writes(
    tree: list[tuple[list[str], str, str]],
    wide: int,
    pattern: list[str],
    chunks: int,
    later: list[tuple[list[str], str, str]],
) -> None:
    """Random trees (a wide folder of up to 300 children with short or long abstracts, a
    chunked file, nested folders), written in two batches: every node's abstract,
    overview, content and content hash are equal to those of a read of every child."""

    def nodes_of(spec: list[tuple[list[str], str, str]], tag: str) -> list[Node]:
        out: dict[str, Node] = {}
        for dirs, name, abstract in spec:
            uri = "/".join([ROOT, *(f"d{d}" for d in dirs), f"{tag}{name}"])
            out[uri] = _leaf(uri, abstract)
        return list(out.values())

    first = nodes_of(tree, "f")
    first += [_leaf(f"{ROOT}/wide/w{i:03d}", pattern[i % len(pattern)]) for i in range(wide)]
    first += [_leaf(f"{ROOT}/doc#{i}", pattern[i % len(pattern)], i) for i in range(chunks)]
    second = [*nodes_of(later, "g"), _leaf(f"{ROOT}/wide/new", "a new one: x")]
    a, b, _ = asyncio.run(_both([first, second]))
    assert a == b


def test_a_wide_folder_is_described_from_a_few_children() -> None:
    """The point: 2,000 siblings with 60-character abstracts, and one more is written; the
    folder is re-described from the 64 first (16 did not fill the overview), not 2,001."""
    kids = [
        _leaf(f"{ROOT}/w{i:05d}", f"Child {i} says something of sixty characters..")
        for i in range(2000)
    ]
    a, b, most = asyncio.run(_both([kids, [_leaf(f"{ROOT}/zz", "last")]]))
    assert a == b
    assert most == 64


def test_children_head_is_the_prefix_of_children() -> None:
    """Chunks by chunk index (``#10`` after ``#9``), then the rest by URI, for every prefix."""
    store = EmbeddedStore(lexical=False)
    nodes = [_leaf(f"{ROOT}/doc#{i}", f"c{i}", i) for i in range(12)]
    nodes += [_leaf(f"{ROOT}/doc/{n}", n) for n in ("b", "a", "c10", "c9")]
    store.upsert(nodes, np.eye(len(nodes), 32, dtype=np.float32))
    for parent in (f"{ROOT}/doc",):
        whole = [n.uri for n in store.children(parent)]
        assert len(whole) == 16
        for n in (0, 1, 3, 12, 15, 16, 40):
            assert [k.uri for k in store.children_head(parent, n)] == whole[:n]


def test_routing_vectors_are_the_same_from_child_uris(tmp_path: Any) -> None:
    """``directory_vectors="centroid"`` / ``"mixed"``: the routing vectors made from the
    store's ``child_uris`` (no node built) are those made from ``children``, to the bit, and
    so are the texts with and without the bounded read."""
    src = tmp_path / "src"
    for i in range(40):
        sub = src / f"d{i % 3}" / (f"e{i % 2}" if i % 5 else "")
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"f{i:02d}.md").write_text(f"# File {i}\n\nWords {i} about {i * 7}.\n")
    extra = tmp_path / "extra.md"
    extra.write_text("# Extra\n\nOne more file.\n")

    async def run(mode: str, bounded: bool) -> tuple[dict[str, Any], bytes]:
        c = AsyncTreehop(None, embedder=BagOfWordsEmbedder(), tagger=None, directory_vectors=mode)
        if not bounded:  # the store's full reads only
            c.store.child_uris = None  # type: ignore[attr-defined]
            c.store.children_head = None  # type: ignore[attr-defined]
        try:
            await c.add_resource(src, target_uri=ROOT)
            await c.add_resource(extra, target_uri=f"{ROOT}/d1/extra.md")
            texts = _texts(c.store)
            vecs = c.store.get_vectors(sorted(texts))
            return texts, np.asarray(vecs, np.float32).tobytes()
        finally:
            await c.close()

    for mode in ("centroid", "mixed"):
        assert asyncio.run(run(mode, True)) == asyncio.run(run(mode, False))
