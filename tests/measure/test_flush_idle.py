"""Grid ``flush_idle_us``: an idle wait after each L2 flush, in the estimate, run.json and
SOURCE.md (docs/measure.md; the dirty-line drain lead of docs/validation.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from opmodel.hardware import load_hardware
from opmodel.measure import MeasureRequest, load_grid, plan, run_measurements
from opmodel.models import get_model
from tests.measure.fakes import FakeBackend

GRID = """name: idle
warmup: 2
repeats: 4
energy: false
flush_idle_us: 50
ops:
  - {kind: copy, sizes: {rows: [1024], length: [4096]}}
"""


def _grid(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "idle.yaml"
    path.write_text(text)
    return path


def test_estimate_adds_the_wait_to_every_timed_run(tmp_path: Path) -> None:
    h200, model = load_hardware("h200_sxm"), get_model("roofline")
    idle = plan(load_grid(_grid(tmp_path, GRID)), h200, model)
    none = plan(load_grid(_grid(tmp_path, GRID.replace("flush_idle_us: 50\n", ""))), h200, model)
    assert idle.case_s[0] - none.case_s[0] == pytest.approx(4 * 50e-6)


def test_dataset_records_the_wait(tmp_path: Path) -> None:
    out = tmp_path / "out"
    request = MeasureRequest(
        grid=str(_grid(tmp_path, GRID)), hardware="h200_sxm", output_dir=str(out)
    )
    run_measurements(request, FakeBackend())
    run = json.loads((out / "run.json").read_text())
    assert run["grid"]["flush_idle_us"] == 50.0
    assert (
        "L2 flush on, then 50 µs idle (a spin kernel) before each timed run"
        in (out / "SOURCE.md").read_text()
    )
