"""scripts/sustained_bandwidth.py on a measured op table with copy rows (by hand)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from opmodel.hardware import load_hardware
from tests.scripts.loader import load_script

HEADER = "name,kind,phase,tensors,attrs,time,hardware,clock_mhz,source,implementation,label\n"


def _script() -> ModuleType:
    return load_script("sustained_bandwidth")


@pytest.fixture
def measured(tmp_path: Path) -> Path:
    """Two H200 copies: 1 GiB x 2 at 80 % of the peak, 1 MiB x 2 (within L2) at 50 %; a norm."""
    peak = load_hardware("h200_sxm").hbm.bandwidth_bytes_per_s
    big, small = 2**30, 2**20
    rows = [
        (f"input:{big // 2}x1:bf16;output:{big // 2}x1:bf16", 2 * big / (0.8 * peak)),
        (f"input:{small // 2}x1:bf16;output:{small // 2}x1:bf16", 2 * small / (0.5 * peak)),
    ]
    lines = [
        f"copy,copy,prefill,{t},,{s * 1e3!r},h200_sxm,,m,pytorch,c{i}\n"
        for i, (t, s) in enumerate(rows)
    ]
    lines.append(
        "rms,rmsnorm,prefill,input:8x4096:bf16;weight:4096:bf16;output:8x4096:bf16,,0.01,h200_sxm,,m,pytorch,n\n"
    )
    (tmp_path / "ops.csv").write_text(HEADER + "".join(lines))
    return tmp_path


def test_copy_rows_give_the_sustained_share(
    measured: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = _script()
    assert script.main(["--data-dir", str(measured)]) == 0
    out = capsys.readouterr().out
    assert "80.0%" in out and "50.0%" in out and "fits L2's reach" in out
    assert "h200_sxm: sustained 0.800 of the HBM peak (median of 1 copies)" in out


def test_no_copy_rows_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "ops.csv").write_text(
        HEADER
        + "rms,rmsnorm,prefill,input:8x64:bf16;weight:64:bf16;output:8x64:bf16,,0.01,h200_sxm,,m,p,n\n"
    )
    with pytest.raises(SystemExit, match="no copy rows"):
        _script().main(["--data-dir", str(tmp_path)])
