"""Framework users' leftovers, round eight (core): strict numbers and bools in the configs.

``RetrievalConfig(dense_weight="0.7")`` was accepted and ``global_search_topk=True`` read as
``1`` (pydantic's lax mode), while treehop's method arguments refuse both
(``find(limit="3")``). Every public config model now takes a ``bool`` / ``int`` / ``float``
field only as that type from Python and JSON, and still parses text where text is the source
(``model_validate_strings``: environment variables, a CLI, an ``.ini`` file).
"""

from __future__ import annotations

import json
import typing
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop.config import RetrievalConfig
from treehop.config_model import ConfigModel
from treehop.errors import InvalidConfigError
from treehop.llm.openai_compatible import LLMConfig, ModelsConfig
from treehop.vikingdb_knowledge import ChatTurn, KnowledgeSearchOptions

REQUIRED: dict[type[ConfigModel], dict[str, Any]] = {
    RetrievalConfig: {},
    LLMConfig: {"model": "m"},
    KnowledgeSearchOptions: {},
    ChatTurn: {"role": "user", "content": "hi"},
    ModelsConfig: {},
}


def _scalar(annotation: Any) -> type | None:
    """``bool`` / ``int`` / ``float`` for a field of that type, alone or ``| None``."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)] or [annotation]
    return args[0] if len(args) == 1 and args[0] in (bool, int, float) else None


def _scalar_fields() -> list[tuple[type[ConfigModel], str, type, Any]]:
    out = []
    for cls in REQUIRED:
        for name, field in cls.model_fields.items():
            kind = _scalar(field.annotation)
            if kind is not None:
                out.append((cls, name, kind, field.default))
    return out


FIELDS = _scalar_fields()
IDS = [f"{c.__name__}.{n}" for c, n, _, _ in FIELDS]


def test_every_public_config_model_is_listed() -> None:
    """A new public config model is checked here too (the subclasses of ConfigModel)."""
    import treehop.config  # noqa: F401  (the modules defining them are imported above)

    def subclasses(c: type) -> set[type]:
        return {s for d in c.__subclasses__() for s in {d, *subclasses(d)}}

    public = {c for c in subclasses(ConfigModel) if c.__module__.startswith("treehop.")}
    assert public <= set(REQUIRED), public - set(REQUIRED)
    assert len(FIELDS) >= 30  # (RetrievalConfig alone has more; the rule covers them all)


@pytest.mark.parametrize(("cls", "name", "kind", "default"), FIELDS, ids=IDS)
def test_text_and_wrong_kinds_are_refused(
    cls: type[ConfigModel], name: str, kind: type, default: Any
) -> None:
    wrong: list[Any] = ["0.7", "1", "true", b"1"]
    wrong += [True, 1.0] if kind is int else [True] if kind is float else [1, 0, 1.0]
    for value in wrong:
        with pytest.raises(InvalidConfigError, match=name):
            cls(**REQUIRED[cls], **{name: value})
        with pytest.raises(InvalidConfigError, match=name):
            cls.model_validate({**REQUIRED[cls], name: value})
    instance = cls(**REQUIRED[cls])
    with pytest.raises(InvalidConfigError, match=name):
        setattr(instance, name, "1")
    with pytest.raises(InvalidConfigError, match=name):
        cls.model_validate_json(json.dumps({**REQUIRED[cls], name: "1"}))


@pytest.mark.parametrize(("cls", "name", "kind", "default"), FIELDS, ids=IDS)
def test_typed_values_text_sources_and_json_still_load(
    cls: type[ConfigModel], name: str, kind: type, default: Any
) -> None:
    if default is None:
        return  # (an optional field without a default value: the refusals above cover it)
    as_text = json.dumps(default)  # "true", "10", "0.5": what an environment variable holds
    loaded = cls.model_validate_strings({**REQUIRED[cls], name: as_text})
    assert getattr(loaded, name) == default and type(getattr(loaded, name)) is kind
    assert cls.model_validate_json(json.dumps({**REQUIRED[cls], name: default})) == loaded
    assert cls(**REQUIRED[cls], **{name: default}) == loaded
    if kind is float and float(default).is_integer():
        assert getattr(cls(**REQUIRED[cls], **{name: int(default)}), name) == default
    numpy_value = {bool: np.bool_, int: np.int64, float: np.float64}[kind](default)
    assert getattr(cls(**REQUIRED[cls], **{name: numpy_value}), name) == default


def test_the_reported_cases() -> None:
    with pytest.raises(InvalidConfigError, match=r"dense_weight: .*must be a number, got str"):
        RetrievalConfig(dense_weight="0.7")
    with pytest.raises(InvalidConfigError, match=r"global_search_topk: .*an int, got bool"):
        RetrievalConfig(global_search_topk=True)  # (lax mode: 1)
    with pytest.raises(InvalidConfigError, match=r"collapse_chunks: .*a bool"):
        RetrievalConfig(collapse_chunks="false")
    assert RetrievalConfig(dense_weight=1).dense_weight == 1.0
    assert RetrievalConfig(stop_rule="bound").stop_rule.value == "bound"  # (enums take text)
    env = {"dense_weight": "0.7", "collapse_chunks": "false", "global_search_topk": "25"}
    cfg = RetrievalConfig.model_validate_strings(env)
    assert (cfg.dense_weight, cfg.collapse_chunks, cfg.global_search_topk) == (0.7, False, 25)
    assert RetrievalConfig.model_validate_json(cfg.model_dump_json()) == cfg
    with pytest.raises(InvalidConfigError, match=r"default\.temperature"):
        ModelsConfig(default={"model": "m", "temperature": "0.2"})
    nested = ModelsConfig.model_validate_strings({"default": {"model": "m", "temperature": "0.2"}})
    assert nested.default is not None and nested.default.temperature == 0.2


@settings(max_examples=300, deadline=None)
@given(
    field=st.sampled_from(FIELDS),
    value=st.one_of(
        st.text(max_size=8),
        st.binary(max_size=4),
        st.booleans(),
        st.integers(-5, 2000),
        st.floats(allow_nan=False, allow_infinity=False),
        st.none(),
        st.lists(st.integers(), max_size=2),
    ),
)
def test_a_value_is_taken_only_as_its_own_type(
    field: tuple[type[ConfigModel], str, type, Any], value: Any
) -> None:
    """Accepted values are of the field's type (an int for a float); every other value is an
    InvalidConfigError; an accepted value is stored unchanged."""
    cls, name, kind, _ = field
    try:
        built = cls(**REQUIRED[cls], **{name: value})
    except InvalidConfigError:
        return
    if value is None:
        assert getattr(built, name) is None
        return
    assert not isinstance(value, str | bytes | list)
    assert isinstance(value, bool) == (kind is bool)
    if kind is int:
        assert type(value) is int
    assert getattr(built, name) == value
