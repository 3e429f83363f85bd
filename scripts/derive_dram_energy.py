"""Board energy per DRAM byte from an `opmodel measure` run's metered copies, held out on the rest.

Usage: python scripts/derive_dram_energy.py [--data-dir data/measured/h200_2026-12-04_events]
       [--hardware h200_sxm] [--compare-j-per-byte 3.176e-11]

Derivation: ``opmodel.validation.dram_energy`` (the copies of at least 1 GB of DRAM traffic;
their median). Then every other metered bf16 row of the folder, held out, is predicted by the
per-op mode of ``validate-artifact`` twice: with the config's HBM energy per byte and with
``--compare-j-per-byte`` in its place (default: 31.8 pJ/B, O'Connor et al.'s HBM2 array access
energy, the estimate the H100 and H200 configs carried before 2026-12-06). Energy MAPE and
geometric-mean ratio per group of op types.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable
from pathlib import Path

from ratio_summary import ratio_summary

from opmodel.hardware import HardwareSpec, load_hardware
from opmodel.hardware.spec import MemorySpec
from opmodel.validation.artifact_perop import OpMeasurement, load_measured_ops, predict_measured_ops
from opmodel.validation.dram_energy import derive_dram_energy

REPO = Path(__file__).resolve().parents[1]


def _group(op_type: str) -> str:
    if op_type in ("gemm", "bmm"):
        return "GEMMs"
    if op_type.startswith("attention"):
        return "attention"
    return "copies, elementwise, norms, softmax"


def _with_hbm_energy(j_per_byte: float) -> Callable[[str], HardwareSpec]:
    def load(name: str) -> HardwareSpec:
        spec = load_hardware(name)
        levels = tuple(
            dataclasses.replace(level, energy_j_per_byte=j_per_byte)
            if level.name == "hbm"
            else level
            for level in spec.memory.levels
        )
        return dataclasses.replace(spec, memory=MemorySpec(levels=levels))

    return load


def held_out_table(
    rows: list[OpMeasurement], loader: Callable[[str], HardwareSpec]
) -> dict[str, tuple[int, float, float]]:
    """Per group: rows, energy MAPE and geometric-mean ratio, predicted with ``loader``'s specs."""
    predictions = predict_measured_ops(rows, "effective_roofline", spec_of=loader)
    groups: dict[str, list[float]] = {}
    for prediction in predictions:
        ratio = prediction.energy_j / prediction.measured.energy_j
        groups.setdefault(_group(prediction.measured.op_type), []).append(ratio)
        groups.setdefault("all held out", []).append(ratio)
    summaries = {name: ratio_summary(ratios) for name, ratios in groups.items()}
    return {name: (n, 100 * mape, geomean) for name, (n, mape, geomean) in summaries.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(REPO / "data/measured/h200_2026-12-04_events"))
    parser.add_argument("--hardware", default="h200_sxm")
    parser.add_argument("--compare-j-per-byte", type=float, default=3.176e-11)
    args = parser.parse_args()
    rows = [r for r in load_measured_ops(Path(args.data_dir))[0] if r.hardware == args.hardware]
    derived = derive_dram_energy(rows, args.hardware)
    per_copy = ", ".join(f"{1e12 * v:.1f}" for v in derived.per_copy_j_per_byte)
    print(
        f"{args.hardware}: {1e12 * derived.j_per_byte:.1f} pJ per DRAM byte (median of {per_copy})"
    )
    config = load_hardware(args.hardware).hbm.energy_j_per_byte
    print(f"config: {1e12 * config:.1f} pJ/B")
    held_out = [r for r in rows if r not in derived.training]
    print(f"\nheld out: {len(held_out)} rows; energy MAPE, geomean ratio")
    tables = {
        f"config ({1e12 * config:.1f} pJ/B)": held_out_table(held_out, load_hardware),
        f"{1e12 * args.compare_j_per_byte:.1f} pJ/B": held_out_table(
            held_out, _with_hbm_energy(args.compare_j_per_byte)
        ),
    }
    for label, table in tables.items():
        print(f"  {label}")
        for name, (count, mape, geomean) in sorted(table.items()):
            print(f"    {name:38s} n={count:4d}  {mape:5.1f} %  {geomean:.3f}")


if __name__ == "__main__":
    main()
