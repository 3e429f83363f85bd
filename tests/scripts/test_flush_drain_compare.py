"""scripts/flush_drain_compare.py on two small measurement folders in opmodel measure's format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from opmodel.core.errors import ConfigError
from tests.scripts.loader import load_script

SCRIPT = load_script("flush_drain_compare")
HEADER = "name,kind,phase,tensors,attrs,time,hardware,label,timing_scope\n"


def _run(folder: Path, idle: float, times_ms: tuple[float, float]) -> Path:
    folder.mkdir()
    small, large = times_ms
    (folder / "ops.csv").write_text(
        HEADER
        + f"copy,copy,prefill,input:1024x1024:bf16;output:1024x1024:bf16,{{}},{small},h200_sxm,small,event\n"
        + f"copy,copy,prefill,input:1024x32768:bf16;output:1024x32768:bf16,{{}},{large},h200_sxm,large,event\n"
    )
    (folder / "run.json").write_text(json.dumps({"grid": {"flush_idle_us": idle}}))
    return folder


def test_pairs_the_cases_and_their_bytes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    flushed = _run(tmp_path / "a", 0.0, (0.010, 0.040))
    idle = _run(tmp_path / "b", 100.0, (0.010, 0.034))
    small, large = SCRIPT.pairs(flushed, idle)
    assert (small.label, small.traffic_bytes) == ("small", 2 * 1024 * 1024 * 2)
    assert large.traffic_bytes == 2 * 1024 * 32768 * 2  # 134 MB, past the H200's 31.5 MB
    assert large.saved_s == pytest.approx(6e-6)
    # the H200's shared half of its 60 MiB L2 at 4.8 TB/s: 6.55 µs
    capacity, bound = SCRIPT.drain_bound_s("h200_sxm")
    assert capacity == 30 * 2**20 and bound == pytest.approx(30 * 2**20 / 4.8e12)
    assert SCRIPT.main([str(flushed), str(idle)]) == 0
    assert "median saved 6.00 µs against C / B = 6.55 µs" in capsys.readouterr().out


def test_runs_in_the_wrong_order_are_one_line(tmp_path: Path) -> None:
    flushed = _run(tmp_path / "a", 0.0, (0.010, 0.040))
    idle = _run(tmp_path / "b", 100.0, (0.010, 0.034))
    with pytest.raises(ConfigError, match="expected a run without flush_idle_us, then one with it"):
        SCRIPT.main([str(idle), str(flushed)])
    with pytest.raises(ConfigError, match=r"run\.json: file not found"):
        SCRIPT.main([str(flushed), str(tmp_path)])
