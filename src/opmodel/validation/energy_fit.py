"""``opmodel calibrate-energy``: fit a device's energy terms on a declared training split.

For one hardware config, the measured forward passes in the workload data (EnergAIzer) are
split deterministically: per model family, runs sorted by name, every third run (index 0, 3,
6, ...) trains and the rest is held out. For every run the model predicts the op list on a
*unit-energy* copy of the config (1 J per FLOP, per byte at hbm and l2, 1 W of active power,
no idle power), so the energy parts it returns are activity counts: kernel seconds, issued
tensor FLOPs, HBM and L2 bytes (vector and SMEM energy keep the config's values). The measured
energy minus what the calibration does not change, ``E - idle x T_pass - E_vector - E_smem``
with the *predicted* pass time, is then fitted as

    active_w x kernel_s + e_tensor x F_tensor + e_hbm x B_hbm + e_l2 x B_l2    (all >= 0)

by non-negative least squares of relative errors (rows divided by the measured energy). Using
the predicted pass time calibrates the energy the model reports end to end; measured times are
never an input at prediction time. The vector energy is not fitted: the vector FLOPs of eager
elementwise ops move with their bytes and time, and a free vector term takes unphysical values
(over 100 pJ per FLOP on the A100 data). The
result is written as a calibration file (:mod:`opmodel.hardware.energy_calibration`) with the
split, the training runs and the errors on both parts.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import yaml

from opmodel.core.errors import ConfigError
from opmodel.core.frozen_dict import FrozenDict
from opmodel.core.jsonify import to_jsonable
from opmodel.hardware import HardwareSpec, load_hardware
from opmodel.hardware.spec import MemorySpec
from opmodel.validation.artifact import WorkloadResult, WorkloadRun, load_runs, predict_runs
from opmodel.validation.host_time import HostTime, fit_host_time, host_gap_s
from opmodel.validation.launch_queue import pass_time_s
from opmodel.validation.metrics import error_metrics
from opmodel.validation.nnls import nnls

__all__ = ["TERMS", "calibrate_energy", "pass_time_s", "training_split"]

TERMS = ("active_w", "tensor_j_per_flop", "hbm_j_per_byte", "l2_j_per_byte")
_FEATURES = ("active", "tensor", "hbm", "l2")


def training_split(runs: list[WorkloadRun]) -> set[str]:
    """Workload names of the training runs: every third run per family, sorted by name."""
    families: dict[str, list[str]] = {}
    for run in runs:
        families.setdefault(run.family, []).append(run.workload)
    return {name for names in families.values() for name in sorted(names)[::3]}


def _unit_spec(spec: HardwareSpec) -> HardwareSpec:
    """``spec`` with unit energies (tensor FLOPs, hbm and l2 bytes, active seconds), so that
    the predicted energy parts count those events; the vector engine and the other levels (SMEM,
    registers) keep the config's energies, which the calibration does not change."""
    compute = dataclasses.replace(
        spec.compute,
        tensor_energy_j_per_flop=FrozenDict(
            dict.fromkeys(spec.compute.tensor_energy_j_per_flop, 1.0)
        ),
    )
    levels = tuple(
        dataclasses.replace(level, energy_j_per_byte=1.0) if level.name in ("hbm", "l2") else level
        for level in spec.memory.levels
    )
    power = dataclasses.replace(spec.power, static_w=0.0, active_w=1.0)
    return dataclasses.replace(
        spec,
        compute=compute,
        memory=MemorySpec(levels=levels),
        power=power,
        calibration=None,
        uncalibrated=None,
    )


def _unfitted_j(terms_j: dict[str, float]) -> float:
    """Energy the calibration keeps from the config: the vector engine and other levels."""
    return sum(joules for name, joules in terms_j.items() if name not in _FEATURES)


def _idle_w(name: str, clock_hz: float) -> float:
    spec = load_hardware(name)
    return spec.without_calibration().at_clock(clock_hz).power.static_w


def _main_runs(hardware: str, workload_dir: Path) -> tuple[list[WorkloadRun], float]:
    """The runs of ``hardware``'s main measurement set (no sweep) and their one clock [MHz];
    none, or several clocks, is an error naming the configs that have runs."""
    every, _ = load_runs(workload_dir)
    runs = [r for r in every if r.hardware == hardware and not r.sweep]
    clocks = {round(r.clock_hz / 1e6) for r in runs}
    if not runs or len(clocks) != 1:
        found = sorted({r.hardware for r in every})
        raise ConfigError(
            [f"calibrate-energy: need runs of '{hardware}' at one clock (runs exist for {found})"]
        )
    return runs, float(clocks.pop())


def calibrate_energy(hardware: str, workload_dir: Path, model: str, output: Path) -> dict[str, Any]:
    """Fit, write the calibration file and return its summary."""
    runs, clock_mhz = _main_runs(hardware, workload_dir)
    training = training_split(runs)

    def unit(name: str, clock_hz: float) -> HardwareSpec:
        spec = load_hardware(name)
        return _unit_spec(spec.without_calibration().at_clock(clock_hz))

    counts = predict_runs(runs, model, spec_of=unit)
    trained = [r for r in counts if r.run.workload in training]
    host = fit_host_time([(r.op_latencies_s, r.run.family, r.run.time_s) for r in trained])
    idle = _idle_w(hardware, runs[0].clock_hz)
    coefficients = _fit_terms(counts, training, idle, host)
    terms: dict[str, float] = {
        **dict(zip(TERMS, coefficients, strict=True)),
        "launch_gap_s": host.launch_gap_s,
        "module_call_s": host.module_call_s,
    }
    runs_in_training = sum(r.workload in training for r in runs)
    document = {
        "hardware": hardware,
        "clock_mhz": clock_mhz,
        "model": model,
        "fitted_on": _fitted_on(workload_dir, hardware, runs_in_training, len(runs)),
        "terms": terms,
        "training_runs": sorted(training),
        "metrics": _metrics(counts, terms, idle, training),
    }
    output.parent.mkdir(parents=True, exist_ok=True)
    header = "# Written by `opmodel calibrate-energy`; fitted values, not datasheet values.\n"
    output.write_text(header + yaml.safe_dump(to_jsonable(document), sort_keys=False))
    return {"output": str(output), **document, "training_runs": runs_in_training}


def _fitted_on(workload_dir: Path, hardware: str, trained: int, total: int) -> str:
    return (
        f"{workload_dir}: {trained} of {total} measured forward passes of "
        f"'{hardware}' (every third run per model family, sorted by name); the rest is held "
        "out; repeated runs of one workload stay on one side. launch_gap_s and "
        "module_call_s: the host time per kernel and per nn.Module call "
        "(opmodel.validation.host_time) minimising the training runs' pass-time MAPE. "
        "Then non-negative least "
        "squares of relative errors on energy - idle power x predicted pass time - vector "
        "and SMEM energy."
    )


def _pass_s(result: WorkloadResult, host: HostTime) -> float:
    latencies = result.op_latencies_s
    return pass_time_s(latencies, host_gap_s(host, result.run.family, len(latencies)))


def _fit_terms(
    results: list[WorkloadResult], training: set[str], idle_w: float, host: HostTime
) -> list[float]:
    """Non-negative least squares, over the training runs, of each run's relative energy
    residual ``(measured - idle x pass time - unfitted terms) / measured`` on its activity
    terms per measured joule (:data:`TERMS`, in that order)."""
    rows, target = [], []
    for result in results:
        if result.run.workload in training:
            measured = result.run.energy_j
            rows.append([result.terms_j.get(f, 0.0) / measured for f in _FEATURES])
            fixed = idle_w * _pass_s(result, host) + _unfitted_j(result.terms_j)
            target.append((measured - fixed) / measured)
    return list(nnls(rows, target))


def _metrics(
    counts: list[WorkloadResult], terms: dict[str, float], idle: float, training: set[str]
) -> dict[str, Any]:
    """Pass-time and energy errors on the training and held-out runs with the fitted terms,
    using the predicted pass time for the idle part (as ``validate-artifact`` does)."""
    out: dict[str, Any] = {}
    host = HostTime(terms["launch_gap_s"], terms["module_call_s"])
    for label, chosen in (
        ("training", [r for r in counts if r.run.workload in training]),
        ("held_out", [r for r in counts if r.run.workload not in training]),
    ):
        times = [_pass_s(r, host) for r in chosen]
        predicted = [
            sum(terms[t] * r.terms_j.get(f, 0.0) for t, f in zip(TERMS, _FEATURES, strict=True))
            + idle * time_s
            + _unfitted_j(r.terms_j)
            for r, time_s in zip(chosen, times, strict=True)
        ]
        m = error_metrics(predicted, [r.run.energy_j for r in chosen])
        t = error_metrics(times, [r.run.time_s for r in chosen])
        out[label] = {
            "count": m.count,
            "energy_mape": m.mape,
            "energy_geomean_ratio": m.geomean_ratio,
            "time_mape": t.mape,
            "time_geomean_ratio": t.geomean_ratio,
        }
    return out
