"""Backward passes of the row ops (softmax, layernorm, rmsnorm with a grad dy): the op
convention and its errors, FLOPs, the kernel structures (hand-derived) and properties."""

from __future__ import annotations

import re

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from opmodel import DType, LocalOp, OpKind, OpValidationError, Phase, TensorRole, TensorSpec
from opmodel.core.errors import UnsupportedOpError
from opmodel.formulas.work import op_work
from opmodel.models import get_model
from opmodel.models.effective_roofline.row_backward_op import RowBackwardEvaluation
from opmodel.models.streaming.row_backward import (
    gamma_beta_launch,
    grad_input_kernel,
    partial_bytes,
    weight_grad_kernel,
)
from tests.hypothesis_budget import examples
from tests.models.streaming.ops import H100, MODEL

FP32 = DType.FP32


def backward(
    kind: OpKind,
    rows: int,
    length: int,
    *,
    weights: int = 0,
    grads: int = 0,
    implementation: str = "pytorch",
    phase: Phase = Phase.TRAIN_BWD,
) -> LocalOp:
    """x and dy in (with ``weights`` weight vectors), dx out (and ``grads`` weight gradients)."""
    shape, vector = (rows, length), (length,)
    tensors = (
        TensorSpec(TensorRole.INPUT, shape, FP32),
        TensorSpec(TensorRole.GRAD, shape, FP32),
        *(TensorSpec(TensorRole.WEIGHT, vector, FP32) for _ in range(weights)),
        TensorSpec(TensorRole.OUTPUT, shape, FP32),
        *(TensorSpec(TensorRole.OUTPUT, vector, FP32) for _ in range(grads)),
    )
    attrs = {"implementation": implementation}
    return LocalOp(name="bwd", kind=kind, phase=phase, tensors=tensors, attrs=attrs)


def forward(kind: OpKind, rows: int, length: int, weights: int = 0) -> LocalOp:
    shape = (rows, length)
    tensors = (
        TensorSpec(TensorRole.INPUT, shape, FP32),
        *(TensorSpec(TensorRole.WEIGHT, (length,), FP32) for _ in range(weights)),
        TensorSpec(TensorRole.OUTPUT, shape, FP32),
    )
    attrs = {"implementation": "pytorch"}
    return LocalOp(name="fwd", kind=kind, phase=Phase.TRAIN_FWD, tensors=tensors, attrs=attrs)


def test_views_and_flops_hand_derived() -> None:
    layernorm = backward(OpKind.LAYERNORM, 4, 8, weights=2, grads=2)
    view = layernorm.view
    assert view.backward and len(view.weights) == 2 and len(view.weight_grads) == 2
    assert (view.rows, view.row_length) == (4, 8)
    # (9 + 2 weights + 2 for dgamma + 1 for dbeta) x 32 elements
    assert op_work(layernorm).vector_flops == 14 * 32
    # x, dy, gamma, beta read (128 + 128 + 32 + 32 bytes); dx, dgamma, dbeta written
    assert (op_work(layernorm).read_bytes, op_work(layernorm).write_bytes) == (320, 192)
    rmsnorm = backward(OpKind.RMSNORM, 4, 8, weights=1, grads=1)
    assert op_work(rmsnorm).vector_flops == (6 + 1 + 2) * 32
    softmax = backward(OpKind.SOFTMAX, 4, 8)
    assert op_work(softmax).vector_flops == 4 * 32
    assert not forward(OpKind.LAYERNORM, 4, 8, 2).view.backward


@pytest.mark.parametrize(
    ("op", "message"),
    [
        (
            lambda: backward(OpKind.LAYERNORM, 4, 8, phase=Phase.TRAIN_FWD),
            "makes this the layernorm's backward pass: phase must be train_bwd (got train_fwd)",
        ),
        (
            lambda: backward(OpKind.RMSNORM, 4, 8, weights=1, grads=2),
            "rmsnorm writes at most 1 weight gradient(s) besides dx; got 2 more outputs",
        ),
        (
            lambda: backward(OpKind.SOFTMAX, 4, 8, grads=1),
            "softmax writes at most 0 weight gradient(s)",
        ),
    ],
)
def test_backward_convention_errors(op: object, message: str) -> None:
    with pytest.raises(OpValidationError, match=re.escape(message)):
        op()  # type: ignore[operator]


def test_backward_tensor_shape_errors() -> None:
    shape = (4, 8)
    x = TensorSpec(TensorRole.INPUT, shape, FP32)
    dx = TensorSpec(TensorRole.OUTPUT, shape, FP32)

    def op(*tensors: TensorSpec) -> LocalOp:
        return LocalOp(name="b", kind="layernorm", phase="train_bwd", tensors=tensors)  # type: ignore[arg-type]

    with pytest.raises(OpValidationError, match=re.escape("dy must be shaped as x [4, 8]")):
        op(x, TensorSpec(TensorRole.GRAD, (4, 4), FP32), dx)
    dy = TensorSpec(TensorRole.GRAD, shape, FP32)
    with pytest.raises(OpValidationError, match="needs exactly one output shaped as x"):
        op(x, dy, dx, dx)
    bad_grad = TensorSpec(TensorRole.OUTPUT, (7,), FP32)
    with pytest.raises(OpValidationError, match="must have row_length=8 elements"):
        op(x, dy, dx, bad_grad)
    with pytest.raises(OpValidationError, match="needs exactly one grad tensor"):
        op(x, dy, dy, dx)


def test_vllm_has_no_backward_kernels() -> None:
    op = backward(OpKind.RMSNORM, 64, 4096, weights=1, implementation="vllm")
    with pytest.raises(UnsupportedOpError, match="vLLM has no backward kernels"):
        MODEL.predict(op, H100)
    assert get_model("roofline").predict(op, H100).latency_s > 0


def test_kernel_structures_hand_derived() -> None:
    aten = grad_input_kernel(OpKind.LAYERNORM, "pytorch", 4096, 1024, 4)
    # a row per 128-thread CTA, vectors of 4: 1024 / 512 = 2 loads a pass, two passes, a
    # block reduction of each sum (the RMS variant's second only)
    assert (aten.name, aten.ctas, aten.threads_per_cta) == (
        "layer_norm_grad_input_kernel",
        4096,
        128,
    )
    assert (aten.serial_loads, aten.global_passes, aten.reductions) == (2, 2, 2)
    assert grad_input_kernel(OpKind.RMSNORM, "pytorch", 4096, 1024, 4).reductions == 1
    plan = weight_grad_kernel("fused", 4096, 1024, 132)
    assert plan.kernel.name == "sum of per-SM partials" and plan.read_elements == 132 * 1024
    assert (plan.partial_rows, plan.sum_kernel) == (0, None)
    # 132 SMs x 1024 columns x 4 bytes for each of dgamma and dbeta; none for ATen
    assert partial_bytes("fused", 4096, 1024, 132, 2) == 132 * 1024 * 4 * 2
    assert partial_bytes("pytorch", 4096, 1024, 132, 2) == 0
    fused = grad_input_kernel(OpKind.RMSNORM, "fused", 4096, 1024, 4)
    assert (fused.ctas, fused.global_passes, fused.reductions) == (4096, 1, 1)
    warp = grad_input_kernel(OpKind.SOFTMAX, "pytorch", 4096, 512, 4)
    assert (warp.name, warp.global_passes, warp.reductions) == ("softmax_warp_backward", 1, 1)


@pytest.mark.parametrize(
    ("rows", "length", "launch"),
    [
        # LaunchGammaBetaBackwardCUDAKernel's tiles by rows: under 64, 128, 256, and from 256;
        # launch = (block_y, rows_per_block, grid_y, partial)
        (63, 1024, (1, 8, 1, True)),
        (64, 1024, (8, 64, 1, False)),
        (255, 1024, (16, 128, 1, False)),
        (4096, 1024, (32, 256, 1, False)),
        # 65,536 rows is not more than 64 Ki: no split
        (65536, 1024, (32, 256, 1, False)),
        # split: 1,024 / 32 = 32 column blocks < 132 / 2; grid_y = min(32768 / 32, 131072 / 32)
        (131072, 1024, (1, 32, 1024, True)),
        # 4,096 / 32 = 128 column blocks, not under 66: no split
        (131072, 4096, (32, 256, 1, False)),
    ],
)
def test_gamma_beta_launch_as_aten(
    rows: int, length: int, launch: tuple[int, int, int, bool]
) -> None:
    got = gamma_beta_launch(rows, length, 132)
    assert (got.block_y, got.rows_per_block, got.grid_y, got.partial) == launch
    assert got.grid_x == length // 32


@pytest.mark.parametrize(
    ("rows", "length", "launch"),
    [
        # ROCm (an AMD architecture, 304 CUs): the simple kernel under 128 rows, one column
        # per thread of 256; launch = (block_x, block_y, rows_per_block, grid_x, grid_y)
        (127, 1024, (256, 1, 1, 4, 1)),
        (128, 1024, (64, 16, 128, 16, 1)),
        (4096, 1024, (64, 16, 256, 16, 1)),
        # split: 1,024 / 64 = 16 column blocks < 304 / 2; grid_y = min(32768 / 16, 131072 / 32)
        (131072, 1024, (64, 1, 32, 16, 2048)),
    ],
)
def test_gamma_beta_launch_on_rocm(
    rows: int, length: int, launch: tuple[int, int, int, int, int]
) -> None:
    got = gamma_beta_launch(rows, length, 304, "cdna3")
    assert (got.block_x, got.block_y, got.rows_per_block, got.grid_x, got.grid_y) == launch
    assert got.simple == (rows < 128)


def test_rocm_simple_kernel_hand_derived() -> None:
    simple = weight_grad_kernel("pytorch", 127, 1024, 304, "cdna3").kernel
    assert (simple.name, simple.ctas, simple.threads_per_cta) == (
        "GammaBetaBackwardSimpleCUDAKernel",
        4,
        256,
    )
    assert (simple.serial_loads, simple.l2_serial_loads, simple.reductions) == (127, 0, 0)


def test_gamma_beta_kernel_hand_derived() -> None:
    # Liger's H100 rows: 4,096 x 1,024 takes 32 CTAs of 32 x 32 threads, each walking the
    # 4,096 rows 256 at a time: 16 steps, each an L2 round trip (mean, rstd) and then one DRAM
    # round trip (8 rows of x and dy a thread, 16 loads in flight), one block reduction
    plan = weight_grad_kernel("pytorch", 4096, 1024, 132)
    kernel = plan.kernel
    assert kernel.name == "GammaBetaBackwardCUDAKernelTemplate"
    assert (kernel.ctas, kernel.threads_per_cta) == (32, 1024)
    assert (kernel.serial_loads, kernel.l2_serial_loads, kernel.reductions) == (16, 16, 1)
    assert kernel.elements_per_cta == 32 * 4096 and plan.read_elements == 4096 * 1024
    assert (plan.partial_rows, plan.sum_kernel) == (0, None)
    # the split path: 1,024 one-warp row blocks of 32 rows, each walking 131,072 / 32,768 = 4
    # steps, no reduction; 1,024 partial rows per gradient for ATen's .sum(0)
    split = weight_grad_kernel("pytorch", 131072, 1024, 132)
    assert (split.kernel.ctas, split.kernel.threads_per_cta) == (32 * 1024, 32)
    assert (split.kernel.serial_loads, split.kernel.reductions) == (4, 0)
    assert split.partial_rows == 1024 and split.sum_kernel is not None


def test_split_path_sums_its_partials() -> None:
    split = MODEL.predict(backward(OpKind.LAYERNORM, 131072, 1024, weights=2, grads=2), H100)
    diagnostics = split.diagnostics
    assert isinstance(diagnostics, RowBackwardEvaluation) and diagnostics.weight_grads is not None
    assert len(diagnostics.weight_grad_sums) == 2  # dgamma and dbeta
    parts = diagnostics.grad_input.latency_s + diagnostics.weight_grads.latency_s
    parts += sum(s.latency_s for s in diagnostics.weight_grad_sums)
    assert split.latency_s == pytest.approx(parts)
    # the split is what makes 2 x 65,536 rows take less than twice 65,536 rows' weight sum
    unsplit = MODEL.predict(backward(OpKind.LAYERNORM, 65536, 1024, weights=2, grads=2), H100)
    unsplit_diagnostics = unsplit.diagnostics
    assert isinstance(unsplit_diagnostics, RowBackwardEvaluation)
    assert unsplit_diagnostics.weight_grads is not None
    assert not unsplit_diagnostics.weight_grad_sums
    split_sum = parts - diagnostics.grad_input.latency_s
    assert split_sum < 2 * unsplit_diagnostics.weight_grads.latency_s


def test_two_kernels_and_their_sum() -> None:
    op = backward(OpKind.LAYERNORM, 4096, 4096, weights=2, grads=2)
    profile = MODEL.predict(op, H100)
    diagnostics = profile.diagnostics
    assert isinstance(diagnostics, RowBackwardEvaluation) and diagnostics.weight_grads is not None
    parts = diagnostics.grad_input.latency_s + diagnostics.weight_grads.latency_s
    assert profile.latency_s == pytest.approx(parts)
    assert profile.implementation == "effective_roofline/streaming/pytorch/backward"
    no_grads = MODEL.predict(backward(OpKind.LAYERNORM, 4096, 4096, weights=2), H100)
    assert no_grads.latency_s < profile.latency_s
    forward_s = MODEL.predict(forward(OpKind.LAYERNORM, 4096, 4096, 2), H100).latency_s
    assert no_grads.latency_s > forward_s  # twice the rows read, dx written


def test_aten_weight_sum_takes_a_taller_tile_from_64_rows() -> None:
    # ATen's weight-gradient kernel walks 63 rows 8 at a time (8 steps of one warp), 64 rows
    # 64 at a time (one step of 8 warps): the real kernel is faster at 64 rows than at 63,
    # and so is the model (the exception to "more rows never faster" below: doubling rows
    # crosses only this switch, as 64-127 rows go to 128-254, 128-255 to 256-510)
    def weight_sum_s(rows: int) -> float:
        op = backward(OpKind.LAYERNORM, rows, 1024, weights=2, grads=2)
        diagnostics = MODEL.predict(op, H100).diagnostics
        assert isinstance(diagnostics, RowBackwardEvaluation)
        assert diagnostics.weight_grads is not None
        return diagnostics.weight_grads.latency_s

    assert weight_sum_s(64) < weight_sum_s(63)
    assert weight_sum_s(64) < weight_sum_s(126)  # within one tile, more rows cost more


@settings(max_examples=examples(30), deadline=None)
@given(
    kind=st.sampled_from([OpKind.SOFTMAX, OpKind.LAYERNORM, OpKind.RMSNORM]),
    rows=st.integers(1, 8192),
    length=st.integers(1, 16384),
    implementation=st.sampled_from(["pytorch", "fused"]),
)
def test_backward_properties(kind: OpKind, rows: int, length: int, implementation: str) -> None:
    weights = {OpKind.SOFTMAX: 0, OpKind.LAYERNORM: 2, OpKind.RMSNORM: 1}[kind]
    # doubling 32-63 rows crosses ATen's tile switch at 64 (the test above)
    assume(not (weights and implementation == "pytorch" and 32 <= rows < 64))
    op = backward(kind, rows, length, weights=weights, grads=weights, implementation=implementation)
    profile = MODEL.predict(op, H100)
    longer = MODEL.predict(
        backward(
            kind, 2 * rows, length, weights=weights, grads=weights, implementation=implementation
        ),
        H100,
    )
    assert 0 < profile.latency_s <= longer.latency_s
    assert profile.traffic["hbm"].total_bytes >= op_work(op).read_bytes + op_work(op).write_bytes


def test_kernel_builders_refuse_what_they_cannot_build() -> None:
    with pytest.raises(ValueError, match="implementation must be pytorch or fused"):
        grad_input_kernel(OpKind.LAYERNORM, "cudnn", 8, 8, 2)
    with pytest.raises(ValueError, match="rows and length must be >= 1"):
        weight_grad_kernel("pytorch", 0, 8, 132)
