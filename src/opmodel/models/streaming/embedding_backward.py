"""The kernels of an embedding's backward pass (``EmbeddingBackwardView``) on GPUs: PyTorch's
``embedding_dense_backward_cuda`` (aten/src/ATen/native/cuda/Embedding.cu and
EmbeddingBackwardKernel.cu), what ``nn.Embedding`` and ``F.embedding`` run.

Both paths first zero the ``[vocab, hidden]`` gradient (``at::zeros``: ATen's fill, a
vectorized elementwise kernel that writes and reads nothing, :func:`fill_kernel`).

- ``tokens <= 3072`` (``FEATURE_KERNEL_MAX_TOKENS``): ``embedding_backward_feature_kernel``,
  one CTA of 32 x 32 threads per 32 columns (``ceil(hidden / 32)`` CTAs). Each CTA walks all
  the indices in chunks of 32, one dy row per warp: a barrier, each warp loads its row's 32
  columns, a barrier, and the warp that leads each group of equal indices adds the group's
  rows into its gradient row (a load of that row, then the store). Per chunk two dependent
  DRAM round trips (dy, then the gradient row) between barriers
  (:func:`feature_kernel`).
- more tokens: the indices are sorted (``cub::DeviceRadixSort::SortPairs`` of 64-bit keys,
  with their positions), the runs of equal indices (segments) found, each split into partial
  segments of at most ``NROWS_PER_THREAD`` = 10 rows; ``compute_grad_weight`` sums each
  partial segment's dy rows into an fp32 buffer, one thread per (partial segment, column),
  loading the row's position and then its dy element, one row after another
  (:func:`partial_sums_kernel`); ``sum_and_scatter`` adds each segment's partial sums and
  stores the result in the segment's gradient row (:func:`scatter_kernel`). Between them
  run ``INDEX_KERNELS`` small kernels over the indices (``arange``, the sort, the
  unique-by-key, ``krn_partials_per_segment``, an exclusive sum,
  ``krn_partial_segment_offset``) and ``HOST_SYNCS`` reads of a count to the host
  (``num_of_segments`` and the two ``.item()`` calls that give the partial segments), each of
  which waits for the GPU to drain before the host launches what follows.

The segment counts assume indices drawn uniformly at random over the vocabulary unless the op
says how many distinct rows they name (attr ``distinct_indices``): ``U = V (1 - (1 -
1/V)^N)`` distinct rows for ``N`` tokens, and ``P = max(U, ceil((N + 4.5 U) / 10))`` partial
segments (each segment's last partial holds 4.5 rows fewer than 10 on average; within 6 % of
the Poisson expectation at every ``N / V``). Register counts (32) are estimates; the count of
index kernels is an estimate (CUB's onesweep sort of 64-bit keys: a histogram, a scan and
eight passes). docs/models/streaming.md, "Embedding backward".
"""

from __future__ import annotations

import math

from opmodel.core.values import FastValue, value_type
from opmodel.models.streaming.structure import StreamKernel

__all__ = [
    "FEATURE_KERNEL_MAX_TOKENS",
    "HOST_SYNCS",
    "INDEX_KERNELS",
    "NROWS_PER_THREAD",
    "EmbeddingSegments",
    "feature_kernel",
    "fill_kernel",
    "index_kernel",
    "partial_sums_kernel",
    "scatter_kernel",
    "segments",
]

FEATURE_KERNEL_MAX_TOKENS = 3072  # Embedding.cu: num_indices <= 3072 runs the feature kernel
NROWS_PER_THREAD = 10  # EmbeddingBackwardKernel.cu: rows per partial segment
# arange 1; the sort of 64-bit keys 10 (histogram, scan, eight onesweep passes: an estimate);
# unique-by-key 2; krn_partials_per_segment 1; exclusive_sum 2; krn_partial_segment_offset 1
INDEX_KERNELS = 17
HOST_SYNCS = 3  # num_of_segments, then the two .item() reads of the partial segments' count
_MAX_BLOCK = 1024  # SortingCommon.cuh's MAX_BLOCK_SIZE on CUDA
_WARP = 32
_BLOCKDIMY = 32  # Embedding.cu: the feature kernel's warps per CTA (16 on ROCm)
_FILL_THREADS = 128  # ATen CUDALoops.cuh: 4 warps, 4 elements each
_FILL_PER_THREAD = 4
_REGISTERS = 32  # estimate: a few indices, an accumulator and addresses


@value_type
class EmbeddingSegments(FastValue):
    """``distinct``: the rows the indices name (segments); ``partial``: the partial segments
    of at most ``NROWS_PER_THREAD`` rows (module docstring)."""

    distinct: int
    partial: int


def segments(tokens: int, vocab: int, distinct: int | None = None) -> EmbeddingSegments:
    """Segments and partial segments of ``tokens`` indices over ``vocab`` rows, ``distinct``
    of them named (default: the expectation of a uniform draw; module docstring)."""
    if tokens < 1 or vocab < 1:
        raise ValueError(f"segments: tokens and vocab must be >= 1 (got {tokens}, {vocab})")
    if distinct is None:
        # V (1 - (1 - 1/V)^N), exact for V = 1 too
        expected = vocab * -math.expm1(tokens * math.log1p(-1.0 / vocab)) if vocab > 1 else 1.0
        distinct = max(1, min(tokens, vocab, round(expected)))
    elif not 1 <= distinct <= min(tokens, vocab):
        msg = f"segments: distinct must be in 1..{min(tokens, vocab)} (got {distinct})"
        raise ValueError(msg)
    partial = max(distinct, math.ceil((tokens + 4.5 * distinct) / NROWS_PER_THREAD))
    return EmbeddingSegments(distinct=distinct, partial=min(partial, tokens))


def _flat(name: str, elements: int, threads: int, per_thread: int) -> StreamKernel:
    """A grid of ``threads``-thread CTAs, ``per_thread`` elements each, one pass."""
    per_cta = threads * per_thread
    return StreamKernel(
        name=name,
        implementation="pytorch",
        ctas=max(1, math.ceil(elements / per_cta)),
        threads_per_cta=threads,
        registers_per_thread=_REGISTERS,
        elements_per_cta=per_cta,
        serial_loads=1,
        global_passes=1,
        reductions=0,
    )


def fill_kernel(elements: int) -> StreamKernel:
    """ATen's fill (``at::zeros``, ``zero_``): 128-thread CTAs of 4 elements per thread,
    stores only."""
    name = "vectorized_elementwise_kernel (fill)"
    return _flat(name, elements, _FILL_THREADS, _FILL_PER_THREAD)


def index_kernel(tokens: int) -> StreamKernel:
    """One of the small kernels over the indices (a sort pass, a scan): one thread per index
    in 256-thread CTAs, each a load and a store."""
    return _flat("index kernels (sort, unique, scans)", tokens, 256, 1)


def _block(hidden: int) -> tuple[int, int]:
    """(``stride_warped``: the columns rounded up to warps; the CTA size)."""
    warped = math.ceil(hidden / _WARP) * _WARP
    return warped, min(warped, _MAX_BLOCK)


def partial_sums_kernel(tokens: int, hidden: int, partial: int) -> StreamKernel:
    """``compute_grad_weight``: one thread per (partial segment, column); each walks its
    partial segment's ``ceil(tokens / partial)`` rows (on average), the row's position (L2)
    and then its dy element (DRAM), one row after another."""
    warped, block = _block(hidden)
    rows = max(1, math.ceil(tokens / partial))
    return StreamKernel(
        name="compute_grad_weight",
        implementation="pytorch",
        ctas=max(1, math.ceil(partial * warped / block)),
        threads_per_cta=block,
        registers_per_thread=_REGISTERS,
        elements_per_cta=block * rows,
        serial_loads=rows,
        l2_serial_loads=rows + 1,  # and the partial segment's start before the loop
        global_passes=1,
        reductions=0,
    )


def scatter_kernel(hidden: int, distinct: int, partial: int) -> StreamKernel:
    """``sum_and_scatter``: one thread per (segment, column); it reads its segment's
    ``ceil(partial / distinct)`` fp32 partial sums one after another, then the segment's row
    (two dependent L2 loads), and stores the sum into it."""
    warped, block = _block(hidden)
    sums = max(1, math.ceil(partial / distinct))
    return StreamKernel(
        name="sum_and_scatter",
        implementation="pytorch",
        ctas=max(1, math.ceil(distinct * warped / block)),
        threads_per_cta=block,
        registers_per_thread=_REGISTERS,
        elements_per_cta=block * sums,
        serial_loads=sums,
        l2_serial_loads=3,  # the segment's partials range, its start, the row it names
        global_passes=1,
        reductions=0,
    )


def feature_kernel(tokens: int, hidden: int) -> StreamKernel:
    """``embedding_backward_feature_kernel``: ``ceil(hidden / 32)`` CTAs of 32 warps, each
    walking the ``tokens`` indices in chunks of 32 with two dependent DRAM round trips (dy's
    columns, then the gradient row's) between barriers."""
    chunks = math.ceil(tokens / _BLOCKDIMY)
    return StreamKernel(
        name="embedding_backward_feature_kernel",
        implementation="pytorch",
        ctas=math.ceil(hidden / _WARP),
        threads_per_cta=_WARP * _BLOCKDIMY,
        registers_per_thread=_REGISTERS,
        elements_per_cta=_WARP * tokens,
        serial_loads=2 * chunks,
        l2_serial_loads=math.ceil(tokens / (_WARP * _BLOCKDIMY)),  # each batch's 1024 indices
        global_passes=1,
        reductions=0,
        serial_arithmetic=True,  # barriers between the loads and the adds
    )
