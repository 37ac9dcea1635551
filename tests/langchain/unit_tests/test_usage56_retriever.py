"""What a LangChain user's first scripts expect of ``TreehopRetriever`` (helper usage56).

LangChain's documented way to set a retriever's search at run time is
``retriever.configurable_fields(search_kwargs=ConfigurableField(id=...))`` and then
``with_config(configurable={...})``. LangChain rebuilds the retriever from all of its fields
plus the configured ones, so the options already merged from ``search_kwargs`` at construction
come back as direct fields: the rebuild must not read as "given twice".
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.runnables import ConfigurableField
from pydantic import ValidationError

from langchain_treehop import TreehopRetriever
from treehop import InvalidQueryError, Treehop

QUERY = "kubernetes deployment rollout readiness probes"


def test_configurable_search_kwargs_set_k_and_scope_at_run_time(lc_client: Treehop) -> None:
    plain = TreehopRetriever(client=lc_client)
    configurable = plain.configurable_fields(search_kwargs=ConfigurableField(id="search_kwargs"))
    assert len(configurable.invoke(QUERY)) == plain.k
    one = configurable.with_config(configurable={"search_kwargs": {"k": 1}}).invoke(QUERY)
    assert len(one) == 1
    scoped = configurable.with_config(
        configurable={"search_kwargs": {"k": 2, "target_uri": "viking://resources/security"}}
    ).invoke(QUERY)
    assert len(scoped) == 2
    assert all((d.id or "").startswith("viking://resources/security/") for d in scoped)


def test_configurable_search_kwargs_over_a_retriever_built_with_search_kwargs(
    lc_client: Treehop,
) -> None:
    built = TreehopRetriever(client=lc_client, search_kwargs={"k": 1})
    assert len(built.invoke(QUERY)) == 1
    configurable = built.configurable_fields(search_kwargs=ConfigurableField(id="sk"))
    assert len(configurable.with_config(configurable={"sk": {"k": 3}}).invoke(QUERY)) == 3
    assert len(configurable.invoke(QUERY)) == 1  # the default is the retriever as built
    # and a configurable k on the same retriever is not overridden by its search_kwargs
    by_k = built.configurable_fields(k=ConfigurableField(id="k"))
    assert len(by_k.with_config(configurable={"k": 2}).invoke(QUERY)) == 2


def test_a_user_giving_k_twice_is_still_refused(lc_client: Treehop) -> None:
    with pytest.raises(ValidationError, match="given twice"):
        TreehopRetriever(client=lc_client, k=3, search_kwargs={"k": 2})


class _Events(BaseCallbackHandler):
    def __init__(self) -> None:
        self.events: dict[str, Any] = {}

    def on_custom_event(self, name: str, data: Any, **kw: Any) -> None:
        self.events[name] = data


def test_trace_events_name_uris_as_the_documents_do(lc_client: Treehop) -> None:
    # A memory's Document.id is viking://~/memories/...; the events of the same call named
    # the same node viking://user/default/memories/..., so the two could not be matched.
    lc_client.add_memory("I am vegetarian and love pasta.", name="diet")
    events = _Events()
    retriever = TreehopRetriever(client=lc_client, k=1, target_uri="viking://~/memories")
    docs = retriever.invoke("pasta", config={"callbacks": [events]})
    assert [d.id for d in docs] == ["viking://~/memories/diet"]
    starts = [p["uri"] for p in events.events["treehop_global_search"]["starting_points"]]
    assert "viking://~/memories/diet" in starts
    searched = events.events["treehop_descent"]["searched_directories"]
    assert all(u.startswith("viking://~/memories") for u in searched)  # (may be none)


def _small_tree(root: Any) -> None:
    (root / "devops").mkdir(parents=True)
    (root / "security").mkdir()
    (root / "devops" / "rollback.md").write_text(
        "# Rollbacks\n\nTo roll back a deployment, run `kubectl rollout undo deployment/web`."
        " Helm users run `helm rollback web 3`.\n\n## Canary releases\n\nNew versions go to 5% "
        "of traffic first, then 50%, then everyone.\n",
        encoding="utf-8",
    )
    (root / "security" / "keys.md").write_text(
        "# API keys\n\nAPI keys rotate every 90 days. The security team emails a reminder a "
        "week before expiry.\n\n## OAuth tokens\n\nTokens are validated against the JWKS "
        "endpoint; the exp claim is checked.\n",
        encoding="utf-8",
    )
    (root / "food.md").write_text(
        "# Cafeteria\n\nVegetarian food on Mondays, fish on Fridays.\n", encoding="utf-8"
    )


def test_find_score_threshold_keeps_every_hit_scoring_above_it(tmp_path: Any) -> None:
    # invoke("release", score_threshold=0.0616) returned only rollback.md although keys.md
    # scores 0.0616 without a threshold: the core pruned its search with the threshold on
    # the scores before the tree context; the documents carry their final scores.
    _small_tree(tmp_path / "docs")
    with Treehop(None) as client:  # the offline MiniLM
        client.add_resource(tmp_path / "docs", target_uri="viking://resources/docs")
        retriever = TreehopRetriever(client=client, k=10)
        for query in ["release", "food on friday", "rotate keys", "roll back"]:
            ranked = [(d.id, d.metadata["score"]) for d in retriever.invoke(query)]
            for _, score in ranked:
                floor = score - 1e-6
                kept = retriever.invoke(query, score_threshold=floor)
                assert [(d.id, d.metadata["score"]) for d in kept] == [
                    (u, s) for u, s in ranked if s >= floor
                ], (query, floor)


def test_invoke_takes_filter_as_the_metadata_filter_like_a_vectorstore_retriever(
    lc_client: Treehop,
) -> None:
    """``VectorStoreRetriever.invoke(q, filter=...)`` merges the call's ``filter`` into its
    search kwargs; a user moving from one expects the same here (it was refused)."""
    for lang in ("en", "de"):
        lc_client.add_resource(
            f"kubernetes rollout notes ({lang})",
            target_uri=f"viking://resources/notes/k8s-{lang}",
            metadata={"lang": lang},
        )
    r = TreehopRetriever(client=lc_client, k=5)
    every = r.invoke("kubernetes rollout notes")
    assert {"viking://resources/notes/k8s-en", "viking://resources/notes/k8s-de"} <= {
        d.id for d in every
    }
    got = r.invoke("kubernetes rollout notes", filter={"lang": "en"})
    assert [d.id for d in got] == ["viking://resources/notes/k8s-en"]
    assert got == r.invoke("kubernetes rollout notes", metadata_filter={"lang": "en"})
    with pytest.raises(InvalidQueryError, match="not both"):
        r.invoke("kubernetes rollout notes", filter={"lang": "en"}, metadata_filter={"lang": "en"})
