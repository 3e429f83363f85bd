"""opmodel.ops: each constructor builds the op its example file writes out tensor by tensor
(equal ops: same name, kind, phase, tensors and attrs), its own arguments are checked with
one-line errors, and the ops it builds predict on every model."""

from __future__ import annotations

import csv
import sys

import pytest

from opmodel import LocalOp, OpValidationError, backward_of, ops
from opmodel.batch import op_from_row
from opmodel.formulas.work import op_work
from opmodel.hardware import load_hardware
from opmodel.models import get_model, model_names
from opmodel.parsing import load_op

from ..conftest import EXAMPLES, load_example

ROUTING = [612, 488, 530, 397, 701, 455, 420, 493]  # examples/grouped_gemm.yaml
BUILT = {
    "gemm": lambda: ops.gemm(4096, 32768, 8192, phase="train_fwd"),
    "batched_gemm": lambda: ops.batched_gemm(
        128, 2048, 2048, 128, transpose_b=True, name="qk_scores", phase="prefill"
    ),
    "gemm_nvfp4_weights": lambda: ops.gemm(
        64,
        4096,
        14336,
        weight_dtype="nvfp4",
        transpose_b=True,
        name="down_proj_nvfp4",
        phase="decode",
    ),
    "grouped_gemm": lambda: ops.grouped_gemm(
        ROUTING, 28672, 4096, transpose_b=True, name="moe_expert_up", phase="prefill"
    ),
    "grouped_gemm_wgrad": lambda: ops.grouped_gemm_wgrad(
        ROUTING, 4096, 28672, name="moe_expert_up_wgrad"
    ),
    "attention_prefill": lambda: ops.attention_prefill(1, 32, 4096, 128, kv_heads=8, causal=True),
    "attention_decode": lambda: ops.attention_decode(16, 32, 8192, 128, kv_heads=8),
    "attention_decode_mla": lambda: ops.attention_decode(
        64,
        128,
        4096,
        576,
        kv_heads=1,
        head_dim_v=512,
        shared_kv=True,
        page_size=64,
        name="attention_decode_mla",
    ),
    "elementwise": lambda: ops.elementwise("silu_and_mul", (4096, 14336), phase="prefill"),
    "rope": lambda: ops.rope(4096, 40, 128, phase="prefill"),
    "embedding": lambda: ops.embedding(4096, 128256, 4096, phase="prefill"),
    "rmsnorm": lambda: ops.rmsnorm(4096, 4096, phase="prefill"),
    "rmsnorm_residual": lambda: ops.rmsnorm(
        4096, 4096, residual=True, name="post_attention_norm", phase="prefill"
    ),
    "layernorm": lambda: ops.layernorm(8192, 4096, phase="train_fwd"),
    "copy": lambda: ops.copy((8192, 8192), out_dtype="fp32", name="cast_copy", phase="train_fwd"),
    "reduction": lambda: ops.reduction(
        8192, 4096, "fp32", function="sum", name="row_sum", phase="train_fwd"
    ),
    "all_reduce": lambda: ops.collective(
        "all_reduce", 4096 * 8192, 8, name="all_reduce", phase="prefill"
    ),
    "cross_entropy": lambda: ops.cross_entropy(
        8192, 128256, implementation="pytorch", name="lm_head_loss"
    ),
    "optimizer": lambda: ops.optimizer("adamw", 1003782656, tensors=291),
    "causal_where": lambda: ops.elementwise(
        "where",
        (192, 1024, 1024),
        input_shapes=[(1, 1024, 1024), (192, 1024, 1024), 1],
        name="causal_where",
        phase="prefill",
    ),
    "silu_strided": lambda: ops.elementwise(
        "silu", (2048, 4, 14336), strided_inputs=[0], name="silu_strided", phase="train_fwd"
    ),
}


@pytest.mark.parametrize("example", sorted(BUILT))
def test_a_constructor_builds_its_example(example: str) -> None:
    assert BUILT[example]() == load_op(EXAMPLES / f"{example}.yaml")


def test_defaults_and_options() -> None:
    """bf16 and phase inference by default; transposes lay A out [k, m] and B [n, k]; a
    broadcast B has no batch dim; options at their defaults add no attrs."""
    op = ops.gemm(64, 32, 16, transpose_a=True, transpose_b=True, out_dtype="fp32")
    assert [t.shape for t in op.tensors] == [(16, 64), (32, 16), (64, 32)]
    assert [t.dtype.value for t in op.tensors] == ["bf16", "bf16", "fp32"]
    assert (op.name, op.phase.value) == ("gemm", "inference")
    assert ops.gemm(64, 32, 16).attrs == {}
    shared = ops.batched_gemm(4, 64, 32, 16, broadcast_b=True)
    assert [t.shape for t in shared.tensors] == [(4, 64, 16), (16, 32), (4, 64, 32)]
    assert ops.elementwise("add", 10).tensors[0].shape == (10,)
    assert len(ops.elementwise("add", 10).tensors) == 3  # two inputs, one output
    assert len(ops.elementwise("fma", 10).tensors) == 4
    assert len(ops.elementwise("gelu", 10).tensors) == 2
    # GEGLU's gelu_tanh(a) * b (Liger's fused kernel, vLLM's gelu_tanh_and_mul): two inputs,
    # 9 FLOPs for the tanh GELU and 1 for the product
    geglu = ops.elementwise("gelu_tanh_and_mul", (4, 8), implementation="vllm")
    assert len(geglu.tensors) == 3 and op_work(geglu).flops == 32 * 10
    # torch.where(cond, a, b): the condition one byte an element (a bool, stored as int8)
    select = ops.elementwise("where", (4, 8), "fp32")
    assert [t.dtype.value for t in select.tensors] == ["int8", "fp32", "fp32", "fp32"]
    work = op_work(select)  # one select an element; 1 + 4 + 4 bytes in, 4 out
    # broadcast inputs: a bias [n] onto [m, n]; GPT-2's causal where (mask, scores, 0-dim fill)
    bias = ops.elementwise("add", (64, 32), input_shapes=[(64, 32), (32,)])
    assert [t.shape for t in bias.tensors] == [(64, 32), (32,), (64, 32)]
    causal = ops.elementwise("where", (8, 16, 16), input_shapes=[(1, 16, 16), (8, 16, 16), 1])
    assert [t.shape for t in causal.tensors] == [(1, 16, 16), (8, 16, 16), (1,), (8, 16, 16)]
    assert causal.tensors[0].dtype.value == "int8"
    assert (work.flops, work.read_bytes, work.write_bytes) == (32, 32 * 9, 32 * 4)
    assert len(ops.layernorm(8, 16, affine=False).tensors) == 2
    # a fused residual add: the residual read and the sum written, tagged "residual"
    fused = ops.layernorm(8, 16, residual=True)
    assert [(t.role.value, t.layout) for t in fused.tensors] == [
        ("input", None),
        ("input", "residual"),
        ("weight", None),
        ("weight", None),
        ("output", None),
        ("output", "residual"),
    ]
    chunk = ops.attention_prefill(2, 8, 128, 64, seq_kv=1024, causal=True)
    assert [t.shape[2] for t in chunk.tensors] == [128, 1024, 1024, 128]


def test_numpy_sizes_are_plain_ints() -> None:
    np = pytest.importorskip("numpy")
    op = ops.grouped_gemm(np.bincount([0, 0, 1, 3], minlength=4), np.int64(256), 128)
    assert op.attrs["group_sizes"] == (2, 1, 0, 1)
    assert op == ops.grouped_gemm([2, 1, 0, 1], 256, 128)
    assert ops.copy(np.array([4, 8])) == ops.copy((4, 8))
    assert ops.elementwise("add", np.int32(16)) == ops.elementwise("add", 16)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: ops.gemm(0, 8, 8), "ops.gemm: m must be a positive integer (got 0)"),
        (lambda: ops.gemm(8, 2.5, 8), "ops.gemm: n must be a positive integer (got 2.5)"),
        (lambda: ops.gemm(8, 8, True), "ops.gemm: k must be a positive integer (got True)"),
        (lambda: ops.gemm(8, 8, 8, "bf17"), "ops.gemm: dtype: must be one of"),
        (lambda: ops.gemm(8, 8, 8, weight_dtype="nvfp5"), "ops.gemm: weight_dtype: must be"),
        (
            lambda: ops.grouped_gemm([4], 8, 8, weight_dtype=4),
            "ops.grouped_gemm: weight_dtype: must be",
        ),
        (lambda: ops.gemm(8, 8, 8, phase="fwd"), "ops.gemm: phase: must be one of"),
        (lambda: ops.grouped_gemm([4, -1], 8, 8), "group_sizes[1] must be an integer >= 0"),
        (lambda: ops.grouped_gemm([4], 0, 8), "ops.grouped_gemm: n must be a positive integer"),
        (lambda: ops.batched_gemm(2, 8, 8, 0), "ops.batched_gemm: k must be a positive integer"),
        (lambda: ops.grouped_gemm([0, 0], 8, 8), "at least one group with rows"),
        (lambda: ops.grouped_gemm("4,4", 8, 8), "group_sizes must be a list of integers"),
        (lambda: ops.elementwise("gleu", 8), "did you mean 'gelu'"),
        (lambda: ops.copy([], "bf16"), "ops.copy: shape must have at least one dimension"),
        (lambda: ops.attention_decode(1, 32, 64, 0), "head_dim must be a positive integer"),
        (lambda: ops.attention_prefill(1, 32, 64, 64, kv_heads=5), "op 'attention_prefill'"),
        (lambda: ops.gemm(8, 8, 8, cta_tile_mm=64), "cta_tile_m"),  # the kind's schema
        (lambda: ops.gemm(8, 8, 8, transpose_a="yes"), "transpose_a: must be a boolean"),
        (lambda: ops.layernorm(8, 8, affine=1), "ops.layernorm: affine must be True or False"),
        (lambda: ops.rmsnorm(8, 8, residual="y"), "ops.rmsnorm: residual must be True or False"),
        (lambda: ops.batched_gemm(2, 8, 8, 8, broadcast_b="no"), "broadcast_b must be True"),
        (lambda: ops.elementwise(["add"], 8), "function must be one of"),
        (lambda: ops.elementwise("where", 8, inputs=2), "inputs must be 3 for where (got 2)"),
        (
            lambda: ops.elementwise("add", (4, 8), input_shapes=[(4, 8), (3,)]),
            "ops.elementwise: input_shapes[1] [3] does not broadcast to [4, 8]",
        ),
        (
            lambda: ops.elementwise("add", 8, input_shapes=[8], inputs=2),
            "input_shapes must list 2 shapes (got 1)",
        ),
        (lambda: ops.elementwise("add", 8, input_shapes=8), "input_shapes must be a list"),
        (lambda: ops.elementwise("add", 8, input_shapes=[[0]]), "input_shapes[0][0] must be"),
        (
            lambda: ops.elementwise("where", 8, input_shapes=[8, 8]),
            "inputs must be 3 for where (got 2)",
        ),
        (lambda: ops.attention_prefill(None, 8, 64, 64), "batch must be a positive integer"),
    ],
)
def test_bad_arguments_are_one_line_errors(build: object, message: str) -> None:
    with pytest.raises(OpValidationError) as raised:
        build()  # type: ignore[operator]
    assert message in str(raised.value) and "\n" not in str(raised.value)


@pytest.mark.parametrize("model", model_names())
def test_every_constructed_op_predicts(model: str) -> None:
    """Each constructor's op, and the backward of the attention and row ops, on an H100."""
    hw, predictor = load_hardware("h100_sxm"), get_model(model)
    built: list[LocalOp] = [build() for build in BUILT.values()]
    built += [backward_of(ops.attention_prefill(1, 8, 512, 64)), backward_of(ops.rmsnorm(64, 512))]
    built += [ops.softmax(64, 512), ops.elementwise("cast", 100, out_dtype="fp32")]
    for op in built:
        assert predictor.predict(op, hw).latency_s > 0


def test_the_llama_example_lowers_the_sweep_table_s_layer(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Python example's layer is the first 11 rows of examples/sweep_llama3_8b.csv, op for
    op, and the script prints one line per op and the layer's sum."""
    module = load_example("llama3_8b_layer")
    with (EXAMPLES / "sweep_llama3_8b.csv").open(encoding="utf-8") as table:
        rows = list(csv.DictReader(table))[:11]
    built = module.layer_ops(2048)
    assert built == [op_from_row(row, "sweep_llama3_8b.csv") for row in rows]
    monkeypatch.setattr(sys, "argv", ["llama3_8b_layer.py", "--hardware", "a10", "--tp", "2"])
    module.main()
    lines = capsys.readouterr().out.splitlines()
    # the 11 ops, an all-reduce after o_proj and after down_proj at TP 2, the sum
    assert len(lines) == 14 and lines[-1].startswith("layer ")
    assert [line.split()[0] for line in lines].index("all_reduce") == 5
    latencies = [float(line.split()[1]) for line in lines]
    assert latencies[-1] == pytest.approx(sum(latencies[:-1]), abs=0.6)  # 0.1 us rounding each


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--tokens", "0"], r"^ops\.rmsnorm: rows must be a positive integer \(got 0\)$"),
        (["--hardware", "h100"], r"^unknown hardware config 'h100'; did you mean"),
        (
            ["--hardware", "mi355x", "--tp", "2"],
            r"^op 'all_reduce' \(collective\): .*no interconnect",
        ),
    ],
)
def test_the_llama_example_rejects_bad_input_in_one_line(
    monkeypatch: pytest.MonkeyPatch, argv: list[str], message: str
) -> None:
    module = load_example("llama3_8b_layer")
    monkeypatch.setattr(sys, "argv", ["llama3_8b_layer.py", *argv])
    with pytest.raises(SystemExit, match=message) as raised:
        module.main()
    assert "\n" not in str(raised.value)


def test_reduction_over_the_rows_is_a_leading_axis_sum() -> None:
    op = ops.reduction(8192, 4096, "bf16", dim=0, name="bias_grad", phase="train_bwd")
    assert [t.shape for t in op.tensors] == [(8192, 4096), (4096,)]
    assert op.attrs["dim"] == (0,)
    assert "dim" not in ops.reduction(8192, 4096, dim=-1).attrs
    with pytest.raises(OpValidationError, match=r"ops.reduction: dim must be 0 or 1 .* \(got 2\)"):
        ops.reduction(8192, 4096, dim=2)
