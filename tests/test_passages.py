"""treehop.ingest.records passages: the helpers that place pre-split texts in the tree.

Property-based (hypothesis) where the input is arbitrary user data: source paths, ids,
page labels.
"""

from __future__ import annotations

import posixpath
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from treehop import uri as urimod
from treehop.ingest.records import id_segment, order_key, relative_sources, stable_id

from treehop_test_doubles import BagOfWordsEmbedder

_SEG = st.text(alphabet="abcXYZ019._- ", min_size=1, max_size=8).filter(
    lambda s: s.strip(" .") != "" and s not in {".", ".."}
)
_PATH = st.lists(_SEG, min_size=1, max_size=5)


@given(st.lists(_PATH, min_size=1, max_size=6), st.sampled_from(["/", "../", "C:\\\\", ""]))
def test_relative_sources_never_leave_a_machine_path(paths: list[list[str]], prefix: str) -> None:
    values = [prefix + "/".join(p) for p in paths]
    out = relative_sources(values)
    assert len(out) == len(values)
    for before, after in zip(values, out, strict=True):
        segs = after.split("/")
        assert ".." not in segs and not after.startswith("/") and after
        assert not after.startswith("C:")
        # What remains is always a suffix of the original path (nothing invented).
        assert posixpath.normpath(before.replace("\\\\", "/")).endswith(after)
        if prefix == "" and ".." not in before.split("/"):
            assert after == before  # relative paths are kept as they are


def test_relative_sources_examples() -> None:
    assert relative_sources(["/home/a/docs/x.md", "/home/a/docs/sub/y.md"]) == [
        "x.md",
        "sub/y.md",
    ]
    assert relative_sources(["/srv/one.pdf"]) == ["one.pdf"]
    assert relative_sources(["../shared/n.md", "docs/k.md"]) == ["n.md", "docs/k.md"]
    assert relative_sources(["/data/a/x.md"], root="/data") == ["a/x.md"]
    assert relative_sources(["https://wiki/x"]) == ["https://wiki/x"]


@given(st.lists(st.text(min_size=1, max_size=300), min_size=2, max_size=20, unique=True))
def test_id_segments_are_injective_and_valid(ids: list[str]) -> None:
    segs = [id_segment(i) for i in ids]
    assert len(set(segs)) == len(ids)
    for s in segs:
        uri = urimod.join("viking://resources/kb", s)
        assert urimod.normalize(uri, "default") == uri
        assert urimod.parent_of(uri) == "viking://resources/kb"


def test_plain_ids_are_kept_readable() -> None:
    assert id_segment("doc-42") == "doc-42"
    assert id_segment("a/b").startswith("a_b-")


@given(st.integers(min_value=0, max_value=10_000), st.integers(min_value=0, max_value=10**6))
def test_order_key_reads_loader_and_splitter_metadata(page: int, start: int) -> None:
    assert order_key({"page": page, "start_index": start}) == [float(page), float(start)]
    assert order_key({"page_label": str(page)}, offset=start) == [float(page), float(start)]
    assert order_key({"page_label": "iv"}) == [None, None]
    assert order_key({"page": True}) == [None, None]  # a bool is not a page number


@given(st.text(max_size=50), st.dictionaries(st.text(max_size=5), st.integers(), max_size=3))
def test_stable_ids_are_deterministic(text: str, meta: dict[str, int]) -> None:
    assert stable_id(text, meta) == stable_id(text, dict(reversed(list(meta.items()))))
    assert stable_id(text, meta) != stable_id(text + "x", meta)


def test_find_with_a_query_vector(bow: BagOfWordsEmbedder, sample_tree: Path) -> None:
    import pytest

    from treehop import Treehop
    from treehop.errors import InvalidQueryError

    with Treehop(embedder=bow, tagger=None) as client:
        client.add_resource(sample_tree / "resources", target_uri="viking://resources/kb")
        query = "rotate api keys"
        by_text = client.find(query, limit=5, dense_weight=1.0)
        vec = bow.embed_query(query).ravel() * 3.0  # any scale: normalised by find
        by_vector = client.find("", limit=5, query_vector=vec.tolist())
        assert [m.uri for m in by_vector.contexts()] == [m.uri for m in by_text.contexts()]
        for bad in ([0.0] * 64, [1.0] * 3, [float("nan")] * 64, "abc"):
            with pytest.raises(InvalidQueryError):
                client.find("", query_vector=bad)  # type: ignore[arg-type]
        with pytest.raises(InvalidQueryError):
            client.find("")  # no text and no vector
