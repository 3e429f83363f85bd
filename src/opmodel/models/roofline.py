"""The roofline model: every op kind, latency = the slowest of its engines and HBM.

``latency = max(t_tensor, t_vector, t_hbm)`` with ``t_engine = flops / (peak * fraction)`` and
``t_hbm = latency_hbm + compulsory_bytes / (bandwidth * fraction)`` (Williams et al., CACM 2009).
Matrix-multiply FLOPs run on the tensor engine when the hardware has tensor throughput for
their dtype, else on the vector engine. Energy = FLOPs x J/FLOP + HBM bytes x J/byte + static
power x latency. Equations and conventions: docs/models/roofline.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from opmodel.core.dtypes import DType
from opmodel.core.enums import Bound, Engine, OpKind
from opmodel.core.errors import OpModelError, UnsupportedDTypeError
from opmodel.core.op import LocalOp
from opmodel.core.profile import EnergyBreakdown, LevelTraffic, OpProfile
from opmodel.core.values import value_type
from opmodel.formulas.energy import event_energy_j, static_energy_j
from opmodel.formulas.roofline import compute_time_s, memory_time_s
from opmodel.formulas.work import OpWork, op_work
from opmodel.hardware.spec import ComputeSpec, HardwareSpec
from opmodel.models.registry import register_model

__all__ = ["RooflineDiagnostics", "RooflineModel"]


@value_type
class RooflineDiagnostics:
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
class _EnginePlan:
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


def _plan(hardware: HardwareSpec, matmul: DType | None, vector: DType | None) -> _EnginePlan:
    """Resolve engines for (matmul dtype, vector dtype), memoised per hardware."""
    key = ("roofline.plan", matmul, vector)
    plan = hardware.derived_cache.get(key)
    if plan is None:
        plan = hardware.derived_cache[key] = _resolve_plan(hardware, matmul, vector)
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


@register_model
class RooflineModel:
    """Roofline for all op kinds (registered as ``roofline``)."""

    name = "roofline"
    supported_kinds: frozenset[OpKind] = frozenset(OpKind)

    def supports(self, op: LocalOp) -> bool:
        """Every op kind is supported."""
        return op.kind in self.supported_kinds

    def predict(self, op: LocalOp, hardware: HardwareSpec) -> OpProfile:
        """Predict ``op`` on ``hardware`` (see the module docstring for the equations)."""
        if not isinstance(op, LocalOp) or not isinstance(hardware, HardwareSpec):
            msg = (
                f"roofline.predict(op, hardware): expected a LocalOp and a HardwareSpec "
                f"(got {type(op).__name__}, {type(hardware).__name__})"
            )
            raise OpModelError(msg)
        return _predict(op, hardware)  # every OpKind is supported


@value_type
class _Rates:
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
            static_w=hardware.power.static_w,
        )
    return rates


def _traffic(op: LocalOp, work: OpWork) -> Mapping[str, LevelTraffic]:
    traffic = op.derived_cache.get("roofline.traffic")
    if traffic is None:
        level = LevelTraffic(read_bytes=work.read_bytes, write_bytes=work.write_bytes)
        traffic = op.derived_cache["roofline.traffic"] = MappingProxyType({"hbm": level})
    return traffic


_IMPLEMENTATION = {
    Engine.TENSOR: "roofline/tensor",
    Engine.VECTOR: "roofline/vector",
    Engine.MEMORY: "roofline/memory",
}


def _predict(op: LocalOp, hardware: HardwareSpec) -> OpProfile:
    work = op_work(op)
    matmul_dtype = work.matmul_dtype
    plan = _plan(hardware, matmul_dtype, work.vector_dtype)
    rates = _rates(hardware)
    if plan.matmul_on_tensor:
        tensor_flops, vector_flops = work.matmul_flops, work.vector_flops
    else:
        tensor_flops, vector_flops = 0, work.matmul_flops + work.vector_flops
    t_tensor = compute_time_s(tensor_flops, plan.tensor_flops_per_s, rates.tensor_fraction)
    t_vector = compute_time_s(vector_flops, plan.vector_flops_per_s, rates.vector_fraction)
    moved = work.read_bytes + work.write_bytes
    t_hbm = memory_time_s(moved, rates.hbm_bytes_per_s, 1.0, rates.hbm_latency_s)
    latency = max(t_tensor, t_vector, t_hbm)
    bound = (
        Bound.TENSOR
        if latency == t_tensor
        else Bound.VECTOR
        if latency == t_vector
        else Bound.MEMORY
    )
    energy = EnergyBreakdown(
        tensor_j=event_energy_j(tensor_flops, plan.tensor_j_per_flop),
        vector_j=event_energy_j(vector_flops, plan.vector_j_per_flop),
        memory_j=MappingProxyType({"hbm": event_energy_j(moved, rates.hbm_j_per_byte)}),
        static_j=static_energy_j(rates.static_w, latency),
    )
    engine = Engine.TENSOR if tensor_flops else Engine.VECTOR if vector_flops else Engine.MEMORY
    return OpProfile(
        latency_s=latency,
        flops=tensor_flops + vector_flops,
        engine=engine,
        footprint=op.footprint,
        traffic=_traffic(op, work),
        energy=energy,
        implementation=_IMPLEMENTATION[engine],
        diagnostics=RooflineDiagnostics(
            bound=bound,
            tensor_time_s=t_tensor,
            vector_time_s=t_vector,
            hbm_time_s=t_hbm,
            tensor_dtype=matmul_dtype if tensor_flops else None,
            vector_dtype=plan.vector_dtype if vector_flops else None,
        ),
    )
