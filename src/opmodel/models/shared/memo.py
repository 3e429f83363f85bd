"""Memoise a value derived from one (op, hardware) pair on the op."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from opmodel.core.op import LocalOp
from opmodel.hardware.spec import HardwareSpec

__all__ = ["per_op_and_hardware"]

_T = TypeVar("_T")


def per_op_and_hardware(
    key: str, op: LocalOp, hardware: HardwareSpec, build: Callable[[LocalOp, HardwareSpec], _T]
) -> _T:
    """``build(op, hardware)``, kept in ``op.derived_cache[key]`` for the last hardware used.

    The entry is keyed by the identity of ``hardware.derived_cache`` and holds a reference to
    it, so no other spec can take over that identity while the entry lives; a prediction on
    another spec rebuilds the value. Only pure functions of (op, hardware) may be memoised.
    """
    cache = hardware.derived_cache
    last = op.derived_cache.get(key)
    if last is not None and last[0] is cache:
        return last[1]  # type: ignore[no-any-return]
    value = build(op, hardware)
    op.derived_cache[key] = (cache, value)
    return value
