"""What the text report says of a collective's links: their line rates each way and the
accuracy table's figures (none across nodes)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from opmodel.core.op import LocalOp
from opmodel.hardware.spec import HardwareSpec
from opmodel.report.accuracy import Validated, validated

__all__ = ["collective_validated", "link_rate", "network_rate"]


def collective_validated(
    op: LocalOp, implementation: str, hardware: HardwareSpec, diagnostics: Mapping[str, Any]
) -> Validated | None:
    """The table's figures for ``op`` (:func:`~opmodel.report.accuracy.validated`); a
    collective across nodes has none (the table's collectives ran inside one node)."""
    found = validated(op, implementation, hardware.name)
    if found is not None and diagnostics.get("nodes", 1) > 1:
        return Validated("collective-across-nodes", hardware.name, 0, None, None)
    return found


def link_rate(hardware: HardwareSpec) -> float | None:
    """The line rate each way of the links to the node's other devices."""
    link = hardware.interconnect
    return None if link is None else link.bandwidth_bytes_per_s


def network_rate(hardware: HardwareSpec) -> float | None:
    """One device's share of its node's NICs, at their line rate each way."""
    link = hardware.interconnect
    if link is None or link.network is None:
        return None
    return link.nics_per_device * link.network.nic_bandwidth_bytes_per_s
