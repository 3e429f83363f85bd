"""Streaming kernels and the L2: warm inputs, re-reads, write-back, cold weights and a flush's dirty lines."""

from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from opmodel import LocalOp, OpKind
from opmodel.hardware import HardwareSpec, load_hardware
from opmodel.models.streaming import (
    evaluate_streaming,
    streaming_kernel,
)
from opmodel.models.streaming.issue import issue_calibration
from tests.models.streaming.ops import (
    A100,
    H100,
    MODEL,
    add_op,
    evaluation,
    no_bytes,
    row_op,
)


def _warm(op: LocalOp) -> LocalOp:
    return LocalOp(
        name=op.name,
        kind=op.kind,
        phase=op.phase,
        tensors=op.tensors,
        attrs={**op.attrs, "warm_l2": True},
    )


def _survival_by_hand(a: float, b: float) -> float:
    """The measure of f in [0, 1] with (1 - f) a + f b < 1 (least-recently-used), written out."""
    if a <= 1 and b <= 1:
        return 1.0
    if a >= 1 and b >= 1:
        return 0.0
    return (1 - min(a, b)) / abs(a - b)


def test_warm_rmsnorm_that_fits_l2_reads_from_l2_by_hand() -> None:
    """1 x 4096 fp16 RMSNorm on A100 after the kernel that wrote its 8 KiB input (producer
    bytes default to those 8 KiB); the norm moves 16 KiB besides (weight, output). With the
    20 MiB shared L2 capacity, a = 8 KiB / 20 MiB, b = 16 KiB / 20 MiB, both under 1, so all
    of the input is still there: the first pass waits ``s L_l2 + (1 - s) L_dram`` = ``L_l2``."""
    e = evaluation(_warm(row_op(OpKind.RMSNORM, 1, 4096, "vllm")), A100)
    capacity = 40 * 2**20 * 0.5
    s = _survival_by_hand(8192 / capacity, 16384 / capacity)
    assert s == 1.0
    assert e.warm_l2_hit_fraction == pytest.approx(s)
    l_l2, l_dram, l_smem = 1.42e-7, 4.0e-7, 2.2e-8
    l_first = s * l_l2 + (1 - s) * l_dram
    # and the loop's serial arithmetic (the shipped I per element on 4 x 32 lanes)
    arithmetic = issue_calibration().instructions[("vllm", "rmsnorm")] * 4096 / 128 / 1.41e9
    turnaround = 490 / 1.41e9  # cta_turnaround_cycles
    chain = 4 * (l_first + l_l2) + (2 * 5 + 4) * l_smem + arithmetic + turnaround
    assert e.chain_s == pytest.approx(chain)
    # the weight still comes from DRAM once; the output is written
    assert e.dram_read_bytes == pytest.approx(8192 * (1 - s) + 8192)
    assert e.dram_write_bytes == 8192


def _add_warm(rows: int, length: int, **warm: int | bool) -> LocalOp:
    op = add_op(rows, length)
    return LocalOp(
        name=op.name, kind=op.kind, phase=op.phase, tensors=op.tensors, attrs={**op.attrs, **warm}
    )


def test_warm_second_input_of_an_add_by_hand() -> None:
    """1024 x 4096 fp16 add (8 MiB per tensor) whose second input a residual add just wrote
    (producer bytes 24 MiB): a = 24 / 20, b = (8 + 8) / 20 (the cold input and the output), so
    the byte at f has seen 1.2 - 0.4 f capacities and s = (1 - 0.8) / 0.4 = 1/2 of that input
    is read from L2 (f > 1/2). The other input is cold, so every load step still waits on
    DRAM: the chain is the cold one."""
    mib = 2**20
    cold = evaluation(add_op(1024, 4096), A100)
    warm = evaluation(_add_warm(1024, 4096, warm_input=1, producer_bytes=24 * mib), A100)
    s = 0.5
    assert warm.warm_l2_hit_fraction == pytest.approx(s)
    assert warm.dram_read_bytes == pytest.approx(16 * mib - s * 8 * mib)
    assert warm.dram_write_bytes == cold.dram_write_bytes == 8 * mib
    assert warm.chain_s == pytest.approx(cold.chain_s)
    assert warm.latency_s <= cold.latency_s


def test_write_back_during_a_warm_add_by_hand() -> None:
    """The add above after a producer that moved 32 MiB. Cold, nothing is known of the L2's
    dirty lines: all 8 MiB of the output count as written back during the kernel. Warm,
    a = 32 / 20 = 1.6 and b = 0.8 leave s = (1 - 0.8) / (1.6 - 0.8) = 1/4 of that input in L2,
    so the add allocates its DRAM reads (16 - 2 MiB) and its 8 MiB output: x = 22 / 20 = 1.1.
    A line used at f (written, or the producer's read from L2) is evicted when the (1 - f) x
    capacities after it exceed one: f < 1 - 1 / 1.1, 1/11 of the 8 + 2 MiB. The DRAM bytes on
    the clock shrink by the rest."""
    mib = 2**20
    cold = evaluation(add_op(1024, 4096), A100)
    warm = evaluation(_add_warm(1024, 4096, warm_input=1, producer_bytes=32 * mib), A100)
    assert cold.dram_write_back_bytes == cold.dram_write_bytes == 8 * mib
    assert warm.warm_l2_hit_fraction == pytest.approx(0.25)
    assert warm.dram_read_bytes == pytest.approx(14 * mib)
    assert warm.dram_write_back_bytes == pytest.approx(10 * mib / 11)
    assert warm.dram_write_back_bytes < warm.dram_write_bytes == 8 * mib


def test_a_producer_that_streams_far_more_than_l2_leaves_little() -> None:
    """The same add after a GEMM that moved 2 GiB: a = 102.4, b = 0.8: only the bytes written
    in the producer's last 0.2 capacities survive, s = (1 - 0.8) / 101.6 ~ 0.2 %."""
    warm = evaluation(_add_warm(1024, 4096, warm_input=1, producer_bytes=2**31), A100)
    assert warm.warm_l2_hit_fraction == pytest.approx(
        _survival_by_hand(2**31 / (20 * 2**20), 16 / 20)
    )
    assert warm.warm_l2_hit_fraction == pytest.approx(0.2 / 101.6)


@given(
    kind=st.sampled_from([OpKind.SOFTMAX, OpKind.LAYERNORM, OpKind.RMSNORM]),
    rows=st.integers(1, 20000),
    length=st.integers(1, 40000),
    implementation=st.sampled_from(["fused", "vllm", "pytorch"]),
)
def test_warm_is_never_slower_than_cold(
    kind: OpKind, rows: int, length: int, implementation: str
) -> None:
    cold = row_op(kind, rows, length, implementation)
    for hardware in (A100, load_hardware("a40")):
        assert MODEL.predict(_warm(cold), hardware).latency_s <= MODEL.predict(
            cold, hardware
        ).latency_s * (1 + 1e-12)


def test_a_one_wave_gemm_producer_leaves_its_output_by_hand() -> None:
    """The 2 GiB producer above as a one-wave GEMM (``producer_waves: 1``): it stored its
    output after streaming its operands, so only the add's own 16 MiB (b = 0.8 of the 20 MiB
    shared capacity) come after it: all of it is still there, s = min(1, 1 / b) = 1; the DRAM
    reads shrink by the whole input."""
    mib = 2**20
    spread = evaluation(_add_warm(1024, 4096, warm_input=1, producer_bytes=2**31), A100)
    burst = evaluation(
        _add_warm(1024, 4096, warm_input=1, producer_bytes=2**31, producer_waves=1), A100
    )
    s = 1.0
    assert burst.warm_l2_hit_fraction == pytest.approx(s)
    assert burst.dram_read_bytes == pytest.approx(16 * mib - s * 8 * mib)
    assert burst.latency_s <= spread.latency_s


@given(
    rows=st.integers(1, 8192),
    length=st.integers(1, 16384),
    producer=st.integers(1, 1 << 34),
    waves=st.integers(1, 1 << 20),
)
def test_a_producer_that_wrote_in_bursts_leaves_at_least_as_much(
    rows: int, length: int, producer: int, waves: int
) -> None:
    producer += rows * length * 2
    spread = MODEL.predict(_add_warm(rows, length, warm_input=1, producer_bytes=producer), A100)
    burst = MODEL.predict(
        _add_warm(rows, length, warm_input=1, producer_bytes=producer, producer_waves=waves),
        A100,
    )
    assert burst.traffic["hbm"].read_bytes <= spread.traffic["hbm"].read_bytes + 1
    assert burst.latency_s <= spread.latency_s * (1 + 1e-12)


@given(
    rows=st.integers(1, 8192),
    length=st.integers(1, 16384),
    producer=st.integers(1, 1 << 34),
    more=st.integers(0, 1 << 34),
)
def test_a_warm_input_saves_at_most_its_own_bytes_and_a_busier_producer_saves_less(
    rows: int, length: int, producer: int, more: int
) -> None:
    input_bytes = rows * length * 2
    producer += input_bytes  # the producer wrote the warm input at least
    cold = MODEL.predict(add_op(rows, length), A100)
    warm = MODEL.predict(_add_warm(rows, length, warm_input=1, producer_bytes=producer), A100)
    busier = MODEL.predict(
        _add_warm(rows, length, warm_input=1, producer_bytes=producer + more), A100
    )
    saved = cold.traffic["hbm"].total_bytes - warm.traffic["hbm"].total_bytes
    assert -1 <= saved <= input_bytes + 1
    assert warm.latency_s <= cold.latency_s * (1 + 1e-12)
    assert busier.latency_s >= warm.latency_s * (1 - 1e-12)
    assert busier.traffic["hbm"].total_bytes >= warm.traffic["hbm"].total_bytes - 1


@given(
    rows=st.integers(1, 8192),
    length=st.integers(1, 16384),
    producer=st.integers(0, 1 << 34),
    hardware=st.sampled_from([A100, H100]),
)
def test_write_back_is_at_most_the_output_and_the_dirty_lines_found(
    rows: int, length: int, producer: int, hardware: HardwareSpec
) -> None:
    """During the run a warm op writes back no more than its output plus the producer's output
    it found in L2, never a negative amount; a cold op writes back exactly its output."""
    input_bytes = rows * length * 2
    cold = evaluation(add_op(rows, length), hardware)
    assert cold.dram_write_back_bytes == cold.dram_write_bytes
    warm = evaluation(
        _add_warm(rows, length, warm_input=1, producer_bytes=producer + input_bytes), hardware
    )
    dirty = warm.warm_l2_hit_fraction * input_bytes
    assert 0.0 <= warm.dram_write_back_bytes <= (warm.dram_write_bytes + dirty) * (1 + 1e-12)


@pytest.mark.parametrize("rows", [108, 324])
def test_cold_weights_cost_the_first_wave_once(rows: int) -> None:
    """vLLM RMSNorm rows of 4096 on A100 run one CTA per SM: 108 rows are one wave, 324 three.
    With DRAM bandwidth out of the way (two bytes of traffic), adding a weight makes the first
    wave's pass two wait on DRAM instead of L2 for its four serial loads: the latency grows by
    4 x (400 - 142) ns = 1.032 µs, once, whatever the number of waves."""
    kernel = streaming_kernel(OpKind.RMSNORM, "vllm", rows, 4096, 2)
    assert (kernel.serial_loads, kernel.global_passes) == (4, 2)
    bare = dataclasses.replace(no_bytes(), read_bytes=2)
    weighted = dataclasses.replace(bare, shared_read_bytes=2)
    without = evaluate_streaming(kernel, A100, bare)
    with_weights = evaluate_streaming(kernel, A100, weighted)
    assert without.limiter == with_weights.limiter == "latency"
    grown = with_weights.latency_s - without.latency_s
    assert grown == pytest.approx(4 * (4.0e-7 - 1.42e-7), rel=1e-6)


def test_rereads_go_to_dram_when_the_wave_does_not_fit_l2() -> None:
    small = evaluation(row_op(OpKind.LAYERNORM, 4096, 1024, "pytorch"), A100)
    assert small.l2_reread_hit_fraction == 1.0
    big = evaluation(row_op(OpKind.LAYERNORM, 8192, 65536, "pytorch"), A100)
    assert big.l2_reread_hit_fraction < 1.0
    compulsory = 8192 * 65536 * 2 + 2 * 65536 * 2
    assert big.dram_read_bytes > compulsory
    profile = MODEL.predict(row_op(OpKind.LAYERNORM, 8192, 65536, "pytorch"), A100)
    assert profile.traffic["hbm"].read_bytes == math.ceil(big.dram_read_bytes)
    assert profile.energy.total_j == pytest.approx(profile.energy_j)


def test_a_waves_output_shares_l2_with_its_rows_awaiting_the_reread_by_hand() -> None:
    """ATen's LayerNorm over 4096 x 2560 fp16 on the A40: 128 threads, 12 CTAs per SM (its
    48 warps), so a wave of 84 x 12 = 1008 rows reads 5,120 B each and writes as much before the
    re-read of its last rows: 1008 x 10,240 B = 10.32 MB held against the 6 MB (6,291,456 B)
    L2, h = 6,291,456 / 10,321,920 = 0.6095. Counting the reads alone (5.16 MB) gave 1."""
    e = evaluation(row_op(OpKind.LAYERNORM, 4096, 2560, "pytorch"), load_hardware("a40"))
    assert e.resident_ctas_per_sm == 12
    assert e.l2_reread_hit_fraction == pytest.approx(6291456 / (1008 * 2 * 5120))
