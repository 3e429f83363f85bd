"""The measured runs of ``validate-artifact``'s workload mode: EnergAIzer's per-run windows
(``measurements/<gpu>/nvml_parsed.csv``) with the op list of each run's model configuration
(``workloads/all/<name>.json``). Runs whose measurement window (time per pass x passes) is
under :data:`MIN_WINDOW_S` are failed or aborted runs (data/energaizer/SOURCE.md) and are
excluded; fp32 runs have no op list.

Start-up: the harness's window opens before the model process starts, so it includes process
start-up, CUDA initialisation and model loading (SOURCE.md). A failed run measured that part
alone: it crashed at its first pass, after a window of 1.3-2.1 s. Per GPU, the mean window
``S`` and energy ``E_S`` of its failed runs are taken off every run of ``N`` passes before the
comparison: ``time = (window - S) / N`` and ``energy = (E_window - E_S) / N``. A GPU without
failed runs is not corrected (``S = 0``).
"""

from __future__ import annotations

import csv
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from opmodel.core.errors import ConfigError
from opmodel.parsing.textfile import text_file
from opmodel.validation.measured_values import measured_clock_hz, measured_energy_j, measured_ms

__all__ = ["GPU_CONFIGS", "MIN_WINDOW_S", "SWEEP_TAGS", "WorkloadRun", "load_runs"]

GPU_CONFIGS = {
    "a10": "a10",
    "a100": "a100_40gb_pcie",
    "a100_dvfs": "a100_40gb_pcie",
    "h100": "h100_sxm",
}
# measurement sets beside a GPU's main one, by folder: their runs are reported under
# "<config>:<tag>" (the clock sweep of the EnergAIzer artifact, data/energaizer/SOURCE.md)
SWEEP_TAGS = {"a100_dvfs": "dvfs"}
MIN_WINDOW_S = 10.0
_NAME = re.compile(
    r"^(?P<base>.+?)(?:_attn[a-z0-9]+)?(?:_freq(?P<freq>\d+))?_iter(?P<iters>\d+)\.csv$"
)


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkloadRun:
    """One measured run: its op list, hardware, clock and measured time and energy per pass."""

    workload: str
    family: str
    ops_file: Path
    hardware: str
    clock_hz: float
    time_s: float  # per pass, the start-up share taken off
    energy_j: float  # per pass, the start-up share taken off
    passes: int = 1  # forward passes in the measurement window
    startup_s: float = 0.0  # start-up inside the window (mean window of the GPU's failed runs)
    startup_j: float = 0.0  # energy of that start-up
    sweep: str = ""  # the measurement set's tag (SWEEP_TAGS); "" for the GPU's main set
    requested_clock_mhz: float | None = None  # the clock the harness locked (name's freqN)

    @property
    def label(self) -> str:
        """The group the run is reported in: its config, and its sweep's tag if any."""
        return f"{self.hardware}:{self.sweep}" if self.sweep else self.hardware


@dataclass(frozen=True, slots=True)
class _StartUp:
    """Mean window and energy of one GPU's failed runs (start-up only)."""

    window_s: float = 0.0
    energy_j: float = 0.0


def _ops_file(workloads: Path, base: str, freq: str | None) -> Path | None:
    for name in (base, f"{base}_freq{freq}" if freq else base):
        path = workloads / f"{name}.json"
        if path.is_file():
            return path
    return None


def _window(record: Mapping[str, str | None]) -> tuple[re.Match[str], float, float, float] | str:
    """The parsed name, window [s], window energy [J] and SM clock [MHz] of a record, or why
    it cannot be used (a time, energy or clock no run could have produced:
    :mod:`opmodel.validation.measured_values`)."""
    match = _NAME.match(record.get("workload") or "")
    if match is None:
        return "unrecognised workload name"
    try:
        time_ms = measured_ms(record.get("time") or "")
        energy = measured_energy_j(record.get("energy") or "")
        clock = measured_clock_hz(record.get("avg_freq") or "", "avg_freq") / 1e6
    except ValueError as exc:
        reason = str(exc)  # a span's reason names its column; float()'s names the value
        return "time, energy or avg_freq not a number" if reason.startswith("could not") else reason
    passes = int(match["iters"])
    return match, time_ms / 1e3 * passes, energy * passes, clock


def _startup(records: list[dict[str, str]]) -> _StartUp:
    """Mean window and energy of the failed runs (window under :data:`MIN_WINDOW_S`)."""
    windows = [w for w in map(_window, records) if not isinstance(w, str)]
    failed = [w for w in windows if w[1] < MIN_WINDOW_S]
    if not failed:
        return _StartUp()
    return _StartUp(
        window_s=sum(w[1] for w in failed) / len(failed),
        energy_j=sum(w[2] for w in failed) / len(failed),
    )


def _run(
    record: dict[str, str],
    gpu: str,
    workloads: Path,
    skipped: Counter[str],
    startup: _StartUp,
) -> WorkloadRun | None:
    parsed = _window(record)
    if isinstance(parsed, str):
        skipped[parsed] += 1
        return None
    match, window_s, window_j, clock_mhz = parsed
    base, freq, passes = match["base"], match["freq"], int(match["iters"])
    if "_pbf16_" not in base:
        skipped["not bf16 (no op list)"] += 1
        return None
    if window_s < MIN_WINDOW_S:
        skipped[f"measurement window under {MIN_WINDOW_S:g} s (failed run)"] += 1
        return None
    ops_file = _ops_file(workloads, base, freq)
    if ops_file is None:
        skipped["no op list for the workload"] += 1
        return None
    return WorkloadRun(
        workload=base,
        family=base.split("_", 1)[0].removesuffix("model"),
        ops_file=ops_file,
        hardware=GPU_CONFIGS[gpu],
        clock_hz=clock_mhz * 1e6,
        time_s=(window_s - startup.window_s) / passes,
        energy_j=(window_j - startup.energy_j) / passes,
        passes=passes,
        startup_s=startup.window_s,
        startup_j=startup.energy_j,
        sweep=SWEEP_TAGS.get(gpu, ""),
        requested_clock_mhz=float(freq) if freq else None,
    )


def load_runs(root: Path) -> tuple[list[WorkloadRun], Counter[str]]:
    """Measured runs under ``root`` (``measurements/<gpu>/nvml_parsed.csv``, ``workloads/all``),
    each with its GPU's start-up share taken off (module docstring)."""
    workloads = root / "workloads" / "all"
    if not workloads.is_dir():
        raise ConfigError([f"{root}: no workloads/all folder (the EnergAIzer op lists)"])
    runs: list[WorkloadRun] = []
    skipped: Counter[str] = Counter()
    for gpu in sorted(GPU_CONFIGS):
        path = root / "measurements" / gpu / "nvml_parsed.csv"
        if not path.is_file():
            continue
        with text_file(path) as handle:
            records = list(csv.DictReader(handle))
        startup = _startup(records)
        for record in records:
            run = _run(record, gpu, workloads, skipped, startup)
            if run is not None:
                runs.append(run)
    if not runs:
        gpus = ", ".join(sorted(GPU_CONFIGS))
        msg = f"{root}: no usable measured runs (measurements/<gpu>/nvml_parsed.csv, gpu: {gpus})"
        raise ConfigError([msg])
    return runs, skipped
