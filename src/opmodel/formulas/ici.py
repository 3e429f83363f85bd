"""What one link of a TPU's ICI torus carries in a collective, one formula per function.

A group of ``n`` devices spans ``d`` axes of the torus with extents ``k_1 .. k_d``
(``n = k_1 ... k_d``). Along an axis a device has a link to each neighbour: two on a ring
(``k >= 3`` with wraparound), one on a line (no wraparound, or an axis of 2, whose two
neighbours are the same device). ``r_i`` counts them, so a device receives over ``R = sum r_i``
links at once. ``S`` is the op's buffer (the larger of send and receive buffer). Each function
gives the bytes the busiest link carries each way; the time is that over one link's rate.

- All-gather and reduce-scatter, the buffer split so that every axis's links work at once
  (the cost model of Austin et al., "How to Scale Your Model", Google DeepMind 2025, part 3:
  a collective over more axes has their links' bandwidth together): a device receives
  ``(n - 1) / n x S`` over its ``R`` links, ``(n - 1) / n x S / R`` each. On a ring both
  directions carry half of the axis's data; on a line the device at an end receives everything
  through one link, which is why a line takes twice a ring's time.
- All-reduce: a reduce-scatter, then an all-gather, twice that.
- Broadcast: the root's ``R`` links each carry a ``1 / R`` share down its own spanning tree
  (a torus has as many edge-disjoint spanning trees as a device has links), ``S / R``.
- Send and receive: ``S`` over one link.
- All-to-all: ``S / n`` to every peer by the shortest way round, one axis after another.
  Over an axis of ``k``, pairs at offset ``j`` are ``n`` per offset; on a ring they take
  ``min(j, k - j)`` hops, and the ``2 n`` directed links of the axis share the hop-bytes
  evenly: ``S x M(k) / (2 k)`` per link with ``M(k) = sum_j min(j, k - j)``. On a line the
  middle link carries what its ``a = floor(k / 2)`` devices on one side send to the ``k - a``
  on the other, ``a (k - a) S / k``. The axes run at once; the busiest link sets the time.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["axis_links", "ici_link_bytes", "ici_steps"]

_GATHERS = frozenset({"all_gather", "reduce_scatter"})


def axis_links(extent: int, wraparound: bool) -> int:
    """Links from a device to its neighbours along one axis of ``extent`` devices: 2 on a
    ring of three or more, else 1."""
    return 2 if wraparound and extent >= 3 else 1


def _all_to_all_axis_bytes(extent: int, wraparound: bool, buffer_bytes: int) -> float:
    if axis_links(extent, wraparound) == 2:
        hops = sum(min(j, extent - j) for j in range(1, extent))
        return buffer_bytes * hops / (2 * extent)
    half = extent // 2
    return half * (extent - half) * buffer_bytes / extent


def ici_link_bytes(
    operation: str, shape: Sequence[int], wraparound: bool, buffer_bytes: int
) -> float:
    """Bytes the busiest link carries each way (module docstring)."""
    ranks = math.prod(shape)
    links = sum(axis_links(extent, wraparound) for extent in shape)
    if operation in _GATHERS:
        return buffer_bytes * (ranks - 1) / ranks / links
    if operation == "all_reduce":
        return 2 * buffer_bytes * (ranks - 1) / ranks / links
    if operation == "broadcast":
        return buffer_bytes / links
    if operation == "all_to_all":
        return max(_all_to_all_axis_bytes(k, wraparound, buffer_bytes) for k in shape)
    return float(buffer_bytes)  # send_recv


def ici_steps(operation: str, shape: Sequence[int]) -> int:
    """Dependent transfers of the torus schedule: a ring or line along each axis in turn,
    ``sum (k_i - 1)`` (twice for an all-reduce); all-to-all and a send go at once, one."""
    if operation in ("all_to_all", "send_recv"):
        return 1
    steps = sum(extent - 1 for extent in shape)
    return 2 * steps if operation == "all_reduce" else steps
