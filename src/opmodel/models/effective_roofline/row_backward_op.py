"""A row op's backward pass on GPUs (softmax, layernorm, rmsnorm with a ``grad`` dy) as one
or two streaming kernels (:mod:`opmodel.models.streaming.row_backward`).

The grad-input kernel reads x and dy (and the weights, from L2 after the first CTA) and writes
dx, plus the fused kernels' per-SM partial sums of the weight gradients; a norm that writes
its weights' gradients runs a second kernel that sums them over the rows, reading what the
first kernel just touched (ATen: x and dy again; fused: the partials), found in L2 as far as
the first kernel's traffic left it there
(:func:`~opmodel.models.shared.l2_survival.producer_output_survival`). Each kernel is timed by
:func:`~opmodel.models.streaming.evaluate_streaming`, fixed overhead included, and the two
times add. Energy as :mod:`.streaming_op`: the roofline's arithmetic energy, DRAM and L2 bytes
x J/byte, static power x latency (:mod:`.streaming_cost`).
"""

from __future__ import annotations

from opmodel.core.attrs import int_attr
from opmodel.core.op import LocalOp
from opmodel.core.profile import OpProfile
from opmodel.core.values import FastValue, value_type
from opmodel.core.views import RowView
from opmodel.formulas.roofline import compute_time_s
from opmodel.hardware.clocking import boosted
from opmodel.hardware.spec import HardwareSpec
from opmodel.models.effective_roofline.streaming_cost import pair_cost, streaming_profile
from opmodel.models.shared.roofline_estimate import RooflineSetup, roofline_setup
from opmodel.models.streaming import StreamWork, evaluate_streaming
from opmodel.models.streaming.evaluate import StreamingEvaluation
from opmodel.models.streaming.row_backward import (
    grad_input_kernel,
    partial_bytes,
    weight_grad_kernel,
)

__all__ = ["RowBackwardEvaluation", "predict_row_backward"]


@value_type
class RowBackwardEvaluation(FastValue):
    """The two kernels of a row op's backward pass; ``weight_grads`` is ``None`` when the op
    writes no weight gradient."""

    grad_input: StreamingEvaluation
    weight_grads: StreamingEvaluation | None
    latency_s: float

    @property
    def limiter(self) -> str:
        """The grad-input kernel's limiter (the larger kernel)."""
        return self.grad_input.limiter


def _grad_input_work(op: LocalOp, view: RowView, base: RooflineSetup, partials: int) -> StreamWork:
    """What the grad-input kernel moves and computes (every FLOP of the op is charged here)."""
    assert view.dy is not None
    streamed = view.x.nbytes + view.dy.nbytes
    shared = sum(w.nbytes for w in view.weights)
    vector_s = compute_time_s(base.vector_flops, base.vector_flops_per_s, 1.0)
    warm = op.warm_input_bytes()
    producer = op.attrs.get("producer_bytes")
    return StreamWork(
        read_bytes=streamed + shared,
        shared_read_bytes=shared,
        reread_bytes=streamed,
        write_bytes=view.y.nbytes + partials,
        flops=base.vector_flops,
        vector_flops_per_s=base.vector_flops / vector_s if vector_s > 0 else 0.0,
        warm_read_bytes=warm,
        producer_bytes=producer if isinstance(producer, int) else warm,
        dirty_bytes=int_attr(op.attrs, "l2_dirty_bytes"),
    )


def _weight_grad_evaluation(
    view: RowView, implementation: str, hardware: HardwareSpec, first: StreamingEvaluation
) -> StreamingEvaluation | None:
    """The kernel that sums the weight gradients, or ``None`` without weight gradients."""
    if not view.weight_grads:
        return None
    sm = hardware.compute.sm
    assert sm is not None
    kernel, elements = weight_grad_kernel(implementation, view.rows, view.row_length, sm.sm_count)
    # the fused kernels' fp32 partials, or x and dy again
    fused = implementation == "fused"
    read = elements * 4 * len(view.weight_grads) if fused else 2 * view.x.nbytes
    moved = first.dram_read_bytes + first.dram_write_bytes
    work = StreamWork(
        read_bytes=read,
        shared_read_bytes=0,
        reread_bytes=0,
        write_bytes=sum(g.nbytes for g in view.weight_grads),
        flops=0,
        vector_flops_per_s=0.0,
        warm_read_bytes=read,
        producer_bytes=max(read, round(moved)),
    )
    return evaluate_streaming(kernel, hardware, work)


def predict_row_backward(op: LocalOp, hardware: HardwareSpec) -> OpProfile:
    """The profile of a row op's backward pass on a GPU (module docstring), at the device's
    boost clock as the forward's streaming kernels."""
    hardware = boosted(hardware)
    view = op.view
    assert isinstance(view, RowView) and view.backward
    sm = hardware.compute.sm
    assert sm is not None
    value = op.attrs.get("implementation")
    implementation = value if isinstance(value, str) else "fused"
    base = roofline_setup(op, hardware)
    element_bytes = max(1, view.x.dtype.bits // 8)
    kernel = grad_input_kernel(op.kind, implementation, view.rows, view.row_length, element_bytes)
    grads = len(view.weight_grads)
    partials = partial_bytes(implementation, view.rows, view.row_length, sm.sm_count, grads)
    first = evaluate_streaming(kernel, hardware, _grad_input_work(op, view, base, partials))
    second = _weight_grad_evaluation(view, implementation, hardware, first)
    writes = base.traffic["hbm"].write_bytes + partials
    cost = pair_cost(base, hardware, first, second, writes)
    evaluation = RowBackwardEvaluation(grad_input=first, weight_grads=second, latency_s=cost[0])
    return streaming_profile(op, base, cost, f"{implementation}/backward", evaluation)
