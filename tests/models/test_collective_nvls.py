"""NVLink SHARP (``algorithm: nvls``) and ``algorithm: auto``'s choice of it: NCCL's chunked
NVLS loops by hand (docs/models/collective.md, "NVLink SHARP")."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opmodel import OpValidationError, ops
from opmodel.core.errors import UnsupportedOpError
from opmodel.hardware import load_hardware
from opmodel.models import get_model
from opmodel.models.effective_roofline.nvls import (
    NVLS_FILL_LOOPS,
    NVLS_LOOP_SYNC_S,
    nvls_channels,
    nvls_chunk_bytes,
    nvls_loop_sync_s,
)
from tests.hypothesis_budget import examples

H100 = load_hardware("h100_sxm")
MIB64 = 64 * 1024 * 1024  # bytes; 32 Mi bf16 elements


def _all_reduce(buffer_bytes: int, ranks: int = 8, **attrs: object) -> object:
    return ops.collective("all_reduce", buffer_bytes // 2, ranks, **attrs)  # type: ignore[arg-type]


def test_nvls_reduces_in_the_switch() -> None:
    """NVLink SHARP on 8 H100s, 64 MiB: 16 channels x 8 heads share the buffer; 64 MiB is not
    under 8 loops of 64 KiB chunks (8 x 128 x 64 KiB = 64 MiB), so the chunk is 64 KiB and each
    channel runs L = 8 loops. ``1 / R_inf = 1 / 275 GB/s - tau / (16 x 8 x 128 KiB)``;
    ``t = 23 us + D (tau + 128 x 64 KiB / R_inf) + L tau + S / R_inf`` = 68.5 + 260.2 =
    328.8 us (the ring: 373.4 us). Each rank sends and receives its buffer once, no additions
    on the GPU; the roofline moves the buffer at the 450 GB/s line rate (149.1 us)."""
    op = _all_reduce(MIB64, algorithm="nvls")
    profile = get_model("effective_roofline").predict(op, H100)
    assert profile.implementation == "effective_roofline/nccl-nvls"
    tau, fill = NVLS_LOOP_SYNC_S, NVLS_FILL_LOOPS
    inverse = 1 / 275e9 - tau / (16 * 8 * 131072)
    expected = 23e-6 + fill * (tau + 128 * 65536 * inverse) + 8 * tau + MIB64 * inverse
    assert math.isclose(profile.latency_s, expected, rel_tol=1e-9)
    assert profile.latency_s == pytest.approx(328.8e-6, abs=0.1e-6)
    assert profile.diagnostics.chunk_bytes == 65536
    assert profile.flops == 0 and profile.diagnostics.link_bytes == MIB64
    roofline = get_model("roofline").predict(op, H100)
    assert math.isclose(roofline.latency_s, MIB64 / 450e9, rel_tol=1e-9)
    assert roofline.diagnostics.chunk_bytes is None


def test_auto_takes_nvls_where_nccls_tuner_would() -> None:
    """``algorithm: auto`` on a board with an NVLS rate weighs NVLink SHARP beside the ring for
    an all-reduce of more than two ranks inside one node, as NCCL's tuner does (NVLS on by
    default from NCCL 2.17 where the fabric has it): 64 MiB over 8 H100s, NVLS 328.8 us
    against the ring's 373.4 (above); 2 KiB, the ring's LL (10.2 us against NVLS's 23 us and
    more); 2 ranks, the ring (NCCL leaves NVLS off for two GPUs); a protocol other than Simple,
    the ring; the A100, no NVLS."""
    model = get_model("effective_roofline")
    profile = model.predict(_all_reduce(MIB64), H100)
    assert profile.implementation == "effective_roofline/nccl-nvls"
    assert profile.latency_s == pytest.approx(328.8e-6, abs=0.1e-6)
    assert profile.flops == 0 and profile.diagnostics.link_bytes == MIB64
    assert profile.diagnostics.algorithm == "nvls"
    small = model.predict(_all_reduce(2048), H100)
    assert small.implementation == "effective_roofline/nccl-ring-ll"
    pair = model.predict(_all_reduce(MIB64, ranks=2), H100)
    assert pair.diagnostics.algorithm == "ring"
    pinned = model.predict(_all_reduce(MIB64, protocol="ll128"), H100)
    assert pinned.implementation == "effective_roofline/nccl-ring-ll128"
    a100 = model.predict(_all_reduce(MIB64), load_hardware("a100_80gb_sxm"))
    assert a100.diagnostics.algorithm == "ring"
    gather = model.predict(ops.collective("all_gather", MIB64 // 2, 8), H100)
    assert gather.diagnostics.algorithm == "ring"


@pytest.mark.parametrize(
    ("buffer_bytes", "chunk"),
    [
        (1 << 30, 131072),  # 64 loops of 16 x 8 x 128 KiB
        ((1 << 30) - 1, 65536),
        (64 << 20, 65536),  # 8 loops of 16 x 8 x 64 KiB
        ((64 << 20) - 1, 32768),
        (8 << 20, 32768),  # 2 loops of 16 x 8 x 32 KiB
        ((8 << 20) - 1, 16384),
        (1024, 16384),
    ],
)
def test_nvls_takes_nccls_chunk(buffer_bytes: int, chunk: int) -> None:
    """NCCL's calcCollChunking for NVLS over 8 ranks x 16 channels (128 heads in flight)."""
    assert nvls_chunk_bytes(buffer_bytes, 128) == chunk


def test_nvls_channels_by_architecture() -> None:
    assert nvls_channels("sm90") == 16  # NVLS_NCHANNELS_SM90
    assert nvls_channels("sm100") == nvls_channels("sm103") == 24  # NVLS_NCHANNELS_SM100_NVL
    assert nvls_channels(None) == nvls_channels("generic") == 16


def test_nvls_loop_sync_grows_with_the_heads() -> None:
    """tau = tau_8 n / 8: the fitted 4.05 us at 8 heads, 36.45 us at a GB300 NVL72's 72. On
    gb300 (24 channels, rate 483 GB/s given for its 72 heads) 1 GiB over 72 ranks takes 64 KiB
    chunks (under 64 loops of 128 KiB: 24 x 72 x 128 KiB = 216 MiB a loop), L = 9.48 loops, and
    1 / R_inf = 1 / 483e9 - 36.45 us / (24 x 72 x 128 KiB): t = 23 us + 1.4 (36.45 us + 24 x 72 x
    64 KiB / R_inf) + L x 36.45 us + 1 GiB / R_inf."""
    assert nvls_loop_sync_s(8) == pytest.approx(NVLS_LOOP_SYNC_S)
    assert nvls_loop_sync_s(72) == pytest.approx(9 * 4.05e-6)
    gb300 = load_hardware("gb300")
    op = ops.collective("all_reduce", (1 << 30) // 4, 72, "fp32", algorithm="nvls")
    tau = 72 / 8 * NVLS_LOOP_SYNC_S
    inverse = 1 / 483e9 - tau / (24 * 72 * 128 * 1024)
    loops = (1 << 30) / (24 * 72 * 64 * 1024)
    expected = 23e-6 + NVLS_FILL_LOOPS * (tau + 24 * 72 * 64 * 1024 * inverse)
    expected += loops * tau + (1 << 30) * inverse
    assert get_model("effective_roofline").predict(op, gb300).latency_s == pytest.approx(
        expected, rel=1e-6
    )


def test_a_small_nvls_buffer_is_one_partial_loop() -> None:
    """128 KiB over 128 heads: one loop of 1 KiB each, so the fill is of 1 KiB chunks:
    ``23 us + D (tau + 128 KiB / R_inf) + tau + 128 KiB / R_inf``."""
    size = 131072
    profile = get_model("effective_roofline").predict(_all_reduce(size, algorithm="nvls"), H100)
    inverse = 1 / 275e9 - NVLS_LOOP_SYNC_S / (16 * 8 * 131072)
    step = NVLS_LOOP_SYNC_S + size * inverse
    assert math.isclose(profile.latency_s, 23e-6 + (NVLS_FILL_LOOPS + 1) * step, rel_tol=1e-9)
    assert profile.diagnostics.chunk_bytes == 16384


def test_nvls_at_a_rate_its_loops_cannot_deliver_is_refused() -> None:
    """A what-if NVLS rate so high that the loops' synchronisation would leave it less than
    half the time it takes is a one-line error naming the field and the accepted range."""
    fast = load_hardware(
        "h100_sxm",
        overrides={
            "interconnect.bandwidth_bytes_per_s": 2e13,
            "interconnect.nvls_bandwidth_bytes_per_s": 1e13,
        },
    )
    with pytest.raises(UnsupportedOpError, match=r"nvls_bandwidth_bytes_per_s 1e\+13 .*under"):
        get_model("effective_roofline").predict(_all_reduce(MIB64, algorithm="nvls"), fast)


def test_nvls_needs_its_rate_and_an_all_reduce() -> None:
    with pytest.raises(UnsupportedOpError, match=r"needs interconnect\.nvls_bandwidth_bytes_per_s"):
        get_model("effective_roofline").predict(
            _all_reduce(MIB64, algorithm="nvls"), load_hardware("a100_80gb_sxm")
        )
    with pytest.raises(
        OpValidationError, match=r"nvls .* runs all_reduce with the simple protocol"
    ):
        ops.collective("all_gather", 1 << 20, 8, algorithm="nvls")
    with pytest.raises(OpValidationError, match="simple protocol"):
        _all_reduce(MIB64, algorithm="nvls", protocol="ll")


@settings(max_examples=examples(60), deadline=None)
@given(
    st.integers(min_value=1, max_value=1 << 33),
    st.integers(min_value=1, max_value=1 << 20),
    st.integers(min_value=2, max_value=8),
)
def test_a_larger_nvls_buffer_with_the_same_chunk_is_never_faster(
    size: int, extra: int, ranks: int
) -> None:
    """Within one of NCCL's NVLS chunks (and one group), more bytes never take less time;
    across a chunk cut they may (tests/conformance/test_models.py, ``_nvls_chunk_switch``)."""
    model = get_model("effective_roofline")
    small = model.predict(_all_reduce(2 * size, ranks, algorithm="nvls"), H100)
    large = model.predict(_all_reduce(2 * (size + extra), ranks, algorithm="nvls"), H100)
    if small.diagnostics.chunk_bytes == large.diagnostics.chunk_bytes:
        assert large.latency_s >= small.latency_s


def test_a_buffer_at_a_chunk_cut_runs_half_the_loops() -> None:
    """64 MiB on 8 H100s takes 64 KiB chunks in 8 loops, a byte less 32 KiB chunks in 16:
    12 us slower (341.2 against 328.8 us), as NCCL's rule makes it."""
    model = get_model("effective_roofline")
    at = model.predict(_all_reduce(MIB64, algorithm="nvls"), H100)
    under = model.predict(_all_reduce(MIB64 - 2, algorithm="nvls"), H100)
    assert (under.diagnostics.chunk_bytes, at.diagnostics.chunk_bytes) == (32768, 65536)
    assert under.latency_s - at.latency_s == pytest.approx(12.4e-6, abs=0.2e-6)
