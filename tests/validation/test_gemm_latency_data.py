"""validate-gemm-latency on the shipped GEMM data: the CLI, held-out accuracy, the H100 target
and the columns that reach the op (block size, dirty bytes, power state)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from opmodel.cli import main
from opmodel.hardware import load_hardware
from opmodel.models import get_model
from opmodel.validation.gemm_data import load_gemm_rows
from opmodel.validation.gemm_latency import (
    ValidationOptions,
    row_op,
    validate_gemm_latency,
)

DATA = Path(__file__).resolve().parents[2] / "data"


def test_cli_smoke_on_shipped_data(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    params = tmp_path / "params.json"
    per_row = tmp_path / "rows.csv"
    code = main(
        [
            "validate-gemm-latency",
            "--data-dir",
            str(DATA),
            "--compare-rooflines",
            "--limit",
            "300",
            "--output-params",
            str(params),
            "--output-csv",
            str(per_row),
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0
    summary = json.loads(out)
    models = ["roofline", "extended_roofline", "effective_roofline"]
    assert [m["model"] for m in summary["models"]] == models
    assert summary["rows_evaluated"] > 250
    assert "overall" in err and "a100_80gb_sxm" in err
    fitted = json.loads(params.read_text())
    assert set(fitted) == {
        *models,
        "power_limited_clock_hz",
        "power_clock_training_rows",
        "shipped_clock_training_rows",
    }
    assert fitted["power_limited_clock_hz"] == {}  # opt-in: --fit-power-clock
    assert "power-limited SM clock" not in err
    # --compare-rooflines: each GEMM model's MAPE minus the roofline's, per group, in points
    deltas = summary["mape_delta_vs_roofline"]
    assert set(deltas) == {"extended_roofline", "effective_roofline"}
    by_model = {m["model"]: m for m in summary["models"]}
    for model, groups in deltas.items():
        expected = 100 * (
            by_model[model]["overall"]["mape"] - by_model["roofline"]["overall"]["mape"]
        )
        assert groups["overall"] == pytest.approx(expected)
        assert f"{groups['overall']:+.1f} pt" in err
    assert err.count("vs roofline") == 2  # not in the roofline's own table
    with per_row.open() as handle:
        records = list(csv.DictReader(handle))
    assert len(records) == summary["rows_evaluated"]
    for record in records:
        measured = float(record["measured_s"])
        flops = 2 * int(record["batch"]) * int(record["m"]) * int(record["n"]) * int(record["k"])
        # only this project's measured rows (data/measured) carry an energy
        measured_here = record["source"] == "opmodel-measure"
        assert (record["measured_energy_j"] != "") == measured_here
        for model in models:
            assert float(record[f"{model}_energy_j"]) > 0
            predicted = float(record[f"{model}_s"])
            assert float(record[f"{model}_ratio"]) == pytest.approx(predicted / measured)
            assert float(record[f"{model}_error_s"]) == pytest.approx(predicted - measured)
            assert float(record[f"{model}_ape"]) == pytest.approx(abs(predicted / measured - 1))
            assert float(record[f"{model}_tflops"]) == pytest.approx(flops / predicted / 1e12)
            clock = float(record[f"{model}_sm_clock_hz"])
            assert float(record[f"{model}_cycles"]) == pytest.approx(predicted * clock)
            assert record[f"{model}_bottleneck"]
    # every row names what limited it; the power-limited A100 SXM runs large GEMMs below boost
    assert {r["roofline_bottleneck"] for r in records} <= {"tensor", "vector", "memory"}
    assert any(
        r["source"] == "vidur"
        and r["hardware"] == "a100_80gb_sxm"
        and float(r["effective_roofline_sm_clock_hz"]) < 1.41e9
        for r in records
    )


def test_held_out_accuracy_on_shipped_data() -> None:
    """Regression guard on an evenly spaced tenth of the shipped GEMMs (docs/validation.md has
    the full tables): the overhead-only protocol, and the power-limited clock fitted on top."""
    rows = load_gemm_rows(DATA).rows[::10]
    strict = validate_gemm_latency(rows, ["effective_roofline"], options=ValidationOptions())
    assert strict.models[0].overall.mape <= 0.155  # 14.7 % with the sourced A100 SXM clock
    fitted = validate_gemm_latency(
        rows, ["effective_roofline"], options=ValidationOptions(calibrate_power_clock=True)
    )
    assert fitted.models[0].overall.mape <= 0.10
    assert fitted.models[0].by_class["large"].mape <= 0.07


def test_block_size_gives_the_warps_of_a_given_cta_tile(tmp_path: Path) -> None:
    """``block_size`` (threads per CTA) becomes ``warps_per_cta`` when the row names its CTA
    tile; without a tile the row runs the selected kernel and the block size is not used."""
    header = "time,dimM,dimN,dimK,hardware,cta_tile_m,cta_tile_n,cta_tile_k,block_size\n"
    (tmp_path / "k.csv").write_text(
        header
        + "0.01,1024,128,1024,a100_80gb_sxm,64,64,64,128\n"
        + "0.01,1024,128,1024,a100_80gb_sxm,,,,256\n"
        + "0.01,1024,128,1024,a100_80gb_sxm,64,64,64,100\n"
    )
    loaded = load_gemm_rows(tmp_path)
    tiled, untiled = loaded.rows
    assert tiled.kernel == {
        "cta_tile_m": 64,
        "cta_tile_n": 64,
        "cta_tile_k": 64,
        "warps_per_cta": 4,
    }
    assert untiled.kernel == {}
    assert loaded.skipped == {
        "malformed row: block_size must be a positive multiple of 32 (got 100)": 1
    }


def test_the_l2_dirty_bytes_column_reaches_the_op(tmp_path: Path) -> None:
    """An ``opmodel measure`` row says what its flush wrote; a negative value is skipped."""
    header = "batch,dimM,dimN,dimK,trans,dtype,l2_dirty_bytes,time,hardware\n"
    (tmp_path / "g.csv").write_text(
        header + "1,16,4096,4096,NN,bf16,125829120,0.02,h200_sxm\n"
        "1,16,4096,4096,NN,bf16,,0.02,h200_sxm\n"
        "1,16,4096,4096,NN,bf16,-1,0.02,h200_sxm\n"
    )
    loaded = load_gemm_rows(tmp_path)
    assert [r.l2_dirty_bytes for r in loaded.rows] == [125829120, 0]
    assert list(loaded.skipped) == ["malformed row: l2_dirty_bytes must be >= 0 (got -1)"]
    assert row_op(loaded.rows[0]).attrs["l2_dirty_bytes"] == 125829120
    assert "l2_dirty_bytes" not in row_op(loaded.rows[1]).attrs


def test_an_fp8_row_writes_bf16_and_runs_at_the_fp8_clock(tmp_path: Path) -> None:
    """An ``opmodel measure`` fp8_e4m3 row (torch._scaled_mm, trans NT) is an e4m3 GEMM with a
    bf16 output; on h200_sxm a large one runs under the FP8 clock law (1,275 MHz at full
    activity, this GEMM 1,305), below the 16-bit one's 1,455 MHz."""
    header = "batch,dimM,dimN,dimK,trans,dtype,time,hardware\n"
    (tmp_path / "g.csv").write_text(header + "1,8192,8192,8192,NT,fp8_e4m3,1.0,h200_sxm\n")
    (row,) = load_gemm_rows(tmp_path).rows
    op = row_op(row)
    assert [t.dtype.value for t in op.tensors] == ["fp8_e4m3", "fp8_e4m3", "bf16"]
    spec = load_hardware("h200_sxm")
    profile = get_model("effective_roofline").predict(op, spec)
    assert profile.diagnostics.sm_clock_hz == 1.305e9
    assert spec.compute.power_limited_clock_hz == 1.455e9


def test_power_state_column_runs_burst_rows_at_the_burst_clock(tmp_path: Path) -> None:
    """``power_state`` = burst (one kernel at a time after idle time, e.g. XLA's profiler) runs
    an unlocked row at the config's burst power-limited clock; a locked clock wins; an unknown
    state is a malformed row, skipped and counted."""
    header = "batch,dimM,dimN,dimK,dtype,time,hardware,clock_mhz,power_state\n"
    (tmp_path / "g.csv").write_text(
        header + "1,4096,4096,4096,bf16,0.2,h100_sxm,,sustained\n"
        "1,4096,4096,4096,bf16,0.2,h100_sxm,,\n"
        "1,4096,4096,4096,bf16,0.2,h100_sxm,,burst\n"
        "1,4096,4096,4096,bf16,0.2,h100_sxm,1500,burst\n"
        "1,4096,4096,4096,bf16,0.2,h100_sxm,,boost\n"
    )
    loaded = load_gemm_rows(tmp_path)
    assert [r.power_state for r in loaded.rows] == ["sustained", "sustained", "burst", "burst"]
    assert list(loaded.skipped) == [
        "malformed row: power_state must be one of sustained, burst (got 'boost')"
    ]
    report = validate_gemm_latency(
        loaded.rows,
        ["effective_roofline"],
        options=ValidationOptions(calibrate=False, row_details=True),
    )
    clocks = [r["effective_roofline_sm_clock_hz"] for r in report.per_row]
    seconds = [r["effective_roofline_s"] for r in report.per_row]
    assert clocks[0] == clocks[1] < clocks[2]
    assert clocks[3] == 1.5e9
    # a compute-bound GEMM: the time falls about as the clock rises
    assert seconds[0] / seconds[2] == pytest.approx(clocks[2] / clocks[0], rel=0.03)
    assert load_hardware("h100_sxm").in_burst().compute.power_limited_clock_hz == 1.595e9


def test_every_h100_dataset_meets_the_12_percent_target() -> None:
    """Issue 9's target on the two H100 datasets, with the overhead-only protocol on every H100
    row (the same training rows as the full run): XLA's H100 table was 12.2 % until small tf32
    GEMMs with an N-major operand took cuBLAS's sm_80 kernels (11.8 % now, docs/validation.md),
    Vidur's H100 rows 8.9 %."""
    rows = [r for r in load_gemm_rows(DATA).rows if r.hardware == "h100_sxm"]
    result = validate_gemm_latency(rows, ["effective_roofline"], options=ValidationOptions())
    by_source = result.models[0].by_source
    assert by_source["xla:h100_sxm"].mape <= 0.12
    assert by_source["vidur:h100_sxm"].mape <= 0.095


def test_the_mi355x_table_as_shipped() -> None:
    """docs/validation.md, "The MI355X (gfx950)": held out as shipped (its 10 clock-training
    rows out, the config's 4,000-cycle overhead), 18.7 % MAPE and 0.87x over 740 rows, large
    GEMMs 7.1 % at the fitted 1305 MHz. A change that moves them must update the docs."""
    rows = [r for r in load_gemm_rows(DATA).rows if r.hardware == "mi355x"]
    assert len(rows) == 750
    report = validate_gemm_latency(
        rows, ["effective_roofline"], options=ValidationOptions(calibrate=False)
    )
    assert report.rows_used == 740
    assert report.shipped_clock_training_rows == {"mi355x": 10}
    result = report.models[0]
    assert result.overall.mape == pytest.approx(0.187, abs=0.005)
    assert result.overall.geomean_ratio == pytest.approx(0.873, abs=0.01)
    assert result.by_class["large"].mape < 0.08
