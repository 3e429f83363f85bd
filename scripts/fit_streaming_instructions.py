"""Fit the instructions per element of streaming kernels (opmodel.models.streaming.issue).

Usage: python scripts/fit_streaming_instructions.py [--data-dir data] [--output FILE]

Training rows: the measured kernel times in ``data/ops`` from ``--source`` (Vidur) on
``--hardware`` (A100-SXM4-80GB) of ATen (``implementation: pytorch``) kernels. For each function
(elementwise) or op kind (row ops) among them, ``I`` minimises the sum of squared relative errors
of ``effective_roofline`` over that function's training rows: a grid of 0-200 in steps of 2,
then steps of 0.1 around the best (the smallest ``I`` on a tie). The rows of every other GPU
are held out; the script prints their MAPE with ``I = 0`` and with the fitted ``I``. It writes
the calibration file (default: the shipped one), which ``validate-ops`` reads to report the
training rows apart. A function whose best ``I`` is 0 (the bound never binds on its training
rows, so the model is unchanged for it) is left out of the file, and its rows stay held out.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from opmodel.core.views import ElementwiseView
from opmodel.hardware import HardwareSpec, load_hardware
from opmodel.models.effective_roofline.streaming_op import predict_streaming
from opmodel.models.streaming.issue import CALIBRATION_FILE, IssueCalibration, overridden
from opmodel.validation.op_latency import OpRow, load_op_rows

ROOT = Path(__file__).resolve().parent.parent
IMPLEMENTATION = "pytorch"
COARSE = [2.0 * i for i in range(101)]


def _key(row: OpRow) -> str:
    view = row.op.view
    if isinstance(view, ElementwiseView) and view.function:
        return view.function
    return row.op.kind.value


def _sse(rows: Sequence[OpRow], specs: dict[str, HardwareSpec], key: str, value: float) -> float:
    calibration = IssueCalibration({(IMPLEMENTATION, key): value}, "", "")
    with overridden(calibration):
        ratios = [predict_streaming(r.op, specs[r.hardware]).latency_s / r.time_s for r in rows]
    return sum((x - 1) ** 2 for x in ratios)


def fit_key(rows: Sequence[OpRow], specs: dict[str, HardwareSpec], key: str) -> float:
    """The ``I`` minimising the squared relative errors of ``rows`` (module docstring)."""
    best = min(COARSE, key=lambda v: (_sse(rows, specs, key, v), v))
    fine = [max(0.0, round(best - 2 + 0.1 * i, 1)) for i in range(41)]
    return min(fine, key=lambda v: (_sse(rows, specs, key, v), v))


def _mape(rows: Sequence[OpRow], specs: dict[str, HardwareSpec], key: str, value: float) -> float:
    calibration = IssueCalibration({(IMPLEMENTATION, key): value}, "", "")
    with overridden(calibration):
        return statistics.fmean(
            abs(predict_streaming(r.op, specs[r.hardware]).latency_s / r.time_s - 1) for r in rows
        )


def _write(path: Path, fitted: dict[str, float], hardware: str, source: str) -> None:
    lines = [
        "# Instructions per element of streaming kernels (opmodel.models.streaming.issue):",
        "# a calibration, not a datasheet value. Written by",
        "# `python scripts/fit_streaming_instructions.py` from the",
        f"# {source} rows on {hardware} of the ATen kernels below (data/ops); every other",
        "# GPU's and source's rows are held out (docs/validation.md, 'Non-GEMM ops').",
        "# Kernels and functions not listed have no instruction-issue bound.",
        "fitted_on:",
        f"  hardware: {hardware}",
        f"  source: {source}",
        "instructions_per_element:",
        f"  {IMPLEMENTATION}:",
        *(f"    {key}: {value}" for key, value in sorted(fitted.items()) if value > 0),
    ]
    path.write_text("\n".join(lines) + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", type=Path, default=ROOT / "data")
    parser.add_argument("--hardware", default="a100_80gb_sxm")
    parser.add_argument("--source", default="vidur")
    parser.add_argument("--output", type=Path, default=CALIBRATION_FILE)
    args = parser.parse_args(argv)
    rows, _skipped = load_op_rows(args.data_dir)
    groups: dict[str, dict[bool, list[OpRow]]] = defaultdict(lambda: {True: [], False: []})
    for row in rows:
        if row.implementation == IMPLEMENTATION and row.clock_hz is None:
            training = row.hardware == args.hardware and row.source == args.source
            groups[_key(row)][training].append(row)
    specs = {hw: load_hardware(hw) for hw in {r.hardware for r in rows}}
    fitted: dict[str, float] = {}
    for key, split in sorted(groups.items()):
        if not split[True]:
            continue
        fitted[key] = fit_key(split[True], specs, key)
        held = split[False]
        before = f"{_mape(held, specs, key, 0.0):.1%}" if held else "-"
        after = f"{_mape(held, specs, key, fitted[key]):.1%}" if held else "-"
        sys.stdout.write(
            f"{key:12} I = {fitted[key]:5.1f}  training rows {len(split[True]):5d}  "
            f"held-out rows {len(held):5d}  MAPE {before} -> {after}\n"
        )
    if not fitted:
        sys.exit(f"fit_streaming_instructions: no {IMPLEMENTATION} rows on {args.hardware}")
    _write(args.output, fitted, args.hardware, args.source)
    sys.stdout.write(f"wrote {args.output}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
