"""Start and drain of a kernel on a CUDA GPU: a calibration, in SM cycles.

A profiler's kernel time runs from the front end's first CTA launch to the retirement of the
last CTA with its writes acknowledged. Besides its waves, every kernel pays a span for that
launch and drain. The streaming kernels
(:func:`~opmodel.models.streaming.evaluate.evaluate_streaming`, ``fixed_s``) and the attention
kernels (:func:`~opmodel.models.attention.costs.common`) add this one; the GEMM models add their
own fitted overhead, which also holds their prologue and epilogue
(:mod:`~opmodel.models.gemm.overhead`).

On CUDA GPUs (architectures ``sm*``) the span is the calibration
``configs/calibrations/start_drain.yaml``, written by ``scripts/fit_start_drain.py``: the one
count of SM cycles that minimises the squared relative errors of ``effective_roofline`` on the
training rows it names, the streaming kernels with no fitted issue cost (ATen's residual add,
whose arithmetic is counted from its SASS, and vLLM's SiLU-and-mul) measured by Vidur on the
A100 (closed form: the span adds to every prediction,
``opmodel.validation.nnls.relative_offset`` with each row's clock). Like the config's estimate
it replaces (``overhead.fixed_device_overhead_cycles``), it is counted in cycles of the SM
clock, so ``HardwareSpec.at_clock`` scales it; a span of fixed time fitted on the same rows put
the held-out H100 and A40 rows further off (docs/models/streaming.md, "Start and drain").

Other architectures (AMD's CDNA, TPUs, the generic configs) keep their config's estimate.
"""

from __future__ import annotations

import math
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from opmodel.configs import CALIBRATIONS_DIR
from opmodel.core.attrs import STREAMING_IMPLEMENTATIONS
from opmodel.core.errors import ConfigError
from opmodel.hardware import HardwareSpec
from opmodel.models.shared.calibration_slot import CalibrationSlot
from opmodel.parsing.yamlfile import read_calibration

__all__ = [
    "CALIBRATION_FILE",
    "MAX_START_DRAIN_CYCLES",
    "StartDrainCalibration",
    "load_start_drain_calibration",
    "overridden",
    "start_drain_calibration",
    "start_drain_s",
]

CALIBRATION_FILE = CALIBRATIONS_DIR / "start_drain.yaml"
# 200,000 cycles (about 100 µs at 2 GHz): far above any kernel launch; more is a units slip
MAX_START_DRAIN_CYCLES = 200_000
_FIELDS = ("fitted_on", "start_drain_cycles")
_FITTED_ON = ("hardware", "source")


@dataclass(frozen=True, slots=True)
class StartDrainCalibration:
    """The span and its training rows: those measured on ``hardware`` by ``source`` of the
    ``kernels`` (``(implementation, function or kind)``, as the issue calibration keys them)."""

    start_drain_cycles: float
    hardware: str
    source: str
    kernels: frozenset[tuple[str, str]]

    def is_training_row(self, hardware: str, source: str, implementation: str, key: str) -> bool:
        """True for a measured row the span was fitted on."""
        return (
            hardware == self.hardware
            and source == self.source
            and (implementation, key) in self.kernels
        )


def _kernels(raw: object, path: Path) -> frozenset[tuple[str, str]]:
    """``fitted_on.kernels``: a list of ``implementation/key`` strings."""
    where = f"{path}: fitted_on.kernels"
    if not isinstance(raw, list) or not raw:
        raise ConfigError([f"{where}: must be a list of implementation/function entries"])
    kernels = set()
    for entry in raw:
        implementation, _, key = str(entry).partition("/")
        if implementation not in STREAMING_IMPLEMENTATIONS or not key:
            accepted = ", ".join(sorted(STREAMING_IMPLEMENTATIONS))
            raise ConfigError(
                [
                    f"{where}: {entry!r} must be implementation/function, implementation one "
                    f"of {accepted}"
                ]
            )
        kernels.add((implementation, key))
    return frozenset(kernels)


def load_start_drain_calibration(path: Path) -> StartDrainCalibration:
    """Read and validate a calibration file (module docstring); errors name the file and field."""
    data, fitted = read_calibration(path, _FIELDS, _FITTED_ON)
    value = data["start_drain_cycles"]
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if not number or not math.isfinite(value) or not 0 <= value <= MAX_START_DRAIN_CYCLES:
        raise ConfigError(
            [
                f"{path}: start_drain_cycles: must be a number of SM cycles from 0 to "
                f"{MAX_START_DRAIN_CYCLES} (got {value!r})"
            ]
        )
    return StartDrainCalibration(
        start_drain_cycles=float(value),
        hardware=fitted["hardware"],
        source=fitted["source"],
        kernels=_kernels(fitted.get("kernels"), path),
    )


_SLOT: CalibrationSlot[StartDrainCalibration] = CalibrationSlot(
    lambda: load_start_drain_calibration(CALIBRATION_FILE)
)


def start_drain_calibration() -> StartDrainCalibration:
    """The calibration in force: the shipped file, or one set by :func:`overridden`."""
    return _SLOT.current()


def start_drain_s(hardware: HardwareSpec) -> float:
    """A streaming kernel's start and drain on ``hardware`` in seconds (module docstring): the
    calibrated cycles on a CUDA GPU, else the config's fixed overhead cycles, at its SM clock."""
    architecture = hardware.architecture or ""
    if architecture.startswith("sm"):
        cycles = _SLOT.current().start_drain_cycles
    else:
        cycles = hardware.overhead.fixed_device_overhead_cycles
    return cycles / hardware.compute.clock_hz


def overridden(calibration: StartDrainCalibration) -> AbstractContextManager[None]:
    """Use ``calibration`` instead of the shipped file (the fitting script)."""
    return _SLOT.overridden(calibration)
