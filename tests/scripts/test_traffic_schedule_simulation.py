"""scripts/traffic_schedule_simulation.py on tiny GEMMs whose DRAM reads follow by hand."""

from __future__ import annotations

import random
from types import ModuleType

import pytest

from tests.scripts.loader import load_script

KIB = 1024


def _script() -> ModuleType:
    return load_script("traffic_schedule_simulation")


def test_operands_that_fit_are_read_once_under_either_policy() -> None:
    """512 x 512 x 512 fp16 with 128 x 128 x 32 tiles: A and B are 512 KiB each, far under a
    20 MiB L2, so every block is read from DRAM once: 1 MiB, whatever the jitter."""
    sim = _script()
    kernel = sim.Kernel(m=512, n=512, k=512, cta_m=128, cta_n=128, cta_k=32, slots_per_sm=1)
    for policy in ("lru", "random"):
        for jitter in (0.0, 0.5):
            rng = random.Random(1)
            l2 = sim.L2(20 * 1024 * KIB, policy, rng)
            assert sim.simulate_dram_reads(kernel, l2, jitter, rng) == 1024 * KIB


def test_a_two_block_lru_keeps_only_the_row_s_a_block() -> None:
    """The same GEMM through a 16 KiB LRU L2 (two 8 KiB blocks) in lockstep. Per K step the 16
    CTAs read in launch order (stripes of 4 N tiles): A0 B0, A0 B1, A0 B2, A0 B3, A1 B0, ...
    The cache keeps A of the row for its four CTAs and evicts every B before its next reader:
    4 A and 16 B misses a step, 20 x 8 KiB x 16 steps = 2.5 MiB."""
    sim = _script()
    kernel = sim.Kernel(m=512, n=512, k=512, cta_m=128, cta_n=128, cta_k=32, slots_per_sm=1)
    rng = random.Random(1)
    l2 = sim.L2(16 * KIB, "lru", rng)
    assert sim.simulate_dram_reads(kernel, l2, 0.0, rng) == 20 * 8 * KIB * 16


def test_launch_order_is_the_identity_swizzle() -> None:
    """Eight N tiles make stripes of 8 walking down M: (0, 0..7), (1, 0..7), ..."""
    sim = _script()
    kernel = sim.Kernel(m=256, n=1024, k=32, cta_m=128, cta_n=128, cta_k=32, slots_per_sm=1)
    order = list(sim.launch_order(kernel))
    assert order[:9] == [(0, n) for n in range(8)] + [(1, 0)]
    assert len(order) == 16


def test_unknown_policy_is_a_clear_error() -> None:
    sim = _script()
    with pytest.raises(ValueError, match="policy must be 'lru' or 'random'"):
        sim.L2(1, "fifo", random.Random(1))
