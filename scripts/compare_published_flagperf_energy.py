"""FlagPerf's published A100 40GB board power against effective_roofline's energy per call.

Usage: python scripts/compare_published_flagperf_energy.py [--hardware a100_40gb_sxm]

Each FlagPerf README (scripts/convert_flagperf.py, compare_published_flagperf_gemm.py) gives,
beside its times, the card's average power (``单卡平均功耗``) over the run, nearly all of it the
50,000 back-to-back calls its ``cputime`` is the wall clock of (0.1-1.4 % above the kernel
time: the board is busy throughout). A call's measured energy is that power times its
``cputime``; the model's is the profile's ``energy.total_j`` (static power times its latency
plus its FLOPs' and bytes' energy) for the op with no L2 flush, as it runs back to back.
One value is fitted: ``--derive`` gives the board's energy per DRAM byte from the declared
training rows, the six multiplies by a scalar (``mul`` and ``div``: a read and a write stream,
as the H200's copies for ``h200_sxm``; opmodel.validation.dram_energy), which
``a100_40gb_sxm``'s config carries (132.9 pJ/B; the DRAM arrays' 31.8 pJ/B priced these
streams at 0.44-0.46x); every other row is held out. Its other energy terms are the config's
estimates (an op at a dtype's peak draws the board's TDP). ``--hardware a100_40gb_pcie``
prices the same ops with the energy calibration fitted on the 40GB PCIe board's EnergAIzer
passes (the same GA100 die and HBM2, another board and power limit), for comparison.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import Sequence
from typing import NamedTuple

from compare_published_flagperf_gemm import ROWS, op_of
from convert_flagperf import ELEMENTWISE, PUBLISHED, PUBLISHED_ELEMENTWISE, op_row

from opmodel.batch.optable import op_from_row
from opmodel.core.op import LocalOp
from opmodel.core.profile import OpProfile
from opmodel.hardware import HardwareSpec, load_hardware
from opmodel.models import get_model

TRAINING = ("mul", "div")  # the declared training rows of --derive (derive_j_per_byte)


class Measured(NamedTuple):
    """One published row: its group, label and op (run back to back), its wall clock per call
    (``cputime``, s) and its energy per call (the card's average power over it, J)."""

    group: str
    label: str
    op: LocalOp
    seconds: float
    joules: float


def streaming_ops() -> list[Measured]:
    """The reduction and elementwise rows."""
    out = []
    for p in (*PUBLISHED, *PUBLISHED_ELEMENTWISE):
        row = op_row(p)
        attrs = json.loads(str(row["attrs"]))
        attrs.pop("l2_dirty_bytes")  # back to back: no flush between the calls
        op = op_from_row({**row, "attrs": json.dumps(attrs)}, "flagperf")
        group = "elementwise" if p.op in ELEMENTWISE else "reduction"
        seconds = p.cpu_us * 1e-6
        out.append(Measured(group, str(row["label"]), op, seconds, p.power_w * seconds))
    return out


def gemm_ops() -> list[Measured]:
    """The mm and bmm rows."""
    return [
        Measured(
            "gemm", f"{r.op}:{r.dtype}", op_of(r), r.cpu_us * 1e-6, r.power_w * r.cpu_us * 1e-6
        )
        for r in ROWS
    ]


def _predicted(profile: OpProfile, spec: HardwareSpec, seconds: float) -> float:
    """The profile's energy, plus static power over the part of the measured wall clock its
    latency leaves out (the board idles there, as the per-op mode of validate-artifact
    charges)."""
    return profile.energy.total_j + spec.power.static_w * max(0.0, seconds - profile.latency_s)


def ratios(hardware: str) -> list[tuple[str, str, float, float]]:
    """(group, label, measured J per call, modelled / measured energy) of every row."""
    spec, model = load_hardware(hardware), get_model("effective_roofline")
    out = []
    for m in (*streaming_ops(), *gemm_ops()):
        predicted = _predicted(model.predict(m.op, spec), spec, m.seconds)
        out.append((m.group, m.label, m.joules, predicted / m.joules))
    return out


def derive_j_per_byte(hardware: str) -> tuple[float, list[tuple[str, float]]]:
    """The board energy per DRAM byte of the training rows, FlagPerf's six multiplies by a
    scalar (``mul`` and ``div``: a read and a write stream and nothing else, as a copy): each
    gives ``e + (E - E_p) / B`` (``E`` measured, ``E_p`` predicted with the config's ``e``,
    ``B`` the DRAM bytes; a fixed point, opmodel.validation.dram_energy), the value is their
    median. Every other row is held out."""
    spec, model = load_hardware(hardware), get_model("effective_roofline")
    level = next(level for level in spec.memory.levels if level.name == "hbm")
    values = []
    for m in streaming_ops():
        if m.op.name not in TRAINING:
            continue
        profile = model.predict(m.op, spec)
        traffic = profile.traffic["hbm"]
        moved = traffic.read_bytes + traffic.write_bytes
        predicted = _predicted(profile, spec, m.seconds)
        values.append((m.label, level.energy_j_per_byte + (m.joules - predicted) / moved))
    return statistics.median(v for _, v in values), values


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hardware", default="a100_40gb_sxm")
    parser.add_argument("--derive", action="store_true", help="the board J per DRAM byte")
    args = parser.parse_args(argv)
    if args.derive:
        value, values = derive_j_per_byte(args.hardware)
        for label, j in values:
            print(f"{label:<40}{j * 1e12:>8.1f} pJ/B")
        print(f"median (training: mul and div by a scalar): {value * 1e12:.1f} pJ/B")
        return 0
    rows = ratios(args.hardware)
    print(f"{'row':<40}{'measured J':>11}{'model/measured':>16}")
    for _, label, joules, ratio in rows:
        print(f"{label:<40}{joules:>11.3f}{ratio:>15.2f}x")
    for group in ("reduction", "elementwise", "gemm"):
        # the held-out rows: every row but --derive's training multiplies
        chosen = [
            r for g, label, _, r in rows if g == group and label.split(":")[0] not in TRAINING
        ]
        mape = statistics.fmean(abs(r - 1) for r in chosen) * 100
        gm = statistics.geometric_mean(chosen)
        print(f"{group:<12} {len(chosen):>3} held out  energy MAPE {mape:5.1f} %  ({gm:.2f}x)")
    return 0


if __name__ == "__main__":
    from script_errors import run

    run("compare_published_flagperf_energy", main)
