"""ATen's reduce kernel counted from PyTorch 2.14.1's cubins (``configs/instructions/
aten_reduce.yaml``, written by ``scripts/count_reduce_sass.py``; no GPU, no fit): per
architecture, dtype and function, the issue cycles and instructions per element of the loop a
thread walks its row with over the innermost axis (:func:`reduce_issue_cycles`, the structure's
issue cost; :func:`reduce_instructions`), the issue cycles per element of the loops the launches
that load 2 or 4 outputs at once walk a leading reduced axis with, and the registers per thread
of the launches that load 1, 2 or 4 outputs at once (:func:`reduce_registers`; the structure,
:mod:`~opmodel.models.streaming.aten_reduce`). sm_89 runs sm_86's code; other architectures
have no counts.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from opmodel.configs import INSTRUCTIONS_DIR
from opmodel.core.dtypes import DType
from opmodel.core.errors import ConfigError
from opmodel.models.shared.sass_code import sass_architecture
from opmodel.models.streaming.count_tables import function_table
from opmodel.models.streaming.counted import Counts, load_counts
from opmodel.parsing.yamlfile import read_yaml_mapping

__all__ = [
    "COUNTS_FILE",
    "LEADING",
    "REGISTERS",
    "load_reduce_counts",
    "load_reduce_lists",
    "reduce_instructions",
    "reduce_issue_cycles",
    "reduce_registers",
]

COUNTS_FILE = INSTRUCTIONS_DIR / "aten_reduce.yaml"
REGISTERS, LEADING = "registers", "leading_cycles_per_element"
_VECTORS = (1, 2, 4)  # the lists' order: reduce_kernel<512, 1>, <256, 2>, <128, 4>


def load_reduce_counts(path: Path) -> Counts:
    """Read a reduce-kernel counts file (module docstring): ``cycles_per_element`` by
    architecture, dtype and function; errors name the file and field."""
    return load_counts(path, "cycles_per_element")


@cache
def _shipped() -> Counts:
    return load_reduce_counts(COUNTS_FILE)


@cache
def _shipped_instructions() -> Counts:
    return load_counts(COUNTS_FILE, "instructions_per_element")


@cache  # a pure function of the shipped file, asked once per fresh reduction predict
def reduce_issue_cycles(
    architecture: str | None,
    dtype: DType,
    function: str,
    innermost: bool,
    outputs_per_load: int = 1,
) -> float:
    """Issue cycles per element of ATen's reduce kernel for ``function`` on ``dtype`` for a GPU
    of ``architecture``: reducing the ``innermost`` axis (or a trailing block of axes), the
    counted row loop's; over a leading block of axes with ``outputs_per_load`` 2 or 4, the
    ``<256, 2>`` or ``<128, 4>`` launch's loop (module docstring); else, or without a count, 0."""
    arch = sass_architecture(architecture)
    if arch is None:
        return 0.0
    if innermost:
        return _shipped().get((arch, dtype.value, function), 0.0)
    leading = _shipped_lists(LEADING).get((arch, dtype.value, function))
    if leading is None or outputs_per_load not in _VECTORS[1:]:
        return 0.0
    return float(leading[_VECTORS.index(outputs_per_load) - 1])


def reduce_instructions(
    architecture: str | None, dtype: DType, function: str, innermost: bool
) -> float | None:
    """Instructions per element of the same counted loop (``scripts/issue_energy_experiment.py``
    prices them); ``None`` without a count or over other axes."""
    arch = sass_architecture(architecture)
    if arch is None or not innermost:
        return None
    return _shipped_instructions().get((arch, dtype.value, function))


def load_reduce_lists(path: Path, section: str) -> dict[tuple[str, str, str], tuple[float, ...]]:
    """A section of a reduce-kernel counts file that holds a list per architecture, dtype and
    function: ``registers`` (3 integers in 1-255: the launches loading 1, 2 and 4 outputs at
    once) or ``leading_cycles_per_element`` (2 numbers > 0: the launches loading 2 and 4);
    errors name the file and field."""
    count, whole = (3, True) if section == REGISTERS else (2, False)
    what = "integers in 1-255" if whole else "numbers > 0"

    def values(raw: Any, where: str) -> tuple[float, ...]:
        ok = isinstance(raw, list) and len(raw) == count
        if not ok or not all(
            isinstance(v, int if whole else int | float)
            and not isinstance(v, bool)
            and 0 < v <= (255 if whole else 1e6)
            for v in raw
        ):
            raise ConfigError([f"{where}: must be {count} {what}"])
        return tuple(raw)

    return function_table(read_yaml_mapping(path).get(section), path, section, values)


@cache
def _shipped_lists(section: str) -> dict[tuple[str, str, str], tuple[float, ...]]:
    return load_reduce_lists(COUNTS_FILE, section)


@cache  # as reduce_issue_cycles
def reduce_registers(
    architecture: str | None, dtype: DType, function: str, outputs_per_load: int
) -> int | None:
    """Registers per thread of the launch loading ``outputs_per_load`` (1, 2 or 4) outputs at
    once, counted from the cubins (module docstring); ``None`` without a count."""
    arch = sass_architecture(architecture)
    counted = None if arch is None else _shipped_lists(REGISTERS).get((arch, dtype.value, function))
    if counted is None or outputs_per_load not in _VECTORS:
        return None
    return int(counted[_VECTORS.index(outputs_per_load)])
