"""Shared wire shapes: pages, strict bodies, instants and JSON fields."""

from __future__ import annotations

import uuid
from datetime import datetime
from enum import Enum, StrEnum
from functools import cache
from types import UnionType
from typing import Annotated, Any, ClassVar, Generic, Literal, Self, TypeVar, Union, get_args, get_origin

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    GetCoreSchemaHandler,
    field_validator,
    model_validator,
)
from pydantic_core import CoreSchema, PydanticCustomError, core_schema

from elephantasm.domain.errors import ValidationError
from elephantasm.domain.inputs import (
    READ_DEPTH_CEILING,
    instant_problem,
    json_depth,
    json_problem,
    nul_path,
    parse_iso_instant,
)

T = TypeVar("T")


def zero_or_at_least(minimum: float, maximum: float) -> AfterValidator:
    """A number that is 0 (off) or between ``minimum`` and ``maximum``: what divides by it (a
    normalised weight, a sampling temperature) overflows on a subnormal value, and below
    ``minimum`` every setting gives the same result anyway."""

    def check(value: float) -> float:
        if value != 0 and value < minimum:
            raise ValueError(f"must be 0 or between {minimum:g} and {maximum:g}")
        return value

    return AfterValidator(check)


class Page(BaseModel, Generic[T]):
    """One page of a list endpoint; pass ``next_cursor`` back as ``cursor`` for the next one."""

    items: list[T]
    next_cursor: str | None = None


def _number(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise PydanticCustomError("float_type", "Input should be a number (a JSON number, not a string or boolean)")
    return value


def _integer(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, int):
        raise PydanticCustomError("int_type", "Input should be an integer (a JSON integer, not a string or boolean)")
    return value


def _boolean(value: Any) -> Any:
    if not isinstance(value, bool):
        raise PydanticCustomError("bool_type", "Input should be a boolean (true or false)")
    return value


_SCALAR_CHECKS = {"float": _number, "int": _integer, "bool": _boolean}


def _strict_scalars(schema: Any) -> None:
    """Put a type check before every number and boolean of a core schema, in place: ``false`` is no
    number, nor ``1`` or ``"true"`` a boolean, nor ``"0.5"`` a number (an integer is a float).
    (A check in the schema, not ``strict=True``: Litestar validates bodies with ``strict=False``.)"""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            kind = node.get("type")
            check = _SCALAR_CHECKS.get(kind) if isinstance(kind, str) else None
            if check is not None:
                inner = dict(node)
                node.clear()
                node.update(core_schema.no_info_before_validator_function(check, inner))  # type: ignore[arg-type]
                continue
            stack.extend(value for key, value in node.items() if key != "metadata")  # metadata holds no schema
        elif isinstance(node, list):
            stack.extend(node)


class StrictModel(BaseModel):
    """Request bodies: unknown fields are an error, so a typo never silently drops data; numbers and
    booleans are taken only as JSON numbers and booleans (no coercion between them or from strings)."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)

    @classmethod
    def __get_pydantic_core_schema__(cls, source: type[BaseModel], handler: GetCoreSchemaHandler) -> CoreSchema:
        schema = handler(source)
        _strict_scalars(schema)
        return schema

    @field_validator("*", mode="after")
    @classmethod
    def _no_nul(cls, value: Any) -> Any:
        # Nested models check their own fields; everything else (strings, meta dicts) is walked here.
        if isinstance(value, str):
            if "\x00" not in value:
                return value  # the common case, without nul_path's walk
        elif not isinstance(value, dict | list | tuple):
            return value  # None, numbers, ids, instants and nested models hold no string of their own
        if not isinstance(value, BaseModel):
            path = nul_path(value)
            if path is not None:
                raise ValueError(f"contains a NUL character (\\u0000) at {path or 'the value'}; it cannot be stored")
        return value


class PatchBody(StrictModel):
    """A PATCH body: only the fields given change. A field named in ``not_null`` may be omitted but
    not set to null (its column holds a value always), so a null there is a 422, never ignored."""

    not_null: ClassVar[tuple[str, ...]] = ()

    @model_validator(mode="after")
    def _no_null_for_required(self) -> Self:
        for name in self.not_null:
            if name in self.model_fields_set and getattr(self, name) is None:
                raise ValueError(f"{name}: may not be null (omit it to keep the current value)")
        return self


def _iso_instant(value: Any) -> Any:
    # A JSON instant is an ISO 8601 string; a number would otherwise be read as Unix seconds.
    return value if isinstance(value, datetime) else parse_iso_instant(value)


def _sane_instant(value: datetime) -> datetime:
    problem = instant_problem(value)
    if problem:
        raise ValueError(problem)
    return value


Instant = Annotated[datetime, BeforeValidator(_iso_instant), AfterValidator(_sane_instant)]
"""A request timestamp: an ISO 8601 string, timezone-aware and inside the service's sane window (1900 to 3000)."""


def _elide_deep(value: Any) -> Any:
    # Rows stored before the depth limit existed (or written by hand) must still list: their JSON
    # is replaced, not served, when nested past what any response encoder handles.
    if json_depth(value, READ_DEPTH_CEILING) > READ_DEPTH_CEILING:
        return {"_elided": f"nested deeper than {READ_DEPTH_CEILING} levels; not served"}
    return value


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty or whitespace")
    return value


NotBlank = Annotated[str, AfterValidator(_not_blank)]
"""A request string with something besides whitespace in it."""

StoredJson = Annotated[dict[str, Any], BeforeValidator(_elide_deep)]
"""A JSON object read back from the database (response side), elided if too deep to serve."""


_SCALAR_TYPES = (str, int, float, bool, uuid.UUID, datetime, Enum, type(None))


def _scalar_type(tp: Any) -> bool:
    """Whether every value a field annotated ``tp`` can hold is a scalar (never a dict, list or model)."""
    if isinstance(tp, type):
        return issubclass(tp, _SCALAR_TYPES)
    origin = get_origin(tp)
    if origin is Annotated:
        return _scalar_type(get_args(tp)[0])
    if origin is Union or origin is UnionType:
        return all(_scalar_type(arg) for arg in get_args(tp))
    return origin is Literal


@cache
def _container_fields(model: type[BaseModel]) -> tuple[str, ...]:
    """``model``'s fields, in order, except those typed as scalars (``Any`` counts as a container)."""
    return tuple(name for name, f in model.model_fields.items() if not _scalar_type(f.annotation))


def check_json_fields(model: BaseModel, max_depth: int, max_bytes: int, where: str = "") -> None:
    """Refuse (422 naming the field and the limit) any free-form JSON field of a request body, at any
    nesting of models, that is nested deeper than ``max_depth`` or larger than ``max_bytes``.

    Called before anything is written: JSON too deep to serve back must never be stored.
    """
    stack: list[tuple[Any, str]] = [(model, where)]
    while stack:
        item, path = stack.pop()
        if isinstance(item, BaseModel):
            # Only containers can break a limit: fields typed as scalars are never looked at (nor
            # their paths built), which keeps a 1,000-event batch cheap; the order the remaining
            # fields are visited in is unchanged.
            for name in _container_fields(type(item)):
                value = getattr(item, name)
                if isinstance(value, (dict, list, BaseModel)):
                    stack.append((value, f"{path}.{name}" if path else name))
        elif isinstance(item, list) and any(isinstance(x, BaseModel) for x in item):
            stack.extend((x, f"{path}[{i}]") for i, x in enumerate(item))
        elif isinstance(item, dict | list):
            problem = json_problem(item, max_depth, max_bytes)
            if problem:
                raise ValidationError(f"{path}: {problem}")


def one_of(enum: type[StrEnum]) -> Any:
    """``enum`` as a field type whose error lists the valid values ("unknown 'x'; valid values: a, b")."""
    valid = [m.value for m in enum]

    def check(value: Any) -> Any:
        if isinstance(value, str) and value not in valid:
            raise ValueError(f"unknown {value!r}; valid values: {', '.join(valid)}")
        return value

    return Annotated[enum, BeforeValidator(check)]
