"""``effective_roofline``: a phase-aware per-wave roofline with automatic kernel selection.

GPU GEMMs and batched GEMMs: the kernel from the op's attrs or from catalogue selection
(:mod:`opmodel.models.gemm.choice`), evaluated wave by wave with concurrency-limited rates
(:mod:`opmodel.models.gemm.phases`), at the power-limited clock when the hardware has one
(:func:`~opmodel.hardware.clocking.power_limited_clock_hz`). TPU GEMMs: the systolic-array path
(:mod:`opmodel.models.effective_roofline.systolic`). GPU elementwise, softmax, layernorm and
rmsnorm: streaming kernels (:mod:`opmodel.models.streaming`); a cross-entropy loss as its
implementation's kernels (:mod:`.cross_entropy_op`); an optimizer step as PyTorch's
multi-tensor-apply launches (:mod:`.optimizer_op`). Collectives: NCCL's ring and protocols,
and its tree across nodes (:mod:`.collective_op`). GPU attention:
FlashAttention-2/3 and split-KV decode kernels (:mod:`opmodel.models.attention`). Other op
kinds: the shared roofline estimate. Equations:
docs/models/effective_roofline.md.
"""

from __future__ import annotations

from opmodel.core.enums import GEMM_KINDS, Engine, OpKind
from opmodel.core.op import LocalOp
from opmodel.core.profile import EnergyBreakdown, OpProfile
from opmodel.core.views import GemmView
from opmodel.hardware.clocking import tensor_activity, throttled_at
from opmodel.hardware.spec import HardwareSpec
from opmodel.models.effective_roofline.attention_op import predict_attention, runs_flash_attention
from opmodel.models.effective_roofline.collective_op import predict_collective
from opmodel.models.effective_roofline.cross_entropy_op import predict_cross_entropy
from opmodel.models.effective_roofline.diagnostics import EffectiveRooflineDiagnostics
from opmodel.models.effective_roofline.embedding_backward_op import predict_embedding
from opmodel.models.effective_roofline.optimizer_op import predict_optimizer
from opmodel.models.effective_roofline.streaming_op import STREAMING_KINDS, predict_streaming
from opmodel.models.effective_roofline.systolic import predict_systolic_gemm
from opmodel.models.gemm import GemmProblem
from opmodel.models.gemm.choice import choose_kernel, chosen_at_clock
from opmodel.models.gemm.evaluate import KernelEvaluation, traffic_by_level
from opmodel.models.gemm.overhead import in_force
from opmodel.models.registry import register_model
from opmodel.models.shared.arguments import check_predict_arguments
from opmodel.models.shared.memo import per_op_and_hardware
from opmodel.models.shared.roofline_estimate import roofline_estimate

__all__ = ["EffectiveRooflineModel"]

_ATTENTION_KINDS = frozenset({OpKind.ATTENTION_PREFILL, OpKind.ATTENTION_DECODE})
# the kinds whose kernel-level model runs on any GPU with SMs: kind -> its predictor
_SM_KERNELS = {kind: predict_streaming for kind in STREAMING_KINDS} | {
    OpKind.EMBEDDING: predict_embedding,  # the gather's streaming kernel, or the backward pass
    OpKind.CROSS_ENTROPY: predict_cross_entropy,
    OpKind.OPTIMIZER: predict_optimizer,
}
# bound once, as in roofline_estimate: CPython 3.11 looks an enum member up at ~50 ns a time
_COLLECTIVE = OpKind.COLLECTIVE
_FALLBACK = {
    Engine.TENSOR: "effective_roofline/roofline-tensor",
    Engine.VECTOR: "effective_roofline/roofline-vector",
    Engine.MEMORY: "effective_roofline/roofline-memory",
    Engine.INTERCONNECT: "effective_roofline/roofline-interconnect",
}


def _predict_gpu_gemm(op: LocalOp, hardware: HardwareSpec) -> OpProfile:
    """The chosen (or given) kernel's evaluation, again at the power-limited clock when its
    tensor activity throttles the GPU, as a profile."""
    problem = GemmProblem.from_op(op)
    choice = choose_kernel(op, problem, hardware)
    e = choice.evaluation
    kernel = e.kernel
    on_tensor = kernel.on_tensor
    # under a power limit the kernel runs at the clock its tensor activity allows
    issued = e.issued_flops if on_tensor else 0
    activity = tensor_activity(hardware, problem.compute_dtype, issued, e.latency_s)
    slow = throttled_at(hardware, activity, problem.compute_dtype)
    if slow is not None:  # the same kernel at the lower clock
        e = chosen_at_clock(e, problem, slow)
    flops = problem.flops
    return OpProfile.make(
        latency_s=e.latency_s,
        flops=flops,
        engine=Engine.TENSOR if on_tensor else Engine.VECTOR,
        footprint=op.footprint,
        traffic=traffic_by_level(e.traffic),
        energy=_gemm_energy(e, on_tensor=on_tensor),
        implementation=f"effective_roofline/{kernel.instruction}/{kernel.name}",  # StrEnum: value
        diagnostics=EffectiveRooflineDiagnostics.make(
            kernel=kernel,
            selection=choice.selection,
            occupancy=e.occupancy,
            grid=e.grid,
            traffic=e.traffic,
            total_cycles=e.total_cycles,
            tile_efficiency=flops / e.issued_flops,
            issued_flops=e.issued_flops,
            useful_flops_per_s=flops / e.latency_s,
            sm_clock_hz=(slow or hardware).compute.clock_hz,
            tensor_activity=activity,
            evaluation=e,
        ),
    )


def _gemm_energy(e: KernelEvaluation, *, on_tensor: bool) -> EnergyBreakdown:
    """The evaluation's energy, its math on the tensor or the vector engine."""
    return EnergyBreakdown.make(
        tensor_j=e.math_j if on_tensor else 0.0,
        vector_j=0.0 if on_tensor else e.math_j,
        memory_j=e.memory_j,
        static_j=e.static_j,
    )


def _on_mxu(op: LocalOp, hardware: HardwareSpec) -> bool:
    """True when the TPU's MXUs run the GEMM's compute dtype (else the vector roofline)."""
    view = op.view
    assert isinstance(view, GemmView)
    return hardware.compute.tensor_peak(view.compute_dtype) is not None


@register_model
class EffectiveRooflineModel:
    """Phase-aware per-wave GEMM model with kernel selection; streaming and FlashAttention
    kernels for the other kinds on GPUs; the roofline estimate where none applies."""

    name = "effective_roofline"
    supported_kinds: frozenset[OpKind] = frozenset(OpKind)

    def supports(self, op: LocalOp) -> bool:
        """Every op kind is supported (kernel-level on GPUs, the roofline estimate elsewhere)."""
        return op.kind in self.supported_kinds

    def predict(self, op: LocalOp, hardware: HardwareSpec) -> OpProfile:
        """Predict ``op`` on ``hardware`` (docs/models/effective_roofline.md).

        Kernel-level profiles are pure functions of (op, hardware) and are memoised on the op.
        """
        if type(op) is not LocalOp or type(hardware) is not HardwareSpec:
            check_predict_arguments(self.name, self.supported_kinds, op, hardware)
        if op.kind in GEMM_KINDS:
            if hardware.compute.sm is not None:
                in_force(hardware)  # the fixed overhead calibration (models.gemm.overhead)
                return per_op_and_hardware(self.name, op, hardware, _predict_gpu_gemm)
            if hardware.compute.mxu is not None and _on_mxu(op, hardware):
                return per_op_and_hardware(self.name, op, hardware, predict_systolic_gemm)
        elif op.kind in _SM_KERNELS and hardware.compute.sm is not None:
            return per_op_and_hardware(self.name, op, hardware, _SM_KERNELS[op.kind])
        elif op.kind in _ATTENTION_KINDS and runs_flash_attention(op, hardware):
            return per_op_and_hardware(self.name, op, hardware, predict_attention)
        elif op.kind is _COLLECTIVE:
            return per_op_and_hardware(self.name, op, hardware, predict_collective)
        return roofline_estimate(op, hardware, _FALLBACK)
