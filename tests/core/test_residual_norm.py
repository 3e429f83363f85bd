"""Row ops with a fused residual add (tensors tagged layout ``residual``): the view, the work,
the one-line errors, and how the kernel models treat them (docs/op_files.md)."""

from __future__ import annotations

import pytest

from opmodel import LocalOp, TensorSpec, backward_of
from opmodel.core.errors import OpValidationError
from opmodel.core.views import RESIDUAL, RowView
from opmodel.formulas.work import op_work
from opmodel.hardware import load_hardware
from opmodel.models import get_model

X = TensorSpec("input", (64, 1024), "bf16")
R = TensorSpec("input", (64, 1024), "bf16", RESIDUAL)
W = TensorSpec("weight", (1024,), "bf16")
Y = TensorSpec("output", (64, 1024), "bf16")
S = TensorSpec("output", (64, 1024), "bf16", RESIDUAL)


def _norm(*tensors: TensorSpec, kind: str = "rmsnorm", **attrs: object) -> LocalOp:
    return LocalOp(name="n", kind=kind, phase="prefill", tensors=tensors, attrs=attrs)  # type: ignore[arg-type]


def test_view_and_work_count_the_residual() -> None:
    """x and the residual read, the sum and the norm written: 4 x 128 KiB plus the weight;
    one more FLOP per element for the add than the plain norm."""
    fused, plain = _norm(X, R, W, Y, S), _norm(X, W, Y)
    view = fused.view
    assert isinstance(view, RowView) and view.residual == (R, S)
    assert (view.rows, view.row_length, view.x, view.y) == (64, 1024, X, Y)
    work, base = op_work(fused), op_work(plain)
    assert work.read_bytes == 2 * 64 * 1024 * 2 + 1024 * 2
    assert work.write_bytes == 2 * 64 * 1024 * 2
    assert work.vector_flops - base.vector_flops == 64 * 1024


@pytest.mark.parametrize(
    ("tensors", "kind", "message"),
    [
        ((X, R, W, Y), "rmsnorm", "takes one input and one output with layout 'residual'"),
        ((X, R, Y, S), "softmax", "a fused residual add (rmsnorm, layernorm)"),
        (
            (X, TensorSpec("input", (64, 512), "bf16", RESIDUAL), W, Y, S),
            "rmsnorm",
            "residual [64, 512] must have as many elements as x [64, 1024]",
        ),
        ((R, W, Y, S), "rmsnorm", "needs exactly one input tensor (x), got 0"),
    ],
)
def test_malformed_residuals_are_one_line_errors(
    tensors: tuple[TensorSpec, ...], kind: str, message: str
) -> None:
    with pytest.raises(OpValidationError) as info:
        _norm(*tensors, kind=kind)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_kernel_models_take_fused_and_vllm_kernels_not_aten() -> None:
    h100, model = load_hardware("h100_sxm"), get_model("effective_roofline")
    fused = model.predict(_norm(X, R, W, Y, S), h100)
    plain = model.predict(_norm(X, W, Y), h100)
    assert fused.latency_s > plain.latency_s  # twice the rows' bytes
    vllm = model.predict(_norm(X, R, W, Y, S, implementation="vllm"), h100)
    assert vllm.diagnostics.kernel.name == "fused_add_rms_norm_kernel"  # type: ignore[union-attr]
    with pytest.raises(OpValidationError, match="ATen has no rmsnorm with a fused residual add"):
        model.predict(_norm(X, R, W, Y, S, implementation="pytorch"), h100)
    # the roofline takes any: it counts bytes and FLOPs
    assert get_model("roofline").predict(_norm(X, R, W, Y, S), h100).latency_s > 0
    with pytest.raises(OpValidationError, match="backward_of a fused residual add"):
        backward_of(_norm(X, R, W, Y, S))
