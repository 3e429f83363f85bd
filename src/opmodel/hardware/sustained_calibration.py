"""Fitted sustained operating point of one device (a file beside the hardware config).

A datasheet gives peaks; what a board sustains under load is measured or fitted, and such
values live apart from the datasheet values (docs/hardware.md). A sustained calibration file,
named by a config's top-level ``sustained_calibration``, holds them with what they were
fitted on and the command that refits them:

- ``power_limited_clock_hz``: the SM clock the board's power limit holds under dense tensor
  work (``compute.power_limited_clock_hz``, docs/models/effective_roofline.md);
- ``power_limited_clock_hz_by_dtype``: the same for tensor work of one dtype
  (``compute.power_limited_clock_hz_by_dtype``);
- ``hbm_fraction``: the sustained share of the datasheet DRAM bandwidth
  (``utilization.memory_fraction.hbm``);
- ``tensor_fraction``: the sustained share of the datasheet tensor (MXU) peak on large GEMMs
  (``utilization.tensor_fraction``), for a device without a power-limited clock to fit: the
  TPU configs' clocks are derived from their peaks, so what their largest GEMMs sustain is
  fitted as a share of the peak instead.

The loader copies them into the spec. A value the config sets itself as well is an error (one
source per value).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from opmodel.core.dtypes import DType
from opmodel.core.errors import ConfigError
from opmodel.core.frozen_dict import FrozenDict
from opmodel.hardware.calibration_file import load_calibration_file
from opmodel.hardware.checks import power_limit_problems
from opmodel.hardware.ranges import CLOCK_HZ
from opmodel.hardware.spec import HardwareSpec
from opmodel.parsing.schema import MUST_BE_FRACTION

__all__ = [
    "SustainedCalibration",
    "apply_sustained_calibration",
    "load_sustained_calibration",
    "sustained_calibration_text",
    "with_hbm_fraction",
    "with_tensor_fraction",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class SustainedCalibration:
    """A sustained calibration file: device, provenance and the fitted values."""

    hardware: str
    fitted_on: str
    command: str
    power_limited_clock_hz: float | None = field(default=None, metadata=CLOCK_HZ)
    power_limited_clock_hz_by_dtype: Mapping[DType, float] = field(
        default_factory=lambda: FrozenDict({}), metadata=CLOCK_HZ
    )
    hbm_fraction: float | None = field(default=None, metadata=MUST_BE_FRACTION)
    tensor_fraction: float | None = field(default=None, metadata=MUST_BE_FRACTION)


def load_sustained_calibration(path: Path, hardware: str | tuple[str, ...]) -> SustainedCalibration:
    """Read and check a sustained calibration file for the config called ``hardware``."""
    return load_calibration_file(path, SustainedCalibration, hardware, "sustained calibration")


def sustained_calibration_text(calibration: SustainedCalibration, header: Sequence[str]) -> str:
    """The file :func:`load_sustained_calibration` reads back: ``header`` as comment lines,
    then the fields, ``fitted_on`` one single-quoted string folded at its newlines (YAML reads
    each fold as a space), clocks to 6 significant digits, the fields left at None out."""
    folds = [line.replace("'", "''") for line in calibration.fitted_on.split("\n")]
    folds[0] = f"fitted_on: '{folds[0]}"
    folds[-1] += "'"  # the same line as the first when nothing is folded
    lines = [*(f"# {line}" for line in header), f"hardware: {calibration.hardware}", *folds]
    lines.append(f"command: {calibration.command}")
    if calibration.power_limited_clock_hz is not None:
        lines.append(f"power_limited_clock_hz: {calibration.power_limited_clock_hz:.6g}")
    by_dtype = calibration.power_limited_clock_hz_by_dtype
    if by_dtype:
        clocks = ", ".join(f"{dtype.value}: {clock:.6g}" for dtype, clock in by_dtype.items())
        lines.append(f"power_limited_clock_hz_by_dtype: {{{clocks}}}")
    if calibration.hbm_fraction is not None:
        lines.append(f"hbm_fraction: {calibration.hbm_fraction}")
    if calibration.tensor_fraction is not None:
        lines.append(f"tensor_fraction: {calibration.tensor_fraction}")
    return "\n".join(lines) + "\n"


def apply_sustained_calibration(
    spec: HardwareSpec, calibration: SustainedCalibration, path: Path
) -> HardwareSpec:
    """``spec`` with the calibration's values; ConfigError where the config sets one too."""
    clock = calibration.power_limited_clock_hz
    by_dtype = calibration.power_limited_clock_hz_by_dtype
    fraction = calibration.hbm_fraction
    errors = []
    if clock is not None and spec.compute.power_limited_clock_hz is not None:
        errors.append("compute.power_limited_clock_hz: set by the config and its calibration")
    for dtype in by_dtype.keys() & spec.compute.power_limited_clock_hz_by_dtype.keys():
        errors.append(
            f"compute.power_limited_clock_hz_by_dtype.{dtype.value}: set by the config and its "
            "calibration"
        )
    if fraction is not None and "hbm" in spec.utilization.memory_fraction:
        errors.append("utilization.memory_fraction.hbm: set by the config and its calibration")
    tensor = calibration.tensor_fraction
    if tensor is not None and spec.utilization.tensor_fraction != 1.0:
        errors.append("utilization.tensor_fraction: set by the config and its calibration")
    if errors:
        raise ConfigError(f"{path}: {problem}" for problem in errors)
    compute = dataclasses.replace(
        spec.compute,
        power_limited_clock_hz=spec.compute.power_limited_clock_hz if clock is None else clock,
        power_limited_clock_hz_by_dtype=FrozenDict(
            {**spec.compute.power_limited_clock_hz_by_dtype, **by_dtype}
        ),
    )
    spec = dataclasses.replace(spec, compute=compute)
    if fraction is not None:
        spec = with_hbm_fraction(spec, fraction)
    if tensor is not None:
        spec = with_tensor_fraction(spec, tensor)
    # the config's own clocks passed these checks on load: what fails now came from the file
    problems = power_limit_problems(spec.compute)
    if problems:
        raise ConfigError(f"{path}: {problem}" for problem in problems)
    return spec


def with_hbm_fraction(spec: HardwareSpec, fraction: float | None) -> HardwareSpec:
    """``spec`` with ``utilization.memory_fraction.hbm`` set to ``fraction`` (None: removed, the
    datasheet DRAM peak)."""
    fractions = {k: v for k, v in spec.utilization.memory_fraction.items() if k != "hbm"}
    if fraction is not None:
        fractions["hbm"] = fraction
    utilization = dataclasses.replace(spec.utilization, memory_fraction=FrozenDict(fractions))
    return dataclasses.replace(spec, utilization=utilization)


def with_tensor_fraction(spec: HardwareSpec, fraction: float) -> HardwareSpec:
    """``spec`` with ``utilization.tensor_fraction`` set to ``fraction`` (1.0: the datasheet
    tensor peak)."""
    utilization = dataclasses.replace(spec.utilization, tensor_fraction=fraction)
    return dataclasses.replace(spec, utilization=utilization)
