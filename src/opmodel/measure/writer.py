"""Write measurements as datasets: GEMM latency CSV, op-table CSV, run JSON and SOURCE.md.

* ``gemm.csv``: GEMM and batched-GEMM cases in the GEMM latency schema that
  ``opmodel validate-gemm-latency --data-dir`` reads (``time`` median ms, ``batch``, ``dimM``,
  ``dimN``, ``dimK``, ``trans``, ``dtype``, ``compute_dtype``, ``l2_dirty_bytes`` (what the L2
  flush wrote), ``hardware``, ``clock_mhz`` = the
  SM clock read under load, ``source``, ``label``, ``energy`` J per run) plus the spread
  (``time_min``, ``time_max``, ``repeats``) and the clocks before and after.
* ``ops.csv``: every other case as an op-table row (docs/sweeps.md) with the same measured
  columns, so ``opmodel sweep`` predicts exactly the measured ops. ATen's elementwise ops and
  copies carry ``aten_128bit_vectors: true`` where the run's PyTorch and GPU vectorize them to
  16 bytes per thread (:mod:`opmodel.measure.aten`).
* Both CSVs gain ``kernel_time`` (median ms of the kernels alone, by the PyTorch profiler) when
  the grid asked for ``kernel_timing`` and any case has such times.
* ``run.json``: device, grid settings and every timed run.
* ``SOURCE.md``: what, where, when and how, in the form of ``data/*/SOURCE.md``.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from opmodel.batch import op_to_row
from opmodel.core.dtypes import DType
from opmodel.core.enums import OpKind
from opmodel.core.op import LocalOp
from opmodel.hardware import load_hardware
from opmodel.measure.aten import aten_uses_128bit_vectors, sdpa_runs_cudnn
from opmodel.measure.grid import FLUSH_L2_MULTIPLE, MeasureGrid
from opmodel.measure.protocol import CaseResult, DeviceInfo
from opmodel.measure.provenance import Measured, run_record, source_md
from opmodel.models.streaming.kernels import runs_aten_elementwise

__all__ = ["GEMM_COLUMNS", "OPS_COLUMNS", "Measured", "write_dataset"]

_MEASURED = (
    "time",
    "time_min",
    "time_max",
    "repeats",
    "energy",
    "energy_runs",
    "hardware",
    "clock_mhz",
    "sm_clock_mhz_before",
    "sm_clock_mhz_after",
    "mem_clock_mhz",
    "source",
    "label",
)
GEMM_COLUMNS = (
    "batch",
    "dimM",
    "dimN",
    "dimK",
    "trans",
    "dtype",
    "compute_dtype",
    "l2_dirty_bytes",
    *_MEASURED,
)
# `time` spans CUDA events around one call (opmodel.validation.timing_scope); `kernel_time`,
# when present, is the kernel alone and takes precedence
OPS_COLUMNS = ("name", "kind", "phase", "tensors", "attrs", *_MEASURED, "timing_scope")
SOURCE_TAG = "opmodel-measure"


def _measured(result: CaseResult, hardware: str) -> dict[str, object]:
    return {
        "time": result.median_ms,
        "kernel_time": result.kernel_median_ms,
        "time_min": min(result.times_ms),
        "time_max": max(result.times_ms),
        "repeats": len(result.times_ms),
        "energy": result.energy_j,
        "energy_runs": result.energy_runs or None,
        "hardware": hardware,
        "clock_mhz": result.sm_clock_mhz_under_load,
        "sm_clock_mhz_before": result.sm_clock_mhz_before,
        "sm_clock_mhz_after": result.sm_clock_mhz_after,
        "mem_clock_mhz": result.mem_clock_mhz,
        "source": SOURCE_TAG,
        "label": result.case.label,
        "timing_scope": "event",
    }


def _gemm_row(result: CaseResult, hardware: str, flush: int) -> dict[str, object]:
    case, size = result.case, result.case.size
    tf32 = case.dtype is DType.TF32
    return {
        "batch": size.get("batch", 1),
        "dimM": size["m"],
        "dimN": size["n"],
        "dimK": size["k"],
        "trans": case.trans,
        "dtype": DType.FP32.value if tf32 else case.dtype.value,
        "compute_dtype": DType.TF32.value if tf32 else "",
        "l2_dirty_bytes": flush or "",
        **_measured(result, hardware),
    }


def _with_aten_vectors(op: LocalOp, vec128: bool) -> LocalOp:
    """``op`` marked ``aten_128bit_vectors`` when it is one of ATen's elementwise ops or copies
    and the measured build vectorizes them to 16 bytes (:mod:`opmodel.measure.aten`)."""
    if not (vec128 and runs_aten_elementwise(op.kind, op.attrs.get("implementation"))):
        return op
    return replace(op, attrs={**op.attrs, "aten_128bit_vectors": True})


def _with_sdpa_order(op: LocalOp, cudnn: bool) -> LocalOp:
    """``op`` marked ``cta_order: in_order`` when it is an attention prefill and the measured
    build's SDPA runs cuDNN's fused attention, whose scheduler starts the query blocks in
    launch order (:mod:`opmodel.measure.aten`)."""
    # a case run on PyTorch's FlashAttention-2 (attention_kernel: fa2) is not cuDNN's
    if not (cudnn and op.kind is OpKind.ATTENTION_PREFILL) or "attention_kernel" in op.attrs:
        return op
    return replace(op, attrs={**op.attrs, "cta_order": "in_order"})


def _write_csv(
    path: Path, columns: Sequence[str], rows: list[dict[str, object]], kernel: bool
) -> None:
    """``kernel``: with the ``kernel_time`` column (after ``time``), else without it."""
    names = list(columns)
    if kernel:
        names.insert(names.index("time") + 1, "kernel_time")
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=names, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow(
                {
                    k: "" if v is None else (repr(v) if isinstance(v, float) else v)
                    for k, v in row.items()
                }
            )


def write_dataset(
    directory: Path,
    info: DeviceInfo,
    grid: MeasureGrid,
    measured: Measured,
    context: dict[str, str],
) -> dict[str, int]:
    """Write the dataset files into ``directory`` (created); returns rows per CSV file.

    ``context`` holds ``hardware`` (the opmodel config name), ``command`` and ``lock`` and
    optionally ``completion`` (text for SOURCE.md) and ``date`` (UTC; now when absent). The cases in
    ``measured.failed`` are named with their reasons in SOURCE.md and run.json.
    """
    results, failed = measured.results, measured.failed
    directory.mkdir(parents=True, exist_ok=True)
    context = {"date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M"), **context}
    hardware = context["hardware"]
    gemm_kinds = (OpKind.GEMM, OpKind.BATCHED_GEMM)
    # what the flush before each timed run wrote (backend.TorchBackend)
    flush = FLUSH_L2_MULTIPLE * info.l2_bytes if grid.flush_l2 else 0
    gemm = [_gemm_row(r, hardware, flush) for r in results if r.case.kind in gemm_kinds]
    architecture = load_hardware(hardware).architecture
    vec128 = aten_uses_128bit_vectors(info.torch_version, architecture)
    cudnn = sdpa_runs_cudnn(info.torch_version, architecture)
    ops = [
        {
            **op_to_row(_with_sdpa_order(_with_aten_vectors(r.case.op(flush), vec128), cudnn)),
            **_measured(r, hardware),
        }
        for r in results
        if r.case.kind not in gemm_kinds
    ]
    kernel = any(r.kernel_times_ms for r in results)
    _write_csv(directory / "gemm.csv", GEMM_COLUMNS, gemm, kernel)
    _write_csv(directory / "ops.csv", OPS_COLUMNS, ops, kernel)
    run = run_record(info, grid, measured, context)
    (directory / "run.json").write_text(json.dumps(run, indent=2) + "\n")
    (directory / "SOURCE.md").write_text(source_md(info, grid, results, context, failed))
    return {"gemm.csv": len(gemm), "ops.csv": len(ops)}
