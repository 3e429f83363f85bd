"""ATen's softmax backward (implementation ``pytorch``), as PyTorch's SoftMax.cu runs it.

``softmax_backward_cuda_out`` first forms ``tmp = grad * output`` (``Tensor tmp = grad *
output``: one ATen elementwise multiply over the scores, a kernel of its own, in every version
of SoftMax.cu read for this, PyTorch 1.x to 2.10), then ``host_softmax_backward`` runs on ``tmp``
and the forward's output ``y``; ``log_softmax``'s backward (a softmax op with attr
``log_softmax``) has no multiply and runs the backward kernel on ``grad`` itself.
``host_softmax_backward`` picks:

- ``softmax_warp_backward`` (``dispatch_softmax_backward``, PersistentSoftmax.cuh) for rows
  of at most 1,024 elements and 4,096 bytes (``dim_size <= 1024 && dim_size *
  sizeof(scalar_t) <= 4096``: a lower limit than the forward's 2,048 elements and 8 KiB). It
  has the forward warp kernel's layout (a row per ``min(32, 2^l)`` lanes, two rows per warp up
  to 128 elements, 128-thread CTAs, the row in registers) and loads ``tmp`` and ``y``, one warp
  reduction of ``tmp``, one pass.
- otherwise ``dispatch_host_softmax_backward``: one row per CTA of ``SoftMax_getBlockSize(ILP,
  dim_size)`` threads (``ILP = 16 / element bytes``; the power of two at least half of
  ``min(dim_size / ILP, 1024)``, and at least a warp), vectors of ``ILP`` elements. Where the
  row fits the CTA's shared memory (``dim_size`` elements under ``sharedMemPerBlock`` less the
  reduction buffer, 48 KiB on CUDA, and ``dim_size`` a multiple of ``ILP``)
  ``cunn_SoftMaxBackwardSmem`` keeps ``tmp`` there: a pass that sums it, a block reduction, a
  pass that reads ``y`` and writes ``dx``. Otherwise ``cunn_SoftMaxBackward`` reads ``tmp``
  again in its second pass.
"""

from __future__ import annotations

import dataclasses
import math

from opmodel.core.enums import OpKind
from opmodel.models.streaming.aten_rows import aten_row_kernel
from opmodel.models.streaming.structure import VECTOR_BYTES, StreamKernel

__all__ = [
    "SHARED_MEMORY_PER_BLOCK_BYTES",
    "block_backward_threads",
    "is_warp_backward",
    "softmax_backward_kernel",
    "uses_shared_row",
]

WARP_BACKWARD_MAX_ELEMENTS = 1024  # SoftMax.cu, host_softmax_backward
WARP_BACKWARD_MAX_BYTES = 4096
SHARED_MEMORY_PER_BLOCK_BYTES = 48 * 1024  # cudaDeviceProp.sharedMemPerBlock on CUDA GPUs
_MAX_THREADS = 1024  # SoftMax.cu: max_threads
_WARP = 32


def is_warp_backward(length: int, element_bytes: int) -> bool:
    """True when ATen runs the backward of a softmax over rows of ``length`` elements as
    ``softmax_warp_backward``."""
    return length <= WARP_BACKWARD_MAX_ELEMENTS and length * element_bytes <= (
        WARP_BACKWARD_MAX_BYTES
    )


def block_backward_threads(length: int, element_bytes: int) -> int:
    """``SoftMax_getBlockSize(ILP, length)``: the smallest power of two at least half of
    ``min(length / ILP, 1024)``, and at least one warp."""
    ilp = max(1, VECTOR_BYTES // element_bytes)
    most = min(length // ilp, _MAX_THREADS)
    if ilp > 1:
        most //= 2
    threads = 1
    while threads < most:
        threads *= 2
    return max(threads, _WARP)


def uses_shared_row(length: int, element_bytes: int, threads: int) -> bool:
    """True when ``dispatch_host_softmax_backward`` keeps the row of ``tmp`` in shared memory
    (``cunn_SoftMaxBackwardSmem``): it fits beside the reduction buffer (one fp32 per warp)
    and its length is a whole number of vectors."""
    ilp = max(1, VECTOR_BYTES // element_bytes)
    room = (SHARED_MEMORY_PER_BLOCK_BYTES - threads // _WARP * 4) // element_bytes
    return length < room and length % ilp == 0


def softmax_backward_kernel(rows: int, length: int, element_bytes: int) -> StreamKernel:
    """The kernel ``host_softmax_backward`` runs on ``tmp`` and ``y`` (module docstring):
    the warp kernel (one pass) or the block kernel (two passes; the second re-reads ``tmp``
    unless the row sits in shared memory)."""
    if is_warp_backward(length, element_bytes):
        forward = aten_row_kernel(OpKind.SOFTMAX, rows, length, element_bytes)
        return dataclasses.replace(
            forward,
            name="softmax_warp_backward",
            global_passes=1,
            reductions=1,
            serial_arithmetic=False,
        )
    threads = block_backward_threads(length, element_bytes)
    shared = uses_shared_row(length, element_bytes, threads)
    vector = max(1, VECTOR_BYTES // element_bytes)
    return StreamKernel(
        name="cunn_SoftMaxBackwardSmem" if shared else "cunn_SoftMaxBackward",
        implementation="pytorch",
        ctas=rows,
        threads_per_cta=threads,
        registers_per_thread=32,  # estimate, as the forward block kernel (ncu: 32)
        elements_per_cta=length,
        serial_loads=math.ceil(length / (threads * vector)),
        global_passes=2,
        reductions=1,
        # the sum's reduction waits for the first pass and the second pass for the sum
        serial_arithmetic=True,
    )
