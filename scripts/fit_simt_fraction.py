"""Fit the share of the FP32 peak an FP32 SIMT GEMM sustains, per group of SM architectures
(opmodel.models.gemm.simt_fraction).

Usage: python scripts/fit_simt_fraction.py [--write | --output FILE]

Training split (declared here), per group: one board's published FP32 ``torch.mm`` GEMMs of at
least 1 TFLOP (8,192^3 and 10,240^3; the rule of ``fit_published_sustained.py``;
``published_torch_mm_data.py`` has the runs):

- sm_86 and sm_89 (GA102 and AD10x: the same SM, two FP32 datapaths, one shared with INT32):
  the A40's (issue #185), the sm_86 board whose FP16 and BF16 runs of the same source set its
  clock. Held out: its three smaller FP32 GEMMs and the RTX 4090's five (issue #78).
- sm_90 (GH100: 128 FP32 lanes an SM, four 32-lane datapaths that each take one warp's FMA a
  clock): the H100 SXM's (issue #79). Held out: its three smaller ones, the H100 PCIe's and the
  H800 PCIe's five each (issues #95 and #112), and the database's best H100 and H200 figures.

Each share is searched on a 0.01 grid over 0.30-1.00 for the least squared relative error of
``effective_roofline`` without the shipped calibration. GA100 (sm_80) keeps the whole peak: the
database's best A100 SXM4 figure is 0.99x of the model there. ``python
scripts/compare_published_torch_mm.py`` prints every row.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from published_torch_mm_data import RUNS, SIZES, training

from opmodel import ops
from opmodel.hardware import load_hardware
from opmodel.models import get_model
from opmodel.models.gemm.simt_fraction import (
    SIMT_CALIBRATION_FILE,
    SimtCalibration,
    simt_overridden,
)

# architectures -> (the run that trains their share, the runs printed with it)
GROUPS: dict[tuple[str, ...], tuple[str, tuple[str, ...]]] = {
    ("sm86", "sm89"): ("a40", ("a40", "rtx4090")),
    ("sm90",): ("h100_sxm", ("h100_sxm", "h100_pcie", "h800_pcie")),
}


def _rows(run: str) -> list[tuple[int, float]]:
    """(n, published seconds) of ``run``'s FP32 GEMMs."""
    return [
        (n, 2 * n**3 / (tf * 1e12)) for n, tf in zip(SIZES, RUNS[run].tflops["fp32"], strict=True)
    ]


def ratios(fractions: dict[str, float], run: str) -> list[tuple[int, float]]:
    """(n, predicted over published) for ``run``'s FP32 GEMMs with ``fractions`` in force."""
    model, spec = get_model("effective_roofline"), load_hardware(RUNS[run].config)
    with simt_overridden(SimtCalibration(fractions)):
        return [(n, model.predict(ops.gemm(n, n, n, "fp32"), spec).latency_s / t)
                for n, t in _rows(run)]  # fmt: skip


def fit_group(architectures: tuple[str, ...]) -> float:
    """The share on the 0.01 grid that fits the group's training rows best."""
    run = GROUPS[architectures][0]

    def error(fraction: float) -> float:
        rows = ratios(dict.fromkeys(architectures, fraction), run)
        return sum((r - 1) ** 2 for n, r in rows if training(run, "fp32", n))

    grid = [round(0.30 + 0.01 * i, 2) for i in range(71)]
    return min(grid, key=lambda f: (error(f), -f))


def fit() -> dict[str, float]:
    """Every group's share, by architecture."""
    fractions: dict[str, float] = {}
    for architectures in GROUPS:
        fractions.update(dict.fromkeys(architectures, fit_group(architectures)))
    return fractions


def write(fractions: dict[str, float], path: Path) -> None:
    """The calibration file the GEMM models read."""
    rows = [
        f"torch-performance-test-data issue {RUNS[run].issue}: {run} {n}^3 fp32"
        for run, _ in GROUPS.values()
        for n in SIZES
        if training(run, "fp32", n)
    ]
    lines = [
        "# The share of the FP32 peak an FP32 (SIMT) GEMM sustains, per GPU architecture",
        "# (opmodel.models.gemm.simt_fraction): a fitted value, not a datasheet value. Written",
        "# by `python scripts/fit_simt_fraction.py --write` (do not edit by hand).",
        "fitted_on:",
        "  source: 'published square torch.mm FP32 runs, TF32 off (torch-performance-test-data:",
        "    sm86 and sm89 on issue #185, NVIDIA A40; sm90 on issue #79, NVIDIA H100 SXM); held",
        "    out their smaller runs, the RTX 4090''s (#78), the H100 PCIe''s (#95), the H800",
        "    PCIe''s (#112) and the database''s best H100 and H200 figures'",
        "  rows:",
        *(f"  - '{row}'" for row in rows),
        "command: python scripts/fit_simt_fraction.py --write",
        "fp32_fraction:",
        *(f"  {arch}: {fraction}" for arch, fraction in fractions.items()),
    ]
    path.write_text("\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    target = parser.add_mutually_exclusive_group()
    target.add_argument("--write", action="store_true", help="write the shipped file")
    target.add_argument("--output", type=Path, help="write the calibration here")
    args = parser.parse_args(argv)
    fractions = fit()
    for architectures, (train, printed) in GROUPS.items():
        share = fractions[architectures[0]]
        print(f"FP32 SIMT share of the peak on {', '.join(architectures)}: {share}")
        for run in printed:
            for n, ratio in ratios(fractions, run):
                split = "training" if run == train and training(run, "fp32", n) else "held out"
                print(f"  {run:<10} {n:>6}^3 fp32  {ratio:5.2f}x  {split}")
    path = SIMT_CALIBRATION_FILE if args.write else args.output
    if path is not None:
        write(fractions, path)
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    from script_errors import run

    run("fit_simt_fraction", main)
