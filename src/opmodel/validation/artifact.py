"""Workload mode of ``validate-artifact``: whole forward passes against EnergAIzer measurements.

For every measured bf16 run in ``data/energaizer/measurements/<gpu>/nvml_parsed.csv`` the op
list of its model configuration (``workloads/all/<name>.json``) is predicted op by op on the
GPU's config at the measured SM clock (:meth:`HardwareSpec.at_clock`, which also sets idle
power and the core voltage's effect on switching energy when the config has those tables).

    pass latency = the launch queue's finish time (:mod:`opmodel.validation.launch_queue`)
    pass energy  = sum over ops of (op energy - idle power x op latency) + idle power x pass latency

The launch gap is the config's ``kernel_launch_overhead_s`` plus, from its energy
calibration, ``module_call_s`` x the model's ``nn.Module`` calls per launch
(:mod:`opmodel.validation.host_time`): eager PyTorch spends that much host time per kernel and
queues the kernels, which the GPU runs in order, so the GPU idles only where the host falls
behind. The runs, with their start-up taken off and failed runs excluded, are loaded by
:mod:`opmodel.validation.artifact_runs`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from opmodel.core.enums import GEMM_KINDS
from opmodel.core.errors import ConfigError
from opmodel.core.profile import OpProfile
from opmodel.hardware import HardwareSpec, load_hardware
from opmodel.models import get_model
from opmodel.parsing.textfile import read_json_file
from opmodel.validation.artifact_kernels import complete_entries, kernels_from_entry
from opmodel.validation.artifact_runs import (
    GPU_CONFIGS,
    MIN_WINDOW_S,
    SWEEP_TAGS,
    WorkloadRun,
    load_runs,
)
from opmodel.validation.host_time import HostTime, host_gap_s
from opmodel.validation.launch_queue import pass_time_s
from opmodel.validation.metrics import ErrorMetrics, error_metrics

__all__ = [
    "GPU_CONFIGS",
    "MIN_WINDOW_S",
    "SWEEP_TAGS",
    "TENSOR_KINDS",
    "WorkloadResult",
    "WorkloadRun",
    "calibration_split",
    "host_time_of",
    "load_runs",
    "op_list",
    "predict_runs",
]

TENSOR_KINDS = GEMM_KINDS  # WorkloadResult.tensor_kernel_s


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkloadResult:
    """A run with its prediction."""

    run: WorkloadRun
    ops: int
    skipped_ops: Counter[str]
    time_s: float
    energy_j: float
    working_set_bytes: int
    kernel_s: float = 0.0
    tensor_kernel_s: float = 0.0  # the part of kernel_s in GEMM and batched GEMM kernels
    terms_j: dict[str, float] = field(default_factory=dict)
    op_latencies_s: tuple[float, ...] = ()


def _add_terms(terms: dict[str, float], profile: OpProfile, active_w: float) -> None:
    """Add one kernel's energy terms to the pass's: tensor and vector FLOPs, bytes per memory
    level, and active power over its latency."""
    energy = profile.energy
    terms["tensor"] += energy.tensor_j
    terms["vector"] += energy.vector_j
    for level, joules in energy.memory_j.items():
        terms[level] = terms.get(level, 0.0) + joules
    terms["active"] += active_w * profile.latency_s


def op_list(run: WorkloadRun) -> list[Any]:
    """The entries of the run's op list; ConfigError naming the file when it is not a JSON
    list (each entry is checked by :func:`kernels_from_entry`)."""
    entries = read_json_file(run.ops_file)
    if not isinstance(entries, list):
        kind = type(entries).__name__
        msg = f"{run.ops_file}: expected a JSON list of [params, tags] op entries (got a {kind})"
        raise ConfigError([msg])
    return entries


def host_time_of(spec: HardwareSpec) -> HostTime:
    """The config's host time per kernel and, from its energy calibration, per module call."""
    terms = spec.calibration.terms if spec.calibration is not None else None
    call = terms.module_call_s if terms is not None and terms.module_call_s is not None else 0.0
    return HostTime(spec.overhead.kernel_launch_overhead_s, call)


def _predict_run(run: WorkloadRun, spec: HardwareSpec, model_name: str) -> WorkloadResult:
    """Predict every kernel of the run's op list (module docstring): the pass time from the
    launch queue, its energy from the summed terms and idle power over the pass."""
    model = get_model(model_name)
    entries = complete_entries(op_list(run), run.family)
    kernel_s = tensor_s = 0.0
    ops = working_set = 0
    terms: dict[str, float] = dict.fromkeys(("tensor", "vector", "active"), 0.0)
    latencies: list[float] = []
    skipped: Counter[str] = Counter()
    for entry in entries:
        try:
            launched = kernels_from_entry(entry)
        except ValueError as exc:
            skipped[str(exc)] += 1
            continue
        entry_s = 0.0
        for op in launched.kernels:
            profile = model.predict(op, spec)
            entry_s += profile.latency_s
            if op.kind in TENSOR_KINDS:
                tensor_s += profile.latency_s
            _add_terms(terms, profile, spec.power.active_w)
        kernel_s += entry_s
        # one host call launches an entry's kernels: one slot of the launch queue
        latencies.append(entry_s)
        working_set += sum(t.nbytes for t in launched.op.tensors)
        ops += 1
    time_s = pass_time_s(latencies, host_gap_s(host_time_of(spec), run.family, len(latencies)))
    return WorkloadResult(
        run=run,
        ops=ops,
        skipped_ops=skipped,
        time_s=time_s,
        energy_j=sum(terms.values()) + spec.power.static_w * time_s,
        working_set_bytes=working_set,
        kernel_s=kernel_s,
        tensor_kernel_s=tensor_s,
        terms_j=terms,
        op_latencies_s=tuple(latencies),
    )


def predict_runs(
    runs: list[WorkloadRun],
    model_name: str,
    progress: Callable[[int, int], None] | None = None,
    spec_of: Callable[[str, float], HardwareSpec] | None = None,
) -> list[WorkloadResult]:
    """Predict every run (configs loaded once per hardware and clock; ``spec_of(name,
    clock_hz)`` replaces the default ``load_hardware(name).at_clock(clock_hz)``)."""
    specs: dict[tuple[str, float], HardwareSpec] = {}
    results = []
    for index, run in enumerate(runs):
        key = (run.hardware, run.clock_hz)
        if key not in specs:
            specs[key] = (
                spec_of(*key) if spec_of else load_hardware(run.hardware).at_clock(run.clock_hz)
            )
        results.append(_predict_run(run, specs[key], model_name))
        if progress is not None:
            progress(index + 1, len(runs))
    return results


def calibration_split(result: WorkloadResult) -> str:
    """``training`` for a run the config's energy calibration was fitted on (a main-set run at
    the calibration's clock, by its list of training runs); ``held-out`` for any other run the
    calibration reaches (at its clock, or carried to the run's clock by the config's voltage
    table: :func:`~opmodel.hardware.calibrated.with_calibration`); else ``uncalibrated``."""
    spec = load_hardware(result.run.hardware)
    calibration = spec.calibration
    if calibration is None:
        return "uncalibrated"
    at_clock = abs(result.run.clock_hz / 1e6 - calibration.clock_mhz) <= 1.0
    if at_clock and not result.run.sweep and result.run.workload in calibration.training_runs:
        return "training"
    return "held-out" if at_clock or spec.power.core_voltage_mv_by_clock_mhz else "uncalibrated"


def metrics_by(
    results: list[WorkloadResult], key: Callable[[WorkloadResult], str]
) -> dict[str, tuple[ErrorMetrics, ErrorMetrics]]:
    """(latency, energy) metrics per group."""
    groups: dict[str, list[WorkloadResult]] = {}
    for result in results:
        groups.setdefault(key(result), []).append(result)
    return {
        name: (
            error_metrics([r.time_s for r in group], [r.run.time_s for r in group]),
            error_metrics([r.energy_j for r in group], [r.run.energy_j for r in group]),
        )
        for name, group in sorted(groups.items())
    }
