"""A cross-entropy loss on GPUs as the kernels its implementation runs
(:mod:`opmodel.models.streaming.cross_entropy`), each timed by
:func:`~opmodel.models.streaming.evaluate_streaming` with its fixed overhead, the times added.

``pytorch``: ATen's log-softmax, timed as the ``softmax`` of the logits' shape and dtype
through the streaming path of :mod:`.streaming_op` (its counted registers and issue costs
included), which writes the log-probabilities; then ``nll_loss``, reading each row's target
and one 32-byte sector holding the log-probability it names. ``fused``: Liger-Kernel's one
kernel, which reads the logits twice and writes their gradient over them. Energy as
:mod:`.streaming_op`: the roofline's arithmetic energy (FLOPs: 5 per logit and 1 per row,
docs/models/roofline.md), DRAM and L2 bytes x J/byte, static power x the summed latency.
"""

from __future__ import annotations

from opmodel.core.attrs import int_attr
from opmodel.core.dtypes import DType
from opmodel.core.enums import OpKind, TensorRole
from opmodel.core.op import LocalOp, TensorSpec
from opmodel.core.profile import OpProfile
from opmodel.core.values import FastValue, value_type
from opmodel.core.views import CrossEntropyView
from opmodel.hardware.clocking import boosted
from opmodel.hardware.spec import HardwareSpec
from opmodel.models.effective_roofline.streaming_cost import pair_cost, streaming_profile
from opmodel.models.effective_roofline.streaming_op import predict_streaming
from opmodel.models.shared.roofline_estimate import RooflineSetup, roofline_setup
from opmodel.models.streaming import StreamWork, evaluate_streaming
from opmodel.models.streaming.cross_entropy import liger_cross_entropy_kernel, nll_loss_kernel
from opmodel.models.streaming.evaluate import StreamingEvaluation

__all__ = ["CrossEntropyEvaluation", "predict_cross_entropy"]

_SECTOR_BYTES = 32  # a gathered log-probability costs a DRAM sector


@value_type
class CrossEntropyEvaluation(FastValue):
    """The kernels of a cross-entropy loss: ``softmax``, ATen's log-softmax or Liger's fused
    kernel; ``nll_loss``, ATen's loss kernel (``None`` for the fused one)."""

    softmax: StreamingEvaluation
    nll_loss: StreamingEvaluation | None
    latency_s: float

    @property
    def limiter(self) -> str:
        """The limiter of the kernel that takes longer."""
        parts = (self.softmax,) if self.nll_loss is None else (self.softmax, self.nll_loss)
        return max(parts, key=lambda e: e.latency_s).limiter


def _log_softmax(
    op: LocalOp, view: CrossEntropyView, hardware: HardwareSpec
) -> StreamingEvaluation:
    """ATen's log-softmax as the streaming softmax of the logits (module docstring)."""
    shape = (view.rows, view.vocab)
    rows = LocalOp(
        name=op.name,
        kind=OpKind.SOFTMAX,
        phase=op.phase,
        tensors=(
            TensorSpec(TensorRole.INPUT, shape, view.logits.dtype),
            TensorSpec(TensorRole.OUTPUT, shape, view.logits.dtype),
        ),
        attrs={"implementation": "pytorch", "l2_dirty_bytes": int_attr(op.attrs, "l2_dirty_bytes")},
    )
    evaluation = predict_streaming(rows, hardware).diagnostics
    assert isinstance(evaluation, StreamingEvaluation)
    return evaluation


def _nll_loss(view: CrossEntropyView, hardware: HardwareSpec) -> StreamingEvaluation:
    """ATen's nll_loss: each row's target, then one sector of its log-probability."""
    work = StreamWork(
        read_bytes=view.targets.nbytes + view.rows * _SECTOR_BYTES,
        shared_read_bytes=0,
        reread_bytes=0,
        write_bytes=view.loss.nbytes,
        flops=view.rows,
        vector_flops_per_s=hardware.compute.vector_peak(DType.FP32) or 0.0,
    )
    return evaluate_streaming(nll_loss_kernel(view.rows, reduced=view.reduced), hardware, work)


def _fused(
    op: LocalOp, view: CrossEntropyView, base: RooflineSetup, hardware: HardwareSpec
) -> StreamingEvaluation:
    """Liger's kernel: the logits read twice, their gradient written over them."""
    logits = view.logits.nbytes
    work = StreamWork(
        read_bytes=logits + view.targets.nbytes,
        shared_read_bytes=0,
        reread_bytes=logits,
        write_bytes=logits + view.loss.nbytes,
        flops=base.vector_flops,
        vector_flops_per_s=base.vector_flops_per_s,
        sfu_ops=2 * view.rows * view.vocab,  # an exp per logit in each pass
        dirty_bytes=int_attr(op.attrs, "l2_dirty_bytes"),
    )
    return evaluate_streaming(liger_cross_entropy_kernel(view.rows, view.vocab), hardware, work)


def predict_cross_entropy(op: LocalOp, hardware: HardwareSpec) -> OpProfile:
    """The profile of a cross-entropy loss on a GPU (module docstring), at the device's boost
    clock as the other streaming kernels."""
    hardware = boosted(hardware)
    view = op.view
    assert isinstance(view, CrossEntropyView)
    base = roofline_setup(op, hardware)
    fused = op.attrs.get("implementation") == "fused"
    if fused:
        first, second = _fused(op, view, base, hardware), None
    else:
        first, second = _log_softmax(op, view, hardware), _nll_loss(view, hardware)
    # the loss, and a logits-sized write: the gradient in place, or the log-probabilities
    written = view.logits.nbytes + view.loss.nbytes
    cost = pair_cost(base, hardware, first, second, written)
    evaluation = CrossEntropyEvaluation(softmax=first, nll_loss=second, latency_s=cost[0])
    return streaming_profile(op, base, cost, "fused" if fused else "pytorch", evaluation)
