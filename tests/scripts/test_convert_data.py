"""scripts/convert_gemm_data.py and convert_op_data.py: a --shared-dir without the sources ends
in one line, before anything is written (a wrong folder once left empty Vidur tables)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


@pytest.mark.parametrize("name", ["convert_gemm_data", "convert_op_data"])
def test_missing_sources_are_one_line_and_write_nothing(name: str, tmp_path: Path) -> None:
    shared, out = tmp_path / "shared", tmp_path / "out"
    (shared / "vidur_profiling/data/profiling/compute").mkdir(parents=True)  # one source only
    result = subprocess.run(
        [
            sys.executable,
            str(SCRIPTS / f"{name}.py"),
            "--shared-dir",
            str(shared),
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{name}: --shared-dir {shared}: no ")
    assert not out.exists()
