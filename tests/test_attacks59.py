"""Adversarial pass attacks59.

Each test was written failing first (bench/README.md, "Adversarial pass (helper attacks59)").
"""

from __future__ import annotations

import asyncio
import base64
import gzip
import json
import unicodedata
import zlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import Treehop
from treehop._http import _bounded_brotli
from treehop.embedders.openai_compatible import OpenAICompatibleEmbedder
from treehop.errors import EmbeddingError, InvalidTagError, InvalidURIError
from treehop.ingest.records import add_records
from treehop.tags import new_label, normalize_label

from treehop_test_doubles import (
    SAMPLE_TREE,
    BagOfWordsEmbedder,
    peak_memory_mb,
    raw_answer_server,
)

OAUTH = "viking://resources/security/auth/oauth.md"

# -- 1. br and unknown codings inside stacked Content-Encodings ----------------------------------

BR_BOMB_1GIB = zlib.decompress(
    base64.b64decode(
        "eNo7/f+/PYMKw6ONDkXv///4/5+9gcVBRqzh3V/5////M0xg6DjMdGHv/8f//8szCDEURjDs+l7/5/9/ZgcmBT5"
        "uh+//+v//r2fwYDiSyPji3v+P///zM3A2WOgw3P1t/+//f0YFRoF21gXV/49DLdnAUDJqyaglo5aMWjJqyfC0xBw"
        "AxBQ9aA=="
    )
)
"""1 GiB of zeros as brotli (quality 5, 1,617 bytes; stored here through zlib). Made once with
``brotli.Compressor(quality=5)`` over 1,024 MiB of zeros (brotli 1.2.1), so the test needs no
brotli module to send it."""


def _answer(body: bytes, header: str) -> bytes:
    head = (
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        f"Content-Encoding: {header}\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + body


def test_the_br_bomb_decodes_to_a_gibibyte_of_zeros() -> None:
    """The constant is what it says (checked in bounded steps where a module is here)."""
    assert len(BR_BOMB_1GIB) == 1617
    module = _bounded_brotli()
    if module is not None:
        out = module.Decompressor().process(BR_BOMB_1GIB, output_buffer_limit=1 << 20)
        assert len(out) >= 1 << 20 and not out.strip(b"\0")


_PROBE = """
import sys, gzip, zlib
sys.path[:0] = sys.argv[2:]
from test_attacks59 import BR_BOMB_1GIB, _answer
from treehop_test_doubles import raw_answer_server
from treehop.embedders.openai_compatible import OpenAICompatibleEmbedder
from treehop.errors import EmbeddingError
HEADER = {header!r}
if HEADER.startswith("br"):
    body = BR_BOMB_1GIB if HEADER == "br" else gzip.compress(BR_BOMB_1GIB)
else:
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    zeros = b"\\0" * (1 << 20)
    once = b"".join([*(packer.compress(zeros) for _ in range(1024)), packer.flush()])
    body = gzip.compress(once, 9)
url, srv = raw_answer_server(_answer(body, HEADER))
emb = OpenAICompatibleEmbedder("m", base_url=url, api_key="sk-a59-br-0123456789")
try:
    emb.embed(["hi"])
    raise AssertionError("read")
except EmbeddingError as exc:
    print("ERR", str(exc)[:200])
"""


@pytest.mark.parametrize(
    "header",
    [
        "gzip, gzip, br",  # a stacked gzip bomb labelled with a coding httpx may skip
        "gzip, gzip, x-foo",
        "x-foo, gzip, gzip",
        "br",  # 1 GiB of zeros as brotli
        "br, gzip",  # the same, gzipped
    ],
)
def test_a_br_or_unknown_coding_never_unbounds_a_bomb(header: str) -> None:
    """Before: any coding treehop did not decode itself (``br``; a token httpx skips) sent the
    whole answer to httpx's per-chunk decoder -- ``gzip, gzip, br`` of 1 GiB of zeros was
    decoded to 1 GiB in one step; with brotli installed, a 1,617-byte ``br`` answer was
    decoded to 1 GiB (peaks in bench/README.md). Now each is a typed error with the peak
    bounded: refused past the cap, or (no brotli module: ``br`` is passed through as httpx
    does) not JSON. Run in a fresh process, whose peak memory is its own."""
    assert peak_memory_mb(_PROBE.format(header=header)) < 700


def test_a_br_answer_is_read_or_refused_typed() -> None:
    """A well-formed br answer: read where a bounded brotli module is installed, a typed error
    where none is (httpx passes it through undecoded: not JSON)."""
    good = json.dumps({"data": [{"index": 0, "embedding": [0.1, 0.2, 0.3]}]}).encode()
    module = _bounded_brotli()
    # (no module: any br stream will do -- undecoded it is not JSON)
    body = BR_BOMB_1GIB if module is None else module.compress(good)
    for header in ("br", "br, gzip", "gzip, br"):
        coded = body
        if header == "br, gzip":
            coded = gzip.compress(body)
        elif header == "gzip, br":
            coded = module.compress(gzip.compress(good)) if module else body
        url, srv = raw_answer_server(_answer(coded, header))
        try:
            emb = OpenAICompatibleEmbedder("m", base_url=url, api_key="sk-a59-0123456789")
            if module is not None:
                assert emb.embed(["hi"]).shape == (1, 3)
                assert asyncio.run(emb.aembed(["hi"])).shape == (1, 3)
            else:
                with pytest.raises(EmbeddingError):
                    emb.embed(["hi"])
                with pytest.raises(EmbeddingError):
                    asyncio.run(emb.aembed(["hi"]))
            emb.close()
        finally:
            srv.close()


# -- 2. an invisible format character inside a visible new tag --------------------------------

_LOOK_ALIKES = [
    "a\u200bb",  # zero-width space
    "a\u200cb",  # a joiner between ASCII letters
    "ab\u200d",  # a joiner at an end
    "a\u2060b",  # word joiner
    "a\ufeffb",  # BOM
    "a\u00adb",  # soft hyphen
    "a\U000e0041b",  # a tag character
    "\u0645\u06cc\u200b\u062e",  # a zero-width space inside Persian
]


@pytest.mark.parametrize("bad", _LOOK_ALIKES)
def test_a_new_tag_with_an_invisible_format_character_is_refused(tmp_path: Path, bad: str) -> None:
    """``set_tags(add=["a\\u200bb"])`` stored a tag that looks like ``ab`` and is not it (a
    filter or a removal by the visible name missed it). Refused before any write; a tag
    stored before the check is still shown, found by its own label and removable."""
    client = Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None)
    try:
        client.add_resource(str(SAMPLE_TREE / "resources" / "security"))
        before = client.stat(OAUTH).tags
        with pytest.raises(InvalidTagError):
            client.set_tags(OAUTH, add=["fine", bad])
        assert client.stat(OAUTH).tags == before
        with pytest.raises(InvalidTagError):
            client.add_resource("a note", target_uri="viking://resources/n.md", tags=[bad])
        assert client.store.get(["viking://resources/n.md"]) == [None]
        stored = "user:" + normalize_label(bad)
        client.store.update_tags({OAUTH: [*before, stored]})
        assert stored in client.stat(OAUTH).tags
        assert stored not in client.set_tags(OAUTH, remove=[bad])
        assert client.stat(OAUTH).tags == before
    finally:
        client.close()


@pytest.mark.parametrize(
    "label",
    [
        "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",  # Persian, ZWNJ
        "\u0915\u094d\u200d\u0937",  # Devanagari, ZWJ after a virama
        "\U0001f469\u200d\U0001f4bb",  # an emoji ZWJ sequence
    ],
)
def test_a_joiner_that_spells_a_word_is_kept(label: str) -> None:
    assert new_label(label) == normalize_label(label)


@settings(max_examples=500, deadline=None)
@given(
    st.text(alphabet=st.sampled_from("ab\u0645\u062e\u200b\u200c\u200d\u2060\u00ad -"), max_size=12)
    | st.text(max_size=40)
)
def test_a_new_labels_format_characters_are_joiners_between_non_ascii(label: str) -> None:
    try:
        out = new_label(label)
    except InvalidTagError:
        return
    assert out == normalize_label(label)
    for i, ch in enumerate(out):
        if unicodedata.category(ch) == "Cf":
            assert ch in "\u200c\u200d" and 0 < i < len(out) - 1
            assert not out[i - 1].isascii() and not out[i + 1].isascii()


# -- 3. a C1 control or a bidi override in a URI a caller writes at --------------------------------

_UNSHOWN_BITS = ["\x9b31m", "\u202e", "\u2066", "\x85"]


@pytest.mark.parametrize("bad", _UNSHOWN_BITS)
def test_a_new_uri_with_a_c1_control_or_bidi_override_is_refused_before_any_write(
    tmp_path: Path, bad: str
) -> None:
    """``add_resource(text, target_uri="viking://resources/\\\\u202edm.exe.md")`` (or ``name=``,
    ``add_memory(name=)``, a file named so added by its own path, ``add_records``' ``uri``)
    stored a URI that shows as another one (``treehop ls``, ``--json``, MCP, the frameworks);
    ingest already skipped such names under a directory. Refused, nothing written."""
    client = Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None)
    odd = tmp_path / f"x{bad}y.md"
    odd.write_text("# odd\n\na file with an odd name\n")
    try:
        client.add_resource("a note", target_uri="viking://resources/ok.md")
        before = sorted(client.store.iter_uris())
        calls = [
            lambda: client.add_resource("t", target_uri=f"viking://resources/d{bad}x.md"),
            lambda: client.add_resource("t", target_uri=f"viking://resources/a{bad}/b.md"),
            lambda: client.add_resource("t", name=f"n{bad}x.md"),
            lambda: client.add_memory("remember this", name=f"m{bad}x"),
            lambda: client.add_resource(str(odd)),
            lambda: client.add_resource(str(odd), target_uri=f"viking://resources/f{bad}.md"),
            lambda: add_records(
                client,
                [
                    ("t", {"uri": "viking://resources/r1.md"}),
                    ("u", {"uri": f"viking://resources/r{bad}.md"}),
                ],
            ),
        ]
        for call in calls:
            with pytest.raises(InvalidURIError):
                call()
        assert sorted(client.store.iter_uris()) == before
        fine = "viking://resources/\u0645\u06cc\u200c\u062e.md"  # (right-to-left text is fine)
        client.add_resource("t", target_uri=fine)
        assert client.stat(fine).uri == fine
    finally:
        client.close()


@pytest.mark.parametrize("bad", _UNSHOWN_BITS)
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
        assert client.stat(planted).uri == planted
        assert client.remove(planted) == 1
    finally:
        client.close()
