"""Run ``validate-artifact`` from parsed CLI arguments: predict, write the CSV and plot, summarise.

Workload mode (the default): whole forward passes of the EnergAIzer measurements shipped in
``data/energaizer`` (:mod:`opmodel.validation.artifact`). Per-op mode (``--data-dir``): the
EnergAIzer per-kernel CSVs (:mod:`opmodel.validation.artifact_perop`). The text summary (n,
latency MAPE, energy MAPE, geometric-mean ratios per hardware and per hardware and model
family or op type) goes to stderr; the JSON summary to stdout.
"""

from __future__ import annotations

import csv
import sys
from argparse import Namespace
from pathlib import Path
from typing import Any

from opmodel.core.jsonify import to_jsonable
from opmodel.validation.artifact import (
    WorkloadResult,
    calibration_split,
    load_runs,
    metrics_by,
    predict_runs,
)
from opmodel.validation.artifact_perop import (
    OpPrediction,
    load_measured_ops,
    predict_measured_ops,
)
from opmodel.validation.metrics import error_metrics

__all__ = ["run_artifact"]

CSV_COLUMNS = (
    "workload",
    "family",
    "hardware",
    "clock_mhz",
    "ops",
    "working_set_bytes",
    "measured_time_s",
    "predicted_time_s",
    "time_ratio",
    "measured_energy_j",
    "predicted_energy_j",
    "energy_ratio",
    "passes",
    "startup_s",
    "startup_j",
    "split",
    "sweep",
)


def _row(result: WorkloadResult) -> dict[str, object]:
    run = result.run
    return {
        "workload": run.workload,
        "family": run.family,
        "hardware": run.hardware,
        "clock_mhz": round(run.clock_hz / 1e6, 3),
        "ops": result.ops,
        "working_set_bytes": result.working_set_bytes,
        "measured_time_s": repr(run.time_s),
        "predicted_time_s": repr(result.time_s),
        "time_ratio": repr(result.time_s / run.time_s),
        "measured_energy_j": repr(run.energy_j),
        "predicted_energy_j": repr(result.energy_j),
        "energy_ratio": repr(result.energy_j / run.energy_j),
        "passes": run.passes,
        "startup_s": repr(run.startup_s),
        "startup_j": repr(run.startup_j),
        "split": calibration_split(result),
        "sweep": run.sweep,
    }


def _write_csv(path: Path, results: list[WorkloadResult]) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=CSV_COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(_row(result) for result in results)


def _requested_clock(result: WorkloadResult) -> str:
    """A sweep run's group by the clock the harness asked for (the board may hold less)."""
    requested = result.run.requested_clock_mhz
    return f"{result.run.label}:{requested:.0f}MHz" if requested else result.run.label


def _groups(results: list[WorkloadResult]) -> dict[str, Any]:
    main = [r for r in results if not r.run.sweep]
    sweeps = [r for r in results if r.run.sweep]
    groups = {
        **metrics_by(results, lambda r: r.run.label),
        **metrics_by(main, lambda r: f"{r.run.label}:{calibration_split(r)}"),
        **metrics_by(results, lambda r: f"{r.run.label}:{r.run.family}"),
        **metrics_by(
            [r for r in main if calibration_split(r) == "held-out"],
            lambda r: f"{r.run.label}:held-out:{r.run.family}",
        ),
        **metrics_by(sweeps, _requested_clock),
    }
    return {
        name: {"latency": to_jsonable(latency), "energy": to_jsonable(energy)}
        for name, (latency, energy) in groups.items()
    }


def _print_table(
    model: str, groups: dict[str, Any], skipped: dict[str, int], unit: str = "per forward pass"
) -> None:
    write = sys.stderr.write
    write(f"\nvalidate-artifact ({model}), {unit}\n")
    header = ("group", "n", "time MAPE", "time gm", "energy MAPE", "energy gm")
    write("  {:<36} {:>4} {:>10} {:>8} {:>12} {:>10}\n".format(*header))
    for name, group in groups.items():
        latency, energy = group["latency"], group["energy"]
        write(
            f"  {name:<36} {latency['count']:>4} {latency['mape'] * 100:>9.1f}% "
            f"{latency['geomean_ratio']:>8.3f} {energy['mape'] * 100:>11.1f}% "
            f"{energy['geomean_ratio']:>10.3f}\n"
        )
    if skipped:
        write("skipped: " + "; ".join(f"{n} x {why}" for why, n in skipped.items()) + "\n")


PER_OP_COLUMNS = (
    "op_type",
    "hardware",
    "clock_mhz",
    "working_set_bytes",
    "measured_time_s",
    "predicted_time_s",
    "measured_energy_j",
    "predicted_energy_j",
    "file",
)


def _per_op_groups(predictions: list[OpPrediction]) -> dict[str, Any]:
    groups: dict[str, list[OpPrediction]] = {}
    for p in predictions:
        groups.setdefault(p.measured.hardware, []).append(p)
        groups.setdefault(f"{p.measured.hardware}:{p.measured.op_type}", []).append(p)
    return {
        name: {
            "latency": to_jsonable(
                error_metrics([p.time_s for p in group], [p.measured.time_s for p in group])
            ),
            "energy": to_jsonable(
                error_metrics([p.energy_j for p in group], [p.measured.energy_j for p in group])
            ),
        }
        for name, group in sorted(groups.items())
    }


def _write_per_op_csv(path: Path, predictions: list[OpPrediction]) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(PER_OP_COLUMNS)
        for p in predictions:
            m = p.measured
            clock = round(m.clock_hz / 1e6, 3) if m.clock_hz else ""
            writer.writerow(
                [
                    m.op_type,
                    m.hardware,
                    clock,
                    p.working_set_bytes,
                    repr(m.time_s),
                    repr(p.time_s),
                    repr(m.energy_j),
                    repr(p.energy_j),
                    m.file,
                ]
            )


def _run_per_op(args: Namespace) -> dict[str, Any]:
    rows, skipped = load_measured_ops(Path(args.data_dir))
    predictions = predict_measured_ops(rows, args.model)
    groups = _per_op_groups(predictions)
    if args.output_csv:
        _write_per_op_csv(Path(args.output_csv), predictions)
    if args.output_plot:
        from opmodel.validation.artifact_plot import plot_per_op  # noqa: PLC0415 - optional

        plot_per_op(Path(args.output_plot), predictions)
    if args.format == "table":
        _print_table(args.model, groups, dict(skipped), unit="per kernel")
    return {
        "mode": "per-op",
        "model": args.model,
        "rows": len(predictions),
        "skipped_rows": dict(skipped),
        "groups": groups,
    }


def run_artifact(args: Namespace) -> dict[str, Any]:
    """Predict every usable run or kernel, write the requested outputs, return the summary."""
    if args.data_dir:
        return _run_per_op(args)
    runs, skipped = load_runs(Path(args.workload_dir))
    results = predict_runs(runs, args.model)
    groups = _groups(results)
    if args.output_csv:
        _write_csv(Path(args.output_csv), results)
    if args.output_plot:
        from opmodel.validation.artifact_plot import plot_workloads  # noqa: PLC0415 - optional

        plot_workloads(Path(args.output_plot), results)
    if args.format == "table":
        _print_table(args.model, groups, dict(skipped))
    skipped_ops: dict[str, int] = {}
    for result in results:
        for reason, count in result.skipped_ops.items():
            skipped_ops[reason] = skipped_ops.get(reason, 0) + count
    return {
        "mode": "workloads",
        "model": args.model,
        "runs": len(results),
        "skipped_runs": dict(skipped),
        "skipped_ops": skipped_ops,
        "groups": groups,
    }
