"""Fit the calibration of ATen's softmax kernels (opmodel.models.streaming.aten_softmax).

Usage: python scripts/fit_aten_softmax.py [--data-dir data] [--output FILE]
       [--hardware h200_sxm] [--source opmodel-measure] [--warp-max-rows 512]
       [--block-min-rows 8192]

Training rows: ATen (``implementation: pytorch``) softmax rows in ``data/measured/*/ops.csv``
measured on ``--hardware`` by ``--source``.

- Loads in flight of the warp softmax, by element size: its rows of at most
  ``--warp-max-rows`` rows (one wave of warps, so no row waits for another's traffic). The
  script fits ``time = a_rows + b x WARP_ITERATIONS`` by least squares, one intercept per row
  count and one slope ``b`` (the intercepts absorb launch, reductions, stores and the timing
  scope, which the slope does not see). A warp with ``u`` loads in flight spends
  ``L_dram / u`` per iteration, so ``u = L_dram / b``, with ``L_dram`` of the config at the
  rows' clock (the config clock for rows without one), as the model uses it.
- Instructions per element of the block softmax (``cunn_SoftMaxForward``, above 9216
  elements): its rows of at least ``--block-min-rows`` rows (many waves, where the issue bound
  is what the kernel's time depends on). ``I`` minimises the squared relative errors of
  ``effective_roofline`` over them: a grid of 0-200 in steps of 1, then steps of 0.1 around the
  best (the smallest ``I`` on a tie).

- The register softmax's stall factor (``cunn_SoftMaxForwardReg``, 2049-9216 elements, its
  issue cycles per row counted from SASS): its rows of at least ``--block-min-rows`` rows, on
  a grid of 0.05-4 in steps of 0.05, then 0.01 around the best, after ``I`` above.

It prints the fits and the training and held-out errors of the block and register kernels'
rows, and writes the calibration file (default: the shipped one), which names its training
rows.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import statistics
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from op_fit_args import op_fit_parser

from opmodel.core.enums import OpKind
from opmodel.core.views import RowView
from opmodel.hardware import HardwareSpec, load_hardware
from opmodel.models.effective_roofline.streaming_op import predict_streaming
from opmodel.models.streaming.aten_softmax import (
    CALIBRATION_FILE,
    AtenSoftmaxCalibration,
    overridden,
    softmax_path,
)
from opmodel.validation.op_latency import OpRow, load_op_rows

COARSE = [float(i) for i in range(201)]
COARSE_FACTOR = [0.05 * i for i in range(1, 81)]


def _shape(row: OpRow) -> tuple[int, int, int]:
    view = row.op.view
    assert isinstance(view, RowView)
    return view.rows, view.row_length, max(1, view.x.dtype.bits // 8)


def aten_rows(rows: Sequence[OpRow], hardware: str, source: str, path: str) -> list[OpRow]:
    """The ATen softmax rows of ``hardware`` and ``source`` that run kernel ``path``."""
    chosen = []
    for row in rows:
        if row.op.kind is not OpKind.SOFTMAX or row.implementation != "pytorch":
            continue
        if row.hardware != hardware or row.source != source:
            continue
        _, length, size = _shape(row)
        if softmax_path(length, size) == path:
            chosen.append(row)
    return chosen


def slope_s(points: Sequence[tuple[int, int, float]]) -> float:
    """The least-squares slope of time over iterations with one intercept per row count
    (``points``: rows, iterations, seconds)."""
    groups: dict[int, list[tuple[int, float]]] = defaultdict(list)
    for count, iterations, seconds in points:
        groups[count].append((iterations, seconds))
    num = den = 0.0
    for members in groups.values():
        x_mean = sum(x for x, _ in members) / len(members)
        y_mean = sum(y for _, y in members) / len(members)
        num += sum((x - x_mean) * (y - y_mean) for x, y in members)
        den += sum((x - x_mean) ** 2 for x, _ in members)
    if den == 0:
        raise ValueError("the training rows need two row lengths at one row count")
    return num / den


def _spec(spec: HardwareSpec, row: OpRow) -> HardwareSpec:
    return spec.at_clock(row.clock_hz) if row.clock_hz else spec


def fit_loads(rows: Sequence[OpRow], spec: HardwareSpec) -> dict[int, float]:
    """``u`` by element size from warp-softmax rows (module docstring), one decimal."""
    by_size: dict[int, list[tuple[int, int, float]]] = defaultdict(list)
    latency: dict[int, list[float]] = defaultdict(list)
    for row in rows:
        count, length, size = _shape(row)
        iterations = max(1, (1 << math.ceil(math.log2(max(2, length)))) // 32)
        by_size[size].append((count, iterations, row.time_s))
        latency[size].append(_spec(spec, row).hbm.latency_s)
    fitted = {}
    for size in sorted(by_size):
        slope = slope_s(by_size[size])
        l_dram = statistics.fmean(latency[size])
        fitted[size] = round(max(1.0, l_dram / slope), 1)
        print(
            f"warp softmax, {size}-byte elements: {len(by_size[size])} rows, "
            f"{slope * 1e9:.1f} ns per iteration, L_dram {l_dram * 1e9:.0f} ns "
            f"-> u = {fitted[size]}"
        )
    return fitted


def _calibration(
    loads: dict[int, float], issue: float, args: argparse.Namespace, factor: float | None = None
) -> AtenSoftmaxCalibration:
    return AtenSoftmaxCalibration(
        loads_in_flight=loads,
        block_instructions_per_element=issue,
        hardware=args.hardware,
        source=args.source,
        warp_max_rows=args.warp_max_rows,
        block_min_rows=args.block_min_rows,
        register_stall_factor=factor,
    )


def block_errors(
    rows: Sequence[OpRow], spec: HardwareSpec, calibration: AtenSoftmaxCalibration
) -> list[float]:
    """Predicted over measured time of ``rows`` minus 1, under ``calibration``."""
    with overridden(calibration):
        return [predict_streaming(r.op, _spec(spec, r)).latency_s / r.time_s - 1 for r in rows]


def fit_issue(
    rows: Sequence[OpRow], spec: HardwareSpec, loads: dict[int, float], args: argparse.Namespace
) -> float:
    """The ``I`` minimising the squared relative errors of ``rows`` (module docstring)."""

    def sse(value: float) -> float:
        return sum(e * e for e in block_errors(rows, spec, _calibration(loads, value, args)))

    best = min(COARSE, key=lambda v: (sse(v), v))
    fine = [max(0.0, round(best - 1 + 0.1 * i, 1)) for i in range(21)]
    return min(fine, key=lambda v: (sse(v), v))


def fit_register(
    rows: Sequence[OpRow], spec: HardwareSpec, calibration: AtenSoftmaxCalibration
) -> float:
    """The register softmax's stall factor minimising the squared relative errors of ``rows``
    under ``calibration``'s other numbers (module docstring)."""

    def sse(value: float) -> float:
        trial = dataclasses.replace(calibration, register_stall_factor=value)
        return sum(e * e for e in block_errors(rows, spec, trial))

    best = min(COARSE_FACTOR, key=lambda v: (sse(v), v))
    fine = [round(best + 0.01 * (i - 5), 2) for i in range(11) if best + 0.01 * (i - 5) > 0]
    return min(fine, key=lambda v: (sse(v), v))


def _write(path: Path, calibration: AtenSoftmaxCalibration, counts: tuple[int, int, int]) -> None:
    lines = [
        "# ATen's softmax kernels (opmodel.models.streaming.aten_softmax): a calibration, not a",
        "# datasheet value. Written by `python scripts/fit_aten_softmax.py` from the measured",
        f"# rows below ({counts[0]} warp-softmax rows, {counts[1]} block-softmax rows,",
        f"# {counts[2]} register-softmax rows, data/measured); every other row is held out",
        "# (docs/validation.md, 'Non-GEMM ops').",
        "fitted_on:",
        f"  hardware: {calibration.hardware}",
        f"  source: {calibration.source}",
        f"  warp_max_rows: {calibration.warp_max_rows}  # warp-softmax rows: one wave of warps",
        f"  block_min_rows: {calibration.block_min_rows}  # block and register rows: many waves",
        "loads_in_flight:  # warp softmax, by element size in bytes",
        *(f"  {size}: {value}" for size, value in sorted(calibration.loads_in_flight.items())),
        "block_instructions_per_element: "
        f"{calibration.block_instructions_per_element}  # block softmax, issue cost",
    ]
    if calibration.register_stall_factor is not None:
        lines.append(
            f"register_stall_factor: {calibration.register_stall_factor}"
            "  # register softmax, issue cycles per counted cycle"
        )
    path.write_text("\n".join(lines) + "\n")


def _report(
    name: str,
    rows: Sequence[OpRow],
    spec: HardwareSpec,
    calibration: AtenSoftmaxCalibration,
    min_rows: int,
) -> None:
    """Print the training and held-out MAPE of one kernel's ``rows`` under ``calibration``."""
    training = [r for r in rows if _shape(r)[0] >= min_rows]
    held = [r for r in rows if _shape(r)[0] < min_rows]
    for label, part in (("training", training), ("held out", held)):
        errors = block_errors(part, spec, calibration) if part else []
        mape = statistics.fmean(abs(e) for e in errors) if errors else float("nan")
        print(f"{name}: {label} {len(part)} rows, MAPE {mape:.1%}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = op_fit_parser(__doc__, CALIBRATION_FILE, "h200_sxm", "opmodel-measure")
    parser.add_argument("--warp-max-rows", type=int, default=512)
    parser.add_argument("--block-min-rows", type=int, default=8192)
    args = parser.parse_args(argv)
    rows, _ = load_op_rows(args.data_dir)
    warp = [
        r
        for r in aten_rows(rows, args.hardware, args.source, "warp")
        if _shape(r)[0] <= args.warp_max_rows
    ]
    block = aten_rows(rows, args.hardware, args.source, "block")
    training = [r for r in block if _shape(r)[0] >= args.block_min_rows]
    if not warp or not training:
        print(f"no training rows for {args.hardware} / {args.source}", file=sys.stderr)
        return 1
    spec = load_hardware(args.hardware)
    loads = fit_loads(warp, spec)
    issue = fit_issue(training, spec, loads, args)
    calibration = _calibration(loads, issue, args)
    _report(f"block softmax, I = {issue}", block, spec, calibration, args.block_min_rows)
    register = aten_rows(rows, args.hardware, args.source, "reg")
    register_training = [r for r in register if _shape(r)[0] >= args.block_min_rows]
    if register_training:
        factor = fit_register(register_training, spec, calibration)
        calibration = _calibration(loads, issue, args, factor)
        name = f"register softmax, factor = {factor}"
        _report(name, register, spec, calibration, args.block_min_rows)
    _write(args.output, calibration, (len(warp), len(training), len(register_training)))
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
