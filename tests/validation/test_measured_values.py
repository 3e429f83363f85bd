"""Measured cells no kernel run could produce (NaN, infinite, 1e-300 ms, a clock in Hz where
MHz is asked) are rows skipped with their reason in every loader, never a NaN in a metric or a
ZeroDivisionError in a fit."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from opmodel.cli import main
from opmodel.validation.gemm_data import load_gemm_rows
from opmodel.validation.measured_values import (
    measured_clock_hz,
    measured_energy_j,
    measured_ms,
)
from opmodel.validation.op_latency import load_op_rows

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


def test_op_rows_skip_impossible_times_and_clocks(tmp_path: Path) -> None:
    header = "name,kind,phase,tensors,attrs,time,hardware,clock_mhz,source\n"
    cells = [("0.05", ""), ("nan", ""), ("1e-300", ""), ("inf", ""), ("0.05", "1410000000")]
    lines = [f"rms,rmsnorm,prefill,{NORM},,{t},a100_80gb_sxm,{c},s\n" for t, c in cells]
    folder = tmp_path / "ops"
    folder.mkdir()
    (folder / "t.csv").write_text(header + "".join(lines))
    rows, skipped = load_op_rows(tmp_path)
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
