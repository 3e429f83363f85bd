"""The held-out error of the kernel-level models by op kind and hardware config, as a table
the text summary quotes next to a prediction (``opmodel predict --format text``).

The rows are what ``opmodel validate-gemm-latency --no-calibrate-fixed-overhead`` reports for
``extended_roofline`` and ``effective_roofline`` (GEMMs, by hardware: the models as shipped,
with the fitted GEMM overheads of :mod:`opmodel.models.gemm.overhead`, on the rows those were
not fitted on) and ``opmodel validate-ops`` for
``effective_roofline`` (the other kinds, by ``kind:hardware``) on the data in ``data/``:
held-out rows only, the same protocol and figures as docs/validation.md. ``python
scripts/write_accuracy_table.py`` writes them to ``configs/accuracy/measured_error.json``;
tests/validation/test_accuracy_table.py reruns the validations and fails when the shipped file
no longer matches, so a quoted figure is never older than the models.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from opmodel.models.gemm.overhead import GEMM_MODELS  # the kernel-level GEMM models
from opmodel.validation.gemm_data import load_gemm_rows
from opmodel.validation.gemm_latency import ValidationOptions, validate_gemm_latency
from opmodel.validation.metrics import ErrorMetrics
from opmodel.validation.op_latency import validate_op_latency
from opmodel.validation.op_rows import load_op_rows

__all__ = ["GEMM_MODELS", "OPS_MODEL", "accuracy_rows", "accuracy_table"]

OPS_MODEL = "effective_roofline"  # extended_roofline runs the roofline estimate for other kinds


def _row(
    model: str, kind_hardware: tuple[str, str], metrics: ErrorMetrics, command: str
) -> dict[str, Any]:
    kind, hardware = kind_hardware
    return {
        "model": model,
        "kind": kind,
        "hardware": hardware,
        "count": metrics.count,
        "mape": round(metrics.mape, 4),
        "geomean_ratio": round(metrics.geomean_ratio, 3),
        "command": command,
    }


def accuracy_rows(data_dir: Path) -> list[dict[str, Any]]:
    """One row per (model, op kind, hardware) with held-out measurements in ``data_dir``."""
    report = validate_gemm_latency(
        load_gemm_rows(data_dir).rows, GEMM_MODELS, options=ValidationOptions(calibrate=False)
    )
    rows = []
    for result in report.models:
        command = (
            "opmodel validate-gemm-latency --data-dir data --no-calibrate-fixed-overhead "
            f"--model {result.model}"
        )
        for hardware, metrics in result.by_hardware.items():
            rows.append(_row(result.model, ("gemm", hardware), metrics, command))
    ops, _ = load_op_rows(data_dir)
    for key, metrics in validate_op_latency(ops, OPS_MODEL).by_kind.items():
        kind, _, hardware = key.partition(":")
        command = "opmodel validate-ops --data-dir data"
        rows.append(_row(OPS_MODEL, (kind, hardware), metrics, command))
    return sorted(rows, key=lambda row: (row["model"], row["kind"], row["hardware"]))


def accuracy_table(data_dir: Path) -> str:
    """The JSON text of the table (``configs/accuracy/measured_error.json``)."""
    about = (
        "Held-out MAPE of the kernel-level models against measured kernels in data/, by model, "
        "op kind and hardware config; written by python scripts/write_accuracy_table.py, "
        "checked against a rerun by tests/validation/test_accuracy_table.py. Do not edit by hand."
    )
    table = {"about": about, "rows": accuracy_rows(data_dir)}
    return json.dumps(table, indent=1) + "\n"
