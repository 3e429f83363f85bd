"""Run ``validate-ops`` from parsed CLI arguments: load, evaluate, write, summarise."""

from __future__ import annotations

import csv
import sys
from argparse import Namespace
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from opmodel.core.jsonify import to_jsonable
from opmodel.hardware import config_directory
from opmodel.validation.metrics import ErrorMetrics
from opmodel.validation.op_latency import (
    OpLatencyResult,
    OpRow,
    load_op_rows,
    validate_op_latency,
)

__all__ = ["run_op_latency"]

_MODELS = ("roofline", "extended_roofline", "effective_roofline")


def _print_table(results: Sequence[OpLatencyResult], skipped: Counter[str]) -> None:
    write = sys.stderr.write
    for result in results:
        write(f"\n{result.model}\n")
        groups: list[tuple[str, ErrorMetrics]] = [
            ("overall", result.overall),
            *result.by_hardware.items(),
            *result.by_kind.items(),
            *result.by_function.items(),
            *result.by_source.items(),
            *result.by_duration.items(),
            *result.by_spread.items(),
        ]
        if result.training is not None:
            groups.append(("training: calibration fits", result.training))
        if result.event_training is not None:
            groups.append(("training: event-scope offset", result.event_training))
        w = max(38, *(len(label) for label, _ in groups))
        write(f"  {'group':<{w}} {'n':>6} {'MAPE':>7} {'median':>7} {'p90':>7} {'geomean':>8}\n")
        for label, m in groups:
            write(
                f"  {label:<{w}} {m.count:>6} {m.mape * 100:>6.1f}% {m.median_ape * 100:>6.1f}% "
                f"{m.p90_ape * 100:>6.1f}% {m.geomean_ratio:>8.3f}\n"
            )
        for hardware, offset in result.event_offset_s.items():
            write(f"  event-scope offset {hardware}: {offset * 1e6:.2f} us\n")
    if skipped:
        write("skipped: " + "; ".join(f"{n} x {why}" for why, n in skipped.items()) + "\n")


def _write_csv(path: Path, rows: Sequence[OpRow], results: Sequence[OpLatencyResult]) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        header = ["label", "kind", "hardware", "source", "implementation", "split", "measured_s"]
        per_model = ("_s", "_ratio", "_limiter")
        writer.writerow(header + [f"{r.model}{suffix}" for r in results for suffix in per_model])
        for index, row in enumerate(rows):
            writer.writerow(
                [
                    row.label,
                    row.op.kind.value,
                    row.hardware,
                    row.source,
                    row.implementation,
                    results[0].split[index],
                    repr(row.time_s),
                    *(
                        value
                        for r in results
                        for value in (
                            repr(r.predicted_s[index]),
                            repr(r.predicted_s[index] / row.time_s),
                            r.limiter[index],
                        )
                    ),
                ]
            )


def _summary(result: OpLatencyResult) -> dict[str, Any]:
    return {
        "overall": to_jsonable(result.overall),
        "by_hardware": to_jsonable(result.by_hardware),
        "by_kind": to_jsonable(result.by_kind),
        "by_function": to_jsonable(result.by_function),
        "by_source": to_jsonable(result.by_source),
        "by_duration": to_jsonable(result.by_duration),
        "by_spread": to_jsonable(result.by_spread),
        "training": to_jsonable(result.training),
        "event_offset_s": dict(result.event_offset_s),
        "event_training": to_jsonable(result.event_training),
    }


def run_op_latency(args: Namespace) -> dict[str, Any]:
    """Evaluate the model(s), print the table (``--format table``), return the JSON summary."""
    rows, skipped = load_op_rows(Path(args.data_dir))
    if args.limit is not None and args.limit < len(rows):
        step = len(rows) / args.limit
        rows = [rows[int(i * step)] for i in range(args.limit)]
    models = list(_MODELS) if args.compare_rooflines else [args.model]
    hardware_dir = config_directory("--hardware-dir", args.hardware_dir)
    results = [validate_op_latency(rows, model, hardware_dir=hardware_dir) for model in models]
    if args.output_csv:
        _write_csv(Path(args.output_csv), rows, results)
    if args.format == "table":
        _print_table(results, skipped)
    return {
        "rows": len(rows),
        "skipped": dict(skipped),
        "models": {result.model: _summary(result) for result in results},
    }
