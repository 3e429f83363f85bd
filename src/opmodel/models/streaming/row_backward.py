"""The kernels of a row op's backward pass (softmax, layernorm, rmsnorm), per implementation.

A backward pass (a ``grad`` tensor dy; :class:`~opmodel.core.views.RowView`) runs a grad-input
kernel that reads x (softmax: the forward's output) and dy and writes dx, and, for a norm that
writes its weights' gradients, a second kernel that reduces over the rows:

``pytorch`` (ATen, aten/src/ATen/native/cuda/layer_norm_kernel.cu and SoftMax.cu):
    the norms run ``layer_norm_grad_input_kernel``: one row per CTA of 128 threads
    (``num_threads()``, four warps on CUDA, thread_constants.h), a first pass that sums
    ``g = dy gamma`` and ``g x_hat`` in vectors of 4, a block reduction of each sum in turn
    (the RMS variant: of the second only), and a second pass that re-reads the row to write
    dx.
    The weight gradients are ``GammaBetaBackwardCUDAKernelTemplate``, launched as
    ``LaunchGammaBetaBackwardCUDAKernel`` does on CUDA (PyTorch 2.7 and later; the
    ``GammaBetaBackwardCUDAKernel_32x32`` of earlier versions has the same shape where rows and
    length are multiples of 32): a CTA of ``32 x block_y`` threads owns 32 columns and walks
    the rows ``rows_per_block`` at a time, each thread loading the row's mean and rstd (an L2
    round trip: the grad-input kernel just read them), then its ``rows_per_block / block_y``
    rows of x and dy at once (one DRAM round trip), one block reduction at the end. The tile
    grows with the rows: ``(block_y, rows_per_block)`` = (1, 8) under 64 rows, (8, 64) under
    128, (16, 128) under 256, (32, 256) from 256. With more than 65,536 rows and fewer than
    ``sm_count / 2`` column blocks it splits the rows over ``grid_y = min(32768 / column
    blocks, rows / 32)`` one-warp CTAs of 32 rows that write ``grid_y x length`` partial sums
    per gradient (the gradient's dtype), which a ``.sum(0)`` per gradient (ATen's reduce)
    adds up. The grid is ``ceil(length / 32)`` columns wide, so short rows leave SMs idle:
    1,024 columns are 32 CTAs. ROCm builds (an AMD ``architecture``) take 64 columns per CTA,
    ``(16, 256)`` from 256 rows, and under 128 rows ``GammaBetaBackwardSimpleCUDAKernel``:
    256-thread CTAs of one column per thread, each walking every row in turn. Their grad-input
    kernel keeps the CUDA structure here (ROCm runs the unvectorised one, and over 32,768 rows
    a grid-stride one; not modelled).
    Softmax runs ATen's ``grad * output`` multiply, then ``softmax_warp_backward`` up to 1,024
    elements and 4 KiB a row, else ``cunn_SoftMaxBackward(Smem)``
    (:mod:`~opmodel.models.streaming.softmax_backward`).
``fused`` (Triton, e.g. Liger-Kernel, and fused CUDA kernels): one row per CTA with x and dy in
    registers, one pass, the forward's block reductions (layernorm 2, rmsnorm 1, softmax 1);
    weight gradients accumulate per SM (``sm_count x length`` fp32 partials written by the
    grad-input kernel) and a reduction kernel sums the partials over the SMs.
``vllm``: vLLM has no backward kernels (an error).

No issue cost is charged: the calibrations of :mod:`~opmodel.models.streaming.issue` were
fitted on the forward kernels. The grad-input kernel's registers are the most of its counted
variants; the others are estimates.
"""

from __future__ import annotations

import dataclasses
import math

from opmodel.core.enums import OpKind
from opmodel.core.errors import UnsupportedOpError
from opmodel.core.values import FastValue, value_type
from opmodel.models.shared.sass_code import is_rocm
from opmodel.models.streaming.kernels import streaming_kernel
from opmodel.models.streaming.softmax_backward import softmax_backward_kernel
from opmodel.models.streaming.structure import (
    ROW_REDUCTIONS,
    StreamKernel,
    held_row_registers,
)

__all__ = [
    "GammaBetaLaunch",
    "WeightGradKernels",
    "gamma_beta_launch",
    "grad_input_kernel",
    "partial_bytes",
    "weight_grad_kernel",
]

_ROW_THREADS = 128  # ATen's num_threads() on CUDA (thread_constants.h): four warps
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
        return softmax_backward_kernel(rows, length, element_bytes)
    return StreamKernel(
        name="layer_norm_grad_input_kernel",
        implementation="pytorch",
        ctas=rows,
        threads_per_cta=_ROW_THREADS,
        # cuobjdump -res-usage of PyTorch 2.14.1's layer_norm_grad_input_kernel_vectorized<T,
        # float, rms_norm> on sm_80 and sm_90 (fp32, fp16, bf16): layer norm 28-32, RMS 32-40
        registers_per_thread=40 if kind is OpKind.RMSNORM else 32,
        elements_per_cta=length,
        serial_loads=math.ceil(length / (_ROW_THREADS * _LAYER_NORM_VECTOR)),
        global_passes=2,
        # layer_norm_grad_input_kernel_vectorized: BlockReduceSum of sum(dy gamma), then of
        # sum(dy gamma x_hat), one after the other; the RMS variant reduces the second only
        reductions=2 if kind is OpKind.LAYERNORM else 1,
    )


@value_type
class GammaBetaLaunch(FastValue):
    """How ATen launches ``GammaBetaBackwardCUDAKernelTemplate`` (module docstring), or on
    ROCm under 128 rows ``GammaBetaBackwardSimpleCUDAKernel`` (``simple``)."""

    block_x: int  # threadIdx.x extent: one column per lane, 32 on CUDA and 64 on ROCm
    block_y: int  # threadIdx.y extent
    rows_per_block: int  # rows a CTA's threads cover in one step of its loop
    grid_x: int  # column blocks, ceil(length / block_x)
    grid_y: int  # row blocks: 1, or the split path's partial sums per gradient
    partial: bool  # no block reduction: each thread writes its own sums
    simple: bool = False  # a thread per column walks every row, one row per step


@value_type
class WeightGradKernels(FastValue):
    """The kernels that sum the weight gradients over the rows: ``kernel`` reads x and dy
    (ATen) or the per-SM partials (fused; ``read_elements`` per gradient); ATen's split path
    writes ``partial_rows x length`` partial sums per gradient, which ``sum_kernel`` (one
    launch per gradient) reduces; ``partial_rows`` is 0 and ``sum_kernel`` None otherwise."""

    kernel: StreamKernel
    read_elements: int
    partial_rows: int = 0
    sum_kernel: StreamKernel | None = None


_SPLIT_ROWS = 64 * 1024  # more rows than this (and few column blocks) take the split path
_SPLIT_MAX_GRID = 64 * 1024 // 2  # max_grid_size: column blocks x row blocks
# rows below -> (block_y, rows per step); from 256 rows (32, 256) on CUDA, (16, 256) on ROCm
_TILES = ((64, 1, 8), (128, 8, 64), (256, 16, 128))
_SIMPLE_THREADS = 256  # GammaBetaBackwardSimpleCUDAKernel's kCUDANumThreads


def gamma_beta_launch(
    rows: int, length: int, sm_count: int, architecture: str | None = None
) -> GammaBetaLaunch:
    """ATen's launch of the weight-gradient kernel for ``rows x length`` (module docstring;
    PyTorch's ``LayerNormBackwardKernelImplInternal`` and ``LaunchGammaBetaBackwardCUDAKernel``
    in layer_norm_kernel.cu, with their ROCm branches for an AMD ``architecture``)."""
    _check("pytorch", rows, length)
    rocm = is_rocm(architecture)
    block_x = 64 if rocm else 32
    grid_x = math.ceil(length / block_x)
    if rocm and rows < 128:
        return GammaBetaLaunch(
            block_x=_SIMPLE_THREADS,
            block_y=1,
            rows_per_block=1,
            grid_x=math.ceil(length / _SIMPLE_THREADS),
            grid_y=1,
            partial=True,
            simple=True,
        )
    if rows > _SPLIT_ROWS and length // block_x < sm_count // 2:
        grid_y = max(1, min(_SPLIT_MAX_GRID // grid_x, math.ceil(rows / 32)))
        return GammaBetaLaunch(
            block_x=block_x,
            block_y=1,
            rows_per_block=32,
            grid_x=grid_x,
            grid_y=grid_y,
            partial=True,
        )
    tall = (16 if rocm else 32, 256)
    block_y, rows_per_block = next(((y, r) for limit, y, r in _TILES if rows < limit), tall)
    # one thread per column does the whole sum: no reduction across threads
    return GammaBetaLaunch(
        block_x=block_x,
        block_y=block_y,
        rows_per_block=rows_per_block,
        grid_x=grid_x,
        grid_y=1,
        partial=block_y == 1,
    )


def _gamma_beta_kernel(
    rows: int, length: int, sm_count: int, architecture: str | None
) -> WeightGradKernels:
    launch = gamma_beta_launch(rows, length, sm_count, architecture)
    steps = math.ceil(rows / (launch.rows_per_block * launch.grid_y))
    held = 2 * (launch.rows_per_block // launch.block_y)  # x and dy values of a step, as fp32
    kernel = StreamKernel(
        name=(
            "GammaBetaBackwardSimpleCUDAKernel"
            if launch.simple
            else "GammaBetaBackwardCUDAKernelTemplate"
        ),
        implementation="pytorch",
        ctas=launch.grid_x * launch.grid_y,
        threads_per_cta=launch.block_x * launch.block_y,
        registers_per_thread=held_row_registers(held),  # estimate
        elements_per_cta=launch.block_x * math.ceil(rows / launch.grid_y),
        # each step's loads go out together once its mean and rstd have come from L2 (the
        # simple kernel loads a row's mean and rstd beside its x and dy)
        serial_loads=steps,
        l2_serial_loads=0 if launch.simple else steps,
        global_passes=1,
        reductions=0 if launch.partial else 1,
    )
    if launch.grid_y == 1:
        return WeightGradKernels(kernel=kernel, read_elements=rows * length)
    summed = streaming_kernel(OpKind.REDUCTION, None, length, launch.grid_y, 1)
    return WeightGradKernels(
        kernel=kernel,
        read_elements=rows * length,
        partial_rows=launch.grid_y,
        sum_kernel=dataclasses.replace(summed, name="reduce_kernel (.sum(0) of the partials)"),
    )


def weight_grad_kernel(
    implementation: str,
    rows: int,
    length: int,
    sm_count: int,
    architecture: str | None = None,
) -> WeightGradKernels:
    """The kernels that sum the weight gradients over the rows: ATen's
    ``GammaBetaBackwardCUDAKernelTemplate`` over the ``rows x length`` elements of x and dy
    (with the split path's ``.sum(0)``; ROCm's launch for an AMD ``architecture``), or the
    fused kernels' sum of ``min(rows, sm_count)`` per-SM partials per column."""
    _check(implementation, rows, length)
    if implementation == "fused":
        partials = min(rows, sm_count)
        reduce = streaming_kernel(OpKind.REDUCTION, None, length, partials, _PARTIAL_BYTES)
        return WeightGradKernels(
            kernel=dataclasses.replace(reduce, name="sum of per-SM partials"),
            read_elements=partials * length,
        )
    return _gamma_beta_kernel(rows, length, sm_count, architecture)


def partial_bytes(implementation: str, rows: int, length: int, sm_count: int, grads: int) -> int:
    """Bytes of per-SM partial sums the fused grad-input kernel writes (0 for ATen)."""
    if implementation != "fused" or not grads:
        return 0
    return min(rows, sm_count) * length * _PARTIAL_BYTES * grads
