"""Instructions per element of ATen's elementwise kernels, counted from their SASS.

``configs/instructions/aten_elementwise.yaml`` holds, per architecture, dtype (bf16, fp16,
fp32) and function, the instructions one thread of ``vectorized_elementwise_kernel`` issues per
element on a full CTA's path (``scripts/count_aten_sass.py`` walks the disassembled kernels of
a PyTorch wheel; no GPU and no fit). They are the issue cost ``I`` of
:mod:`~opmodel.models.streaming.issue` for ATen's elementwise functions where the fitted
calibration lists none. sm_89 runs the sm_86 code: PyTorch's wheels carry no sm_89 SASS, and
CUDA runs sm_86 binaries on sm_89 (same major version). Other architectures, other dtypes and
other functions have no count (``None``).
"""

from __future__ import annotations

import math
from functools import cache
from pathlib import Path
from typing import Any

from opmodel.core.dtypes import DType
from opmodel.core.errors import ConfigError
from opmodel.models.shared.sass_code import sass_architecture
from opmodel.parsing.yamlfile import read_yaml_mapping

__all__ = ["COUNTS_FILE", "counted_instructions", "load_counts"]

COUNTS_FILE = (
    Path(__file__).resolve().parent.parent.parent / "configs/instructions/aten_elementwise.yaml"
)
_DTYPES = ("bf16", "fp16", "fp32")

Counts = dict[tuple[str, str, str], float]


def _entries(raw: Any, path: Path) -> Counts:
    field = "instructions_per_element"
    if not isinstance(raw, dict):
        raise ConfigError([f"{path}: {field}: must map architectures to dtypes"])
    counts: Counts = {}
    for arch, by_dtype in raw.items():
        if not isinstance(by_dtype, dict) or any(d not in _DTYPES for d in by_dtype):
            raise ConfigError(
                [f"{path}: {field}.{arch}: must map dtypes ({', '.join(_DTYPES)}) to functions"]
            )
        for dtype, functions in by_dtype.items():
            if not isinstance(functions, dict):
                raise ConfigError([f"{path}: {field}.{arch}.{dtype}: must map functions to counts"])
            for name, value in functions.items():
                ok = isinstance(value, int | float) and not isinstance(value, bool)
                if not ok or not math.isfinite(value) or value <= 0:
                    raise ConfigError(
                        [
                            f"{path}: {field}.{arch}.{dtype}.{name}: must be a finite number > 0 "
                            f"(got {value!r})"
                        ]
                    )
                counts[(str(arch), dtype, str(name))] = float(value)
    return counts


def load_counts(path: Path) -> Counts:
    """Read and validate a counts file (module docstring); errors name the file and field."""
    data = read_yaml_mapping(path)
    if "instructions_per_element" not in data or not isinstance(data.get("source"), str):
        raise ConfigError([f"{path}: needs the fields source (a string), instructions_per_element"])
    return _entries(data["instructions_per_element"], path)


@cache
def _shipped() -> Counts:
    return load_counts(COUNTS_FILE)


def counted_instructions(architecture: str | None, dtype: DType, function: str) -> float | None:
    """ATen's counted instructions per element of ``function`` on ``dtype`` for a GPU of
    ``architecture`` (a hardware config's ``architecture``), or ``None`` without a count."""
    arch = sass_architecture(architecture)
    return None if arch is None else _shipped().get((arch, dtype.value, function))
