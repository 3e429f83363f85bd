"""A shipped calibration read on first use, with overrides for the tools that fit it.

The streaming calibrations (instruction issue, ATen's softmax kernels) are files that a model
reads once per process; the scripts that fit them predict with trial values in their place.
:class:`CalibrationSlot` holds both: the shipped value, loaded lazily, and a stack of
overrides that :meth:`CalibrationSlot.overridden` pushes for the length of a ``with`` block.
Models memoise profiles, so callers inside such a block predict through uncached entry points.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import ClassVar, Generic, TypeVar

__all__ = ["CalibrationSlot"]

T = TypeVar("T")


class CalibrationSlot(Generic[T]):
    """The calibration in force: the last override, else the shipped one (``load()``, once).

    ``CalibrationSlot.generation`` counts every override entered or left, in any slot: values
    derived from calibrations and marked with it are current while it has not moved (the
    GEMM models' ``in_force``), one integer read where they would otherwise ask each slot."""

    generation: ClassVar[int] = 0

    def __init__(self, load: Callable[[], T]) -> None:
        self._load = load
        self._shipped: T | None = None
        self._overrides: list[T] = []

    def current(self) -> T:
        """The innermost override, or the shipped calibration."""
        if self._overrides:
            return self._overrides[-1]
        if self._shipped is None:
            self._shipped = self._load()
        return self._shipped

    @contextmanager
    def overridden(self, calibration: T) -> Iterator[None]:
        """Use ``calibration`` in place of the shipped one inside the ``with`` block."""
        self._overrides.append(calibration)
        CalibrationSlot.generation += 1
        try:
            yield
        finally:
            self._overrides.pop()
            CalibrationSlot.generation += 1
