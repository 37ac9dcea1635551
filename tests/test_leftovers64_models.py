"""The public models' ``model_validate`` / ``model_validate_json`` / ``model_validate_strings``
(helper leftovers64, bench/README.md "(helper leftovers64)"): a hostile mapping is the typed,
bounded :class:`InvalidConfigError` that ``Node(**...)`` already raised, not pydantic's
``ValidationError`` of megabytes. Each test fails on fbccbd78 unless it says it is a control."""

from __future__ import annotations

import json
import traceback
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from treehop.config_model import CheckedModel
from treehop.errors import InvalidConfigError, TreehopError
from treehop.models import (
    ChunkContext,
    FindResult,
    MatchedContext,
    Node,
    QueryPlan,
    QueryResult,
    RoundTrace,
    TagHopMetrics,
    TypedQuery,
)
from treehop.redaction import register_secret

SECRET = "sk-l64-model-secret-0123456789"
register_secret(SECRET)
MANY = 20_000
NODE = {
    "uri": "viking://resources/a.md",
    "parent_uri": "viking://resources",
    "context_type": "resource",
    "level": 2,
    "is_leaf": True,
}
HIT = {
    "uri": "viking://resources/a.md",
    "context_type": "resource",
    "is_leaf": True,
    "abstract": "",
    "score": 0.5,
}
BAD_ITEMS = [SECRET] * MANY  # (a list of the wrong item type: one error per item)
# One hostile payload per public model: 20,000 unknown keys where the model forbids them
# (Node), else 20,000 wrong items in one of its list fields (the others ignore unknown keys).
HOSTILE: dict[type[CheckedModel], dict[str, Any]] = {
    Node: {**NODE, **{f"unknown_{i:05d}": SECRET for i in range(MANY)}},
    QueryPlan: {"queries": BAD_ITEMS},
    MatchedContext: {**HIT, "collapsed": BAD_ITEMS},
    RoundTrace: {"round": 1, "best_children": BAD_ITEMS},
    TagHopMetrics: {"tags_used": [1] * MANY},
    QueryResult: {"query": "q", "matched_contexts": BAD_ITEMS},
    FindResult: {"resources": BAD_ITEMS},
}
METHODS = ["model_validate", "model_validate_json", "model_validate_strings"]


def _strings(value: Any) -> Any:
    """``value`` as strings mode takes it (an environment variable's or a form's text)."""
    if isinstance(value, dict):
        return {k: _strings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_strings(v) for v in value]
    return value if isinstance(value, str) else json.dumps(value)


def _call(model: type[CheckedModel], method: str, payload: dict[str, Any]) -> object:
    if method == "model_validate_json":
        return model.model_validate_json(json.dumps(payload))
    if method == "model_validate_strings":
        return model.model_validate_strings(_strings(payload))
    return model.model_validate(payload)


def test_every_public_model_is_covered() -> None:
    # (control: a model added to treehop.models without a hostile payload here fails this)
    import treehop.models as models

    public = {
        c
        for c in vars(models).values()
        if isinstance(c, type) and issubclass(c, CheckedModel) and c is not CheckedModel
    }
    assert public - set(HOSTILE) == {TypedQuery, ChunkContext}  # (no list field to flood)


# (strings mode takes no list at all: its flood is Node's unknown keys)
CASES = [(m, meth) for m in HOSTILE for meth in METHODS if meth != METHODS[2] or m is Node]


@pytest.mark.parametrize(
    ("model", "method"), CASES, ids=[f"{m.__name__}-{meth}" for m, meth in CASES]
)
def test_a_hostile_mapping_is_a_bounded_typed_error(model: type[CheckedModel], method: str) -> None:
    with pytest.raises(InvalidConfigError) as ei:
        _call(model, method, HOSTILE[model])
    err = ei.value
    assert isinstance(err, TreehopError) and isinstance(err, ValueError)
    assert not isinstance(err, ValidationError)
    text = str(err)
    assert len(text) < 2_000, len(text)
    assert text.startswith(f"invalid {model.__name__}: ")
    assert text.endswith(f"and {len(err.errors) - 10} more"), text[-80:]
    assert len(err.errors) >= MANY  # (the whole detail stays on .errors)
    shown = "".join(traceback.format_exception(err))
    assert SECRET not in shown and len(shown) < 20_000


@pytest.mark.parametrize("method", METHODS)
def test_a_good_node_still_validates(method: str) -> None:
    # (control)
    node = _call(Node, method, NODE)
    assert isinstance(node, Node) and node.uri == NODE["uri"]


def test_a_round_trip_through_json_still_works() -> None:
    # (control: what the columnar store's tests and a caller's cache do)
    hit = MatchedContext.model_validate(HIT)
    assert MatchedContext.model_validate_json(hit.model_dump_json()) == hit


@settings(max_examples=60, deadline=None)
@given(
    keys=st.lists(
        st.text(min_size=1, max_size=80).filter(lambda k: k not in Node.model_fields),
        min_size=1,
        max_size=60,
        unique=True,
    )
)
def test_any_unknown_keys_are_named_first_few_then_counted(keys: list[str]) -> None:
    with pytest.raises(InvalidConfigError) as ei:
        Node.model_validate({**NODE, **{k: SECRET for k in keys}})
    text = str(ei.value)
    assert len(ei.value.errors) == len(keys)
    assert len(text) < 2_000 and SECRET not in text
    if len(keys) > 10:
        assert text.endswith(f"; and {len(keys) - 10} more")
    else:
        assert text.endswith("Extra inputs are not permitted")


@pytest.mark.parametrize("method", ["init", "model_validate", "model_validate_json"])
def test_a_config_chains_pydantic_s_error_only_while_it_is_short(method: str) -> None:
    """The lead (leftovers64's open item): a config keeps pydantic's ``ValidationError`` as
    the printed cause for a few problems (``test_config_errors`` relies on it), but 20,000
    unknown keys printed a 2.95 MB traceback beside a 399-character message. Past the ten
    problems the message names the cause is dropped from the printout; ``errors`` keeps all."""
    from treehop.config import RetrievalConfig

    def built(data: dict[str, Any]) -> InvalidConfigError:
        with pytest.raises(InvalidConfigError) as info:
            if method == "init":
                RetrievalConfig(**data)
            elif method == "model_validate":
                RetrievalConfig.model_validate(data)
            else:
                RetrievalConfig.model_validate_json(json.dumps(data))
        return info.value

    few = built({"alpah": 0.5})
    assert isinstance(few.__cause__, ValidationError)
    many = built({f"unknown_{i}": i for i in range(20_000)})
    assert many.__cause__ is None and many.__suppress_context__
    assert len(many.errors) == 20_000
    printed = "".join(traceback.format_exception(many))
    assert len(printed) < 5_000, len(printed)
