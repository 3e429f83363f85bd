"""Cross-field rules of a hardware config, checked after the per-field schema passes."""

from __future__ import annotations

from opmodel.hardware.interconnect import InterconnectSpec, LinkType
from opmodel.hardware.spec import (
    WARP_MMA_INSTRUCTIONS,
    ClockDomain,
    ComputeSpec,
    HardwareKind,
    HardwareSpec,
    SmSpec,
)

__all__ = ["cross_field_problems", "power_limit_problems"]


def _level_problems(spec: HardwareSpec) -> list[str]:
    problems: list[str] = []
    names = [level.name for level in spec.memory.levels]
    for name in sorted({n for n in names if names.count(n) > 1}):
        problems.append(f"memory.levels: level name '{name}' appears more than once")
    if "hbm" not in names:
        problems.append(
            f"memory.levels: a level named 'hbm' (off-chip main memory) is required "
            f"(got {', '.join(names) or 'no levels'})"
        )
    problems.extend(_core_path_problems(spec))
    for name in spec.utilization.memory_fraction:
        if name not in names:
            problems.append(
                f"utilization.memory_fraction.{name}: no memory level named '{name}' "
                f"(levels: {', '.join(names)})"
            )
    return problems


def _core_path_problems(spec: HardwareSpec) -> list[str]:
    """``core_path_bytes_per_cycle`` only on memory-domain levels (the path a miss to them
    crosses; a core-domain level's bandwidth already follows the clock)."""
    return [
        f"memory.levels[{index}].core_path_bytes_per_cycle: only a level with "
        "clock_domain: memory takes it"
        for index, level in enumerate(spec.memory.levels)
        if level.core_path_bytes_per_cycle is not None
        and level.clock_domain is not ClockDomain.MEMORY
    ]


def power_limit_problems(compute: ComputeSpec) -> list[str]:
    """Power-limited clocks (general, per dtype, burst) above the clock the peaks are rated at,
    and a burst clock below the sustained one."""
    limits = {"power_limited_clock_hz": compute.power_limited_clock_hz}
    for dtype, clock in compute.power_limited_clock_hz_by_dtype.items():
        limits[f"power_limited_clock_hz_by_dtype.{dtype.value}"] = clock
    limits["burst_power_limited_clock_hz"] = compute.burst_power_limited_clock_hz
    problems = [
        f"compute.{name}: must be at most compute.clock_hz "
        f"({compute.clock_hz:g} Hz) (got {limited:g} Hz)"
        for name, limited in limits.items()
        if limited is not None and limited > compute.clock_hz
    ]
    burst, sustained = compute.burst_power_limited_clock_hz, compute.power_limited_clock_hz
    if burst is not None and (sustained is None or burst < sustained):
        problems.append(
            "compute.burst_power_limited_clock_hz: needs compute.power_limited_clock_hz and "
            f"must be at least it (got {burst:g} Hz against {sustained or 'none'})"
        )
    return problems


def _energy_problems(compute: ComputeSpec) -> list[str]:
    problems: list[str] = []
    boost = compute.max_boost_clock_hz
    if boost is not None and boost < compute.clock_hz:
        problems.append(
            f"compute.max_boost_clock_hz: must be at least compute.clock_hz "
            f"({compute.clock_hz:g} Hz) (got {boost:g} Hz)"
        )
    problems += power_limit_problems(compute)
    pairs = (
        ("tensor", compute.tensor_flops_per_s, compute.tensor_energy_j_per_flop),
        ("vector", compute.vector_flops_per_s, compute.vector_energy_j_per_flop),
    )
    for engine, peaks, energies in pairs:
        for dtype in peaks:
            if dtype not in energies:
                problems.append(
                    f"compute.{engine}_energy_j_per_flop: missing {dtype.value} "
                    f"(every dtype in compute.{engine}_flops_per_s needs an energy per FLOP)"
                )
    return problems


def _sm_problems(sm: SmSpec) -> list[str]:
    problems: list[str] = []
    if sm.max_shared_memory_per_cta_bytes > sm.shared_memory_per_sm_bytes:
        problems.append(
            "compute.sm.max_shared_memory_per_cta_bytes: must not exceed "
            f"shared_memory_per_sm_bytes ({sm.shared_memory_per_sm_bytes}) "
            f"(got {sm.max_shared_memory_per_cta_bytes})"
        )
    if sm.max_threads_per_cta > sm.max_warps_per_sm * sm.warp_size:
        problems.append(
            "compute.sm.max_threads_per_cta: must not exceed max_warps_per_sm x warp_size "
            f"({sm.max_warps_per_sm * sm.warp_size}) (got {sm.max_threads_per_cta})"
        )
    if sm.warp_mma_instruction not in WARP_MMA_INSTRUCTIONS:
        accepted = ", ".join(sorted(WARP_MMA_INSTRUCTIONS))
        problems.append(
            f"compute.sm.warp_mma_instruction: must be one of {accepted} "
            f"(got {sm.warp_mma_instruction})"
        )
    if min(sm.mma_shape_mnk) <= 0:
        problems.append(
            f"compute.sm.mma_shape_mnk: must be positive (got {list(sm.mma_shape_mnk)})"
        )
    return problems


def cross_field_problems(spec: HardwareSpec) -> list[str]:
    """Every rule that spans fields: hbm present, unique levels, energy coverage, SM limits."""
    problems = _level_problems(spec) + _energy_problems(spec.compute)
    compute = spec.compute
    if not compute.vector_flops_per_s and not compute.vector_flops_per_cycle_per_unit:
        problems.append(
            "compute.vector_flops_per_s: at least one vector peak is required (typed here, "
            "or derived from compute.vector_flops_per_cycle_per_unit)"
        )
    if spec.kind is HardwareKind.GPU and spec.compute.sm is None:
        problems.append("compute.sm: required for kind gpu (SM count and per-SM limits)")
    if spec.kind is HardwareKind.TPU and spec.compute.mxu is None:
        problems.append("compute.mxu: required for kind tpu (TensorCores and MXU shape)")
    if spec.compute.sm is not None:
        problems += _sm_problems(spec.compute.sm)
    return problems + _interconnect_problems(spec)


def _interconnect_problems(spec: HardwareSpec) -> list[str]:
    """Measured NCCL rates above the line rates they are measured on."""
    problems: list[str] = []
    link = spec.interconnect
    for name in ("nccl_bandwidth_bytes_per_s", "nvls_bandwidth_bytes_per_s"):
        if link is not None and (getattr(link, name) or 0) > link.bandwidth_bytes_per_s:
            problems.append(
                f"interconnect.{name}: must not exceed interconnect.bandwidth_bytes_per_s "
                f"({link.bandwidth_bytes_per_s:g}), the line rate"
            )
    if link is not None:
        problems += _torus_problems(link) + _mesh_problems(link)
    net = link.network if link is not None else None
    if net is not None and (net.nccl_bandwidth_bytes_per_s or 0) > net.nic_bandwidth_bytes_per_s:
        problems.append(
            "interconnect.network.nccl_bandwidth_bytes_per_s: must not exceed "
            f"interconnect.network.nic_bandwidth_bytes_per_s ({net.nic_bandwidth_bytes_per_s:g}), "
            "the line rate"
        )
    return problems


def _mesh_problems(link: InterconnectSpec) -> list[str]:
    """An xGMI mesh joins at least two devices and has no switch to reduce in (no NVLS);
    nothing to say of another link type."""
    problems: list[str] = []
    if link.link_type is not LinkType.XGMI:
        return problems
    if link.devices_per_node < 2:
        problems.append(
            "interconnect.devices_per_node: must be at least 2 for link_type xgmi (a mesh of "
            f"links between the node's devices; got {link.devices_per_node})"
        )
    if link.nvls_bandwidth_bytes_per_s is not None:
        problems.append(
            "interconnect.nvls_bandwidth_bytes_per_s: not for link_type xgmi (NVLink SHARP "
            "reduces in an NVSwitch; an xGMI mesh has none)"
        )
    return problems


def _torus_problems(link: InterconnectSpec) -> list[str]:
    """ICI needs its torus's dimensions (2 or 3); NVLink, PCIe and xGMI have none, nor does ICI
    take NCCL's rates."""
    if link.link_type is not LinkType.ICI:
        if link.torus_dims is not None:
            return ["interconnect.torus_dims: only for link_type ici (a TPU's torus)"]
        return []
    problems = []
    if link.torus_dims not in (2, 3):
        problems.append(
            f"interconnect.torus_dims: must be 2 or 3 for link_type ici (got {link.torus_dims})"
        )
    for name in ("nccl_bandwidth_bytes_per_s", "nvls_bandwidth_bytes_per_s", "network"):
        if getattr(link, name) is not None:
            problems.append(
                f"interconnect.{name}: not for link_type ici (NCCL's rates and NICs; XLA runs "
                "a TPU's collectives over its torus)"
            )
    return problems
