"""A hardware spec with its energy calibration's fitted terms, or with its estimates back.

The loader attaches a config's energy calibration (:mod:`opmodel.hardware.energy_calibration`)
and applies it with :func:`with_calibration`; :meth:`HardwareSpec.at_clock` first puts the
estimates back (:func:`with_estimates`), moves them to the new clock and applies the terms
again there (docs/models/energy.md, "Calibration").
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from opmodel.core.frozen_dict import FrozenDict
from opmodel.hardware.energy_calibration import EnergyCalibration
from opmodel.hardware.spec import ComputeSpec, HardwareSpec, MemorySpec

__all__ = ["interpolate", "with_calibration", "with_estimates"]


def interpolate(table: Mapping[int, float], x: float) -> float:
    """Piecewise-linear value of ``table`` at ``x`` (nearest point outside its range)."""
    keys = sorted(table)
    if x <= keys[0]:
        return table[keys[0]]
    if x >= keys[-1]:
        return table[keys[-1]]
    high = next(k for k in keys if k >= x)
    low = max(k for k in keys if k <= x)
    if high == low:
        return table[low]
    return table[low] + (table[high] - table[low]) * (x - low) / (high - low)


def _calibrated_compute(
    spec: HardwareSpec, calibration: EnergyCalibration, switching: float
) -> ComputeSpec:
    """``spec.compute`` with the fitted energy per tensor FLOP (for the calibrated dtypes) and
    per vector FLOP, both scaled by the switching-energy factor."""
    t = calibration.terms
    tensor = {
        dtype: t.tensor_j_per_flop * switching if dtype in calibration.tensor_dtypes else value
        for dtype, value in spec.compute.tensor_energy_j_per_flop.items()
    }
    vector = spec.compute.vector_energy_j_per_flop
    if t.vector_j_per_flop is not None:
        vector = FrozenDict(dict.fromkeys(vector, t.vector_j_per_flop * switching))
    return dataclasses.replace(
        spec.compute,
        tensor_energy_j_per_flop=FrozenDict(tensor),
        vector_energy_j_per_flop=vector,
    )


def with_calibration(spec: HardwareSpec) -> HardwareSpec:
    """``spec`` with its energy calibration's terms.

    At the calibration's clock the fitted terms replace the estimates. At another clock they
    are carried there by the config's core-voltage table, as :func:`spec_at_clock` carries the
    estimates: switching energy per event (tensor and vector FLOPs, L2 bytes) scales by
    ``(V(f) / V(f_cal))^2``, active power by ``(f / f_cal) (V(f) / V(f_cal))^2``, and the
    memory-domain HBM energy per byte stays. Without a voltage table the terms hold only on the
    device locked at the calibration's clock (:func:`_locked`, as :meth:`HardwareSpec.at_clock`
    gives it): an unlocked spec rated at that clock (``h100_sxm`` at 1830 MHz) runs streaming
    kernels at its boost and large GEMMs at its power-limited clock, where nothing carries the
    terms, so it keeps the estimates for all its kernels alike. The fitted host time per
    kernel (``launch_gap_s``) applies at every clock: it is the time the host's framework
    spends per kernel, which the GPU's clock does not change.
    """
    calibration = spec.calibration
    if calibration is None:
        return spec
    t = calibration.terms
    mhz, volts = spec.compute.clock_hz / 1e6, spec.power.core_voltage_mv_by_clock_mhz
    overhead = spec.overhead
    if t.launch_gap_s is not None:
        overhead = dataclasses.replace(overhead, kernel_launch_overhead_s=t.launch_gap_s)
    if abs(mhz - calibration.clock_mhz) <= 1.0 and (volts or _locked(spec)):
        switching = ratio = 1.0
    elif volts:
        ratio = mhz / calibration.clock_mhz
        switching = (interpolate(volts, mhz) / interpolate(volts, calibration.clock_mhz)) ** 2
    else:
        return dataclasses.replace(spec, overhead=overhead, uncalibrated=spec)
    compute = _calibrated_compute(spec, calibration, switching)
    per_byte = {"hbm": t.hbm_j_per_byte, "l2": t.l2_j_per_byte * switching}
    levels = tuple(
        dataclasses.replace(level, energy_j_per_byte=per_byte[level.name])
        if level.name in per_byte
        else level
        for level in spec.memory.levels
    )
    active_w = t.active_w * switching * ratio
    return dataclasses.replace(
        spec,
        compute=compute,
        memory=MemorySpec(levels=levels),
        power=dataclasses.replace(spec.power, active_w=active_w),
        overhead=overhead,
        uncalibrated=spec,
    )


def _locked(spec: HardwareSpec) -> bool:
    """True when every kernel runs at ``spec``'s clock: no boost above it and no power-limited
    clock below it (what :meth:`HardwareSpec.at_clock` leaves)."""
    compute = spec.compute
    boost = compute.max_boost_clock_hz
    return (
        (boost is None or boost <= compute.clock_hz)
        and compute.power_limited_clock_hz is None
        and not compute.power_limited_clock_hz_by_dtype
        and compute.burst_power_limited_clock_hz is None
    )


def with_estimates(spec: HardwareSpec) -> HardwareSpec:
    """``spec`` with the config's estimates back in the fields its energy calibration governs.

    Those are the fields :func:`with_calibration` may set: the energy per FLOP of the
    calibration's tensor dtypes (and of the vector engine when it fits one), the energy per
    byte of ``hbm`` and ``l2``, the active power and (when it fits one) the host time per
    kernel; their estimates come from ``spec.uncalibrated``. Every other field keeps
    ``spec``'s value, so what was changed after loading (a power-limited clock, an HBM
    fraction, the fixed overhead) survives :meth:`HardwareSpec.at_clock` and
    :meth:`HardwareSpec.without_calibration`. The calibration stays attached; ``spec`` itself
    when no terms were applied."""
    base, calibration = spec.uncalibrated, spec.calibration
    if base is None or calibration is None:
        return spec
    terms = calibration.terms
    tensor = dict(spec.compute.tensor_energy_j_per_flop)
    for dtype in calibration.tensor_dtypes:
        if dtype in base.compute.tensor_energy_j_per_flop:
            tensor[dtype] = base.compute.tensor_energy_j_per_flop[dtype]
    vector = (
        base.compute.vector_energy_j_per_flop
        if terms.vector_j_per_flop is not None
        else spec.compute.vector_energy_j_per_flop
    )
    compute = dataclasses.replace(
        spec.compute,
        tensor_energy_j_per_flop=FrozenDict(tensor),
        vector_energy_j_per_flop=vector,
    )
    estimated = {level.name: level.energy_j_per_byte for level in base.memory.levels}
    levels = tuple(
        dataclasses.replace(level, energy_j_per_byte=estimated[level.name])
        if level.name in ("hbm", "l2") and level.name in estimated
        else level
        for level in spec.memory.levels
    )
    overhead = spec.overhead
    if terms.launch_gap_s is not None:
        overhead = dataclasses.replace(
            overhead, kernel_launch_overhead_s=base.overhead.kernel_launch_overhead_s
        )
    return dataclasses.replace(
        spec,
        compute=compute,
        memory=MemorySpec(levels=levels),
        power=dataclasses.replace(spec.power, active_w=base.power.active_w),
        overhead=overhead,
        uncalibrated=None,
    )
