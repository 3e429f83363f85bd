"""The share of the FP32 peak an FP32 GEMM on the SIMT path sustains: a fitted calibration per
GPU architecture, applied to the GEMM models' SIMT math rate for FP32 (TF32 off).

GA102 and AD102 SMs double GA100's FP32 lanes with a second datapath that also runs INT32
(NVIDIA's GA102 whitepaper), and cuBLAS's SGEMM reaches about two thirds of that doubled peak
on them; GH100's, about 84 % of its peak (its 32-lane FP32 datapaths take a warp's FMA each
clock, so the loop's loads take FMA issue slots); GA100's, all of it on an SXM4 board:
published square ``torch.mm`` runs (docs/validation.md, "Square torch.mm runs"). Which limit
binds on GA102 (register-file bandwidth for three operands a cycle on both datapaths is the
likely one) no public source measures, so the share is one fitted number per architecture, by
``python scripts/fit_simt_fraction.py --write`` on the declared training rows its file lists,
and checked on the held-out rest (``python scripts/compare_published_torch_mm.py``).
Architectures the file does not list keep the whole vector peak (``utilization.vector_fraction``
of it).
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from opmodel.configs import CALIBRATIONS_DIR
from opmodel.core.dtypes import DType
from opmodel.core.errors import ConfigError
from opmodel.hardware.spec import HardwareSpec
from opmodel.models.gemm.overhead import string_list
from opmodel.models.shared.calibration_slot import CalibrationSlot
from opmodel.parsing.yamlfile import read_yaml_mapping

__all__ = [
    "NO_SIMT_FRACTION",
    "SIMT_CALIBRATION_FILE",
    "SimtCalibration",
    "load_simt_calibration",
    "simt_fp32_fraction",
    "simt_overridden",
]

SIMT_CALIBRATION_FILE = CALIBRATIONS_DIR / "gemm_simt_fp32.yaml"


@dataclass(frozen=True, slots=True)
class SimtCalibration:
    """The share of the FP32 peak by architecture and the training rows (``fitted_on.rows``)."""

    fractions: Mapping[str, float]
    rows: tuple[str, ...] = ()


NO_SIMT_FRACTION = SimtCalibration({})


def load_simt_calibration(path: Path) -> SimtCalibration:
    """Read and validate a SIMT calibration file; errors name the file and the field."""
    data = read_yaml_mapping(path)
    table, fitted = data.get("fp32_fraction"), data.get("fitted_on")
    if not isinstance(table, dict) or not table or not isinstance(fitted, dict):
        msg = f"{path}: needs fitted_on (a mapping) and fp32_fraction (architecture: share)"
        raise ConfigError([msg])
    fractions = {}
    for arch, value in table.items():
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if not number or not 0 < value <= 1:
            msg = f"{path}: fp32_fraction.{arch}: must be a number in (0, 1] (got {value!r})"
            raise ConfigError([msg])
        fractions[str(arch)] = float(value)
    rows = string_list(fitted.get("rows", []), path, "fitted_on.rows")
    return SimtCalibration(fractions, tuple(rows))


_SLOT: CalibrationSlot[SimtCalibration] = CalibrationSlot(
    lambda: load_simt_calibration(SIMT_CALIBRATION_FILE)
)


def simt_fp32_fraction(hardware: HardwareSpec, dtype: DType) -> float:
    """The calibration's share for ``hardware``'s architecture when ``dtype`` is FP32 (a SIMT
    GEMM), else 1."""
    if dtype is not DType.FP32 or hardware.architecture is None:
        return 1.0
    return _SLOT.current().fractions.get(hardware.architecture, 1.0)


def simt_overridden(calibration: SimtCalibration) -> AbstractContextManager[None]:
    """Use ``calibration`` instead of the shipped file inside the ``with`` block (the fit
    script predicts without it); the GEMM models derive their rates afresh under it."""
    return _SLOT.overridden(calibration)
