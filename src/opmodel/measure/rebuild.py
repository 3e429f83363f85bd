"""Rebuild a measured dataset from its ``run.json``, with the current op construction.

``run.json`` keeps every timed run, the energy, the clocks, the device and the grid name of an
``opmodel measure`` run. When the way a case is described as an op changes (an attr added, say
``implementation``), :func:`rebuild_dataset` writes ``gemm.csv``, ``ops.csv``, ``run.json`` and
``SOURCE.md`` again from it: the measured numbers are carried over unchanged, the cases are
matched by label with the named grid's plan, and the original date is kept.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from opmodel.core.errors import ConfigError
from opmodel.measure.protocol import CaseResult, DeviceInfo
from opmodel.measure.runner import MeasureRequest, dry_run
from opmodel.measure.writer import Measured, write_dataset
from opmodel.parsing.textfile import read_json_file

__all__ = ["rebuild_dataset"]


def _load(path: Path) -> dict[str, Any]:
    run = read_json_file(path)
    if not isinstance(run, dict):
        raise ConfigError([f"{path}: not an opmodel measure run.json (expected a JSON object)"])
    missing = [key for key in ("device", "context", "grid", "cases") if key not in run]
    if missing:
        raise ConfigError([f"{path}: not an opmodel measure run.json (missing {missing})"])
    return dict(run)


def _result(case: Any, record: dict[str, Any]) -> CaseResult:
    before, under_load, after = record["sm_clock_mhz"]
    return CaseResult(
        case=case,
        times_ms=tuple(float(t) for t in record["times_ms"]),
        energy_j=record["energy_j"],
        energy_runs=int(record["energy_runs"]),
        energy_loop_s=record["energy_loop_s"],
        sm_clock_mhz_before=float(before),
        sm_clock_mhz_under_load=None if under_load is None else float(under_load),
        sm_clock_mhz_after=float(after),
        mem_clock_mhz=float(record["mem_clock_mhz"]),
        kernel_times_ms=tuple(float(t) for t in record.get("kernel_times_ms", ())),
        kernel_names=tuple(str(n) for n in record.get("kernel_names", ())),
        kernel_timing_note=str(record.get("kernel_timing_note", "")),
    )


def rebuild_dataset(run_json: Path, output_dir: Path, grid: str | None = None) -> dict[str, int]:
    """Write the dataset of ``run_json`` into ``output_dir``; returns rows per CSV file.

    ``grid`` is the grid file or shipped name the run used (default: the name in run.json).
    A label that the grid's plan does not have is an error naming it.
    """
    run = _load(run_json)
    try:
        context = {str(k): str(v) for k, v in run["context"].items()}
        request = MeasureRequest(grid=grid or run["grid"]["name"], hardware=context["hardware"])
        records = [(r["label"], r) for r in run["cases"]]
        failed = [(f["label"], f["reason"]) for f in run.get("failed", [])]
        info = DeviceInfo(**run["device"])
    except (AttributeError, KeyError, TypeError) as exc:
        msg = f"{run_json}: malformed run.json ({type(exc).__name__}: {exc})"
        raise ConfigError([msg]) from None
    the_plan = dry_run(request)
    by_label = {case.label: case for case in the_plan.cases}
    unknown = [label for label, _ in records if label not in by_label]
    if unknown:
        msg = f"{run_json}: {len(unknown)} case(s) not in grid {request.grid}, e.g. {unknown[0]!r}"
        raise ConfigError([msg])
    results = []
    for number, (label, record) in enumerate(records):
        try:
            results.append(_result(by_label[label], record))
        except (KeyError, TypeError, ValueError) as exc:
            msg = f"{run_json}: cases[{number}]: malformed ({type(exc).__name__}: {exc})"
            raise ConfigError([msg]) from None
    return write_dataset(output_dir, info, the_plan.grid, Measured(results, failed), context)
