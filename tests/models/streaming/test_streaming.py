"""Streaming kernels (elementwise, softmax, norms): hand-computed chains, compute bounds, properties."""

from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from opmodel import DType, OpKind
from opmodel.hardware import HardwareSpec
from opmodel.models.effective_roofline.streaming_op import predict_streaming
from opmodel.models.shared.start_drain import start_drain_calibration
from opmodel.models.streaming import (
    evaluate_streaming,
    loaded_chain_s,
    streaming_kernel,
)
from opmodel.models.streaming.counted import RowKernelCount, counted_layer_norm
from opmodel.models.streaming.issue import IssueCalibration, issue_calibration, overridden
from tests.models.streaming.ops import (
    A100,
    H100,
    MODEL,
    add_op,
    elementwise_op,
    evaluation,
    no_bytes,
    row_op,
)

# a streaming kernel's start and drain on a CUDA GPU, SM cycles (the shipped calibration,
# opmodel.models.shared.start_drain; the configs' estimate of 2,000 before it)
START = start_drain_calibration().start_drain_cycles


def test_loads_in_flight_divide_the_chain_by_hand() -> None:
    """One warp-softmax row of 2048 bf16 elements on the H100 (one CTA, no reuse, no queueing):
    the chain is 64 DRAM round trips / u plus two reductions, so u = 4 instead of 1 takes
    48 / 64 of the loads' time off it."""
    kernel = streaming_kernel(OpKind.SOFTMAX, "pytorch", 1, 2048, 2)
    work = dataclasses.replace(no_bytes(), read_bytes=4096, write_bytes=4096)
    one = evaluate_streaming(dataclasses.replace(kernel, loads_in_flight=1.0), H100, work)
    four = evaluate_streaming(dataclasses.replace(kernel, loads_in_flight=4.0), H100, work)
    l_dram = H100.hbm.latency_s
    assert one.chain_s - four.chain_s == pytest.approx(48 * l_dram, rel=1e-9)


def test_vllm_rmsnorm_one_token_by_hand() -> None:
    """1 x 4096 fp16 on A100: one CTA of 1024 threads, four serial loads per pass, two passes,
    each iteration's arithmetic before the next load."""
    e = evaluation(row_op(OpKind.RMSNORM, 1, 4096, "vllm"), A100)
    # 32 registers x 32 lanes = 1024 per warp, x 32 warps = 32,768: two CTAs per SM, as many as
    # 64 warps allow (Vidur's times step every 216 = 2 x 108 tokens)
    assert e.kernel.registers_per_thread == 32
    assert (e.resident_ctas_per_sm, e.occupancy_limiter) == (2, "warps")
    l_dram, l_l2, l_smem = 4.0e-7, 1.42e-7, 2.2e-8  # a100_80gb_sxm.yaml
    # serial arithmetic: I (the shipped calibration) per element, issued by 4 SMSPs x 32 lanes;
    # the only CTA has its SM to itself
    i = issue_calibration().instructions[("vllm", "rmsnorm")]
    arithmetic = i * 4096 / (4 * 32) / 1.41e9
    turnaround = 490 / 1.41e9  # cta_turnaround_cycles: launching the CTA and freeing its slot
    chain = 4 * (l_dram + l_l2) + (2 * 5 + 4) * l_smem + arithmetic + turnaround
    assert e.chain_s == pytest.approx(chain)
    assert e.limiter == "latency"
    # the pass-one loads are DRAM round trips. Pass two re-reads the row from L2 but loads the
    # weight too, which no kernel warmed: this single wave's only CTA waits on DRAM for it, so
    # pass two's four loads are DRAM round trips as well (cold weights) and the reduction and
    # the arithmetic are left. The kernel's DRAM time is its 8 KiB row, 8 KiB weight and 8 KiB
    # output
    trips = 4 * l_dram + 4 * l_dram
    # DRAM at the sustained 0.937 of 2,039 GB/s (a100_80gb_sxm_sustained.yaml, hbm_fraction)
    rest = (2 * 5 + 4) * l_smem + arithmetic + turnaround
    dram = 3 * 4096 * 2 / (2.039e12 * 0.937)
    assert rest == pytest.approx(chain - 4 * l_dram - 4 * l_l2)
    total = trips + rest + dram
    loaded = (total + math.sqrt(total**2 - 2 * dram * (2 * rest + trips))) / 2
    assert e.latency_s == pytest.approx(START / 1.41e9 + loaded)
    rho = dram / loaded
    assert e.dram_utilisation == pytest.approx(rho)
    assert e.loaded_dram_latency_s == pytest.approx(l_dram * (2 - rho) / (2 * (1 - rho)))
    # and the chain solves t = rest + trips x the M/D/1 stretch at rho = dram / t
    assert loaded == pytest.approx(rest + trips * (2 - rho) / (2 * (1 - rho)))


def test_vllm_rmsnorm_lockstep_ctas_share_the_sms_issue_by_hand() -> None:
    """108 tokens put one CTA on each A100 SM, 216 two: the pair run their loop in lockstep,
    so each CTA's serial arithmetic takes twice as long; loads and reductions are unchanged."""
    one = evaluation(row_op(OpKind.RMSNORM, 108, 4096, "vllm"), A100)
    two = evaluation(row_op(OpKind.RMSNORM, 216, 4096, "vllm"), A100)
    assert (one.full_waves, one.tail_ctas) == (0, 108)
    assert (two.full_waves, two.tail_ctas) == (1, 0)
    i = issue_calibration().instructions[("vllm", "rmsnorm")]
    arithmetic = i * 4096 / (4 * 32) / 1.41e9
    assert two.chain_s - one.chain_s == pytest.approx(arithmetic)
    # ATen's layer norm is not in lockstep: its serial arithmetic never depends on its wave
    norm_one = evaluation(row_op(OpKind.LAYERNORM, 108, 4096, "pytorch"), A100)
    norm_two = evaluation(row_op(OpKind.LAYERNORM, 216, 4096, "pytorch"), A100)
    assert norm_two.chain_s == pytest.approx(norm_one.chain_s)


def test_lone_warps_wait_out_their_dependent_arithmetic_by_hand() -> None:
    """ATen's LayerNorm, 1 x 2048 fp16 on A100: one CTA of 128 threads, a warp on each of the
    four SMSPs. Its serial arithmetic, I x 2048 / (4 x 32) lane-cycles, is issued at most one
    dependent instruction per 4 cycles (fma_latency_cycles) by a scheduler with one warp: x4.
    A 1024-thread CTA (8 warps per SMSP) hides that latency, as does vLLM's RMSNorm."""
    e = evaluation(row_op(OpKind.LAYERNORM, 1, 2048, "pytorch"), A100)
    assert A100.compute.sm is not None and A100.compute.sm.fma_latency_cycles == 4
    l_dram, l_l2, l_smem = 4.0e-7, 1.42e-7, 2.2e-8  # a100_80gb_sxm.yaml
    # I: sm_80's counted fp16 kernel, 34.5 cycles per element and 323 instructions per row
    # over its 2048 elements, times the fitted stall factor
    count = counted_layer_norm("sm80", DType.FP16)
    assert count == RowKernelCount(34.5, 323.0, 29.5)  # fp16 on sm_80: 29.5 instructions
    i = issue_calibration().stall_factors[("pytorch", "layernorm")] * (34.5 + 323 * 128 / 2048)
    issue = i * 2048 / (4 * 32) / 1.41e9
    # ceil(2048 / (128 x 4)) = 4 serial vector loads per pass, two passes, two reductions
    loads = 4 * l_dram + 4 * l_l2 + 490 / 1.41e9  # and the CTA's turnaround
    assert e.chain_s == pytest.approx(loads + 2 * (2 * 5 + 4) * l_smem + 4 * issue)
    # with a hypothetical 1-cycle dependent latency the floor is 1 / 1 warp: the issue time
    quick = dataclasses.replace(
        A100,
        compute=dataclasses.replace(
            A100.compute, sm=dataclasses.replace(A100.compute.sm, fma_latency_cycles=1)
        ),
    )
    fast = evaluation(row_op(OpKind.LAYERNORM, 1, 2048, "pytorch"), quick)
    assert fast.chain_s == pytest.approx(loads + 2 * (2 * 5 + 4) * l_smem + issue)


def test_a_kernel_cap_on_resident_ctas_halves_the_slots_by_hand() -> None:
    """A 4096 x 4096 fp16 add's structure (16 CTAs of 128 threads per SM on A100, by its warps) with
    ``max_resident_ctas_per_sm = 8``: 8 per SM, reported as ``kernel``, so each slot runs twice
    the CTAs and the kernel is slower; a cap above the SM's own limit changes nothing."""
    kernel = streaming_kernel(OpKind.ELEMENTWISE, "pytorch", 4096, 4096, 2)
    elements = 4096 * 4096
    work = dataclasses.replace(no_bytes(), read_bytes=4 * elements, write_bytes=2 * elements)
    free = evaluate_streaming(kernel, A100, work)
    capped = evaluate_streaming(dataclasses.replace(kernel, max_resident_ctas_per_sm=8), A100, work)
    loose = evaluate_streaming(dataclasses.replace(kernel, max_resident_ctas_per_sm=32), A100, work)
    assert (free.resident_ctas_per_sm, free.occupancy_limiter) == (16, "warps")  # 64 / 4
    assert (capped.resident_ctas_per_sm, capped.occupancy_limiter) == (8, "kernel")
    assert (capped.full_waves, capped.tail_ctas) == divmod(32768, 8 * 108)
    assert (loose.resident_ctas_per_sm, loose.latency_s) == (16, free.latency_s)
    assert capped.latency_s > free.latency_s


def test_large_add_queues_behind_its_own_bandwidth_by_hand() -> None:
    """4096 x 4096 fp16 add on A100: 32,768 CTAs of 512 elements, 16 resident per SM."""
    e = evaluation(add_op(4096, 4096), A100)
    assert (e.kernel.ctas, e.resident_ctas_per_sm) == (32768, 16)
    concurrent = 16 * 108
    assert (e.full_waves, e.tail_ctas) == (32768 // concurrent, 32768 % concurrent)
    per_cta = 3 * 512 * 2  # two fp16 inputs and one output
    dram = 32768 * per_cta / (2.039e12 * 0.937)  # 52.7 µs at the sustained 0.937 of the peak
    # each slot's 19 CTAs wait one DRAM round trip each (400 ns), queued behind that traffic,
    # and each pays its turnaround (490 cycles, unqueued) and its own arithmetic after the load:
    # ATen's add counted at 6.25 instructions per fp16 element on sm_80 (configs/instructions),
    # 512 elements over the SM's 128 lanes, at 4 cycles each for a warp alone on its SMSP
    # (fma_latency_cycles / 1 warp of the CTA per SMSP): t = rest + trips (2 - rho) /
    # (2 (1 - rho)), rho = dram / t
    slot_ctas = math.ceil(32768 / concurrent)
    arithmetic_cycles = 6.25 * 512 / 128 * 4
    trips, rest = slot_ctas * 4.0e-7, slot_ctas * (490 + arithmetic_cycles) / 1.41e9
    total = dram + trips + rest
    loaded = (total + math.sqrt(total**2 - 2 * dram * (2 * rest + trips))) / 2
    assert loaded == pytest.approx(rest + trips * (2 - dram / loaded) / (2 * (1 - dram / loaded)))
    assert e.limiter == "latency"
    assert e.latency_s == pytest.approx(START / 1.41e9 + loaded)


_KINDS = st.sampled_from([OpKind.SOFTMAX, OpKind.LAYERNORM, OpKind.RMSNORM])


_IMPLEMENTATIONS = st.sampled_from(["fused", "vllm", "pytorch"])


@given(
    _KINDS,
    _IMPLEMENTATIONS,
    st.tuples(st.integers(1, 20000), st.integers(1, 20000), st.integers(1, 20000)),
    st.sampled_from([A100, H100]),
)
def test_longer_rows_and_more_rows_are_never_faster(
    kind: OpKind, implementation: str, sizes: tuple[int, int, int], hardware: HardwareSpec
) -> None:
    rows, length, extra = sizes
    base = MODEL.predict(row_op(kind, rows, length, implementation), hardware).latency_s
    longer = MODEL.predict(row_op(kind, rows, length + extra, implementation), hardware)
    more = MODEL.predict(row_op(kind, rows + extra, length, implementation), hardware)
    # ATen hands softmax rows of up to 2048 elements (bf16 here) to its warp softmax, whose
    # serial loads make it slower than the block softmax longer rows get: measured on an H200,
    # one row of 2048 takes 12.6 us and one of 4096 5.2 us (data/measured). Across that
    # boundary a longer row may be faster, and across the next one too: ATen's register
    # softmax (up to 9216 elements, scalar loads, one CTA per SM by its registers) hands longer
    # rows to the block softmax (16-byte vectors, two CTAs per SM); on A100 109 rows of 5953
    # take 7.4861 us and 109 rows of 9217 7.4855 us.
    aten_softmax = kind is OpKind.SOFTMAX and implementation == "pytorch"
    boundaries = (2048, 9216) if aten_softmax else ()
    if not any(length <= b < length + extra for b in boundaries):
        assert longer.latency_s >= base * (1 - 1e-12)
    assert more.latency_s >= base * (1 - 1e-12)


@given(st.integers(1, 100000), st.integers(1, 8192))
def test_elementwise_is_never_faster_than_its_bandwidth_bound(rows: int, length: int) -> None:
    op = add_op(rows, length)
    profile = MODEL.predict(op, H100)
    bound = 3 * rows * length * 2 / H100.hbm.bandwidth_bytes_per_s
    assert profile.latency_s >= bound


def test_sfu_bound_elementwise_by_hand() -> None:
    """No bytes, 4 SFU ops per element: 1728 CTAs of 512 elements fill 108 SMs 16 deep."""
    kernel = streaming_kernel(OpKind.ELEMENTWISE, None, 1, 512 * 1728, 2)
    e = evaluate_streaming(kernel, A100, no_bytes(sfu_ops=4 * 512 * 1728))
    assert e.limiter == "compute"
    assert e.latency_s == pytest.approx(START / 1.41e9 + 16 * (4 * 512) / 16 / 1.41e9)


def test_issue_bound_by_hand() -> None:
    """No bytes, 50 instructions per element: 1728 CTAs of 512 elements, 16 per SM; an SM
    issues 4 x 32 lane instructions per clock (streaming.issue)."""
    kernel = streaming_kernel(OpKind.ELEMENTWISE, None, 1, 512 * 1728, 2)
    e = evaluate_streaming(kernel, A100, no_bytes(instructions_per_element=50.0))
    assert e.limiter == "compute"
    assert e.latency_s == pytest.approx(START / 1.41e9 + 16 * 512 * 50 / (4 * 32) / 1.41e9)


def test_a_partial_warp_issues_as_a_whole_one() -> None:
    """No bytes, 10,000 instructions per element, 1728 CTAs (16 per SM), issue-bound: a CTA of
    17 elements takes the issue slots of a full warp, as one of 32 does; 33 take two warps'
    (the reason a 33-element vLLM RMSNorm row is never faster than a 17-element one)."""
    kernel = streaming_kernel(OpKind.ELEMENTWISE, None, 1, 512 * 1728, 2)

    def issue_s(elements: int) -> float:
        sized = dataclasses.replace(kernel, elements_per_cta=elements)
        e = evaluate_streaming(sized, A100, no_bytes(instructions_per_element=1e4))
        assert e.limiter == "compute"
        return e.latency_s - START / 1.41e9

    assert issue_s(17) == pytest.approx(issue_s(32))
    assert issue_s(32) == pytest.approx(16 * 32 * 1e4 / 128 / 1.41e9)
    assert issue_s(33) == pytest.approx(2 * issue_s(32))


def test_more_instructions_never_faster_and_the_override_is_scoped() -> None:
    op = elementwise_op(4096, 10240, "gelu", implementation="pytorch")
    times = []
    for value in (0.0, 20.0, 60.0, 120.0):
        with overridden(IssueCalibration({("pytorch", "gelu"): value}, "x", "y")):
            times.append(predict_streaming(op, A100).latency_s)
    assert times == sorted(times) and times[-1] > times[0]
    assert issue_calibration().hardware == "a100_80gb_sxm"  # back to the shipped file


@given(
    trips=st.floats(0, 1e-3),
    rest=st.floats(0, 1e-3),
    dram=st.floats(0, 1e-3),
    more=st.floats(0, 1e-4),
)
def test_loaded_chain_lies_between_max_and_sum_and_grows(
    trips: float, rest: float, dram: float, more: float
) -> None:
    """Queueing never beats the slower of chain and bandwidth, never exceeds their sum, and
    more of any of the three never gives a shorter time."""
    t = loaded_chain_s(trips, rest, dram)
    assert max(trips + rest, dram) * (1 - 1e-9) <= t <= (trips + rest + dram) * (1 + 1e-9)
    for bumped in (
        loaded_chain_s(trips + more, rest, dram),
        loaded_chain_s(trips, rest + more, dram),
        loaded_chain_s(trips, rest, dram + more),
    ):
        assert bumped >= t * (1 - 1e-9)
