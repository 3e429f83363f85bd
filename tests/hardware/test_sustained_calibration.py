"""Sustained calibration files: fitted operating-point values kept apart from the datasheet."""

from __future__ import annotations

from pathlib import Path

import pytest

from opmodel.core.dtypes import DType
from opmodel.core.errors import ConfigError
from opmodel.hardware import load_hardware
from opmodel.hardware.loader import shipped_config_path
from opmodel.hardware.sustained_calibration import (
    SustainedCalibration,
    load_sustained_calibration,
    sustained_calibration_text,
)

CALIBRATION = "hardware: a100_80gb_sxm\nfitted_on: test\ncommand: none\n"


def _config(tmp_path: Path, calibration: str, *, extra: str = "") -> Path:
    """The shipped A100 SXM config beside a calibration file of the same name."""
    text = shipped_config_path("a100_80gb_sxm").read_text()
    assert "sustained_calibration: a100_80gb_sxm_sustained.yaml" in text
    (tmp_path / "a100_80gb_sxm_sustained.yaml").write_text(calibration)
    config = tmp_path / "a100_80gb_sxm.yaml"
    config.write_text(text + extra)
    return config


def test_shipped_a100_takes_its_values_from_the_calibration_file() -> None:
    """a100_80gb_sxm.yaml holds datasheet values; 1170 MHz and 0.937 come from its sustained
    calibration (scripts/fit_published_sustained.py). at_clock drops the power-limited clock (a
    locked clock) and keeps the HBM fraction (the memory clock does not move)."""
    spec = load_hardware("a100_80gb_sxm")
    assert spec.sustained_calibration == "a100_80gb_sxm_sustained.yaml"
    assert spec.compute.power_limited_clock_hz == 1.17e9
    assert spec.memory_fraction("hbm") == 0.937
    locked = spec.at_clock(1.0e9)
    assert locked.compute.power_limited_clock_hz is None
    assert locked.memory_fraction("hbm") == 0.937


def test_a_calibration_beside_the_config_applies_its_values(tmp_path: Path) -> None:
    config = _config(tmp_path, CALIBRATION + "power_limited_clock_hz: 1.2e9\nhbm_fraction: 0.9\n")
    spec = load_hardware(config)
    assert spec.compute.power_limited_clock_hz == 1.2e9
    assert spec.memory_fraction("hbm") == 0.9
    assert spec.memory_fraction("l2") == 1.0
    only_clock = load_hardware(_config(tmp_path, CALIBRATION + "power_limited_clock_hz: 1.2e9\n"))
    assert only_clock.memory_fraction("hbm") == 1.0


@pytest.mark.parametrize(
    ("calibration", "extra", "expected"),
    [
        (CALIBRATION + "hbm_fraction: 1.5\n", "", "hbm_fraction: must be in (0, 1]"),
        (
            CALIBRATION.replace("a100_80gb_sxm", "h100_sxm"),
            "",
            "hardware: calibration is for 'h100_sxm', not 'a100_80gb_sxm'",
        ),
        (
            CALIBRATION + "power_limited_clock_hz: 2.0e9\n",
            "",
            "power_limited_clock_hz: must be at most compute.clock_hz (1.41e+09 Hz)",
        ),
        ("hardware: a100_80gb_sxm\n", "", "fitted_on: missing required field"),
        (
            CALIBRATION + "hbm_fraction: 0.9\n",
            "utilization:\n  memory_fraction: {hbm: 0.8}\n",
            "utilization.memory_fraction.hbm: set by the config and its calibration",
        ),
    ],
)
def test_bad_calibrations_are_one_line_errors(
    tmp_path: Path, calibration: str, extra: str, expected: str
) -> None:
    with pytest.raises(ConfigError) as info:
        load_hardware(_config(tmp_path, calibration, extra=extra))
    message = str(info.value)
    assert expected in message and "a100_80gb_sxm_sustained.yaml" in message


def test_tpu7x_takes_its_mxu_share_from_the_calibration_file(tmp_path: Path) -> None:
    """tpu7x.yaml holds the published peaks; the share of them its MXUs sustain on large GEMMs,
    0.825, comes from its sustained calibration (scripts/fit_published_tpu_sustained.py) into
    ``utilization.tensor_fraction``; a config that sets the share itself as well is named."""
    spec = load_hardware("tpu7x")
    assert spec.sustained_calibration == "tpu7x_sustained.yaml"
    assert spec.utilization.tensor_fraction == 0.825
    assert spec.compute.tensor_peak(DType.BF16) == pytest.approx(1.155e15, rel=1e-3)
    peak = load_hardware("tpu7x", overrides={"sustained_calibration": None})
    assert peak.utilization.tensor_fraction == 1.0
    text = shipped_config_path("tpu7x").read_text()
    (tmp_path / "tpu7x_sustained.yaml").write_text(
        "hardware: tpu7x\nfitted_on: test\ncommand: none\ntensor_fraction: 0.8\n"
    )
    config = tmp_path / "tpu7x.yaml"
    config.write_text(text + "utilization:\n  tensor_fraction: 0.9\n")
    with pytest.raises(ConfigError) as info:
        load_hardware(config)
    message = str(info.value)
    assert "utilization.tensor_fraction: set by the config and its calibration" in message
    assert "tpu7x_sustained.yaml" in message and "\n" not in message
    config.write_text(text)
    (tmp_path / "tpu7x_sustained.yaml").write_text(
        "hardware: tpu7x\nfitted_on: test\ncommand: none\ntensor_fraction: 0\n"
    )
    with pytest.raises(ConfigError, match=r"tensor_fraction: must be in \(0, 1\]"):
        load_hardware(config)


def test_a_missing_calibration_file_is_named(tmp_path: Path) -> None:
    text = shipped_config_path("a100_80gb_sxm").read_text()
    config = tmp_path / "dev.yaml"
    config.write_text(text.replace("a100_80gb_sxm_sustained.yaml", "nowhere.yaml"))
    with pytest.raises(ConfigError, match=r"nowhere\.yaml: sustained calibration file not found"):
        load_hardware(config)


def test_a_dtype_clock_from_the_calibration_and_its_conflicts(tmp_path: Path) -> None:
    """``power_limited_clock_hz_by_dtype`` reaches compute; one the config sets as well, or one
    above the config's clock, is named."""
    good = _config(tmp_path, CALIBRATION + "power_limited_clock_hz_by_dtype: {fp8: 1.0e9}\n")
    spec = load_hardware(good)
    assert spec.compute.power_limited_clock_for(DType.FP8_E4M3) == 1.0e9
    assert spec.compute.power_limited_clock_for(DType.BF16) is None
    text = shipped_config_path("a100_80gb_sxm").read_text()
    both = text.replace(
        "compute:\n", "compute:\n  power_limited_clock_hz_by_dtype: {fp8: 1.1e9}\n", 1
    )
    (tmp_path / "a100_80gb_sxm.yaml").write_text(both)
    with pytest.raises(ConfigError, match=r"by_dtype\.fp8: set by the config and its calibration"):
        load_hardware(tmp_path / "a100_80gb_sxm.yaml")
    high = _config(tmp_path, CALIBRATION + "power_limited_clock_hz_by_dtype: {fp8: 2.0e9}\n")
    with pytest.raises(
        ConfigError, match=r"by_dtype\.fp8: must be at most compute\.clock_hz \(1\.41e\+09 Hz\)"
    ):
        load_hardware(high)


def test_the_written_text_reads_back(tmp_path: Path) -> None:
    """sustained_calibration_text writes what the loader reads: a folded fitted_on comes back
    with spaces at its folds and its quote unescaped, a one-line one whole, clocks to 6
    significant digits, the fields left at None absent."""
    folded = SustainedCalibration(
        hardware="h100_sxm",
        fitted_on="a board's run,\n  on two lines",
        command="python scripts/x.py --write",
        power_limited_clock_hz_by_dtype={DType.FP8: 1.3051234e9},
        hbm_fraction=0.9,
        tensor_fraction=0.825,
    )
    text = sustained_calibration_text(folded, ("written by", "x.py"))
    assert text.splitlines() == [
        "# written by",
        "# x.py",
        "hardware: h100_sxm",
        "fitted_on: 'a board''s run,",
        "  on two lines'",
        "command: python scripts/x.py --write",
        "power_limited_clock_hz_by_dtype: {fp8: 1.30512e+09}",
        "hbm_fraction: 0.9",
        "tensor_fraction: 0.825",
    ]
    path = tmp_path / "h100_sxm_sustained.yaml"
    path.write_text(text)
    back = load_sustained_calibration(path, "h100_sxm")
    assert back.fitted_on == "a board's run, on two lines"
    assert back.power_limited_clock_hz is None and back.hbm_fraction == 0.9
    assert back.tensor_fraction == 0.825
    assert dict(back.power_limited_clock_hz_by_dtype) == {DType.FP8: 1.30512e9}
    one_line = SustainedCalibration(
        hardware="a40", fitted_on="one line", command="c", power_limited_clock_hz=1.4e9
    )
    written = sustained_calibration_text(one_line, ())
    assert (
        written
        == "hardware: a40\nfitted_on: 'one line'\ncommand: c\npower_limited_clock_hz: 1.4e+09\n"
    )
