"""Fit TPU7x's sustained MXU share on the declared split of its published GEMM times.

Usage: python scripts/fit_published_tpu_sustained.py [--write]

The published rows and the split are in ``published_tpu_data.py``: the training rows are the
accelerator-microbenchmarks GEMMs of at least 1 TFLOP (16384^3 and 32768^3), which sustain
950-956 TFLOP/s, 82-83 % of one TensorCore's published 1,155. The config's clock is derived
from that peak and an estimated MXU count, so no clock can be fitted; the share is fitted
instead, as ``utilization.tensor_fraction``: the value on a 0.001 grid (a 0.01 grid over
0.50-1.00, then 0.001 steps around its best) that minimises the training rows' squared
relative errors of ``effective_roofline`` on the config without its calibration. Whether the
chip holds a lower clock under load (the benchmark pins a DVFS state) or its compiler's kernel
idles the MXUs part of the time, the two rows cannot tell; the share stands for both.
``--write`` writes ``configs/calibrations/tpu7x_sustained.yaml``, which the config names in
``sustained_calibration``; ``compare_published_tpu.py`` reports every other row held out.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from fraction_grid import best_fraction
from published_tpu_data import CONFIG, TRAINING_MIN_FLOP, is_training, published

from opmodel import ops
from opmodel.configs import CALIBRATIONS_DIR
from opmodel.hardware import load_hardware
from opmodel.hardware.spec import HardwareSpec
from opmodel.hardware.sustained_calibration import (
    SustainedCalibration,
    sustained_calibration_text,
    with_tensor_fraction,
)
from opmodel.models import get_model

MODEL = "effective_roofline"
COMMAND = "python scripts/fit_published_tpu_sustained.py --write"
FITTED_ON = (
    "AI-Hypercomputer/accelerator-microbenchmarks (commit 5b4dce3), Ironwood readme, GEMM",
    "  Results: the bf16 matmuls of at least 1 TFLOP (16384^3 and 32768^3, 950 and 956",
    "  TFLOP/s per device); the smaller rows and Helion #2632's are held out",
    "  (scripts/compare_published_tpu.py)",
)


def training_rows() -> list[tuple[int, float]]:
    """The declared training split: (M = N = K, seconds)."""
    return [(size, s) for source, size, s in published()
            if source == "ai-hypercomputer" and is_training(size)]  # fmt: skip


def ratios(spec: HardwareSpec, fraction: float) -> list[float]:
    """Predicted over published time of each training row at MXU share ``fraction``."""
    at = with_tensor_fraction(spec, fraction)
    model = get_model(MODEL)
    return [model.predict(ops.gemm(n, n, n), at).latency_s / s for n, s in training_rows()]


def fit() -> float:
    """The sustained MXU share of ``tpu7x`` on its training rows (3 decimals)."""
    spec = load_hardware(CONFIG, overrides={"sustained_calibration": None})

    def sse(fraction: float) -> float:
        return sum((x - 1) ** 2 for x in ratios(spec, fraction))

    return best_fraction(sse)


def write(fraction: float, path: Path) -> None:
    """The sustained calibration file the config names."""
    calibration = SustainedCalibration(
        hardware=CONFIG,
        fitted_on="\n".join(FITTED_ON),
        command=COMMAND,
        tensor_fraction=fraction,
    )
    header = (
        "Fitted sustained values, not datasheet values: written by",
        f"`{COMMAND}` (do not edit by hand).",
    )
    path.write_text(sustained_calibration_text(calibration, header))


def main(argv: list[str] | None = None) -> int:
    """Print the fit; with ``--write``, write the shipped calibration file."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="write the calibration file")
    args = parser.parse_args(argv)
    fraction = fit()
    spec = load_hardware(CONFIG, overrides={"sustained_calibration": None})
    print(f"{CONFIG}: training rows, bf16 GEMMs of at least {TRAINING_MIN_FLOP / 1e12:g} TFLOP")
    print(f"{'M=N=K':>7}  published us  at the peak  at the share")
    for (size, seconds), peak, fitted in zip(
        training_rows(), ratios(spec, 1.0), ratios(spec, fraction), strict=True
    ):
        print(f"{size:>7}  {seconds * 1e6:12.1f}  {peak:10.3f}x  {fitted:11.3f}x")
    print(f"sustained MXU share (utilization.tensor_fraction): {fraction} ({MODEL})")
    if args.write:
        path = CALIBRATIONS_DIR / f"{CONFIG}_sustained.yaml"
        write(fraction, path)
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    from script_errors import run

    run("fit_published_tpu_sustained", main)
