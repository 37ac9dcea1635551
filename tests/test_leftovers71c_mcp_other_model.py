"""helper leftovers71c: ``treehop mcp`` serves an index built with another model read-only.

usage82 let ``treehop ls`` / ``tree`` / ``read`` open an index built from Python with
another embedding (the README's ``from_documents(chunks, OpenAIEmbeddings(), path=...)``)
under the model it names (``_BuiltWith``); ``treehop mcp`` on such an index was still
refused at start, so an agent configured with it had no tool at all. Now the server starts
read-only: ``ls`` / ``tree`` / ``read`` answer, ``find`` / ``search`` / ``context`` answer an
``EmbeddingError`` naming the model and what works, ``add_memory`` is not offered, and the
index's files are untouched. The real server over stdio, driven by the SDK's client.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from treehop import Treehop

from treehop_test_doubles import BagOfWordsEmbedder

REPO = Path(__file__).resolve().parents[1]
ENV = {
    "PYTHONPATH": os.pathsep.join(
        p for p in (str(REPO / "retrieval"), os.environ.get("PYTHONPATH", "")) if p
    ),
    "OPENBLAS_NUM_THREADS": "1",
}
DEPLOY = "viking://resources/docs/ops/deploy.md"


DOCS = {
    "ops/deploy.md": "# Deployments\n\nRoll back with `kubectl rollout undo deployment/web`.\n",
    "README.md": "# Handbook\n\nOperations guides.\n",
}


@pytest.fixture(scope="module")
def other_model_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An index built from Python with another model (the test bag of words)."""
    root = tmp_path_factory.mktemp("l71c_mcp")
    tree = _write_tree(DOCS, root / "docs")
    with Treehop(root / "idx", embedder=BagOfWordsEmbedder()) as th:
        th.add_resource(tree, target_uri="viking://resources/docs")
    return root / "idx"


def _write_tree(files: dict[str, str], root: Path) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def _files(path: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(path)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(path.rglob("*"))
        if p.is_file()
    }


async def test_mcp_serves_browse_tools_and_refuses_search_by_name(
    other_model_index: Path,
) -> None:
    before = _files(other_model_index)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "treehop", "--index", str(other_model_index), "mcp"],
        env=ENV,
    )
    with tempfile.TemporaryFile("w+", encoding="utf-8") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as s,
        ):
            await s.initialize()
            names = {t.name for t in (await s.list_tools()).tools}
            assert {"ls", "tree", "read", "find", "search", "context"} <= names
            assert "add_memory" not in names  # (read-only: nothing may be written)

            ls = await s.call_tool("ls", {"uri": "viking://resources/docs"})
            assert not ls.is_error, ls.content
            assert "viking://resources/docs/ops" in str(ls.structured_content)
            tree = await s.call_tool("tree", {"depth": 4})
            assert not tree.is_error and DEPLOY in str(tree.structured_content)
            got = await s.call_tool("read", {"uri": DEPLOY})
            assert not got.is_error and "kubectl rollout undo" in str(got.structured_content)

            for tool in ("find", "search", "context"):
                res = await s.call_tool(tool, {"query": "roll back"})
                assert res.is_error, (tool, res.structured_content)
                text = res.content[0].text  # type: ignore[union-attr]
                assert "EmbeddingError" in text, text
                assert repr(BagOfWordsEmbedder.name) in text, text
                assert "ls, tree and read work" in text, text
            # (the server is still up after the refusals)
            assert not (await s.call_tool("ls", {"uri": "viking://resources"})).is_error
        errlog.seek(0)
        err = errlog.read()
    assert "would mix vector spaces" in err and "serving it read-only" in err
    assert _files(other_model_index) == before


async def test_control_an_index_built_with_the_default_model_is_served_as_before(
    tmp_path: Path,
) -> None:
    # (control: an index built with treehop's own model is served as before, add_memory
    # and a working find included)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "deploy.md").write_text("# Deploy\n\nRoll back a deployment.\n", encoding="utf-8")
    path = tmp_path / "idx"
    with Treehop(path) as th:
        th.add_resource(docs, target_uri="viking://resources/docs")
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "treehop", "--index", str(path), "mcp"], env=ENV
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
        await s.initialize()
        assert "add_memory" in {t.name for t in (await s.list_tools()).tools}
        res = await s.call_tool("find", {"query": "roll back", "limit": 1})
        assert not res.is_error, res.content
        assert res.structured_content["hits"]
