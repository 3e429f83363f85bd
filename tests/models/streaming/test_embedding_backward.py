"""The embedding's backward pass: ATen's embedding_dense_backward as kernels (segments,
grids and chains by hand), the op's view and its errors, backward_of, and the published
Liger-Kernel rows' comparison."""

from __future__ import annotations

import math

import pytest

from opmodel import DType, LocalOp, Phase, TensorRole, backward_of, ops
from opmodel.core.errors import OpValidationError
from opmodel.core.views import EmbeddingBackwardView
from opmodel.formulas.work import op_work
from opmodel.hardware import load_hardware
from opmodel.models import get_model
from opmodel.models.effective_roofline.embedding_backward_op import (
    EmbeddingBackwardEvaluation,
    zero_fill,
)
from opmodel.models.streaming.embedding_backward import (
    FEATURE_KERNEL_MAX_TOKENS,
    INDEX_KERNELS,
    atomic_sums_kernel,
    feature_kernel,
    fill_kernel,
    partial_sums_kernel,
    registers,
    runs_atomic_path,
    scatter_kernel,
    segments,
    sorted_grid,
)
from tests.scripts.loader import load_script

A100 = load_hardware("a100_80gb_sxm")
MODEL = get_model("effective_roofline")


def _backward(
    tokens: int, vocab: int, hidden: int, dtype: str = "fp32", **attrs: object
) -> LocalOp:
    forward = ops.embedding(tokens, vocab, hidden, dtype, phase="train_fwd")
    op = backward_of(forward)
    if not attrs:
        return op
    return LocalOp(name=op.name, kind=op.kind, phase=op.phase, tensors=op.tensors, attrs=attrs)  # type: ignore[arg-type]


def _evaluation(op: LocalOp) -> EmbeddingBackwardEvaluation:
    e = MODEL.predict(op, A100).diagnostics
    assert isinstance(e, EmbeddingBackwardEvaluation)
    return e


def test_segments_of_a_uniform_draw_by_hand() -> None:
    """16,384 tokens over 1,024 rows: every row named (1,024 (1 - e^-16)), partials
    max(1,024, ceil((16,384 + 4.5 x 1,024) / 10)) = 2,100; over 131,072 rows: 131,072 (1 -
    (1 - 1/131,072)^16,384) = 15,401.4 rows, nearly all once, so 15,401 partials."""
    few = segments(16384, 1024)
    assert (few.distinct, few.partial) == (1024, 2100)
    many = segments(16384, 131072)
    expected = 131072 * (1 - (1 - 1 / 131072) ** 16384)
    assert many.distinct == round(expected) == 15401
    assert many.partial == 15401
    assert (segments(5, 1).distinct, segments(5, 1).partial) == (1, 1)  # ceil(9.5 / 10) = 1


def test_segments_with_the_distinct_rows_given() -> None:
    """100 tokens naming 10 rows: max(10, ceil((100 + 45) / 10)) = 15 partial segments; the
    partials never exceed the tokens."""
    given = segments(100, 1000, 10)
    assert (given.distinct, given.partial) == (10, 15)
    assert segments(100, 1000, 100).partial == 100
    for bad in (0, 101):
        with pytest.raises(ValueError, match=r"distinct must be in 1\.\.100"):
            segments(100, 1000, bad)
    with pytest.raises(ValueError, match="must be >= 1"):
        segments(0, 10)


def test_kernel_grids_by_hand() -> None:
    """compute_grad_weight over 2,100 partials of 4,096 columns: 1,024-thread CTAs, four per
    partial (8,400), ceil(16,384 / 2,100) = 8 rows each, each after its position (L2), after
    the count and the bounds; sum_and_scatter over 1,024 segments: 4,096 CTAs summing
    ceil(2,100 / 1,024) = 3 partials; on ROCm 256-thread CTAs; the feature kernel over 3,072
    tokens: ceil(4,096 / 32) = 128 CTAs of 32 x 32 threads, 96 chunks of two dependent round
    trips (64 x 16 threads and 192 chunks on ROCm); the fill: 128-thread CTAs of 512
    elements."""
    grid = sorted_grid(4096, 32, False, "sm80")
    assert (grid.columns, grid.block) == (4096, 1024)
    sums = partial_sums_kernel(16384, 2100, grid)
    assert (sums.ctas, sums.threads_per_cta, sums.serial_loads, sums.l2_serial_loads) == (
        8400, 1024, 8, 10,
    )  # fmt: skip
    scatter = scatter_kernel(1024, 2100, grid)
    assert (scatter.ctas, scatter.threads_per_cta, scatter.serial_loads) == (4096, 1024, 3)
    atomic = atomic_sums_kernel(16384, 2100, grid)
    assert (atomic.ctas, atomic.serial_loads, atomic.l2_serial_loads) == (8400, 8, 13)
    narrow = partial_sums_kernel(16384, 2100, sorted_grid(100, 32, False, "sm80"))
    assert (narrow.threads_per_cta, narrow.ctas) == (128, 2100)  # 100 columns: 128 threads
    assert sorted_grid(4096, 64, True, "cdna3").block == 256  # MAX_BLOCK_SIZE on ROCm
    feature = feature_kernel(3072, 4096, 32, False, "sm90")
    assert (feature.ctas, feature.threads_per_cta, feature.serial_loads) == (128, 1024, 192)
    assert feature.l2_serial_loads == 3 and feature.serial_arithmetic
    rocm = feature_kernel(3072, 4096, 64, True, "cdna3")
    assert (rocm.ctas, rocm.threads_per_cta, rocm.serial_loads) == (64, 1024, 384)
    fill = fill_kernel(1000)
    assert (fill.ctas, fill.threads_per_cta, fill.elements_per_cta) == (2, 128, 512)


def test_registers_are_the_counted_ones() -> None:
    """PyTorch 2.14.1's cubins (scripts/count_embedding_registers.py): compute_grad_weight 32 on
    sm_80, sm_90 and sm_100 (two 1,024-thread CTAs per SM), 40 on sm_86, whose SASS sm_89 runs;
    an architecture without a count takes the estimate, 32."""
    grid = sorted_grid(4096, 32, False, "sm89")
    assert partial_sums_kernel(16384, 2100, grid).registers_per_thread == 40
    assert registers("compute_grad_weight", "sm90") == 32
    assert registers("sum_and_scatter", "sm80") == 22
    assert registers("compute_grad_weight", "cdna3") == registers("any", None) == 32


def test_the_atomic_path_serves_a_vocabulary_of_a_few_rows() -> None:
    """sum_and_scatter's grid over min(tokens, vocab) segments under 4 CTAs per SM and over a
    quarter of the partial segments' bound: BERT's two token types (2 CTAs of 768 threads
    against 432 on an A100, 1,640 partials bound), not Llama's 128,256 rows."""
    bert = sorted_grid(768, 32, False, "sm80")
    assert runs_atomic_path(16384, 2, bert, 108)
    assert not runs_atomic_path(16384, 128256, sorted_grid(4096, 32, False, "sm80"), 108)
    assert not runs_atomic_path(16384, 1024, bert, 108)  # 1,024 CTAs: the two passes
    fp32 = _evaluation(_backward(16384, 2, 768))
    assert fp32.path == "atomic" and fp32.index_count == INDEX_KERNELS + 1
    assert fp32.accumulator_fill is None and fp32.scatter is None  # fp32: adds into dw itself
    bf16 = _evaluation(_backward(16384, 2, 768, "bf16"))
    assert bf16.accumulator_fill is not None and bf16.scatter is not None  # fp32 copy, cast
    assert bf16.scatter.dram_read_bytes == 2 * 768 * 4  # the fp32 copy read by the cast


def test_the_sorting_path_above_3072_tokens_and_its_parts_sum() -> None:
    """Over 3,072 tokens: the fill, INDEX_KERNELS index kernels and the two segment kernels,
    their latencies summed with the host's wait: none behind a long fill (the host queues
    every launch while it runs), max(0, 19 L - fill - 18 index kernels) behind a short one; at
    3,072 tokens the fill and the feature kernel."""
    big = _evaluation(_backward(16384, 32768, 4096))
    assert big.path == "two_pass" and big.feature is None and big.index_kernels is not None
    assert big.partial_sums is not None and big.scatter is not None and big.host_s == 0
    parts = (big.fill.latency_s + INDEX_KERNELS * big.index_kernels.latency_s
             + big.partial_sums.latency_s + big.scatter.latency_s + big.empty_ctas_s)  # fmt: skip
    assert big.latency_s == pytest.approx(parts) and big.empty_ctas_s > 0
    short = _evaluation(_backward(16384, 1024, 64))
    assert short.index_kernels is not None
    launch = A100.overhead.kernel_launch_overhead_s
    busy = short.fill.latency_s + INDEX_KERNELS * short.index_kernels.latency_s
    assert short.host_s == pytest.approx((INDEX_KERNELS + 1) * launch - busy) and short.host_s > 0
    small = _evaluation(_backward(FEATURE_KERNEL_MAX_TOKENS, 32768, 4096))
    assert small.path == "feature" and small.feature is not None and small.host_s == 0
    assert small.partial_sums is None
    assert small.latency_s == pytest.approx(small.fill.latency_s + small.feature.latency_s)


def test_the_grids_empty_ctas_by_hand() -> None:
    """16,384 tokens over 1,024 rows of 4,096: compute_grad_weight's grid covers 16,384 // 10 +
    1,024 = 2,662 partial segments, 10,648 CTAs, of which the 2,100 real ones fill 8,400; the
    2,248 others each load the count and exit: ceil(2,248 / 216) = 11 waves (two per SM on the
    A100's 108 SMs) of an L2 round trip and a CTA turnaround; sum_and_scatter's grid covers
    min(16,384, 1,024) = 1,024 segments, all real."""
    from opmodel.hardware.clocking import boosted

    e = _evaluation(_backward(16384, 1024, 4096))
    assert e.partial_sums is not None and e.partial_sums.resident_ctas_per_sm == 2
    spec = boosted(A100)
    l2 = spec.levels_by_name["l2"].latency_s
    sm = spec.compute.sm
    assert sm is not None
    turnaround = sm.cta_turnaround_cycles / spec.compute.clock_hz
    assert e.empty_ctas_s == pytest.approx(11 * (l2 + turnaround))


def test_traffic_holds_the_fill_dy_and_the_partial_sums() -> None:
    """DRAM: the zeroed gradient written, dy read, the fp32 partial sums written (and read back
    where they left L2) and the segments' rows written; at least the compulsory bytes."""
    op = _backward(16384, 32768, 4096)
    profile = MODEL.predict(op, A100)
    hbm = profile.traffic["hbm"]
    e = _evaluation(op)
    table, dy = 32768 * 4096 * 4, 16384 * 4096 * 4
    partials = e.partial_segments * 4096 * 4
    assert hbm.write_bytes >= table + partials + e.distinct_rows * 4096 * 4
    assert hbm.read_bytes >= dy
    work = op_work(op)
    assert (work.vector_flops, work.vector_dtype) == (16384 * 4096, DType.FP32)
    assert work.read_bytes == 16384 * 8 + dy and work.write_bytes == table


@pytest.mark.parametrize("tokens", [1000, 16384])
def test_a_larger_vocabulary_or_width_is_never_faster(tokens: int) -> None:
    """The fill grows with the vocabulary (above a few rows, where a hot row's chain of partial
    sums shortens as rows are added); every kernel with the width."""
    times = [MODEL.predict(_backward(tokens, v, 1024), A100).latency_s for v in (64, 4096, 131072)]
    assert times == sorted(times)
    wide = [MODEL.predict(_backward(tokens, 4096, h), A100).latency_s for h in (256, 1024, 8192)]
    assert wide == sorted(wide)


def test_a_zero_fill_is_a_store_stream() -> None:
    """zero_fill reads nothing and writes every byte; half the bytes never take longer."""
    e = zero_fill(1 << 28, DType.FP32, A100)
    assert (e.dram_read_bytes, e.dram_write_bytes) == (0, 4 << 28)
    assert zero_fill(1 << 27, DType.FP32, A100).latency_s <= e.latency_s


def test_distinct_indices_changes_the_segments() -> None:
    """Attr distinct_indices: 16,384 tokens naming 1,000 rows make 2,089 partial segments."""
    e = _evaluation(_backward(16384, 131072, 1024, distinct_indices=1000))
    assert (e.distinct_rows, e.partial_segments) == (1000, math.ceil((16384 + 4500) / 10))


def test_backward_of_an_embedding_writes_the_tables_gradient() -> None:
    """backward_of: the indices, dy shaped as the output (a grad), dw shaped as the table in
    the output's dtype; the forward's kernel and warm-input attrs dropped, the flush's kept."""
    forward = ops.embedding(512, 32000, 4096, "bf16", phase="train_fwd", implementation="fused",
                            warm_l2=True, l2_dirty_bytes=1 << 20)  # fmt: skip
    op = backward_of(forward)
    view = op.view
    assert isinstance(view, EmbeddingBackwardView) and view.backward
    assert (op.phase, view.tokens, view.vocab, view.hidden) == (Phase.TRAIN_BWD, 512, 32000, 4096)
    assert view.dy.role is TensorRole.GRAD and view.dy.shape == (512, 4096)
    assert view.dw.shape == (32000, 4096) and view.dw.dtype is DType.BF16
    assert dict(op.attrs) == {"l2_dirty_bytes": 1 << 20}
    with pytest.raises(OpValidationError, match="is a backward op already"):
        backward_of(op)


def test_only_atens_backward_is_modelled() -> None:
    """Liger's atomic kernel, and dtypes ATen's kernels are not compiled for (fp8), are
    one-line errors; the roofline still predicts an fp8 op."""
    op = _backward(16384, 1024, 64, implementation="fused")
    with pytest.raises(OpValidationError, match="implementation pytorch only"):
        MODEL.predict(op, A100)
    fp8 = _backward(16384, 1024, 64, "fp8_e4m3")
    with pytest.raises(OpValidationError, match="takes dy in fp64, fp32, fp16, bf16"):
        MODEL.predict(fp8, A100)
    assert get_model("roofline").predict(fp8, A100).latency_s > 0
    fp64 = _evaluation(_backward(16384, 2, 768, "fp64"))
    assert fp64.path == "atomic" and fp64.accumulator_fill is None  # fp64 adds into dw itself


def test_every_model_predicts_it() -> None:
    """The roofline: dy and the indices read, the table's gradient written, one add per
    element of dy; the kernel model is slower than that bound."""
    op = _backward(16384, 32768, 4096)
    roofline = get_model("roofline").predict(op, A100)
    assert roofline.traffic["hbm"].write_bytes == 32768 * 4096 * 4
    for name in ("extended_roofline", "effective_roofline"):
        assert get_model(name).predict(op, A100).latency_s >= roofline.latency_s * (1 - 1e-12)


def test_published_comparison_sums_the_calls_kernels() -> None:
    """scripts/compare_published_embedding.py: a full call is the forward, randn_like, the
    backward op and the accumulation; Liger's 16 A100 sizes pair up, and the model's backward
    part stays between the roofline's and the published time (0.5-1.0x)."""
    script = load_script("compare_published_embedding")
    pairs = script.load_pairs()
    assert len(pairs) == 16 and {p.hidden for p in pairs} == {768, 4096}
    rows = script.compare(pairs)
    for r in rows:
        assert r.roofline_ratio < r.backward_ratio
        assert 0.5 < r.backward_ratio < 1.0 and 0.6 < r.full_ratio < 1.05
        total = r.forward_s + r.randn_s + r.backward_s + r.accumulate_s
        assert total == pytest.approx(r.full_ratio * r.pair.full_s)
