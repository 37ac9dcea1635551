"""Adversarial pass attacks56.

Each test was written failing first (bench/README.md, "Adversarial pass (helper attacks56)").
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import Treehop
from treehop.errors import IngestError, InvalidQueryError
from treehop.redaction import MASK, redact

from treehop_test_doubles import BagOfWordsEmbedder, peak_memory_mb, raw_answer_server


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Treehop]:
    c = Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), reader_processes=0)
    yield c
    c.close()


# -- 1. credential-named assignments in free text -------------------------------------------


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("request failed: token=tok_unregistered_42 rejected", "tok_unregistered_42"),
        ("auth error (password=hunter2hunter2)", "hunter2hunter2"),
        ("bad config secret=s3cr3t-value-xyz", "s3cr3t-value-xyz"),
        ("oauth: access_token=ya29.a0AfH6SMB&expires=3600", "ya29.a0AfH6SMB"),
        ("refresh_token = 'rt-0123456789'", "rt-0123456789"),
        ("client_secret=cs_abcdef0123", "cs_abcdef0123"),
        ('{"password": "pw-quoted-value", "user": "u"}', "pw-quoted-value"),
        ("{'token': 'single-quoted-token'}", "single-quoted-token"),
        ("Server=db;Uid=sa;Pwd=odbcpass99;", "odbcpass99"),
        ("X-Auth-Token=hdr-token-value", "hdr-token-value"),
        ("PASSWORD=UPPERCASEPW1", "UPPERCASEPW1"),
        ("db_passwd=pwd-in-env", "pwd-in-env"),
    ],
)
def test_a_credential_named_value_in_free_text_is_masked(text: str, secret: str) -> None:
    out = redact(text)
    assert secret not in out
    assert MASK in out


@pytest.mark.parametrize(
    "text",
    [
        "max_tokens=512 exceeds the model's context",
        "tokens: 12, token_type=bearer, tokenizer=cl100k",
        "unexpected token: '}' at line 1",
        "the password field is empty; secret handshake; token budget exhausted",
        "count_tokens=whitespace passwords=3 secrets: none",
        "keep the secretary=alice and tokenizer=bpe",
    ],
)
def test_ordinary_words_near_credential_names_are_left_alone(text: str) -> None:
    assert redact(text) == text


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(["token", "password", "secret", "access_token", "Pwd", "x-auth-token"]),
    st.sampled_from(["=", " = ", '": "', "': '"]),
    st.text(alphabet="abcdefXYZ0123456789-_.~+/", min_size=1, max_size=30),
    st.text(max_size=40),
)
def test_any_credential_assignment_loses_its_value(
    name: str, sep: str, value: str, suffix: str
) -> None:
    quote = sep[0] if sep[0] in "\"'" else ""
    out = redact(f"error {quote}{name}{sep}{value} {suffix}")
    assert f"{sep}{value}" not in out


@pytest.mark.parametrize(
    "unit",
    ["a-", "token_", "password", "x=", "token-token="],
)
def test_redact_stays_linear_on_hostile_text(unit: str) -> None:
    small = unit * 50_000
    # (CPU time of this thread: a loaded machine's waits in either run do not skew the ratio)
    t0 = time.thread_time()
    redact(small)
    t_small = time.thread_time() - t0
    t0 = time.thread_time()
    redact(small * 4)
    t_big = time.thread_time() - t0
    assert t_big < 12 * t_small + 0.05


# -- 2. a one-line text longer than a file name ----------------------------------------------

# One paragraph on one line, ~1,200 characters: longer than NAME_MAX (255), shorter than
# PATH_MAX. ``Path.exists`` raises ENAMETOOLONG for it on Python 3.11 instead of answering False.
PARAGRAPH = "alpha beta gamma delta epsilon. " * 40


def test_add_resource_of_a_long_one_line_text_adds_the_text(client: Treehop) -> None:
    added = client.add_resource(PARAGRAPH, target_uri="viking://resources/p.md")
    assert added.root_uri == "viking://resources/p.md"
    assert "epsilon" in client.read("viking://resources/p.md")
    # a component of a path-looking string past NAME_MAX is a text too, or a typed refusal
    with pytest.raises(IngestError):
        client.add_resource("/tmp/" + "x" * 300 + ".md")


def test_add_skill_of_a_long_one_line_text(client: Treehop) -> None:
    client.add_skill(PARAGRAPH, name="long-skill")
    assert "alpha" in client.read("viking://~/skills/long-skill")


def test_a_long_path_given_as_a_path_is_a_typed_error(client: Treehop) -> None:
    for value in ("x" * 300, Path("x" * 300), "d/" + "y" * 5000):
        with pytest.raises((IngestError, InvalidQueryError)):
            client.add_resource(value, is_text=False)
    with pytest.raises((IngestError, InvalidQueryError)):
        client.add_resource(Path("z" * 300))


# -- 3. assemble_context's quotas / tiers and a deadline past float range -------------------


@pytest.mark.parametrize("quotas", [5, -1, "memory", ["memory"], ("x",), 1.5, object(), b"x"])
def test_assemble_context_quotas_that_are_not_a_mapping_are_typed(
    client: Treehop, quotas: object
) -> None:
    client.add_resource("alpha beta gamma", target_uri="viking://resources/a.md")
    with pytest.raises(InvalidQueryError, match="quotas"):
        client.assemble_context("alpha", quotas=quotas)  # type: ignore[arg-type]


@pytest.mark.parametrize("tiers", [5, None, 1.5, object(), [1], [None], ["nope"]])
def test_assemble_context_tiers_that_are_not_a_list_of_tiers_are_typed(
    client: Treehop, tiers: object
) -> None:
    client.add_resource("alpha beta gamma", target_uri="viking://resources/a.md")
    with pytest.raises(InvalidQueryError, match="tiers"):
        client.assemble_context("alpha", tiers=tiers)  # type: ignore[arg-type]


def test_assemble_context_tiers_as_a_set_still_work(client: Treehop) -> None:
    client.add_resource("alpha beta gamma", target_uri="viking://resources/a.md")
    out = client.assemble_context("alpha", tiers={"content", "abstract"})  # type: ignore[arg-type]
    assert out.tokens <= 2000


@pytest.mark.parametrize(
    "deadline",
    [10**400, -(10**400), float("nan"), float("inf"), 0],
    ids=["big", "-big", "nan", "inf", "zero"],
)
def test_extract_deadline_past_float_range_is_typed(client: Treehop, deadline: object) -> None:
    with pytest.raises(InvalidQueryError, match="extract_deadline_s") as info:
        client.add_messages(
            [{"role": "user", "content": "hi"}],
            extract_deadline_s=deadline,  # type: ignore[arg-type]
        )
    assert len(str(info.value)) < 300
    assert client.ls("viking://~/memories") == []  # (nothing written: an empty root)


def test_a_remote_client_deadline_past_float_range_is_typed() -> None:
    from treehop.embedders.openai_compatible import OpenAICompatibleEmbedder
    from treehop.errors import TreehopError

    with pytest.raises(TreehopError):
        OpenAICompatibleEmbedder("m", base_url="http://127.0.0.1:9", deadline_s=10**400)


# -- 4. one malformed embedding answer must not fix the embedder's width ---------------------


@pytest.mark.parametrize(
    "first",
    [
        '{"data": [{"index": 0, "embedding": ["x"]}]}',
        '{"data": [{"index": 0, "embedding": [NaN]}]}',
        '{"data": [{"index": 0, "embedding": [1e999, 2]}]}',
    ],
    ids=["string", "nan", "inf"],
)
def test_a_refused_embedding_answer_teaches_no_width(first: str) -> None:
    import json

    from treehop.embedders.openai_compatible import OpenAICompatibleEmbedder
    from treehop.errors import EmbeddingError

    from fake_servers.fault_server import FaultServer

    good = json.dumps({"data": [{"index": 0, "embedding": [0.1, 0.2, 0.3]}]})
    answers = iter([first, good, good])
    with FaultServer("wrong_len", bodies={"wrong_len": lambda _b: next(answers)}) as srv:
        emb = OpenAICompatibleEmbedder("m", base_url=srv.base_url, api_key="sk-a56-0123456789")
        with pytest.raises(EmbeddingError):
            emb.embed(["hi"])
        assert emb.embed(["hi"]).shape == (1, 3)  # (was "3-dimensional, expected 1")
        assert emb.embed(["again"]).shape == (1, 3)


# -- 5. an index path the OS refuses to look up --------------------------------------------


@pytest.mark.parametrize("name", ["x" * 300, "d/" + "y" * 300 + "/idx"], ids=["long", "deep"])
def test_an_index_path_past_a_file_name_is_a_store_error(tmp_path: Path, name: str) -> None:
    from treehop.errors import StoreError

    (tmp_path / "d").mkdir()
    with pytest.raises(StoreError, match="cannot use the index path") as info:
        Treehop(tmp_path / name, embedder=BagOfWordsEmbedder(), reader_processes=0)
    assert len(str(info.value)) < 400


# -- 6. set_tags from concurrent calls and processes loses no tag ----------------------------


def test_concurrent_set_tags_in_one_process_lose_no_tag(tmp_path: Path) -> None:
    """Each call read the node's tags before the writer's lock and wrote its own merge: 20
    concurrent ``set_tags(add=[tN])`` kept 2 of the 20 tags."""
    import asyncio

    from treehop import AsyncTreehop

    async def main() -> list[str]:
        c = AsyncTreehop(tmp_path / "idx", embedder=BagOfWordsEmbedder())
        try:
            uri = "viking://resources/base.md"
            await c.add_resource("base text", target_uri=uri, is_text=True)
            await asyncio.gather(*[c.set_tags(uri, add=[f"t{j}"]) for j in range(20)])
            await asyncio.gather(*[c.set_tags(uri, remove=[f"t{j}"]) for j in range(0, 20, 2)])
            return list((await c.stat(uri)).tags)
        finally:
            await c.close()

    tags = asyncio.run(main())
    assert sorted(tags) == sorted(f"user:t{j}" for j in range(1, 20, 2))


_SET_TAGS_WORKER = """
import sys
sys.path[:0] = sys.argv[4:]
from treehop import Treehop
from treehop_test_doubles import BagOfWordsEmbedder
c = Treehop(sys.argv[1], embedder=BagOfWordsEmbedder(), reader_processes=0)
for j in range(int(sys.argv[3])):
    c.set_tags("viking://resources/base.md", add=[f"{sys.argv[2]}{j}"])
c.close()
"""


def test_set_tags_from_two_processes_lose_no_tag(tmp_path: Path) -> None:
    """Across processes the node was read from the process's last view of the index: three
    processes of 15 ``set_tags`` each left one process's 15 tags of 45."""
    import subprocess
    import sys

    path = tmp_path / "idx"
    c = Treehop(path, embedder=BagOfWordsEmbedder(), reader_processes=0)
    c.add_resource("base text", target_uri="viking://resources/base.md", is_text=True)
    c.close()
    here = str(Path(__file__).parent)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _SET_TAGS_WORKER, str(path), name, "10", here, *sys.path],
            stderr=subprocess.PIPE,
        )
        for name in ("a", "b")
    ]
    for p in procs:
        _, err = p.communicate(timeout=240)
        assert p.returncode == 0, err.decode()[-2000:]
    c = Treehop(path, embedder=BagOfWordsEmbedder(), reader_processes=0)
    try:
        tags = c.stat("viking://resources/base.md").tags
    finally:
        c.close()
    assert sorted(tags) == sorted(f"user:{n}{j}" for n in "ab" for j in range(10))


# -- 7. state another process wrote: sessions and the context ledger -----------------------

_SESSION_WORKER = """
import sys
sys.path[:0] = sys.argv[5:]
from treehop import Treehop
from treehop_test_doubles import BagOfWordsEmbedder
c = Treehop(sys.argv[1], embedder=BagOfWordsEmbedder(), reader_processes=0)
sid = sys.argv[2]
if sid == "new":
    sid = c.create_session()
for j in range(int(sys.argv[4])):
    c.add_message(sid, "user", f"{sys.argv[3]} message {j}")
print(sid)
c.close()
"""


def _run(code: str, *args: str) -> str:
    import subprocess
    import sys

    here = str(Path(__file__).parent)
    done = subprocess.run(
        [sys.executable, "-c", code, *args, here, *sys.path],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


def test_a_session_another_process_appended_to_is_not_written_back_over(tmp_path: Path) -> None:
    """The parsed session was cached for good (and the store's blob too): after another
    process appended 5 messages, this process's next append saved its stale copy over them
    (a fresh reader saw 1 message, not 6)."""
    path = tmp_path / "idx"
    c = Treehop(path, embedder=BagOfWordsEmbedder(), reader_processes=0)
    try:
        sid = c.create_session()
        assert c.get_session(sid).messages == []
        _run(_SESSION_WORKER, str(path), sid, "other", "5")
        assert len(c.get_session(sid).messages) == 5  # (was 0: a stale copy)
        c.add_message(sid, "user", "mine")
        assert [m.content for m in c.get_session(sid).messages][-1] == "mine"
        assert len(c.get_session(sid).messages) == 6
        # a session created by another process after this one read its index is found
        other = _run(_SESSION_WORKER, str(path), "new", "late", "2")
        assert len(c.get_session(other).messages) == 2
    finally:
        c.close()
    reader = _run(
        "import sys\nsys.path[:0] = sys.argv[3:]\n"
        "from treehop import Treehop\nfrom treehop_test_doubles import BagOfWordsEmbedder\n"
        "c = Treehop(sys.argv[1], embedder=BagOfWordsEmbedder(), reader_processes=0)\n"
        "print(len(c.get_session(sys.argv[2]).messages))",
        str(path),
        sid,
    )
    assert reader == "6"


def test_a_failed_session_save_leaves_no_message_behind(client: Treehop) -> None:
    from treehop.errors import StoreError

    sid = client.create_session()
    client.add_message(sid, "user", "kept")
    store = client.store
    original = store.put_state

    def failing(key: str, value: bytes) -> None:
        raise StoreError("disk full (test)")

    store.put_state = failing  # type: ignore[method-assign]
    try:
        with pytest.raises(StoreError):
            client.add_message(sid, "user", "lost")
    finally:
        store.put_state = original  # type: ignore[method-assign]
    assert [m.content for m in client.get_session(sid).messages] == ["kept"]
    client.add_message(sid, "user", "next")
    assert [m.content for m in client.get_session(sid).messages] == ["kept", "next"]


_LEDGER_WORKER = """
import sys
sys.path[:0] = sys.argv[4:]
from treehop import Treehop
from treehop_test_doubles import BagOfWordsEmbedder
c = Treehop(sys.argv[1], embedder=BagOfWordsEmbedder(), reader_processes=0)
got = []
for j in range(int(sys.argv[3])):
    k = int(sys.argv[2]) * 100 + j
    got += c.assemble_context(f"topic{k}", session_id="s", max_tokens=200, limit=1).uris
print(" ".join(got))
c.close()
"""


def test_two_processes_assembling_for_one_session_keep_every_uri_in_the_ledger(
    tmp_path: Path,
) -> None:
    """Each process merged its URIs into its own (stale) read of the ledger: two processes
    of 12 calls left 12-16 of the 24 injected URIs in it (the rest would be injected again).
    """
    import subprocess
    import sys

    path = tmp_path / "idx"
    c = Treehop(path, embedder=BagOfWordsEmbedder(), reader_processes=0)
    for w in (0, 1):
        for j in range(8):
            k = w * 100 + j
            c.add_resource(
                f"topic{k} " * 5 + "filler", target_uri=f"viking://resources/t{k}.md", is_text=True
            )
    c.close()
    here = str(Path(__file__).parent)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _LEDGER_WORKER, str(path), str(w), "8", here, *sys.path],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in (0, 1)
    ]
    injected: set[str] = set()
    for p in procs:
        out, err = p.communicate(timeout=240)
        assert p.returncode == 0, err[-2000:]
        injected |= set(out.split())
    c = Treehop(path, embedder=BagOfWordsEmbedder(), reader_processes=0)
    try:
        assert len(injected) == 16
        assert injected <= set(c.aio.context_ledger.seen("s"))
    finally:
        c.close()


def test_two_processes_appending_to_one_session_lose_no_message(tmp_path: Path) -> None:
    """Each append read the session, added its message and saved: two processes of 30
    appends each to one session stored 46 of 60 (``next_seq``) in one run of two. Now the
    read and the save are under the session's key lock."""
    import subprocess
    import sys

    path = tmp_path / "idx"
    c = Treehop(path, embedder=BagOfWordsEmbedder(), reader_processes=0)
    sid = c.create_session()
    c.close()
    here = str(Path(__file__).parent)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _SESSION_WORKER, str(path), sid, name, "30", here, *sys.path],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("a", "b")
    ]
    for p in procs:
        _, err = p.communicate(timeout=240)
        assert p.returncode == 0, err[-2000:]
    c = Treehop(path, embedder=BagOfWordsEmbedder(), reader_processes=0)
    try:
        s = c.get_session(sid)
        assert s.next_seq == 60
        assert s.folded_count + len(s.messages) == 60
    finally:
        c.close()


# -- 8. an async client's transport error told by its cause ---------------------------------


def test_an_async_connect_failure_names_its_cause_not_a_task_group() -> None:
    import asyncio

    from treehop.embedders.openai_compatible import OpenAICompatibleEmbedder
    from treehop.errors import EmbeddingError, LLMError
    from treehop.llm import ChatMessage
    from treehop.llm.openai_compatible import OpenAICompatibleLLM

    emb = OpenAICompatibleEmbedder("m", base_url="http://127.0.0.1:99999")
    with pytest.raises(EmbeddingError) as info:
        asyncio.run(emb.aembed(["x"]))
    assert "TaskGroup" not in str(info.value)
    llm = OpenAICompatibleLLM("m", base_url="http://127.0.0.1:99999")
    with pytest.raises(LLMError) as linfo:
        asyncio.run(llm.acomplete([ChatMessage(role="user", content="x")]))
    assert "TaskGroup" not in str(linfo.value)


# -- 9. an explicit key with a trailing newline ---------------------------------------------


@pytest.mark.parametrize("secret", [False, True], ids=["str", "SecretStr"])
def test_an_explicit_key_read_from_a_file_is_stripped(secret: bool) -> None:
    import json

    from pydantic import SecretStr

    from treehop.embedders.openai_compatible import OpenAICompatibleEmbedder

    from fake_servers.fault_server import FaultServer

    good = json.dumps({"data": [{"index": 0, "embedding": [0.1, 0.2, 0.3]}]})
    key = "sk-a56-filekey-0123456789\n"
    with FaultServer("wrong_len", bodies={"wrong_len": good}) as srv:
        emb = OpenAICompatibleEmbedder(
            "m", base_url=srv.base_url, api_key=SecretStr(key) if secret else key
        )
        assert emb.embed(["hi"]).shape == (1, 3)  # (was EmbeddingError: Illegal header value)
        sent = {k.lower(): v for k, v in srv.requests[-1].items()}
        assert sent["authorization"] == "Bearer sk-a56-filekey-0123456789"


# -- 10. treehop eval of an endless file ----------------------------------------------------


def test_cli_eval_of_an_endless_file_stops_with_a_message(tmp_path: Path) -> None:
    """``treehop eval /dev/zero`` read zeros until memory ran out (killed at 60 s here)."""
    import subprocess
    import sys

    idx = tmp_path / "idx"
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("alpha beta gamma\n")
    run = [sys.executable, "-m", "treehop.cli", "--index", str(idx)]
    subprocess.run([*run, "index", str(docs)], check=True, capture_output=True, timeout=120)
    done = subprocess.run([*run, "eval", "/dev/zero"], capture_output=True, text=True, timeout=60)
    assert done.returncode not in (0, 1) and "Traceback" not in done.stderr
    assert "larger than" in done.stderr


# -- 11. a chat model's summary that cannot be saved ----------------------------------------


@pytest.mark.parametrize(
    "answer", ["summary \ud800 text", None, 5], ids=["lone-surrogate", "none", "int"]
)
def test_a_session_summary_the_store_cannot_save_does_not_break_the_session(
    tmp_path: Path, answer: object
) -> None:
    """A model answering a lone surrogate (a JSON ``"\\ud800"`` escape) made every append
    past ``max_messages`` raise ``PydanticSerializationError`` (the fold's save), for good;
    a caller's LLM answering ``None`` raised ``AttributeError``."""
    from treehop.llm import ChatMessage
    from treehop.llm.base import BaseLLM

    class Odd(BaseLLM):
        name = "odd"

        def complete(self, messages: Sequence[ChatMessage], *, json_mode: bool = False) -> str:
            return answer  # type: ignore[return-value]

        async def acomplete(
            self, messages: Sequence[ChatMessage], *, json_mode: bool = False
        ) -> str:
            return answer  # type: ignore[return-value]

    c = Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), reader_processes=0, llm=Odd())
    try:
        sid = c.create_session()
        for j in range(25):
            c.add_message(sid, "user", f"message {j}")
        s = c.get_session(sid)
        assert s.next_seq == 25 and s.folded_count + len(s.messages) == 25
        assert "\ud800" not in s.summary
    finally:
        c.close()


def test_an_async_append_waits_for_another_holder_without_blocking_the_loop(
    tmp_path: Path,
) -> None:
    """The session's key lock held elsewhere (a raw ``flock`` of its file on another open
    file: what another process's hold looks like): ``add_message`` on an ``AsyncTreehop``
    waits for it with the loop running, then stores the message."""
    import asyncio

    from treehop import AsyncTreehop
    from treehop.sessions import KEY_PREFIX

    async def main() -> tuple[int, int]:
        c = AsyncTreehop(tmp_path / "idx", embedder=BagOfWordsEmbedder())
        try:
            sid = await c.create_session()
            other = c.store.key_lock(KEY_PREFIX + sid)
            assert other is not None and other.try_acquire()
            ticks = 0

            async def ticker() -> None:
                nonlocal ticks
                while True:
                    await asyncio.sleep(0.01)
                    ticks += 1

            t = asyncio.create_task(ticker())
            add = asyncio.create_task(c.add_message(sid, "user", "after the other holder"))
            await asyncio.sleep(0.3)
            assert not add.done()
            other.release()
            await asyncio.wait_for(add, 10)
            t.cancel()
            return ticks, len((await c.get_session(sid)).messages)
        finally:
            await c.close()

    ticks, stored = asyncio.run(main())
    assert ticks >= 3  # (the loop ran while the append waited; 30 on an idle machine)
    assert stored == 1


# -- 12. a zstd answer that decodes to gigabytes ----------------------------------------------


def _one_answer_server(head: bytes, body: bytes) -> tuple[str, object]:
    """A server answering ``head`` (status line and headers), the body's length, ``body``."""
    length = f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
    return raw_answer_server(head + length + body)


def test_a_zstd_bomb_is_refused_without_decoding_it_whole() -> None:
    """httpx decodes each raw chunk whole: a 65 KB zstd answer of 2 GiB of zeros took
    4.2 GB of memory and 6-14 s before ``MAX_RESPONSE_BYTES`` was checked (now ~0.1 s)."""
    zstandard = pytest.importorskip("zstandard")
    import json

    from treehop.embedders.openai_compatible import OpenAICompatibleEmbedder

    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: zstd\r\n"
    good = zstandard.ZstdCompressor().compress(
        json.dumps({"data": [{"index": 0, "embedding": [0.1, 0.2, 0.3]}]}).encode()
    )
    url, srv = _one_answer_server(head, good)
    try:
        emb = OpenAICompatibleEmbedder("m", base_url=url, api_key="sk-a56-zstd-0123456789")
        assert emb.embed(["hi"]).shape == (1, 3)  # (a good zstd answer is still read)
    finally:
        srv.close()  # type: ignore[attr-defined]
    # The bomb in a fresh process, whose peak memory is then its own: 1 GiB of zeros.
    probe = """
import io, sys, time
sys.path[:0] = sys.argv[2:]
import zstandard
from test_attacks56 import _one_answer_server
from treehop.embedders.openai_compatible import OpenAICompatibleEmbedder
from treehop.errors import EmbeddingError
out = io.BytesIO()
with zstandard.ZstdCompressor().stream_writer(out, closefd=False) as w:
    zeros = b"\\0" * (16 * 2**20)
    for _ in range(64):
        w.write(zeros)
head = b"HTTP/1.1 200 OK\\r\\nContent-Type: application/json\\r\\nContent-Encoding: zstd\\r\\n"
url, srv = _one_answer_server(head, out.getvalue())
emb = OpenAICompatibleEmbedder("m", base_url=url, api_key="sk-a56-zstd-0123456789")
try:
    emb.embed(["hi"])
except EmbeddingError as exc:
    assert "larger than" in str(exc), exc
"""
    assert peak_memory_mb(probe) < 700  # MB at peak (was ~2,200 for 1 GiB)
