"""Read a :class:`~opmodel.LocalOp` from a YAML op file (schema in docs/op_files.md).

```yaml
name: gemm
kind: gemm
phase: train_fwd
tensors:
  - {role: input, shape: [4096, 8192], dtype: bf16}
  - {role: weight, shape: [8192, 32768], dtype: bf16}
  - {role: output, shape: [4096, 32768], dtype: bf16}
attrs: {transpose_b: false}
```
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from opmodel.core.dtypes import DType
from opmodel.core.enums import OpKind, Phase, TensorRole
from opmodel.core.errors import ConfigError, OpValidationError
from opmodel.core.op import LocalOp, tensor_at
from opmodel.parsing.schema import parse_dataclass
from opmodel.parsing.yamlfile import read_yaml_mapping

__all__ = ["load_op", "op_from_mapping"]


@dataclass(frozen=True, slots=True, kw_only=True)
class _TensorEntry:
    role: TensorRole
    shape: tuple[int, ...]
    dtype: DType
    layout: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class _OpEntry:
    name: str
    kind: OpKind
    phase: Phase
    tensors: tuple[_TensorEntry, ...]
    attrs: Mapping[str, object] | None = None


def op_from_mapping(data: dict[str, Any], source: str) -> LocalOp:
    """Build a LocalOp from a parsed op mapping; every problem prefixed with ``source``."""
    if not isinstance(data, Mapping):
        raise ConfigError(
            [f"{source}: expected a mapping of op fields (got {type(data).__name__})"]
        )
    errors: list[str] = []
    entry = parse_dataclass(_OpEntry, data, errors)
    if entry is not None and not entry.tensors:
        errors.append("tensors: expected at least one tensor (got [])")
    if errors or entry is None:
        raise ConfigError(f"{source}: {problem}" for problem in errors)
    tensors = []
    for i, t in enumerate(entry.tensors):
        try:
            tensors.append(tensor_at(f"tensors[{i}].", t.role, t.shape, t.dtype, t.layout))
        except OpValidationError as exc:
            errors.append(str(exc))
    if errors:
        raise ConfigError(f"{source}: {problem}" for problem in errors)
    try:
        return LocalOp(
            name=entry.name,
            kind=entry.kind,
            phase=entry.phase,
            tensors=tuple(tensors),
            attrs=dict(entry.attrs or {}),
        )
    except OpValidationError as exc:
        raise ConfigError([f"{source}: {exc}"]) from None


def load_op(path: str | Path) -> LocalOp:
    """Read and validate the op in the YAML file ``path``."""
    if not isinstance(path, str | Path):
        raise ConfigError([f"load_op: expected a path (got {path!r})"])
    path = Path(path)
    return op_from_mapping(read_yaml_mapping(path), str(path))
