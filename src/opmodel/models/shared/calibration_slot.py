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
from typing import Generic, TypeVar

__all__ = ["CalibrationSlot"]

T = TypeVar("T")


class CalibrationSlot(Generic[T]):
    """The calibration in force: the last override, else the shipped one (``load()``, once)."""

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
        try:
            yield
        finally:
            self._overrides.pop()
