"""Expand a measurement grid into cases (:class:`~opmodel.measure.case.Case`, with the op each
measures) and an estimate of run time.

The estimate is what ``opmodel measure --dry-run`` prints: start-up (:data:`START_S`), then for
each case set-up (allocation and initialisation, :data:`SETUP_S`), the untimed warm-up runs, the
timed runs with their L2 flush (``2 x L2 bytes`` written at HBM bandwidth) and host timing
overhead (:data:`TIMED_RUN_OVERHEAD_S`), and the energy loop. Kernel times come from a model's
prediction on the target hardware config, so the estimate is as good as the model
(effective_roofline: within about 20 % on GEMMs).
"""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass

from opmodel.core.enums import OpKind
from opmodel.core.model import OpModel
from opmodel.hardware import HardwareSpec
from opmodel.measure.case import Case, grouped_sizes
from opmodel.measure.grid import FLUSH_L2_MULTIPLE, REQUIRED_SIZES, MeasureGrid, OpGrid

__all__ = [
    "PROFILER_SESSION_S",
    "SETUP_S",
    "START_S",
    "TIMED_RUN_OVERHEAD_S",
    "Case",
    "Plan",
    "expand",
    "grouped_sizes",
    "plan",
]

START_S = 20.0  # estimate: import PyTorch, create the CUDA context, first library handles
SETUP_S = 0.02  # estimate: allocate and fill the case's tensors, build the callable
TIMED_RUN_OVERHEAD_S = 30e-6  # estimate: two CUDA event records and a synchronise per timed run
# estimate: starting and stopping the PyTorch profiler twice and reading its records
PROFILER_SESSION_S = 0.05


def _variants(entry: OpGrid) -> list[tuple[str, str | None, bool, bool, str, str]]:
    trans = entry.trans if entry.kind in (OpKind.GEMM, OpKind.BATCHED_GEMM) else ("NN",)
    if entry.kind is OpKind.GROUPED_GEMM:  # NT (the default): along M; TN: along K
        trans = ("NT",) if entry.trans == ("NN",) else entry.trans
    named = entry.kind in (OpKind.ELEMENTWISE, OpKind.OPTIMIZER)
    functions: tuple[str | None, ...] = entry.functions if named else (None,)
    causal = entry.causal if entry.kind is OpKind.ATTENTION_PREFILL else (False,)
    broadcast = entry.broadcast if entry.kind is OpKind.ELEMENTWISE else ("none",)
    return list(
        itertools.product(trans, functions, causal, entry.backward, entry.sdpa_backends, broadcast)
    )


def expand(grid: MeasureGrid) -> list[Case]:
    """Every case of ``grid``, in grid order, without duplicates."""
    cases: dict[Case, None] = {}
    for entry in grid.ops:
        names = REQUIRED_SIZES[entry.kind]
        for dtype in entry.dtypes:
            for values in itertools.product(*(entry.sizes[name] for name in names)):
                sizes = tuple(zip(names, values, strict=True))
                for trans, function, causal, backward, sdpa, broadcast in _variants(entry):
                    case = Case(
                        kind=entry.kind,
                        dtype=dtype,
                        sizes=sizes,
                        trans=trans,
                        function=function,
                        causal=causal,
                        backward=backward,
                        sdpa_backend=sdpa,
                        broadcast=broadcast,
                    )
                    cases[case] = None
    return list(cases)


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """The cases of a grid with their predicted kernel time and estimated measurement time."""

    grid: MeasureGrid
    hardware: str
    model: str
    cases: tuple[Case, ...]
    kernel_s: tuple[float, ...]
    case_s: tuple[float, ...]

    @property
    def total_s(self) -> float:
        """Estimated wall time of the whole run (start-up plus every case)."""
        return START_S + sum(self.case_s)

    def summary(self) -> dict[str, object]:
        """Counts by kind and the time estimate, for ``--dry-run``."""
        by_kind = Counter(case.kind.value for case in self.cases)
        time_by_kind: dict[str, float] = {}
        for case, seconds in zip(self.cases, self.case_s, strict=True):
            time_by_kind[case.kind.value] = time_by_kind.get(case.kind.value, 0.0) + seconds
        return {
            "grid": self.grid.name,
            "hardware": self.hardware,
            "estimate_model": self.model,
            "cases": len(self.cases),
            "cases_by_kind": dict(by_kind),
            "estimated_s_by_kind": {k: round(v, 1) for k, v in time_by_kind.items()},
            "estimated_total_s": round(self.total_s, 1),
        }


def _case_seconds(grid: MeasureGrid, hardware: HardwareSpec, kernel_s: float) -> float:
    launch = hardware.overhead.kernel_launch_overhead_s
    run = kernel_s + launch
    l2 = hardware.levels_by_name.get("l2")
    flush = (
        FLUSH_L2_MULTIPLE * l2.size_bytes / hardware.hbm.bandwidth_bytes_per_s + launch
        if l2
        else 0.0
    ) + grid.flush_idle_us * 1e-6
    timed = grid.repeats * (run + (flush if grid.flush_l2 else 0.0) + TIMED_RUN_OVERHEAD_S)
    energy = max(grid.energy_loop_s, run) + TIMED_RUN_OVERHEAD_S if grid.energy else 0.0
    # kernel timing: the repeats again in one profiler session, after two flushes alone
    profiled = timed + 2 * flush + PROFILER_SESSION_S if grid.kernel_timing else 0.0
    return SETUP_S + grid.warmup * run + timed + energy + profiled


def plan(grid: MeasureGrid, hardware: HardwareSpec, model: OpModel) -> Plan:
    """The cases of ``grid`` with times predicted by ``model`` on ``hardware``."""
    cases = expand(grid)
    kernel_s = tuple(model.predict(case.op(), hardware).latency_s for case in cases)
    return Plan(
        grid=grid,
        hardware=hardware.name,
        model=model.name,
        cases=tuple(cases),
        kernel_s=kernel_s,
        case_s=tuple(_case_seconds(grid, hardware, t) for t in kernel_s),
    )
