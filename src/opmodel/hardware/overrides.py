"""What-if variants of a hardware config: dotted-path overrides and ``extends:`` files.

Design-space studies ask how an op would run on a device that differs from a shipped one in a
few numbers (twice the HBM bandwidth, a larger L2, more SMs). Both ways below edit the config's
YAML mapping *before* it is validated, so a variant passes the same checks as a shipped config
(types, plausible spans, cross-field rules) and every derived value (peaks from per-cycle
rates, the L2 path's limits) follows from the edited numbers.

* **Overrides** (``load_hardware(name, overrides={...})``, ``--set PATH=VALUE`` on the CLI):
  each key is a dotted path into the mapping, ``memory.levels.hbm.bandwidth_bytes_per_s``. A
  segment that meets a list of named mappings (``memory.levels``) picks the item by its
  ``name``; a number picks by position. Missing sections are created, so an optional field the
  base leaves out can be set; a typo is then reported by the schema with a did-you-mean. A value
  of None removes the field (its default applies).
* **extends** (a config file whose ``extends:`` names a shipped config or another file): the
  file's mapping is merged over the base's. Mappings merge key by key, ``memory.levels`` merges
  level by level (matched by ``name``; a new name is appended), anything else is replaced.

Fitted values that the base references (``sustained_calibration``, ``power.energy_calibration``)
stay attached and were fitted on the base device: remove them (``--set
sustained_calibration=null``) for a variant they do not describe.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from opmodel.core.errors import ConfigError
from opmodel.parsing.yamlfile import read_yaml_value

__all__ = ["apply_overrides", "changed_values", "merge_config", "parse_assignment"]


def parse_assignment(text: str) -> tuple[str, Any]:
    """``PATH=VALUE`` as ``(PATH, value)``, the value read as YAML (``4.8e12``, ``true``,
    ``null``, ``[16, 8, 16]``); ConfigError in one line when there is no ``=`` or no path."""
    path, sep, value = text.partition("=")
    if not sep or not path.strip():
        example = "memory.levels.hbm.bandwidth_bytes_per_s=4.8e12"
        msg = f"--set: expected PATH=VALUE, e.g. {example} (got {text!r})"
        raise ConfigError([msg])
    if not value.strip():
        raise ConfigError([f"--set {text}: no value (write null to remove the field)"])
    return path.strip(), read_yaml_value(value, f"--set {path.strip()}")


def _child(node: Any, segment: str, path: str) -> tuple[Any, Any]:
    """The container that holds ``segment`` under ``node`` and the key or index in it."""
    if isinstance(node, dict):
        return node, segment
    if isinstance(node, list):
        names = [item.get("name") if isinstance(item, dict) else None for item in node]
        if segment in names:
            return node, names.index(segment)
        if segment.isdigit() and int(segment) < len(node):
            return node, int(segment)
        listed = ", ".join(str(n) for n in names if n is not None) or "none named"
        raise ValueError(f"{path}: no item named {segment!r} here (items: {listed})")
    raise ValueError(f"{path}: cannot set a field inside a value ({node!r} is not a section)")


def _set(data: dict[str, Any], path: str, value: Any) -> None:
    """Set ``value`` at the dotted ``path`` of ``data`` (module docstring)."""
    segments = path.split(".")
    if not all(segments):
        raise ValueError(f"{path}: empty segment in the dotted path")
    node: Any = data
    for depth, segment in enumerate(segments[:-1]):
        holder, key = _child(node, segment, ".".join(segments[: depth + 1]))
        if isinstance(holder, dict) and holder.get(key) is None:
            holder[key] = {}
        node = holder[key]
    holder, key = _child(node, segments[-1], path)
    if value is None and isinstance(holder, dict):
        holder.pop(key, None)
    else:
        holder[key] = value


def apply_overrides(
    data: Mapping[str, Any], overrides: Mapping[str, Any], source: str = "config"
) -> dict[str, Any]:
    """A copy of the config mapping ``data`` with each dotted-path override set (module
    docstring); ConfigError with one line per override that cannot be placed, each naming
    ``source``."""
    if not isinstance(overrides, Mapping):
        msg = f"overrides: expected a mapping of dotted paths to values (got {overrides!r})"
        raise ConfigError([msg])
    result = copy.deepcopy(dict(data))
    problems: list[str] = []
    for path, value in overrides.items():
        if not isinstance(path, str):
            problems.append(f"{source}: overrides: paths must be strings (got {path!r})")
            continue
        try:
            _set(result, path, value)
        except ValueError as exc:
            problems.append(f"{source}: override {exc}")
    if problems:
        raise ConfigError(problems)
    return result


def _merge_levels(base: list[Any], child: list[Any]) -> list[Any]:
    """``memory.levels`` of a config that extends another: levels matched by name merge, new
    names are appended after the base's."""
    merged = [copy.deepcopy(level) for level in base]
    names = [level.get("name") if isinstance(level, dict) else None for level in merged]
    for level in child:
        name = level.get("name") if isinstance(level, dict) else None
        if name is not None and name in names:
            index = names.index(name)
            merged[index] = merge_config(merged[index], level)
        else:
            merged.append(copy.deepcopy(level))
    return merged


def merge_config(base: Mapping[str, Any], child: Mapping[str, Any]) -> dict[str, Any]:
    """``child`` merged over ``base``: mappings key by key, the ``levels`` list by level name,
    every other value replaced (module docstring)."""
    merged = copy.deepcopy(dict(base))
    for key, value in child.items():
        old = merged.get(key)
        if isinstance(old, dict) and isinstance(value, dict):
            merged[key] = merge_config(old, value)
        elif key == "levels" and isinstance(old, list) and isinstance(value, list):
            merged[key] = _merge_levels(old, value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def _leaves(node: Any, prefix: str = "") -> dict[str, Any]:
    """Every value of a config mapping by dotted path (levels by name, other lists whole)."""
    if isinstance(node, dict):
        out: dict[str, Any] = {}
        for key, value in node.items():
            out.update(_leaves(value, f"{prefix}.{key}" if prefix else str(key)))
        return out
    if isinstance(node, list) and node and all(isinstance(i, dict) and "name" in i for i in node):
        out = {}
        for item in node:
            out.update(_leaves(item, f"{prefix}.{item['name']}"))
        return out
    return {prefix: node}


def changed_values(base: Mapping[str, Any], variant: Mapping[str, Any]) -> dict[str, Any]:
    """What ``variant`` changes in ``base``, by dotted path: ``[base value, variant value]``,
    None for a side that does not have the field (``hardware check`` reports it for a config
    that ``extends`` another)."""
    before, after = _leaves(dict(base)), _leaves(dict(variant))
    return {
        path: [before.get(path), after.get(path)]
        for path in sorted(set(before) | set(after))
        if before.get(path) != after.get(path)
    }
