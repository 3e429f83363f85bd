"""scripts/write_mix_experiment.py: the read/write mix factor by hand, and the penalty slowing
a mixed stream while leaving a pure read alone."""

from __future__ import annotations

import pytest

from opmodel import LocalOp, TensorSpec
from opmodel.hardware import load_hardware
from opmodel.models import get_model
from tests.scripts.loader import load_script


def test_mix_factor_peaks_at_an_even_mix() -> None:
    factor = load_script("write_mix_experiment").mix_factor
    assert factor(1.0, 0.0, 0.1) == 1.0 == factor(0.0, 1.0, 0.1)  # only reads, only writes
    assert factor(1.0, 1.0, 0.1) == pytest.approx(1.1)  # w = 1/2: 4 w (1 - w) = 1
    assert factor(2.0, 1.0, 0.1) == pytest.approx(1 + 0.1 * 8 / 9)  # an add: w = 1/3
    assert factor(0.0, 0.0, 0.1) == 1.0


def test_penalty_slows_an_add_and_not_a_sum() -> None:
    script = load_script("write_mix_experiment")
    evaluate = script.streaming_evaluate
    model, hardware = get_model("effective_roofline"), load_hardware("a100_40gb_sxm")
    n = 2**28

    def ops() -> tuple[LocalOp, LocalOp]:
        x = TensorSpec("input", (n,), "fp32")
        add = (x, TensorSpec("input", (n,), "fp32"), TensorSpec("output", (n,), "fp32"))
        total = (x, TensorSpec("output", (1,), "fp32"))
        return (
            LocalOp(
                name="add",
                kind="elementwise",
                phase="inference",
                tensors=add,
                attrs={"function": "add"},
            ),
            LocalOp(name="sum", kind="reduction", phase="inference", tensors=total),
        )

    shipped = [model.predict(op, hardware).latency_s for op in ops()]
    evaluate._bounds = script._with_penalty(0.1)
    try:
        penalised = [model.predict(op, hardware).latency_s for op in ops()]
    finally:
        evaluate._bounds = script._SHIPPED_BOUNDS
    assert penalised[0] > shipped[0] * 1.02
    assert penalised[1] == pytest.approx(shipped[1], rel=1e-3)  # 4 bytes written of 1 GiB


def test_penalty_out_of_range_is_one_line() -> None:
    with pytest.raises(SystemExit, match=r"--penalty: each must be in \[0, 1\)"):
        load_script("write_mix_experiment").main(["--penalty", "1.5"])
