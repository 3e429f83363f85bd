"""validate-artifact, workload mode: run selection, pass sums by hand, CLI, per-op mode."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from opmodel.cli import main
from opmodel.core.errors import ConfigError
from opmodel.hardware import load_hardware
from opmodel.models import get_model
from opmodel.validation.artifact import (
    MIN_WINDOW_S,
    calibration_split,
    load_runs,
    predict_runs,
)
from opmodel.validation.artifact_kernels import kernels_from_entry
from tests.validation.artifact_entries import CONV, OPS

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def artifact(tmp_path: Path) -> Path:
    root = tmp_path / "energaizer"
    (root / "workloads" / "all").mkdir(parents=True)
    (root / "measurements" / "a100").mkdir(parents=True)
    (root / "workloads" / "all" / "tinymodel_x_pbf16_b1_s128_modeprefill.json").write_text(
        json.dumps([*OPS, [CONV, ["conv2d", "tc", "bf16_bf16"]]])
    )
    rows = [
        "workload,energy,time,avg_freq,temp",
        "tinymodel_x_pbf16_b1_s128_modeprefill_attneager_freq900_iter3000.csv,0.5,10.0,900.0,60",
        "tinymodel_x_pfp32_b1_s128_modeprefill_freq900_iter3000.csv,0.5,10.0,900.0,60",
        "tinymodel_x_pbf16_b1_s128_modeprefill_freq900_iter100.csv,0.1,10.0,900.0,60",
        "othermodel_y_pbf16_b1_s128_modeprefill_freq900_iter3000.csv,0.5,10.0,900.0,60",
    ]
    (root / "measurements" / "a100" / "nvml_parsed.csv").write_text("\n".join(rows) + "\n")
    return root


def test_run_selection(artifact: Path) -> None:
    runs, skipped = load_runs(artifact)
    assert [r.workload for r in runs] == ["tinymodel_x_pbf16_b1_s128_modeprefill"]
    run = runs[0]
    assert (run.hardware, run.clock_hz, run.family, run.passes) == (
        "a100_40gb_pcie",
        900e6,
        "tiny",
        3000,
    )
    # the failed run (10 ms x 100 passes = 1 s, 0.1 J x 100 = 10 J) is the start-up, which comes
    # off the 30 s, 1500 J window of 3000 passes
    assert (run.startup_s, run.startup_j) == (pytest.approx(1.0), pytest.approx(10.0))
    assert run.time_s == pytest.approx((30.0 - 1.0) / 3000)
    assert run.energy_j == pytest.approx((1500.0 - 10.0) / 3000)
    assert skipped == {
        "not bf16 (no op list)": 1,
        "measurement window under 10 s (failed run)": 1,  # 10 ms x 100 passes = 1 s
        "no op list for the workload": 1,
    }


def test_a_clock_sweep_is_its_own_set(artifact: Path) -> None:
    """measurements/a100_dvfs (the artifact's clock sweep) runs on the same config, at each
    run's measured clock, with its own start-up correction and the clock the harness asked
    for; its runs are reported as '<config>:dvfs' and never train a 900 MHz calibration."""
    sweep = artifact / "measurements" / "a100_dvfs"
    sweep.mkdir()
    rows = [
        "workload,energy,time,avg_freq,temp",
        "tinymodel_x_pbf16_b1_s128_modeprefill_attneager_freq1410_iter2000.csv,0.6,15.0,1219.7,74",
        "tinymodel_x_pbf16_b1_s128_modeprefill_attneager_freq510_iter500.csv,2.0,4.0,510.0,60",
    ]
    (sweep / "nvml_parsed.csv").write_text("\n".join(rows) + "\n")
    runs, _ = load_runs(artifact)
    (capped,) = [r for r in runs if r.sweep]
    assert (capped.label, capped.clock_hz, capped.requested_clock_mhz) == (
        "a100_40gb_pcie:dvfs",
        pytest.approx(1219.7e6),
        1410.0,
    )
    # its own failed run (4 ms x 500 = 2 s) is the start-up: (30 s - 2 s) / 2000 passes
    assert capped.time_s == pytest.approx((30.0 - 2.0) / 2000)
    (main_run,) = [r for r in runs if not r.sweep]
    assert main_run.label == "a100_40gb_pcie" and main_run.requested_clock_mhz == 900.0
    result = predict_runs([capped], "roofline")[0]
    assert calibration_split(result) == "held-out"  # carried to 1220 MHz by the voltage table


def test_no_failed_run_means_no_startup_correction(artifact: Path) -> None:
    """Without a failed run on that GPU there is no start-up measurement: the window is taken
    as passes alone."""
    path = artifact / "measurements" / "a100" / "nvml_parsed.csv"
    path.write_text(
        "".join(line for line in path.read_text().splitlines(True) if "iter100" not in line)
    )
    (run,) = load_runs(artifact)[0]
    assert (run.startup_s, run.startup_j) == (0.0, 0.0)
    assert (run.time_s, run.energy_j) == (pytest.approx(0.01), pytest.approx(0.5))


def test_malformed_numbers_are_skipped_and_counted(artifact: Path) -> None:
    """A row whose time, energy or clock is not a number, or one no run could produce, is
    skipped with its reason and is no start-up measurement, even when its name would make it
    a failed run."""
    path = artifact / "measurements" / "a100" / "nvml_parsed.csv"
    bad = (
        "tinymodel_x_pbf16_b1_s128_modeprefill_freq900_iter100.csv,0.1,abc,900.0,60\n"
        "tinymodel_x_pbf16_b1_s128_modeprefill_freq900_iter100.csv,,10.0,900.0,60\n"
        "tinymodel_x_pbf16_b1_s128_modeprefill_freq900_iter100.csv,0.1,10.0,-1,60\n"
        "tinymodel_x_pbf16_b1_s128_modeprefill_freq900_iter100.csv,0,10.0,900.0,60\n"
        "tinymodel_x_pbf16_b1_s128_modeprefill_freq900_iter100.csv,0.1,1e308,900.0,60\n"
    )
    path.write_text(path.read_text() + bad)
    runs, skipped = load_runs(artifact)
    assert skipped["time, energy or avg_freq not a number"] == 2
    assert skipped["avg_freq not from 10 to 100000 MHz"] == 1
    assert skipped["energy not above 0 and at most 1e+09 J"] == 1  # no run measures 0 J
    assert skipped["time not from 1e-06 to 1e+08 ms"] == 1  # 1e308 ms: an infinite pass
    (run,) = runs
    assert (run.startup_s, run.startup_j) == (pytest.approx(1.0), pytest.approx(10.0))


def test_pass_sums_by_hand(artifact: Path) -> None:
    runs, _ = load_runs(artifact)
    (result,) = predict_runs(runs, "roofline")
    spec = load_hardware("a100_40gb_pcie").at_clock(900e6)
    model, gap = get_model("roofline"), spec.overhead.kernel_launch_overhead_s
    slots = [
        [model.predict(op, spec) for op in kernels_from_entry(entry).kernels]
        for entry in [*OPS[:6], [CONV, ["conv2d"]]]
    ]
    assert [len(slot) for slot in slots] == [1, 3, 1, 1, 1, 1, 4]  # the bmm copies Q and K
    # the launch queue: entry i queued at i x gap, run in order; an entry's kernels (the
    # attention bmm's copies, the conv's transforms) come from one host call: one slot
    time_s = 0.0
    for i, slot in enumerate(slots, 1):
        time_s = max(time_s, i * gap) + sum(p.latency_s for p in slot)
    dynamic = sum(p.energy_j - spec.power.static_w * p.latency_s for s in slots for p in s)
    assert result.ops == 7 and result.skipped_ops == {"elementwise op 'mystery' is not mapped": 1}
    assert result.time_s == pytest.approx(time_s)
    assert spec.power.static_w == pytest.approx(47.35)  # EnergAIzer idle power at 900 MHz
    assert result.energy_j == pytest.approx(dynamic + 47.35 * time_s)
    # the GEMM and batched GEMM kernels' share of the kernel time (the conv runs as its GEMM;
    # the bmm's copies and the conv's transforms are copies)
    tensor = [
        p.latency_s
        for entry, slot in zip([*OPS[:6], [CONV, ["conv2d"]]], slots, strict=True)
        for op, p in zip(kernels_from_entry(entry).kernels, slot, strict=True)
        if op.kind.value in ("gemm", "batched_gemm")
    ]
    assert len(tensor) >= 2
    assert result.tensor_kernel_s == pytest.approx(sum(tensor))
    assert 0 < result.tensor_kernel_s < result.kernel_s


def test_cli_outputs(artifact: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_csv, out_svg = tmp_path / "runs.csv", tmp_path / "runs.svg"
    args = ["validate-artifact", "--workload-dir", str(artifact), "--format", "json"]
    assert main([*args, "--output-csv", str(out_csv), "--output-plot", str(out_svg)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["runs"] == 1 and summary["groups"]["a100_40gb_pcie"]["latency"]["count"] == 1
    with out_csv.open() as handle:
        (row,) = list(csv.DictReader(handle))
    assert row["workload"] == "tinymodel_x_pbf16_b1_s128_modeprefill"
    assert float(row["time_ratio"]) == pytest.approx(
        float(row["predicted_time_s"]) / float(row["measured_time_s"]), rel=1e-5
    )
    assert out_svg.read_text().lstrip().startswith("<?xml")
    assert (tmp_path / "runs_energy_breakdown.svg").is_file()


def test_bad_inputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ConfigError, match="no workloads/all folder"):
        load_runs(tmp_path)
    assert main(["validate-artifact", "--workload-dir", str(tmp_path)]) == 2
    assert "no workloads/all folder" in capsys.readouterr().err


def test_shipped_data_runs(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["validate-artifact", "--workload-dir", str(REPO / "data" / "energaizer")]
    assert main([*args, "--model", "roofline", "--format", "json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["runs"] > 100
    groups = summary["groups"]
    assert {"a10", "a100_40gb_pcie", "h100_sxm"} <= set(groups)
    # the H100 SXM5 set (data/energaizer/measurements/h100): 53 runs with an op list, at 1830 MHz
    assert groups["h100_sxm"]["latency"]["count"] == 53
    # the A100's clock sweep (data/energaizer/measurements/a100_dvfs), by requested clock
    assert groups["a100_40gb_pcie:dvfs"]["latency"]["count"] == 163
    for mhz in range(510, 1411, 90):
        assert groups[f"a100_40gb_pcie:dvfs:{mhz}MHz"]["latency"]["count"] >= 13
    for hardware in ("a10", "a100_40gb_pcie", "h100_sxm"):  # held-out runs, also by family
        by_family = [g for name, g in groups.items() if name.startswith(f"{hardware}:held-out:")]
        assert len(by_family) >= (4 if hardware == "h100_sxm" else 5)  # no vision models on H100
        count = sum(g["latency"]["count"] for g in by_family)
        assert count == groups[f"{hardware}:held-out"]["latency"]["count"]


def test_shipped_h100_runs() -> None:
    """measurements/h100 is EnergAIzer's H100 SXM5 at a locked 1830 MHz (config h100_sxm):
    56 bf16 language-model runs, 3 without an op list in the artifact, none failed, so no
    start-up correction (the windows keep their start-up: SOURCE.md)."""
    runs, _ = load_runs(REPO / "data" / "energaizer")
    h100 = [run for run in runs if run.hardware == "h100_sxm"]
    assert len(h100) == 53
    assert {run.family for run in h100} == {"bert", "gpt2", "opt", "qwen2"}
    assert all(run.clock_hz == pytest.approx(1830e6) and not run.sweep for run in h100)
    assert all(run.startup_s == 0.0 and run.startup_j == 0.0 for run in h100)
    assert all(run.time_s * run.passes >= MIN_WINDOW_S for run in h100)


def test_runs_csv_says_which_runs_trained_the_calibration(tmp_path: Path) -> None:
    out = tmp_path / "runs.csv"
    args = ["validate-artifact", "--workload-dir", str(REPO / "data" / "energaizer")]
    assert main([*args, "--model", "roofline", "--output-csv", str(out), "--format", "json"]) == 0
    with out.open() as handle:
        rows = list(csv.DictReader(handle))
    splits = {row["split"] for row in rows}
    assert splits == {"training", "held-out"}  # every measured device carries a calibration
    training = {(row["hardware"], row["workload"]) for row in rows if row["split"] == "training"}
    declared: set[tuple[str, str]] = set()
    for name in ("a10", "a100_40gb_pcie", "h100_sxm"):
        calibration = load_hardware(name).calibration
        assert calibration is not None
        declared |= {(name, run) for run in calibration.training_runs}
    assert training == declared


def test_plot_path_must_be_svg(
    artifact: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["validate-artifact", "--workload-dir", str(artifact), "--format", "json"]
    assert main([*args, "--output-plot", str(tmp_path / "plot.png")]) == 2
    assert "--output-plot must be an .svg file" in capsys.readouterr().err


def test_plot_without_matplotlib_says_what_to_install(
    artifact: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    args = ["validate-artifact", "--workload-dir", str(artifact), "--format", "json"]
    assert main([*args, "--output-plot", str(tmp_path / "plot.svg")]) == 2
    assert "pip install 'opmodel[plots]'" in capsys.readouterr().err
