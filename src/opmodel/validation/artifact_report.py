"""Run ``validate-artifact`` from parsed CLI arguments: predict, write the CSV and plot, summarise.

Workload mode (the default): whole forward passes of the EnergAIzer measurements shipped in
``data/energaizer`` (:mod:`opmodel.validation.artifact`). The text summary (n, latency MAPE,
energy MAPE, geometric-mean ratios per hardware and per hardware and model family) goes to
stderr; the JSON summary to stdout.
"""

from __future__ import annotations

import csv
import sys
from argparse import Namespace
from pathlib import Path
from typing import Any

from opmodel.core.jsonify import to_jsonable
from opmodel.validation.artifact import WorkloadResult, load_runs, metrics_by, predict_runs

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
    }


def _write_csv(path: Path, results: list[WorkloadResult]) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=CSV_COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(_row(result) for result in results)


def _groups(results: list[WorkloadResult]) -> dict[str, Any]:
    groups = {
        **metrics_by(results, lambda r: r.run.hardware),
        **metrics_by(results, lambda r: f"{r.run.hardware}:{r.run.family}"),
    }
    return {
        name: {"latency": to_jsonable(latency), "energy": to_jsonable(energy)}
        for name, (latency, energy) in groups.items()
    }


def _print_table(model: str, groups: dict[str, Any], skipped: dict[str, int]) -> None:
    write = sys.stderr.write
    write(f"\nvalidate-artifact ({model}), per forward pass\n")
    header = ("group", "n", "time MAPE", "time gm", "energy MAPE", "energy gm")
    write("  {:<28} {:>4} {:>10} {:>8} {:>12} {:>10}\n".format(*header))
    for name, group in groups.items():
        latency, energy = group["latency"], group["energy"]
        write(
            f"  {name:<28} {latency['count']:>4} {latency['mape'] * 100:>9.1f}% "
            f"{latency['geomean_ratio']:>8.3f} {energy['mape'] * 100:>11.1f}% "
            f"{energy['geomean_ratio']:>10.3f}\n"
        )
    if skipped:
        write("skipped runs: " + "; ".join(f"{n} x {why}" for why, n in skipped.items()) + "\n")


def run_artifact(args: Namespace) -> dict[str, Any]:
    """Predict every usable run, write the requested outputs, return the JSON summary."""
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
