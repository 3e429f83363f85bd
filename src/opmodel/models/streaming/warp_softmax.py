"""Loads in flight per warp of ATen's warp softmax: a calibration.

ATen's ``softmax_warp_forward`` (SoftMax.cu, PersistentSoftmax.cuh) gives each row to one warp
and loads it into registers in ``WARP_ITERATIONS = next_pow2(length) / 32`` warp-wide loads of
one element per thread. Its time grows with the iterations (measured on an H200,
data/measured: 5.5, 8.0 and 12.6 µs for 512, 1024 and 2048 bf16 elements at one row), so the
warp does not issue all its loads at once; nor does it wait for each one: the growth per
iteration, 153 ns in bf16 and 102 ns in fp32, is well under one DRAM round trip (350 ns).
The warp keeps ``u`` loads in flight on average, and a row of ``n`` iterations takes ``n / u``
DRAM round trips (:mod:`~opmodel.models.streaming.evaluate`). Why ``u`` is what it is (the
compiled load loop's scheduling) is not visible without the kernel's SASS, so ``u`` is a
calibration by element size: ``configs/calibrations/warp_softmax_loads.yaml``, written by
``scripts/fit_warp_softmax_loads.py`` from the slope of the measured time over the iterations
(one wave of rows, so no queueing), with the rows it was fitted on named there; ``validate-ops``
reports those rows apart. Element sizes the file does not list get ``u = 1``: each load waits
for the one before it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from opmodel.core.errors import ConfigError
from opmodel.parsing.yamlfile import read_calibration

__all__ = [
    "LOADS_FILE",
    "WarpSoftmaxLoads",
    "is_warp_softmax",
    "load_warp_softmax_loads",
    "loads_in_flight",
    "warp_softmax_loads",
]

LOADS_FILE = (
    Path(__file__).resolve().parent.parent.parent / "configs/calibrations/warp_softmax_loads.yaml"
)
# ATen's host_softmax dispatches rows of up to 2048 elements and 8192 bytes to the warp softmax
WARP_SOFTMAX_MAX_ELEMENTS = 2048
WARP_SOFTMAX_MAX_BYTES = 8192
_FIELDS = ("fitted_on", "loads_in_flight")
_FITTED_ON = ("hardware", "source")


def is_warp_softmax(length: int, element_bytes: int) -> bool:
    """True when ATen runs a softmax over rows of ``length`` elements as its warp softmax."""
    return length <= WARP_SOFTMAX_MAX_ELEMENTS and length * element_bytes <= WARP_SOFTMAX_MAX_BYTES


@dataclass(frozen=True, slots=True)
class WarpSoftmaxLoads:
    """``u`` by element size in bytes, and its training rows: ATen softmax rows measured on
    ``hardware`` by ``source``, in the warp softmax, of at most ``max_rows`` rows."""

    by_element_bytes: Mapping[int, float]
    hardware: str
    source: str
    max_rows: int

    def is_training_row(
        self, hardware: str, source: str, rows: int, length: int, element_bytes: int
    ) -> bool:
        """True for a measured ATen softmax row this calibration was fitted on."""
        return (
            hardware == self.hardware
            and source == self.source
            and rows <= self.max_rows
            and element_bytes in self.by_element_bytes
            and is_warp_softmax(length, element_bytes)
        )


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _table(raw: Any, path: Path) -> dict[int, float]:
    field = "loads_in_flight"
    if not isinstance(raw, dict) or not raw:
        raise ConfigError([f"{path}: {field}: must map element sizes in bytes (2, 4) to counts"])
    table: dict[int, float] = {}
    for size, value in raw.items():
        if not isinstance(size, int) or isinstance(size, bool) or size not in (1, 2, 4, 8):
            raise ConfigError([f"{path}: {field}.{size}: element size must be 1, 2, 4 or 8"])
        if not _number(value) or value < 1:
            raise ConfigError(
                [f"{path}: {field}.{size}: must be a finite number >= 1 (got {value!r})"]
            )
        table[size] = float(value)
    return table


def load_warp_softmax_loads(path: Path) -> WarpSoftmaxLoads:
    """Read and validate a calibration file; errors name the file and the field."""
    data, fitted = read_calibration(path, _FIELDS, _FITTED_ON)
    max_rows = fitted.get("max_rows")
    if not isinstance(max_rows, int) or isinstance(max_rows, bool) or max_rows < 1:
        raise ConfigError(
            [f"{path}: fitted_on.max_rows: must be an integer >= 1 (got {max_rows!r})"]
        )
    return WarpSoftmaxLoads(
        by_element_bytes=_table(data["loads_in_flight"], path),
        hardware=fitted["hardware"],
        source=fitted["source"],
        max_rows=max_rows,
    )


@cache
def warp_softmax_loads() -> WarpSoftmaxLoads:
    """The shipped calibration (read once)."""
    return load_warp_softmax_loads(LOADS_FILE)


def loads_in_flight(element_bytes: int) -> float:
    """``u`` for elements of ``element_bytes`` bytes; 1 when the calibration does not list it."""
    return warp_softmax_loads().by_element_bytes.get(element_bytes, 1.0)
