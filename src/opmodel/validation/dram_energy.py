"""Board energy per DRAM byte from metered copies (``opmodel measure`` rows with energy).

A device-to-device copy does almost nothing but move DRAM bytes, so its measured board energy
per run, less what the model charges for everything else (idle power over the run, L2 and
vector energy, the idle gap of a host-bound loop), divided by the DRAM bytes the model counts,
is the energy each byte costs on the board: DRAM arrays, PHYs, memory controllers, crossbar and
L2 together. For a copy of ``B`` DRAM bytes with measured energy ``E`` and prediction ``E_p``
made with a per-byte energy ``e``,

    e_copy = e + (E - E_p) / B

which does not depend on ``e`` (``E_p`` is linear in it), so the value is a fixed point: the
config that carries it reproduces the copies it came from. The training rows are the copies
of at least ``min_bytes`` DRAM bytes (long enough that launch and idle gaps do not matter and
the energy counter's updates average out); the value is their median. Every other metered row
of the folder is held out (``opmodel validate-artifact --data-dir``).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from opmodel.validation.artifact_perop import OpMeasurement, predict_measured_ops

__all__ = ["DramEnergy", "derive_dram_energy"]

MIN_BYTES = 1e9


@dataclass(frozen=True, slots=True, kw_only=True)
class DramEnergy:
    """The derived energy per DRAM byte, the copies it came from and each one's value."""

    hardware: str
    j_per_byte: float
    per_copy_j_per_byte: tuple[float, ...]
    training: tuple[OpMeasurement, ...]


def derive_dram_energy(
    rows: Sequence[OpMeasurement], hardware: str, min_bytes: float = MIN_BYTES
) -> DramEnergy:
    """The median ``e_copy`` (module docstring) over ``hardware``'s copies of at least
    ``min_bytes`` DRAM bytes; ValueError naming the shortfall when there are none."""
    if not isinstance(hardware, str) or not min_bytes > 0:
        msg = (
            "derive_dram_energy: hardware must be a config name and min_bytes > 0 "
            f"(got {hardware!r}, {min_bytes!r})"
        )
        raise ValueError(msg)
    copies = [r for r in rows if r.hardware == hardware and r.op_type == "copy"]
    training, values = [], []
    for prediction in predict_measured_ops(copies, "effective_roofline"):
        nbytes = prediction.hbm_bytes
        if nbytes is None or nbytes < min_bytes:
            continue
        row = prediction.measured
        values.append(prediction.hbm_j_per_byte + (row.energy_j - prediction.energy_j) / nbytes)
        training.append(row)
    if not values:
        msg = f"{hardware}: no metered copy moves at least {min_bytes:g} DRAM bytes"
        raise ValueError(msg)
    return DramEnergy(
        hardware=hardware,
        j_per_byte=statistics.median(values),
        per_copy_j_per_byte=tuple(values),
        training=tuple(training),
    )
