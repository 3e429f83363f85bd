"""The kernels of an embedding's backward pass (``EmbeddingBackwardView``) on GPUs: PyTorch's
``embedding_dense_backward_cuda`` (aten/src/ATen/native/cuda/Embedding.cu and
EmbeddingBackwardKernel.cu, as of PyTorch 2.14), what ``nn.Embedding`` and ``F.embedding``
run.

Every path first zeroes the ``[vocab, hidden]`` gradient (``at::zeros``: ATen's fill, a
vectorized elementwise kernel that writes and reads nothing, :func:`fill_kernel`).

- ``tokens <= 3072`` (``FEATURE_KERNEL_MAX_TOKENS``): ``embedding_backward_feature_kernel``,
  one CTA of ``warp x BLOCKDIMY`` threads (32 x 32; 64 x 16 on ROCm) per warp-wide slice of
  columns. Each CTA walks all the indices in chunks of ``BLOCKDIMY``, one dy row per warp: a
  barrier, each warp loads its row's slice, a barrier, and the warp that leads each group of
  equal indices adds the group's rows into its gradient row (a load of that row, then the
  store). Per chunk two dependent DRAM round trips between barriers (:func:`feature_kernel`).
- more tokens: the indices are sorted (``cub::DeviceRadixSort::SortPairs`` of 64-bit keys,
  with their positions), the runs of equal indices (segments) found, each split into partial
  segments of at most ``NROWS_PER_THREAD`` = 10 rows, all counts kept on the GPU (no host
  read since PyTorch pull request #70943, 2022). ``INDEX_KERNELS`` small kernels do that
  (``arange``, the sort, the unique-by-key, ``krn_partials_per_segment``, an exclusive sum,
  ``compute_num_of_partial_segments``, ``krn_partial_segment_offset``). Then either
  - ``compute_grad_weight`` sums each partial segment's dy rows into an fp32 buffer, one
    thread per (partial segment, column), loading the row's position and then its dy element,
    one row after another (:func:`partial_sums_kernel`), and ``sum_and_scatter`` adds each
    segment's partial sums and stores the result in the segment's gradient row
    (:func:`scatter_kernel`); or, when ``sum_and_scatter``'s grid would be under
    ``MAX_ATOMIC_ACCUM_BLOCKS_PER_SM`` CTAs per SM and the partial segments over four times
    that grid (a vocabulary of a few rows: :func:`runs_atomic_path`),
  - ``compute_grad_weight_atomic_accumulate``: the same partial sums, each added atomically
    to its gradient row (after one more index kernel, ``krn_partial_to_segment_idx``), into
    the gradient itself for fp32, else into a zeroed fp32 copy that a cast copies back.

The grids are sized for the most segments the indices could make (``min(tokens, vocab)``,
and ``tokens / 10`` more partial segments); the CTAs past the real counts exit after one load
and are not priced. The segment counts assume indices drawn uniformly at random over the
vocabulary unless the op says how many distinct rows they name (attr ``distinct_indices``):
``U = V (1 - (1 - 1/V)^N)`` distinct rows for ``N`` tokens, and ``P = max(U, ceil((N + 4.5 U)
/ 10))`` partial segments (each segment's last partial holds 4.5 rows fewer than 10 on
average; within 6 % of the Poisson expectation at every ``N / V``). Registers per thread:
``REGISTERS``, counted from PyTorch 2.14.1's cubins (``python
scripts/count_embedding_registers.py``); 32 elsewhere (an estimate). The count of index
kernels is an estimate (CUB's onesweep sort of 64-bit keys: a histogram, a scan and eight
passes). docs/models/streaming.md, "Embedding backward".
"""

from __future__ import annotations

import math

from opmodel.core.values import FastValue, value_type
from opmodel.models.shared.sass_code import sass_architecture
from opmodel.models.streaming.structure import StreamKernel

__all__ = [
    "FEATURE_KERNEL_MAX_TOKENS",
    "INDEX_KERNELS",
    "MAX_ATOMIC_ACCUM_BLOCKS_PER_SM",
    "NROWS_PER_THREAD",
    "REGISTERS",
    "EmbeddingSegments",
    "SortedGrid",
    "atomic_sums_kernel",
    "cast_kernel",
    "feature_kernel",
    "fill_kernel",
    "index_kernel",
    "partial_sums_kernel",
    "runs_atomic_path",
    "scatter_kernel",
    "segments",
    "sorted_grid",
]

FEATURE_KERNEL_MAX_TOKENS = 3072  # Embedding.cu: num_indices <= 3072 runs the feature kernel
NROWS_PER_THREAD = 10  # EmbeddingBackwardKernel.cu: rows per partial segment
MAX_ATOMIC_ACCUM_BLOCKS_PER_SM = 4  # EmbeddingBackwardKernel.cu: the atomic path's bound
# arange 1; the sort of 64-bit keys 10 (histogram, scan, eight onesweep passes: an estimate);
# unique-by-key 2; krn_partials_per_segment 1; exclusive_sum 2; compute_num_of_partial_segments
# 1; krn_partial_segment_offset 1
INDEX_KERNELS = 18
# registers per thread by the SASS a GPU runs: cuobjdump -res-usage of PyTorch 2.14.1's
# libtorch_cuda.so, the most of its float, half and bfloat16 variants with int64 indices
# (python scripts/count_embedding_registers.py)
REGISTERS = {
    "compute_grad_weight": {"sm80": 32, "sm86": 40, "sm90": 32, "sm100": 32},
    "sum_and_scatter": {"sm80": 22, "sm86": 24, "sm90": 24, "sm100": 32},
    "compute_grad_weight_atomic_accumulate": {"sm80": 32, "sm86": 42, "sm90": 32, "sm100": 32},
    "embedding_backward_feature_kernel": {"sm80": 25, "sm86": 25, "sm90": 27, "sm100": 27},
}
_ESTIMATE = 32  # registers of a kernel on an architecture without a count, and of the others
_FILL_THREADS = 128  # ATen CUDALoops.cuh: 4 warps, 4 elements each
_FILL_PER_THREAD = 4


@value_type
class EmbeddingSegments(FastValue):
    """``distinct``: the rows the indices name (segments); ``partial``: the partial segments
    of at most ``NROWS_PER_THREAD`` rows (module docstring)."""

    distinct: int
    partial: int


@value_type
class SortedGrid(FastValue):
    """The sorted path's launch geometry: ``columns`` (the row rounded up to warps,
    ``stride_warped``), ``block`` (threads per CTA: ``min(columns, MAX_BLOCK_SIZE)``, 1,024 on
    CUDA and 256 on ROCm, SortingCommon.cuh), ``architecture`` (whose register counts apply)."""

    columns: int
    block: int
    architecture: str | None


def registers(kernel: str, architecture: str | None) -> int:
    """``kernel``'s registers per thread on ``architecture``'s SASS (``REGISTERS``)."""
    return REGISTERS.get(kernel, {}).get(sass_architecture(architecture) or "", _ESTIMATE)


def sorted_grid(hidden: int, warp: int, rocm: bool, architecture: str | None) -> SortedGrid:
    """The sorted path's geometry for rows of ``hidden`` on a GPU of ``warp``-wide warps."""
    columns = math.ceil(hidden / warp) * warp
    return SortedGrid(
        columns=columns, block=min(columns, 256 if rocm else 1024), architecture=architecture
    )


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


def runs_atomic_path(tokens: int, vocab: int, grid: SortedGrid, sm_count: int) -> bool:
    """EmbeddingBackwardKernel.cu's choice of the atomic path: ``sum_and_scatter``'s grid over
    ``min(tokens, vocab)`` segments under ``MAX_ATOMIC_ACCUM_BLOCKS_PER_SM`` CTAs per SM and
    the most partial segments, ``tokens // 10 + min(tokens, vocab)``, over four times it."""
    most_segments = min(tokens, vocab)
    scatter_ctas = math.ceil(most_segments * grid.columns / grid.block)
    most_partials = tokens // NROWS_PER_THREAD + most_segments
    return scatter_ctas < sm_count * MAX_ATOMIC_ACCUM_BLOCKS_PER_SM and (
        most_partials > 4 * scatter_ctas
    )


def _flat(name: str, elements: int, threads: int, per_thread: int) -> StreamKernel:
    """A grid of ``threads``-thread CTAs, ``per_thread`` elements each, one pass."""
    per_cta = threads * per_thread
    return StreamKernel(
        name=name,
        implementation="pytorch",
        ctas=max(1, math.ceil(elements / per_cta)),
        threads_per_cta=threads,
        registers_per_thread=_ESTIMATE,
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


def cast_kernel(elements: int) -> StreamKernel:
    """ATen's copy with a dtype cast (the atomic path's fp32 rows into a 16-bit gradient):
    128-thread CTAs of 4 elements per thread."""
    return _flat("copy (cast)", elements, _FILL_THREADS, _FILL_PER_THREAD)


def index_kernel(tokens: int) -> StreamKernel:
    """One of the small kernels over the indices (a sort pass, a scan): one thread per index
    in 256-thread CTAs, each a load and a store."""
    return _flat("index kernels (sort, unique, scans)", tokens, 256, 1)


def _per_column(
    name: str, rows: int, grid: SortedGrid, loads: tuple[int, int], l2_loads: int
) -> StreamKernel:
    """One thread per (``rows``, column) in ``grid.block``-thread CTAs, each waiting for
    ``loads[0]`` DRAM round trips of ``loads[1]`` elements and ``l2_loads`` L2 ones."""
    serial, elements = loads
    return StreamKernel(
        name=name,
        implementation="pytorch",
        ctas=max(1, math.ceil(rows * grid.columns / grid.block)),
        threads_per_cta=grid.block,
        registers_per_thread=registers(name, grid.architecture),
        elements_per_cta=grid.block * elements,
        serial_loads=serial,
        l2_serial_loads=l2_loads,
        global_passes=1,
        reductions=0,
    )


def partial_sums_kernel(tokens: int, partial: int, grid: SortedGrid) -> StreamKernel:
    """``compute_grad_weight``: each thread walks its partial segment's ``ceil(tokens /
    partial)`` rows (on average), the row's position (L2) and then its dy element (DRAM), one
    row after another, after the count and the partial segment's bounds (L2)."""
    rows = max(1, math.ceil(tokens / partial))
    return _per_column("compute_grad_weight", partial, grid, (rows, rows), rows + 2)


def atomic_sums_kernel(tokens: int, partial: int, grid: SortedGrid) -> StreamKernel:
    """``compute_grad_weight_atomic_accumulate``: ``compute_grad_weight``'s chain, then the
    segment and row its partial segment adds to (three dependent L2 loads) and the atomic add,
    which does not wait."""
    rows = max(1, math.ceil(tokens / partial))
    name = "compute_grad_weight_atomic_accumulate"
    return _per_column(name, partial, grid, (rows, rows), rows + 5)


def scatter_kernel(distinct: int, partial: int, grid: SortedGrid) -> StreamKernel:
    """``sum_and_scatter``: each thread reads its segment's ``ceil(partial / distinct)`` fp32
    partial sums one after another, then the segment's row (dependent L2 loads: the counts,
    the range, its start, the row), and stores the sum into it."""
    sums = max(1, math.ceil(partial / distinct))
    return _per_column("sum_and_scatter", distinct, grid, (sums, sums), 4)


def feature_kernel(
    tokens: int, hidden: int, warp: int, rocm: bool, architecture: str | None
) -> StreamKernel:
    """``embedding_backward_feature_kernel``: ``ceil(hidden / warp)`` CTAs of ``warp x
    BLOCKDIMY`` threads (``BLOCKDIMY`` 32, 16 on ROCm), each walking the ``tokens`` indices in
    chunks of ``BLOCKDIMY`` with two dependent DRAM round trips (dy's slice, then the gradient
    row's) between barriers, and loading each batch of ``warp x BLOCKDIMY`` indices first."""
    rows_per_chunk = 16 if rocm else 32
    threads = warp * rows_per_chunk
    chunks = math.ceil(tokens / rows_per_chunk)
    name = "embedding_backward_feature_kernel"
    return StreamKernel(
        name=name,
        implementation="pytorch",
        ctas=math.ceil(hidden / warp),
        threads_per_cta=threads,
        registers_per_thread=registers(name, architecture),
        elements_per_cta=warp * tokens,
        serial_loads=2 * chunks,
        l2_serial_loads=math.ceil(tokens / threads),
        global_passes=1,
        reductions=0,
        serial_arithmetic=True,  # barriers between the loads and the adds
    )
