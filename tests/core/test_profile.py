"""OpProfile: totals are sums of parts, JSON output, and the latency guard."""

from __future__ import annotations

import dataclasses
import json
import math
from types import MappingProxyType

import pytest

from opmodel import Engine, OpProfile
from opmodel.core.profile import EnergyBreakdown, Footprint, LevelTraffic


def _profile(latency_s: float) -> OpProfile:
    return OpProfile(
        latency_s=latency_s,
        flops=10,
        engine=Engine.VECTOR,
        footprint=Footprint(
            input_bytes=1, weight_bytes=2, output_bytes=3, grad_bytes=0, workspace_bytes=4
        ),
        traffic=MappingProxyType({"hbm": LevelTraffic(read_bytes=5, write_bytes=7)}),
        energy=EnergyBreakdown(
            tensor_j=0.5, vector_j=0.25, memory_j=MappingProxyType({"hbm": 0.125}), static_j=1.0
        ),
        implementation="test/vector",
        diagnostics=None,
    )


def test_totals_are_sums_of_parts() -> None:
    profile = _profile(1e-3)
    assert profile.energy_j == 0.5 + 0.25 + 0.125 + 1.0
    assert profile.energy.compute_j == 0.75
    assert profile.traffic["hbm"].total_bytes == 12
    assert profile.footprint.total_bytes == 10


def test_to_dict_is_json_with_totals() -> None:
    data = _profile(2e-6).to_dict()
    assert json.loads(json.dumps(data)) == data
    assert data["engine"] == "vector"
    assert data["energy_j"] == 1.875
    assert data["traffic"]["hbm"] == {"read_bytes": 5, "write_bytes": 7, "total_bytes": 12}
    assert data["energy"]["total_j"] == data["energy_j"]


@pytest.mark.parametrize("bad", [-1.0, math.nan, math.inf])
def test_invalid_latency_is_refused(bad: float) -> None:
    with pytest.raises(ArithmeticError, match="produced latency_s"):
        _profile(bad)


def test_profiles_are_frozen() -> None:
    profile = _profile(1.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        profile.latency_s = 2.0  # type: ignore[misc]
    assert dataclasses.replace(profile, latency_s=2.0).latency_s == 2.0
