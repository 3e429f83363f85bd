"""Measured numbers read from validation CSVs, checked before they reach a metric or a fit.

A time, energy or clock that no kernel run could have produced (not a number, not finite, or
outside the spans below) makes its row malformed: the loaders skip it and count the reason,
where before a ``nan`` time was a row whose error was NaN and a time of ``1e-300`` ms stopped
the event-scope fit with ZeroDivisionError. The spans are wide: they reject units slips and
corrupt cells, not fast or slow kernels.

A published time can also be coarser than the kernel: PyTorch's profiler wrote each kernel's
duration as whole microseconds, truncated (kineto's ``(end - start) / 1000`` on CUPTI's
nanoseconds, until its traces switched to nanoseconds; PyTorch 2.1.2's ``libtorch_cpu.so``
compiles ``CuptiActivity<CUpti_ActivityKernel4>::duration`` to exactly that integer division).
A table whose times were taken so says how coarse in its optional ``time_truncation_s`` column:
every timed sample was cut down to a whole multiple of it, so the time reported is low by
between 0 and that step, by half of it on average over kernels of every length. The loaders add
that half to the row's times (:func:`measured_times`); the file keeps the published number.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from opmodel.hardware.ranges import CLOCK_HZ_SPAN

__all__ = [
    "MAX_ENERGY_J",
    "MAX_TIME_MS",
    "MAX_TRUNCATION_S",
    "MIN_TIME_MS",
    "MeasuredTimes",
    "measured_clock_hz",
    "measured_energy_j",
    "measured_ms",
    "measured_times",
    "measured_truncation_s",
]

MIN_TIME_MS = 1e-6  # 1 ns, under a tenth of any kernel launch
MAX_TIME_MS = 1e8  # about 28 hours
MAX_ENERGY_J = 1e9  # a 1 kW board for 11 days
MAX_TRUNCATION_S = 1e-3  # a millisecond: coarser steps are not a kernel timer's


def measured_ms(text: str, column: str = "time") -> float:
    """A time in ms from ``MIN_TIME_MS`` to ``MAX_TIME_MS``; else ValueError, whose message (the
    loaders' skip reason, counted over rows) names ``column`` and the span, not the value."""
    value = float(text)
    if not MIN_TIME_MS <= value <= MAX_TIME_MS:  # NaN fails too
        msg = f"{column} not from {MIN_TIME_MS:g} to {MAX_TIME_MS:g} ms"
        raise ValueError(msg)
    return value


def measured_energy_j(text: str, column: str = "energy") -> float:
    """An energy in J, above 0 and at most ``MAX_ENERGY_J``; ValueError naming ``column``."""
    value = float(text)
    if not 0 < value <= MAX_ENERGY_J:
        msg = f"{column} not above 0 and at most {MAX_ENERGY_J:g} J"
        raise ValueError(msg)
    return value


def measured_clock_hz(text_mhz: str, column: str = "clock_mhz") -> float:
    """A clock column in MHz as Hz, within the hardware configs' clock span."""
    value = float(text_mhz) * 1e6
    if not CLOCK_HZ_SPAN.low <= value <= CLOCK_HZ_SPAN.high:
        low, high = CLOCK_HZ_SPAN.low / 1e6, CLOCK_HZ_SPAN.high / 1e6
        msg = f"{column} not from {low:g} to {high:g} MHz"
        raise ValueError(msg)
    return value


class MeasuredTimes(NamedTuple):
    """A row's times in seconds, each with half its truncation step added (module docstring)."""

    time_s: float  # ``kernel_time`` where given, else ``time``
    time_min_s: float | None  # the fastest timed repeat (``time_min``), None without one
    truncation_s: float  # the step (``time_truncation_s``), 0 without the column


def measured_times(record: Mapping[str, str]) -> MeasuredTimes:
    """The row's time: its ``kernel_time`` [ms] where given, else its ``time`` [ms], within the
    time span; the optional ``time_min`` [ms], the fastest of the timed repeats whose median is
    ``time``, within the span and at most ``time`` (None when absent, or when ``kernel_time``
    stands in for ``time``: the kernels alone, not the timed repeats); and the optional
    truncation step, half of which both times get. ValueError naming the column otherwise."""
    time_ms = measured_ms(record.get("kernel_time") or record["time"])
    truncation = measured_truncation_s(record)
    text = (record.get("time_min") or "").strip()
    minimum_s = None
    if text and not record.get("kernel_time"):
        value = measured_ms(text, "time_min")
        if not value <= time_ms:
            msg = f"time_min must be in (0, time] (got {text!r} for time {time_ms!r})"
            raise ValueError(msg)
        minimum_s = value / 1000 + truncation / 2
    return MeasuredTimes(time_ms / 1000 + truncation / 2, minimum_s, truncation)


def measured_truncation_s(record: Mapping[str, str]) -> float:
    """The optional ``time_truncation_s`` column: the step every timed sample of the row was
    truncated to, in seconds, from 0 to ``MAX_TRUNCATION_S`` (0 when absent: the time is as
    fine as its digits); else ValueError naming the column and the span."""
    text = (record.get("time_truncation_s") or "").strip()
    if not text:
        return 0.0
    value = float(text)
    if not 0 <= value <= MAX_TRUNCATION_S:  # NaN fails too
        msg = f"time_truncation_s not from 0 to {MAX_TRUNCATION_S:g} s"
        raise ValueError(msg)
    return value
