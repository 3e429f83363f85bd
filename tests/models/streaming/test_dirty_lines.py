"""Streaming kernels and another kernel's dirty lines in L2 (a benchmark's flush): written back
at DRAM bandwidth, hidden by latency-bound kernels."""

from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from opmodel import DType, LocalOp, OpKind, Phase, TensorRole, TensorSpec
from opmodel.hardware import HardwareSpec, load_hardware
from opmodel.models.streaming import (
    StreamingEvaluation,
)
from tests.models.streaming.ops import (
    A100,
    H100,
    MODEL,
    evaluation,
    row_op,
)


def _copy(rows: int, length: int, dirty: int | None = None) -> LocalOp:
    shape = (rows, length)
    return LocalOp(
        name="copy",
        kind=OpKind.COPY,
        phase=Phase.PREFILL,
        tensors=(
            TensorSpec(TensorRole.INPUT, shape, DType.BF16),
            TensorSpec(TensorRole.OUTPUT, shape, DType.BF16),
        ),
        attrs={} if dirty is None else {"l2_dirty_bytes": dirty},
    )


def test_a_flushs_dirty_lines_lengthen_a_bandwidth_bound_kernel_by_hand() -> None:
    """A 32 MiB bf16 copy on the H200 after a 120 MiB write-flush: the L2 holds its 30 MiB
    shared capacity of the flush's lines; the copy's 64 MiB of DRAM traffic evict
    ``1 - exp(-x)`` of them, ``x = 64 MiB / 30 MiB``. Without them the loaded chain sets the
    time; with them the DRAM bound does: the copy's bytes and the evicted lines at the HBM
    rate, after the fixed overhead. The profile counts the evicted lines as DRAM writes."""
    h200 = load_hardware("h200_sxm")
    shared = h200.level("l2").shared_capacity_bytes
    assert shared == 62914560 * 0.5
    clean = evaluation(_copy(4096, 4096), h200)
    profile = MODEL.predict(_copy(4096, 4096, 2 * 62914560), h200)
    e = profile.diagnostics
    assert isinstance(e, StreamingEvaluation)
    assert (clean.limiter, e.limiter) == ("latency", "dram")
    moved = 2 * 4096 * 4096 * 2
    evicted = shared * -math.expm1(-moved / shared)
    assert e.dirty_write_back_bytes == pytest.approx(evicted)
    rate = h200.hbm.bandwidth_bytes_per_s * h200.memory_fraction("hbm")
    assert profile.latency_s == pytest.approx(e.fixed_s + (moved + evicted) / rate, rel=1e-12)
    assert profile.traffic["hbm"].write_bytes == math.ceil(moved / 2 + evicted)


def test_dirty_lines_do_not_lengthen_a_latency_bound_kernel() -> None:
    """One 4096-element row: the chain of loads sets the time, and DRAM queues the write-back
    behind the loads, so the kernel is as fast as without it."""
    op = row_op(OpKind.RMSNORM, 1, 4096, "vllm")
    flushed = dataclasses.replace(op, attrs={**op.attrs, "l2_dirty_bytes": 256 * 2**20})
    base, after = MODEL.predict(op, H100), MODEL.predict(flushed, H100)
    assert isinstance(after.diagnostics, StreamingEvaluation)
    assert after.diagnostics.limiter == "latency"
    assert after.diagnostics.dirty_write_back_bytes > 0
    assert after.latency_s == base.latency_s


@given(
    rows=st.integers(1, 65536),
    length=st.integers(1, 16384),
    dirty=st.integers(0, 1 << 31),
    hardware=st.sampled_from([A100, H100]),
)
def test_dirty_lines_never_speed_a_kernel_up_nor_cost_more_than_the_l2_holds(
    rows: int, length: int, dirty: int, hardware: HardwareSpec
) -> None:
    base = MODEL.predict(_copy(rows, length), hardware)
    after = MODEL.predict(_copy(rows, length, dirty), hardware)
    shared = hardware.level("l2").shared_capacity_bytes
    rate = hardware.hbm.bandwidth_bytes_per_s * hardware.memory_fraction("hbm")
    assert (
        base.latency_s <= after.latency_s <= base.latency_s + min(dirty, shared) / rate * (1 + 1e-9)
    )
