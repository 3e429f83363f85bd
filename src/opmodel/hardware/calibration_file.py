"""Read a calibration file that belongs to one hardware config (energy or sustained values)."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, TypeVar

from opmodel.core.errors import ConfigError
from opmodel.parsing.schema import parse_dataclass
from opmodel.parsing.yamlfile import read_yaml_mapping

__all__ = ["load_calibration_file"]


class _ForHardware(Protocol):
    @property
    def hardware(self) -> str:
        """The config the file belongs to."""
        ...


T = TypeVar("T", bound=_ForHardware)


def load_calibration_file(
    path: Path, kind: type[T], hardware: str | tuple[str, ...], what: str
) -> T:
    """Parse ``path`` as ``kind`` and check that it is for the config called ``hardware`` (or
    one of the names, for a config and the configs it extends); every problem in one
    ConfigError of ``path: field: problem`` lines (``what`` names the file kind when it is
    missing)."""
    if not path.is_file():
        raise ConfigError([f"{path}: {what} file not found"])
    names = (hardware,) if isinstance(hardware, str) else hardware
    errors: list[str] = []
    parsed = parse_dataclass(kind, read_yaml_mapping(path), errors)
    if parsed is not None and parsed.hardware not in names:
        listed = " or ".join(f"'{name}'" for name in names)
        errors.append(f"hardware: calibration is for '{parsed.hardware}', not {listed}")
    if errors or parsed is None:
        raise ConfigError(f"{path}: {problem}" for problem in errors)
    assert isinstance(parsed, kind)
    return parsed
