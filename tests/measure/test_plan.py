"""Grid expansion, the op each case measures, and the run-time estimate (by hand)."""

from __future__ import annotations

from pathlib import Path

import pytest

from opmodel import DType, LocalOp, OpKind, TensorRole
from opmodel.hardware import load_hardware
from opmodel.measure import MeasureRequest, dry_run, expand, load_grid, plan
from opmodel.measure.plan import SETUP_S, START_S, TIMED_RUN_OVERHEAD_S
from opmodel.models import get_model
from opmodel.models.streaming import StreamingEvaluation

GRID = """name: small
warmup: 4
repeats: 10
energy_loop_s: 0.25
ops:
  - kind: gemm
    sizes: {m: [16, 128], n: [256], k: [512]}
    dtypes: [bf16, tf32]
    trans: [NN, NT]
  - {kind: batched_gemm, sizes: {batch: [3], m: [8], n: [16], k: [32]}, trans: [TN]}
  - {kind: layernorm, sizes: {rows: [4], length: [64]}}
  - {kind: softmax, sizes: {rows: [4], length: [64]}}
  - {kind: elementwise, sizes: {rows: [2], length: [8]}, functions: [add, silu]}
  - kind: attention_prefill
    sizes: {batch: [2], heads: [8], kv_heads: [2], seq: [128], head_dim: [64]}
    causal: [true, false]
  - kind: attention_decode
    sizes: {batch: [2], heads: [8], kv_heads: [2], context: [512], head_dim: [64]}
  - {kind: softmax, sizes: {rows: [4], length: [64]}}
"""


@pytest.fixture
def grid_path(tmp_path: Path) -> Path:
    path = tmp_path / "small.yaml"
    path.write_text(GRID)
    return path


def test_expansion_is_the_cartesian_product_without_duplicates(grid_path: Path) -> None:
    cases = expand(load_grid(grid_path))
    kinds = [case.kind.value for case in cases]
    # gemm: 2 m x 2 dtypes x 2 trans; the repeated softmax entry adds nothing
    assert kinds.count("gemm") == 8
    assert kinds.count("softmax") == 1
    assert kinds.count("elementwise") == 2
    assert kinds.count("attention_prefill") == 2
    assert len(cases) == 8 + 1 + 1 + 1 + 2 + 2 + 1
    assert len({case.label for case in cases}) == len(cases)


def _case_op(grid_path: Path, kind: OpKind, index: int = 0) -> LocalOp:
    return [case for case in expand(load_grid(grid_path)) if case.kind is kind][index].op()


def test_gemm_op_follows_trans_and_dtype(grid_path: Path) -> None:
    cases = [c for c in expand(load_grid(grid_path)) if c.kind is OpKind.GEMM]
    nt = next(c for c in cases if c.trans == "NT" and c.dtype is DType.BF16)
    op = nt.op()
    assert [t.shape for t in op.tensors] == [(16, 512), (256, 512), (16, 256)]
    assert op.attrs["transpose_b"] is True and op.attrs["transpose_a"] is False
    tf32 = next(c for c in cases if c.dtype is DType.TF32)
    assert {t.dtype for t in tf32.op().tensors} == {DType.TF32}


def test_batched_gemm_and_row_ops(grid_path: Path) -> None:
    bmm = _case_op(grid_path, OpKind.BATCHED_GEMM)
    assert [t.shape for t in bmm.tensors] == [
        (3, 32, 8),
        (3, 32, 16),
        (3, 8, 16),
    ]  # TN: A stored [k, m]
    norm = _case_op(grid_path, OpKind.LAYERNORM)
    assert [(t.role, t.shape) for t in norm.tensors] == [
        (TensorRole.INPUT, (4, 64)),
        (TensorRole.WEIGHT, (64,)),
        (TensorRole.WEIGHT, (64,)),
        (TensorRole.OUTPUT, (4, 64)),
    ]
    add = _case_op(grid_path, OpKind.ELEMENTWISE, 0)
    silu = _case_op(grid_path, OpKind.ELEMENTWISE, 1)
    assert (len(add.tensors), add.attrs["function"]) == (3, "add")
    assert (len(silu.tensors), silu.attrs["function"]) == (2, "silu")


def test_attention_ops(grid_path: Path) -> None:
    causal = _case_op(grid_path, OpKind.ATTENTION_PREFILL, 0)
    assert causal.attrs["causal"] is True
    assert [t.layout for t in causal.tensors] == ["q", "k", "v", "o"]
    assert [t.shape for t in causal.tensors] == [
        (2, 8, 128, 64),
        (2, 2, 128, 64),
        (2, 2, 128, 64),
        (2, 8, 128, 64),
    ]
    decode = _case_op(grid_path, OpKind.ATTENTION_DECODE)
    assert decode.phase.value == "decode"
    assert [t.shape[2] for t in decode.tensors] == [1, 512, 512, 1]


def test_estimate_by_hand(grid_path: Path) -> None:
    h200 = load_hardware("h200_sxm")
    grid = load_grid(grid_path)
    the_plan = plan(grid, h200, get_model("roofline"))
    launch = h200.overhead.kernel_launch_overhead_s
    l2 = h200.levels_by_name["l2"].size_bytes
    flush = 2 * l2 / h200.hbm.bandwidth_bytes_per_s + launch
    for kernel_s, case_s in zip(the_plan.kernel_s, the_plan.case_s, strict=True):
        run = kernel_s + launch
        timed = 10 * (run + flush + TIMED_RUN_OVERHEAD_S)
        energy = max(0.25, run) + TIMED_RUN_OVERHEAD_S
        assert case_s == pytest.approx(SETUP_S + 4 * run + timed + energy)
    assert the_plan.total_s == pytest.approx(START_S + sum(the_plan.case_s))
    summary = the_plan.summary()
    assert summary["cases"] == 16
    assert summary["cases_by_kind"] == {
        "gemm": 8,
        "batched_gemm": 1,
        "layernorm": 1,
        "softmax": 1,
        "elementwise": 2,
        "attention_prefill": 2,
        "attention_decode": 1,
    }


def test_shipped_grid_fits_eight_minutes_on_h200() -> None:
    summary = dry_run(MeasureRequest(grid="h200_8min", hardware="h200_sxm")).summary()
    assert isinstance(summary["estimated_total_s"], float)
    assert 60 < summary["estimated_total_s"] <= 480
    assert isinstance(summary["cases"], int) and summary["cases"] > 500


def test_copy_is_one_tensor_into_another(tmp_path: Path) -> None:
    """A copy case reads one rows x length tensor and writes another; the model predicts it as
    a pure stream (no FLOPs), so its measured time gives the sustained DRAM bandwidth."""
    path = tmp_path / "copy.yaml"
    path.write_text(
        "name: c\nops:\n  - {kind: copy, sizes: {rows: [4096], length: [8192]}, dtypes: [fp32]}\n"
    )
    (case,) = expand(load_grid(path))
    assert case.label == "copy fp32 rows=4096 length=8192"
    op = case.op()
    assert op.kind is OpKind.COPY and op.attrs == {}
    assert [(t.role, t.shape, t.dtype) for t in op.tensors] == [
        (TensorRole.INPUT, (4096, 8192), DType.FP32),
        (TensorRole.OUTPUT, (4096, 8192), DType.FP32),
    ]
    profile = get_model("effective_roofline").predict(op, load_hardware("h200_sxm"))
    assert profile.flops == 0
    assert profile.traffic["hbm"].total_bytes == 2 * 4096 * 8192 * 4  # read once, written once


def test_embedding_gathers_int64_ids_from_the_case_dtype_table(tmp_path: Path) -> None:
    """An embedding case: ``tokens`` int64 ids, a ``vocab x hidden`` table in the case's dtype
    and the gathered rows out; the model runs ATen's index_select for it, and the flush's
    dirty lines go with it like the other streaming ops'."""
    path = tmp_path / "emb.yaml"
    path.write_text(
        "name: e\nops:\n  - {kind: embedding, sizes: {tokens: [4096], hidden: [4096],"
        " vocab: [128256]}}\n"
    )
    (case,) = expand(load_grid(path))
    assert case.label == "embedding bf16 tokens=4096 hidden=4096 vocab=128256"
    op = case.op(flush_bytes=1000)
    assert op.attrs == {"implementation": "pytorch", "l2_dirty_bytes": 1000}
    assert [(t.role, t.shape, t.dtype) for t in op.tensors] == [
        (TensorRole.INPUT, (4096,), DType.INT64),
        (TensorRole.WEIGHT, (128256, 4096), DType.BF16),
        (TensorRole.OUTPUT, (4096, 4096), DType.BF16),
    ]
    diagnostics = get_model("effective_roofline").predict(op, load_hardware("h200_sxm")).diagnostics
    assert isinstance(diagnostics, StreamingEvaluation)
    assert diagnostics.kernel.name == "indexSelectLargeIndex"


def test_backward_cases_are_the_models_backward_ops(tmp_path: Path) -> None:
    """A ``backward`` flag doubles an entry's cases; the backward case is the op's backward
    pass as docs/op_files.md writes it, and the models predict it."""
    path = tmp_path / "g.yaml"
    path.write_text(
        "name: g\nops:\n"
        "  - {kind: rmsnorm, sizes: {rows: [64], length: [4096]}, backward: [false, true]}\n"
        "  - kind: attention_prefill\n"
        "    sizes: {batch: [1], heads: [8], kv_heads: [2], seq: [1024], head_dim: [128]}\n"
        "    causal: [false]\n"
        "    backward: [true]\n"
    )
    forward, backward, attention = expand(load_grid(path))
    assert (forward.backward, backward.backward) == (False, True)
    op = backward.op(flush_bytes=1000)
    roles = [t.role.value for t in op.tensors]
    assert roles == ["input", "weight", "grad", "output", "output"]
    assert op.phase.value == "train_bwd" and op.view.backward and op.attrs["l2_dirty_bytes"] == 1000
    att = attention.op()
    assert [(t.role.value, t.layout) for t in att.tensors] == [
        ("input", "q"),
        ("input", "k"),
        ("input", "v"),
        ("input", "o"),
        ("grad", "o"),
        ("output", "q"),
        ("output", "k"),
        ("output", "v"),
    ]
    assert att.view.backward and attention.label.endswith("full backward")
    h200 = load_hardware("h200_sxm")
    model = get_model("effective_roofline")
    assert model.predict(att, h200).implementation == "effective_roofline/fa3_bwd/wgmma"
    assert model.predict(op, h200).latency_s > model.predict(forward.op(), h200).latency_s


def test_moe_grid_cases_are_grouped_gemms_of_their_routing() -> None:
    """h200_moe: every case a grouped_gemm whose group sizes split its rows evenly over the
    first ``active`` experts (Mixtral's 16-row decode over 2 of 8: 8, 8, then six 0), each
    predicted by the kernel model; the dry run's estimate fits a short lease."""
    cases = expand(load_grid("h200_moe"))
    assert len(cases) == 32 and {case.kind for case in cases} == {OpKind.GROUPED_GEMM}
    first = cases[0].op()
    assert first.attrs["group_sizes"] == (8, 8, 0, 0, 0, 0, 0, 0)
    assert [t.shape for t in first.tensors] == [(16, 4096), (8, 28672, 4096), (16, 28672)]
    for case in cases:
        s, op = case.size, case.op()
        sizes = op.attrs["group_sizes"]
        assert isinstance(sizes, tuple) and sum(sizes) == s["rows"]
        assert sum(1 for rows in sizes if rows) == s["active"]
    wgrad = cases[-1].op()  # DeepSeek-V3's weight gradients: X^T dY into [256, 7168, 4096]
    assert [t.shape for t in wgrad.tensors] == [(32768, 7168), (32768, 4096), (256, 7168, 4096)]
    assert wgrad.attrs["transpose_a"] is True and cases[-1].trans == "TN"
    summary = dry_run(MeasureRequest(grid="h200_moe", hardware="h200_sxm")).summary()
    assert summary["estimated_total_s"] < 60


def test_h200_energy_grid_meters_long_loops() -> None:
    """h200_energy: 13 bf16 cases, energy on over 1.5 s loops (the counter's updates average
    out), DRAM streams and compute-bound kernels both present; about 40 s by the dry run."""
    grid = load_grid("h200_energy")
    assert grid.energy and grid.energy_loop_s == 1.5
    cases = expand(grid)
    kinds = [case.op().kind.value for case in cases]
    assert len(cases) == 13 and kinds.count("copy") == 3 and kinds.count("gemm") == 3
    assert all(t.dtype.value == "bf16" for case in cases for t in case.op().tensors[:1])
    summary = dry_run(MeasureRequest(grid="h200_energy", hardware="h200_sxm")).summary()
    assert 30 < summary["estimated_total_s"] < 60


def test_h200_fp8_grid_pairs_each_fp8_gemm_with_its_bf16_twin() -> None:
    """h200_fp8: 19 shapes, each in fp8_e4m3 (bf16 output) and bf16, trans NT; about 30 s by
    the dry run."""
    cases = expand(load_grid("h200_fp8"))
    fp8 = [c for c in cases if c.dtype.value == "fp8_e4m3"]
    assert len(cases) == 38 and len(fp8) == 19
    assert {c.label.replace("fp8_e4m3", "bf16") for c in fp8} == {
        c.label for c in cases if c.dtype.value == "bf16"
    }
    assert all(c.trans == "NT" and c.op().tensors[2].dtype.value == "bf16" for c in fp8)
    summary = dry_run(MeasureRequest(grid="h200_fp8", hardware="h200_sxm")).summary()
    assert 20 < summary["estimated_total_s"] < 60


def test_h200_loss_grid_times_the_loss_in_bf16_and_fp32() -> None:
    """h200_loss: 3 row counts x 4 vocabularies x bf16 and fp32, each a mean cross-entropy of
    int64 targets, PyTorch's kernels; about 23 s by the dry run."""
    cases = expand(load_grid("h200_loss"))
    assert len(cases) == 24 and {c.dtype.value for c in cases} == {"bf16", "fp32"}
    ops = [c.op() for c in cases]
    assert all(op.kind.value == "cross_entropy" for op in ops)
    assert all(
        op.tensors[1].dtype.value == "int64" and op.attrs["reduction"] == "mean" for op in ops
    )
    summary = dry_run(MeasureRequest(grid="h200_loss", hardware="h200_sxm")).summary()
    assert 10 < summary["estimated_total_s"] < 60


def test_h200_optimizer_grid_times_fused_and_foreach_steps() -> None:
    """h200_optimizer: 3 sizes x 3 tensor counts x 2 dtypes x 4 steps, the optimizer op with
    its algorithm, implementation and tensors; about 26 s by the dry run."""
    cases = expand(load_grid("h200_optimizer"))
    assert len(cases) == 72
    ops = [c.op() for c in cases]
    assert {(op.attrs["algorithm"], op.attrs["implementation"]) for op in ops} == {
        ("sgd_momentum", "fused"),
        ("sgd_momentum", "foreach"),
        ("adamw", "fused"),
        ("adamw", "foreach"),
    }
    assert all(op.kind.value == "optimizer" and op.phase.value == "train_bwd" for op in ops)
    summary = dry_run(MeasureRequest(grid="h200_optimizer", hardware="h200_sxm")).summary()
    assert 10 < summary["estimated_total_s"] < 60
