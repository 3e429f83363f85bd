"""Properties of the prefill over shapes and GPUs (issue #5): a causal mask costs no time on
the same blocks and never less than about half, a longer sequence is never faster; on the A100,
the H100 and an sm_86 A10 (FA2's own causal blocks there)."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from opmodel.hardware import HardwareSpec, load_hardware
from opmodel.models.attention.kernels import flash_kernel
from tests.models.attention.ops import A100, H100, MODEL, attention


@given(
    st.tuples(st.integers(1, 4), st.sampled_from([8, 32])),
    st.integers(17, 6000),
    st.sampled_from([64, 96, 128, 256]),
    st.booleans(),
    # the A10 (sm_86): FA2's causal 64 x 64 blocks against 128 x 32 unmasked at head_dim
    # 96-128, the causal loop's instructions estimated from the counted ones (counted.py)
    st.sampled_from([A100, H100, load_hardware("a10")]),
)
def test_properties(
    grid: tuple[int, int], seq: int, head_dim: int, causal: bool, hardware: HardwareSpec
) -> None:
    batch, heads = grid
    full_op, masked_op = (
        attention(batch, heads, seq, head_dim, causal=mask) for mask in (False, causal)
    )
    full = MODEL.predict(full_op, hardware).latency_s
    masked = MODEL.predict(masked_op, hardware).latency_s
    longer = MODEL.predict(
        attention(batch, heads, seq + 64, head_dim, causal=causal), hardware
    ).latency_s
    # a mask never costs time on the same blocks; where FA2's causal kernel takes smaller query
    # blocks (sm_86: 64 x 64 against 128 x 32) a short causal run has more of them, which can
    # cost up to their count's ratio (docs/models/attention.md, "Which blocks FA2 runs")
    blocks = [
        math.ceil(seq / flash_kernel(hardware, op.view, decode=False).block_q)
        for op in (masked_op, full_op)
    ]
    assert masked <= full * blocks[0] / blocks[1] * (1 + 1e-12)
    assert masked >= 0.45 * full  # causal never faster than about half of full
    # a power-limited config runs a busy kernel in the 15 MHz clock bin below the law's clock
    # (hardware.clocking.power_limited_clock_hz): a longer sequence whose activity lands one bin
    # higher can come out faster by up to that bin, 15 MHz of about 1.4 GHz
    limited = hardware.compute.power_limited_clock_hz
    slack = 15e6 / limited if limited else 1e-12
    assert longer >= masked * (1 - slack)
