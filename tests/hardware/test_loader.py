"""load_hardware: shipped configs, names vs paths, at_clock, and exact error messages."""

from __future__ import annotations

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
from tests.hardware.mutated_config import DELETE, assert_problems, base_config, set_field

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
    # the core-clocked path carries 1446.1 B per SM cycle: 1.0195 TB/s at 705 MHz, below HBM's 1.555
    assert slow.hbm.bandwidth_bytes_per_s == pytest.approx(1446.1 * 705e6)
    assert spec.at_clock(1.2e9).hbm.bandwidth_bytes_per_s == 1.555e12  # 1.735 TB/s: not binding
    assert slow.at_clock(1410e6).hbm.bandwidth_bytes_per_s == 1.555e12  # from the datasheet again
    # a miss keeps its memory-side 400 - 142 = 258 ns and takes the L2 path (142 ns) twice as long
    assert slow.hbm.latency_s == pytest.approx(258e-9 + 2 * 142e-9)
    assert spec.at_clock(1410e6).hbm.latency_s == pytest.approx(spec.hbm.latency_s)
    for clock in (0, 1.41, 1410, float("inf"), float("nan"), True):  # 1.41 GHz typed as GHz, MHz
        with pytest.raises(ValueError, match="clock_hz must be a number of Hz from 1e"):
            spec.at_clock(clock)


BAD_CONFIGS: list[tuple[Callable[[dict[str, Any]], None], list[str]]] = [
    (
        set_field("nmae", "x"),
        [
            "nmae: unknown key; did you mean 'name'? (accepted: name, kind, architecture, description, compute, memory, utilization, power, overhead, interconnect, sustained_calibration)"
        ],
    ),
    (set_field("name", DELETE), ["name: missing required field"]),
    (
        set_field("kind", "gpuu"),
        ["kind: must be one of gpu, tpu (got 'gpuu'); did you mean 'gpu'?"],
    ),
    (set_field("compute.clock_hz", -1.5e9), ["compute.clock_hz: must be > 0 (got -1500000000.0)"]),
    (
        set_field("compute.clock_hz", "fast"),
        ["compute.clock_hz: expected a number (got 'fast', a string)"],
    ),
    (set_field("compute.clock_hz", True), ["compute.clock_hz: expected a number (got True)"]),
    (
        set_field("compute.max_boost_clock_hz", 1.0e9),
        [
            "compute.max_boost_clock_hz: must be at least compute.clock_hz (1.5e+09 Hz) (got 1e+09 Hz)"
        ],
    ),
    (
        set_field("compute.max_boost_clock_hz", 0),
        ["compute.max_boost_clock_hz: must be > 0 (got 0.0)"],
    ),
    (
        set_field("compute.power_limited_clock_hz", 2.0e9),
        [
            "compute.power_limited_clock_hz: must be at most compute.clock_hz (1.5e+09 Hz) (got 2e+09 Hz)"
        ],
    ),
    (
        set_field("compute.power_limited_clock_hz", -1),
        ["compute.power_limited_clock_hz: must be > 0 (got -1.0)"],
    ),
    (
        set_field("compute.burst_power_limited_clock_hz", 1.2e9),
        [
            "compute.burst_power_limited_clock_hz: needs compute.power_limited_clock_hz and "
            "must be at least it (got 1.2e+09 Hz against none)"
        ],
    ),
    (
        set_field("compute.tensor_flops_per_cycle_per_unit.bf17", 1.0),
        [
            "compute.tensor_flops_per_cycle_per_unit.bf17: must be one of fp64, fp32, tf32, fp16, bf16, fp8, fp8_e4m3, fp8_e5m2, mxfp8, fp6, mxfp6, fp4, mxfp4, nvfp4, int64, int32, int8, int4 (got 'bf17'); did you mean 'bf16'?"
        ],
    ),
    (
        set_field("compute.tensor_flops_per_cycle_per_unit.bf16", 0),
        ["compute.tensor_flops_per_cycle_per_unit.bf16: must be > 0 (got 0.0)"],
    ),
    (
        set_field("compute.vector_energy_j_per_flop.fp32", -1.0e-12),
        ["compute.vector_energy_j_per_flop.fp32: must be >= 0 (got -1e-12)"],
    ),
    (
        set_field("compute.tensor_energy_j_per_flop.fp8", DELETE),
        [
            "compute.tensor_energy_j_per_flop: missing fp8 (every dtype in compute.tensor_flops_per_s needs an energy per FLOP)"
        ],
    ),
    (
        set_field("compute.sm.sm_count", 99.5),
        ["compute.sm.sm_count: expected an integer, not a fraction (got 99.5)"],
    ),
    (
        set_field("compute.sm.max_ctas_per_sm", 0),
        ["compute.sm.max_ctas_per_sm: must be > 0 (got 0)"],
    ),
    (
        set_field("compute.sm.mma_shape_mnk", [16, 8]),
        ["compute.sm.mma_shape_mnk: expected a list of 3 items (got [16, 8])"],
    ),
    (
        set_field("compute.sm.max_shared_memory_per_cta_bytes", 999999999),
        [
            "compute.sm.max_shared_memory_per_cta_bytes: must not exceed shared_memory_per_sm_bytes (167936) (got 999999999)"
        ],
    ),
    (
        set_field("compute.sm", DELETE),
        ["compute.sm: required for kind gpu (SM count and per-SM limits)"],
    ),
    (
        set_field("memory.levels.0.name", "dram"),
        [
            "memory.levels: a level named 'hbm' (off-chip main memory) is required (got dram, l2, smem, registers)"
        ],
    ),
    (
        set_field("memory.levels.1.name", "hbm"),
        ["memory.levels: level name 'hbm' appears more than once"],
    ),
    (
        set_field("memory.levels.0.bandwidth_bytes_per_s", 0),
        ["memory.levels[0].bandwidth_bytes_per_s: must be > 0 (got 0.0)"],
    ),
    (
        set_field("memory.levels.0.clock_domain", "dram"),
        ["memory.levels[0].clock_domain: must be one of core, memory (got 'dram')"],
    ),
    (
        set_field("memory.levels.2.latency_cycles", 30),
        [
            "memory.levels[2].latency_cycles: unknown key; did you mean 'latency_s'? (accepted: name, size_bytes, bandwidth_bytes_per_s, latency_s, energy_j_per_byte, clock_domain, shared_capacity_fraction, core_path_bytes_per_cycle)"
        ],
    ),
    (
        set_field("memory.levels.0.core_path_bytes_per_cycle", 0),
        ["memory.levels[0].core_path_bytes_per_cycle: must be > 0 (got 0.0)"],
    ),
    (
        set_field("memory.levels.1.core_path_bytes_per_cycle", 4000),
        [
            "memory.levels[1].core_path_bytes_per_cycle: only a level with clock_domain: memory takes it"
        ],
    ),
    (set_field("memory.levels", {"hbm": 1}), ["memory.levels: expected a list (got {'hbm': 1})"]),
    (
        set_field("utilization", {"tensor_fraction": 1.5}),
        ["utilization.tensor_fraction: must be in (0, 1] (got 1.5)"],
    ),
    (
        set_field("utilization", {"memory_fraction": {"l3": 0.9}}),
        [
            "utilization.memory_fraction.l3: no memory level named 'l3' (levels: hbm, l2, smem, registers)"
        ],
    ),
    (set_field("power.static_w", -5), ["power.static_w: must be >= 0 (got -5.0)"]),
    (
        set_field("overhead.fixed_device_overhead_cycles", 1.5),
        ["overhead.fixed_device_overhead_cycles: expected an integer, not a fraction (got 1.5)"],
    ),
    (set_field("power", DELETE), ["power: missing required field"]),
]


@pytest.mark.parametrize(
    ("mutate", "expected"), BAD_CONFIGS, ids=[f"bad_config_{i}" for i in range(len(BAD_CONFIGS))]
)
def test_bad_configs_report_exact_lines(
    tmp_path: Path, mutate: Callable[[dict[str, Any]], None], expected: list[str]
) -> None:
    assert_problems(tmp_path, mutate, expected)


def test_every_problem_is_reported_in_one_pass(tmp_path: Path) -> None:
    data = base_config()
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
