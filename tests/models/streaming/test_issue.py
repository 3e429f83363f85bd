"""The instruction-issue calibration: the shipped file, malformed ones and the key an op is
listed under (the bound itself is tested in test_streaming.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from opmodel import DType, LocalOp, OpKind, Phase, TensorRole, TensorSpec
from opmodel.models.streaming.issue import (
    CALIBRATION_FILE,
    instructions_per_element,
    issue_key,
    load_issue_calibration,
    stall_factor,
)
from tests.config_errors import assert_one_line_error


def test_shipped_calibration_names_its_training_rows() -> None:
    calibration = load_issue_calibration(CALIBRATION_FILE)
    assert calibration.hardware == "a100_80gb_sxm" and calibration.source == "vidur"
    assert instructions_per_element("pytorch", "gelu") > 0
    # ATen's LayerNorm is counted from its SASS: the file holds its stall factor, not I
    assert instructions_per_element("pytorch", "layernorm") == 0.0
    assert stall_factor("pytorch", "layernorm") > 1.0
    assert stall_factor("pytorch", "gelu") == 1.0  # none fitted
    assert instructions_per_element("vllm", "rope") > 0
    assert instructions_per_element("vllm", "rmsnorm") > 0
    assert instructions_per_element("pytorch", "add") == 0.0  # left out: no issue bound
    assert instructions_per_element("vllm", "gelu") == 0.0  # never fitted
    assert calibration.is_training_row("a100_80gb_sxm", "vidur", "pytorch", "gelu")
    assert not calibration.is_training_row("h100_sxm", "vidur", "pytorch", "gelu")
    assert not calibration.is_training_row("a100_80gb_sxm", "liger", "pytorch", "layernorm")
    assert not calibration.is_training_row("a100_80gb_sxm", "vidur", "pytorch", "add")
    assert calibration.is_training_row("a100_80gb_sxm", "vidur", "pytorch", "layernorm")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("fitted_on: {hardware: a, source: b}\n", "needs the fields"),
        (
            "fitted_on: {hardware: a}\ninstructions_per_element: {}\n",
            "fitted_on: needs string fields hardware, source",
        ),
        (
            "fitted_on: {hardware: a, source: b}\ninstructions_per_element: {cuda: {gelu: 3}}\n",
            "instructions_per_element.cuda: unknown implementation (one of fused, vllm, pytorch)",
        ),
        (
            "fitted_on: {hardware: a, source: b}\n"
            "instructions_per_element: {pytorch: {gelu: -1}}\n",
            "instructions_per_element.pytorch.gelu: must be a finite number >= 0 (got -1)",
        ),
        (
            "fitted_on: {hardware: a, source: b}\ninstructions_per_element: {}\n"
            "stall_factor: {pytorch: {layernorm: .inf}}\n",
            "stall_factor.pytorch.layernorm: must be a finite number >= 0 (got inf)",
        ),
        (
            "fitted_on: {hardware: a, source: b}\ninstructions_per_element: {}\n"
            "stall_factor: [1]\n",
            "stall_factor: must be a mapping of implementation to functions",
        ),
    ],
)
def test_malformed_calibration_is_a_one_line_error(tmp_path: Path, text: str, message: str) -> None:
    assert_one_line_error(load_issue_calibration, tmp_path, text, message)


def test_issue_key_is_the_function_else_the_kind() -> None:
    shape = (8, 64)

    def op(kind: OpKind, **attrs: str) -> LocalOp:
        return LocalOp(
            name="x",
            kind=kind,
            phase=Phase.PREFILL,
            tensors=(
                TensorSpec(TensorRole.INPUT, shape, DType.FP16),
                TensorSpec(TensorRole.OUTPUT, shape, DType.FP16),
            ),
            attrs=attrs,
        )

    assert issue_key(op(OpKind.ELEMENTWISE, function="gelu")) == "gelu"
    assert issue_key(op(OpKind.ELEMENTWISE)) == "elementwise"
    assert issue_key(op(OpKind.SOFTMAX)) == "softmax"
