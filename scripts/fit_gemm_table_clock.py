"""Fit a GPU's power-limited SM clock on the declared split of its GEMM validation table.

Usage: python scripts/fit_gemm_table_clock.py [--hardware mi355x] [--data-dir data] [--write]

For a GPU whose only measurements are a validation table (the MI355X: OpenXLA's gfx950 rows),
the clock its board holds under dense tensor work is fitted on the split that
``opmodel.validation.clock_split`` declares (the table's largest GEMMs), by
``opmodel.validation.power_clock_fit.fit_power_limited_clock_hz``: 15 MHz bins from half the
config's clock up to it, least squared relative error of ``effective_roofline``, on the config
as its datasheet gives it (without the calibration this writes; the fixed overhead as shipped).
``validate-gemm-latency`` holds those rows out of every figure. It prints the clock and each
training row's predicted over measured time; ``--write`` writes
``configs/calibrations/<hardware>_sustained.yaml``, which the config names in
``sustained_calibration``.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from opmodel.configs import CALIBRATIONS_DIR
from opmodel.hardware import load_hardware
from opmodel.hardware.sustained_calibration import (
    SustainedCalibration,
    sustained_calibration_text,
)
from opmodel.models import get_model
from opmodel.validation.clock_split import CLOCK_SPLITS, ClockSplit
from opmodel.validation.gemm_data import GemmRow, load_gemm_rows
from opmodel.validation.gemm_split import row_op
from opmodel.validation.power_clock_fit import (
    FIT_MODEL,
    fit_power_limited_clock_hz,
    with_power_limited_clock,
)

ROOT = Path(__file__).resolve().parent.parent
CALIBRATIONS = CALIBRATIONS_DIR


@dataclass(frozen=True, slots=True)
class ClockFit:
    """The fitted clock of one GPU, its split, and each training row with the model's
    predicted over measured time at that clock."""

    hardware: str
    split: ClockSplit
    clock_hz: float
    rows: tuple[tuple[GemmRow, float], ...]


def fit(name: str, data_dir: Path = ROOT / "data") -> ClockFit:
    """The power-limited clock of the shipped config ``name`` on its declared split."""
    split = CLOCK_SPLITS[name]
    rows = [r for r in load_gemm_rows(data_dir).rows if split.contains(r)]
    if not rows:
        raise SystemExit(f"--data-dir {data_dir}: no rows of the split ({split.description})")
    spec = load_hardware(name, overrides={"sustained_calibration": None})
    ops = [row_op(r) for r in rows]
    clock_hz = fit_power_limited_clock_hz(spec, ops, [r.time_s for r in rows])
    model = get_model(FIT_MODEL)
    ratios = []
    for row, op in zip(rows, ops, strict=True):
        fitted = with_power_limited_clock(spec, clock_hz)
        fitted = fitted.in_burst() if row.power_state == "burst" else fitted
        ratios.append((row, model.predict(op, fitted).latency_s / row.time_s))
    return ClockFit(name, split, clock_hz, tuple(ratios))


def write(result: ClockFit, path: Path) -> None:
    """The sustained calibration file the config names."""
    command = f"python scripts/fit_gemm_table_clock.py --hardware {result.hardware} --write"
    calibration = SustainedCalibration(
        hardware=result.hardware,
        fitted_on=f"{result.split.description}, each kernel run alone after idle time (burst);"
        " held out of every validate-gemm-latency figure",
        command=command,
        power_limited_clock_hz=result.clock_hz,
    )
    header = (
        "Fitted sustained values, not datasheet values: written by",
        f"`{command}` (do not edit by hand).",
    )
    path.write_text(sustained_calibration_text(calibration, header))


def main(argv: list[str] | None = None) -> int:
    """Fit, print and (``--write``) write the calibration."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hardware", default="mi355x", choices=sorted(CLOCK_SPLITS))
    parser.add_argument("--data-dir", type=Path, default=ROOT / "data")
    parser.add_argument("--write", action="store_true", help="write the shipped calibration")
    args = parser.parse_args(argv)
    result = fit(args.hardware, args.data_dir)
    print(f"{result.hardware}: power-limited clock {result.clock_hz / 1e6:.0f} MHz")
    print(f"fitted on {len(result.rows)} rows: {result.split.description}")
    print(f"{'batch':>5} {'m':>5} {'n':>5} {'k':>5} dtype  measured_us  predicted/measured")
    for row, ratio in result.rows:
        shape = f"{row.batch:>5} {row.m:>5} {row.n:>5} {row.k:>5}"
        print(f"{shape} {row.dtype.value:<5} {row.time_s * 1e6:>12.1f} {ratio:>19.3f}")
    if args.write:
        path = CALIBRATIONS / f"{result.hardware}_sustained.yaml"
        write(result, path)
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    from script_errors import run

    run("fit_gemm_table_clock", main)
