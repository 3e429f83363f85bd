"""Calibrated energy terms for one device at one SM clock (a file beside the hardware config).

Datasheet-derived energy constants in a hardware config are estimates. ``opmodel
calibrate-energy`` fits replacements by non-negative least squares on a declared training split
of measured runs and writes them to a calibration file (YAML), which a config names in
``power.energy_calibration``. The file says what it was fitted on; the config's own values are
never overwritten. :meth:`HardwareSpec.at_clock` applies the terms at the calibration's clock
(within 1 MHz) and only there: a calibration is valid at the operating point it was fitted at.

Terms (all >= 0): ``active_w`` (board power above idle while a kernel runs), and per event
``tensor_j_per_flop`` (issued tensor-engine FLOPs of the listed ``tensor_dtypes``),
``hbm_j_per_byte`` and ``l2_j_per_byte``; ``vector_j_per_flop`` is optional (the config's
values stay when it is absent). ``launch_gap_s``, when present, replaces the config's
``kernel_launch_overhead_s``: the host time per kernel of the framework the runs used (eager
PyTorch spends far more than the CUDA launch itself), which sets how passes of many short
kernels add up.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from opmodel.core.dtypes import DType
from opmodel.hardware.calibration_file import load_calibration_file
from opmodel.hardware.ranges import CLOCK_MHZ, J_PER_BYTE, J_PER_FLOP, POWER_W, TIME_PER_KERNEL_S

__all__ = ["EnergyCalibration", "EnergyTerms", "load_energy_calibration"]


@dataclass(frozen=True, slots=True, kw_only=True)
class EnergyTerms:
    """The fitted coefficients."""

    active_w: float = field(metadata=POWER_W)
    tensor_j_per_flop: float = field(metadata=J_PER_FLOP)
    hbm_j_per_byte: float = field(metadata=J_PER_BYTE)
    l2_j_per_byte: float = field(metadata=J_PER_BYTE)
    vector_j_per_flop: float | None = field(default=None, metadata=J_PER_FLOP)
    launch_gap_s: float | None = field(default=None, metadata=TIME_PER_KERNEL_S)
    # host time per nn.Module call of an eager forward pass (opmodel.validation.host_time);
    # read by validate-artifact's launch queue only
    module_call_s: float | None = field(default=None, metadata=TIME_PER_KERNEL_S)


@dataclass(frozen=True, slots=True, kw_only=True)
class EnergyCalibration:
    """A calibration file: device, clock, what it was fitted on, and the terms."""

    hardware: str
    clock_mhz: float = field(metadata=CLOCK_MHZ)
    model: str
    fitted_on: str
    tensor_dtypes: tuple[DType, ...] = (DType.BF16, DType.FP16)
    terms: EnergyTerms
    training_runs: tuple[str, ...] = ()
    metrics: object = None


def load_energy_calibration(path: Path, hardware: str | tuple[str, ...]) -> EnergyCalibration:
    """Read and check a calibration file for the config called ``hardware``."""
    return load_calibration_file(path, EnergyCalibration, hardware, "energy calibration")
