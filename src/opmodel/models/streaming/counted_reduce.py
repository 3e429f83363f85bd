"""ATen's reduce kernel counted from PyTorch 2.14.1's cubins (``configs/instructions/
aten_reduce.yaml``, written by ``scripts/count_reduce_sass.py``; no GPU, no fit): per
architecture, dtype and function, the issue cycles and instructions per element of the loop a
thread walks its row with over the innermost axis (:func:`reduce_issue_cycles`, the structure's
issue cost; :func:`reduce_instructions`), and the registers per thread of the launches that
load 1, 2 or 4 outputs at once (:func:`reduce_registers`; the structure,
:mod:`~opmodel.models.streaming.aten_reduce`). sm_89 runs sm_86's code; other architectures
have no counts.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from opmodel.configs import INSTRUCTIONS_DIR
from opmodel.core.dtypes import DType
from opmodel.core.errors import ConfigError
from opmodel.models.shared.sass_code import sass_architecture
from opmodel.models.streaming.counted import Counts, load_counts
from opmodel.parsing.yamlfile import read_yaml_mapping

__all__ = [
    "COUNTS_FILE",
    "load_reduce_counts",
    "load_reduce_registers",
    "reduce_instructions",
    "reduce_issue_cycles",
    "reduce_registers",
]

COUNTS_FILE = INSTRUCTIONS_DIR / "aten_reduce.yaml"


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


def reduce_issue_cycles(
    architecture: str | None, dtype: DType, function: str, innermost: bool
) -> float:
    """Issue cycles per element of ATen's reduce kernel for ``function`` on ``dtype`` for a GPU
    of ``architecture``, reducing the ``innermost`` axis (or a trailing block of axes): the
    counted loop's (module docstring); 0 without a count or over other axes."""
    arch = sass_architecture(architecture)
    if arch is None or not innermost:
        return 0.0
    return _shipped().get((arch, dtype.value, function), 0.0)


def reduce_instructions(
    architecture: str | None, dtype: DType, function: str, innermost: bool
) -> float | None:
    """Instructions per element of the same counted loop (``scripts/issue_energy_experiment.py``
    prices them); ``None`` without a count or over other axes."""
    arch = sass_architecture(architecture)
    if arch is None or not innermost:
        return None
    return _shipped_instructions().get((arch, dtype.value, function))


_VECTORS = (1, 2, 4)  # the registers' order: reduce_kernel<512, 1>, <256, 2>, <128, 4>


def load_reduce_registers(path: Path) -> dict[tuple[str, str, str], tuple[int, ...]]:
    """The ``registers`` section of a reduce-kernel counts file: per architecture, dtype and
    function, the registers per thread of the kernels loading 1, 2 and 4 outputs at once;
    errors name the file and field."""
    raw = read_yaml_mapping(path).get("registers")
    if not isinstance(raw, dict):
        raise ConfigError([f"{path}: needs the field registers (architecture: dtype: function)"])
    out = {}
    for arch, by_dtype in raw.items():
        for dtype, by_function in (by_dtype or {}).items():
            for function, values in (by_function or {}).items():
                ok = isinstance(values, list) and len(values) == len(_VECTORS)
                if not ok or not all(isinstance(v, int) and 0 < v <= 255 for v in values):
                    where = f"registers.{arch}.{dtype}.{function}"
                    raise ConfigError([f"{path}: {where}: must be 3 integers in 1-255"])
                out[(str(arch), str(dtype), str(function))] = tuple(values)
    return out


@cache
def _shipped_registers() -> dict[tuple[str, str, str], tuple[int, ...]]:
    return load_reduce_registers(COUNTS_FILE)


def reduce_registers(
    architecture: str | None, dtype: DType, function: str, outputs_per_load: int
) -> int | None:
    """Registers per thread of the launch loading ``outputs_per_load`` (1, 2 or 4) outputs at
    once, counted from the cubins (module docstring); ``None`` without a count."""
    arch = sass_architecture(architecture)
    counted = None if arch is None else _shipped_registers().get((arch, dtype.value, function))
    if counted is None or outputs_per_load not in _VECTORS:
        return None
    return counted[_VECTORS.index(outputs_per_load)]
