"""Load hardware configs from YAML: a path or the name of a shipped config (``a10``)."""

from __future__ import annotations

import dataclasses
from functools import lru_cache
from pathlib import Path

from opmodel.core.errors import ConfigError, UnknownNameError, unknown_name_message
from opmodel.hardware.calibrated import with_calibration
from opmodel.hardware.checks import cross_field_problems
from opmodel.hardware.clocking import with_core_path_limits
from opmodel.hardware.derived import with_derived_peaks
from opmodel.hardware.energy_calibration import load_energy_calibration
from opmodel.hardware.spec import HardwareSpec
from opmodel.hardware.sustained_calibration import (
    apply_sustained_calibration,
    load_sustained_calibration,
)
from opmodel.parsing.schema import parse_dataclass
from opmodel.parsing.yamlfile import read_yaml_mapping

__all__ = ["config_directory", "load_hardware", "shipped_config_path", "shipped_hardware_names"]

# Shipped configs are package data next to this package (``opmodel/configs/hardware``). A plain
# path rather than importlib.resources: it is what every regular and editable install provides,
# and importlib.resources costs ~10 ms of the CLI's start-up budget.
_SHIPPED_DIR = Path(__file__).resolve().parent.parent / "configs" / "hardware"


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


def load_hardware(path_or_name: str | Path, *, directory: Path | None = None) -> HardwareSpec:
    """Load and validate a hardware config.

    ``path_or_name`` is a path to a YAML file or the name of a config: ``directory/<name>.yaml``
    when ``directory`` is given, else a shipped config (see :func:`shipped_hardware_names`).
    Every problem in the file is reported at once in a
    :class:`~opmodel.core.errors.ConfigError`, one ``file: field.path: problem`` line each.
    Peaks given as per-cycle rates are derived (:mod:`opmodel.hardware.derived`). Results
    are cached per file path and modification time.
    """
    if isinstance(path_or_name, Path):
        path = path_or_name
    elif isinstance(path_or_name, str) and path_or_name:
        if _looks_like_path(path_or_name):
            path = Path(path_or_name)
        elif directory is not None:
            path = directory / f"{path_or_name}.yaml"
        else:
            path = shipped_config_path(path_or_name)
    else:
        msg = f"load_hardware: expected a path or a config name (got {path_or_name!r})"
        raise ConfigError([msg])
    try:
        stat = path.stat()
    except OSError:
        raise ConfigError([f"{path}: file not found"]) from None
    return _load_cached(str(path), stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=64)
def _load_cached(path: str, _mtime_ns: int, _size: int) -> HardwareSpec:
    data = read_yaml_mapping(Path(path))
    errors: list[str] = []
    spec = parse_dataclass(HardwareSpec, data, errors)
    if spec is not None:
        assert isinstance(spec, HardwareSpec)
        spec = with_derived_peaks(spec)
        errors += cross_field_problems(spec)
    if errors or spec is None:
        raise ConfigError(f"{path}: {problem}" for problem in errors)
    assert isinstance(spec, HardwareSpec)
    return _calibrated(with_core_path_limits(spec), Path(path))


def _calibration_file(reference: str, path: Path) -> Path:
    """A calibration file beside the config, else in the shipped ``configs/calibrations``."""
    beside = path.parent / reference
    return beside if beside.is_file() else _shipped_dir().parent / "calibrations" / reference


def _calibrated(spec: HardwareSpec, path: Path) -> HardwareSpec:
    """Apply the config's sustained calibration and attach its energy calibration (applied
    at its clock, see ``at_clock``)."""
    if spec.sustained_calibration is not None:
        file = _calibration_file(spec.sustained_calibration, path)
        sustained = load_sustained_calibration(file, spec.name)
        spec = apply_sustained_calibration(spec, sustained, file)
    reference = spec.power.energy_calibration
    if reference is None:
        return spec
    calibration = load_energy_calibration(_calibration_file(reference, path), spec.name)
    return with_calibration(dataclasses.replace(spec, calibration=calibration))
