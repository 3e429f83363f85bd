"""The provenance files of a measured dataset: ``run.json`` (device, grid settings and every
timed run, from which ``opmodel.measure.rebuild`` can write the dataset again) and
``SOURCE.md`` (what, where, when and how, in the form of ``data/*/SOURCE.md``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

from opmodel.measure.grid import MeasureGrid
from opmodel.measure.protocol import CaseResult, DeviceInfo

__all__ = ["Measured", "run_record", "source_md"]


@dataclass(frozen=True, slots=True)
class Measured:
    """What a run produced: the measured cases and the (label, reason) of those that raised."""

    results: Sequence[CaseResult]
    failed: Sequence[tuple[str, str]] = ()


def _failures_md(failed: Sequence[tuple[str, str]]) -> str:
    if not failed:
        return ""
    lines = "\n".join(f"- `{label}`: {reason}" for label, reason in failed)
    return f"\n## Cases that failed (not in the CSVs)\n{lines}\n"


def _kernel_record(result: CaseResult) -> dict[str, object]:
    return {
        "kernel_times_ms": list(result.kernel_times_ms),
        "kernel_names": list(result.kernel_names),
        "kernel_timing_note": result.kernel_timing_note,
    }


def _kernel_method(grid: MeasureGrid, results: Sequence[CaseResult]) -> str:
    if not grid.kernel_timing:
        return ""
    timed = sum(1 for r in results if r.kernel_times_ms)
    return (
        "\n`kernel_time` (kernel timing on): the median over the repeats, run again under the "
        "PyTorch profiler, of the summed durations of the device activities each launched "
        f"(CUPTI; no event or launch gaps); {timed} of {len(results)} cases have it "
        "(run.json gives the reason for the others)."
    )


def _clock_under_load(results: Sequence[CaseResult]) -> str:
    """The SM clock NVML read while the energy loops ran: min / median / max over cases."""
    loads = sorted(r.sm_clock_mhz_under_load for r in results if r.sm_clock_mhz_under_load)
    if not loads:
        return "not read under load (energy off)"
    return (
        f"{loads[0]:.0f} / {loads[len(loads) // 2]:.0f} / {loads[-1]:.0f} MHz (min / median / max "
        "over cases, read by NVML while each energy loop ran)"
    )


def source_md(
    info: DeviceInfo,
    grid: MeasureGrid,
    results: Sequence[CaseResult],
    context: dict[str, str],
    failed: Sequence[tuple[str, str]],
) -> str:
    """SOURCE.md of a measured dataset: the device, versions, date, command, clocks, grid
    settings, the method, the files and the failed cases."""
    clock = _clock_under_load(results)
    return f"""# Measured with `opmodel measure`

- GPU: {info.gpu_name} ({info.sm_count} SMs, L2 {info.l2_bytes} B)
- opmodel hardware config: `{context["hardware"]}`
- Driver {info.driver_version}, CUDA {info.cuda_version}, PyTorch {info.torch_version}
- Date (UTC): {context["date"]}
- Command: `{context["command"]}`
- SM clock lock: {context["lock"]}
- SM clock under load: {clock}
- Grid `{grid.name}`: {context.get("completion", "all cases run")}; {len(results)} measured,
  {len(failed)} failed; warm-up {grid.warmup}, {grid.repeats} timed runs
  (median reported), L2 flush {_flush_md(grid)}, energy
  {"on, loops of >= " + str(grid.energy_loop_s) + " s" if grid.energy else "off"}

## Method
Timing: CUDA events around one run of the op's PyTorch kernel (eager, one kernel per case
except where PyTorch splits an op), after `warmup` untimed runs; with L2 flush a buffer of twice
the L2 size is overwritten before each timed run. `time` is the median in ms, `time_min` and
`time_max` the extremes. Energy: NVML total-energy counter (mJ) read before and after at least
`energy_loop_s` of back-to-back runs; `energy` is joules per run, board energy including idle
power. `clock_mhz` is the SM clock NVML reported while that loop ran; `sm_clock_mhz_before` /
`_after` bracket the case.{_kernel_method(grid, results)}

## Files
- `gemm.csv`: GEMM and batched GEMM in the GEMM latency schema (`opmodel validate-gemm-latency
  --data-dir .`); `dtype` fp32 with `compute_dtype` tf32 marks TF32 matmuls.
- `ops.csv`: the other ops as op-table rows (docs/sweeps.md) with the same measured columns.
- `run.json`: device, settings and every timed run.

Units: ms (time), J (energy), MHz (clocks). Produced by the user's own run; no third-party data.
{_failures_md(failed)}"""


def _flush_md(grid: MeasureGrid) -> str:
    """The flush setting as SOURCE.md states it, with the idle wait after it if any."""
    if not grid.flush_l2:
        return "off"
    if grid.flush_idle_us > 0:
        return f"on, then {grid.flush_idle_us:g} µs idle (a spin kernel) before each timed run"
    return "on"


def run_record(
    info: DeviceInfo, grid: MeasureGrid, measured: Measured, context: dict[str, str]
) -> dict[str, object]:
    """run.json: the device, the context, the grid's settings, every case's raw times, energy
    and clocks (and kernel-scope times when timed), and the failed cases with their reasons."""
    return {
        "device": asdict(info),
        "context": context,
        "grid": {
            "name": grid.name,
            "warmup": grid.warmup,
            "repeats": grid.repeats,
            "flush_l2": grid.flush_l2,
            "flush_idle_us": grid.flush_idle_us,
            "energy": grid.energy,
            "energy_loop_s": grid.energy_loop_s,
            "kernel_timing": grid.kernel_timing,
        },
        "cases": [
            {
                "label": r.case.label,
                "times_ms": list(r.times_ms),
                "energy_j": r.energy_j,
                "energy_runs": r.energy_runs,
                "energy_loop_s": r.energy_loop_s,
                "sm_clock_mhz": [
                    r.sm_clock_mhz_before,
                    r.sm_clock_mhz_under_load,
                    r.sm_clock_mhz_after,
                ],
                "mem_clock_mhz": r.mem_clock_mhz,
                **(_kernel_record(r) if grid.kernel_timing else {}),
            }
            for r in measured.results
        ],
        "failed": [{"label": label, "reason": reason} for label, reason in measured.failed],
    }
