"""Validate a plain mapping against a frozen dataclass, collecting every problem in one pass.

Field types drive parsing (``int``, ``float``, ``str``, ``bool``, ``StrEnum``, nested dataclasses,
``tuple[T, ...]`` lists, ``Mapping[K, V]`` maps, ``T | None`` and ``object``, which passes a
value through for a later semantic check). Field metadata ``{"check": Check.X}`` adds a value
constraint, and ``plausible(...)`` metadata also a span a physical value must fall in (wide for
its SI unit, so that it catches a value typed in another unit). Unknown keys are errors with a
did-you-mean; missing required fields, wrong types and out-of-range values are each reported as
``path: problem (got X)``.
Types are strict: booleans are never numbers, a float is an integer only when it is integral,
and strings are never numbers.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Callable, Mapping
from enum import Enum, StrEnum
from functools import cache
from typing import Any

from opmodel.core.errors import did_you_mean, shown
from opmodel.core.frozen_dict import FrozenDict

__all__ = [
    "MUST_BE_FRACTION",
    "MUST_BE_NON_NEGATIVE",
    "MUST_BE_POSITIVE",
    "Check",
    "Plausible",
    "parse_dataclass",
    "plausible",
]


class Check(StrEnum):
    """Value constraints attached to fields with ``metadata={"check": Check.X}``."""

    POSITIVE = "positive"
    NON_NEGATIVE = "non_negative"
    FRACTION = "fraction"


# the field metadata of each check, shared by every spec dataclass: ``field(metadata=...)``
MUST_BE_POSITIVE: Mapping[str, object] = FrozenDict({"check": Check.POSITIVE})
MUST_BE_NON_NEGATIVE: Mapping[str, object] = FrozenDict({"check": Check.NON_NEGATIVE})
MUST_BE_FRACTION: Mapping[str, object] = FrozenDict({"check": Check.FRACTION})


@dataclasses.dataclass(frozen=True, slots=True)
class Plausible:
    """The span a physical value must fall in, in its field's SI unit: wide enough for any real
    accelerator, narrow enough that a value typed in another unit (GHz for Hz, GB/s for bytes/s,
    ns for s, pJ for J) falls outside it. 0 passes where the field's check admits it."""

    low: float
    high: float
    unit: str


def plausible(check: Check, low: float, high: float, unit: str) -> Mapping[str, object]:
    """Field metadata: ``check``, then the plausible span ``[low, high]`` in ``unit``."""
    if not 0 <= low < high:
        msg = f"plausible: need 0 <= low < high (got {low!r}, {high!r})"
        raise ValueError(msg)
    return FrozenDict({"check": check, "plausible": Plausible(low, high, unit)})


_CHECKS: dict[Check, tuple[Callable[[float], bool], str]] = {
    Check.POSITIVE: (lambda x: x > 0, "must be > 0"),
    Check.NON_NEGATIVE: (lambda x: x >= 0, "must be >= 0"),
    Check.FRACTION: (lambda x: 0 < x <= 1, "must be in (0, 1]"),
}


class _Invalid(Exception):
    """Raised inside a subtree after its problems were recorded."""


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _number(value: object, path: str, want_int: bool, errors: list[str]) -> float | int:
    noun = "an integer" if want_int else "a number"
    if isinstance(value, bool) or not isinstance(value, int | float):
        hint = ""
        if isinstance(value, str):
            hint = ", a string"
        errors.append(f"{path}: expected {noun} (got {shown(value)}{hint})")
        raise _Invalid
    if isinstance(value, float) and not math.isfinite(value):
        errors.append(f"{path}: expected a finite number (got {shown(value)})")
        raise _Invalid
    if want_int:
        if isinstance(value, float) and not value.is_integer():
            errors.append(f"{path}: expected an integer, not a fraction (got {shown(value)})")
            raise _Invalid
        return int(value)
    return float(value)


def _parse(tp: Any, value: object, path: str, errors: list[str]) -> Any:  # noqa: PLR0911, C901
    origin = typing.get_origin(tp)
    if origin in (types.UnionType, typing.Union):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return None if value is None else _parse(args[0], value, path, errors)
    if tp is object:  # passed through for a later, semantic check
        return value
    if tp is bool:
        if not isinstance(value, bool):
            errors.append(f"{path}: expected true or false (got {shown(value)})")
            raise _Invalid
        return value
    if tp is int or tp is float:
        return _number(value, path, tp is int, errors)
    if tp is str:
        if not isinstance(value, str) or not value:
            errors.append(f"{path}: expected a non-empty string (got {shown(value)})")
            raise _Invalid
        return value
    if isinstance(tp, type) and issubclass(tp, Enum):
        valid = [m.value for m in tp]
        if value not in valid:
            hint = did_you_mean(value, valid) if isinstance(value, str) else ""
            errors.append(f"{path}: must be one of {', '.join(valid)} (got {shown(value)}){hint}")
            raise _Invalid
        return tp(value)
    if dataclasses.is_dataclass(tp):
        return _parse_fields(typing.cast(type, tp), value, path, errors)
    if origin is tuple:
        return _parse_tuple(tp, value, path, errors)
    if origin is Mapping or origin is dict:
        return _parse_mapping(tp, value, path, errors)
    msg = f"schema type {tp!r} at {path} is not supported"
    raise TypeError(msg)


def _parse_tuple(tp: Any, value: object, path: str, errors: list[str]) -> tuple[Any, ...]:
    args = typing.get_args(tp)
    if not isinstance(value, list):
        errors.append(f"{path}: expected a list (got {shown(value)})")
        raise _Invalid
    fixed = not (len(args) == 2 and args[1] is Ellipsis)
    if fixed and len(value) != len(args):
        errors.append(f"{path}: expected a list of {len(args)} items (got {shown(value)})")
        raise _Invalid
    items, failed = [], False
    for index, item in enumerate(value):
        try:
            items.append(
                _parse(args[index] if fixed else args[0], item, f"{path}[{index}]", errors)
            )
        except _Invalid:
            failed = True
    if failed:
        raise _Invalid
    return tuple(items)


def _parse_mapping(tp: Any, value: object, path: str, errors: list[str]) -> Mapping[Any, Any]:
    key_tp, value_tp = typing.get_args(tp)
    if not isinstance(value, dict):
        errors.append(f"{path}: expected a mapping (got {shown(value)})")
        raise _Invalid
    out, failed = {}, False
    for key, item in value.items():
        sub = _join(path, str(key))
        try:
            out[_parse(key_tp, key, sub, errors)] = _parse(value_tp, item, sub, errors)
        except _Invalid:
            failed = True
    if failed:
        raise _Invalid
    return FrozenDict(out)


def _check(meta: Mapping[str, Any], value: Any, path: str, errors: list[str]) -> None:
    check = meta.get("check")
    if check is None or value is None:
        return
    accept, problem = _CHECKS[check]
    if isinstance(value, Mapping):
        values = list(value.items())
    elif isinstance(value, tuple):
        values = [(f"[{index}]", item) for index, item in enumerate(value)]
    else:
        values = [("", value)]
    span = meta.get("plausible")
    for key, item in values:
        name = str(key)
        where = path + name if name.startswith("[") else _join(path, name) if name else path
        if not accept(item):
            errors.append(f"{where}: {problem} (got {shown(item)})")
        elif isinstance(span, Plausible) and item != 0 and not span.low <= item <= span.high:
            errors.append(
                f"{where}: outside the plausible {span.low:g} to {span.high:g}"
                f"{f' {span.unit}, typed in another unit?' if span.unit else ''} "
                f"(got {shown(item)})"
            )


def _parse_fields(cls: type, value: object, path: str, errors: list[str]) -> Any:
    if not isinstance(value, dict):
        errors.append(f"{path or 'top level'}: expected a mapping (got {shown(value)})")
        raise _Invalid
    # fields marked metadata={"yaml": False} are set by code (the loader), never by a file
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init and f.metadata.get("yaml", True)}
    failed = False
    for key in value:
        if key not in fields:
            hint = did_you_mean(str(key), fields)
            errors.append(
                f"{_join(path, str(key))}: unknown key{hint} (accepted: {', '.join(fields)})"
            )
            failed = True
    kwargs: dict[str, Any] = {}
    hints = _hints(cls)
    for name, field in fields.items():
        sub = _join(path, name)
        if name not in value:
            no_default = field.default is dataclasses.MISSING
            if no_default and field.default_factory is dataclasses.MISSING:
                errors.append(f"{sub}: missing required field")
                failed = True
            continue
        try:
            kwargs[name] = _parse(hints[name], value[name], sub, errors)
            _check(field.metadata, kwargs[name], sub, errors)
        except _Invalid:
            failed = True
    if failed:
        raise _Invalid
    return cls(**kwargs)


def parse_dataclass(cls: type, data: Mapping[str, Any], errors: list[str]) -> Any | None:
    """Build ``cls`` from ``data``; on problems append ``path: problem`` lines and return None."""
    before = len(errors)
    try:
        result = _parse_fields(cls, dict(data), "", errors)
    except _Invalid:
        return None
    return result if len(errors) == before else None
