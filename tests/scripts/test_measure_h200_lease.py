"""scripts/measure_h200_lease.sh with stand-in ``python3`` and ``nvidia-smi`` on the PATH: the
grids it runs, in turn, each with its clock lock, and NCU_GRID=none ending the run."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "measure_h200_lease.sh"


def _run(tmp_path: Path, **env: str) -> list[str]:
    """Run the script with the stand-ins; the lines the stand-in python3 logged."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "calls.txt"
    (bin_dir / "python3").write_text(f'#!/bin/sh\necho "$*" >> {calls}\n')
    (bin_dir / "nvidia-smi").write_text("#!/bin/sh\necho fake-gpu\n")
    for tool in bin_dir.iterdir():
        tool.chmod(0o755)
    environment = {
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "OUT": str(tmp_path / "out"),
        "NCU_GRID": "none",
        **env,
    }
    bash = shutil.which("bash")
    assert bash is not None
    subprocess.run([bash, str(SCRIPT)], env=environment, check=True, capture_output=True)
    return calls.read_text().splitlines()


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_several_grids_each_with_its_own_lock(tmp_path: Path) -> None:
    calls = _run(tmp_path, GRID="energaizer_gemms@1830 h200_backward")
    measure = [c for c in calls if c.startswith("-m opmodel measure")]
    assert len(measure) == 2
    assert "--grid energaizer_gemms " in measure[0] and "--lock-sm-clock-mhz 1830" in measure[0]
    assert f"--output-dir {tmp_path / 'out' / 'energaizer_gemms'}" in measure[0]
    assert "--grid h200_backward " in measure[1] and "--lock-sm-clock-mhz" not in measure[1]


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_lock_mhz_applies_to_grids_that_name_none(tmp_path: Path) -> None:
    calls = _run(tmp_path, GRID="h200_kernels", LOCK_MHZ="1500")
    (measure,) = [c for c in calls if c.startswith("-m opmodel measure")]
    assert "--grid h200_kernels " in measure and "--lock-sm-clock-mhz 1500" in measure


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_grid_none_and_the_chase(tmp_path: Path) -> None:
    calls = _run(tmp_path, GRID="none", CHASE="1")
    assert not [c for c in calls if c.startswith("-m opmodel measure")]
    assert any("scripts/pointer_chase.py --output" in c for c in calls)
