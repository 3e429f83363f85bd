"""``opmodel hardware list --format text``: the shipped configs as one aligned table.

One row per config from :func:`~opmodel.hardware.summary.hardware_summary`: kind and
architecture, the rated SM clock, the dense 16-bit tensor peak (bf16, else fp16; a TPU's MXU
peak) and the fp32 vector peak, HBM size and bandwidth, L2 size, TDP, the sustained
power-limited clock (``-`` where the config has none) and which calibration files it names
(``energy``: ``power.energy_calibration``; ``sustained``: ``sustained_calibration``, fitted
clocks or HBM fraction), and the links to the node's other devices (``nvlink x8 450 GB/s``:
link type, devices per node, bandwidth each way; ``+ 8 NICs 50.0 GB/s`` where the config gives
the NICs to other nodes; ``-`` without an ``interconnect`` section).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from opmodel.report.text import si

__all__ = ["format_hardware_table"]

_COLUMNS = (
    "name",
    "kind",
    "arch",
    "clock",
    "tensor 16-bit",
    "vector fp32",
    "HBM",
    "HBM bandwidth",
    "L2",
    "TDP",
    "power-limited",
    "calibrated",
    "links",
)


def _peak(peaks: Mapping[str, float]) -> str:
    value = peaks.get("bf16") or peaks.get("fp16")
    return si(value, "FLOP/s") if value else "-"


def _row(s: Mapping[str, Any]) -> tuple[str, ...]:
    calibrated = [
        what
        for what, key in (("energy", "energy_calibration"), ("sustained", "sustained_calibration"))
        if s.get(key)
    ]
    limited = s.get("power_limited_clock_hz")
    l2 = s.get("l2_size_bytes")
    return (
        str(s["name"]),
        str(s["kind"]),
        str(s["architecture"]),
        si(s["clock_hz"], "Hz"),
        _peak(s["tensor_flops_per_s"]),
        si(s["vector_flops_per_s"].get("fp32", 0.0), "FLOP/s"),
        si(s["hbm_size_bytes"], "B"),
        si(s["hbm_bandwidth_bytes_per_s"], "B/s"),
        si(l2, "B") if l2 else "-",
        si(s["tdp_w"], "W"),
        si(limited, "Hz") if limited else "-",
        ", ".join(calibrated) or "-",
        _links(s.get("interconnect")),
    )


def _links(link: Mapping[str, Any] | None) -> str:
    """``nvlink x8 450 GB/s``: link type, devices per node and bandwidth each way."""
    if not link:
        return "-"
    rate = si(link["bandwidth_bytes_per_s"], "B/s")
    text = f"{link['link_type']} x{link['devices_per_node']} {rate}"
    network = link.get("network")
    if network:  # the NICs to other nodes: ``+ 8 NICs 50.0 GB/s``
        nic_rate = si(network["nic_bandwidth_bytes_per_s"], "B/s")
        text += f" + {network['nics_per_node']} NICs {nic_rate}"
    return text


def format_hardware_table(summaries: Sequence[Mapping[str, Any]]) -> str:
    """The aligned text table of ``summaries`` (a header line, one line per config)."""
    rows = [_COLUMNS, *(_row(s) for s in summaries)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(_COLUMNS))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        for row in rows
    ]
    return "\n".join(line.rstrip() for line in lines) + "\n"
