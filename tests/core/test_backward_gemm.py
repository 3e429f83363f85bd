"""gemm_backward_of: the input and weight gradient GEMMs of a forward GEMM, batched GEMM or
grouped GEMM, checked by hand: each does the forward's FLOPs, reads the incoming gradient and
writes its gradient in the layout its operand is stored in."""

from __future__ import annotations

import itertools

import pytest

from opmodel import DType, LocalOp, OpKind, Phase, TensorSpec, gemm_backward_of
from opmodel.core.errors import OpValidationError
from opmodel.core.views import GemmView
from opmodel.formulas.work import op_work

M, N, K, BATCH = 96, 80, 64, 3


def _forward(kind: OpKind, ta: bool, tb: bool, broadcast: bool) -> LocalOp:
    lead = (BATCH,) if kind is OpKind.BATCHED_GEMM else ()
    a = (*lead, K, M) if ta else (*lead, M, K)
    b_lead = () if broadcast else lead
    b = (*b_lead, N, K) if tb else (*b_lead, K, N)
    return LocalOp(
        name="proj",
        kind=kind,
        phase=Phase.TRAIN_FWD,
        tensors=(
            TensorSpec("input", a, DType.BF16),
            TensorSpec("weight", b, DType.BF16),
            TensorSpec("output", (*lead, M, N), DType.FP32),
        ),
        attrs={"transpose_a": ta, "transpose_b": tb, "compute_dtype": "bf16"},
    )


_CASES = [
    (kind, ta, tb, broadcast)
    for kind, ta, tb, broadcast in itertools.product(
        (OpKind.GEMM, OpKind.BATCHED_GEMM), (False, True), (False, True), (False, True)
    )
    if not (broadcast and (kind is OpKind.GEMM or ta))
]


@pytest.mark.parametrize(("kind", "ta", "tb", "broadcast"), _CASES)
def test_each_gradient_does_the_forwards_flops_in_its_operands_layout(
    kind: OpKind, ta: bool, tb: bool, broadcast: bool
) -> None:
    forward = _forward(kind, ta, tb, broadcast)
    a, b, c = forward.tensors
    d_a, d_b = gemm_backward_of(forward)
    flops = op_work(forward).matmul_flops
    assert (
        op_work(d_a).matmul_flops
        == op_work(d_b).matmul_flops
        == flops
        == 2 * BATCH ** (kind is OpKind.BATCHED_GEMM) * M * N * K
    )
    assert (d_a.name, d_b.name) == ("proj:input_grad", "proj:weight_grad")
    assert d_a.phase is d_b.phase is Phase.TRAIN_BWD
    # each writes its operand's gradient as the operand is stored, in the operand's dtype
    assert (d_a.tensors[2].shape, d_a.tensors[2].dtype) == (a.shape, a.dtype)
    assert (d_b.tensors[2].shape, d_b.tensors[2].dtype) == (b.shape, b.dtype)
    # and reads the incoming gradient dC (C's dtype; flattened over the batch for a broadcast B)
    assert any(t.dtype is DType.FP32 and t.shape == c.shape for t in d_a.tensors[:2])
    flat = (BATCH * M, N) if broadcast else c.shape
    assert any(t.dtype is DType.FP32 and t.shape == flat for t in d_b.tensors[:2])
    assert d_b.kind is (OpKind.GEMM if broadcast else kind)
    assert d_a.attrs["compute_dtype"] == "bf16"


def test_an_experts_gradients_are_grouped_along_m_and_along_k() -> None:
    """Forward: 32 rows over 3 experts (10, 0, 22), W [3, N, K] stored as a linear layer's.
    dX [32, K] grouped along M by the same sizes; dW [3, N, K] grouped along K."""
    forward = LocalOp(
        name="experts",
        kind=OpKind.GROUPED_GEMM,
        phase=Phase.TRAIN_FWD,
        tensors=(
            TensorSpec("input", (32, K), DType.BF16),
            TensorSpec("weight", (3, N, K), DType.BF16),
            TensorSpec("output", (32, N), DType.BF16),
        ),
        attrs={"transpose_b": True, "group_sizes": [10, 0, 22]},
    )
    d_x, d_w = gemm_backward_of(forward)
    for grad in (d_x, d_w):
        assert op_work(grad).matmul_flops == 2 * 32 * N * K
        assert grad.attrs["group_sizes"] == (10, 0, 22)
    x_view, w_view = d_x.view, d_w.view
    assert isinstance(x_view, GemmView) and isinstance(w_view, GemmView)
    assert not x_view.groups_along_k and w_view.groups_along_k
    assert [t.shape for t in d_x.tensors] == [(32, N), (3, N, K), (32, K)]
    assert [t.shape for t in d_w.tensors] == [(32, N), (32, K), (3, N, K)]
    with pytest.raises(OpValidationError, match="is a weight gradient already"):
        gemm_backward_of(d_w)


def test_what_has_no_backward_gemms_is_one_line() -> None:
    norm = LocalOp(
        name="norm",
        kind=OpKind.RMSNORM,
        phase=Phase.TRAIN_FWD,
        tensors=(TensorSpec("input", (4, 8), "bf16"), TensorSpec("output", (4, 8), "bf16")),
    )
    with pytest.raises(OpValidationError) as error:
        gemm_backward_of(norm)
    assert str(error.value) == (
        "op 'norm' (rmsnorm): has no backward GEMMs (kinds with them: gemm, batched_gemm, "
        "grouped_gemm)"
    )
    with pytest.raises(OpValidationError, match="needs A's rows contiguous"):
        gemm_backward_of(_forward(OpKind.BATCHED_GEMM, True, False, True))
