"""``effective_roofline`` of a collective: NCCL's ring, inside a node or across nodes, and its
tree across nodes, each with its three protocols, the fastest taken.

Inside one node the ring is ``t_p = a_p + s b_p + B / (R_bulk f_p)`` (:mod:`.collective_op`
gives the constants and their sources; ``f_p``: LL 1/4 for an all-reduce and 1/3 for the
others, LL128 0.92, Simple 1).

Across nodes, a group of ``N`` nodes of ``g`` ranks (``n = N g``) moves each rank's bus bytes
``B`` partly over the node's own links and partly through its NICs (``B_net``,
:func:`~opmodel.formulas.collective.collective_network_bytes`). Each device drives ``k`` of its
node's NICs (``nics_per_node / devices_per_node``), each moving ``R_nic`` (the config's
measured ``interconnect.network.nccl_bandwidth_bytes_per_s``, else 24 / 25 of the NIC's line
rate). With protocol ``p``:

- **ring** (every operation): ``t = lat_p + max((B - B_net) / R_bulk, B_net / (k R_nic)) / f_p``,
  ``lat_p = a_p + (s - s_net) b_p x m_p + s_net c_p``: ``s`` ring steps of which ``s_net``
  cross the network (:func:`~opmodel.formulas.collective.collective_inter_steps`), ``c_p`` the
  network step, ``m_p`` 1.8 for LL (NCCL's penalty on its node-local LL steps across nodes);
  a Simple all-reduce's latency doubles to 1.9x once ``S >= n / 16 x 64 KiB`` (NCCL's "plateau
  effect of ring"). ``f_p``: LL 1/4, LL128 0.92 (0.7 with one rank per node, where a GPU sends
  and receives through one NIC), Simple 1.
- **tree** (all-reduce; NCCL's double binary tree across nodes, a chain inside each):
  ``t = a'_p + 2 ((g - 1) b'_p m_p + floor(log2 N) c'_p) + max(2 S / R_bulk, 2 (N - 1) / N x
  S / (g k R_nic)) / (0.9 f'_p x corr_p(S))``: each rank sends ``S`` up its node's chain and
  ``S`` down; across nodes each of the two trees' ``N - 1`` edges carries ``S / 2`` each way,
  ``2 (N - 1) / N x S`` through a node's NICs on average (``S`` on two nodes, where NCCL's
  maintainers see the tree's bus bandwidth exceed the NICs', NVIDIA/nccl issue #1576);
  ``f'_p``: LL 1/3.8, LL128 0.915, Simple 1; ``corr_p`` NCCL's measured correction of the tree
  at medium sizes.

``algorithm: auto`` takes the fastest of every allowed (algorithm, protocol), as NCCL's tuner
takes the fastest by its own model. Every constant is NCCL's tuning model (src/graph/tuning.cc,
NVIDIA/nccl at commit 01afd20, the table the single-node ring uses:
:mod:`.nccl_protocols`) or a published measurement:
``R_nic`` = 24 / 25 of the line rate: "the peak for 200G HDR is 24GB/s", "you should get ...
24GB/s inter-node" (NCCL's maintainer, NVIDIA/nccl issue #412, 2023). Not fitted.
docs/models/collective.md, "Groups across nodes".
"""

from __future__ import annotations

from opmodel.core.values import FastValue, value_type
from opmodel.core.views import CollectiveView
from opmodel.formulas.collective import collective_inter_steps, collective_steps
from opmodel.hardware.interconnect import InterconnectSpec, LinkType
from opmodel.models.effective_roofline.nccl_protocols import NCCL_PROTOCOLS, NcclProtocol
from opmodel.models.shared.collective_estimate import (
    LinkTime,
    NodeGroup,
    split_link_bytes,
    split_transfer_s,
)

__all__ = ["NCCL_NIC_FRACTION", "nccl_timing"]

NCCL_NIC_FRACTION = 24.0 / 25.0
"""Share of a NIC's line rate NCCL moves through it (module docstring)."""

_LL_LOCAL_PENALTY = 1.8  # NCCL multiplies its node-local LL step latency by this across nodes
_RING_PLATEAU = 1.9  # a Simple ring all-reduce across nodes from n / 16 x 64 KiB
_TREE_SHARE = 0.9  # NCCL's tree bandwidth against its ring's


@value_type
class _Rates(FastValue):
    """Bulk rates of the node's links and of one device's NICs, and what travels on each."""

    link_type: LinkType
    inside_bytes_per_s: float
    nics_bytes_per_s: float
    sent: int
    net: int
    steps: int  # of the ring
    net_steps: int  # of the ring's steps, those through the network (0 inside a node)


def _ring(p: NcclProtocol, view: CollectiveView, group: NodeGroup, r: _Rates) -> LinkTime:
    across, steps, net_steps = group.nodes > 1, r.steps, r.net_steps
    local = p.step_s[r.link_type] * (_LL_LOCAL_PENALTY if across and p.name == "ll" else 1.0)
    latency = p.base_s + (steps - net_steps) * local + net_steps * p.net_step_s
    plateau = across and view.operation == "all_reduce" and p.name == "simple"
    if plateau and view.buffer_bytes >= view.ranks / 16 * 65536:
        latency *= _RING_PLATEAU
    if not across:  # the node's links alone, at the protocol's share of the bulk rate
        share = p.share_all_reduce if view.operation == "all_reduce" else p.share
        rate = r.inside_bytes_per_s * share
        return LinkTime.make(latency_s=latency, bandwidth_bytes_per_s=rate, protocol=p.name)
    share = 0.7 if p.name == "ll128" and group.per_node == 1 else p.share_across_nodes
    transfer = split_transfer_s(r.sent, r.net, r.inside_bytes_per_s, r.nics_bytes_per_s) / share
    return LinkTime.make(
        latency_s=latency, bandwidth_bytes_per_s=r.sent / transfer, protocol=p.name
    )


def _tree(p: NcclProtocol, view: CollectiveView, group: NodeGroup, r: _Rates) -> LinkTime:
    local = p.tree_step_s[r.link_type] * (_LL_LOCAL_PENALTY if p.name == "ll" else 1.0)
    hops = group.nodes.bit_length() - 1  # floor(log2 N), NCCL's log2i
    latency = p.tree_base_s + 2 * ((group.per_node - 1) * local + hops * p.tree_net_step_s)
    both_ways = 2 * view.buffer_bytes  # up the node's chain and back down
    inside = both_ways / r.inside_bytes_per_s if group.per_node > 1 else 0.0
    # the two trees' N - 1 edges each carry S / 2 up and S / 2 down: 2 (N - 1) / N x S a node
    through_nics = both_ways * (group.nodes - 1) / group.nodes
    slowest = max(inside, through_nics / (group.per_node * r.nics_bytes_per_s))
    size_class = max(view.buffer_bytes >> 6, 1).bit_length() - 1  # log2i(bytes / 64)
    correction = p.tree_correction[size_class] if size_class < len(p.tree_correction) else 1.0
    transfer = slowest / (_TREE_SHARE * p.tree_share * correction)
    return LinkTime.make(
        latency_s=latency,
        bandwidth_bytes_per_s=r.sent / transfer,
        protocol=p.name,
        algorithm="tree",
    )


def nccl_timing(
    view: CollectiveView, placed: tuple[InterconnectSpec, NodeGroup], bulk_bytes_per_s: float
) -> LinkTime:
    """The fastest allowed (algorithm, protocol): the ring, and across nodes for an all-reduce
    the tree; ``bulk_bytes_per_s`` is NCCL's Simple rate over the node's own links."""
    link, group = placed
    network = link.network
    nic = 0.0  # inside one node no byte goes through a NIC
    if network is not None:
        nic = network.nccl_bandwidth_bytes_per_s or (
            network.nic_bandwidth_bytes_per_s * NCCL_NIC_FRACTION
        )
    sent, net = split_link_bytes(view, group)
    rates = _Rates.make(
        link_type=link.link_type,
        inside_bytes_per_s=bulk_bytes_per_s,
        nics_bytes_per_s=group.nic_share * nic,
        sent=sent,
        net=net,
        steps=collective_steps(view.operation, view.ranks),
        net_steps=collective_inter_steps(view.operation, group.nodes),
    )
    ring_ok = view.algorithm != "tree"
    tree_ok = (
        group.nodes > 1 and view.operation == "all_reduce" and view.algorithm in ("auto", "tree")
    )
    candidates: list[LinkTime] = []
    for p in NCCL_PROTOCOLS:
        if view.protocol in ("auto", p.name):
            if ring_ok:
                candidates.append(_ring(p, view, group, rates))
            if tree_ok:
                candidates.append(_tree(p, view, group, rates))
    best: LinkTime = min(candidates, key=lambda t: t.latency_s + sent / t.bandwidth_bytes_per_s)
    return best
