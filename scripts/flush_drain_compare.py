"""Compare two ``opmodel measure`` runs of one grid, after the L2 flush alone and after the flush
and an idle wait (grid field ``flush_idle_us``): does the L2 drain the flush's dirty lines?

Usage: python scripts/flush_drain_compare.py FLUSHED_DIR IDLE_DIR [--hardware h200_sxm]

Both folders hold an ``ops.csv`` and a ``run.json`` from ``opmodel measure`` (the shipped grids
``h200_flush_drain`` and ``h200_flush_drain_idle``). Per case (matched by label) it prints the
two median times and their difference. If the L2 writes its dirty lines back while the DRAM
idles, a kernel that would have evicted them is faster after the wait, by up to the time the
DRAM takes to write the L2's shared capacity of dirty lines, ``C / B`` (the config's L2 shared
capacity over its HBM bandwidth); the summary gives the median difference of the cases whose
own traffic exceeds ``C`` against that bound (docs/validation.md, "The flush's dirty lines
drained before the kernel starts").
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from flush_drain_experiment import dirty_capacity

from opmodel.batch import op_from_row
from opmodel.core.errors import ConfigError
from opmodel.formulas.work import op_work


@dataclass(frozen=True, slots=True)
class CasePair:
    """One case measured both ways: median times [s] and the case's DRAM bytes."""

    label: str
    flushed_s: float
    idle_s: float
    traffic_bytes: int

    @property
    def saved_s(self) -> float:
        """What the idle wait took off the run."""
        return self.flushed_s - self.idle_s


def _rows(folder: Path) -> dict[str, dict[str, str]]:
    path = folder / "ops.csv"
    if not path.is_file():
        raise ConfigError([f"{path}: file not found (an opmodel measure output folder)"])
    with path.open(newline="") as handle:
        return {row["label"]: row for row in csv.DictReader(handle)}


def idle_us(folder: Path) -> float:
    """The run's ``flush_idle_us`` (run.json's grid settings; 0 when the run had none)."""
    path = folder / "run.json"
    if not path.is_file():
        raise ConfigError([f"{path}: file not found (an opmodel measure output folder)"])
    grid = json.loads(path.read_text()).get("grid", {})
    return float(grid.get("flush_idle_us", 0.0))


def pairs(flushed: Path, idle: Path) -> list[CasePair]:
    """The cases both folders measured, in the flushed run's order."""
    first, second = _rows(flushed), _rows(idle)
    out = []
    for label, row in first.items():
        other = second.get(label)
        if other is None:
            continue
        work = op_work(op_from_row(row, str(flushed / "ops.csv")))
        traffic = work.read_bytes + work.write_bytes
        out.append(CasePair(label, float(row["time"]) / 1e3, float(other["time"]) / 1e3, traffic))
    return out


def drain_bound_s(hardware: str) -> tuple[float, float]:
    """(the L2's shared capacity [bytes], the time the DRAM takes to write it [s])."""
    capacity, bandwidth = dirty_capacity(hardware)
    return capacity, capacity / bandwidth


def main(argv: Sequence[str] | None = None) -> int:
    """Print every case's two times and the summary against ``C / B``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("flushed", type=Path)
    parser.add_argument("idle", type=Path)
    parser.add_argument("--hardware", default="h200_sxm")
    args = parser.parse_args(argv)
    waits = idle_us(args.flushed), idle_us(args.idle)
    if waits[0] != 0.0 or waits[1] <= 0.0:
        got = f"{waits[0]:g} and {waits[1]:g} µs"
        raise ConfigError([f"expected a run without flush_idle_us, then one with it (got {got})"])
    found = pairs(args.flushed, args.idle)
    if not found:
        raise ConfigError([f"{args.flushed}, {args.idle}: no case in both runs"])
    capacity, bound = drain_bound_s(args.hardware)
    print(f"{'case':48s} {'MB':>7s} {'flushed us':>11s} {'idle us':>8s} {'saved us':>9s}")
    for p in found:
        print(f"{p.label:48s} {p.traffic_bytes / 1e6:7.1f} {p.flushed_s * 1e6:11.2f} "
              f"{p.idle_s * 1e6:8.2f} {p.saved_s * 1e6:9.2f}")  # fmt: skip
    past = [p.saved_s for p in found if p.traffic_bytes > capacity]
    median = statistics.median(past) * 1e6 if past else float("nan")
    print(f"idle wait {waits[1]:g} µs; cases moving more than the L2's shared capacity "
          f"({capacity / 1e6:.1f} MB): {len(past)}, median saved {median:.2f} µs against "
          f"C / B = {bound * 1e6:.2f} µs")  # fmt: skip
    return 0


if __name__ == "__main__":
    from script_errors import run

    run("flush_drain_compare", main)
