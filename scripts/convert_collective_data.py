"""Convert the sampled Vidur collective timings in data/collectives into an opmodel op table.

Usage: python scripts/convert_collective_data.py [--source data/collectives/vidur]
[--out data/ops/vidur/collectives/vidur_collectives.csv]

Each ``<system>_<collective>.csv`` is a sample of Vidur's ``data/profiling/network/<system>/
<collective>.csv`` (rows copied unchanged; data/collectives/vidur/SOURCE.md). Every row becomes
an op-table row: a ``collective`` of one rank's fp16 buffer (``size`` bytes, the profiler's
``size * 2``) over ``num_workers`` ranks, timed by the median NCCL kernel time in ms
(``timing_scope: kernel``). Numbers are copied, never edited.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

from csv_table import PROFILER_US_TRUNCATION_S
from csv_table import TRUNCATED_OP_TABLE_COLUMNS as COLUMNS

SYSTEMS = {"h100_dgx": "h100_sxm", "a100_dgx": "a100_80gb_sxm"}
"""Vidur's system folders and the opmodel configs of their GPUs."""

FP16_BYTES = 2  # Vidur's GraphedCollective buffers are torch.float16


def _row(system: str, record: dict[str, str]) -> dict[str, str]:
    size = int(record["size"])
    ranks = int(record["num_workers"])
    collective = record["collective"]
    elements = size // FP16_BYTES
    out = elements * ranks if collective == "all_gather" else elements
    attrs = {"operation": collective, "ranks": ranks}
    return {
        "name": collective,
        "kind": "collective",
        "phase": "inference",
        "tensors": f"input:{elements}:fp16;output:{out}:fp16",
        "attrs": json.dumps(attrs),
        "time": record["time_stats." + collective + ".median"],
        "hardware": SYSTEMS[system],
        "clock_mhz": "",
        "source": "vidur",
        "implementation": "nccl",
        "label": f"{system}:{collective}:ranks{ranks}:bytes{size}",
        "timing_scope": "kernel",
        "time_truncation_s": PROFILER_US_TRUNCATION_S,  # whole microseconds, truncated
    }


def main() -> None:
    """Write the op table from every sampled file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=Path("data/collectives/vidur"))
    parser.add_argument(
        "--out", type=Path, default=Path("data/ops/vidur/collectives/vidur_collectives.csv")
    )
    args = parser.parse_args()
    files = sorted(args.source.glob("*.csv"))
    if not files:
        sys.exit(f"convert_collective_data: --source {args.source}: no sampled CSV files")
    rows: list[dict[str, str]] = []
    for path in files:
        system = next(s for s in SYSTEMS if path.stem.startswith(s))
        with path.open(newline="", encoding="utf-8") as handle:
            rows.extend(_row(system, record) for record in csv.DictReader(handle))
    with args.out.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    print(f"{len(rows)} rows -> {args.out}")


if __name__ == "__main__":
    main()
