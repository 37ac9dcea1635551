"""``treehop mcp`` as an agent meets it (helper cli62): the real server over stdio, driven by the
official SDK's ``ClientSession`` + ``stdio_client`` (what Claude Desktop and agent frameworks
run). A refused argument says which one and how to fix it, integer bounds are published in the
input schemas and checked, and ``python -m treehop`` runs the command line.

The MCP tests and ``python -m treehop ... ls`` start real processes (the entry points, end to
end); the other command lines run ``python -m treehop``'s ``__main__`` in this process
(``_cli_here``), without an interpreter and ``import treehop`` each (~1-2 s of CPU per
command: helper ci77)."""

from __future__ import annotations

import json
import os
import runpy
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

import treehop
from treehop import Treehop
from treehop.embedders.base import BaseEmbedder

from treehop_test_doubles import SAMPLE_TREE

REPO = Path(__file__).resolve().parents[1]
ENV = {
    "PYTHONPATH": os.pathsep.join(
        p for p in (str(REPO / "retrieval"), os.environ.get("PYTHONPATH", "")) if p
    ),
    "OPENBLAS_NUM_THREADS": "1",
}


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory, minilm: BaseEmbedder) -> Path:
    path = tmp_path_factory.mktemp("mcp62") / "idx"
    with Treehop(path, embedder=minilm) as c:
        c.add_resource(SAMPLE_TREE / "resources" / "devops", target_uri="viking://resources/devops")
    return path


def _server(index: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "treehop", "--index", str(index), "mcp"], env=ENV
    )


@asynccontextmanager
async def _session(index: Path) -> AsyncIterator[ClientSession]:
    """An initialised client session with a fresh ``python -m treehop mcp`` over stdio."""
    async with stdio_client(_server(index)) as (read, write), ClientSession(read, write) as s:
        await s.initialize()
        yield s


async def _error(session: ClientSession, tool: str, args: dict[str, Any]) -> str:
    res = await session.call_tool(tool, args)
    assert res.is_error, (tool, args, res.structured_content)
    text = res.content[0].text  # type: ignore[union-attr]
    assert isinstance(text, str)
    # pydantic's dump (the internal model's name, error types, a URL per error) is not shown.
    assert "StrictArguments" not in text and "pydantic.dev" not in text and "[type=" not in text
    return text


async def test_refused_arguments_say_which_and_what_the_tool_takes(index: Path) -> None:
    async with _session(index) as session:
        text = await _error(session, "find", {})
        assert text.startswith("Error executing tool find: missing required argument 'query'")
        assert "find takes query (string, required)" in text
        assert "limit (integer 1..1000, default 10)" in text
        text = await _error(session, "find", {"query": 5})
        assert "argument 'query': input should be a valid string (got 5)" in text
        text = await _error(session, "context", {"query": "x", "exclude_uris": [1]})
        assert "argument 'exclude_uris[0]'" in text
        assert "exclude_uris (array of string, optional)" in text
        text = await _error(session, "find", {"query": "x", "limt": 2})
        assert "unknown argument(s) ['limt']" in text and "limit (integer" in text
        # A refused value is repeated only in part (a hostile one is not echoed whole).
        text = await _error(session, "find", {"query": "x", "limit": "9" * 100_000})
        assert len(text) < 1_000
        keys = {f"k{i}" + "z" * 100_000: 1 for i in range(50)}
        text = await _error(session, "find", {"query": "x", **keys})
        assert len(text) < 2_000 and "and 40 more" in text
        # treehop's own errors keep their type and hint; the server is still up.
        text = await _error(session, "ls", {"uri": "viking://resources/nope"})
        assert text.startswith("Error executing tool ls: NotFoundError: no node at")
        ok = await session.call_tool("find", {"query": "deploy", "limit": 2})
        assert not ok.is_error and len(ok.structured_content["hits"]) <= 2  # type: ignore[index]


async def test_integer_bounds_are_published_and_checked(index: Path) -> None:
    async with _session(index) as session:
        schemas = {t.name: t.input_schema["properties"] for t in (await session.list_tools()).tools}
        for name in ("find", "search", "context"):
            assert schemas[name]["limit"]["minimum"] == 1
            assert schemas[name]["limit"]["maximum"] == 1000
        assert schemas["read"]["max_chars"]["minimum"] == 1
        assert schemas["tree"]["depth"]["minimum"] == 0
        assert schemas["find"]["text_chars"]["minimum"] == 0
        assert schemas["context"]["max_tokens"]["minimum"] == 1

        # Each was run with a made-up value before: one character, depth 0, no text,
        # and JSON true read as limit 1.
        leaf = "viking://resources/devops/README.md"
        assert not (await session.call_tool("read", {"uri": leaf, "max_chars": 1})).is_error
        text = await _error(session, "read", {"uri": leaf, "max_chars": 0})
        assert "argument 'max_chars': input should be greater than or equal to 1" in text
        text = await _error(session, "tree", {"depth": -1})
        assert "argument 'depth'" in text
        text = await _error(session, "find", {"query": "deploy", "text_chars": -1})
        assert "argument 'text_chars'" in text
        text = await _error(session, "find", {"query": "deploy", "limit": True})
        assert "argument 'limit' must be an integer, got true" in text
        text = await _error(session, "search", {"query": "deploy", "text_chars": False})
        assert "argument 'text_chars' must be an integer, got false" in text

        # A deeper tree than the server answers says it was held to its bound.
        deep = await session.call_tool("tree", {"depth": 50})
        assert not deep.is_error and deep.structured_content["depth_capped"] == 10  # type: ignore[index]
        plain = await session.call_tool("tree", {"depth": 10})
        assert "depth_capped" not in plain.structured_content  # type: ignore[operator]

        # An unknown session is not a URI: the hint says what a session id is.
        text = await _error(session, "search", {"query": "deploy", "session_id": "nosuch"})
        assert "no session 'nosuch'" in text and "treehop session new" in text
        assert "ls" not in text.split("no session 'nosuch'")[1]


def test_python_dash_m_treehop_is_the_command_line(
    index: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "treehop", "--index", str(index), "ls", "viking://resources/devops"],
        env={**os.environ, **ENV},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert "viking://resources/devops/" in run.stdout
    # ``python -m treehop --version``: the same ``treehop/__main__.py``, run in this process
    # (the ``ls`` above is the real process)
    version = _cli_here(capsys, "--version", module="treehop")
    assert version.returncode == 0 and version.stdout.strip() == f"treehop {treehop.__version__}"


@pytest.fixture(scope="module")
def memories_only(tmp_path_factory: pytest.TempPathFactory, minilm: BaseEmbedder) -> Path:
    """An index an agent built through add_memory: no resources, no skills."""
    path = tmp_path_factory.mktemp("mcp62m") / "idx"
    with Treehop(path, embedder=minilm) as c:
        c.remember("Ann's dog is called Rui.", name="dog")
    return path


async def test_an_empty_root_lists_as_empty_over_mcp(memories_only: Path) -> None:
    # Before: "NotFoundError: no node at viking://resources. List the parent directory with
    # ls, or browse with tree." -- for the tools' own default URI, with a hint that loops.
    async with _session(memories_only) as session:
        for args in ({}, {"uri": "viking://resources"}, {"uri": "viking://~/skills/"}):
            res = await session.call_tool("ls", args)
            assert not res.is_error, res.content
            assert res.structured_content["entries"] == []  # type: ignore[index]
        res = await session.call_tool("tree", {"uri": "viking://~/skills"})
        assert not res.is_error, res.content
        assert res.structured_content == {  # the shape of an empty directory's tree
            "uri": "viking://~/skills",
            "is_leaf": False,
            "abstract": "",
            "kind": "directory",
            "children": [],
        }
        memories = await session.call_tool("ls", {"uri": "viking://~/memories"})
        assert memories.structured_content["entries"]  # type: ignore[index]
        # Below a root, a missing node is still an error.
        text = await _error(session, "ls", {"uri": "viking://resources/docs"})
        assert "NotFoundError: no node at viking://resources/docs" in text
        text = await _error(session, "tree", {"uri": "viking://~/skills/deploy"})
        assert "NotFoundError" in text


def _cli(index: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "treehop", "--index", str(index), *args],
        env={**os.environ, **ENV},
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _cli_here(
    capsys: pytest.CaptureFixture[str], *argv: str, module: str = "treehop.cli"
) -> subprocess.CompletedProcess[str]:
    """``python -m <module> *argv`` run in this process (``runpy``, as ``-m`` runs it: the
    module's ``__main__`` ends with ``SystemExit(main())``), with what it printed; the
    answer of :func:`_cli` without a second interpreter."""
    capsys.readouterr()
    argv0 = sys.argv
    sys.argv = [module, *argv]
    try:
        with pytest.raises(SystemExit) as ended:
            runpy.run_module(module, run_name="__main__", alter_sys=False)
    finally:
        sys.argv = argv0
    out, err = capsys.readouterr()
    code = ended.value.code
    return subprocess.CompletedProcess(argv, code if isinstance(code, int) else 1, out, err)


def _index_cli(
    capsys: pytest.CaptureFixture[str], index: Path, *args: str
) -> subprocess.CompletedProcess[str]:
    return _cli_here(capsys, "--index", str(index), *args, module="treehop")


def test_an_empty_root_lists_as_empty_on_the_command_line(
    memories_only: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before: exit 3, "no node at viking://resources / see what is there with: treehop tree
    # viking://resources" -- the command that had just failed.
    ls = _index_cli(capsys, memories_only, "ls")
    assert (ls.returncode, ls.stdout.strip(), ls.stderr) == (0, "viking://resources is empty", "")
    ls_json = _index_cli(capsys, memories_only, "ls", "viking://~/skills", "--json")
    assert ls_json.returncode == 0 and ls_json.stdout.strip() == "[]"
    tree = _index_cli(capsys, memories_only, "tree", "--json")
    assert tree.returncode == 0, tree.stderr
    assert json.loads(tree.stdout)["children"] == []
    missing = _index_cli(capsys, memories_only, "ls", "viking://resources/docs")
    assert missing.returncode == 3 and "no node at viking://resources/docs" in missing.stderr


def test_mcp_on_a_new_index_says_so_on_stderr(tmp_path: Path, index: Path) -> None:
    # A typo in a client's configured --index served an empty index in silence.
    new = _cli(tmp_path / "typo", "mcp", stdin="")
    assert new.returncode == 0 and new.stdout == ""
    assert f"no index at {tmp_path / 'typo'} yet: serving an empty one" in new.stderr
    existing = _cli(index, "mcp", stdin="")
    assert existing.returncode == 0 and "no index" not in existing.stderr


def test_hints_fit_the_error(index: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Before: both got "URIs look like viking://resources/<path>, ..." -- for a well-formed URI
    # and for a user name.
    leaf = _index_cli(capsys, index, "ls", "viking://resources/devops/README.md")
    assert leaf.returncode == 2
    assert leaf.stderr.splitlines() == [
        "treehop: error: viking://resources/devops/README.md is a leaf, not a directory",
        "  print it with: treehop read viking://resources/devops/README.md",
    ]
    user = _index_cli(capsys, index, "--user", "../x", "ls")
    assert user.returncode == 2 and "URIs look like" not in user.stderr
    assert "--user (or $TREEHOP_USER) names whose" in user.stderr
    bad = _index_cli(capsys, index, "ls", "bogus")
    assert bad.returncode == 2 and "URIs look like viking://resources/<path>" in bad.stderr
