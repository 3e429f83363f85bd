"""scripts/compare_published_attention.py: the model against FA3's published H100 throughput."""

from __future__ import annotations

import pytest

from tests.scripts.loader import load_script


def test_fa3_points_within_the_documented_error(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/validation.md: 8.3 % MAPE over the 36 FA3 points of Shah et al. (2024, Fig. 5),
    3.8 % from 4k tokens up, with FA3's own blocks (attr attention_kernel: fa3; 10.3 % and
    4.7 % with the 128 x 128 blocks of the default sm_90 kernel; 11.0 % and 4.8 % before the
    query block's epilogue; 23.6 % and 10.0 % before the exposed exponentials and the query
    blocks' start), with a little slack."""
    script = load_script("compare_published_attention")
    points = [p for p in script.compare() if not p.backward and not p.fp8]
    fa3 = [p for p in points if p.implementation == "fa3"]
    assert len(points) == 108 and len(fa3) == 36
    _, mape, _ = script.summary(fa3)
    _, long_mape, long_geomean = script.summary([p for p in fa3 if p.seq >= 4096])
    assert mape <= 0.088
    assert long_mape <= 0.045 and 0.95 <= long_geomean <= 1.03
    assert script.main([]) == 0
    out = capsys.readouterr().out
    assert "fwd fa3    >= 4k  n= 18" in out and "fwd cudnn  all    n= 36" in out
    assert "bwd fa3    all    n= 12" in out
    assert "fp8 fa3    >= 4k  n= 15" in out


def test_fa2_points_are_the_documented_gap() -> None:
    """docs/validation.md: FlashAttention-2's sm_80 kernels on the H100 (attr attention_kernel:
    fa2, warp-level mma.sync): with each warp's main loop counted from the kernel's SASS (its
    other instructions and its ldmatrix bytes) and its query blocks in launch order, the model
    is 1.10x too fast over the 36 points (10.9 %; 1.45x and 46.4 % with the softmax's FP32
    estimate and the longest-first order), 1.01-1.51x; from 4k tokens 4.3 %, every point
    within 10 %. With a little slack."""
    script = load_script("compare_published_attention")
    fa2 = [p for p in script.compare() if p.implementation == "fa2"]
    assert len(fa2) == 36
    _, mape, geomean = script.summary(fa2)
    assert 0.095 <= mape <= 0.125 and 1.07 <= geomean <= 1.13
    assert all(1.0 < p.ratio < 1.55 for p in fa2)
    long = [p for p in fa2 if p.seq >= 4096]
    assert len(long) == 18 and all(p.ratio < 1.10 for p in long)


def test_fa3_backward_points_within_the_documented_error() -> None:
    """docs/validation.md: FA3's backward (Shah et al. 2024, Fig. 6, no mask, head_dim 64 and
    128), 20.6 % MAPE over 12 points, 1.20x, 13.9 % from 4k tokens (about 30 % before the
    shared-memory staging), with a little slack; every point too fast, none by 1.5x."""
    script = load_script("compare_published_attention")
    fa3 = [p for p in script.compare() if p.backward and p.implementation == "fa3"]
    assert len(fa3) == 12
    _, mape, geomean = script.summary(fa3)
    _, long_mape, _ = script.summary([p for p in fa3 if p.seq >= 4096])
    assert mape <= 0.215 and 1.1 <= geomean <= 1.25 and long_mape <= 0.145
    assert all(1.0 < p.ratio < 1.5 for p in fa3)


def test_fp8_points_are_the_documented_gap() -> None:
    """docs/validation.md: FA3's FP8 forward (Shah et al. 2024, Fig. 7, five of its six
    panels) on FA3's one-byte blocks (192 x 160, 128 x 224, 128 x 128): 22.8 % MAPE over 30
    points, 1.13x, and 9.8 % (0.97x) from 4k tokens up (29.3 %, 1.17x, and 9.9 % on the 16-bit
    blocks); at 512 tokens the model is 1.3-2.0x too fast (1.7-2.0x before), where the
    published FP8 kernel is slower than the FP16 one of Fig. 5. With a little slack."""
    script = load_script("compare_published_attention")
    fp8 = [p for p in script.compare() if p.fp8]
    assert len(fp8) == 30 and all(p.implementation == "fa3" and not p.backward for p in fp8)
    _, mape, geomean = script.summary(fp8)
    _, long_mape, long_geomean = script.summary([p for p in fp8 if p.seq >= 4096])
    assert 0.21 <= mape <= 0.25 and 1.09 <= geomean <= 1.17
    assert long_mape <= 0.11 and 0.92 <= long_geomean <= 1.01
    assert all(1.2 < p.ratio < 2.1 for p in fp8 if p.seq == 512)


def test_fp8_op_has_e4m3_operands_and_a_bf16_output() -> None:
    script = load_script("compare_published_attention")
    op = script.fp8_op(script.attention_op(4096, 128, causal=False))
    dtypes = {t.layout: t.dtype.value for t in op.tensors}
    assert dtypes == {"q": "fp8_e4m3", "k": "fp8_e4m3", "v": "fp8_e4m3", "o": "bf16"}


def test_figure_shapes_hold_16k_tokens_and_2048_wide_heads() -> None:
    script = load_script("compare_published_attention")
    op = script.attention_op(2048, 64, causal=True)
    q = op.tensors[0]
    assert q.shape == (8, 32, 2048, 64) and op.attrs["causal"] is True
    backward = script.attention_op(2048, 64, causal=False, backward=True)
    assert backward.phase.value == "train_bwd" and backward.view.backward
    assert [t.role.value for t in backward.tensors].count("grad") == 1
