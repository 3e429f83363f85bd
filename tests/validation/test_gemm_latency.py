"""validate-gemm-latency: loading, size classes, the overhead fit and metrics by hand, end to end."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest

from opmodel.cli import main
from opmodel.hardware import load_hardware
from opmodel.models.gemm.overhead import OverheadCalibration, overhead_calibration, overridden
from opmodel.validation.gemm_data import load_gemm_rows
from opmodel.validation.gemm_groups import mape_deltas
from opmodel.validation.gemm_latency import (
    SizeClass,
    ValidationOptions,
    fit_overhead_cycles,
    size_class,
    validate_gemm_latency,
)
from opmodel.validation.gemm_split import row_key
from opmodel.validation.metrics import ErrorMetrics, error_metrics
from opmodel.validation.repeat_spread import UNSETTLED_SPREAD, spread_groups

FIXTURES = Path(__file__).parent / "fixtures" / "gemm"


DATA = Path(__file__).resolve().parents[2] / "data"


def test_energaizer_file_names_and_malformed_rows() -> None:
    loaded = load_gemm_rows(FIXTURES)
    assert len(loaded.rows) == 3
    row = loaded.rows[0]
    assert row.hardware == "a100_40gb_pcie"  # yz8_ prefix
    assert row.clock_hz == 900e6  # freq900 in the file name
    assert row.time_s == 0.5e-3
    assert sum(loaded.skipped.values()) == 2
    assert loaded.skipped["malformed row: time not from 1e-06 to 1e+08 ms"] == 1  # the -1 ms row
    assert any("trans must be" in reason for reason in loaded.skipped)


def test_size_classes() -> None:
    rows = load_gemm_rows(FIXTURES).rows
    # 4096^3 x 2 = 137 GFLOP -> large; 256^3 x 2 = 34 MFLOP -> small; M = 8 -> vector_like
    assert [size_class(r) for r in rows] == [
        SizeClass.LARGE,
        SizeClass.SMALL,
        SizeClass.VECTOR_LIKE,
    ]


def test_overhead_fit_by_hand() -> None:
    # two rows measured 10 us and 20 us, predicted 6 us and 16 us at 1 GHz: 4000 cycles each
    assert fit_overhead_cycles([6e-6, 16e-6], [10e-6, 20e-6], [1e9, 1e9]) == pytest.approx(4000)
    # over-predicting rows would need a negative overhead: clamped at zero
    assert fit_overhead_cycles([30e-6], [10e-6], [1e9]) == 0.0


def test_metrics_by_hand() -> None:
    m = error_metrics([1.1, 0.8, 1.0, 2.0], [1.0, 1.0, 1.0, 1.0])
    assert m.count == 4
    assert m.mape == pytest.approx((0.1 + 0.2 + 0.0 + 1.0) / 4)
    assert m.median_ape == pytest.approx(0.15)
    assert m.p90_ape == pytest.approx(1.0)
    assert m.geomean_ratio == pytest.approx(
        math.exp((math.log(1.1) + math.log(0.8) + math.log(2)) / 4)
    )
    assert m.mean_signed_error == pytest.approx((0.1 - 0.2 + 0 + 1.0) / 4)


def test_end_to_end_on_the_fixture() -> None:
    """Roofline on a100_40gb_pcie at 900 MHz (the fixture's freq900), by hand.

    Training rows: 256^3 (memory bound: 0.4 us + 393,216 B / 1.555e12 = 0.653 us, measured 10 us)
    and 8x4096x4096 (0.4 us + 33.69 MB / 1.555e12 = 22.07 us, measured 8 us). The overhead fit
    sum((m - p) / (f m^2)) = 9.35e-6 / 0.09 - 14.07e-6 / 0.0576 < 0 clamps at 0 cycles.
    Held out: 4096^3 at 312e12 * 900 / 1410 = 199.1 TFLOP/s takes 0.6901 ms, measured 0.5 ms.
    """
    rows = load_gemm_rows(FIXTURES).rows
    report = validate_gemm_latency(
        rows, ["roofline"], options=ValidationOptions(training_per_class=1)
    )
    result = report.models[0]
    assert result.training_rows == {"a100_40gb_pcie": 2}  # one small, one vector_like row
    assert result.overhead_cycles == {"a100_40gb_pcie": 0.0}
    assert report.rows_used == 1  # the large row is held out
    predicted = 2 * 4096**3 / (108 * 2048 * 900e6)  # SMs x FLOP/cycle/SM x locked clock
    assert predicted == pytest.approx(0.6904e-3, rel=1e-4)
    assert result.overall.count == 1
    assert result.overall.mape == pytest.approx(predicted / 0.5e-3 - 1)
    assert result.overall.geomean_ratio == pytest.approx(predicted / 0.5e-3)
    assert set(result.by_class) == {"large"}


def test_unknown_model_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["validate-gemm-latency", "--data-dir", str(FIXTURES), "--model", "tiling"])
    _, err = capsys.readouterr()
    assert exit_info.value.code == 2
    assert len(err.strip().splitlines()) == 1
    assert "'tiling'" in err and "effective_roofline" in err


def test_energy_metrics_where_the_data_has_energy() -> None:
    """a10 at 900 MHz (file name a10_..._freq900), roofline, the held-out 4096^3 bf16 row.

    Peak 72 SMs x 1024 FLOP/cycle x 900 MHz = 66.36 TFLOP/s -> 2.0711 ms (compute bound). Energy
    with the config's 900 MHz calibration: FLOPs x tensor term + 100,663,296 B x HBM term +
    (20 W idle + active power) x 2.0711 ms; measured 0.12 J.
    """
    rows = load_gemm_rows(FIXTURES.parent / "gemm_energy").rows
    assert [r.energy_j for r in rows] == [0.12, 0.0009, None]
    report = validate_gemm_latency(
        rows, ["roofline"], options=ValidationOptions(training_per_class=1)
    )
    energy = report.models[0].energy
    assert energy is not None and energy.count == 1
    # the same row by hardware and by size class
    assert report.models[0].energy_by_hardware == {"a10": energy}
    assert report.models[0].energy_by_class == {"large": energy}
    latency = 2 * 4096**3 / (72 * 1024 * 900e6)
    # a10.yaml's energy calibration applies at 900 MHz: its fitted active power, tensor and HBM
    # terms replace the estimates (configs/calibrations/a10_energaizer_900mhz.yaml)
    terms = load_hardware("a10").calibration.terms  # type: ignore[union-attr]
    expected = (
        2 * 4096**3 * terms.tensor_j_per_flop
        + 3 * 4096**2 * 2 * terms.hbm_j_per_byte
        + (20.0 + terms.active_w) * latency
    )
    assert energy.geomean_ratio == pytest.approx(expected / 0.12)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--limit", "0"], "argument --limit: must be an integer >= 1 (got '0')"),
        (["--training-per-class", "x"], "argument --training-per-class: must be an integer >= 1"),
        (
            ["--hardware-dir", "/nonexistent"],
            "opmodel: --hardware-dir: /nonexistent: not a directory",
        ),
    ],
)
def test_bad_arguments_are_one_line(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    try:
        code = main(["validate-gemm-latency", "--data-dir", str(FIXTURES), *argv])
    except SystemExit as exc:
        code = int(exc.code or 0)
    _, err = capsys.readouterr()
    assert code == 2
    assert len(err.splitlines()) == 1 and message in err


def test_no_held_out_rows_gives_empty_metrics() -> None:
    rows = load_gemm_rows(FIXTURES).rows[1:]  # only the small and vector_like rows: all training
    report = validate_gemm_latency(
        rows, ["roofline"], options=ValidationOptions(training_per_class=1)
    )
    assert report.rows_used == 0
    assert report.models[0].overall.count == 0
    assert math.isnan(report.models[0].overall.mape)


def test_power_clock_is_fitted_on_held_out_free_large_rows() -> None:
    """Vidur A100 (unlocked): the clock is fitted on 8 large rows, which leave the metrics and
    replace the config's 1170 MHz (fitted on Azure's published cuBLASLt table); without the
    fit the large rows run near 1170 MHz and come out about 9 % too fast."""
    rows = [r for r in load_gemm_rows(DATA).rows if r.source == "vidur"][::40]
    rows = [r for r in rows if r.hardware == "a100_80gb_sxm"]
    on = validate_gemm_latency(
        rows, ["effective_roofline"], options=ValidationOptions(calibrate_power_clock=True)
    )
    off = validate_gemm_latency(rows, ["effective_roofline"], options=ValidationOptions())
    assert on.power_clock_training_rows == {"a100_80gb_sxm": 8}
    assert 0.95e9 <= on.power_limited_clock_hz["a100_80gb_sxm"] <= 1.2e9
    assert off.power_limited_clock_hz == {}
    assert on.rows_used == off.rows_used - 8
    assert on.models[0].by_class["large"].mape < 0.7 * off.models[0].by_class["large"].mape


def _spread_file(tmp_path: Path, rows: list[tuple[str, str]]) -> Path:
    """A GEMM file of 256^3 fp16 rows on the A10 with the given (time, time_min) in ms."""
    lines = ["time,time_min,batch,dimM,dimN,dimK,dtype,hardware,source"]
    lines += [f"{t},{t_min},1,256,256,256,fp16,a10,spread" for t, t_min in rows]
    (tmp_path / "spread.csv").write_text("\n".join(lines) + "\n")
    return tmp_path


def test_time_min_gives_the_repeat_spread_and_bad_values_are_skipped(tmp_path: Path) -> None:
    loaded = load_gemm_rows(
        _spread_file(tmp_path, [("0.02", "0.01"), ("0.02", ""), ("0.02", "0.03")])
    )
    assert [r.repeat_spread for r in loaded.rows] == [pytest.approx(2.0), None]
    assert loaded.rows[0].time_min_s == pytest.approx(1e-5)
    assert list(loaded.skipped) == [
        "malformed row: time_min must be in (0, time] (got '0.03' for time 0.02)"
    ]


def test_unsettled_rows_are_reported_apart(tmp_path: Path) -> None:
    # median over fastest: 1.0, 1.3 (settled: at most UNSETTLED_SPREAD), 1.31 and 4 (unsettled)
    assert UNSETTLED_SPREAD == 1.3
    times = [("0.02", "0.02"), ("0.026", "0.02"), ("0.0262", "0.02"), ("0.08", "0.02")]
    rows = load_gemm_rows(_spread_file(tmp_path, times)).rows
    held = list(range(len(rows)))
    assert spread_groups(rows, held) == {"repeats settled": [0, 1], "repeats unsettled": [2, 3]}
    assert spread_groups(rows, [0, 1]) == {}  # all settled: nothing to report apart
    report = validate_gemm_latency(rows, ["roofline"], options=ValidationOptions(calibrate=False))
    spread = report.models[0].by_spread
    assert [m.count for m in spread.values()] == [2, 2]
    assert spread["repeats unsettled"].count + spread["repeats settled"].count == (
        report.models[0].overall.count
    )


def _metrics(mape: float) -> ErrorMetrics:
    return ErrorMetrics(
        count=1, mape=mape, median_ape=mape, p90_ape=mape, geomean_ratio=1.0, mean_signed_error=0
    )


def test_mape_deltas_by_hand() -> None:
    groups = {
        "roofline": {"overall": _metrics(0.30), "a40": _metrics(0.25), "empty": _metrics(math.nan)},
        "effective_roofline": {
            "overall": _metrics(0.086),
            "a40": _metrics(0.30),
            "empty": _metrics(math.nan),
            "new": _metrics(0.1),
        },
    }
    assert mape_deltas(groups) == {
        "effective_roofline": {"overall": pytest.approx(-21.4), "a40": pytest.approx(5.0)}
    }
    assert mape_deltas({"effective_roofline": groups["effective_roofline"]}) == {}


def test_row_key_names_source_hardware_clock_shape_dtype_and_transposes(tmp_path: Path) -> None:
    rows = load_gemm_rows(_spread_file(tmp_path, [("0.02", "")])).rows
    assert row_key(rows[0]) == "spread a10 1x256x256x256 fp16 NN"
    locked = dataclasses.replace(rows[0], clock_hz=9e8, transpose_b=True, batch=2)
    assert row_key(locked) == "spread a10@900MHz 2x256x256x256 fp16 NT"


def test_as_shipped_holds_out_the_rows_the_shipped_overhead_was_fitted_on(tmp_path: Path) -> None:
    """As shipped (no fit here) every row is reported but those whose key the GEMM overhead
    calibration lists; fitting here, the training split is held out instead, and the GEMM
    models predict without the shipped overhead while they are fitted."""
    rows = load_gemm_rows(_spread_file(tmp_path, [("0.02", ""), ("0.03", "")])).rows
    rows = [rows[0], dataclasses.replace(rows[1], m=512)]
    listed = OverheadCalibration({}, {}, frozenset({row_key(rows[1])}))
    with overridden(listed):
        shipped = validate_gemm_latency(
            rows, ["effective_roofline"], options=ValidationOptions(calibrate=False)
        )
    assert shipped.rows_used == 1 and shipped.per_row[0]["m"] == 256
    everything = validate_gemm_latency(
        rows, ["effective_roofline"], options=ValidationOptions(calibrate=False)
    )
    assert everything.rows_used == 2  # the shipped file lists no row of this source
    fitted = validate_gemm_latency(rows, ["effective_roofline"], options=ValidationOptions())
    assert fitted.rows_used == 0 and fitted.models[0].training_rows == {"a10": 2}
    # the fit starts from zero overhead: whatever the shipped file says does not count
    huge = OverheadCalibration({("effective_roofline", "sm86"): 50_000}, {})
    with overridden(huge):
        again = validate_gemm_latency(rows, ["effective_roofline"], options=ValidationOptions())
        shipped_huge = validate_gemm_latency(
            rows, ["effective_roofline"], options=ValidationOptions(calibrate=False)
        )
    assert again.models[0].overhead_cycles == fitted.models[0].overhead_cycles
    # as shipped, the file's cycles are in the prediction: 50,000 cycles at the A10's clock
    clock = load_hardware("a10").compute.clock_hz
    assert shipped_huge.per_row[0]["effective_roofline_s"] == pytest.approx(
        everything.per_row[0]["effective_roofline_s"]  # type: ignore[operator]
        + (50_000 - (overhead_calibration().fitted("effective_roofline", "sm86") or 0)) / clock,
        rel=1e-3,
    )
