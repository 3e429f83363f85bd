"""An fp8_e4m3 GEMM grid end to end with a fake backend: gemm.csv says fp8_e4m3, the latency
validator reads it as an e4m3 GEMM with a bf16 output and predicts it."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from opmodel.cli import main
from opmodel.measure import MeasureRequest, run_measurements
from opmodel.validation.gemm_data import load_gemm_rows
from opmodel.validation.gemm_latency import row_op
from tests.measure.fakes import FakeBackend

GRID = """name: fp8
warmup: 1
repeats: 3
ops:
  - {kind: gemm, sizes: {m: [64], n: [256], k: [512]}, dtypes: [fp8_e4m3, bf16], trans: [NT]}
"""


def _run(tmp_path: Path) -> Path:
    grid = tmp_path / "fp8.yaml"
    grid.write_text(GRID)
    out = tmp_path / "out"
    request = MeasureRequest(grid=str(grid), hardware="h200_sxm", output_dir=str(out))
    run_measurements(request, FakeBackend())
    return out


def test_fp8_rows_reach_the_latency_validator(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _run(tmp_path)
    with (out / "gemm.csv").open() as handle:
        dtypes = [(row["dtype"], row["compute_dtype"]) for row in csv.DictReader(handle)]
    assert dtypes == [("fp8_e4m3", ""), ("bf16", "")]
    loaded = load_gemm_rows(out)
    assert not loaded.skipped
    fp8 = loaded.rows[0]
    assert [t.dtype.value for t in row_op(fp8).tensors] == ["fp8_e4m3", "fp8_e4m3", "bf16"]
    args = ["validate-gemm-latency", "--data-dir", str(out), "--format", "json"]
    assert main([*args, "--no-calibrate-fixed-overhead"]) == 0
    assert '"h200_sxm"' in capsys.readouterr().out
