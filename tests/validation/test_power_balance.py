"""The power-limited clock derived from a config's energy model (validation.power_balance) and
the A100 PCIe value shipped from it."""

from __future__ import annotations

import dataclasses

import pytest

from opmodel.hardware import load_hardware
from opmodel.models import get_model
from opmodel.validation.power_balance import REFERENCE_GEMM, balance_clock_hz, power_at_clock_w

A100_PCIE = load_hardware("a100_40gb_pcie")


def test_shipped_clock_is_the_derived_one() -> None:
    """The sustained file holds what the derivation gives today (a refitted energy calibration
    must be followed by scripts/derive_power_limited_clock.py --write)."""
    derived = balance_clock_hz(A100_PCIE)
    assert derived is not None
    assert A100_PCIE.compute.power_limited_clock_hz == pytest.approx(derived, rel=1e-5)


def test_the_limit_brings_the_gemm_to_the_tdp() -> None:
    """Locked at 1410 MHz the 2.2 TFLOP GEMM would draw far more than 250 W; unlocked, the
    power-limited clock holds it at or just under the TDP (one 15 MHz bin below it)."""
    tdp = A100_PCIE.power.tdp_w
    assert power_at_clock_w(A100_PCIE, 1.41e9) > 1.5 * tdp
    profile = get_model("effective_roofline").predict(REFERENCE_GEMM, A100_PCIE)
    assert 0.95 * tdp < profile.energy_j / profile.latency_s <= tdp
    assert profile.diagnostics.sm_clock_hz == pytest.approx(0.99e9, abs=30e6)


def test_power_rises_with_the_clock() -> None:
    """The scan from the top clock down relies on power growing with the clock."""
    powers = [power_at_clock_w(A100_PCIE, mhz * 1e6) for mhz in range(600, 1411, 90)]
    assert powers == sorted(powers)


def test_no_limit_when_the_gemm_stays_within_the_tdp() -> None:
    roomy = dataclasses.replace(A100_PCIE, power=dataclasses.replace(A100_PCIE.power, tdp_w=2000.0))
    assert balance_clock_hz(roomy) is None
    tight = dataclasses.replace(A100_PCIE, power=dataclasses.replace(A100_PCIE.power, tdp_w=200.0))
    lower = balance_clock_hz(tight)
    assert lower is not None and lower < A100_PCIE.compute.power_limited_clock_hz  # type: ignore[operator]


def test_bad_arguments() -> None:
    with pytest.raises(TypeError, match="balance_clock_hz: expected a HardwareSpec"):
        balance_clock_hz("a100_40gb_pcie")  # type: ignore[arg-type]
