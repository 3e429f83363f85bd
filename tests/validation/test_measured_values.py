"""Measured cells no kernel run could produce (NaN, infinite, 1e-300 ms, a clock in Hz where
MHz is asked) are rows skipped with their reason in every loader, never a NaN in a metric or a
ZeroDivisionError in a fit; rows whose timed repeats did not settle are reported apart."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from opmodel.cli import main
from opmodel.validation.gemm_data import load_gemm_rows
from opmodel.validation.measured_values import (
    measured_clock_hz,
    measured_energy_j,
    measured_ms,
    measured_truncation_s,
)
from opmodel.validation.op_latency import OpRow, load_op_rows, validate_op_latency

TIME = "time not from 1e-06 to 1e+08 ms"
CLOCK = "clock_mhz not from 10 to 100000 MHz"
NORM = "input:1024x4096:fp16;weight:4096:fp16;output:1024x4096:fp16"


@pytest.mark.parametrize("text", ["0", "-1", "nan", "inf", "1e-300", "1e9"])
def test_times_outside_the_span_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match=re.escape(TIME)):
        measured_ms(text)


def test_values_inside_the_spans_pass() -> None:
    assert measured_ms("0.0021") == 0.0021
    assert measured_energy_j("0.5") == 0.5
    assert measured_clock_hz("1410") == 1410e6
    for text in ("0", "nan", "2e9"):
        with pytest.raises(ValueError, match="energy not above 0"):
            measured_energy_j(text)
    for text in ("1.41", "1410000000", "nan"):  # GHz and Hz where MHz is asked
        with pytest.raises(ValueError, match=re.escape(CLOCK)):
            measured_clock_hz(text)


def _norm_rows(
    folder: Path, column: str, cells: list[tuple[str, str]]
) -> tuple[list[OpRow], Counter[str]]:
    """An A100 RMSNorm table of one row per ``(time, column)`` cell pair, loaded."""
    header = f"name,kind,phase,tensors,attrs,time,{column},hardware,source\n"
    lines = [f"rms,rmsnorm,prefill,{NORM},,{t},{c},a100_80gb_sxm,s\n" for t, c in cells]
    (folder / "ops").mkdir()
    (folder / "ops" / "t.csv").write_text(header + "".join(lines))
    return load_op_rows(folder)


def test_op_rows_skip_impossible_times_and_clocks(tmp_path: Path) -> None:
    cells = [("0.05", ""), ("nan", ""), ("1e-300", ""), ("inf", ""), ("0.05", "1410000000")]
    rows, skipped = _norm_rows(tmp_path, "clock_mhz", cells)
    assert len(rows) == 1
    assert skipped == {TIME: 3, CLOCK: 1}
    # before: the 1e-300 ms row reached the event-scope fit and raised ZeroDivisionError
    assert main(["validate-ops", "--data-dir", str(tmp_path), "--model", "roofline"]) == 0


def test_gemm_rows_skip_impossible_times_clocks_and_energies(tmp_path: Path) -> None:
    header = "time,energy,batch,dimM,dimN,dimK,dtype,hardware,clock_mhz,source\n"
    cells = [
        ("0.05", "", ""),
        ("nan", "", ""),  # before: a row whose error was NaN
        ("1e-300", "", ""),
        ("0.05", "", "1.41"),
        ("0.05", "inf", ""),
    ]
    lines = [f"{t},{e},1,256,256,256,fp16,a10,{c},s\n" for t, e, c in cells]
    (tmp_path / "g.csv").write_text(header + "".join(lines))
    loaded = load_gemm_rows(tmp_path)
    assert len(loaded.rows) == 1
    assert dict(loaded.skipped) == {
        f"malformed row: {TIME}": 2,
        f"malformed row: {CLOCK}": 1,
        "malformed row: energy not above 0 and at most 1e+09 J": 1,
    }


def test_op_rows_with_unsettled_repeats_are_reported_apart(tmp_path: Path) -> None:
    """validate-ops screens repeats like validate-gemm-latency: median over fastest 1.0 and 1.3
    settled, 2.0 not; a time_min above time is a malformed row."""
    cells = [("0.05", "0.05"), ("0.065", "0.05"), ("0.10", "0.05"), ("0.05", ""), ("0.05", "0.06")]
    rows, skipped = _norm_rows(tmp_path, "time_min", cells)
    assert [r.repeat_spread for r in rows] == [1.0, pytest.approx(1.3), 2.0, None]
    assert skipped == {"time_min must be in (0, time] (got '0.06' for time 0.05)": 1}
    result = validate_op_latency(rows, "roofline")
    assert {name: m.count for name, m in result.by_spread.items()} == {
        "repeats settled": 2,
        "repeats unsettled": 1,
    }
    # the unsettled row stays in every other figure
    assert result.overall.count == 4
    settled = validate_op_latency(rows[:2] + rows[3:], "roofline")
    assert settled.by_spread == {}  # nothing unsettled: no split


TRUNCATION = "time_truncation_s not from 0 to 0.001 s"


def test_a_truncation_step_reads_in_seconds_and_refuses_what_no_timer_has() -> None:
    assert measured_truncation_s({}) == 0.0
    assert measured_truncation_s({"time_truncation_s": " "}) == 0.0
    assert measured_truncation_s({"time_truncation_s": "1e-06"}) == 1e-6
    for text in ("-1e-6", "nan", "0.002", "inf"):
        with pytest.raises(ValueError, match=re.escape(TRUNCATION)):
            measured_truncation_s({"time_truncation_s": text})


def test_truncated_op_rows_get_half_a_step_back(tmp_path: Path) -> None:
    """Vidur's whole microseconds: a published 2 us is 2-3 us, 2.5 us expected; the row keeps
    its step; a step no timer has makes the row malformed."""
    cells = [("0.002", "1e-06"), ("0.002", ""), ("0.002", "1")]
    rows, skipped = _norm_rows(tmp_path, "time_truncation_s", cells)
    assert [r.time_s for r in rows] == [pytest.approx(2.5e-6), pytest.approx(2e-6)]
    assert [r.time_truncation_s for r in rows] == [1e-6, 0.0]
    assert skipped == {TRUNCATION: 1}


def test_a_truncated_fastest_repeat_gets_the_same_half_step(tmp_path: Path) -> None:
    """A median of 3 us over a fastest repeat of 2 us, both whole microseconds: compared as 3.5
    and 2.5 us, so the spread is 1.4, not 1.5 nor 3.5 / 2."""
    path = tmp_path / "ops"
    path.mkdir()
    header = "name,kind,phase,tensors,attrs,time,time_min,time_truncation_s,hardware,source\n"
    row = f"rms,rmsnorm,prefill,{NORM},,0.003,0.002,1e-06,a100_80gb_sxm,s\n"
    (path / "t.csv").write_text(header + row)
    (only,), _ = load_op_rows(tmp_path)
    assert only.time_min_s == pytest.approx(2.5e-6)
    assert only.repeat_spread == pytest.approx(1.4)


def test_truncated_gemm_rows_get_half_a_step_back(tmp_path: Path) -> None:
    header = "time,time_truncation_s,batch,dimM,dimN,dimK,dtype,hardware,source\n"
    lines = [f"0.004,{s},1,256,256,256,fp16,a10,s\n" for s in ("1e-06", "", "-1")]
    (tmp_path / "g.csv").write_text(header + "".join(lines))
    loaded = load_gemm_rows(tmp_path)
    assert [r.time_s for r in loaded.rows] == [pytest.approx(4.5e-6), pytest.approx(4e-6)]
    assert [r.time_truncation_s for r in loaded.rows] == [1e-6, 0.0]
    assert dict(loaded.skipped) == {f"malformed row: {TRUNCATION}": 1}


def test_the_shipped_vidur_tables_declare_their_whole_microseconds() -> None:
    """Every Vidur time is a whole or half microsecond (the median of 20 truncated samples),
    and every Vidur table says so; no other table does."""
    data = Path(__file__).resolve().parents[2] / "data"
    rows, _ = load_op_rows(data)
    gemms = load_gemm_rows(data / "gemm").rows
    for row in [*rows, *gemms]:
        vidur = row.source == "vidur"
        assert row.time_truncation_s == (1e-6 if vidur else 0.0), row.label
        if vidur:
            published_us = (row.time_s - row.time_truncation_s / 2) * 1e6
            assert abs(2 * published_us - round(2 * published_us)) < 1e-6, row.label
