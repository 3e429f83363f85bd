"""Elementwise, row, reduction, embedding and copy ops on GPUs as streaming kernels.

The roofline estimate supplies the op's FLOPs, engine and arithmetic energy; the streaming
kernel (:mod:`opmodel.models.streaming`) supplies the latency and the traffic per level.
Energy = the roofline's arithmetic energy + DRAM and L2 bytes x J/byte + static power x the
new latency. The kernel's implementation comes from attr ``implementation`` (docs/models/
streaming.md); elementwise ops default to ``pytorch``, row ops to ``fused``.
"""

from __future__ import annotations

import math

from opmodel.core.attrs import int_attr
from opmodel.core.enums import OpKind
from opmodel.core.op import LocalOp
from opmodel.core.profile import OpProfile
from opmodel.core.views import CopyView, ElementwiseView, EmbeddingView, ReductionView, RowView
from opmodel.formulas.roofline import compute_time_s
from opmodel.hardware.clocking import boosted
from opmodel.hardware.spec import HardwareSpec
from opmodel.models.effective_roofline.row_backward_op import predict_row_backward
from opmodel.models.effective_roofline.streaming_cost import streaming_cost
from opmodel.models.shared.roofline_estimate import RooflineSetup, roofline_setup
from opmodel.models.streaming import StreamWork, evaluate_streaming, rope_kernel, streaming_kernel
from opmodel.models.streaming.aten_softmax import block_instructions_per_element, softmax_path
from opmodel.models.streaming.counted import counted_instructions, counted_layer_norm
from opmodel.models.streaming.gather import index_select_kernel
from opmodel.models.streaming.issue import (
    calibrated_instructions,
    counted_issue_cost,
    issue_key,
)
from opmodel.models.streaming.kernels import (
    ELEMENTWISE_SFU_OPS,
    StreamKernel,
    aten_elementwise_kernel,
    runs_aten_elementwise,
)

__all__ = ["STREAMING_KINDS", "predict_streaming"]

STREAMING_KINDS = frozenset(
    {
        OpKind.ELEMENTWISE,
        OpKind.SOFTMAX,
        OpKind.LAYERNORM,
        OpKind.RMSNORM,
        OpKind.REDUCTION,
        OpKind.EMBEDDING,
        OpKind.COPY,
    }
)


def _shape(op: LocalOp) -> tuple[int, int, int, int, int]:
    """(rows, length, element bytes, bytes of the re-read row input, bytes of shared weights)."""
    view = op.view
    if isinstance(view, RowView):
        x = view.x
        shared = sum(w.nbytes for w in view.weights)
        return view.rows, view.row_length, max(1, x.dtype.bits // 8), x.nbytes, shared
    if isinstance(view, ReductionView):
        x = view.x
        rows = max(1, x.num_elements // max(1, view.reduce_length))
        return rows, view.reduce_length, max(1, x.dtype.bits // 8), 0, 0
    if isinstance(view, EmbeddingView):
        return view.tokens, view.hidden, max(1, view.y.dtype.bits // 8), 0, 0
    if isinstance(view, CopyView):
        y = view.y
        return 1, view.num_elements, max(1, y.dtype.bits // 8), 0, 0
    assert isinstance(view, ElementwiseView)
    y = view.y
    if view.function == "rope" and len(y.shape) >= 2:
        # rotary embedding of [tokens, heads, head size]: a row is one token's q and k heads
        rows = y.shape[0]
        return rows, view.num_elements // rows, max(1, y.dtype.bits // 8), 0, 0
    length = y.shape[-1] if y.shape else 1
    rows = max(1, view.num_elements // max(1, length))
    return rows, length, max(1, y.dtype.bits // 8), 0, 0


def _sfu_ops(op: LocalOp) -> int:
    view = op.view
    if isinstance(view, ElementwiseView) and view.function:
        return ELEMENTWISE_SFU_OPS.get(view.function, 0) * view.num_elements
    if isinstance(view, RowView) and op.kind is OpKind.SOFTMAX:
        return view.rows * view.row_length  # one exp2 per element
    return 0


def _kernel_of(
    op: LocalOp, rows: int, length: int, element_bytes: int, sm_count: int
) -> StreamKernel:
    """The kernel structure the op's ``implementation`` attr names (vLLM RoPE and ATen's
    index_select, every embedding but a ``fused`` one, have their own)."""
    implementation = op.attrs.get("implementation")
    view = op.view
    if implementation == "vllm" and isinstance(view, ElementwiseView) and view.function == "rope":
        return rope_kernel(rows, length)
    if op.kind is OpKind.EMBEDDING and implementation != "fused":
        return index_select_kernel(rows, length, sm_count)
    vec128 = op.attrs.get("aten_128bit_vectors") is True
    if vec128 and runs_aten_elementwise(op.kind, implementation):
        return aten_elementwise_kernel(op.kind, rows * length, element_bytes)
    return streaming_kernel(
        op.kind,
        implementation if isinstance(implementation, str) else None,
        rows,
        length,
        element_bytes,
    )


def _issue_cost(
    op: LocalOp, kernel: StreamKernel, length: int, element_bytes: int, hardware: HardwareSpec
) -> float:
    """Instructions per element: ATen's block softmax has its own calibration
    (:mod:`~opmodel.models.streaming.aten_softmax`); ATen's layer norm, where its SASS is
    counted for the architecture and dtype, its counted loop cycles per element plus its
    per-row instructions over the row, times the calibration's stall factor
    (:mod:`~opmodel.models.streaming.issue`); every other kernel the issue calibration's
    value for its implementation and function or kind; where that lists none, an ATen
    elementwise function the count from its SASS for the architecture and dtype
    (:mod:`~opmodel.models.streaming.counted`), else none."""
    aten_block = (
        op.kind is OpKind.SOFTMAX
        and kernel.implementation == "pytorch"
        and softmax_path(length, element_bytes) != "warp"
    )
    if aten_block:
        return block_instructions_per_element()
    key = issue_key(op)
    view, architecture = op.view, hardware.architecture
    aten_layer_norm = op.kind is OpKind.LAYERNORM and kernel.implementation == "pytorch"
    if aten_layer_norm and isinstance(view, RowView):
        row = counted_layer_norm(architecture, view.x.dtype)
        sm = hardware.compute.sm
        if row is not None and sm is not None:
            issued = math.ceil(kernel.elements_per_cta / sm.warp_size) * sm.warp_size
            threads = kernel.threads_per_cta
            return counted_issue_cost(row, threads, issued, kernel.implementation, key)
    fitted = calibrated_instructions(kernel.implementation, key)
    if fitted is not None:
        return fitted
    if kernel.implementation != "pytorch" or not isinstance(view, ElementwiseView):
        return 0.0
    return counted_instructions(architecture, view.y.dtype, key) or 0.0


def _work_of(
    op: LocalOp,
    base: RooflineSetup,
    kernel: StreamKernel,
    shape: tuple[int, int, int, int, int],
    hardware: HardwareSpec,
) -> StreamWork:
    """What the op moves and computes, from the roofline's compulsory traffic and FLOPs
    (``shape``: what :func:`_shape` gives)."""
    _, length, element_bytes, reread, shared = shape
    hbm = base.traffic["hbm"]
    flops = base.tensor_flops + base.vector_flops
    vector_time_s = compute_time_s(base.vector_flops, base.vector_flops_per_s, 1.0)
    warm = op.warm_input_bytes()
    producer = op.attrs.get("producer_bytes")  # an int >= the warm bytes (LocalOp checks it)
    waves = op.attrs.get("producer_waves")  # an int >= 1 (LocalOp checks it)
    return StreamWork(
        read_bytes=hbm.read_bytes,
        shared_read_bytes=min(shared, hbm.read_bytes),
        reread_bytes=reread,
        write_bytes=hbm.write_bytes,
        flops=flops,
        vector_flops_per_s=flops / vector_time_s if vector_time_s > 0 else 0.0,
        sfu_ops=_sfu_ops(op),
        warm_read_bytes=warm,
        producer_bytes=producer if isinstance(producer, int) else warm,
        producer_waves=waves if isinstance(waves, int) else None,
        instructions_per_element=_issue_cost(op, kernel, length, element_bytes, hardware),
        dirty_bytes=int_attr(op.attrs, "l2_dirty_bytes"),
    )


def predict_streaming(op: LocalOp, hardware: HardwareSpec) -> OpProfile:
    """The streaming-kernel profile of an elementwise or row op on a GPU, at the device's
    ``max_boost_clock_hz`` when it has one (these kernels leave the tensor cores idle, so an
    unlocked device boosts; a spec from ``at_clock`` is locked and has none)."""
    if isinstance(op.view, RowView) and op.view.backward:
        return predict_row_backward(op, hardware)
    hardware = boosted(hardware)
    base = roofline_setup(op, hardware)
    shape = _shape(op)
    rows, length, element_bytes, _, _ = shape
    sm = hardware.compute.sm
    assert sm is not None  # predict_streaming serves GPUs, whose configs give their SMs
    kernel = _kernel_of(op, rows, length, element_bytes, sm.sm_count)
    work = _work_of(op, base, kernel, shape, hardware)
    e = evaluate_streaming(kernel, hardware, work)
    traffic, energy = streaming_cost(base, hardware, (e,), base.traffic["hbm"].write_bytes)
    return OpProfile.make(
        latency_s=e.latency_s,
        flops=base.tensor_flops + base.vector_flops,
        engine=base.engine,
        footprint=op.footprint,
        traffic=traffic,
        energy=energy,
        implementation=f"effective_roofline/streaming/{kernel.implementation}",
        diagnostics=e,
    )
