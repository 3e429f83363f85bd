"""The tables of the counts files under ``configs/instructions/`` (counted from SASS): each
maps architectures to the counted dtypes to (usually) functions to a value, and is read with
one-line errors that name the file and the field. :mod:`~opmodel.models.streaming.counted`,
:mod:`~opmodel.models.streaming.counted_reduce` and
:mod:`~opmodel.models.streaming.aten_broadcast` read theirs through these."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from opmodel.core.errors import ConfigError

__all__ = ["DTYPES", "by_arch_dtype", "function_table", "positive_count"]

DTYPES = ("bf16", "fp16", "fp32")  # the dtypes the counters count
T = TypeVar("T")


def _is_positive(value: Any) -> bool:
    """A finite number > 0 (not a bool)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 < value < math.inf


def positive_count(value: Any, where: str) -> float:
    """``value`` as a float when it is a finite number > 0, else a one-line error at ``where``
    (the file and the field)."""
    if not _is_positive(value):
        raise ConfigError([f"{where}: must be a finite number > 0 (got {value!r})"])
    return float(value)


def by_arch_dtype(
    raw: dict[Any, Any], path: Path, section: str, contents: str, entry: Callable[[Any, str], T]
) -> dict[tuple[str, str], T]:
    """``section``'s architectures -> dtypes -> ``entry(value, where)``, keyed by (architecture,
    dtype); a one-line error naming the file and field where an architecture maps anything but
    the counted dtypes (``contents``: what the dtypes map to, for the message)."""
    out = {}
    for arch, by_dtype in raw.items():
        if not isinstance(by_dtype, dict) or any(d not in DTYPES for d in by_dtype):
            raise ConfigError(
                [f"{path}: {section}.{arch}: must map dtypes ({', '.join(DTYPES)}){contents}"]
            )
        for dtype, value in by_dtype.items():
            out[(str(arch), dtype)] = entry(value, f"{section}.{arch}.{dtype}")
    return out


def function_table(
    raw: Any, path: Path, section: str, check: Callable[[Any, str], T]
) -> dict[tuple[str, str, str], T]:
    """``section``'s architectures -> dtypes -> functions -> ``check(value, where)`` (the value
    as read, or a one-line error at ``where``: the file and the field), keyed by
    (architecture, dtype, function)."""
    if not isinstance(raw, dict):
        raise ConfigError([f"{path}: {section}: must map architectures to dtypes"])

    def functions(value: Any, where: str) -> dict[str, T]:
        if not isinstance(value, dict):
            raise ConfigError([f"{path}: {where}: must map functions to counts"])
        return {str(name): check(v, f"{path}: {where}.{name}") for name, v in value.items()}

    table = by_arch_dtype(raw, path, section, " to functions", functions)
    return {(arch, dtype, name): v for (arch, dtype), f in table.items() for name, v in f.items()}
