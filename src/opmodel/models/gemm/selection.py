"""Automatic GEMM kernel selection: legality filter, cheap pre-rank, shortlist, effective model.

1. Legality (:mod:`opmodel.models.gemm.candidates`): the catalogue kernels of the GPU's
   architecture that run the compute dtype on the right engine (tensor when the GPU has a
   tensor peak for it, SIMT otherwise), fit the SM (threads, registers, shared memory), have
   no more split-K slices than K tiles, and, for the skinny families, serve a GEMM with M or
   N <= ``SKINNY_MAX_DIM``; a family with ``min_mn_if_mn_major`` serves a GEMM with an M- or
   N-major operand (A stored ``[k, m]`` or B ``[k, n]``) only from that ``min(M, N)`` on
   (sm_90's tf32 wgmma kernels: cuBLAS runs its sm_80 kernels below 1024). Split-K variants
   are only considered when the unsplit grid fills less than one wave (the cuBLAS/CUTLASS
   heuristic).
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
from enum import StrEnum

from opmodel.core.errors import UnsupportedOpError
from opmodel.core.values import FastValue, value_type
from opmodel.hardware.spec import HardwareSpec
from opmodel.models.gemm.candidates import Candidate, candidates_for
from opmodel.models.gemm.device import DeviceRates, device_rates
from opmodel.models.gemm.evaluate import (
    KernelEvaluation,
    evaluate_kernel,
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


def _pre_rank(
    candidates: tuple[Candidate, ...], problem: GemmProblem, rates: DeviceRates
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
        if c.skinny_only and not skinny:
            continue
        if mn_needed is not None and mn_needed < c.min_mn_if_mn_major:
            continue
        cta_m, cta_n, cta_k, split, cluster_m, cluster_n = c.shape
        tm, tn = -(-m // cta_m), -(-n // cta_n)
        tiles, k_tiles, per_wave = batch * tm * tn, -(-k // cta_k), c.ctas_per_wave
        if split > k_tiles or (split > 1 and tiles >= per_wave):
            continue
        ctas = tiles * split
        work = -(-ctas // sms) * -(-k_tiles // split) * c.cta_stage_cycles
        l2 = batch * (-(-tn // cluster_n) * a_bytes + -(-tm // cluster_m) * b_bytes)
        waves = -(-ctas // per_wave)
        score = max(work, l2 / l2_rate, dram) + waves * latency + (split - 1) * per_slice
        scored.append((score, index))
    return scored


def _scored(
    candidates: tuple[Candidate, ...], problem: GemmProblem, hardware: HardwareSpec
) -> list[tuple[float, int]]:
    """The candidates' pre-rank scores with their indices (:func:`_pre_rank`); no candidate
    that runs the problem is an :class:`UnsupportedOpError`."""
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
    return scored


def _selection(
    objective: Objective,
    hardware: HardwareSpec,
    ranked: list[KernelEvaluation],
    counts: tuple[int, int],
) -> KernelSelection:
    """How the kernel was chosen: the shortlist's evaluations in rank order (the chosen one
    first), and the legal and pre-ranked kernel counts."""
    kernels = [
        RankedKernel.make(name=e.kernel.name, latency_s=e.latency_s, energy_j=e.energy_j)
        for e in ranked
    ]
    return KernelSelection.make(
        objective=objective,
        architecture=hardware.architecture or "",
        legal_kernels=counts[0],
        pre_ranked=counts[1],
        shortlist_size=len(ranked),
        chosen=kernels[0],
        runners_up=tuple(kernels[1:]),
    )


def select_kernel(
    problem: GemmProblem,
    hardware: HardwareSpec,
    *,
    objective: Objective = Objective.LATENCY,
    shortlist_size: int = DEFAULT_SHORTLIST_SIZE,
) -> tuple[KernelEvaluation, KernelSelection]:
    """The best catalogue kernel for ``problem`` on ``hardware`` and how it was chosen
    (memoised per spec and problem; the models put the spec under the overhead calibration in
    force first, :func:`~opmodel.models.gemm.overhead.in_force`)."""
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
    candidates = candidates_for(hardware, problem)
    scored = _scored(candidates, problem, hardware)
    shortlist = heapq.nsmallest(shortlist_size, scored)
    evaluated = [
        evaluate_kernel(candidates[i].kernel, problem, hardware, candidates[i].setup)
        for _, i in shortlist
    ]
    order = sorted(
        range(len(evaluated)),
        key=lambda i: (evaluated[i].energy_j if by_energy else evaluated[i].latency_s, i),
    )
    selection = _selection(
        objective, hardware, [evaluated[i] for i in order], (len(candidates), len(scored))
    )
    if len(memo) >= _RESULTS_KEPT:
        memo.clear()
    result = memo[key] = (evaluated[order[0]], selection)
    return result
