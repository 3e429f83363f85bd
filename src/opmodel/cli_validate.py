"""The ``validate-ops`` sub-command's flags (kept out of cli.py); the work is in validation."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

__all__ = ["add_artifact_parser", "add_calibrate_energy_parser", "add_ops_parser"]


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
    ops.add_argument("--hardware-dir", help="folder of <config>.yaml (default: shipped)")
    ops.add_argument(
        "--format",
        choices=("table", "json"),
        default="table",
        help="table: human table on stderr and JSON summary on stdout",
    )
    ops.set_defaults(handler=run)


def add_artifact_parser(commands: Any, emit: Callable[[Any], None]) -> None:
    """Add ``validate-artifact`` (CONTRACT.md) to the CLI's sub-commands."""

    def run(args: argparse.Namespace) -> None:
        from opmodel.validation.artifact_report import run_artifact  # noqa: PLC0415 - heavy

        emit(run_artifact(args))

    artifact = commands.add_parser(
        "validate-artifact",
        help="bf16 forward-pass time and energy versus EnergAIzer's measurements (A10, A100, H100)",
    )
    artifact.add_argument(
        "--data-dir",
        help="per-op mode: folder of EnergAIzer per-kernel CSVs (yz8_*/a10_* files) or of an "
        "opmodel measure run (gemm.csv, ops.csv, run.json)",
    )
    artifact.add_argument(
        "--workload-dir",
        default="data/energaizer",
        help="EnergAIzer measurements and op lists (default: the shipped data/energaizer)",
    )
    artifact.add_argument(
        "--model",
        default="effective_roofline",
        choices=("roofline", "extended_roofline", "effective_roofline"),
    )
    artifact.add_argument("--output-csv", help="per-run measured and predicted time and energy")
    artifact.add_argument("--output-plot", help="SVG scatter plot (needs matplotlib)")
    artifact.add_argument(
        "--format",
        choices=("table", "json"),
        default="table",
        help="table: summary on stderr and JSON on stdout",
    )
    artifact.set_defaults(handler=run)


def add_calibrate_energy_parser(commands: Any, emit: Callable[[Any], None]) -> None:
    """Add ``calibrate-energy`` to the CLI's sub-commands."""

    def run(args: argparse.Namespace) -> None:
        from pathlib import Path  # noqa: PLC0415

        from opmodel.validation.energy_fit import calibrate_energy  # noqa: PLC0415 - heavy

        emit(
            calibrate_energy(args.hardware, Path(args.workload_dir), args.model, Path(args.output))
        )

    calibrate = commands.add_parser(
        "calibrate-energy",
        help="fit a config's energy terms on a training split of measured forward passes",
    )
    calibrate.add_argument(
        "--hardware",
        required=True,
        help="config name with EnergAIzer runs (a10, a100_40gb_pcie, h100_sxm)",
    )
    calibrate.add_argument("--workload-dir", default="data/energaizer", help="EnergAIzer data")
    calibrate.add_argument(
        "--model",
        default="effective_roofline",
        choices=("roofline", "extended_roofline", "effective_roofline"),
    )
    calibrate.add_argument("--output", required=True, help="calibration YAML to write")
    calibrate.set_defaults(handler=run)
