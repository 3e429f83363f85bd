"""How much of a producer kernel's output is still in L2 when the next kernel reads it, and
how much of a kernel's output the L2 writes back while it runs.

**Survival (least-recently-used).** A kernel that reads what the previous kernel just wrote
finds part of it in L2. The producer moved ``P`` bytes (its reads and writes) and wrote the warm
tensor evenly as it went; the consumer reads that tensor in the same order while moving ``M``
bytes of its own. The byte at fraction ``f`` of the tensor has seen ``(1 - f) P + f M`` bytes
of other traffic since it was written. With least-recently-used replacement a line is still in
an L2 of ``C`` bytes exactly while that traffic is under ``C``, so the share found there is the
measure of the ``f`` in ``[0, 1]`` with ``(1 - f) a + f b < 1`` (``a = P / C``, ``b = M / C``):

    s = 1                                  a <= 1 and b <= 1
    s = 0                                  a >= 1 and b >= 1
    s = (1 - min(a, b)) / (max(a, b) - min(a, b))   otherwise

A kernel pair whose traffic fits finds all of it; beyond that the share falls linearly with the
traffic, to nothing once both kernels stream more than ``C``. Vidur's back-to-back vLLM RMSNorm
times show the step this law predicts and a smooth law cannot: on an H100 the time per wave
of 264 CTAs is a median 3.0 us from 768 to 2,112 tokens of Llama-2-7B and 4.2 us from 2,304
tokens on (``scripts/vidur_wave_times.py``), the cost of the first pass's loads going from L2
to DRAM (docs/models/streaming.md, "Replacement policy").
An earlier random-replacement law (a line survives ``d`` bytes of later misses with
probability ``exp(-d / C)``, so ``s = (e^-b - e^-a) / (a - b)``) declines smoothly instead;
with it and the write-back law below on random replacement too, the non-GEMM held-out rows
scored 8.3 % against 7.8 % (docs/validation.md, "Replacement policy").
NVIDIA does not document the L2's policy; ``C`` is the L2's shared capacity
(``MemoryLevel.shared_capacity_bytes``) as for every other law here. Nothing is fitted.

**Write-back.** The same policy decides when a written line reaches DRAM
(:func:`write_back_bytes`): once ``C`` bytes were allocated after its last use. Nsight
Compute's write counters on GEMMs agree better with it than with random replacement
(docs/validation.md, "GEMM DRAM traffic"). The dirty lines of a benchmark's L2 flush, which the
timed kernel never touches, keep random replacement (:func:`dirty_write_back_bytes`): with LRU
every allocation past the L2's older clean lines would write one of them back, and the
event-timed rows that carry a flush (Liger-Kernel's, this project's H200 runs) fit that worse
(RTX 3090 softmax 18.1 % -> 22.5 %); what the hardware does with a buffer written once and
never read is not settled by these data.
"""

from __future__ import annotations

import math

__all__ = ["dirty_write_back_bytes", "producer_output_survival", "write_back_bytes"]


def producer_output_survival(
    producer_bytes: float,
    consumer_bytes: float,
    capacity_bytes: float,
    producer_waves: int | None = None,
) -> float:
    """Share of a producer's output still in L2 when the consumer reads it (module docstring).

    ``producer_bytes``: what the producer moved (reads and writes, its output included);
    ``consumer_bytes``: what the consumer moves besides reading that output;
    ``capacity_bytes``: the L2 capacity the data can occupy. All must be non-negative.
    ``producer_waves``: ``None`` when the producer wrote its output evenly as it ran (a
    streaming kernel); else the ``W >= 1`` equal bursts in which it wrote it, one at the end of
    each of its waves (a tiled GEMM stores each output tile in its CTA's epilogue), see
    ``_burst_survival``.
    """
    if producer_bytes < 0 or consumer_bytes < 0 or capacity_bytes < 0:
        raise ValueError(
            "producer_output_survival: producer_bytes, consumer_bytes and capacity_bytes must be "
            f">= 0 (got {producer_bytes!r}, {consumer_bytes!r}, {capacity_bytes!r})"
        )
    waves_ok = producer_waves is None or (
        isinstance(producer_waves, int)
        and not isinstance(producer_waves, bool)
        and producer_waves >= 1
    )
    if not waves_ok:
        raise ValueError(
            f"producer_output_survival: producer_waves must be an int >= 1 or None (got "
            f"{producer_waves!r})"
        )
    if capacity_bytes == 0:
        return 0.0
    a, b = producer_bytes / capacity_bytes, consumer_bytes / capacity_bytes
    if producer_waves is not None:
        return _burst_survival(a, b, producer_waves)
    low, high = min(a, b), max(a, b)  # the law is symmetric in a and b
    if high <= 1:
        return 1.0
    if low >= 1:
        return 0.0
    return (1 - low) / (high - low)


def _burst_survival(a: float, b: float, waves: int) -> float:
    """The survival share when the producer wrote its output in ``waves`` equal bursts.

    A tiled GEMM stores each output tile in its CTA's epilogue, after the CTA streamed its
    operands, so its output appears in ``W`` bursts, one at the end of each wave, in the order
    the consumer reads it (the launch raster walks the output's rows). The burst with ``j``
    bursts after it (``j = 0..W-1``) has ``j a / W`` of the producer's traffic after it (``a =
    P / C``, ``b = M / C`` as in the module docstring), and the consumer reads it at ``f`` in
    ``[(W - j - 1) / W, (W - j) / W]``, so a byte of it survives while ``j a / W + f b < 1``
    (least-recently-used). Its surviving share of ``f`` is ``clamp(g(j), 0, 1 / W)`` with

        g(j) = (1 - j a / W) / b - (W - j - 1) / W,

    linear in ``j``, and ``s`` is the sum over the bursts (:func:`_clamped_linear_sum`, no loop
    over them). One wave (``W = 1``) leaves the whole output after the producer's traffic,
    ``s = min(1, 1 / b)``; each burst has no more producer traffic after it than evenly written
    data at the same ``f``, so ``s`` never falls below the evenly written law, which it tends to
    as ``W`` grows. Nothing is fitted."""
    step = 1.0 / waves
    if a == 0:  # no producer traffic after any burst: the consumer's own traffic alone
        return min(1.0, 1 / b) if b > 0 else 1.0
    if b == 0 or not (math.isfinite(1 / b) and math.isfinite(a / b)):
        # no consumer traffic (or too little to divide by): every byte of a burst survives
        # while the producer traffic after it stays under C
        kept = waves if a * (waves - 1) < waves else math.ceil(waves / a)
        return min(waves, kept) * step
    alpha = 1 / b - 1 + step
    beta = step * (1 - a / b)
    return _clamped_linear_sum(alpha, beta, waves, step)


def _clamped_linear_sum(alpha: float, beta: float, n: int, cap: float) -> float:
    """``sum_{j=0}^{n-1} min(cap, max(0, alpha + beta j))`` in closed form (``cap > 0``).

    The terms at ``cap`` and at 0 form two runs at the ends of ``0..n-1``; the terms between,
    on the line, are one arithmetic series, whose sum is kept within ``[0, count x cap]``
    against rounding where ``alpha`` and ``beta j`` nearly cancel."""
    if beta == 0:
        return n * min(cap, max(0.0, alpha))
    if beta > 0:  # rising: zeros first, then the line, then terms at cap
        start = _index(math.floor(_within(-alpha / beta, n)) + 1, n)
        stop = max(start, _index(math.ceil(_within((cap - alpha) / beta, n)), n))
        full = n - stop
    else:  # falling: terms at cap first, then the line, then zeros
        start = _index(math.floor(_within((alpha - cap) / -beta, n)) + 1, n)
        stop = max(start, _index(math.ceil(_within(alpha / -beta, n)), n))
        full = start
    count = stop - start
    middle = count * alpha + beta * (start + stop - 1) * count / 2
    return full * cap + min(count * cap, max(0.0, middle))


def _within(x: float, n: int) -> float:
    """``x`` clamped to ``[-1, n]`` (NaN to -1): an index bound ``math.floor`` can take."""
    return -1.0 if math.isnan(x) else min(float(n), max(-1.0, x))


def _index(i: int, n: int) -> int:
    return min(n, max(0, i))


def write_back_bytes(
    written_bytes: float, dirty_bytes: float, allocated_bytes: float, capacity_bytes: float
) -> float:
    """Bytes a kernel's run writes back to DRAM from a write-back L2 of ``capacity_bytes``.

    A written line reaches DRAM only when it is evicted. Under least-recently-used replacement
    (module docstring) a line is evicted once the kernel has allocated ``capacity_bytes`` after
    its last use (``allocated_bytes``: its DRAM reads and its writes, spread evenly over the
    run). That last use is spread evenly over the run both for the ``written_bytes`` it writes
    as it goes and for the ``dirty_bytes`` of a producer's output it finds in L2 and reads (a
    read makes a line the most recent), so with ``x = allocated_bytes / capacity_bytes`` the
    line used at fraction ``f`` of the run is evicted when ``(1 - f) x > 1``, and

        written back = (written_bytes + dirty_bytes) x max(0, 1 - 1 / x).

    The rest stays dirty in L2 and is written back later, under whatever runs next. Nsight
    Compute's write counters on the 48 Rapid-LLM GEMMs, whose caches it flushes before each
    kernel (nothing dirty at the start), test the law: 39 of 48 rows within 10 % of C, median
    1.6 % of C (34 and 2.4 % with random replacement's ``1 - (1 - e^-x) / x``;
    docs/validation.md). All arguments must be finite and non-negative.
    """
    if not (  # chained comparisons also reject NaN
        0 <= written_bytes < math.inf
        and 0 <= dirty_bytes < math.inf
        and 0 <= allocated_bytes < math.inf
        and 0 <= capacity_bytes < math.inf
    ):
        raise ValueError(
            "write_back_bytes: written_bytes, dirty_bytes, allocated_bytes and capacity_bytes "
            f"must be finite and >= 0 (got {written_bytes!r}, {dirty_bytes!r}, "
            f"{allocated_bytes!r}, {capacity_bytes!r})"
        )
    if allocated_bytes <= capacity_bytes:
        return 0.0 if capacity_bytes else written_bytes + dirty_bytes
    return (written_bytes + dirty_bytes) * (1 - capacity_bytes / allocated_bytes)


def dirty_write_back_bytes(
    dirty_bytes: float, allocated_bytes: float, capacity_bytes: float
) -> float:
    """Bytes of another kernel's dirty lines (``dirty_bytes`` it wrote just before and this
    kernel never touches: a benchmark's L2 flush that writes a buffer) that a kernel allocating
    ``allocated_bytes`` writes back. The L2 holds at most ``capacity_bytes`` of them (its shared
    capacity, as for a producer's output), and ``1 - exp(-allocated / capacity)`` of those are
    evicted: random replacement, kept for these lines alone (module docstring). Used by the GEMM
    and streaming models. Arguments must be finite and non-negative."""
    if not (
        0 <= dirty_bytes < math.inf
        and 0 <= allocated_bytes < math.inf
        and 0 <= capacity_bytes < math.inf
    ):
        raise ValueError(
            "dirty_write_back_bytes: dirty_bytes, allocated_bytes and capacity_bytes must be "
            f"finite and >= 0 (got {dirty_bytes!r}, {allocated_bytes!r}, {capacity_bytes!r})"
        )
    if dirty_bytes == 0 or capacity_bytes == 0:
        return 0.0  # nothing dirty, or no L2 to hold it
    held = min(dirty_bytes, capacity_bytes)
    return held * -math.expm1(-allocated_bytes / capacity_bytes)
