"""``GemmKernel``: the CTA/warp tiling, pipeline and launch parameters of a GEMM kernel.

Built once per (op, hardware) from the op's kernel attrs; what is omitted takes the documented
defaults below, which follow CUTLASS 2.x's default sm80 configurations (``cutlass_library``
generator: 128x128 threadblocks of four 64x64 warps, three cp.async stages for 16-bit tensor
ops; 128x128x8 SIMT threadblocks of eight 32x64 warps, two stages, for fp32 and fp64).
Legality is checked against the hardware's SM limits with one-line errors.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from opmodel.core.dtypes import DType
from opmodel.core.errors import InvalidKernelError
from opmodel.core.op import LocalOp
from opmodel.hardware.spec import ASYNC_INSTRUCTIONS, Instruction, SmSpec
from opmodel.models.gemm.problem import GemmProblem
from opmodel.models.gemm.tile_bytes import shared_memory_per_cta_bytes
from opmodel.models.gemm.warp_grid import warp_tile_for

__all__ = [
    "DEFAULT_TILES",
    "GemmKernel",
    "Instruction",
    "build_kernel",
    "default_registers_per_thread",
    "kernel_problems",
    "mma_shape_for",
    "split_k_problems",
    "static_kernel_problems",
    "warp_tile_for",
]

# (cta_m, cta_n, cta_k, warp_m, warp_n, warp_k, stages) by arithmetic class; see module docstring.
DEFAULT_TILES: dict[str, tuple[int, int, int, int, int, int, int]] = {
    "tensor_16bit": (128, 128, 32, 64, 64, 32, 3),
    "tensor_8bit": (128, 128, 64, 64, 64, 64, 3),
    "tensor_tf32": (128, 128, 16, 64, 64, 16, 3),
    "tensor_fp64": (64, 64, 16, 32, 32, 16, 3),
    "simt": (128, 128, 8, 32, 64, 8, 2),
}
# Registers per thread when not given: the fp32 accumulators of the warp tile plus 40 for
# operand fragments and addressing (estimate; CUTLASS's 128x128x32 bf16 kernel on A100 uses
# 164 = 128 + 36 registers per thread in the Rapid-LLM ncu rows).
REGISTER_OVERHEAD_PER_THREAD = 40
_SWIZZLES = (1, 2, 4, 8)
_WARP_TILE_ATTRS = frozenset({"warp_tile_m", "warp_tile_n"})  # either one keeps the given tiles


WARPGROUP_WARPS = 4  # warps of one sm_90 warpgroup (PTX ISA, wgmma)
WGMMA_M = 64  # rows of one wgmma.mma_async (PTX ISA: m64nNk16); tcgen05.mma takes M 64 or 128
WGMMA_MAX_N = 256  # widest N of one wgmma.mma_async (PTX ISA: N = 8 ... 256)


@dataclass(frozen=True, slots=True, kw_only=True)
class GemmKernel:
    """One GEMM kernel configuration. MMA shape is per warp instruction (1x1x1 for SIMT).

    A warp-specialised kernel (sm_90) has ``producer_warps`` that only issue loads; the
    remaining warps tile the CTA. A wgmma warp's tile is its 16-row share of its warpgroup's
    64-row tile. ``cluster_m x cluster_n`` CTAs share operand tiles by TMA multicast.
    """

    name: str
    instruction: Instruction
    cta_tile_m: int
    cta_tile_n: int
    cta_tile_k: int
    warp_tile_m: int
    warp_tile_n: int
    warp_tile_k: int
    mma_m: int
    mma_n: int
    mma_k: int
    pipeline_stages: int
    warps_per_cta: int
    registers_per_thread: int
    split_k: int
    raster_swizzle: int
    resident_ctas_per_sm: int | None
    producer_warps: int = 0
    cluster_m: int = 1
    cluster_n: int = 1

    @property
    def on_tensor(self) -> bool:
        """True when the math runs on the tensor engine."""
        return self.instruction is not Instruction.SIMT

    @property
    def math_warps(self) -> int:
        """Warps that issue math (all but the producers)."""
        return self.warps_per_cta - self.producer_warps

    @property
    def operand_read_groups(self) -> tuple[int, int]:
        """(groups along M, groups along N) that each read their own operand fragments from
        shared memory: every warp for mma.sync, mfma and SIMT, every ``wgmma`` instruction
        for wgmma, and the whole CTA for tcgen05 (one thread issues the CTA's MMA from shared
        memory). A ``wgmma.mma_async`` computes 64 rows by at most 256 columns (PTX ISA,
        m64nNk16) and reads both operands from shared memory through its descriptors, so a
        warpgroup whose share of the tile is 128 rows (warp tile 32 rows: CUTLASS's 256 x 128
        tile) issues two per k-step and reads its B fragment twice."""
        wg_m, wg_n, _ = self.warp_grid
        if self.instruction is Instruction.WGMMA:
            along_m = max(1, wg_m // WARPGROUP_WARPS) * max(
                1, self.warp_tile_m * WARPGROUP_WARPS // WGMMA_M
            )
            return along_m, wg_n * -(-self.warp_tile_n // WGMMA_MAX_N)
        if self.instruction is Instruction.TCGEN05:
            return 1, 1
        return wg_m, wg_n

    @property
    def warp_grid(self) -> tuple[int, int, int]:
        """Warps along M, N and K (slice-K) of the CTA tile."""
        return (
            self.cta_tile_m // self.warp_tile_m,
            self.cta_tile_n // self.warp_tile_n,
            self.cta_tile_k // self.warp_tile_k,
        )


def _tile_class(dtype: DType, on_tensor: bool) -> str:
    if not on_tensor:
        return "simt"
    if dtype is DType.TF32:
        return "tensor_tf32"
    if dtype is DType.FP64:
        return "tensor_fp64"
    return "tensor_16bit" if dtype.bits == 16 else "tensor_8bit"


def _attr(op: LocalOp, name: str, default: int) -> int:
    value = op.attrs.get(name)
    return value if isinstance(value, int) else default


def build_kernel(op: LocalOp, problem: GemmProblem, sm: SmSpec, *, on_tensor: bool) -> GemmKernel:
    """The kernel of ``op``: its attrs over the defaults, checked against ``sm``."""
    cm, cn, ck, wm, wn, _, stages = DEFAULT_TILES[_tile_class(problem.compute_dtype, on_tensor)]
    cta_m, cta_n, cta_k = (
        _attr(op, f"cta_tile_{d}", v) for d, v in zip("mnk", (cm, cn, ck), strict=True)
    )
    mma = mma_shape_for(sm, problem.compute_dtype) if on_tensor else (1, 1, 1)
    wm, wn = _warp_tile_of_warp_count(op, sm, (cta_m, cta_n), mma, (wm, wn))
    warp_m = _attr(op, "warp_tile_m", min(wm, cta_m))
    warp_n = _attr(op, "warp_tile_n", min(wn, cta_n))
    warp_k = _attr(op, "warp_tile_k", cta_k)
    kernel = GemmKernel(
        name="attrs",
        instruction=sm.warp_mma_instruction if on_tensor else Instruction.SIMT,
        cta_tile_m=cta_m,
        cta_tile_n=cta_n,
        cta_tile_k=cta_k,
        warp_tile_m=warp_m,
        warp_tile_n=warp_n,
        warp_tile_k=warp_k,
        mma_m=mma[0],
        mma_n=mma[1],
        mma_k=mma[2],
        pipeline_stages=_attr(op, "pipeline_stages", stages),
        warps_per_cta=_attr(
            op, "warps_per_cta", _derived_warps((cta_m, cta_n, cta_k), (warp_m, warp_n, warp_k))
        ),
        registers_per_thread=_attr(
            op, "registers_per_thread", default_registers_per_thread(warp_m, warp_n, sm)
        ),
        split_k=_attr(op, "split_k", 1),
        raster_swizzle=_attr(op, "raster_swizzle", 8),
        resident_ctas_per_sm=op.attrs.get("resident_ctas_per_sm"),  # type: ignore[arg-type]
    )
    problems = kernel_problems(kernel, problem, sm)
    if problems:
        raise InvalidKernelError(f"op '{op.name}' ({op.kind}): kernel: {_noted(op, problems[0])}")
    return kernel


def _noted(op: LocalOp, problem: str) -> str:
    """``problem``, saying so when the warp tile it names was derived, not given."""
    dim = problem[len("warp_tile_")] if problem.startswith("warp_tile_") else ""
    if not dim or f"warp_tile_{dim}" in op.attrs:
        return problem
    hint = f"make cta_tile_{dim} a multiple of the MMA {dim} or give warp_tile_{dim}"
    src = f"cta_tile_{dim}" + (" and warps_per_cta" if "warps_per_cta" in op.attrs else "")
    return f"{problem} (warp_tile_{dim} not given, derived from {src}: {hint})"


def _warp_tile_of_warp_count(
    op: LocalOp,
    sm: SmSpec,
    cta: tuple[int, int],
    mma: tuple[int, int, int],
    default: tuple[int, int],
) -> tuple[int, int]:
    """The warp tile ``warps_per_cta`` implies when the op gives no warp tile, else ``default``.
    A warp count past what a CTA holds gets ``default``: the thread check refuses it."""
    warps = op.attrs.get("warps_per_cta")
    if (
        isinstance(warps, int)
        and warps * sm.warp_size <= sm.max_threads_per_cta
        and _WARP_TILE_ATTRS.isdisjoint(op.attrs)
    ):
        return warp_tile_for(*cta, warps, mma) or default
    return default


def kernel_problems(kernel: GemmKernel, problem: GemmProblem, sm: SmSpec) -> list[str]:
    """Why ``kernel`` cannot run ``problem`` on ``sm`` (empty when it can)."""
    return static_kernel_problems(kernel, problem, sm) + split_k_problems(kernel, problem)


def static_kernel_problems(kernel: GemmKernel, problem: GemmProblem, sm: SmSpec) -> list[str]:
    """The problems that depend on the kernel, the problem's dtypes and ``sm`` only (not on
    the problem's sizes): tiling, threads, registers, shared memory."""
    return _tiling_problems(kernel) + _resource_problems(kernel, problem, sm)


def default_registers_per_thread(warp_m: int, warp_n: int, sm: SmSpec) -> int:
    """The warp tile's fp32 accumulators per thread plus REGISTER_OVERHEAD_PER_THREAD, rounded
    up to 8 and capped at the SM's per-thread limit."""
    regs = -(-(warp_m * warp_n // sm.warp_size + REGISTER_OVERHEAD_PER_THREAD) // 8) * 8
    return min(regs, sm.max_registers_per_thread)


def _derived_warps(cta: tuple[int, int, int], warp: tuple[int, int, int]) -> int:
    """Warps that tile the CTA (CUTLASS WarpCount = ThreadblockShape / WarpShape)."""
    return math.prod(max(1, c // w) for c, w in zip(cta, warp, strict=True))


def mma_shape_for(sm: SmSpec, dtype: DType) -> tuple[int, int, int]:
    """The config's MMA shape with k scaled to the dtype: ``k * 16 / bits`` (PTX m16n8k16 for
    16-bit, m16n8k8 for tf32, m16n8k32 for 8-bit types); 6-bit types take the 8-bit shape."""
    m, n, k = sm.mma_shape_mnk
    return m, n, max(1, k * 16 // (8 if dtype.bits == 6 else dtype.bits))


def _tiling_problems(kernel: GemmKernel) -> list[str]:
    problems: list[str] = []
    pairs = (
        ("m", kernel.cta_tile_m, kernel.warp_tile_m, kernel.mma_m),
        ("n", kernel.cta_tile_n, kernel.warp_tile_n, kernel.mma_n),
        ("k", kernel.cta_tile_k, kernel.warp_tile_k, kernel.mma_k),
    )
    for dim, cta, warp, mma in pairs:
        if cta % warp:
            problems.append(f"cta_tile_{dim}={cta} is not a multiple of warp_tile_{dim}={warp}")
        elif warp % mma:
            problems.append(f"warp_tile_{dim}={warp} is not a multiple of the MMA {dim}={mma}")
    wgm, wgn, wgk = kernel.warp_grid
    if not problems and kernel.math_warps != wgm * wgn * wgk:
        producers = f" - {kernel.producer_warps} producer warps" if kernel.producer_warps else ""
        problems.append(
            f"warp grid {wgm}x{wgn}x{wgk} = {wgm * wgn * wgk} warps does not match "
            f"warps_per_cta={kernel.warps_per_cta}{producers}"
        )
    if kernel.instruction in ASYNC_INSTRUCTIONS and kernel.cta_tile_m % WGMMA_M:
        problems.append(
            f"{kernel.instruction} needs cta_tile_m to be a multiple of {WGMMA_M} "
            f"(got {kernel.cta_tile_m})"
        )
    if kernel.pipeline_stages < 2:
        problems.append(f"pipeline_stages must be >= 2 (got {kernel.pipeline_stages})")
    if kernel.raster_swizzle not in _SWIZZLES:
        problems.append(f"raster_swizzle must be one of 1, 2, 4, 8 (got {kernel.raster_swizzle})")
    return problems


def _resource_problems(kernel: GemmKernel, problem: GemmProblem, sm: SmSpec) -> list[str]:
    problems: list[str] = []
    threads = kernel.warps_per_cta * sm.warp_size
    if threads > sm.max_threads_per_cta:
        problems.append(
            f"{threads} threads per CTA exceed max_threads_per_cta={sm.max_threads_per_cta}"
        )
    if kernel.registers_per_thread > sm.max_registers_per_thread:
        problems.append(
            f"registers_per_thread={kernel.registers_per_thread} exceeds "
            f"max_registers_per_thread={sm.max_registers_per_thread}"
        )
    smem = shared_memory_per_cta_bytes(kernel, problem)
    if smem > sm.max_shared_memory_per_cta_bytes:
        problems.append(
            f"{kernel.pipeline_stages} stages need {smem} B of shared memory per CTA, "
            f"more than max_shared_memory_per_cta_bytes={sm.max_shared_memory_per_cta_bytes}"
        )
    return problems


def split_k_problems(kernel: GemmKernel, problem: GemmProblem) -> list[str]:
    """Why ``kernel``'s split-K factor does not suit ``problem.k`` (empty when it does)."""
    k_tiles = -(-problem.k // kernel.cta_tile_k)
    if kernel.split_k > k_tiles:
        return [
            f"split_k={kernel.split_k} exceeds the {k_tiles} K tiles "
            f"of cta_tile_k={kernel.cta_tile_k}"
        ]
    return []
