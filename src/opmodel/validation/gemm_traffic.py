"""Compare the GEMM traffic model's DRAM bytes with Nsight Compute counters (Rapid-LLM, A100).

Each row of ``data/rapid_llm_ncu_gemm/ncu_metrics_results.csv`` is a CUTLASS kernel profiled
with ncu: ``C[m, n] = A[m, k] @ B[k, n]`` in fp16 with the row's CTA tile and stages, on an
A100-SXM4-80GB. The model gets the same problem, tile, stages and warps (the row's block size;
warp tiles as CUTLASS arranges them) on ``a100_80gb_sxm`` and predicts DRAM read and write
bytes; nothing is fitted. ncu flushes the caches before each profiled kernel (its default
``--cache-control all``), so the L2 starts clean: the DRAM writes its counters see are the
output lines evicted while the kernel runs, which
:func:`~opmodel.models.shared.l2_survival.write_back_bytes` predicts from the kernel's DRAM
reads and writes and the L2's shared capacity (the rest of C stays dirty in L2).

Units: the file's byte columns are ncu's values in Mbyte (10^6 bytes, ncu's default unit)
multiplied by 2^20, so each is 1.048576 times the bytes counted. The GEMV rows (n = 1) show
it: A and B are read once, and all six come out at 1.0487-1.0522 x (A + B), which is
1.048576 x (A + B + 29-30 KB) on every one of them, a constant 30 KB whatever the size. A
physical excess would scale with the bytes. The comparison therefore reads each column as
``value x 10^6 / 2^20`` bytes (:data:`REPORTED_TO_BYTES`); the file stays as published.
"""

from __future__ import annotations

import csv
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from opmodel.core.attrs import int_attr
from opmodel.core.dtypes import DType
from opmodel.core.enums import OpKind, Phase, TensorRole
from opmodel.core.errors import ConfigError, OpModelError
from opmodel.core.op import LocalOp, TensorSpec
from opmodel.hardware import load_hardware
from opmodel.models.gemm import GemmProblem, build_kernel, gemm_traffic, grid_of, occupancy_of
from opmodel.models.shared.l2_survival import write_back_bytes
from opmodel.parsing.textfile import text_file

__all__ = [
    "REPORTED_TO_BYTES",
    "TrafficRow",
    "TrafficSummary",
    "compare_dram_bytes",
    "oriented_tile",
    "summarize",
]

NCU_FILE = "rapid_llm_ncu_gemm/ncu_metrics_results.csv"
REPORTED_TO_BYTES = 10**6 / 2**20
"""Bytes per unit of the file's byte columns: ncu's Mbyte figures were scaled by 2^20, not
10^6 (module docstring)."""
_COLUMNS = (
    "m",
    "k",
    "n",
    "cta_m",
    "cta_k",
    "cta_n",
    "stages",
    "block_size",
    "grid_size",
    "dram_read",
    "dram_write",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class TrafficRow:
    """One measured kernel and the model's DRAM bytes for it."""

    m: int
    n: int
    k: int
    cta_tile: tuple[int, int, int]
    measured_read_bytes: int
    predicted_read_bytes: int
    measured_write_bytes: int
    predicted_write_bytes: int  # all of C (and split-K partials): what reaches DRAM in the end
    predicted_write_back_bytes: int  # the part written back while the kernel runs

    @property
    def read_error(self) -> float:
        """Signed relative error of DRAM reads: predicted / measured - 1."""
        return self.predicted_read_bytes / self.measured_read_bytes - 1

    @property
    def write_error_of_output(self) -> float:
        """Write-back error in units of the bytes written: (predicted - measured write-back) /
        max(predicted writes, measured writes). The measured bytes are near 0 where C stays in
        L2, so they cannot be the unit alone."""
        unit = max(self.predicted_write_bytes, self.measured_write_bytes, 1)
        return (self.predicted_write_back_bytes - self.measured_write_bytes) / unit


@dataclass(frozen=True, slots=True, kw_only=True)
class TrafficSummary:
    """Read-error statistics over the rows."""

    rows: int
    median_abs_read_error: float
    mean_abs_read_error: float
    within_10_percent: int
    median_abs_write_error_of_output: float
    writes_within_10_percent_of_output: int


def oriented_tile(m: int, n: int, cta_m: int, cta_n: int, grid_size: int) -> tuple[int, int]:
    """The CTA tile ``(along m, along n)`` of a Rapid-LLM row: its ``cta_m`` x ``cta_n`` as
    recorded, unless only the swapped tile gives the CTA count ncu measured
    (``launch__grid_size``). Two rows need the swap (8192 x 128 and 16384 x 128 with 64 x 256
    and 128 x 256 tiles: 64 CTAs, which only the 256-wide side along m gives); for every other
    row both orientations or only the recorded one give the measured grid."""

    def ctas(along_m: int, along_n: int) -> int:
        return -(-m // along_m) * -(-n // along_n)

    if ctas(cta_m, cta_n) != grid_size and ctas(cta_n, cta_m) == grid_size:
        return cta_n, cta_m
    return cta_m, cta_n


def _row_op(record: dict[str, str]) -> LocalOp:
    """The fp16 GEMM an ncu row profiled, with its kernel's CTA tile (oriented as the grid
    says), threads per CTA and stages as attrs."""
    m, k, n = int(record["m"]), int(record["k"]), int(record["n"])
    along_m, along_n = oriented_tile(
        m, n, int(record["cta_m"]), int(record["cta_n"]), int(record["grid_size"])
    )
    attrs = {
        "cta_tile_m": along_m,
        "cta_tile_n": along_n,
        "cta_tile_k": int(record["cta_k"]),
        # the profiled kernel's threads per CTA; the warp tiles follow (warp_tile_for)
        "warps_per_cta": int(record["block_size"]) // 32,
        "pipeline_stages": int(record["stages"]),
    }
    fp16 = DType.FP16
    return LocalOp(
        name="ncu_row",
        kind=OpKind.GEMM,
        phase=Phase.INFERENCE,
        attrs=attrs,
        tensors=(
            TensorSpec(TensorRole.INPUT, (m, k), fp16),
            TensorSpec(TensorRole.WEIGHT, (k, n), fp16),
            TensorSpec(TensorRole.OUTPUT, (m, n), fp16),
        ),
    )


def _predict_row(record: dict[str, str]) -> TrafficRow:
    """The model's DRAM bytes for one ncu row on the A100, beside the measured ones."""
    op = _row_op(record)
    m, k, n = int(record["m"]), int(record["k"]), int(record["n"])
    attrs = op.attrs
    cta = (
        int_attr(attrs, "cta_tile_m"),
        int_attr(attrs, "cta_tile_n"),
        int_attr(attrs, "cta_tile_k"),
    )
    hardware = load_hardware("a100_80gb_sxm")
    sm = hardware.compute.sm
    assert sm is not None
    problem = GemmProblem.from_op(op)
    kernel = build_kernel(op, problem, sm, on_tensor=True)
    grid = grid_of(kernel, problem, sm, occupancy_of(kernel, problem, sm))
    capacity = hardware.level("l2").shared_capacity_bytes
    traffic = gemm_traffic(kernel, problem, grid, int(capacity))
    allocated = traffic.dram_read_bytes + traffic.dram_write_bytes
    write_back = write_back_bytes(traffic.dram_write_bytes, 0.0, allocated, capacity)
    return TrafficRow(
        m=m,
        n=n,
        k=k,
        cta_tile=cta,
        measured_read_bytes=round(float(record["dram_read"]) * REPORTED_TO_BYTES),
        predicted_read_bytes=traffic.dram_read_bytes,
        measured_write_bytes=round(float(record["dram_write"]) * REPORTED_TO_BYTES),
        predicted_write_bytes=traffic.dram_write_bytes,
        predicted_write_back_bytes=round(write_back),
    )


def compare_dram_bytes(data_dir: Path) -> list[TrafficRow]:
    """Model versus measured DRAM bytes for every row of the ncu file under ``data_dir``."""
    path = data_dir / NCU_FILE
    with text_file(path) as handle:
        records = list(csv.DictReader(handle))
    missing = [c for c in _COLUMNS if records and c not in records[0]]
    if not records or missing:
        absent = ", ".join(missing) or "no rows"
        raise ConfigError([f"{path}: expected columns {', '.join(_COLUMNS)} (missing: {absent})"])
    rows = []
    for number, record in enumerate(records, start=2):  # line 1 is the header
        try:
            _check_cell_count(record)
            rows.append(_predict_row(record))
        except (ValueError, OpModelError) as exc:
            raise ConfigError([f"{path}: line {number}: {exc}"]) from None
    return rows


def _check_cell_count(record: dict[str | None, Any]) -> None:
    """ValueError when a CSV row has fewer or more cells than the header has columns (the csv
    module fills a short row with None and keeps a long row's extra cells under None)."""
    extra = record.get(None) or []
    columns = len(record) - (None in record)
    cells = sum(value is not None for key, value in record.items() if key is not None)
    if cells != columns or extra:
        raise ValueError(f"{cells + len(extra)} cells for {columns} columns")


def summarize(rows: list[TrafficRow]) -> TrafficSummary:
    """Median and mean absolute read error and rows within +-10 %; the same for the write-back
    error in units of the bytes written."""
    errors = [abs(row.read_error) for row in rows]
    write_errors = [abs(row.write_error_of_output) for row in rows]
    return TrafficSummary(
        rows=len(rows),
        median_abs_read_error=statistics.median(errors),
        mean_abs_read_error=statistics.mean(errors),
        within_10_percent=sum(e <= 0.10 for e in errors),
        median_abs_write_error_of_output=statistics.median(write_errors),
        writes_within_10_percent_of_output=sum(e <= 0.10 for e in write_errors),
    )
