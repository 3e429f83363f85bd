"""``effective_roofline`` of a collective on a TPU's ICI torus, as XLA runs it.

``t = a + L / (W x e)``: ``L`` the bytes the busiest link carries each way for the group's
torus shape (:func:`opmodel.formulas.ici.ici_link_bytes`), ``W`` one link's rate each way
(``interconnect.bandwidth_bytes_per_s / (2 x torus_dims)``), ``e`` the share of it a
collective's payload gets and ``a`` its fixed cost. Both constants come from one published
measurement, marin-community/marin issue #6736 (2026-06-28): JAX ``lax.ppermute`` between
neighbours on v5p-8 and v6e-8, from repeat-count slopes inside one compiled loop (no host
launch), 1 KiB to 64 MiB per device:

- ``e = 0.865``: the large-payload fits move 86.3 GB/s (v5p) and 86.8 GB/s (v6e) over links
  of 100 GB/s each way (Google Cloud's v5p and v6e pages: 1,200 and 800 GB/s bidirectional
  per chip over 6 and 4 links), 0.863 and 0.868;
- ``a = 5 us``: the 1-16 KiB payloads take about 4.5-5.5 us (v5p) and 5.6-5.9 us (v6e).

Those rows are this model's training rows; scripts/compare_published_ici.py reports them and
the held-out rest. No per-step latency is charged (no published time resolves it), so large
groups of small messages come out optimistic. The roofline's HBM and vector-engine times bound
it from below, as for NCCL. docs/models/collective.md, "TPUs over ICI".
"""

from __future__ import annotations

from opmodel.core.op import LocalOp
from opmodel.core.profile import OpProfile
from opmodel.core.views import CollectiveView
from opmodel.formulas.collective import collective_link_bytes
from opmodel.formulas.ici import axis_links, ici_link_bytes
from opmodel.hardware.interconnect import InterconnectSpec
from opmodel.hardware.spec import HardwareSpec
from opmodel.models.shared.collective_estimate import LinkTime, NodeGroup, collective_profile
from opmodel.models.shared.roofline_estimate import roofline_setup

__all__ = ["ICI_COLLECTIVE_LATENCY_S", "ICI_PAYLOAD_FRACTION", "predict_ici_collective"]

ICI_PAYLOAD_FRACTION = 0.865
"""Share of an ICI link's rate a collective's payload moves at (module docstring)."""

ICI_COLLECTIVE_LATENCY_S = 5.0e-6
"""Fixed cost of one collective over ICI (module docstring)."""


def predict_ici_collective(
    op: LocalOp, hardware: HardwareSpec, placed: tuple[InterconnectSpec, NodeGroup]
) -> OpProfile:
    """One device's part of the collective ``op`` over ``hardware``'s ICI torus."""
    view = op.view
    assert isinstance(view, CollectiveView)
    spec = placed[0]
    shape = view.torus_extents  # checked against the torus by interconnect_of
    wraparound = True if view.wraparound is None else view.wraparound
    busiest = ici_link_bytes(view.operation, shape, wraparound, view.buffer_bytes)
    transfer_s = busiest / (spec.link_bandwidth_bytes_per_s * ICI_PAYLOAD_FRACTION)
    # the profile prices the bus bytes a device sends: give them the rate that takes transfer_s
    sent = collective_link_bytes(view.operation, view.ranks, view.buffer_bytes)
    timing = LinkTime.make(
        latency_s=ICI_COLLECTIVE_LATENCY_S,
        bandwidth_bytes_per_s=sent / transfer_s,
        protocol=None,
        algorithm="torus",
    )
    kind = "ring" if any(axis_links(k, wraparound) == 2 for k in shape) else "line"
    name = f"effective_roofline/ici-{kind}-{len(shape)}d"
    return collective_profile(op, roofline_setup(op, hardware), placed, (name, timing))
