"""Load hardware configs from YAML: a path or the name of a shipped config (``a10``)."""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from opmodel.configs import HARDWARE_DIR
from opmodel.core.errors import ConfigError, UnknownNameError, unknown_name_message
from opmodel.hardware.calibrated import with_calibration
from opmodel.hardware.checks import cross_field_problems
from opmodel.hardware.clocking import with_core_path_limits
from opmodel.hardware.derived import with_derived_peaks
from opmodel.hardware.energy_calibration import load_energy_calibration
from opmodel.hardware.overrides import apply_overrides, changed_values, merge_config
from opmodel.hardware.spec import HardwareSpec
from opmodel.hardware.sustained_calibration import (
    apply_sustained_calibration,
    load_sustained_calibration,
)
from opmodel.parsing.schema import parse_dataclass
from opmodel.parsing.yamlfile import read_yaml_mapping

__all__ = [
    "config_directory",
    "extends_changes",
    "load_hardware",
    "shipped_config_path",
    "shipped_hardware_names",
]

# Shipped configs are package data next to this package (``opmodel/configs/hardware``). A plain
# path rather than importlib.resources: it is what every regular and editable install provides,
# and importlib.resources costs ~10 ms of the CLI's start-up budget.
_SHIPPED_DIR = HARDWARE_DIR


def _shipped_dir() -> Path:
    return _SHIPPED_DIR


def shipped_hardware_names() -> list[str]:
    """Names of the configs shipped with the package, sorted."""
    return sorted(p.stem for p in _shipped_dir().glob("*.yaml"))


def shipped_config_path(name: str) -> Path:
    """Path of the shipped config ``name``; UnknownNameError listing the shipped names."""
    if not isinstance(name, str):
        raise ConfigError([f"shipped_config_path: expected a config name (got {name!r})"])
    path = _shipped_dir() / f"{name}.yaml"
    if not path.is_file():
        raise UnknownNameError(
            unknown_name_message("hardware config", name, shipped_hardware_names())
        )
    return path


def _looks_like_path(text: str) -> bool:
    return text.endswith((".yaml", ".yml")) or "/" in text or "\\" in text or Path(text).exists()


def config_directory(option: str, text: str | None) -> Path | None:
    """The folder of ``<config>.yaml`` files a command option names (None when not given);
    a ConfigError naming ``option`` when it is not a directory."""
    if not text:
        return None
    if not Path(text).is_dir():
        raise ConfigError([f"{option}: {text}: not a directory"])
    return Path(text)


def load_hardware(
    path_or_name: str | Path,
    *,
    directory: Path | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> HardwareSpec:
    """Load and validate a hardware config.

    ``path_or_name`` is a path to a YAML file or the name of a config: ``directory/<name>.yaml``
    when ``directory`` is given, else a shipped config (see :func:`shipped_hardware_names`).
    ``overrides`` maps dotted paths to values set before validation, for what-if variants
    (``{"memory.levels.hbm.bandwidth_bytes_per_s": 4.8e12}``); a file may instead name its base
    with ``extends:`` (:mod:`opmodel.hardware.overrides`). Every problem is reported at once in
    a :class:`~opmodel.core.errors.ConfigError`, one ``file: field.path: problem`` line each.
    Peaks given as per-cycle rates are derived (:mod:`opmodel.hardware.derived`). Results
    are cached per file (and the files it extends), modification time and overrides.
    """
    path = _config_path(path_or_name, directory)
    key = (str(path), *_stamp(path), _overrides_key(overrides))
    cached = _CACHE.get(key)  # the key holds this file's stamp; the files it extends are checked
    if cached is not None and all(_stamp(f) == stamp for f, stamp in cached[1]):
        with _CACHE_LOCK:  # least recently used first: a hit moves its entry to the end
            if _CACHE.get(key) is cached:
                _CACHE[key] = _CACHE.pop(key)
        return cached[0]
    data, files = _raw_config(path)
    if overrides:
        data = apply_overrides(data, overrides, str(path))
    spec = _build(data, f"{path} (with overrides)" if overrides else str(path), files)
    stamps = tuple((f, _stamp(f)) for f, _ in files[:-1])  # the last is ``path`` itself
    with _CACHE_LOCK:  # threads may load configs at once; evict the least recently used
        if len(_CACHE) >= _CACHE_SIZE:
            _CACHE.pop(next(iter(_CACHE)), None)
        _CACHE[key] = (spec, stamps)
    return spec


_CACHE_SIZE = 64
_Stamps = tuple[tuple[Path, tuple[int, int]], ...]  # each file extended: (mtime, size)
_Chain = tuple[tuple[Path, str], ...]  # each file read, base first, and the name it gives
_CACHE: dict[tuple[str, int, int, str], tuple[HardwareSpec, _Stamps]] = {}
_CACHE_LOCK = threading.Lock()


def _config_path(path_or_name: object, directory: Path | None) -> Path:
    if isinstance(path_or_name, Path):
        return path_or_name
    if isinstance(path_or_name, str) and path_or_name:
        if _looks_like_path(path_or_name):
            return Path(path_or_name)
        if directory is not None:
            return directory / f"{path_or_name}.yaml"
        return shipped_config_path(path_or_name)
    msg = f"load_hardware: expected a path or a config name (got {path_or_name!r})"
    raise ConfigError([msg])


def _stamp(path: Path) -> tuple[int, int]:
    try:
        stat = path.stat()
    except OSError:
        raise ConfigError([f"{path}: file not found"]) from None
    return stat.st_mtime_ns, stat.st_size


def _overrides_key(overrides: Mapping[str, Any] | None) -> str:
    if overrides is None:
        return ""
    if not isinstance(overrides, Mapping):
        msg = f"load_hardware: overrides must map dotted paths to values (got {overrides!r})"
        raise ConfigError([msg])
    if not overrides:  # {} is no variant: the plain config's cached spec
        return ""
    return json.dumps({str(k): v for k, v in overrides.items()}, sort_keys=True, default=repr)


def _base_path(reference: object, path: Path) -> Path:
    """The file an ``extends:`` names: a path (relative to the extending file), a config
    beside the extending file, else a shipped config."""
    if not isinstance(reference, str) or not reference:
        msg = f"{path}: extends: expected a shipped config name or a YAML path (got {reference!r})"
        raise ConfigError([msg])
    if _looks_like_path(reference):
        return path.parent / reference
    beside = path.parent / f"{reference}.yaml"
    if beside.is_file() and beside.resolve() != path.resolve():
        return beside
    try:
        return shipped_config_path(reference)
    except UnknownNameError as exc:
        raise ConfigError([f"{path}: extends: {exc}"]) from None


def _raw_config(path: Path, chain: tuple[Path, ...] = ()) -> tuple[dict[str, Any], _Chain]:
    """The mapping in ``path`` merged over the configs it extends, and the files read with
    the name each gives (the base first)."""
    data = read_yaml_mapping(path)
    own = ((path, str(data.get("name", ""))),)
    if "extends" not in data:
        return data, own
    base_path = _base_path(data.pop("extends"), path)
    if any(base_path.resolve() == seen.resolve() for seen in (*chain, path)):
        raise ConfigError([f"{path}: extends: {base_path} is already in the chain (a cycle)"])
    base, files = _raw_config(base_path, (*chain, path))
    return merge_config(base, data), (*files, *own)


def extends_changes(path: Path) -> dict[str, Any]:
    """What the config file ``path`` changes in the config it ``extends`` (its whole chain
    merged), by dotted path as ``[base value, value]``; empty for a file that extends none."""
    data = read_yaml_mapping(path)
    if "extends" not in data:
        return {}
    base, _ = _raw_config(_base_path(data.pop("extends"), path), (path,))
    return changed_values(base, merge_config(base, data))


def _build(data: dict[str, Any], source: str, files: _Chain) -> HardwareSpec:
    """The validated, derived and calibrated spec of a config mapping."""
    errors: list[str] = []
    spec = parse_dataclass(HardwareSpec, data, errors)
    if spec is not None:
        assert isinstance(spec, HardwareSpec)
        spec = with_derived_peaks(spec)
        errors += cross_field_problems(spec)
    if errors or spec is None:
        raise ConfigError(f"{source}: {problem}" for problem in errors)
    assert isinstance(spec, HardwareSpec)
    return _calibrated(with_core_path_limits(spec), files)


def _calibration_file(reference: str, files: _Chain) -> Path:
    """A calibration file beside the config or a config it extends (nearest first), else in
    the shipped ``configs/calibrations``."""
    for config, _ in reversed(files):
        beside: Path = config.parent / reference
        if beside.is_file():
            return beside
    return _shipped_dir().parent / "calibrations" / reference


def _calibrated(spec: HardwareSpec, files: _Chain) -> HardwareSpec:
    """Apply the config's sustained calibration and attach its energy calibration (applied
    at its clock, see ``at_clock``). A calibration may name the config or one it extends:
    a variant keeps its base's fitted values unless it removes them."""
    names = tuple(dict.fromkeys((spec.name, *(name for _, name in reversed(files) if name))))
    if spec.sustained_calibration is not None:
        file = _calibration_file(spec.sustained_calibration, files)
        sustained = load_sustained_calibration(file, names)
        spec = apply_sustained_calibration(spec, sustained, file)
    reference = spec.power.energy_calibration
    if reference is None:
        return spec
    calibration = load_energy_calibration(_calibration_file(reference, files), names)
    return with_calibration(dataclasses.replace(spec, calibration=calibration))
