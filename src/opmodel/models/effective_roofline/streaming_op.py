"""Elementwise, row, reduction, embedding and copy ops on GPUs as streaming kernels.

The roofline estimate supplies the op's FLOPs, engine and arithmetic energy; the streaming
kernel (:mod:`opmodel.models.streaming`) supplies the latency and the traffic per level.
Energy = the roofline's arithmetic energy + DRAM and L2 bytes x J/byte + static power x the
new latency. The kernel's implementation comes from attr ``implementation`` (docs/models/
streaming.md); elementwise ops default to ``pytorch``, row ops to ``fused``.
"""

from __future__ import annotations

import dataclasses
import math

from opmodel.core.attrs import int_attr
from opmodel.core.enums import OpKind
from opmodel.core.errors import OpValidationError
from opmodel.core.op import LocalOp
from opmodel.core.profile import OpProfile
from opmodel.core.views import CopyView, ElementwiseView, EmbeddingView, ReductionView, RowView
from opmodel.formulas.roofline import compute_time_s
from opmodel.hardware.clocking import boosted
from opmodel.hardware.spec import HardwareSpec
from opmodel.models.effective_roofline.row_backward_op import predict_row_backward
from opmodel.models.effective_roofline.streaming_checks import check_vllm_function
from opmodel.models.effective_roofline.streaming_cost import streaming_cost, streaming_profile
from opmodel.models.effective_roofline.streaming_launch import launch_by_sms, reduce_issue_cost
from opmodel.models.shared.roofline_estimate import RooflineSetup, roofline_setup
from opmodel.models.streaming import StreamWork, evaluate_streaming, rope_kernel, streaming_kernel
from opmodel.models.streaming.aten_broadcast import (
    BROADCAST_KERNEL,
    broadcast_issue_cost,
    broadcast_kernel,
    runs_broadcast,
)
from opmodel.models.streaming.aten_rows import REGISTER_SOFTMAX, WARP_SOFTMAX, warp_softmax_log2
from opmodel.models.streaming.aten_softmax import (
    block_instructions_per_element,
    register_stall_factor,
    softmax_path,
)
from opmodel.models.streaming.counted import (
    RegisterSoftmaxCount,
    counted_instructions,
    counted_layer_norm,
    counted_register_softmax,
    counted_warp_softmax_registers,
)
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
    op: LocalOp, rows: int, length: int, element_bytes: int, hardware: HardwareSpec
) -> StreamKernel:
    """The kernel structure the op's ``implementation`` attr names (RoPE, ATen's index_select
    for every embedding but a ``fused`` one, and ATen's reduce_kernel have their own)."""
    implementation = op.attrs.get("implementation")
    view = op.view
    rope = isinstance(view, ElementwiseView) and view.function == "rope"
    if rope and implementation in ("vllm", "fused"):
        return rope_kernel(rows, length, str(implementation))
    own = launch_by_sms(op, rows, length, element_bytes, hardware)
    if own is not None:
        return own
    vllm_rms = op.kind is OpKind.RMSNORM and implementation == "vllm"
    if isinstance(view, RowView) and view.residual and vllm_rms:
        # csrc/layernorm_kernels.cu: rms_norm_kernel's loops with the residual's load and store
        kernel = streaming_kernel(op.kind, "vllm", rows, length, element_bytes)
        return dataclasses.replace(kernel, name="fused_add_rms_norm_kernel")
    if runs_broadcast(op.kind, view, implementation):
        return broadcast_kernel(rows * length, element_bytes, hardware.architecture)
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


def _issued(kernel: StreamKernel, hardware: HardwareSpec) -> int:
    """The CTA's elements padded to whole warps: a warp instruction takes an issue slot however
    few of its lanes hold an element."""
    sm = hardware.compute.sm
    warp = sm.warp_size if sm is not None else 32
    return math.ceil(kernel.elements_per_cta / warp) * warp


def _row_count(op: LocalOp, kernel: StreamKernel, hardware: HardwareSpec) -> float | None:
    """``I`` of an ATen row kernel counted from its SASS for the GPU's architecture and the
    rows' dtype (:mod:`~opmodel.models.streaming.counted`), ``None`` without a count: the layer
    norm's (and its RMS variant's) loop cycles per element plus its per-row instructions, times
    the issue calibration's stall factor (:mod:`~opmodel.models.streaming.issue`; the RMS
    variant has none fitted: its count alone); the register
    softmax's cycles per row of a thread, times its own stall factor
    (:mod:`~opmodel.models.streaming.aten_softmax`); both spread over the issued elements."""
    view, arch = op.view, hardware.architecture
    if kernel.implementation != "pytorch" or not isinstance(view, RowView):
        return None
    threads, issued = kernel.threads_per_cta, _issued(kernel, hardware)
    if op.kind in (OpKind.LAYERNORM, OpKind.RMSNORM):
        rms = op.kind is OpKind.RMSNORM
        norm = counted_layer_norm(arch, view.x.dtype, rms=rms)
        key = issue_key(op)
        return None if norm is None else counted_issue_cost(norm, threads, issued, "pytorch", key)
    register = _register_softmax(kernel, view, arch)
    if register is None:
        return None
    return register_stall_factor() * register.cycles_per_row * threads / issued


def _register_softmax(
    kernel: StreamKernel, view: RowView, architecture: str | None
) -> RegisterSoftmaxCount | None:
    """The register softmax's count for the kernel's elements per thread, if it is that
    kernel and counted."""
    if kernel.name != REGISTER_SOFTMAX:
        return None
    per_thread = math.ceil(kernel.elements_per_cta / kernel.threads_per_cta)
    return counted_register_softmax(architecture, view.x.dtype, per_thread)


def _issue_cost(
    op: LocalOp, kernel: StreamKernel, length: int, element_bytes: int, hardware: HardwareSpec
) -> float:
    """Instructions per element: a kernel counted from its SASS its count (ATen's
    non-contiguous elementwise kernel; its reduce kernel, ``reduce_issue_cost``; an ATen row
    kernel, :func:`_row_count`); ATen's block softmax (and its register softmax without a count) its
    own calibration (:mod:`~opmodel.models.streaming.aten_softmax`); every other kernel the
    issue calibration's value for its implementation and function or kind; where that lists
    none, an ATen elementwise function the count from its SASS for the architecture and dtype
    (:mod:`~opmodel.models.streaming.counted`), else none."""
    if kernel.name == BROADCAST_KERNEL and isinstance(op.view, ElementwiseView):
        return broadcast_issue_cost(op.view, hardware.architecture)
    counted = reduce_issue_cost(op, kernel, hardware)
    counted = _row_count(op, kernel, hardware) if counted is None else counted
    if counted is not None:
        return counted
    aten_softmax = op.kind is OpKind.SOFTMAX and kernel.implementation == "pytorch"
    if aten_softmax and softmax_path(length, element_bytes) != "warp":
        return block_instructions_per_element()
    key = issue_key(op)
    fitted = calibrated_instructions(kernel.implementation, key)
    if fitted is not None:
        return fitted
    view = op.view
    if kernel.implementation != "pytorch" or not isinstance(view, ElementwiseView):
        return 0.0
    return counted_instructions(hardware.architecture, view.y.dtype, key) or 0.0


def _with_counted_registers(
    op: LocalOp, kernel: StreamKernel, hardware: HardwareSpec
) -> StreamKernel:
    """ATen's register and warp softmax with the registers counted for their elements per
    thread (they set how many of the kernel's CTAs share an SM), where counted; any other
    kernel as it is."""
    view = op.view
    if not isinstance(view, RowView):
        return kernel
    if kernel.name == WARP_SOFTMAX:
        log2 = warp_softmax_log2(view.row_length)
        counted = counted_warp_softmax_registers(hardware.architecture, view.x.dtype, log2)
    else:
        register = _register_softmax(kernel, view, hardware.architecture)
        counted = None if register is None else register.registers
    if counted is None:
        return kernel
    return dataclasses.replace(kernel, registers_per_thread=counted)


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
    if (
        isinstance(op.view, RowView)
        and op.view.residual
        and op.attrs.get("implementation") == "pytorch"
    ):
        raise OpValidationError(
            f"op '{op.name}' ({op.kind.value}): ATen has no {op.kind.value} with a fused residual "
            "add (implementation pytorch); its kernels are fused (Liger's, the default) or vllm"
        )
    check_vllm_function(op)
    hardware = boosted(hardware)
    base = roofline_setup(op, hardware)
    shape = _shape(op)
    rows, length, element_bytes, _, _ = shape
    sm = hardware.compute.sm
    assert sm is not None  # predict_streaming serves GPUs, whose configs give their SMs
    kernel = _with_counted_registers(
        op, _kernel_of(op, rows, length, element_bytes, hardware), hardware
    )
    work = _work_of(op, base, kernel, shape, hardware)
    e = evaluate_streaming(kernel, hardware, work)
    traffic, energy = streaming_cost(base, hardware, (e,), base.traffic["hbm"].write_bytes)
    return streaming_profile(op, base, (e.latency_s, traffic, energy), kernel.implementation, e)
