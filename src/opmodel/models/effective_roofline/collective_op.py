"""``effective_roofline`` of a collective: NCCL's ring with its three protocols.

One rank's time with protocol ``p`` is ``t_p = a_p + s x b_p(link) + B / (R_bulk x f_p)``:
``s`` dependent steps of the ring (:func:`~opmodel.formulas.collective.collective_steps`),
``B`` the bytes a rank sends (nccl-tests' bus bytes), ``R_bulk`` the rate NCCL's bulk (Simple)
protocol moves data over one device's links each way, and ``f_p`` each protocol's share of it.
``R_bulk`` is the config's measured ``interconnect.nccl_bandwidth_bytes_per_s`` where it has
one, else ``e x R``, the share ``e`` of the line rate ``R`` (``bandwidth_bytes_per_s``).
On an xGMI mesh (``link_type: xgmi``) a group of ``g`` ranks of one node moves its bytes over
the links to its ``g - 1`` peers, ``R_bulk x (g - 1) / (devices_per_node - 1)``
(:meth:`~opmodel.hardware.interconnect.InterconnectSpec.group_share`).
``protocol: auto`` takes the smallest ``t_p``, as NCCL's tuner takes the smallest time of its
own cost model. The HBM and vector-engine times of the roofline bound it from below
(:mod:`opmodel.models.shared.collective_estimate`).

Sources of the constants, all NCCL's, none fitted here (the table: :mod:`.nccl_protocols`):
- ``a_p`` and ``b_p``: the ring's base latency and per-step hardware latency, in us, of NCCL's
  tuning model (src/graph/tuning.cc, ``baseLat`` and ``hwLat``, NVIDIA/nccl at commit
  01afd20): LL 3.6 + 0.47 per NVLink step (1.0 over PCIe), LL128 10.0 + 1.9 (2.5), Simple
  8.4 + 3.4 (5.7).
- ``e = 370 / 450``: "450GB/s is the line rate. With the protocol overhead (~20%) NCCL can
  get an effective NVLink bandwidth of 370GB/s" (NCCL's maintainer on an H100 node,
  NVIDIA/nccl-tests issue #212, 2024).
- ``f_p``: Simple 1; LL128 0.92 (120 of 128 bytes carry data); LL 1/4 for all-reduce and 1/3
  for the others (8-byte stores of 4 data bytes and a flag; the tuning model's factors).
``algorithm: nvls`` (NVLink SHARP, all-reduce in the NVSwitch): NCCL's chunked NVLS loops,
:mod:`.nvls` (checked on published nccl-tests runs: docs/validation.md, "Published nccl-tests
runs").
A TPU's ICI torus (``link_type: ici``): :mod:`.ici_collective`.
The ring inside a node and, for a group across nodes (attr ``ranks_per_node``, the config's
``interconnect.network``), the ring and tree through the NICs: :mod:`.nccl_algorithms`.
Equations and validation: docs/models/collective.md.
"""

from __future__ import annotations

from dataclasses import replace

from opmodel.core.errors import UnsupportedOpError
from opmodel.core.op import LocalOp
from opmodel.core.profile import OpProfile
from opmodel.core.views import CollectiveView
from opmodel.formulas.work import collective_work
from opmodel.hardware.interconnect import InterconnectSpec, LinkType
from opmodel.hardware.spec import HardwareSpec
from opmodel.models.effective_roofline.ici_collective import predict_ici_collective
from opmodel.models.effective_roofline.nccl_algorithms import nccl_timing
from opmodel.models.effective_roofline.nvls import NVLS_LATENCY_S, nvls_timing, nvls_usable
from opmodel.models.shared.collective_estimate import (
    LinkTime,
    NodeGroup,
    collective_profile,
    interconnect_of,
    split_link_bytes,
)
from opmodel.models.shared.roofline_estimate import roofline_setup, setup_of_work

__all__ = ["NCCL_BULK_FRACTION", "NVLS_LATENCY_S", "predict_collective"]

_ICI = LinkType.ICI  # bound once, as in collective_estimate
NCCL_BULK_FRACTION = 370.0 / 450.0
"""Share of the line rate NCCL's Simple protocol delivers (module docstring)."""


def predict_collective(op: LocalOp, hardware: HardwareSpec) -> OpProfile:
    """One rank's part of the collective ``op`` on ``hardware``'s interconnect."""
    view = op.view
    assert isinstance(view, CollectiveView)
    spec, group = interconnect_of(op, view, hardware)
    if spec.link_type is _ICI:
        return predict_ici_collective(op, hardware, (spec, group))
    bulk = spec.nccl_bandwidth_bytes_per_s or spec.bandwidth_bytes_per_s * NCCL_BULK_FRACTION
    bulk *= spec.group_share(group.per_node)  # an xGMI mesh: the links to the group's peers
    if view.algorithm == "tree" and group.nodes == 1:
        raise UnsupportedOpError(
            f"op '{op.name}' (collective): algorithm tree runs across nodes (the group is "
            f"one node of {group.per_node} ranks; use ring or auto)"
        )
    placed = (spec, group)
    if view.algorithm == "nvls":
        return _profile(op, hardware, placed, nvls_timing(op, spec, hardware))
    ring = nccl_timing(view, placed, bulk)
    if view.algorithm == "auto" and _nvls_allowed(view, spec, group, hardware):
        nvls = nvls_timing(op, spec, hardware)
        ring_s = ring.latency_s + split_link_bytes(view, group)[0] / ring.bandwidth_bytes_per_s
        if nvls.latency_s + view.buffer_bytes / nvls.bandwidth_bytes_per_s < ring_s:
            # NCCL's tuner takes the faster by its model: the op as NVLS (its bytes, no additions)
            ran = replace(view, algorithm="nvls")
            setup = setup_of_work(collective_work(ran), hardware)
            return collective_profile(op, setup, placed, (_implementation(nvls), nvls), ran)
    return _profile(op, hardware, placed, ring)


def _nvls_allowed(
    view: CollectiveView, spec: InterconnectSpec, group: NodeGroup, hardware: HardwareSpec
) -> bool:
    """Whether NCCL would weigh NVLink SHARP for this collective (``algorithm: auto``): an
    all-reduce inside one node of more than two ranks (NCCL's releases after its first NVLS one
    leave it off for two GPUs, ``gpuCount <= 2`` in src/transport/nvls.cc, until the newest) on
    a board with an NVLS rate its loops deliver, with the Simple protocol allowed."""
    return (
        view.operation == "all_reduce"
        and group.nodes == 1
        and view.ranks > 2
        and view.protocol in ("auto", "simple")
        and nvls_usable(spec, hardware)
    )


def _profile(
    op: LocalOp,
    hardware: HardwareSpec,
    placed: tuple[InterconnectSpec, NodeGroup],
    timing: LinkTime,
) -> OpProfile:
    """The profile of ``op`` with the link time of the algorithm that ran."""
    name = _implementation(timing)
    return collective_profile(op, roofline_setup(op, hardware), placed, (name, timing))


def _implementation(timing: LinkTime) -> str:
    """The profile's implementation name: NCCL's NVLS (Simple only), or its algorithm and
    protocol."""
    if timing.algorithm == "nvls":
        return "effective_roofline/nccl-nvls"
    return f"effective_roofline/nccl-{timing.algorithm}-{timing.protocol}"
