"""The links between a device and its peers: :class:`InterconnectSpec` inside one node, its
optional :class:`NetworkSpec` between nodes.

A config's optional ``interconnect`` section; the collective op kind needs it, and a group
across nodes needs its ``network`` part (docs/hardware.md, "Interconnect"). Physical facts
only: what NCCL's protocols make of the links is the model's (docs/models/collective.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from opmodel.core.enums import StrValueEnum
from opmodel.hardware import ranges

__all__ = ["InterconnectSpec", "LinkType", "NetworkSpec"]


class LinkType(StrValueEnum):
    """How the devices of a node reach each other: NVLink (through NVSwitch when there are
    more than two) or PCIe, where NCCL's per-step latencies differ by link type; AMD's xGMI
    (Infinity Fabric), a full mesh of point-to-point links, one to each other device of the
    node, which RCCL types as NCCL's NVLink path (docs/models/collective.md, "xGMI"); or a
    TPU's ICI, point-to-point links to its neighbours in a 2-D or 3-D torus, where XLA runs the
    collectives (docs/models/collective.md, "TPUs over ICI")."""

    NVLINK = "nvlink"
    PCIE = "pcie"
    XGMI = "xgmi"
    ICI = "ici"


_XGMI = LinkType.XGMI  # bound once: CPython looks an enum member up at ~50 ns a time


@dataclass(frozen=True, slots=True, kw_only=True)
class NetworkSpec:
    """The NICs that join a node to the other nodes (InfiniBand or RoCE), shared evenly by the
    node's devices: each device drives ``nics_per_node / devices_per_node`` of them (a
    rail-optimised node has one per device).

    ``nic_bandwidth_bytes_per_s`` is one NIC's line rate in one direction (400 Gb/s NDR ->
    5e10). ``nccl_bandwidth_bytes_per_s`` (optional) is the rate NCCL moves data through one
    NIC, a published measurement; without it the model takes 24 / 25 of the line rate
    (docs/models/collective.md). ``energy_j_per_byte`` is the energy of moving one byte from
    one node to another (NIC, optics, switch).
    """

    nics_per_node: int = field(metadata=ranges.COUNT)
    nic_bandwidth_bytes_per_s: float = field(metadata=ranges.BYTES_PER_S)
    energy_j_per_byte: float = field(metadata=ranges.J_PER_BYTE)
    nccl_bandwidth_bytes_per_s: float | None = field(default=None, metadata=ranges.BYTES_PER_S)


@dataclass(frozen=True, slots=True, kw_only=True)
class InterconnectSpec:
    """One device's links to the other devices of its node.

    ``bandwidth_bytes_per_s`` is the device's total link bandwidth in one direction (the
    datasheet's bidirectional figure halved: H100 SXM 900 GB/s -> 450 GB/s); with a switch
    (NVSwitch) every peer is reachable at that rate. ``devices_per_node`` bounds a collective's
    group. ``energy_j_per_byte`` is the energy of moving one byte across the link.
    ``nccl_bandwidth_bytes_per_s`` (optional) is the rate NCCL's bulk (Simple) protocol moves
    data over these links each way, a published measurement (nccl-tests' bus bandwidth of a
    bandwidth-bound collective); without it the model takes 370 / 450 of the line rate
    (docs/models/collective.md). ``torus_dims`` (ICI only, required there) is the torus's
    dimensions, 2 or 3: a device has ``2 x torus_dims`` links, one to each neighbour, each
    carrying ``bandwidth_bytes_per_s / (2 x torus_dims)`` each way; ``devices_per_node`` is
    then the largest group one ICI domain (a pod's largest slice) holds. On ``xgmi`` the
    device has ``devices_per_node - 1`` links, one to each peer, each carrying
    ``bandwidth_bytes_per_s / (devices_per_node - 1)`` each way (and ``nccl_bandwidth_bytes_per_s``
    shared the same way); a group of ``g`` ranks of one node reaches its peers over ``g - 1`` of
    them (:meth:`group_share`).
    ``nvls_bandwidth_bytes_per_s`` (optional) is the algorithm
    bandwidth (buffer bytes per second) of an all-reduce NCCL runs with NVLink SHARP, the
    reduction in the NVSwitch (H100 and later boards); a collective with ``algorithm: nvls``
    needs it. ``network`` (optional) describes the NICs between nodes; a collective whose
    group spans nodes needs it.
    """

    link_type: LinkType
    devices_per_node: int = field(metadata=ranges.COUNT)
    bandwidth_bytes_per_s: float = field(metadata=ranges.BYTES_PER_S)
    energy_j_per_byte: float = field(metadata=ranges.J_PER_BYTE)
    nccl_bandwidth_bytes_per_s: float | None = field(default=None, metadata=ranges.BYTES_PER_S)
    nvls_bandwidth_bytes_per_s: float | None = field(default=None, metadata=ranges.BYTES_PER_S)
    network: NetworkSpec | None = None
    torus_dims: int | None = field(default=None, metadata=ranges.COUNT)

    @property
    def link_bandwidth_bytes_per_s(self) -> float:
        """One link's rate each way: ``bandwidth_bytes_per_s / (2 x torus_dims)`` on ICI,
        ``bandwidth_bytes_per_s / (devices_per_node - 1)`` on an xGMI mesh, the whole rate on
        NVLink (through a switch) and PCIe."""
        dims = self.torus_dims
        if dims:
            return self.bandwidth_bytes_per_s / (2 * dims)
        return self.bandwidth_bytes_per_s * self.group_share(2)

    def group_share(self, ranks_in_node: int) -> float:
        """The share of the device's link bandwidth a group of ``ranks_in_node`` ranks of one
        node can use: on an xGMI mesh the links to its ``ranks_in_node - 1`` peers,
        ``(ranks_in_node - 1) / (devices_per_node - 1)`` (RCCL's note on MI300X: with fewer
        than 8 GPUs "one can only achieve a fraction of the potential bandwidth", ROCm/rccl
        pull request #1270); 1 elsewhere (a switch or a bus reaches every peer at the whole
        rate)."""
        if self.link_type is not _XGMI or self.devices_per_node < 2:
            return 1.0
        peers = min(max(ranks_in_node, 2), self.devices_per_node) - 1
        return peers / (self.devices_per_node - 1)

    @property
    def nics_per_device(self) -> float:
        """Each device's share of its node's NICs, ``nics_per_node / devices_per_node`` (0
        without a ``network``)."""
        network = self.network
        return 0.0 if network is None else network.nics_per_node / self.devices_per_node
