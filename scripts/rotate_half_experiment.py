"""Experiment (not adopted): Qwen2's ``rotate_half`` kernels in EnergAIzer's forward passes.

Usage: python scripts/rotate_half_experiment.py      # about a minute; writes nothing shipped

EnergAIzer's trace parser maps no ``neg`` or ``cat``, so Qwen2's op lists leave out the two
kernels of each ``rotate_half`` (transformers 4.51.3: ``torch.cat((-x2, x1), dim=-1)``) that
its ``q * cos + rotate_half(q) * sin`` runs for q and for k. This script inserts them before
the second multiply of every bf16 ``mul, mul, add`` triple of one size ``N`` in Qwen2's lists
(a ``neg`` of ``N / 2`` elements and the ``cat`` as a copy of ``N``), refits the three energy
calibrations by ``opmodel calibrate-energy``'s rule into a temporary folder, and prints
``opmodel validate-artifact``'s table with them (docs/validation.md, "Qwen2's
`rotate_half`"). The shipped configs and calibrations are not touched.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

from opmodel.cli import main
from opmodel.hardware import loader
from opmodel.validation import artifact, artifact_ops
from opmodel.validation.artifact_kernels import complete_entries, elementwise_entry
from opmodel.validation.energy_fit import calibrate_energy

REPO = Path(__file__).resolve().parents[1]
CALIBRATIONS = {
    "a10": "a10_energaizer_900mhz.yaml",
    "a100_40gb_pcie": "a100_40gb_pcie_energaizer_900mhz.yaml",
    "h100_sxm": "h100_sxm_energaizer_1830mhz.yaml",
}
ROPE = ["pointwise_mul", "pointwise_mul", "pointwise_add"]


def with_rotate_half(entries: list[Any]) -> list[Any]:
    """``entries`` with a ``neg`` (half the elements) and a ``cat`` (a copy) before the second
    multiply of each bf16 rope triple."""
    parsed = [elementwise_entry(e) for e in entries]
    out: list[Any] = []
    i = 0
    while i < len(entries):
        window = parsed[i : i + 3]
        names = [w[0] if w else None for w in window]
        sizes = {w[1] for w in window if w}
        if names == ROPE and len(sizes) == 1 and all(w and w[2] == "bf16" for w in window):
            n = sizes.pop()
            neg = {"dim": n // 2, "op": "neg", "prec": "bf16"}
            cat = {"dim": n, "op": "typecast_to_bf16", "prec": "bf16"}  # a bf16 -> bf16 copy
            out += [
                entries[i],
                [neg, ["elementwise"]],
                [cat, ["elementwise"]],
                *entries[i + 1 : i + 3],
            ]
            i += 3
            continue
        out.append(entries[i])
        i += 1
    return out


def completed(entries: list[Any], family: str) -> list[Any]:
    done = complete_entries(entries, family)
    return with_rotate_half(done) if family == "qwen2" else done


def run() -> int:
    artifact_ops._UNARY["neg"] = "neg"
    setattr(artifact, "complete_entries", completed)  # noqa: B010 - the experiment's lists
    shipped = loader._calibration_file
    with tempfile.TemporaryDirectory() as folder:
        refitted = {name: Path(folder) / name for name in CALIBRATIONS.values()}

        def calibration_file(reference: str, files: Any) -> Path:
            path = refitted.get(reference)
            return path if path is not None and path.is_file() else shipped(reference, files)

        loader._calibration_file = calibration_file
        workloads = REPO / "data" / "energaizer"
        for hardware, name in CALIBRATIONS.items():
            loader._CACHE.clear()
            calibrate_energy(hardware, workloads, "effective_roofline", refitted[name])
        loader._CACHE.clear()
        return main(["validate-artifact", "--workload-dir", str(workloads)])


if __name__ == "__main__":
    sys.exit(run())
