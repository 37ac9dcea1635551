"""bench/bench_one_file.py: pages joined into one text keep one findable top heading each,
and a delivered chunk maps back to its page through that heading."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import bench_one_file as bof
import datasets as ds
from treehop import Treehop
from treehop.ingest.records import add_records

from treehop_test_doubles import BagOfWordsEmbedder


def _page(relpath: str, title: str, text: str) -> ds.DocPage:
    return ds.DocPage(relpath=relpath, title=title, text=text, headings=[])


def test_pages_become_sections_with_unique_titles() -> None:
    pages = [
        _page("a.md", "Fixtures", "# Fixtures\n\nfixture scope text\n\n## Scope\n\nmore"),
        _page("b.md", "Fixtures", "# Fixtures\n\nanother page"),
        _page("c.md", "", "no heading at all"),
    ]
    text, page_of = bof.one_file(pages)
    assert page_of == {"Fixtures": "a.md", "Fixtures (2)": "b.md", "c.md": "c.md"}
    tops = [line for line in text.splitlines() if line.startswith("# ")]
    assert tops == ["# Fixtures", "# Fixtures (2)", "# c.md"]  # (each page's own # replaced)
    assert "## Scope" in text and "another page" in text


def test_a_found_chunk_maps_to_its_page() -> None:
    pages = [
        _page("x/alpha.md", "Alpha", "# Alpha\n\n" + "glacier moraine ice. " * 40),
        _page("x/beta.md", "Beta", "# Beta\n\n" + "volcano lava basalt. " * 40),
    ]
    text, page_of = bof.one_file(pages)
    with Treehop(embedder=BagOfWordsEmbedder(), tagger=None, chunk_chars=300) as th:
        add_records(th, [(text, {"source": "book.md"})], base_uri=bof.BASE)
        res = th.find("volcano lava basalt", target_uri=bof.BASE, limit=3).resources
        assert res and bof._page(res[0].metadata, page_of) == "x/beta.md"
        assert bof._page({}, page_of) == "?"
