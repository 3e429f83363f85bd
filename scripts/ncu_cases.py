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

``parse`` (no GPU) turns ncu's CSV (one row per kernel and metric; gzipped when it ends in
``.gz``) and the labels into one row
per kernel: the case's index and label, the kernel's position in the case, its name, grid and
block, and one column per metric (ncu's names; numbers without thousands separators). A case
whose kernels ncu did not see (a same-dtype copy is a memcpy, not a kernel) has no rows.

    python scripts/ncu_cases.py parse --ncu-csv ncu.csv --labels labels.csv --output kernels.csv
"""

from __future__ import annotations

import argparse
import csv
import gzip
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from opmodel.batch import op_to_row
from opmodel.core.errors import ConfigError
from opmodel.measure import MeasureRequest, dry_run

MARKER_KERNEL = "spin_kernel"
_NCU_COLUMNS = ("ID", "Kernel Name", "Grid Size", "Block Size", "Metric Name", "Metric Value")
_MARKER_CYCLES = 1000


def launch(grid: str, hardware: str, labels: Path, max_seconds: float, first: int = 0) -> int:
    """Run the grid's cases from index ``first`` on, each once inside a profiler range after a
    marker kernel (labels keep the plan's indices)."""
    import torch  # noqa: PLC0415 - only on the GPU machine

    from opmodel.measure import TorchBackend  # noqa: PLC0415

    plan = dry_run(MeasureRequest(grid=grid, hardware=hardware))
    backend = TorchBackend(0)
    started = time.perf_counter()
    done = 0
    with labels.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["index", "label", "kind", "phase", "tensors", "attrs"])
        for index, case in enumerate(plan.cases):
            if index < first:
                continue
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
            writer.writerow(
                [index, case.label, row["kind"], row["phase"], row["tensors"], row["attrs"]]
            )
            handle.flush()
            done += 1
            del run
    sys.stderr.write(f"ncu_cases: launched {done} of {len(plan.cases) - first} cases\n")
    return 0


def _kernels(ncu_csv: Path) -> list[dict[str, str]]:
    """ncu's long CSV as one dict per kernel, in profiling order."""
    opener = gzip.open if ncu_csv.suffix == ".gz" else open
    with opener(ncu_csv, "rt", newline="", encoding="utf-8") as handle:
        lines = [line for line in handle if not line.startswith("==")]
    reader = csv.DictReader(lines)
    _require(ncu_csv, reader.fieldnames, _NCU_COLUMNS, "an ncu --csv file")
    kernels: dict[str, dict[str, str]] = {}
    for record in reader:
        kernel = kernels.setdefault(
            record["ID"],
            {
                "kernel": record["Kernel Name"],
                "grid": record["Grid Size"],
                "block": record["Block Size"],
            },
        )
        kernel[record["Metric Name"]] = record["Metric Value"].replace(",", "")
    return list(kernels.values())


def _require(
    path: Path, columns: Sequence[str] | None, required: tuple[str, ...], what: str
) -> None:
    """ConfigError naming the file and the missing columns unless ``columns`` has them all."""
    missing = [c for c in required if c not in (columns or ())]
    if missing:
        msg = f"{path}: not {what} (missing columns: {', '.join(missing)})"
        raise ConfigError([msg])


def parse(ncu_csv: Path, labels: Path, output: Path) -> int:
    """Write one row per profiled kernel, attributed to its case by the marker kernels."""
    with labels.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        _require(labels, reader.fieldnames, ("index", "label"), "an ncu_cases labels file")
        cases = list(reader)
    rows: list[dict[str, str]] = []
    case = -1
    position = 0
    for kernel in _kernels(ncu_csv):
        if MARKER_KERNEL in kernel["kernel"]:
            case, position = case + 1, 0
            continue
        if not 0 <= case < len(cases):
            msg = f"{ncu_csv}: kernel {kernel['kernel'][:60]!r} outside the {len(cases)} cases"
            raise ConfigError([msg])
        rows.append(
            {
                "index": cases[case]["index"],
                "label": cases[case]["label"],
                "position": str(position),
                **kernel,
            }
        )
        position += 1
    if case + 1 != len(cases):
        msg = f"{ncu_csv}: {case + 1} marker kernels for {len(cases)} cases in {labels}"
        raise ConfigError([msg])
    metrics = sorted(
        {k for row in rows for k in row} - {"index", "label", "position", "kernel", "grid", "block"}
    )
    columns = ["index", "label", "position", "kernel", "grid", "block", *metrics]
    with output.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    sys.stderr.write(f"ncu_cases: {len(rows)} kernels of {len(cases)} cases -> {output}\n")
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
    go.add_argument("--start-index", type=int, default=0, help="skip the cases before this")
    table = commands.add_parser("parse", help="ncu CSV + labels -> one row per kernel (no GPU)")
    table.add_argument("--ncu-csv", required=True, type=Path)
    table.add_argument("--labels", required=True, type=Path)
    table.add_argument("--output", required=True, type=Path)
    args = parser.parse_args(argv)
    if args.command == "parse":
        return parse(args.ncu_csv, args.labels, args.output)
    if not args.max_seconds > 0:
        parser.error(f"--max-seconds: expected a positive number (got {args.max_seconds})")
    return launch(args.grid, args.hardware, args.labels, args.max_seconds, args.start_index)


if __name__ == "__main__":
    import script_errors

    script_errors.run("ncu_cases", main)
