"""The replay's per-query loss analysis (``bench/replay_tree_methods.py``): the heading-path
rule screened for documents whose chunks all share the page title, and the paired
demoted / promoted / oracle table that says how much any per-query rule could still gain."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import replay_tree_methods as rp
from treehop.tree_scoring import section_overlap

paths = st.lists(st.sampled_from(["T", "A", "B", "x"]), min_size=0, max_size=4).map(tuple)


def test_family_prefixes_are_the_heading_prefix_every_chunk_shares() -> None:
    parent = [0, 0, 0, 1, 1, 2, 3]
    secs: list[tuple[str, ...] | None] = [
        ("Page", "A"),
        ("Page", "A", "x"),
        ("Page", "B"),
        ("Other", "A"),
        None,  # a leaf without a heading path does not narrow its family's prefix
        ("Solo", "Only", "Deep"),
        None,
    ]
    got = rp.family_prefixes(parent, secs)
    assert got == {0: ("Page",), 1: ("Other", "A"), 2: ("Solo", "Only", "Deep")}
    assert 3 not in got  # no chunk with a heading path: no prefix


def test_doc_section_overlap_ignores_the_shared_title() -> None:
    title = ("Gunicorn",)
    a = ("Gunicorn", "Binding Externally")
    b = ("Gunicorn", "Async with gevent or eventlet")
    # the default rule: two sections of one page share half their path
    assert section_overlap(a, b) == 0.5
    # below the page title they share nothing
    assert rp.doc_section_overlap(a, b, title) == 0.0
    # a subsection and its section still share half
    assert rp.doc_section_overlap(a, (*a, "Sub"), title) == 0.5
    # the same section, or a leaf without a heading path, counts in full
    assert rp.doc_section_overlap(a, a, title) == 1.0
    assert rp.doc_section_overlap(None, b, title) == 1.0
    # the page's intro (the title alone) against a section: nothing shared below the title
    assert rp.doc_section_overlap(title, a, title) == 0.0


@given(paths, paths, st.integers(min_value=0, max_value=3))
def test_doc_section_overlap_never_exceeds_the_default_rule(
    a: tuple[str, ...], b: tuple[str, ...], k: int
) -> None:
    """Below a prefix both paths share, the overlap is that of the shortened paths, in [0, 1]
    and never above the default rule's (dropping shared headings only lowers the share)."""
    prefix = tuple(x for x, y in zip(a, b, strict=False))[:k]
    prefix = prefix if a[: len(prefix)] == b[: len(prefix)] == prefix else ()
    got = rp.doc_section_overlap(a, b, prefix)
    assert 0.0 <= got <= 1.0
    assert got <= section_overlap(a, b) + 1e-12
    assert (got == 1.0) == (a == b or a[len(prefix) :] == b[len(prefix) :])


def _q(half: str, flat: float, ctx: float, rf: int, rc: int, **other: float) -> dict[str, Any]:
    base = {"ctx-neighbours": ctx, "ctx-parent": ctx, "ctx-sibling": ctx, "ctx-doc-sections": ctx}
    base.update(other)
    return {
        "half": half,
        "qid": f"q{rf}{rc}{flat}",
        "kind": "heading",
        "text": "query text",
        "rank_flat": rf,
        "rank_ctx": rc,
        "flat": flat,
        "ctx": ctx,
        **base,
    }


def test_losses_table_counts_demotions_and_the_oracles(capsys: pytest.CaptureFixture[str]) -> None:
    g2 = 1 / 1.584962500721156  # nDCG@10 of one relevant unit at rank 2
    data = [
        {
            "set": "docs",
            "queries": [
                # the context pushed the answer from 1 to 2; removing neighbours restores it
                _q("test", 1.0, g2, 1, 2, **{"ctx-neighbours": 1.0}),
                # the context lifted the answer from 2 to 1
                _q("test", g2, 1.0, 2, 1),
                # both miss the top
                _q("test", 0.5, 0.5, 3, 3, **{"ctx-parent": 1.0}),
                # a dev query is reported in its own row
                _q("dev", 1.0, 1.0, 1, 1),
            ],
        }
    ]
    rp.losses(data, {"docs"})
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("| docs | test |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2:9] == [
        "3",
        f"{(1 + g2 + 0.5) / 3:.4f}",
        f"{(g2 + 1 + 0.5) / 3:.4f}",
        "2",
        "1",
        "1",
        "1",
    ]
    assert cells[9] == "1 / 0 / 0"  # the demotion is undone by the neighbour term alone
    # oracle ctx-or-flat: 1, 1, 0.5; oracle over every method: 1, 1, 1 (the parent row)
    assert cells[10].startswith(f"{2.5 / 3:.4f}")
    assert cells[11].startswith(f"{1.0:.4f}")
    # the listing names the queries below the ideal with their ranks
    listed = [line for line in out.splitlines() if line.startswith("  test")]
    assert len(listed) == 2
    assert "rank  1 ->  2" in listed[0] and "-neighbour 1.000" in listed[0]
