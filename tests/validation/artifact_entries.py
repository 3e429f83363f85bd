"""Op-list entries in EnergAIzer's format, shared by the validate-artifact tests."""

from __future__ import annotations

GEMM = {"batch": 1, "dimM": 256, "dimN": 768, "dimK": 768, "precM": "bf16", "precA": "bf16"}


OPS = [
    [GEMM, ["gemm", "tc", "bf16_bf16"]],
    [{"batch": 24, "dimM": 128, "dimN": 128, "dimK": 64, "precM": "bf16"}, ["gemm", "tc"]],
    [{"batch": 3072, "dim": 128, "prec": "fp32"}, ["softmax", "fp32"]],
    [{"batch": 256, "dim": 768, "prec": "bf16"}, ["layernorm", "bf16"]],
    [{"dim": 196608, "op": "pointwise_add", "prec": "bf16"}, ["elementwise"]],
    [{"dim": 786432, "op": "typecast_to_fp32", "prec": "bf16"}, ["elementwise"]],
    [{"dim": 10, "op": "mystery", "prec": "bf16"}, ["elementwise"]],
]


# ResNet's 3 x 3 convolution of 8 x 128 x 28 x 28 into 128 channels, stride 1, padding 1: the
# implicit GEMM is (8 x 28 x 28) x 128 x (128 x 9)
CONV = {
    **GEMM,
    **{"dimM": 6272, "dimN": 128, "dimK": 1152, "b": 8, "m": 128, "c": 128, "hw": 28, "rs": 3},
    **{"stride": 1, "padding": 1, "useTensorCore": True},
}
