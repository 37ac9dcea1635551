"""Adversarial pass attacks53: hostile input through the CLI, remote answers and tools.

Each test was written failing first (bench/README.md, "Adversarial pass (helper attacks53)").
"""

from __future__ import annotations

from pathlib import Path

import pytest

from treehop import Treehop
from treehop._http import RetryPolicy
from treehop.cli import main
from treehop.embedders.openai_compatible import OpenAICompatibleEmbedder
from treehop.errors import TreehopError
from treehop.llm import ChatMessage
from treehop.llm.openai_compatible import OpenAICompatibleLLM
from treehop.rerankers.http_rerank import HTTPReranker
from treehop.rerankers.llm_rerank import parse_scores

from fake_servers.fault_server import FaultServer
from treehop_test_doubles import SAMPLE_TREE, BagOfWordsEmbedder

FAST = RetryPolicy(max_retries=0, backoff_s=0.01, max_backoff_s=0.05)

# JSON that Python's decoder refuses with something other than JSONDecodeError: nesting past
# the recursion limit (RecursionError) and an integer past 4,300 digits (ValueError).
DEEP = "[" * 100_000
BIG_INT = '{"a": ' + "9" * 5_000 + "}"
HOSTILE_JSON = [DEEP, BIG_INT, '{"query": "x", "relevant": {"a": ' + "9" * 5_000 + "}}"]


def _factory(options: object) -> Treehop:
    return Treehop(
        options.path,  # type: ignore[attr-defined]
        user=options.user,  # type: ignore[attr-defined]
        embedder=BagOfWordsEmbedder(),
    )


@pytest.fixture(scope="module")
def cli_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    idx = tmp_path_factory.mktemp("a53") / "index"
    src = SAMPLE_TREE / "resources" / "security"
    assert main(["index", str(src), "--index", str(idx)], client_factory=_factory) == 0
    return idx


@pytest.mark.parametrize("text", HOSTILE_JSON, ids=["deep", "bigint", "bigint-grade"])
@pytest.mark.parametrize("command", ["find", "search"])
def test_cli_filter_hostile_json_is_a_usage_error(
    cli_index: Path, command: str, text: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [command, "x", "--filter", text, "--index", str(cli_index)]
    code = main(argv, client_factory=_factory)
    err = capsys.readouterr().err
    assert code == 2
    # (a deep filter is told so, with the limit, since attacks90; the others stay "not JSON")
    said = "is nested too deeply" if text is DEEP else "is not valid JSON"
    assert err.startswith(f"treehop: error: --filter {said}")
    assert len(err) < 1_000


@pytest.mark.parametrize("text", HOSTILE_JSON, ids=["deep", "bigint", "bigint-grade"])
def test_cli_eval_file_hostile_json_is_a_usage_error(
    cli_index: Path, tmp_path: Path, text: str, capsys: pytest.CaptureFixture[str]
) -> None:
    queries = tmp_path / "q.jsonl"
    queries.write_text(text, encoding="utf-8")
    code = main(["eval", str(queries), "--index", str(cli_index)], client_factory=_factory)
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"treehop: error: {queries}:1: not valid JSON")
    assert len(err) < 1_000


# -- remote answers ------------------------------------------------------------------------------


def test_llm_rerank_answer_hostile_json_is_a_typed_error() -> None:
    for text in (DEEP, '{"scores": [' + "9" * 5_000 + "]}"):
        with pytest.raises(TreehopError):
            parse_scores(text, 3)


@pytest.mark.parametrize("body", [DEEP, BIG_INT], ids=["deep", "bigint"])
def test_remote_answers_of_hostile_json_are_typed_errors(body: str) -> None:
    with FaultServer("nan", {"nan": body}) as srv:
        emb = OpenAICompatibleEmbedder(
            "m", base_url=srv.base_url + "/v1", api_key="k", dimension=2, retry=FAST
        )
        with pytest.raises(TreehopError):
            emb.embed(["hello"])
        emb.close()
        rr = HTTPReranker(srv.base_url, api_key="k", retry=FAST)
        with pytest.raises(TreehopError):
            rr.rerank("q", ["a", "b"])
        rr.close()
        llm = OpenAICompatibleLLM("m", base_url=srv.base_url + "/v1", api_key="k", max_retries=0)
        with pytest.raises(TreehopError):
            llm.complete([ChatMessage(role="user", content="hi")])
        llm.close()


# -- add_records / vector-store metadata: every record checked before the first write ---------


_BAD_METADATA = [
    {1: "x"},  # the node model's keys are strings
    {"x": {1: 2}},  # a nested one would come back as "1"
    {"x": 2**70},  # add_resource keeps integers within 64 bits
    {"x": "y" * 70_000},  # add_resource's metadata size bound
]


@pytest.mark.parametrize("meta", _BAD_METADATA, ids=["key", "nested-key", "bigint", "size"])
def test_add_records_checks_every_metadata_before_writing(meta: dict[object, object]) -> None:
    from treehop.errors import IngestError, NotFoundError
    from treehop.ingest.records import IngestRecord, add_records

    th = Treehop(embedder=BagOfWordsEmbedder(), tagger=None)
    try:
        records = [
            IngestRecord("hello there", {"source": "a.md"}),
            IngestRecord("second text", {"source": "b.md", **meta}),  # type: ignore[dict-item]
        ]
        with pytest.raises(IngestError):
            add_records(th, records, base_uri="viking://resources/r")
        with pytest.raises(NotFoundError):  # nothing of the call was written
            th.ls("viking://resources/r")
    finally:
        th.close()


def _two_documents(second: object) -> list[object]:
    from treehop.ingest.records import IngestRecord

    first = [IngestRecord("a one", {"source": "a.md"}), IngestRecord("a two", {"source": "a.md"})]
    return [*first, second]


@pytest.mark.parametrize(
    "second",
    [
        ("b one\ud800", {"source": "b.md"}),  # a whole document (add_resource)
        ("x" * 6_000_000, {"source": "b.md"}),  # past max_file_bytes (5 MB)
    ],
    ids=["surrogate", "too-large"],
)
def test_add_records_checks_every_text_before_writing(second: object) -> None:
    """A later record's lone surrogate or size was refused by add_resource after the earlier
    documents were written."""
    from treehop.errors import NotFoundError
    from treehop.ingest.records import add_records

    th = Treehop(embedder=BagOfWordsEmbedder(), tagger=None)
    try:
        with pytest.raises(TreehopError):
            add_records(th, _two_documents(second), base_uri="viking://resources/r")  # type: ignore[arg-type]
        with pytest.raises(NotFoundError):
            th.ls("viking://resources/r")
    finally:
        th.close()


def test_add_records_checks_a_chunk_group_text_before_writing() -> None:
    from treehop.errors import NotFoundError
    from treehop.ingest.records import IngestRecord, add_records

    records = [
        *_two_documents(IngestRecord("b one", {"source": "b.md"})),
        IngestRecord("b two\ud800", {"source": "b.md"}),
    ]
    th = Treehop(embedder=BagOfWordsEmbedder(), tagger=None)
    try:
        with pytest.raises(TreehopError):
            add_records(th, records, base_uri="viking://resources/r")  # type: ignore[arg-type]
        with pytest.raises(NotFoundError):
            th.ls("viking://resources/r")
    finally:
        th.close()


@pytest.mark.parametrize("offset", ["x", [1], float("nan"), float("inf"), True])
def test_a_record_offset_must_be_a_finite_number(offset: object) -> None:
    """A string or list offset escaped TypeError from the chunks' sort; NaN ordered them
    arbitrarily."""
    from treehop.errors import IngestError
    from treehop.ingest.records import IngestRecord, add_records

    records = [
        IngestRecord("a one", {"source": "a.md"}, offset=1.0),
        IngestRecord("a two", {"source": "a.md"}, offset=offset),  # type: ignore[arg-type]
    ]
    th = Treehop(embedder=BagOfWordsEmbedder(), tagger=None)
    try:
        with pytest.raises(IngestError, match="offset"):
            add_records(th, records, base_uri="viking://resources/r")
    finally:
        th.close()


# -- the CLI: paths the OS refuses ---------------------------------------------------------------


def test_cli_index_of_a_path_too_long_for_the_os_is_an_error_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``Path.exists`` raises ENAMETOOLONG (not False): a traceback before."""
    long_name = str(tmp_path / ("a" * 5_000))
    code = main(["index", long_name, "--index", str(tmp_path / "idx")], client_factory=_factory)
    err = capsys.readouterr().err
    assert code == 4
    assert err.startswith("treehop: error: cannot read ")
    assert "name too long" in err
    assert len(err) < 1_000


def test_cli_index_path_too_long_for_the_os_is_an_error_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = SAMPLE_TREE / "resources" / "security"
    long_index = str(tmp_path / ("b" * 5_000))
    for argv in (["index", str(src)], ["ls"], ["find", "token"]):
        code = main([*argv, "--index", long_index], client_factory=_factory)
        err = capsys.readouterr().err
        assert code in (1, 3), (argv, err)
        assert "treehop: error: " in err, (argv, err)
        assert "Traceback" not in err
        assert len(err) < 1_000


# -- error messages: a caller's value is quoted bounded ------------------------------------------

_LONG = "x" * 50_000 + "/"

_LONG_VALUE_CALLS = {
    "find.since": lambda th: th.find("alpha", since=_LONG),
    "find.until": lambda th: th.find("alpha", until=_LONG),
    "find.tags": lambda th: th.find("alpha", tags=[_LONG]),
    "find.tags-long": lambda th: th.find("alpha", tags=["y" * 50_000]),
    "find.tags-source": lambda th: th.find("alpha", tags=["nope:" + "y" * 50_000]),
    "find.filter-op": lambda th: th.find("alpha", filter={"op": _LONG}),
    "context.session": lambda th: th.assemble_context("alpha", session_id=_LONG),
    "context.counter": lambda th: th.assemble_context("alpha", token_counter=_LONG),
    "remember.name": lambda th: th.remember("likes tea", name=_LONG),
    "remember.category": lambda th: th.remember("likes tea", category=_LONG),
    "remember.timestamp": lambda th: th.remember("likes tea", timestamp=_LONG),
    "add_messages.session": lambda th: th.add_messages(
        [{"role": "user", "content": "hi"}], session_id=_LONG
    ),
    "add_messages.conversation": lambda th: th.add_messages(
        [{"role": "user", "content": "hi"}], conversation_id=_LONG
    ),
    "add_messages.timestamp": lambda th: th.add_messages(
        [{"role": "user", "content": "hi", "timestamp": _LONG}]
    ),
    "user": lambda th: Treehop(embedder=BagOfWordsEmbedder(), user=_LONG),
}


@pytest.mark.parametrize("call", list(_LONG_VALUE_CALLS), ids=list(_LONG_VALUE_CALLS))
def test_an_error_quotes_a_long_value_bounded(call: str) -> None:
    """Each message quoted the 50,000-character value whole: into an MCP agent's context
    (tool errors are shown to the model) or a terminal."""
    th = Treehop(embedder=BagOfWordsEmbedder(), tagger=None)
    try:
        th.add_resource("alpha beta", target_uri="viking://resources/a")
        with pytest.raises(TreehopError) as info:
            _LONG_VALUE_CALLS[call](th)
        assert len(str(info.value)) < 1_000, str(info.value)[:300]
    finally:
        th.close()


# -- the MCP server's browsing tools: bounded answers ---------------------------------------------


async def test_mcp_ls_and_tree_answers_are_bounded(tmp_path: Path) -> None:
    """``ls`` of a directory of 3,000 files and ``tree`` down to depth 10 answered every node
    (with its abstract) into the agent's context; ``read`` was already capped. Now at most
    MAX_LIST_ENTRIES / MAX_TREE_NODES, saying how many were left out."""
    from mcp import Client

    from treehop import AsyncTreehop, mcp_server
    from treehop.mcp_server import build_server

    src = tmp_path / "src"
    src.mkdir()
    for i in range(3_000):
        (src / f"f{i:04d}.txt").write_text(f"note {i} alpha")
    with Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None) as c:
        c.add_resource(src, target_uri="viking://resources/src")
    a = AsyncTreehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None)
    try:
        async with Client(build_server(a)) as client:
            res = await client.call_tool("ls", {"uri": "viking://resources/src"})
            assert not res.is_error, res.content
            out = res.structured_content or {}
            assert len(out["entries"]) == mcp_server.MAX_LIST_ENTRIES
            assert out["omitted"] == 3_000 - mcp_server.MAX_LIST_ENTRIES
            assert out["entries"][0]["uri"].endswith("f0000.txt")

            res = await client.call_tool("tree", {"uri": "viking://resources", "depth": 10})
            assert not res.is_error, res.content
            tree = res.structured_content or {}
            count, stack, omitted = 0, [tree], 0
            while stack:
                node = stack.pop()
                count += 1
                omitted += node.get("omitted_children", 0)
                stack.extend(node.get("children", []))
            assert count <= mcp_server.MAX_TREE_NODES
            assert count + omitted == 3_002  # resources, src, the files

            small = await client.call_tool("ls", {"uri": "viking://resources"})
            assert "omitted" not in (small.structured_content or {})
    finally:
        await a.close()


@pytest.mark.parametrize("offset", ["x", [1], float("nan")])
async def test_a_passage_offset_must_be_a_finite_number(offset: object) -> None:
    """The same as records' offsets, for PassageStore.aupsert (the vector stores' writer)."""
    from treehop import AsyncTreehop
    from treehop.errors import IngestError
    from treehop.ingest.records import Passage, PassageStore

    th = AsyncTreehop(embedder=BagOfWordsEmbedder(), tagger=None)
    try:
        store = PassageStore(th, base_uri="viking://resources/p")
        passages = [
            Passage("a one", {"source": "a.md"}, "i1", offset=1.0),
            Passage("a two", {"source": "a.md"}, "i2", offset=offset),  # type: ignore[arg-type]
        ]
        with pytest.raises(IngestError, match="offset"):
            await store.aupsert(passages)
        assert await store.aget(["i1", "i2"]) == []
    finally:
        await th.close()


# -- the CLI: a document's control characters never reach the terminal ---------------------------


def test_cli_tables_do_not_print_a_documents_terminal_escapes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A document holding ESC sequences (set the window title, clear the screen, hide text),
    C1 controls and BEL had them printed raw in find / search / ls / tree rows: a hostile
    file could rewrite the user's terminal. One-line cells now show U+FFFD for them; ``read``
    prints the text as stored unless stdout is a terminal (a pipe keeps the exact text)."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "evil.md").write_text(
        "# Title \x1b]0;PWNED\x07 \x1b[2J\x1b[31mred\n\n"
        "alpha beta \x1b[8mhidden\x1b[0m gamma \x9b31m c1 \x7f del"
    )
    idx = str(tmp_path / "idx")
    assert main(["index", str(src), "--index", idx], client_factory=_factory) == 0
    capsys.readouterr()
    for argv in (
        ["find", "alpha"],
        ["search", "alpha"],
        ["ls", "viking://resources/src"],
        ["tree"],
    ):
        assert main([*argv, "--index", idx], client_factory=_factory) == 0
        out = capsys.readouterr().out
        assert "alpha" in out or "src" in out
        bad = [c for c in out if (ord(c) < 32 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F]
        assert not bad, (argv, bad)
    assert (
        main(["read", "viking://resources/src/evil.md", "--index", idx], client_factory=_factory)
        == 0
    )
    assert "\x1b[2J" in capsys.readouterr().out  # not a terminal: the stored text
