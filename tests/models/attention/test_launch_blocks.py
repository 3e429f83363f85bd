"""FlashAttention's blocks from its launch templates (hand-derived from the ``run_mha_*_hdim*``
functions of csrc/flash_attn/src/flash_fwd_launch_template.h, flash_bwd_launch_template.h and
hopper/flash_bwd_launch_template.h): FA2's forward blocks and warps, ``is_sm8x``, both
libraries' backward blocks and the backward's tiles on blocks that do not divide."""

from __future__ import annotations

import pytest

from opmodel import LocalOp
from opmodel.hardware import HardwareSpec, load_hardware
from opmodel.models.attention import backward_kernel
from opmodel.models.attention.backward import backward_tiles
from opmodel.models.attention.kernels import flash_kernel
from opmodel.models.attention.launch_blocks import fa2_forward_blocks, is_sm8x
from tests.models.attention.ops import A100, H100, attention
from tests.models.attention.test_backward import backward

A10 = load_hardware("a10")
MI300X = load_hardware("mi300x")


def _blocks(op: LocalOp, hardware: HardwareSpec) -> tuple[str, int, int, int]:
    kernel = flash_kernel(hardware, op.view, decode=False)
    return kernel.name, kernel.block_q, kernel.block_kv, kernel.warps


def _named(op: LocalOp, kernel: str) -> LocalOp:
    """``op`` with attr ``attention_kernel`` (``fa2``: FA2's sm_80 kernels on an H100; ``fa3``:
    FA3's own blocks on sm_90)."""
    attrs = {**op.attrs, "attention_kernel": kernel}
    return LocalOp(name=op.name, kind=op.kind, phase=op.phase, tensors=op.tensors, attrs=attrs)


def _fa2(op: LocalOp) -> LocalOp:
    return _named(op, "fa2")


def _fa3(op: LocalOp) -> LocalOp:
    return _named(op, "fa3")


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


@pytest.mark.parametrize(
    ("head_dim", "causal", "window", "blocks"),
    [
        (64, False, None, (128, 128)),
        (64, True, None, (128, 128)),
        (96, False, None, (64, 128)),
        (128, False, None, (80, 128)),
        (128, True, None, (64, 128)),
        (128, True, 256, (64, 128)),
        (192, False, None, (64, 96)),
        (256, True, None, (64, 80)),
    ],
)
def test_fa3_backward_blocks_follow_its_launch_template(
    head_dim: int, causal: bool, window: int | None, blocks: tuple[int, int]
) -> None:
    # hopper/flash_bwd_launch_template.h, run_mha_bwd_hdim{64,96,128,192,256}, Arch >= 90
    op = _fa3(backward(1, 8, 1024, head_dim, causal=causal, window=window))
    kernel = backward_kernel(H100, op.view)
    assert (kernel.name, kernel.block_q, kernel.block_kv) == ("fa3_bwd", *blocks)


@pytest.mark.parametrize(
    ("hardware", "head_dim", "blocks"),
    [
        (A100, 32, (128, 128)),
        (A100, 64, (128, 128)),
        (A10, 64, (64, 128)),  # 99 KiB a block: under FA2's 144 KiB threshold
        (A10, 96, (64, 128)),
        (A100, 128, (64, 128)),
        (A10, 128, (64, 64)),
        (A100, 160, (64, 64)),
        (A100, 256, (64, 64)),
        (A10, 256, (64, 32)),
    ],
    ids=str,
)
def test_fa2_backward_blocks_follow_its_launch_template(
    hardware: HardwareSpec, head_dim: int, blocks: tuple[int, int]
) -> None:
    # csrc/flash_attn/src/flash_bwd_launch_template.h, run_mha_bwd_hdim*
    kernel = backward_kernel(hardware, backward(1, 8, 1024, head_dim).view)
    assert (kernel.name, kernel.block_q, kernel.block_kv) == ("fa2_bwd", *blocks)


def test_backward_tiles_on_blocks_that_do_not_divide() -> None:
    full = backward_tiles(
        backward_kernel(H100, _fa3(backward(1, 1, 256, 128)).view),  # 80 x 128
        backward(1, 1, 256, 128).view,
    )
    # ceil(256 / 80) = 4 query blocks, each seeing both key blocks
    assert (full.q_blocks, full.kv_blocks, full.tiles, full.longest_block_tiles) == (4, 2, 8, 4)
    causal_op = _fa3(backward(1, 1, 256, 192, causal=True))
    causal = backward_tiles(backward_kernel(H100, causal_op.view), causal_op.view)  # 64 x 96
    # query block b's last row 64 b + 63 sees floor((64 b + 63) / 96) + 1 key blocks: 1, 2, 2, 3
    assert (causal.q_blocks, causal.kv_blocks, causal.tiles) == (4, 3, 8)
    assert causal.longest_block_tiles == 4
