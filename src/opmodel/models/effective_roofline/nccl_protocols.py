"""NCCL's protocols as its tuning model prices them: one table for the ring inside a node, the
ring across nodes and the tree.

Every constant is NCCL's (src/graph/tuning.cc, NVIDIA/nccl at commit 01afd20): ``baseLat``
and ``hwLat`` of the ring and tree over NVLink, PCIe and the network, in microseconds here in
seconds; the LL and LL128 bandwidth factors; the tree's correction table
(``treeCorrectionFactor``, by ``log2(bytes / 64)``). AMD's xGMI links take the NVLink
entries: RCCL, NCCL's fork, types an xGMI link as NCCL's NVLink path (``LINK_NVL``, its
bandwidth a multiple of ``ncclTopoXGMISpeed``, ROCm/rccl src/graph), so its tuning model prices
their steps as NVLink's (:func:`_steps`). How the models use them:
:mod:`.nccl_algorithms` (the ring inside a node and across, the tree across);
docs/models/collective.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from opmodel.core.frozen_dict import FrozenDict
from opmodel.hardware.interconnect import LinkType

__all__ = ["NCCL_PROTOCOLS", "NcclProtocol"]


def _steps(nvlink_s: float, pcie_s: float) -> FrozenDict[LinkType, float]:
    """Per-step latencies by link type: NVLink's, PCIe's, and xGMI at NVLink's (docstring)."""
    return FrozenDict({LinkType.NVLINK: nvlink_s, LinkType.PCIE: pcie_s, LinkType.XGMI: nvlink_s})


@dataclass(frozen=True, slots=True, kw_only=True)
class NcclProtocol:
    """One protocol's latencies and bandwidth shares: the ring's base and per-step latency
    (by link type; ``net_step_s`` for a step through the network), its share of the bulk rate
    inside a node (all-reduce, other operations) and across nodes, and the same for the tree
    with NCCL's correction of it at medium sizes."""

    name: str
    base_s: float
    step_s: Mapping[LinkType, float]
    share_all_reduce: float
    share: float
    net_step_s: float
    share_across_nodes: float
    tree_base_s: float
    tree_step_s: Mapping[LinkType, float]
    tree_net_step_s: float
    tree_share: float
    tree_correction: tuple[float, ...]  # by log2(bytes / 64), 0..21; 1 from there


NCCL_PROTOCOLS = (
    NcclProtocol(
        name="ll",  # 8-byte stores of 4 data bytes and a flag
        base_s=3.6e-6,
        step_s=_steps(0.47e-6, 1.0e-6),
        share_all_reduce=1 / 4,
        share=1 / 3,
        net_step_s=2.7e-6,
        share_across_nodes=1 / 4,
        tree_base_s=4.4e-6,
        tree_step_s=_steps(0.52e-6, 1.0e-6),
        tree_net_step_s=5.0e-6,
        tree_share=1 / 3.8,
        tree_correction=(1.0,) * 4
        + (0.9, 0.8)
        + (0.7,) * 4
        + (0.6, 0.5, 0.4, 0.4, 0.5, 0.6)
        + (0.7, 0.8, 0.9, 1.0, 1.0, 1.0),
    ),
    NcclProtocol(
        name="ll128",  # 120 of every 128 bytes carry data
        base_s=10.0e-6,
        step_s=_steps(1.9e-6, 2.5e-6),
        share_all_reduce=0.92,
        share=0.92,
        net_step_s=4.0e-6,
        share_across_nodes=0.92,
        tree_base_s=4.4e-6,
        tree_step_s=_steps(1.2e-6, 1.9e-6),
        tree_net_step_s=8.5e-6,
        tree_share=0.915,
        tree_correction=(1.0,) * 5
        + (0.9, 0.8, 0.8, 0.8, 0.7, 0.6, 0.6, 0.6, 0.5, 0.6, 0.6)
        + (0.7, 0.7, 0.8, 0.9, 0.9, 1.0),
    ),
    NcclProtocol(
        name="simple",  # bulk copies behind a flag per chunk
        base_s=8.4e-6,
        step_s=_steps(3.4e-6, 5.7e-6),
        share_all_reduce=1.0,
        share=1.0,
        net_step_s=9.6e-6,
        share_across_nodes=1.0,
        tree_base_s=0.0,
        tree_step_s=_steps(28e-6, 28e-6),
        tree_net_step_s=50e-6,
        tree_share=1.0,
        tree_correction=(0.9,) * 7 + (0.8, 0.7, 0.6, 0.6) + (0.5,) * 6 + (0.6, 0.6, 0.7, 0.8, 0.9),
    ),
)
"""NCCL's protocols (module docstring)."""
