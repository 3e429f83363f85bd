"""A GEMM kernel's cycles in plain float arithmetic: the ranking hot path of kernel selection.

:func:`kernel_cycles` evaluates the equations of :mod:`opmodel.models.gemm.phases` (first
wave cold, steady full waves, tail; the warp-specialised overlap of a wave's prologue with the
previous epilogue) without building the typed waves. :func:`~opmodel.models.gemm.phases.
kernel_phases` gives the same total, explained; the tests check that they agree.
"""

from __future__ import annotations

from collections.abc import Sequence

from opmodel.models.gemm.concurrency import loaded_rate
from opmodel.models.gemm.cta_work import CtaWork
from opmodel.models.gemm.device import DeviceRates
from opmodel.models.gemm.occupancy import Grid
from opmodel.models.gemm.phases import (
    LocalStage,
    busiest_ctas_per_sm,
    epilogue_cycles,
    local_stage,
)
from opmodel.models.gemm.warp_specialised import hidden_cycles, overlap_dram_bytes

__all__ = ["kernel_cycles"]


def kernel_cycles(
    w: CtaWork,
    r: DeviceRates,
    grid: Grid,
    resident: int,
    *,
    local_stages: Sequence[LocalStage] | None = None,
) -> float:
    """``first + (full_waves - 1) * steady + tail + fixed`` cycles, without building the typed
    waves. ``local_stages[c - 1]`` is the local stage of an SM holding ``c`` CTAs
    (``c = 1 .. resident``) when the caller has them cached; full waves run ``resident``
    CTAs on every SM. The first and the steady full waves differ only in the latency of their
    L2 requests (cold: DRAM's), so they share their local and epilogue numbers."""
    full, tail = grid.full_waves, grid.tail_ctas
    k = w.k_iterations
    window = min(w.window_stages, k)
    cold = r.dram_latency_cycles
    warm = (1 - w.dram_fraction) * r.l2_latency_cycles + w.dram_fraction * cold
    total: float = r.fixed_overhead_cycles
    full_epilogue = 0.0
    if full:
        ctas = grid.ctas_per_wave
        stage = _stage_cycles(w, r, resident, local_stages)
        full_epilogue = epilogue_cycles(w, r, ctas)
        memories = _memory_cycles(w, r, ctas, window, (cold, warm) if full > 1 else (cold,))
        total += _wave_cycles(k, window, stage, memories[0], full_epilogue)
        if full > 1:
            memory = memories[1]
            total += (full - 1) * _wave_cycles(k, window, stage, memory, full_epilogue)
            if w.overlap_epilogue:
                joint = overlap_dram_bytes(w, ctas, ctas)
                hidden = hidden_cycles(
                    window * memory, full_epilogue, joint, r.dram_bytes_per_cycle
                )
                total -= (full - 1) * hidden
    if tail:
        heavy = busiest_ctas_per_sm(tail, r.sm_count, resident)
        stage = _stage_cycles(w, r, heavy, local_stages)
        (memory,) = _memory_cycles(w, r, tail, window, (warm if full else cold,))
        total += _wave_cycles(k, window, stage, memory, epilogue_cycles(w, r, tail))
        if w.overlap_epilogue and full:  # under the last full wave's epilogue
            joint = overlap_dram_bytes(w, tail, grid.ctas_per_wave)
            total -= hidden_cycles(window * memory, full_epilogue, joint, r.dram_bytes_per_cycle)
    return total


def _stage_cycles(
    w: CtaWork, r: DeviceRates, ctas_per_sm: int, cached: Sequence[LocalStage] | None
) -> float:
    """``max(t_tensor, t_smem)`` of one stage on an SM holding ``ctas_per_sm`` CTAs."""
    local = cached[ctas_per_sm - 1] if cached else local_stage(w.local, r, ctas_per_sm)
    return max(local.tensor_cycles, local.smem_cycles)


def _memory_cycles(
    w: CtaWork, r: DeviceRates, ctas: int, window: int, l2_latencies: tuple[float, ...]
) -> list[float]:
    """One memory stage of a wave of ``ctas`` CTAs for each latency of its L2 requests (the
    cold and the warm full waves share their DRAM term): ``max`` over L2 and DRAM of
    ``bytes / loaded_rate(peak, window * bytes, latency)`` (0 for a level that moves none),
    DRAM also at least its loads plus the written-back dirty lines at the peak
    (:func:`~opmodel.models.gemm.concurrency.memory_phases`)."""
    moved = ctas * w.dram_bytes
    rate = loaded_rate(r.dram_bytes_per_cycle, window * moved, r.dram_latency_cycles)
    dram = moved / rate if rate > 0 else 0.0
    if w.dram_write_back_bytes:
        dram = max(dram, (moved + ctas * w.dram_write_back_bytes) / r.dram_bytes_per_cycle)
    moved = ctas * w.l2_bytes
    stages = []
    for latency in l2_latencies:
        rate = loaded_rate(r.l2_bytes_per_cycle, window * moved, latency)
        stages.append(max(moved / rate if rate > 0 else 0.0, dram))
    return stages


def _wave_cycles(k: int, window: int, stage: float, memory: float, epilogue: float) -> float:
    """``prologue + body + epilogue`` of a wave whose local stage takes ``stage`` cycles and
    memory stage ``memory``: ``window * memory + max(k * stage, (k - window) * memory + stage)
    + epilogue`` (:func:`~opmodel.models.gemm.phases.wave_numbers`)."""
    body = k * stage
    late = (k - window) * memory + stage
    return window * memory + (late if late > body else body) + epilogue
