"""Leftovers, stop 58 (bench/README.md, "(helper leftovers58)"): each test fails on 80e60c2
and names the row it covers. (The VikingDB ping rows are in test_faults_remote.py.)"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference_80e60c2 import count_calls, old_addressable, short_texts
from treehop import AsyncTreehop, Treehop
from treehop.ingest import loaders

LONG = "\n\n".join(f"Paragraph {i} about the user's garden and its tomatoes." for i in range(40))


def test_add_memory_says_when_a_name_replaced_a_memory(tmp_path: Path) -> None:
    # 80e60c2: AddResult had no flag; remember() and the MCP tool said replaced, add_memory not
    with Treehop(tmp_path / "idx", reader_processes=0, chunk_chars=200) as c:
        first = c.add_memory("I live in Porto", name="home")
        again = c.add_memory("I live in Lisbon", name="home")
        other = c.add_memory("I like tea", name="drink")
        unnamed = c.add_memory("I read at night")
        assert (first.replaced, again.replaced, other.replaced, unnamed.replaced) == (
            False,
            True,
            False,
            False,
        )
        assert again.root_uri == first.root_uri
        assert c.read(again.root_uri).strip() == "I live in Lisbon"
        # a chunked memory (a node with its chunks) is one memory, replaced by its name
        long = c.add_memory(LONG, name="garden")
        assert long.chunks > 1 and not long.replaced
        assert c.add_memory("A small garden.", name="garden").replaced
        assert c.add_memory(LONG, name="garden").replaced
        # other writers never set it
        assert not c.add_resource("Some notes.", name="notes").replaced


def test_async_add_memory_says_replaced(tmp_path: Path) -> None:
    async def run() -> tuple[bool, bool]:
        async with AsyncTreehop(tmp_path / "idx", reader_processes=0) as c:
            first = await c.add_memory("I live in Porto", name="home")
            again = await c.add_memory("I live in Lisbon", name="home")
            return first.replaced, again.replaced

    assert asyncio.run(run()) == (False, True)


def test_cli_tree_counts_a_chunked_file_as_one_leaf(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 80e60c2: "2 directories, 42 leaves (depth 2)": the chunked file a directory, its chunks
    # leaves; at depth 1 "2 directories, 1 leaf"; tree of the file "0 directories, 40 leaves"
    from test_cli import run

    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    sections = (f"## Part {i}\n\n{'Roll out the pods one zone at a time. ' * 8}" for i in range(40))
    (docs / "big.md").write_text("# Big\n\n" + "\n\n".join(sections))
    (docs / "small.md").write_text("# Small\n\nBlue green deploys.\n")
    (docs / "sub" / "b.md").write_text("# B\n\nCanary.\n")
    idx = ("--index", str(tmp_path / "idx"))
    assert run(capsys, *idx, "index", str(docs))[0] == 0
    root = "viking://resources/docs"
    _, out, _ = run(capsys, *idx, "tree", root, "--depth", "1", "--no-abstract")
    lines = out.splitlines()
    chunks = int(lines[1].split("(")[1].split()[0])
    assert lines[1] == f"├── big.md ({chunks} chunks)" and chunks > 1
    assert lines[-1] == "1 directory, 2 leaves (depth 1)"
    _, out, _ = run(capsys, *idx, "tree", root, "--depth", "2", "--no-abstract")
    assert out.count("#chunk-") == chunks
    assert out.splitlines()[-1] == "1 directory, 3 leaves (depth 2)"
    # the file itself: its chunks, then the hint a leaf gets, not a count of its chunks
    code, out, err = run(capsys, *idx, "tree", f"{root}/big.md", "--no-abstract")
    assert (code, err) == (0, "")
    assert out.count("#chunk-") == chunks
    assert out.splitlines()[-1] == (
        f"a file of {chunks} chunks: print it with: treehop read {root}/big.md"
    )


# -- loaders._addressable: one pass, the same answers ------------------------------------------

_TRICKY = st.sampled_from(
    "\u200c\u200d\u200b\u2060\ufeff\xad\u200e\u202e\u2066\u2028\u2029\x9b\x85\x00\x1f\x7f"
    "\xa0\u3000\ud800\udfff\ue000\U000e0041\u0600\u061c\U0001f469\u0628\u0915a \u4e2d"
)


def test_addressable_answers_as_before_for_every_short_name() -> None:
    """Every name of up to four characters of each kind, and every format character and
    Unicode class between each pair (``short_texts``: 200,679 names, ~0.7 s), which 3,000
    random names of up to 40 characters (stop 76: 3.3 s of CPU) sampled. Longer names: the
    property test below (helper ci77)."""
    for name in short_texts():
        assert loaders._addressable(name) is old_addressable(name), repr(name)


@settings(max_examples=300, deadline=None)
@given(
    st.text(
        st.one_of(st.characters(codec=None, exclude_categories=()), _TRICKY),
        min_size=5,
        max_size=40,
    )
)
def test_addressable_answers_as_before(name: str) -> None:
    assert loaders._addressable(name) is old_addressable(name)


@pytest.mark.parametrize(
    "unit", ["设计文档", "résumé", "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"]
)
def test_addressable_is_one_pass(unit: str) -> None:
    # 80e60c2: a non-ASCII name was encoded, searched twice for the same characters and
    # walked character by character in Python (calls grew with its length)
    short, long = unit, unit * 60
    assert loaders._addressable(short) and loaders._addressable(long)
    grows = count_calls(lambda: loaders._addressable(long)) - count_calls(
        lambda: loaders._addressable(short)
    )
    if unit.isprintable():
        assert grows == 0  # one str.isprintable, in C, whatever the length
    else:  # (a joiner: the one walk, a few calls per character, none more per repeat)
        assert grows <= 4 * (len(long) - len(short))
