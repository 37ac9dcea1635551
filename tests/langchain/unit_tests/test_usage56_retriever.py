"""What a LangChain user's first scripts expect of ``TreehopRetriever`` (helper usage56).

LangChain's documented way to set a retriever's search at run time is
``retriever.configurable_fields(search_kwargs=ConfigurableField(id=...))`` and then
``with_config(configurable={...})``. LangChain rebuilds the retriever from all of its fields
plus the configured ones, so the options already merged from ``search_kwargs`` at construction
come back as direct fields: the rebuild must not read as "given twice".
"""

from __future__ import annotations

import pytest
from langchain_core.runnables import ConfigurableField
from pydantic import ValidationError

from langchain_treehop import TreehopRetriever
from treehop import Treehop

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
