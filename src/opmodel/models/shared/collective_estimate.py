"""One rank's part of a collective: its links, its HBM and its additions (the roofline's).

``t = max(link bytes / link bandwidth, t_hbm, t_vector)``: the bytes a rank sends over its
links (nccl-tests' bus bytes, :mod:`opmodel.formulas.collective`) at the interconnect's line
rate, beside the roofline's HBM and vector-engine times of the same op. Energy adds the link's
energy per byte sent. ``effective_roofline`` replaces the link time with NCCL's protocols
(:mod:`opmodel.models.effective_roofline.collective_op`). docs/models/collective.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from opmodel.core.enums import Bound, Engine
from opmodel.core.errors import UnsupportedOpError
from opmodel.core.frozen_dict import FrozenDict
from opmodel.core.profile import EnergyBreakdown, LevelTraffic, OpProfile
from opmodel.core.values import FastValue, value_type
from opmodel.core.views import CollectiveView
from opmodel.formulas.collective import collective_link_bytes, collective_steps
from opmodel.formulas.energy import event_energy_j, static_energy_j
from opmodel.formulas.roofline import compute_time_s, memory_time_s

if TYPE_CHECKING:
    from opmodel.core.op import LocalOp
    from opmodel.hardware.interconnect import InterconnectSpec
    from opmodel.hardware.spec import HardwareSpec
    from opmodel.models.shared.roofline_estimate import RooflineSetup

__all__ = ["CollectiveDiagnostics", "LinkTime", "collective_profile", "interconnect_of"]

LINK_LEVEL = "interconnect"
"""The traffic and energy key of the links: bytes received (read) and sent (written)."""


@value_type
class LinkTime(FastValue):
    """How long the link bytes take: a fixed latency and a transfer at a rate."""

    latency_s: float  # NCCL's base and per-step latencies (0 in the roofline)
    bandwidth_bytes_per_s: float  # the rate the bytes move at
    protocol: str | None  # NCCL's protocol (effective_roofline), None in the roofline


@value_type
class CollectiveDiagnostics(FastValue):
    """Why a collective took its time: the link, HBM and vector times and which one binds."""

    operation: str
    ranks: int
    steps: int  # dependent link transfers of the ring
    protocol: str | None
    bound: Bound
    link_bytes: int  # one rank sends (and receives) this many
    link_bandwidth_bytes_per_s: float
    link_latency_s: float
    link_time_s: float  # latency + bytes / bandwidth
    hbm_time_s: float
    vector_time_s: float


def interconnect_of(op: LocalOp, view: CollectiveView, hardware: HardwareSpec) -> InterconnectSpec:
    """The hardware's links, checked against the op's group (one-line errors)."""
    link = hardware.interconnect
    if link is None:
        raise UnsupportedOpError(
            f"op '{op.name}' (collective): hardware '{hardware.name}' has no interconnect "
            "section (link_type, devices_per_node, bandwidth_bytes_per_s, energy_j_per_byte; "
            "docs/hardware.md, 'Interconnect'; a what-if: --set interconnect.link_type=pcie "
            "and the other three)"
        )
    if view.ranks > link.devices_per_node:
        raise UnsupportedOpError(
            f"op '{op.name}' (collective): attrs.ranks {view.ranks} exceeds the "
            f"{link.devices_per_node} devices of one {hardware.name} node; groups across nodes "
            "are not modelled"
        )
    return link


def collective_profile(
    op: LocalOp, setup: RooflineSetup, link: InterconnectSpec, timing: tuple[str, LinkTime]
) -> OpProfile:
    """The profile of ``op`` given its roofline setup, the hardware's links (checked by
    :func:`interconnect_of`) and its link time; ``timing`` is the implementation name and how
    the links move the bytes."""
    view = op.view
    assert isinstance(view, CollectiveView)
    implementation, link_time = timing
    sent = collective_link_bytes(view.operation, view.ranks, view.buffer_bytes, view.algorithm)
    t_link = link_time.latency_s + sent / link_time.bandwidth_bytes_per_s
    t_vector = compute_time_s(setup.vector_flops, setup.vector_flops_per_s, 1.0)
    t_hbm = memory_time_s(setup.moved_bytes, setup.hbm_bytes_per_s, 1.0, setup.hbm_latency_s)
    latency = max(t_link, t_hbm, t_vector)
    if latency == t_link:
        bound = Bound.INTERCONNECT
    else:
        bound = Bound.MEMORY if latency == t_hbm else Bound.VECTOR
    return OpProfile.make(
        latency_s=latency,
        flops=setup.vector_flops,
        engine=Engine.INTERCONNECT,
        footprint=op.footprint,
        traffic=FrozenDict(
            {**setup.traffic, LINK_LEVEL: LevelTraffic.make(read_bytes=sent, write_bytes=sent)}
        ),
        energy=_energy(setup, (sent, link.energy_j_per_byte), latency),
        implementation=implementation,
        diagnostics=CollectiveDiagnostics.make(
            operation=view.operation,
            ranks=view.ranks,
            steps=collective_steps(view.operation, view.ranks, view.algorithm),
            protocol=link_time.protocol,
            bound=bound,
            link_bytes=sent,
            link_bandwidth_bytes_per_s=link_time.bandwidth_bytes_per_s,
            link_latency_s=link_time.latency_s,
            link_time_s=t_link,
            hbm_time_s=t_hbm,
            vector_time_s=t_vector,
        ),
    )


def _energy(setup: RooflineSetup, link: tuple[int, float], latency_s: float) -> EnergyBreakdown:
    """The roofline's vector and HBM energy, the link's per byte sent, static power."""
    sent, j_per_byte = link
    return EnergyBreakdown.make(
        tensor_j=0.0,
        vector_j=event_energy_j(setup.vector_flops, setup.vector_j_per_flop),
        memory_j=FrozenDict(
            {
                "hbm": event_energy_j(setup.moved_bytes, setup.hbm_j_per_byte),
                LINK_LEVEL: event_energy_j(sent, j_per_byte),
            }
        ),
        static_j=static_energy_j(setup.static_w, latency_s),
    )
