"""The kernels of a cross-entropy loss (``OpKind.CROSS_ENTROPY``) on GPUs, per implementation.

``pytorch`` (``nn.CrossEntropyLoss``: ``log_softmax`` then ``nll_loss``, two ATen kernels):
    the log-softmax is ATen's softmax kernel with its log epilogue (aten/src/ATen/native/cuda/
    SoftMax.cu, ``LogSoftMaxForwardEpilogue``: the same walks over the row; the effective model
    times it as a ``softmax`` of the logits' shape and dtype), writing the log-probabilities,
    ``rows x vocab`` of the logits' dtype. A reduced loss (mean or sum) then runs
    ``nll_loss_forward_reduce_cuda_kernel_2d`` (aten/src/ATen/native/cuda/Loss.cu), which ATen
    launches as a single block of ``NLL_LOSS_THREADS`` = 32 threads (a fixed count; PyTorch PR
    #149548 of 2025 made it a function of the batch on ROCm only): each thread walks the rows
    ``32`` apart, loading a row's target and then the log-probability it names, a dependent
    pair of DRAM round trips per row it visits, ``ceil(rows / 32)`` of them one after another,
    the sum accumulated in shared memory. A per-row loss (reduction ``none``) runs
    ``nll_loss_forward_no_reduce_cuda_kernel`` instead, a grid of 128-thread CTAs, one row per
    thread.
``fused`` (Liger-Kernel's ``liger_cross_entropy_kernel``, Triton): one program of 32 warps per
    row (``num_warps=32``) walks the row in blocks of ``min(32768, next power of two of
    vocab)`` logits twice: first an online softmax (a block's max, then the sum of its
    exponentials, both block-wide reductions), then the gradient, written in place over the
    logits; before them it reads the row's target (an L2 round trip: a sector holds four
    targets). Its registers hold one block per thread share
    (:func:`~opmodel.models.streaming.structure.held_row_registers`).

Register counts of the nll kernels are estimates.
"""

from __future__ import annotations

import math

from opmodel.models.streaming.structure import StreamKernel, held_row_registers

__all__ = [
    "NLL_LOSS_THREADS",
    "liger_cross_entropy_kernel",
    "nll_loss_kernel",
]

NLL_LOSS_THREADS = 32  # aten/src/ATen/native/cuda/Loss.cu: one block of this many threads
_NO_REDUCE_THREADS = 128  # CUDA_NUM_THREADS of at::cuda::detail (GET_BLOCKS)
_LIGER_WARPS = 32  # liger_cross_entropy_kernel[(n_rows,)](..., num_warps=32)
_LIGER_MAX_BLOCK = 32768  # MAX_FUSED_SIZE = 65536 // 2 in Liger's cross_entropy.py
_WARP = 32


def nll_loss_kernel(rows: int, *, reduced: bool) -> StreamKernel:
    """ATen's nll_loss forward over ``rows`` rows: the single-block reducing kernel, or the
    one-row-per-thread grid for a per-row loss (module docstring)."""
    if rows < 1:
        raise ValueError(f"nll_loss_kernel: rows must be >= 1 (got {rows})")
    if reduced:
        return StreamKernel(
            name="nll_loss_forward_reduce_cuda_kernel_2d",
            implementation="pytorch",
            ctas=1,
            threads_per_cta=NLL_LOSS_THREADS,
            registers_per_thread=32,  # estimate
            elements_per_cta=rows,
            # the target, then the log-probability it names: two dependent loads per row visited
            serial_loads=2 * math.ceil(rows / NLL_LOSS_THREADS),
            global_passes=1,
            reductions=1,
        )
    return StreamKernel(
        name="nll_loss_forward_no_reduce_cuda_kernel",
        implementation="pytorch",
        ctas=math.ceil(rows / _NO_REDUCE_THREADS),
        threads_per_cta=_NO_REDUCE_THREADS,
        registers_per_thread=32,  # estimate
        elements_per_cta=_NO_REDUCE_THREADS,
        serial_loads=2,
        global_passes=1,
        reductions=0,
    )


def liger_cross_entropy_kernel(rows: int, vocab: int) -> StreamKernel:
    """Liger-Kernel's fused cross-entropy over ``rows`` rows of ``vocab`` logits (module
    docstring)."""
    if rows < 1 or vocab < 1:
        raise ValueError(
            f"liger_cross_entropy_kernel: rows and vocab must be >= 1 (got {rows}, {vocab})"
        )
    block = min(_LIGER_MAX_BLOCK, 1 << max(0, vocab - 1).bit_length())
    blocks = math.ceil(vocab / block)
    threads = _LIGER_WARPS * _WARP
    return StreamKernel(
        name="liger_cross_entropy_kernel",
        implementation="fused",
        ctas=rows,
        threads_per_cta=threads,
        registers_per_thread=held_row_registers(math.ceil(block / threads)),
        elements_per_cta=vocab,
        serial_loads=blocks,  # each block's loads wait for the previous block's reductions
        global_passes=2,
        reductions=2 * blocks,  # the online softmax's max and sum of each block
        l2_serial_loads=1,  # the row's target
    )
