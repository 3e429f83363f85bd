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

COLLECTIVE_ALGORITHMS = ("ring", "nvls")
"""NCCL's algorithms the models run (``NCCL_ALGO``): its ring, or NVLink SHARP (all-reduce in
the NVSwitch, on configs with ``interconnect.nvls_bandwidth_bytes_per_s``)."""

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
        doc="devices in the group (required; 2 for send_recv); all in one node of the "
        "hardware's interconnect",
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
        doc="NCCL's algorithm: ring (default) or nvls, NVLink SHARP (all_reduce only, reduced in "
        "the NVSwitch; the config must give interconnect.nvls_bandwidth_bytes_per_s)",
    ),
)
