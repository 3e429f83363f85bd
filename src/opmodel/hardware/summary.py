"""A one-row summary of a hardware config, for listings."""

from __future__ import annotations

from typing import Any

from opmodel.hardware.spec import HardwareSpec

__all__ = ["hardware_summary"]


def hardware_summary(spec: HardwareSpec) -> dict[str, Any]:
    """Name, kind, architecture, dense peaks by dtype, HBM and L2 size/bandwidth, the board's
    TDP, the sustained power-limited clock (None where the config has none: its large GEMMs
    then run at ``clock_hz``), the calibration files of ``spec`` and its links to the node's
    other devices (``interconnect``: link type, devices per node, bandwidth each way, and the
    NICs to other nodes, ``network``: count per node and line rate each way, None without them;
    None without an ``interconnect`` section)."""
    l2 = spec.levels_by_name.get("l2")
    link = spec.interconnect
    return {
        "name": spec.name,
        "kind": spec.kind.value,
        "architecture": spec.architecture,
        "clock_hz": spec.compute.clock_hz,
        "tensor_flops_per_s": {d.value: v for d, v in spec.compute.tensor_flops_per_s.items()},
        "vector_flops_per_s": {d.value: v for d, v in spec.compute.vector_flops_per_s.items()},
        "hbm_size_bytes": spec.hbm.size_bytes,
        "hbm_bandwidth_bytes_per_s": spec.hbm.bandwidth_bytes_per_s,
        "l2_size_bytes": l2.size_bytes if l2 else None,
        "l2_bandwidth_bytes_per_s": l2.bandwidth_bytes_per_s if l2 else None,
        "tdp_w": spec.power.tdp_w,
        "power_limited_clock_hz": spec.compute.power_limited_clock_hz,
        "energy_calibration": spec.power.energy_calibration,
        "sustained_calibration": spec.sustained_calibration,
        "interconnect": None
        if link is None
        else {
            "link_type": link.link_type.value,
            "devices_per_node": link.devices_per_node,
            "bandwidth_bytes_per_s": link.bandwidth_bytes_per_s,
            "network": None
            if link.network is None
            else {
                "nics_per_node": link.network.nics_per_node,
                "nic_bandwidth_bytes_per_s": link.network.nic_bandwidth_bytes_per_s,
            },
        },
    }
