"""``import treehop`` leaves the HTTP client stack out until a remote model needs it (helper
leftovers75): ``treehop._http`` imports httpx, httpcore, trio and rich (1.1-2.9 s of a
5-10 s ``import treehop`` at load 8-12), which a client with the offline defaults never
uses. The names that lived in the eager imports still resolve, to the same objects."""

from __future__ import annotations

import functools
import subprocess
import sys

import pytest

HTTP_STACK = ("httpx", "httpcore", "treehop._http")


# After the statement's modules are listed, the same process says whether the redacting log
# filter is on (the control below reads it after ``import treehop``): one interpreter and one
# ``import treehop`` for both (~1.2 s of CPU each; helper ci77). The filter's check runs after
# the list is taken, so it cannot add to it.
_FILTER_ON = (
    "import logging\n"
    "from treehop.redaction import RedactingFilter\n"
    "print(all(any(isinstance(f, RedactingFilter) for f in logging.getLogger(n).filters)"
    " for n in ('treehop', 'httpx', 'httpcore')))"
)


@functools.cache
def _run_after(statement: str) -> tuple[str, ...]:
    code = (
        f"{statement}\nimport sys\nprint(','.join(m for m in {HTTP_STACK!r} if m in sys.modules))"
        f"\n{_FILTER_ON}"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300
    )
    return tuple(out.stdout.splitlines())


def _loaded_after(statement: str) -> list[str]:
    return [m for m in _run_after(statement)[0].strip().split(",") if m]


@pytest.mark.parametrize(
    "statement",
    [
        "import treehop",
        "import treehop.cli",
        "from treehop import Treehop, EmbeddedStore",
        "import treehop.llm, treehop.embedders, treehop.rerankers",
    ],
)
def test_import_leaves_the_http_stack_out(statement: str) -> None:
    assert _loaded_after(statement) == []


def test_a_remote_model_still_loads_it() -> None:
    """Control: the OpenAI-compatible LLM's name (through the package) imports the stack."""
    loaded = _loaded_after("from treehop.llm import OpenAICompatibleLLM")
    assert set(loaded) == set(HTTP_STACK)


def test_lazy_names_resolve_to_the_modules_objects() -> None:
    import treehop.embedders as emb
    import treehop.llm as llm
    import treehop.rerankers as rr
    from treehop import _http, validation
    from treehop.embedders import openai_compatible as emb_oa
    from treehop.llm import openai_compatible as llm_oa
    from treehop.rerankers import cross_encoder, http_rerank, llm_rerank, vikingdb_rerank

    for name in ("API_KEY_ENV_VARS", "LLMConfig", "ModelsConfig", "OpenAICompatibleLLM"):
        assert getattr(llm, name) is getattr(llm_oa, name)
    assert llm.ModelRegistry is llm_oa.ModelRegistry
    assert llm_oa.ModelsConfig().build().__class__ is llm.ModelRegistry
    assert emb.OpenAICompatibleEmbedder is emb_oa.OpenAICompatibleEmbedder
    assert rr.CrossEncoderReranker is cross_encoder.CrossEncoderReranker
    assert rr.HTTPReranker is http_rerank.HTTPReranker
    assert rr.LLMReranker is llm_rerank.LLMReranker
    assert rr.VikingDBReranker is vikingdb_rerank.VikingDBReranker
    assert _http.check_deadline is validation.check_deadline
    for mod in (llm, emb, rr):
        assert set(mod.__all__) <= set(dir(mod)) | {n for n in mod.__all__ if hasattr(mod, n)}
        with pytest.raises(AttributeError, match="no attribute 'Nope'"):
            mod.Nope  # noqa: B018


def test_the_log_filter_is_on_after_import_treehop_alone() -> None:
    """Control (passes on the base too): ``treehop._http`` attached the redacting log filter
    when ``import treehop`` imported it; without that import the client module attaches it
    (a registered secret in the package's hints is masked with no remote model loaded)."""
    assert _run_after("import treehop")[1].strip() == "True"
