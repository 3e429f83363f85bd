"""Experiment (not used by the models): the L2 flush's dirty lines drained during the gap before
the timed kernel, against every event-timed row of ``opmodel validate-ops``.

Usage: python scripts/flush_drain_experiment.py [--data-dir data] [--iterations 3]

A benchmark that flushes L2 by writing a buffer (Triton's ``do_bench``, ``opmodel measure``)
leaves it full of dirty lines, which the model charges to the timed kernel's DRAM traffic as it
evicts them (attr ``l2_dirty_bytes``: at most the L2's shared capacity ``C``; docs/models/
streaming.md). Were the L2 to write dirty lines back while the DRAM idles, the lines left when
the kernel's own traffic starts would be ``max(0, C - B t)``: ``B`` the DRAM bandwidth, ``t``
the gap between the flush's end and the kernel's first loads. This experiment takes ``t`` to be
the GPU's fitted event-scope offset (the front end's time around the kernel, both sides of it:
an upper bound on the gap), caps each flushed row's ``l2_dirty_bytes`` at that value, refits the
offsets (``validate_op_latency``) and repeats ``--iterations`` times, since the cap depends on
the offsets. It prints the held-out groups that hold flushed rows, before and after.
docs/validation.md ("Non-GEMM ops", the flush's dirty lines) reports what it gives and why it
is not adopted.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Sequence
from pathlib import Path

from opmodel.hardware import load_hardware
from opmodel.validation.metrics import ErrorMetrics
from opmodel.validation.op_latency import OpLatencyResult, load_op_rows, validate_op_latency
from opmodel.validation.op_rows import OpRow

ROOT = Path(__file__).resolve().parent.parent
DIRTY = "l2_dirty_bytes"


def dirty_capacity(hardware: str) -> tuple[float, float]:
    """(the L2's shared capacity ``C`` [bytes], the DRAM bandwidth ``B`` [bytes/s]) of a config:
    the most dirty lines a flush leaves, and the rate they drain at."""
    spec = load_hardware(hardware)
    l2 = spec.levels_by_name.get("l2")
    return (l2.shared_capacity_bytes if l2 is not None else 0.0), spec.hbm.bandwidth_bytes_per_s


def drained_capacity_bytes(hardware: str, gap_s: float) -> int:
    """Dirty bytes the L2 still holds after ``gap_s`` of write-back at the DRAM bandwidth."""
    capacity, bandwidth = dirty_capacity(hardware)
    return max(0, int(capacity - bandwidth * gap_s))


def drained_rows(rows: Sequence[OpRow], gaps_s: dict[str, float]) -> list[OpRow]:
    """``rows`` with every flushed row's dirty bytes capped by :func:`drained_capacity_bytes`."""
    caps = {hw: drained_capacity_bytes(hw, gap) for hw, gap in gaps_s.items()}
    out = []
    for row in rows:
        dirty = row.op.attrs.get(DIRTY)
        if isinstance(dirty, int) and row.hardware in caps:
            attrs = {**row.op.attrs, DIRTY: min(dirty, caps[row.hardware])}
            out.append(dataclasses.replace(row, op=dataclasses.replace(row.op, attrs=attrs)))
        else:
            out.append(row)
    return out


def _flushed_groups(rows: Sequence[OpRow], result: OpLatencyResult) -> dict[str, ErrorMetrics]:
    """The result's groups by hardware, kind, function and source that hold a flushed row."""
    hardware = {r.hardware for r in rows if DIRTY in r.op.attrs}
    sources = {f"{r.source}:" for r in rows if DIRTY in r.op.attrs}
    groups: dict[str, ErrorMetrics] = {}
    for table in (result.by_hardware, result.by_kind, result.by_function, result.by_source):
        for name, metrics in table.items():
            on_flushed = name.split(":")[-1] in hardware or name.startswith(tuple(sources))
            if on_flushed:
                groups[name] = metrics
    return groups


def main(argv: list[str] | None = None) -> int:
    """Run the shipped rows as they are, then drained, and print both."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=ROOT / "data")
    parser.add_argument("--iterations", type=int, default=3)
    args = parser.parse_args(argv)
    rows, _ = load_op_rows(args.data_dir)
    base = validate_op_latency(rows, "effective_roofline")
    gaps = dict(base.event_offset_s)
    result = base
    for _ in range(max(1, args.iterations)):
        result = validate_op_latency(drained_rows(rows, gaps), "effective_roofline")
        gaps = dict(result.event_offset_s)
    print("event-scope offset [us]: " + ", ".join(
        f"{hw} {base.event_offset_s[hw] * 1e6:.2f} -> {gaps[hw] * 1e6:.2f}" for hw in sorted(gaps)
    ))  # fmt: skip
    print("dirty bytes left at the kernel's start [MB]: " + ", ".join(
        f"{hw} {drained_capacity_bytes(hw, gaps[hw]) / 1e6:.1f}" for hw in sorted(gaps)
    ))  # fmt: skip
    before, after = _flushed_groups(rows, base), _flushed_groups(rows, result)
    print(f"{'group (held out)':44s} {'n':>5s}  {'as shipped':>10s}  {'drained':>8s}")
    for name in sorted(before):
        old, new = before[name], after[name]
        print(f"{name:44s} {old.count:5d}  {old.mape:9.1%}  {new.mape:8.1%}")
    print(f"{'overall':44s} {base.overall.count:5d}  {base.overall.mape:9.1%}  "
          f"{result.overall.mape:8.1%}")  # fmt: skip
    return 0


if __name__ == "__main__":
    from script_errors import run

    run("flush_drain_experiment", main)
