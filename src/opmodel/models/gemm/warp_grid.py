"""The warp grid of a CTA tile: how many warps along M and N, and so each warp's tile."""

from __future__ import annotations

import math

__all__ = ["warp_tile_for"]


def warp_tile_for(
    cta_m: int, cta_n: int, warps: int, mma: tuple[int, int, int]
) -> tuple[int, int] | None:
    """The (M, N) warp tile when ``warps`` warps split a ``cta_m x cta_n`` CTA tile, as CUTLASS
    2.x's sm80 configurations arrange them: the squarest warp tile, then the most even warp
    grid, then more warps along N (``cutlass_library`` generator: 64x64 of 2x2 warps -> 32x32,
    64x256 of 1x4 -> 64x64, 128x64 of 2x2 -> 64x32, 128x256 of 2x4 -> 64x64). Each warp tile
    must be a multiple of the MMA shape; None when no grid fits."""
    if min(cta_m, cta_n, warps, mma[0], mma[1]) < 1:
        msg = (
            "warp_tile_for: cta_m, cta_n, warps and the MMA shape must be >= 1 "
            f"(got {cta_m}, {cta_n}, {warps}, {mma})"
        )
        raise ValueError(msg)
    best: tuple[tuple[float, float, int], tuple[int, int]] | None = None
    most_m, most_n = cta_m // mma[0], cta_n // mma[1]  # a warp holds an MMA tile or more
    for along_m in range(max(1, -(-warps // max(most_n, 1))), min(warps, most_m) + 1):
        along_n, rest = divmod(warps, along_m)
        if rest or cta_m % along_m or cta_n % along_n:
            continue
        warp_m, warp_n = cta_m // along_m, cta_n // along_n
        if warp_m % mma[0] or warp_n % mma[1]:
            continue
        key = (abs(math.log2(warp_m / warp_n)), abs(math.log2(along_m / along_n)), along_m)
        if best is None or key < best[0]:
            best = (key, (warp_m, warp_n))
    return best[1] if best else None
