"""An :class:`~opmodel.report.summary.OpSummary` as a few aligned lines of text, SI prefixes on
every quantity (``opmodel predict --format text``)."""

from __future__ import annotations

import math

from opmodel.core.enums import Engine
from opmodel.core.errors import OpValidationError
from opmodel.report.summary import OpSummary

__all__ = ["format_summary", "si"]

_PREFIXES = ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""))
_SMALL = ((1e-3, "m"), (1e-6, "µ"), (1e-9, "n"))


def si(value: float, unit: str) -> str:
    """``value`` with an SI prefix and three significant digits: ``si(1.5e-5, "s")`` is
    ``'15.0 µs'``, ``si(9.89e14, "FLOP/s")`` ``'989 TFLOP/s'``."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not isinstance(unit, str):
        msg = f"si: value must be a number and unit a string (got {value!r}, {unit!r})"
        raise OpValidationError(msg)
    if value == 0 or not math.isfinite(value):
        return f"{value:g} {unit}"
    magnitude = abs(value)
    scale, prefix = next(
        ((s, p) for s, p in (*_PREFIXES, *_SMALL) if magnitude >= s * 0.9995), _SMALL[-1]
    )
    scaled = value / scale
    digits = 0 if abs(scaled) >= 99.95 else 1 if abs(scaled) >= 9.995 else 2
    return f"{scaled:.{digits}f} {prefix}{unit}"


def _percent(fraction: float | None) -> str:
    return "" if fraction is None else f", {100 * fraction:.0f} % of "


def _compute_line(s: OpSummary) -> str:
    if s.flops == 0:
        return f"none (moves data; {s.engine.value} engine)"
    if s.engine is Engine.INTERCONNECT:
        return f"{si(s.flops, 'FLOP')} of reductions in {s.compute_dtype.value}"
    line = f"{si(s.flops, 'FLOP')} in {s.compute_dtype.value} on the {s.engine.value} engine"
    achieved = s.achieved_flops_per_s
    if achieved is not None:
        line += f": {si(achieved, 'FLOP/s')}"
        if s.peak_flops_per_s:
            line += _percent(s.compute_fraction) + si(s.peak_flops_per_s, "FLOP/s")
            line += _mixed_engines_note(s)
    return line


def _mixed_engines_note(s: OpSummary) -> str:
    """A note when the fraction of peak exceeds what the kernel's clock over the rated one
    allows: the op's FLOPs count every engine's work (attention's softmax beside its MMAs)."""
    clock_ratio = (s.sm_clock_hz or s.rated_clock_hz) / s.rated_clock_hz
    if (s.compute_fraction or 0.0) < 1.005 * max(1.0, clock_ratio):  # 100 % once rounded
        return ""
    return f" (the FLOPs count other engines' work beside the {s.engine.value} engine's)"


def _hbm_line(s: OpSummary) -> str | None:
    if s.hbm_read_bytes is None or s.hbm_write_bytes is None:
        return None
    line = f"{si(s.hbm_read_bytes, 'B')} read, {si(s.hbm_write_bytes, 'B')} written"
    deferred = s.hbm_write_after_run_bytes >= 0.005 * s.hbm_write_bytes > 0
    if deferred:
        line += f" ({si(s.hbm_write_after_run_bytes, 'B')} of it after the run, dirty in L2)"
    achieved = s.achieved_hbm_bytes_per_s
    if achieved is not None:
        during = " while it runs" if deferred else ""
        line += f": {si(achieved, 'B/s')}{during}{_percent(s.hbm_fraction)}"
        line += si(s.hbm_bandwidth_bytes_per_s, "B/s")
    return line


def _intensity_line(s: OpSummary) -> str | None:
    intensity = s.intensity_flops_per_byte
    if not intensity:
        return None
    ridge = s.ridge_flops_per_byte
    tail = "" if ridge is None else f" (ridge point {ridge:.3g} FLOP/B)"
    return f"{intensity:.3g} FLOP/B{tail}"


def _clock_line(s: OpSummary) -> str | None:
    if s.sm_clock_hz is None:
        return None
    rated = (
        ""
        if s.sm_clock_hz == s.rated_clock_hz
        else f" (peaks rated at {si(s.rated_clock_hz, 'Hz')})"
    )
    return f"{si(s.sm_clock_hz, 'Hz')}{rated}"


def _energy_line(s: OpSummary) -> str:
    power = s.average_power_w
    if power is None:
        return si(s.energy_j, "J")
    # a board does not sustain more than its TDP: say so rather than print it silently
    if power > s.tdp_w:
        limit = f"above the {si(s.tdp_w, 'W')} TDP, which a board does not sustain"
    else:
        limit = f"TDP {si(s.tdp_w, 'W')}"
    return f"{si(s.energy_j, 'J')}, {si(power, 'W')} average ({limit})"


def _overhead_line(s: OpSummary) -> str | None:
    cycles = s.fixed_overhead_cycles
    if cycles is None:
        return None
    clock = s.sm_clock_hz or s.rated_clock_hz
    return f"{cycles:,.0f} cycles fixed, {si(cycles / clock, 's')} ({s.fixed_overhead_from})"


def _link_line(s: OpSummary) -> str | None:
    """A collective's bytes over the node's links and their rate against the line rate each
    way (across nodes, those that do not go through the NICs)."""
    if s.link_bytes is None or s.latency_s <= 0:
        return None
    sent = s.link_bytes - (s.network_bytes or 0)
    if s.network_bytes and not sent:  # one rank per node: all of it through the NICs
        return None
    return _rate_line(sent, "sent and received", s.latency_s, s.link_bandwidth_bytes_per_s)


def _network_line(s: OpSummary) -> str | None:
    """Across nodes: a rank's bytes through its NICs and their rate against its share of
    the NICs' line rate."""
    if not s.network_bytes or s.latency_s <= 0:
        return None
    return _rate_line(
        s.network_bytes, "through the NICs", s.latency_s, s.network_bandwidth_bytes_per_s
    )


def _rate_line(moved: int, how: str, latency_s: float, line_rate: float | None) -> str:
    """``bytes how by each rank: rate each way``, against the links' ``line_rate`` if known."""
    rate = moved / latency_s
    line = f"{si(moved, 'B')} {how} by each rank: {si(rate, 'B/s')} each way"
    if line_rate:
        line += _percent(rate / line_rate) + si(line_rate, "B/s")
    return line


def format_summary(summary: OpSummary) -> str:
    """The summary as lines ``label  value``; lines whose figure the model does not give (HBM
    traffic, a kernel, a limiter) are left out."""
    if not isinstance(summary, OpSummary):
        msg = f"format_summary: expected an OpSummary (got {type(summary).__name__})"
        raise OpValidationError(msg)
    kernel = summary.kernel
    if kernel is not None and summary.grid is not None:
        kernel = f"{kernel}; {summary.grid}"
    rows = (
        ("latency", si(summary.latency_s, "s")),
        ("compute", _compute_line(summary)),
        ("links", _link_line(summary)),
        ("network", _network_line(summary)),
        ("hbm", _hbm_line(summary)),
        ("intensity", _intensity_line(summary)),
        ("limited by", summary.limiter),
        ("clock", _clock_line(summary)),
        ("kernel", kernel),
        ("overhead", _overhead_line(summary)),
        ("energy", _energy_line(summary)),
        ("validated", None if summary.validated is None else summary.validated.line()),
    )
    head = f"{summary.kind} '{summary.op_name}' on {summary.hardware}: {summary.implementation}"
    body = [f"  {label:<11}{value}" for label, value in rows if value is not None]
    return "\n".join([head, *body]) + "\n"
