"""Hardware description types: :class:`HardwareSpec` and its frozen parts (SI units throughout).

Field meanings and sources are documented in ``docs/hardware.md``; the loader
(:mod:`opmodel.hardware.loader`) builds these from YAML and checks cross-field rules.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from opmodel.core.dtypes import DType
from opmodel.core.frozen_dict import FrozenDict
from opmodel.core.values import state_without_cache
from opmodel.hardware import ranges
from opmodel.hardware.energy_calibration import EnergyCalibration
from opmodel.hardware.interconnect import InterconnectSpec
from opmodel.hardware.structure import (
    ASYNC_INSTRUCTIONS,
    WARP_MMA_INSTRUCTIONS,
    ClockDomain,
    HardwareKind,
    Instruction,
    MxuSpec,
    SmSpec,
)
from opmodel.parsing.schema import MUST_BE_FRACTION

__all__ = [
    "ASYNC_INSTRUCTIONS",
    "WARP_MMA_INSTRUCTIONS",
    "ClockDomain",
    "ComputeSpec",
    "HardwareKind",
    "HardwareSpec",
    "Instruction",
    "MemoryLevel",
    "MemorySpec",
    "MxuSpec",
    "OverheadSpec",
    "PowerSpec",
    "SmSpec",
    "UtilizationSpec",
]


def _empty() -> Mapping[Any, Any]:
    return FrozenDict({})


@dataclass(frozen=True, slots=True, kw_only=True)
class ComputeSpec:
    """Clock, dense peak throughput and energy per FLOP per engine, keyed by dtype.

    Peaks keyed by ``fp8`` apply to ``fp8_e4m3`` and ``fp8_e5m2`` unless those are listed.
    A peak may be typed (``*_flops_per_s``) or derived by the loader from
    ``*_flops_per_cycle_per_unit`` x units x ``clock_hz`` (see
    :mod:`opmodel.hardware.derived`): the unit is the SM (CU on AMD) for both engines on a
    GPU, the MXU for the tensor engine and the TensorCore for the vector engine on a TPU.
    """

    clock_hz: float = field(metadata=ranges.CLOCK_HZ)
    tensor_flops_per_s: Mapping[DType, float] = field(
        default_factory=_empty, metadata=ranges.FLOPS_PER_S
    )
    vector_flops_per_s: Mapping[DType, float] = field(
        default_factory=_empty, metadata=ranges.FLOPS_PER_S
    )
    tensor_flops_per_cycle_per_unit: Mapping[DType, float] = field(
        default_factory=_empty, metadata=ranges.FLOPS_PER_CYCLE
    )
    vector_flops_per_cycle_per_unit: Mapping[DType, float] = field(
        default_factory=_empty, metadata=ranges.FLOPS_PER_CYCLE
    )
    tensor_energy_j_per_flop: Mapping[DType, float] = field(
        default_factory=_empty, metadata=ranges.J_PER_FLOP
    )
    vector_energy_j_per_flop: Mapping[DType, float] = field(metadata=ranges.J_PER_FLOP)
    sm: SmSpec | None = None
    mxu: MxuSpec | None = None
    # the highest SM clock GPU Boost reaches when power allows, above the clock the tensor peaks
    # are rated at (H100 SXM: 1.98 vs 1.83 GHz); kernel-level models run non-tensor kernels of
    # an unlocked device at it; at_clock (a locked clock) drops it
    max_boost_clock_hz: float | None = field(default=None, metadata=ranges.CLOCK_HZ)
    # the SM clock the board's power limit holds while a kernel keeps the tensor cores fully
    # busy (a measured or fitted value, never a datasheet one); kernel-level GEMM models then
    # run a kernel of tensor activity u at min(clock_hz, this x u^(-1/3)) on an unlocked device
    # (docs/models/effective_roofline.md, "Power-limited clock"); at_clock drops it
    power_limited_clock_hz: float | None = field(default=None, metadata=ranges.CLOCK_HZ)
    # the same for tensor work of one dtype that draws a different power per cycle (FP8 MMAs
    # at twice the 16-bit rate); a dtype not listed (nor its family) uses the clock above
    power_limited_clock_hz_by_dtype: Mapping[DType, float] = field(
        default_factory=_empty, metadata=ranges.CLOCK_HZ
    )
    # the power-limited clock of a tensor kernel that runs alone after idle time (one profiled
    # call, a kernel under a profiler's replay): the board's fast power and current limiter
    # holds it before the average-power limit engages; HardwareSpec.in_burst() runs at it
    burst_power_limited_clock_hz: float | None = field(default=None, metadata=ranges.CLOCK_HZ)

    def power_limited_clock_for(self, dtype: DType | None) -> float | None:
        """The power-limited clock of tensor work in ``dtype`` (its own, its family's, else
        the general one; None when the device has none)."""
        by_dtype = self.power_limited_clock_hz_by_dtype
        if by_dtype and dtype is not None:  # most configs list none: no enum hashing on predict
            clock = by_dtype.get(dtype) or by_dtype.get(dtype.family)
            if clock is not None:
                return clock
        return self.power_limited_clock_hz

    def tensor_peak(self, dtype: DType) -> float | None:
        """Dense tensor-engine FLOP/s for ``dtype`` (fp8 variants fall back to ``fp8``)."""
        peaks = self.tensor_flops_per_s
        return peaks.get(dtype) or peaks.get(dtype.family)

    def vector_peak(self, dtype: DType) -> float | None:
        """Vector-engine FLOP/s for ``dtype`` (fp8 variants fall back to ``fp8``)."""
        peaks = self.vector_flops_per_s
        return peaks.get(dtype) or peaks.get(dtype.family)

    def energy_per_flop(self, *, tensor: bool, dtype: DType) -> float:
        """J per FLOP on the tensor or vector engine for ``dtype`` (present for every peak)."""
        table = self.tensor_energy_j_per_flop if tensor else self.vector_energy_j_per_flop
        value = table.get(dtype)
        return table[dtype.family] if value is None else value


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryLevel:
    """One level of the memory hierarchy (``hbm``, ``l2``, ``smem``, ``registers``, ...).

    ``bandwidth_bytes_per_s`` is the device-wide peak; ``latency_s`` the load-to-use latency of
    one access; ``energy_j_per_byte`` the dynamic energy of moving one byte at this level.
    ``shared_capacity_fraction`` is the share of the capacity left for data read by every SM
    when the level replicates lines across partitions (A100 and H100 L2: 0.5); 1.0 if omitted.

    ``core_path_bytes_per_cycle`` (``memory``-domain levels only, optional) is the most bytes of
    this level's traffic that the core-clocked path between the SMs and the memory controllers
    (crossbar, L2 slices) carries per SM clock cycle: at SM clock ``f`` the level's usable
    bandwidth is ``min(bandwidth, core_path_bytes_per_cycle x f)``, applied by the loader at
    ``compute.clock_hz`` and by :meth:`HardwareSpec.at_clock` at any other clock (the shipped
    values bind only below their config's clock). ``datasheet_bandwidth_bytes_per_s`` keeps the
    config's value once the cap has been applied, so that another clock starts from it.
    """

    name: str
    size_bytes: int = field(metadata=ranges.LEVEL_BYTES)
    bandwidth_bytes_per_s: float = field(metadata=ranges.BYTES_PER_S)
    latency_s: float = field(metadata=ranges.LATENCY_S)
    energy_j_per_byte: float = field(metadata=ranges.J_PER_BYTE)
    clock_domain: ClockDomain
    shared_capacity_fraction: float = field(default=1.0, metadata=MUST_BE_FRACTION)
    core_path_bytes_per_cycle: float | None = field(default=None, metadata=ranges.BYTES_PER_CYCLE)
    datasheet_bandwidth_bytes_per_s: float | None = field(
        default=None, repr=False, compare=False, metadata={"yaml": False}
    )

    @property
    def shared_capacity_bytes(self) -> float:
        """Capacity for data that every SM reads: ``size_bytes * shared_capacity_fraction``."""
        return self.size_bytes * self.shared_capacity_fraction


@dataclass(frozen=True, slots=True, kw_only=True)
class MemorySpec:
    """The memory hierarchy, outermost (``hbm``) first by convention."""

    levels: tuple[MemoryLevel, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class UtilizationSpec:
    """Achievable fraction of each peak; 1.0 (the peak) where omitted."""

    tensor_fraction: float = field(default=1.0, metadata=MUST_BE_FRACTION)
    vector_fraction: float = field(default=1.0, metadata=MUST_BE_FRACTION)
    memory_fraction: Mapping[str, float] = field(default_factory=_empty, metadata=MUST_BE_FRACTION)


@dataclass(frozen=True, slots=True, kw_only=True)
class PowerSpec:
    """Board power: static (idle at the config clock) and thermal design power. Optional
    tables by SM clock in MHz, used by :meth:`HardwareSpec.at_clock`: ``idle_w_by_clock_mhz``
    (measured idle board power) sets ``static_w`` at the new clock;
    ``core_voltage_mv_by_clock_mhz`` (the DVFS curve) scales the dynamic energy of the core
    domain (engines' J/FLOP, on-chip levels' J/byte) by ``(V(f) / V(f0))^2``, the ``C V^2`` of
    switching energy (e.g. Horowitz, ISSCC 2014), interpolated linearly between table points
    (outside them: the nearest point). ``active_w`` is board power above ``static_w`` while a
    kernel runs (0 unless an energy calibration sets it); models charge ``busy_w = static_w +
    active_w`` over an op's latency; ``energy_calibration`` names a calibration file
    (:mod:`~opmodel.hardware.energy_calibration`)
    beside the config or in the shipped ``configs/calibrations`` folder.
    """

    @property
    def busy_w(self) -> float:
        """Power drawn besides the op's events while it runs: static plus active."""
        return self.static_w + self.active_w

    static_w: float = field(metadata=ranges.POWER_W)
    tdp_w: float = field(metadata=ranges.TDP_W)
    active_w: float = field(default=0.0, metadata=ranges.POWER_W)
    energy_calibration: str | None = None
    idle_w_by_clock_mhz: Mapping[int, float] = field(
        default_factory=_empty, metadata=ranges.POWER_W
    )
    core_voltage_mv_by_clock_mhz: Mapping[int, float] = field(
        default_factory=_empty, metadata=ranges.MILLIVOLTS
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class OverheadSpec:
    """Per-kernel costs outside the op's own work (``gemm_fixed_overhead_cycles``: GEMMs')."""

    kernel_launch_overhead_s: float = field(metadata=ranges.TIME_PER_KERNEL_S)
    fixed_device_overhead_cycles: int = field(metadata=ranges.CYCLES)
    gemm_fixed_overhead_cycles: int | None = field(default=None, metadata=ranges.CYCLES)


@dataclass(frozen=True, slots=True, kw_only=True)
class HardwareSpec:
    """A device: compute engines, memory levels, utilisation factors, power and overheads.

    ``derived_cache`` memoises values that models derive from the spec alone (rates times
    utilisation); it takes no part in equality or repr, and :meth:`at_clock` starts a new one.
    ``calibration`` is the config's energy calibration (attached by the loader); when its terms
    are applied, ``uncalibrated`` keeps the spec as it was, whose estimates :meth:`at_clock` starts
    from (:func:`~opmodel.hardware.calibrated.with_estimates`).
    """

    name: str
    kind: HardwareKind
    architecture: str | None = None
    description: str | None = None
    compute: ComputeSpec
    memory: MemorySpec
    utilization: UtilizationSpec = field(default_factory=UtilizationSpec)
    power: PowerSpec
    overhead: OverheadSpec
    interconnect: InterconnectSpec | None = None  # links to the node's peers (collectives)
    sustained_calibration: str | None = None  # a file of fitted sustained values (loader)
    calibration: EnergyCalibration | None = field(
        default=None, repr=False, compare=False, metadata={"yaml": False}
    )
    uncalibrated: HardwareSpec | None = field(
        default=None, repr=False, compare=False, metadata={"yaml": False}
    )
    levels_by_name: Mapping[str, MemoryLevel] = field(init=False, repr=False, compare=False)
    derived_cache: dict[object, Any] = field(init=False, repr=False, compare=False)

    def __getstate__(self) -> list[Any]:
        return state_without_cache(self)  # pickled without the memoised derived_cache

    def __post_init__(self) -> None:
        by_name = FrozenDict({level.name: level for level in self.memory.levels})
        object.__setattr__(self, "levels_by_name", by_name)
        object.__setattr__(self, "derived_cache", {})

    def level(self, name: str) -> MemoryLevel:
        """The memory level called ``name`` (KeyError when absent)."""
        return self.levels_by_name[name]

    @property
    def hbm(self) -> MemoryLevel:
        """The off-chip main memory level (required in every config)."""
        return self.levels_by_name["hbm"]

    def memory_fraction(self, name: str) -> float:
        """Achievable fraction of level ``name``'s bandwidth (1.0 when not configured)."""
        return self.utilization.memory_fraction.get(name, 1.0)

    def without_calibration(self) -> HardwareSpec:
        """The same device with the config's estimates, no energy calibration attached (what
        was changed after loading stays: :func:`~opmodel.hardware.calibrated.with_estimates`)."""
        from opmodel.hardware.calibrated import with_estimates  # noqa: PLC0415 - avoids a cycle

        return dataclasses.replace(with_estimates(self), calibration=None)

    def at_clock(self, clock_hz: float) -> HardwareSpec:
        """The same device at SM clock ``clock_hz``.

        Engine peaks and the bandwidth of ``core``-domain levels scale by
        ``clock_hz / compute.clock_hz``; their latency in seconds scales by the inverse (a fixed
        number of cycles). ``memory``-domain levels (HBM, GDDR) are unchanged. With the power
        tables of :class:`PowerSpec`, static power and core-domain switching energy follow the
        clock too; at the clock of the config's energy calibration its terms apply.
        """
        from opmodel.hardware.clocking import spec_at_clock  # noqa: PLC0415 - avoids a cycle

        return spec_at_clock(self, clock_hz)

    def in_burst(self) -> HardwareSpec:
        """The same device measured one kernel at a time after idle time: power-limited at
        ``compute.burst_power_limited_clock_hz`` instead of the sustained
        ``power_limited_clock_hz`` (itself when it has no burst clock)."""
        from opmodel.hardware.clocking import in_burst  # noqa: PLC0415 - avoids a cycle

        return in_burst(self)
