"""MCP ``find``'s file-target hint is told the call's ``context_type`` (helper leftovers71b).

The hint (for an agent that reads no log: a file's URI searches that file alone) was
computed with ``context_type=None`` whatever the call gave. It now names the type as the
scope searched, and the core's own hint (``find_many`` with several targets, where a type
keeps only its targets) names only the targets searched. Real server through the MCP SDK's
in-memory client; real clients; offline bag-of-words embeddings.
"""

from __future__ import annotations

from typing import Any

from treehop import AsyncTreehop

from treehop_test_doubles import BagOfWordsEmbedder

KEYS = "viking://resources/notes/keys.md"
MEMORY = "viking://~/memories/keys-habit"


async def _hint(args: dict[str, Any]) -> Any:
    from mcp import Client

    from treehop.mcp_server import build_server

    a = AsyncTreehop(None, embedder=BagOfWordsEmbedder(), tagger=None)
    try:
        await a.add_resource("Rotate the signing keys every ninety days.", target_uri=KEYS)
        await a.add_memory("The user rotates the signing keys on Mondays.", name="keys-habit")
        async with Client(build_server(a)) as client:
            res = await client.call_tool("find", {"query": "signing keys", **args})
            return (res.structured_content or {}).get("hint"), res.structured_content
    finally:
        await a.close()


NOTHING = {"op": "must", "field": "name", "conds": ["nothing-has-this"]}


async def test_the_mcp_hint_names_the_context_type_searched() -> None:
    args = {"target_uri": KEYS, "context_type": "resource", "filter": NOTHING}
    hint, out = await _hint(args)
    assert out["total"] == 0  # (the premise: the target matched nothing)
    assert hint is not None
    assert hint.startswith(
        f"find: target_uri {KEYS} (context_type='resource') matched nothing under the filter"
    )
    assert "target_uri='viking://resources/notes'" in hint


async def test_control_without_a_context_type_none_is_named() -> None:
    hint, _ = await _hint({"target_uri": KEYS, "filter": NOTHING})
    assert hint is not None and "context_type" not in hint
    assert hint.startswith(f"find: target_uri {KEYS} matched nothing under the filter")


async def test_control_a_target_that_answers_gets_no_hint() -> None:
    hint, out = await _hint({"target_uri": KEYS, "context_type": "resource"})
    assert out["total"] >= 1 and hint is None


async def test_the_core_hint_names_only_the_targets_its_type_kept(caplog: Any) -> None:
    """The core's hint (find, _target_hint): a memory and a resource file as targets;
    ``context_type`` keeps the resource, so the hint names that one and the type, not the
    memory that was never searched."""
    a = AsyncTreehop(None, embedder=BagOfWordsEmbedder(), tagger=None)
    try:
        await a.add_resource("Rotate the signing keys every ninety days.", target_uri=KEYS)
        await a.add_memory("The user rotates the signing keys on Mondays.", name="keys-habit")
        res = await a.find(
            "signing keys", target_uri=[MEMORY, KEYS], context_type="resource", filter=NOTHING
        )
        hint = await a._target_hint(
            res, "resource", {"target_uri": [MEMORY, KEYS], "filter": NOTHING}
        )
    finally:
        await a.close()
    assert hint is not None
    assert hint.startswith(f"find: target_uri {KEYS} (context_type='resource') matched nothing")
    assert MEMORY not in hint
