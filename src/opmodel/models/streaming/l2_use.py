"""What the L2 does for one streaming kernel: re-read hits, warm inputs, write-back.

A kernel's second pass re-reads its rows from L2 while one wave's rows fit there beside the
output lines the wave writes meanwhile: ``h = min(1, C / (bytes the wave's CTAs read per pass
+ bytes they write))``, ``C`` the L2's shared capacity (``MemoryLevel.shared_capacity_bytes``:
on a two-partition L2 a line read from the far partition is also kept in the near one); the
other ``1 - h`` of the re-read bytes come from DRAM.

An op that reads what the previous kernel wrote (attrs ``warm_l2`` / ``warm_input``, with that
kernel's ``producer_bytes``, and ``producer_waves`` when it wrote them in bursts at the end of
its waves, as a tiled GEMM does) finds the share ``s`` of those bytes in L2 that
:func:`~opmodel.models.shared.l2_survival.producer_output_survival` gives; only ``1 - s`` of
them travel from DRAM, and when every streamed input is warm ``s`` of the first pass's load
steps hit L2. The writes that reach DRAM while the kernel runs follow
:func:`~opmodel.models.shared.l2_survival.write_back_bytes` (the rest are written back under
later kernels).

Dirty lines of another kernel (attr ``l2_dirty_bytes``: a benchmark's flush that wrote a
buffer). The L2 holds at most its shared capacity ``C`` of them, as of a producer's output;
the kernel's DRAM traffic evicts ``1 - exp(-x)`` of those, ``x = (DRAM reads + writes) / C``
(:func:`~opmodel.models.shared.l2_survival.dirty_write_back_bytes`, random replacement, which
the module keeps for these lines alone), and writes them back. DRAM
controllers queue writes behind reads, so the write-back adds to the DRAM bandwidth bound
only: a latency-bound kernel does not wait for it (measured: Liger's Triton norms, timed by
do_bench after a 256 MiB ``zero_()``, 23.1 % -> 14.1 %; docs/validation.md).
Equations: docs/models/streaming.md.
"""

from __future__ import annotations

from opmodel.core.values import FastValue, value_type
from opmodel.models.shared.l2_survival import (
    dirty_write_back_bytes,
    producer_output_survival,
    write_back_bytes,
)
from opmodel.models.streaming.structure import StreamKernel

__all__ = ["L2Use", "StreamWork", "l2_use"]


@value_type
class StreamWork(FastValue):
    """What the whole op moves and computes.

    ``read_bytes`` / ``write_bytes``: compulsory traffic; ``shared_read_bytes``: the part of
    ``read_bytes`` every CTA reads (norm weights: from DRAM once, from L2 by each CTA);
    ``reread_bytes``: bytes read again by each pass after the first (the row input);
    ``vector_flops_per_s``: the engine's peak for the op's arithmetic (0 when it does none);
    ``sfu_ops``: special-function instructions of the whole op (exp2, tanh, rcp);
    ``warm_read_bytes``: the part of ``read_bytes`` the previous kernel wrote (attrs
    ``warm_l2`` / ``warm_input``), which moved ``producer_bytes`` in all and wrote it in
    ``producer_waves`` bursts (``None``: evenly as it ran);
    ``instructions_per_element``: what each thread issues per element
    (:mod:`~opmodel.models.streaming.issue`; 0: no issue bound);
    ``dirty_bytes``: what another kernel wrote just before, not an input (attr
    ``l2_dirty_bytes``; module docstring).
    """

    read_bytes: int
    shared_read_bytes: int
    reread_bytes: int
    write_bytes: int
    flops: int
    vector_flops_per_s: float
    sfu_ops: int = 0
    warm_read_bytes: int = 0
    producer_bytes: int = 0
    producer_waves: int | None = None
    instructions_per_element: float = 0.0
    dirty_bytes: int = 0


@value_type
class L2Use(FastValue):
    """What the L2 does for one kernel: re-read hits, the producer's output found, the DRAM
    bytes read and written back during the run."""

    hit: float  # share of second-pass re-reads served by L2
    survival: float  # share of the warm inputs' bytes still in L2
    warm: float  # share of first-pass load steps that hit L2 (0 unless every input is warm)
    warm_hits: float  # bytes of warm inputs read from L2
    dram_reads: float  # DRAM bytes read, first pass and re-reads
    written_back: float  # DRAM bytes written back while the kernel runs
    dirty_written_back: float  # unrelated dirty lines the kernel's traffic evicts (dirty_bytes)


def _warm_survival(work: StreamWork, has_l2: bool, l2_shared_bytes: float) -> tuple[float, float]:
    """The warm input bytes (at most the reads) and the share of the previous kernel's output
    still in L2 when they are read (:func:`producer_output_survival`; 0 without an L2 or warm
    input)."""
    warm_bytes = min(work.warm_read_bytes, work.read_bytes)
    if not (has_l2 and warm_bytes):
        return warm_bytes, 0.0
    survival = producer_output_survival(
        max(work.producer_bytes, warm_bytes),
        work.read_bytes - warm_bytes + work.write_bytes,
        l2_shared_bytes,
        work.producer_waves,
    )
    return warm_bytes, survival


def l2_use(
    kernel: StreamKernel, has_l2: bool, l2_shared_bytes: float, work: StreamWork, wave_ctas: int
) -> L2Use:
    """L2 re-read hits, warm-input survival and write-back (module docstring)."""
    read_bytes, reread_bytes, write_bytes = work.read_bytes, work.reread_bytes, work.write_bytes
    extra = kernel.global_passes - 1
    reread_cta = reread_bytes / kernel.ctas
    # a wave's rows wait in L2 for their re-read beside the output lines the wave writes
    held = wave_ctas * (reread_cta + write_bytes / kernel.ctas)
    hit = min(1.0, l2_shared_bytes / held) if has_l2 and extra and reread_cta else 1.0
    warm_bytes, survival = _warm_survival(work, has_l2, l2_shared_bytes)
    warm_hits = survival * warm_bytes
    dram_reads = read_bytes - warm_hits + extra * reread_bytes * (1 - hit)
    allocated = dram_reads + write_bytes
    written_back = (
        write_back_bytes(write_bytes, warm_hits, allocated, l2_shared_bytes)
        if has_l2 and warm_bytes
        else float(write_bytes)
    )
    return L2Use.make(
        dirty_written_back=(
            dirty_write_back_bytes(work.dirty_bytes, allocated, l2_shared_bytes)
            if has_l2 and work.dirty_bytes
            else 0.0
        ),
        hit=hit,
        survival=survival,
        # a load step waits on DRAM unless every streamed input is warm
        warm=survival if warm_bytes >= read_bytes - work.shared_read_bytes else 0.0,
        warm_hits=warm_hits,
        dram_reads=dram_reads,
        written_back=written_back,
    )
