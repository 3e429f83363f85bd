"""Hardware descriptions: :class:`HardwareSpec` and :func:`load_hardware`."""

from opmodel.hardware.loader import load_hardware, shipped_config_path, shipped_hardware_names
from opmodel.hardware.spec import (
    ClockDomain,
    ComputeSpec,
    HardwareKind,
    HardwareSpec,
    MemoryLevel,
    MemorySpec,
    MxuSpec,
    OverheadSpec,
    PowerSpec,
    SmSpec,
    UtilizationSpec,
)

__all__ = [
    "ClockDomain",
    "ComputeSpec",
    "HardwareKind",
    "HardwareSpec",
    "MemoryLevel",
    "MemorySpec",
    "MxuSpec",
    "OverheadSpec",
    "PowerSpec",
    "SmSpec",
    "UtilizationSpec",
    "load_hardware",
    "shipped_config_path",
    "shipped_hardware_names",
]
