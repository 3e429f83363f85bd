"""Bytes a tiled GEMM moves at each level: L2 requests, DRAM with reuse, shared memory.

L2 requests are exact for a CTA-tiled kernel with predicated edge loads: every column of CTAs
reads all of A, every row of CTAs all of B, each rounded to 32-byte sectors along its contiguous
dimension; a thread-block cluster multicasts each tile to its ``cluster_n`` (A) or
``cluster_m`` (B) CTAs, so one request serves them all. DRAM bytes follow the launch
raster of CUTLASS's ``GemmIdentityThreadblockSwizzle``
(stripes of ``W`` N-tiles walking down M): A is fetched once per stripe unless it stays in L2
between stripes, and a stripe's B panels once per wave unless they survive the wave's working
set. Whether data survives is a capacity test against L2 with a linear ramp,
``miss(d) = clamp((d - L2) / L2, 0, 1)`` for a reuse distance of ``d`` bytes, which stands in
for the non-LRU replacement of a real L2 (docs/models/extended_roofline.md). Checked against
Nsight Compute DRAM counters on A100 (data/rapid_llm_ncu_gemm). CUTLASS 3's persistent,
warp-specialised kernels (sm_90, sm_100: producer warps) take the tiles in rounds of their
resident CTAs instead, and read each round's panels afresh (:func:`_round_passes`; checked
against this project's H200 counters, data/measured).
"""

from __future__ import annotations

from opmodel.core.dtypes import DTYPE_BITS, DTYPE_SCALE_BLOCK, DType
from opmodel.core.values import FastValue, value_type
from opmodel.models.gemm.kernel import GemmKernel
from opmodel.models.gemm.occupancy import Grid
from opmodel.models.gemm.problem import GemmProblem
from opmodel.models.gemm.tile_bytes import KernelTiles, kernel_tiles
from opmodel.models.shared.l2_survival import dirty_write_back_bytes

__all__ = [
    "SECTOR_BYTES",
    "GemmTraffic",
    "capacity_miss_fraction",
    "effective_swizzle",
    "gemm_traffic",
    "sector_rounded_bytes",
]

SECTOR_BYTES = (
    32  # L2/DRAM access granularity of NVIDIA GPUs since Volta (CUDA Best Practices Guide)
)
SPLIT_K_PARTIAL_BITS = 32  # split-K partial sums travel as fp32


@value_type
class GemmTraffic(FastValue):
    """Bytes per level for the whole kernel (all CTAs, all batches)."""

    a_l2_bytes: int
    b_l2_bytes: int
    c_read_bytes: int
    c_write_bytes: int
    workspace_bytes: int  # split-K partials, written once and read once
    a_dram_passes: float
    b_dram_passes: float
    a_dram_bytes: int  # A's share of dram_read_bytes
    b_dram_bytes: int  # B's share of dram_read_bytes
    dram_read_bytes: int
    dram_write_bytes: int
    smem_write_bytes: int
    smem_read_bytes: int
    # another kernel's dirty lines this one evicts and writes back (GemmProblem.l2_dirty_bytes)
    dirty_write_back_bytes: int = 0

    @property
    def l2_read_bytes(self) -> int:
        """Reads served by L2 (operands, C when beta != 0, split-K partials)."""
        return self.a_l2_bytes + self.b_l2_bytes + self.c_read_bytes + self.workspace_bytes

    @property
    def l2_write_bytes(self) -> int:
        """Writes into L2 (C and split-K partials)."""
        return self.c_write_bytes + self.workspace_bytes

    @property
    def dram_miss_fraction(self) -> float:
        """DRAM reads over L2 reads: the share of loads that travel to DRAM."""
        return min(1.0, self.dram_read_bytes / self.l2_read_bytes)

    @property
    def stage_miss_fraction(self) -> float:
        """Share of K stages that wait on DRAM: a stage loads an A and a B tile and waits for
        the later one, so it waits on DRAM unless both hit L2:
        ``1 - (1 - f_A)(1 - f_B)``, ``f = DRAM bytes / L2 bytes`` per operand (first touches,
        which miss for a whole tile, independent between the operands). Unlike the byte-weighted
        :attr:`dram_miss_fraction`, more re-reads of one operand cannot hide the other's misses."""
        f_a = min(1.0, self.a_dram_bytes / self.a_l2_bytes) if self.a_l2_bytes else 0.0
        f_b = min(1.0, self.b_dram_bytes / self.b_l2_bytes) if self.b_l2_bytes else 0.0
        return 1.0 - (1.0 - f_a) * (1.0 - f_b)


def sector_rounded_bytes(rows: int, contiguous: int, dtype: DType) -> int:
    """A dense row-major operand read in 32-byte sectors: ``rows * ceil(row / 32) * 32`` for
    rows of at least a sector, each row starting its own sectors. Rows narrower than a sector
    lie back to back (a ``[k, 1]`` vector is ``2k`` contiguous bytes in fp16), so they share
    sectors: ``ceil(rows * row / 32) * 32``. A block-scaled type's row holds its elements and
    one 8-bit scale per started block of them (scales counted along the contiguous dimension)."""
    block = DTYPE_SCALE_BLOCK[dtype]
    row_bits = contiguous * DTYPE_BITS[dtype] + (8 * -(-contiguous // block) if block else 0)
    if row_bits < 8 * SECTOR_BYTES:
        return -(-rows * row_bits // (8 * SECTOR_BYTES)) * SECTOR_BYTES
    return rows * -(-row_bits // (8 * SECTOR_BYTES)) * SECTOR_BYTES


def capacity_miss_fraction(reuse_distance_bytes: float, l2_bytes: int) -> float:
    """Share of re-used data that misses L2: ``clamp((d - L2) / L2, 0, 1)``."""
    miss = (reuse_distance_bytes - l2_bytes) / l2_bytes
    return 0.0 if miss <= 0 else miss if miss < 1 else 1.0


def effective_swizzle(requested: int, tiles_n: int) -> int:
    """Stripe width of CUTLASS's identity swizzle: 8 needs >= 6 N tiles, 4 >= 3, 2 >= 2."""
    if requested >= 8 and tiles_n >= 6:
        return 8
    if requested >= 4 and tiles_n >= 3:
        return 4
    return 2 if requested >= 2 and tiles_n >= 2 else 1


def _persistent_swizzle(requested: int, grid: Grid) -> int:
    """Stripe width of CUTLASS 3's persistent tile scheduler (``get_log_swizzle_size``): set by
    the smaller of the tile counts along M and N, 8 from 6 tiles, 4 from 3, 2 from 2."""
    return effective_swizzle(requested, min(grid.tiles_m, grid.tiles_n))


def _round_passes(grid: Grid, width: int) -> tuple[float, float]:
    """(A passes, B passes) of a persistent kernel (CUTLASS 3's warp-specialised GEMMs, as
    cuBLAS runs them on sm_90): its ``G`` resident CTAs take the output tiles in rounds of
    ``G``, in the order of stripes of ``width`` N-tiles walking down M. A round reads each A
    row panel and B column panel it touches once, and nothing survives in L2 from one round to
    the next: cuBLAS's H200 kernels read the same multiple of their compulsory bytes at K =
    4,096, 8,192 and 14,336, where survival would make it fall with K (docs/validation.md,
    "GEMM DRAM traffic"). A round of ``G`` tiles touches about ``G / width + 1`` M-tiles
    (misaligned with the stripe's rows) and the ``width`` columns of the stripes it meets,
    ``G / (tiles_m x width) + 1`` of them; in closed form over ``tiles / G`` rounds."""
    tiles_m, tiles_n, per_round = grid.tiles_m, grid.tiles_n, float(grid.ctas_per_wave)
    rounds = tiles_m * tiles_n / per_round
    if rounds <= 1:
        return 1.0, 1.0
    a_rows = min(tiles_m, per_round / width + 1)
    b_cols = min(tiles_n, width * (per_round / (tiles_m * width) + 1))
    return max(1.0, rounds * a_rows / tiles_m), max(1.0, rounds * b_cols / tiles_n)


def _unique_operand_bytes(problem: GemmProblem) -> tuple[int, int]:
    """(A, B) bytes of one batch entry, sector-rounded along each contiguous dimension."""
    a_rows, a_contig = (problem.k, problem.m) if problem.transpose_a else (problem.m, problem.k)
    b_rows, b_contig = (problem.n, problem.k) if problem.transpose_b else (problem.k, problem.n)
    return (
        sector_rounded_bytes(a_rows, a_contig, problem.a_dtype),
        sector_rounded_bytes(b_rows, b_contig, problem.b_dtype),
    )


def _dram_passes(
    kernel: GemmKernel,
    problem: GemmProblem,
    grid: Grid,
    *,
    a_batch: int,
    l2_bytes: int,
) -> tuple[float, float]:
    """(A passes, B passes) over DRAM for one batch entry, from the raster reuse distances;
    a persistent kernel's by its rounds (:func:`_round_passes`)."""
    if kernel.producer_warps and kernel.split_k == 1:
        return _round_passes(grid, _persistent_swizzle(kernel.raster_swizzle, grid))
    c_bits = problem.c_bits
    width = effective_swizzle(kernel.raster_swizzle, grid.tiles_n)
    stripes = -(-grid.tiles_n // width)
    b_stripe = width * kernel.cta_tile_n * problem.k * problem.b_bits // 8
    c_stripe = problem.m * width * kernel.cta_tile_n * c_bits // 8
    a_passes = 1 + (stripes - 1) * capacity_miss_fraction(a_batch + b_stripe + c_stripe, l2_bytes)
    ctas_per_stripe = grid.tiles_m * width * kernel.split_k
    waves_per_stripe = max(1.0, ctas_per_stripe / grid.ctas_per_wave)
    m_tiles_per_wave = grid.ctas_per_wave / (width * kernel.split_k)
    a_panel = kernel.cta_tile_m * problem.k * problem.a_bits // 8
    c_wave = grid.ctas_per_wave * kernel.cta_tile_m * kernel.cta_tile_n * c_bits // 8
    wave_set = min(a_batch, m_tiles_per_wave * a_panel) + b_stripe + c_wave
    b_passes = 1 + (waves_per_stripe - 1) * capacity_miss_fraction(wave_set, l2_bytes)
    return a_passes, b_passes


def _a_bytes_and_b_reads(
    kernel: GemmKernel, problem: GemmProblem, grid: Grid, a_batch: int
) -> tuple[int, int]:
    """(A's bytes over every batch entry, times B is read from L2): B once per row tile (or
    cluster of them); a grouped GEMM's A is its rows exactly and its B is read once per row
    tile of its own group (``grid.ctas`` counts them)."""
    if problem.group_m:
        a_all = sector_rounded_bytes(problem.rows, problem.k, problem.a_dtype)
        return a_all, -(-grid.ctas // (grid.tiles_n * kernel.split_k * kernel.cluster_m))
    return problem.batch * a_batch, -(-grid.tiles_m // kernel.cluster_m) * problem.batch


def _smem_bytes(grid: Grid, tiles: KernelTiles) -> tuple[int, int]:
    """(written, read) shared-memory bytes: operand fills, warp fragment reads, C staging."""
    a_tile, b_tile, c_tile = tiles.held_a_bytes, tiles.held_b_bytes, tiles.c_bytes
    stages_total = grid.ctas * grid.k_iterations
    written = stages_total * (a_tile + b_tile) + grid.ctas * c_tile
    read = (
        stages_total * (tiles.read_groups_n * a_tile + tiles.read_groups_m * b_tile)
        + grid.ctas * c_tile
    )
    return written, read


def gemm_traffic(
    kernel: GemmKernel,
    problem: GemmProblem,
    grid: Grid,
    l2_bytes: int,
    *,
    tiles: KernelTiles | None = None,
) -> GemmTraffic:
    """All traffic of the kernel (see the module docstring for the reuse model); ``tiles`` are
    :func:`~opmodel.models.gemm.tile_bytes.kernel_tiles` when the caller has them cached."""
    tiles = tiles or kernel_tiles(kernel, problem)
    a_batch, b_batch = _unique_operand_bytes(problem)
    a_passes, b_passes = _dram_passes(kernel, problem, grid, a_batch=a_batch, l2_bytes=l2_bytes)
    batch, c_bytes = problem.batch, problem.c_bytes
    b_copies = 1 if problem.broadcast_b else batch
    if problem.broadcast_b and batch > 1:  # one B for every batch entry
        batch_set = a_batch + b_batch + c_bytes // batch
        b_passes *= 1 + (batch - 1) * capacity_miss_fraction(batch_set, l2_bytes)
    c_read = 0 if problem.beta_zero else c_bytes
    workspace = (kernel.split_k - 1) * (problem.total_rows * problem.n * SPLIT_K_PARTIAL_BITS // 8)
    smem_written, smem_read = _smem_bytes(grid, tiles)
    a_all, b_tile_rows = _a_bytes_and_b_reads(kernel, problem, grid, a_batch)
    a_dram, b_dram = a_all * a_passes, b_copies * b_batch * b_passes
    moved = a_dram + b_dram + c_read + 2 * workspace + c_bytes
    dirty = problem.l2_dirty_bytes  # another kernel's, which this one's traffic evicts
    written_back = round(dirty_write_back_bytes(dirty, moved, l2_bytes)) if dirty else 0
    return GemmTraffic.make(
        a_l2_bytes=-(-grid.tiles_n // kernel.cluster_n) * a_all,
        b_l2_bytes=b_tile_rows * b_batch,
        c_read_bytes=c_read,
        c_write_bytes=c_bytes,
        workspace_bytes=workspace,
        a_dram_passes=a_passes,
        b_dram_passes=b_passes,
        a_dram_bytes=round(a_dram),
        b_dram_bytes=round(b_dram),
        dram_read_bytes=round(a_dram + b_dram) + c_read + workspace,
        dram_write_bytes=c_bytes + workspace,
        smem_write_bytes=smem_written,
        smem_read_bytes=smem_read,
        dirty_write_back_bytes=written_back,
    )
