"""Instructions per element of ATen's elementwise kernels, counted from their SASS.

``configs/instructions/aten_elementwise.yaml`` holds, per architecture, dtype (bf16, fp16,
fp32) and function, the instructions one thread of ``vectorized_elementwise_kernel`` issues per
element on a full CTA's path (``scripts/count_aten_sass.py`` walks the disassembled kernels of
a PyTorch wheel; no GPU and no fit). They are the issue cost ``I`` of
:mod:`~opmodel.models.streaming.issue` for ATen's elementwise functions where the fitted
calibration lists none. sm_89 runs the sm_86 code (PyTorch's wheels carry no sm_89 SASS).
Other architectures, dtypes and functions have no count (``None``).

``configs/instructions/aten_layer_norm.yaml`` holds, for ATen's ``vectorized_layer_norm_kernel``
(``scripts/count_layer_norm_sass.py``; the layer norm and its RMS variant) per architecture and
dtype, the instructions and issue cycles per element of its loops (the busiest of the SMSP's
issue slot and pipes) and the instructions a thread issues once per row
(:func:`counted_layer_norm`).

``configs/instructions/aten_softmax.yaml`` holds, for ATen's register softmax
(``cunn_SoftMaxForwardReg``, ``scripts/count_softmax_sass.py``) with 1-9 elements per thread,
the issue cycles a thread takes for a row and the kernel's registers
(:func:`counted_register_softmax`), and the registers of ATen's warp softmax
(``softmax_warp_forward``) for rows of 2^0-2^11 elements (:func:`counted_warp_softmax_registers`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, TypeGuard, TypeVar

from opmodel.configs import INSTRUCTIONS_DIR
from opmodel.core.dtypes import DType
from opmodel.core.errors import ConfigError
from opmodel.models.shared.sass_code import sass_architecture
from opmodel.models.streaming.count_tables import (
    by_arch_dtype,
    function_table,
    positive_count,
)
from opmodel.parsing.yamlfile import read_yaml_mapping

__all__ = [
    "COUNTS_FILE",
    "LAYER_NORM_FILE",
    "SOFTMAX_FILE",
    "RegisterSoftmaxCount",
    "RowKernelCount",
    "counted_instructions",
    "counted_layer_norm",
    "counted_register_softmax",
    "counted_warp_softmax_registers",
    "load_counts",
    "load_layer_norm_counts",
    "load_register_softmax_counts",
    "load_warp_softmax_registers",
]

_FOLDER = INSTRUCTIONS_DIR
COUNTS_FILE = _FOLDER / "aten_elementwise.yaml"
LAYER_NORM_FILE = _FOLDER / "aten_layer_norm.yaml"
SOFTMAX_FILE = _FOLDER / "aten_softmax.yaml"
_PER_THREAD = 9  # the register softmax's instances: 1-9 elements per thread
_WARP_SIZES = 12  # the warp softmax's instances: rows of 2^0 to 2^11 elements
_ROW_FIELDS = ("instructions_per_element", "cycles_per_element", "row_instructions")

Counts = dict[tuple[str, str, str], float]
T = TypeVar("T")


def load_counts(path: Path, field: str = "instructions_per_element") -> Counts:
    """Read and validate a counts file (module docstring) whose ``field`` maps architectures,
    dtypes and functions to numbers; errors name the file and field."""
    data = read_yaml_mapping(path)
    if field not in data or not isinstance(data.get("source"), str):
        raise ConfigError([f"{path}: needs the fields source (a string), {field}"])
    return function_table(data[field], path, field, positive_count)


@cache
def _shipped() -> Counts:
    return load_counts(COUNTS_FILE)


def counted_instructions(architecture: str | None, dtype: DType, function: str) -> float | None:
    """ATen's counted instructions per element of ``function`` on ``dtype`` for a GPU of
    ``architecture``, or ``None`` without a count (``sub`` runs the add's kernel: ``add_stub``
    with ``-alpha``, BinaryOps.cpp)."""
    arch, key = sass_architecture(architecture), "add" if function == "sub" else function
    return None if arch is None else _shipped().get((arch, dtype.value, key))


@dataclass(frozen=True, slots=True)
class RowKernelCount:
    """A row kernel's counted cost: issue cycles and instructions of its loops per element (one
    lane's share) and the instructions each thread issues once per row."""

    cycles_per_element: float
    row_instructions: float
    instructions_per_element: float = 0.0


def _row_entry(raw: Any, path: Path, where: str) -> RowKernelCount:
    if not isinstance(raw, dict) or set(raw) != set(_ROW_FIELDS):
        raise ConfigError([f"{path}: {where}: needs exactly the fields {', '.join(_ROW_FIELDS)}"])
    n = {name: positive_count(value, f"{path}: {where}.{name}") for name, value in raw.items()}
    return RowKernelCount(
        n["cycles_per_element"], n["row_instructions"], n["instructions_per_element"]
    )


_NORM_KERNELS = ("layer_norm", "rms_norm")


def load_layer_norm_counts(path: Path) -> dict[tuple[str, str, str], RowKernelCount]:
    """Read and validate a layer-norm counts file (module docstring), keyed by (kernel:
    ``layer_norm`` or ``rms_norm``, architecture, dtype); errors name the file and field."""
    data = read_yaml_mapping(path)
    sections = {kernel: data.get(kernel) for kernel in _NORM_KERNELS}
    if not isinstance(data.get("source"), str) or not all(
        isinstance(raw, dict) for raw in sections.values()
    ):
        raise ConfigError(
            [f"{path}: needs the fields source (a string), layer_norm and rms_norm (mappings)"]
        )
    counts = {}
    for kernel, raw in sections.items():
        assert isinstance(raw, dict)
        table = by_arch_dtype(
            raw, path, kernel, " to counts", lambda v, where: _row_entry(v, path, where)
        )
        counts.update({(kernel, arch, dtype): v for (arch, dtype), v in table.items()})
    return counts


@cache
def _shipped_layer_norm() -> dict[tuple[str, str, str], RowKernelCount]:
    return load_layer_norm_counts(LAYER_NORM_FILE)


def counted_layer_norm(
    architecture: str | None, dtype: DType, *, rms: bool = False
) -> RowKernelCount | None:
    """ATen's layer norm kernel (its RMS variant with ``rms``) counted for a GPU of
    ``architecture`` on rows of ``dtype``, or ``None`` without a count."""
    arch = sass_architecture(architecture)
    kernel = "rms_norm" if rms else "layer_norm"
    return None if arch is None else _shipped_layer_norm().get((kernel, arch, dtype.value))


@dataclass(frozen=True, slots=True)
class RegisterSoftmaxCount:
    """The register softmax for one number of elements per thread: the issue cycles one
    thread takes for a whole row, and its registers per thread."""

    cycles_per_row: float
    registers: int


_RegisterTable = dict[tuple[str, str], list[RegisterSoftmaxCount]]  # by (architecture, dtype)
_WarpTable = dict[tuple[str, str], list[int]]


def _positive_ints(values: Any, length: int) -> TypeGuard[list[int]]:
    """A list of ``length`` integers > 0 (no bools)."""
    listed = isinstance(values, list) and len(values) == length
    return listed and all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in values)


def _softmax_entry(raw: Any, path: Path, where: str) -> list[RegisterSoftmaxCount]:
    fields = ("cycles_per_row", "registers")
    if not isinstance(raw, dict) or set(raw) != set(fields):
        raise ConfigError([f"{path}: {where}: needs exactly the fields {', '.join(fields)}"])
    for name in fields:
        values = raw[name]
        if not _positive_ints(values, _PER_THREAD):
            raise ConfigError(
                [f"{path}: {where}.{name}: must list {_PER_THREAD} integers > 0 (got {values!r})"]
            )
    pairs = zip(raw["cycles_per_row"], raw["registers"], strict=True)
    return [RegisterSoftmaxCount(float(c), r) for c, r in pairs]


def load_register_softmax_counts(path: Path) -> _RegisterTable:
    """Read and validate a softmax counts file (module docstring), keyed by (architecture,
    dtype), each a list by elements per thread (1 first); errors name the file and field."""
    return _register_softmax_table(read_yaml_mapping(path), path)


def _register_softmax_table(data: dict[str, Any], path: Path) -> _RegisterTable:
    """The register softmax's section of the softmax counts file ``path`` read as ``data``."""
    raw = data.get("register_softmax")
    if not isinstance(raw, dict) or not isinstance(data.get("source"), str):
        raise ConfigError(
            [f"{path}: needs the fields source (a string), register_softmax (a mapping)"]
        )
    return by_arch_dtype(
        raw, path, "register_softmax", "", lambda v, where: _softmax_entry(v, path, where)
    )


@cache
def _shipped_softmax() -> tuple[_RegisterTable, _WarpTable]:
    """The shipped register softmax counts and warp softmax registers (one read of the file)."""
    data = read_yaml_mapping(SOFTMAX_FILE)
    return _register_softmax_table(data, SOFTMAX_FILE), _warp_registers_table(data, SOFTMAX_FILE)


def counted_register_softmax(
    architecture: str | None, dtype: DType, per_thread: int
) -> RegisterSoftmaxCount | None:
    """ATen's register softmax with ``per_thread`` elements per thread (1-9) on rows of
    ``dtype`` for a GPU of ``architecture``, or ``None`` without a count."""
    return _listed(_shipped_softmax()[0], architecture, dtype, per_thread - 1)


def _listed(
    table: dict[tuple[str, str], list[T]], architecture: str | None, dtype: DType, index: int
) -> T | None:
    """Entry ``index`` of what ``table`` lists for the GPU's SASS architecture and ``dtype``,
    ``None`` without one."""
    arch = sass_architecture(architecture)
    counts = None if arch is None else table.get((arch, dtype.value))
    if counts is None or not 0 <= index < len(counts):
        return None
    return counts[index]


def _warp_entry(raw: Any, path: Path, where: str) -> list[int]:
    values = raw.get("registers") if isinstance(raw, dict) and set(raw) == {"registers"} else None
    if not _positive_ints(values, _WARP_SIZES):
        raise ConfigError(
            [f"{path}: {where}.registers: must list {_WARP_SIZES} integers > 0 (got {values!r})"]
        )
    return [int(v) for v in values]


def load_warp_softmax_registers(path: Path) -> _WarpTable:
    """Read and validate the warp softmax's registers in a softmax counts file (section
    ``warp_softmax``, module docstring), keyed by (architecture, dtype), each a list by log2 of
    the row's elements rounded up (0 first); errors name the file and field."""
    return _warp_registers_table(read_yaml_mapping(path), path)


def _warp_registers_table(data: dict[str, Any], path: Path) -> _WarpTable:
    """The warp softmax's section of the softmax counts file ``path`` read as ``data``."""
    raw = data.get("warp_softmax")
    if not isinstance(raw, dict):
        raise ConfigError([f"{path}: warp_softmax: must map architectures to dtypes"])
    return by_arch_dtype(
        raw, path, "warp_softmax", " to registers", lambda v, where: _warp_entry(v, path, where)
    )


def counted_warp_softmax_registers(
    architecture: str | None, dtype: DType, log2_elements: int
) -> int | None:
    """ATen's warp softmax's registers per thread for rows of ``dtype`` whose length rounds up
    to ``2^log2_elements`` (0-11) on a GPU of ``architecture``, or ``None`` without a count."""
    return _listed(_shipped_softmax()[1], architecture, dtype, log2_elements)
