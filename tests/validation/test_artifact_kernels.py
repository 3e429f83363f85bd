"""validate-artifact's op lists: entries to ops, and the kernels eager PyTorch runs that the lists leave out."""

from __future__ import annotations

from typing import Any

import pytest

from opmodel import DType, OpKind
from opmodel.validation.artifact_kernels import complete_entries, kernels_from_entry
from opmodel.validation.artifact_ops import op_from_entry
from tests.validation.artifact_entries import CONV, GEMM, OPS


def test_entries_map_to_ops() -> None:
    gemm = op_from_entry(OPS[0])
    assert gemm.kind is OpKind.GEMM and [t.shape for t in gemm.tensors] == [
        (256, 768),
        (768, 768),
        (256, 768),
    ]
    assert op_from_entry(OPS[1]).kind is OpKind.BATCHED_GEMM
    softmax = op_from_entry(OPS[2])
    assert softmax.kind is OpKind.SOFTMAX and softmax.tensors[0].dtype is DType.FP32
    assert softmax.attrs["implementation"] == "pytorch"
    assert len(op_from_entry(OPS[3]).tensors) == 4  # x, gamma, beta, y
    add = op_from_entry(OPS[4])
    assert (add.kind, add.attrs["function"], len(add.tensors)) == (OpKind.ELEMENTWISE, "add", 3)
    cast = op_from_entry(OPS[5])
    assert cast.kind is OpKind.COPY and cast.tensors[1].dtype is DType.FP32
    with pytest.raises(ValueError, match="elementwise op 'mystery' is not mapped"):
        op_from_entry(OPS[6])
    with pytest.raises(ValueError, match="dimK must be a positive integer"):
        op_from_entry([{**GEMM, "dimK": 0}, ["gemm"]])
    with pytest.raises(ValueError, match="op kind 'pool' is not mapped"):
        op_from_entry([{}, ["pool"]])
    # JSON lists and objects where a name belongs are rows to skip, not a TypeError
    with pytest.raises(ValueError, match=r"precM must be one of .* \(got \[\]\)"):
        op_from_entry([{**GEMM, "precM": []}, ["gemm"]])
    with pytest.raises(ValueError, match=r"elementwise op must be a name \(got \{\}\)"):
        op_from_entry([{**OPS[4][0], "op": {}}, ["elementwise"]])


def test_eager_attention_bmm_copies_its_operands_and_context() -> None:
    """torch.matmul folds a 4-D bmm's batch with reshape, which copies the head-split Q, K
    (scores) and V (context); merging the heads copies the context. Sizes by hand for 2 x 12
    heads, 512 tokens, head size 64: each copy moves 24 x 512 x 64 elements once each way."""
    scores = {"batch": 24, "dimM": 512, "dimN": 512, "dimK": 64, "precM": "bf16"}
    context = {"batch": 24, "dimM": 512, "dimN": 64, "dimK": 512, "precM": "bf16"}
    names = {
        "scores": [op.name for op in kernels_from_entry([scores, ["gemm"]]).kernels],
        "context": [op.name for op in kernels_from_entry([context, ["gemm"]]).kernels],
    }
    assert names == {
        "scores": ["query_copy", "key_copy", "gemm"],
        "context": ["value_copy", "gemm", "context_copy"],
    }
    for entry in (scores, context):
        for op in kernels_from_entry([entry, ["gemm"]]).kernels:
            if op.kind is OpKind.COPY:
                assert [t.shape for t in op.tensors] == [(24 * 512 * 64,)] * 2
                assert op.tensors[0].dtype is DType.BF16
    # a linear layer (batch 1) and a bmm of another shape launch the GEMM alone
    assert len(kernels_from_entry(OPS[0]).kernels) == 1
    other = {"batch": 4, "dimM": 256, "dimN": 512, "dimK": 512, "precM": "bf16"}
    assert len(kernels_from_entry([other, ["gemm"]]).kernels) == 1


def test_gpt2_score_division_is_followed_by_the_causal_where() -> None:
    """The lists' 'unspecified_tensor' (GPT-2's division of the scores by a 0-dim CUDA tensor)
    after a Q K^T bmm of its size: torch.full's fill, the division, the fill of the mask value
    and the causal torch.where the lists leave out, four host calls, the division and the where
    ATen's broadcast kernel."""
    qk = [{"batch": 24, "dimM": 128, "dimN": 128, "dimK": 64, "precM": "bf16"}, ["gemm"]]
    division = [
        {"dim": 24 * 128 * 128, "op": "unspecified_tensor", "prec": "bf16"},
        ["elementwise"],
    ]
    done = complete_entries([qk, division], "gpt2")
    assert done[0] is qk and [e[0]["op"] for e in done[1:]] == [
        "fill",
        "unspecified_tensor",
        "fill",
        "causal_where",
    ]
    launched = [kernels_from_entry(e) for e in done[1:]]
    assert all(len(k.kernels) == 1 and k.op is k.kernels[0] for k in launched)
    fill, divide, _, where = (k.op for k in launched)
    assert fill.kind is OpKind.COPY and [t.shape for t in fill.tensors] == [(1,), (1,)]
    scores = (24, 128, 128)
    assert divide.attrs["function"] == "div"
    assert [t.shape for t in divide.tensors] == [scores, (1,), scores]
    assert where.name == "causal_where" and where.attrs["function"] == "where"
    # the bool mask [1, queries, keys] every batch and head shares, the scores, the 0-dim fill
    assert [t.shape for t in where.tensors] == [(1, 128, 128), scores, (1,), scores]
    assert [t.dtype for t in where.tensors] == [DType.INT8, *[DType.BF16] * 3]
    # a division of another size than the bmm before it keeps the one-input reading
    other = [{**division[0], "dim": 1000}, division[1]]
    (_, alone) = complete_entries([qk, other], "gpt2")
    kernels = kernels_from_entry(alone).kernels
    assert [op.name for op in kernels] == ["unspecified_tensor", "causal_where"]
    for op in kernels:
        assert op.kind is OpKind.ELEMENTWISE
        assert [t.shape for t in op.tensors] == [(1000,), (1000,)]
    bad = [{"op": "causal_where", "prec": "bf16"}, ["elementwise"]]
    with pytest.raises(ValueError, match="causal_where: needs score_batch"):
        kernels_from_entry(bad)
    with pytest.raises(ValueError, match="prec must be bf16, fp16 or fp32"):
        kernels_from_entry([{"op": "fill", "prec": "int4"}, ["elementwise"]])


def test_resnet_entries_gain_batch_norms_and_residual_adds() -> None:
    """torchvision's ResNet: a batch norm after every convolution (its output's size), and a
    residual add before every third ReLU after the stem's; other families are unchanged."""
    conv = [{**CONV, "dimM": 100, "dimN": 8}, ["conv2d", "tc", "bf16_bf16"]]
    relu = [{"dim": 800, "op": "relu", "prec": "bf16"}, ["elementwise"]]
    block = [conv, relu, conv, relu, conv, conv, relu]  # conv3 and the downsample, then add
    entries = [conv, relu, *block, *block]
    done = complete_entries(entries, "resnet101")
    names = [e[1][0] if e[1][0] != "elementwise" else e[0]["op"] for e in done]
    assert names.count("batch_norm_eval") == 9 and names.count("pointwise_add") == 2
    assert names[:3] == ["conv2d", "batch_norm_eval", "relu"]
    assert names[-3:] == ["batch_norm_eval", "pointwise_add", "relu"]
    norms = [e for e in done if e[0].get("op") == "batch_norm_eval"]
    assert {e[0]["dim"] for e in norms} == {800}
    (norm,) = kernels_from_entry(norms[0]).kernels
    assert norm.kind is OpKind.ELEMENTWISE and [t.shape for t in norm.tensors] == [(800,)] * 2
    assert complete_entries(entries, "opt") is entries


def _ew(op: str, dim: int, prec: str) -> list[Any]:
    return [{"dim": dim, "op": op, "prec": prec}, ["elementwise"]]


def test_qwen2_rms_norms_gain_their_casts_and_mean() -> None:
    """Qwen2's RMSNorm (transformers 4.51.3) casts to fp32, takes the mean of the squares per
    row and casts back before the weight's multiply; the lists keep only the pow, add, rsqrt
    and the two multiplies. 6 rows of 4 elements: 24 and 6."""
    norm = [
        _ew("unspecified_scalar", 24, "fp32"),
        _ew("scalar_add", 6, "fp32"),
        _ew("unspecified_scalar", 6, "fp32"),
        _ew("pointwise_mul", 24, "fp32"),
        _ew("scalar_mul", 24, "bf16"),
    ]
    gemm = [GEMM, ["gemm", "tc", "bf16_bf16"]]
    entries = [gemm, *norm, gemm, _ew("pointwise_add", 24, "bf16"), *norm]
    done = complete_entries(entries, "qwen2")
    assert len(done) == len(entries) + 6
    names = [e[0]["op"] if e[1][0] == "elementwise" else e[1][0] for e in done]
    assert names[:9] == [
        "gemm",
        "typecast_to_fp32",
        "unspecified_scalar",
        "reduction",
        "scalar_add",
        "unspecified_scalar",
        "pointwise_mul",
        "typecast_to_bf16",
        "scalar_mul",
    ]
    (mean,) = kernels_from_entry(done[3]).kernels
    assert mean.kind is OpKind.REDUCTION and mean.attrs["function"] == "mean"
    assert [t.shape for t in mean.tensors] == [(6, 4), (6,)]
    (cast,) = kernels_from_entry(done[1]).kernels
    assert cast.kind is OpKind.COPY
    assert [t.dtype for t in cast.tensors] == [DType.BF16, DType.FP32]
    # not a norm: the per-row add must divide the elements into rows of more than one
    odd = [_ew("unspecified_scalar", 24, "fp32"), _ew("scalar_add", 24, "fp32"), *norm[2:]]
    assert complete_entries(odd, "qwen2") == odd
    assert complete_entries(entries, "opt") is entries


def test_conv2d_runs_layout_transforms_around_its_gemm() -> None:
    """A tensor-core conv2d of NCHW tensors: input and filter to NHWC / KRSC, the implicit GEMM,
    the output back to NCHW; each transform reads and writes its tensor once."""
    launched = kernels_from_entry([CONV, ["conv2d", "tc", "bf16_bf16"]])
    assert launched.op.kind is OpKind.GEMM and launched.kernels[2] is launched.op
    names = [op.name for op in launched.kernels]
    assert names == ["nchw_to_nhwc", "kcrs_to_krsc", "conv2d", "nhwc_to_nchw"]
    elements = [op.tensors[0].shape for op in launched.kernels if op.kind is OpKind.COPY]
    assert elements == [(8 * 128 * 28 * 28,), (128 * 128 * 9,), (6272 * 128,)]
    transforms = [op for op in launched.kernels if op.kind is OpKind.COPY]
    assert all(op.tensors[0].dtype is op.tensors[1].dtype is DType.BF16 for op in transforms)
    # without its convolution fields a conv2d entry is the GEMM alone; a GEMM entry always is
    bare = {k: v for k, v in CONV.items() if k not in ("b", "c", "hw", "m", "rs")}
    assert len(kernels_from_entry([bare, ["conv2d"]]).kernels) == 1
    assert len(kernels_from_entry(OPS[0]).kernels) == 1
    with pytest.raises(ValueError, match=r"conv2d m=64, c=128, rs=3 do not match its GEMM"):
        kernels_from_entry([{**CONV, "m": 64}, ["conv2d"]])
    with pytest.raises(ValueError, match="hw must be a positive integer"):
        kernels_from_entry([{**CONV, "hw": 0}, ["conv2d"]])
