"""The ``validate-ops`` sub-command's flags (kept out of cli.py); the work is in validation."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

__all__ = ["add_ops_parser"]


def add_ops_parser(
    commands: Any, emit: Callable[[Any], None], positive_int: Callable[[str], int]
) -> None:
    """Add ``validate-ops`` to the CLI's sub-commands; results are printed with ``emit``."""

    def run(args: argparse.Namespace) -> None:
        from opmodel.validation.op_report import run_op_latency  # noqa: PLC0415 - heavy, rare

        emit(run_op_latency(args))

    ops = commands.add_parser(
        "validate-ops", help="non-GEMM op latency versus measured op tables in --data-dir"
    )
    ops.add_argument("--data-dir", default="data", help="folder holding ops/ (op-table CSVs)")
    ops.add_argument(
        "--model",
        default="effective_roofline",
        choices=("roofline", "extended_roofline", "effective_roofline"),
    )
    ops.add_argument("--compare-rooflines", action="store_true", help="every model, same rows")
    ops.add_argument("--output-csv", help="per-row measured and predicted seconds")
    ops.add_argument("--limit", type=positive_int, help="an evenly spaced subset of rows")
    ops.add_argument(
        "--format",
        choices=("table", "json"),
        default="table",
        help="table: human table on stderr and JSON summary on stdout",
    )
    ops.set_defaults(handler=run)
