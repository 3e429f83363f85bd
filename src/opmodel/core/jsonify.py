"""One generic serialiser from frozen result dataclasses to JSON-ready values."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from enum import Enum
from typing import Any

__all__ = ["to_jsonable"]


def to_jsonable(value: Any) -> Any:
    """Convert dataclasses, enums, mappings and sequences recursively to JSON types.

    Dataclass fields declared with ``repr=False`` are skipped; names listed in a class's
    ``json_properties`` tuple are added (totals that are properties). Non-finite floats become
    ``None`` because JSON cannot carry them.
    """
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, bool | int | str) or value is None:
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {
            f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value) if f.repr
        }
        for name in getattr(value, "json_properties", ()):
            out[name] = to_jsonable(getattr(value, name))
        return out
    if isinstance(value, Mapping):
        return {str(to_jsonable(k)): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [to_jsonable(v) for v in value]
    msg = f"cannot serialise {type(value).__name__} to JSON"
    raise TypeError(msg)
