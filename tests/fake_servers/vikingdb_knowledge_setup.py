"""The "handbook" knowledge base that the VikingDB knowledge-source tests share.

The core, LangChain and LlamaIndex tests search the same small handbook (an OAuth document of
four chunks, a Kubernetes one and a cost report) through the real
:class:`~treehop.vikingdb_knowledge.VikingDBKnowledgeSource` against :class:`FakeVikingDB`; the
data and the server/source setup live here so that the three suites cannot drift apart. Each
suite still picks its own extra fields (attachments, ``extra``) and its own keys.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from treehop._http import RetryPolicy
from treehop.vikingdb_knowledge import VikingDBKnowledgeSource

from fake_servers.vikingdb_server import FakeVikingDB, KnowledgePoint

KB_NAME = "handbook"
PREFIX = f"viking://resources/{KB_NAME}"
FILTER_FIELDS = ("doc_id", "year", "team")
IMAGE_ATTACHMENTS: list[dict[str, Any]] = [
    {"uuid": "img-1", "type": "image", "link": "https://tos.example/img-1"}
]


def oauth_points() -> list[KnowledgePoint]:
    """``doc_oauth``: four chunks; chunk 1 matches "validate OAuth access tokens" best."""
    return [
        KnowledgePoint(
            "doc_oauth",
            i,
            text,
            chunk_title=title,
            doc_name="oauth.md",
            doc_meta={"year": 2023, "team": "security"},
        )
        for i, (title, text) in enumerate(
            [
                ("Overview", "OAuth overview for our services"),
                (
                    "Validation",
                    "validate OAuth access tokens: check signature, expiry and audience",
                ),
                ("Refresh", "refresh tokens rotate every day"),
                ("Scopes", "token scopes limit what a client may do"),
            ]
        )
    ]


def k8s_point(**kwargs: Any) -> KnowledgePoint:
    """``doc_k8s`` (2022, platform); ``kwargs`` adds fields such as ``extra``."""
    return KnowledgePoint(
        "doc_k8s",
        0,
        "kubernetes rollout of the token service",
        chunk_title="Rollout",
        doc_name="k8s.md",
        doc_meta={"year": 2022, "team": "platform"},
        **kwargs,
    )


def costs_point(
    doc_id: str = "doc_costs",
    content: str = "quarterly report on access token costs",
    **kwargs: Any,
) -> KnowledgePoint:
    """The 2024 finance report ``q1.pdf``; ``kwargs`` adds ``attachments`` or ``extra``."""
    return KnowledgePoint(
        doc_id,
        0,
        content,
        chunk_title="Costs",
        doc_name="q1.pdf",
        doc_meta={"year": 2024, "team": "finance"},
        **kwargs,
    )


@contextmanager
def knowledge_server(ak: str, sk: str, points: Sequence[KnowledgePoint]) -> Iterator[FakeVikingDB]:
    """A started :class:`FakeVikingDB` serving ``points`` as the handbook knowledge base."""
    with FakeVikingDB(ak=ak, sk=sk) as server:
        server.add_knowledge_base(KB_NAME, points, filter_fields=list(FILTER_FIELDS))
        yield server


def make_knowledge_source(
    srv: FakeVikingDB,
    *,
    ak: str | None,
    sk: str | None,
    retry: RetryPolicy,
    name: str = KB_NAME,
    **kwargs: Any,
) -> VikingDBKnowledgeSource:
    """The real source pointed at ``srv`` over plain HTTP; ``kwargs`` go to the constructor."""
    kwargs.setdefault("scheme", "http")
    return VikingDBKnowledgeSource(name, host=srv.host, ak=ak, sk=sk, retry=retry, **kwargs)


def sent(srv: FakeVikingDB) -> dict[str, Any]:
    """The body of the last ``search_knowledge`` request ``srv`` received."""
    body: dict[str, Any] = srv.posts("/search_knowledge")[-1].json
    return body
