"""Streaming kernels (elementwise, softmax, norms): structure rules, hand-computed times, properties."""

from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from opmodel import DType, LocalOp, OpKind, Phase, TensorRole, TensorSpec
from opmodel.core.errors import OpModelError
from opmodel.hardware import HardwareSpec, load_hardware
from opmodel.hardware.clocking import boosted
from opmodel.models import get_model
from opmodel.models.effective_roofline.streaming_op import predict_streaming
from opmodel.models.streaming import (
    StreamingEvaluation,
    StreamWork,
    evaluate_streaming,
    loaded_chain_s,
    rope_kernel,
    streaming_kernel,
)
from opmodel.models.streaming.aten_softmax import loads_in_flight
from opmodel.models.streaming.issue import IssueCalibration, issue_calibration, overridden
from opmodel.models.streaming.kernels import aten_elements_per_thread, aten_elementwise_kernel
from opmodel.parsing import load_op
from tests.conftest import EXAMPLES

A100 = load_hardware("a100_80gb_sxm")
H100 = load_hardware("h100_sxm")
MODEL = get_model("effective_roofline")


def _row_op(kind: OpKind, rows: int, length: int, implementation: str | None = None) -> LocalOp:
    weights = {OpKind.SOFTMAX: 0, OpKind.RMSNORM: 1, OpKind.LAYERNORM: 2}[kind]
    tensors = (
        TensorSpec(TensorRole.INPUT, (rows, length), DType.FP16),
        *(TensorSpec(TensorRole.WEIGHT, (length,), DType.FP16) for _ in range(weights)),
        TensorSpec(TensorRole.OUTPUT, (rows, length), DType.FP16),
    )
    attrs = {"implementation": implementation} if implementation else {}
    return LocalOp(name="row", kind=kind, phase=Phase.PREFILL, tensors=tensors, attrs=attrs)


def _add(rows: int, length: int) -> LocalOp:
    return _elementwise(rows, length, "add", inputs=2)


def _elementwise(
    rows: int, length: int, function: str, *, inputs: int = 1, **attrs: str
) -> LocalOp:
    shape = (rows, length)
    return LocalOp(
        name=function,
        kind=OpKind.ELEMENTWISE,
        phase=Phase.PREFILL,
        tensors=(
            *(TensorSpec(TensorRole.INPUT, shape, DType.FP16) for _ in range(inputs)),
            TensorSpec(TensorRole.OUTPUT, shape, DType.FP16),
        ),
        attrs={"function": function, **attrs},
    )


def _no_bytes(**counts: float) -> StreamWork:
    """Work that moves nothing: only the compute bounds (``sfu_ops``,
    ``instructions_per_element``) can limit it."""
    return StreamWork(
        read_bytes=0,
        shared_read_bytes=0,
        reread_bytes=0,
        write_bytes=0,
        flops=0,
        vector_flops_per_s=0.0,
        **counts,  # type: ignore[arg-type]
    )


def _evaluation(op: LocalOp, hardware: HardwareSpec) -> StreamingEvaluation:
    diagnostics = MODEL.predict(op, hardware).diagnostics
    assert isinstance(diagnostics, StreamingEvaluation)
    return diagnostics


@pytest.mark.parametrize(
    ("length", "threads"), [(1024, 128), (2047, 256), (8192, 512), (20000, 1024), (32768, 1024)]
)
def test_fused_warps_follow_the_block_size_rule(length: int, threads: int) -> None:
    kernel = streaming_kernel(OpKind.RMSNORM, "fused", 8, length, 2)
    assert (kernel.threads_per_cta, kernel.serial_loads, kernel.global_passes) == (threads, 1, 1)
    assert kernel.reductions == 1
    assert streaming_kernel(OpKind.SOFTMAX, None, 8, length, 2).reductions == 2


def test_vllm_and_pytorch_structures() -> None:
    vllm = streaming_kernel(OpKind.RMSNORM, "vllm", 3, 5120, 2)
    assert (vllm.ctas, vllm.threads_per_cta, vllm.serial_loads, vllm.global_passes) == (
        3,
        1024,
        5,
        2,
    )
    act = streaming_kernel(OpKind.ELEMENTWISE, "vllm", 7, 1376, 2)
    assert (act.ctas, act.threads_per_cta, act.serial_loads, act.reductions) == (7, 1024, 2, 0)
    elementwise = streaming_kernel(OpKind.ELEMENTWISE, None, 3, 1000, 2)
    assert (elementwise.ctas, elementwise.threads_per_cta) == (math.ceil(3000 / 512), 128)
    softmax = streaming_kernel(OpKind.SOFTMAX, "pytorch", 2, 16384, 4)
    # cunn_SoftMaxForward: min(16384, 1024) threads x 4 fp32 per 16-byte vector = 4096
    # elements per sweep: 4 serial loads per pass, 3 passes (max, sum, write)
    assert (softmax.threads_per_cta, softmax.serial_loads, softmax.global_passes) == (1024, 4, 3)
    assert softmax.reductions == 2 and softmax.serial_arithmetic
    # cunn_SoftMaxForwardReg (4096 fp32: 4 per thread): the row loaded once, all in flight
    reg = streaming_kernel(OpKind.SOFTMAX, "pytorch", 2, 4096, 4)
    assert (reg.threads_per_cta, reg.serial_loads, reg.global_passes) == (1024, 1, 1)
    assert reg.name == "cunn_SoftMaxForwardReg" and reg.serial_arithmetic
    short = streaming_kernel(OpKind.SOFTMAX, "pytorch", 2, 100, 2)
    assert (short.threads_per_cta, short.serial_loads) == (128, 4)  # warp softmax: 128 / 32
    # 2048 bf16 elements (4 KiB) still go to the warp softmax: 64 serial loads, one per
    # iteration; 2048 fp32 (8 KiB) too; 4096 bf16 does not
    warp16 = streaming_kernel(OpKind.SOFTMAX, "pytorch", 8, 2048, 2)
    warp32 = streaming_kernel(OpKind.SOFTMAX, "pytorch", 8, 2048, 4)
    assert warp16.serial_loads == warp32.serial_loads == 64
    # the shipped loads in flight by element size; 16 + 64 registers (ncu: 80)
    assert (warp16.loads_in_flight, warp32.loads_in_flight) == (
        loads_in_flight(2),
        loads_in_flight(4),
    )
    assert loads_in_flight(2) > 1 and loads_in_flight(4) > 1
    assert warp16.registers_per_thread == 80
    assert short.loads_in_flight == loads_in_flight(2)
    block = streaming_kernel(OpKind.SOFTMAX, "pytorch", 8, 4096, 2)
    assert (block.ctas, block.threads_per_cta, block.global_passes) == (8, 1024, 1)
    # every other kernel waits for each of its serial loads
    assert block.loads_in_flight == softmax.loads_in_flight == 1.0


def test_aten_128bit_vectors_give_a_16bit_thread_8_elements() -> None:
    """ATen's 128-bit vectorization (attr ``aten_128bit_vectors``): a bf16 or fp16 thread takes
    one 16-byte vector, 8 elements (ncu on an H200, PyTorch 2.11: 33.5 M bf16 elements in 32,768
    CTAs of 128 threads); fp32 fills 16 bytes with 4 either way and 1-byte dtypes keep 4."""
    assert aten_elements_per_thread(2, vector_128bit=True) == 8
    assert aten_elements_per_thread(2, vector_128bit=False) == 4
    assert aten_elements_per_thread(4, vector_128bit=True) == 4
    assert aten_elements_per_thread(1, vector_128bit=True) == 4
    add = aten_elementwise_kernel(OpKind.ELEMENTWISE, 8192 * 4096, 2)
    assert (add.ctas, add.threads_per_cta, add.elements_per_cta) == (32768, 128, 1024)
    copy = aten_elementwise_kernel(OpKind.COPY, 8192 * 4096, 2)
    assert copy.ctas == 32768 and copy.name.startswith("copy")
    h200 = load_hardware("h200_sxm")
    old = _evaluation(_add(8192, 14336), h200)
    vec = _add(8192, 14336)
    new = _evaluation(
        dataclasses.replace(vec, attrs={**vec.attrs, "aten_128bit_vectors": True}), h200
    )
    assert old.kernel.ctas == 2 * new.kernel.ctas
    # twice the bytes in flight per thread: a large add runs nearer the DRAM rate
    assert new.latency_s < old.latency_s
    dram = 3 * 8192 * 14336 * 2 / h200.hbm.bandwidth_bytes_per_s
    assert new.latency_s >= dram
    vllm = LocalOp(
        name="act",
        kind=OpKind.ELEMENTWISE,
        phase=Phase.PREFILL,
        tensors=(
            TensorSpec(TensorRole.INPUT, (64, 11008), DType.FP16),  # gate
            TensorSpec(TensorRole.INPUT, (64, 11008), DType.FP16),  # up
            TensorSpec(TensorRole.OUTPUT, (64, 11008), DType.FP16),
        ),
        attrs={"function": "silu_and_mul", "implementation": "vllm"},
    )
    marked = dataclasses.replace(vllm, attrs={**vllm.attrs, "aten_128bit_vectors": True})
    # vLLM's own kernels are not ATen's: the attr does not change them
    assert _evaluation(marked, h200).latency_s == _evaluation(vllm, h200).latency_s


def test_loads_in_flight_divide_the_chain_by_hand() -> None:
    """One warp-softmax row of 2048 bf16 elements on the H100 (one CTA, no reuse, no queueing):
    the chain is 64 DRAM round trips / u plus two reductions, so u = 4 instead of 1 takes
    48 / 64 of the loads' time off it."""
    kernel = streaming_kernel(OpKind.SOFTMAX, "pytorch", 1, 2048, 2)
    work = dataclasses.replace(_no_bytes(), read_bytes=4096, write_bytes=4096)
    one = evaluate_streaming(dataclasses.replace(kernel, loads_in_flight=1.0), H100, work)
    four = evaluate_streaming(dataclasses.replace(kernel, loads_in_flight=4.0), H100, work)
    l_dram = H100.hbm.latency_s
    assert one.chain_s - four.chain_s == pytest.approx(48 * l_dram, rel=1e-9)


def test_vllm_rmsnorm_one_token_by_hand() -> None:
    """1 x 4096 fp16 on A100: one CTA of 1024 threads, four serial loads per pass, two passes,
    each iteration's arithmetic before the next load."""
    e = _evaluation(_row_op(OpKind.RMSNORM, 1, 4096, "vllm"), A100)
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
    # DRAM at the sustained 0.935 of 2,039 GB/s (a100_80gb_sxm_sustained.yaml, hbm_fraction)
    rest = (2 * 5 + 4) * l_smem + arithmetic + turnaround
    dram = 3 * 4096 * 2 / (2.039e12 * 0.935)
    assert rest == pytest.approx(chain - 4 * l_dram - 4 * l_l2)
    total = trips + rest + dram
    loaded = (total + math.sqrt(total**2 - 2 * dram * (2 * rest + trips))) / 2
    assert e.latency_s == pytest.approx(2000 / 1.41e9 + loaded)
    rho = dram / loaded
    assert e.dram_utilisation == pytest.approx(rho)
    assert e.loaded_dram_latency_s == pytest.approx(l_dram * (2 - rho) / (2 * (1 - rho)))
    # and the chain solves t = rest + trips x the M/D/1 stretch at rho = dram / t
    assert loaded == pytest.approx(rest + trips * (2 - rho) / (2 * (1 - rho)))


def test_vllm_rmsnorm_lockstep_ctas_share_the_sms_issue_by_hand() -> None:
    """108 tokens put one CTA on each A100 SM, 216 two: the pair run their loop in lockstep,
    so each CTA's serial arithmetic takes twice as long; loads and reductions are unchanged."""
    one = _evaluation(_row_op(OpKind.RMSNORM, 108, 4096, "vllm"), A100)
    two = _evaluation(_row_op(OpKind.RMSNORM, 216, 4096, "vllm"), A100)
    assert (one.full_waves, one.tail_ctas) == (0, 108)
    assert (two.full_waves, two.tail_ctas) == (1, 0)
    i = issue_calibration().instructions[("vllm", "rmsnorm")]
    arithmetic = i * 4096 / (4 * 32) / 1.41e9
    assert two.chain_s - one.chain_s == pytest.approx(arithmetic)
    # ATen's layer norm is not in lockstep: its serial arithmetic never depends on its wave
    norm_one = _evaluation(_row_op(OpKind.LAYERNORM, 108, 4096, "pytorch"), A100)
    norm_two = _evaluation(_row_op(OpKind.LAYERNORM, 216, 4096, "pytorch"), A100)
    assert norm_two.chain_s == pytest.approx(norm_one.chain_s)


def test_lone_warps_wait_out_their_dependent_arithmetic_by_hand() -> None:
    """ATen's LayerNorm, 1 x 2048 fp16 on A100: one CTA of 128 threads, a warp on each of the
    four SMSPs. Its serial arithmetic, I x 2048 / (4 x 32) lane-cycles, is issued at most one
    dependent instruction per 4 cycles (fma_latency_cycles) by a scheduler with one warp: x4.
    A 1024-thread CTA (8 warps per SMSP) hides that latency, as does vLLM's RMSNorm."""
    e = _evaluation(_row_op(OpKind.LAYERNORM, 1, 2048, "pytorch"), A100)
    assert A100.compute.sm is not None and A100.compute.sm.fma_latency_cycles == 4
    l_dram, l_l2, l_smem = 4.0e-7, 1.42e-7, 2.2e-8  # a100_80gb_sxm.yaml
    i = issue_calibration().instructions[("pytorch", "layernorm")]
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
    fast = _evaluation(_row_op(OpKind.LAYERNORM, 1, 2048, "pytorch"), quick)
    assert fast.chain_s == pytest.approx(loads + 2 * (2 * 5 + 4) * l_smem + issue)


def test_a_kernel_cap_on_resident_ctas_halves_the_slots_by_hand() -> None:
    """A 4096 x 4096 fp16 add's structure (16 CTAs of 128 threads per SM on A100, by its warps) with
    ``max_resident_ctas_per_sm = 8``: 8 per SM, reported as ``kernel``, so each slot runs twice
    the CTAs and the kernel is slower; a cap above the SM's own limit changes nothing."""
    kernel = streaming_kernel(OpKind.ELEMENTWISE, "pytorch", 4096, 4096, 2)
    elements = 4096 * 4096
    work = dataclasses.replace(_no_bytes(), read_bytes=4 * elements, write_bytes=2 * elements)
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
    e = _evaluation(_add(4096, 4096), A100)
    assert (e.kernel.ctas, e.resident_ctas_per_sm) == (32768, 16)
    concurrent = 16 * 108
    assert (e.full_waves, e.tail_ctas) == (32768 // concurrent, 32768 % concurrent)
    per_cta = 3 * 512 * 2  # two fp16 inputs and one output
    dram = 32768 * per_cta / (2.039e12 * 0.935)  # 52.8 µs at the sustained 0.935 of the peak
    # each slot's 19 CTAs wait one DRAM round trip each (400 ns), queued behind that traffic,
    # and each pays its turnaround (490 cycles, unqueued): t = rest + trips (2 - rho) /
    # (2 (1 - rho)), rho = dram / t
    slot_ctas = math.ceil(32768 / concurrent)
    trips, rest = slot_ctas * 4.0e-7, slot_ctas * 490 / 1.41e9
    total = dram + trips + rest
    loaded = (total + math.sqrt(total**2 - 2 * dram * (2 * rest + trips))) / 2
    assert loaded == pytest.approx(rest + trips * (2 - dram / loaded) / (2 * (1 - dram / loaded)))
    assert e.limiter == "latency"
    assert e.latency_s == pytest.approx(2000 / 1.41e9 + loaded)


def test_rereads_go_to_dram_when_the_wave_does_not_fit_l2() -> None:
    small = _evaluation(_row_op(OpKind.LAYERNORM, 4096, 1024, "pytorch"), A100)
    assert small.l2_reread_hit_fraction == 1.0
    big = _evaluation(_row_op(OpKind.LAYERNORM, 8192, 65536, "pytorch"), A100)
    assert big.l2_reread_hit_fraction < 1.0
    compulsory = 8192 * 65536 * 2 + 2 * 65536 * 2
    assert big.dram_read_bytes > compulsory
    profile = MODEL.predict(_row_op(OpKind.LAYERNORM, 8192, 65536, "pytorch"), A100)
    assert profile.traffic["hbm"].read_bytes == math.ceil(big.dram_read_bytes)
    assert profile.energy.total_j == pytest.approx(profile.energy_j)


def test_a_waves_output_shares_l2_with_its_rows_awaiting_the_reread_by_hand() -> None:
    """ATen's LayerNorm over 4096 x 2560 fp16 on the A40: 128 threads, 12 CTAs per SM (its
    48 warps), so a wave of 84 x 12 = 1008 rows reads 5,120 B each and writes as much before the
    re-read of its last rows: 1008 x 10,240 B = 10.32 MB held against the 6 MB (6,291,456 B)
    L2, h = 6,291,456 / 10,321,920 = 0.6095. Counting the reads alone (5.16 MB) gave 1."""
    e = _evaluation(_row_op(OpKind.LAYERNORM, 4096, 2560, "pytorch"), load_hardware("a40"))
    assert e.resident_ctas_per_sm == 12
    assert e.l2_reread_hit_fraction == pytest.approx(6291456 / (1008 * 2 * 5120))


def test_unknown_implementation_is_named() -> None:
    with pytest.raises(OpModelError, match="implementation: must be one of fused, vllm, pytorch"):
        _row_op(OpKind.RMSNORM, 1, 8, "cudnn")


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
    base = MODEL.predict(_row_op(kind, rows, length, implementation), hardware).latency_s
    longer = MODEL.predict(_row_op(kind, rows, length + extra, implementation), hardware)
    more = MODEL.predict(_row_op(kind, rows + extra, length, implementation), hardware)
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
    op = _add(rows, length)
    profile = MODEL.predict(op, H100)
    bound = 3 * rows * length * 2 / H100.hbm.bandwidth_bytes_per_s
    assert profile.latency_s >= bound


def test_sfu_bound_elementwise_by_hand() -> None:
    """No bytes, 4 SFU ops per element: 1728 CTAs of 512 elements fill 108 SMs 16 deep."""
    kernel = streaming_kernel(OpKind.ELEMENTWISE, None, 1, 512 * 1728, 2)
    e = evaluate_streaming(kernel, A100, _no_bytes(sfu_ops=4 * 512 * 1728))
    assert e.limiter == "compute"
    assert e.latency_s == pytest.approx(2000 / 1.41e9 + 16 * (4 * 512) / 16 / 1.41e9)


def test_issue_bound_by_hand() -> None:
    """No bytes, 50 instructions per element: 1728 CTAs of 512 elements, 16 per SM; an SM
    issues 4 x 32 lane instructions per clock (streaming.issue)."""
    kernel = streaming_kernel(OpKind.ELEMENTWISE, None, 1, 512 * 1728, 2)
    e = evaluate_streaming(kernel, A100, _no_bytes(instructions_per_element=50.0))
    assert e.limiter == "compute"
    assert e.latency_s == pytest.approx(2000 / 1.41e9 + 16 * 512 * 50 / (4 * 32) / 1.41e9)


def test_a_partial_warp_issues_as_a_whole_one() -> None:
    """No bytes, 10,000 instructions per element, 1728 CTAs (16 per SM), issue-bound: a CTA of
    17 elements takes the issue slots of a full warp, as one of 32 does; 33 take two warps'
    (the reason a 33-element vLLM RMSNorm row is never faster than a 17-element one)."""
    kernel = streaming_kernel(OpKind.ELEMENTWISE, None, 1, 512 * 1728, 2)

    def issue_s(elements: int) -> float:
        sized = dataclasses.replace(kernel, elements_per_cta=elements)
        e = evaluate_streaming(sized, A100, _no_bytes(instructions_per_element=1e4))
        assert e.limiter == "compute"
        return e.latency_s - 2000 / 1.41e9

    assert issue_s(17) == pytest.approx(issue_s(32))
    assert issue_s(32) == pytest.approx(16 * 32 * 1e4 / 128 / 1.41e9)
    assert issue_s(33) == pytest.approx(2 * issue_s(32))


def test_more_instructions_never_faster_and_the_override_is_scoped() -> None:
    op = _elementwise(4096, 10240, "gelu", implementation="pytorch")
    times = []
    for value in (0.0, 20.0, 60.0, 120.0):
        with overridden(IssueCalibration({("pytorch", "gelu"): value}, "x", "y")):
            times.append(predict_streaming(op, A100).latency_s)
    assert times == sorted(times) and times[-1] > times[0]
    assert issue_calibration().hardware == "a100_80gb_sxm"  # back to the shipped file


@pytest.mark.parametrize("example", ["reduction", "copy", "embedding"])
def test_other_memory_kinds_run_as_streaming_kernels(example: str) -> None:
    op = load_op(EXAMPLES / f"{example}.yaml")
    profile = MODEL.predict(op, H100)
    assert profile.implementation == "effective_roofline/streaming/pytorch"
    roofline = get_model("roofline").predict(op, H100)
    assert profile.latency_s >= roofline.latency_s * 0.99
    e = profile.diagnostics
    assert isinstance(e, StreamingEvaluation)
    if example == "embedding":  # ATen's index_select: one index and one row load per iteration
        assert e.kernel.name == "indexSelectLargeIndex"
        assert e.kernel.serial_loads == e.kernel.l2_serial_loads == 125  # 4096^2 / (8 x 132 x 128)
    else:
        assert e.kernel.serial_loads == 1


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
    e = _evaluation(_warm(_row_op(OpKind.RMSNORM, 1, 4096, "vllm")), A100)
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
    op = _add(rows, length)
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
    cold = _evaluation(_add(1024, 4096), A100)
    warm = _evaluation(_add_warm(1024, 4096, warm_input=1, producer_bytes=24 * mib), A100)
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
    cold = _evaluation(_add(1024, 4096), A100)
    warm = _evaluation(_add_warm(1024, 4096, warm_input=1, producer_bytes=32 * mib), A100)
    assert cold.dram_write_back_bytes == cold.dram_write_bytes == 8 * mib
    assert warm.warm_l2_hit_fraction == pytest.approx(0.25)
    assert warm.dram_read_bytes == pytest.approx(14 * mib)
    assert warm.dram_write_back_bytes == pytest.approx(10 * mib / 11)
    assert warm.dram_write_back_bytes < warm.dram_write_bytes == 8 * mib


def test_a_producer_that_streams_far_more_than_l2_leaves_little() -> None:
    """The same add after a GEMM that moved 2 GiB: a = 102.4, b = 0.8: only the bytes written
    in the producer's last 0.2 capacities survive, s = (1 - 0.8) / 101.6 ~ 0.2 %."""
    warm = _evaluation(_add_warm(1024, 4096, warm_input=1, producer_bytes=2**31), A100)
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
    cold = _row_op(kind, rows, length, implementation)
    for hardware in (A100, load_hardware("a40")):
        assert MODEL.predict(_warm(cold), hardware).latency_s <= MODEL.predict(
            cold, hardware
        ).latency_s * (1 + 1e-12)


def test_unlocked_h100_runs_streaming_kernels_at_its_max_boost_clock() -> None:
    """The H100 SXM's tensor peaks are rated at 1.83 GHz, its FP32 peak (67 TFLOPS) at 1.98 GHz:
    a streaming kernel on the unlocked config runs as on the spec at 1.98 GHz; a locked spec
    (at_clock) has no boost and runs at its own clock; GEMMs do not boost (their clock is the
    rated one or, busy enough, the power-limited one)."""
    assert H100.compute.max_boost_clock_hz == 1.98e9
    boosted_spec = boosted(H100)
    assert boosted_spec is boosted(H100)  # cached on the spec
    assert boosted_spec.compute.clock_hz == 1.98e9
    assert boosted_spec.compute.max_boost_clock_hz is None
    op = _row_op(OpKind.RMSNORM, 2048, 4096, "vllm")
    at_boost = MODEL.predict(op, H100.at_clock(1.98e9))
    assert MODEL.predict(op, H100).latency_s == at_boost.latency_s
    locked = H100.at_clock(1.83e9)
    assert locked.compute.max_boost_clock_hz is None
    assert MODEL.predict(op, locked).latency_s > at_boost.latency_s
    assert boosted(A100) is A100  # A100's rated clock is its maximum boost
    gemm = load_op(EXAMPLES / "gemm.yaml")
    assert MODEL.predict(gemm, H100).latency_s >= MODEL.predict(gemm, locked).latency_s


def test_a_one_wave_gemm_producer_leaves_its_output_by_hand() -> None:
    """The 2 GiB producer above as a one-wave GEMM (``producer_waves: 1``): it stored its
    output after streaming its operands, so only the add's own 16 MiB (b = 0.8 of the 20 MiB
    shared capacity) come after it: all of it is still there, s = min(1, 1 / b) = 1; the DRAM
    reads shrink by the whole input."""
    mib = 2**20
    spread = _evaluation(_add_warm(1024, 4096, warm_input=1, producer_bytes=2**31), A100)
    burst = _evaluation(
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
    cold = MODEL.predict(_add(rows, length), A100)
    warm = MODEL.predict(_add_warm(rows, length, warm_input=1, producer_bytes=producer), A100)
    busier = MODEL.predict(
        _add_warm(rows, length, warm_input=1, producer_bytes=producer + more), A100
    )
    saved = cold.traffic["hbm"].total_bytes - warm.traffic["hbm"].total_bytes
    assert -1 <= saved <= input_bytes + 1
    assert warm.latency_s <= cold.latency_s * (1 + 1e-12)
    assert busier.latency_s >= warm.latency_s * (1 - 1e-12)
    assert busier.traffic["hbm"].total_bytes >= warm.traffic["hbm"].total_bytes - 1


def test_vllm_rope_structure_by_hand() -> None:
    """Llama-3-8B: 32 query + 8 key heads of 128 -> 2560 pairs per token; block min(32 x 64,
    512) = 512 threads; the q loop runs 4 times and the k loop once, after the position load:
    6 serial loads, one CTA per token."""
    kernel = rope_kernel(4096, 40 * 128)
    assert (kernel.ctas, kernel.threads_per_cta, kernel.serial_loads) == (4096, 512, 6)
    assert (kernel.global_passes, kernel.reductions) == (1, 0)
    # a TP-8 shard of Llama-2-70B: 8 query + 1 key heads -> 576 pairs: 512 threads, 2 loops
    assert rope_kernel(16, 9 * 128).serial_loads == 3
    op = load_op(EXAMPLES / "rope.yaml")
    profile = MODEL.predict(op, A100)
    e = profile.diagnostics
    assert isinstance(e, StreamingEvaluation)
    assert e.kernel == kernel
    assert profile.implementation == "effective_roofline/streaming/vllm"


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
    cold = _evaluation(_add(rows, length), hardware)
    assert cold.dram_write_back_bytes == cold.dram_write_bytes
    warm = _evaluation(
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
    bare = dataclasses.replace(_no_bytes(), read_bytes=2)
    weighted = dataclasses.replace(bare, shared_read_bytes=2)
    without = evaluate_streaming(kernel, A100, bare)
    with_weights = evaluate_streaming(kernel, A100, weighted)
    assert without.limiter == with_weights.limiter == "latency"
    grown = with_weights.latency_s - without.latency_s
    assert grown == pytest.approx(4 * (4.0e-7 - 1.42e-7), rel=1e-6)


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
    clean = _evaluation(_copy(4096, 4096), h200)
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
    op = _row_op(OpKind.RMSNORM, 1, 4096, "vllm")
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
