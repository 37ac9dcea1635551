"""Adversarial pass attacks57.

Each test was written failing first (bench/README.md, "Adversarial pass (helper attacks57)").
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import itertools
import json
import logging
import math
import os
import re
import subprocess
import sys
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from test_vikingdb_store import AK, SK, make_store
from treehop import Treehop
from treehop._http import RetryPolicy
from treehop.embedders.openai_compatible import OpenAICompatibleEmbedder
from treehop.errors import RerankError, StoreError, TreehopError
from treehop.integration_kit import _GLUED_NAV, page_text
from treehop.intent_analysis import IntentAnalyzer, PlanParseError, _fenced, extract_json
from treehop.llm import ChatMessage
from treehop.llm.openai_compatible import OpenAICompatibleLLM
from treehop.models import ContextType, Node
from treehop.redaction import redact
from treehop.rerankers.http_rerank import HTTPReranker
from treehop.rerankers.llm_rerank import LLMReranker, parse_scores
from treehop.stores._state_blobs import MAX_STATE_PARTS, DamagedHead, checked_head
from treehop.stores.base import Scope
from treehop.stores.vikingdb import uri_key
from treehop.tagging.ingest import IngestTagger
from treehop.tagging.llm_tagger import LLMTagger, parse_answer

from fake_servers.fault_server import FaultServer
from fake_servers.openai_chat import FakeOpenAIChatServer, Reply
from fake_servers.openai_embeddings import FakeOpenAIEmbeddingsServer
from fake_servers.rerank_servers import FakeRerankServer
from fake_servers.vikingdb_knowledge_setup import (
    costs_point,
    knowledge_server,
    make_knowledge_source,
)
from fake_servers.vikingdb_server import FakeVikingDB
from treehop_test_doubles import BagOfWordsEmbedder, peak_memory_mb, raw_answer_server


@pytest.fixture
def chat() -> Iterator[FakeOpenAIChatServer]:
    with FakeOpenAIChatServer() as srv:
        yield srv


def _llm(server: FakeOpenAIChatServer) -> OpenAICompatibleLLM:
    return OpenAICompatibleLLM(
        "fake-model", base_url=server.base_url, api_key="sk-attacks57", max_retries=0
    )


# -- 1. the planner's fence regex, cubic in a blank run -----------------------------------------

_OLD_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n?(.*?)```", re.DOTALL)


@pytest.mark.parametrize(
    "answer",
    ["```" + " " * 20_000 + "x", "```" + " \t" * 10_000 + "x", "```json" + " " * 20_000 + "x"],
    ids=["spaces", "tabs", "json-tag"],
)
def test_a_blank_run_after_a_fence_is_parsed_in_linear_time(answer: str) -> None:
    """``re.search(r"```[ \\t]*(?:json|JSON)?[ \\t]*\\n?(.*?)```")`` split the blank run after
    an unclosed fence between its two ``[ \\t]*`` in every way and rescanned the rest each
    time: 1,000 spaces took 1.9 s, 2,000 took 25 s (20,000: hours), synchronously on the
    event loop once the model had answered, so no planner deadline cut it."""
    t0 = time.thread_time()  # (CPU time of this thread: a loaded machine's waits do not count)
    with pytest.raises(PlanParseError):
        extract_json(answer)
    assert time.thread_time() - t0 < 1.0


def test_the_planner_falls_back_at_once_on_such_an_answer(chat: FakeOpenAIChatServer) -> None:
    chat.enqueue(Reply.chat("```" + " " * 20_000 + "x"))
    llm = _llm(chat)
    t0 = time.perf_counter()
    result = asyncio.run(IntentAnalyzer(llm, timeout_s=5.0).analyze("what is alpha?"))
    llm.close()
    assert time.perf_counter() - t0 < 10.0  # (the regex took 25 s and more; was < 3.0)
    assert result.queries  # the fallback plan


_FENCE_PIECES = ["```", "`", " ", "\t", "\n", "json", "JSON", "Json", "x", "{", "}", '"q"', ":1"]


def _fence_as_before(text: str) -> None:
    old = _OLD_FENCE.search(text)
    assert _fenced(text) == (old.group(1) if old else None), repr(text)


def test_the_fence_is_found_as_the_regex_found_it_for_every_short_answer() -> None:
    """Every answer of at most five pieces (402,234 texts, ~0.6 s): each header the regex
    reads (blanks, a tag, blanks, a newline: "```", " ", "json", " ", "```" is five) and each
    place a closing fence can stand, which 3,000 random lists of up to 14 pieces (stop 75:
    7.7 s of CPU) sampled. Longer answers: the property test below."""
    for size in range(6):
        for pieces in itertools.product(_FENCE_PIECES, repeat=size):
            _fence_as_before("".join(pieces))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_FENCE_PIECES), min_size=6, max_size=14))
def test_the_fence_is_found_as_the_regex_found_it(pieces: list[str]) -> None:
    _fence_as_before("".join(pieces))


# -- 2. a grade keyed by a digit int() refuses ---------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    ['{"\u00b2": 5}', '{"0": 5, "\u00b9": 3}', '{"' + "1" * 5000 + '": 5}'],
    ids=["superscript", "superscript-second", "5000-digits"],
)
def test_an_llm_grade_keyed_by_an_odd_digit_is_a_rerank_error(
    chat: FakeOpenAIChatServer, answer: str
) -> None:
    """``str.isdigit`` takes "²" (a digit to Unicode, not to ``int``) and a key of any length
    (``int`` refuses past 4,300 digits): the model's answer escaped a raw ``ValueError`` out
    of ``LLMReranker.rerank``."""
    with pytest.raises(RerankError):
        parse_scores(answer, 2)
    chat.enqueue(Reply.chat(answer))
    llm = _llm(chat)
    with pytest.raises(RerankError):
        LLMReranker(llm).rerank("q", ["a", "b"])
    llm.close()


def test_grades_keyed_by_numbers_are_still_read() -> None:
    assert parse_scores('{"1": 5, "0": 10}', 2) == [1.0, 0.5]
    assert parse_scores('{" 0 ": 2}', 1) == [0.2]
    assert parse_scores('{"\u0660": 3}', 1) == [0.3]  # an Arabic-Indic zero is a number


@pytest.mark.parametrize(
    "labels",
    [{"\u00b2": ["odd"]}, {"1" * 5000: ["long"]}],
    ids=["superscript", "5000-digits"],
)
def test_an_llm_tag_answer_keyed_by_an_odd_digit_keeps_the_ingest_going(
    chat: FakeOpenAIChatServer, tmp_path: Path, labels: dict[str, Any]
) -> None:
    """The same ``isdigit`` / ``int`` pair in the LLM tagger's parser: the ``ValueError``
    escaped ``add_resource`` (the batch's tags are written with its nodes)."""
    assert parse_answer(json.dumps({"labels": labels}), 2, 3) == {}
    chat.enqueue(Reply.chat(json.dumps({"labels": {**labels, "1": ["kept"]}})))
    with Treehop(
        tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=LLMTagger(_llm(chat))
    ) as th:
        th.add_resource("alpha beta gamma", target_uri="viking://resources/a.md")
        assert "llm:kept" in th.stat("viking://resources/a.md").tags


# -- 3. a remote store's damaged state head ----------------------------------------------------


@pytest.mark.parametrize(
    "head",
    [
        "[" * 100_000,
        "not json",
        "[]",
        '{"inline": "!!!"}',
        '{"inline": 5}',
        '{"gen": 1, "parts": "x"}',
        '{"parts": 2}',
        '{"gen": "g", "parts": 1e400}',
        '{"gen": "g", "parts": 100000000}',
    ],
    ids=["deep", "text", "list", "not-b64", "inline-int", "parts-str", "no-gen", "inf", "1e8"],
)
def test_a_damaged_vikingdb_state_head_is_a_store_error_a_write_repairs(head: str) -> None:
    """A VikingDB state head row is parsed by the store: a damaged one escaped a raw
    ``RecursionError`` / ``JSONDecodeError`` / ``binascii.Error`` / ``KeyError`` /
    ``OverflowError`` from ``get_state`` (sessions, tagger statistics, ingest manifests all
    read there), and ``parts: 100000000`` made the read build 10^8 part ids and fetch them
    (still running after 5 minutes). ``put_state`` read the same head first, so no write
    could replace it."""
    with FakeVikingDB(ak=AK, sk=SK) as srv:
        store = make_store(srv)
        store.put_state("sessions/x", b'{"a": 1}')
        srv.collections["nodes"].rows["s" + uri_key("sessions/x")]["node"] = head
        t0 = time.perf_counter()
        with pytest.raises(StoreError, match="damaged"):
            store.get_state("sessions/x")
        assert time.perf_counter() - t0 < 10.0  # (it ran 5 minutes and more; was < 2.0)
        store.put_state("sessions/x", b"rewritten")
        assert store.get_state("sessions/x") == b"rewritten"


_FIELD = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=True),
    st.text(max_size=8),
    st.text(alphabet="AQIDBA=", max_size=12),
    st.lists(st.integers(), max_size=2),
)


@settings(max_examples=500, deadline=None)
@given(inline=_FIELD, gen=_FIELD, parts=_FIELD, sha=_FIELD)
def test_a_head_row_is_a_head_or_damaged(inline: Any, gen: Any, parts: Any, sha: Any) -> None:
    try:
        head = checked_head("k", inline=inline, gen=gen, parts=parts, sha256=sha)
    except DamagedHead:
        return
    assert head.sha256 is None or isinstance(head.sha256, str)
    if head.inline is None:
        assert 0 <= head.parts <= MAX_STATE_PARTS and isinstance(head.gen, str)


@pytest.mark.parametrize(
    "meta",
    [b"[" * 100_000, b"\xff\xfe", b"[1, 2]", b"nope", b'{"a": ' + b"9" * 5000 + b"}"],
    ids=["deep", "not-utf8", "list", "text", "5000-digits"],
)
def test_a_damaged_vikingdb_meta_is_a_store_error_at_open(meta: bytes) -> None:
    """The store's saved meta was read with a bare ``json.loads`` at open: a raw
    ``RecursionError`` / ``JSONDecodeError`` / ``ValueError`` escaped ``VikingDBStore(...)``
    (and so ``Treehop(store=...)``), and a JSON list was kept as the meta."""
    with FakeVikingDB(ak=AK, sk=SK) as srv:
        make_store(srv)._put_blob("\x00meta", meta)
        with pytest.raises(StoreError, match="unreadable treehop meta"):
            make_store(srv)


# -- 4. a flattened page's glued navigation header, cubic in its blank runs ---------------------

_OLD_GLUED_NAV = re.compile(
    r"(?P<title>[^\n]{1,160}?)(?P=title)?\s*Prev\s*Up\s*(?P<part>[^\n]{0,160}?)\s*Home\s*Next"
)


@pytest.mark.parametrize(
    "first_line",
    [
        "a" + " " * 150 + "Prev Up" + " " * 440,
        "a" + " " * 150 + "Prev Up" + " " * 100 + "x" + " " * 300,
        "a " * 75 + "Prev Up" + " \t" * 200,
    ],
    ids=["blanks", "blanks-x-blanks", "pairs"],
)
def test_a_flattened_pages_first_line_is_read_in_linear_time(first_line: str) -> None:
    """``page_text`` of a document whose metadata names an HTML page (what LangChain's and
    LlamaIndex's vector stores and loaders call for every such document) matched its first
    line against ``_GLUED_NAV``, whose blank runs backtracked against each other for every
    title length: 18-24 s for the first line, 2.8 s for the second."""
    t0 = time.thread_time()  # (CPU time of this thread: a loaded machine's waits do not count)
    out = page_text(first_line + "\nthe page's body text", {"source": "guide/page.html"})
    assert time.thread_time() - t0 < 1.0
    assert "the page's body text" in out


_NAV_PIECES = ["a", "b", "ab", " ", "\t", "\u3000", "Prev", "Up", "Home", "Next", "P", "\n"]


def _glued_as_before(text: str) -> None:
    old, new = _OLD_GLUED_NAV.match(text), _GLUED_NAV.match(text)
    want = (old.group("title"), old.end()) if old else None
    assert ((new.group("title"), new.end()) if new else None) == want, repr(text)


# what can stand before and between the four words: nothing, blank runs of each kind, a word
# glued or spaced (a blank inside it and after it), a line break alone and inside words, a
# stray "P", a fifth nav word
_NAV_GAPS = ["", " ", "\t \u3000", "a", " a b ", "\n", "a\nb", "P ", " Prev"]
_NAV_PADS = [0, 1, 159, 160, 161, 170]


def test_the_glued_header_matches_as_before_for_every_header_shape() -> None:
    """Every header of the four words in order with one of nine gaps before each (6,561
    shapes), after 0, 1, 159-161 and 170 characters of title (each side of the title's
    160-character bound, said once or twice): 39,366 texts, ~0.9 s. The random
    lists below (stop 76: 3,000 of them, 6.0 s of CPU) built a match only when Prev, Up,
    Home and Next fell in order among 14 pieces (helper ci77)."""
    words = ("Prev", "Up", "Home", "Next")
    for gaps in itertools.product(_NAV_GAPS, repeat=4):
        header = "".join(g + w for g, w in zip(gaps, words, strict=True))
        for pad in _NAV_PADS:
            _glued_as_before("x" * pad + header)


@settings(max_examples=300, deadline=None)
@given(
    st.integers(min_value=0, max_value=170),
    st.lists(st.sampled_from(_NAV_PIECES), max_size=14),
)
def test_the_glued_header_matches_as_before(pad: int, pieces: list[str]) -> None:
    _glued_as_before("x" * pad + "".join(pieces))


# -- 5. the keyword tagger's statistics and another process's documents ------------------------


def test_a_long_lived_client_keeps_another_process_documents_in_the_statistics(
    tmp_path: Path,
) -> None:
    """The keyword tagger read the index's statistics (document count, document
    frequencies) once per client and saved its own counts over them at each write: a
    process that added a document after another process (a ``treehop index`` run beside a
    server) had indexed one dropped that one from the statistics (3 documents stored,
    ``n_docs`` 2), so every later automatic tag was computed as if it were not there."""
    index = tmp_path / "idx"
    first = Treehop(index, embedder=BagOfWordsEmbedder(), reader_processes=0)
    first.add_resource("kubernetes helm rolling deploys", target_uri="viking://resources/d0.md")
    code = (
        "from treehop import Treehop\n"
        "from treehop_test_doubles import BagOfWordsEmbedder\n"
        f"with Treehop({str(index)!r}, embedder=BagOfWordsEmbedder(), reader_processes=0) as b:\n"
        "    b.add_resource('kafka topics feed the nightly warehouse',"
        " target_uri='viking://resources/d1.md')\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=120)
    first.add_resource("pager rotation and alert escalation", target_uri="viking://resources/d2.md")
    first.close()
    with Treehop(index, embedder=BagOfWordsEmbedder(), reader_processes=0) as fresh:
        stats = IngestTagger()._get(fresh.store)
        assert stats.n_docs == 3
        # the same statistics as one process adding the three documents in that order
        solo = Treehop(tmp_path / "solo", embedder=BagOfWordsEmbedder(), reader_processes=0)
        for uri in ("d0.md", "d1.md", "d2.md"):
            solo.add_resource(
                fresh.read(f"viking://resources/{uri}"), target_uri=f"viking://resources/{uri}"
            )
        want = IngestTagger()._get(solo.store)
        assert (stats.n_docs, stats.vocabulary_size) == (want.n_docs, want.vocabulary_size)
        solo.close()


# -- 6. a key in a base URL's query, in httpx's request log -------------------------------------


@pytest.mark.parametrize(
    "query",
    ["?key=AIzaSyLeakKey0123456789", "?code=AzFuncLeak0123456789", "?subscription-key=SubLeak0123"],
    ids=["google-key", "azure-functions-code", "subscription-key"],
)
def test_a_key_in_a_base_urls_query_never_reaches_the_log(
    caplog: pytest.LogCaptureFixture, query: str
) -> None:
    """httpx logs each request's URL at INFO ("HTTP Request: POST http://h/v1?key=AIza...");
    the log filter redacted with :func:`redact`, which knew ``api_key=`` and credential-named
    assignments but not a URL's ``?key=`` / ``?code=`` parameters (only ``redact_url``, used
    for reprs and errors, masked those): every request of the embedder, the chat model and
    the HTTP reranker put the key into an application's log."""
    body = json.dumps(
        {
            "data": [{"index": 0, "embedding": [0.1, 0.2]}],
            "choices": [{"message": {"role": "assistant", "content": "hi"}}],
            "results": [{"index": 0, "relevance_score": 0.5}],
        }
    )
    secret = query.split("=", 1)[1]
    fast = RetryPolicy(max_retries=0, backoff_s=0.01, max_backoff_s=0.05)
    with caplog.at_level(logging.DEBUG), FaultServer("wrong_len", {"wrong_len": body}) as srv:
        for call in (
            lambda: OpenAICompatibleEmbedder(
                "m", base_url=srv.base_url + "/v1" + query, retry=fast
            ).embed(["x"]),
            lambda: OpenAICompatibleLLM(
                "m", base_url=srv.base_url + "/v1" + query, max_retries=0
            ).complete([ChatMessage(role="user", content="q")]),
            lambda: HTTPReranker(base_url=srv.base_url + query, model="m", retry=fast).rerank(
                "q", ["a"]
            ),
        ):
            with contextlib.suppress(TreehopError):
                call()
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "HTTP Request" in logged
    assert secret not in logged
    assert (
        redact(f"GET https://h/v1{query}&alt=json")
        == f"GET https://h/v1{query.split('=')[0]}=***&alt=json"
    )


# -- 7. a VikingDB search answer's vector --------------------------------------------------------


@pytest.mark.parametrize("vector", [{}, [1e400, 0.0, 0.0, 0.0]], ids=["object", "infinite"])
def test_a_vikingdb_search_answers_malformed_vector_is_a_store_error(vector: Any) -> None:
    """A hybrid search reads each hit's dense vector from the answer to split its score:
    a vector answered as ``{}`` escaped a raw ``TypeError`` from ``search``, and one holding
    ``1e400`` (infinite as a float) made the hit's scores NaN."""
    with FakeVikingDB(ak=AK, sk=SK) as srv:
        store = make_store(srv, hybrid=True, dim=4)
        nodes = [
            Node(
                uri=f"viking://resources/d{i}.md",
                parent_uri="viking://resources",
                context_type=ContextType.RESOURCE,
                level=2,
                is_leaf=True,
                content=text,
            )
            for i, text in enumerate(["kubernetes rollout", "oauth token validation"])
        ]
        store.upsert(nodes, np.eye(4, dtype=np.float32)[:2])
        q = np.array([1.0, 0.1, 0.0, 0.0], np.float32)
        good = store.search(q, Scope(), 2, query_text="oauth tokens", dense_weight=0.3)
        assert all(math.isfinite(h.score) for h in good)
        srv.collections["nodes"].rows[uri_key(nodes[1].uri)]["vector"] = vector
        with pytest.raises(StoreError, match="vector"):
            store.search(q, Scope(), 2, query_text="oauth tokens", dense_weight=0.3)


# -- 8. a base URL with a query string ----------------------------------------------------------

_QUERY = "?api-version=2024-06-01&key=AIzaSyQueryKey0123456789"


def test_the_route_goes_before_a_base_urls_query() -> None:
    """The clients appended their route to the whole base URL: ``https://h/v1?key=K`` was
    sent as ``/v1?key=K/chat/completions`` (Azure's ``?api-version=``, Google's ``?key=``):
    the request went to the wrong path with the route glued onto the key."""
    with FakeOpenAIChatServer() as chat:
        chat.enqueue(Reply.chat("hi"))
        llm = OpenAICompatibleLLM("m", base_url=chat.base_url + _QUERY, max_retries=0)
        assert llm.complete([ChatMessage(role="user", content="q")]) == "hi"
        llm.close()
        assert chat.requests[-1].path == "/v1/chat/completions" + _QUERY
        chat.enqueue(Reply.chat("hi"))
        llm = OpenAICompatibleLLM("m", base_url=chat.base_url + "#frag", max_retries=0)
        assert llm.complete([ChatMessage(role="user", content="q")]) == "hi"
        llm.close()
        assert chat.requests[-1].path == "/v1/chat/completions"
    with FakeOpenAIEmbeddingsServer(dim=4) as emb_srv:
        emb = OpenAICompatibleEmbedder("m", base_url=emb_srv.base_url + "/" + _QUERY)
        assert emb.embed(["x"]).shape == (1, 4)
        assert emb_srv.requests[-1].path == "/v1/embeddings" + _QUERY
        emb.close()
    with FakeRerankServer() as rr_srv:
        rr = HTTPReranker(base_url=rr_srv.base_url + "/v2" + _QUERY, model="m")
        assert len(rr.rerank("q", ["a", "b"])) == 2
        assert rr_srv.requests[-1].path == "/v2/rerank" + _QUERY
        rr.close()


@pytest.mark.parametrize(
    ("path", "secret"),
    [
        ("/v1?key=AIzaSyEchoedKey0123456789", "AIzaSyEchoedKey0123456789"),
        ("/v1?code=FuncEchoedKey0123456789", "FuncEchoedKey0123456789"),
        ("@/v1", "PwEchoed0123456789"),
    ],
    ids=["query-key", "query-code", "userinfo"],
)
def test_a_key_in_the_base_url_echoed_by_the_server_is_masked(path: str, secret: str) -> None:
    """A credential written into the base URL was never registered: the URL was shown
    through ``redact_url``, but a server's 401 quoting the key it got ("API key not valid:
    AIza...") put it into the ``LLMError`` whole."""
    with FakeOpenAIChatServer() as chat:
        root = chat.base_url.removesuffix("/v1")
        if path.startswith("@"):
            url = root.replace("http://", f"http://user:{secret}@") + path[1:]
        else:
            url = root + path
        chat.enqueue(Reply.error(401, f"API key not valid: {secret}. Please pass a valid key."))
        llm = OpenAICompatibleLLM("m", base_url=url, max_retries=0)
        with pytest.raises(TreehopError) as info:
            llm.complete([ChatMessage(role="user", content="q")])
        llm.close()
    assert "API key not valid" in str(info.value)
    assert secret not in str(info.value) and secret not in repr(llm)


# -- 9. a knowledge base's document id with a lone surrogate ------------------------------------


def test_a_knowledge_point_id_with_a_lone_surrogate_is_a_hit() -> None:
    """The service's JSON may carry ``"\\ud800"`` (valid JSON, a lone surrogate in Python):
    the id's URI segment encoded it as UTF-8 and a raw ``UnicodeEncodeError`` escaped
    ``VikingDBKnowledgeSource.find``. The segment is reversible still."""
    with knowledge_server("AKLTattacks57", "attacks57-secret", [costs_point("q1\ud800")]) as srv:
        src = make_knowledge_source(
            srv, ak="AKLTattacks57", sk="attacks57-secret", retry=RetryPolicy(max_retries=0)
        )
        hits = src.find("quarterly report costs", limit=1).resources
        assert len(hits) == 1 and hits[0].parent_uri is not None
        assert src.doc_id_of(hits[0].parent_uri) == "q1\ud800"
        src.close()


# -- 10. stacked content codings that decode to gigabytes ---------------------------------------


def _coded_answer(body: bytes, codings: list[str]) -> bytes:
    """An HTTP answer of ``body`` with ``codings`` applied in order (the header lists them)."""
    for coding in codings:
        body = gzip.compress(body) if coding == "gzip" else zlib.compress(body)
    head = (
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        f"Content-Encoding: {', '.join(codings)}\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + body


@pytest.mark.parametrize("codings", [["gzip", "gzip"], ["deflate", "gzip"], ["gzip", "deflate"]])
def test_a_stacked_coding_answer_is_still_read(codings: list[str]) -> None:
    good = json.dumps({"data": [{"index": 0, "embedding": [0.1, 0.2, 0.3]}]}).encode()
    url, srv = raw_answer_server(_coded_answer(good, codings))
    try:
        emb = OpenAICompatibleEmbedder("m", base_url=url, api_key="sk-a57-gz-0123456789")
        assert emb.embed(["hi"]).shape == (1, 3)
        assert asyncio.run(emb.aembed(["hi"])).shape == (1, 3)
        emb.close()
    finally:
        srv.close()


def test_a_stacked_gzip_bomb_is_refused_without_decoding_it_whole() -> None:
    """httpx decodes each raw chunk whole through every coding: ``Content-Encoding: gzip,
    gzip`` of 1 GiB of zeros is a ~2,500-byte answer, decoded to 1 GiB in one step before
    ``MAX_RESPONSE_BYTES`` was checked (2.1 GB peak memory, 5.7 s); three gzips of 4 GiB
    would be ~300 bytes. Run in a fresh process, whose peak memory is its own."""
    probe = """
import sys, zlib
sys.path[:0] = sys.argv[2:]
from test_attacks57 import _coded_answer
from treehop_test_doubles import raw_answer_server
from treehop.embedders.openai_compatible import OpenAICompatibleEmbedder
from treehop.errors import EmbeddingError
import gzip, struct
# 1 GiB of zeros, gzipped: one 1 MiB deflate piece cut by a full flush (which forgets the
# window, so every piece compresses alike) written 1,024 times, then the gzip trailer (CRC-32,
# size). The same 1 GiB as compressing it whole, built in 0.4 s of CPU instead of 6.6 s.
zeros = b"\\0" * (1 << 20)
packer = zlib.compressobj(9, zlib.DEFLATED, -15)
piece = packer.compress(zeros) + packer.flush(zlib.Z_FULL_FLUSH)
crc = 0
for _ in range(1024):
    crc = zlib.crc32(zeros, crc)
once = b"".join([b"\\x1f\\x8b\\x08\\0\\0\\0\\0\\0\\x02\\xff", piece * 1024, packer.flush(),
                 struct.pack("<II", crc, (1 << 30) & 0xFFFFFFFF)])
assert zlib.decompressobj(31).decompress(once, 1 << 20) == zeros  # (a gzip stream of zeros)
body = gzip.compress(once, 9)
head = ("HTTP/1.1 200 OK\\r\\nContent-Type: application/json\\r\\nContent-Encoding: gzip, gzip"
        f"\\r\\nContent-Length: {len(body)}\\r\\nConnection: close\\r\\n\\r\\n").encode()
url, srv = raw_answer_server(head + body)
emb = OpenAICompatibleEmbedder("m", base_url=url, api_key="sk-a57-gz-0123456789")
try:
    emb.embed(["hi"])
except EmbeddingError as exc:
    assert "larger than" in str(exc), exc
"""
    assert peak_memory_mb(probe) < 700  # MB at peak (was ~2,100)
