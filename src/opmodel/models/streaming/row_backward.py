"""The kernels of a row op's backward pass (softmax, layernorm, rmsnorm), per implementation.

A backward pass (a ``grad`` tensor dy; :class:`~opmodel.core.views.RowView`) runs a grad-input
kernel that reads x (softmax: the forward's output) and dy and writes dx, and, for a norm that
writes its weights' gradients, a second kernel that reduces over the rows:

``pytorch`` (ATen, aten/src/ATen/native/cuda/layer_norm_kernel.cu and SoftMax.cu):
    the norms run ``layer_norm_grad_input_kernel``: one row per CTA of 128 threads (estimate,
    as the forward), a first pass that sums ``g = dy gamma`` and ``g x_hat`` in vectors of 4,
    one block reduction of both sums, and a second pass that re-reads the row to write dx.
    The weight gradients are ``GammaBetaBackward``: every column summed over the rows, a second
    read of x and dy (modelled with ATen's reduce structure over the rows x length elements).
    Softmax runs ``softmax_warp_backward`` or ``cunn_SoftMaxBackward`` where the forward runs
    its warp or block kernel: one pass (warp) or two (sum, then write), one reduction.
``fused`` (Triton, e.g. Liger-Kernel, and fused CUDA kernels): one row per CTA with x and dy in
    registers, one pass, the forward's block reductions (layernorm 2, rmsnorm 1, softmax 1);
    weight gradients accumulate per SM (``sm_count x length`` fp32 partials written by the
    grad-input kernel) and a reduction kernel sums the partials over the SMs.
``vllm``: vLLM has no backward kernels (an error).

No issue cost is charged: the calibrations of :mod:`~opmodel.models.streaming.issue` were
fitted on the forward kernels. Register counts are estimates.
"""

from __future__ import annotations

import dataclasses
import math

from opmodel.core.enums import OpKind
from opmodel.core.errors import UnsupportedOpError
from opmodel.models.streaming.aten_rows import aten_row_kernel
from opmodel.models.streaming.kernels import streaming_kernel
from opmodel.models.streaming.structure import ROW_REDUCTIONS, StreamKernel

__all__ = ["grad_input_kernel", "partial_bytes", "weight_grad_kernel"]

_ROW_THREADS = 128  # ATen's layer norm kernels (estimate for the backward, as the forward)
_LAYER_NORM_VECTOR = 4  # layer_norm_kernel.cu: vec_size
_PARTIAL_BYTES = 4  # the fused kernels' per-SM partial sums of the weight gradients, fp32


def _check(implementation: str, rows: int, length: int) -> None:
    """A one-line error for an implementation without backward kernels or an empty shape."""
    if implementation == "vllm":
        raise UnsupportedOpError(
            "implementation vllm: vLLM has no backward kernels; a row op's backward pass runs "
            "as implementation pytorch or fused"
        )
    if implementation not in ("pytorch", "fused"):
        raise ValueError(
            f"row backward: implementation must be pytorch or fused (got {implementation!r})"
        )
    if rows < 1 or length < 1:
        raise ValueError(f"row backward: rows and length must be >= 1 (got {rows}, {length})")


def grad_input_kernel(
    kind: OpKind, implementation: str, rows: int, length: int, element_bytes: int
) -> StreamKernel:
    """The kernel that writes dx for ``rows`` rows of ``length`` elements (module docstring)."""
    _check(implementation, rows, length)
    if implementation == "fused":
        fused = streaming_kernel(kind, "fused", rows, length, element_bytes)
        return dataclasses.replace(
            fused,
            name="fused row backward kernel (one row per CTA, x and dy in registers)",
            # x and dy held: twice the forward's row registers
            registers_per_thread=min(255, 2 * fused.registers_per_thread - 32),
            reductions=1 if kind is not OpKind.LAYERNORM else ROW_REDUCTIONS[kind],
        )
    if kind is OpKind.SOFTMAX:
        forward = aten_row_kernel(kind, rows, length, element_bytes)
        warp = forward.name == "softmax_warp_forward"
        return dataclasses.replace(
            forward,
            name="softmax_warp_backward" if warp else "cunn_SoftMaxBackward",
            global_passes=1 if warp else 2,
            reductions=1,
            serial_arithmetic=False,
        )
    return StreamKernel(
        name="layer_norm_grad_input_kernel",
        implementation="pytorch",
        ctas=rows,
        threads_per_cta=_ROW_THREADS,
        registers_per_thread=40,  # estimate, as the forward
        elements_per_cta=length,
        serial_loads=math.ceil(length / (_ROW_THREADS * _LAYER_NORM_VECTOR)),
        global_passes=2,
        reductions=1,  # both sums in one block reduction
    )


def weight_grad_kernel(
    implementation: str, rows: int, length: int, sm_count: int
) -> tuple[StreamKernel, int]:
    """The kernel that sums the weight gradients over the rows, and the elements it reads per
    gradient: ATen's ``GammaBetaBackward`` over the ``rows x length`` elements of x and dy, or
    the fused kernels' sum of ``min(rows, sm_count)`` per-SM partials per column."""
    _check(implementation, rows, length)
    if implementation == "fused":
        partials = min(rows, sm_count)
        reduce = streaming_kernel(OpKind.REDUCTION, None, length, partials, _PARTIAL_BYTES)
        return dataclasses.replace(reduce, name="sum of per-SM partials"), partials * length
    gamma_beta = streaming_kernel(OpKind.REDUCTION, None, length, rows, 1)
    return dataclasses.replace(gamma_beta, name="GammaBetaBackward"), rows * length


def partial_bytes(implementation: str, rows: int, length: int, sm_count: int, grads: int) -> int:
    """Bytes of per-SM partial sums the fused grad-input kernel writes (0 for ATen)."""
    if implementation != "fused" or not grads:
        return 0
    return min(rows, sm_count) * length * _PARTIAL_BYTES * grads
