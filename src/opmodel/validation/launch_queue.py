"""Time of a forward pass whose kernels an eager framework launches one after another.

The host spends ``g`` seconds per kernel (Python, dispatch, the launch call) and puts each
kernel into CUDA's launch queue, which holds many pending launches; the GPU runs the queued
kernels in order. Kernel ``i`` (1-based, time ``t_i``) is queued at ``i g`` and

    finish_i = max(finish_(i-1), i g) + t_i,        pass time = finish_n

(the harness synchronises after every pass, so each pass starts with an empty queue; a
synchronisation inside a pass would drain it there, which the op lists do not record). During
a long kernel the host runs ahead, so the short kernels behind it run back to back; the GPU
idles only where the host falls behind. Unrolled, ``finish_n = max over j of (j g + t_j + ... +
t_n)``: the last idle moment is just before some kernel ``j``. As a function of ``g`` that is
the upper envelope of ``n`` lines, which :class:`PassEnvelope` builds once per pass so that a
fit can try many gaps cheaply. (An earlier law, ``sum of max(t_i, g)``, let the host run ahead
by one kernel only; it overcharges the short kernels that follow a long one.)
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

__all__ = ["PassEnvelope", "pass_time_s"]


def pass_time_s(latencies: Sequence[float], gap_s: float) -> float:
    """``finish_n`` of the launch queue (module docstring) for kernel times ``latencies``."""
    finish = 0.0
    for i, latency in enumerate(latencies, 1):
        issued = i * gap_s
        finish = (finish if finish > issued else issued) + latency
    return finish


class PassEnvelope:
    """``pass_time_s(latencies, g)`` for any ``g >= 0`` in ``O(log n)``: the upper envelope of
    the lines ``j g + (t_j + ... + t_n)``, whose slopes ``j`` increase."""

    __slots__ = ("_breaks", "_lines")

    def __init__(self, latencies: Sequence[float]) -> None:
        suffix = [0.0] * (len(latencies) + 1)
        for i in range(len(latencies) - 1, -1, -1):
            suffix[i] = suffix[i + 1] + latencies[i]
        # the lines (slope j, intercept suffix[j - 1]); intercepts fall as slopes rise, so each
        # new line crosses the last kept one at some g >= 0
        lines: list[tuple[int, float]] = []
        breaks: list[float] = []  # lines[k] is the maximum from breaks[k - 1] (0 for k = 0)
        for j in range(1, len(latencies) + 1):
            intercept_j = suffix[j - 1]
            while lines:
                slope, intercept = lines[-1]
                cross = (intercept - intercept_j) / (j - slope)
                if cross <= (breaks[-1] if breaks else 0.0):
                    lines.pop()  # never the maximum on g >= 0
                    if breaks:
                        breaks.pop()
                    continue
                breaks.append(cross)
                break
            lines.append((j, intercept_j))
        self._lines, self._breaks = lines, breaks

    def __call__(self, gap_s: float) -> float:
        """The pass time at host gap ``gap_s`` (0 for an empty pass)."""
        if not self._lines:
            return 0.0
        slope, intercept = self._lines[bisect.bisect_right(self._breaks, gap_s)]
        return slope * gap_s + intercept
