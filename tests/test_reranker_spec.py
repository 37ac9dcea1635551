"""``--reranker SPEC``: one string names a reranker, so the CLI's ``--mode thinking`` reranks.

The spec parser is checked form by form, and the CLI end to end against a fake ``/rerank``
server over real HTTP: the hits carry the server's scores, and a server fault falls back to the
vector scores with the reason printed.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import Treehop
from treehop.cli import ClientOptions, ExitCode, main
from treehop.errors import RerankError
from treehop.rerankers import CrossEncoderReranker, HTTPReranker, LLMReranker, VikingDBReranker
from treehop.rerankers.spec import reranker_from_spec

from fake_servers.openai_chat import FakeOpenAIChatServer
from fake_servers.rerank_servers import FakeRerankServer, Reply
from treehop_test_doubles import SAMPLE_TREE, BagOfWordsEmbedder


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("TREEHOP_RERANKER", "TREEHOP_LLM_MODEL", "TREEHOP_INDEX", "TREEHOP_USER"):
        monkeypatch.delenv(var, raising=False)


def test_http_spec_splits_url_and_model() -> None:
    r = reranker_from_spec("http:http://127.0.0.1:9/v2#rerank-english-v3.0")
    assert isinstance(r, HTTPReranker)
    assert r.url == "http://127.0.0.1:9/v2/rerank"
    assert r.model == "rerank-english-v3.0"
    assert r.flavor == "cohere"


def test_http_spec_without_model_sends_none() -> None:
    r = reranker_from_spec("http:http://127.0.0.1:9")
    assert isinstance(r, HTTPReranker)
    assert r.model is None


def test_tei_spec_and_model_rejected_for_tei() -> None:
    r = reranker_from_spec("tei:http://127.0.0.1:9")
    assert isinstance(r, HTTPReranker) and r.flavor == "tei"
    with pytest.raises(RerankError, match="TEI"):
        reranker_from_spec("tei:http://127.0.0.1:9#m")


def test_vikingdb_spec_names_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VOLC_ACCESSKEY", raising=False)
    with pytest.raises(RerankError, match="access key"):
        reranker_from_spec("vikingdb:base-multilingual-rerank")
    monkeypatch.setenv("VOLC_ACCESSKEY", "ak-test")
    monkeypatch.setenv("VOLC_SECRETKEY", "sk-test")
    r = reranker_from_spec("vikingdb:base-multilingual-rerank")
    assert isinstance(r, VikingDBReranker)
    assert r.model == "base-multilingual-rerank"


def test_cross_encoder_spec_checks_the_folder(tmp_path: Path) -> None:
    with pytest.raises(RerankError, match="not found"):
        reranker_from_spec(f"cross-encoder:{tmp_path / 'missing'}")
    # an existing folder gets as far as loading the model, which names what is missing
    with pytest.raises(RerankError) as info:
        reranker_from_spec(f"cross-encoder:{tmp_path}")
    assert "not found" not in str(info.value)
    assert CrossEncoderReranker.__name__ in repr(CrossEncoderReranker)


def test_llm_spec_needs_a_model() -> None:
    with pytest.raises(RerankError, match="chat model"):
        reranker_from_spec("llm")
    with FakeOpenAIChatServer() as srv:
        from treehop.llm import OpenAICompatibleLLM

        llm = OpenAICompatibleLLM("m", base_url=srv.base_url, api_key="k")
        assert isinstance(reranker_from_spec("llm", llm=llm), LLMReranker)


@pytest.mark.parametrize(
    "spec", ["", "   ", "http", "http:", "cohere:http://x", "ftp:x", "http:ftp://x", "llm:x"]
)
def test_bad_specs_are_typed_errors(spec: str) -> None:
    with pytest.raises(RerankError):
        reranker_from_spec(spec)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60))
def test_any_text_is_a_reranker_or_a_rerank_error(spec: str) -> None:
    try:
        r = reranker_from_spec(spec)
    except RerankError:
        return
    assert hasattr(r, "rerank") and hasattr(r, "arerank")


# ------------------------------------------------------------------------- the CLI


class _Factory:
    def __init__(self) -> None:
        self.options: list[ClientOptions] = []

    def __call__(self, options: ClientOptions) -> Treehop:
        self.options.append(options)
        return Treehop(
            options.path,
            user=options.user,
            llm=options.llm,
            embedder=BagOfWordsEmbedder(),
            reranker=options.reranker,
        )


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    idx = tmp_path_factory.mktemp("rerank-cli") / "index"
    src = SAMPLE_TREE / "resources" / "security"
    assert main(["index", str(src), "--index", str(idx)], client_factory=_Factory()) == 0
    return idx


@pytest.fixture
def server() -> Iterator[FakeRerankServer]:
    with FakeRerankServer() as srv:
        yield srv


def _copy(index: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "idx"
    shutil.copytree(index, dst)
    return dst


def test_cli_find_reranks_through_the_spec(
    index: Path, tmp_path: Path, server: FakeRerankServer, capsys: pytest.CaptureFixture[str]
) -> None:
    factory = _Factory()
    argv = ["find", "oauth token validation", "--index", str(_copy(index, tmp_path))]
    code = main(
        [*argv, "--reranker", f"http:{server.base_url}#fake", "--json"], client_factory=factory
    )
    out = capsys.readouterr().out
    assert code == ExitCode.OK
    assert isinstance(factory.options[0].reranker, HTTPReranker)
    assert server.requests, "the reranker was never called: --reranker did nothing"
    assert server.requests[0].json["model"] == "fake"
    assert '"rerank_score": 0.' in out or '"rerank_score": 1.0' in out


def test_cli_reranker_from_environment_and_fallback_is_reported(
    index: Path,
    tmp_path: Path,
    server: FakeRerankServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TREEHOP_RERANKER", f"http:{server.base_url}")
    server.script(*[Reply(500, {"message": "boom"})] * 20)
    argv = ["find", "oauth", "--index", str(_copy(index, tmp_path)), "--explain"]
    code = main(argv, client_factory=_Factory())
    out = capsys.readouterr().out
    assert code == ExitCode.OK
    assert server.requests
    assert "rerank fell back" in out


def test_cli_quick_mode_wins_over_the_reranker(
    index: Path, tmp_path: Path, server: FakeRerankServer, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["find", "oauth", "--index", str(_copy(index, tmp_path)), "--mode", "quick"]
    code = main([*argv, "--reranker", f"http:{server.base_url}"], client_factory=_Factory())
    capsys.readouterr()
    assert code == ExitCode.OK
    assert not server.requests


def test_cli_bad_spec_is_a_usage_error(
    index: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["find", "oauth", "--index", str(_copy(index, tmp_path)), "--reranker", "nope:x"]
    code = main(argv, client_factory=_Factory())
    err = capsys.readouterr().err
    assert code == ExitCode.USAGE
    assert "unknown reranker kind" in err
