"""``opmodel measure``: run op grids on a GPU (PyTorch, NVML) and write validation datasets."""

from opmodel.measure.backend import TorchBackend
from opmodel.measure.grid import MeasureGrid, OpGrid, load_grid, shipped_grid_names
from opmodel.measure.plan import Case, Plan, expand, plan
from opmodel.measure.protocol import Backend, CaseResult, DeviceInfo
from opmodel.measure.runner import MeasureRequest, dry_run, run_measurements

__all__ = [
    "Backend",
    "Case",
    "CaseResult",
    "DeviceInfo",
    "MeasureGrid",
    "MeasureRequest",
    "OpGrid",
    "Plan",
    "TorchBackend",
    "dry_run",
    "expand",
    "load_grid",
    "plan",
    "run_measurements",
    "shipped_grid_names",
]
