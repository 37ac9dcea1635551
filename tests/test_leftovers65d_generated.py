"""A folder's walk leaves out two more kinds of generated page (helper leftovers65d,
bench/README.md "(helper leftovers65d)"; leftovers65b's open item): Sphinx ``viewcode``'s
``_modules/`` source pages beside a build's ``searchindex.js`` (the package's code again, its
docstrings the API pages' text again), and MkDocs' ``search/search_index.json`` beside its
``sitemap.xml.gz`` (every page's text once more, as JSON). Each is told by its generator's
marker file: a ``_modules/`` folder or a ``search/search_index.json`` of a user's own, in a
tree without the marker, is read.

Each test fails on b41afd8a unless it says it is a control.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import Treehop
from treehop.ingest.loaders import LoadReport, drop_skipped_suffixes

from treehop_test_doubles import BagOfWordsEmbedder

PAGE = "<html><head><title>{t}</title></head><body><h1>{t}</h1><p>{b}</p></body></html>"
INDEX = {"config": {"lang": ["en"]}, "docs": [{"location": "", "title": "Home", "text": "deploy"}]}


def _sphinx(root: Path, marked: bool) -> Path:
    (root / "_modules" / "pkg").mkdir(parents=True)
    (root / "index.html").write_text(PAGE.format(t="Manual", b="How to deploy the service."))
    (root / "_modules" / "index.html").write_text(PAGE.format(t="Overview: module code", b="pkg"))
    (root / "_modules" / "pkg" / "deploy.html").write_text(
        PAGE.format(t="pkg.deploy", b="def deploy(service): roll the service out")
    )
    if marked:
        (root / "searchindex.js").write_text("Search.setIndex({docnames:['index']})")
    return root


def _mkdocs(root: Path, marked: bool) -> Path:
    (root / "search").mkdir(parents=True)
    (root / "index.html").write_text(PAGE.format(t="Home", b="How to deploy the service."))
    (root / "search" / "search_index.json").write_text(json.dumps(INDEX))
    (root / "sitemap.xml").write_text("<urlset></urlset>")
    if marked:
        (root / "sitemap.xml.gz").write_bytes(gzip.compress(b"<urlset></urlset>"))
    return root


def _walk(root: Path, **client: object) -> tuple[set[str], list[str]]:
    with Treehop(embedder=BagOfWordsEmbedder(), tagger=None, **client) as th:  # type: ignore[arg-type]
        res = th.add_resource(root, target_uri="viking://resources/t")
        found = {
            h.uri.removeprefix("viking://resources/t/").split("#", 1)[0]
            for h in th.find(
                "deploy the service", limit=50, target_uri="viking://resources/t"
            ).contexts()
        }
        return found, sorted(res.skipped_other)


def test_sphinx_viewcode_pages_are_left_out_and_named(tmp_path: Path) -> None:
    found, skipped = _walk(_sphinx(tmp_path / "html", marked=True))
    assert not any(u.startswith("_modules") for u in found), found
    assert "index.html" in found
    assert [s for s in skipped if s.startswith("_modules")] == [
        "_modules/index.html",
        "_modules/pkg/deploy.html",
    ]


def test_mkdocs_search_index_is_left_out_and_named(tmp_path: Path) -> None:
    found, skipped = _walk(_mkdocs(tmp_path / "site", marked=True))
    assert "search/search_index.json" in skipped
    assert not any(u.startswith("search") for u in found), found
    assert "index.html" in found


def test_without_the_marker_a_users_own_files_are_read(tmp_path: Path) -> None:
    # (control) no searchindex.js / sitemap.xml.gz: not a generator's output
    found, skipped = _walk(_sphinx(tmp_path / "html", marked=False))
    assert "_modules/pkg/deploy.html" in found and not skipped
    found, skipped = _walk(_mkdocs(tmp_path / "site", marked=False))
    assert "search/search_index.json" not in skipped and "search/search_index.json" in found


def test_an_empty_skip_list_reads_them(tmp_path: Path) -> None:
    # (control) skip_suffixes=() reads every file, as for Sphinx's other generated pages
    _, skipped = _walk(_sphinx(tmp_path / "html", marked=True), skip_suffixes=())
    assert not any(s.startswith("_modules") for s in skipped)


_FOLDERS = st.sampled_from(
    ["", "a", "a/b", "c", "_modules", "a/_modules", "a/_modules/x", "search", "a/search", "xsearch"]
)
_NAMES = st.sampled_from(
    ["page.html", "searchindex.js", "sitemap.xml.gz", "search_index.json", "notes.txt"]
)


@settings(max_examples=300, deadline=None)
@given(files=st.lists(st.tuples(_FOLDERS, _NAMES), min_size=1, max_size=14, unique=True))
def test_generated_files_are_dropped_exactly_under_their_marker(
    files: list[tuple[str, str]],
) -> None:
    rels = [f"{d}/{n}" if d else n for d, n in files]
    sphinx = {d for d, n in files if n == "searchindex.js"}
    mkdocs = {d for d, n in files if n == "sitemap.xml.gz"}
    keep = drop_skipped_suffixes(rels, frozenset({".css"}), LoadReport())
    kept = rels if keep is None else [r for r, k in zip(rels, keep.tolist(), strict=True) if k]
    site = any(n == "page.html" for _, n in files)
    for (folder, name), rel in zip(files, rels, strict=True):
        parts = folder.split("/") if folder else []
        under_modules = any(
            p == "_modules" and "/".join(parts[:i]) in sphinx for i, p in enumerate(parts)
        )
        mk_index = (
            name == "search_index.json"
            and parts[-1:] == ["search"]
            and "/".join(parts[:-1]) in mkdocs
        )
        dropped = (name == "page.html" and under_modules) or (site and mk_index)
        assert (rel in kept) == (not dropped), (rel, rels)
