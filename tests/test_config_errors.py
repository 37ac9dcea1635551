"""Configuration models raise the typed ``InvalidConfigError``, never pydantic's own error.

The project's rule is that only ``TreehopError`` subclasses escape the library; pydantic's
``ValidationError`` used to escape from ``RetrievalConfig(...)``, ``LLMConfig(...)``,
``model_validate[_json]`` and assignment. These tests pin every entry point, the structured
detail (``errors``, the chained cause), and that a secret never reaches the error's text.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest
from annotated_types import Ge, Gt, Le
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pydantic import SecretStr, ValidationError

from treehop import InvalidConfigError, RetrievalConfig, TreehopError
from treehop.llm.openai_compatible import LLMConfig, ModelsConfig
from treehop.vikingdb_knowledge import ChatTurn, KnowledgeSearchOptions

SECRET = "sk-live-DO-NOT-LEAK-4242"


def _kw(name: str, value: Any) -> dict[str, Any]:
    """One keyword argument, typed loosely (the properties pass any field any value)."""
    return {name: value}


def _all_text(exc: InvalidConfigError) -> str:
    """Everything a log line or traceback of ``exc`` would show."""
    return " ".join((str(exc), repr(exc), str(exc.__cause__), repr(exc.errors)))


def test_construction_raises_the_typed_error_with_pydantic_detail() -> None:
    with pytest.raises(InvalidConfigError, match="global_search_topk") as info:
        RetrievalConfig(global_search_topk=-1)
    exc = info.value
    assert isinstance(exc, TreehopError) and isinstance(exc, ValueError)
    assert not isinstance(exc, ValidationError)
    assert isinstance(exc.__cause__, ValidationError)
    assert [e["loc"] for e in exc.errors] == [("global_search_topk",)]
    assert exc.errors[0]["type"] == "greater_than_equal"
    assert "input" not in exc.errors[0]


def test_unknown_field_and_wrong_type_are_typed_too() -> None:
    with pytest.raises(InvalidConfigError, match="global_search_top_k"):
        RetrievalConfig(global_search_top_k=5)  # type: ignore[call-arg]
    with pytest.raises(InvalidConfigError, match="stop_rule"):
        RetrievalConfig(stop_rule="sometimes")  # type: ignore[arg-type]


def test_assignment_is_validated_and_leaves_the_old_value() -> None:
    cfg = RetrievalConfig()
    with pytest.raises(InvalidConfigError, match="max_rounds"):
        cfg.max_rounds = 0
    assert cfg.max_rounds == 200
    cfg.max_rounds = 7
    assert cfg.max_rounds == 7
    llm = LLMConfig(model="m")
    with pytest.raises(InvalidConfigError, match="temperature"):
        llm.temperature = 9.0
    assert llm.temperature == 0.0


def test_model_validate_and_json_entry_points() -> None:
    with pytest.raises(InvalidConfigError, match="score_threshold"):
        RetrievalConfig.model_validate({"score_threshold": 2})
    with pytest.raises(InvalidConfigError, match="dense_weight"):
        RetrievalConfig.model_validate_json('{"dense_weight": 0.1}')
    with pytest.raises(InvalidConfigError, match="JSON"):
        RetrievalConfig.model_validate_json("{not json")
    with pytest.raises(InvalidConfigError):
        RetrievalConfig.model_validate(["not", "a", "mapping"])
    with pytest.raises(InvalidConfigError, match="max_rounds"):
        RetrievalConfig.model_validate_strings({"max_rounds": "many"})
    good = RetrievalConfig(max_rounds=9, dense_weight=0.7)
    assert RetrievalConfig.model_validate_json(good.model_dump_json()) == good
    assert RetrievalConfig.model_validate(good.model_dump()) == good


def test_nested_configs_report_the_full_path_once() -> None:
    """A nested model's failure is one error of the outer model (``default.model``), not an
    InvalidConfigError wrapped inside another (pydantic would call an overridden
    ``__init__`` for nested models unless told it only wraps the base one)."""
    builds: list[Callable[[], object]] = [
        lambda: ModelsConfig(default={"model": ""}),  # type: ignore[arg-type]
        lambda: ModelsConfig.model_validate({"default": {"model": ""}}),
        lambda: ModelsConfig.model_validate_json('{"default": {"model": ""}}'),
    ]
    for build in builds:
        with pytest.raises(InvalidConfigError) as info:
            build()
        assert [e["loc"] for e in info.value.errors] == [("default", "model")]
        assert str(info.value).count("invalid") == 1


def test_knowledge_options_and_chat_turns_are_typed() -> None:
    with pytest.raises(InvalidConfigError, match="rerank is on"):
        KnowledgeSearchOptions(retrieve_count=30)
    with pytest.raises(InvalidConfigError, match="role"):
        ChatTurn(role="system", content="x")  # type: ignore[arg-type]
    assert KnowledgeSearchOptions(limit=3).limit == 3


@pytest.mark.parametrize(
    "build",
    [
        # a valid key beside a bad field
        lambda: LLMConfig(model="m", api_key=SecretStr(SECRET), max_tokens=0),
        lambda: LLMConfig(model="m", api_key=SECRET, timeout_s=-1),  # type: ignore[arg-type]
        # the secret under a misspelled name: an "extra field" error whose input is the secret
        lambda: LLMConfig(model="m", api_kye=SECRET),  # type: ignore[call-arg]
        # the secret where it does not fit the type
        lambda: LLMConfig(model="m", api_key=[SECRET]),  # type: ignore[arg-type]
        lambda: LLMConfig.model_validate_json(f'{{"model": "", "api_key": "{SECRET}"}}'),
        lambda: ModelsConfig.model_validate(
            {"query_planner": {"model": "m", "api_key": SECRET, "max_retries": 99}}
        ),
        lambda: ModelsConfig(default={"model": 5, "token": SECRET}),  # type: ignore[arg-type]
    ],
)
def test_secrets_never_reach_the_error(build: Any) -> None:
    with pytest.raises(InvalidConfigError) as info:
        build()
    assert SECRET not in _all_text(info.value)


def test_secrets_never_reach_an_assignment_error() -> None:
    llm = LLMConfig(model="m", api_key=SECRET)  # type: ignore[arg-type]
    with pytest.raises(InvalidConfigError) as info:
        llm.api_key = [SECRET]  # type: ignore[assignment]
    assert SECRET not in _all_text(info.value)
    assert llm.api_key is not None and llm.api_key.get_secret_value() == SECRET


def test_the_message_is_bounded_for_hostile_keys() -> None:
    junk: dict[str, Any] = {f"k{i}" + "x" * 10_000: i for i in range(50)}
    with pytest.raises(InvalidConfigError) as info:
        RetrievalConfig(**junk)
    assert len(str(info.value)) < 3000
    assert "and 40 more" in str(info.value)
    assert len(info.value.errors) == 50


# ------------------------------------------------------------------------------ properties
PROP = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

_NUMERIC = {
    name: f
    for name, f in RetrievalConfig.model_fields.items()
    if str(f.annotation) in ("<class 'int'>", "<class 'float'>", "int | None", "float | None")
}


def _bounds(name: str) -> tuple[float, float, bool]:
    """(low, high, low is exclusive) of a numeric field, read from its own constraints."""
    low, high, exclusive = -math.inf, math.inf, False
    for m in RetrievalConfig.model_fields[name].metadata:
        if isinstance(m, Ge):
            low = float(m.ge)  # type: ignore[arg-type]
        elif isinstance(m, Gt):
            low, exclusive = float(m.gt), True  # type: ignore[arg-type]
        elif isinstance(m, Le):
            high = float(m.le)  # type: ignore[arg-type]
    return low, high, exclusive


def _is_int(name: str) -> bool:
    return "int" in str(RetrievalConfig.model_fields[name].annotation)


def test_the_property_covers_the_numeric_fields() -> None:
    assert len(_NUMERIC) >= 25 and "global_search_topk" in _NUMERIC
    assert all(_bounds(n) != (-math.inf, math.inf, False) for n in _NUMERIC)


@st.composite
def _out_of_range(draw: st.DrawFn) -> tuple[str, float]:
    name = draw(st.sampled_from(sorted(_NUMERIC)))
    low, high, exclusive = _bounds(name)
    sides = [b for b in (low, high) if math.isfinite(b)]
    edge = draw(st.sampled_from(sides))
    step = draw(st.integers(1, 10**6) if _is_int(name) else st.floats(0.001, 1e6))
    if edge == high:
        bad = high + step
    elif exclusive and draw(st.booleans()):
        bad = low  # an exclusive lower bound (gt) refuses the edge itself
    else:
        bad = low - step
    return name, (int(bad) if _is_int(name) and float(bad).is_integer() else bad)


@PROP
@given(case=_out_of_range(), assign=st.booleans())
def test_out_of_range_numbers_always_give_the_typed_error(
    case: tuple[str, float], assign: bool
) -> None:
    name, bad = case
    with pytest.raises(InvalidConfigError, match=name):
        if assign:
            setattr(RetrievalConfig(), name, bad)
        else:
            RetrievalConfig(**_kw(name, bad))


@st.composite
def _in_range(draw: st.DrawFn) -> tuple[str, float]:
    name = draw(st.sampled_from(sorted(_NUMERIC)))
    low, high, exclusive = _bounds(name)
    low = low if math.isfinite(low) else -1e6
    high = high if math.isfinite(high) else 1e6
    if _is_int(name):
        return name, draw(st.integers(math.ceil(low), int(high)))
    return name, draw(
        st.floats(min_value=low, max_value=high, exclude_min=exclusive, allow_nan=False)
    )


@PROP
@given(case=_in_range())
def test_in_range_numbers_construct_and_assign(case: tuple[str, float]) -> None:
    name, good = case
    assert getattr(RetrievalConfig(**_kw(name, good)), name) == good
    cfg = RetrievalConfig()
    setattr(cfg, name, good)
    assert getattr(cfg, name) == good


_junk = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True),
    st.text(max_size=12),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
)


@PROP
@example(name="__dict__", value=None, assign=True)  # (a raw TypeError, found in CI, stop 53)
@example(name="__class__", value=None, assign=True)
@given(
    name=st.one_of(st.sampled_from(sorted(RetrievalConfig.model_fields)), st.text(max_size=20)),
    value=_junk,
    assign=st.booleans(),
)
def test_any_value_either_constructs_or_gives_the_typed_error(
    name: str, value: Any, assign: bool
) -> None:
    """Never another exception type, whatever the key and value."""
    try:
        if assign:
            cfg = RetrievalConfig()
            setattr(cfg, name, value)
        else:
            RetrievalConfig(**_kw(name, value))
    except InvalidConfigError as exc:
        assert exc.errors  # an unknown name too ("no attribute"), on assignment as on build


@PROP
@given(fields=st.dictionaries(st.sampled_from(sorted(LLMConfig.model_fields)), _junk, max_size=4))
def test_llm_config_any_values_either_construct_or_give_the_typed_error(
    fields: dict[str, Any],
) -> None:
    try:
        LLMConfig(**fields)
    except InvalidConfigError as exc:
        assert exc.errors
