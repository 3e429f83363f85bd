"""The measured rows of ``validate-ops``: CSV op tables under ``--data-dir`` (by default
``data/ops/**`` and the ``ops.csv`` of each ``opmodel measure`` run in ``data/measured/*/``)
whose rows describe one op (``name, kind, phase, tensors, attrs``, docs/sweeps.md) and its
measurement (:mod:`opmodel.validation.op_latency` lists the columns). A row whose times were
truncated (``time_truncation_s``, :mod:`opmodel.validation.measured_values`) is compared at its
published time plus half that step. Malformed rows are skipped and counted by reason."""

from __future__ import annotations

import csv
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from opmodel.batch import op_from_row
from opmodel.core.errors import ConfigError
from opmodel.core.op import LocalOp
from opmodel.parsing.textfile import text_file
from opmodel.validation.measured_values import (
    measured_clock_hz,
    measured_times,
)
from opmodel.validation.timing_scope import timing_scope

__all__ = ["OpRow", "load_op_rows"]

_REQUIRED = ("kind", "tensors", "time", "hardware")


@dataclass(frozen=True, slots=True, kw_only=True)
class OpRow:
    """One measured op."""

    op: LocalOp
    time_s: float  # the published time, plus half its truncation step (below)
    hardware: str
    clock_hz: float | None
    source: str
    implementation: str
    label: str
    timing_scope: str = "kernel"  # "kernel" or "event" (opmodel.validation.timing_scope)
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


def _parse(record: dict[str, str], where: str) -> OpRow:
    """One row; ValueError with the reason when it is malformed."""
    for column in _REQUIRED:
        if not (record.get(column) or "").strip():
            raise ValueError(f"empty {column}")
    times = measured_times(record)
    clock = (record.get("clock_mhz") or "").strip()
    try:
        op = op_from_row(record, where)
    except ConfigError as exc:
        raise ValueError(f"invalid op ({exc.problems[0].split(': ', 1)[-1]})") from None
    return OpRow(
        op=op,
        time_s=times.time_s,
        hardware=record["hardware"].strip(),
        clock_hz=measured_clock_hz(clock) if clock else None,
        source=(record.get("source") or "").strip() or "unknown",
        # the column, else the op's own attr (opmodel measure's tables carry only the attr)
        implementation=(record.get("implementation") or "").strip()
        or str(op.attrs.get("implementation", "unknown")),
        label=(record.get("label") or "").strip(),
        timing_scope=timing_scope(record),
        time_min_s=times.time_min_s,
        time_truncation_s=times.truncation_s,
    )


def _files(data_dir: Path) -> list[Path]:
    """``data_dir/ops/**/*.csv`` and the op tables of ``opmodel measure`` runs kept in
    ``data_dir/measured/*/ops.csv``; any ``*.csv`` under ``data_dir`` when it has no ``ops``."""
    ops = data_dir / "ops"
    if not ops.is_dir():
        return sorted(p for p in data_dir.rglob("*.csv") if p.is_file())
    measured = (data_dir / "measured").glob("*/ops.csv")
    return sorted([*(p for p in ops.rglob("*.csv") if p.is_file()), *measured])


def load_op_rows(data_dir: Path) -> tuple[list[OpRow], Counter[str]]:
    """Rows of every op table under ``data_dir/ops`` (or ``data_dir``) and skips by reason."""
    if not data_dir.is_dir():
        raise ConfigError([f"{data_dir}: not a directory (expected a folder of op-table CSVs)"])
    rows: list[OpRow] = []
    skipped: Counter[str] = Counter()
    for path in _files(data_dir):
        with text_file(path) as handle:
            reader = csv.DictReader(handle)
            if not set(_REQUIRED) <= set(reader.fieldnames or ()):
                continue  # not an op table (a GEMM CSV, say)
            for line, record in enumerate(reader, start=2):
                try:
                    rows.append(_parse(record, f"{path}:{line}"))
                except ValueError as exc:
                    skipped[str(exc)] += 1
    if not rows and not skipped:
        columns = ", ".join(_REQUIRED)
        raise ConfigError([f"{data_dir}: no op tables found (CSV files with columns {columns})"])
    return rows, skipped
