"""Occupancy and grid of a GEMM kernel: resident CTAs per SM, waves, tails and tile efficiency.

Resident CTAs per SM are the minimum over the SM's limits (CUDA occupancy rules): resident
CTAs, resident warps, registers (allocated per warp in units of ``register_allocation_unit``)
and shared memory (the operand ring plus the per-CTA system reserve). The raster of CTAs and
the wave structure follow the launch order of CUTLASS's identity threadblock swizzle.

A grouped GEMM's grid is every group's own tiles: ``sum_g ceil(m_g / tile_m) x tiles_n``
CTAs, each running the full K loop (a group's last row tile is padded like an edge tile), so a
skewed routing costs more tiles than the same rows split evenly. Grouped along K (weight
gradients), every group with rows has the same output tiles and its own K loop; the model runs
CTAs of the longest loop, as many as the total work needs (:func:`_k_grouped`), and the K
efficiency is the rows over the issued K.
"""

from __future__ import annotations

from bisect import bisect_right
from enum import StrEnum
from functools import lru_cache

from opmodel.core.errors import InvalidKernelError
from opmodel.core.values import FastValue, value_type
from opmodel.hardware.spec import SmSpec
from opmodel.models.gemm.kernel import GemmKernel
from opmodel.models.gemm.problem import GemmProblem
from opmodel.models.gemm.tile_bytes import shared_memory_per_cta_bytes

__all__ = ["Grid", "Limiter", "Occupancy", "grid_of", "occupancy_of"]


class Limiter(StrEnum):
    """What caps resident CTAs per SM."""

    CTAS = "ctas"
    WARPS = "warps"
    REGISTERS = "registers"
    SHARED_MEMORY = "shared_memory"
    OVERRIDE = "override"


@value_type
class Occupancy(FastValue):
    """Resident CTAs per SM, the limiter, and the per-CTA resources behind it."""

    resident_ctas_per_sm: int
    limiter: Limiter
    by_ctas: int
    by_warps: int
    by_registers: int
    by_shared_memory: int
    registers_per_cta: int
    shared_memory_per_cta_bytes: int


def occupancy_of(kernel: GemmKernel, problem: GemmProblem, sm: SmSpec) -> Occupancy:
    """Resident CTAs per SM from each configured limit; the smallest wins (ties: first listed)."""
    regs_per_warp = -(-kernel.registers_per_thread * sm.warp_size // sm.register_allocation_unit)
    regs_per_cta = regs_per_warp * sm.register_allocation_unit * kernel.warps_per_cta
    smem = shared_memory_per_cta_bytes(kernel, problem)
    limits = {
        Limiter.CTAS: sm.max_ctas_per_sm,
        Limiter.WARPS: sm.max_warps_per_sm // kernel.warps_per_cta,
        Limiter.REGISTERS: sm.registers_per_sm // regs_per_cta,
        Limiter.SHARED_MEMORY: sm.shared_memory_per_sm_bytes
        // (smem + sm.shared_memory_reserved_per_cta_bytes),
    }
    limiter = min(limits, key=lambda name: limits[name])
    resident = limits[limiter]
    if resident < 1:
        msg = f"kernel: one CTA does not fit on an SM ({limiter.value} limit)"
        raise InvalidKernelError(msg)
    override = kernel.resident_ctas_per_sm
    if override is not None:
        if override > resident:
            msg = (
                f"kernel: resident_ctas_per_sm={override} exceeds the {resident} CTAs the SM "
                f"limits allow ({limiter.value})"
            )
            raise InvalidKernelError(msg)
        resident, limiter = override, Limiter.OVERRIDE
    return Occupancy.make(
        resident_ctas_per_sm=resident,
        limiter=limiter,
        by_ctas=limits[Limiter.CTAS],
        by_warps=limits[Limiter.WARPS],
        by_registers=limits[Limiter.REGISTERS],
        by_shared_memory=limits[Limiter.SHARED_MEMORY],
        registers_per_cta=regs_per_cta,
        shared_memory_per_cta_bytes=smem,
    )


@value_type
class Grid(FastValue):
    """CTA grid, waves and the efficiencies lost to edges, K padding and the tail wave."""

    tiles_m: int
    tiles_n: int
    k_iterations: int  # K tiles per CTA (per split-K slice)
    ctas: int
    ctas_per_wave: int
    full_waves: int
    tail_ctas: int
    tail_ctas_per_sm: int  # on the busiest SM of the tail wave
    tail_active_sms: int
    edge_efficiency: float  # useful m*n over padded tile area
    k_efficiency: float  # useful k over issued k (tile padding, split-K rounding)
    wave_efficiency: float  # CTAs over wave slots

    @property
    def waves(self) -> float:
        """CTAs per wave slot (fractional)."""
        return self.ctas / self.ctas_per_wave


@lru_cache(maxsize=4096)
def group_row_tiles(group_m: tuple[int, ...], tile_m: int) -> int:
    """Row tiles of a grouped GEMM, ``sum_g ceil(m_g / tile_m)`` over the ascending
    ``group_m``; memoised (a kernel selection asks for few tile heights). Counted by bands when
    they are fewer than the groups: ``ceil(m / t)`` is the number of ``j >= 0`` with
    ``j t < m``, so the sum is ``sum_j #{g: m_g > j t}``, one bisection per band."""
    bands, groups = -(-group_m[-1] // tile_m), len(group_m)
    if bands >= groups:
        return sum(-(-rows // tile_m) for rows in group_m)
    return sum(groups - bisect_right(group_m, j * tile_m) for j in range(bands))


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def _k_grouped(kernel: GemmKernel, problem: GemmProblem, tiles: int) -> tuple[int, int, int]:
    """(K iterations per CTA, CTAs, issued K) of a K-grouped GEMM over ``tiles`` output tiles
    per group. Group ``g``'s CTAs run ``L_g = ceil(k_g / cta_k)`` iterations (split over
    ``split_k``), unequal across groups. The model runs CTAs of the longest loop,
    ``L = ceil(L_max / split_k)``, as many as the work needs, ``ceil(tiles x sum_g L_g / L)``:
    one wave of them lasts the longest group's loop, as the real grid's first wave does, and
    many waves hold the total work, as the real grid's do; even groups give the batched GEMM."""
    longest = _ceil(_ceil(problem.group_k[-1], kernel.cta_tile_k), kernel.split_k)
    total = tiles * group_row_tiles(problem.group_k, kernel.cta_tile_k)
    ctas = _ceil(total, longest)
    return longest, ctas, ctas * longest * kernel.cta_tile_k


def grid_of(kernel: GemmKernel, problem: GemmProblem, sm: SmSpec, occupancy: Occupancy) -> Grid:
    """The launch grid: ``batch * tiles_m * tiles_n * split_k`` CTAs in waves of
    ``sm_count * resident`` (closed form, no loop over CTAs); a grouped GEMM's ``tiles_m`` is
    its groups' mean, rounded up, and its CTAs count each group's own row tiles."""
    tiles_n = -(-problem.n // kernel.cta_tile_n)
    per_wave = sm.sm_count * occupancy.resident_ctas_per_sm
    if problem.group_m:
        row_tiles = group_row_tiles(problem.group_m, kernel.cta_tile_m)
        tiles_m = -(-row_tiles // problem.batch)
    else:
        tiles_m = -(-problem.m // kernel.cta_tile_m)  # ceil, in integers
        row_tiles = problem.batch * tiles_m
    if problem.group_k:
        k_iterations, ctas, issued_k = _k_grouped(kernel, problem, tiles_m * tiles_n)
        useful_k = tiles_m * tiles_n * problem.rows
    else:
        k_iterations = _ceil(_ceil(problem.k, kernel.cta_tile_k), kernel.split_k)
        issued_k, useful_k = k_iterations * kernel.split_k * kernel.cta_tile_k, problem.k
        ctas = row_tiles * tiles_n * kernel.split_k
    full, tail = divmod(ctas, per_wave)
    return Grid.make(
        tiles_m=tiles_m,
        tiles_n=tiles_n,
        k_iterations=k_iterations,
        ctas=ctas,
        ctas_per_wave=per_wave,
        full_waves=full,
        tail_ctas=tail,
        tail_ctas_per_sm=-(-tail // sm.sm_count),
        tail_active_sms=min(tail, sm.sm_count),
        edge_efficiency=(problem.total_rows * problem.n)
        / (row_tiles * kernel.cta_tile_m * tiles_n * kernel.cta_tile_n),
        k_efficiency=useful_k / issued_k,
        wave_efficiency=ctas / ((full + (1 if tail else 0)) * per_wave),
    )
