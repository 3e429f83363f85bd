"""``opmodel sweep --summary-columns``: opmodel.report's figures per row, in process and in
worker processes, and a table that already has such a column."""

from __future__ import annotations

from pathlib import Path

import pytest

from opmodel import ConfigError
from opmodel.batch import SUMMARY_COLUMNS, EngineChoice, SweepOptions, op_to_row, run_sweep
from opmodel.cli import main
from opmodel.hardware import load_hardware
from opmodel.models import get_model
from opmodel.parsing import load_op
from opmodel.report import summarize

from ..conftest import EXAMPLES
from .test_sweep import _read, _write

EXAMPLE_NAMES = ("gemm", "rmsnorm", "attention_decode", "copy")


def _ops_table(tmp_path: Path) -> Path:
    rows = [op_to_row(load_op(EXAMPLES / f"{name}.yaml")) for name in EXAMPLE_NAMES]
    return _write(tmp_path / "ops.csv", rows)


@pytest.mark.parametrize("workers", [None, 2])
def test_summary_columns_are_the_report_figures(tmp_path: Path, workers: int | None) -> None:
    options = SweepOptions(summary_columns=True, engine=EngineChoice(workers=workers))
    run_sweep(_ops_table(tmp_path), "h100_sxm", tmp_path / "out.csv", options)
    rows = _read(tmp_path / "out.csv")
    assert list(rows[0])[-len(SUMMARY_COLUMNS) :] == list(SUMMARY_COLUMNS)
    spec, model = load_hardware("h100_sxm"), get_model("effective_roofline")
    for name, row in zip(EXAMPLE_NAMES, rows, strict=True):
        op = load_op(EXAMPLES / f"{name}.yaml")
        expected = summarize(op, model.predict(op, spec), spec)
        assert row["limiter"] == (expected.limiter or "")
        assert float(row["average_power_w"]) == pytest.approx(expected.average_power_w)
        fraction = expected.compute_fraction
        if fraction is None:  # the copy: no FLOPs on an engine with a peak
            assert row["compute_fraction"] == ""
        else:
            assert float(row["compute_fraction"]) == pytest.approx(fraction)
        measured = expected.validated
        assert measured is not None  # effective_roofline's kinds are all in the table's reach
        assert int(row["validated_rows"]) == measured.rows
        assert row["validated_mape"] == ("" if measured.mape is None else str(measured.mape))
    assert rows[0]["sm_clock_hz"] and not rows[1]["sm_clock_hz"]  # GEMM reports it; a norm not


def test_without_the_flag_no_summary_columns(tmp_path: Path) -> None:
    run_sweep(_ops_table(tmp_path), "a10", tmp_path / "out.csv")
    assert not set(SUMMARY_COLUMNS) & set(_read(tmp_path / "out.csv")[0])


def test_a_column_named_like_a_summary_column_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "ops.csv"
    path.write_text("name,kind,phase,tensors,limiter\n")
    with pytest.raises(ConfigError, match="column 'limiter' is a result column"):
        run_sweep(path, "a10", tmp_path / "out.csv")


def test_cli_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out.csv"
    argv = ["sweep", "--ops", str(_ops_table(tmp_path)), "--hardware", "a10", "--output", str(out)]
    assert main([*argv, "--summary-columns", "--no-progress", "--workers", "1"]) == 0
    capsys.readouterr()
    assert "average_power_w" in _read(out)[0]


def test_the_flags_must_be_booleans() -> None:
    with pytest.raises(ConfigError, match=r"SweepOptions\.summary_columns: must be true or false"):
        SweepOptions(summary_columns="yes")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"SweepOptions\.skip_invalid: must be true or false"):
        SweepOptions(skip_invalid=1)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"model": None}, "SweepOptions.model: must be a model name (got None)"),
        ({"engine": "local"}, "SweepOptions.engine: must be an EngineChoice (got 'local')"),
        ({"clock_hz": []}, "SweepOptions.clock_hz: must be None or a number of Hz (got [])"),
        ({"clock_hz": True}, "SweepOptions.clock_hz: must be None or a number of Hz"),
        ({"hardware_overrides": 3}, "SweepOptions.hardware_overrides: must be None or a mapping"),
        ({"power_state": None}, "power_state must be one of sustained, burst (got None)"),
    ],
)
def test_options_of_the_wrong_type_are_one_line_errors(
    options: dict[str, object], message: str
) -> None:
    """Found by a fuzzer over the public functions: these were AttributeErrors and
    TypeErrors from inside the sweep (``engine.workers``, ``overrides.items()``, hashing a
    list), or a bare ValueError."""
    with pytest.raises(ConfigError) as raised:
        SweepOptions(**options)  # type: ignore[arg-type]
    assert str(raised.value) == message or str(raised.value).startswith(message)


def test_run_sweep_takes_sweep_options(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="run_sweep: options must be a SweepOptions"):
        run_sweep(_ops_table(tmp_path), "a10", tmp_path / "o.csv", {"model": "roofline"})  # type: ignore[arg-type]
