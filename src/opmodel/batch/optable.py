"""Op tables: one op per row, for sweeps (CSV or Parquet; schema in docs/sweeps.md).

Columns ``name``, ``kind``, ``phase``, ``tensors`` and ``attrs`` describe the op; any other
column is carried through to the output untouched. ``tensors`` is compact text, one tensor per
``;``-separated entry, ``role[/layout]:DIMxDIMx...:dtype``::

    input:4096x8192:bf16;weight:8192x32768:bf16;output:4096x32768:bf16
    input/q:16x32x1x128:bf16;input/k:16x8x8192x128:bf16;input/v:16x8x8192x128:bf16;output/o:16x32x1x128:bf16

or a JSON list of ``{"role", "shape", "dtype", "layout"}`` objects. ``attrs`` is empty or a
JSON object (``{"transpose_b": true}``). Rows that describe the same op (all columns but
``name`` equal) share one prediction: :func:`row_key` is what a sweep deduplicates on.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from opmodel.core.errors import ConfigError, OpModelError, OpValidationError
from opmodel.core.op import LocalOp, TensorSpec, tensor_at

__all__ = [
    "OP_COLUMNS",
    "format_tensors",
    "op_from_row",
    "op_to_row",
    "parse_tensors",
    "row_key",
]

OP_COLUMNS = ("name", "kind", "phase", "tensors", "attrs")
"""The columns that describe an op; ``attrs`` may be absent or empty."""

_REQUIRED = ("name", "kind", "phase", "tensors")


def _compact_tensor(entry: str, index: int) -> TensorSpec:
    parts = entry.strip().split(":")
    if len(parts) != 3:
        msg = f"tensor {index} '{entry}': expected role[/layout]:DIMxDIM...:dtype"
        raise OpValidationError(msg)
    role_layout, shape_text, dtype = parts
    role, _, layout = role_layout.partition("/")
    try:
        shape = tuple(int(dim) for dim in shape_text.lower().split("x"))
    except ValueError:
        msg = f"tensor {index} '{entry}': shape must be integers joined by 'x' (got '{shape_text}')"
        raise OpValidationError(msg) from None
    return tensor_at(f"tensor {index} '{entry}' ", role, shape, dtype, layout or None)


def _json_tensor(entry: object, index: int) -> TensorSpec:
    if not isinstance(entry, dict) or not {"role", "shape", "dtype"} <= set(entry):
        msg = f"tensor {index}: expected an object with role, shape, dtype (got {entry!r})"
        raise OpValidationError(msg)
    unknown = set(entry) - {"role", "shape", "dtype", "layout"}
    if unknown:
        msg = (
            f"tensor {index}: unknown keys {sorted(unknown)} (accepted: role, shape, dtype, layout)"
        )
        raise OpValidationError(msg)
    shape = entry["shape"]
    if not isinstance(shape, list):
        msg = f"tensor {index}: shape must be a list of integers (got {shape!r})"
        raise OpValidationError(msg)
    return tensor_at(
        f"tensor {index} ", entry["role"], tuple(shape), entry["dtype"], entry.get("layout")
    )


def parse_tensors(text: str) -> tuple[TensorSpec, ...]:
    """The tensors of one ``tensors`` cell (compact text or a JSON list);
    :class:`OpValidationError` (a ``ValueError``) with a one-line reason otherwise."""
    if not isinstance(text, str):
        kind = type(text).__name__
        msg = f"expected the text of a tensors cell, e.g. 'input:64x4096:bf16' (got {kind})"
        raise OpValidationError(msg)
    text = text.strip()
    if not text:
        msg = "expected at least one tensor (the cell is empty)"
        raise OpValidationError(msg)
    if text.startswith("["):
        try:
            entries = json.loads(text)
        except json.JSONDecodeError as exc:
            msg = f"not valid JSON ({exc.msg} at character {exc.pos})"
            raise OpValidationError(msg) from None
        return tuple(_json_tensor(entry, i) for i, entry in enumerate(entries))
    return tuple(_compact_tensor(entry, i) for i, entry in enumerate(text.split(";")))


def format_tensors(tensors: Sequence[TensorSpec]) -> str:
    """The compact text of ``tensors`` (inverse of :func:`parse_tensors`)."""
    text_like = isinstance(tensors, str | bytes)
    items = tuple(tensors) if isinstance(tensors, Iterable) and not text_like else None
    if items is None or not all(isinstance(t, TensorSpec) for t in items):
        kind = type(tensors).__name__
        msg = f"format_tensors: expected a sequence of TensorSpec (got a {kind} holding others)"
        if items is None:
            msg = f"format_tensors: expected a sequence of TensorSpec (got {kind})"
        raise OpValidationError(msg)
    return ";".join(
        f"{t.role.value}{'/' + t.layout if t.layout else ''}:"
        f"{'x'.join(map(str, t.shape))}:{t.dtype.value}"
        for t in items
    )


def _attrs(text: str) -> dict[str, Any]:
    text = text.strip()
    if not text:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        msg = f"not valid JSON ({exc.msg} at character {exc.pos})"
        raise OpValidationError(msg) from None
    if not isinstance(value, dict):
        msg = f"expected a JSON object (got {text})"
        raise OpValidationError(msg)
    return value


def _cell(row: Mapping[str, object], column: str) -> str:
    value = row.get(column)
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def row_key(row: Mapping[str, object]) -> tuple[str, str, str, str]:
    """What decides a row's prediction: kind, phase, tensors and attrs (not the name)."""
    return (
        _cell(row, "kind").strip(),
        _cell(row, "phase").strip(),
        _cell(row, "tensors").strip(),
        _cell(row, "attrs").strip(),
    )


def op_from_row(row: Mapping[str, object], source: str) -> LocalOp:
    """The op a table row describes; ConfigError with one ``source: column: problem`` line."""
    if not isinstance(row, Mapping):
        kind = type(row).__name__
        raise ConfigError([f"{source}: expected a mapping of column -> cell (got {kind})"])
    missing = [column for column in _REQUIRED if not _cell(row, column).strip()]
    if missing:
        raise ConfigError([f"{source}: {missing[0]}: required column is empty or absent"])
    column = "tensors"
    try:
        tensors = parse_tensors(_cell(row, "tensors"))
        column = "attrs"
        attrs = _attrs(_cell(row, "attrs"))
        column = "op"
        return LocalOp(
            name=_cell(row, "name").strip(),
            kind=_cell(row, "kind").strip(),  # type: ignore[arg-type]
            phase=_cell(row, "phase").strip(),  # type: ignore[arg-type]
            tensors=tensors,
            attrs=attrs,
        )
    except (ValueError, OpModelError) as exc:
        where = f"{source}: {column}: " if column != "op" else f"{source}: "
        raise ConfigError([f"{where}{exc}"]) from None


def op_to_row(op: LocalOp) -> dict[str, str]:
    """The table row of ``op`` (inverse of :func:`op_from_row`)."""
    if not isinstance(op, LocalOp):
        raise OpValidationError(f"op_to_row: expected a LocalOp (got {type(op).__name__})")
    return {
        "name": op.name,
        "kind": op.kind.value,
        "phase": op.phase.value,
        "tensors": format_tensors(op.tensors),
        "attrs": json.dumps(dict(op.attrs), sort_keys=True) if op.attrs else "",
    }
