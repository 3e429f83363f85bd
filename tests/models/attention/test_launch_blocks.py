"""FA2's forward blocks and warps from its launch template (hand-derived from
csrc/flash_attn/src/flash_fwd_launch_template.h's ``run_mha_fwd_hdim*``), and ``is_sm8x``."""

from __future__ import annotations

import pytest

from opmodel import LocalOp
from opmodel.hardware import HardwareSpec, load_hardware
from opmodel.models.attention.kernels import flash_kernel
from opmodel.models.attention.launch_blocks import fa2_forward_blocks, is_sm8x
from tests.models.attention.ops import A100, H100, attention

A10 = load_hardware("a10")
MI300X = load_hardware("mi300x")


def _blocks(op: LocalOp, hardware: HardwareSpec) -> tuple[str, int, int, int]:
    kernel = flash_kernel(hardware, op.view, decode=False)
    return kernel.name, kernel.block_q, kernel.block_kv, kernel.warps


def _fa2(op: LocalOp) -> LocalOp:
    """``op`` with attr ``attention_kernel: fa2`` (FA2's sm_80 kernels on an H100)."""
    attrs = {**op.attrs, "attention_kernel": "fa2"}
    return LocalOp(name=op.name, kind=op.kind, phase=op.phase, tensors=op.tensors, attrs=attrs)


@pytest.mark.parametrize(
    ("hardware", "head_dim", "causal", "expected"),
    [
        (A100, 64, False, (128, 128, 4)),
        (A100, 96, True, (128, 64, 4)),
        (A100, 128, True, (128, 64, 4)),
        (A100, 192, False, (128, 64, 8)),
        # 2 x 256 x (128 + 2 x 64) bytes fit a block and the SM holds under 4 x 256 x 192
        (A100, 256, False, (128, 64, 8)),
        (A10, 64, True, (128, 128, 4)),
        (A10, 96, False, (128, 64, 4)),
        (A10, 96, True, (64, 64, 4)),  # sm_8x, causal: square blocks
        (A10, 128, False, (128, 32, 4)),  # sm_8x: two CTAs per SM
        (A10, 128, True, (64, 64, 4)),
        (A10, 192, True, (128, 64, 8)),
        (A10, 256, False, (64, 64, 4)),  # a block gets 99 KiB
    ],
    ids=str,
)
def test_fa2_forward_blocks_follow_its_launch_template(
    hardware: HardwareSpec, head_dim: int, causal: bool, expected: tuple[int, int, int]
) -> None:
    op = attention(1, 16, 4096, head_dim, causal=causal)
    assert _blocks(op, hardware) == ("fa2", *expected)


def test_fa2_on_hopper_takes_the_sm80_branch() -> None:
    # is_sm8x is false on sm_90; at head_dim 256 its 228 KiB per SM hold two 64 x 64 CTAs
    assert _blocks(_fa2(attention(1, 16, 4096, 128, causal=True)), H100) == ("fa2", 128, 64, 4)
    assert _blocks(_fa2(attention(1, 16, 4096, 256)), H100) == ("fa2", 64, 64, 4)


def test_a_sliding_window_is_not_fa2s_is_causal() -> None:
    windowed = attention(1, 16, 4096, 128, causal=True)
    windowed = LocalOp(
        name=windowed.name,
        kind=windowed.kind,
        phase=windowed.phase,
        tensors=windowed.tensors,
        attrs={**windowed.attrs, "window": 512},
    )
    assert _blocks(windowed, A10) == ("fa2", 128, 32, 4)


def test_other_warp_mma_gpus_keep_the_generic_blocks() -> None:
    assert _blocks(attention(1, 16, 4096, 128), MI300X)[1:3] == (128, 64)
    assert _blocks(attention(1, 16, 4096, 256), MI300X)[1:3] == (64, 64)


def test_is_sm8x_and_the_table_directly() -> None:
    assert [is_sm8x(a) for a in ("sm80", "sm86", "sm89", "sm90", "sm100", None)] == [
        False,
        True,
        True,
        False,
        False,
        False,
    ]
    assert fa2_forward_blocks(32, False, False, 166912, 167936) == (128, 128, 4)
    assert fa2_forward_blocks(256, True, False, 232448, 233472) == (64, 64, 4)
