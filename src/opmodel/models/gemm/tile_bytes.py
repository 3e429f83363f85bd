"""Per-CTA tile bytes of a GEMM kernel in a problem's dtypes: the A, B and C tiles, what a CTA
holds in shared memory per stage (a tcgen05 CTA pair splits the operand it shares) and the
shared-memory ring of its pipeline stages."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from opmodel.hardware.spec import Instruction

if TYPE_CHECKING:  # kernel.py checks a kernel's shared memory with these functions
    from opmodel.models.gemm.kernel import GemmKernel
    from opmodel.models.gemm.problem import GemmProblem

__all__ = [
    "KernelTiles",
    "held_tile_bytes",
    "kernel_tiles",
    "shared_memory_per_cta_bytes",
    "smem_tile_bytes",
    "tile_bytes",
]


def tile_bytes(kernel: GemmKernel, problem: GemmProblem) -> tuple[int, int, int]:
    """Bytes of one CTA's A tile ``[cta_m, cta_k]``, B tile ``[cta_k, cta_n]`` and C tile
    ``[cta_m, cta_n]`` in the problem's dtypes (a block-scaled operand's tile with its
    scales)."""
    return (
        int(kernel.cta_tile_m * kernel.cta_tile_k * problem.a_bits // 8),
        int(kernel.cta_tile_k * kernel.cta_tile_n * problem.b_bits // 8),
        int(kernel.cta_tile_m * kernel.cta_tile_n * problem.c_bits // 8),
    )


def smem_tile_bytes(kernel: GemmKernel, problem: GemmProblem) -> tuple[int, int]:
    """Bytes of the A and B tiles one CTA holds in shared memory per stage: the full tiles,
    except that a tcgen05 CTA pair (2-SM UMMA, PTX ``cta_group::2``) splits the operand it
    shares: B between a pair along M (``cluster_m = 2``), A between a pair along N."""
    return held_tile_bytes(kernel, tile_bytes(kernel, problem))


def held_tile_bytes(kernel: GemmKernel, tiles: tuple[int, int, int]) -> tuple[int, int]:
    """:func:`smem_tile_bytes` from the CTA's ``(A, B, C)`` tile bytes."""
    a, b, _ = tiles
    if kernel.instruction is Instruction.TCGEN05:
        return a // kernel.cluster_n, b // kernel.cluster_m
    return a, b


class KernelTiles(NamedTuple):
    """A kernel's per-CTA tile bytes in a problem's dtypes: what the traffic and epilogue
    equations need of (kernel, dtypes), computed once per kernel setup."""

    a_bytes: int  # A tile [cta_m, cta_k]
    b_bytes: int  # B tile [cta_k, cta_n]
    c_bytes: int  # C tile [cta_m, cta_n]
    held_a_bytes: int  # of A, held in shared memory per stage (smem_tile_bytes)
    held_b_bytes: int
    read_groups_m: int  # GemmKernel.operand_read_groups
    read_groups_n: int


def kernel_tiles(kernel: GemmKernel, problem: GemmProblem) -> KernelTiles:
    """:func:`tile_bytes`, :func:`held_tile_bytes` and the operand read groups of ``kernel`` in
    ``problem``'s dtypes."""
    tiles = tile_bytes(kernel, problem)
    held_a, held_b = held_tile_bytes(kernel, tiles)
    groups_m, groups_n = kernel.operand_read_groups
    return KernelTiles(*tiles, held_a, held_b, groups_m, groups_n)


def shared_memory_per_cta_bytes(kernel: GemmKernel, problem: GemmProblem) -> int:
    """``stages * (A tile + B tile)`` in shared memory (:func:`smem_tile_bytes`): the ring."""
    a, b = smem_tile_bytes(kernel, problem)
    return kernel.pipeline_stages * (a + b)
