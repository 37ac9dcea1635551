"""Adversarial pass attacks58.

Each test was written failing first (bench/README.md, "Adversarial pass (helper attacks58)").
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from test_vikingdb_store import AK, SK, make_store
from treehop import Treehop
from treehop._http import RetryPolicy, body_excerpt
from treehop.cli import ClientOptions, _eval, main
from treehop.cli._eval import EvalFileError
from treehop.embedders.openai_compatible import OpenAICompatibleEmbedder
from treehop.errors import (
    InvalidFilterError,
    InvalidQueryError,
    InvalidTagError,
    StoreError,
    TreehopError,
)
from treehop.filters import MetadataFilter
from treehop.ingest import loaders
from treehop.llm import ChatMessage
from treehop.llm.openai_compatible import OpenAICompatibleLLM
from treehop.models import ContextType, Node
from treehop.rerankers.http_rerank import HTTPReranker
from treehop.stores.base import Scope
from treehop.tags import new_label, normalize_label
from treehop.validation import is_blank

from fake_servers.openai_chat import FakeOpenAIChatServer, Reply
from fake_servers.vikingdb_server import FakeVikingDB
from treehop_test_doubles import SAMPLE_TREE, BagOfWordsEmbedder, raw_answer_server

OAUTH = "viking://resources/security/auth/oauth.md"


def _factory(options: ClientOptions) -> Treehop:
    return Treehop(options.path, user=options.user, llm=options.llm, embedder=BagOfWordsEmbedder())


@pytest.fixture(scope="module")
def security_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    idx = tmp_path_factory.mktemp("a58") / "index"
    src = SAMPLE_TREE / "resources" / "security"
    assert main(["index", str(src), "--index", str(idx)], client_factory=_factory) == 0
    return idx


# -- 1. treehop eval: ids and grades the metric provider's C code cannot hold ----------------

_EVAL_RUN = """
import sys
sys.path[:0] = {paths!r}
from treehop import Treehop
from treehop.cli import main
from treehop_test_doubles import BagOfWordsEmbedder
def factory(o):
    return Treehop(o.path, user=o.user, llm=o.llm, embedder=BagOfWordsEmbedder())
sys.exit(main(["eval", {file!r}, "--index", {index!r}], client_factory=factory))
"""


def test_eval_refuses_a_lone_surrogate_id_without_crashing(
    security_index: Path, tmp_path: Path
) -> None:
    # pytrec_eval encodes ids in C: a lone surrogate crashed the interpreter (SIGSEGV)
    qfile = tmp_path / "q.jsonl"
    line = {"id": "\ud800", "query": "oauth", "relevant": {OAUTH: 1}}
    qfile.write_text(json.dumps(line) + "\n", encoding="utf-8")
    paths = [p for p in sys.path if p]
    script = _EVAL_RUN.format(paths=paths, file=str(qfile), index=str(security_index))
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    assert "lone surrogate" in proc.stderr


@pytest.mark.parametrize(
    ("line", "said"),
    [
        # a NUL cut the id short in C: raw KeyError
        ({"id": "a\x00b", "query": "oauth", "relevant": {OAUTH: 1}}, "without NUL"),
        # a grade past a C int: SystemError (10**400) or silently 0 (2**32)
        ({"query": "oauth", "relevant": {OAUTH: 10**400}}, "integer >= 0 and <= 65535"),
        ({"query": "oauth", "relevant": {OAUTH: 2**32}}, "integer >= 0 and <= 65535"),
        # a grade trec_eval holds but pays for: one 8-byte counter per grade level up to it
        # (2**31 - 1 took 17 GB for one query; stop 68)
        ({"query": "oauth", "relevant": {OAUTH: 2**31 - 1}}, "integer >= 0 and <= 65535"),
        ({"query": "oauth", "relevant": {OAUTH: 2**16}}, "integer >= 0 and <= 65535"),
        ({"id": [1], "query": "oauth", "relevant": {OAUTH: 1}}, "string or an integer"),
        # a query find refuses is refused with its line, before any find runs
        ({"query": "\u200b", "relevant": {OAUTH: 1}}, ":1: query has no visible"),
    ],
)
def test_eval_refuses_ids_and_grades_trec_eval_cannot_hold(
    security_index: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    line: dict[str, object],
    said: str,
) -> None:
    qfile = tmp_path / "q.jsonl"
    qfile.write_text(json.dumps(line) + "\n", encoding="utf-8")
    code = main(["eval", str(qfile), "--index", str(security_index)], client_factory=_factory)
    err = capsys.readouterr().err
    assert code == 2, err
    assert said in err


def test_eval_keeps_a_large_grade_it_can_hold(
    security_index: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    qfile = tmp_path / "q.jsonl"
    line = {"id": 7, "query": "oauth tokens", "relevant": {OAUTH: 2**16 - 1}}
    qfile.write_text(json.dumps(line) + "\n", encoding="utf-8")
    code = main(
        ["eval", str(qfile), "--index", str(security_index), "--json"], client_factory=_factory
    )
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["per_query"][0]["id"] == "7"
    assert out["metrics"]["R@10"] == 1.0


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(), st.integers(), st.none(), st.booleans(), st.floats()))
def test_eval_query_id_is_a_c_safe_string_or_refused(value: object) -> None:
    try:
        qid = _eval._query_id(value, "f:1")
    except EvalFileError:
        return
    assert isinstance(value, (str, int)) and not isinstance(value, bool)
    assert qid == str(value) and "\x00" not in qid and qid.strip()
    qid.encode("utf-8")


# -- 2. a VikingDB index's answers: scores, vectors, a scan that does not move -----------------


class _BentVikingDB(FakeVikingDB):
    """The loopback VikingDB fake, its answers bent after they are built (``bend``)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.score: Any = None
        self.vector: Any = None
        self.ignore_gt = False

    def search_vector(self, body: Mapping[str, Any]) -> Any:
        out = super().search_vector(body)
        if self.score is not None:
            for d in out["data"]:
                d["score"] = self.score
        return out

    def fetch_in_index(self, body: Mapping[str, Any]) -> Any:
        out = super().fetch_in_index(body)
        if self.vector is not None:
            for d in out["fetch"]:
                d["dense_vector"] = self.vector
        return out

    def search_scalar(self, body: Mapping[str, Any]) -> Any:
        f = body.get("filter")
        if self.ignore_gt and isinstance(f, dict) and f.get("op") == "and":
            body = {**body, "filter": f["conds"][0]}  # the keyset condition dropped
        return super().search_scalar(body)


def _four_nodes() -> list[Node]:
    return [
        Node(
            uri=f"viking://resources/d{i}.md",
            parent_uri="viking://resources",
            context_type=ContextType.RESOURCE,
            level=2,
            is_leaf=True,
            content=text,
        )
        for i, text in enumerate(["kubernetes rollout", "oauth tokens", "third", "fourth"])
    ]


@pytest.mark.parametrize("score", [float("nan"), float("inf"), "1e999"])
def test_a_vikingdb_search_score_that_is_not_finite_is_a_store_error(score: Any) -> None:
    """A search answer's score went into the hits as it was: NaN and infinity (and
    ``"1e999"``, which the SDK reads as infinity) reached ``find``'s results."""
    with _BentVikingDB(ak=AK, sk=SK) as srv:
        store = make_store(srv, dim=4)
        store.upsert(_four_nodes(), np.eye(4, dtype=np.float32))
        q = np.array([1.0, 0.1, 0.0, 0.0], np.float32)
        assert all(math.isfinite(h.score) for h in store.search(q, Scope(), 2))
        srv.score = score
        with pytest.raises(StoreError, match="not finite"):
            store.search(q, Scope(), 2)


@pytest.mark.parametrize("vector", [[1.0, 2.0], [float("nan")] * 4, [1e300] * 4])
def test_a_vikingdb_vector_of_the_wrong_width_or_not_finite_is_a_store_error(
    vector: list[float],
) -> None:
    """``get_vectors`` returned what the index answered: a 2-wide vector from a 4-dimensional
    index came back as a ``(2, 2)`` array, NaN and infinity as they were."""
    with _BentVikingDB(ak=AK, sk=SK) as srv:
        store = make_store(srv, dim=4)
        nodes = _four_nodes()
        store.upsert(nodes, np.eye(4, dtype=np.float32))
        assert store.get_vectors([nodes[0].uri, nodes[1].uri]).shape == (2, 4)
        srv.vector = vector
        with pytest.raises(StoreError, match="expected 4 finite"):
            store.get_vectors([nodes[0].uri, nodes[1].uri])


def test_a_vikingdb_scan_that_makes_no_progress_ends_with_a_store_error() -> None:
    """A scan pages by sort key (``gt`` the last one seen): a server that ignored the
    condition answered the same full page forever, and ``iter_nodes`` never returned."""
    with _BentVikingDB(ak=AK, sk=SK) as srv:
        store = make_store(srv, dim=4)
        store.upsert(_four_nodes(), np.eye(4, dtype=np.float32))
        store.scan_page = 2
        assert len(list(store.iter_nodes())) == 4
        srv.ignore_gt = True
        got: list[BaseException] = []

        def scan() -> None:
            try:
                list(store.iter_nodes())
            except BaseException as exc:
                got.append(exc)

        worker = threading.Thread(target=scan, daemon=True)
        worker.start()
        worker.join(60)
        assert not worker.is_alive(), "the scan did not end"
        assert len(got) == 1 and isinstance(got[0], StoreError), got
        assert "no progress" in str(got[0])


# -- 3. a session message of only invisible characters ----------------------------------------


@pytest.mark.parametrize("content", ["\u200b", "\ufeff\u2060", "\x01\x02", "\u200e \u200b"])
def test_a_session_message_of_only_invisible_characters_is_refused(
    tmp_path: Path, content: str
) -> None:
    """A turn, a note, a text of only zero-width / control characters is refused as empty
    (attacks54); a session message of them was stored and handed to the planner and the
    summary."""
    client = Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None)
    try:
        sid = client.create_session()
        with pytest.raises(InvalidQueryError, match="no visible character"):
            client.add_message(sid, "user", content)
        assert client.get_session(sid).messages == []
        client.add_message(sid, "user", "a visible \u200b message")
        assert len(client.get_session(sid).messages) == 1
    finally:
        client.close()


# -- 4. a new tag of invisible characters, C1 controls or bidi overrides ------------------------


@pytest.mark.parametrize("bad", ["\u200b", "\ufeff", "x\x9b31mred", "a\u202eb", "\u2066x", "x\x7f"])
def test_a_new_tag_that_cannot_be_shown_is_refused_before_any_write(
    tmp_path: Path, bad: str
) -> None:
    """``set_tags`` stored ``user:\\u200b`` (an empty tag, which ``""`` is refused as) and a
    label holding a C1 CSI or a right-to-left override, which ``treehop tag`` then printed to
    the terminal as it was. The whole call is refused; the node's tags are unchanged."""
    client = Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder())
    try:
        client.add_resource(str(SAMPLE_TREE / "resources" / "security"))
        before = client.stat(OAUTH).tags
        with pytest.raises(InvalidTagError):
            client.set_tags(OAUTH, add=["fine", bad])
        assert client.stat(OAUTH).tags == before
        with pytest.raises(InvalidTagError):
            client.add_resource(
                "a note about tags", target_uri="viking://resources/n.md", tags=[bad]
            )
        assert client.store.get(["viking://resources/n.md"]) == [None]
        assert "user:fine" in client.set_tags(OAUTH, add=["fine"])
    finally:
        client.close()


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=80))
def test_new_label_is_normalize_label_and_always_showable(label: str) -> None:
    try:
        out = new_label(label)
    except InvalidTagError:
        return
    assert out == normalize_label(label)
    assert not is_blank(out)
    assert not any(
        0x7F <= ord(c) <= 0x9F or c in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
        for c in out
    )


# -- 5. file names holding C1 controls or bidi overrides --------------------------------------


def test_file_names_with_c1_controls_or_bidi_overrides_are_skipped_and_reported(
    tmp_path: Path,
) -> None:
    """A file named ``x\\x9b31mred.md`` became a URI holding a terminal's CSI, which
    ``treehop ls`` printed as an escape sequence; ``\\u202edm.exe.md`` (a right-to-left
    override) showed as another name. Both are skipped like a name with a newline, and the
    report shows them escaped."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "plain.md").write_text("hello world\n", encoding="utf-8")
    (src / "x\x9b31mred.md").write_text("terminal\n", encoding="utf-8")
    (src / "\u202edm.exe.md").write_text("spoof\n", encoding="utf-8")
    (src / "sub\u2066").mkdir()
    (src / "sub\u2066" / "in.md").write_text("isolate\n", encoding="utf-8")
    client = Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None)
    try:
        res = client.add_resource(str(src))
        uris = [n.uri for n in client.store.iter_nodes()]
    finally:
        client.close()
    assert sorted(res.skipped_names) == ["\\u202edm.exe.md", "x\\x9b31mred.md"]
    assert "viking://resources/src/plain.md" in uris
    assert not any(ch in u for u in uris for ch in "\x9b\u202e\u2066"), uris


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=60))
def test_a_reported_name_holds_nothing_a_terminal_acts_on(name: str) -> None:
    shown = loaders._printable(name)
    assert not any(
        ord(c) < 32
        or 0x7F <= ord(c) <= 0x9F
        or 0x202A <= ord(c) <= 0x202E
        or 0x2066 <= ord(c) <= 0x2069
        for c in shown
    )
    if loaders._addressable(name):
        assert shown == name


# -- 6. a filter holding a lone surrogate, on a remote engine -------------------------------------


@pytest.mark.parametrize(
    "spec",
    [
        {"op": "must", "field": "team", "conds": ["ops", "\ud800"]},
        {"op": "must_not", "field": "team\udfff", "conds": ["ops"]},
        {"op": "and", "conds": [{"op": "range", "field": "n\ud800", "gte": 1}]},
    ],
)
def test_a_filter_with_a_lone_surrogate_is_an_invalid_filter_on_vikingdb(
    tmp_path: Path, spec: dict[str, Any]
) -> None:
    """The embedded store matched nothing for it; VikingDB's request is UTF-8, and ``find``
    escaped a raw ``UnicodeEncodeError``."""
    with _BentVikingDB(ak=AK, sk=SK) as srv:
        emb = BagOfWordsEmbedder()
        store = make_store(srv, dim=emb.dimension, metadata_fields={"team": "string"})
        client = Treehop(tmp_path / "idx", embedder=emb, store=store, tagger=None)
        try:
            client.add_resource(str(SAMPLE_TREE / "resources" / "security"))
            with pytest.raises(InvalidFilterError, match="lone surrogate"):
                client.find("oauth", filter=spec)
            ok = {"op": "must", "field": "team", "conds": ["ops"]}
            assert client.find("oauth", filter=ok).contexts() == []
        finally:
            client.close()


_ANY_TEXT = st.text(st.characters(exclude_categories=[]), max_size=8)  # (surrogates too)
_SCALAR = st.one_of(_ANY_TEXT, st.integers(), st.floats(), st.booleans())


@settings(max_examples=400, deadline=None)
@given(field=_ANY_TEXT, conds=st.lists(_SCALAR, min_size=1, max_size=4))
def test_a_parsed_filter_is_valid_unicode_json(field: str, conds: list[Any]) -> None:
    try:
        parsed = MetadataFilter.parse({"op": "must", "field": field, "conds": conds})
    except InvalidFilterError:
        return
    assert parsed is not None
    json.dumps(parsed.spec, allow_nan=False).encode("utf-8")
    json.dumps(parsed.spec, ensure_ascii=False).encode("utf-8")


def test_treehop_tag_shows_a_stored_control_character_as_a_replacement(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A tag stored before labels were checked (or by another program) holding a CSI was
    printed by ``treehop tag`` as it was; every other table cell goes through
    ``render.printable``."""
    idx = tmp_path / "idx"
    client = Treehop(idx, embedder=BagOfWordsEmbedder(), tagger=None)
    try:
        client.add_resource(str(SAMPLE_TREE / "resources" / "security"))
        client.store.update_tags({OAUTH: ["user:x\x9b31mred", "user:\x1b]0;title\x07"]})
        client.save()
    finally:
        client.close()
    assert main(["tag", OAUTH, "--index", str(idx)], client_factory=_factory) == 0
    out = capsys.readouterr().out
    assert "\x9b" not in out and "\x1b" not in out and "\x07" not in out
    assert "x\ufffd31mred" in out


# -- 7. a server's body with terminal escapes, in an error message --------------------------------

_ESCAPES = "\x1b]0;owned\x07\x1b[2J\x9b31m"
_ESCAPE_ANSWER = (
    b"HTTP/1.1 400 Bad\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n"
    % len(_ESCAPES.encode())
    + _ESCAPES.encode()
)


def test_a_servers_terminal_escapes_do_not_reach_an_error_message() -> None:
    """``body_excerpt`` kept a text body's controls: ``\\x1b]0;...\\x07\\x1b[2J`` went into the
    chat model's, the embedder's and the HTTP reranker's errors, and from them to the terminal
    (``treehop: error: ...``, ``plan: fallback (...)``) and to logs."""
    url, sock = raw_answer_server(_ESCAPE_ANSWER)
    try:
        errors: list[str] = []
        llm = OpenAICompatibleLLM("m", base_url=url, max_retries=0)
        with pytest.raises(TreehopError) as e1:
            llm.complete([ChatMessage(role="user", content="q")])
        errors.append(str(e1.value))
        emb = OpenAICompatibleEmbedder("m", base_url=url, retry=RetryPolicy(max_retries=0))
        with pytest.raises(TreehopError) as e2:
            emb.embed(["x"])
        errors.append(str(e2.value))
        rr = HTTPReranker(url, retry=RetryPolicy(max_retries=0))
        with pytest.raises(TreehopError) as e3:
            rr.rerank("q", ["a", "b"])
        errors.append(str(e3.value))
    finally:
        sock.close()
    for msg in errors:
        assert "owned" in msg, msg  # (the body is still quoted)
        assert not re.search(r"[\x00-\x1f\x7f-\x9f]", msg), repr(msg)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400))
def test_a_body_excerpt_is_one_line_without_controls(body: str) -> None:
    shown = body_excerpt(httpx.Response(400, text=body))
    assert len(shown) <= 300
    assert not re.search(r"[\x00-\x1f\x7f-\x9f]", shown), repr(shown)


def test_a_planners_intent_with_terminal_escapes_is_shown_not_sent(
    security_index: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``treehop search`` printed each planned query's ``intent`` (the model's words) as it
    was: an intent of ``\\x1b]0;...\\x07\\x1b[2J`` retitled and cleared the terminal."""
    plan = {
        "queries": [
            {
                "query": "OAuth token validation",
                "context_type": "resource",
                "priority": 5,
                "intent": "check \x1b]0;owned\x07\x1b[2J\x9b31mtokens",
            }
        ]
    }
    with FakeOpenAIChatServer(default=Reply.chat(json.dumps(plan))) as srv:
        code = main(
            [
                "search",
                "how are tokens checked?",
                "--index",
                str(security_index),
                "--llm-model",
                "planner-x",
                "--llm-base-url",
                srv.base_url,
            ],
            client_factory=_factory,
        )
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "owned" in out and "tokens" in out
    assert not re.search(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]", out), repr(out)


# -- 8. a speaker of only invisible characters, or with a bidi override ---------------------------


@pytest.mark.parametrize("speaker", ["\u200b", "\u200b\ufeff", "\u202eab", "al\u2066ice"])
def test_a_speaker_nobody_can_see_or_that_reverses_the_line_is_refused(
    tmp_path: Path, speaker: str
) -> None:
    """``add_messages`` and ``remember`` stored a speaker of only zero-width characters (an
    empty speaker falls back to the role) and one holding a right-to-left override, which
    reversed the rest of the turn's line (``"\\u202eab: hello"``) wherever it was shown."""
    client = Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None)
    try:
        before = len(client.store)
        with pytest.raises(InvalidQueryError, match="speaker"):
            client.add_messages(
                [
                    {"role": "user", "content": "fine", "speaker": "alice"},
                    {"role": "user", "content": "hello", "speaker": speaker},
                ]
            )
        with pytest.raises(InvalidQueryError, match="speaker"):
            client.remember("a fact", speaker=speaker)
        assert len(client.store) == before
        client.add_messages([{"role": "user", "content": "hello", "speaker": "bob \u00e9"}])
        assert len(client.store) > before
    finally:
        client.close()
