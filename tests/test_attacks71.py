"""Adversarial pass on stop 61's surface (bench/README.md, "Attacks, stop 62 (helper
attacks71)"). Each test but the controls fails on 9c20d29 (main before this round)."""

from __future__ import annotations

import contextlib
import copyreg
import io
import pickle
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.vectorstores import VectorStore as LCVectorStore
from llama_index.core.schema import Document as LIDocument
from pydantic import ValidationError

from langchain_treehop import TreehopRetriever, TreehopVectorStore
from langchain_treehop import add_documents as lc_add_documents
from llama_index.retrievers.treehop import TreehopRetriever as LITreehopRetriever
from llama_index.retrievers.treehop import add_documents as li_add_documents
from treehop import Treehop
from treehop.cli import main
from treehop.embedders.openai_compatible import OpenAICompatibleEmbedder
from treehop.errors import EmbeddingError, LLMError, TreehopError, UnknownArgumentError
from treehop.llm import ChatMessage, OpenAICompatibleLLM
from treehop.models import Node
from treehop.redaction import register_secret
from treehop.stores.base import VectorStore
from treehop.tagging.base import NodeTags
from treehop.tagging.ingest import IngestTagger

from fake_servers._http_base import Reply
from fake_servers.openai_chat import FakeOpenAIChatServer
from treehop_test_doubles import BagOfWordsEmbedder, redaction_in_a_new_process

KEY = "plainkey71qqzz"  # (no recognisable key shape: only registration redacts it)

# ----------------------------------------------------- 1. a pickle this code did not write


class _Modified:
    """Pickles as an object of ``cls`` with ``state`` (as protocol 0 writes one): what a
    pickle written by another version, or edited, holds."""

    def __init__(self, cls: type, state: object) -> None:
        self.cls, self.state = cls, state

    def __reduce__(self) -> tuple[Any, ...]:
        return (copyreg._reconstructor, (self.cls, object, None), self.state)


def _states(obj: Any, url_key: str) -> dict[str, object]:
    good = obj.__getstate__()
    return {
        "no url": {k: v for k, v in good.items() if k != url_key},
        "url not a string": {**good, url_key: 5},
        "key a plain string": {**good, "_api_key": KEY},
        "key a number": {**good, "_api_key": 7},
        "not a dict": [("model", "m")],
        "a dict of non-names": {**good, 3: "x"},
    }


@pytest.mark.parametrize("kind", ["embedder", "llm"])
def test_a_pickle_this_code_did_not_write_is_refused_typed(kind: str) -> None:
    # 9c20d29: KeyError '_url' / 'base_url', AttributeError 'str' object has no attribute
    # 'get_secret_value', TypeError "list indices must be integers" escaped raw; a state
    # whose URL is 5 was taken (the object then failed at its first call)
    if kind == "embedder":
        obj: Any = OpenAICompatibleEmbedder("m", base_url="http://127.0.0.1:9/v1", api_key=KEY)
        url_key, error = "_url_sent", EmbeddingError  # (the URL as sent: leftovers63)
    else:
        obj = OpenAICompatibleLLM("m", base_url="http://127.0.0.1:9/v1", api_key=KEY)
        url_key, error = "_base_url", LLMError
    for name, state in _states(obj, url_key).items():
        blob = pickle.dumps(_Modified(type(obj), state))
        with pytest.raises(error, match="cannot unpickle") as ei:
            pickle.loads(blob)
        assert KEY not in str(ei.value), name
    again = pickle.loads(pickle.dumps(obj))  # (control: its own pickle loads)
    assert repr(again) == repr(obj) and KEY not in repr(again)


# -------------------------------------------------- 2. argument names an error must not echo

SECRET = "sk-attacks71-ZXCVBNMLKJHGF"
HOSTILE_NAMES = {
    "a registered key": SECRET,
    "a key after 64 characters": "k" * 64 + SECRET,
    "a forged log line": "top_k\n[ERROR] forged",
    "a terminal escape": "kk\x1b[31mred",
    "right-to-left override": "\u202edlrow",
    "a megabyte": "x" * 1_000_000,
}


def _clean(text: str) -> None:
    assert SECRET not in text and "\n[ERROR]" not in text
    assert "\x1b" not in text and "\u202e" not in text and len(text) < 2_000


@pytest.fixture(scope="module")
def client() -> Any:
    register_secret(SECRET)
    with Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None) as th:
        yield th


@pytest.mark.parametrize("case", sorted(HOSTILE_NAMES))
@pytest.mark.parametrize("owner", ["llamaindex-retriever", "langchain-vector-store"])
def test_an_unknown_arguments_name_is_shown_escaped_redacted_and_cut(
    client: Treehop, owner: str, case: str
) -> None:
    # 9c20d29: the name's repr cut to 100 characters, not redacted: a registered key given
    # as a keyword's name was echoed in UnknownArgumentError (the controls: escaped and cut)
    name = HOSTILE_NAMES[case]
    with pytest.raises(UnknownArgumentError) as ei:
        if owner == "llamaindex-retriever":
            LITreehopRetriever(client, **{name: 1})
        else:
            TreehopVectorStore(client=client, **{name: 1})
    _clean(str(ei.value))
    assert "unknown argument" in str(ei.value)


@pytest.mark.parametrize("case", sorted(HOSTILE_NAMES))
def test_a_langchain_retrievers_unknown_field_name_and_secret_value_are_not_echoed(
    client: Treehop, case: str
) -> None:
    # 9c20d29: pydantic printed the field's name as given (a newline as a line of its own, a
    # terminal escape, a megabyte, a registered key) and the value given under it
    # (input_value='value-sk-...') whatever its name
    with pytest.raises(ValidationError) as ei:
        TreehopRetriever(client=client, **{HOSTILE_NAMES[case]: f"value-{SECRET}"})
    _clean(str(ei.value))
    assert ei.value.errors()[0]["type"] == "extra_forbidden"
    # a known field given a registered key as its value: the value is not shown either
    with pytest.raises(ValidationError) as ei:
        TreehopRetriever(client=client, k=SECRET)
    assert SECRET not in str(ei.value)


def test_an_ordinary_unknown_name_keeps_its_place_and_hint(client: Treehop) -> None:
    # control: passes on 9c20d29 too
    with pytest.raises(ValidationError) as ei:
        TreehopRetriever(client=client, top_k=3)
    assert ei.value.errors()[0]["loc"] == ("top_k",) and "did you mean 'k'" in str(ei.value)
    assert "input_value=3" in str(ei.value)
    assert issubclass(TreehopVectorStore, LCVectorStore)


# ------------------------------- 3. a BaseException from a worker thread in the middle of a write


class _RaisingTagger:
    """The default keyword tagger, raising ``exc`` on its ``at``-th ``tag_nodes`` call."""

    def __init__(self) -> None:
        self.inner = IngestTagger()
        self.exc: BaseException | None = None
        self.at = self.calls = 0

    def tag_nodes(
        self, nodes: Sequence[Node], store: VectorStore, new_texts: Sequence[str] | None = None
    ) -> dict[str, NodeTags]:
        self.calls += 1
        if self.exc is not None and self.calls == self.at:
            raise self.exc
        return self.inner.tag_nodes(nodes, store, new_texts)

    def refit(self, store: VectorStore) -> None:
        self.inner.refit(store)


def _snapshot(th: Treehop) -> dict[str, str]:
    return {n.uri: n.model_dump_json() for n in th.store.iter_nodes(None)}


@pytest.mark.parametrize("where", ["memory", "disk"])
@pytest.mark.parametrize("exc", [KeyboardInterrupt, SystemExit])
@pytest.mark.parametrize("at", [1, 2])
def test_a_base_exception_from_the_tagger_mid_write_rolls_back_and_the_client_lives(
    tmp_path: Path, where: str, exc: type[BaseException], at: int
) -> None:
    # 9c20d29: asyncio let the worker task's KeyboardInterrupt / SystemExit out of the sync
    # client's loop thread, which ended mid-write: the caller got ClientClosedError ("closed
    # before the call ran"), the in-memory store kept half the write (new file without its
    # folder's summary), and every later call, close() included, ClientClosedError
    tagger = _RaisingTagger()
    th = Treehop(
        tmp_path / "idx" if where == "disk" else None,
        embedder=BagOfWordsEmbedder(),
        tagger=tagger,
        reader_processes=0,
    )
    th.add_resource("seed text about plums", target_uri="viking://resources/seed.md")
    th.add_resource("kiwis and pears", target_uri="viking://resources/d/a.md")
    before = _snapshot(th)
    tagger.exc, tagger.at, tagger.calls = exc(), at, 0
    with pytest.raises(exc):
        th.add_resource("apples and plums", target_uri="viking://resources/d/b.md")
    assert tagger.calls >= at  # (it was raised where asked)
    tagger.exc = None
    assert _snapshot(th) == before
    added = th.add_resource("apples and plums", target_uri="viking://resources/d/b.md")
    assert added.root_uri == "viking://resources/d/b.md" and "apples" in th.read(added.root_uri)
    th.close()
    if where == "disk":
        with Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None) as again:
            assert len(again.ls("viking://resources/d")) == 2


def test_a_treehop_error_from_the_tagger_is_unchanged(tmp_path: Path) -> None:
    # control (passes on 9c20d29): the rollback of leftovers61, the caller's error as raised
    tagger = _RaisingTagger()
    with Treehop(None, embedder=BagOfWordsEmbedder(), tagger=tagger) as th:
        th.add_resource("seed text", target_uri="viking://resources/seed.md")
        before = _snapshot(th)
        tagger.exc, tagger.at, tagger.calls = TreehopError("tagger down"), 2, 0
        with pytest.raises(TreehopError, match="tagger down"):
            th.add_resource("apples", target_uri="viking://resources/d/b.md")
        assert _snapshot(th) == before


# ------------------------------------------------------ 4. a message's fields as str subclasses


class _Shrinking(str):
    """A string that says it is empty and strips to a number: a caller's subclass whose
    methods are not ``str``'s."""

    def __len__(self) -> int:
        return 0

    def strip(self, chars: str | None = None) -> Any:
        return 5


class _Quiet(str):
    def __len__(self) -> int:
        return 0


class _LangChainLike:
    """A message object whose content is a list of blocks and whose ``.text`` a subclass
    (as LangChain's ``BaseMessage.text`` is a ``TextAccessor``, a ``str`` subclass)."""

    role = "assistant"

    def __init__(self, text: str) -> None:
        self.content = [{"type": "text", "text": "the answer"}]
        self.text = text


def test_a_str_subclass_in_a_message_is_read_as_the_string_it_holds(client: Treehop) -> None:
    # 9c20d29: the checks called the subclass's own methods: a ``strip`` answering 5 raised
    # a raw TypeError ("'int' object is not subscriptable"), a ``__len__`` answering 0 let a
    # turn past the 20,000-character bound (stored whole)
    res = client.add_messages([{"content": _Shrinking("kept as written")}], conversation_id="s")
    assert "kept as written" in client.read(res.turn_uris[0])
    with pytest.raises(TreehopError, match="longer than 20000"):
        client.add_messages([{"content": _Quiet("a" * 30_000)}], conversation_id="s")
    with pytest.raises(TreehopError, match="longer than 20000"):
        client.add_messages([_LangChainLike(_Quiet("b" * 30_000))], conversation_id="s")
    res = client.add_messages([{"role": _Quiet("ai"), "content": "hi"}], conversation_id="s")
    assert client.stat(res.turn_uris[0]).metadata["role"] == "assistant"


@pytest.mark.parametrize("call", ["find", "remember", "add_message"])
def test_a_str_subclass_is_held_to_the_length_bound_of_a_query_note_and_message(
    client: Treehop, call: str
) -> None:
    # 9c20d29: a subclass whose __len__ answers 0 was accepted at any length (a 200,000-
    # character query, note, session message), past the bound the plain string meets
    big = _Quiet("word " * 40_000)
    with pytest.raises(TreehopError, match=r"longer than|the limit is"):
        if call == "find":
            client.find(big)
        elif call == "remember":
            client.remember(big)
        else:
            client.add_message(client.create_session(), "user", big)


# ------------------------------------------------------- 5. a URL's credentials in a placement


@pytest.mark.parametrize("framework", ["langchain", "llamaindex"])
def test_a_sources_url_credentials_are_not_placed_into_its_uri_or_source_path(
    framework: str,
) -> None:
    # 9c20d29: a document whose source is https://user:pw@host/a/b.md was placed at
    # viking://resources/user:pw@host/a/b.md and stored source_path 'user:pw@host/a/b.md':
    # the password in every result's URI (the source key itself is the caller's, kept)
    url = "https://reader:pw71secretQ@docs.example.com/guide/deploy.md"
    with Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None) as th:
        if framework == "langchain":
            uris = lc_add_documents(
                th, [Document(page_content="deploy steps", metadata={"source": url})]
            )
        else:
            uris = li_add_documents(
                th, [LIDocument(text="deploy steps", metadata={"file_path": url})]
            )
        uri = uris[0]
        assert uri == "viking://resources/docs.example.com/guide/deploy.md"
        meta = th.stat(uri).metadata
        assert meta["source_path"] == "docs.example.com/guide/deploy.md"
        found = th.find("deploy steps")
        assert all("pw71secretQ" not in c.uri for c in found.contexts())


# ------------------------------------------------ 6. what `session add` stored, as `show` prints it


def test_session_show_prints_no_bidirectional_override_a_message_holds(tmp_path: Path) -> None:
    # 9c20d29: ESC and BEL were shown as U+FFFD, but U+202E (right-to-left override) and the
    # isolates went to the terminal as stored: a terminal that reorders by them printed the
    # rest of the row backwards
    class _Factory:
        def __call__(self, options: Any) -> Treehop:
            return Treehop(options.path, user=options.user, embedder=BagOfWordsEmbedder())

    def run(*argv: str) -> str:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(list(argv), client_factory=_Factory()) == 0
        return out.getvalue()

    idx = ["--index", str(tmp_path / "ix")]
    with Treehop(tmp_path / "ix", embedder=BagOfWordsEmbedder(), tagger=None) as th:
        th.add_resource("Backups run nightly.", name="ops")
    sid = run("session", "new", *idx).strip()
    run("session", "add", sid, "user", "pay \u202eusd 001\u202c now \u2067x\u2069 \u200fok", *idx)
    shown = run("session", "show", sid, *idx)
    assert not any(c in shown for c in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
    assert "usd 001" in shown and "\u200fok" in shown  # (the text kept, a mark kept)


# -------------------------------------------------------- 7. a key given as an extra header


@pytest.mark.parametrize(
    ("header", "value"),
    [("api-key", "hdrkey71azure"), ("Authorization", "Bearer hdrkey71bearer")],
)
def test_a_key_given_as_a_header_is_redacted_from_an_error_echoing_it(
    header: str, value: str
) -> None:
    # 9c20d29: only api_key and a URL's credentials were registered; a key sent as a header
    # (Azure OpenAI's api-key) and echoed by the server's 401 was shown whole in LLMError
    key = value.rpartition(" ")[2]
    with FakeOpenAIChatServer() as srv:
        srv.script(Reply(401, {"error": {"message": f"Incorrect key provided: {key}"}}))
        llm = OpenAICompatibleLLM(
            "m", base_url=srv.base_url, extra_headers={header: value}, max_retries=0
        )
        with pytest.raises(LLMError) as ei:
            llm.complete([ChatMessage(role="user", content="hi")])
        assert srv.requests[-1].headers[header.lower()] == value  # (it was sent)
    assert "Incorrect key provided" in str(ei.value) and key not in str(ei.value)


def test_a_new_process_that_unpickles_an_embedder_redacts_its_header_key(tmp_path: Path) -> None:
    # 9c20d29: a key in the headers was registered nowhere, so not in the new process either
    key = "hdrkey71pickled"
    e = OpenAICompatibleEmbedder("m", base_url="http://127.0.0.1:9/v1", headers={"x-api-key": key})
    before, after = redaction_in_a_new_process(e, key, tmp_path)
    assert before == f"echo {key}"  # (the control: not recognisable unregistered)
    assert key not in after and after.startswith("echo ")


@pytest.mark.parametrize("case", sorted(HOSTILE_NAMES))
@pytest.mark.parametrize(
    "call", ["langchain-invoke", "langchain-store-delete", "llamaindex-store-delete"]
)
def test_a_per_call_unknown_arguments_name_is_shown_escaped_redacted_and_cut(
    client: Treehop, call: str, case: str
) -> None:
    # (lead, stop 62) leftovers62b's per-call keyword errors printed the names as given
    # (``unknown retriever argument(s) [...]`` the list's repr, the hint cut but not
    # redacted), past the constructors' treatment (above)
    from llama_index.vector_stores.treehop import TreehopVectorStore as LIVectorStore

    name = HOSTILE_NAMES[case]
    with pytest.raises(UnknownArgumentError) as ei:
        if call == "langchain-invoke":
            TreehopRetriever(client=client).invoke("alpha", **{name: 1})
        elif call == "langchain-store-delete":
            TreehopVectorStore(client=client).delete(["nope"], **{name: 1})
        else:
            LIVectorStore(client).delete("nope", **{name: 1})
    _clean(str(ei.value))
    assert "unknown" in str(ei.value)
