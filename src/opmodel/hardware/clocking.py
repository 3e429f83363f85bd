"""A hardware spec at another SM clock: rates, latencies, power tables and calibration.

:meth:`HardwareSpec.at_clock` delegates here. Engine peaks and the bandwidth of ``core``-domain
levels scale with the clock, their latency in seconds inversely (a fixed number of cycles).
``memory``-domain levels keep their bandwidth (up to the path limit below), but a miss to them
first travels the core-clocked path an L2 hit takes (SM, crossbar, L2 lookup), so their
latency keeps its memory-side part and scales the rest:
``L(f) = L(f0) - L_l2(f0) + L_l2(f0) f0 / f``, with the slowest core-domain level (the L2) as
that path. Every byte of theirs also crosses that path, which carries a fixed number of bytes
per SM cycle: a level with ``core_path_bytes_per_cycle`` delivers
``min(bandwidth, core_path_bytes_per_cycle x f)`` at SM clock ``f`` (at a locked SM clock below
the config's, that path rather than the DRAM can limit streaming; docs/hardware.md). The power
tables of :class:`PowerSpec` set the idle power and scale core-domain switching energy by
``(V(f) / V(f0))^2``; at the clock of the config's energy calibration its fitted terms replace
the estimates (:mod:`opmodel.hardware.calibrated`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from opmodel.core.dtypes import DType
from opmodel.core.errors import ConfigError
from opmodel.core.frozen_dict import FrozenDict
from opmodel.hardware.calibrated import interpolate, with_calibration, with_estimates
from opmodel.hardware.ranges import CLOCK_HZ_SPAN
from opmodel.hardware.spec import ClockDomain, HardwareSpec, MemoryLevel, MemorySpec

__all__ = [
    "CLOCK_STEP_HZ",
    "POWER_STATES",
    "boosted",
    "checked_power_state",
    "in_burst",
    "power_limited",
    "power_limited_clock_hz",
    "spec_at_clock",
    "tensor_activity",
    "throttled",
    "throttled_at",
    "with_core_path_limits",
]

CLOCK_STEP_HZ = 15e6  # GA100 and later step the SM clock in 15 MHz bins ([EAI] supply_voltage.json)
# how an unlocked device ran its kernels: back to back under the average-power limit
# ("sustained"), or one at a time after idle time ("burst": HardwareSpec.in_burst)
POWER_STATES = ("sustained", "burst")


def checked_power_state(state: str) -> str:
    """``state`` when it is one of :data:`POWER_STATES`; a one-line :class:`ConfigError` (a
    ``ValueError``) naming them otherwise."""
    if not isinstance(state, str) or state not in POWER_STATES:
        msg = f"power_state must be one of {', '.join(POWER_STATES)} (got {state!r})"
        raise ConfigError([msg])
    return state


def spec_at_clock(spec: HardwareSpec, clock_hz: float) -> HardwareSpec:
    """``spec`` at SM clock ``clock_hz`` (see :meth:`HardwareSpec.at_clock`)."""
    low, high = CLOCK_HZ_SPAN.low, CLOCK_HZ_SPAN.high  # NaN and infinities fall outside
    number = isinstance(clock_hz, int | float) and not isinstance(clock_hz, bool)
    if not number or not low <= clock_hz <= high:
        msg = f"{spec.name}: at_clock: clock_hz must be a number of Hz from {low:g} to {high:g}"
        raise ConfigError([f"{msg} (got {clock_hz!r})"])
    spec = with_estimates(spec)  # start from the estimates, not from applied terms
    ratio = clock_hz / spec.compute.clock_hz
    compute = dataclasses.replace(
        spec.compute,
        clock_hz=float(clock_hz),
        max_boost_clock_hz=None,  # a locked clock holds for every kernel
        power_limited_clock_hz=None,
        power_limited_clock_hz_by_dtype=FrozenDict({}),
        burst_power_limited_clock_hz=None,
        tensor_flops_per_s=_scaled(spec.compute.tensor_flops_per_s, ratio),
        vector_flops_per_s=_scaled(spec.compute.vector_flops_per_s, ratio),
    )
    core_path_s = _core_path_latency_s(spec.memory)
    levels = tuple(
        _level_at_clock(level, ratio, core_path_s, clock_hz) for level in spec.memory.levels
    )
    return with_calibration(
        _at_clock_power(
            dataclasses.replace(spec, compute=compute, memory=MemorySpec(levels=levels)),
            spec.compute.clock_hz,
        )
    )


def _level_at_clock(
    level: MemoryLevel, ratio: float, core_path_s: float, clock_hz: float
) -> MemoryLevel:
    """One level at ``ratio`` times the config clock (module docstring). A ``memory``-domain
    level keeps its datasheet bandwidth, capped at ``core_path_bytes_per_cycle x clock_hz``
    when it has that path limit."""
    if level.clock_domain is ClockDomain.CORE:
        return dataclasses.replace(
            level,
            bandwidth_bytes_per_s=level.bandwidth_bytes_per_s * ratio,
            latency_s=level.latency_s / ratio,
        )
    if 0 < core_path_s < level.latency_s:
        level = dataclasses.replace(
            level, latency_s=level.latency_s - core_path_s + core_path_s / ratio
        )
    return _path_limited(level, clock_hz)


def _path_limited(level: MemoryLevel, clock_hz: float) -> MemoryLevel:
    """``level`` with its datasheet bandwidth capped at ``core_path_bytes_per_cycle x
    clock_hz`` (itself without that limit); the datasheet value stays on the level."""
    path = level.core_path_bytes_per_cycle
    if path is None:
        return level
    datasheet = level.datasheet_bandwidth_bytes_per_s or level.bandwidth_bytes_per_s
    return dataclasses.replace(
        level,
        bandwidth_bytes_per_s=min(datasheet, path * clock_hz),
        datasheet_bandwidth_bytes_per_s=datasheet,
    )


def with_core_path_limits(spec: HardwareSpec) -> HardwareSpec:
    """``spec`` with each ``core_path_bytes_per_cycle`` applied at its own clock (the loader
    calls it: a config rated at a low locked clock gets the bandwidth that clock carries)."""
    levels = tuple(_path_limited(level, spec.compute.clock_hz) for level in spec.memory.levels)
    if levels == spec.memory.levels:
        return spec
    return dataclasses.replace(spec, memory=MemorySpec(levels=levels))


def boosted(spec: HardwareSpec) -> HardwareSpec:
    """``spec`` at its ``max_boost_clock_hz`` (itself when it has none): where an unlocked
    device runs kernels that do not load the tensor cores. Cached on the spec."""
    boost = spec.compute.max_boost_clock_hz
    if boost is None or boost == spec.compute.clock_hz:
        return spec
    return _cached_at_clock(spec, boost)


def in_burst(spec: HardwareSpec) -> HardwareSpec:
    """``spec`` measured one kernel at a time after idle time (:meth:`HardwareSpec.in_burst`).

    Its power-limited clock becomes ``burst_power_limited_clock_hz``, and each per-dtype one
    scales by the same ratio (the limiter's headroom, not the dtype's power per cycle,
    changes). ``spec`` itself when it has no burst clock. Cached on the spec.
    """
    compute = spec.compute
    burst = compute.burst_power_limited_clock_hz
    sustained = compute.power_limited_clock_hz
    if burst is None or sustained is None or burst == sustained:
        return spec
    cached = spec.derived_cache.get("in_burst")
    if cached is None:
        ratio = burst / sustained
        by_dtype = {
            dtype: min(compute.clock_hz, clock * ratio)
            for dtype, clock in compute.power_limited_clock_hz_by_dtype.items()
        }
        bursting = dataclasses.replace(
            compute,
            power_limited_clock_hz=burst,
            power_limited_clock_hz_by_dtype=FrozenDict(by_dtype),
        )
        cached = spec.derived_cache["in_burst"] = dataclasses.replace(spec, compute=bursting)
    assert isinstance(cached, HardwareSpec)
    return cached


def power_limited_clock_hz(
    spec: HardwareSpec, tensor_activity: float, dtype: DType | None = None
) -> float:
    """The SM clock an unlocked ``spec`` sustains for a kernel of ``tensor_activity`` ``u``.

    Dynamic power is ``u f V(f)^2`` up to a constant (activity, clock, switching energy) and
    the voltage rises about linearly with the clock in the boost range (GA100's table in
    ``power.core_voltage_mv_by_clock_mhz``: +29 % from 1.02 to 1.41 GHz), so the power of
    tensor work grows as ``u f^3``. The board holds a fully busy kernel (``u = 1``) at
    ``power_limited_clock_hz``; a kernel of activity ``u`` reaches the same power at
    ``f = power_limited_clock_hz x u^(-1/3)``, which GPU Boost caps at ``clock_hz`` and
    steps down to a :data:`CLOCK_STEP_HZ` bin. ``clock_hz`` when the spec has no
    power-limited clock or ``u`` is 0. Tensor work in ``dtype`` uses that dtype's clock where
    the spec lists one (``power_limited_clock_hz_by_dtype``: FP8 MMAs draw more per cycle).
    """
    limited = spec.compute.power_limited_clock_for(dtype)
    top = spec.compute.clock_hz
    if limited is None or not tensor_activity > 0:
        return top
    wanted = limited * min(1.0, tensor_activity) ** (-1.0 / 3.0)
    if wanted >= top:
        return top
    return float(max(CLOCK_STEP_HZ, CLOCK_STEP_HZ * (wanted // CLOCK_STEP_HZ)))


def tensor_activity(
    spec: HardwareSpec, dtype: DType, issued_flops: float, latency_s: float
) -> float:
    """``u``: issued MMA FLOPs over what ``spec``'s tensor engine could issue for ``dtype`` in
    ``latency_s`` (at most 1; 0 when the dtype has no tensor throughput or no time passed)."""
    peak = spec.compute.tensor_peak(dtype)
    if not peak or not latency_s > 0:
        return 0.0
    return min(1.0, issued_flops / (peak * latency_s))


def throttled(
    spec: HardwareSpec, dtype: DType, issued_flops: float, latency_s: float
) -> HardwareSpec | None:
    """The spec at the power-limited clock of a tensor kernel that issued ``issued_flops`` in
    ``latency_s`` at ``spec``'s clock (one step of the fixed point: compute-bound kernels keep
    their activity at any clock), or None when the kernel keeps ``spec``'s clock (no limit, or
    ``f_pl x u^(-1/3)`` at or above the clock)."""
    if spec.compute.power_limited_clock_for(dtype) is None:
        return None
    return throttled_at(spec, tensor_activity(spec, dtype, issued_flops, latency_s), dtype)


def throttled_at(
    spec: HardwareSpec, activity: float, dtype: DType | None = None
) -> HardwareSpec | None:
    """:func:`throttled` for a tensor activity already known."""
    if spec.compute.power_limited_clock_for(dtype) is None:
        return None
    clock_hz = power_limited_clock_hz(spec, activity, dtype)
    return power_limited(spec, clock_hz) if clock_hz < spec.compute.clock_hz else None


def power_limited(spec: HardwareSpec, clock_hz: float) -> HardwareSpec:
    """``spec`` at the power-limited ``clock_hz`` (from :func:`power_limited_clock_hz`);
    ``spec`` itself at its own clock. Cached on the spec per clock bin."""
    if clock_hz >= spec.compute.clock_hz:
        return spec
    return _cached_at_clock(spec, clock_hz)


def _cached_at_clock(spec: HardwareSpec, clock_hz: float) -> HardwareSpec:
    """:func:`spec_at_clock`, kept in ``spec.derived_cache`` per clock (boost or power bins)."""
    key = ("at_clock", clock_hz)
    cached = spec.derived_cache.get(key)
    if cached is None:
        cached = spec.derived_cache[key] = spec_at_clock(spec, clock_hz)
    assert isinstance(cached, HardwareSpec)
    return cached


def _core_path_latency_s(memory: MemorySpec) -> float:
    """Latency of the slowest core-clocked level (the L2 hit path a miss also travels); 0
    when the memory has none."""
    core = [level for level in memory.levels if level.clock_domain is ClockDomain.CORE]
    return max((level.latency_s for level in core), default=0.0)


def _at_clock_power(spec: HardwareSpec, old_clock_hz: float) -> HardwareSpec:
    """Idle power and core-domain switching energy at ``spec``'s (new) clock."""
    power = spec.power
    new_mhz, old_mhz = spec.compute.clock_hz / 1e6, old_clock_hz / 1e6
    if power.idle_w_by_clock_mhz:
        power = dataclasses.replace(power, static_w=interpolate(power.idle_w_by_clock_mhz, new_mhz))
    volts = power.core_voltage_mv_by_clock_mhz
    if not volts:
        return dataclasses.replace(spec, power=power)
    factor = (interpolate(volts, new_mhz) / interpolate(volts, old_mhz)) ** 2
    compute = dataclasses.replace(
        spec.compute,
        tensor_energy_j_per_flop=_scaled(spec.compute.tensor_energy_j_per_flop, factor),
        vector_energy_j_per_flop=_scaled(spec.compute.vector_energy_j_per_flop, factor),
    )
    levels = tuple(
        dataclasses.replace(level, energy_j_per_byte=level.energy_j_per_byte * factor)
        if level.clock_domain is ClockDomain.CORE
        else level
        for level in spec.memory.levels
    )
    return dataclasses.replace(spec, compute=compute, memory=MemorySpec(levels=levels), power=power)


def _scaled(peaks: Mapping[DType, float], ratio: float) -> Mapping[DType, float]:
    return FrozenDict({dtype: value * ratio for dtype, value in peaks.items()})
