"""A GEMM evaluated again at a power-limited clock keeps what the clock does not change.

Both GEMM models evaluate a busy tensor GEMM a second time at the clock its activity allows
(docs/models/effective_roofline.md). The second evaluation reuses the first one's grid,
traffic and per-CTA work (``chosen_at_clock``) or, in ``extended_roofline``, its setup but
the rates and energies (``_at_clock``). These tests check that the shortcut equals evaluating
from scratch on the slower spec, on four shapes of three configs; the last has a voltage
table, so its energies per FLOP and per shared-memory byte move with the clock. The
evaluation at the lower clock is memoised on the first one's identity.
"""

from __future__ import annotations

import pytest

from opmodel import DType
from opmodel.hardware import load_hardware
from opmodel.hardware.clocking import power_limited
from opmodel.hardware.spec import HardwareSpec
from opmodel.models import get_model
from opmodel.models.effective_roofline import EffectiveRooflineDiagnostics
from opmodel.models.extended_roofline import model as extended
from opmodel.models.gemm import GemmProblem
from opmodel.models.gemm.choice import attrs_kernel_setup, chosen_at_clock, evaluate_chosen

from ...conftest import gemm

SHAPES = [(8192, 8192, 8192), (4096, 32768, 8192), (16384, 14336, 4096), (6144, 2048, 12288)]
CONFIGS = ["a100_80gb_sxm", "h100_sxm", "a100_40gb_pcie"]


def _slow(name: str, clock_hz: float) -> tuple[HardwareSpec, HardwareSpec]:
    """The config and the same config at ``clock_hz``."""
    hardware = load_hardware(name)
    return hardware, power_limited(hardware, clock_hz)


@pytest.mark.parametrize("name", CONFIGS)
@pytest.mark.parametrize(("m", "n", "k"), SHAPES)
def test_chosen_at_clock_equals_a_fresh_evaluation(name: str, m: int, n: int, k: int) -> None:
    """The grid, traffic and per-CTA work kept; the cycles, latency and energies those of
    the slower clock (1,050 MHz: below each board's boost clock, near the clocks their
    power limits allow a busy GEMM, 996-1,455 MHz)."""
    hardware, slow = _slow(name, 1.05e9)
    op = gemm(m, n, k, DType.BF16, cta_tile_m=128, cta_tile_n=256)
    problem = GemmProblem.from_op(op)
    kernel = attrs_kernel_setup(op, problem, hardware).kernel
    first = evaluate_chosen(kernel, problem, hardware)
    again = chosen_at_clock(first, problem, slow)
    assert again == evaluate_chosen(kernel, problem, slow)
    assert again.latency_s > first.latency_s  # fewer cycles a second: slower
    assert (again.grid, again.traffic, again.work) == (first.grid, first.traffic, first.work)


@pytest.mark.parametrize("name", CONFIGS)
@pytest.mark.parametrize(("m", "n", "k"), SHAPES)
def test_extended_setup_at_clock_equals_a_fresh_setup(name: str, m: int, n: int, k: int) -> None:
    """``extended_roofline``'s setup moved to the slower clock equals the one built there."""
    hardware, slow = _slow(name, 1.05e9)
    op = gemm(m, n, k, DType.BF16, cta_tile_m=128, cta_tile_n=128)
    moved = extended._at_clock(extended._build_setup(op, hardware), slow)
    assert moved == extended._build_setup(op, slow)
    assert moved.rates.clock_hz == 1.05e9


def test_chosen_at_clock_is_memoised_on_the_first_evaluation() -> None:
    """The same first evaluation gives the same object again; an equal one built afresh (a
    different object) is evaluated again, to an equal value."""
    hardware, slow = _slow("a100_80gb_sxm", 1.05e9)
    op = gemm(8192, 8192, 8192, DType.BF16, cta_tile_m=128, cta_tile_n=256)
    problem = GemmProblem.from_op(op)
    kernel = attrs_kernel_setup(op, problem, hardware).kernel
    first = evaluate_chosen(kernel, problem, hardware)
    again = chosen_at_clock(first, problem, slow)
    assert chosen_at_clock(first, problem, slow) is again
    twin = evaluate_chosen(kernel, problem, hardware)
    assert twin == first and twin is not first
    other = chosen_at_clock(twin, problem, slow)
    assert other == again and other is not again


def test_a_repeated_throttled_gemm_in_new_ops_gives_equal_profiles() -> None:
    """Through the model: new op objects of one throttled shape predict the same profile."""
    hardware = load_hardware("a100_80gb_sxm")
    model = get_model("effective_roofline")
    profiles = [model.predict(gemm(8192, 8192, 8192, DType.BF16), hardware) for _ in range(3)]
    diagnostics = profiles[0].diagnostics
    assert isinstance(diagnostics, EffectiveRooflineDiagnostics)
    assert diagnostics.sm_clock_hz < hardware.compute.clock_hz
    assert profiles[0] == profiles[1] == profiles[2]
