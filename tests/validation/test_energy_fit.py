"""Energy calibration: NNLS by hand, the declared split, the command and its file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from opmodel.cli import main
from opmodel.hardware.energy_calibration import load_energy_calibration
from opmodel.validation.artifact import WorkloadRun
from opmodel.validation.energy_fit import pass_time_s, training_split
from opmodel.validation.host_time import fit_host_time
from opmodel.validation.nnls import nnls

REPO = Path(__file__).resolve().parents[2]
CALIBRATIONS = REPO / "src" / "opmodel" / "configs" / "calibrations"


def test_nnls_recovers_exact_non_negative_coefficients() -> None:
    rows = [[1e-3, 1e12, 2e9], [2e-3, 3e12, 1e9], [5e-3, 1e12, 4e9], [1e-3, 4e12, 3e9]]
    truth = [50.0, 2e-12, 3e-11]
    b = [sum(r * t for r, t in zip(row, truth, strict=True)) for row in rows]
    assert nnls(rows, b) == pytest.approx(truth, rel=1e-9)


def test_nnls_clamps_a_negative_slope_to_zero() -> None:
    """b = 4 - x has a negative slope; with x >= 0 the best fit is the mean through column 1."""
    rows = [[1.0, 1.0], [1.0, 2.0], [1.0, 3.0]]
    x = nnls(rows, [3.0, 2.0, 1.0])
    assert x == pytest.approx([2.0, 0.0])


def test_nnls_rejects_mismatched_input() -> None:
    with pytest.raises(ValueError, match="as many right-hand values as rows"):
        nnls([[1.0]], [1.0, 2.0])


def _run(name: str, family: str) -> WorkloadRun:
    return WorkloadRun(
        workload=name,
        family=family,
        ops_file=Path("x.json"),
        hardware="a10",
        clock_hz=900e6,
        time_s=1.0,
        energy_j=1.0,
    )


def test_split_takes_every_third_workload_per_family() -> None:
    runs = [_run(f"bert_{i}", "bert") for i in (4, 1, 3, 2, 0)] + [
        _run("gpt_a", "gpt"),
        _run("gpt_a", "gpt"),  # a repeated measurement stays with its workload
        _run("gpt_b", "gpt"),
    ]
    assert training_split(runs) == {"bert_0", "bert_3", "gpt_a"}


def test_command_writes_a_loadable_calibration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "a10.yaml"
    data = str(REPO / "data" / "energaizer")
    args = ["calibrate-energy", "--hardware", "a10", "--workload-dir", data]
    assert main([*args, "--model", "roofline", "--output", str(out)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["clock_mhz"] == 900.0 and summary["training_runs"] > 10
    calibration = load_energy_calibration(out, "a10")
    assert calibration.model == "roofline" and calibration.clock_mhz == 900.0
    assert all(value >= 0 for value in vars_of(calibration.terms))
    assert calibration.metrics["held_out"]["count"] > calibration.metrics["training"]["count"]


def vars_of(terms: object) -> list[float]:
    return [v for v in (getattr(terms, f) for f in terms.__slots__) if v is not None]  # type: ignore[attr-defined]


def test_command_needs_runs_of_the_hardware(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["calibrate-energy", "--hardware", "h200_sxm", "--output", str(tmp_path / "x.yaml")]
    assert main([*args, "--workload-dir", str(REPO / "data" / "energaizer")]) == 2
    assert "need runs of 'h200_sxm'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("hardware", "file"),
    [("a10", "a10_energaizer_900mhz.yaml"), ("h100_sxm", "h100_sxm_energaizer_1830mhz.yaml")],
)
def test_shipped_calibration_is_what_the_command_writes(
    hardware: str, file: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The shipped calibration files are reproducible from the shipped data (the A100's takes
    longest to refit and follows the same code)."""
    out = tmp_path / "fresh.yaml"
    args = ["calibrate-energy", "--hardware", hardware, "--output", str(out)]
    assert main([*args, "--workload-dir", str(REPO / "data" / "energaizer")]) == 0
    capsys.readouterr()
    fresh = load_energy_calibration(out, hardware)
    shipped = load_energy_calibration(CALIBRATIONS / file, hardware)
    assert fresh.training_runs == shipped.training_runs
    assert fresh.clock_mhz == shipped.clock_mhz
    for name in ("active_w", "tensor_j_per_flop", "hbm_j_per_byte", "l2_j_per_byte"):
        assert getattr(fresh.terms, name) == pytest.approx(getattr(shipped.terms, name), rel=1e-6)
    assert fresh.terms.launch_gap_s == pytest.approx(shipped.terms.launch_gap_s, rel=1e-9)
    assert fresh.terms.module_call_s == pytest.approx(shipped.terms.module_call_s, rel=1e-9)


def test_launch_gap_fit_by_hand() -> None:
    """One training run of four kernels (1, 2, 50, 100 µs) queued every ``g`` by the host:
    finish_i = max(finish_(i-1), i g) + t_i.

    g = 10 µs: 11, 22, 80, 180 µs. g = 30 µs: 31, 62, 140, 240 µs, so a measured 240 µs is
    matched by a 30 µs gap (the pass time rises with g, so only by that one)."""
    latencies = (1e-6, 2e-6, 50e-6, 100e-6)
    assert pass_time_s(latencies, 10e-6) == pytest.approx(180e-6)
    assert pass_time_s(latencies, 30e-6) == pytest.approx(240e-6)
    # a family without a module count: the time per kernel alone, on the grid's 0.5 % steps
    host = fit_host_time([(latencies, "unknown", 240e-6)])
    assert host.launch_gap_s == pytest.approx(30e-6, rel=0.005)
    assert fit_host_time([(latencies, "bert", 240e-6)], module_calls=False).launch_gap_s == (
        pytest.approx(30e-6, rel=0.005)
    )


@pytest.mark.parametrize(
    ("file", "time_mape", "energy_mape"),
    # measured (2026-12-07, host time per module call and GPT-2's fills): 4.5 / 6.0 %,
    # 11.7 / 5.9 % (issue #6's target: 12 % on the A10 and A100), 13.0 / 5.7 %
    [
        ("a10_energaizer_900mhz.yaml", 0.05, 0.065),
        ("a100_40gb_pcie_energaizer_900mhz.yaml", 0.12, 0.065),
        ("h100_sxm_energaizer_1830mhz.yaml", 0.135, 0.06),
    ],
)
def test_shipped_held_out_accuracy_does_not_regress(
    file: str, time_mape: float, energy_mape: float
) -> None:
    """Regression guard on the shipped calibrations' held-out forward-pass errors (which
    test_shipped_calibration_is_what_the_command_writes ties to the shipped data)."""
    hardware = file.split("_energaizer_", maxsplit=1)[0]
    held_out = load_energy_calibration(CALIBRATIONS / file, hardware).metrics["held_out"]
    assert held_out["time_mape"] <= time_mape
    assert held_out["energy_mape"] <= energy_mape
