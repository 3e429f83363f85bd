"""Hardware descriptions: :class:`HardwareSpec` and :func:`load_hardware`."""

from opmodel.hardware.clocking import POWER_STATES, checked_power_state
from opmodel.hardware.derived import peak_warnings
from opmodel.hardware.loader import (
    config_directory,
    load_hardware,
    shipped_config_path,
    shipped_hardware_names,
)
from opmodel.hardware.spec import (
    ClockDomain,
    ComputeSpec,
    HardwareKind,
    HardwareSpec,
    Instruction,
    MemoryLevel,
    MemorySpec,
    MxuSpec,
    OverheadSpec,
    PowerSpec,
    SmSpec,
    UtilizationSpec,
)

__all__ = [
    "POWER_STATES",
    "ClockDomain",
    "ComputeSpec",
    "HardwareKind",
    "HardwareSpec",
    "Instruction",
    "MemoryLevel",
    "MemorySpec",
    "MxuSpec",
    "OverheadSpec",
    "PowerSpec",
    "SmSpec",
    "UtilizationSpec",
    "checked_power_state",
    "config_directory",
    "load_hardware",
    "peak_warnings",
    "shipped_config_path",
    "shipped_hardware_names",
]
