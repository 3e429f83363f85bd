"""Bytes, steps and FLOPs of one rank's part of a collective, one formula per function.

``S`` is the op's buffer (the larger of the send and receive buffer, the size nccl-tests
reports) and ``n`` the ranks. The bytes each rank sends over its links are nccl-tests' bus
bytes, ``busbw = algbw x factor`` with ``algbw = S / t`` (NVIDIA/nccl-tests
doc/PERFORMANCE.md): ``2 (n - 1) / n`` for all-reduce (a reduce-scatter, then an all-gather),
``(n - 1) / n`` for all-gather, reduce-scatter and all-to-all, 1 for broadcast and a send.
Every rank receives as much as it sends. Steps are the dependent link transfers of a ring
(Patarasuk and Yuan, J. Parallel Distrib. Comput. 69(2), 2009): ``2 (n - 1)`` for all-reduce,
``n - 1`` for all-gather, reduce-scatter and a pipelined broadcast; all-to-all and a send go
to their peers directly, one step. HBM: a rank reads its send buffer and writes its receive
buffer; what it receives is staged (written to and read back from NCCL's buffers) except in a
send, which lands in place. With NVLink SHARP (``algorithm: nvls``, all-reduce only) the
NVSwitch reduces: each rank sends its buffer into the switch once and receives the reduced
buffer once (``S`` each way, one step, no additions on the GPU).

Across nodes (``N`` nodes of ``g`` ranks, ``n = N g``) a ring leaves each node once, so a
node's NICs send ``B`` (the bus bytes of one rank) per collective, ``B / g`` for each of its
ranks on average, and the rest, ``B (g - 1) / g``, crosses the node's own links; of a ring's
steps, ``2 (N - 1)`` of an all-reduce and ``N - 1`` of the others cross the network (NCCL's
tuning model, src/graph/tuning.cc, ``nInterSteps``). An all-to-all sends ``S / n`` to each
peer: ``S (n - g) / n`` to other nodes, ``S (g - 1) / n`` inside its own.
"""

from __future__ import annotations

from opmodel.core.attrs_collective import REDUCING_OPERATIONS

__all__ = [
    "collective_bus_factor",
    "collective_hbm_bytes",
    "collective_inter_steps",
    "collective_link_bytes",
    "collective_network_bytes",
    "collective_reduce_flops",
    "collective_steps",
    "tree_steps",
]

_HALF_RING = frozenset({"all_gather", "reduce_scatter", "all_to_all"})


def collective_bus_factor(operation: str, ranks: int) -> tuple[int, int]:
    """Bytes each rank sends per byte of buffer (nccl-tests' bus bandwidth factor), as
    ``(numerator, denominator)``."""
    if operation == "all_reduce":
        return 2 * (ranks - 1), ranks
    if operation in _HALF_RING:
        return ranks - 1, ranks
    return 1, 1  # broadcast, send_recv


def collective_link_bytes(
    operation: str, ranks: int, buffer_bytes: int, algorithm: str = "ring"
) -> int:
    """Bytes one rank sends over its links (and receives): ``factor x S``, rounded up; ``S``
    with NVLink SHARP."""
    if algorithm == "nvls":
        return buffer_bytes
    numerator, denominator = collective_bus_factor(operation, ranks)
    return -((-buffer_bytes * numerator) // denominator)


def collective_steps(operation: str, ranks: int, algorithm: str = "ring") -> int:
    """Dependent link transfers of the ring (or one for direct sends and NVLink SHARP)."""
    if algorithm == "nvls":
        return 1
    if operation == "all_reduce":
        return 2 * (ranks - 1)
    if operation in {"all_gather", "reduce_scatter", "broadcast"}:
        return ranks - 1
    return 1  # all_to_all, send_recv: every peer at once


def collective_reduce_flops(
    operation: str, ranks: int, buffer_elements: int, algorithm: str = "ring"
) -> int:
    """Additions one rank makes: ``(n - 1) / n`` of the buffer's elements for all-reduce and
    reduce-scatter (each rank reduces its ``1 / n`` share with ``n - 1`` others' copies), none
    for the others nor with NVLink SHARP (the switch adds)."""
    if operation not in REDUCING_OPERATIONS or algorithm == "nvls":
        return 0
    return buffer_elements * (ranks - 1) // ranks


def collective_hbm_bytes(
    operation: str, link_bytes: int, send_bytes: int, recv_bytes: int
) -> tuple[int, int]:
    """``(read, written)`` HBM bytes of one rank: its buffers, and what it receives staged
    through NCCL's buffers (written on arrival, read back to reduce, forward or copy out)."""
    staged = 0 if operation == "send_recv" else link_bytes
    return send_bytes + staged, recv_bytes + staged


def collective_network_bytes(operation: str, ranks: int, per_node: int, link_bytes: int) -> int:
    """Of the ``link_bytes`` a rank sends, those that leave its node (its share of its node's
    NIC traffic) when the group has ``per_node`` ranks in each node; 0 inside one node."""
    if per_node >= ranks:
        return 0
    if operation == "all_to_all":  # its peers in other nodes: n - g of its n - 1
        return -((-link_bytes * (ranks - per_node)) // (ranks - 1))
    return -((-link_bytes) // per_node)  # a ring (and a send) leaves each node once


def collective_inter_steps(operation: str, nodes: int) -> int:
    """Steps of the ring that cross the network (NCCL's ``nInterSteps``): those of a ring of
    the ``N`` nodes, ``2 (N - 1)`` for an all-reduce, ``N - 1`` for the other rings, 1 for a
    direct send or all-to-all; 0 inside one node."""
    return collective_steps(operation, nodes) if nodes > 1 else 0


def tree_steps(per_node: int, nodes: int) -> int:
    """Dependent transfers of NCCL's tree all-reduce, up and back down: the chain of ``g`` ranks
    in each node and ``floor(log2 N)`` levels of the tree across nodes, twice."""
    return 2 * (per_node - 1 + (nodes.bit_length() - 1))
