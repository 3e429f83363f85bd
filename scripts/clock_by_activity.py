"""How the SM clock an unlocked GPU held falls with tensor activity, from measured GEMMs.

Usage: python scripts/clock_by_activity.py [--data-dir data/measured] [--hardware h200_sxm]
       [--min-gflop 10]

Reads the GEMM rows that carry the SM clock read under load (``clock_mhz``, which
``opmodel measure`` records) and computes each row's measured tensor activity
``u = 2 m n k batch / (tensor peak at the measured clock x measured time)``. Prints the median
clock by activity bin beside what the models' law gives, ``f_pl x u^(-1/3)`` with the config's
``power_limited_clock_hz`` (docs/models/effective_roofline.md, "Power-limited clock"), and the
best fit of a law in which a share ``s`` of the dynamic power at full activity does not scale
with ``u``: ``f = f1 ((1 - s) u + s)^(-1/3)`` (least squares of log clock, ``s`` in steps of
0.01). Rows at the GPU's top clock bin are left out (the clock cannot rise further).
16-bit rows without a separate compute dtype only. A lead for the clock law: nothing here is
applied to a model (docs/validation.md, "Large GEMMs and the power-limited clock").
"""

from __future__ import annotations

import argparse
import itertools
import math
import statistics
from pathlib import Path

from opmodel.core.dtypes import DType
from opmodel.hardware import load_hardware
from opmodel.validation.gemm_data import GemmRow, load_gemm_rows

BINS = (0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def activities(rows: list[GemmRow], hardware: str, min_gflop: float) -> list[tuple[float, float]]:
    """``(u, clock_mhz)`` of every usable row."""
    spec = load_hardware(hardware)
    peak = spec.compute.tensor_peak(DType.BF16)
    if peak is None:
        raise SystemExit(f"{hardware}: no bf16 tensor peak")
    peak_per_hz = peak / spec.compute.clock_hz
    out = []
    for r in rows:
        flops = 2 * r.batch * r.m * r.n * r.k
        usable = r.dtype in (DType.BF16, DType.FP16) and r.compute_dtype is None
        if r.hardware != hardware or not usable or r.clock_hz is None or flops < min_gflop * 1e9:
            continue
        out.append((flops / (peak_per_hz * r.clock_hz * r.time_s), r.clock_hz / 1e6))
    return out


def fit_share_at(points: list[tuple[float, float]], s: float) -> tuple[float, float, float]:
    """``(s, f1_mhz, rms of log clock)`` of ``f = f1 ((1 - s) u + s)^(-1/3)`` with ``s`` fixed
    and ``f1`` at its least-squares value (the mean of the log clocks the law scales back)."""
    logs = [math.log(f) + math.log((1 - s) * min(u, 1.0) + s) / 3 for u, f in points]
    mean = statistics.fmean(logs)
    return s, math.exp(mean), math.sqrt(sum((x - mean) ** 2 for x in logs) / len(points))


def fit_share(points: list[tuple[float, float]]) -> tuple[float, float, float]:
    """The best ``s`` in steps of 0.01 (the smallest on a tie)."""
    return min((fit_share_at(points, step / 100) for step in range(100)), key=lambda t: t[2])


def main(argv: list[str] | None = None) -> int:
    """Print the table and the fit."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=Path("data/measured"))
    parser.add_argument("--hardware", default="h200_sxm")
    parser.add_argument("--min-gflop", type=float, default=10.0)
    args = parser.parse_args(argv)
    if not args.min_gflop >= 0:
        raise SystemExit(f"--min-gflop must be 0 or more (got {args.min_gflop})")
    spec = load_hardware(args.hardware)
    f_pl = spec.compute.power_limited_clock_hz
    if f_pl is None:
        raise SystemExit(f"--hardware {args.hardware}: the config has no power_limited_clock_hz")
    top_mhz = (spec.compute.max_boost_clock_hz or spec.compute.clock_hz) / 1e6
    points = activities(load_gemm_rows(args.data_dir).rows, args.hardware, args.min_gflop)
    points = [(u, f) for u, f in points if u > BINS[0] and f < top_mhz - 1]
    if len(points) < 3:
        raise SystemExit(f"{args.data_dir}: fewer than 3 usable {args.hardware} GEMM rows")
    print(f"{'activity':<12}{'rows':>6}{'median u':>10}{'clock MHz':>11}{'u^(-1/3) law':>14}")
    for low, high in itertools.pairwise(BINS):
        chosen = [(u, f) for u, f in points if low < u <= high]
        if chosen:
            u = statistics.median(u for u, _ in chosen)
            law = min(f_pl * u ** (-1 / 3), spec.compute.clock_hz) / 1e6
            clock = statistics.median(f for _, f in chosen)
            print(f"({low:.1f}, {high:.1f}]  {len(chosen):>6}{u:>10.2f}{clock:>11.0f}{law:>14.0f}")
    s, f1, rms = fit_share(points)
    _, f1_law, rms_law = fit_share_at(points, 0.0)
    print(f"fit: s = {s:.2f}, f1 = {f1:.0f} MHz (rms of log clock {rms:.3f}); ", end="")
    print(f"s = 0 (the models' law): f1 = {f1_law:.0f} MHz (rms {rms_law:.3f}); {len(points)} rows")
    return 0


if __name__ == "__main__":
    from script_errors import run

    run("clock_by_activity", main)
