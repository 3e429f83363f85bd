"""Experiment (not used by the models): a DRAM that serves a stream slower the more it mixes
reads and writes, against the held-out op rows.

Usage: python scripts/write_mix_experiment.py [--data-dir data] [--penalty 0.05 0.1]

HBM pays a bus turnaround each time the controller switches between reads and writes, so a
stream that both reads and writes moves fewer bytes a second than one that only reads or only
writes: FlagPerf's A100 40GB (docs/validation.md) reads at 93 % of its datasheet rate and writes
at 87-89 %, gpu-benches' A100-40 sweep reads at 1.49 TB/s and runs triad at 1.36. Here a
streaming kernel's DRAM time (its bandwidth bound, and the load its chain's round trips see)
is ``t_dram x (1 + c x 4 w (1 - w))``, ``w`` the written share of the bytes it moves during
the run (0 for a reduction, 1/3 for an add, 1/2 for a copy). The script prints the held-out
MAPE of ``effective_roofline`` by hardware and op kind (the groups that move by more than
0.05 point) for each ``c`` against the shipped law (``c = 0``); nothing is fitted or written.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import opmodel.models.streaming.evaluate as streaming_evaluate
from opmodel.validation.op_latency import OpLatencyResult, load_op_rows, validate_op_latency

ROOT = Path(__file__).resolve().parent.parent
_SHIPPED_BOUNDS = streaming_evaluate._bounds


def mix_factor(read_bytes: float, written_bytes: float, penalty: float) -> float:
    """``1 + penalty x 4 w (1 - w)`` for the written share ``w`` of the bytes."""
    moved = read_bytes + written_bytes
    w = written_bytes / moved if moved > 0 else 0.0
    return 1.0 + penalty * 4.0 * w * (1.0 - w)


def _with_penalty(penalty: float) -> Any:
    def bounds(kernel: Any, dev: Any, work: Any, use: Any, waves: int) -> Any:
        factor = mix_factor(use.dram_reads, use.written_back, penalty)
        slower = dataclasses.replace(dev, hbm_rate=dev.hbm_rate / factor)
        return _SHIPPED_BOUNDS(kernel, slower, work, use, waves)

    return bounds


def _groups(result: OpLatencyResult) -> dict[str, tuple[int, float]]:
    out = {"overall": (result.overall.count, result.overall.mape)}
    for table in (result.by_hardware, result.by_kind):
        out.update({k: (v.count, v.mape) for k, v in table.items()})
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=ROOT / "data")
    parser.add_argument("--penalty", type=float, nargs="+", default=[0.05, 0.1])
    args = parser.parse_args(argv)
    if any(not 0 <= c < 1 for c in args.penalty):
        raise SystemExit(f"--penalty: each must be in [0, 1) (got {args.penalty})")
    rows, _ = load_op_rows(args.data_dir)
    shipped = _groups(validate_op_latency(rows, "effective_roofline"))
    tried = {}
    for penalty in args.penalty:
        for row in rows:  # each op keeps its last prediction (models.shared.memo)
            row.op.derived_cache.clear()
        streaming_evaluate._bounds = _with_penalty(penalty)
        try:
            tried[penalty] = _groups(validate_op_latency(rows, "effective_roofline"))
        finally:
            streaming_evaluate._bounds = _SHIPPED_BOUNDS
    header = f"{'group':<34}{'n':>7}{'c = 0':>9}" + "".join(f"{f'c = {c:g}':>10}" for c in tried)
    print(header)
    for group, (count, mape) in shipped.items():
        moved = [tried[c][group][1] for c in tried if group in tried[c]]
        if group != "overall" and all(abs(m - mape) <= 5e-4 for m in moved):
            continue
        cells = "".join(f"{m * 100:>9.1f}%" for m in moved)
        print(f"{group:<34}{count:>7}{mape * 100:>8.1f}%{cells}")
    return 0


if __name__ == "__main__":
    from script_errors import run

    run("write_mix_experiment", main)
