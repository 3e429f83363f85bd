"""ATen's softmax kernels: which one a row length gets, and their calibration.

``host_softmax`` in ATen's SoftMax.cu picks one of three kernels for a softmax over the last
dimension (PyTorch 2.x):

- ``warp``: ``softmax_warp_forward`` (PersistentSoftmax.cuh) for rows of at most 2048 elements
  and 8 KiB. One warp per row (``min(32, next_pow2(length))`` lanes, two rows to them up to
  128 elements: :mod:`~opmodel.models.streaming.aten_rows`) loads it into registers in
  ``WARP_ITERATIONS = next_pow2(length) / 32`` warp-wide loads of one element per thread.
- ``reg``: ``cunn_SoftMaxForwardReg`` when each of the block's ``min(length, 1024)`` threads
  holds fewer than 10 elements (``potential_register_count``), so up to 9216 elements: the row
  in registers, one global pass of scalar loads.
- ``block``: ``cunn_SoftMaxForward`` (or its shared-memory variant) above that: three passes
  over the row (max, sum of exponentials, write) in 16-byte vectors, 1024 threads.

Two numbers of these kernels are not visible without their SASS, so they are a calibration
(``configs/calibrations/aten_softmax.yaml``, written by ``scripts/fit_aten_softmax.py`` from
measured rows it names; ``validate-ops`` reports those rows apart):

- ``loads_in_flight`` by element size: the loads a warp of the warp softmax keeps in flight.
  Its time grows with the iterations (an H200: 5.5, 8.0 and 12.6 µs for 512, 1024 and 2048
  bf16 elements at one row), by 153 ns per iteration in bf16 and 102 ns in fp32, well under one
  DRAM round trip (350 ns): the warp neither issues all its loads at once nor waits for each.
  With ``u`` in flight a row of ``n`` iterations takes ``n / u`` round trips
  (:mod:`~opmodel.models.streaming.evaluate`); ``u = L_dram / slope``, fitted on rows of one
  wave. Sizes the file does not list get ``u = 1``: each load waits for the one before it.
- ``block_instructions_per_element``: the issue cost ``I`` of the block kernel
  (:mod:`~opmodel.models.streaming.issue` for what ``I`` means), whose passes compute ``exp``
  twice and divide in fp32 for every element; fitted on block-kernel rows of many waves, where
  that issue bound sets the time. The register kernel takes it too where its SASS has no
  count.
- ``register_stall_factor`` (optional, 1 when absent): issue cycles per counted cycle of the
  register kernel, whose issue cycles per row and registers are counted from its SASS
  (:func:`~opmodel.models.streaming.counted.counted_register_softmax`); fitted on its rows of
  many waves, as the block kernel's ``I``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from opmodel.configs import CALIBRATIONS_DIR
from opmodel.core.errors import ConfigError
from opmodel.models.shared.calibration_slot import CalibrationSlot
from opmodel.parsing.yamlfile import read_calibration

__all__ = [
    "CALIBRATION_FILE",
    "AtenSoftmaxCalibration",
    "aten_softmax_calibration",
    "block_instructions_per_element",
    "is_warp_softmax",
    "load_aten_softmax_calibration",
    "loads_in_flight",
    "overridden",
    "register_stall_factor",
    "softmax_path",
]

CALIBRATION_FILE = CALIBRATIONS_DIR / "aten_softmax.yaml"
# host_softmax: rows of up to 2048 elements and 8192 bytes go to the warp softmax
WARP_SOFTMAX_MAX_ELEMENTS = 2048
WARP_SOFTMAX_MAX_BYTES = 8192
_BLOCK_THREADS = 1024  # SoftMaxForward_getBlockSize: min(length, 1024) threads
_REG_MAX_PER_THREAD = 9  # host_softmax: cunn_SoftMaxForwardReg while potential_reg_cnt < 10
_FIELDS = ("fitted_on", "loads_in_flight", "block_instructions_per_element")
_FITTED_ON = ("hardware", "source")


def is_warp_softmax(length: int, element_bytes: int) -> bool:
    """True when ATen runs a softmax over rows of ``length`` elements as its warp softmax."""
    return length <= WARP_SOFTMAX_MAX_ELEMENTS and length * element_bytes <= WARP_SOFTMAX_MAX_BYTES


def softmax_path(length: int, element_bytes: int) -> str:
    """``warp``, ``reg`` or ``block``: the kernel ATen runs for rows of ``length`` elements."""
    if is_warp_softmax(length, element_bytes):
        return "warp"
    threads = min(length, _BLOCK_THREADS)
    return "reg" if math.ceil(length / threads) <= _REG_MAX_PER_THREAD else "block"


@dataclass(frozen=True, slots=True)
class AtenSoftmaxCalibration:
    """The calibrated numbers and their training rows: ATen softmax rows measured on
    ``hardware`` by ``source``, warp-softmax rows of at most ``warp_max_rows`` rows, and block
    rows (register rows too, when the file has their stall factor) of at least
    ``block_min_rows`` rows."""

    loads_in_flight: Mapping[int, float]
    block_instructions_per_element: float
    hardware: str
    source: str
    warp_max_rows: int
    block_min_rows: int
    register_stall_factor: float | None = None

    def is_training_row(
        self, hardware: str, source: str, rows: int, length: int, element_bytes: int
    ) -> bool:
        """True for a measured ATen softmax row this calibration was fitted on."""
        if hardware != self.hardware or source != self.source:
            return False
        path = softmax_path(length, element_bytes)
        if path == "warp":
            return rows <= self.warp_max_rows and element_bytes in self.loads_in_flight
        fitted = path == "block" or (path == "reg" and self.register_stall_factor is not None)
        return fitted and rows >= self.block_min_rows


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _count(value: object, where: str, minimum: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise ConfigError([f"{where}: must be an integer >= {minimum} (got {value!r})"])
    return value


def _loads(raw: Any, path: Path) -> dict[int, float]:
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


def load_aten_softmax_calibration(path: Path) -> AtenSoftmaxCalibration:
    """Read and validate a calibration file; errors name the file and the field."""
    data, fitted = read_calibration(path, _FIELDS, _FITTED_ON)
    issue = data["block_instructions_per_element"]
    if not _number(issue) or issue < 0:
        field = "block_instructions_per_element"
        raise ConfigError([f"{path}: {field}: must be a finite number >= 0 (got {issue!r})"])
    factor = data.get("register_stall_factor")
    if factor is not None and (not _number(factor) or factor <= 0):
        field = "register_stall_factor"
        raise ConfigError([f"{path}: {field}: must be a finite number > 0 (got {factor!r})"])
    return AtenSoftmaxCalibration(
        loads_in_flight=_loads(data["loads_in_flight"], path),
        block_instructions_per_element=float(issue),
        hardware=fitted["hardware"],
        source=fitted["source"],
        warp_max_rows=_count(fitted.get("warp_max_rows"), f"{path}: fitted_on.warp_max_rows", 1),
        block_min_rows=_count(fitted.get("block_min_rows"), f"{path}: fitted_on.block_min_rows", 1),
        register_stall_factor=None if factor is None else float(factor),
    )


_SLOT: CalibrationSlot[AtenSoftmaxCalibration] = CalibrationSlot(
    lambda: load_aten_softmax_calibration(CALIBRATION_FILE)
)


def aten_softmax_calibration() -> AtenSoftmaxCalibration:
    """The calibration in force: the shipped file, or one set by :func:`overridden`."""
    return _SLOT.current()


def overridden(calibration: AtenSoftmaxCalibration) -> AbstractContextManager[None]:
    """Use ``calibration`` instead of the shipped file (the fit script; models memoise profiles,
    so callers predict through uncached entry points inside the block)."""
    return _SLOT.overridden(calibration)


def loads_in_flight(element_bytes: int) -> float:
    """``u`` for elements of ``element_bytes`` bytes; 1 when the calibration does not list it."""
    return aten_softmax_calibration().loads_in_flight.get(element_bytes, 1.0)


def block_instructions_per_element() -> float:
    """``I`` of ATen's block softmax."""
    return aten_softmax_calibration().block_instructions_per_element


def register_stall_factor() -> float:
    """Issue cycles per counted cycle of ATen's register softmax: 1 when not fitted."""
    factor = aten_softmax_calibration().register_stall_factor
    return 1.0 if factor is None else factor
