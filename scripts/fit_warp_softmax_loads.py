"""Fit the loads a warp of ATen's warp softmax keeps in flight (streaming.warp_softmax).

Usage: python scripts/fit_warp_softmax_loads.py [--data-dir data] [--output FILE] [--max-rows N]

Training rows: ATen (``implementation: pytorch``) softmax rows in ``data/measured/*/ops.csv``
measured on ``--hardware`` (h200_sxm) by ``--source`` (opmodel-measure) that run the warp
softmax (rows of at most 2048 elements and 8 KiB) with at most ``--max-rows`` rows: at most
one wave of warps, so no row waits for another's memory traffic. For each element size the
script fits ``time = a_rows + b x WARP_ITERATIONS`` by least squares, one intercept per row
count and one slope ``b`` (the intercepts absorb launch, reductions, stores and the timing
scope, which the slope does not see). A warp with ``u`` loads in flight spends
``L_dram / u`` per iteration, so ``u = L_dram / b``, with ``L_dram`` of the config at the
rows' clock (the config clock for rows without one), as the model uses it. It prints the fit
and writes the calibration file (default: the shipped one), which names its training rows.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from opmodel.core.enums import OpKind
from opmodel.core.views import RowView
from opmodel.hardware import load_hardware
from opmodel.models.streaming.warp_softmax import LOADS_FILE, is_warp_softmax
from opmodel.validation.op_latency import OpRow, load_op_rows

ROOT = Path(__file__).resolve().parent.parent


def _shape(row: OpRow) -> tuple[int, int, int]:
    view = row.op.view
    assert isinstance(view, RowView)
    return view.rows, view.row_length, max(1, view.x.dtype.bits // 8)


def training_rows(rows: Sequence[OpRow], hardware: str, source: str, max_rows: int) -> list[OpRow]:
    """The rows the fit uses (module docstring)."""
    chosen = []
    for row in rows:
        if row.op.kind is not OpKind.SOFTMAX or row.implementation != "pytorch":
            continue
        if row.hardware != hardware or row.source != source:
            continue
        count, length, size = _shape(row)
        if count <= max_rows and is_warp_softmax(length, size):
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=ROOT / "data")
    parser.add_argument("--output", type=Path, default=LOADS_FILE)
    parser.add_argument("--hardware", default="h200_sxm")
    parser.add_argument("--source", default="opmodel-measure")
    parser.add_argument("--max-rows", type=int, default=512)
    args = parser.parse_args(argv)
    rows, _ = load_op_rows(args.data_dir)
    chosen = training_rows(rows, args.hardware, args.source, args.max_rows)
    spec = load_hardware(args.hardware)
    by_size: dict[int, list[tuple[int, int, float]]] = defaultdict(list)
    latency: dict[int, list[float]] = defaultdict(list)
    for row in chosen:
        count, length, size = _shape(row)
        iterations = max(1, (1 << math.ceil(math.log2(max(2, length)))) // 32)
        by_size[size].append((count, iterations, row.time_s))
        at = spec.at_clock(row.clock_hz) if row.clock_hz else spec
        latency[size].append(at.hbm.latency_s)
    if not by_size:
        print(f"no training rows for {args.hardware} / {args.source}", file=sys.stderr)
        return 1
    fitted: dict[int, float] = {}
    for size in sorted(by_size):
        slope = slope_s(by_size[size])
        l_dram = sum(latency[size]) / len(latency[size])
        fitted[size] = round(max(1.0, l_dram / slope), 1)
        print(
            f"{size}-byte elements: {len(by_size[size])} rows, {slope * 1e9:.1f} ns per iteration, "
            f"L_dram {l_dram * 1e9:.0f} ns -> u = {fitted[size]}"
        )
    lines = [
        "# Loads in flight per warp of ATen's softmax_warp_forward",
        "# (opmodel.models.streaming.warp_softmax): a calibration, not a datasheet value.",
        "# Written by `python scripts/fit_warp_softmax_loads.py` from the slope of the measured",
        f"# time over the load iterations of the rows below ({len(chosen)} rows, data/measured);",
        "# every other row is held out (docs/validation.md, 'Non-GEMM ops').",
        "fitted_on:",
        f"  hardware: {args.hardware}",
        f"  source: {args.source}",
        f"  max_rows: {args.max_rows}  # rows per op: at most one wave of warps",
        "loads_in_flight:  # by element size in bytes",
        *(f"  {size}: {value}" for size, value in sorted(fitted.items())),
    ]
    args.output.write_text("\n".join(lines) + "\n")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
