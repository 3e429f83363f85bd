"""scripts/derive_power_limited_clock.py: the held-out clock-sweep check it prints."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.scripts.loader import load_script

REPO = Path(__file__).resolve().parents[2]


def test_held_out_sweep_check(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/validation.md, "The board's power limit on the sweep": 58 runs from 1140 MHz; the
    derived limit takes time from 16.7 % to 14.3 % MAPE against the locked clock without it,
    and energy from 12.2 % to 15.4 %."""
    script = load_script("derive_power_limited_clock")
    script.held_out_check(REPO / "data/energaizer", "a100_40gb_pcie", 1.02599e9, 1140.0)
    rows = {
        line.split("  all ")[0].strip(): line.split("n= 58")[1].split()
        for line in capsys.readouterr().out.splitlines()
        if "  all " in line
    }
    assert rows == {
        "at the clock NVML read": ["15.4", "%", "0.859", "14.8", "%", "0.854"],
        "locked clock, no limit": ["16.7", "%", "0.846", "12.2", "%", "0.881"],
        "locked clock, limit 1026 MHz": ["14.3", "%", "0.870", "15.4", "%", "0.848"],
    }
