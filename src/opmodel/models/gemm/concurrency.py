"""Concurrency-limited rates and the placement of a wave's CTAs and warps (closed forms).

The central formula of ``effective_roofline`` is Little's law applied to every resource:
a unit that has ``W`` units of work in flight, each taking ``L`` cycles from issue to
completion, cannot deliver more than ``W / L`` per cycle, nor more than its peak:

    rate = min(peak, in_flight / latency)                      (concurrency_limited_rate)

A wave with few CTAs, shallow pipelines or small warp tiles keeps little work in flight and
runs below peak although no resource is saturated: this is what plain rooflines miss for
small and skinny GEMMs. References: Little, "A Proof for the Queuing Formula L = lambda W"
(Operations Research, 1961); Volkov, "Understanding Latency Hiding on GPUs" (PhD thesis, UC
Berkeley, 2016), ch. 4, which applies it to GPU memory and arithmetic throughput.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from opmodel.models.shared.queueing import loaded_rate

__all__ = [
    "LevelStream",
    "MemoryPhases",
    "OccupancyClass",
    "SmspWarps",
    "concurrency_limited_rate",
    "loaded_rate",
    "memory_phases",
    "occupancy_classes",
    "smsp_warps",
]


def concurrency_limited_rate(peak: float, in_flight: float, latency_cycles: float) -> float:
    """``min(peak, in_flight / latency)`` per cycle; the peak when latency is zero."""
    if latency_cycles <= 0:
        return peak
    return min(peak, in_flight / latency_cycles)


class LevelStream(NamedTuple):
    """A wave's demand on one memory level: ``ctas`` CTAs each asking ``bytes_per_stage``
    per pipeline stage from a level of ``peak_per_cycle`` and ``latency_cycles``;
    ``write_back_per_stage``: bytes per CTA and stage the level also writes (another kernel's
    dirty lines evicted), which take its bandwidth but are queued behind the loads."""

    ctas: int
    bytes_per_stage: float
    peak_per_cycle: float
    latency_cycles: float
    write_back_per_stage: float = 0.0


class MemoryPhases(NamedTuple):
    """One memory level's rate and its prologue (first window) and body cycles for a wave."""

    rate_per_cycle: float
    prologue_cycles: float
    body_cycles: float


def memory_phases(
    stream: LevelStream,
    *,
    stage_equivalents: float,
    window_stages: float,
    loaded: bool = False,
) -> MemoryPhases:
    """Prologue and body of ``stream.ctas`` CTAs streaming ``stage_equivalents`` stages each.

    Each CTA keeps ``w = min(window_stages, stage_equivalents)`` stages in flight, so
    ``rate = min(peak, ctas * w * bytes_per_stage / latency)``; one stage of the whole wave
    takes ``ctas * bytes_per_stage / rate`` cycles; the prologue is the first window
    (``w`` stages, at least one latency) and the body the remaining stages. ``loaded`` (what
    the model uses) replaces the unloaded latency with the level's loaded one
    (:func:`opmodel.models.shared.queueing.loaded_rate`, re-exported here).
    """
    window = min(window_stages, stage_equivalents)
    wave_stage_bytes = stream.ctas * stream.bytes_per_stage
    law = loaded_rate if loaded else concurrency_limited_rate
    rate = law(stream.peak_per_cycle, window * wave_stage_bytes, stream.latency_cycles)
    if rate <= 0:
        return MemoryPhases(stream.peak_per_cycle, 0.0, 0.0)
    stage = wave_stage_bytes / rate
    if stream.write_back_per_stage:  # the writes fill the level's idle slots, then its peak
        stage = max(
            stage,
            (wave_stage_bytes + stream.ctas * stream.write_back_per_stage) / stream.peak_per_cycle,
        )
    return MemoryPhases(rate, window * stage, (stage_equivalents - window) * stage)


class OccupancyClass(NamedTuple):
    """``sms`` SMs that each hold ``ctas_per_sm`` CTAs of the wave."""

    sms: int
    ctas_per_sm: int


def occupancy_classes(ctas: int, sm_count: int, resident: int) -> tuple[OccupancyClass, ...]:
    """How the block scheduler spreads ``ctas`` over ``sm_count`` SMs (breadth first, at
    most ``resident`` per SM): ``ctas = q * S + rem`` gives ``rem`` SMs with ``q + 1`` CTAs and
    ``S - rem`` with ``q``; the busier class comes first; empty classes are left out."""
    full = min(ctas, sm_count * resident)
    q, rem = divmod(full, sm_count)
    classes = []
    if rem:
        classes.append(OccupancyClass(rem, q + 1))
    if q:
        classes.append(OccupancyClass(sm_count - rem, q))
    return tuple(classes)


class SmspWarps(NamedTuple):
    """Math warps on the busiest SMSP of an SM, and how many SMSPs have any."""

    busiest: int
    active_smsps: int


def smsp_warps(ctas_per_sm: int, math_warps_per_cta: int, smsps_per_sm: int) -> SmspWarps:
    """Warps go to SMSPs round-robin by warp slot (warp ``i`` on SMSP ``i mod smsps``), so
    ``W = ctas * warps`` math warps give ``ceil(W / smsps)`` on the busiest SMSP."""
    warps = ctas_per_sm * math_warps_per_cta
    return SmspWarps(math.ceil(warps / smsps_per_sm), min(smsps_per_sm, warps))
