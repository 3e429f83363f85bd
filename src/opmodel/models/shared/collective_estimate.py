"""One rank's part of a collective: its links, its HBM and its additions (the roofline's).

``t = max(link bytes / link bandwidth, t_hbm, t_vector)``: the bytes a rank sends over its
links (nccl-tests' bus bytes, :mod:`opmodel.formulas.collective`) at the interconnect's line
rate, beside the roofline's HBM and vector-engine times of the same op. Across nodes
(:class:`NodeGroup`) the bytes split into those inside the node and those through its NICs
(:func:`~opmodel.formulas.collective.collective_network_bytes`), each at its own links' rate.
Energy adds each link's energy per byte sent. ``effective_roofline`` replaces the link time
with NCCL's protocols (:mod:`opmodel.models.effective_roofline.collective_op`).
docs/models/collective.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from opmodel.core.enums import Bound, Engine
from opmodel.core.errors import UnsupportedOpError
from opmodel.core.frozen_dict import FrozenDict
from opmodel.core.profile import EnergyBreakdown, LevelTraffic, OpProfile
from opmodel.core.values import FastValue, value_type
from opmodel.core.views import CollectiveView
from opmodel.formulas.collective import (
    collective_link_bytes,
    collective_network_bytes,
    collective_steps,
    tree_steps,
)
from opmodel.formulas.energy import event_energy_j, static_energy_j
from opmodel.formulas.ici import ici_steps
from opmodel.formulas.roofline import compute_time_s, memory_time_s
from opmodel.hardware.interconnect import LinkType

if TYPE_CHECKING:
    from opmodel.core.op import LocalOp
    from opmodel.hardware.interconnect import InterconnectSpec
    from opmodel.hardware.spec import HardwareSpec
    from opmodel.models.shared.roofline_estimate import RooflineSetup

__all__ = [
    "CollectiveDiagnostics",
    "LinkTime",
    "NodeGroup",
    "collective_profile",
    "interconnect_of",
    "split_link_bytes",
    "split_transfer_s",
]

LINK_LEVEL = "interconnect"
"""The traffic and energy key of the links: bytes received (read) and sent (written)."""
NETWORK_LEVEL = "network"
"""The traffic and energy key of the NICs between nodes (a group across nodes only)."""
_ICI = LinkType.ICI  # bound once: CPython looks an enum member up at ~50 ns a time


@value_type
class NodeGroup(FastValue):
    """Where the group's ranks sit: ``nodes`` nodes of ``per_node`` ranks; each device drives
    ``nic_share`` of its node's NICs (0 without an ``interconnect.network``)."""

    nodes: int
    per_node: int
    nic_share: float


@value_type
class LinkTime(FastValue):
    """How long the link bytes take: a fixed latency and a transfer at a rate."""

    latency_s: float  # NCCL's base and per-step latencies (0 in the roofline)
    bandwidth_bytes_per_s: float  # the rate the bus bytes move at (the slowest link's share)
    protocol: str | None  # NCCL's protocol (effective_roofline), None in the roofline
    algorithm: str = "ring"  # NCCL's algorithm: ring, tree or nvls
    chunk_bytes: int | None = None  # NCCL's NVLS chunk (algorithm nvls), else None


@value_type
class CollectiveDiagnostics(FastValue):
    """Why a collective took its time: the link, HBM and vector times and which one binds."""

    operation: str
    ranks: int
    nodes: int  # the group's nodes (1: inside one node)
    ranks_per_node: int
    algorithm: str  # the one that ran: ring, tree or nvls
    steps: int  # dependent link transfers of the algorithm that ran
    protocol: str | None
    bound: Bound
    link_bytes: int  # one rank sends (and receives) this many
    network_bytes: int  # of those, through the NICs to other nodes (0 inside one node)
    link_bandwidth_bytes_per_s: float
    link_latency_s: float
    link_time_s: float  # latency + bytes / bandwidth
    hbm_time_s: float
    vector_time_s: float
    chunk_bytes: int | None = None  # NCCL's NVLS chunk per channel and head (nvls), else None


def interconnect_of(
    op: LocalOp, view: CollectiveView, hardware: HardwareSpec
) -> tuple[InterconnectSpec, NodeGroup]:
    """The hardware's links and the group's nodes, checked against the op (one-line errors)."""
    link = hardware.interconnect
    where = f"op '{op.name}' (collective)"
    if link is None:
        raise UnsupportedOpError(
            f"{where}: hardware '{hardware.name}' has no interconnect section (link_type, "
            "devices_per_node, bandwidth_bytes_per_s, energy_j_per_byte; docs/hardware.md, "
            "'Interconnect'; a what-if: --set interconnect.link_type=pcie and the other three)"
        )
    devices = link.devices_per_node
    _check_torus_attrs(op, view, link, hardware.name)
    per_node = view.ranks_per_node or min(view.ranks, devices)
    if per_node > devices:
        raise UnsupportedOpError(
            f"{where}: attrs.ranks_per_node {per_node} exceeds the {devices} devices of one "
            f"{hardware.name} node"
        )
    if view.ranks % per_node:
        raise UnsupportedOpError(
            f"{where}: attrs.ranks {view.ranks} does not fill nodes of {devices} devices alike; "
            "give attrs.ranks_per_node, a divisor of ranks"
        )
    nodes, network = view.ranks // per_node, link.network
    if nodes > 1 and network is None:
        raise UnsupportedOpError(
            f"{where}: the group spans {nodes} nodes and hardware '{hardware.name}' has no "
            "interconnect.network (nics_per_node, nic_bandwidth_bytes_per_s, energy_j_per_byte; "
            "docs/hardware.md, 'Interconnect')"
        )
    return link, NodeGroup.make(nodes=nodes, per_node=per_node, nic_share=link.nics_per_device)


def _check_torus_attrs(
    op: LocalOp, view: CollectiveView, link: InterconnectSpec, hardware: str
) -> None:
    """``torus_shape`` and ``wraparound`` are a TPU's, NCCL's protocols and algorithms are not;
    groups beyond one ICI domain (more ranks than it holds, or ``ranks_per_node`` below
    ``ranks``) are not modelled, nor more torus axes than the torus has (one-line errors)."""
    ici = link.link_type is _ICI
    if not ici and view.torus_shape is None and view.wraparound is None:
        return  # NCCL's links and no torus attrs: the common case, checked first
    where = f"op '{op.name}' (collective)"
    if not ici:
        raise UnsupportedOpError(
            f"{where}: attrs.torus_shape and attrs.wraparound place the group on a TPU's ICI "
            f"torus; hardware '{hardware}' has link_type {link.link_type.value}"
        )
    if view.protocol != "auto" or view.algorithm not in ("auto", "ring"):
        raise UnsupportedOpError(
            f"{where}: attrs.protocol and attrs.algorithm choose NCCL's protocols and "
            "algorithms; on a TPU's ICI XLA runs the collective (leave them auto)"
        )
    if view.ranks_per_node is not None and view.ranks_per_node < view.ranks:
        raise UnsupportedOpError(
            f"{where}: attrs.ranks_per_node {view.ranks_per_node} splits the group across ICI "
            "domains (slices joined by the data-centre network), which is not modelled; give "
            "attrs.torus_shape for a group inside one slice"
        )
    if view.ranks > link.devices_per_node:
        raise UnsupportedOpError(
            f"{where}: attrs.ranks {view.ranks} exceeds the {link.devices_per_node} devices of "
            f"one {hardware} ICI domain (collectives across slices over the data-centre network "
            "are not modelled)"
        )
    axes, dims = len(view.torus_extents), link.torus_dims or 0
    if axes > dims:
        raise UnsupportedOpError(
            f"{where}: attrs.torus_shape {list(view.torus_extents)} spans {axes} axes; the torus "
            f"has {dims}"
        )


def split_link_bytes(view: CollectiveView, group: NodeGroup) -> tuple[int, int]:
    """``(bytes a rank sends, those of them through the NICs)``."""
    sent = collective_link_bytes(view.operation, view.ranks, view.buffer_bytes, view.algorithm)
    return sent, collective_network_bytes(view.operation, view.ranks, group.per_node, sent)


def split_transfer_s(
    sent: int, net: int, inside_bytes_per_s: float, nics_bytes_per_s: float
) -> float:
    """Seconds the slower part of ``sent`` bytes takes: those not through the NICs over the
    node's links, the ``net`` through them at the device's share of the NICs' rate (the two
    move at once)."""
    return max((sent - net) / inside_bytes_per_s, net / nics_bytes_per_s)


def collective_profile(
    op: LocalOp,
    setup: RooflineSetup,
    placed: tuple[InterconnectSpec, NodeGroup],
    timing: tuple[str, LinkTime],
    ran: CollectiveView | None = None,
) -> OpProfile:
    """The profile of ``op`` from its roofline setup, links and nodes (:func:`interconnect_of`)
    and link time (implementation name, how the links move the bytes); ``ran``: its view with
    the algorithm that ran where the op names another (``auto`` taking NVLS)."""
    view, (link, group), (implementation, link_time) = ran or op.view, placed, timing
    assert isinstance(view, CollectiveView)
    sent, net = split_link_bytes(view, group)
    t_link = link_time.latency_s + sent / link_time.bandwidth_bytes_per_s
    t_vector, t_hbm = _vector_and_hbm_s(setup)
    latency = max(t_link, t_hbm, t_vector)
    return OpProfile.make(
        latency_s=latency,
        flops=setup.vector_flops,
        engine=Engine.INTERCONNECT,
        footprint=op.footprint,
        traffic=_traffic(setup, sent - net, net),
        energy=_energy(setup, (sent - net, net), link, latency),
        implementation=implementation,
        diagnostics=CollectiveDiagnostics.make(
            operation=view.operation,
            ranks=view.ranks,
            nodes=group.nodes,
            ranks_per_node=group.per_node,
            algorithm=link_time.algorithm,
            steps=_steps(view, group, link_time.algorithm),
            protocol=link_time.protocol,
            bound=_bound(latency, t_link, t_hbm),
            link_bytes=sent,
            network_bytes=net,
            link_bandwidth_bytes_per_s=link_time.bandwidth_bytes_per_s,
            link_latency_s=link_time.latency_s,
            link_time_s=t_link,
            hbm_time_s=t_hbm,
            vector_time_s=t_vector,
            chunk_bytes=link_time.chunk_bytes,
        ),
    )


def _vector_and_hbm_s(setup: RooflineSetup) -> tuple[float, float]:
    """The roofline's vector-engine and HBM times of the op's additions and bytes."""
    t_vector = compute_time_s(setup.vector_flops, setup.vector_flops_per_s, 1.0)
    t_hbm = memory_time_s(setup.moved_bytes, setup.hbm_bytes_per_s, 1.0, setup.hbm_latency_s)
    return t_vector, t_hbm


def _steps(view: CollectiveView, group: NodeGroup, algorithm: str) -> int:
    if algorithm == "torus":
        return ici_steps(view.operation, view.torus_extents)
    if algorithm == "tree":
        return tree_steps(group.per_node, group.nodes)
    return collective_steps(view.operation, view.ranks, view.algorithm)


def _bound(latency_s: float, link_s: float, hbm_s: float) -> Bound:
    if latency_s == link_s:
        return Bound.INTERCONNECT
    return Bound.MEMORY if latency_s == hbm_s else Bound.VECTOR


def _traffic(setup: RooflineSetup, inside: int, net: int) -> FrozenDict[str, LevelTraffic]:
    """The roofline's HBM traffic, the node's links and (across nodes) the NICs."""
    levels = {**setup.traffic, LINK_LEVEL: LevelTraffic.make(read_bytes=inside, write_bytes=inside)}
    if net:
        levels[NETWORK_LEVEL] = LevelTraffic.make(read_bytes=net, write_bytes=net)
    return FrozenDict(levels)


def _energy(
    setup: RooflineSetup, sent: tuple[int, int], link: InterconnectSpec, latency_s: float
) -> EnergyBreakdown:
    """The roofline's vector and HBM energy, each link's per byte sent, static power."""
    inside, net = sent
    memory = {
        "hbm": event_energy_j(setup.moved_bytes, setup.hbm_j_per_byte),
        LINK_LEVEL: event_energy_j(inside, link.energy_j_per_byte),
    }
    if net and link.network is not None:
        memory[NETWORK_LEVEL] = event_energy_j(net, link.network.energy_j_per_byte)
    return EnergyBreakdown.make(
        tensor_j=0.0,
        vector_j=event_energy_j(setup.vector_flops, setup.vector_j_per_flop),
        memory_j=FrozenDict(memory),
        static_j=static_energy_j(setup.static_w, latency_s),
    )
