"""The base of treehop's user-built configuration models: their errors are typed.

pydantic raises its own ``ValidationError`` from construction, ``model_validate``,
``model_validate_json`` and (with ``validate_assignment``) attribute assignment; the
project's rule is that only :class:`~treehop.errors.TreehopError` subclasses escape. A
validator cannot raise the typed error itself (pydantic turns a ``ValueError`` raised in a
validator into a ``ValidationError``), so the conversion happens here, at the entry points.

Input values never reach the message (``hide_input_in_errors`` also keeps them out of the
chained ``ValidationError``'s text): a misspelled ``api_kye="sk-..."`` is an "extra field"
error whose input is the key itself.
"""

from __future__ import annotations

import numbers
import types
import typing
from typing import Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, ValidationError, ValidationInfo, field_validator

from .errors import InvalidConfigError
from .redaction import redact

__all__ = ["CheckedModel", "ConfigModel", "config_error"]

_PART = 80
_SHOWN = 10


def config_error(exc: ValidationError) -> InvalidConfigError:
    """The typed error for ``exc``: one ``loc: msg`` line per problem, no input values."""
    errors = exc.errors(include_url=False, include_input=False)
    # an unknown key is the caller's text: shortened, and the whole list capped, so that a
    # hostile mapping cannot make the message arbitrarily long
    details = "; ".join(
        f"{'.'.join(str(p)[:_PART] for p in e['loc']) or '(model)'}: {e['msg'][: _PART * 4]}"
        for e in errors[:_SHOWN]
    )
    if len(errors) > _SHOWN:
        details += f"; and {len(errors) - _SHOWN} more"
    # Redacted (helper attacks75): an unknown key is the caller's text, and a registered key
    # pasted as a field's name (``Node(**{key: ...})``, a config mapping read from a file
    # with a key in the wrong place) was shown, as the checks' values were before the lead
    # redacted them (stop 63). Control characters escaped as :func:`shown_name` does.
    details = redact("".join(c if c.isprintable() else repr(c)[1:-1] for c in details))
    return InvalidConfigError(f"invalid {exc.title}: {details}", [dict(e) for e in errors])


def _printed_cause(exc: ValidationError, chain: bool = True) -> ValidationError | None:
    """``exc`` as the typed error's printed cause when ``chain`` and it is short (at most
    :data:`_SHOWN` problems, the ones the message names), else ``None``. Why: the configs keep
    pydantic's error as the cause (its inputs hidden) for its structured detail, but 20,000
    unknown keys made a 2.95 MB printed traceback beside a 399-character message (helper
    leftovers64's open item); past the message's own bound the cause adds only length, and
    :attr:`InvalidConfigError.errors` still holds every problem."""
    return exc if chain and exc.error_count() <= _SHOWN else None


def _scalar(annotation: Any) -> type | None:
    """``bool``, ``int`` or ``float`` when a field holds that type (alone or ``| None``)."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        annotation = args[0] if len(args) == 1 else None
    return annotation if annotation in (bool, int, float) else None


def _wrong_scalar(kind: type, value: Any) -> str | None:
    """Why ``value`` is no ``kind``, or ``None`` when it is one (a numpy number counts)."""
    if value is None:
        return None  # (``X | None``; a field that takes no None is refused by pydantic)
    if kind is bool:
        ok = isinstance(value, bool) or (
            type(value).__module__ == "numpy" and type(value).__name__ in ("bool", "bool_")
        )
        want = "a bool (True or False)"
    elif kind is int:
        ok = isinstance(value, numbers.Integral) and not isinstance(value, bool)
        want = "an int"
    else:
        ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
        want = "a number"
    return None if ok else f"must be {want}, got {type(value).__name__}"


class _TypedValidation(BaseModel):
    """The ``model_validate`` / ``model_validate_json`` / ``model_validate_strings`` class
    methods of :class:`CheckedModel` and :class:`ConfigModel`: pydantic's
    ``ValidationError`` becomes :func:`config_error`'s bounded, typed one.

    ``_chain_cause``: whether the ``ValidationError`` stays the printed cause (the configs
    keep it, their inputs hidden; a model drops it from tracebacks, ``from None``).
    """

    _chain_cause: ClassVar[bool] = True

    @classmethod
    def model_validate(
        cls,
        obj: Any,
        *,
        strict: bool | None = None,
        from_attributes: bool | None = None,
        context: Any | None = None,
        **kwargs: Any,
    ) -> Self:
        try:
            return super().model_validate(
                obj, strict=strict, from_attributes=from_attributes, context=context, **kwargs
            )
        except ValidationError as exc:
            raise config_error(exc) from _printed_cause(exc, cls._chain_cause)

    @classmethod
    def model_validate_json(
        cls,
        json_data: str | bytes | bytearray,
        *,
        strict: bool | None = None,
        context: Any | None = None,
        **kwargs: Any,
    ) -> Self:
        try:
            return super().model_validate_json(json_data, strict=strict, context=context, **kwargs)
        except ValidationError as exc:
            raise config_error(exc) from _printed_cause(exc, cls._chain_cause)

    @classmethod
    def model_validate_strings(
        cls,
        obj: Any,
        *,
        strict: bool | None = None,
        context: Any | None = None,
        **kwargs: Any,
    ) -> Self:
        try:
            return super().model_validate_strings(obj, strict=strict, context=context, **kwargs)
        except ValidationError as exc:
            raise config_error(exc) from _printed_cause(exc, cls._chain_cause)


class CheckedModel(_TypedValidation):
    """A pydantic model whose construction errors are :class:`InvalidConfigError` (a
    ``ValueError`` too, as pydantic's ``ValidationError`` is): the nodes and results of
    :mod:`treehop.models`, a chat message, a stage event.

    Why: ``treehop.Node(**{20,000 unknown keys})`` raised pydantic's own ``ValidationError``
    of 3.6 MB (one line per key, each with its value), where only ``TreehopError``
    subclasses leave treehop and the configs' errors were already typed and bounded
    (:func:`config_error`: 10 problems, ``and N more``, no input values). Only ``__init__``
    and the ``model_validate*`` class methods (what a caller writes) are wrapped: a stored
    node or session read by the stores keeps pydantic's error (they call the validator, or a
    model that is no ``CheckedModel``), which they report as a damaged index. The
    ``ValidationError`` is dropped from printed tracebacks (``from None``: it holds every
    value given, a key pasted into a field among them); it stays the ``__context__``."""

    def __init__(self, /, **data: Any) -> None:
        # (the validator called as ``BaseModel.__init__`` calls it: a ``super().__init__``
        # call cost ~1 us more per node or hit)
        try:
            self.__pydantic_validator__.validate_python(data, self_instance=self)
        except ValidationError as exc:
            raise config_error(exc) from None

    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]

    # (``model_validate*`` typed too, from ``_TypedValidation``: ``Node.model_validate({...
    # 20,000 unknown keys})`` still raised pydantic's ValidationError of 4.3 MB; helper
    # leftovers64. The stores read stored nodes through the validator itself, and
    # VikingDB's ``model_validate_json`` catches ``ValueError``: both unchanged.)
    _chain_cause: ClassVar[bool] = False


class ConfigModel(_TypedValidation):
    """A pydantic model whose validation failures raise :class:`InvalidConfigError`.

    Validated on assignment too, so that ``config.field = bad`` fails where it is written,
    not at the first call that reads it.

    Numbers and bools are strict where a config is built in Python or read from JSON: a
    ``bool`` / ``int`` / ``float`` field takes only a value of that type (an ``int`` for a
    ``float``, and numpy numbers, are fine), so ``RetrievalConfig(dense_weight="0.7")``,
    ``global_search_topk=True`` (which pydantic's lax mode read as ``1``) and
    ``collapse_chunks=1`` are refused, as treehop's method arguments are
    (``find(limit="3")``). Why: a string or a bool in a number's place is a caller's mistake
    (a value read from a form or an environment variable and not converted, a flag passed
    where a count goes), and lax mode accepted it silently. Text sources keep working:
    ``model_validate(yaml.safe_load(...))`` and ``model_validate_json(...)`` receive typed
    values, and :meth:`model_validate_strings` (environment variables, a CLI, an ``.ini``
    file) parses ``"0.7"``, ``"true"`` and ``"25"`` as pydantic does. LangChain's and
    LlamaIndex's own models are lax (``ChatOpenAI(temperature="0.7")`` is accepted); the
    integration classes follow their framework, these core configs follow treehop's API.
    """

    model_config = ConfigDict(validate_assignment=True, hide_input_in_errors=True)

    @field_validator("*", mode="before")
    @classmethod
    def _strict_scalars(cls, value: Any, info: ValidationInfo) -> Any:
        # (``model_validate_strings`` validates in mode "string", which pydantic-core's stub
        # leaves out of its Literal: text is the input there, parsed as pydantic parses it)
        if str(info.mode) == "string" or info.field_name is None:
            return value
        field = cls.model_fields.get(info.field_name)
        kind = _scalar(field.annotation) if field is not None else None
        why = _wrong_scalar(kind, value) if kind is not None else None
        if why is not None:
            raise ValueError(why)  # (pydantic makes it a ValidationError: typed above)
        return value

    def __init__(self, /, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise config_error(exc) from _printed_cause(exc)

    # Tell pydantic this ``__init__`` only wraps the base one: without the mark, pydantic
    # validates every nested config (and ``model_validate``) by calling ``__init__``, and an
    # inner InvalidConfigError (a ValueError) would come back wrapped in the outer error.
    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(name, str) and name.startswith("__") and name.endswith("__"):
            # (Python's own slots: ``cfg.__dict__ = None`` raised a raw TypeError, found by
            # hypothesis; no configuration is set through one)
            raise InvalidConfigError(
                f"invalid {type(self).__name__}: {name[:100]} cannot be assigned",
                [
                    {
                        "type": "no_such_attribute",
                        "loc": (name,),
                        "msg": f"Object attribute {name[:100]!r} cannot be assigned",
                        "ctx": {"attribute": name},
                    }
                ],
            )
        try:
            super().__setattr__(name, value)
        except ValidationError as exc:
            raise config_error(exc) from _printed_cause(exc)
