"""The GEMM models' fitted fixed overhead (opmodel.models.gemm.overhead)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from opmodel.core.errors import ConfigError
from opmodel.hardware import load_hardware
from opmodel.models import get_model
from opmodel.models.gemm.overhead import (
    CALIBRATION_FILE,
    NO_CALIBRATION,
    OverheadCalibration,
    fixed_overhead_cycles,
    in_force,
    load_overhead_calibration,
    overhead_calibration,
    overridden,
)
from opmodel.ops import gemm

GOOD = """\
fitted_on: {source: rows, split: some, hardware: {sm90: [h100_sxm]}, rows: [a b]}
fixed_overhead_cycles:
  effective_roofline: {sm90: 4000.4}
  extended_roofline: {sm90: 3000}
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "overhead.yaml"
    path.write_text(text)
    return path


def test_file_is_read_and_rounded(tmp_path: Path) -> None:
    calibration = load_overhead_calibration(_write(tmp_path, GOOD))
    assert calibration.fitted("effective_roofline", "sm90") == 4000
    assert calibration.fitted("extended_roofline", "sm90") == 3000
    assert calibration.fitted("effective_roofline", "sm80") is None
    assert calibration.fitted("effective_roofline", None) is None
    assert calibration.hardware == {"sm90": ("h100_sxm",)}
    assert calibration.rows == frozenset({"a b"})


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("effective_roofline: {sm90: 4000.4}", "roofline: {sm90: 1}", "unknown GEMM model"),
        ("effective_roofline: {sm90: 4000.4}", "effective_roofline: {sm90: -1}", "cycles >= 0"),
        ("effective_roofline: {sm90: 4000.4}", "effective_roofline: {sm90: true}", "cycles >= 0"),
        ("effective_roofline: {sm90: 4000.4}", "effective_roofline: [1]", "architectures"),
        ("rows: [a b]", "rows: a", "fitted_on.rows: must be a list"),
        ("{sm90: [h100_sxm]}", "[sm90]", "fitted_on.hardware: must map"),
        ("{sm90: [h100_sxm]}", "{sm90: h100_sxm}", "fitted_on.hardware.sm90: must be a list"),
        ("split: some, ", "", "fitted_on: needs string fields source, split"),
    ],
)
def test_bad_files_are_one_line_errors(tmp_path: Path, old: str, new: str, message: str) -> None:
    path = _write(tmp_path, GOOD.replace(old, new))
    with pytest.raises(ConfigError, match=message) as caught:
        load_overhead_calibration(path)
    assert str(path) in str(caught.value) and "\n" not in str(caught.value)


def test_missing_fields(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="needs the fields fitted_on, fixed_overhead_cycles"):
        load_overhead_calibration(_write(tmp_path, "fitted_on: {source: a, split: b}\n"))


def test_shipped_file_covers_the_architectures_it_was_fitted_on() -> None:
    shipped = load_overhead_calibration(CALIBRATION_FILE)
    assert set(shipped.hardware) == {"sm80", "sm86", "sm90"}
    assert shipped.rows and all(row.startswith("vidur ") for row in shipped.rows)
    for model in ("effective_roofline", "extended_roofline"):
        assert {arch for m, arch in shipped.cycles if m == model} == set(shipped.hardware)


def test_a_listed_architecture_takes_the_fitted_value_others_the_config() -> None:
    """h100_sxm and h200_sxm (sm90) share the fitted cycles; l40s (sm89) and the TPUs keep
    their config's estimate; without a calibration every config keeps its own."""
    shipped = overhead_calibration()
    h100, h200, l40s = (load_hardware(n) for n in ("h100_sxm", "h200_sxm", "l40s"))
    fitted = shipped.fitted("effective_roofline", "sm90")
    assert fitted is not None and fitted != h100.overhead.fixed_device_overhead_cycles
    assert fixed_overhead_cycles(h100, "effective_roofline") == fitted
    assert fixed_overhead_cycles(h200, "effective_roofline") == fitted
    assert fixed_overhead_cycles(l40s, "effective_roofline") == (
        l40s.overhead.fixed_device_overhead_cycles
    )
    with overridden(NO_CALIBRATION):
        assert fixed_overhead_cycles(h100, "effective_roofline") == (
            h100.overhead.fixed_device_overhead_cycles
        )
    assert fixed_overhead_cycles(h100, "effective_roofline") == fitted


def _cycles(diagnostics: object) -> float:
    """The fixed overhead cycles a profile's diagnostics report (each model's own place)."""
    if hasattr(diagnostics, "resource_cycles"):  # effective_roofline
        return float(diagnostics.resource_cycles.fixed_overhead_cycles)
    return float(diagnostics.fixed_overhead_cycles)  # type: ignore[attr-defined]


@pytest.mark.parametrize("model", ["effective_roofline", "extended_roofline"])
def test_models_charge_the_calibration_in_force(model: str) -> None:
    """The diagnostics carry the overhead in force; a fresh op under another calibration gets
    the other value (the rates are cached per overhead, not stale), and the latency moves by
    about the difference in cycles over the SM clock."""
    h100 = load_hardware("h100_sxm")
    op = {"m": 64, "n": 4096, "k": 4096, "dtype": "bf16"}
    shipped = get_model(model).predict(gemm(**op), h100)  # type: ignore[arg-type]
    cycles = fixed_overhead_cycles(h100, model)
    assert _cycles(shipped.diagnostics) == cycles
    custom = OverheadCalibration({(model, "sm90"): cycles + 10_000}, {})
    with overridden(custom):
        longer = get_model(model).predict(gemm(**op), h100)  # type: ignore[arg-type]
    assert _cycles(longer.diagnostics) == cycles + 10_000
    clock = longer.diagnostics.sm_clock_hz  # type: ignore[union-attr]
    assert longer.latency_s - shipped.latency_s == pytest.approx(10_000 / clock, rel=0.02)
    again = get_model(model).predict(gemm(**op), h100)  # type: ignore[arg-type]
    assert again.latency_s == shipped.latency_s


def test_in_force_starts_a_new_cache_once_per_calibration() -> None:
    """Values derived before a GEMM model marked the cache (another path's) or under another
    calibration are dropped; under the same calibration the cache is kept."""
    spec = dataclasses.replace(load_hardware("h100_sxm"))  # a spec with its own cache
    spec.derived_cache["derived elsewhere"] = 1
    in_force(spec)
    first = spec.derived_cache
    assert "derived elsewhere" not in first
    in_force(spec)
    assert spec.derived_cache is first
    with overridden(NO_CALIBRATION):
        in_force(spec)
        assert spec.derived_cache is not first
        under_none = spec.derived_cache
    in_force(spec)
    assert spec.derived_cache is not under_none


def test_a_config_value_replaces_the_fitted_one() -> None:
    """``overhead.gemm_fixed_overhead_cycles`` (a what-if, or a user's own fit) wins over the
    calibration; the generic estimate stays what the other kernel models use."""
    h100 = load_hardware("h100_sxm")
    own = load_hardware("h100_sxm", overrides={"overhead.gemm_fixed_overhead_cycles": 123})
    assert own.overhead.gemm_fixed_overhead_cycles == 123
    assert own.overhead.fixed_device_overhead_cycles == h100.overhead.fixed_device_overhead_cycles
    for model in ("effective_roofline", "extended_roofline"):
        assert fixed_overhead_cycles(own, model) == 123
        with overridden(NO_CALIBRATION):
            assert fixed_overhead_cycles(own, model) == 123
    op = {"m": 64, "n": 4096, "k": 4096, "dtype": "bf16"}
    shipped = get_model("effective_roofline").predict(gemm(**op), h100)  # type: ignore[arg-type]
    mine = get_model("effective_roofline").predict(gemm(**op), own)  # type: ignore[arg-type]
    cycles = fixed_overhead_cycles(h100, "effective_roofline") - 123
    clock = mine.diagnostics.sm_clock_hz  # type: ignore[union-attr]
    assert shipped.latency_s - mine.latency_s == pytest.approx(cycles / clock, rel=0.02)
