"""The fixed device overhead of a GEMM kernel: a fitted calibration per model and architecture.

Each GEMM model adds a constant number of SM cycles to a kernel's time: the start of its CTAs
and the drain after the last one that neither model's timeline holds (the grid launch, the
first loads' address set-up, the last stores' acknowledgement, the front end's end-of-kernel
work). A hardware config carries an estimate, ``overhead.fixed_device_overhead_cycles``, which
every other kernel model uses. For GEMMs the shipped file
``configs/calibrations/gemm_fixed_overhead.yaml`` holds a fitted value per model and GPU
architecture (``HardwareSpec.architecture``), which replaces the estimate on every config of
that architecture: it stands for what each model leaves out, so it is fitted per model.

The fit is the protocol of ``validate-gemm-latency`` (docs/validation.md, "GEMM latency"):
non-negative least squares of relative errors on the deterministic training split of
:func:`opmodel.validation.gemm_split.training_rows` (up to 8 ``small`` and 8 ``vector_like``
rows per hardware), here pooled per architecture over the rows timed as one kernel in a stream
of kernels: the kernel's own time (profiler or Nsight Compute times; not CUDA events, whose
scope adds the front end's work around a launch) of back-to-back runs (not XLA's ``burst`` rows,
one kernel after idle time). ``python scripts/fit_gemm_overhead.py --write`` writes the file
and lists its training rows, which ``validate-gemm-latency --no-calibrate-fixed-overhead``
holds out.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from opmodel.configs import CALIBRATIONS_DIR
from opmodel.core.errors import ConfigError
from opmodel.hardware.spec import HardwareSpec
from opmodel.models.shared.calibration_slot import CalibrationSlot
from opmodel.parsing.yamlfile import TableWords, read_calibration, read_number_table

__all__ = [
    "CALIBRATION_FILE",
    "GEMM_MODELS",
    "NO_CALIBRATION",
    "OverheadCalibration",
    "fixed_overhead_cycles",
    "in_force",
    "load_overhead_calibration",
    "overhead_calibration",
    "overhead_source",
    "overridden",
    "read_cycles_calibration",
    "string_list",
]

CALIBRATION_FILE = CALIBRATIONS_DIR / "gemm_fixed_overhead.yaml"
GEMM_MODELS = ("effective_roofline", "extended_roofline")
_FITTED_ON = ("source", "split")


@dataclass(frozen=True, slots=True)
class OverheadCalibration:
    """Fitted cycles by (model, architecture), the training rows' hardware by architecture
    (``fitted_on.hardware`` of the file) and the rows themselves (``fitted_on.rows``: keys of
    :func:`opmodel.validation.gemm_split.row_key`, which ``validate-gemm-latency`` holds out)."""

    cycles: Mapping[tuple[str, str], int]
    hardware: Mapping[str, tuple[str, ...]]
    rows: frozenset[str] = frozenset()

    def fitted(self, model: str, architecture: str | None) -> int | None:
        """The fitted cycles of ``model`` on ``architecture``; None where none was fitted."""
        return None if architecture is None else self.cycles.get((model, architecture))


NO_CALIBRATION = OverheadCalibration({}, {})


def string_list(raw: object, path: Path, name: str) -> list[str]:
    """``raw`` as a list of strings; a one-line error naming the file and field otherwise."""
    if not isinstance(raw, list) or not all(isinstance(item, str) for item in raw):
        raise ConfigError([f"{path}: {name}: must be a list of strings"])
    return raw


_WORDS = TableWords(
    "must map a model to architectures and cycles",
    "GEMM model",
    "must map architectures to cycles",
    "cycles",
)


def _hardware(fitted: dict[str, Any], path: Path) -> dict[str, tuple[str, ...]]:
    raw = fitted.get("hardware", {})
    if not isinstance(raw, dict):
        raise ConfigError([f"{path}: fitted_on.hardware: must map architectures to config names"])
    return {
        str(arch): tuple(string_list(names, path, f"fitted_on.hardware.{arch}"))
        for arch, names in raw.items()
    }


def read_cycles_calibration(
    path: Path, field: str
) -> tuple[dict[tuple[str, str], int], dict[str, Any]]:
    """A GEMM calibration file's ``field``, cycles by (model, architecture), and its
    ``fitted_on`` mapping (``source``, ``split``, optional ``rows``); one-line errors naming the
    file and field (this file's and :mod:`.fp4_overhead`'s)."""
    data, fitted = read_calibration(path, ("fitted_on", field), _FITTED_ON)
    table = read_number_table(data[field], path, field, GEMM_MODELS, _WORDS)
    return {key: round(value) for key, value in table.items()}, fitted


def load_overhead_calibration(path: Path) -> OverheadCalibration:
    """Read and validate a GEMM overhead calibration file; errors name the file and field."""
    cycles, fitted = read_cycles_calibration(path, "fixed_overhead_cycles")
    rows = frozenset(string_list(fitted.get("rows", []), path, "fitted_on.rows"))
    return OverheadCalibration(cycles, _hardware(fitted, path), rows)


_SLOT: CalibrationSlot[OverheadCalibration] = CalibrationSlot(
    lambda: load_overhead_calibration(CALIBRATION_FILE)
)


def overhead_calibration() -> OverheadCalibration:
    """The calibration in force: the shipped file, or one set by :func:`overridden`."""
    return _SLOT.current()


def fixed_overhead_cycles(hardware: HardwareSpec, model: str) -> int:
    """The fixed device overhead of ``model``'s GEMM kernels on ``hardware``: the config's
    ``overhead.gemm_fixed_overhead_cycles`` where it sets one (a what-if, or a user's own fit),
    else the calibration's value for its architecture, else the config's
    ``overhead.fixed_device_overhead_cycles``."""
    overhead = hardware.overhead
    if overhead.gemm_fixed_overhead_cycles is not None:
        return overhead.gemm_fixed_overhead_cycles
    fitted = _SLOT.current().fitted(model, hardware.architecture)
    return overhead.fixed_device_overhead_cycles if fitted is None else fitted


def overhead_source(hardware: HardwareSpec, model: str) -> str:
    """Where :func:`fixed_overhead_cycles` takes ``model``'s value on ``hardware`` from, in
    words (the text summary's ``overhead`` line)."""
    if hardware.overhead.gemm_fixed_overhead_cycles is not None:
        return "the config's overhead.gemm_fixed_overhead_cycles"
    if _SLOT.current().fitted(model, hardware.architecture) is not None:
        return f"fitted for {hardware.architecture}: configs/calibrations/{CALIBRATION_FILE.name}"
    return "the config's estimate, overhead.fixed_device_overhead_cycles"


_CACHE_KEY = "gemm.overhead.calibration"


def in_force(hardware: HardwareSpec) -> None:
    """Keep ``hardware``'s derived values consistent with the calibrations in force (this
    one and :mod:`.fp4_overhead`'s): the GEMM models call this before they read
    ``derived_cache`` (kernel set-ups, evaluations and rates hold the overhead). A cache not
    marked with the current :attr:`CalibrationSlot.generation` (derived under other
    calibrations, or not marked yet: values another path derived) is replaced by a new one, a
    new identity, so that profiles memoised on ops are not reused either; that happens once
    per spec and change of the overrides in force."""
    generation = CalibrationSlot.generation
    cache = hardware.derived_cache
    if cache.get(_CACHE_KEY) == generation:
        return
    if cache:
        object.__setattr__(hardware, "derived_cache", {})
    hardware.derived_cache[_CACHE_KEY] = generation


def overridden(calibration: OverheadCalibration) -> AbstractContextManager[None]:
    """Use ``calibration`` instead of the shipped file inside the ``with`` block (tooling and
    tests; :data:`NO_CALIBRATION` gives every config its estimate); the GEMM models derive
    their values afresh under it (:func:`in_force`)."""
    return _SLOT.overridden(calibration)
