"""Event energy: work times energy per unit, and static power times time."""

from __future__ import annotations

__all__ = ["event_energy_j", "static_energy_j"]


def event_energy_j(count: int, energy_j_per_unit: float) -> float:
    """``count * energy per unit`` (FLOPs x J/FLOP or bytes x J/byte)."""
    return count * energy_j_per_unit


def static_energy_j(static_w: float, latency_s: float) -> float:
    """``static power * latency``: idle/leakage energy over the op's duration."""
    return static_w * latency_s
