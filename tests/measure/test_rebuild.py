"""Rebuilding a dataset from run.json: the numbers carry over, unknown cases are named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from opmodel.core.errors import ConfigError
from opmodel.measure import MeasureRequest, run_measurements
from opmodel.measure.rebuild import rebuild_dataset
from tests.measure.fakes import FakeBackend

GRID = """name: tiny
warmup: 1
repeats: 3
ops:
  - {kind: gemm, sizes: {m: [64], n: [256], k: [512]}, dtypes: [bf16]}
  - {kind: rmsnorm, sizes: {rows: [8], length: [4096]}}
"""


@pytest.fixture
def measured(tmp_path: Path) -> tuple[Path, Path]:
    grid = tmp_path / "tiny.yaml"
    grid.write_text(GRID)
    out = tmp_path / "out"
    request = MeasureRequest(grid=str(grid), hardware="h200_sxm", output_dir=str(out))
    run_measurements(request, FakeBackend())
    return grid, out


def test_the_same_files_again(measured: tuple[Path, Path], tmp_path: Path) -> None:
    grid, out = measured
    again = tmp_path / "again"
    rows = rebuild_dataset(out / "run.json", again, str(grid))
    assert rows == {"gemm.csv": 1, "ops.csv": 1}
    for name in ("gemm.csv", "ops.csv", "SOURCE.md"):
        assert (again / name).read_text() == (out / name).read_text()
    assert json.loads((again / "run.json").read_text()) == json.loads(
        (out / "run.json").read_text()
    )
    assert '""implementation"": ""pytorch""' in (again / "ops.csv").read_text()


def test_a_case_the_grid_lacks_is_named(measured: tuple[Path, Path], tmp_path: Path) -> None:
    grid, out = measured
    run = json.loads((out / "run.json").read_text())
    run["cases"][0]["label"] = "gemm bf16 m=1 n=1 k=1 NN"
    (tmp_path / "run.json").write_text(json.dumps(run))
    with pytest.raises(ConfigError, match=r"1 case\(s\) not in grid .*'gemm bf16 m=1 n=1 k=1 NN'"):
        rebuild_dataset(tmp_path / "run.json", tmp_path / "x", str(grid))


def test_not_a_run_json(tmp_path: Path) -> None:
    (tmp_path / "run.json").write_text("{")
    with pytest.raises(ConfigError, match=r"run\.json: not JSON"):
        rebuild_dataset(tmp_path / "run.json", tmp_path / "x")
    (tmp_path / "run.json").write_text("{}")
    with pytest.raises(ConfigError, match=r"not an opmodel measure run\.json"):
        rebuild_dataset(tmp_path / "run.json", tmp_path / "x")


def test_a_malformed_case_or_device_is_one_line(
    measured: tuple[Path, Path], tmp_path: Path
) -> None:
    grid, out = measured
    run = json.loads((out / "run.json").read_text())
    broken = {**run, "cases": [{**run["cases"][0], "sm_clock_mhz": [1.0]}]}
    (tmp_path / "run.json").write_text(json.dumps(broken))
    with pytest.raises(ConfigError, match=r"cases\[0\]: malformed \(ValueError"):
        rebuild_dataset(tmp_path / "run.json", tmp_path / "x", str(grid))
    (tmp_path / "run.json").write_text(json.dumps({**run, "device": {"gpu": "x"}}))
    with pytest.raises(ConfigError, match=r"malformed run\.json \(TypeError"):
        rebuild_dataset(tmp_path / "run.json", tmp_path / "x", str(grid))
