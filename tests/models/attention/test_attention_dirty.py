"""Another kernel's dirty lines (attr ``l2_dirty_bytes``) in the attention kernels: the law of
the GEMM and streaming kernels, on DRAM bandwidth only."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from opmodel import DType, LocalOp, OpKind, Phase, TensorRole, TensorSpec
from opmodel.core.errors import OpModelError
from opmodel.hardware import HardwareSpec, load_hardware
from opmodel.models import get_model
from opmodel.models.attention import AttentionEvaluation
from opmodel.models.shared.start_drain import start_drain_s

H200 = load_hardware("h200_sxm")
H100 = load_hardware("h100_sxm")
MODEL = get_model("effective_roofline")
FLUSH = 2 * 62_914_560  # opmodel measure's flush on the H200: twice its 60 MiB L2


def _op(
    batch: int, context: int, seq_q: int, dirty: int | None, *, causal: bool = False
) -> LocalOp:
    decode = seq_q <= 16
    q = (batch, 32, seq_q, 128)
    kv = (batch, 8, context, 128)
    attrs: dict[str, object] = {} if decode else {"causal": causal}
    if dirty is not None:
        attrs["l2_dirty_bytes"] = dirty
    return LocalOp(
        name="attention",
        kind=OpKind.ATTENTION_DECODE if decode else OpKind.ATTENTION_PREFILL,
        phase=Phase.DECODE if decode else Phase.PREFILL,
        tensors=(
            TensorSpec(TensorRole.INPUT, q, DType.BF16, "q"),
            TensorSpec(TensorRole.INPUT, kv, DType.BF16, "k"),
            TensorSpec(TensorRole.INPUT, kv, DType.BF16, "v"),
            TensorSpec(TensorRole.OUTPUT, q, DType.BF16, "o"),
        ),
        attrs=attrs,
    )


def _evaluation(op: LocalOp, hardware: HardwareSpec) -> AttentionEvaluation:
    diagnostics = MODEL.predict(op, hardware).diagnostics
    assert isinstance(diagnostics, AttentionEvaluation)
    return diagnostics


def _shared_l2(hardware: HardwareSpec) -> float:
    return hardware.levels_by_name["l2"].shared_capacity_bytes


def test_decode_pays_the_evicted_lines_at_dram_bandwidth_by_hand() -> None:
    # batch 32 x 8 KV heads = 256 CTAs, under the H200's 2 x 132 slots: one wave, no split
    op = _op(32, 2048, 1, FLUSH)
    e = _evaluation(op, H200)
    assert (e.splits, e.ctas) == (1, 256)
    kv = 2 * 32 * 8 * 2048 * 128 * 2
    q = o = 32 * 32 * 1 * 128 * 2
    shared = _shared_l2(H200)
    dirty = min(FLUSH, shared) * (1 - math.exp(-(q + kv + o) / shared))
    assert e.dirty_write_back_bytes == round(dirty)
    # the wave's bytes at the DRAM bandwidth, dirty lines included, bound this kernel; the
    # pipeline fills with a DRAM round trip and drains with its last block's compute (16 blocks
    # of 128 keys per CTA, each streamed longer than it computes)
    bandwidth = H200.hbm.bandwidth_bytes_per_s * H200.memory_fraction("hbm")
    fixed = start_drain_s(H200)  # the kernel's launch and drain (models.shared.start_drain)
    streamed = (kv + q + o + round(dirty)) / bandwidth  # the queries and outputs too
    drain = e.tile_cycles / H200.compute.clock_hz
    assert drain < streamed / 16
    expected = fixed + streamed + H200.hbm.latency_s + drain
    assert e.latency_s == pytest.approx(expected, rel=1e-9)
    clean = _evaluation(_op(32, 2048, 1, None), H200)
    assert clean.dirty_write_back_bytes == 0
    assert clean.latency_s < e.latency_s
    # the profile counts them as DRAM writes of the kernel
    profile = MODEL.predict(op, H200)
    assert profile.traffic["hbm"].write_bytes == o + round(dirty)
    assert profile.energy.total_j > MODEL.predict(_op(32, 2048, 1, None), H200).energy.total_j


def test_compute_bound_prefill_hides_the_evicted_lines() -> None:
    dirty = _evaluation(_op(1, 4096, 4096, FLUSH), H100)
    clean = _evaluation(_op(1, 4096, 4096, 0), H100)
    assert dirty.limiter == clean.limiter == "compute"
    assert dirty.latency_s == clean.latency_s
    bandwidth = H100.hbm.bandwidth_bytes_per_s * H100.memory_fraction("hbm")
    assert dirty.dram_s - clean.dram_s == pytest.approx(
        dirty.dirty_write_back_bytes / bandwidth, rel=1e-9
    )
    assert dirty.dirty_write_back_bytes > 0


def test_dirty_bytes_must_be_a_non_negative_integer() -> None:
    with pytest.raises(OpModelError, match="l2_dirty_bytes"):
        _op(1, 512, 1, -1)


@given(
    st.integers(1, 64),
    st.integers(1, 40_000),
    st.sampled_from([1, 4, 64, 2048]),
    st.integers(0, 2**28),
    st.integers(0, 2**28),
)
def test_more_dirty_lines_never_faster(
    batch: int, context: int, seq_q: int, low: int, high: int
) -> None:
    seq_q = min(seq_q, context)
    low, high = sorted((low, high))
    for hardware in (H100, H200):
        a = _evaluation(_op(batch, context, seq_q, low), hardware)
        b = _evaluation(_op(batch, context, seq_q, high), hardware)
        assert b.latency_s >= a.latency_s
        assert a.dirty_write_back_bytes <= b.dirty_write_back_bytes <= round(_shared_l2(hardware))
