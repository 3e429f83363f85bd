"""Automatic GEMM kernel selection: legality filter, cheap pre-rank, shortlist, effective model.

1. Legality: the catalogue kernels of the GPU's architecture that run the compute dtype on the
   right engine (tensor when the GPU has a tensor peak for it, SIMT otherwise), fit the SM
   (threads, registers, shared memory), have no more split-K slices than K tiles, and, for the
   skinny families, serve a GEMM with M or N <= ``SKINNY_MAX_DIM``; a family with
   ``min_mn_if_mn_major`` serves a GEMM with an M- or N-major operand (A stored ``[k, m]`` or B
   ``[k, n]``) only from that ``min(M, N)`` on (sm_90's tf32 wgmma kernels: cuBLAS runs its
   sm_80 kernels below 1024). Split-K variants are only considered when the unsplit grid fills
   less than one wave (the cuBLAS/CUTLASS heuristic).
2. Pre-rank, a few integer operations per kernel:
   ``max(math, L2, DRAM) + waves * (L_dram + L_l2) + (split_k - 1) * (P / B_dram + L_l2)``
   where ``math`` is the busiest SM's CTA-stages times the SM time of one CTA-stage at full
   residency, ``L2`` the tile-grid's operand requests over the L2 peak, ``DRAM`` the compulsory
   bytes over the DRAM peak and ``P`` the fp32 partials one extra slice writes and reads back.
   The partials are charged after the overlapped term, as the evaluated epilogue passes them
   serially (:mod:`opmodel.models.gemm.phases`); inside the ``max`` they were hidden under the
   math, and split-K variants crowded the unsplit kernels out of the shortlist.
3. The ``shortlist_size`` best (default ``DEFAULT_SHORTLIST_SIZE``) are evaluated with the
   phase-aware model and the objective (latency or energy) picks one; ties keep pre-rank order.
Everything that depends only on (hardware, kernel, dtypes) is computed once per spec.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from enum import StrEnum

from opmodel.core.errors import UnsupportedOpError
from opmodel.core.values import FastValue, value_type
from opmodel.hardware.kernel_catalogue import KernelTemplate, catalogue_architectures, catalogue_for
from opmodel.hardware.spec import HardwareSpec, SmSpec
from opmodel.models.gemm.device import DeviceRates, device_rates
from opmodel.models.gemm.evaluate import (
    KernelEvaluation,
    KernelSetup,
    evaluate_kernel,
    kernel_setup,
)
from opmodel.models.gemm.kernel import (
    GemmKernel,
    Instruction,
    default_registers_per_thread,
    mma_shape_for,
    static_kernel_problems,
)
from opmodel.models.gemm.problem import GemmProblem

__all__ = [
    "DEFAULT_SHORTLIST_SIZE",
    "SKINNY_MAX_DIM",
    "KernelSelection",
    "Objective",
    "RankedKernel",
    "select_kernel",
]

DEFAULT_SHORTLIST_SIZE = 4
SKINNY_MAX_DIM = 16
_RESULTS_KEPT = 65536  # selections memoised per hardware spec before the memo is cleared


class Objective(StrEnum):
    """What automatic selection minimises."""

    LATENCY = "latency"
    ENERGY = "energy"


@value_type
class RankedKernel(FastValue):
    """One shortlisted kernel with its predicted latency and energy."""

    name: str
    latency_s: float
    energy_j: float


@value_type
class KernelSelection(FastValue):
    """How the kernel was chosen: counts at each step, the winner and the runners-up."""

    objective: Objective
    architecture: str
    legal_kernels: int  # catalogue kernels that run the dtype and fit the SM
    pre_ranked: int  # of which apply to this problem's sizes
    shortlist_size: int
    chosen: RankedKernel
    runners_up: tuple[RankedKernel, ...]


@dataclass(frozen=True, slots=True)
class _Candidate:
    """A legal kernel for one dtype on one GPU, with its pre-rank constants."""

    kernel: GemmKernel
    setup: KernelSetup
    ctas_per_wave: int
    cta_stage_cycles: float  # SM time of one CTA-stage at full residency
    skinny_only: bool
    min_mn_if_mn_major: int  # the family's smallest min(M, N) with an M- or N-major operand


def _specialise(t: KernelTemplate, sm: SmSpec, problem: GemmProblem) -> GemmKernel:
    simt = t.instruction is Instruction.SIMT
    mma = (1, 1, 1) if simt else mma_shape_for(sm, problem.compute_dtype)
    return GemmKernel(
        name=t.name,
        instruction=t.instruction,
        cta_tile_m=t.cta[0],
        cta_tile_n=t.cta[1],
        cta_tile_k=t.cta[2],
        warp_tile_m=t.warp[0],
        warp_tile_n=t.warp[1],
        warp_tile_k=t.warp[2],
        mma_m=mma[0],
        mma_n=mma[1],
        mma_k=mma[2],
        pipeline_stages=t.stages,
        warps_per_cta=t.warps_per_cta,
        registers_per_thread=t.registers_per_thread
        or default_registers_per_thread(t.warp[0], t.warp[1], sm),
        split_k=t.split_k,
        raster_swizzle=8,
        resident_ctas_per_sm=None,
        producer_warps=t.producer_warps,
        cluster_m=t.cluster[0],
        cluster_n=t.cluster[1],
    )


def _templates(hardware: HardwareSpec) -> tuple[KernelTemplate, ...]:
    arch = hardware.architecture or ""
    templates = catalogue_for(arch)
    if templates is None:
        known = ", ".join(catalogue_architectures())
        msg = (
            f"hardware '{hardware.name}': no GEMM kernel catalogue for architecture "
            f"'{arch or None}' (catalogues: {known}); give the kernel attrs "
            "(cta_tile_m, cta_tile_n, cta_tile_k, ...) explicitly"
        )
        raise UnsupportedOpError(msg)
    return templates


def _build_candidates(hardware: HardwareSpec, problem: GemmProblem) -> tuple[_Candidate, ...]:
    sm = hardware.compute.sm
    assert sm is not None
    dtype = problem.compute_dtype
    on_tensor = hardware.compute.tensor_peak(dtype) is not None
    out = []
    for template in _templates(hardware):
        simt = template.instruction is Instruction.SIMT
        if not template.runs(dtype) or simt == on_tensor:
            continue
        kernel = _specialise(template, sm, problem)
        if static_kernel_problems(kernel, problem, sm):
            continue
        setup = kernel_setup(kernel, problem, hardware)
        resident = setup.occupancy.resident_ctas_per_sm
        stage = setup.full_local
        out.append(
            _Candidate(
                kernel=kernel,
                setup=setup,
                ctas_per_wave=sm.sm_count * resident,
                cta_stage_cycles=max(stage.tensor_cycles, stage.smem_cycles) / resident,
                skinny_only=template.skinny_only,
                min_mn_if_mn_major=template.min_mn_if_mn_major,
            )
        )
    return tuple(out)


def _candidates(hardware: HardwareSpec, problem: GemmProblem) -> tuple[_Candidate, ...]:
    key = (
        "gemm.selection.candidates",
        problem.dtypes,
    )
    cached = hardware.derived_cache.get(key)
    if cached is None:
        cached = hardware.derived_cache[key] = _build_candidates(hardware, problem)
    return cached


def _pre_rank(
    candidates: tuple[_Candidate, ...], problem: GemmProblem, rates: DeviceRates
) -> list[tuple[float, int]]:
    """``(score, index)`` of every candidate that applies to the problem's sizes."""
    m, n, k, batch = problem.m, problem.n, problem.k, problem.batch
    skinny = min(m, n) <= SKINNY_MAX_DIM
    # the smallest min(M, N) a family must allow: a K-major A and B suit every family
    mn_needed = min(m, n) if problem.transpose_a or not problem.transpose_b else None
    a_bytes, b_bytes = (
        problem.a_bytes / batch,
        problem.b_bytes / (1 if problem.broadcast_b else batch),
    )
    sms, l2_rate, dram_rate = rates.sm_count, rates.l2_bytes_per_cycle, rates.dram_bytes_per_cycle
    dram = (problem.a_bytes + problem.b_bytes + problem.c_bytes) / dram_rate  # compulsory bytes
    # split-K: per extra slice the fp32 partials written and read back, in the epilogue after
    # the overlapped main loop, and one L2 round trip
    per_slice = 8 * batch * m * n / dram_rate + rates.l2_latency_cycles
    latency = rates.dram_latency_cycles + rates.l2_latency_cycles
    scored = []
    for index, c in enumerate(candidates):
        kern = c.kernel
        if c.skinny_only and not skinny:
            continue
        if mn_needed is not None and mn_needed < c.min_mn_if_mn_major:
            continue
        tm, tn = -(-m // kern.cta_tile_m), -(-n // kern.cta_tile_n)
        tiles, k_tiles, split = batch * tm * tn, -(-k // kern.cta_tile_k), kern.split_k
        if split > k_tiles or (split > 1 and tiles >= c.ctas_per_wave):
            continue
        ctas = tiles * split
        work = -(-ctas // sms) * -(-k_tiles // split) * c.cta_stage_cycles
        l2 = batch * (-(-tn // kern.cluster_n) * a_bytes + -(-tm // kern.cluster_m) * b_bytes)
        waves = -(-ctas // c.ctas_per_wave)
        score = max(work, l2 / l2_rate, dram) + waves * latency + (split - 1) * per_slice
        scored.append((score, index))
    return scored


def select_kernel(
    problem: GemmProblem,
    hardware: HardwareSpec,
    *,
    objective: Objective = Objective.LATENCY,
    shortlist_size: int = DEFAULT_SHORTLIST_SIZE,
) -> tuple[KernelEvaluation, KernelSelection]:
    """The best catalogue kernel for ``problem`` on ``hardware`` and how it was chosen
    (memoised per spec and problem)."""
    memo: dict[object, tuple[KernelEvaluation, KernelSelection]] = (
        hardware.derived_cache.setdefault("gemm.selection.results", {})
    )
    by_energy = objective is Objective.ENERGY
    # sizes, dtypes and settings: the problem's fields without hashing the problem object
    key = (
        problem.sizes,
        problem.dtypes,
        by_energy,
        shortlist_size,
    )
    hit = memo.get(key)
    if hit is not None:
        return hit
    candidates = _candidates(hardware, problem)
    scored = []
    if candidates:
        instruction = candidates[0].kernel.instruction
        rates = device_rates(hardware, problem.compute_dtype, instruction)
        scored = _pre_rank(candidates, problem, rates)
    if not scored:
        msg = (
            f"hardware '{hardware.name}' ({hardware.architecture}): no catalogue GEMM kernel "
            f"runs {problem.compute_dtype} for m={problem.m}, n={problem.n}, k={problem.k}"
        )
        raise UnsupportedOpError(msg)
    shortlist = heapq.nsmallest(shortlist_size, scored)
    evaluated = [
        evaluate_kernel(candidates[i].kernel, problem, hardware, candidates[i].setup)
        for _, i in shortlist
    ]
    order = sorted(
        range(len(evaluated)),
        key=lambda i: (evaluated[i].energy_j if by_energy else evaluated[i].latency_s, i),
    )
    ranked = [
        RankedKernel.make(name=e.kernel.name, latency_s=e.latency_s, energy_j=e.energy_j)
        for e in (evaluated[i] for i in order)
    ]
    selection = KernelSelection.make(
        objective=objective,
        architecture=hardware.architecture or "",
        legal_kernels=len(candidates),
        pre_ranked=len(scored),
        shortlist_size=len(shortlist),
        chosen=ranked[0],
        runners_up=tuple(ranked[1:]),
    )
    if len(memo) >= _RESULTS_KEPT:
        memo.clear()
    result = memo[key] = (evaluated[order[0]], selection)
    return result
