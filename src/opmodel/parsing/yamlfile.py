"""Read a YAML file into a mapping, turning every I/O or syntax problem into one-line errors."""

from __future__ import annotations

import math
import re
from collections.abc import Collection
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from opmodel.core.errors import ConfigError

__all__ = [
    "TableWords",
    "read_calibration",
    "read_number_table",
    "read_yaml_mapping",
    "read_yaml_text",
    "read_yaml_value",
]

_BASE: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_BASE):  # type: ignore[misc]
    """Safe loader that also reads YAML 1.2 exponent floats such as ``1e9`` and ``1.5e12``.

    PyYAML follows YAML 1.1, where a float needs a dot and a signed exponent (``1.0e+9``);
    datasheet numbers are naturally written ``1.555e12``, which 1.1 would read as a string.
    """


_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"),
)


def read_yaml_value(text: str, source: str) -> Any:
    """Parse ``text`` as one YAML value of any type (``4.8e12``, ``true``, ``[16, 8, 16]``,
    ``{bf16: 2048}``, a string); ``source`` names it in error messages."""
    try:
        return yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError([f"{source}: malformed YAML{where}: {problem}"]) from None


def read_yaml_text(text: str, source: str) -> dict[str, Any]:
    """Parse ``text`` as a YAML mapping; ``source`` names it in error messages."""
    data = read_yaml_value(text, source)
    if not isinstance(data, dict):
        raise ConfigError(
            [f"{source}: expected a YAML mapping at the top level (got {_kind(data)})"]
        )
    return data


def read_yaml_mapping(path: Path | str) -> dict[str, Any]:
    """Read and parse the YAML mapping in the file ``path`` (a ``Path`` or a string)."""
    if isinstance(path, str) and path:
        path = Path(path)
    if not isinstance(path, Path):
        raise ConfigError([f"read_yaml_mapping: expected a file path (got {path!r})"])
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError([f"{path}: file not found"]) from None
    except IsADirectoryError:
        raise ConfigError([f"{path}: is a directory, expected a YAML file"]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError([f"{path}: cannot read ({exc.__class__.__name__}: {exc})"]) from None
    return read_yaml_text(text, str(path))


def read_calibration(
    path: Path, fields: tuple[str, ...], fitted_on: tuple[str, ...]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A calibration file's mapping and its ``fitted_on`` mapping, after checking that the file
    has ``fields`` and that ``fitted_on`` has the string fields ``fitted_on`` (one-line errors
    naming the file)."""
    data = read_yaml_mapping(path)
    if any(name not in data for name in fields):
        raise ConfigError([f"{path}: needs the fields {', '.join(fields)}"])
    fitted = data["fitted_on"]
    if not isinstance(fitted, dict) or any(not isinstance(fitted.get(k), str) for k in fitted_on):
        raise ConfigError([f"{path}: fitted_on: needs string fields {', '.join(fitted_on)}"])
    return data, fitted


class TableWords(NamedTuple):
    """How :func:`read_number_table`'s errors name a table's parts: the whole mapping (``must
    be a mapping of implementation to functions``), an outer key (``implementation``), an inner
    mapping (``must map functions to counts``) and a value (``a finite number``)."""

    mapping: str
    outer: str
    inner: str
    value: str


def read_number_table(
    raw: object, path: Path, name: str, outer: Collection[str], words: TableWords
) -> dict[tuple[str, str], float]:
    """A calibration's two-level table ``{outer: {inner: number >= 0}}`` (outer keys among
    ``outer``) by ``(outer, inner)``; a one-line ConfigError naming the file and the field
    otherwise."""
    if not isinstance(raw, dict):
        raise ConfigError([f"{path}: {name}: {words.mapping}"])
    table: dict[tuple[str, str], float] = {}
    for key, inner in raw.items():
        if key not in outer:
            choices = ", ".join(outer)
            raise ConfigError([f"{path}: {name}.{key}: unknown {words.outer} (one of {choices})"])
        if not isinstance(inner, dict):
            raise ConfigError([f"{path}: {name}.{key}: {words.inner}"])
        for field, value in inner.items():
            ok = isinstance(value, int | float) and not isinstance(value, bool)
            if not ok or not math.isfinite(value) or value < 0:
                msg = f"{path}: {name}.{key}.{field}: must be {words.value} >= 0 (got {value!r})"
                raise ConfigError([msg])
            table[(str(key), str(field))] = float(value)
    return table


def _kind(value: object) -> str:
    return "an empty file" if value is None else f"a {type(value).__name__}"
