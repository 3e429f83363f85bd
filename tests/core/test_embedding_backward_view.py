"""The embedding backward op's view: one-line errors for a wrong phase, shapes, dtypes and
attrs (docs/op_files.md)."""

from __future__ import annotations

import pytest

from opmodel import DType, LocalOp, OpKind, TensorRole, TensorSpec, ops
from opmodel.core.errors import OpValidationError


def _op(tensors: tuple[TensorSpec, ...], phase: str = "train_bwd", **attrs: object) -> LocalOp:
    return LocalOp(name="e", kind=OpKind.EMBEDDING, phase=phase, tensors=tensors, attrs=attrs)  # type: ignore[arg-type]


_IDX = TensorSpec(TensorRole.INPUT, (8, 16), DType.INT64)
_DY = TensorSpec(TensorRole.GRAD, (8, 16, 64), DType.BF16)
_DW = TensorSpec(TensorRole.OUTPUT, (100, 64), DType.BF16)


@pytest.mark.parametrize(
    ("tensors", "phase", "attrs", "message"),
    [
        ((_IDX, _DY, _DW), "prefill", {}, "phase must be train_bwd"),
        ((_IDX, TensorSpec(TensorRole.GRAD, (8, 64), DType.BF16), _DW), "train_bwd", {},
         r"dy must be \[\*indices.shape, 64\]"),
        ((_IDX, _DY, TensorSpec(TensorRole.OUTPUT, (6400,), DType.BF16)), "train_bwd", {},
         r"dw must be \[vocab, hidden\]"),
        ((_IDX, _DY, TensorSpec(TensorRole.OUTPUT, (100, 64), DType.FP32)), "train_bwd", {},
         "dy and dw must share one float dtype"),
        ((TensorSpec(TensorRole.INPUT, (8, 16), DType.FP16), _DY, _DW), "train_bwd", {},
         "indices must have an integer dtype"),
        ((_IDX, _DY, _DW, TensorSpec(TensorRole.WEIGHT, (100, 64), DType.BF16)), "train_bwd", {},
         "role weight not accepted"),
        ((_IDX, _DY, _DW), "train_bwd", {"distinct_indices": 101},
         r"distinct_indices must be at most min\(tokens, vocab\) = 100"),
        ((_IDX, _DY, _DW), "train_bwd", {"warm_l2": True}, "attr warm_l2 is not modelled"),
    ],
)  # fmt: skip
def test_bad_backward_ops_are_one_line_errors(
    tensors: tuple[TensorSpec, ...], phase: str, attrs: dict[str, object], message: str
) -> None:
    with pytest.raises(OpValidationError, match=message) as caught:
        _op(tensors, phase, **attrs)
    assert "\n" not in str(caught.value)


def test_distinct_indices_on_a_forward_gather_is_an_error() -> None:
    with pytest.raises(OpValidationError, match="backward pass only"):
        ops.embedding(16, 100, 64, phase="train_fwd", distinct_indices=4)
