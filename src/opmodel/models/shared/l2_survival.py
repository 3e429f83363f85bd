"""How much of a producer kernel's output is still in L2 when the next kernel reads it.

A kernel that reads what the previous kernel just wrote finds part of it in L2. Model the L2
as ``C`` bytes with random replacement: every byte that misses (a cold read or a write)
evicts a random line, so a line survives ``d`` bytes of later misses with probability
``(1 - 1/lines)^(d/line) ~ exp(-d / C)``. The producer moved ``P`` bytes (its reads and
writes) and wrote the warm tensor evenly as it went; the consumer reads that tensor in the
same order while moving ``M`` bytes of its own. The byte at fraction ``f`` of the tensor has
seen ``(1 - f) P + f M`` bytes of traffic since it was written, so the share found in L2 is

    s = integral_0^1 exp(-((1 - f) a + f b)) df = (exp(-b) - exp(-a)) / (a - b),
    a = P / C,  b = M / C                          (exp(-a) when a = b)

which is 1 when both kernels are small against L2, ``exp(-a)`` when they are equal, and falls
to ``1 / a`` (``1 / b``) as one of them streams many times the L2 through it. Random
replacement stands in for the undocumented replacement policy of NVIDIA's L2 (the same role the
linear capacity ramp plays for GEMM operands, docs/models/streaming.md). Nothing is fitted.
"""

from __future__ import annotations

import math

__all__ = ["dirty_write_back_bytes", "producer_output_survival", "write_back_bytes"]


_SMALL_X = 1e-4  # below it write_back_bytes takes the series of the own-output share


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
    d = high - low
    if d == 0:
        return math.exp(-low)
    # (e^-low - e^-high) / d = e^-low (1 - e^-d) / d, with expm1 for small d
    return math.exp(-low) * -math.expm1(-d) / d


def _burst_survival(a: float, b: float, waves: int) -> float:
    """The survival share when the producer wrote its output in ``waves`` equal bursts.

    A tiled GEMM stores each output tile in its CTA's epilogue, after the CTA streamed its
    operands, so its output appears in ``W`` bursts, one at the end of each wave, in the order
    the consumer reads it (the launch raster walks the output's rows). Burst ``i`` (``i = 1..W``)
    has ``(W - i) a / W`` of the producer's traffic after it (``a = P / C``, ``b = M / C`` as in
    the module docstring), and the consumer reaches its part at fraction ``f`` in
    ``[(i - 1) / W, i / W]`` of its own traffic, so

        s = sum_i integral exp(-(W - i) a / W - f b) df
          = g(q) / W x exp(-(W - 1) min(p, q)) x (1 - exp(-W d)) / (1 - exp(-d)),
        p = a / W,  q = b / W,  d = |p - q|,  g(x) = (1 - exp(-x)) / x,

    the geometric sum of the bursts (``W`` when ``d = 0``). One wave (``W = 1``) leaves the
    whole output after the producer's traffic, ``s = g(b)``; as ``W`` grows ``s`` tends to the
    evenly written law of :func:`producer_output_survival`. Nothing is fitted."""
    p, q = a / waves, b / waves
    d = abs(p - q)
    mean_g = -math.expm1(-q) / q if q > 0 else 1.0
    bursts = math.expm1(-waves * d) / math.expm1(-d) if d > 0 else float(waves)
    return mean_g / waves * math.exp(-(waves - 1) * min(p, q)) * bursts


def write_back_bytes(
    written_bytes: float, dirty_bytes: float, allocated_bytes: float, capacity_bytes: float
) -> float:
    """Bytes a kernel's run writes back to DRAM from a write-back L2 of ``capacity_bytes``.

    A written line reaches DRAM only when it is evicted. Under the random replacement of the
    module docstring, each byte the kernel allocates (``allocated_bytes``: its DRAM reads and
    its writes, spread evenly over the run) evicts a random line, so with
    ``x = allocated_bytes / capacity_bytes``:

    - of the ``written_bytes`` it writes evenly as it goes, ``1 - (1 - exp(-x)) / x`` are
      evicted before it ends (the survival integral of the module docstring with ``a = 0``);
    - of the ``dirty_bytes`` already in L2 when it starts (a producer's output it found
      there), ``1 - exp(-x)`` are.

    The rest stays dirty in L2 and is written back later, under whatever runs next. Nsight
    Compute shows the effect on GEMMs whose output is under the L2
    (docs/models/streaming.md). All arguments must be finite and non-negative.
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
    if capacity_bytes == 0:
        return written_bytes + dirty_bytes
    x = allocated_bytes / capacity_bytes
    # own output: 1 - (1 - e^-x) / x, the survival law with nothing before it (a = 0, b = x);
    # below x = 1e-4 its series x/2 - x^2/6 (relative error under x^2 / 12), where subtracting
    # the survival from 1 would lose the digits
    own = x * (0.5 - x / 6) if x < _SMALL_X else 1 - producer_output_survival(0.0, x, 1.0)
    evicted = -math.expm1(-x)  # 1 - exp(-x)
    return written_bytes * own + dirty_bytes * evicted


def dirty_write_back_bytes(
    dirty_bytes: float, allocated_bytes: float, capacity_bytes: float
) -> float:
    """Bytes of another kernel's dirty lines (``dirty_bytes`` it wrote just before, not an
    input: a benchmark's L2 flush that writes a buffer) that a kernel allocating
    ``allocated_bytes`` writes back: the L2 holds at most ``capacity_bytes`` of them (its
    shared capacity, as for a producer's output), and :func:`write_back_bytes` evicts
    ``1 - exp(-allocated / capacity)`` of those. Used by the GEMM and streaming models."""
    if dirty_bytes <= 0:
        return 0.0
    return write_back_bytes(0.0, min(dirty_bytes, capacity_bytes), allocated_bytes, capacity_bytes)
