"""``opmodel measure``: plan a grid (``dry_run``) or run it on a GPU and write the dataset."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from opmodel.hardware import load_hardware
from opmodel.measure.backend import TorchBackend
from opmodel.measure.grid import load_grid
from opmodel.measure.plan import Plan, plan
from opmodel.measure.protocol import Backend, CaseResult
from opmodel.measure.writer import Measured, write_dataset
from opmodel.models import get_model

__all__ = ["MeasureRequest", "dry_run", "run_measurements"]

Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True, kw_only=True)
class MeasureRequest:
    """What to measure: the grid (name or path), the opmodel config of the GPU, where to write,
    an optional SM clock to lock (MHz) and the CUDA device index."""

    grid: str
    hardware: str
    output_dir: str | None = None
    lock_sm_clock_mhz: float | None = None
    device: int = 0
    estimate_model: str = "effective_roofline"
    command: str = "opmodel measure"


def dry_run(request: MeasureRequest) -> Plan:
    """The plan and its time estimate on the request's hardware config; needs no GPU."""
    grid = load_grid(request.grid)
    return plan(grid, load_hardware(request.hardware), get_model(request.estimate_model))


def run_measurements(
    request: MeasureRequest, backend: Backend | None = None, progress: Progress | None = None
) -> dict[str, object]:
    """Measure every case of the grid with ``backend`` (a :class:`TorchBackend` on
    ``request.device`` by default), write the dataset to ``request.output_dir`` and return a
    summary (files, rows, seconds, the estimate it had, failed cases, whether interrupted).

    A case whose measurement raises (out of memory, an op the installed PyTorch lacks) is
    recorded with its reason in SOURCE.md and run.json and the grid goes on. A
    KeyboardInterrupt (Ctrl-C; ``opmodel measure`` also raises it on SIGTERM) stops the grid;
    what was measured is written, and SOURCE.md says after how many cases it stopped."""
    the_plan = dry_run(request)  # validates grid and hardware before touching the GPU
    if request.output_dir is None:
        msg = "run_measurements: output_dir is required (or use dry_run)"
        raise ValueError(msg)
    gpu = backend if backend is not None else TorchBackend(request.device)
    info = gpu.device_info()
    start = time.perf_counter()
    results, failed, interrupted, lock = _measure_locked(gpu, request, the_plan, progress)
    seconds = time.perf_counter() - start
    total = len(the_plan.cases)
    context = {
        "hardware": request.hardware,
        "command": request.command,
        "lock": lock,
        "completion": f"interrupted after {len(results) + len(failed)} of {total} cases"
        if interrupted
        else f"all {total} cases run",
    }
    rows = write_dataset(
        Path(request.output_dir), info, the_plan.grid, Measured(results, failed), context
    )
    return {
        "output_dir": request.output_dir,
        "gpu": info.gpu_name,
        "cases": len(results),
        "rows": rows,
        "seconds": round(seconds, 1),
        "estimated_s": round(the_plan.total_s, 1),
        "clock_lock": lock,
        "failed": len(failed),
        "interrupted": interrupted,
    }


def _measure_locked(
    gpu: Backend, request: MeasureRequest, the_plan: Plan, progress: Progress | None
) -> tuple[list[CaseResult], list[tuple[str, str]], bool, str]:
    """:func:`_measure_cases` with the SM clock locked as requested (and unlocked afterwards,
    whatever happens); also returns what SOURCE.md says about the lock."""
    locked = False
    if request.lock_sm_clock_mhz is not None:
        locked = gpu.lock_sm_clock(request.lock_sm_clock_mhz)
    try:
        results, failed, interrupted = _measure_cases(gpu, the_plan, progress)
    finally:
        if locked:
            gpu.unlock_clocks()
    return results, failed, interrupted, _lock_text(request.lock_sm_clock_mhz, locked)


def _measure_cases(
    gpu: Backend, the_plan: Plan, progress: Progress | None
) -> tuple[list[CaseResult], list[tuple[str, str]], bool]:
    """Measure the plan's cases in order: the results, the failed cases with their reasons,
    and whether a KeyboardInterrupt stopped the grid (what was measured is kept)."""
    results: list[CaseResult] = []
    failed: list[tuple[str, str]] = []
    try:
        for index, case in enumerate(the_plan.cases):
            try:
                results.append(gpu.measure(case, the_plan.grid))
            except Exception as exc:  # a failing case is recorded and the grid goes on
                failed.append((case.label, _reason(exc)))
            if progress is not None:
                progress(index + 1, len(the_plan.cases))
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM in the CLI: keep what was measured
        return results, failed, True
    return results, failed, False


def _lock_text(requested_mhz: float | None, locked: bool) -> str:
    """What SOURCE.md and the summary say about the SM clock lock."""
    if requested_mhz is None:
        return "not requested (clocks free)"
    if locked:
        return f"locked at {requested_mhz:.0f} MHz"
    return f"requested {requested_mhz:.0f} MHz, not permitted (clocks free)"


def _reason(exc: Exception) -> str:
    """One line: the exception's type and the first line of its message."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
