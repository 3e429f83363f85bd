"""The conformance suite's collective ops (``OpKind.COLLECTIVE``): every operation, 2-8 ranks
in each of 1-4 nodes."""

from __future__ import annotations

from opmodel import DType, LocalOp, OpKind, TensorSpec
from opmodel.core.attrs_collective import COLLECTIVE_OPERATIONS as _COLLECTIVES
from opmodel.hardware import HardwareSpec
from opmodel.hardware.interconnect import InterconnectSpec, LinkType


def collective(s: dict[str, int], d: DType) -> LocalOp:
    """``n`` elements a rank sends (all-gather) or receives (reduce-scatter), or its buffer."""
    operation, nodes = _COLLECTIVES[s["operation"]], s["nodes"]
    per_node = s["ranks"]
    if operation == "send_recv":  # a send has a sender and a receiver, in one node or two
        nodes = min(nodes, 2)
        per_node = 2 // nodes
    ranks = per_node * nodes
    send = s["n"] * ranks if operation == "reduce_scatter" else s["n"]
    recv = s["n"] * ranks if operation == "all_gather" else s["n"]
    tensors = (TensorSpec("input", (send,), d), TensorSpec("output", (recv,), d))
    attrs: dict[str, object] = {"operation": operation, "ranks": ranks, "ranks_per_node": per_node}
    if operation == "all_reduce" and s["nvls"] and nodes == 1:
        attrs["algorithm"] = "nvls"  # NVLink SHARP, on the configs that give its rate
    return LocalOp(
        name="collective", kind=OpKind.COLLECTIVE, phase="inference", tensors=tensors, attrs=attrs
    )


COLLECTIVE_SIZES = {
    "n": (1, 1 << 26),
    "ranks": (2, 8),
    "nodes": (1, 4),
    "operation": (0, len(_COLLECTIVES) - 1),
    "nvls": (0, 1),
}
"""Buffer elements, ranks in each node, nodes, the operation's index in ``_COLLECTIVES`` and
NVLink SHARP (1, in one node)."""


def refusal(op: LocalOp, hardware: HardwareSpec, model_name: str) -> str | None:
    """The one-line error ``model_name`` gives a collective ``op`` on ``hardware`` (a config
    without links, a node smaller than the group's share of it, a group across nodes without
    NICs or across a TPU's ICI domains; NVLink SHARP on one without its rate, or on a TPU,
    under ``effective_roofline``), else None; None
    for every other op."""
    if op.kind is not OpKind.COLLECTIVE:
        return None
    link = hardware.interconnect
    if link is None:
        return "has no interconnect section"
    per_node = op.attrs.get("ranks_per_node")
    assert isinstance(per_node, int)
    if per_node > link.devices_per_node:
        return "exceeds the"
    return _split_or_nvls(op, link, per_node, model_name)


def _split_or_nvls(
    op: LocalOp, link: InterconnectSpec, per_node: int, model_name: str
) -> str | None:
    """A group across nodes without NICs or across a TPU's ICI domains; NVLink SHARP on a TPU
    (XLA, not NCCL, runs it), or without its rate under ``effective_roofline``."""
    ici = link.link_type is LinkType.ICI
    if op.attrs.get("ranks") != per_node and (ici or link.network is None):
        return "splits the group across ICI domains" if ici else "has no interconnect.network"
    if ici and op.attrs.get("algorithm") == "nvls":
        return "XLA runs the collective"
    nvls = op.attrs.get("algorithm") == "nvls" and model_name == "effective_roofline"
    if nvls and link.nvls_bandwidth_bytes_per_s is None:
        return "needs interconnect.nvls_bandwidth_bytes_per_s"
    return None
