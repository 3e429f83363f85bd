"""Roofline times (Williams, Waterman & Patterson, CACM 2009): work over achievable rate."""

from __future__ import annotations

__all__ = ["compute_time_s", "memory_time_s"]


def compute_time_s(flops: int, peak_flops_per_s: float, fraction: float) -> float:
    """``flops / (peak * fraction)``: time to issue ``flops`` at the achievable rate."""
    return flops / (peak_flops_per_s * fraction) if flops else 0.0


def memory_time_s(
    num_bytes: int, bandwidth_bytes_per_s: float, fraction: float, latency_s: float
) -> float:
    """``latency + bytes / (bandwidth * fraction)``: one exposed access latency plus streaming."""
    if not num_bytes:
        return 0.0
    return latency_s + num_bytes / (bandwidth_bytes_per_s * fraction)
