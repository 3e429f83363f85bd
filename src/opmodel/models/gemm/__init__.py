"""Shared GEMM machinery: problem, kernel parameters, occupancy and grid, traffic per level.

Used by every GEMM model (``extended_roofline``, ``effective_roofline``); no model calls
another's internals.
"""

from opmodel.models.gemm.kernel import DEFAULT_TILES, GemmKernel, build_kernel
from opmodel.models.gemm.occupancy import Grid, Limiter, Occupancy, grid_of, occupancy_of
from opmodel.models.gemm.problem import GemmProblem
from opmodel.models.gemm.traffic import GemmTraffic, gemm_traffic

__all__ = [
    "DEFAULT_TILES",
    "GemmKernel",
    "GemmProblem",
    "GemmTraffic",
    "Grid",
    "Limiter",
    "Occupancy",
    "build_kernel",
    "gemm_traffic",
    "grid_of",
    "occupancy_of",
]
