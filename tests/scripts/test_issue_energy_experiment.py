"""scripts/issue_energy_experiment.py: energy per issued instruction against FlagPerf's A100
40GB board power (docs/validation.md, "ATen reductions and elementwise ops")."""

from __future__ import annotations

import pytest

from tests.scripts.loader import load_script

script = load_script("issue_energy_experiment")


def test_issue_slot_energy_by_hand() -> None:
    # (400 - 67.34) W over 108 SMs x 4 SMSPs x 32 lanes x 1.41 GHz = 17.07 pJ a lane-slot
    spec = script.load_hardware("a100_40gb_sxm")
    assert script.issue_energy_j(spec) == pytest.approx(332.66 / (108 * 128 * 1.41e9))


def test_uncounted_rows_keep_their_flop_energy() -> None:
    table = script.rows()
    scalar = [r for r in table if r.label.split(":")[0] in ("mul", "div")]
    assert len(scalar) == 6 and all(r.instructions == 0 for r in scalar)
    assert all(script.with_issue(r, 0.7, 1.7e-11) == r.shipped for r in scalar)
    # an fp16 argmax over 81,920^2: 19.5 counted instructions an element on sm_80
    argmax = next(r for r in table if r.label == "argmax:flagperf:fp16:81920x81920")
    assert argmax.instructions == 19.5 * 81920 * 81920


def test_fitted_k_and_its_held_out_rows() -> None:
    """The figures docs/validation.md quotes: k 0.68 on the three argmax rows; held out, the
    12 elementwise rows 8.9 % -> 3.8 %, the 15 reductions 7.0 % -> 5.8 %."""
    spec = script.load_hardware("a100_40gb_sxm")
    e, table = script.issue_energy_j(spec), script.rows()
    k = script.fit_k(table, e)
    assert k == pytest.approx(0.681, abs=0.005)
    shipped = script.held_out(table, None, e, "elementwise")
    fitted = script.held_out(table, k, e, "elementwise")
    assert shipped[0] == fitted[0] == 12
    assert shipped[1] == pytest.approx(8.9, abs=0.05) and fitted[1] == pytest.approx(3.8, abs=0.05)
    assert script.held_out(table, k, e, "reduction")[1] == pytest.approx(5.8, abs=0.05)
