"""load_hardware: shipped configs, names vs paths, at_clock, and exact error messages."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from opmodel import ConfigError, DType, UnknownNameError
from opmodel.hardware import (
    ClockDomain,
    HardwareSpec,
    load_hardware,
    shipped_config_path,
    shipped_hardware_names,
)
from opmodel.hardware.sustained_calibration import with_hbm_fraction

REQUIRED = {"gpu_generic", "tpu_generic", "a10", "a100_40gb_pcie", "a100_80gb_sxm", "h100_sxm"}


def test_required_configs_ship_and_load() -> None:
    assert set(shipped_hardware_names()) >= REQUIRED
    for name in shipped_hardware_names():
        spec = load_hardware(name)
        assert spec.name == name
        assert spec.hbm.bandwidth_bytes_per_s > 0


def test_gpu_configs_set_occupancy_limits() -> None:
    for name in REQUIRED - {"tpu_generic"}:
        sm = load_hardware(name).compute.sm
        assert sm is not None
        assert sm.max_ctas_per_sm > 1 and sm.max_warps_per_sm >= 32


def test_name_and_path_give_the_same_spec() -> None:
    by_path = load_hardware(shipped_config_path("a10"))
    assert by_path == load_hardware("a10")
    assert load_hardware(str(shipped_config_path("a10"))) is load_hardware(
        str(shipped_config_path("a10"))
    )


def test_unknown_name_suggests_nearest() -> None:
    with pytest.raises(UnknownNameError) as info:
        load_hardware("a100_40gb_pci")
    assert "did you mean 'a100_40gb_pcie'?" in str(info.value)


def test_fp8_variants_use_the_fp8_peak() -> None:
    compute = load_hardware("h100_sxm").compute
    peak = 132 * 8192 * 1.83e9  # derived: SMs x FLOP/cycle/SM x clock (datasheet 1978.9e12)
    assert compute.tensor_peak(DType.FP8_E4M3) == compute.tensor_peak(DType.FP8) == peak
    assert compute.tensor_peak(DType.FP32) is None


def test_at_clock_scales_core_domain_and_the_core_part_of_a_miss() -> None:
    spec = load_hardware("a100_40gb_pcie")
    slow = spec.at_clock(705e6)  # half of 1410 MHz
    assert slow.compute.tensor_peak(DType.BF16) == pytest.approx(108 * 2048 * 705e6)
    assert slow.level("l2").bandwidth_bytes_per_s == pytest.approx(
        spec.level("l2").bandwidth_bytes_per_s / 2
    )
    assert slow.level("l2").latency_s == pytest.approx(spec.level("l2").latency_s * 2)
    assert slow.hbm.clock_domain is ClockDomain.MEMORY
    assert slow.hbm.bandwidth_bytes_per_s == spec.hbm.bandwidth_bytes_per_s
    # a miss keeps its memory-side 400 - 142 = 258 ns and takes the L2 path (142 ns) twice as long
    assert slow.hbm.latency_s == pytest.approx(258e-9 + 2 * 142e-9)
    assert spec.at_clock(1410e6).hbm.latency_s == pytest.approx(spec.hbm.latency_s)
    with pytest.raises(ValueError, match="clock_hz must be a positive number"):
        spec.at_clock(0)


def _base() -> dict[str, Any]:
    data = yaml.safe_load(shipped_config_path("gpu_generic").read_text())
    assert isinstance(data, dict)
    return data


def _set(path: str, value: object) -> Callable[[dict[str, Any]], None]:
    def apply(data: dict[str, Any]) -> None:
        node: Any = data
        *parents, last = path.split(".")
        for part in parents:
            node = node[int(part)] if part.isdigit() else node[part]
        if value is _DELETE:
            del node[int(last) if last.isdigit() else last]
        else:
            node[int(last) if last.isdigit() else last] = value

    return apply


_DELETE = object()

BAD_CONFIGS: list[tuple[Callable[[dict[str, Any]], None], list[str]]] = [
    (
        _set("nmae", "x"),
        [
            "nmae: unknown key; did you mean 'name'? (accepted: name, kind, architecture, description, compute, memory, utilization, power, overhead, sustained_calibration)"
        ],
    ),
    (_set("name", _DELETE), ["name: missing required field"]),
    (_set("kind", "gpuu"), ["kind: must be one of gpu, tpu (got 'gpuu'); did you mean 'gpu'?"]),
    (_set("compute.clock_hz", -1.5e9), ["compute.clock_hz: must be > 0 (got -1500000000.0)"]),
    (
        _set("compute.clock_hz", "fast"),
        ["compute.clock_hz: expected a number (got 'fast', a string)"],
    ),
    (_set("compute.clock_hz", True), ["compute.clock_hz: expected a number (got True)"]),
    (
        _set("compute.max_boost_clock_hz", 1.0e9),
        [
            "compute.max_boost_clock_hz: must be at least compute.clock_hz (1.5e+09 Hz) (got 1e+09 Hz)"
        ],
    ),
    (
        _set("compute.max_boost_clock_hz", 0),
        ["compute.max_boost_clock_hz: must be > 0 (got 0.0)"],
    ),
    (
        _set("compute.power_limited_clock_hz", 2.0e9),
        [
            "compute.power_limited_clock_hz: must be at most compute.clock_hz (1.5e+09 Hz) (got 2e+09 Hz)"
        ],
    ),
    (
        _set("compute.power_limited_clock_hz", -1),
        ["compute.power_limited_clock_hz: must be > 0 (got -1.0)"],
    ),
    (
        _set("compute.burst_power_limited_clock_hz", 1.2e9),
        [
            "compute.burst_power_limited_clock_hz: needs compute.power_limited_clock_hz and "
            "must be at least it (got 1.2e+09 Hz against none)"
        ],
    ),
    (
        _set("compute.tensor_flops_per_cycle_per_unit.bf17", 1.0),
        [
            "compute.tensor_flops_per_cycle_per_unit.bf17: must be one of fp64, fp32, tf32, fp16, bf16, fp8, fp8_e4m3, fp8_e5m2, int64, int32, int8, int4 (got 'bf17'); did you mean 'bf16'?"
        ],
    ),
    (
        _set("compute.tensor_flops_per_cycle_per_unit.bf16", 0),
        ["compute.tensor_flops_per_cycle_per_unit.bf16: must be > 0 (got 0.0)"],
    ),
    (
        _set("compute.vector_energy_j_per_flop.fp32", -1.0e-12),
        ["compute.vector_energy_j_per_flop.fp32: must be >= 0 (got -1e-12)"],
    ),
    (
        _set("compute.tensor_energy_j_per_flop.fp8", _DELETE),
        [
            "compute.tensor_energy_j_per_flop: missing fp8 (every dtype in compute.tensor_flops_per_s needs an energy per FLOP)"
        ],
    ),
    (
        _set("compute.sm.sm_count", 99.5),
        ["compute.sm.sm_count: expected an integer, not a fraction (got 99.5)"],
    ),
    (_set("compute.sm.max_ctas_per_sm", 0), ["compute.sm.max_ctas_per_sm: must be > 0 (got 0)"]),
    (
        _set("compute.sm.mma_shape_mnk", [16, 8]),
        ["compute.sm.mma_shape_mnk: expected a list of 3 items (got [16, 8])"],
    ),
    (
        _set("compute.sm.max_shared_memory_per_cta_bytes", 999999999),
        [
            "compute.sm.max_shared_memory_per_cta_bytes: must not exceed shared_memory_per_sm_bytes (167936) (got 999999999)"
        ],
    ),
    (
        _set("compute.sm", _DELETE),
        ["compute.sm: required for kind gpu (SM count and per-SM limits)"],
    ),
    (
        _set("memory.levels.0.name", "dram"),
        [
            "memory.levels: a level named 'hbm' (off-chip main memory) is required (got dram, l2, smem, registers)"
        ],
    ),
    (
        _set("memory.levels.1.name", "hbm"),
        ["memory.levels: level name 'hbm' appears more than once"],
    ),
    (
        _set("memory.levels.0.bandwidth_bytes_per_s", 0),
        ["memory.levels[0].bandwidth_bytes_per_s: must be > 0 (got 0.0)"],
    ),
    (
        _set("memory.levels.0.clock_domain", "dram"),
        ["memory.levels[0].clock_domain: must be one of core, memory (got 'dram')"],
    ),
    (
        _set("memory.levels.2.latency_cycles", 30),
        [
            "memory.levels[2].latency_cycles: unknown key; did you mean 'latency_s'? (accepted: name, size_bytes, bandwidth_bytes_per_s, latency_s, energy_j_per_byte, clock_domain, shared_capacity_fraction)"
        ],
    ),
    (_set("memory.levels", {"hbm": 1}), ["memory.levels: expected a list (got {'hbm': 1})"]),
    (
        _set("utilization", {"tensor_fraction": 1.5}),
        ["utilization.tensor_fraction: must be in (0, 1] (got 1.5)"],
    ),
    (
        _set("utilization", {"memory_fraction": {"l3": 0.9}}),
        [
            "utilization.memory_fraction.l3: no memory level named 'l3' (levels: hbm, l2, smem, registers)"
        ],
    ),
    (_set("power.static_w", -5), ["power.static_w: must be >= 0 (got -5.0)"]),
    (
        _set("overhead.fixed_device_overhead_cycles", 1.5),
        ["overhead.fixed_device_overhead_cycles: expected an integer, not a fraction (got 1.5)"],
    ),
    (_set("power", _DELETE), ["power: missing required field"]),
]


@pytest.mark.parametrize(
    ("mutate", "expected"), BAD_CONFIGS, ids=[f"bad_config_{i}" for i in range(len(BAD_CONFIGS))]
)
def test_bad_configs_report_exact_lines(
    tmp_path: Path, mutate: Callable[[dict[str, Any]], None], expected: list[str]
) -> None:
    data = copy.deepcopy(_base())
    mutate(data)
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError) as info:
        load_hardware(path)
    assert list(info.value.problems) == [f"{path}: {line}" for line in expected]


def test_every_problem_is_reported_in_one_pass(tmp_path: Path) -> None:
    data = _base()
    data["compute"]["clock_hz"] = -1
    data["memory"]["levels"][0]["size_bytes"] = "big"
    data["colour"] = "green"
    path = tmp_path / "many.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError) as info:
        load_hardware(path)
    assert len(info.value.problems) == 3


def test_there_are_at_least_twenty_bad_config_cases() -> None:
    assert len(BAD_CONFIGS) >= 20


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "expected a YAML mapping at the top level (got an empty file)"),
        ("- 1\n- 2\n", "expected a YAML mapping at the top level (got a list)"),
        ("name: [a\n", "malformed YAML at line 2, column 1: did not find expected ',' or ']'"),
    ],
)
def test_unreadable_files(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "h.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_hardware(path)
    assert str(info.value) == f"{path}: {expected}"


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="file not found"):
        load_hardware(tmp_path / "nope.yaml")


def test_spec_is_a_hardware_spec() -> None:
    assert isinstance(load_hardware("tpu_generic"), HardwareSpec)
    assert load_hardware("tpu_generic").compute.mxu is not None


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
        assert unlocked_or_elsewhere.hbm.energy_j_per_byte == 3.176e-11  # the config's [OC17]
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
    assert fast.hbm.energy_j_per_byte == spec.without_calibration().hbm.energy_j_per_byte
    back = fast.at_clock(9.0e8)
    assert back.power.active_w == spec.calibration.terms.active_w
