"""scripts/clock_by_activity.py: the H200's measured clock against tensor activity."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from opmodel.validation.gemm_data import load_gemm_rows
from tests.scripts.loader import load_script

DATA = Path(__file__).resolve().parents[2] / "data" / "measured"


def test_share_fit_recovers_a_synthetic_law() -> None:
    """Clocks made by ``f = 1400 ((1 - 0.4) u + 0.4)^(-1/3)`` give back s = 0.40, f1 = 1400."""
    script = load_script("clock_by_activity")
    points = [(u, 1400 * (0.6 * u + 0.4) ** (-1 / 3)) for u in (0.35, 0.5, 0.65, 0.8, 0.95)]
    s, f1, rms = script.fit_share(points)
    assert s == pytest.approx(0.40) and f1 == pytest.approx(1400) and rms < 1e-9
    s0, f1_law, _ = script.fit_share_at(points, 0.0)
    assert s0 == 0.0 and f1_law < 1400


def test_h200_clocks_rise_more_slowly_than_the_cube_root_law(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """docs/validation.md: 318 rows; s = 0.57, f1 = 1423 MHz, a smaller spread than s = 0."""
    script = load_script("clock_by_activity")
    points = script.activities(load_gemm_rows(DATA).rows, "h200_sxm", 10.0)
    points = [(u, f) for u, f in points if u > 0.3 and f < 1979]
    assert len(points) == 318
    s, f1, rms = script.fit_share(points)
    assert s == pytest.approx(0.57) and math.isclose(f1, 1423, abs_tol=1)
    assert rms < script.fit_share_at(points, 0.0)[2]
    assert script.main(["--data-dir", str(DATA)]) == 0
    assert "fit: s = 0.57, f1 = 1423 MHz" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="--min-gflop must be 0 or more"):
        script.main(["--data-dir", str(DATA), "--min-gflop", "-1"])
    with pytest.raises(SystemExit, match="no power_limited_clock_hz"):
        script.main(["--data-dir", str(DATA), "--hardware", "l40s"])
