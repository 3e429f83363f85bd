"""Grouped GEMMs along K (the experts' weight gradients, kind grouped_gemm with C
[groups, m, n]): view, work, grid and the models, with hand-derived expectations."""

from __future__ import annotations

import pytest

from opmodel import DType, LocalOp, OpKind, Phase, TensorSpec
from opmodel.core.views import GemmView
from opmodel.formulas.work import op_work
from opmodel.hardware import load_hardware
from opmodel.models.gemm.problem import GemmProblem
from opmodel.models.registry import get_model

from .test_grouped import MODELS, K, N, _op


def _wgrad(sizes: list[int], *, tile: bool = False) -> LocalOp:
    """Experts' weight gradients dW[g] = X_g^T dY_g: X [rows, K] (transpose_a), dY [rows, N],
    dW [groups, K, N]."""
    rows = sum(sizes)
    kernel = {"cta_tile_m": 128, "cta_tile_n": 128, "cta_tile_k": 64} if tile else {}
    shapes = ((rows, K), (rows, N), (len(sizes), K, N))
    return _op(shapes, {"transpose_a": True, "group_sizes": sizes, **kernel})


def test_groups_along_k_are_weight_gradients() -> None:
    """X [1324, 2048]^T by dY [1324, 1536] in four groups: 2 x 2048 x 1536 x 1324 FLOPs, X and
    dY read once, every group's dW written (an empty group's is zeroed: the kernel models see
    the three groups with rows, each with ceil(1324 / 3) = 442 rows of K on average)."""
    op = _wgrad([1000, 24, 0, 300])
    view = op.view
    assert isinstance(view, GemmView) and view.groups_along_k
    assert (view.m, view.n, view.k, view.transpose_a) == (K, N, 1324, True)
    work = op_work(op)
    assert work.matmul_flops == 2 * K * N * 1324
    assert work.read_bytes == 2 * 1324 * (K + N) and work.write_bytes == 2 * 4 * K * N
    problem = GemmProblem.from_op(op)
    assert (problem.batch, problem.m, problem.k) == (3, K, 442)
    assert (problem.group_k, problem.zero_groups, problem.group_m) == ((24, 300, 1000), 1, ())
    assert problem.flops == work.matmul_flops
    assert (problem.a_bytes, problem.b_bytes) == (2 * 1324 * K, 2 * 1324 * N)
    assert problem.c_bytes == 2 * 4 * K * N


@pytest.mark.parametrize("model", ["extended_roofline", "effective_roofline"])
def test_weight_gradient_grid_counts_each_groups_k_tiles(model: str) -> None:
    """64-deep K tiles: the 3 groups with rows loop 16, 1 and 5 times per output tile, 16 x 12
    of them: 192 x 22 = 4224 iterations, run as CTAs of the longest loop (16), 264 of them;
    K efficiency 192 x 1324 / (264 x 16 x 64). One output tile per group and one heavy group
    (10, 1 and 1 K tiles): two CTAs of 10 iterations, so one wave lasts the heavy group's loop,
    not the mean's 4."""
    spec, predict = load_hardware("a100_80gb_sxm"), get_model(model).predict
    grid = predict(_wgrad([1000, 24, 0, 300], tile=True), spec).diagnostics.grid  # type: ignore[attr-defined]
    assert (grid.ctas, grid.k_iterations) == (264, 16)
    assert grid.k_efficiency == pytest.approx(192 * 1324 / (264 * 16 * 64))
    attrs = {"transpose_a": True, "group_sizes": [640, 64, 64]}
    tile = {"cta_tile_m": 128, "cta_tile_n": 128, "cta_tile_k": 64}
    skewed = _op(((768, 128), (768, 128), (3, 128, 128)), {**attrs, **tile})
    grid = predict(skewed, spec).diagnostics.grid  # type: ignore[attr-defined]
    assert (grid.ctas, grid.k_iterations) == (2, 10)


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("hardware", ["a100_80gb_sxm", "h100_sxm", "tpu_v5e"])
def test_equal_k_groups_are_the_batched_gemm(model: str, hardware: str) -> None:
    spec, predict = load_hardware(hardware), get_model(model).predict
    batched = LocalOp(
        name="wgrad",
        kind=OpKind.BATCHED_GEMM,
        phase=Phase.TRAIN_BWD,
        tensors=(
            TensorSpec("input", (8, 512, K), DType.BF16),
            TensorSpec("weight", (8, 512, N), DType.BF16),
            TensorSpec("output", (8, K, N), DType.BF16),
        ),
        attrs={"transpose_a": True},
    )
    grouped = predict(_wgrad([512] * 8), spec)
    assert grouped.latency_s == pytest.approx(predict(batched, spec).latency_s, rel=1e-12)


def test_the_grouping_axis_keys_the_memos() -> None:
    """An M-grouped and a K-grouped problem with equal batch, m, n, k and group sizes are
    different problems: their memo keys (``GemmProblem.sizes``) differ."""
    along_m = GemmProblem.from_op(_op(((1024, 512), (2, 512, 1024), (1024, 1024)), {}))
    along_k = GemmProblem.from_op(_op(((512, 1024), (1024, 1024), (2, 512, 1024)), {}))
    assert (along_m.batch, along_m.m, along_m.n, along_m.k) == (2, 512, 1024, 512)
    assert (along_k.batch, along_k.m, along_k.n, along_k.k) == (2, 512, 1024, 512)
    assert along_m.sizes != along_k.sizes


def test_weight_gradient_routings_share_one_kernel_memo() -> None:
    """As for the forward (test_grouped.py): a sweep over routings builds the kernel once."""
    spec, model = load_hardware("a100_80gb_sxm"), get_model("effective_roofline")
    kernel_keys = lambda: {key for key in spec.derived_cache if key[0] == "gemm.attrs_kernel"}  # noqa: E731
    before = kernel_keys()
    tile = {"cta_tile_m": 128, "cta_tile_n": 128, "split_k": 1, "pipeline_stages": 3}
    for hot in range(1, 6):
        sizes = [512 + hot] + [512] * 7
        attrs = {"transpose_a": True, "group_sizes": sizes, **tile}
        model.predict(_op(((sum(sizes), K), (sum(sizes), N), (8, K, N)), attrs), spec)
    assert len(kernel_keys() - before) == 1
