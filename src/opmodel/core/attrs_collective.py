"""The attributes of a collective communication op (``OpKind.COLLECTIVE``)."""

from __future__ import annotations

from opmodel.core.attr_spec import AttrSpec

__all__ = [
    "COLLECTIVE",
    "COLLECTIVE_ALGORITHMS",
    "COLLECTIVE_OPERATIONS",
    "COLLECTIVE_PROTOCOLS",
    "REDUCING_OPERATIONS",
]

COLLECTIVE_OPERATIONS = (
    "all_reduce",
    "all_gather",
    "reduce_scatter",
    "all_to_all",
    "broadcast",
    "send_recv",
)
"""What the ranks exchange (NCCL's collectives and a point-to-point send and receive)."""

REDUCING_OPERATIONS = frozenset({"all_reduce", "reduce_scatter"})
"""The operations that add what they receive to what they hold (vector FLOPs)."""

COLLECTIVE_PROTOCOLS = ("auto", "ll", "ll128", "simple")
"""NCCL's protocols (``NCCL_PROTO``); ``auto`` takes the fastest by the model, as NCCL's tuner
takes the fastest by its own cost model."""

COLLECTIVE_ALGORITHMS = ("auto", "ring", "tree", "nvls")
"""NCCL's algorithms the models run (``NCCL_ALGO``): its ring, its double binary tree
(all-reduce across nodes), or NVLink SHARP (all-reduce in the NVSwitch, on configs with
``interconnect.nvls_bandwidth_bytes_per_s``); ``auto`` (the default) takes the fastest NCCL
would weigh: inside one node the ring, or for an all-reduce of more than two ranks on a board
with an NVLS rate the faster of the ring and NVLS (NCCL's default where the fabric has it);
across nodes the faster of ring and tree for an all-reduce."""

COLLECTIVE = (
    AttrSpec(
        name="operation",
        kind=str,
        choices=COLLECTIVE_OPERATIONS,
        doc="the collective (required): all_reduce, all_gather, reduce_scatter, all_to_all, "
        "broadcast, or send_recv (one rank sends the input to another)",
    ),
    AttrSpec(
        name="ranks",
        kind=int,
        minimum=2,
        doc="devices in the group (required; 2 for send_recv); more than one node's devices "
        "need the hardware's interconnect.network",
    ),
    AttrSpec(
        name="ranks_per_node",
        kind=int,
        minimum=1,
        doc="the group's devices in each node (default: all of them, up to the node's "
        "devices_per_node); must divide ranks; 1 for a data-parallel group with one rank per node",
    ),
    AttrSpec(
        name="protocol",
        kind=str,
        choices=COLLECTIVE_PROTOCOLS,
        doc="NCCL's protocol: ll (8-byte stores, half of them flags), ll128 (120 of every 128 "
        "bytes data), simple (bulk copies behind a flag per chunk) or auto (default: the "
        "fastest); effective_roofline",
    ),
    AttrSpec(
        name="algorithm",
        kind=str,
        choices=COLLECTIVE_ALGORITHMS,
        doc="NCCL's algorithm: auto (default: in one node the ring, or the faster of ring and "
        "nvls for an all_reduce of more than two ranks where the config gives an NVLS rate; "
        "across nodes the faster of ring and tree), ring, tree (all_reduce across nodes) or "
        "nvls, NVLink SHARP (all_reduce in one node, reduced in the NVSwitch; the config must "
        "give interconnect.nvls_bandwidth_bytes_per_s)",
    ),
    AttrSpec(
        name="torus_shape",
        kind=tuple,
        minimum=2,
        doc="TPUs over ICI: the group's extent along each torus axis it spans, one to the "
        "torus's dimensions, whose product is ranks (default [ranks]: one axis), e.g. [4, 8] "
        "for a group over both axes of a 4x8 v6e slice",
    ),
    AttrSpec(
        name="wraparound",
        kind=bool,
        doc="TPUs over ICI: the group's axes close into rings (true, default: a full torus "
        "axis) or are lines (false: a slice without wraparound links, which halves the rate)",
    ),
)
