"""The MCP ``search`` tool says its scores are fused ranks (helper leftovers71d).

Its hits' ``score`` falls 1.0, 0.98, ... down the list whatever the similarities (a
reciprocal-rank fusion of the planned queries), while ``find``'s are similarities; the CLI's
``search --json`` names the kind since leftovers71c, the MCP tool named nothing. The tool's
declared output schema is an open object, so the field is a compatible addition. Real
server through the MCP SDK's in-memory client; offline bag-of-words embeddings.
"""

from __future__ import annotations

from typing import Any

from treehop import AsyncTreehop
from treehop.cli._render import SCORE_KIND_FUSED  # (the CLI's name, on the base too)

from treehop_test_doubles import BagOfWordsEmbedder


async def _call(tool: str, query: str) -> tuple[dict[str, Any], dict[str, Any] | None]:
    from mcp import Client

    from treehop.mcp_server import build_server

    a = AsyncTreehop(None, embedder=BagOfWordsEmbedder(), tagger=None)
    try:
        await a.add_resource(
            "Rotate the signing keys every ninety days.", target_uri="viking://resources/keys.md"
        )
        await a.add_resource(
            "The vault host keeps the keys.", target_uri="viking://resources/vault.md"
        )
        async with Client(build_server(a)) as client:
            listed = {t.name: t for t in (await client.list_tools()).tools}
            res = await client.call_tool(tool, {"query": query})
            assert not res.is_error, res
            return dict(res.structured_content or {}), listed[tool].output_schema
    finally:
        await a.close()


async def test_mcp_search_names_its_scores_fused_ranks() -> None:
    out, schema = await _call("search", "how do I rotate the signing keys on the vault?")
    assert out["score_kind"] == SCORE_KIND_FUSED == "fused_rank"
    assert out["hits"] and out["hits"][0]["score"] == 1.0  # (a fused rank's ceiling)
    # the schema the server declares admits the field (an open object)
    assert schema is not None and schema.get("type") == "object"
    assert schema.get("additionalProperties") is True
    assert "score_kind" not in schema.get("required", [])


async def test_control_mcp_find_names_no_score_kind() -> None:
    out, _ = await _call("find", "rotate the signing keys")
    assert out["hits"] and "score_kind" not in out
