"""Items left open by stop 62 (bench/README.md, "Leftovers, stop 63 (helper leftovers63)").
Each test fails on f7f9233 (main before this round) unless it says it is a control."""

from __future__ import annotations

import asyncio
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from treehop import AsyncTreehop, Treehop
from treehop._plugins import call, describe, is_signal, passes
from treehop.embedders.guarded import GuardedEmbedder
from treehop.errors import (
    EmbeddingError,
    IngestError,
    InvalidFilterError,
    InvalidQueryError,
    InvalidTagError,
    InvalidURIError,
    LLMError,
    TreehopError,
)
from treehop.ingest.records import add_records
from treehop.ingest.summaries import ExtractiveSummarizer
from treehop.intent_analysis import IntentAnalyzer
from treehop.llm.base import ChatMessage
from treehop.models import Node
from treehop.redaction import listed, register_secret
from treehop.stores.base import VectorStore
from treehop.tagging import LLMTagger
from treehop.tagging.base import NodeTags
from treehop.tagging.ingest import IngestTagger
from treehop.tagging.keywords import TaggerError

from treehop_test_doubles import BagOfWordsEmbedder, FlakyEmbedder, stored_keyword_statistics

# ------------------------------------------------- 1. a plug-in's own exception, typed

SECRET = "sk-l63-plugin-secret-0123456789"
register_secret(SECRET)


class Abort(BaseException):
    """A plug-in's own ``BaseException`` (a framework's abort signal), not a Ctrl-C."""


class BadStr(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no text")


KINDS: dict[str, Callable[[str], BaseException]] = {
    "ValueError": ValueError,
    "KeyError": KeyError,
    "RuntimeError": RuntimeError,
    "BaseException": Abort,
}


def _message() -> str:
    """What a plug-in's exception says: a key and a megabyte."""
    return f"failed with api_key={SECRET} " + "x" * 1_000_000


def _check_typed(err: BaseException, kind: type[TreehopError], original: str) -> None:
    assert isinstance(err, kind), type(err)
    text = str(err)
    assert len(text) <= 500
    assert original in text  # (names what the plug-in raised)
    assert SECRET not in text and SECRET[:12] not in text
    # the original is kept for a debugger, out of printed tracebacks
    assert err.__cause__ is None and err.__suppress_context__
    assert type(err.__context__).__name__ == original
    shown = "".join(traceback.format_exception(err))
    assert SECRET not in shown and len(shown) < 20_000


class RaisingTagger:
    """A custom tagger over the keyword tagger raising ``exc`` at ``where``."""

    def __init__(self, exc: Callable[[str], BaseException] | None, where: str = "tag") -> None:
        self.base = IngestTagger()
        self.exc, self.where = exc, where

    def tag_nodes(
        self, nodes: Sequence[Node], store: VectorStore, new_texts: Sequence[str] | None = None
    ) -> dict[str, NodeTags]:
        out = self.base.tag_nodes(nodes, store, new_texts)
        if self.exc is not None and self.where == "tag":
            raise self.exc(_message())
        return out

    def refit(self, store: VectorStore) -> None:
        if self.exc is not None and self.where == "refit":
            raise self.exc(_message())
        self.base.refit(store)


def _dump(th: Treehop) -> list[str]:
    return sorted(n.model_dump_json() for n in th.store.iter_nodes())


def _folder(tmp_path: Path, n: int = 3) -> Path:
    d = tmp_path / "docs"
    d.mkdir(exist_ok=True)
    for i in range(n):
        (d / f"f{i}.md").write_text(f"# File {i}\n\nCats and dogs number {i} live here.\n")
    return d


WRITES: dict[str, Callable[[Treehop, Path], object]] = {
    "text": lambda th, tmp: th.add_resource("Ferrets sleep a lot.", name="new.md"),
    "folder": lambda th, tmp: th.add_resource(_folder(tmp), target_uri="viking://resources/d"),
    "records": lambda th, tmp: add_records(th, [("Ferrets sleep.", {"source": "r1.md"})]),
    "remember": lambda th, tmp: th.remember("Ada likes ferrets."),
    "add_messages": lambda th, tmp: th.add_messages(
        [{"role": "user", "content": "I keep ferrets."}], session_id="s1"
    ),
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("write", WRITES)
def test_a_custom_taggers_own_exception_is_a_tagger_error_and_nothing_is_written(
    tmp_path: Path, kind: str, write: str
) -> None:
    tagger = RaisingTagger(None)
    th = Treehop(tmp_path / "ix", embedder=BagOfWordsEmbedder(), tagger=tagger)
    th.add_resource("Cats purr. Dogs bark.", name="seed.md")
    before = _dump(th)
    tagger.exc = KINDS[kind]
    with pytest.raises(TreehopError) as info:
        WRITES[write](th, tmp_path)
    _check_typed(info.value, TaggerError, type(info.value.__context__).__name__)
    assert type(info.value.__context__) is (Abort if kind == "BaseException" else KINDS[kind])
    assert _dump(th) == before
    th.close()
    assert _dump(Treehop(tmp_path / "ix", embedder=BagOfWordsEmbedder(), tagger=False)) == before


@pytest.mark.parametrize("kind", KINDS)
def test_a_custom_taggers_refit_failing_in_retag_is_a_tagger_error(
    tmp_path: Path, kind: str
) -> None:
    tagger = RaisingTagger(None)
    th = Treehop(tmp_path / "ix", embedder=BagOfWordsEmbedder(), tagger=tagger)
    th.add_resource(_folder(tmp_path))
    before = _dump(th)
    tagger.exc, tagger.where = KINDS[kind], "refit"
    with pytest.raises(TaggerError) as info:
        th.retag()
    _check_typed(info.value, TaggerError, type(info.value.__context__).__name__)
    assert _dump(th) == before


def test_the_async_clients_tagger_failure_is_typed_too(tmp_path: Path) -> None:
    async def main() -> None:
        tagger = RaisingTagger(Abort)
        th = AsyncTreehop(embedder=BagOfWordsEmbedder(), tagger=tagger)
        with pytest.raises(TaggerError):
            await th.add_resource(_folder(tmp_path))
        assert len(th.store) == 0
        await th.close()

    asyncio.run(main())


def test_a_tagger_raising_a_treehop_error_or_a_signal_passes_as_it_is() -> None:
    """Control: treehop's own errors keep their class; Ctrl-C, exit, a cancellation pass."""
    for exc in (
        InvalidTagError("bad tag"),
        KeyboardInterrupt(),
        SystemExit(3),
        asyncio.CancelledError(),
        GeneratorExit(),
    ):
        assert passes(exc)

        def boom(e: BaseException = exc) -> None:
            raise e

        with pytest.raises(type(exc)):
            call("the tagger", TaggerError, boom)
    for other in (ValueError("v"), Abort("a")):
        assert not passes(other)
    assert is_signal(KeyboardInterrupt()) and not is_signal(InvalidTagError("x"))


def test_a_plugins_message_is_read_cut_and_redacted_even_when_str_fails() -> None:
    assert describe(BadStr()) == "BadStr: <unprintable>"
    big = describe(ValueError(_message()))
    assert len(big) == 500 and SECRET not in big
    assert describe(type("N" * 1000, (Exception,), {})()) == "N" * 100


# --------------------------------------------------------------- the embedder guard


class AbortingEmbedder(BagOfWordsEmbedder):
    def __init__(self, exc: Callable[[str], BaseException]) -> None:
        super().__init__()
        self.exc = exc
        self.armed = False

    def embed(self, texts: Sequence[str]) -> Any:
        if self.armed:
            raise self.exc(_message())
        return super().embed(texts)

    def embed_query(self, text: str) -> Any:
        if self.armed:
            raise self.exc(_message())
        return super().embed_query(text)


@pytest.mark.parametrize("path", ["sync", "async"])
def test_an_embedders_base_exception_is_an_embedding_error(tmp_path: Path, path: str) -> None:
    emb = AbortingEmbedder(Abort)
    th = Treehop(tmp_path / "ix", embedder=emb)
    th.add_resource("Cats purr.", name="seed.md")
    before = _dump(th)
    emb.armed = True
    if path == "sync":
        for fn in (lambda: th.find("cats"), lambda: th.add_resource("Dogs.", name="d.md")):
            with pytest.raises(EmbeddingError) as info:
                fn()
            _check_typed(info.value, EmbeddingError, "Abort")
    else:

        async def main() -> None:
            ath = AsyncTreehop(store=th.store, embedder=emb)
            with pytest.raises(EmbeddingError):
                await ath.find("cats")
            with pytest.raises(EmbeddingError):
                await ath.add_resource("Dogs.", name="d.md")

        asyncio.run(main())
    assert _dump(th) == before


def test_the_embedder_guard_lets_a_ctrl_c_through() -> None:
    """Control: a Ctrl-C in the embedder is not made an EmbeddingError (before and after)."""
    guard = GuardedEmbedder(AbortingEmbedder(KeyboardInterrupt))
    guard.inner.armed = True  # type: ignore[attr-defined]
    with pytest.raises(KeyboardInterrupt):
        guard.embed(["x"])


# --------------------------------------------- the fallbacks: reranker, planner, models


class AbortingReranker:
    name = "aborting"

    def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        raise Abort(_message())

    async def arerank(self, query: str, documents: Sequence[str]) -> list[float]:
        raise Abort(_message())


class AbortingLLM:
    name = "aborting-llm"

    def complete(self, messages: Sequence[ChatMessage], *, json_mode: bool = False) -> str:
        raise Abort(_message())

    async def acomplete(self, messages: Sequence[ChatMessage], *, json_mode: bool = False) -> str:
        raise Abort(_message())


def _fallback_reason(reason: str | None) -> None:
    assert reason is not None and "Abort" in reason
    assert len(reason) <= 500 and SECRET not in reason


def test_a_rerankers_base_exception_falls_back_and_says_why() -> None:
    th = Treehop(embedder=BagOfWordsEmbedder(), reranker=AbortingReranker())
    th.add_resource("Cats purr. Cats sleep.", name="a.md")
    res = th.find("cats", mode="thinking", limit=3)
    assert res.resources  # (the vector scores still answer)
    assert res.resources[0].rerank_fallback
    _fallback_reason(res.resources[0].rerank_fallback_reason)


def test_the_planners_base_exception_falls_back_and_says_why() -> None:
    th = Treehop(embedder=BagOfWordsEmbedder(), llm=AbortingLLM())
    th.add_resource("Cats purr. Cats sleep.", name="a.md")
    res = th.search("cats")
    assert res.query_plan is not None
    _fallback_reason(res.query_plan.fallback_reason)
    assert res.resources


def test_a_memory_extractors_base_exception_is_reported_not_raised() -> None:
    class Extractor:
        async def extract(self, turns: Sequence[Any]) -> tuple[str, list[str]]:
            raise Abort(_message())

    th = Treehop(embedder=BagOfWordsEmbedder())
    res = th.add_messages(
        [{"role": "user", "content": "I keep ferrets."}], session_id="s1", extractor=Extractor()
    )
    _fallback_reason(res.extraction_error)
    assert len(th.store) > 0  # (the turns are written; the extraction is not)


def test_a_session_summary_models_base_exception_falls_back_to_extractive() -> None:
    from treehop.sessions import SessionStore

    store = SessionStore(llm=AbortingLLM(), max_messages=2, keep_recent=1)
    sid = store.create_session()
    for i in range(3):
        store.add_message(sid, "user", f"Sentence {i}. Tail.")
    s = store.get(sid)
    assert s.summary_method == "extractive"
    _fallback_reason(s.summary_fallback_reason)

    async def main() -> None:
        sid = store.create_session()
        for i in range(3):
            await store.aadd_message(sid, "user", f"Sentence {i}. Tail.")
        _fallback_reason(store.get(sid).summary_fallback_reason)

    asyncio.run(main())


def test_an_llm_taggers_model_base_exception_keeps_the_automatic_tags() -> None:
    tagger = LLMTagger(AbortingLLM())
    th = Treehop(embedder=BagOfWordsEmbedder(), tagger=tagger)
    plain = Treehop(embedder=BagOfWordsEmbedder())
    for client in (th, plain):
        client.add_resource("Cats purr. Cats sleep on mats.", name="a.md")
    assert tagger.fallbacks >= 1 and "Abort" in tagger.last_error
    assert _dump(th) == _dump(plain)  # (written, with the automatic tags alone)


# ---------------------------------------------- a summarizer, a progress callback, a counter


class AbortingSummarizer(ExtractiveSummarizer):
    def __init__(self, answer: object = None) -> None:
        self.answer = answer

    def summarize_file(self, name: str, text: str, kind: str) -> Any:
        if self.answer is None:
            raise Abort(_message())
        return self.answer


@pytest.mark.parametrize("answer", [None, "just a string", ("one",), (1, 2)])
def test_a_summarizers_failure_or_wrong_answer_is_an_ingest_error(
    tmp_path: Path, answer: object
) -> None:
    th = Treehop(embedder=BagOfWordsEmbedder(), summarizer=AbortingSummarizer(answer))
    for write in (
        lambda: th.add_resource("Cats purr.", name="a.md"),
        lambda: th.add_resource(_folder(tmp_path)),
        lambda: add_records(th, [("a", {"source": "p.md"}), ("b", {"source": "p.md"})]),
    ):
        with pytest.raises(IngestError) as info:
            write()
        if answer is None:
            _check_typed(info.value, IngestError, "Abort")
        else:
            assert "(abstract, overview)" in str(info.value)
        assert len(th.store) == 0


@pytest.mark.parametrize("kind", KINDS)
def test_a_progress_callback_raising_is_an_ingest_error(tmp_path: Path, kind: str) -> None:
    th = Treehop(embedder=BagOfWordsEmbedder())

    def progress(stage: str, done: int, total: int) -> None:
        raise KINDS[kind](_message())

    with pytest.raises(IngestError) as info:
        th.add_resource(_folder(tmp_path), progress=progress)
    _check_typed(info.value, IngestError, type(info.value.__context__).__name__)
    with pytest.raises(IngestError):
        add_records(th, [("a", {"source": "r.md"})], progress=progress)


def test_a_token_counters_base_exception_is_an_invalid_query_error() -> None:
    class Counter:
        name = "aborting"

        def count(self, text: str) -> int:
            raise Abort(_message())

    th = Treehop(embedder=BagOfWordsEmbedder())
    th.add_resource("Cats purr.", name="a.md")
    with pytest.raises(InvalidQueryError) as info:
        th.assemble_context("cats", token_counter=Counter())
    assert "Abort" in str(info.value) and SECRET not in str(info.value)


# ------------------------------------------- 2. errors built from many names are bounded

MANY = 20_000
UNKNOWN = {f"unknown_keyword_argument_{i:05d}": i for i in range(MANY)}
LONG_NAME = "n" * 1_000_000
"""A megabyte keyword name: cut before it is escaped."""


def _bounded(err: BaseException, more: int) -> None:
    text = str(err)
    assert len(text) < 2_000, len(text)
    assert f"and {more} more" in text
    assert "unknown_keyword_argument_00000" in text  # (the first few by name are listed)
    assert "unknown_keyword_argument_19999" not in text


CALLS: dict[str, Callable[[Treehop, dict[str, Any]], object]] = {
    "find": lambda th, kw: th.find("cats", **kw),
    "search": lambda th, kw: th.search("cats", **kw),
    "assemble_context": lambda th, kw: th.assemble_context("cats", **kw),
    "find_many": lambda th, kw: th.find_many(["cats"], **kw),
    "Treehop()": lambda th, kw: Treehop(**kw),
}


@pytest.mark.parametrize("name", CALLS)
def test_twenty_thousand_unknown_keywords_give_a_bounded_message(name: str) -> None:
    th = Treehop(embedder=BagOfWordsEmbedder())
    with pytest.raises(InvalidQueryError) as info:
        CALLS[name](th, UNKNOWN)
    _bounded(info.value, MANY - 5)
    # a name that is a registered key is masked; a megabyte name is cut
    with pytest.raises(InvalidQueryError) as info:
        CALLS[name](th, {SECRET: 1, LONG_NAME: 2})
    text = str(info.value)
    assert SECRET not in text and len(text) < 2_000


def test_a_filter_with_many_unknown_keys_gives_a_bounded_message() -> None:
    th = Treehop(embedder=BagOfWordsEmbedder())
    with pytest.raises(InvalidFilterError) as info:
        th.find("cats", filter={"op": "empty", "field": "a", **UNKNOWN})
    _bounded(info.value, MANY - 5)


def test_many_records_at_one_place_give_a_bounded_message() -> None:
    th = Treehop(embedder=BagOfWordsEmbedder())
    with pytest.raises(InvalidURIError) as info:
        add_records(th, [("a", {"source": "p.md"})] * MANY, on_duplicate="error")
    text = str(info.value)
    assert len(text) < 1_000 and "documents 0, 1, 2, 3, 4 and 19995 more" in text


def test_a_prompt_template_with_many_unknown_placeholders_gives_a_bounded_message() -> None:
    template = "$query " + " ".join(f"$unknown_keyword_argument_{i:05d}" for i in range(MANY))
    with pytest.raises(InvalidQueryError) as info:
        IntentAnalyzer(None, prompt_template=template)
    _bounded(info.value, MANY - 5)


def test_listed_shows_the_first_few_by_name_whatever_their_type() -> None:
    """The shared rule: the smallest five by their text, cut, escaped, redacted."""
    assert listed(["b", "a", "c"]) == "'a', 'b', 'c'"
    assert listed({"x\n", 3, "y" * 100}, first=2) == r"'3', 'x\n' and 1 more"
    assert listed([SECRET]) == "'***'"
    assert listed(range(7), str) == "0, 1, 2, 3, 4 and 2 more"


# ------------------------------------ 3. a URL's credentials: used, never shown or kept plain

URL_PASSWORD = "l63-url-password-9f8e7d"


def _with_credentials(url: str) -> str:
    scheme, _, rest = url.partition("://")
    return f"{scheme}://ada:{URL_PASSWORD}@{rest}"


def _nothing_shows_the_password(obj: object) -> None:
    """No public attribute, ``vars()`` value, ``repr``, pickled state's repr shows it."""
    public = {n: getattr(obj, n) for n in dir(obj) if not n.startswith("_")}
    shown = [repr(v) for v in public.values() if not callable(v)]
    shown += [repr(v) for v in vars(obj).values()]
    shown += [repr(obj), repr(obj.__getstate__())]  # type: ignore[attr-defined]
    assert not [s for s in shown if URL_PASSWORD in s]


def _basic_auth(headers: dict[str, str]) -> str:
    import base64

    kind, _, value = headers.get("authorization", "").partition(" ")
    assert kind == "Basic", headers
    return base64.b64decode(value).decode()


def test_an_llms_url_credentials_are_sent_and_never_shown_nor_kept_plain(
    caplog: pytest.LogCaptureFixture,
) -> None:
    import logging
    import pickle

    from treehop.llm.openai_compatible import OpenAICompatibleLLM

    from fake_servers.openai_chat import FakeOpenAIChatServer, Reply

    with FakeOpenAIChatServer(default=Reply.chat("fine")) as srv:
        url = _with_credentials(srv.base_url)
        llm = OpenAICompatibleLLM("m", base_url=url, max_retries=0)
        assert llm.base_url == url.replace(f"ada:{URL_PASSWORD}", "***")
        assert URL_PASSWORD not in llm.url
        _nothing_shows_the_password(llm)
        with caplog.at_level(logging.DEBUG):
            assert llm.complete([ChatMessage(role="user", content="hi")]) == "fine"
            copy = pickle.loads(pickle.dumps(llm))
            assert copy.complete([ChatMessage(role="user", content="hi")]) == "fine"
        assert [_basic_auth(r.headers) for r in srv.requests] == [f"ada:{URL_PASSWORD}"] * 2
        _nothing_shows_the_password(copy)
        srv.enqueue(Reply.error(500, f"bad url {url}"))
        with pytest.raises(LLMError) as info:
            llm.complete([ChatMessage(role="user", content="hi")])
    assert URL_PASSWORD not in str(info.value)
    assert URL_PASSWORD not in caplog.text


def test_an_embedders_url_credentials_are_sent_and_never_shown_nor_kept_plain(
    caplog: pytest.LogCaptureFixture,
) -> None:
    import logging
    import pickle

    from treehop._http import RetryPolicy
    from treehop.embedders.openai_compatible import OpenAICompatibleEmbedder

    from fake_servers.openai_embeddings import FakeOpenAIEmbeddingsServer
    from fake_servers.openai_embeddings import Reply as EmbReply

    with FakeOpenAIEmbeddingsServer(dim=4) as srv:
        url = _with_credentials(srv.base_url)
        emb = OpenAICompatibleEmbedder(
            "m", base_url=url, dimension=4, retry=RetryPolicy(max_retries=0)
        )
        assert emb.url == f"{url}/embeddings".replace(f"ada:{URL_PASSWORD}", "***")
        _nothing_shows_the_password(emb)
        with caplog.at_level(logging.DEBUG):
            assert emb.embed(["a"]).shape == (1, 4)
            copy = pickle.loads(pickle.dumps(emb))
            assert copy.embed(["b"]).shape == (1, 4)
        assert [_basic_auth(r.headers) for r in srv.requests] == [f"ada:{URL_PASSWORD}"] * 2
        _nothing_shows_the_password(copy)
        for reply in (EmbReply.drop_last_row(), EmbReply.error(500, f"echo {url}")):
            srv.enqueue(reply)
            with pytest.raises(EmbeddingError) as info:
                emb.embed(["a", "b"])
            assert URL_PASSWORD not in str(info.value), str(info.value)
    assert URL_PASSWORD not in caplog.text


def test_an_http_rerankers_url_credentials_are_not_in_its_attributes() -> None:
    from treehop.rerankers.http_rerank import HTTPReranker

    rr = HTTPReranker(_with_credentials("http://127.0.0.1:9/v2"))
    assert URL_PASSWORD not in rr.base_url and URL_PASSWORD not in rr.url
    shown = [repr(v) for v in vars(rr).values()] + [repr(rr), rr.name]
    assert not [s for s in shown if URL_PASSWORD in s]


# ------------------------- 4. a directory ingest failing after a commit: the counts committed


def _files(root: Path, names: Sequence[int]) -> Path:
    root.mkdir(parents=True)
    for i in names:  # (each file's own words: a count of an uncommitted one shows)
        (root / f"f{i}.md").write_text(
            f"# File {i}\n\n" + f"apples pears word{i}x notes{i}y " * 20, encoding="utf-8"
        )
    return root


@pytest.mark.parametrize("fail_at", [3, 4])
def test_a_directory_ingest_failing_after_a_commit_keeps_exactly_the_committed_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fail_at: int
) -> None:
    """The failed ingest's statistics equal an ingest of the committed files alone (the
    files it counted but never committed are not in them); a retag, which recounts, then
    changes nothing. At f7f9233 the statistics held every file of the folder."""
    from treehop.ingest import writer as writer_module

    emb = FlakyEmbedder()
    src = _files(tmp_path / "src" / "d", range(4))
    with Treehop(tmp_path / "idx", embedder=emb, reader_processes=0) as th:
        th.aio.writer.commit_files = 1
        monkeypatch.setattr(writer_module, "EMBED_BATCH", 1)  # (a commit after each file)
        th.add_resource("seed text about plums", target_uri="viking://resources/seed.md")
        emb.arm(fail_at)  # (the 3rd / 4th embed call: after one file's commit or two)
        with pytest.raises(EmbeddingError):
            th.add_resource(src, target_uri="viking://resources/d")
        stored = {u for u in th.store.iter_uris() if u.startswith("viking://resources/d/")}
        committed = sorted(int(u.rsplit("/f", 1)[1][:-3]) for u in stored)
        assert committed and len(committed) < 4  # (a partial commit)
        failed = stored_keyword_statistics(th.store)
        emb.arm(None)
        th.retag()  # (a recount: the same counts, nothing counted twice)
        retagged = stored_keyword_statistics(th.store)
    with Treehop(None, embedder=BagOfWordsEmbedder()) as control:
        control.add_resource("seed text about plums", target_uri="viking://resources/seed.md")
        control.add_resource(
            _files(tmp_path / "only" / "d", committed), target_uri="viking://resources/d"
        )
        expected = stored_keyword_statistics(control.store)
    assert failed == expected
    assert retagged == expected


def test_a_registered_key_given_as_a_numeric_option_is_echoed_masked() -> None:
    """A value shown by a check's error (``validation.shown_value``) goes through the
    redactor, as a name does (``shown_name``): an API key pasted into ``k`` or ``limit`` is
    not echoed in the message (lead, stop 63)."""
    from treehop.errors import InvalidQueryError
    from treehop.redaction import register_secret
    from treehop.validation import check_limit

    key = "sk-lead63-" + "q7Zx" * 8
    register_secret(key)
    with pytest.raises(InvalidQueryError) as info:
        check_limit(key)
    assert key not in str(info.value) and key[:40] not in str(info.value)
    assert "must be an integer" in str(info.value)
