"""Grouped GEMMs (kind grouped_gemm): the view, the work, the grid and what every model makes
of them, with hand-derived expectations."""

from __future__ import annotations

import math
import re

import pytest

from opmodel import DType, LocalOp, OpKind, Phase, TensorSpec
from opmodel.core.errors import OpValidationError
from opmodel.core.views import GemmView
from opmodel.core.views_grouped import balanced_group_sizes
from opmodel.formulas.work import op_work
from opmodel.hardware import load_hardware
from opmodel.models.gemm.occupancy import group_row_tiles
from opmodel.models.gemm.problem import GemmProblem
from opmodel.models.registry import get_model

MODELS = ("roofline", "extended_roofline", "effective_roofline")
K, N = 2048, 1536


def _op(shapes: tuple[tuple[int, ...], ...], attrs: dict[str, object]) -> LocalOp:
    a, b, c = shapes
    return LocalOp(
        name="experts",
        kind=OpKind.GROUPED_GEMM,
        phase=Phase.PREFILL,
        tensors=(
            TensorSpec("input", a, DType.BF16),
            TensorSpec("weight", b, DType.BF16),
            TensorSpec("output", c, DType.BF16),
        ),
        attrs=attrs,
    )


def _grouped(sizes: list[int], *, tile: bool = False, **attrs: object) -> LocalOp:
    rows, groups = sum(sizes), len(sizes)
    kernel = {"cta_tile_m": 128, "cta_tile_n": 128} if tile else {}
    shapes = ((rows, K), (groups, N, K), (rows, N))
    return _op(shapes, {"transpose_b": True, "group_sizes": sizes, **kernel, **attrs})


def _batched(groups: int, m: int) -> LocalOp:
    return LocalOp(
        name="experts",
        kind=OpKind.BATCHED_GEMM,
        phase=Phase.PREFILL,
        tensors=(
            TensorSpec("input", (groups, m, K), DType.BF16),
            TensorSpec("weight", (groups, N, K), DType.BF16),
            TensorSpec("output", (groups, m, N), DType.BF16),
        ),
        attrs={"transpose_b": True},
    )


def _gemm(m: int) -> LocalOp:
    return LocalOp(
        name="dense",
        kind=OpKind.GEMM,
        phase=Phase.PREFILL,
        tensors=(
            TensorSpec("input", (m, K), DType.BF16),
            TensorSpec("weight", (N, K), DType.BF16),
            TensorSpec("output", (m, N), DType.BF16),
        ),
        attrs={"transpose_b": True},
    )


def test_view_reads_the_groups() -> None:
    view = _grouped([1000, 24, 0, 300]).view
    assert isinstance(view, GemmView)
    assert (view.batch, view.m, view.n, view.k) == (1, 1324, N, K)
    assert view.group_sizes == (1000, 24, 0, 300)
    assert view.active_groups == 3


def test_group_sizes_default_to_balanced() -> None:
    assert balanced_group_sizes(10, 4) == (3, 3, 2, 2)
    assert balanced_group_sizes(3, 8) == (1, 1, 1, 0, 0, 0, 0, 0)
    view = _op(((10, K), (4, K, N), (10, N)), {}).view
    assert isinstance(view, GemmView)
    assert view.group_sizes == (3, 3, 2, 2)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"group_sizes": [1, 2]},
            "op 'experts' (grouped_gemm): attrs.group_sizes: needs one entry per group of B (3); "
            "got 2",
        ),
        (
            {"group_sizes": [1, 2, 4]},
            "op 'experts' (grouped_gemm): attrs.group_sizes: must sum to A's rows (6); they sum "
            "to 7",
        ),
        (
            {"group_sizes": [1, -2, 7]},
            "op 'experts' (grouped_gemm): attrs.group_sizes: [1] must be >= 0 (got -2)",
        ),
        (
            {"group_sizes": []},
            "op 'experts' (grouped_gemm): attrs.group_sizes: must be a non-empty list of integers (got [])",
        ),
        (
            {"group_sizes": [1, True, 4]},
            "op 'experts' (grouped_gemm): attrs.group_sizes: [1] must be an integer (got True)",
        ),
        (
            {"transpose_a": True},
            "op 'experts' (grouped_gemm): transpose_a is not accepted when the groups split the "
            "rows of A (M): A is [rows, k] (a weight gradient, grouped along K, has B [rows, n] "
            "and C [groups, m, n])",
        ),
    ],
)
def test_malformed_groups_are_one_line_errors(change: dict[str, object], message: str) -> None:
    attrs = {"transpose_b": True, "group_sizes": [1, 2, 3], **change}
    with pytest.raises(OpValidationError) as error:
        _op(((6, K), (3, N, K), (6, N)), attrs)
    assert str(error.value) == message


@pytest.mark.parametrize(
    ("tensors", "message"),
    [
        (
            ((6, K), (N, K), (6, N)),
            "shapes must be A [rows, k], B [groups, k, n] ([groups, n, k] with transpose_b) and "
            "C [rows, n] (groups along M), or A [m, rows]",
        ),
        (((K, 6), (N, 6), (3, K, N + 1)), "C must be [3, 2048, 1536] for A [2048, 6]"),
        (((6, K), (3, N, K + 1), (6, N)), "inner dimensions differ: A has k=2048 but B has k=2049"),
        (((6, K), (3, N, K), (6, N + 1)), "C must be [6, 1536] for A [6, 2048]"),
    ],
)
def test_malformed_shapes_name_the_tensor(
    tensors: tuple[tuple[int, ...], ...], message: str
) -> None:
    with pytest.raises(OpValidationError, match=re.escape(message)):
        _op(tensors, {"transpose_b": True})


def test_work_counts_the_rows_and_the_routed_experts_weights() -> None:
    """FLOPs 2 rows n k; the weights of the three experts with rows are read, not the fourth."""
    work = op_work(_grouped([1000, 24, 0, 300]))
    assert work.matmul_flops == 2 * 1324 * N * K
    assert work.read_bytes == 2 * (1324 * K + 3 * N * K)
    assert work.write_bytes == 2 * 1324 * N


def test_problem_is_a_batch_of_the_routed_groups() -> None:
    problem = GemmProblem.from_op(_grouped([1000, 24, 0, 300]))
    assert (problem.batch, problem.m, problem.rows, problem.group_m) == (
        3,
        442,
        1324,
        (24, 300, 1000),
    )
    assert problem.flops == 2 * 1324 * N * K
    assert (problem.a_bytes, problem.b_bytes, problem.c_bytes) == (
        2 * 1324 * K,
        2 * 3 * N * K,
        2 * 1324 * N,
    )


@pytest.mark.parametrize("model", ["extended_roofline", "effective_roofline"])
def test_grid_counts_each_groups_row_tiles(model: str) -> None:
    """128x128 tiles: ceil(1000/128) + ceil(24/128) + ceil(300/128) = 8 + 1 + 3 = 12 row tiles,
    times 12 column tiles; the useful share of the padded area is 1324 x 1536 over that."""
    profile = get_model(model).predict(
        _grouped([1000, 24, 0, 300], tile=True), load_hardware("a100_80gb_sxm")
    )
    grid = profile.diagnostics.grid  # type: ignore[attr-defined]
    assert grid.ctas == 12 * 12
    assert grid.edge_efficiency == pytest.approx(1324 * N / (12 * 128 * 12 * 128))


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("hardware", ["a100_80gb_sxm", "h100_sxm", "tpu_v5e"])
def test_equal_groups_are_the_batched_gemm_and_one_group_the_gemm(
    model: str, hardware: str
) -> None:
    spec, predict = load_hardware(hardware), get_model(model).predict
    grouped, batched = predict(_grouped([512] * 8), spec), predict(_batched(8, 512), spec)
    assert grouped.latency_s == pytest.approx(batched.latency_s, rel=1e-12)
    assert grouped.traffic["hbm"].read_bytes == batched.traffic["hbm"].read_bytes
    one, dense = predict(_grouped([4096]), spec), predict(_gemm(4096), spec)
    assert one.latency_s == pytest.approx(dense.latency_s, rel=1e-12)


@pytest.mark.parametrize("model", ["extended_roofline", "effective_roofline"])
def test_skewed_routing_costs_tiles(model: str) -> None:
    """The same 4,096 rows over 8 experts, evenly (32 row tiles of 128) and with one hot
    expert and seven single-token ones (32 + 7 = 39 row tiles): the skewed grid is 39/32 as
    large, and the kernel slower."""
    spec, predict = load_hardware("a100_80gb_sxm"), get_model(model).predict
    even = predict(_grouped([512] * 8, tile=True), spec)
    skewed = predict(_grouped([4089] + [1] * 7, tile=True), spec)
    assert skewed.diagnostics.grid.ctas * 32 == even.diagnostics.grid.ctas * 39  # type: ignore[attr-defined]
    assert skewed.latency_s > even.latency_s


@pytest.mark.parametrize("model", MODELS)
def test_decode_reads_the_routed_experts_weights(model: str) -> None:
    """Decode: 8 tokens each routed to one of 8 experts out of 128; the op reads those 8
    experts' weights (8 x 1536 x 2048 x 2 bytes), not the 128, and takes at least that long at
    the HBM's peak."""
    spec = load_hardware("h100_sxm")
    profile = get_model(model).predict(_grouped([1] * 8 + [0] * 120), spec)
    weights = 8 * N * K * 2
    assert weights <= profile.traffic["hbm"].read_bytes < weights * 1.05
    assert profile.latency_s >= weights / spec.hbm.bandwidth_bytes_per_s
    assert profile.footprint.weight_bytes == 128 * N * K * 2


def test_tpu_streams_a_weight_tile_for_at_least_its_rows() -> None:
    """On an MXU a group of one row still takes the R cycles a weight tile needs to load: the
    skewed routing's MXU efficiency falls by the padded rows."""
    spec, model = load_hardware("tpu_v5e"), get_model("effective_roofline")
    even = model.predict(_grouped([512] * 8), spec).diagnostics
    skewed = model.predict(_grouped([4089] + [1] * 7), spec).diagnostics
    rows = 128  # the v5e's MXU side
    assert skewed.rows_per_weight_tile == math.ceil((4089 + 7 * rows) / 8)  # type: ignore[attr-defined]
    assert skewed.mxu_efficiency < even.mxu_efficiency  # type: ignore[attr-defined]


def test_row_tiles_by_bands_and_by_groups() -> None:
    """ceil(m/128) summed: 1 + 1 + 2 + 8 = 12 when the bands (8) outnumber the groups (4);
    300 groups of 5 rows and one of 300 rows in 3 bands: 300 + 3."""
    assert group_row_tiles((1, 128, 129, 1000), 128) == 12
    assert group_row_tiles((5,) * 300 + (300,), 128) == 303


def test_routings_share_one_kernel_memo() -> None:
    """A sweep over routings with one kernel's attrs builds that kernel once per spec: the
    group sizes stay out of the memo's key (it would otherwise grow with every routing)."""
    spec, model = load_hardware("a100_80gb_sxm"), get_model("effective_roofline")
    kernel_keys = lambda: {key for key in spec.derived_cache if key[0] == "gemm.attrs_kernel"}  # noqa: E731
    before = kernel_keys()
    for hot in range(1, 6):
        model.predict(_grouped([512 + hot] + [512] * 7, tile=True, split_k=1), spec)
    assert len(kernel_keys() - before) == 1
