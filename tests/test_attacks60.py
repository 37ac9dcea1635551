"""Adversarial pass attacks60.

Each test was written failing first (bench/README.md, "Adversarial pass (helper attacks60)").
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import Treehop
from treehop.errors import InvalidTagError, InvalidURIError
from treehop.ingest.records import Passage, PassageStore, add_records
from treehop.uri import check_new, unshown_in_new

from treehop_test_doubles import SAMPLE_TREE, BagOfWordsEmbedder, peak_memory_mb

# -- 1 / 2. every writer that makes a URI up refuses what a new URI may not hold ------------------

_BAD_BITS = [
    "\x9b31m",  # C1 CSI
    "\u202e",  # right-to-left override
    "\u2028",  # line separator
    "\u2029",  # paragraph separator
    "\u200b",  # zero-width space
    "\u2060",  # word joiner
    "\ufeff",  # BOM
    "\u00ad",  # soft hyphen
    "\u200e",  # left-to-right mark
    "a\u200cb",  # a joiner between ASCII letters
]


def _writes(client: Treehop, bad: str) -> dict[str, Callable[[], Any]]:
    """Each public write that makes a URI from a caller's string, with ``bad`` in it."""
    store = PassageStore(client)
    under = PassageStore(client, base_uri=f"viking://resources/kb{bad}x")
    return {
        "add_records passage mode, uri": lambda: add_records(
            client,
            [
                ("t", {"uri": f"viking://resources/p{bad}.md"}),
                ("u", {"uri": f"viking://resources/p{bad}.md"}),
            ],
        ),
        "add_records passage mode, source": lambda: add_records(
            client, [("t", {"source": f"d/q{bad}.md"}), ("u", {"source": f"d/q{bad}.md"})]
        ),
        "add_records, source": lambda: add_records(client, [("t", {"source": f"d/s{bad}.md"})]),
        "add_records, a good record then a bad file": lambda: add_records(
            client,
            [
                ("fine", {"uri": "viking://resources/r1.md"}),
                ("u", {"uri": f"viking://resources/r{bad}.md"}),
                ("v", {"uri": f"viking://resources/r{bad}.md"}),
            ],
        ),
        "PassageStore source": lambda: client.run(
            store.aupsert(
                [
                    Passage("fine", {"source": "ok.md"}, "i0"),
                    Passage("hello", {"source": f"x/y{bad}.md"}, "i1"),
                ]
            )
        ),
        "PassageStore base": lambda: client.run(under.aupsert([Passage("hello", {}, "i2")])),
        "PassageStore awrite_file": lambda: client.run(
            store.awrite_file(f"viking://resources/w{bad}.md", [Passage("hello", {}, "i3")])
        ),
        "add_resource target_uri": lambda: client.add_resource(
            "t", target_uri=f"viking://resources/d{bad}x.md"
        ),
        "add_resource name": lambda: client.add_resource("t", name=f"n{bad}x.md"),
        "add_memory name": lambda: client.add_memory("remember this", name=f"m{bad}x"),
    }


@pytest.mark.parametrize("bad", _BAD_BITS)
def test_every_uri_minting_write_refuses_an_unshown_character_before_any_write(
    tmp_path: Path, bad: str
) -> None:
    """Before: ``add_records`` in passage mode (records sharing a ``uri`` or a ``source``)
    and ``PassageStore`` writes (LangChain / LlamaIndex ``add_texts``) stored a URI holding a
    C1 control or a bidi override that ``add_resource`` refused (they never reach
    ``_target_for``); and no writer refused U+2028 / U+2029 or an invisible format
    character (``p\\u200b.md`` shows as ``p.md``). Now each is an ``InvalidURIError`` and
    nothing is written, a batch's good records included."""
    client = Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None)
    try:
        client.add_resource("a note", target_uri="viking://resources/ok.md")
        before = sorted(client.store.iter_uris())
        for name, call in _writes(client, bad).items():
            with pytest.raises(InvalidURIError):
                call()
            assert sorted(client.store.iter_uris()) == before, name
    finally:
        client.close()


@pytest.mark.parametrize("bad", ["\u2028", "\u200b", "\ufeff", "a\u200db"])
def test_a_folders_file_named_so_is_skipped_and_named(tmp_path: Path, bad: str) -> None:
    """A file added through its folder gets a URI from its name: skipped and counted, as a
    name with a C1 control was (an add naming it is refused: the test above)."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "fine.md").write_text("# Fine\n\na fine file\n")
    (src / f"x{bad}y.md").write_text("# Odd\n\nan odd name\n")
    (src / f"d{bad}").mkdir()
    (src / f"d{bad}" / "in.md").write_text("# In\n\ninside an odd folder\n")
    client = Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None)
    try:
        res = client.add_resource(str(src), target_uri="viking://resources/src")
        assert sorted(client.store.iter_uris()) == [
            "viking://resources",
            "viking://resources/src",
            "viking://resources/src/fine.md",
        ]
        assert len(res.skipped_names) == 1 and len(res.skipped_dirs) == 1
        assert "\u2028" not in res.skipped_names[0]  # (shown escaped, as C1 names are)
    finally:
        client.close()


@pytest.mark.parametrize(
    "name",
    [
        "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645.md",  # Persian, ZWNJ
        "\u0915\u094d\u200d\u0937.md",  # Devanagari, ZWJ after a virama
        "\U0001f469\u200d\U0001f4bb.md",  # an emoji ZWJ sequence
        "\u05e9\u05dc\u05d5\u05dd.md",  # right-to-left text
        "caf\u00e9 notes.md",
    ],
)
def test_a_joiner_that_spells_a_name_is_kept(tmp_path: Path, name: str) -> None:
    client = Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None)
    try:
        uri = f"viking://resources/{name}"
        add_records(client, [("one part", {"uri": uri}), ("two parts", {"uri": uri})])
        client.add_resource("t", target_uri=f"viking://resources/r-{name}")
        assert client.stat(uri).uri == uri
        src = tmp_path / "src"
        src.mkdir()
        (src / name).write_text("# A\n\na file\n")
        client.add_resource(str(src), target_uri="viking://resources/src")
        assert client.stat(f"viking://resources/src/{name}").uri.endswith(name)
    finally:
        client.close()


@pytest.mark.parametrize("bad", ["\u2028", "\u200b", "\ufeff", "a\u200cb"])
def test_a_stored_uri_with_such_a_character_stays_readable_and_removable(
    tmp_path: Path, bad: str
) -> None:
    client = Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None)
    try:
        client.add_resource("an old note", target_uri="viking://resources/old.md")
        node = client.store.get(["viking://resources/old.md"])[0]
        assert node is not None
        planted = f"viking://resources/o{bad}ld.md"
        vec = client.store.get_vectors([node.uri])
        client.store.upsert([node.model_copy(update={"uri": planted})], vec)
        client.save()
        assert "an old note" in client.read(planted)
        assert planted in [e.uri for e in client.ls("viking://resources")]
        assert [m.uri for m in client.find("old note", target_uri=planted).contexts()] == [planted]
        assert client.remove(planted) == 1
    finally:
        client.close()


@settings(max_examples=400, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from("ab\u0645\u062e\u200b\u200c\u200d\u2060\u2028\u00ad\u202e/."),
        max_size=12,
    )
    | st.text(max_size=40)
)
def test_check_new_keeps_only_visible_names(tail: str) -> None:
    """What ``check_new`` lets through holds no C1 / line separator / bidi override and no
    format character but a joiner between two non-ASCII characters; what it refuses is an
    ``InvalidURIError``, nothing else."""
    uri = "viking://resources/" + tail
    try:
        out = check_new(uri)
    except InvalidURIError:
        assert unshown_in_new(uri) is not None
        return
    assert out == uri
    for i, ch in enumerate(out):
        assert (
            not ("\x80" <= ch <= "\x9f") and ch not in "\u2028\u2029\u202a\u202b\u202c\u202d\u202e"
        )
        if unicodedata.category(ch) == "Cf":
            assert ch in "\u200c\u200d" and 0 < i < len(out) - 1
            assert not out[i - 1].isascii() and not out[i + 1].isascii()


# -- 5. find(target_uri=...) naming a chunk: chunk diffusion stays inside the targets ------------

ROOT = "viking://resources/src"
FOLDER = f"{ROOT}/fruit"
GUIDE = f"{FOLDER}/guide.md"
APPLES = f"{FOLDER}/apples.md"


@pytest.fixture(scope="module")
def fruit(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Treehop]:
    tmp = tmp_path_factory.mktemp("fruit")
    src = tmp / "src" / "fruit"
    src.mkdir(parents=True)
    (src / "apples.md").write_text("# Apples\nApples grow on trees in orchards and keep well.\n")
    (src / "bananas.md").write_text("# Bananas\nBananas ripen in the tropical sun.\n")
    sections = "\n\n".join(
        f"## Section {i}\n" + f"Topic{i} fruit trees orchard harvest words. " * 40 for i in range(6)
    )
    (src / "guide.md").write_text("# Guide\n\n" + sections)
    (tmp / "src" / "veg").mkdir()
    (tmp / "src" / "veg" / "kale.md").write_text("# Kale\nKale is a leafy green fruit trees.\n")
    with Treehop(embedder=BagOfWordsEmbedder(), tagger=None) as client:
        client.add_resource(tmp / "src", target_uri=ROOT)
        yield client


def _inside(uri: str, targets: list[str]) -> bool:
    return any(uri == t or ("#" not in t and uri.startswith((t + "/", t + "#"))) for t in targets)


_TARGETS = [
    [f"{GUIDE}#chunk-2"],
    [f"{GUIDE}#chunk-1", f"{GUIDE}#chunk-4"],
    [APPLES, f"{GUIDE}#chunk-3"],
    [f"{GUIDE}#chunk-2"] * 100,
]


@pytest.mark.parametrize("targets", _TARGETS)
@pytest.mark.parametrize("call", ["find", "search", "find_many"])
@pytest.mark.parametrize(
    "opts", [{"chunk_diffusion_count": 2}, {"chunk_diffusion_count": 5, "chunk_group": True}]
)
def test_chunk_diffusion_adds_no_chunk_outside_the_targets(
    fruit: Treehop, targets: list[str], call: str, opts: dict[str, Any]
) -> None:
    """Before: ``find("...", target_uri=guide#chunk-2, chunk_diffusion_count=2)`` returned
    chunks 0, 1, 3 and 4 beside the target (as ``search`` and ``find_many`` did): a scope
    naming one chunk leaked its neighbours. Now a neighbour outside every target is not
    added; a target's own hits are still returned."""
    q = "fruit trees harvest Topic2 Topic3"
    if call == "find_many":
        results = fruit.find_many([q, "Topic1 orchard words"], target_uri=targets, limit=10, **opts)
    else:
        results = [getattr(fruit, call)(q, target_uri=targets, limit=10, **opts)]
    for res in results:
        uris = [m.uri for m in res.contexts()]
        assert uris and len(uris) == len(set(uris))
        assert [u for u in uris if not _inside(u, targets)] == []


def test_chunk_diffusion_still_adds_neighbours_inside_a_document_target(fruit: Treehop) -> None:
    """The control: a document (or folder) target still diffuses to the chunks beside a hit."""
    res = fruit.find("Topic2", target_uri=GUIDE, limit=1, chunk_diffusion_count=1)
    uris = [m.uri for m in res.contexts()]
    assert len(uris) == 3 and all(u.startswith(GUIDE + "#chunk-") for u in uris)
    both = fruit.find(
        "Topic2", target_uri=[f"{GUIDE}#chunk-2", GUIDE], limit=1, chunk_diffusion_count=1
    )
    assert len(both.contexts()) == 3


# -- 3. two tags of one node that differ only by a joiner ----------------------------------------

OAUTH = "viking://resources/security/auth/oauth.md"
_WITH_ZWNJ = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"  # Persian, spelt with a ZWNJ
_WITHOUT = "\u0645\u06cc\u062e\u0648\u0627\u0647\u0645"  # the same letters without it
_ZWJ_ALIKE = "\u0645\u06cc\u200d\u062e\u0648\u0627\u0647\u0645"  # a ZWJ where the ZWNJ was


@pytest.fixture
def security(tmp_path: Path) -> Iterator[Treehop]:
    client = Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None)
    client.add_resource(str(SAMPLE_TREE / "resources" / "security"))
    try:
        yield client
    finally:
        client.close()


@pytest.mark.parametrize(
    ("stored", "added"), [(_WITH_ZWNJ, _WITHOUT), (_WITHOUT, _WITH_ZWNJ), (_WITH_ZWNJ, _ZWJ_ALIKE)]
)
def test_a_tag_that_differs_from_the_nodes_own_only_by_a_joiner_is_refused(
    security: Treehop, stored: str, added: str
) -> None:
    """Before: ``set_tags(add=[\\u0645\\u06cc\\u062e...])`` on a node tagged with the same word
    spelt with a ZWNJ stored a second tag that looks like the first (a removal or a filter by
    the one a reader sees missed the other). Now an ``InvalidTagError`` and nothing written;
    respelling (removing the old one in the same call) works, and the stored one is still
    found and removable by its own label."""
    security.set_tags(OAUTH, add=[stored])
    before = security.stat(OAUTH).tags
    with pytest.raises(InvalidTagError):
        security.set_tags(OAUTH, add=["fine", added])
    assert security.stat(OAUTH).tags == before
    assert [m.uri for m in security.find("oauth", tags=[stored]).contexts()] == [OAUTH]
    tags = security.set_tags(OAUTH, add=[added], remove=[stored])
    assert f"user:{added}" in tags and f"user:{stored}" not in tags
    assert f"user:{added}" not in security.set_tags(OAUTH, remove=[added])


@pytest.mark.parametrize("tags", [[_WITH_ZWNJ, _WITHOUT], f"{_WITHOUT};{_ZWJ_ALIKE}"])
def test_one_tags_argument_holding_two_look_alikes_is_refused(security: Treehop, tags: Any) -> None:
    before = sorted(security.store.iter_uris())
    with pytest.raises(InvalidTagError):
        security.add_resource("a note", target_uri="viking://resources/n.md", tags=tags)
    with pytest.raises(InvalidTagError):
        security.set_tags(OAUTH, add=tags)
    with pytest.raises(InvalidTagError):
        add_records(security, [("a record", {"uri": "viking://resources/r.md"})], tags=tags)
    assert sorted(security.store.iter_uris()) == before
    assert not any("\u062e" in t for t in security.stat(OAUTH).tags)


def test_labels_that_only_look_alike_on_other_nodes_are_left_alone(security: Treehop) -> None:
    """The rule is per node: another node may carry the other spelling (as before)."""
    other = "viking://resources/security/auth"
    security.set_tags(OAUTH, add=[_WITH_ZWNJ])
    assert f"user:{_WITHOUT}" in security.set_tags(other, add=[_WITHOUT])


# -- 4. the VikingDB SDK's answers read bounded -------------------------------------------------

VOLC_AK = "AKLTattacks60AccessKey0123456789"
VOLC_SK = "YXR0YWNrczYwU2VjcmV0S2V5MDEyMzQ1Njc4OQ=="


def answer_server(answer: Callable[[], Iterator[bytes]]) -> tuple[str, Any]:
    """A loopback HTTP server that reads each whole request (head and ``Content-Length``
    body: ``requests`` sends them apart, and closing on an unread body resets the
    connection) and sends the chunks ``answer()`` yields. Returns ``host:port`` and the
    listening socket (``close()`` it to stop)."""
    import contextlib
    import socket
    import threading

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)

    def serve() -> None:
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            with conn, contextlib.suppress(OSError):
                buf = b""
                while b"\r\n\r\n" not in buf:
                    got = conn.recv(65536)
                    if not got:
                        break
                    buf += got
                head, _, rest = buf.partition(b"\r\n\r\n")
                sizes = [
                    int(line.split(b":", 1)[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                ]
                while sizes and len(rest) < sizes[0]:
                    got = conn.recv(65536)
                    if not got:
                        break
                    rest += got
                for chunk in answer():
                    conn.sendall(chunk)

    threading.Thread(target=serve, daemon=True).start()
    return f"127.0.0.1:{srv.getsockname()[1]}", srv


def http_answer(body: bytes, coding: str | None) -> Iterator[bytes]:
    head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
    if coding:
        head += f"Content-Encoding: {coding}\r\n"
    yield (head + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode() + body


def gzip_of_spaces(mib: int, times: int = 1) -> bytes:
    """``mib`` MiB of spaces gzipped ``times`` times (1 GiB once: ~1 MB)."""
    import gzip
    import zlib

    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    spaces = b" " * (1 << 20)
    body = b"".join([*(packer.compress(spaces) for _ in range(mib)), packer.flush()])
    for _ in range(times - 1):
        body = gzip.compress(body, 9)
    return body


def knowledge_source(host: str) -> Any:
    from treehop._http import RetryPolicy
    from treehop.vikingdb_knowledge import VikingDBKnowledgeSource

    return VikingDBKnowledgeSource(
        "kb",
        host=host,
        scheme="http",
        ak=VOLC_AK,
        sk=VOLC_SK,
        timeout_s=60,
        retry=RetryPolicy(max_retries=1, backoff_s=0.01, max_backoff_s=0.02),
        deadline_s=None,
    )


_VK_PROBE = """
import sys
sys.path[:0] = sys.argv[2:]
from test_attacks60 import answer_server, gzip_of_spaces, http_answer, knowledge_source
from treehop.errors import StoreError
KIND = {kind!r}
if KIND == "plain":
    spaces = b" " * (1 << 20)
    def answer():
        yield b"HTTP/1.1 200 OK\\r\\nContent-Type: application/json\\r\\n"
        yield b"Connection: close\\r\\n\\r\\n"
        for _ in range(1024):
            yield spaces
else:
    body = gzip_of_spaces(1024, 2 if KIND == "gzip, gzip" else 1)
    def answer():
        return http_answer(body, KIND)
host, srv = answer_server(answer)
source = knowledge_source(host)
try:
    source.find("hello")
    raise AssertionError("read")
except StoreError as exc:
    assert "larger than" in str(exc), str(exc)
"""


@pytest.mark.parametrize("kind", ["gzip", "gzip, gzip", "plain"])
def test_a_knowledge_bases_huge_or_bomb_answer_is_refused_bounded(kind: str) -> None:
    """Before: the SDK read ``response.content`` whole, decoded by urllib3 without a cap: a
    ~1 MB gzip answer of 1 GiB of spaces took ``find()`` to 3.2 GB peak (``gzip, gzip``:
    4.2 GB) before a JSON error; a 1 GiB plain answer was read whole (the deadline does not
    stop the SDK's thread). Now each is a ``VikingDBError`` ("larger than") at 64 MiB, peak
    bounded. Run in a fresh process, whose peak memory is its own."""
    assert peak_memory_mb(_VK_PROBE.format(kind=kind)) < 700


def test_a_knowledge_bases_coded_answer_is_still_read(tmp_path: Path) -> None:
    """The control: a well-formed gzip (and ``gzip, gzip``) answer is decoded and read, and a
    broken gzip body is a typed error."""
    import gzip
    import json

    from treehop.stores.vikingdb import VikingDBError

    point = {
        "point_id": "d1_0",
        "content": "the rollout waits for ready pods",
        "chunk_id": 0,
        "score": 0.9,
        "doc_info": {"doc_id": "d1", "doc_name": "deploy.md"},
    }
    good = json.dumps({"code": 0, "data": {"count": 1, "result_list": [point]}}).encode()
    for coding, body in [
        ("gzip", gzip.compress(good)),
        ("gzip, gzip", gzip.compress(gzip.compress(good))),
        (None, good),
    ]:
        host, srv = answer_server(lambda body=body, coding=coding: http_answer(body, coding))
        source = knowledge_source(host)
        try:
            found = source.find("rollout")
            assert [m.content for m in found.contexts()] == [point["content"]]
        finally:
            source.close()
            srv.close()
    host, srv = answer_server(lambda: http_answer(b"not deflate at all", "deflate"))
    source = knowledge_source(host)
    try:
        with pytest.raises(VikingDBError, match="undecodable"):
            source.find("rollout")
    finally:
        source.close()
        srv.close()
