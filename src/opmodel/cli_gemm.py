"""The ``validate-gemm-traffic`` and ``validate-gemm-latency`` sub-commands (kept out of
cli.py); the work is in :mod:`opmodel.validation`, imported when a command runs (validation
pulls in csv, statistics and every GEMM model, ~40 ms that ``opmodel predict`` should not pay
at start-up)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["add_gemm_latency_parser", "add_gemm_traffic_parser"]

_MODELS = ("roofline", "extended_roofline", "effective_roofline")


def add_gemm_traffic_parser(commands: Any, emit: Callable[[Any], None]) -> None:
    """Add ``validate-gemm-traffic``; results are printed with ``emit``."""

    def run(args: argparse.Namespace) -> None:
        """Compare, print the table (or every row as JSON) and the summary."""
        from opmodel.validation.gemm_traffic import (  # noqa: PLC0415 - heavy, rare
            compare_dram_bytes,
            summarize,
        )

        rows = compare_dram_bytes(Path(args.data_dir))
        summary = summarize(rows)
        if args.format == "json":
            emit({"summary": summary, "rows": rows})
            return
        _write_traffic_table(rows)
        emit(summary)

    traffic = commands.add_parser(
        "validate-gemm-traffic", help="GEMM DRAM bytes versus Nsight Compute counters (A100)"
    )
    traffic.add_argument("--data-dir", default="data", help="folder holding rapid_llm_ncu_gemm/")
    _add_format_flag(
        traffic, "table: per-row table on stderr, summary JSON on stdout; json: all rows"
    )
    traffic.set_defaults(handler=run)


def _write_traffic_table(rows: Any) -> None:
    """The per-row DRAM bytes table on stderr."""
    sys.stderr.write(
        f"{'m':>6} {'k':>6} {'n':>6} {'cta tile':>12} {'read MB meas':>13} "
        f"{'pred':>9} {'error':>7} {'write MB meas':>14} {'pred':>9} {'of C':>7}\n"
    )
    for row in rows:
        tile = "x".join(str(t) for t in row.cta_tile)
        sys.stderr.write(
            f"{row.m:>6} {row.k:>6} {row.n:>6} {tile:>12} "
            f"{row.measured_read_bytes / 1e6:>13.1f} {row.predicted_read_bytes / 1e6:>9.1f} "
            f"{row.read_error * 100:>+6.1f}% "
            f"{row.measured_write_bytes / 1e6:>14.1f} {row.predicted_write_back_bytes / 1e6:>9.1f} "
            f"{row.write_error_of_output * 100:>+6.1f}%\n"
        )


def add_gemm_latency_parser(
    commands: Any, emit: Callable[[Any], None], positive_int: Callable[[str], int]
) -> None:
    """Add ``validate-gemm-latency``; results are printed with ``emit``."""

    def run(args: argparse.Namespace) -> None:
        """Validate and print the report."""
        from opmodel.validation.gemm_report import run_gemm_latency  # noqa: PLC0415

        emit(run_gemm_latency(args))

    latency = commands.add_parser(
        "validate-gemm-latency", help="GEMM latency versus measured CSVs in --data-dir"
    )
    latency.add_argument("--data-dir", default="data", help="folder searched for GEMM CSVs")
    latency.add_argument("--model", default="extended_roofline", choices=_MODELS)
    _add_calibration_flags(latency)
    latency.add_argument(
        "--compare-rooflines",
        action="store_true",
        help="roofline and every registered GEMM model on the same rows",
    )
    latency.add_argument("--output-csv", help="per-row predictions and errors")
    latency.add_argument("--output-params", help="fitted overheads and training rows as JSON")
    latency.add_argument("--hardware-dir", help="folder of <config>.yaml (default: shipped)")
    latency.add_argument(
        "--training-per-class",
        type=positive_int,
        default=8,
        help="training rows per hardware and class (small, vector_like; large for the clock)",
    )
    latency.add_argument(
        "--limit", type=positive_int, help="evaluate an evenly spaced subset of rows"
    )
    _add_format_flag(latency, "table: human table on stderr and JSON summary on stdout")
    latency.set_defaults(handler=run)


def _add_calibration_flags(latency: Any) -> None:
    """What ``validate-gemm-latency`` fits on its training split."""
    latency.add_argument(
        "--no-calibrate-fixed-overhead",
        dest="calibrate",
        action="store_false",
        help="predict as shipped (the GEMM models' fitted overheads, else the configs'); "
        "hold out every row but those the shipped overheads were fitted on",
    )
    latency.add_argument(
        "--fit-power-clock",
        dest="calibrate_power_clock",
        action="store_true",
        help="also fit each unlocked GPU's power-limited SM clock on large training rows "
        "(held out; beyond the overhead-only protocol, see docs/validation.md)",
    )


def _add_format_flag(parser: Any, text: str) -> None:
    """``--format table|json`` (default ``table``), described by ``text``."""
    parser.add_argument("--format", choices=("table", "json"), default="table", help=text)
