"""The DRAM bandwidth a GPU sustains, from the ``copy`` cases of an ``opmodel measure`` run.

Usage: python scripts/sustained_bandwidth.py --data-dir DIR [--min-l2-multiple 8]

A copy case reads one tensor and writes another of the same size with no arithmetic, after
``opmodel measure`` has flushed L2 (docs/measure.md), so ``(read + write bytes) / time`` is the
bandwidth a stream sustains from DRAM. For every copy row of the op tables under ``DIR`` the
script prints that bandwidth and its share of the row's config peak (``memory.levels`` hbm
``bandwidth_bytes_per_s``). Per GPU it then gives the median share over the copies that move at
least ``--min-l2-multiple`` times the config's L2 size, where L2 cannot serve the stream: the
measured value a config's ``utilization.memory_fraction.hbm`` can cite (docs/validation.md,
"Sustained HBM bandwidth"; cite the run's SOURCE.md: GPU, clocks, date). Nothing is written.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from opmodel.core.enums import OpKind
from opmodel.hardware import load_hardware
from opmodel.validation.op_latency import OpRow, load_op_rows


@dataclass(frozen=True, slots=True)
class CopyBandwidth:
    """One measured copy: bytes moved, the bandwidth achieved and its share of the peak."""

    hardware: str
    label: str
    bytes_moved: int
    bandwidth_bytes_per_s: float
    peak_fraction: float
    beyond_l2: bool  # moved at least the chosen multiple of the config's L2 size


def copy_bandwidths(rows: Sequence[OpRow], min_l2_multiple: float) -> list[CopyBandwidth]:
    """The copy rows of ``rows`` as achieved bandwidths (other kinds are left out)."""
    out = []
    for row in rows:
        if row.op.kind is not OpKind.COPY:
            continue
        spec = load_hardware(row.hardware)
        moved = sum(t.nbytes for t in row.op.tensors)
        bandwidth = moved / row.time_s
        l2 = spec.levels_by_name.get("l2")
        out.append(
            CopyBandwidth(
                hardware=row.hardware,
                label=row.label or row.op.name,
                bytes_moved=moved,
                bandwidth_bytes_per_s=bandwidth,
                peak_fraction=bandwidth / spec.hbm.bandwidth_bytes_per_s,
                beyond_l2=l2 is None or moved >= min_l2_multiple * l2.size_bytes,
            )
        )
    return out


def sustained_fractions(copies: Sequence[CopyBandwidth]) -> dict[str, tuple[float, int]]:
    """Per GPU: the median peak share of its copies beyond L2, and how many there were."""
    shares: dict[str, list[float]] = defaultdict(list)
    for copy in copies:
        if copy.beyond_l2:
            shares[copy.hardware].append(copy.peak_fraction)
    return {hw: (statistics.median(v), len(v)) for hw, v in sorted(shares.items())}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", type=Path, required=True, help="an opmodel measure run")
    parser.add_argument("--min-l2-multiple", type=float, default=8.0)
    args = parser.parse_args(argv)
    if not args.min_l2_multiple > 0:
        parser.error(f"--min-l2-multiple must be > 0 (got {args.min_l2_multiple})")
    rows, _skipped = load_op_rows(args.data_dir)
    copies = copy_bandwidths(rows, args.min_l2_multiple)
    if not copies:
        sys.exit(f"sustained_bandwidth: {args.data_dir}: no copy rows (measure the copy kind)")
    write = sys.stdout.write
    write(f"{'hardware':<16} {'copy':<44} {'MB':>9} {'GB/s':>9} {'of peak':>8}\n")
    for c in copies:
        note = "" if c.beyond_l2 else "  (fits L2's reach)"
        write(
            f"{c.hardware:<16} {c.label[:44]:<44} {c.bytes_moved / 1e6:>9.1f} "
            f"{c.bandwidth_bytes_per_s / 1e9:>9.0f} {c.peak_fraction:>7.1%}{note}\n"
        )
    for hardware, (fraction, count) in sustained_fractions(copies).items():
        write(f"{hardware}: sustained {fraction:.3f} of the HBM peak (median of {count} copies)\n")
    return 0


if __name__ == "__main__":
    from script_errors import run  # this folder is first on sys.path

    run("sustained_bandwidth", main)
