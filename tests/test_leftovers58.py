"""Leftovers, stop 58 (bench/README.md, "(helper leftovers58)"): each test fails on 80e60c2
and names the row it covers. (The VikingDB ping rows are in test_faults_remote.py.)"""

from __future__ import annotations

import asyncio
from pathlib import Path

from treehop import AsyncTreehop, Treehop

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
