"""The extra fixed overhead of block-scaled FP4 GEMM kernels: a fitted calibration per model
and GPU architecture, added to the architecture's GEMM overhead (:mod:`.overhead`) for a GEMM
whose compute type is of the ``fp4`` family (``nvfp4``, ``mxfp4``, ``fp4``).

Published Blackwell FP4 GEMMs take a few microseconds more than FP8 or bf16 GEMMs of the same
size on the same board where both are overhead-bound (torchao's B200 kernel times: 1024^3 in
5.9 us in NVFP4, 5.1 us in bf16; Azure's GB200 tables: 7.5 us in FP4, 4.4 us in FP8), in
cuBLASLt and in vLLM's CUTLASS kernels alike (docs/validation.md, "Block-scaled and FP4
GEMMs"). What in the kernels costs it (the scale factors' pipeline set-up, their copies into
tensor memory before the first MMA) is not known from those tables, so it is one constant in
cycles, fitted by ``python scripts/fit_fp4_overhead.py --write`` on the declared training rows
its file lists (kernel times, as the GEMM overhead is fitted) and checked on the held-out rest
(``python scripts/compare_published_fp4.py``). Architectures and models the file does not list
add nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from opmodel.configs import CALIBRATIONS_DIR
from opmodel.core.dtypes import DType
from opmodel.hardware.spec import HardwareSpec
from opmodel.models.gemm.overhead import read_cycles_calibration, string_list
from opmodel.models.shared.calibration_slot import CalibrationSlot

__all__ = [
    "FP4_CALIBRATION_FILE",
    "NO_FP4_EXTRA",
    "Fp4OverheadCalibration",
    "fp4_extra_cycles",
    "fp4_overridden",
    "load_fp4_overhead",
]

FP4_CALIBRATION_FILE = CALIBRATIONS_DIR / "gemm_fp4_overhead.yaml"


@dataclass(frozen=True, slots=True)
class Fp4OverheadCalibration:
    """Extra cycles by (model, architecture) and the training rows (``fitted_on.rows``)."""

    cycles: Mapping[tuple[str, str], int]
    rows: tuple[str, ...] = ()


NO_FP4_EXTRA = Fp4OverheadCalibration({})


def load_fp4_overhead(path: Path) -> Fp4OverheadCalibration:
    """Read and validate an FP4 overhead calibration file; errors name the file and field."""
    cycles, fitted = read_cycles_calibration(path, "extra_cycles")
    rows = string_list(fitted.get("rows", []), path, "fitted_on.rows")
    return Fp4OverheadCalibration(cycles, tuple(rows))


_SLOT: CalibrationSlot[Fp4OverheadCalibration] = CalibrationSlot(
    lambda: load_fp4_overhead(FP4_CALIBRATION_FILE)
)


def fp4_extra_cycles(hardware: HardwareSpec, model: str, dtype: DType) -> int:
    """Cycles ``model`` adds to a GEMM kernel computing in ``dtype`` on ``hardware``: the
    calibration's value for its architecture when ``dtype`` is of the ``fp4`` family, else 0."""
    if dtype.family is not DType.FP4 or hardware.architecture is None:
        return 0
    return _SLOT.current().cycles.get((model, hardware.architecture), 0)


def fp4_overridden(calibration: Fp4OverheadCalibration) -> AbstractContextManager[None]:
    """Use ``calibration`` instead of the shipped file inside the ``with`` block (the fit
    script predicts without it); the GEMM models derive their values afresh under it
    (:func:`opmodel.models.gemm.overhead.in_force`)."""
    return _SLOT.overridden(calibration)
