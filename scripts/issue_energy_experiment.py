"""Energy per issued instruction against FlagPerf's A100 40GB board power (an experiment; the
shipped model charges a streaming kernel's arithmetic by its FLOPs).

Usage: python scripts/issue_energy_experiment.py [--k 0.5 1.0]

FlagPerf's streaming rows (scripts/compare_published_flagperf_energy.py) come out low where
their kernels issue many instructions per byte: the 16-bit GELU and exp 0.76-0.86x, the 16-bit
max, min and amax 0.84-0.87x, argmax 0.65-0.81x, while the sums (2.5-5.75 instructions an
element) sit at 0.99-1.04x. The model charges arithmetic energy per FLOP (one an element for a
reduction), and an argmax's 19.5 instructions an element cost it no more than a sum's 5.75.

The variant charges, for every row whose kernel's instructions are counted from SASS (ATen's
elementwise functions, ``configs/instructions/aten_elementwise.yaml``; the reduce kernel's loop,
``aten_reduce.yaml``'s ``instructions_per_element``), ``k x e_issue`` per lane-instruction in
place of the FLOP energy, with

    e_issue = (tdp_w - static_w) / (SMs x SMSPs per SM x warp size x clock),

the energy of an issue slot when every SMSP issues every cycle at the board's TDP (the configs'
energy per FLOP makes the same assumption of an op at a dtype's peak; on the A100 it equals the
FP32 energy per FLOP, 17.1 pJ). Rows without a count (the multiplies by a scalar, from which the
board's DRAM energy is derived) keep the FLOP energy. ``k = 1`` is the estimate itself, nothing
fitted; ``k`` fitted by least squares of the relative error on a declared training split, the
three argmax rows (the most instructions per byte), is reported on the held-out rest.
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Sequence
from typing import NamedTuple

from compare_published_flagperf_energy import TRAINING, _predicted, streaming_ops

from opmodel.core.views import ElementwiseView, ReductionView
from opmodel.hardware import HardwareSpec, load_hardware
from opmodel.models import get_model
from opmodel.models.shared.sass_code import sass_architecture
from opmodel.models.streaming.aten_reduce import COUNTS_FILE
from opmodel.models.streaming.counted import counted_instructions, load_counts

HARDWARE = "a100_40gb_sxm"
FIT_ON = ("argmax",)  # the declared training rows of the fitted k


class Row(NamedTuple):
    """A FlagPerf row: group, label, measured J, the shipped model's J, its FLOP energy (J)
    and its kernel's counted lane-instructions (0 without a count)."""

    group: str
    label: str
    joules: float
    shipped: float
    flop_j: float
    instructions: float


def issue_energy_j(spec: HardwareSpec) -> float:
    """``e_issue`` (module docstring): J per lane-instruction at the board's TDP."""
    sm = spec.compute.sm
    assert sm is not None
    slots = sm.sm_count * sm.smsps_per_sm * sm.warp_size * spec.compute.clock_hz
    return (spec.power.tdp_w - spec.power.static_w) / slots


def _instructions(op: object, architecture: str | None) -> float:
    """The kernel's counted lane-instructions for the whole op, 0 without a count."""
    view = getattr(op, "view", None)
    arch = sass_architecture(architecture)
    if isinstance(view, ReductionView) and arch is not None:
        table = load_counts(COUNTS_FILE, "instructions_per_element")
        per = table.get((arch, view.x.dtype.value, view.function), 0.0)
        return per * view.x.num_elements
    if isinstance(view, ElementwiseView) and view.function:
        function = "add" if view.function == "sub" else view.function  # ATen's sub is an add
        per = counted_instructions(architecture, view.y.dtype, function) or 0.0
        return per * view.num_elements
    return 0.0


def rows(hardware: str = HARDWARE) -> list[Row]:
    """Every FlagPerf streaming row with the shipped model's energy and its parts."""
    spec, model = load_hardware(hardware), get_model("effective_roofline")
    out = []
    for m in streaming_ops():
        profile = model.predict(m.op, spec)
        shipped = _predicted(profile, spec, m.seconds)
        count = _instructions(m.op, spec.architecture)
        out.append(Row(m.group, m.label, m.joules, shipped, profile.energy.vector_j, count))
    return out


def with_issue(row: Row, k: float, e_issue: float) -> float:
    """The row's energy with ``k x e_issue`` per counted lane-instruction for its FLOPs'."""
    if not row.instructions:
        return row.shipped
    return row.shipped - row.flop_j + k * e_issue * row.instructions


def fit_k(table: Sequence[Row], e_issue: float) -> float:
    """Least squares of the relative error over the training rows: ``E = a + k b`` per row
    with ``b = e_issue x instructions``, so ``k = sum(b (E - a)) / sum(b^2)`` in units of ``E``."""
    train = [r for r in table if r.label.split(":")[0] in FIT_ON]
    num = sum(
        (e_issue * r.instructions / r.joules) * (1 - (r.shipped - r.flop_j) / r.joules)
        for r in train
    )
    den = sum((e_issue * r.instructions / r.joules) ** 2 for r in train)
    return num / den


def held_out(
    table: Sequence[Row], k: float | None, e_issue: float, group: str
) -> tuple[int, float, float]:
    """(rows, energy MAPE, geometric-mean ratio) of ``group``'s held-out rows (every row but
    the DRAM energy's training multiplies and the fitted k's argmax rows), with ``k`` or as
    shipped (``None``)."""
    skip = (*TRAINING, *FIT_ON)
    ratios = [
        (r.shipped if k is None else with_issue(r, k, e_issue)) / r.joules
        for r in table
        if r.group == group and r.label.split(":")[0] not in skip
    ]
    mape = statistics.fmean(abs(x - 1) for x in ratios) * 100
    return len(ratios), mape, statistics.geometric_mean(ratios)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=float, nargs="*", default=[1.0])
    args = parser.parse_args(argv)
    spec = load_hardware(HARDWARE)
    e_issue, table = issue_energy_j(spec), rows()
    fitted = fit_k(table, e_issue)
    print(f"e_issue {e_issue * 1e12:.2f} pJ per lane-instruction; k fitted on argmax: {fitted:.3f}")
    for k in (None, *args.k, fitted):
        parts = []
        for group in ("reduction", "elementwise"):
            n, mape, gm = held_out(table, k, e_issue, group)
            parts.append(f"{group} {n} held out {mape:4.1f} % ({gm:.2f}x)")
        name = "shipped  " if k is None else f"k = {k:5.3f}"
        print(f"{name}: " + ";  ".join(parts))
    return 0


if __name__ == "__main__":
    from script_errors import run

    run("issue_energy_experiment", main)
