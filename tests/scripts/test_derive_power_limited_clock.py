"""scripts/derive_power_limited_clock.py: the held-out clock-sweep check it prints."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.scripts.loader import load_script

REPO = Path(__file__).resolve().parents[2]


def test_held_out_sweep_check(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/validation.md, "The board's power limit on the sweep": 58 runs from 1140 MHz; the
    derived limit takes time from 13.5 % to 10.3 % MAPE against the locked clock without it,
    and energy from 12.0 % to 16.1 %."""
    script = load_script("derive_power_limited_clock")
    script.held_out_check(REPO / "data/energaizer", "a100_40gb_pcie", 9.8127e8, 1140.0)
    rows = {
        line.split("  all ")[0].strip(): line.split("n= 58")[1].split()
        for line in capsys.readouterr().out.splitlines()
        if "  all " in line
    }
    assert rows == {
        "at the clock NVML read": ["12.1", "%", "0.878", "14.7", "%", "0.850"],
        "locked clock, no limit": ["13.5", "%", "0.864", "12.0", "%", "0.880"],
        "locked clock, limit 981 MHz": ["10.3", "%", "0.897", "16.1", "%", "0.837"],
    }
