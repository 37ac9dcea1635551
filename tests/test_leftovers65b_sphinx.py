"""A folder's walk leaves out the pages a Sphinx build generates from no source of its own
(helper leftovers65b, bench/README.md "(helper leftovers65b)"; usage72's / usage73's open
item): ``search.html`` ("Search", a JavaScript form), ``genindex.html`` (every indexed term
again, ``genindex-A.html`` per letter) and ``py-modindex.html``, in a folder holding
``searchindex.js`` (the mark of a Sphinx HTML build), as usage72 left out its ``_sources``
copies and assets. A site's own ``search.html`` elsewhere is read; ``skip_suffixes=()`` reads
everything.

Each test fails on 6ef26e9a unless it says it is a control.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import Treehop
from treehop.ingest.loaders import LoadReport, drop_skipped_suffixes

from treehop_test_doubles import BagOfWordsEmbedder

PAGE = "<html><head><title>{t}</title></head><body><h1>{t}</h1><p>{b}</p></body></html>"
GENERATED = ["search.html", "genindex.html", "genindex-A.html", "py-modindex.html"]


def _build(root: Path) -> Path:
    html = root / "html"
    html.mkdir(parents=True)
    (html / "index.html").write_text(PAGE.format(t="Manual", b="How to deploy the service."))
    (html / "search.html").write_text(PAGE.format(t="Search", b="Please activate JavaScript."))
    for name in GENERATED[1:]:
        (html / name).write_text(PAGE.format(t="Index", b="deploy service rollback oauth"))
    (html / "searchindex.js").write_text("Search.setIndex({docnames:['index']})")
    other = root / "site"
    other.mkdir()
    (other / "search.html").write_text(PAGE.format(t="Searching", b="How to search the logs."))
    return root


def _walk(tmp_path: Path, **client: object) -> tuple[list[str], list[str]]:
    with Treehop(embedder=BagOfWordsEmbedder(), tagger=None, **client) as th:  # type: ignore[arg-type]
        res = th.add_resource(_build(tmp_path / "t"), target_uri="viking://resources/t")
        listed = [e.uri.rsplit("/", 1)[1] for e in th.ls("viking://resources/t/html")]
        return sorted(listed), sorted(res.skipped_other)


def test_sphinx_generated_pages_are_left_out_and_named(tmp_path: Path) -> None:
    listed, skipped = _walk(tmp_path)
    assert listed == ["index.html"]
    assert [f"html/{n}" for n in sorted(GENERATED)] == [s for s in skipped if s.endswith(".html")]


def test_a_sites_own_search_page_is_read(tmp_path: Path) -> None:
    # (control) no searchindex.js beside it: not a Sphinx build
    with Treehop(embedder=BagOfWordsEmbedder(), tagger=None) as th:
        th.add_resource(_build(tmp_path / "t"), target_uri="viking://resources/t")
        assert [e.uri.rsplit("/", 1)[1] for e in th.ls("viking://resources/t/site")] == [
            "search.html"
        ]


def test_an_empty_skip_list_reads_them(tmp_path: Path) -> None:
    # (control) skip_suffixes=() reads every text file, as for _sources copies
    listed, _ = _walk(tmp_path, skip_suffixes=())
    assert set(GENERATED) <= set(listed)


_NAMES = st.sampled_from([*GENERATED, "page.html", "searchindex.js", "Search.HTML", "notes.txt"])
_FOLDERS = st.sampled_from(["", "a", "a/b", "c"])


@settings(max_examples=300, deadline=None)
@given(files=st.lists(st.tuples(_FOLDERS, _NAMES), min_size=1, max_size=12, unique=True))
def test_a_generated_page_is_dropped_exactly_beside_searchindex_js(
    files: list[tuple[str, str]],
) -> None:
    rels = [f"{d}/{n}" if d else n for d, n in files]
    marked = {d for d, n in files if n == "searchindex.js"}
    keep = drop_skipped_suffixes(rels, frozenset({".css"}), LoadReport())
    kept = rels if keep is None else [r for r, k in zip(rels, keep.tolist(), strict=True) if k]
    for (folder, name), rel in zip(files, rels, strict=True):
        generated = name.lower() in {g.lower() for g in GENERATED} or name == "Search.HTML"
        assert (rel in kept) == (not (generated and folder in marked)), (rel, rels)
