"""Closed-form time of a streaming kernel: occupancy, waves, latency chain versus bandwidth.

With ``S`` SMs, ``r`` resident CTAs per SM and ``waves = ceil(CTAs / (r S))``:

    chain    = n x L_first + (passes - 1) x n x L_reread + reductions x t_reduce + t_cta
               [+ c x I x elements per CTA / (SMSPs x warp size x clock) with serial
                arithmetic; c = max(s, L_fma / k): s = 1, or for CTAs in lockstep the
                busiest SM's CTAs per wave, ceil(CTAs / S) / waves, whose arithmetic shares
                its issue slots; k the CTA's warps per SMSP, L_fma the dependent-issue
                latency (``fma_latency_cycles``), which a warp alone on its SMSP waits out
                between its dependent instructions]
    n        = serial loads / loads in flight (round trips per pass)
    t_dram   = (CTAs x DRAM bytes per CTA + shared weight bytes) / (HBM bandwidth x util)
    t_chain  = loaded(x, b, t_dram)           (each resident slot runs its CTAs back to back)
    t_l2     = CTAs x L2 bytes per CTA / (L2 bandwidth x util)
    t_math   = ceil(CTAs / S) x max(FLOPs per CTA / (vector peak / S),
                                    SFU ops per CTA / (SFU results per cycle per SM x clock),
                                    I x elements per CTA / (SMSPs x warp size x clock))
    latency  = start and drain + max(t_chain, t_dram, t_l2, t_math)

The start and drain span is :func:`~opmodel.models.shared.start_drain.start_drain_s`: a
calibration in SM cycles on CUDA GPUs, the config's fixed overhead cycles elsewhere.

``x = waves x n x ((1 - w) + (passes - 1)(1 - h)) x L_dram`` is the busiest slot's time in DRAM
round trips and ``b = waves x chain - x`` the rest of its chain. Under load a DRAM round trip
takes longer than the unloaded ``L_dram``: with the kernel's DRAM utilisation
``rho = t_dram / t_chain``, an M/D/1 queue (deterministic service) stretches it by
``(2 - rho) / (2 (1 - rho))`` (Kleinrock, "Queueing Systems", vol. 1, 1975, the
Pollaczek-Khinchine mean for constant service). Solving ``t = b + x (2 - rho) / (2 (1 - rho))``
with ``rho = t_dram / t`` gives the closed form

    loaded(x, b, D) = ((b + D + x) + sqrt((b + D + x)^2 - 2 D (2 b + x))) / 2,

which is ``b + x`` when ``D = 0``, ``max(b, D)`` when ``x = 0``, and grows with each of the
three. Taking the unloaded latency as the service time is a modelling choice (the memory
system is one queue for the kernel's dependent loads); it adds no fitted constant. Latency
chains run per slot while DRAM and L2 are shared by every slot, so the bounds then combine by
``max`` over the whole kernel: a small last wave's latency overlaps the bandwidth time of the
waves before it. Each CTA reads the shared bytes (norm weights) from L2; DRAM
supplies them once.

``L_first = L_dram`` for an op read cold. An op that reads what the previous kernel wrote
(attrs ``warm_l2`` / ``warm_input``, with that kernel's ``producer_bytes``) finds the share
``s`` of those bytes in L2 that :func:`~opmodel.models.shared.l2_survival.producer_output_survival`
gives for the L2's shared capacity; only ``1 - s`` of them travel from DRAM. When every
streamed input is warm, ``w = s`` of the first-pass loads hit: ``L_first = w L_l2 + (1 - w)
L_dram``; a step that also loads a cold input waits on DRAM (``w = 0``).
``L_reread = h L_l2 + (1 - h) L_dram`` with ``h = min(1, C / (bytes the wave's CTAs read per
pass + bytes they write)``, ``C`` the L2's shared capacity (``MemoryLevel.shared_capacity_bytes``,
as in the survival and write-back laws below: on a two-partition L2 a line read from the far
partition is also kept in the near one): a re-read hits L2 while one wave's rows fit there
beside the output lines the wave writes meanwhile (write-allocate: each store takes an L2 line
until it is evicted), and the same share of re-read bytes goes to DRAM.
``t_reduce = (2 log2(warp) + 4) x L_smem``: a shuffle tree in each warp, a round trip through
shared memory and a barrier, twice (estimate; Harris, "Optimizing Parallel Reduction in CUDA",
NVIDIA 2007, for the structure). ``t_cta = cta_turnaround_cycles / clock``: launching the CTA,
running it and freeing its slot, which each CTA of a slot pays in turn (gpu-benches' published
gpu-stream sweeps; :class:`~opmodel.hardware.spec.SmSpec`). Residency is the
minimum over the SM's CTA, warp and register limits (registers allocated per warp in
``register_allocation_unit``s) and the kernel's own cap (``max_resident_ctas_per_sm``, reported
as ``kernel``). No loop over CTAs, rows or waves. Equations: docs/models/streaming.md.
The L2 side (re-read hits, warm inputs, write-back, a flush's dirty lines) is
:mod:`~opmodel.models.streaming.l2_use`.
"""

from __future__ import annotations

import math

from opmodel.core.values import FastValue, value_type
from opmodel.hardware.spec import HardwareSpec, SmSpec
from opmodel.models.shared.queueing import loaded_chain_s
from opmodel.models.shared.start_drain import start_drain_s
from opmodel.models.streaming.l2_use import L2Use, StreamWork, l2_use
from opmodel.models.streaming.structure import StreamKernel

__all__ = ["StreamWork", "StreamingEvaluation", "evaluate_streaming", "loaded_chain_s"]


@value_type
class StreamingEvaluation(FastValue):
    """The numbers behind a streaming kernel's time (seconds and bytes)."""

    kernel: StreamKernel
    resident_ctas_per_sm: int
    occupancy_limiter: str
    full_waves: int
    tail_ctas: int
    chain_s: float
    wave_s: float
    limiter: str
    l2_reread_hit_fraction: float
    warm_l2_hit_fraction: float  # share of the warm inputs' bytes still in L2 (warm_l2/warm_input)
    dram_utilisation: float  # t_dram / t_chain: the load the chain's DRAM round trips see
    loaded_dram_latency_s: float  # L_dram stretched by the M/D/1 queue at that load
    fixed_s: float
    latency_s: float
    dram_read_bytes: float
    dram_write_bytes: float  # what the kernel writes: all of it reaches DRAM, now or later
    dram_write_back_bytes: float  # the part written back while the kernel runs (write_back_bytes)
    l2_read_bytes: float
    dirty_write_back_bytes: float = 0.0  # another kernel's dirty lines it evicts (l2_dirty_bytes)


@value_type
class _Device(FastValue):
    """What the streaming equations read from a spec, looked up once per spec (``_device``)."""

    sm: SmSpec
    clock_hz: float
    has_l2: bool
    l2_shared_bytes: float  # the L2's shared capacity (MemoryLevel.shared_capacity_bytes)
    l_dram: float
    l_l2: float  # 0 without an L2
    hbm_rate: float  # bytes/s at the configured memory fraction
    l2_rate: float  # inf without an L2
    t_reduce: float  # one block reduction: shuffle tree, shared-memory round trip, barrier
    t_turnaround: float  # launching a CTA, running it and freeing its slot (cta_turnaround_cycles)


def _device(hardware: HardwareSpec) -> _Device:
    """The spec's streaming constants (cached on the spec: they depend on nothing else)."""
    cached = hardware.derived_cache.get("streaming.device")
    if cached is not None:
        return cached  # type: ignore[no-any-return]
    sm = hardware.compute.sm
    assert sm is not None
    levels = hardware.levels_by_name
    hbm, l2, smem = hardware.hbm, levels.get("l2"), levels.get("smem")
    device = _Device.make(
        sm=sm,
        clock_hz=hardware.compute.clock_hz,
        has_l2=l2 is not None,
        l2_shared_bytes=l2.shared_capacity_bytes if l2 else 0.0,
        l_dram=hbm.latency_s,
        l_l2=l2.latency_s if l2 else 0.0,
        hbm_rate=hbm.bandwidth_bytes_per_s * hardware.memory_fraction("hbm"),
        l2_rate=l2.bandwidth_bytes_per_s * hardware.memory_fraction("l2") if l2 else math.inf,
        t_reduce=(2 * math.log2(sm.warp_size) + 4) * (smem.latency_s if smem else 0.0),
        t_turnaround=sm.cta_turnaround_cycles / hardware.compute.clock_hz,
    )
    hardware.derived_cache["streaming.device"] = device
    return device


def _residency(kernel: StreamKernel, sm: SmSpec) -> tuple[int, str]:
    warps = math.ceil(kernel.threads_per_cta / sm.warp_size)
    unit = sm.register_allocation_unit
    per_warp = math.ceil(kernel.registers_per_thread * sm.warp_size / unit) * unit
    limits = {
        "ctas": sm.max_ctas_per_sm,
        "warps": sm.max_warps_per_sm // warps,
        "registers": sm.registers_per_sm // (per_warp * warps),
    }
    if kernel.max_resident_ctas_per_sm:
        limits["kernel"] = kernel.max_resident_ctas_per_sm
    limiter = min(limits, key=lambda name: limits[name])
    return max(1, limits[limiter]), limiter


def _issue_cta_s(kernel: StreamKernel, dev: _Device, work: StreamWork) -> float:
    """Seconds the SM's schedulers need to issue one CTA's instructions (streaming.issue): its
    elements padded to a whole warp (a warp instruction takes an issue slot however few of its
    lanes are active)."""
    sm = dev.sm
    lanes = sm.smsps_per_sm * sm.warp_size
    issued = math.ceil(kernel.elements_per_cta / sm.warp_size) * sm.warp_size
    return work.instructions_per_element * issued / lanes / dev.clock_hz


def _compute_s(kernel: StreamKernel, dev: _Device, work: StreamWork) -> float:
    """The busiest SM's CTAs on its vector lanes, special-function unit and issue slots."""
    sm, clock, ctas = dev.sm, dev.clock_hz, kernel.ctas
    vector_flops_per_s = work.vector_flops_per_s
    per_sm_flops = vector_flops_per_s / sm.sm_count if vector_flops_per_s else math.inf
    sfu_cta = work.sfu_ops / ctas
    return math.ceil(ctas / sm.sm_count) * max(
        (work.flops / ctas) / per_sm_flops,
        sfu_cta / sm.sfu_ops_per_cycle_per_sm / clock,
        _issue_cta_s(kernel, dev, work),
    )


def _chain_s(
    kernel: StreamKernel, dev: _Device, use: L2Use, work: StreamWork, sharing: float
) -> float:
    """One CTA's dependent chain: its round trips in each pass, then its reductions;
    with ``serial_arithmetic`` also its own arithmetic, issued by the whole SM, and
    ``sharing`` times as long when the SM's CTAs run in ``lockstep`` and split its issue. A
    scheduler holding fewer than ``fma_latency_cycles`` of the CTA's warps cannot hide the
    latency between a warp's dependent instructions: a CTA of ``k`` warps per SMSP issues its
    arithmetic at most ``k / fma_latency_cycles`` times as fast as the SMSP could, unless the
    kernel's issue cost already holds those stalls (``stalls_in_issue_cost``). Loads of data in
    L2 that the chain waits for besides its passes (``l2_serial_loads``) add an L2 round trip
    each."""
    hit, warm, l_dram = use.hit, use.warm, dev.l_dram
    l_reread = hit * dev.l_l2 + (1 - hit) * l_dram if dev.has_l2 else l_dram
    l_first = warm * dev.l_l2 + (1 - warm) * l_dram if dev.has_l2 else l_dram
    extra = kernel.global_passes - 1
    chain = kernel.round_trips_per_pass * (l_first + extra * l_reread)
    chain += kernel.l2_serial_loads * (dev.l_l2 if dev.has_l2 else l_dram)
    chain += kernel.reductions * dev.t_reduce
    chain += dev.t_turnaround
    if kernel.serial_arithmetic:
        sm = dev.sm
        warps_per_smsp = math.ceil(kernel.threads_per_cta / sm.warp_size) / sm.smsps_per_sm
        latency_bound = (
            1.0 if kernel.stalls_in_issue_cost else sm.fma_latency_cycles / warps_per_smsp
        )
        chain += _issue_cta_s(kernel, dev, work) * max(sharing, latency_bound)
    return chain


def _bounds(
    kernel: StreamKernel, dev: _Device, work: StreamWork, use: L2Use, waves: int
) -> tuple[dict[str, float], float, float]:
    """Each resource's time for the whole kernel, the DRAM utilisation the chain sees and one
    CTA's chain."""
    ctas, shared, extra = kernel.ctas, work.shared_read_bytes, kernel.global_passes - 1
    own_cta = (work.read_bytes - shared + work.write_bytes) / ctas
    dram_cta = (use.dram_reads - shared + use.written_back) / ctas
    l2_cta = own_cta + shared + extra * (work.reread_bytes / ctas)
    # DRAM and L2 are shared by all slots: the kernel's bytes at their bandwidth
    t_dram = (ctas * dram_cta + shared) / dev.hbm_rate
    # every resident slot runs its CTAs back to back: the busiest runs ``waves`` chains, whose
    # DRAM round trips wait in the memory queue the whole kernel loads
    misses = (1 - use.warm) + extra * (1 - use.hit)
    steps = kernel.round_trips_per_pass
    dram_trips = waves * steps * misses * dev.l_dram
    # lockstep CTAs split the SM's issue slots with the others on the busiest SM: its
    # ceil(CTAs / S) CTAs' arithmetic passes through them one after another, spread over the
    # slot's ``waves`` chains
    sharing = math.ceil(ctas / dev.sm.sm_count) / waves if kernel.lockstep else 1.0
    chain = _chain_s(kernel, dev, use, work, sharing)
    # cold weights: the first wave's CTAs all load the shared weights, which no kernel warmed,
    # in their last pass at once, so that pass waits on DRAM where it would hit L2 (later waves
    # find the weights there): ``n x s`` more DRAM round trips and as many fewer L2 hits,
    # ``s`` the pass's L2-hit share
    cold = (use.hit if extra else use.warm) if shared and dev.has_l2 else 0.0
    dram_trips += steps * cold * dev.l_dram
    rest = waves * chain - dram_trips + steps * cold * (dev.l_dram - dev.l_l2)
    t_chain = loaded_chain_s(dram_trips, rest, t_dram)
    times = {
        "latency": t_chain,
        # dirty lines the kernel evicts go back to DRAM too; writes wait in the controller's
        # queue behind reads, so they lengthen a bandwidth-bound kernel, not the load chain
        "dram": t_dram + use.dirty_written_back / dev.hbm_rate,
        "l2": ctas * l2_cta / dev.l2_rate,
        "compute": _compute_s(kernel, dev, work),
    }
    return times, t_dram / t_chain if t_chain > 0 else 0.0, chain


def evaluate_streaming(
    kernel: StreamKernel, hardware: HardwareSpec, work: StreamWork
) -> StreamingEvaluation:
    """Time ``kernel`` doing ``work`` on ``hardware``."""
    dev = _device(hardware)
    resident, occupancy_limiter = _residency(kernel, dev.sm)
    concurrent = resident * dev.sm.sm_count
    ctas = kernel.ctas
    use = l2_use(kernel, dev.has_l2, dev.l2_shared_bytes, work, min(ctas, concurrent))
    waves = math.ceil(ctas / concurrent)
    times, rho, chain = _bounds(kernel, dev, work, use, waves)
    limiter = max(times, key=lambda key: times[key])
    full, tail = divmod(ctas, concurrent)
    # the launch and drain span, read per call: the fitting script overrides it (start_drain)
    fixed, l_dram = start_drain_s(hardware), dev.l_dram
    return StreamingEvaluation(
        kernel=kernel,
        resident_ctas_per_sm=resident,
        occupancy_limiter=occupancy_limiter,
        full_waves=full,
        tail_ctas=tail,
        chain_s=chain,
        wave_s=times[limiter] / waves,
        limiter=limiter,
        l2_reread_hit_fraction=use.hit,
        warm_l2_hit_fraction=use.survival,
        dram_utilisation=rho,
        loaded_dram_latency_s=l_dram * (2 - rho) / (2 * (1 - rho)) if rho < 1 else l_dram,
        fixed_s=fixed,
        latency_s=fixed + times[limiter],
        dram_read_bytes=use.dram_reads,
        dram_write_bytes=float(work.write_bytes),
        dram_write_back_bytes=use.written_back,
        l2_read_bytes=work.read_bytes + (kernel.global_passes - 1) * work.reread_bytes,
        dirty_write_back_bytes=use.dirty_written_back,
    )
