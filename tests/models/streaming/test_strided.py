"""Strided views (layout ``strided``): an elementwise input whose rows are not adjacent, one
half of ``torch.chunk(y, 2, -1)``. ATen runs such an op as its non-contiguous kernel; the
view's innermost dimension merges with none (hand-derived dimensions), its bytes are its
elements', and the tag is refused where it means nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from opmodel import DType, LocalOp, OpKind, OpValidationError, Phase, TensorRole, TensorSpec, ops
from opmodel.core.views import ElementwiseView
from opmodel.models.streaming.aten_broadcast import (
    BROADCAST_KERNEL,
    broadcast_instructions,
    broadcast_issue_cost,
    coalesced_dims,
)
from opmodel.models.streaming.evaluate import StreamingEvaluation
from opmodel.parsing import load_op
from tests.models.streaming.ops import H100, MODEL


@pytest.mark.parametrize(
    ("output", "inputs", "strided", "dims"),
    [
        ((8192, 4096), ((8192, 4096),), (True,), 2),  # rows 2 x 4096 apart: no merge
        ((8192, 4096), ((8192, 4096),), (False,), 1),  # contiguous: one dimension
        ((2048, 4, 4096), ((2048, 4, 4096),), (True,), 2),  # S x B merge, F stays apart
        ((8192, 4096), ((8192, 4096), (8192, 4096)), (False, True), 2),  # one strided operand
        ((64, 1, 32), ((64, 1, 32),), (True,), 2),  # size-1 dimensions dropped first
    ],
)
def test_coalesced_dims_of_strided_views(
    output: tuple[int, ...],
    inputs: tuple[tuple[int, ...], ...],
    strided: tuple[bool, ...],
    dims: int,
) -> None:
    assert coalesced_dims(output, inputs, strided) == dims


def test_silu_of_a_strided_half_takes_the_non_contiguous_kernel() -> None:
    """SiLU's count (PyTorch 2.14.1's sm_90 SASS, bf16): 41.3333 + 12 per dimension; a
    strided view moves the contiguous op's bytes and takes longer (one round trip an element,
    its offsets in the chain)."""
    assert broadcast_instructions("sm90", DType.BF16, "silu", 2) == pytest.approx(41.3333 + 24)
    assert broadcast_instructions("sm80", DType.BF16, "silu", 1) == pytest.approx(37.3333 + 9)
    half = ops.elementwise("silu", (2048, 4, 4096), strided_inputs=[0])
    assert [t.layout for t in half.tensors] == ["strided", None]
    view = half.view
    assert isinstance(view, ElementwiseView)
    assert broadcast_issue_cost(view, "sm90") == pytest.approx(41.3333 + 24)
    strided = MODEL.predict(half, H100).diagnostics
    contiguous = MODEL.predict(ops.elementwise("silu", (2048, 4, 4096)), H100).diagnostics
    assert isinstance(strided, StreamingEvaluation) and isinstance(contiguous, StreamingEvaluation)
    assert strided.kernel.name == BROADCAST_KERNEL
    assert contiguous.kernel.name == "vectorized_elementwise_kernel"
    assert strided.dram_read_bytes == contiguous.dram_read_bytes
    assert strided.latency_s > contiguous.latency_s
    # Liger's fused kernels read rows of any stride: the tag does not change them
    fused = ops.elementwise("silu", (8192, 4096), strided_inputs=[0], implementation="fused")
    plain = ops.elementwise("silu", (8192, 4096), implementation="fused")
    assert MODEL.predict(fused, H100).latency_s == MODEL.predict(plain, H100).latency_s


def _op(kind: OpKind, x_layout: str | None, y_layout: str | None, x: tuple[int, ...]) -> LocalOp:
    tensors = (
        TensorSpec(TensorRole.INPUT, x, DType.BF16, x_layout),
        TensorSpec(TensorRole.OUTPUT, (8, 16), DType.BF16, y_layout),
    )
    attrs = {"function": "silu"} if kind is OpKind.ELEMENTWISE else {}
    return LocalOp(name="x", kind=kind, phase=Phase.INFERENCE, tensors=tensors, attrs=attrs)


@pytest.mark.parametrize(
    ("kind", "x_layout", "y_layout", "x", "message"),
    [
        (OpKind.ELEMENTWISE, None, "strided", (8, 16), "the output is written contiguously"),
        (OpKind.ELEMENTWISE, "strided", None, (16,), r"needs the output's shape \[8, 16\]"),
        (OpKind.SOFTMAX, "strided", None, (8, 16), "layout strided is for an elementwise op"),
    ],
)
def test_the_tag_where_it_means_nothing_is_an_error(
    kind: OpKind, x_layout: str | None, y_layout: str | None, x: tuple[int, ...], message: str
) -> None:
    with pytest.raises(OpValidationError, match=message):
        _ = _op(kind, x_layout, y_layout, x).view


def test_strided_inputs_argument_errors() -> None:
    for bad in ([2], [True], "0", [0, 0], [-1]):
        with pytest.raises(OpValidationError, match=r"ops\.elementwise: strided_inputs must"):
            ops.elementwise("mul", (8, 4), strided_inputs=bad)  # type: ignore[arg-type]


def test_an_op_file_tags_a_strided_input(tmp_path: Path) -> None:
    path = tmp_path / "swiglu_half.yaml"
    path.write_text(
        "name: silu_half\nkind: elementwise\nphase: train_fwd\n"
        "tensors:\n"
        "  - {role: input, shape: [8192, 4096], dtype: bf16, layout: strided}\n"
        "  - {role: output, shape: [8192, 4096], dtype: bf16}\n"
        "attrs: {function: silu}\n"
    )
    op = load_op(path)
    assert op == ops.elementwise("silu", (8192, 4096), strided_inputs=[0], name="silu_half",
                                 phase="train_fwd")  # fmt: skip
