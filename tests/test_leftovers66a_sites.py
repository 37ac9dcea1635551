"""A folder's walk leaves out Hugo's, Docusaurus' and Jekyll's search data (helper
leftovers66a; leftovers65d's open item): one JSON document of every page's text again
(``index.json``, ``search-index-<hash>.json``, ``lunr-index-<n>.json``, ``search.json``,
``assets/js/search-data.json``), indexed as content beside the pages it repeats. Each is told
by its generator's marker, the ``<meta name="generator">`` of the site's ``index.html``: a
user's own ``index.json`` in a tree without it is read.

The shapes are those the generators document (no Debian package ships such a site: see the
README section). Each test fails on 06c8a981 unless it says it is a control.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import Treehop
from treehop.ingest.loaders import LoadReport, drop_skipped_suffixes, skipped_for_suffix

from treehop_test_doubles import BagOfWordsEmbedder

PAGE = (
    "<!DOCTYPE html><html><head>{meta}<title>{t}</title></head>"
    "<body><main><h1>{t}</h1><p>{b}</p></main></body></html>"
)
DATA = [{"title": "Deploy", "href": "/deploy/", "content": "How to deploy the service."}]
GENERATORS = {
    "hugo": '<meta name="generator" content="Hugo 0.111.3">',
    "docusaurus": '<meta name="generator" content="Docusaurus v2.4.3">',
    "jekyll": '<meta name="generator" content="Jekyll v4.3.2" />',
}
SEARCH_DATA = {
    "hugo": ["index.json", "offline-search-index.9f2c1a.json", "en.search-data.json"],
    "docusaurus": [
        "search-index.json",
        "search-index-3f0a9c2d.json",
        "search-doc-1690000000.json",
        "lunr-index-1690000000.json",
    ],
    "jekyll": ["search.json", "search_data.json", "assets/js/search-data.json"],
}


def _site(root: Path, generator: str, marked: bool = True) -> Path:
    meta = GENERATORS[generator] if marked else '<meta name="viewport" content="width=device">'
    (root / "deploy").mkdir(parents=True)
    (root / "index.html").write_text(PAGE.format(meta=meta, t="Home", b="Welcome."))
    (root / "deploy" / "index.html").write_text(
        PAGE.format(meta=meta, t="Deploy", b="How to deploy the service.")
    )
    for name in SEARCH_DATA[generator]:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(json.dumps(DATA))
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


@pytest.mark.parametrize("generator", sorted(GENERATORS))
def test_a_generators_search_data_is_left_out_and_named(tmp_path: Path, generator: str) -> None:
    found, skipped = _walk(_site(tmp_path / "public", generator))
    assert skipped == sorted(SEARCH_DATA[generator])
    assert not any(u.endswith(".json") for u in found), found
    assert "deploy/index.html" in found
    assert all(skipped_for_suffix(s, frozenset({".css"})) for s in skipped)  # the CLI's label


@pytest.mark.parametrize("generator", sorted(GENERATORS))
def test_without_the_generators_marker_the_json_is_read(tmp_path: Path, generator: str) -> None:
    # (control) the same tree, its pages naming no generator: a user's own files
    found, skipped = _walk(_site(tmp_path / "public", generator, marked=False))
    assert not skipped
    assert set(SEARCH_DATA[generator]) <= found


def test_a_users_index_json_beside_a_site_is_read(tmp_path: Path) -> None:
    # (control) in a Hugo site, a data folder's index.json (no index.html beside it) and a
    # JSON file of another name are the user's
    root = _site(tmp_path / "public", "hugo")
    (root / "data").mkdir()
    (root / "data" / "index.json").write_text(json.dumps(DATA))
    (root / "deploy" / "services.json").write_text(json.dumps(DATA))
    found, skipped = _walk(root)
    assert "data/index.json" in found and "deploy/services.json" in found
    assert "index.json" in skipped


def test_an_empty_skip_list_reads_them(tmp_path: Path) -> None:
    # (control) skip_suffixes=() reads every file, as for Sphinx's and MkDocs' generated files
    _, skipped = _walk(_site(tmp_path / "public", "docusaurus"), skip_suffixes=())
    assert not skipped


_FOLDERS = st.sampled_from(["", "a", "a/b", "assets", "assets/js", "js", "a/assets/js"])
_NAMES = st.sampled_from(["index.html", "index.json", "search.json", "notes.json", "page.html"])


@settings(max_examples=200, deadline=None)
@given(
    files=st.lists(st.tuples(_FOLDERS, _NAMES), min_size=1, max_size=12, unique=True),
    marked=st.sets(st.sampled_from(["", "a", "a/b", "js"])),
)
def test_search_data_is_dropped_exactly_in_a_marked_sites_top(
    tmp_path_factory: pytest.TempPathFactory, files: list[tuple[str, str]], marked: set[str]
) -> None:
    root = tmp_path_factory.mktemp("site")
    rels = [f"{d}/{n}" if d else n for d, n in files]
    for (folder, name), rel in zip(files, rels, strict=True):
        (root / folder).mkdir(parents=True, exist_ok=True)
        meta = GENERATORS["hugo"] if name == "index.html" and folder in marked else ""
        (root / rel).write_text(PAGE.format(meta=meta, t="T", b="b"))
    keep = drop_skipped_suffixes(rels, frozenset({".css"}), LoadReport(), str(root))
    kept = rels if keep is None else [r for r, k in zip(rels, keep.tolist(), strict=True) if k]
    sites = {d for d, n in files if n == "index.html" and d in marked}

    def site_top(folder: str) -> bool:
        # the search data's folder is a marked site's top, or its assets/, js/, assets/js/
        parts = folder.split("/") if folder else []
        for n in (0, 1, 2):
            if n and "/".join(parts[len(parts) - n :]) not in {"assets", "js", "assets/js"}:
                continue
            if n <= len(parts) and "/".join(parts[: len(parts) - n]) in sites:
                return True
        return False

    for (folder, name), rel in zip(files, rels, strict=True):
        dropped = name in {"index.json", "search.json"} and site_top(folder)
        assert (rel in kept) == (not dropped), (rel, rels, marked)
