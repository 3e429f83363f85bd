"""Shared GEMM machinery: kernel defaults and legality, occupancy, grid and traffic by hand."""

from __future__ import annotations

import pytest

from opmodel import DType, InvalidKernelError
from opmodel.hardware import HardwareSpec, load_hardware
from opmodel.hardware.kernel_catalogue import catalogue_for
from opmodel.models import get_model
from opmodel.models.gemm import (
    GemmProblem,
    Limiter,
    build_kernel,
    gemm_traffic,
    grid_of,
    occupancy_of,
)
from opmodel.models.gemm.candidates import specialise
from opmodel.models.gemm.kernel import warp_tile_for
from opmodel.models.gemm.tile_bytes import kernel_tiles, smem_tile_bytes
from opmodel.models.gemm.traffic import (
    capacity_miss_fraction,
    effective_swizzle,
    sector_rounded_bytes,
)

from ...conftest import gemm


def _plan(hw: HardwareSpec, m: int, n: int, k: int, **attrs: object):  # type: ignore[no-untyped-def]
    op = gemm(m, n, k, DType.BF16, **attrs)
    sm = hw.compute.sm
    assert sm is not None
    problem = GemmProblem.from_op(op)
    kernel = build_kernel(op, problem, sm, on_tensor=True)
    occupancy = occupancy_of(kernel, problem, sm)
    grid = grid_of(kernel, problem, sm, occupancy)
    return problem, kernel, occupancy, grid


def test_default_kernel_for_bf16(a100: HardwareSpec) -> None:
    _, kernel, _, _ = _plan(a100, 4096, 4096, 4096)
    assert (kernel.cta_tile_m, kernel.cta_tile_n, kernel.cta_tile_k) == (128, 128, 32)
    assert (kernel.warp_tile_m, kernel.warp_tile_n, kernel.warp_tile_k) == (64, 64, 32)
    assert kernel.warps_per_cta == 4  # 2 x 2 x 1 warps of 64x64x32
    assert kernel.pipeline_stages == 3
    assert kernel.registers_per_thread == 168  # 64*64/32 accumulators + 40, multiple of 8
    assert (kernel.mma_m, kernel.mma_n, kernel.mma_k) == (16, 8, 16)


def test_occupancy_on_a100(a100: HardwareSpec) -> None:
    _, _, occupancy, _ = _plan(a100, 4096, 4096, 4096)
    # shared memory: 3 stages x (128x32 + 32x128) x 2 B = 49152 B + 1024 reserved = 50176
    assert occupancy.shared_memory_per_cta_bytes == 49152
    assert occupancy.by_shared_memory == 167936 // 50176 == 3
    # registers: 168 x 32 = 5376 per warp (21 units of 256), x 4 warps = 21504 per CTA
    assert occupancy.registers_per_cta == 21504
    assert occupancy.by_registers == 65536 // 21504 == 3
    assert occupancy.by_warps == 64 // 4
    assert occupancy.resident_ctas_per_sm == 3  # ncu measured 3 on A100 for this kernel
    assert occupancy.limiter is Limiter.REGISTERS  # ties go to the first limit listed


def test_grid_waves_and_tail(a100: HardwareSpec) -> None:
    _, _, _, grid = _plan(a100, 4096, 4096, 4096)
    assert (grid.tiles_m, grid.tiles_n, grid.ctas) == (32, 32, 1024)
    assert grid.ctas_per_wave == 108 * 3
    assert (grid.full_waves, grid.tail_ctas) == (3, 1024 - 3 * 324)
    assert grid.tail_ctas_per_sm == 1 and grid.tail_active_sms == 52
    assert grid.wave_efficiency == pytest.approx(1024 / (4 * 324))
    assert grid.k_iterations == 128


def test_edge_and_k_efficiency(a100: HardwareSpec) -> None:
    _, _, _, grid = _plan(a100, 200, 130, 40)
    assert grid.edge_efficiency == pytest.approx((200 * 130) / (256 * 256))
    assert grid.k_efficiency == pytest.approx(40 / 64)


def test_split_k_multiplies_ctas(a100: HardwareSpec) -> None:
    _, kernel, _, grid = _plan(a100, 128, 128, 4096, split_k=4)
    assert kernel.split_k == 4
    assert grid.ctas == 4 and grid.k_iterations == 32


@pytest.mark.parametrize(
    ("attrs", "message"),
    [
        (
            {"cta_tile_m": 96, "warp_tile_m": 64},
            "cta_tile_m=96 is not a multiple of warp_tile_m=64",
        ),
        ({"warp_tile_n": 36, "cta_tile_n": 72}, "warp_tile_n=36 is not a multiple of the MMA n=8"),
        (
            {"warp_tile_m": 64, "warp_tile_n": 64, "warps_per_cta": 8},
            "warp grid 2x2x1 = 4 warps does not match warps_per_cta=8",
        ),
        ({"warps_per_cta": 3}, "warp grid 2x2x1 = 4 warps does not match warps_per_cta=3"),
        (
            {"pipeline_stages": 12},
            "12 stages need 196608 B of shared memory per CTA, more than max_shared_memory_per_cta_bytes=166912",
        ),
        ({"split_k": 200}, "split_k=200 exceeds the 128 K tiles of cta_tile_k=32"),
        ({"raster_swizzle": 3}, "raster_swizzle must be one of 1, 2, 4, 8 (got 3)"),
        (
            {"registers_per_thread": 300},
            "registers_per_thread=300 exceeds max_registers_per_thread=255",
        ),
    ],
)
def test_illegal_kernels(a100: HardwareSpec, attrs: dict[str, int], message: str) -> None:
    with pytest.raises(InvalidKernelError) as info:
        _plan(a100, 4096, 4096, 4096, **attrs)
    assert str(info.value) == f"op 'gemm' (gemm): kernel: {message}"


def test_resident_override_cannot_exceed_limits(a100: HardwareSpec) -> None:
    _, _, occupancy, _ = _plan(a100, 4096, 4096, 4096, resident_ctas_per_sm=2)
    assert occupancy.resident_ctas_per_sm == 2 and occupancy.limiter is Limiter.OVERRIDE
    with pytest.raises(InvalidKernelError, match="exceeds the 3 CTAs"):
        _plan(a100, 4096, 4096, 4096, resident_ctas_per_sm=4)


def test_traffic_when_everything_fits_l2(a100: HardwareSpec) -> None:
    problem, kernel, _, grid = _plan(a100, 512, 512, 256)
    traffic = gemm_traffic(kernel, problem, grid, 20 * 2**20)
    a_bytes, b_bytes, c_bytes = 512 * 256 * 2, 256 * 512 * 2, 512 * 512 * 2
    assert traffic.a_l2_bytes == grid.tiles_n * a_bytes  # 4 CTA columns read all of A
    assert traffic.b_l2_bytes == grid.tiles_m * b_bytes
    assert traffic.dram_read_bytes == a_bytes + b_bytes  # first touch only
    assert traffic.dram_write_bytes == c_bytes
    # 16 CTAs x 8 K steps: fills (8 KiB A + 8 KiB B) and 2x2-warp fragment reads, plus C staging
    stage_fill, stage_read = 16384, 2 * 8192 + 2 * 8192
    assert traffic.smem_write_bytes == 16 * 8 * stage_fill + 16 * 128 * 128 * 2
    assert traffic.smem_read_bytes == 16 * 8 * stage_read + 16 * 128 * 128 * 2


def test_cached_tiles_give_the_same_traffic(a100: HardwareSpec) -> None:
    """gemm_traffic with the kernel setup's tile bytes equals the one that derives them."""
    for m, n, k in ((16384, 8192, 8192), (1000, 300, 70)):
        problem, kernel, _, grid = _plan(a100, m, n, k)
        tiles = kernel_tiles(kernel, problem)
        assert tiles[:3] == (128 * 32 * 2, 32 * 128 * 2, 128 * 128 * 2)
        assert tiles[5:] == (2, 2)  # four 64x64 mma.sync warps, each reading its fragments
        own = gemm_traffic(kernel, problem, grid, 20 * 2**20)
        assert gemm_traffic(kernel, problem, grid, 20 * 2**20, tiles=tiles) == own


def test_stage_miss_share_is_the_union_of_the_operands_misses(a100: HardwareSpec) -> None:
    problem, kernel, _, grid = _plan(a100, 512, 512, 256)
    traffic = gemm_traffic(kernel, problem, grid, 20 * 2**20)
    assert traffic.a_dram_bytes + traffic.b_dram_bytes == traffic.dram_read_bytes
    # A read from DRAM once over 4 CTA columns (f_A = 1/4), B likewise over 4 rows (1/4):
    # a stage hits only when both tiles do, 1 - (3/4)(3/4) = 7/16
    assert grid.tiles_n == grid.tiles_m == 4
    assert traffic.stage_miss_fraction == pytest.approx(7 / 16)
    # the byte-weighted share is lower (1/4): it let A's re-reads hide B's misses
    assert traffic.dram_miss_fraction == pytest.approx(1 / 4)


def test_reuse_model_pieces() -> None:
    # rows of a sector or more start their own sectors: 2 rows of 40 B are 2 x 64 B
    assert sector_rounded_bytes(rows=2, contiguous=20, dtype=DType.FP16) == 128
    # narrower rows lie back to back: 2 rows of 6 B are 12 contiguous bytes, one sector;
    # a [4096, 1] fp16 vector is 8 KiB, not 4096 sectors
    assert sector_rounded_bytes(rows=2, contiguous=3, dtype=DType.FP16) == 32
    assert sector_rounded_bytes(rows=4096, contiguous=1, dtype=DType.FP16) == 8192
    assert capacity_miss_fraction(10, 20) == 0.0
    assert capacity_miss_fraction(30, 20) == 0.5
    assert capacity_miss_fraction(100, 20) == 1.0
    assert [effective_swizzle(8, n) for n in (1, 2, 3, 5, 6)] == [1, 2, 4, 4, 8]


def test_larger_l2_never_more_dram_bytes(a100: HardwareSpec) -> None:
    for m, n, k in ((16384, 12288, 4096), (1024, 28672, 4096), (4096, 4096, 16384)):
        problem, kernel, _, grid = _plan(a100, m, n, k)
        small = gemm_traffic(kernel, problem, grid, 20 * 2**20).dram_read_bytes
        large = gemm_traffic(kernel, problem, grid, 80 * 2**20).dram_read_bytes
        assert large <= small


def test_mfma_kernel_from_attrs_on_a_cdna3_compute_unit() -> None:
    """MI300X: wave64, 512-register granules, 64 KB LDS, 8 waves per SIMD.

    A 256x256x32 tile of 128x128 wave tiles: 4 waves of 64 lanes; 128*128/64 = 256 fp32
    accumulators + 40 = 296 registers; a wave takes ceil(296 * 64 / 512) = 37 granules of 512 =
    18944 registers, a workgroup 75776 of the CU's 131072 -> 1 workgroup. LDS: 2 stages x
    (256x32 + 32x256) x 2 B = 65536 B, all of it -> 1. Waves: 32 / 4 = 8.
    """

    mi300x = load_hardware("mi300x")
    _, kernel, occupancy, _ = _plan(
        mi300x,
        8192,
        8192,
        8192,
        cta_tile_m=256,
        cta_tile_n=256,
        cta_tile_k=32,
        warp_tile_m=128,
        warp_tile_n=128,
        pipeline_stages=2,
        warps_per_cta=4,
    )
    assert kernel.instruction.value == "mfma"
    assert (kernel.mma_m, kernel.mma_n, kernel.mma_k) == (16, 16, 16)
    assert kernel.registers_per_thread == 296
    assert occupancy.registers_per_cta == 75776
    assert occupancy.by_registers == 1
    assert occupancy.shared_memory_per_cta_bytes == 65536
    assert occupancy.by_shared_memory == 1
    assert occupancy.by_warps == 8
    assert occupancy.resident_ctas_per_sm == 1


def test_two_sm_tcgen05_pairs_split_the_shared_operand() -> None:
    """A 2x1 tcgen05 cluster holds half of B per CTA in shared memory (2-SM UMMA); a wgmma
    cluster multicasts B from L2 but each CTA keeps all of it."""

    problem = GemmProblem.from_op(gemm(8192, 8192, 8192, DType.BF16))
    for arch, hw_name, instruction in (("sm100", "b200", "tcgen05"), ("sm90", "h100_sxm", "wgmma")):
        sm = load_hardware(hw_name).compute.sm
        assert sm is not None
        templates = catalogue_for(arch)
        assert templates is not None
        paired = next(
            t
            for t in templates
            if t.instruction.value == instruction
            and t.cta == (128, 256, 64)
            and t.cluster == (2, 1)
            and t.split_k == 1
        )
        kernel = specialise(paired, sm, problem)
        a, b = smem_tile_bytes(kernel, problem)
        full_b = 64 * 256 * 2
        assert (a, b) == (128 * 64 * 2, full_b // 2 if instruction == "tcgen05" else full_b)
        # the per-setup tile bytes: whole tiles, held tiles, and who reads operand fragments
        # (each wgmma warpgroup along M and every warp column along N; the tcgen05 CTA once)
        tiles = kernel_tiles(kernel, problem)
        assert tiles[:5] == (128 * 64 * 2, full_b, 128 * 256 * 2, a, b)
        groups = (1, 1) if instruction == "tcgen05" else kernel.operand_read_groups
        assert (tiles.read_groups_m, tiles.read_groups_n) == groups


def test_tf32_clusters_on_sm100_but_not_on_sm90() -> None:
    """CUTLASS builds 2-CTA tf32 tcgen05 kernels (tcgen05 reads tf32 operands of either major),
    and a large tf32 GEMM on B200 runs one; tf32 wgmma takes K-major operands only, and the
    in-SMEM transpose is not modelled, so the sm90 tf32 family has no clusters
    (configs/kernels/sm90.yaml)."""
    for arch, clustered in (("sm100", True), ("sm90", False)):
        templates = catalogue_for(arch)
        assert templates is not None
        tf32 = [t for t in templates if t.runs(DType.TF32) and t.instruction.value != "mma_sync"]
        assert tf32
        assert any(t.cluster != (1, 1) for t in tf32) is clustered
    profile = get_model("effective_roofline").predict(
        gemm(4096, 4096, 4096, DType.TF32), load_hardware("b200")
    )
    kernel = profile.diagnostics.kernel
    assert kernel.instruction.value == "tcgen05" and (kernel.cluster_m, kernel.cluster_n) != (1, 1)


@pytest.mark.parametrize(
    ("cta", "warps", "expected"),
    [
        ((64, 64), 4, (32, 32)),  # CUTLASS sm80: 64x64 CTA of 2x2 warps
        ((64, 256), 4, (64, 64)),  # 1x4 warps
        ((128, 64), 4, (64, 32)),  # 2x2, not 4x1 (both give 2:1 warp tiles)
        ((128, 256), 8, (64, 64)),  # 2x4
        ((64, 64), 3, None),  # 3 warps cannot split a 64x64 tile in MMA multiples
    ],
)
def test_warp_tile_from_the_warp_count(
    cta: tuple[int, int], warps: int, expected: tuple[int, int] | None
) -> None:
    assert warp_tile_for(*cta, warps, (16, 8, 16)) == expected


def test_warp_tile_for_rejects_non_positive_sizes() -> None:
    with pytest.raises(ValueError, match="must be >= 1"):
        warp_tile_for(0, 64, 4, (16, 8, 16))


def test_warps_per_cta_alone_sets_the_warp_tiles(a100: HardwareSpec) -> None:
    """An op that gives the CTA tile and the warp count but no warp tile gets CUTLASS's warp
    arrangement (four 32x32 warps for a 64x64 tile), not one 64x64 warp; explicit warp tiles
    still win."""
    op = gemm(1024, 128, 1024, DType.BF16, cta_tile_m=64, cta_tile_n=64, warps_per_cta=4)
    sm = a100.compute.sm
    assert sm is not None
    kernel = build_kernel(op, GemmProblem.from_op(op), sm, on_tensor=True)
    assert (kernel.warp_tile_m, kernel.warp_tile_n, kernel.warps_per_cta) == (32, 32, 4)
    one = gemm(1024, 128, 1024, DType.BF16, cta_tile_m=64, cta_tile_n=64)
    kernel = build_kernel(one, GemmProblem.from_op(one), sm, on_tensor=True)
    assert (kernel.warp_tile_m, kernel.warp_tile_n, kernel.warps_per_cta) == (64, 64, 1)
