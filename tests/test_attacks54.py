"""Helper attacks54's adversarial pass (see bench/README.md, "Adversarial pass (helper
attacks54)"): a caller's extractor that never answers, invisible content, a new session's
numbering, the CLI's and MCP tools' answers, ``add_records``' ``uri`` metadata."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from treehop import AsyncTreehop, Treehop
from treehop.errors import InvalidQueryError

from treehop_test_doubles import BagOfWordsEmbedder


def _client(tmp_path: Path, **kw: Any) -> Treehop:
    return Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None, **kw)


def _uris(c: Treehop) -> list[str]:
    return [n.uri for n in c.store.iter_nodes()]  # type: ignore[attr-defined]


# ------------------------------------------- 1. a caller's extractor that never answers
class _Forever:
    """An extractor awaiting what never comes (a model call without a timeout)."""

    async def extract(self, turns: Any) -> Any:
        await asyncio.Event().wait()


class _Deaf:
    """An extractor that swallows its cancellation and keeps waiting until the test releases
    it (10 s at most), then answers. (It used to wait 2 s, and the test slept 2.5 s for it
    to end: on a loaded machine it might not have, and "its late answer is not written"
    then held without being tried.)"""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.ended = threading.Event()

    async def extract(self, turns: Any) -> Any:
        give_up = time.monotonic() + 10
        while not self.release.is_set() and time.monotonic() < give_up:
            try:
                await asyncio.sleep(0.01)
            except asyncio.CancelledError:
                continue
        self.ended.set()
        return ("late summary", ["a late fact"])


def test_an_extractor_that_never_answers_is_cut_at_its_deadline(tmp_path: Path) -> None:
    """``add_messages(..., extractor=...)`` awaited the caller's extractor without a bound:
    one that never answered hung the call forever (its turns were already stored). Now the
    extraction has a total deadline (``extract_deadline_s``): past it the result says so in
    ``extraction_error``, nothing of it is written, and the turns stay."""
    c = _client(tmp_path)
    try:
        t0 = time.perf_counter()
        res = c.add_messages(
            [{"content": "hello there"}], extractor=_Forever(), extract_deadline_s=0.3
        )
        assert time.perf_counter() - t0 < 5
        assert res.extraction_error and "0.3" in res.extraction_error
        assert "deadline" in res.extraction_error
        assert res.fact_uris == [] and res.summary is None and len(res.turn_uris) == 1
        assert not [u for u in _uris(c) if "fact-" in u]
        # (the client still works afterwards)
        assert len(c.add_messages([{"content": "more"}], session_id=res.session_id).turn_uris)
    finally:
        c.close()


def test_an_extractor_deaf_to_cancellation_does_not_hold_the_call(tmp_path: Path) -> None:
    c = _client(tmp_path)
    try:
        deaf = _Deaf()
        t0 = time.perf_counter()
        res = c.add_messages([{"content": "hello there"}], extractor=deaf, extract_deadline_s=0.2)
        assert time.perf_counter() - t0 < 5  # (the extractor holds on for 10 s)
        assert not deaf.ended.is_set()
        assert res.extraction_error and res.fact_uris == []
        deaf.release.set()
        assert deaf.ended.wait(10)  # it ends later: what it answers then is not written
        assert not [u for u in _uris(c) if "fact-" in u]
    finally:
        c.close()


def test_the_async_path_has_the_deadline_too(tmp_path: Path) -> None:
    async def go() -> None:
        c = AsyncTreehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None)
        try:
            res = await c.add_messages(
                [{"content": "hello there"}], extractor=_Forever(), extract_deadline_s=0.2
            )
            assert res.extraction_error and len(res.turn_uris) == 1
        finally:
            await c.close()

    asyncio.run(go())


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf"), True, "5", 1e9])
def test_a_bad_extract_deadline_is_refused_before_any_write(tmp_path: Path, bad: Any) -> None:
    c = _client(tmp_path)
    try:
        with pytest.raises(InvalidQueryError):
            c.add_messages(
                [{"content": "hello there"}], extractor=_Forever(), extract_deadline_s=bad
            )
        assert not [u for u in _uris(c) if "turn-" in u]
    finally:
        c.close()


def test_the_default_extract_deadline_is_documented_and_finite() -> None:
    import inspect

    from treehop import memory

    default = inspect.signature(memory.add_messages).parameters["extract_deadline_s"].default
    assert default == memory.EXTRACT_DEADLINE_S and 0 < default < 3600
    assert (
        inspect.signature(Treehop.add_messages).parameters["extract_deadline_s"].default == default
    )


# ------------------------------- 2. content of only invisible characters, like empty content
INVISIBLE = ["\u200b", "\u200b\ufeff \u2060\n", "\x00", "\x01\x02", "\u00a0\u3000\u2028", "\u200e"]


@pytest.mark.parametrize("text", INVISIBLE)
def test_invisible_content_is_refused_like_empty_content(tmp_path: Path, text: str) -> None:
    """Empty or whitespace-only content is refused (a turn, a note, a memory, a text, a
    record, a vector store's text) and an empty file in a directory is skipped
    (``skipped_empty``), but content of only zero-width, format or control characters was
    stored: a turn ``"\\u200b"`` was embedded as noise, as ``check_query`` says of such a
    query. Now it is treated as empty everywhere, before any write."""
    from treehop.errors import IngestError
    from treehop.ingest.records import add_records

    c = _client(tmp_path)
    try:
        before = _uris(c)
        with pytest.raises(InvalidQueryError):
            c.add_messages([{"content": "hello"}, {"content": text}])
        with pytest.raises(InvalidQueryError):
            c.remember(text)
        with pytest.raises(IngestError):
            c.add_memory(text)
        with pytest.raises(IngestError):
            c.add_resource(text, target_uri="viking://resources/t", is_text=True)
        with pytest.raises(IngestError):
            add_records(
                c,
                [
                    {"text": "fine", "metadata": {"source": "a.md"}},
                    {"text": text, "metadata": {"source": "b.md"}},
                ],
                base_uri="viking://resources/r",
            )
        assert _uris(c) == before
        d = tmp_path / "docs"
        d.mkdir()
        (d / "a.md").write_text("# Alpha\n\nSome words here.\n")
        (d / "b.md").write_text(text.replace("\x00", "\u200b"))
        res = c.add_resource(d, target_uri="viking://resources/docs")
        assert res.files == 1 and "b.md" in " ".join(res.skipped_other)
    finally:
        c.close()


def test_an_empty_string_is_not_the_current_directory(tmp_path: Path, monkeypatch: Any) -> None:
    """``add_resource("")`` read ``""`` as a path (``Path("").exists()``: it is ``.``) and
    indexed the whole working directory, where every other blank text is refused."""
    from treehop.errors import IngestError

    work = tmp_path / "cwd"
    work.mkdir()
    (work / "secret.md").write_text("# Secret\n\nnot meant for the index\n")
    monkeypatch.chdir(work)
    c = _client(tmp_path)
    try:
        with pytest.raises((IngestError, InvalidQueryError)):
            c.add_resource("", target_uri="viking://resources/t")
        assert not [u for u in _uris(c) if "secret" in u]
    finally:
        c.close()


# ------------------------------------------- 4. the CLI's answers and the MCP tools' texts
def _factory(options: Any) -> Treehop:
    return Treehop(options.path, user=options.user, llm=options.llm, embedder=BagOfWordsEmbedder())


def test_cli_names_a_symlink_loop(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``treehop index <a symlink loop>`` said "no such file or directory" (``Path.exists``
    answers False for ``ELOOP``), and ``--index <a symlink loop>`` of ``index`` escaped a raw
    ``RuntimeError: Symlink loop`` (``Path.resolve``). Both name the loop now."""
    from treehop.cli import ExitCode, main

    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "missing")
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.md").write_text("# A\n\nalpha beta\n")
    idx = str(tmp_path / "idx")

    assert main(["index", str(loop), "--index", idx], client_factory=_factory) == ExitCode.INGEST
    err = capsys.readouterr().err
    assert "symbolic link" in err and "no such file" not in err, err

    assert main(["index", str(dangling), "--index", idx], client_factory=_factory) == 4
    err = capsys.readouterr().err
    assert "no such file" in err and "link" in err, err

    for index in (loop, loop / "idx"):  # (the loop itself, or one in its path)
        code = main(["index", str(src), "--index", str(index)], client_factory=_factory)
        assert code == ExitCode.USAGE, code
        err = capsys.readouterr().err
        assert "symbolic link" in err and "Traceback" not in err, err
    assert main(["index", str(loop / "x"), "--index", idx], client_factory=_factory) == 4
    err = capsys.readouterr().err
    assert "symbolic link" in err and "no such file" not in err, err


def test_cli_json_escapes_c1_controls(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--json`` wrote C1 controls (``\\x9b`` is a terminal's CSI) and DEL raw, as JSON
    allows: a hostile document reached the terminal through ``treehop find --json``. They are
    written as ``\\u`` escapes now; the parsed JSON is the same."""
    import json

    from treehop.cli import main

    src = tmp_path / "src"
    src.mkdir()
    (src / "evil.md").write_text(
        "# Evil\n\nalpha beta \x9b31m c1 \x7f del \x85 nel \u00e9t\u00e9\n"
    )
    idx = str(tmp_path / "idx")
    assert main(["index", str(src), "--index", idx], client_factory=_factory) == 0
    capsys.readouterr()
    for argv in (["find", "alpha", "--json"], ["ls", "viking://resources/src", "--json"]):
        assert main([*argv, "--index", idx], client_factory=_factory) == 0, argv
        out = capsys.readouterr().out
        bad = [c for c in out if 0x7F <= ord(c) <= 0x9F]
        assert not bad, (argv, bad)
        assert "\u00e9t\u00e9" in out or argv[0] == "ls"  # (other text stays as it is)
        parsed = json.loads(out)
        if argv[0] == "find":
            assert "\x9b31m" in json.dumps(parsed, ensure_ascii=False)


async def test_mcp_hit_texts_are_bounded(tmp_path: Path) -> None:
    """``find`` / ``search`` answered ``text_chars`` characters of each hit, uncapped:
    ``text_chars=10**9`` with ``limit=1000`` put every hit's whole text into the agent's
    context. Now a hit's text is at most ``MAX_READ_CHARS`` and the answer's texts together
    too; a hit whose text was cut says so (``truncated``), and the answer counts them."""
    from mcp import Client

    from treehop import mcp_server
    from treehop.mcp_server import build_server

    big = " ".join(f"alpha{i % 50} beta" for i in range(60_000))  # ~700,000 characters
    a = AsyncTreehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None)
    try:
        for i in range(4):
            await a.add_resource(f"{big} doc{i}", target_uri=f"viking://resources/t{i}.txt")
        async with Client(build_server(a)) as client:
            for tool in ("find", "search"):
                res = await client.call_tool(
                    tool, {"query": "alpha1 beta", "limit": 1000, "text_chars": 10**9}
                )
                assert not res.is_error, res.content
                out = res.structured_content or {}
                texts = [h["text"] for h in out["hits"]]
                assert texts and sum(map(len, texts)) <= mcp_server.MAX_READ_CHARS, tool
                cut = [h for h in out["hits"] if h.get("truncated")]
                assert cut and out.get("truncated_hits") == len(cut), tool
            small = await client.call_tool("find", {"query": "alpha1 beta", "limit": 2})
            out = small.structured_content or {}
            assert all(len(h["text"]) <= 1000 for h in out["hits"])
    finally:
        await a.close()


# ------------------------------------- 5. add_records: a record's uri metadata cannot go anywhere
def test_a_records_uri_cannot_write_into_the_conversations(tmp_path: Path) -> None:
    """``add_records`` followed a record's ``uri`` metadata anywhere: a loader's metadata
    ``{"uri": "viking://~/memories/conversations/default"}`` replaced a whole conversation,
    ``.../notes`` every note. The conversations' subtree (``add_messages``' own) and a
    directory of memories are refused before any write, as ``remember`` / ``add_memory``
    refuse them; a memory of its own by URI stays (documented, tested)."""
    from treehop.errors import InvalidURIError
    from treehop.ingest.records import add_records

    c = _client(tmp_path)
    try:
        c.add_messages([{"content": "hello there"}], session_id="s")
        c.remember("Ann likes tea", name="tea")
        before = sorted(_uris(c))
        for uri in (
            "viking://~/memories/conversations",
            "viking://~/memories/conversations/default",
            "viking://~/memories/conversations/default/s/turn-00000",
            "viking://~/memories/conversations/other",
            "viking://~/memories/notes",
        ):
            with pytest.raises((InvalidURIError, InvalidQueryError)):
                add_records(c, [("fine", {"source": "a.md"}), ("evil", {"uri": uri})])
            assert sorted(_uris(c)) == before, uri
        out = add_records(
            c, [("The user likes short answers.", {"uri": "viking://~/memories/style"})]
        )
        assert out == ["viking://~/memories/style"]
        out = add_records(c, [("Ann likes coffee now", {"uri": "viking://~/memories/notes/tea"})])
        assert out == ["viking://~/memories/notes/tea"]  # (a note's own node, by its URI)
    finally:
        c.close()


def test_a_records_uri_stays_below_the_base_the_call_names(tmp_path: Path) -> None:
    """With ``base_uri="viking://resources/r"`` a record's ``uri`` metadata still wrote
    anywhere (``viking://resources/other``, ``viking://~/memories/x``): the call names the
    place its batch goes. A URI at or below that base is kept; the default base
    (``viking://resources``) keeps the documented meaning (any URI, memories included)."""
    from treehop.errors import InvalidURIError
    from treehop.ingest.records import add_records

    c = _client(tmp_path)
    try:
        for uri in ("viking://resources/other", "viking://~/memories/x", "viking://resources/rr"):
            with pytest.raises(InvalidURIError):
                add_records(
                    c,
                    [("fine", {"source": "a.md"}), ("evil", {"uri": uri})],
                    base_uri="viking://resources/r",
                )
            assert _uris(c) == [], uri
        out = add_records(
            c, [("fine", {"uri": "viking://resources/r/x/y.md"})], base_uri="viking://resources/r"
        )
        assert out == ["viking://resources/r/x/y.md"]
    finally:
        c.close()


# --------------------------- 3. a new session's number without reading every session
def _session_names(c: Treehop, conv: str = "default") -> list[str]:
    uri = c.aio.resolve(f"viking://~/memories/conversations/{conv}")
    return sorted(k.uri.rsplit("/", 1)[-1] for k in c.store.children(uri) if not k.is_leaf)


def test_new_session_numbers_do_not_read_the_conversation(tmp_path: Path, monkeypatch: Any) -> None:
    """A new session (``session_id=None``) read every session of the conversation to number
    it (47 ms at 3,000 sessions, every node built). The conversation's names are kept per
    store with its family stamp (O(log n) to check); while no other write touched its
    sessions, the next number comes from them. The numbers are the ones a read gives."""
    c = _client(tmp_path)
    try:
        for i in range(3):
            c.add_messages([{"content": f"hello {i}"}])
        conv = c.aio.resolve("viking://~/memories/conversations/default")
        reads: list[str] = []
        real = type(c.store).children

        def counting(self: Any, uri: str) -> Any:
            reads.append(uri)
            return real(self, uri)

        monkeypatch.setattr(type(c.store), "children", counting)
        for i in range(5):
            reads.clear()
            res = c.add_messages([{"content": f"more {i}"}])
            assert res.session_id == f"session-{3 + i:04d}"
            opening = reads.count(conv)
            reads.clear()
            c.add_messages([{"content": "and more"}], session_id=res.session_id)
            # (what is left is the writer's re-description of the conversation's node, which
            # every append does: opening a session reads nothing more)
            assert opening == reads.count(conv) <= 1, (opening, reads.count(conv))
    finally:
        c.close()


def test_new_session_numbers_match_a_read_after_any_change(tmp_path: Path) -> None:
    """Named sessions in the numbering's way, a removed session, another client's session
    and a leaf under the conversation: each next number is what reading the sessions gives
    (``len(taken)``, then past every taken name), kept or read."""
    from treehop import memory

    def expected(c: Treehop) -> str:
        taken = set(_session_names(c))
        n = len(taken)
        while f"session-{n:04d}" in taken:
            n += 1
        return f"session-{n:04d}"

    c = _client(tmp_path)
    try:
        steps = [
            lambda: c.add_messages([{"content": "a"}], session_id="session-0002"),
            lambda: c.remove("viking://~/memories/conversations/default/session-0000"),
            lambda: c.add_messages([{"content": "b"}], session_id="session-0007"),
            lambda: c.add_resource(
                "a leaf here",
                target_uri="viking://~/memories/conversations/default/leaf",
                is_text=True,
            ),
            lambda: c.add_messages([{"content": "d"}], session_id="leaf"),  # (over the leaf)
            lambda: c.add_messages([{"content": "c"}], session_id="zzz"),
            lambda: [
                c.add_messages([{"content": "e"}], session_id=f"session-{i:04d}")
                for i in range(14, 20)
            ],
            lambda: memory._sessions_kept.clear(),
        ]
        for step in [None, *steps, None, None]:
            if step is not None:
                step()
            want = expected(c)
            assert c.add_messages([{"content": "x"}]).session_id == want
            want = expected(c)
            assert c.add_messages([{"content": "y"}]).session_id == want
        other = _client(tmp_path)  # (another client: the same store object in one process)
        try:
            want = expected(c)
            assert other.add_messages([{"content": "z"}]).session_id == want
        finally:
            other.close()
        want = expected(c)
        assert c.add_messages([{"content": "w"}]).session_id == want
    finally:
        c.close()


def test_a_cancelled_call_cancels_its_extraction(tmp_path: Path) -> None:
    """Cancelling ``add_messages`` while its extractor runs (no deadline) cancels the
    extractor's task too (it is not left running on the loop); the turns are stored."""

    class Watched:
        cancelled = False

        async def extract(self, turns: Any) -> Any:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                Watched.cancelled = True
                raise

    async def go() -> None:
        c = AsyncTreehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None)
        try:
            task = asyncio.ensure_future(
                c.add_messages(
                    [{"content": "hello there"}], extractor=Watched(), extract_deadline_s=None
                )
            )
            await asyncio.sleep(0.5)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await asyncio.sleep(0.05)
            assert Watched.cancelled
            kids = c.store.children(c.resolve("viking://~/memories/conversations/default"))
            assert len(kids) == 1
        finally:
            await c.close()

    asyncio.run(go())


# ----------------------------------------------- a context ledger that cannot be read back
@pytest.mark.parametrize(
    "raw",
    [b"{not json", b"\xff\xfe", b"[" * 100_000, b"9" * 5_000],
    ids=["json", "utf8", "deep", "int"],
)
def test_an_unreadable_context_ledger_is_a_typed_error(tmp_path: Path, raw: bytes) -> None:
    """``assemble_context(session_id=...)`` read its ledger (the URIs the session was
    given) with a bare ``json.loads``: a ledger that is not JSON, not UTF-8, nested past
    the recursion limit or holding a 5,000-digit number escaped a raw ``JSONDecodeError``
    / ``UnicodeDecodeError`` / ``RecursionError`` / ``ValueError``. Now
    ``IndexCorruptError``, as an unreadable session is."""
    from treehop.errors import IndexCorruptError

    c = _client(tmp_path)
    try:
        c.add_resource("alpha beta gamma", target_uri="viking://resources/a.md", is_text=True)
        c.store.put_state("context/default/s1", raw)  # type: ignore[attr-defined]
        with pytest.raises(IndexCorruptError):
            c.assemble_context("alpha", max_tokens=100, session_id="s1")
        assert c.assemble_context("alpha", max_tokens=100, session_id="s2").uris
    finally:
        c.close()


def test_state_nested_past_the_recursion_limit_is_index_corrupt(tmp_path: Path) -> None:
    """The tagger's statistics and the sessions index caught a damaged JSON state's
    ``ValueError`` as ``IndexCorruptError``, but not ``RecursionError`` (``"[" * 100000``):
    it escaped raw from the first write or session call (attacks53 fixed the same for
    caller-given and remote JSON)."""
    from treehop.errors import IndexCorruptError
    from treehop.tagging.keywords import KeywordTagger

    with pytest.raises(IndexCorruptError):
        KeywordTagger.from_bytes(b"[" * 100_000)
    c = _client(tmp_path)
    try:
        c.create_session()
        c.store.put_state("sessions/_index", b"[" * 100_000)  # type: ignore[attr-defined]
    finally:
        c.close()
    with pytest.warns(Warning, match="damaged"):  # (rebuilt from the session blobs, warned)
        c = _client(tmp_path)
        try:
            assert len(c.list_sessions()) == 1
        finally:
            c.close()


# ------------------------------------------- a base_url's query-string or fragment secrets
@pytest.mark.parametrize(
    "url",
    [
        "https://h.example/v1?key=AIzaSyAbCdEfGh12345",
        "https://h.example/v1?token=tok_1234567890",
        "https://h.example/v1?access_token=tok_1234567890",
        "https://h.example/v1?api-version=2024-02-01&sig=AbCdEf1234567890",
        "https://h.example/v1?password=hunter2hunter2",
        "https://h.example/v1#tok_1234567890",
    ],
)
def test_a_base_urls_secret_parameters_never_reach_a_repr(url: str) -> None:
    """``redact_url`` (the clients' ``repr``, the reranker's name, a bad ``base_url``'s
    error) masked userinfo and ``api_key=`` only: ``?key=`` (Google's API keys),
    ``?token=``, ``?access_token=``, a SAS ``sig=``, ``?password=`` and a fragment were shown
    whole. Their values are ``***`` now; other parameters stay (``api-version``)."""
    from treehop.llm.openai_compatible import OpenAICompatibleLLM
    from treehop.redaction import redact_url
    from treehop.rerankers.http_rerank import HTTPReranker

    secret = next(s for s in ("AIzaSy", "tok_", "AbCdEf", "hunter2") if s in url)
    assert secret not in redact_url(url)
    assert secret not in repr(OpenAICompatibleLLM(model="m", base_url=url))
    rr = HTTPReranker(base_url=url)
    assert secret not in repr(rr) and secret not in rr.name
    if "api-version" in url:
        assert "api-version=2024-02-01" in redact_url(url)
    assert redact_url("https://h.example/v1?max_tokens=5") == "https://h.example/v1?max_tokens=5"


def test_an_http_failure_does_not_echo_a_query_key() -> None:
    """A final HTTP status was reported as ``HTTP 400 from <the request's URL>`` through
    ``redact`` (registered secrets, ``api_key=``), so a ``base_url`` holding ``?key=...``
    (the model path appended after it) put the key into the error."""
    import httpx

    from treehop._http import HTTPStatusFailure

    url = "https://h.example/v1?key=AIzaSyAbCdEfGh12345/chat/completions"
    resp = httpx.Response(400, request=httpx.Request("POST", url), text="bad request")
    msg = str(HTTPStatusFailure(resp))
    assert "AIzaSy" not in msg and "HTTP 400" in msg and "h.example" in msg


@pytest.mark.parametrize(
    "kw",
    [
        {"uri": "http://root:S3cretPw99@127.0.0.1:1"},
        {"uri": "http://127.0.0.1:1?token=S3cretPw99"},
        {"uri": "http://127.0.0.1:1", "token": "root:S3cretPw99"},
    ],
    ids=["userinfo", "query", "token"],
)
def test_a_milvus_uris_credentials_never_reach_an_error(kw: dict[str, str]) -> None:
    """``MilvusStore`` quoted its ``uri`` raw in its errors and ``repr``
    (``http://root:password@host``, ``?token=``): shown through ``redact_url`` now, and
    the ``token`` is registered as a secret like the HTTP clients' keys."""
    pytest.importorskip("pymilvus")
    from treehop.errors import StoreError
    from treehop.stores.milvus import MilvusStore

    with pytest.raises(StoreError) as info:
        MilvusStore(**kw, timeout=2)  # type: ignore[arg-type]
    assert "S3cretPw99" not in str(info.value) and "127.0.0.1" in str(info.value)


async def test_mcp_context_budget_is_bounded(tmp_path: Path, monkeypatch: Any) -> None:
    """The MCP ``context`` tool passed ``max_tokens`` through (the core allows 1,000,000):
    an agent's call could pull ~4 MB of text into its own context, where ``read`` / ``find``
    are held to 200,000 characters. Now at most ``MAX_CONTEXT_TOKENS``; a larger ask says
    what it was held to (``max_tokens_capped``)."""
    from mcp import Client

    from treehop import mcp_server
    from treehop.mcp_server import build_server

    monkeypatch.setattr(mcp_server, "MAX_CONTEXT_TOKENS", 300)  # (small texts suffice)
    a = AsyncTreehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None)
    try:
        for i in range(6):
            text = " ".join(f"alpha{j % 50} beta{i}" for j in range(400))
            await a.add_resource(text, target_uri=f"viking://resources/t{i}.txt")
        whole = await a.assemble_context("alpha1 beta", max_tokens=1_000_000, limit=1000)
        assert whole.tokens > 300  # (what the tool answered before)
        async with Client(build_server(a)) as client:
            res = await client.call_tool(
                "context", {"query": "alpha1 beta", "max_tokens": 1_000_000, "limit": 1000}
            )
            assert not res.is_error, res.content
            out = res.structured_content or {}
            assert out["tokens"] <= mcp_server.MAX_CONTEXT_TOKENS
            assert out["max_tokens_capped"] == mcp_server.MAX_CONTEXT_TOKENS
            small = await client.call_tool("context", {"query": "alpha1 beta", "max_tokens": 100})
            assert "max_tokens_capped" not in (small.structured_content or {})
    finally:
        await a.close()


# ------------------------------- a passage store's base in the conversations' subtree
@pytest.mark.parametrize(
    "base",
    [
        "viking://~/memories/conversations",
        "viking://~/memories/conversations/default/s1",
    ],
)
def test_a_passage_store_cannot_be_based_in_the_conversations(tmp_path: Path, base: str) -> None:
    """attacks54's open item (the lead closed it): a vector store whose ``base_uri`` lay in
    the conversations' subtree wrote its passages beside a session's turns. Refused when
    the store is made, before any write; the memories' root stays a valid base."""
    from treehop.errors import InvalidURIError
    from treehop.ingest.records import PassageStore

    c = _client(tmp_path)
    try:
        c.add_messages([{"role": "user", "content": "hello there"}], session_id="s1")
        before = _uris(c)
        with pytest.raises(InvalidURIError, match="conversations' subtree"):
            PassageStore(c, base_uri=base)
        assert _uris(c) == before
        store = PassageStore(c, base_uri="viking://~/memories/style")
        assert store.base.endswith("/memories/style")
    finally:
        c.close()
