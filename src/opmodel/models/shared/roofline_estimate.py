"""The roofline estimate of any op: latency = the slowest of its engines and HBM.

``latency = max(t_tensor, t_vector, t_hbm)`` with ``t_engine = flops / (peak * fraction)`` and
``t_hbm = latency_hbm + compulsory_bytes / (bandwidth * fraction)`` (Williams et al., CACM 2009).
Matrix-multiply FLOPs run on the tensor engine when the hardware has tensor throughput for
their dtype, else on the vector engine. Energy = FLOPs x J/FLOP + HBM bytes x J/byte + static
power x latency. Equations and conventions: docs/models/roofline.md. The ``roofline`` model is
this estimate; kernel-level models use it for the op kinds they do not model in detail.
"""

from __future__ import annotations

from collections.abc import Mapping

from opmodel.core.dtypes import DType
from opmodel.core.enums import Bound, Engine, OpKind
from opmodel.core.errors import UnsupportedDTypeError
from opmodel.core.frozen_dict import FrozenDict
from opmodel.core.op import LocalOp
from opmodel.core.profile import EnergyBreakdown, LevelTraffic, OpProfile
from opmodel.core.values import FastValue, value_type
from opmodel.core.views import CollectiveView
from opmodel.formulas.energy import event_energy_j, static_energy_j
from opmodel.formulas.roofline import compute_time_s, memory_time_s
from opmodel.formulas.work import OpWork, op_work
from opmodel.hardware.spec import ComputeSpec, HardwareSpec
from opmodel.models.shared.collective_estimate import (
    LinkTime,
    collective_profile,
    interconnect_of,
    split_link_bytes,
    split_transfer_s,
)
from opmodel.models.shared.memo import per_op_and_hardware

__all__ = [
    "RooflineDiagnostics",
    "RooflineSetup",
    "roofline_estimate",
    "roofline_setup",
    "setup_of_work",
]

# bound once: on CPython 3.11 ``OpKind.COLLECTIVE`` is a descriptor lookup (~50 ns), which every
# roofline predict would pay
_COLLECTIVE = OpKind.COLLECTIVE


@value_type
class RooflineDiagnostics(FastValue):
    """Why the roofline gave its number: per-resource times and the limiting one.

    ``tensor_dtype`` / ``vector_dtype`` are the dtypes each engine computed in (None when
    that engine did no work).
    """

    bound: Bound
    tensor_time_s: float
    vector_time_s: float
    hbm_time_s: float
    tensor_dtype: DType | None
    vector_dtype: DType | None


def _unsupported_dtype(hardware: HardwareSpec, dtype: DType) -> UnsupportedDTypeError:
    compute = hardware.compute
    tensor = ", ".join(d.value for d in compute.tensor_flops_per_s) or "none"
    vector = ", ".join(d.value for d in compute.vector_flops_per_s) or "none"
    return UnsupportedDTypeError(
        f"hardware '{hardware.name}' has no throughput for dtype {dtype.value} "
        f"(tensor: {tensor}; vector: {vector})"
    )


@value_type
class _EnginePlan(FastValue):
    """Where an op's FLOPs run on one device: peaks and energies per FLOP of each part.

    ``matmul_on_tensor`` is False when the matmul dtype has no tensor throughput, in which
    case the matmul FLOPs join the vector part (in the matmul dtype).
    """

    matmul_on_tensor: bool
    tensor_flops_per_s: float
    tensor_j_per_flop: float
    vector_dtype: DType | None
    vector_flops_per_s: float
    vector_j_per_flop: float


def _plan(hardware: HardwareSpec, work: OpWork) -> _EnginePlan:
    """Resolve engines for the op's (matmul, vector) dtypes, memoised per hardware."""
    key = ("roofline.plan", work.matmul_dtype, work.vector_dtype)
    plan = hardware.derived_cache.get(key)
    if plan is None:
        plan = _resolve_plan(hardware, work.matmul_dtype, work.vector_dtype)
        hardware.derived_cache[key] = plan
    return plan


def _resolve_plan(
    hardware: HardwareSpec, matmul: DType | None, vector: DType | None
) -> _EnginePlan:
    compute: ComputeSpec = hardware.compute
    tensor_peak = compute.tensor_peak(matmul) if matmul is not None else None
    on_tensor = bool(tensor_peak)
    if matmul is not None and not on_tensor:
        if vector is not None and vector is not matmul:
            raise _unsupported_dtype(hardware, matmul)  # no tensor path for a fused matmul
        vector = matmul
    vector_peak = compute.vector_peak(vector) if vector is not None else None
    if vector is not None and not vector_peak:
        raise _unsupported_dtype(hardware, vector)
    return _EnginePlan(
        matmul_on_tensor=on_tensor,
        tensor_flops_per_s=tensor_peak or 0.0,
        tensor_j_per_flop=compute.energy_per_flop(tensor=True, dtype=matmul)
        if on_tensor and matmul is not None
        else 0.0,
        vector_dtype=vector,
        vector_flops_per_s=vector_peak or 0.0,
        vector_j_per_flop=compute.energy_per_flop(tensor=False, dtype=vector)
        if vector is not None
        else 0.0,
    )


@value_type
class _Rates(FastValue):
    """Per-hardware constants of the roofline, memoised in ``hardware.derived_cache``."""

    tensor_fraction: float
    vector_fraction: float
    hbm_bytes_per_s: float
    hbm_latency_s: float
    hbm_j_per_byte: float
    static_w: float


def _rates(hardware: HardwareSpec) -> _Rates:
    rates = hardware.derived_cache.get("roofline")
    if rates is None:
        hbm = hardware.hbm
        rates = hardware.derived_cache["roofline"] = _Rates(
            tensor_fraction=hardware.utilization.tensor_fraction,
            vector_fraction=hardware.utilization.vector_fraction,
            hbm_bytes_per_s=hbm.bandwidth_bytes_per_s * hardware.memory_fraction("hbm"),
            hbm_latency_s=hbm.latency_s,
            hbm_j_per_byte=hbm.energy_j_per_byte,
            static_w=hardware.power.busy_w,
        )
    return rates


@value_type
class RooflineSetup(FastValue):
    """Everything the roofline knows about one (op, hardware) pair before timing it."""

    tensor_flops: int
    vector_flops: int
    tensor_flops_per_s: float  # peak x utilisation
    vector_flops_per_s: float
    moved_bytes: int
    hbm_bytes_per_s: float  # bandwidth x utilisation
    hbm_latency_s: float
    tensor_j_per_flop: float
    vector_j_per_flop: float
    hbm_j_per_byte: float
    static_w: float
    traffic: Mapping[str, LevelTraffic]
    tensor_dtype: DType | None
    vector_dtype: DType | None
    engine: Engine


def _build_setup(op: LocalOp, hardware: HardwareSpec) -> RooflineSetup:
    return setup_of_work(op_work(op), hardware)


def setup_of_work(work: OpWork, hardware: HardwareSpec) -> RooflineSetup:
    """The roofline setup of ``work`` on ``hardware`` (:func:`roofline_setup` without the op:
    an ``effective_roofline`` collective that runs another algorithm than its op names)."""
    plan = _plan(hardware, work)
    rates = _rates(hardware)
    if plan.matmul_on_tensor:
        tensor_flops, vector_flops = work.matmul_flops, work.vector_flops
    else:
        tensor_flops, vector_flops = 0, work.matmul_flops + work.vector_flops
    engine = Engine.TENSOR if tensor_flops else Engine.VECTOR if vector_flops else Engine.MEMORY
    level = LevelTraffic(read_bytes=work.read_bytes, write_bytes=work.write_bytes)
    return RooflineSetup(
        tensor_flops=tensor_flops,
        vector_flops=vector_flops,
        tensor_flops_per_s=plan.tensor_flops_per_s * rates.tensor_fraction,
        vector_flops_per_s=plan.vector_flops_per_s * rates.vector_fraction,
        moved_bytes=work.read_bytes + work.write_bytes,
        hbm_bytes_per_s=rates.hbm_bytes_per_s,
        hbm_latency_s=rates.hbm_latency_s,
        tensor_j_per_flop=plan.tensor_j_per_flop,
        vector_j_per_flop=plan.vector_j_per_flop,
        hbm_j_per_byte=rates.hbm_j_per_byte,
        static_w=rates.static_w,
        traffic=FrozenDict({"hbm": level}),
        tensor_dtype=work.matmul_dtype if tensor_flops else None,
        vector_dtype=plan.vector_dtype if vector_flops else None,
        engine=engine,
    )


def roofline_setup(op: LocalOp, hardware: HardwareSpec) -> RooflineSetup:
    """What the roofline needs of ``op`` on ``hardware`` (FLOPs per engine and their rates,
    compulsory bytes, energies per event), memoised per op and hardware; models that take
    the op's work from the roofline read it here without building its profile."""
    return per_op_and_hardware("roofline", op, hardware, _build_setup)


def roofline_estimate(
    op: LocalOp, hardware: HardwareSpec, implementations: Mapping[Engine, str]
) -> OpProfile:
    """The roofline profile of ``op``; ``implementations`` names the result per engine used
    (a collective's: :func:`~opmodel.models.shared.collective_estimate.collective_profile`,
    its links at their line rate)."""
    s = roofline_setup(op, hardware)
    if op.kind is _COLLECTIVE:
        return _memoised_collective(op, hardware, s, implementations[Engine.INTERCONNECT])
    t_tensor = compute_time_s(s.tensor_flops, s.tensor_flops_per_s, 1.0)
    t_vector = compute_time_s(s.vector_flops, s.vector_flops_per_s, 1.0)
    t_hbm = memory_time_s(s.moved_bytes, s.hbm_bytes_per_s, 1.0, s.hbm_latency_s)
    latency = max(t_tensor, t_vector, t_hbm)
    if latency == t_tensor:
        bound = Bound.TENSOR
    else:
        bound = Bound.VECTOR if latency == t_vector else Bound.MEMORY
    energy = EnergyBreakdown.make(
        tensor_j=event_energy_j(s.tensor_flops, s.tensor_j_per_flop),
        vector_j=event_energy_j(s.vector_flops, s.vector_j_per_flop),
        memory_j=FrozenDict({"hbm": event_energy_j(s.moved_bytes, s.hbm_j_per_byte)}),
        static_j=static_energy_j(s.static_w, latency),
    )
    return OpProfile.make(
        latency_s=latency,
        flops=s.tensor_flops + s.vector_flops,
        engine=s.engine,
        footprint=op.footprint,
        traffic=s.traffic,
        energy=energy,
        implementation=implementations[s.engine],
        diagnostics=RooflineDiagnostics.make(
            bound=bound,
            tensor_time_s=t_tensor,
            vector_time_s=t_vector,
            hbm_time_s=t_hbm,
            tensor_dtype=s.tensor_dtype,
            vector_dtype=s.vector_dtype,
        ),
    )


def _memoised_collective(
    op: LocalOp, hardware: HardwareSpec, setup: RooflineSetup, implementation: str
) -> OpProfile:
    """The collective's profile, memoised per op and hardware under the caller's name (a
    closure here rather than in ``roofline_estimate``, whose locals would become cells)."""
    return per_op_and_hardware(
        implementation, op, hardware, lambda o, h: _collective(o, h, setup, implementation)
    )


def _collective(
    op: LocalOp, hardware: HardwareSpec, setup: RooflineSetup, implementation: str
) -> OpProfile:
    view = op.view
    assert isinstance(view, CollectiveView)
    link, group = interconnect_of(op, view, hardware)
    # the line rate; on an xGMI mesh that of the links to the group's peers in the node
    rate = link.bandwidth_bytes_per_s * link.group_share(group.per_node)
    if group.nodes > 1 and link.network is not None:  # each link at its line rate
        sent, net = split_link_bytes(view, group)
        nics = group.nic_share * link.network.nic_bandwidth_bytes_per_s
        rate = sent / split_transfer_s(sent, net, rate, nics)
    timing = LinkTime.make(latency_s=0.0, bandwidth_bytes_per_s=rate, protocol=None)
    return collective_profile(op, setup, (link, group), (implementation, timing))
