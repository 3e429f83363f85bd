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
from opmodel.core.enums import OpKind
from opmodel.core.op import LocalOp
from opmodel.core.profile import OpProfile
from opmodel.core.values import FastValue, value_type
from opmodel.core.views import RowView
from opmodel.formulas.roofline import compute_time_s
from opmodel.hardware.clocking import boosted
from opmodel.hardware.spec import HardwareSpec
from opmodel.models.effective_roofline.softmax_backward_op import softmax_backward_kernels
from opmodel.models.effective_roofline.streaming_cost import kernels_cost, streaming_profile
from opmodel.models.shared.roofline_estimate import RooflineSetup, roofline_setup
from opmodel.models.streaming import StreamWork, evaluate_streaming
from opmodel.models.streaming.evaluate import StreamingEvaluation
from opmodel.models.streaming.row_backward import (
    grad_input_kernel,
    partial_bytes,
    weight_grad_kernel,
)
from opmodel.models.streaming.structure import StreamKernel

__all__ = ["RowBackwardEvaluation", "predict_row_backward"]


@value_type
class RowBackwardEvaluation(FastValue):
    """The kernels of a row op's backward pass; ``weight_grads`` is ``None`` when the op
    writes no weight gradient, ``weight_grad_sums`` holds ATen's ``.sum(0)`` of the split
    path's partial sums (one per gradient; empty otherwise), ``grad_product`` ATen's softmax
    backward's ``grad * output`` before ``grad_input`` (``None`` otherwise)."""

    grad_input: StreamingEvaluation
    weight_grads: StreamingEvaluation | None
    latency_s: float
    weight_grad_sums: tuple[StreamingEvaluation, ...] = ()
    grad_product: StreamingEvaluation | None = None

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


def _weight_grad_evaluations(
    view: RowView, implementation: str, hardware: HardwareSpec, first: StreamingEvaluation
) -> tuple[StreamingEvaluation, ...]:
    """The kernels that sum the weight gradients (none without weight gradients): the sum
    over the rows, then ATen's ``.sum(0)`` of its partial sums where it splits the rows."""
    if not view.weight_grads:
        return ()
    sm = hardware.compute.sm
    assert sm is not None
    plan = weight_grad_kernel(
        implementation, view.rows, view.row_length, sm.sm_count, hardware.architecture
    )
    grads = len(view.weight_grads)
    # the fused kernels' fp32 partials, or x and dy again
    fused = implementation == "fused"
    read = plan.read_elements * 4 * grads if fused else 2 * view.x.nbytes
    moved = first.dram_read_bytes + first.dram_write_bytes
    grad_bytes = [g.nbytes for g in view.weight_grads]
    partial_bytes_each = [plan.partial_rows * b for b in grad_bytes]
    work = StreamWork(
        read_bytes=read,
        shared_read_bytes=0,
        reread_bytes=0,
        write_bytes=sum(partial_bytes_each) if plan.sum_kernel else sum(grad_bytes),
        flops=0,
        vector_flops_per_s=0.0,
        warm_read_bytes=read,
        producer_bytes=max(read, round(moved)),
    )
    main = evaluate_streaming(plan.kernel, hardware, work)
    if plan.sum_kernel is None:
        return (main,)
    return (main, *_partial_sums(plan.sum_kernel, hardware, partial_bytes_each, grad_bytes))


def _partial_sums(
    kernel: StreamKernel, hardware: HardwareSpec, partials: list[int], grads: list[int]
) -> tuple[StreamingEvaluation, ...]:
    """ATen's ``.sum(0)`` of each gradient's partial sums (``partials`` bytes each), which the
    kernel before just wrote, into the gradient (``grads`` bytes each)."""
    return tuple(
        evaluate_streaming(
            kernel,
            hardware,
            StreamWork(
                read_bytes=read,
                shared_read_bytes=0,
                reread_bytes=0,
                write_bytes=written,
                flops=0,
                vector_flops_per_s=0.0,
                warm_read_bytes=read,
                producer_bytes=sum(partials),
            ),
        )
        for read, written in zip(partials, grads, strict=True)
    )


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
    log_softmax = op.attrs.get("log_softmax") is True
    if op.kind is OpKind.SOFTMAX and implementation == "pytorch" and not log_softmax:
        product, first = softmax_backward_kernels(op, view, base, hardware)
        # tmp = grad * output goes out to memory between the two kernels
        assert view.dy is not None
        writes = base.traffic["hbm"].write_bytes + view.dy.nbytes
        cost = kernels_cost(base, hardware, (product, first), writes)
        evaluation = RowBackwardEvaluation(
            grad_input=first, weight_grads=None, latency_s=cost[0], grad_product=product
        )
        return streaming_profile(op, base, cost, "pytorch/backward", evaluation)
    element_bytes = max(1, view.x.dtype.bits // 8)
    kernel = grad_input_kernel(op.kind, implementation, view.rows, view.row_length, element_bytes)
    grads = len(view.weight_grads)
    partials = partial_bytes(implementation, view.rows, view.row_length, sm.sm_count, grads)
    first = evaluate_streaming(kernel, hardware, _grad_input_work(op, view, base, partials))
    rest = _weight_grad_evaluations(view, implementation, hardware, first)
    writes = base.traffic["hbm"].write_bytes + partials
    cost = kernels_cost(base, hardware, (first, *rest), writes)
    evaluation = RowBackwardEvaluation(
        grad_input=first,
        weight_grads=rest[0] if rest else None,
        latency_s=cost[0],
        weight_grad_sums=rest[1:],
    )
    return streaming_profile(op, base, cost, f"{implementation}/backward", evaluation)
