"""The held-out error of ``effective_roofline`` by op kind and hardware config, as a table the
text summary quotes next to a prediction (``opmodel predict --format text``).

The rows are what ``opmodel validate-gemm-latency --model effective_roofline`` (GEMMs, by
hardware) and ``opmodel validate-ops`` (the other kinds, by ``kind:hardware``) report on the
data in ``data/``: held-out rows only, the same protocol and figures as docs/validation.md.
``python scripts/write_accuracy_table.py`` writes them to
``configs/accuracy/effective_roofline.json``; tests/validation/test_accuracy_table.py reruns
both validations and fails when the shipped file no longer matches, so a quoted figure is
never older than the models.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from opmodel.validation.gemm_data import load_gemm_rows
from opmodel.validation.gemm_latency import ValidationOptions, validate_gemm_latency
from opmodel.validation.metrics import ErrorMetrics
from opmodel.validation.op_latency import validate_op_latency
from opmodel.validation.op_rows import load_op_rows

__all__ = ["MODEL", "accuracy_rows", "accuracy_table"]

MODEL = "effective_roofline"


def _row(kind: str, hardware: str, metrics: ErrorMetrics, command: str) -> dict[str, Any]:
    return {
        "kind": kind,
        "hardware": hardware,
        "count": metrics.count,
        "mape": round(metrics.mape, 4),
        "geomean_ratio": round(metrics.geomean_ratio, 3),
        "command": command,
    }


def accuracy_rows(data_dir: Path) -> list[dict[str, Any]]:
    """One row per (op kind, hardware) with held-out measurements in ``data_dir``, sorted."""
    gemm = validate_gemm_latency(
        load_gemm_rows(data_dir).rows, [MODEL], options=ValidationOptions()
    ).models[0]
    command = f"opmodel validate-gemm-latency --data-dir data --model {MODEL}"
    rows = [_row("gemm", hw, m, command) for hw, m in gemm.by_hardware.items()]
    ops, _ = load_op_rows(data_dir)
    for key, metrics in validate_op_latency(ops, MODEL).by_kind.items():
        kind, _, hardware = key.partition(":")
        rows.append(_row(kind, hardware, metrics, "opmodel validate-ops --data-dir data"))
    return sorted(rows, key=lambda row: (row["kind"], row["hardware"]))


def accuracy_table(data_dir: Path) -> str:
    """The JSON text of the table (``configs/accuracy/effective_roofline.json``)."""
    about = (
        f"Held-out MAPE of {MODEL} against measured kernels in data/, by op kind and hardware "
        "config; written by python scripts/write_accuracy_table.py, checked against a rerun by "
        "tests/validation/test_accuracy_table.py. Do not edit by hand."
    )
    table = {"model": MODEL, "about": about, "rows": accuracy_rows(data_dir)}
    return json.dumps(table, indent=1) + "\n"
