"""scripts/rotate_half_experiment.py: where it puts rotate_half's two kernels in a Qwen2 list."""

from __future__ import annotations

from typing import Any

from tests.scripts.loader import load_script


def _ew(op: str, dim: int, prec: str = "bf16") -> list[Any]:
    return [{"dim": dim, "op": op, "prec": prec}, ["elementwise"]]


def test_neg_and_cat_go_before_each_rope_triples_second_multiply() -> None:
    script = load_script("rotate_half_experiment")
    gemm = [{"batch": 1, "dimM": 8, "dimN": 8, "dimK": 8}, ["gemm"]]
    q = [_ew("pointwise_mul", 64), _ew("pointwise_mul", 64), _ew("pointwise_add", 64)]
    k = [_ew("pointwise_mul", 16), _ew("pointwise_mul", 16), _ew("pointwise_add", 16)]
    mlp = [_ew("pointwise_mul", 32), _ew("pointwise_mul", 32), _ew("pointwise_add", 8)]
    fp32 = [_ew("pointwise_mul", 4, "fp32")] * 2 + [_ew("pointwise_add", 4, "fp32")]
    done = script.with_rotate_half([gemm, *q, *k, *mlp, *fp32])
    ops = [(e[0].get("op"), e[0].get("dim")) for e in done]
    assert ops[:6] == [
        (None, None),
        ("pointwise_mul", 64),
        ("neg", 32),  # -x2: half of q
        ("typecast_to_bf16", 64),  # the cat, as a bf16 copy of q
        ("pointwise_mul", 64),
        ("pointwise_add", 64),
    ]
    assert ops[6:11] == [
        ("pointwise_mul", 16),
        ("neg", 8),
        ("typecast_to_bf16", 16),
        ("pointwise_mul", 16),
        ("pointwise_add", 16),
    ]
    # triples of mixed sizes or another dtype are left as they are
    assert done[11:] == [*mlp, *fp32]
    assert script.completed([gemm, *q], "opt") == [gemm, *q]
