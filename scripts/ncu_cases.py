"""Launch the cases of an ``opmodel measure`` grid under Nsight Compute, one marked run each.

Usage (on the GPU machine, under ncu):

    ncu --profile-from-start off --cache-control all --clock-control none --csv \\
        --log-file ncu.csv --metrics METRICS \\
        python scripts/ncu_cases.py launch --grid h200_ncu --hardware h200_sxm \\
            --labels labels.csv [--max-seconds 120]

Each case is built with the same PyTorch calls as ``opmodel measure``
(:meth:`opmodel.measure.backend.TorchBackend.kernel`), run twice untimed (library set-up, cuBLAS
heuristics), then profiled once: ``cudaProfilerStart``, a marker kernel
(``torch.cuda._sleep``, named ``spin_kernel``), the case's kernels, synchronise,
``cudaProfilerStop``. In ncu's output the n-th marker opens case n, and every kernel up to the
next marker belongs to it, so cases that PyTorch splits into several kernels are attributed
whole. ``--labels`` gets one row per case in launch order (index, label, op-table row).
``--max-seconds`` stops launching new cases after that much wall time, so the process ends
normally and ncu writes everything it has.

``parse`` (here, no GPU) turns ncu's CSV and the labels into a per-kernel table.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path
from typing import Any

from opmodel.batch import op_to_row
from opmodel.measure import MeasureRequest, dry_run

MARKER_KERNEL = "spin_kernel"
_MARKER_CYCLES = 1000


def launch(grid: str, hardware: str, labels: Path, max_seconds: float, device: int) -> int:
    """Run every case of the grid once inside a profiler range, after a marker kernel."""
    import torch  # noqa: PLC0415 - only on the GPU machine

    from opmodel.measure import TorchBackend  # noqa: PLC0415

    plan = dry_run(MeasureRequest(grid=grid, hardware=hardware))
    backend = TorchBackend(device)
    started = time.perf_counter()
    done = 0
    with labels.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["index", "label", "kind", "tensors", "attrs"])
        for index, case in enumerate(plan.cases):
            if time.perf_counter() - started > max_seconds:
                break
            run: Any = backend.kernel(case)
            run()
            run()
            torch.cuda.synchronize()
            torch.cuda.profiler.start()
            torch.cuda._sleep(_MARKER_CYCLES)
            run()
            torch.cuda.synchronize()
            torch.cuda.profiler.stop()
            row = op_to_row(case.op())
            writer.writerow([index, case.label, row["kind"], row["tensors"], row["attrs"]])
            handle.flush()
            done += 1
            del run
    sys.stderr.write(f"ncu_cases: launched {done} of {len(plan.cases)} cases\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    go = commands.add_parser("launch", help="run the grid's cases under ncu (GPU)")
    go.add_argument("--grid", required=True)
    go.add_argument("--hardware", required=True)
    go.add_argument("--labels", required=True, type=Path)
    go.add_argument("--max-seconds", type=float, default=120.0)
    go.add_argument("--device", type=int, default=0)
    args = parser.parse_args(argv)
    if not args.max_seconds > 0:
        parser.error(f"--max-seconds: expected a positive number (got {args.max_seconds})")
    return launch(args.grid, args.hardware, args.labels, args.max_seconds, args.device)


if __name__ == "__main__":
    import script_errors

    script_errors.run("ncu_cases", main)
