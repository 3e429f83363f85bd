"""scripts/issue_energy_experiment.py: energy per issued instruction, fitted on FlagPerf's A100
40GB argmax rows and checked on the rest and on the H200's metered kernels (docs/validation.md,
"Energy per issued instruction")."""

from __future__ import annotations

import pytest

from tests.scripts.loader import load_script

script = load_script("issue_energy_experiment")


def test_issue_slot_energy_by_hand() -> None:
    # (400 - 67.34) W at the FP32 peak, spread over 108 SMs x 4 SMSPs x 32 lanes x 1.41 GHz
    spec = script.load_hardware("a100_40gb_sxm")
    assert script.slot_energy_j(spec) == pytest.approx(1.706e-11 * 19.5e12 / (108 * 128 * 1.41e9))


def test_uncounted_rows_keep_their_shipped_energy() -> None:
    rows = script.flagperf_rows()
    scalar = [r for r in rows if r.label.split(":")[0] in ("mul", "div")]
    assert len(scalar) == 6 and all(r.instructions == 0 for r in scalar)
    assert all(script.energy_at(r, 0.7, 1.7e-11) == r.shipped for r in scalar)
    # an fp16 argmax over 81,920^2: 19.5 counted instructions an element on sm_80; sub runs
    # the add's kernel (6.25 an element in 16 bits)
    argmax = next(r for r in rows if r.label == "argmax:flagperf:fp16:81920x81920")
    assert argmax.instructions == 19.5 * 81920 * 81920
    sub = next(r for r in rows if r.label == "sub:flagperf:fp16:1024x1024x1024")
    assert sub.instructions == 6.25 * 2**30


def test_fit_and_the_figures_the_docs_quote() -> None:
    """k 0.681 on the argmax rows; held out on FlagPerf the elementwise rows 8.9 % -> 3.8 % and
    the reductions 7.0 % -> 5.8 %; on the H200's metered kernels the sigmoid and SiLU rows go
    from 0.97-0.98x to 1.34-1.36x, so the variant is not adopted."""
    a100 = script.load_hardware("a100_40gb_sxm")
    rows = script.flagperf_rows()
    k = script.fit_k(rows, script.slot_energy_j(a100))
    assert k == pytest.approx(0.681, abs=0.0005)
    held = script.held_out_flagperf(rows)
    shipped = script.summary(held, None, script.slot_energy_j(a100))
    fitted = script.summary(held, k, script.slot_energy_j(a100))
    assert shipped["elementwise"][:2] == (12, pytest.approx(8.9, abs=0.05))
    assert fitted["elementwise"][1] == pytest.approx(3.8, abs=0.05)
    assert fitted["reduction"][:2] == (15, pytest.approx(5.8, abs=0.05))
    h200 = script.summary(
        script.h200_rows(), k, script.slot_energy_j(script.load_hardware("h200_sxm"))
    )
    assert h200["elementwise/sigmoid"][2] == pytest.approx(1.36, abs=0.005)
    assert h200["elementwise/silu"][2] == pytest.approx(1.34, abs=0.005)
