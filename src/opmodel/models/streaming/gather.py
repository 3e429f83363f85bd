"""ATen's ``index_select``: the kernel ``F.embedding`` runs (PyTorch's embedding is
``weight.index_select(0, indices)``; vLLM's vocabulary embedding calls it at TP = 1).

``index_select_out_cuda_impl`` (aten/src/ATen/native/cuda/Indexing.cu) launches 128-thread
CTAs, at most ``8 x SMs`` of them:

- more than 16 indices: ``indexSelectLargeIndex``, a grid-stride loop over the output's
  ``tokens x hidden`` elements, one scalar element per thread per iteration. Each iteration
  divides the element's linear index by the row length (and again in ``IndexToOffset`` for the
  source and destination offsets), loads the row's index, then the table element that index
  names, and stores it; the next iteration's loads wait for this one's. A thread's
  iterations are ``ceil(tokens x hidden / (CTAs x 128))``.
- 16 indices or fewer: ``indexSelectSmallIndex``, a grid over one row's ``hidden`` elements
  (``min(ceil(hidden / 128), 8 x SMs)`` CTAs); each thread walks the indices in turn, loading
  each index and then its share of that row.

Per iteration a thread waits for two loads one after the other: the index, which the threads
of other SMs have just read or the host copy wrote (an L2 hit: consecutive iterations of a
thread land 8 x SMs x 128 elements apart, a different row whose index the SM's L1 has not
seen), and the table element, a DRAM access for tokens drawn at random from the vocabulary.
The integer index arithmetic sits between them (``serial_arithmetic``), with an issue cost per
element from the instruction-issue calibration (key ``embedding``;
:mod:`~opmodel.models.streaming.issue`): an effective cost in SM cycles per element, fitted on
Vidur's A100 rows, which a warp alone on its SMSP (the small-index kernel) also takes at the
SM's rate (``stalls_in_issue_cost``; docs/models/streaming.md, "Embeddings"). Register
count: an estimate (32; the kernel holds a few 32-bit indices and two 64-bit addresses), which
the grid's 8 CTAs per SM never reach.
"""

from __future__ import annotations

import math

from opmodel.models.streaming.structure import StreamKernel

__all__ = ["index_select_kernel"]

_THREADS = 128  # Indexing.cu: largeIndexBlock / smallIndexBlock = min(elements, 128)
_CTAS_PER_SM = 8  # Indexing.cu: grid = min(ceil(elements / 128), multiProcessorCount x 8)
_SMALL_INDEX_MAX = 16  # Indexing.cu: numIndices <= 16 runs indexSelectSmallIndex
_REGISTERS = 32  # estimate (module docstring)


def index_select_kernel(tokens: int, hidden: int, sm_count: int) -> StreamKernel:
    """ATen's ``index_select`` of ``tokens`` rows of ``hidden`` elements on ``sm_count`` SMs
    (module docstring): its grid, and per thread the iterations whose index (L2) and table
    (DRAM) loads wait one after the other."""
    if tokens < 1 or hidden < 1 or sm_count < 1:
        msg = f"index_select_kernel: sizes must be >= 1 (got {tokens}, {hidden}, {sm_count})"
        raise ValueError(msg)
    if tokens <= _SMALL_INDEX_MAX:
        ctas = min(math.ceil(hidden / _THREADS), _CTAS_PER_SM * sm_count)
        threads = min(hidden, _THREADS)
        table_loads = tokens * math.ceil(hidden / (ctas * threads))
        index_loads = tokens
        name = "indexSelectSmallIndex"
    else:
        total = tokens * hidden
        ctas = min(math.ceil(total / _THREADS), _CTAS_PER_SM * sm_count)
        threads = min(total, _THREADS)
        table_loads = index_loads = math.ceil(total / (ctas * threads))
        name = "indexSelectLargeIndex"
    return StreamKernel(
        name=name,
        implementation="pytorch",
        ctas=ctas,
        threads_per_cta=threads,
        registers_per_thread=_REGISTERS,
        # the busiest CTA's share: every thread runs the loop's iterations
        elements_per_cta=threads * table_loads,
        serial_loads=table_loads,
        l2_serial_loads=index_loads,
        global_passes=1,
        reductions=0,
        serial_arithmetic=True,
        stalls_in_issue_cost=True,
    )
