"""The package's shipped data files, by folder: hardware configs, GEMM kernel catalogues,
fitted calibrations, instruction counts from kernels' SASS, the measured-accuracy table and
measurement grids. Code reaches them through these paths, never through its own position in
the source tree."""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "ACCURACY_DIR",
    "CALIBRATIONS_DIR",
    "CONFIGS_DIR",
    "HARDWARE_DIR",
    "INSTRUCTIONS_DIR",
    "KERNELS_DIR",
    "MEASURE_DIR",
]

CONFIGS_DIR = Path(__file__).resolve().parent
ACCURACY_DIR = CONFIGS_DIR / "accuracy"  # measured_error.json (scripts/write_accuracy_table.py)
CALIBRATIONS_DIR = CONFIGS_DIR / "calibrations"  # fitted values, each naming its training split
HARDWARE_DIR = CONFIGS_DIR / "hardware"  # the shipped hardware configs
INSTRUCTIONS_DIR = CONFIGS_DIR / "instructions"  # instruction counts read from SASS
KERNELS_DIR = CONFIGS_DIR / "kernels"  # GEMM kernel catalogues per architecture
MEASURE_DIR = CONFIGS_DIR / "measure"  # opmodel measure's grids
