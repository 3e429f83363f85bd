"""Fit the share of the FP32 peak an FP32 SIMT GEMM sustains on GA102 and AD102 SMs
(opmodel.models.gemm.simt_fraction).

Usage: python scripts/fit_simt_fraction.py [--write | --output FILE]

Training split (declared here): the A40's published FP32 ``torch.mm`` GEMMs of at least 1 TFLOP
(8,192^3 and 10,240^3, torch-performance-test-data issue #185; the rule of
``fit_published_sustained.py``), the A40 being the sm_86 board whose FP16 and BF16 runs of the
same source set its clock. The share is searched on a 0.01 grid over 0.30-1.00 for the least
squared relative error of ``effective_roofline`` without the shipped calibration, and applies
to sm_86 and sm_89 (GA102 and AD10x: the same SM, two FP32 datapaths, one shared with INT32).
Held out: the A40's three smaller FP32 GEMMs and the RTX 4090's five (issue #78), printed with
the training rows; ``python scripts/compare_published_torch_mm.py`` prints every row.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from compare_published_torch_mm import PUBLISHED, SIZES

from opmodel import ops
from opmodel.hardware import load_hardware
from opmodel.models import get_model
from opmodel.models.gemm.simt_fraction import (
    NO_SIMT_FRACTION,
    SIMT_CALIBRATION_FILE,
    SimtCalibration,
    simt_overridden,
)

ARCHITECTURES = ("sm86", "sm89")
TRAIN_HARDWARE, MIN_TFLOP = "a40", 1.0
HELD_OUT = ("a40", "rtx4090")


def _rows(hardware: str) -> list[tuple[int, float]]:
    """(n, published seconds) of ``hardware``'s FP32 GEMMs."""
    return [
        (n, 2 * n**3 / (tf * 1e12))
        for n, tf in zip(SIZES, PUBLISHED[hardware]["fp32"], strict=True)
    ]


def _ratios(fraction: float, hardware: str) -> list[tuple[int, float]]:
    """(n, predicted over published) at ``fraction`` for ``hardware``'s FP32 GEMMs."""
    model, spec = get_model("effective_roofline"), load_hardware(hardware)
    calibration = SimtCalibration(dict.fromkeys(ARCHITECTURES, fraction))
    with simt_overridden(calibration):
        return [(n, model.predict(ops.gemm(n, n, n, "fp32"), spec).latency_s / t)
                for n, t in _rows(hardware)]  # fmt: skip


def training(n: int) -> bool:
    """Whether the A40's ``n``^3 FP32 GEMM trains the share."""
    return 2 * n**3 >= MIN_TFLOP * 1e12


def fit() -> float:
    """The share on the 0.01 grid that fits the training rows best."""

    def error(fraction: float) -> float:
        return sum((r - 1) ** 2 for n, r in _ratios(fraction, TRAIN_HARDWARE) if training(n))

    with simt_overridden(NO_SIMT_FRACTION):
        grid = [round(0.30 + 0.01 * i, 2) for i in range(71)]
        return min(grid, key=lambda f: (error(f), -f))


def write(fraction: float, path: Path) -> None:
    """The calibration file the GEMM models read."""
    rows = [f"torch-performance-test-data issue 185: a40 {n}^3 fp32" for n in SIZES if training(n)]
    lines = [
        "# The share of the FP32 peak an FP32 (SIMT) GEMM sustains, per GPU architecture",
        "# (opmodel.models.gemm.simt_fraction): a fitted value, not a datasheet value. Written",
        "# by `python scripts/fit_simt_fraction.py --write` (do not edit by hand).",
        "fitted_on:",
        "  source: 'published square torch.mm FP32 runs, TF32 off (torch-performance-test-data",
        "    issue #185, NVIDIA A40); held out its smaller runs and the RTX 4090''s (issue #78)'",
        "  rows:",
        *(f"  - '{row}'" for row in rows),
        "command: python scripts/fit_simt_fraction.py --write",
        "fp32_fraction:",
        *(f"  {arch}: {fraction}" for arch in ARCHITECTURES),
    ]
    path.write_text("\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    target = parser.add_mutually_exclusive_group()
    target.add_argument("--write", action="store_true", help="write the shipped file")
    target.add_argument("--output", type=Path, help="write the calibration here")
    args = parser.parse_args(argv)
    fraction = fit()
    print(f"FP32 SIMT share of the peak on {', '.join(ARCHITECTURES)}: {fraction}")
    for hardware in HELD_OUT:
        for n, ratio in _ratios(fraction, hardware):
            split = "training" if hardware == TRAIN_HARDWARE and training(n) else "held out"
            print(f"  {hardware:<8} {n:>6}^3 fp32  {ratio:5.2f}x  {split}")
    path = SIMT_CALIBRATION_FILE if args.write else args.output
    if path is not None:
        write(fraction, path)
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    from script_errors import run

    run("fit_simt_fraction", main)
