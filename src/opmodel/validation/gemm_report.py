"""Run ``validate-gemm-latency`` from parsed CLI arguments: load, evaluate, write, summarise."""

from __future__ import annotations

import csv
import json
import sys
from argparse import Namespace
from pathlib import Path
from typing import Any

from opmodel.core.jsonify import to_jsonable
from opmodel.hardware import config_directory
from opmodel.models import model_names
from opmodel.models.gemm.overhead import GEMM_MODELS
from opmodel.validation.gemm_data import load_gemm_rows
from opmodel.validation.gemm_groups import mape_deltas
from opmodel.validation.gemm_latency import (
    LatencyReport,
    ModelResult,
    ValidationOptions,
    validate_gemm_latency,
)
from opmodel.validation.metrics import ErrorMetrics

__all__ = ["run_gemm_latency"]

_GEMM_MODELS = ("extended_roofline", "effective_roofline")


def _models(args: Namespace) -> list[str]:
    if args.compare_rooflines:
        available = model_names()
        return ["roofline", *(m for m in _GEMM_MODELS if m in available)]
    return [args.model]


def _progress(done: int, total: int) -> None:
    if total >= 1000 and done % (total // 10) == 0:
        sys.stderr.write(f"\rvalidate-gemm-latency: {100 * done // total:3d}% of {total} rows")
        if done + total // 10 >= total:
            sys.stderr.write("\n")


def _print_table(report: LatencyReport, deltas: dict[str, dict[str, float]]) -> None:
    """The human table on stderr; ``deltas``: :func:`_deltas` of ``report``."""
    write = sys.stderr.write
    if report.power_limited_clock_hz:
        write(
            "\npower-limited SM clock (fitted on large rows): "
            + ", ".join(
                f"{hw}={hz / 1e6:.0f} MHz ({report.power_clock_training_rows.get(hw, 0)} rows)"
                for hw, hz in report.power_limited_clock_hz.items()
            )
            + "\n"
        )
    if report.shipped_clock_training_rows:
        write(
            "\nheld out, the training rows of the shipped power-limited clocks "
            "(configs/calibrations/<hardware>_sustained.yaml): "
            + ", ".join(f"{hw} {n}" for hw, n in report.shipped_clock_training_rows.items())
            + "\n"
        )
    for result in report.models:
        fitted = ", ".join(f"{hw}={c:.0f}" for hw, c in result.overhead_cycles.items())
        write(f"\n{result.model}: fixed overhead {_overhead_note(result.model, fitted)}\n")
        delta = deltas.get(result.model)
        header = f"  {'group':<28} {'n':>6} {'MAPE':>7} {'median':>7} {'p90':>7} {'geomean':>8}"
        write(header + (f" {'vs roofline':>12}" if delta is not None else "") + "\n")
        for label, m in _labelled(result):
            line = (
                f"  {label:<28} {m.count:>6} {m.mape * 100:>6.1f}% {m.median_ape * 100:>6.1f}% "
                f"{m.p90_ape * 100:>6.1f}% {m.geomean_ratio:>8.3f}"
            )
            if delta is not None and label in delta:
                line += f" {delta[label]:>+9.1f} pt"
            write(line + "\n")
    if report.skipped:
        write("skipped: " + "; ".join(f"{n} x {why}" for why, n in report.skipped.items()) + "\n")


def _labelled(result: ModelResult) -> list[tuple[str, ErrorMetrics]]:
    """A model's groups in the table's order: latency overall, by hardware, source, size class
    and repeat spread, then energy overall, by hardware and by size class."""
    groups = [
        ("overall", result.overall),
        *result.by_hardware.items(),
        *result.by_source.items(),
        *result.by_class.items(),
        *result.by_spread.items(),
    ]
    if result.energy is not None:
        groups.append(("energy (measured rows)", result.energy))
    groups += [(f"energy: {k}", m) for k, m in result.energy_by_hardware.items()]
    groups += [(f"energy: {k}", m) for k, m in result.energy_by_class.items()]
    return groups


def _deltas(report: LatencyReport) -> dict[str, dict[str, float]]:
    """Each GEMM model's MAPE minus the roofline's per table group (--compare-rooflines)."""
    return mape_deltas({r.model: dict(_labelled(r)) for r in report.models})


def run_gemm_latency(args: Namespace) -> dict[str, Any]:
    """The command's work; returns the JSON summary (per-row data goes to --output-csv)."""
    loaded = load_gemm_rows(Path(args.data_dir))
    rows = loaded.rows
    if args.limit:
        rows = rows[:: max(1, len(rows) // args.limit)][: args.limit]
    options = ValidationOptions(
        calibrate=args.calibrate,
        calibrate_power_clock=args.calibrate_power_clock,
        training_per_class=args.training_per_class,
        hardware_dir=config_directory("--hardware-dir", args.hardware_dir),
        row_details=bool(args.output_csv),
        progress=_progress,
    )
    report = validate_gemm_latency(rows, _models(args), options=options)
    if args.output_csv and report.per_row:
        with Path(args.output_csv).open("w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(report.per_row[0]), lineterminator="\n")
            writer.writeheader()
            writer.writerows(report.per_row)
    if args.output_params:
        Path(args.output_params).write_text(json.dumps(_params(report), indent=2) + "\n")
    deltas = _deltas(report)
    if args.format == "table":
        _print_table(report, deltas)
    skipped = {**dict(loaded.skipped), **report.skipped}
    summary: dict[str, Any] = {
        "rows_evaluated": report.rows_used,
        "power_limited_clock_hz": report.power_limited_clock_hz,
        "shipped_clock_training_rows": report.shipped_clock_training_rows,
        "skipped": skipped,
        "models": [to_jsonable(r) for r in report.models],
    }
    if deltas:  # --compare-rooflines: each GEMM model's MAPE minus the roofline's, in points
        summary["mape_delta_vs_roofline"] = deltas
    return summary


def _params(report: LatencyReport) -> dict[str, Any]:
    """The fitted values and their training rows (--output-params)."""
    params: dict[str, Any] = {
        r.model: {"overhead_cycles": r.overhead_cycles, "training_rows": r.training_rows}
        for r in report.models
    }
    params["power_limited_clock_hz"] = report.power_limited_clock_hz
    params["power_clock_training_rows"] = report.power_clock_training_rows
    params["shipped_clock_training_rows"] = report.shipped_clock_training_rows
    return params


def _overhead_note(model: str, fitted: str) -> str:
    """What fixed overhead a model's table carries: fitted here, or as shipped."""
    if fitted:
        return f"cycles {fitted}"
    if model in GEMM_MODELS:
        return "as shipped (configs/calibrations/gemm_fixed_overhead.yaml, else the config's)"
    return "as shipped (none)"
