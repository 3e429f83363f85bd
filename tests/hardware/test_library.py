"""The shipped hardware library: derived peaks, their check against datasheets, and warnings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from opmodel import ConfigError
from opmodel.cli import main
from opmodel.core.dtypes import DType
from opmodel.hardware import (
    HardwareKind,
    load_hardware,
    peak_warnings,
    shipped_config_path,
    shipped_hardware_names,
)
from opmodel.hardware.derived import PEAK_TOLERANCE, derived_peak, engine_units
from opmodel.hardware.kernel_catalogue import catalogue_for

ISSUE_CONFIGS = {
    "a100_80gb_sxm",
    "h100_sxm",
    "h100_pcie",
    "h200_sxm",
    "b200",
    "l40s",
    "mi300x",
    "tpu_v4",
    "tpu_v5e",
    "tpu_v5p",
    "a10",
    "a40",
    "rtx3090",
    "a100_40gb_pcie",
    "gpu_generic",
    "tpu_generic",
}

# (config, clock the datasheet rates its peak at or None for the config's clock, engine, dtype,
# the datasheet's dense peak): the derivation units x FLOP/cycle x clock must reproduce it.
DATASHEET_PEAKS = [
    ("a100_80gb_sxm", None, "tensor", DType.BF16, 312e12),
    ("a100_40gb_pcie", None, "tensor", DType.TF32, 156e12),
    ("a100_40gb_pcie", None, "vector", DType.FP32, 19.5e12),
    ("a10", None, "tensor", DType.BF16, 125e12),
    ("a40", None, "tensor", DType.FP16, 149.7e12),
    ("a40", None, "vector", DType.FP32, 37.4e12),
    ("rtx3090", None, "tensor", DType.FP16, 71.16e12),
    ("rtx3090", None, "vector", DType.FP32, 35.58e12),
    ("rtx4090", None, "tensor", DType.BF16, 165.2e12),
    ("rtx4090", None, "tensor", DType.FP8, 330.3e12),
    ("rtx4090", None, "vector", DType.FP32, 82.6e12),
    ("h100_sxm", None, "tensor", DType.BF16, 989.4e12),
    ("h100_sxm", None, "tensor", DType.FP8, 1978.9e12),
    ("h100_pcie", None, "tensor", DType.BF16, 756.5e12),
    ("h200_sxm", None, "tensor", DType.BF16, 989.4e12),
    ("b200", None, "tensor", DType.BF16, 2.25e15),
    ("b200", None, "tensor", DType.FP8, 4.5e15),
    ("gb200", None, "tensor", DType.BF16, 2.5e15),
    ("gb200", None, "tensor", DType.FP8, 5e15),
    ("l40s", None, "tensor", DType.FP8, 733e12),
    ("l40s", None, "vector", DType.FP32, 91.6e12),
    ("l4", None, "tensor", DType.BF16, 121e12),
    ("l4", None, "tensor", DType.FP8, 242.5e12),
    ("l4", None, "vector", DType.FP32, 30.29e12),
    ("mi300x", 2.1e9, "tensor", DType.BF16, 1307.4e12),
    ("mi300x", 2.1e9, "tensor", DType.FP8, 2614.9e12),
    ("mi300x", 2.1e9, "vector", DType.FP64, 81.7e12),
    ("tpu_v4", None, "tensor", DType.BF16, 275e12),
    ("tpu_v5e", None, "tensor", DType.BF16, 197e12),
    ("tpu_v5e", None, "tensor", DType.INT8, 393e12),
    ("tpu_v5p", None, "tensor", DType.BF16, 459e12),
    ("tpu_v6e", None, "tensor", DType.BF16, 918e12),
    ("tpu_v6e", None, "tensor", DType.INT8, 1836e12),
    ("tpu7x", None, "tensor", DType.BF16, 2307e12 / 2),  # one of a chip's two TensorCores
    ("tpu7x", None, "tensor", DType.FP8, 4614e12 / 2),
]


def test_the_issue_configs_are_shipped() -> None:
    assert set(shipped_hardware_names()) >= ISSUE_CONFIGS


@pytest.mark.parametrize("name", shipped_hardware_names())
def test_shipped_configs_carry_no_peak_warnings_and_a_catalogue(name: str) -> None:
    spec = load_hardware(name)
    assert peak_warnings(spec) == []
    if spec.kind is HardwareKind.GPU:
        assert spec.architecture is not None
        assert catalogue_for(spec.architecture) is not None, spec.architecture


@pytest.mark.parametrize("name", shipped_hardware_names())
def test_every_number_in_a_shipped_config_has_a_comment(name: str) -> None:
    for number, line in enumerate(shipped_config_path(name).read_text().splitlines(), 1):
        body = line.split("#", 1)[0]
        value = body.split(":", 1)[1].strip() if ":" in body else ""
        if (value and value[0].isdigit()) or value.startswith("["):
            assert "#" in line, f"{name}.yaml:{number}: number without a source comment"


@pytest.mark.parametrize(("name", "clock", "engine", "dtype", "datasheet"), DATASHEET_PEAKS)
def test_derived_peaks_match_the_datasheets(
    name: str, clock: float | None, engine: str, dtype: DType, datasheet: float
) -> None:
    spec = load_hardware(name)
    if clock is not None:
        spec = spec.at_clock(clock)
    compute = spec.compute
    peak = compute.tensor_peak(dtype) if engine == "tensor" else compute.vector_peak(dtype)
    assert peak == derived_peak(compute, engine, dtype)
    assert peak == pytest.approx(datasheet, rel=PEAK_TOLERANCE)


def test_units_per_engine() -> None:
    tpu = load_hardware("tpu_v5p").compute
    assert (engine_units(tpu, "tensor"), engine_units(tpu, "vector")) == (8, 2)
    gpu = load_hardware("mi300x").compute
    assert (engine_units(gpu, "tensor"), engine_units(gpu, "vector")) == (304, 304)
    # 8 MXUs x 2 x 128 x 128 FLOP per cycle x 1.751 GHz
    assert tpu.tensor_peak(DType.BF16) == pytest.approx(8 * 32768 * 1.751e9)


def _config_with(tmp_path: Path, **typed: float) -> Path:
    data = yaml.safe_load(shipped_config_path("gpu_generic").read_text())
    data["compute"]["tensor_flops_per_s"] = typed
    path = tmp_path / "typed.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_a_typed_peak_that_disagrees_with_its_derivation_warns(tmp_path: Path) -> None:
    # gpu_generic: 100 SMs x 2048 bf16 FLOP/cycle x 1.5 GHz = 307.2 TFLOP/s
    spec = load_hardware(_config_with(tmp_path, bf16=320e12, fp16=308e12))
    assert spec.compute.tensor_peak(DType.BF16) == 320e12  # the typed value is kept
    assert peak_warnings(spec) == [
        "compute.tensor_flops_per_s.bf16: typed 3.2e+14 differs from 100 units x 2048 "
        "FLOP/cycle x 1.5e+09 Hz = 3.072e+14 by +4.2 %"
    ]  # fp16 is 0.26 % off, inside the 1 % tolerance


def test_hardware_check_prints_the_warnings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _config_with(tmp_path, bf16=320e12)
    assert main(["hardware", "check", str(path)]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["warnings"] == peak_warnings(load_hardware(path))
    assert err.startswith(f"warning: {path}: compute.tensor_flops_per_s.bf16: typed 3.2e+14")


def test_a_peak_needs_a_value_or_a_rate(tmp_path: Path) -> None:
    data = yaml.safe_load(shipped_config_path("gpu_generic").read_text())
    del data["compute"]["vector_flops_per_cycle_per_unit"]
    path = tmp_path / "novector.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError, match="at least one vector peak is required"):
        load_hardware(path)


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(shipped_hardware_names()),
    low=st.floats(min_value=0.2, max_value=1.0),
    high=st.floats(min_value=0.2, max_value=1.0),
)
def test_hbm_bandwidth_follows_the_core_path_below_the_config_clock(
    name: str, low: float, high: float
) -> None:
    """Usable HBM bandwidth never exceeds the datasheet's, never grows as the SM clock falls,
    and every shipped config's core-clocked path carries its datasheet bandwidth at its clock."""
    spec = load_hardware(name)
    hbm = spec.hbm
    clock = spec.compute.clock_hz
    assert hbm.datasheet_bandwidth_bytes_per_s in (None, hbm.bandwidth_bytes_per_s)
    slow, fast = sorted((low, high))
    slow_bw = spec.at_clock(slow * clock).hbm.bandwidth_bytes_per_s
    fast_bw = spec.at_clock(fast * clock).hbm.bandwidth_bytes_per_s
    assert slow_bw <= fast_bw <= hbm.bandwidth_bytes_per_s
    if hbm.core_path_bytes_per_cycle is not None:
        expected = min(hbm.bandwidth_bytes_per_s, hbm.core_path_bytes_per_cycle * slow * clock)
        assert slow_bw == pytest.approx(expected)
