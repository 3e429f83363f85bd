"""Hardware configs' power tables and energy calibrations: idle power and voltage by clock, a
calibration carried to other clocks, its errors and round trip."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from opmodel import ConfigError, DType
from opmodel.hardware import (
    load_hardware,
)
from opmodel.hardware.sustained_calibration import with_hbm_fraction


def test_power_tables_follow_the_clock() -> None:
    """a100_40gb_pcie carries EnergAIzer's idle-power and voltage tables (per SM clock)."""
    spec = load_hardware("a100_40gb_pcie").without_calibration()
    low = spec.at_clock(900e6)
    assert low.power.static_w == pytest.approx(47.35)
    # between table points: linear
    mid = spec.at_clock(907.5e6).power.static_w
    assert min(47.35, spec.at_clock(915e6).power.static_w) <= mid
    factor = (693.75 / 893.75) ** 2  # core voltage at 900 and 1410 MHz
    bf16 = DType.BF16
    assert low.compute.tensor_energy_j_per_flop[bf16] == pytest.approx(
        spec.compute.tensor_energy_j_per_flop[bf16] * factor
    )
    assert low.hbm.energy_j_per_byte == spec.hbm.energy_j_per_byte  # memory clock domain
    smem = low.levels_by_name["smem"].energy_j_per_byte
    assert smem == pytest.approx(spec.levels_by_name["smem"].energy_j_per_byte * factor)
    # configs without tables keep their static power
    a10 = load_hardware("a10")
    assert a10.at_clock(900e6).power.static_w == a10.power.static_w


def test_h100_idle_power_and_its_calibration_at_1830_mhz() -> None:
    """h100_sxm carries EnergAIzer's measured idle power of an H100 SXM5 per SM clock ([EAI]
    config/dvfs/h100: 118.22 W at 1830, 120.14 W at 1980 MHz) and a calibration fitted at a
    locked 1830 MHz, its rated clock. There is no voltage table, so the fitted terms hold on
    the device locked at 1830 MHz (``at_clock(1.83e9)``) only. The config as loaded is an
    unlocked H100, whose streaming kernels boost to 1980 MHz and whose large GEMMs run at the
    power-limited clock: it keeps the estimates for every kernel alike, with the host time
    per kernel, which applies at every clock."""
    spec = load_hardware("h100_sxm")
    calibration = spec.calibration
    assert calibration is not None and calibration.clock_mhz == 1830.0
    terms = calibration.terms
    estimates = spec.without_calibration()
    locked = spec.at_clock(1.83e9)
    assert locked.hbm.energy_j_per_byte == terms.hbm_j_per_byte
    assert locked.compute.tensor_energy_j_per_flop[DType.BF16] == terms.tensor_j_per_flop
    assert locked.power.static_w == pytest.approx(118.22)
    for unlocked_or_elsewhere in (spec, spec.at_clock(1.98e9), spec.at_clock(1.455e9)):
        assert unlocked_or_elsewhere.hbm.energy_j_per_byte == 1.157e-10  # the config's estimate
        assert (
            unlocked_or_elsewhere.compute.tensor_energy_j_per_flop[DType.BF16]
            == (estimates.compute.tensor_energy_j_per_flop[DType.BF16])
        )
        assert unlocked_or_elsewhere.overhead.kernel_launch_overhead_s == terms.launch_gap_s
    assert spec.power.static_w == pytest.approx(118.22)
    assert spec.at_clock(1.98e9).power.static_w == pytest.approx(120.14)
    assert estimates.overhead.kernel_launch_overhead_s == 5e-6
    # its 345 MHz entry (117.21 W) is left out: the table's lowest clock is 360 MHz
    assert min(spec.power.idle_w_by_clock_mhz) == 360


def test_energy_calibration_carried_to_other_clocks_by_the_voltage_table() -> None:
    """At 900 MHz the fitted terms replace the estimates. At another clock the voltage table
    ([EAI]: 693.75 mV up to 1005 MHz, 893.75 mV at 1410) carries them: switching energy per
    FLOP or L2 byte x (V / V_900)^2, active power also x f / 900 MHz, HBM bytes unchanged
    (memory clock domain). The host time per kernel applies at every clock."""
    spec = load_hardware("a100_40gb_pcie")
    calibration = spec.calibration
    assert calibration is not None and calibration.clock_mhz == 900.0
    terms = calibration.terms
    at_900 = spec.at_clock(900e6)
    assert at_900.power.active_w == terms.active_w
    assert at_900.power.busy_w == pytest.approx(47.35 + terms.active_w)
    assert at_900.hbm.energy_j_per_byte == terms.hbm_j_per_byte
    assert at_900.compute.tensor_energy_j_per_flop[DType.BF16] == terms.tensor_j_per_flop
    at_1000 = spec.at_clock(1000e6)  # same voltage as at 900 MHz
    assert at_1000.compute.tensor_energy_j_per_flop[DType.BF16] == terms.tensor_j_per_flop
    assert at_1000.power.active_w == pytest.approx(terms.active_w * 1000 / 900)
    factor = (893.75 / 693.75) ** 2
    for rated in (spec, spec.at_clock(1410e6)):  # the config's own clock is 1410 MHz
        bf16 = rated.compute.tensor_energy_j_per_flop[DType.BF16]
        assert bf16 == pytest.approx(terms.tensor_j_per_flop * factor)
        assert rated.hbm.energy_j_per_byte == terms.hbm_j_per_byte
        assert rated.levels_by_name["l2"].energy_j_per_byte == pytest.approx(
            terms.l2_j_per_byte * factor
        )
        assert rated.power.active_w == pytest.approx(terms.active_w * factor * 1410 / 900)
    # the host time per kernel is the framework's, not the GPU's: it applies at every clock
    assert terms.launch_gap_s is not None
    for clocked in (spec, at_900, at_1000, at_1000.at_clock(1.2e9)):
        assert clocked.overhead.kernel_launch_overhead_s == terms.launch_gap_s
    # without a voltage table (A10) the energy terms stay at the calibration's clock
    a10 = load_hardware("a10")
    a10_terms = a10.calibration.terms  # type: ignore[union-attr]
    assert a10.at_clock(900e6).power.active_w == a10_terms.active_w
    assert a10.power.active_w == 0.0
    assert a10.overhead.kernel_launch_overhead_s == a10_terms.launch_gap_s
    assert spec.without_calibration().overhead.kernel_launch_overhead_s == 5e-6


def test_changes_after_loading_survive_a_clock_change_of_a_calibrated_config() -> None:
    """A calibrated config's at_clock and without_calibration restore the estimates of the
    fields the calibration governs and keep every other value of the spec they are called on:
    an HBM fraction or fixed overhead set after loading (as the GEMM validation sets them
    before a kernel's power-limited clock is applied) used to fall back to the config's."""
    spec = load_hardware("a100_40gb_pcie")
    calibration = spec.calibration
    assert calibration is not None
    changed = with_hbm_fraction(spec, 0.5)
    changed = dataclasses.replace(
        changed, overhead=dataclasses.replace(changed.overhead, fixed_device_overhead_cycles=0)
    )
    for derived in (changed.at_clock(900e6), changed.without_calibration()):
        assert derived.memory_fraction("hbm") == 0.5
        assert derived.overhead.fixed_device_overhead_cycles == 0
    at_900 = changed.at_clock(900e6)  # the fitted terms again, not the estimates
    assert at_900.hbm.energy_j_per_byte == calibration.terms.hbm_j_per_byte
    assert at_900.overhead.kernel_launch_overhead_s == calibration.terms.launch_gap_s
    estimates = changed.without_calibration()
    assert estimates.hbm.energy_j_per_byte == pytest.approx(3.176e-11)  # the config's [OC17]
    assert estimates.overhead.kernel_launch_overhead_s == 5e-6
    assert estimates.calibration is None
    # twice in a row: the second clock change starts from the first one's estimates
    twice = changed.at_clock(1.2e9).at_clock(900e6)
    assert twice.hbm.energy_j_per_byte == calibration.terms.hbm_j_per_byte
    assert twice.memory_fraction("hbm") == 0.5


def test_energy_calibration_errors(tmp_path: Path) -> None:
    config = tmp_path / "dev.yaml"
    text = (load_hardware.__globals__["shipped_config_path"]("a10")).read_text()
    config.write_text(text.replace("a10_energaizer_900mhz.yaml", "missing.yaml"))
    with pytest.raises(ConfigError, match="energy calibration file not found"):
        load_hardware(config)
    calibration = tmp_path / "cal.yaml"
    calibration.write_text(
        "hardware: other\nclock_mhz: 900\nmodel: roofline\nfitted_on: x\n"
        "terms: {active_w: -1, tensor_j_per_flop: 0, hbm_j_per_byte: 0, l2_j_per_byte: 0}\n"
    )
    config.write_text(text.replace("a10_energaizer_900mhz.yaml", "cal.yaml"))
    with pytest.raises(ConfigError) as info:
        load_hardware(config)
    assert "terms.active_w: must be >= 0" in str(info.value)
    # a term typed in pJ and a clock typed in GHz: outside their plausible spans
    calibration.write_text(
        "hardware: other\nclock_mhz: 0.9\nmodel: roofline\nfitted_on: x\n"
        "terms: {active_w: 10, tensor_j_per_flop: 0, hbm_j_per_byte: 7.5, l2_j_per_byte: 0}\n"
    )
    with pytest.raises(ConfigError) as info:
        load_hardware(config)
    problems = [p.split(": ", 1)[1] for p in info.value.problems]
    assert problems == [
        "clock_mhz: outside the plausible 10 to 100000 MHz, typed in another unit? (got 0.9)",
        "terms.hbm_j_per_byte: outside the plausible 0 to 1e-06 J/byte, typed in another unit? "
        "(got 7.5)",
    ]


def test_calibrated_config_at_its_own_clock_round_trips(tmp_path: Path) -> None:
    """A config rated at the calibration clock loads calibrated; at_clock elsewhere and back
    starts from the estimates each time, so the terms never leak to other clocks."""
    shipped = load_hardware.__globals__["shipped_config_path"]("a10")
    text = shipped.read_text().replace("clock_hz: 1.695e9", "clock_hz: 9.0e8")
    (tmp_path / "a10_900.yaml").write_text(text)
    cal = shipped.parent.parent / "calibrations" / "a10_energaizer_900mhz.yaml"
    (tmp_path / "a10_energaizer_900mhz.yaml").write_text(cal.read_text())
    spec = load_hardware(tmp_path / "a10_900.yaml")
    assert spec.calibration is not None
    assert spec.power.active_w == spec.calibration.terms.active_w
    fast = spec.at_clock(1.695e9)
    assert fast.power.active_w == 0.0
    # GA102's core-clocked path, 552.22 B per SM cycle, carries 497 GB/s at 900 MHz (of 600)
    assert spec.hbm.bandwidth_bytes_per_s == pytest.approx(552.22 * 9.0e8)
    assert fast.hbm.bandwidth_bytes_per_s == 6.0e11
    assert fast.hbm.energy_j_per_byte == spec.without_calibration().hbm.energy_j_per_byte
    back = fast.at_clock(9.0e8)
    assert back.power.active_w == spec.calibration.terms.active_w
