"""LocalOp: every malformed op is refused with its exact one-line message."""

from __future__ import annotations

import pytest

from opmodel import (
    LocalOp,
    OpValidationError,
    TensorSpec,
)
from opmodel.core.errors import did_you_mean


def _t(role: str, shape: object, dtype: str = "bf16", layout: str | None = None) -> TensorSpec:
    return TensorSpec(role, shape, dtype, layout)  # type: ignore[arg-type]


def _op(kind: str, tensors: tuple[TensorSpec, ...], **attrs: object) -> LocalOp:
    return LocalOp(name="x", kind=kind, phase="train_fwd", tensors=tensors, attrs=attrs)  # type: ignore[arg-type]


A, B, C = _t("input", (4, 8)), _t("weight", (8, 3)), _t("output", (4, 3))


def _rmsnorm(**attrs: object) -> LocalOp:
    """A 4 x 6 bf16 RMSNorm (48-byte input) with ``attrs``."""
    return _op("rmsnorm", (_t("input", (4, 6)), _t("weight", (6,)), _t("output", (4, 6))), **attrs)


Q = _t("input", (1, 4, 16, 8), layout="q")


K = _t("input", (1, 2, 16, 8), layout="k")


V = _t("input", (1, 2, 16, 8), layout="v")


OUT = _t("output", (1, 4, 16, 8), layout="o")


BAD_OPS = [
    (
        lambda: _t("input", "45"),
        "TensorSpec.shape: must be a list or tuple of positive integers (got '45')",
    ),
    (
        lambda: _t("input", (4, 0)),
        "TensorSpec.shape: every dimension must be a positive integer (got (4, 0))",
    ),
    (
        lambda: _t("input", (4, 2.0)),
        "TensorSpec.shape: every dimension must be a positive integer (got (4, 2.0))",
    ),
    (
        lambda: _t("input", (True, 2)),
        "TensorSpec.shape: every dimension must be a positive integer (got (True, 2))",
    ),
    (lambda: _t("input", ()), "TensorSpec.shape: must have at least one dimension (got ())"),
    (  # 2^40 x 2^40 elements: past a 64-bit index (and a 1e308 dimension would overflow floats)
        lambda: _t("input", (2**40, 2**40)),
        "TensorSpec.shape: at most 2^63 - 1 elements, the 64-bit index limit (got about 10^24 "
        "from [1099511627776, 1099511627776])",
    ),
    (
        lambda: _t("inptu", (4,)),
        "TensorSpec.role: must be one of input, weight, output, grad, workspace (got 'inptu'); did you mean 'input'?",
    ),
    (
        lambda: _t("input", (4,), "bf61"),
        "TensorSpec.dtype: must be one of fp64, fp32, tf32, fp16, bf16, fp8, fp8_e4m3, fp8_e5m2, mxfp8, fp6, mxfp6, fp4, mxfp4, nvfp4, int64, int32, int8, int4 (got 'bf61'); did you mean 'bf16'?",
    ),
    (
        lambda: TensorSpec("input", (4,), "bf16", 3),
        "TensorSpec.layout: must be a string or None (got 3)",
    ),  # type: ignore[arg-type]
    (
        lambda: LocalOp(name="", kind="gemm", phase="train_fwd", tensors=(A, B, C)),
        "LocalOp.name: must be a non-empty string (got '')",
    ),
    (
        lambda: _op("gemmm", (A, B, C)),
        "op 'x': kind: must be one of gemm, batched_gemm, grouped_gemm, attention_prefill, attention_decode, softmax, layernorm, rmsnorm, elementwise, reduction, embedding, copy, cross_entropy, collective, optimizer (got 'gemmm'); did you mean 'gemm'?",
    ),
    (
        lambda: LocalOp(name="x", kind="gemm", phase="training", tensors=(A, B, C)),
        "op 'x': phase: must be one of train_fwd, train_bwd, prefill, decode, inference (got 'training')",
    ),
    (lambda: _op("gemm", ()), "op 'x': tensors: must be a non-empty list of TensorSpec (got ())"),
    (lambda: _op("gemm", (A, "B", C)), "op 'x': tensors[1]: must be a TensorSpec (got 'B')"),  # type: ignore[arg-type]
    (
        lambda: _op("gemm", (A, B, C), transpose_a="false"),
        "op 'x' (gemm): attrs.transpose_a: must be a boolean true/false (got 'false')",
    ),
    (
        lambda: _op("gemm", (A, B, C), cta_tile_mm=128),
        "op 'x' (gemm): attrs.cta_tile_mm: unknown attribute for gemm; did you mean 'cta_tile_m'? (accepted: beta_zero, compute_dtype, cta_tile_k, cta_tile_m, cta_tile_n, gemm_selection_backend, gemm_selection_objective, gemm_selection_shortlist_size, l2_dirty_bytes, pipeline_stages, raster_swizzle, registers_per_thread, resident_ctas_per_sm, split_k, transpose_a, transpose_b, warp_tile_k, warp_tile_m, warp_tile_n, warps_per_cta)",
    ),
    (
        lambda: _op("gemm", (A, B, C), split_k=0),
        "op 'x' (gemm): attrs.split_k: must be >= 1 (got 0)",
    ),
    (
        lambda: _op("gemm", (A, B, C), gemm_selection_backend="roofline"),
        "op 'x' (gemm): attrs.gemm_selection_backend: must be one of effective_roofline (got 'roofline'); did you mean 'effective_roofline'?",
    ),
    (
        lambda: _op("gemm", (A, _t("weight", (7, 3)), C)),
        "op 'x' (gemm): inner dimensions differ: A has k=8 but B has k=7 (A [4, 8], B [7, 3], transpose_a=False, transpose_b=False)",
    ),
    (
        lambda: _op("gemm", (A, B, _t("output", (4, 4)))),
        "op 'x' (gemm): C must be [4, 3] for A [4, 8] and B [8, 3]; got [4, 4]",
    ),
    (lambda: _op("gemm", (A, C)), "op 'x' (gemm): needs exactly one weight tensor (B), got 0"),
    (
        lambda: _op("gemm", (_t("input", (2, 4, 8)), B, C)),
        "op 'x' (gemm): A must have 2 dims (A [m, k]); got shape [2, 4, 8]",
    ),
    (
        lambda: _op("gemm", (A, B, C, _t("grad", (4, 3)))),
        "op 'x' (gemm): tensors[3]: role grad not accepted (input, weight, output, workspace)",
    ),
    (
        lambda: _op(
            "batched_gemm",
            (_t("input", (2, 4, 8)), _t("weight", (3, 8, 3)), _t("output", (2, 4, 3))),
        ),
        "op 'x' (batched_gemm): B batch 3 differs from A batch 2",
    ),
    (
        lambda: _op("attention_prefill", (Q, K, OUT)),
        "op 'x' (attention_prefill): needs three input tensors Q, K, V; got 2",
    ),
    (
        lambda: _op(
            "attention_prefill",
            (
                Q,
                _t("input", (1, 3, 16, 8), layout="k"),
                _t("input", (1, 3, 16, 8), layout="v"),
                OUT,
            ),
        ),
        "op 'x' (attention_prefill): K/V heads 3 must divide Q heads 4 (GQA/MQA)",
    ),
    (
        lambda: _op("attention_prefill", (Q, _t("input", (1, 2, 16, 4), layout="k"), V, OUT)),
        "op 'x' (attention_prefill): Q head_dim 8 differs from K head_dim 4",
    ),
    (
        lambda: _op(
            "attention_prefill",
            (_t("input", (1, 4, 32, 8), layout="q"), K, V, _t("output", (1, 4, 32, 8))),
            causal=True,
        ),
        "op 'x' (attention_prefill): causal attention needs seq_q <= seq_kv (got 32 > 16)",
    ),
    (
        lambda: _op("attention_decode", (Q, K, V, _t("output", (1, 4, 16)))),
        "op 'x' (attention_decode): O must be [batch, heads, seq, head_dim]; got [1, 4, 16]",
    ),
    (
        lambda: _op("softmax", (_t("input", (4, 6)), _t("output", (4, 6))), row_length=5),
        "op 'x' (softmax): row_length 5 does not divide the 24 elements of input [4, 6]",
    ),
    (
        lambda: _op("layernorm", (_t("input", (4, 6)), _t("weight", (5,)), _t("output", (4, 6)))),
        "op 'x' (layernorm): weight [5] must have row_length=6 elements",
    ),
    (
        lambda: _op("softmax", (_t("input", (4, 6)), _t("weight", (6,)), _t("output", (4, 6)))),
        "op 'x' (softmax): softmax takes no weight tensor",
    ),
    (
        lambda: _op("elementwise", (_t("input", (4, 5)), _t("output", (4, 6)))),
        "op 'x' (elementwise): input 0 shape [4, 5] does not broadcast to output [4, 6]",
    ),
    (
        lambda: _op(
            "elementwise", (_t("input", (4, 6)), _t("output", (4, 6))), function="gelu_and_muls"
        ),
        "op 'x' (elementwise): attrs.function: must be one of add, sub, mul, div, maximum, minimum, scalar_add, scalar_mul, relu, relu_squared, neg, exp, tanh, sigmoid, silu, gelu, gelu_tanh, silu_and_mul, gelu_and_mul, gelu_tanh_and_mul, fma, where, cast, rope, dropout, relu_backward, sigmoid_backward, tanh_backward, silu_backward, gelu_backward (got 'gelu_and_muls'); did you mean 'gelu_and_mul'?",
    ),
    (
        lambda: _op("elementwise", (_t("input", (4, 6)), _t("output", (4, 6))), function="where"),
        "op 'x' (elementwise): function where needs 3 inputs, a condition and two operands (got 1)",
    ),
    (
        lambda: _op("reduction", (_t("input", (4, 6)), _t("output", (5,)))),
        "op 'x' (reduction): output [5] elements must divide input [4, 6] elements",
    ),
    (
        lambda: _op(
            "embedding", (_t("input", (8,), "bf16"), _t("weight", (100, 16)), _t("output", (8, 16)))
        ),
        "op 'x' (embedding): indices must have an integer dtype (got bf16)",
    ),
    (
        lambda: _op(
            "embedding",
            (_t("input", (8,), "int32"), _t("weight", (100, 16)), _t("output", (8, 15))),
        ),
        "op 'x' (embedding): output must be [*indices.shape, 16] = [8, 16]; got [8, 15]",
    ),
    (
        lambda: _op("copy", (_t("input", (8,)), _t("output", (9,)))),
        "op 'x' (copy): output [9] must have as many elements as input [8]",
    ),
    (
        lambda: _op("copy", (_t("input", (8,)), _t("output", (8,))), causal=True),
        "op 'x' (copy): attrs.causal: unknown attribute for copy (accepted: aten_128bit_vectors, compute_dtype, l2_dirty_bytes, producer_bytes, producer_waves, warm_input, warm_l2)",
    ),
    (
        lambda: _op(
            "elementwise",
            (_t("input", (4, 6)), _t("input", (4, 6)), _t("output", (4, 6))),
            function="add",
            warm_input=2,
        ),
        "op 'x' (elementwise): attrs.warm_input: must be the position of one of the op's 2 input tensors, 0 to 1 (got 2)",
    ),
    (
        lambda: _rmsnorm(warm_input=0, warm_l2=True),
        "op 'x' (rmsnorm): attrs.warm_input: cannot be combined with warm_l2: true (warm_l2 already marks every input warm)",
    ),
    (
        lambda: _rmsnorm(producer_bytes=4096),
        "op 'x' (rmsnorm): attrs.producer_bytes: needs warm_l2: true or warm_input (it describes the kernel that wrote the warm input)",
    ),
    (
        lambda: _rmsnorm(producer_waves=2),
        "op 'x' (rmsnorm): attrs.producer_waves: needs warm_l2: true or warm_input (it describes the kernel that wrote the warm input)",
    ),
    (
        lambda: _rmsnorm(warm_l2=True, producer_waves=0),
        "op 'x' (rmsnorm): attrs.producer_waves: must be >= 1 (got 0)",
    ),
    (
        lambda: _rmsnorm(warm_l2=True, producer_bytes=0),
        "op 'x' (rmsnorm): attrs.producer_bytes: must be >= 1 (got 0)",
    ),
    (
        lambda: _rmsnorm(warm_l2=True, producer_bytes=47),
        "op 'x' (rmsnorm): attrs.producer_bytes: must be at least the 48 bytes of the warm inputs, which the producer wrote (got 47)",
    ),
]


@pytest.mark.parametrize(
    ("build", "message"), BAD_OPS, ids=[f"bad_op_{i}" for i in range(len(BAD_OPS))]
)
def test_bad_ops_raise_exact_messages(build: object, message: str) -> None:
    assert callable(build)
    with pytest.raises(OpValidationError) as info:
        build()
    assert str(info.value) == message


def test_there_are_at_least_twenty_bad_op_cases() -> None:
    assert len(BAD_OPS) >= 20


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("h200", "; did you mean 'h200_sxm'?"),  # begins it, though 'b200' is one letter away
        ("H200", "; did you mean 'h200_sxm'?"),
        ("a100", "; did you mean 'a100_80gb_sxm'?"),  # two begin with it: the closer one
        ("h10_sxm", "; did you mean 'h100_sxm'?"),  # none begins with it: the closest
        ("zzzz", ""),
    ],
)
def test_did_you_mean_prefers_names_the_word_begins(word: str, expected: str) -> None:
    names = ["a100_40gb_pcie", "a100_80gb_sxm", "b200", "h100_sxm", "h200_sxm"]
    assert did_you_mean(word, names) == expected
