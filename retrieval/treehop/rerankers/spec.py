"""One-line reranker specs, so a command line or a config file can name a reranker.

Why a spec string: ``treehop find --mode thinking`` reranks only when a reranker is configured,
and a CLI (or an environment variable, or a YAML file) can only carry text. The grammar is small
and every provider keeps its own defaults (keys from the environment, timeouts):

====================================  =========================================================
``http:URL`` / ``http:URL#MODEL``     :class:`HTTPReranker`, Cohere/Jina/vLLM ``/rerank`` API;
                                      ``URL`` is everything before ``/rerank``
``tei:URL``                           :class:`HTTPReranker` with the TEI flavor
``vikingdb:MODEL``                    :class:`VikingDBReranker` (AK/SK from the environment)
``cross-encoder:PATH``                :class:`CrossEncoderReranker` over a local model folder
``llm``                               :class:`LLMReranker` over the given chat model
====================================  =========================================================

A bad spec is a :class:`~treehop.errors.RerankError` that names the accepted forms.
"""

from __future__ import annotations

from ..errors import RerankError
from ..llm.base import LLM
from ..redaction import redact_url
from .base import Reranker

SPEC_FORMS = "http:URL[#MODEL], tei:URL, vikingdb:MODEL, cross-encoder:PATH or llm"


def reranker_from_spec(spec: str, *, llm: LLM | None = None) -> Reranker:
    """Build the reranker a spec names (see the module docstring for the grammar).

    ``llm`` is only used by the ``llm`` form; naming that form without one is an error rather
    than a silent "no reranker", because ``--mode thinking`` would then do nothing.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise RerankError(f"empty reranker spec; expected {SPEC_FORMS}")
    spec = spec.strip()
    if spec == "llm":
        if llm is None:
            raise RerankError("reranker spec 'llm' needs a chat model (e.g. --llm-model)")
        from .llm_rerank import LLMReranker

        return LLMReranker(llm)
    kind, sep, rest = spec.partition(":")
    if not sep or not rest:
        raise RerankError(f"reranker spec {redact_url(spec)!r} is not one of {SPEC_FORMS}")
    if kind in ("http", "tei"):
        from .http_rerank import HTTPReranker

        url, _, model = rest.partition("#")
        if kind == "tei" and model:
            raise RerankError("a TEI server serves one model: write tei:URL without #MODEL")
        return HTTPReranker(url, model=model or None, flavor="cohere" if kind == "http" else "tei")
    if kind == "vikingdb":
        from .vikingdb_rerank import VikingDBReranker

        return VikingDBReranker(model=rest)
    if kind == "cross-encoder":
        from .cross_encoder import CrossEncoderReranker

        return CrossEncoderReranker(rest)
    raise RerankError(
        f"unknown reranker kind {redact_url(kind)!r} in {redact_url(spec)!r}; expected {SPEC_FORMS}"
    )
