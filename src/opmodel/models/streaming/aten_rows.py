"""ATen's row kernels (implementation ``pytorch``): layer norm (and its RMS variant) and the
three softmax kernels, each as the :class:`~opmodel.models.streaming.structure.StreamKernel`
it runs (docs/models/streaming.md; which softmax kernel a row gets and its calibration:
:mod:`~opmodel.models.streaming.aten_softmax`)."""

from __future__ import annotations

import math

from opmodel.core.enums import OpKind
from opmodel.models.streaming.aten_softmax import loads_in_flight, softmax_path
from opmodel.models.streaming.structure import ROW_REDUCTIONS, VECTOR_BYTES, StreamKernel

__all__ = ["REGISTER_SOFTMAX", "WARP_SOFTMAX", "aten_row_kernel", "warp_softmax_log2"]

REGISTER_SOFTMAX = "cunn_SoftMaxForwardReg"
WARP_SOFTMAX = "softmax_warp_forward"

_ROW_THREADS = 128  # ATen layer_norm_kernel.cu: (warp, num_threads() / warp) = 4 warps
# ATen layer_norm_kernel.cu: ``constexpr int vec_size = 4`` elements per load in fp32, fp16, bf16
_LAYER_NORM_VECTOR_ELEMENTS = 4
# ncu on an H200 (data/measured/h200_2026-12-04_ncu): softmax_warp_forward for 2048 bf16
# elements (64 per thread) uses 80 registers: the row's values and 16 more (an estimate for
# GPUs whose SASS is not counted; configs/instructions/aten_softmax.yaml counts the rest)
_WARP_SOFTMAX_EXTRA_REGISTERS = 16
# PersistentSoftmax.cuh, dispatch_softmax_forward: 128 threads per CTA; a row of up to 2^l
# elements takes min(32, 2^l) lanes ("warp_size"), and rows of at most 128 go two to a warp
# ("batches_per_warp", the kernel's WARP_BATCH)
_WARP_SOFTMAX_THREADS = 128
_WARP_BATCH_MAX_ELEMENTS = 128
_SOFTMAX_MAX_THREADS = 1024  # ATen SoftMax.cu: max_threads for cunn_SoftMaxForward


def aten_row_kernel(kind: OpKind, rows: int, length: int, element_bytes: int) -> StreamKernel:
    """The kernel ATen runs for ``rows`` rows of ``length`` elements of ``kind``: softmax by
    :func:`~opmodel.models.streaming.aten_softmax.softmax_path`, the norms as
    ``vectorized_layer_norm_kernel``."""
    if kind is not OpKind.SOFTMAX:
        return _layer_norm(kind, rows, length, element_bytes)
    path = softmax_path(length, element_bytes)
    if path == "warp":
        return _warp_softmax(rows, length, element_bytes)
    threads = min(_SOFTMAX_MAX_THREADS, 32 * math.ceil(length / 32))
    if path == "reg":
        return _reg_softmax(rows, length, threads)
    return _block_softmax(rows, length, threads, element_bytes)


def _layer_norm(kind: OpKind, rows: int, length: int, element_bytes: int) -> StreamKernel:
    """``vectorized_layer_norm_kernel``: one row per 128-thread CTA, a Welford pass over the
    row, then a second pass that re-reads it to normalise, each in vectors of 4 elements."""
    threads = _ROW_THREADS
    # registers (cuobjdump -res-usage on PyTorch 2.14.1's sm_80, sm_86 and sm_90 code): 32
    # for 16-bit rows (the RMS variant 23-25, which allocates as many CTAs per SM); fp32 37,
    # 40 and 36 (allocated as 40), its RMS variant 32 (40 on sm_86)
    wide = element_bytes > 2
    registers = (32 if kind is OpKind.RMSNORM else 40) if wide else 32
    return StreamKernel(
        name="vectorized_layer_norm_kernel",
        implementation="pytorch",
        ctas=rows,
        threads_per_cta=threads,
        registers_per_thread=registers,
        elements_per_cta=length,
        # layer_norm loads vec_size = 4 elements whatever the dtype
        serial_loads=math.ceil(length / (threads * _LAYER_NORM_VECTOR_ELEMENTS)),
        global_passes=2,
        # each iteration of the Welford loop waits for its load, and the next load is issued
        # after the iteration's arithmetic (no software pipelining)
        serial_arithmetic=True,
        reductions=ROW_REDUCTIONS.get(kind, 0),
    )


def warp_softmax_log2(length: int) -> int:
    """``log2_elements`` of the warp softmax's instance for rows of ``length`` elements: the
    length rounded up to a power of two (``log2_ceil`` in PersistentSoftmax.cuh)."""
    return math.ceil(math.log2(max(1, length)))


def _warp_softmax(rows: int, length: int, element_bytes: int) -> StreamKernel:
    """``softmax_warp_forward``: a row per ``min(32, 2^l)`` lanes (``2^l``: the length rounded
    up to a power of two), two rows each for rows of at most 128 elements, in 128-thread CTAs;
    the rows in registers, one pass of ``WARP_ITERATIONS = 2^l / lanes`` loads per row,
    ``loads_in_flight`` of them at a time."""
    width = 1 << warp_softmax_log2(length)
    lanes = min(32, width)
    batch = 2 if width <= _WARP_BATCH_MAX_ELEMENTS else 1
    rows_per_cta = _WARP_SOFTMAX_THREADS // lanes * batch
    iterations = batch * width // lanes  # the values each lane holds
    return StreamKernel(
        name=WARP_SOFTMAX,
        implementation="pytorch",
        ctas=math.ceil(rows / rows_per_cta),
        threads_per_cta=_WARP_SOFTMAX_THREADS,
        registers_per_thread=min(255, _WARP_SOFTMAX_EXTRA_REGISTERS + iterations),
        elements_per_cta=rows_per_cta * length,
        serial_loads=iterations,
        global_passes=1,
        reductions=2,
        loads_in_flight=loads_in_flight(element_bytes),
    )


def _reg_softmax(rows: int, length: int, threads: int) -> StreamKernel:
    """``cunn_SoftMaxForwardReg`` (at most 9 elements per thread): one row per CTA of
    ``threads`` (SoftMaxForward_getBlockSize), the row loaded once, one scalar load per element
    per thread, all in flight, kept in registers; a max and a sum reduction with barriers
    between the phases."""
    return StreamKernel(
        name=REGISTER_SOFTMAX,
        implementation="pytorch",
        ctas=rows,
        threads_per_cta=threads,
        # estimate, as ATen's other row kernels: more than the 32 that two 1024-thread CTAs
        # per SM allow; where the kernel's SASS is counted, its registers for the elements
        # per thread replace it (effective_roofline.streaming_op, streaming.counted)
        registers_per_thread=40,
        elements_per_cta=length,
        serial_loads=1,
        global_passes=1,
        reductions=2,
        serial_arithmetic=True,
    )


def _block_softmax(rows: int, length: int, threads: int, element_bytes: int) -> StreamKernel:
    """``cunn_SoftMaxForward``: one row per CTA of ``threads`` (ncu on an H200 shows 1024 at
    32768 elements) walking it three times (max, sum, write) in 16-byte vectors, with barriers
    between the phases."""
    vector = max(1, VECTOR_BYTES // element_bytes)
    return StreamKernel(
        name="cunn_SoftMaxForward",
        implementation="pytorch",
        ctas=rows,
        threads_per_cta=threads,
        registers_per_thread=32,  # ncu on an H200: 32 at 32768 bf16 elements
        elements_per_cta=length,
        serial_loads=math.ceil(length / (threads * vector)),
        global_passes=3,
        reductions=2,
        serial_arithmetic=True,
    )
