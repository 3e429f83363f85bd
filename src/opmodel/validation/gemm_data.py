"""Read measured GEMM latency rows from CSV files (schema in docs/validation.md).

Columns: ``time`` [ms], ``batch``, ``dimM``, ``dimN``, ``dimK``; optional ``trans`` (two letters,
N or T, for A and B), ``dtype`` (default fp16), ``compute_dtype``, ``hardware`` (an opmodel config
name), ``clock_mhz``, ``energy`` [J], ``source``, ``label`` and kernel columns ``cta_tile_m``,
``cta_tile_n``, ``cta_tile_k``, ``pipeline_stages``, with ``block_size`` (threads per CTA, an
EnergAIzer column) giving ``warps_per_cta`` when the CTA tile is given (a row without a CTA
tile runs the kernel selection picks, whatever its block size). A non-empty ``kernel_time``
[ms] (``opmodel measure`` with ``kernel_timing``: the kernels alone, without event gaps) is
used in place of ``time``; else an optional ``time_min`` [ms], the fastest of the timed repeats
whose median ``time`` is, gives the row's repeat spread (``GemmRow.repeat_spread``);
``time_truncation_s`` [s], the step each timed sample was truncated to (Vidur's whole
microseconds, :mod:`opmodel.validation.measured_values`), adds half that step. EnergAIzer
per-kernel files
work too: when ``hardware`` is absent the file name decides (``yz8_`` -> a100_40gb_pcie,
``a10_`` -> a10) and ``freqNNN`` in it gives the clock. Malformed rows are skipped and counted
by reason.
"""

from __future__ import annotations

import csv
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from opmodel.core.dtypes import DType
from opmodel.core.errors import ConfigError
from opmodel.hardware import checked_power_state
from opmodel.parsing.textfile import text_file
from opmodel.validation.measured_values import (
    measured_clock_hz,
    measured_energy_j,
    measured_times,
)

__all__ = ["GemmRow", "LoadedRows", "load_gemm_rows"]

_FILE_HARDWARE = (("yz8_", "a100_40gb_pcie"), ("a10_", "a10"))
_KERNEL_COLUMNS = ("cta_tile_m", "cta_tile_n", "cta_tile_k", "pipeline_stages")
WARP_THREADS = 32  # threads per warp on NVIDIA GPUs (CUDA C++ Programming Guide)


@dataclass(frozen=True, slots=True, kw_only=True)
class GemmRow:
    """One measured GEMM."""

    time_s: float
    batch: int
    m: int
    n: int
    k: int
    transpose_a: bool
    transpose_b: bool
    dtype: DType
    compute_dtype: DType | None
    hardware: str
    clock_hz: float | None
    source: str
    label: str
    kernel: dict[str, int] = field(hash=False, compare=False)
    file: str
    energy_j: float | None = None
    l2_dirty_bytes: int = 0  # what a flush wrote before each timed run (optional column)
    # how the kernels ran (optional column): "sustained" (back-to-back, the board's average-power
    # limit engaged) or "burst" (one kernel at a time after idle time: HardwareSpec.in_burst)
    power_state: str = "sustained"
    # the fastest of the timed repeats (optional ``time_min`` column, ``opmodel measure``'s),
    # when ``time`` (their median) is the row's time
    time_min_s: float | None = None
    # the step each timed sample was truncated to (optional ``time_truncation_s`` column,
    # opmodel.validation.measured_values); half of it is in ``time_s``
    time_truncation_s: float = 0.0

    @property
    def repeat_spread(self) -> float | None:
        """Median over the fastest repeat; None without ``time_min``."""
        return self.time_s / self.time_min_s if self.time_min_s else None


@dataclass(frozen=True, slots=True)
class LoadedRows:
    """Usable rows and the count of skipped ones by reason."""

    rows: list[GemmRow]
    skipped: Counter[str]


def _hardware_from_name(path: Path) -> str | None:
    return next((hw for prefix, hw in _FILE_HARDWARE if path.name.startswith(prefix)), None)


def _parse(record: dict[str, str], path: Path) -> GemmRow:
    """One row; ValueError with the reason when it is malformed."""
    times = measured_times(record)
    dims = [int(record.get(name) or 1) for name in ("batch", "dimM", "dimN", "dimK")]
    if min(dims) <= 0:
        raise ValueError("non-positive dimension")
    hardware = record.get("hardware") or _hardware_from_name(path)
    if not hardware:
        raise ValueError("no hardware column or known file prefix")
    trans = (record.get("trans") or "NN").upper()
    if len(trans) != 2 or set(trans) - {"N", "T"}:
        raise ValueError(f"trans must be two of N/T (got {trans!r})")
    freq = re.search(r"freq(\d+)", path.name)
    clock = record.get("clock_mhz") or (freq.group(1) if freq else "")
    return GemmRow(
        time_s=times.time_s,
        batch=dims[0],
        m=dims[1],
        n=dims[2],
        k=dims[3],
        transpose_a=trans[0] == "T",
        transpose_b=trans[1] == "T",
        dtype=DType(record.get("dtype") or "fp16"),
        compute_dtype=DType(record["compute_dtype"]) if record.get("compute_dtype") else None,
        hardware=hardware,
        clock_hz=measured_clock_hz(clock) if clock else None,
        source=record.get("source") or path.stem,
        label=record.get("label") or "",
        kernel=_kernel(record),
        file=str(path),
        energy_j=measured_energy_j(text) if (text := record.get("energy")) else None,
        l2_dirty_bytes=_dirty(record.get("l2_dirty_bytes")),
        power_state=_power_state(record.get("power_state")),
        time_min_s=times.time_min_s,
        time_truncation_s=times.truncation_s,
    )


def _power_state(text: str | None) -> str:
    """The optional ``power_state`` column: one of :data:`POWER_STATES`, sustained when empty."""
    return checked_power_state(text) if text else "sustained"


def _dirty(text: str | None) -> int:
    """The optional ``l2_dirty_bytes`` column: an integer >= 0, 0 when empty."""
    if not text:
        return 0
    value = int(text)
    if value < 0:
        raise ValueError(f"l2_dirty_bytes must be >= 0 (got {value})")
    return value


def _kernel(record: dict[str, str]) -> dict[str, int]:
    """The row's kernel attrs: the tile columns, and ``warps_per_cta`` from ``block_size``
    when a CTA tile is given; ValueError for a block size that is not whole warps."""
    kernel = {c: int(record[c]) for c in _KERNEL_COLUMNS if record.get(c)}
    threads = record.get("block_size")
    if threads and any(c.startswith("cta_tile_") for c in kernel):
        warps, rest = divmod(int(threads), WARP_THREADS)
        if warps <= 0 or rest:
            raise ValueError(f"block_size must be a positive multiple of 32 (got {threads})")
        kernel["warps_per_cta"] = warps
    return kernel


def load_gemm_rows(data_dir: Path) -> LoadedRows:
    """Every GEMM row in the CSV files under ``data_dir`` that carry the latency columns."""
    if not data_dir.is_dir():
        raise ConfigError([f"{data_dir}: not a directory"])
    rows: list[GemmRow] = []
    skipped: Counter[str] = Counter()
    for path in sorted(data_dir.rglob("*.csv")):
        with text_file(path) as handle:
            reader = csv.DictReader(handle)
            if not {"time", "dimM", "dimN", "dimK"} <= set(reader.fieldnames or ()):
                continue  # not a GEMM latency file
            for record in reader:
                try:
                    rows.append(_parse(record, path))
                except (ValueError, KeyError) as exc:
                    skipped[f"malformed row: {exc}"] += 1
    if not rows:
        raise ConfigError([f"{data_dir}: no CSV file with columns time, dimM, dimN, dimK"])
    return LoadedRows(rows, skipped)
