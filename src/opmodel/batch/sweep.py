"""``opmodel sweep``: predict every row of an op table and write the table with results.

Rows that describe the same op (:func:`~opmodel.batch.optable.row_key`) are predicted once; the
distinct ops are split into chunks and run by an engine (:mod:`opmodel.batch.engines`). The
output holds every input column, in order, then :data:`~opmodel.batch.predict.RESULT_COLUMNS`
(and ``error`` with ``skip_invalid``).
"""

from __future__ import annotations

import functools
import math
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opmodel.batch.engines import EngineChoice, Progress, run_chunks
from opmodel.batch.gc_pause import paused_gc
from opmodel.batch.optable import OP_COLUMNS, op_from_row, row_key
from opmodel.batch.predict import RESULT_COLUMNS, SUMMARY_COLUMNS, resolve, result_row, summary_row
from opmodel.batch.tableio import Table, read_table, table_format, write_table
from opmodel.core.errors import ConfigError, OpModelError
from opmodel.hardware import HardwareSpec, checked_power_state, load_hardware

__all__ = ["SweepOptions", "SweepSummary", "predict_rows", "run_sweep"]

_REQUIRED = ("name", "kind", "phase", "tensors")
_CHUNKS_PER_WORKER = 8
_MIN_CHUNK = 64

_specs: dict[tuple[str, float | None, bool, str], HardwareSpec] = {}


@dataclass(frozen=True, slots=True, kw_only=True)
class SweepSummary:
    """What a sweep did: rows read, distinct ops predicted, rows with errors, wall time."""

    ops: str
    output: str
    hardware: str
    model: str
    engine: str
    rows: int
    unique_ops: int
    error_rows: int
    seconds: float

    @property
    def rows_per_s(self) -> float:
        """Rows predicted per second of wall time (reading and writing included)."""
        return self.rows / self.seconds if self.seconds > 0 else math.inf


def _spec(
    hardware: str,
    clock_hz: float | None,
    burst: bool = False,
    overrides: Mapping[str, Any] | None = None,
) -> HardwareSpec:
    key = (hardware, clock_hz, burst, repr(sorted((overrides or {}).items())))
    spec = _specs.get(key)
    if spec is None:
        spec = load_hardware(hardware, overrides=overrides)
        if clock_hz is not None:
            spec = spec.at_clock(clock_hz)
        if burst:
            spec = spec.in_burst()
        _specs[key] = spec
    return spec


def predict_rows(
    chunk: Sequence[tuple[str, Mapping[str, Any]]], *, hardware: str, options: SweepOptions
) -> list[tuple[object, ...]]:
    """Result values (with ``options.summary_columns``, then :data:`SUMMARY_COLUMNS`' values;
    then an error text or None) for each ``(source, row)`` of ``chunk``.

    Runs in a worker: hardware and model are passed by name or path and resolved there (specs
    are cached per worker). Errors come back as text, one line, never as exceptions.
    """
    burst, summary = options.power_state == "burst", options.summary_columns
    spec = _spec(hardware, options.clock_hz, burst, options.hardware_overrides)
    op_model = resolve(hardware, options.model)[1]
    empty = (None,) * (len(RESULT_COLUMNS) + (len(SUMMARY_COLUMNS) if summary else 0))
    out: list[tuple[object, ...]] = []
    with paused_gc():  # the loop creates no reference cycles (opmodel.batch.gc_pause)
        for source, row in chunk:
            try:
                op = op_from_row(row, source)  # its errors name the source already
            except OpModelError as exc:
                out.append((*empty, str(exc).splitlines()[0]))
                continue
            try:
                profile = op_model.predict(op, spec)
                extra = summary_row(op, profile, spec) if summary else ()
                out.append((*result_row(profile), *extra, None))
            except OpModelError as exc:
                out.append((*empty, f"{source}: {str(exc).splitlines()[0]}"))
    return out


def _check_columns(path: Path, table: Table) -> None:
    missing = [c for c in _REQUIRED if c not in table]
    if missing:
        accepted = ", ".join(OP_COLUMNS)
        msg = f"{path}: missing column '{missing[0]}' (op columns: {accepted})"
        raise ConfigError([msg])
    taken = [c for c in (*RESULT_COLUMNS, *SUMMARY_COLUMNS, "error") if c in table]
    if taken:
        raise ConfigError([f"{path}: column '{taken[0]}' is a result column; rename it"])


def _distinct(table: Table, rows: int) -> tuple[list[int], list[int]]:
    """(row -> distinct-op index, first row of each distinct op)."""
    columns = [table.get(name, [""] * rows) for name in ("kind", "phase", "tensors", "attrs")]
    index_of: dict[tuple[str, str, str, str], int] = {}
    first_rows: list[int] = []
    row_to_op: list[int] = []
    for row, cells in enumerate(zip(*columns, strict=True)):
        key = row_key(dict(zip(("kind", "phase", "tensors", "attrs"), cells, strict=True)))
        index = index_of.get(key)
        if index is None:
            index = index_of[key] = len(first_rows)
            first_rows.append(row)
        row_to_op.append(index)
    return row_to_op, first_rows


@dataclass(frozen=True, slots=True, kw_only=True)
class SweepOptions:
    """How to sweep: the model, where to run (:class:`EngineChoice`), the SM clock to apply
    with :meth:`~opmodel.hardware.HardwareSpec.at_clock` (None: the config's), the power state
    of an unlocked device (``burst``: :meth:`~opmodel.hardware.HardwareSpec.in_burst`), and
    whether invalid rows are recorded in an ``error`` column instead of stopping the sweep,
    whether :data:`~opmodel.batch.predict.SUMMARY_COLUMNS` follow the results, and dotted-path
    overrides of the hardware config for a what-if device (``hardware_overrides``:
    :func:`~opmodel.hardware.load_hardware`)."""

    model: str = "effective_roofline"
    engine: EngineChoice = field(default_factory=EngineChoice)
    clock_hz: float | None = None
    power_state: str = "sustained"
    skip_invalid: bool = False
    summary_columns: bool = False
    hardware_overrides: Mapping[str, Any] | None = None  # load_hardware(..., overrides=)

    def __post_init__(self) -> None:
        for name in ("skip_invalid", "summary_columns"):
            value = getattr(self, name)
            if not isinstance(value, bool):
                raise ConfigError([f"SweepOptions.{name}: must be true or false (got {value!r})"])
        checked_power_state(self.power_state)
        _check_types(self)
        if self.power_state == "burst" and self.clock_hz is not None:
            msg = "power_state 'burst' applies to an unlocked device; clock_hz locks the clock"
            raise ConfigError([msg])


def _check_types(opts: SweepOptions) -> None:
    """What a Python caller may pass by mistake: the model's name, the engine, the clock and
    the overrides of the wrong type, each a one-line :class:`ConfigError`."""
    clock = opts.clock_hz
    checks = (
        ("model", opts.model, isinstance(opts.model, str), "a model name"),
        ("engine", opts.engine, isinstance(opts.engine, EngineChoice), "an EngineChoice"),
        ("clock_hz", clock, clock is None or _number(clock), "None or a number of Hz"),
        (
            "hardware_overrides",
            opts.hardware_overrides,
            _mapping(opts.hardware_overrides),
            "None or a mapping of dotted path -> value",
        ),
    )
    for name, value, ok, accepted in checks:
        if not ok:
            raise ConfigError([f"SweepOptions.{name}: must be {accepted} (got {value!r})"])


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _mapping(value: object) -> bool:
    return value is None or isinstance(value, Mapping)


def _predict(
    work: list[tuple[str, dict[str, object]]],
    hardware_ref: str,
    opts: SweepOptions,
    progress: Progress | None,
) -> list[tuple[object, ...]]:
    """Predict the distinct ops ``work`` (where, row) in chunks on ``opts.engine``: one
    result tuple per op, its last item the error (None when it was predicted)."""
    parallel = opts.engine.workers or os.cpu_count() or 1
    chunk = max(_MIN_CHUNK, math.ceil(len(work) / (_CHUNKS_PER_WORKER * parallel)))
    chunks = [work[i : i + chunk] for i in range(0, len(work), chunk)]
    func = functools.partial(predict_rows, hardware=hardware_ref, options=opts)
    return [r for part in run_chunks(func, chunks, opts.engine, progress) for r in part]


def _attach_results(
    table: dict[str, list[object]],
    results: list[tuple[object, ...]],
    row_to_op: list[int],
    opts: SweepOptions,
) -> int:
    """Add the result columns (and, with ``skip_invalid``, ``error``) to ``table``, each row
    its op's; returns the rows in error. Without ``skip_invalid`` an error stops the sweep
    with the first one's message and how many more rows failed."""
    skip_invalid = opts.skip_invalid
    errors = [r[-1] for r in results if r[-1] is not None]
    if errors and not skip_invalid:
        more = sum(1 for op in row_to_op if results[op][-1] is not None) - 1
        tail = f" (and {more} more rows; --skip-invalid records them)" if more else ""
        raise ConfigError([f"{errors[0]}{tail}"])
    columns = (*RESULT_COLUMNS, *(SUMMARY_COLUMNS if opts.summary_columns else ()))
    for position, column in enumerate(columns):
        table[column] = [results[op][position] for op in row_to_op]
    if skip_invalid:
        table["error"] = [results[op][-1] for op in row_to_op]
    return sum(1 for op in row_to_op if results[op][-1] is not None)


def _as_path(value: object, name: str) -> Path:
    if not isinstance(value, str | Path):
        raise ConfigError([f"run_sweep: {name} must be a path (got {value!r})"])
    return Path(value)


def run_sweep(
    ops: str | Path,
    hardware: str | Path,
    output: str | Path,
    options: SweepOptions | None = None,
    progress: Progress | None = None,
) -> SweepSummary:
    """Predict every row of the table ``ops`` on ``hardware`` and write ``output``.

    ``hardware`` is a shipped config name or a YAML path; ``ops`` and ``output`` are ``.csv``
    or ``.parquet`` files. A row that is not a valid op, or that the model cannot predict,
    stops the sweep with a one-line error naming the file, row and column, unless
    ``options.skip_invalid`` records it in an ``error`` column instead. ``progress(done,
    total)`` is called as distinct ops finish.
    """
    if options is not None and not isinstance(options, SweepOptions):
        raise ConfigError([f"run_sweep: options must be a SweepOptions (got {options!r})"])
    opts = options or SweepOptions()
    burst = opts.power_state == "burst"
    start = time.perf_counter()
    ops_path, out_path = _as_path(ops, "ops"), _as_path(output, "output")
    table_format(out_path)  # reject an unknown output format before any work
    hardware_ref = str(hardware)
    # fail fast, in this process, on a bad config, clock or model
    resolve(_spec(hardware_ref, opts.clock_hz, burst, opts.hardware_overrides), opts.model)
    table = read_table(ops_path)
    _check_columns(ops_path, table)
    rows = len(table["name"])
    row_to_op, first_rows = _distinct(table, rows)
    names = list(table)
    work = [
        (f"{ops_path}: row {row + 1}", {name: table[name][row] for name in names})
        for row in first_rows
    ]
    results = _predict(work, hardware_ref, opts, progress)
    error_rows = _attach_results(table, results, row_to_op, opts)
    write_table(out_path, table)
    return SweepSummary(
        ops=str(ops_path),
        output=str(out_path),
        hardware=hardware_ref,
        model=opts.model,
        engine=opts.engine.kind,
        rows=rows,
        unique_ops=len(first_rows),
        error_rows=error_rows,
        seconds=time.perf_counter() - start,
    )
