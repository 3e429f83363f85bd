"""Energy of a profile's traffic: bytes at each modelled level times that level's J/byte."""

from __future__ import annotations

from collections.abc import Mapping

from opmodel.core.frozen_dict import FrozenDict
from opmodel.core.profile import LevelTraffic
from opmodel.hardware.spec import HardwareSpec

__all__ = ["level_energy_j"]


def level_energy_j(
    traffic: Mapping[str, LevelTraffic], hardware: HardwareSpec
) -> Mapping[str, float]:
    """``(read + written bytes) x energy_j_per_byte`` for every level of ``traffic`` that the
    hardware describes (the ``memory_j`` part of an :class:`EnergyBreakdown`)."""
    levels = hardware.levels_by_name
    return FrozenDict(
        {
            name: flows.total_bytes * levels[name].energy_j_per_byte
            for name, flows in traffic.items()
            if name in levels
        }
    )
