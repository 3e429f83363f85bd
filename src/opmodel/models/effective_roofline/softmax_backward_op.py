"""ATen's softmax backward on GPUs: ``tmp = grad * output``, then the backward kernel on
``tmp`` and the forward's output (:mod:`opmodel.models.streaming.softmax_backward`).

The multiply is ATen's vectorized elementwise kernel, timed as the forward's elementwise ops
are (its issue cost the calibrated or SASS-counted one of ``mul``; 16-byte vectors with attr
``aten_128bit_vectors``); it reads dy and y (the
op's ``input``, the forward's output) cold or as warm as the op's attrs say, meets the flush's
dirty lines (``l2_dirty_bytes``) first, and writes ``tmp`` in dy's dtype. The backward kernel
then reads ``tmp`` and y, which the multiply has just written and read, from L2 as far as its
traffic left them there (:func:`~opmodel.models.shared.l2_survival.producer_output_survival`),
and writes dx. The op's FLOPs are split: one per element to the multiply, the rest to the
backward kernel.
"""

from __future__ import annotations

from opmodel.core.attrs import int_attr
from opmodel.core.enums import OpKind
from opmodel.core.op import LocalOp
from opmodel.core.views import RowView
from opmodel.formulas.roofline import compute_time_s
from opmodel.hardware.spec import HardwareSpec
from opmodel.models.shared.roofline_estimate import RooflineSetup
from opmodel.models.streaming import StreamWork, evaluate_streaming
from opmodel.models.streaming.counted import counted_instructions
from opmodel.models.streaming.evaluate import StreamingEvaluation
from opmodel.models.streaming.issue import calibrated_instructions
from opmodel.models.streaming.kernels import aten_elementwise_kernel, streaming_kernel
from opmodel.models.streaming.softmax_backward import softmax_backward_kernel

__all__ = ["softmax_backward_kernels"]

_MULTIPLY = "mul"


def _flops_rate(flops: int, base: RooflineSetup) -> float:
    """The vector rate the roofline gives these FLOPs (0 without FLOPs)."""
    seconds = compute_time_s(flops, base.vector_flops_per_s, 1.0)
    return flops / seconds if seconds > 0 else 0.0


def _product(
    op: LocalOp, view: RowView, base: RooflineSetup, hardware: HardwareSpec
) -> StreamingEvaluation:
    """ATen's ``grad * output`` over the rows."""
    assert view.dy is not None
    elements = view.rows * view.row_length
    element_bytes = max(1, view.dy.dtype.bits // 8)
    if op.attrs.get("aten_128bit_vectors") is True:
        kernel = aten_elementwise_kernel(OpKind.ELEMENTWISE, elements, element_bytes)
    else:
        kernel = streaming_kernel(
            OpKind.ELEMENTWISE, "pytorch", view.rows, view.row_length, element_bytes
        )
    issue = calibrated_instructions("pytorch", _MULTIPLY)
    if issue is None:
        issue = counted_instructions(hardware.architecture, view.dy.dtype, _MULTIPLY) or 0.0
    warm = op.warm_input_bytes()
    producer = op.attrs.get("producer_bytes")
    work = StreamWork(
        read_bytes=view.dy.nbytes + view.x.nbytes,
        shared_read_bytes=0,
        reread_bytes=0,
        write_bytes=view.dy.nbytes,
        flops=elements,
        vector_flops_per_s=_flops_rate(elements, base),
        warm_read_bytes=warm,
        producer_bytes=producer if isinstance(producer, int) else warm,
        instructions_per_element=issue,
        dirty_bytes=int_attr(op.attrs, "l2_dirty_bytes"),
    )
    return evaluate_streaming(kernel, hardware, work)


def softmax_backward_kernels(
    op: LocalOp, view: RowView, base: RooflineSetup, hardware: HardwareSpec
) -> tuple[StreamingEvaluation, StreamingEvaluation]:
    """(the multiply, the backward kernel) of ATen's softmax backward over ``view``."""
    assert view.dy is not None
    product = _product(op, view, base, hardware)
    element_bytes = max(1, view.x.dtype.bits // 8)
    kernel = softmax_backward_kernel(view.rows, view.row_length, element_bytes)
    tmp, read = view.dy.nbytes, view.dy.nbytes + view.x.nbytes
    flops = max(0, base.vector_flops - view.rows * view.row_length)
    work = StreamWork(
        read_bytes=read,
        shared_read_bytes=0,
        # only cunn_SoftMaxBackward reads tmp a second time; the Smem kernel keeps it
        reread_bytes=tmp if kernel.name == "cunn_SoftMaxBackward" else 0,
        write_bytes=view.y.nbytes,
        flops=flops,
        vector_flops_per_s=_flops_rate(flops, base),
        warm_read_bytes=read,
        producer_bytes=max(read, round(product.dram_read_bytes + product.dram_write_bytes)),
    )
    return product, evaluate_streaming(kernel, hardware, work)
