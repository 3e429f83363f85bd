"""Kernel-scope timing for ``opmodel measure``: the GPU's own durations of a case's kernels.

CUDA events around one call (the default timing) also count the gap between an event and the
kernel next to it, about 1 µs per event on an H200 (docs/validation.md): a 2.5 µs kernel reads
3.5 µs. The models predict the kernel alone, as Vidur's profiled kernel times and Nsight
Compute measure it. With ``kernel_timing: true`` in the grid the backend also runs the case's
timed repeats under the PyTorch profiler (CUPTI activity records) and reports, per repeat, the
sum of the durations of the device activities the op launched (kernels, and the memcpy of a
same-dtype copy), without the gaps between them, and the activities' names (which kernel
PyTorch and its libraries picked).

The repeats run back to back in one profiler session, each after the L2 flush (when the grid
flushes) and followed by a synchronise. The flush's own activities are told apart by count: a
first session of two flushes alone gives the activities per flush ``f``; the main session must
then hold the same number of activities for each repeat, of which the first ``f`` are the
flush's. Anything else (no device activity recorded, counts that do not divide, a profiler
error) gives no kernel times and a one-line reason, and the case keeps its event times.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["KernelTiming", "kernel_times_ms"]


@dataclass(frozen=True, slots=True)
class KernelTiming:
    """Per repeat the kernels' summed durations (ms), the names of the first repeat's device
    activities, and why there are no times (empty when there are)."""

    times_ms: tuple[float, ...] = ()
    names: tuple[str, ...] = ()
    note: str = ""


def _device_events(torch: Any, body: Callable[[], Any], count: int) -> list[Any]:
    """The device activities of ``count`` runs of ``body`` (each synchronised), by start."""
    profiler = torch.profiler
    with profiler.profile(activities=[profiler.ProfilerActivity.CUDA]) as session:
        for _ in range(count):
            body()
            torch.cuda.synchronize()
    cuda = torch.autograd.DeviceType.CUDA
    events = [e for e in session.events() if e.device_type == cuda]
    return sorted(events, key=lambda e: float(e.time_range.start))


def _split(events: list[Any], repeats: int, per_flush: int) -> KernelTiming:
    """Per repeat, the summed duration (ms) of the activities after the flush's."""
    if not events:
        return KernelTiming(note="the profiler recorded no device activity")
    per_repeat, left = divmod(len(events), repeats)
    if left or per_repeat <= per_flush:
        msg = (
            f"{len(events)} device activities do not split into {repeats} repeats of "
            f"{per_flush} flush activities and the op's"
        )
        return KernelTiming(note=msg)
    times = []
    for index in range(repeats):
        own = events[index * per_repeat + per_flush : (index + 1) * per_repeat]
        times.append(sum(float(e.time_range.elapsed_us()) for e in own) / 1e3)
    names = tuple(str(e.name) for e in events[per_flush:per_repeat])
    return KernelTiming(times_ms=tuple(times), names=names)


def kernel_times_ms(
    torch: Any, run: Callable[[], Any], flush: Callable[[], Any] | None, repeats: int
) -> KernelTiming:
    """``repeats`` kernel-scope times of ``run`` in ms (module docstring), the kernels' names
    and, when there are no times, why; ``flush`` runs before each repeat (None: no flush)."""
    try:
        per_flush = len(_device_events(torch, flush, 2)) // 2 if flush is not None else 0

        def body() -> None:
            if flush is not None:
                flush()
            run()

        events = _device_events(torch, body, repeats)
    except Exception as exc:  # an optional extra timing: the event times stand without it
        first = (str(exc).splitlines() or [""])[0]
        return KernelTiming(note=f"profiler failed ({type(exc).__name__}: {first})")
    return _split(events, repeats, per_flush)
