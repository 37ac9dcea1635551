"""A reST page's docinfo and its ``meta`` / ``contents`` / ``sectnum`` directives are not text.

ingest75 (usage85's and the stop-74 lead's "left alone"): lighttpd's module pages (Debian
``lighttpd-doc``) and docutils' own documents (``docutils-doc``) open with a title, a
docinfo field list (``:Author:`` / ``:Date: $Date: ...$`` / ``:Revision:``), an
``:abstract:`` field and ``.. meta::`` / ``.. contents::`` directives. Every such line was
text: in the first passage (embedded, BM25-indexed, ``slot_text``, the context block), in a
page short enough to be one node, and in the file's abstract (``Access: :Author: Allan Wind
:Date: $Date: 2005/01/30 11:34:32 $ ...``, embedded and shown by ``treehop ls``). Docutils
shows none of them as text, bar the abstract's own words (a topic under the title).
"""

from __future__ import annotations

import time
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from treehop.ingest import markup
from treehop.ingest.chunking import split_text
from treehop.ingest.markup import parse
from treehop.ingest.summaries import ExtractiveSummarizer
from treehop.ingest.tree_builder import TreeBuilder
from treehop.models import ContextType

HEAD = (
    "======\nAccess\n======\n\n------------------\nModule: mod_access\n------------------\n\n"
    ":Author: Allan Wind\n:Date: $Date: 2005/01/30 11:34:32 $\n:Revision: $Revision: 1.1 $\n\n"
    ":abstract:\n  The access module is used to deny access to files.\n\n"
    ".. meta::\n  :keywords: lighttpd, trailing path access control\n\n"
    ".. contents:: Table of Contents\n\n"
)
BODY = (
    "Description\n===========\n\nThe access module denies access to files by their "
    "trailing path names.\n\nOptions\n=======\n\n"
)
OPTIONS = "".join(
    f"url.access-deny-{i}\n  Denies access to all files with any of given trailing path "
    f"names.\n\n  Default: empty\n\n"
    for i in range(40)
)
UNSHOWN = (":Author:", "$Date", "$Revision", ".. meta::", ":keywords:", ".. contents::")


def _build(tmp_path: Path, files: dict[str, str]) -> dict[str, object]:
    root = tmp_path / "doc"
    root.mkdir()
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    built = TreeBuilder().build_directory(root, "viking://resources/doc", ContextType.RESOURCE)
    return {n.uri.rsplit("/", 1)[-1]: n for n in built.nodes}


def test_a_chunked_lighttpd_page_reads_without_its_docinfo_and_directives(tmp_path: Path) -> None:
    nodes = _build(tmp_path, {"access.txt": HEAD + BODY + OPTIONS})
    page = nodes["access.txt"]
    assert page.metadata["kind"] == "rst" and page.metadata["chunks"] > 1  # type: ignore[attr-defined]
    chunks = [n for k, n in nodes.items() if k.startswith("access.txt#")]
    for c in chunks:
        assert not any(u in c.content for u in UNSHOWN), c.content  # type: ignore[attr-defined]
    first = nodes["access.txt#chunk-0"]
    # the abstract is shown (a topic under the title): kept as written
    assert first.content.startswith(  # type: ignore[attr-defined]
        "Access › Module: mod_access\n\n:abstract:\n  The access module is used to deny"
    )
    assert first.abstract == (  # type: ignore[attr-defined]
        "Access › Module: mod_access: The access module is used to deny access to files."
    )
    assert "Description" in first.content  # type: ignore[attr-defined]
    # the file's abstract (embedded, `treehop ls`): the abstract field, not the docinfo
    assert page.abstract == "Access: The access module is used to deny access to files."  # type: ignore[attr-defined]


def test_a_page_short_enough_to_be_one_node_reads_so_too(tmp_path: Path) -> None:
    nodes = _build(tmp_path, {"short.txt": HEAD + BODY})
    leaf = nodes["short.txt"]
    assert leaf.is_leaf and leaf.metadata["kind"] == "rst"  # type: ignore[attr-defined]
    assert not any(u in leaf.content for u in UNSHOWN), leaf.content  # type: ignore[attr-defined]
    assert "The access module is used to deny access to files." in leaf.content  # type: ignore[attr-defined]
    assert "trailing path names." in leaf.content  # type: ignore[attr-defined]


def test_docutils_faq_shape_comments_before_an_overlined_title() -> None:
    text = (
        ".. -*- coding: utf-8 -*-\n\n\n.. NOTE TO MAINTAINERS: Please add new questions\n"
        "   to the end of their sections.\n\n\n"
        "=====================\n Docutils FAQ (Notes)\n=====================\n\n"
        ":Date: $Date: 2022-06-17 $\n:Revision: $Revision: 9077 $\n"
        ":Web site: https://docutils.sourceforge.io/\n"
        ":Copyright: This document has been placed in the public domain.\n\n"
        ".. contents::\n   :local:\n.. sectnum::\n\n\nThis is a work in progress.\n"
    )
    out = "\n".join(markup.rst_unshown_out(text.split("\n")))
    assert "$Revision" not in out and ":Web site:" not in out and ".. contents::" not in out
    assert ":local:" not in out and ".. sectnum::" not in out
    assert "This is a work in progress." in out
    # the comments are no text either since helper ingest76 (docutils never shows them)
    assert "NOTE TO MAINTAINERS" not in out and "coding: utf-8" not in out
    summary = ExtractiveSummarizer().summarize_file("FAQ.txt", text, "rst")[0]
    assert summary == "Docutils FAQ (Notes): This is a work in progress."


def test_a_field_list_after_body_text_and_other_directives_are_kept() -> None:
    """Controls: a field list in the body (options, parameters) is shown by docutils; a
    role opens prose; ``.. note::`` / ``.. code-block::`` and their bodies are text."""
    text = (
        "Title\n=====\n\nSome prose first.\n\n:param x: the value\n:returns: nothing\n\n"
        ":ref:`install` explains it.\n\n.. note::\n   Mind the gap.\n\n"
        ".. code-block:: sh\n\n   make install\n"
    )
    (section,) = parse(text, "rst").sections
    assert section.body == text.split("=====\n\n", 1)[1].strip("\n")
    assert ":param x: the value" in section.body and "Mind the gap." in section.body


def test_other_kinds_and_the_switch_off_are_unchanged(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    md = ":Author: Jan\n\n.. contents::\n\nBody text.\n"
    assert ":Author: Jan" in split_text(md, "markdown")[0].text
    assert ":Author: Jan" in split_text(md, "text")[0].text
    monkeypatch.setattr(markup, "RST_UNSHOWN_DROPPED", False, raising=False)
    text = HEAD + BODY + OPTIONS
    assert split_text(text, "rst")[0].text.startswith(":Author: Allan Wind")
    assert (
        ExtractiveSummarizer()
        .summarize_file("a.txt", text, "rst")[0]
        .startswith("Access: :Author: Allan Wind")
    )


_WORD = st.from_regex(r"[A-Za-z][a-z]{0,8}", fullmatch=True)
_PROSE = st.lists(_WORD, min_size=1, max_size=8).map(" ".join)
_FIELD = st.tuples(
    st.from_regex(r"[A-Za-z][A-Za-z0-9 _-]{0,10}[A-Za-z0-9]", fullmatch=True).filter(
        lambda n: n.strip().lower() not in {"abstract", "dedication"}
    ),
    st.from_regex(r"[A-Za-z0-9$/.,:<>= -]{0,30}", fullmatch=True),
    st.lists(_PROSE, max_size=2),
).map(lambda f: f":{f[0]}: {f[1]}".rstrip() + "".join(f"\n   {x}" for x in f[2]))
_DIRECTIVE = st.tuples(
    st.sampled_from(["meta", "contents", "sectnum", "CONTENTS"]),
    st.sampled_from(["", " Table of Contents", " Topics"]),
    st.lists(st.sampled_from([":local:", ":depth: 2", ":keywords: a, b", ":backlinks: none"])),
).map(lambda d: f".. {d[0]}::{d[1]}" + "".join(f"\n   {o}" for o in d[2]))


@settings(max_examples=100, deadline=None)
@given(
    st.lists(_FIELD, max_size=5),
    st.lists(_DIRECTIVE, max_size=3),
    st.lists(st.lists(_PROSE, min_size=1, max_size=3).map("\n".join), min_size=1, max_size=5),
    st.lists(_DIRECTIVE, max_size=2),
)
def test_unshown_lines_never_change_what_the_page_reads_as(fields, heads, paragraphs, later):
    """Property: a titled page with any docinfo fields and ``meta`` / ``contents`` /
    ``sectnum`` directives before its text, and such directives between its paragraphs,
    reads (sections, chunk texts) exactly as the page without them; every prose line is
    kept."""
    title = "Some Title\n==========\n\n"
    plain = title + "\n\n".join(paragraphs) + "\n"
    blocks = [*fields, *heads]
    mixed = title + "".join(b + "\n\n" for b in blocks) + paragraphs[0] + "\n\n"
    for d, p in zip(later + [""] * len(paragraphs), paragraphs[1:], strict=False):
        mixed += (d + "\n\n" if d else "") + p + "\n\n"
    assert [(c.title, c.text) for c in split_text(mixed, "rst")] == [
        (c.title, c.text) for c in split_text(plain, "rst")
    ]
    kept = "\n".join(markup.rst_unshown_out(mixed.split("\n")))
    for p in paragraphs:
        assert p in kept


def test_rst_unshown_out_is_linear() -> None:
    """Long runs of fields, of indented field bodies and of directives are each read once."""

    def cost(n: int, unit: str) -> float:
        lines = (unit * n).split("\n")
        best = float("inf")
        for _ in range(3):
            t = time.process_time()
            markup.rst_unshown_out(lines)
            best = min(best, time.process_time() - t)
        return best

    for unit in (":a: b\n", ":a:\n   x\n\n", ".. contents::\n   :local:\n\n", ":a\n", "\n   \n"):
        small, big = cost(10_000, unit), cost(40_000, unit)
        assert big < 12 * small + 0.5, (unit, small, big)
